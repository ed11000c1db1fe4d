// What a quantized tensor is: scale and zero point at per-tensor, per-axis or blocked granularity,
// and the reference (scalar, spec-exact) math that every fast kernel is checked against.
// Plain data and functions: no graph, no Highway.
#pragma once

#include <cstdint>
#include <vector>

namespace simplecpp::quant {

enum class Granularity { kPerTensor, kPerAxis, kBlocked };

struct QuantParams {
  Granularity granularity = Granularity::kPerTensor;
  int64_t axis = 0;        // per-axis / blocked: the quantized axis (normalized, >= 0)
  int64_t block_size = 0;  // blocked only
  std::vector<float> scales;
  std::vector<int32_t> zero_points;  // empty: all zero; widened to int32 whatever the storage type
  bool constant = true;              // false when the params are run-time inputs
};

// Round half to even (ONNX's rounding for QuantizeLinear and requantization).
float RoundHalfToEven(float x);
// Clamps to [lo, hi] after rounding; NaN maps to 0 (the value a saturating cast gives zero).
int32_t SaturateToRange(float x, int32_t lo, int32_t hi);
// ONNX QuantizeLinear for one value: saturate(round(x / scale) + zero_point).
int32_t QuantizeValue(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi);
// ONNX DequantizeLinear for one value: (q - zero_point) * scale.
float DequantizeValue(int32_t q, float scale, int32_t zero_point);

}  // namespace simplecpp::quant
