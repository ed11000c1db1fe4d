// Scalar conversions between float32/float64 and the 8-bit (and 4-bit) float formats of ONNX:
// float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz (ONNX Cast 19+), float8e8m0
// (Cast 24) and float4e2m1 (Cast 23). Encoding rounds to nearest even.
//
// Encoding rules (ONNX Cast spec, "saturate" attribute):
//   format       | NaN in | +-Inf, saturate | +-Inf, no saturate | |x| > max, saturate | no saturate
//   e4m3fn       | NaN    | +-448           | NaN                | +-448               | NaN
//   e4m3fnuz     | NaN    | +-240           | NaN                | +-240               | NaN
//   e5m2         | NaN    | +-57344         | +-Inf              | +-57344             | +-Inf
//   e5m2fnuz     | NaN    | +-57344         | NaN                | +-57344             | NaN
// The *fnuz formats have no negative zero (-0 encodes as 0, and so does anything rounding to 0);
// their only NaN is 0x80. "|x| > max" means after rounding to nearest even. NaN encodes as
// S.1111.111 (e4m3fn), S.11111.10 (e5m2, a quiet NaN) or 0x80 (fnuz), as ONNX's reference does.
// float4e2m1 (values 0, 0.5, 1, 1.5, 2, 3, 4, 6) has no Inf/NaN: finite overflow and +-Inf
// saturate to +-6, and NaN encodes as 0x8 (what ONNX's reference implementation produces).
#pragma once

#include <cstdint>

namespace simplecpp::kernels {

enum class Float8Format { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ };

uint8_t FloatToFloat8(float f, Float8Format format, bool saturate);
uint8_t DoubleToFloat8(double d, Float8Format format, bool saturate);
float Float8ToFloat(uint8_t code, Float8Format format);

// float8e8m0: an unsigned power of two 2^(code - 127); 0xFF is NaN. No zero, no sign.
// Encoding uses |x| (the format has no sign): NaN -> 0xFF; 0 -> 0x00 (2^-127, the smallest code);
// Inf or overflow: saturate -> 0xFE (2^127), else 0xFF. round_mode (Cast 24+): "up" (ONNX
// default) takes the next power of two above a value that is not one, "down" the one below,
// "nearest" compares the significand: 1.5 and above rounds up (ties away from zero).
enum class E8M0Rounding { kUp, kDown, kNearest };
uint8_t FloatToFloat8E8M0(float f, bool saturate, E8M0Rounding rounding);
uint8_t DoubleToFloat8E8M0(double d, bool saturate, E8M0Rounding rounding);
float Float8E8M0ToFloat(uint8_t code);

// float4e2m1: sign bit 3, exponent bits 2..1 (bias 1), fraction bit 0. Returns the 4-bit code.
uint8_t FloatToFloat4E2M1(float f);
uint8_t DoubleToFloat4E2M1(double d);
float Float4E2M1ToFloat(uint8_t code);

}  // namespace simplecpp::kernels
