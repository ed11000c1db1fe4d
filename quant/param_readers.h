// Reading a quantization parameter's values out of a core Tensor of any storage type the
// quantized ops accept, widened to the one type the reference math and the kernels take.
// Plain functions: no graph, no Highway.
#pragma once

#include <cstdint>
#include <vector>

#include "quant/quant_params.h"
#include "simplecpp/tensor.h"

namespace simplecpp::quant {

// Scale values as float32: float32 as stored; float16 and bfloat16 widened exactly (a bfloat16
// NaN comes back quiet, as kernels' BFloat16BitsToFloat gives it); float64 rounded to nearest;
// bool as 0 / 1; any integer type through int64 and double. Other dtypes throw
// Error(kInvalidArgument) (the ops reject them before any value is read).
std::vector<float> ScalesAsF32(const Tensor& t);

// Zero-point values widened to int32: 8-, 16- and 32-bit integers, and the packed 4- and 2-bit
// ones (two / four per byte, low bits first). Other dtypes give zeros (the ops reject them
// before any value is read).
std::vector<int32_t> ZeroPointsAsI32(const Tensor& t);

// The first value of a scale / zero-point tensor (a per-tensor parameter, read per run without
// allocating): ScalesAsF32(t)[0] and ZeroPointsAsI32(t)[0]. An empty tensor throws
// Error(kInvalidArgument).
float FirstScaleAsF32(const Tensor& t);
int32_t FirstZeroPointAsI32(const Tensor& t);

// The values of one quantized tensor's parameters: scales (ScalesAsF32) and, when zero_point is
// given, zero points (ZeroPointsAsI32; empty otherwise, meaning all zero), with `constant` set as
// the caller says. Granularity, axis and block size are left as they are (quant/param_shapes.h
// decides them from the shapes).
QuantParams ReadQuantParams(const Tensor& scale, const Tensor* zero_point, bool constant);

}  // namespace simplecpp::quant
