// Scalar float8 / float4 / e8m0 conversions (rules in kernels/float16/float8.h), built on the
// shared round-to-nearest-even core in kernels/float16/float16.cc.
#include "kernels/float16/float8.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/bit_cast.h"
#include "kernels/float16/float16.h"

namespace simplecpp::kernels {
namespace {

struct Float8Spec {
  int frac_bits;
  int bias;
  uint8_t max_code;    // largest finite magnitude code
  bool has_inf;        // e5m2 only: 0x7C is Inf
  bool unsigned_zero;  // fnuz: no -0, NaN is 0x80
};

Float8Spec SpecOf(Float8Format f) {
  switch (f) {
    case Float8Format::kE4M3FN: return {3, 7, 0x7E, false, false};
    case Float8Format::kE4M3FNUZ: return {3, 8, 0x7F, false, true};
    case Float8Format::kE5M2: return {2, 15, 0x7B, true, false};
    case Float8Format::kE5M2FNUZ: return {2, 16, 0x7F, false, true};
  }
  return {3, 7, 0x7E, false, false};
}

// The NaN each format produces: fnuz has one (0x80); e4m3fn's is S.1111.111; for e5m2 ONNX's
// reference produces S.11111.10 (a quiet NaN).
uint8_t NaNCode(const Float8Spec& s, uint8_t sign) {
  if (s.unsigned_zero) return 0x80;
  return static_cast<uint8_t>(sign | (s.has_inf ? 0x7E : 0x7F));
}

// Encodes a magnitude already split into (sig, exp) or the special cases.
uint8_t EncodeFloat8(bool is_nan, bool is_inf, bool is_zero, bool negative, uint64_t sig,
                     int sig_frac_bits, int exp, Float8Format format, bool saturate) {
  const Float8Spec s = SpecOf(format);
  const uint8_t sign = negative ? 0x80 : 0x00;
  if (is_nan) return NaNCode(s, sign);
  if (is_inf) {
    if (saturate) return static_cast<uint8_t>(sign | s.max_code);
    return s.has_inf ? static_cast<uint8_t>(sign | 0x7C) : NaNCode(s, sign);
  }
  if (is_zero) return s.unsigned_zero ? uint8_t{0} : sign;
  // Far above the range: avoid large shifts; the result is an overflow either way.
  uint32_t code = exp > 40 ? 0x100u : RoundMagnitudeToFormat(sig, sig_frac_bits, exp, s.frac_bits, s.bias);
  if (code > s.max_code) {
    if (saturate) return static_cast<uint8_t>(sign | s.max_code);
    return s.has_inf ? static_cast<uint8_t>(sign | 0x7C) : NaNCode(s, sign);
  }
  if (code == 0 && s.unsigned_zero) return 0;
  return static_cast<uint8_t>(sign | code);
}

}  // namespace

uint8_t FloatToFloat8(float f, Float8Format format, bool saturate) {
  uint64_t sig = 0;
  int exp = 0;
  const bool finite_nonzero = std::isfinite(f) && f != 0.0f;
  if (finite_nonzero) DecomposeFloat(f, &sig, &exp);
  return EncodeFloat8(std::isnan(f), std::isinf(f), f == 0.0f, std::signbit(f), sig, 23, exp,
                      format, saturate);
}

uint8_t DoubleToFloat8(double d, Float8Format format, bool saturate) {
  uint64_t sig = 0;
  int exp = 0;
  const bool finite_nonzero = std::isfinite(d) && d != 0.0;
  if (finite_nonzero) DecomposeDouble(d, &sig, &exp);
  return EncodeFloat8(std::isnan(d), std::isinf(d), d == 0.0, std::signbit(d), sig, 52, exp,
                      format, saturate);
}

float Float8ToFloat(uint8_t code, Float8Format format) {
  const Float8Spec s = SpecOf(format);
  const bool negative = (code & 0x80) != 0;
  const uint32_t mag = code & 0x7Fu;
  if (s.unsigned_zero) {
    if (code == 0x80) return std::numeric_limits<float>::quiet_NaN();
  } else if (s.has_inf) {
    if (mag == 0x7C) return negative ? -std::numeric_limits<float>::infinity()
                                     : std::numeric_limits<float>::infinity();
    if (mag > 0x7C) return negative ? -std::numeric_limits<float>::quiet_NaN()
                                    : std::numeric_limits<float>::quiet_NaN();
  } else if (mag == 0x7F) {
    return negative ? -std::numeric_limits<float>::quiet_NaN()
                    : std::numeric_limits<float>::quiet_NaN();
  }
  const int e = static_cast<int>(mag >> s.frac_bits);
  const uint32_t m = mag & ((1u << s.frac_bits) - 1);
  // Exact in float32: at most 4 significant bits, exponents within float32's normal range.
  float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - s.bias - s.frac_bits)
                   : std::ldexp(static_cast<float>(m | (1u << s.frac_bits)), e - s.bias - s.frac_bits);
  return negative ? -v : v;
}

uint8_t DoubleToFloat8E8M0(double d, bool saturate, E8M0Rounding rounding) {
  if (std::isnan(d)) return 0xFF;
  if (std::isinf(d)) return saturate ? 0xFE : 0xFF;
  if (d == 0.0) return 0;  // nothing lies below code 0 (2^-127)
  int e;
  const double m = std::frexp(std::fabs(d), &e);  // |d| = m * 2^e, m in [0.5, 1)
  // |d| lies in [2^(e-1), 2^e): "down" is 2^(e-1), "up" 2^e (unless |d| is exactly 2^(e-1)).
  int p = e - 1;
  if (m != 0.5) {
    if (rounding == E8M0Rounding::kUp || (rounding == E8M0Rounding::kNearest && m >= 0.75)) p = e;
  }
  const int code = p + 127;
  if (code < 0) return 0;
  if (code > 254) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(code);
}

uint8_t FloatToFloat8E8M0(float f, bool saturate, E8M0Rounding rounding) {
  return DoubleToFloat8E8M0(static_cast<double>(f), saturate, rounding);  // exact widening
}

float Float8E8M0ToFloat(uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  if (code == 0) return FloatFromBits(0x00400000u);  // 2^-127, a float32 subnormal
  return FloatFromBits(static_cast<uint32_t>(code) << 23);
}

uint8_t DoubleToFloat4E2M1(double d) {
  if (std::isnan(d)) return 0x8;
  const uint8_t sign = std::signbit(d) ? 0x8 : 0x0;
  if (std::isinf(d)) return sign | 0x7;
  if (d == 0.0) return sign;
  uint64_t sig;
  int exp;
  DecomposeDouble(d, &sig, &exp);
  uint32_t code = exp > 8 ? 0x8u : RoundMagnitudeToFormat(sig, 52, exp, 1, 1);
  if (code > 0x7) code = 0x7;
  return static_cast<uint8_t>(sign | code);
}

uint8_t FloatToFloat4E2M1(float f) { return DoubleToFloat4E2M1(static_cast<double>(f)); }

float Float4E2M1ToFloat(uint8_t code) {
  const bool negative = (code & 0x8) != 0;
  const int e = (code >> 1) & 0x3;
  const int m = code & 0x1;
  const float v = e == 0 ? 0.5f * static_cast<float>(m)
                         : std::ldexp(1.0f + 0.5f * static_cast<float>(m), e - 1);
  return negative ? -v : v;
}

}  // namespace simplecpp::kernels
