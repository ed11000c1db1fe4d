// Reference quantization math (quant/quant_params.h).
#include "quant/quant_params.h"

#include <algorithm>
#include <cmath>

namespace simplecpp::quant {

float RoundHalfToEven(float x) {
  // nearbyint uses the current rounding mode, which is round-to-nearest-even by default.
  return std::nearbyint(x);
}

int32_t SaturateToRange(float x, int32_t lo, int32_t hi) {
  if (std::isnan(x)) return 0 < lo ? lo : (0 > hi ? hi : 0);
  const float r = RoundHalfToEven(x);
  if (r <= static_cast<float>(lo)) return lo;
  if (r >= static_cast<float>(hi)) return hi;
  return static_cast<int32_t>(r);
}

int32_t QuantizeValue(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi) {
  const float quotient = x / scale;
  // A NaN quotient (NaN x, 0/0) quantizes to the zero point, as the kernels do.
  if (std::isnan(quotient)) return std::min(std::max(zero_point, lo), hi);
  const float q = RoundHalfToEven(quotient) + static_cast<float>(zero_point);
  return SaturateToRange(q, lo, hi);
}

float DequantizeValue(int32_t q, float scale, int32_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

bool QuantizedRange(DType t, int32_t* lo, int32_t* hi) {
  switch (t) {
    case DType::kUInt8: *lo = 0; *hi = 255; return true;
    case DType::kInt8: *lo = -128; *hi = 127; return true;
    case DType::kUInt16: *lo = 0; *hi = 65535; return true;
    case DType::kInt16: *lo = -32768; *hi = 32767; return true;
    case DType::kUInt4: *lo = 0; *hi = 15; return true;
    case DType::kInt4: *lo = -8; *hi = 7; return true;
    case DType::kUInt2: *lo = 0; *hi = 3; return true;
    case DType::kInt2: *lo = -2; *hi = 1; return true;
    case DType::kInt32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    default: return false;
  }
}

bool IsQuantIntDType(DType t) {
  int32_t lo = 0, hi = 0;
  return QuantizedRange(t, &lo, &hi);
}

bool IsFloat8DType(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: case DType::kFloat4E2M1: case DType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

DynamicQuantParams ComputeDynamicQuantParams(float x_min, float x_max) {
  const float lo = std::min(0.0f, x_min);
  const float hi = std::max(0.0f, x_max);
  DynamicQuantParams p;
  if (hi == lo) return p;  // all zeros: scale 1, zero point 0 (see the header)
  p.scale = (hi - lo) / 255.0f;
  p.zero_point = SaturateToRange(0.0f - lo / p.scale, 0, 255);
  return p;
}

int32_t RequantizeValue(int32_t acc, float multiplier, int32_t zero_point, int32_t lo, int32_t hi) {
  double v = std::nearbyint(static_cast<double>(acc) * static_cast<double>(multiplier));
  if (std::isnan(v)) v = 0;
  v = std::min(std::max(v + zero_point, static_cast<double>(lo)), static_cast<double>(hi));
  return static_cast<int32_t>(v);
}

}  // namespace simplecpp::quant
