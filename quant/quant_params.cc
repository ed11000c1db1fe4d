// Reference quantization math (quant/quant_params.h).
#include "quant/quant_params.h"

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
  const float q = RoundHalfToEven(x / scale) + static_cast<float>(zero_point);
  return SaturateToRange(q, lo, hi);
}

float DequantizeValue(int32_t q, float scale, int32_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

}  // namespace simplecpp::quant
