// What a quantized tensor is: scale and zero point at per-tensor, per-axis or blocked granularity,
// and the reference (scalar, spec-exact) math that every fast kernel is checked against.
// Plain data and functions: no graph, no Highway.
#pragma once

#include <cstdint>
#include <vector>

#include "simplecpp/dtype.h"

namespace simplecpp::quant {

enum class Granularity { kPerTensor, kPerAxis, kBlocked };

// The parameters of one quantized tensor. quant/param_shapes.h decides granularity, axis and
// block_size from the parameter shapes; quant/param_readers.h reads the values out of tensors.
struct QuantParams {
  Granularity granularity = Granularity::kPerTensor;
  int64_t axis = 0;        // per-axis / blocked: the quantized axis (normalized, >= 0)
  int64_t block_size = 0;  // blocked only
  std::vector<float> scales;
  std::vector<int32_t> zero_points;  // empty: all zero; widened to int32 whatever the storage type
  bool constant = true;              // false when the params are run-time inputs
};

// The saturation range of an integer quantized type: uint8 [0,255], int8 [-128,127], uint16,
// int16, uint4 [0,15], int4 [-8,7], uint2 [0,3], int2 [-2,1], int32 (DequantizeLinear input).
// Returns false for any other dtype (floats, float8, ...).
bool QuantizedRange(DType t, int32_t* lo, int32_t* hi);
// The integer quantized types: exactly those QuantizedRange gives a range for.
bool IsQuantIntDType(DType t);
// The float-quantized storage types: float8 (all five kinds, e8m0 included) and float4e2m1.
bool IsFloat8DType(DType t);

// Parameters DynamicQuantizeLinear computes for x with min x_min and max x_max (uint8 output):
// the range is widened to contain 0 (min(0, x_min), max(0, x_max)), scale = (max - min) / 255
// (a float32 division) and zero_point = saturate(round_half_even(0 - min / scale)).
// When the widened range is empty (every x is 0, so min == max == 0) the scale would be 0 and
// the zero point 0/0: we use scale = 1, zero_point = 0 (so y = 0), as the ONNX reference
// implementation defines it.
struct DynamicQuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};
DynamicQuantParams ComputeDynamicQuantParams(float x_min, float x_max);

// QLinearMatMul / QLinearConv output for an int32 accumulator: multiplier is
// a_scale * b_scale / y_scale computed in the scales' precision (float32 here), and
// q = saturate(round_half_even(double(acc) * double(multiplier)) + zero_point): rounded before
// the zero point is added, as QuantizeLinear's formula and ONNX Runtime do.
int32_t RequantizeValue(int32_t acc, float multiplier, int32_t zero_point, int32_t lo, int32_t hi);

// Round half to even (ONNX's rounding for QuantizeLinear and requantization).
float RoundHalfToEven(float x);
// Clamps to [lo, hi] after rounding; NaN maps to 0 (the value a saturating cast gives zero).
int32_t SaturateToRange(float x, int32_t lo, int32_t hi);
// ONNX QuantizeLinear for one value: saturate(round(x / scale) + zero_point), the division in
// float32; +-Inf saturate, a NaN quotient gives saturate(zero_point).
int32_t QuantizeValue(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi);
// ONNX DequantizeLinear for one value: (q - zero_point) * scale.
float DequantizeValue(int32_t q, float scale, int32_t zero_point);

}  // namespace simplecpp::quant
