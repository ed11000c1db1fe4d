// Reference float16 / bfloat16 conversions for tests, written in a different style from
// kernels/float16/float16.cc: values are computed with double arithmetic (frexp / ldexp /
// nearbyint) instead of bit manipulation, then encoded field by field.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace simplecpp::reference {

// A binary format with `frac` fraction bits, exponent bias `bias`, `exp_bits` exponent bits.
struct BinaryFormat {
  int exp_bits, frac, bias;
};
constexpr BinaryFormat kHalf{5, 10, 15};
constexpr BinaryFormat kBFloat16{8, 7, 127};

// Value of an encoding (NaN for the NaN patterns).
inline double DecodeRef(uint32_t bits, BinaryFormat f) {
  const uint32_t sign = bits >> (f.exp_bits + f.frac);
  const uint32_t e = (bits >> f.frac) & ((1u << f.exp_bits) - 1);
  const uint32_t m = bits & ((1u << f.frac) - 1);
  double v;
  if (e == (1u << f.exp_bits) - 1) {
    v = m == 0 ? INFINITY : NAN;
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.frac);
  } else {
    v = std::ldexp(static_cast<double>(m + (1u << f.frac)), static_cast<int>(e) - f.bias - f.frac);
  }
  return sign ? -v : v;
}

// Encoding of a non-NaN double: round to nearest even with IEEE overflow to Inf.
inline uint32_t EncodeRef(double x, BinaryFormat f) {
  const uint32_t sign = std::signbit(x) ? 1u << (f.exp_bits + f.frac) : 0u;
  const uint32_t inf = ((1u << f.exp_bits) - 1) << f.frac;
  double a = std::fabs(x);
  if (std::isinf(a)) return sign | inf;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the leading bit has weight 2^(e-1)
  const int min_exp = 1 - f.bias;  // exponent of the smallest normal
  int lead = std::max(e - 1, min_exp);
  const double ulp = std::ldexp(1.0, lead - f.frac);
  // a / ulp is exact (a power-of-two scaling); nearbyint rounds half to even by default.
  double q = std::nearbyint(a / ulp);
  if (q >= std::ldexp(1.0, f.frac + 1)) {  // rounding carried into the next binade
    q /= 2;
    ++lead;
  }
  const int max_exp = (1 << f.exp_bits) - 2 - f.bias;
  if (lead > max_exp) return sign | inf;
  if (q < std::ldexp(1.0, f.frac)) {
    // Subnormal (or rounded up to the smallest normal when q reaches 2^frac above).
    return sign | static_cast<uint32_t>(q);
  }
  const uint32_t biased = static_cast<uint32_t>(lead + f.bias);
  return sign | (biased << f.frac) | (static_cast<uint32_t>(q) - (1u << f.frac));
}

inline uint16_t FloatToHalfRef(double x) { return static_cast<uint16_t>(EncodeRef(x, kHalf)); }
inline uint16_t FloatToBFloat16Ref(double x) {
  return static_cast<uint16_t>(EncodeRef(x, kBFloat16));
}

}  // namespace simplecpp::reference
