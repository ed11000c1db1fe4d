// Scalar float16 / bfloat16 conversions by bit manipulation (see kernels/float16.h for the rules).
// Portable on purpose: the same code runs on every Highway target and in WebAssembly, so results
// never depend on whether the CPU has F16C.
#include "kernels/float16.h"

#include <cstring>

namespace simplecpp::kernels {
namespace {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t DoubleBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

}  // namespace

uint32_t RoundMagnitudeToFormat(uint64_t sig, int sig_frac_bits, int exp, int frac_bits, int bias) {
  // Biased target exponent; below 1 the result is subnormal and loses (1 - e) more bits.
  const int e = exp + bias;
  int shift = sig_frac_bits - frac_bits + (e < 1 ? 1 - e : 0);
  uint64_t q;
  if (shift <= 0) {
    q = sig << -shift;  // the source has fewer fraction bits: exact
  } else if (shift > 63) {
    q = 0;  // far below the smallest subnormal: sig < 2^63 <= half an ulp, rounds to 0
  } else {
    q = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  if (e < 1) return static_cast<uint32_t>(q);  // subnormal (q == 2^frac_bits is the smallest normal)
  // q holds the implicit bit at 2^frac_bits; adding (e - 1) << frac_bits yields e << frac_bits plus
  // the fraction, and a rounding carry moves into the exponent by itself.
  return static_cast<uint32_t>((static_cast<uint64_t>(e - 1) << frac_bits) + q);
}

void DecomposeFloat(float f, uint64_t* sig, int* exp) {
  const uint32_t u = FloatBits(f) & 0x7FFFFFFFu;
  const int biased = static_cast<int>(u >> 23);
  uint32_t m = u & 0x7FFFFFu;
  if (biased == 0) {
    // float32 subnormal: normalize.
    int e = -126;
    while ((m & 0x800000u) == 0) {
      m <<= 1;
      --e;
    }
    *sig = m;
    *exp = e;
    return;
  }
  *sig = m | 0x800000u;
  *exp = biased - 127;
}

void DecomposeDouble(double d, uint64_t* sig, int* exp) {
  const uint64_t u = DoubleBits(d) & 0x7FFFFFFFFFFFFFFFull;
  const int biased = static_cast<int>(u >> 52);
  uint64_t m = u & 0xFFFFFFFFFFFFFull;
  const uint64_t implicit = 1ull << 52;
  if (biased == 0) {
    int e = -1022;
    while ((m & implicit) == 0) {
      m <<= 1;
      --e;
    }
    *sig = m;
    *exp = e;
    return;
  }
  *sig = m | implicit;
  *exp = biased - 1023;
}

// ---- float16 ----

uint16_t FloatToHalfBits(float f) {
  const uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) {
    if (ax == 0x7F800000u) return sign | 0x7C00u;  // Inf
    // NaN: quiet bit set, top 9 payload bits kept.
    return static_cast<uint16_t>(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
  }
  // 65520 = 65504 + half an ulp: ties go to the even neighbour, which is 2^16 (Inf).
  if (ax >= 0x477FF000u) return sign | 0x7C00u;
  if (ax >= 0x38800000u) {
    // Normal float16 (>= 2^-14): rebias the exponent (127 -> 15) and round 23 -> 10 bits.
    uint32_t r = ax - (112u << 23);
    r += 0xFFFu + ((r >> 13) & 1u);
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  if (ax <= 0x33000000u) return sign;  // <= 2^-25: half of the smallest subnormal ties to 0
  // Subnormal float16: the value in units of 2^-24 is m * 2^(e - 126) for exponent field e.
  const uint32_t e = ax >> 23;  // 102..112
  const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);  // q == 0x400 encodes the smallest normal
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  if (e == 0x1F) {
    if (m == 0) return BitsFloat(sign | 0x7F800000u);
    return BitsFloat(sign | 0x7FC00000u | (m << 13));  // quiet NaN, payload kept
  }
  if (e == 0) {
    if (m == 0) return BitsFloat(sign);
    // Subnormal m * 2^-24: normalize into a float32 normal.
    uint32_t e32 = 113;
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --e32;
    }
    return BitsFloat(sign | (e32 << 23) | ((m & 0x3FFu) << 13));
  }
  return BitsFloat(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t DoubleToHalfBits(double d) {
  const uint64_t x = DoubleBits(d);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  const uint64_t ax = x & 0x7FFFFFFFFFFFFFFFull;
  if (ax >= 0x7FF0000000000000ull) {
    if (ax == 0x7FF0000000000000ull) return sign | 0x7C00u;
    return static_cast<uint16_t>(sign | 0x7E00u | ((ax >> 42) & 0x3FFu));
  }
  if (ax == 0) return sign;
  uint64_t sig;
  int exp;
  DecomposeDouble(d, &sig, &exp);
  if (exp > 16) return sign | 0x7C00u;
  const uint32_t code = RoundMagnitudeToFormat(sig, 52, exp, 10, 15);
  if (code >= 0x7C00u) return sign | 0x7C00u;
  return static_cast<uint16_t>(sign | code);
}

double HalfBitsToDouble(uint16_t h) { return static_cast<double>(HalfBitsToFloat(h)); }

// ---- bfloat16 ----

uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<uint16_t>((x >> 16) | 0x0040u);  // NaN: quiet, sign and payload kept
  }
  // Round to nearest even on the low 16 bits; a carry into the exponent is correct, and the
  // largest finite values round up to Inf by the same carry.
  const uint32_t r = x + 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(r >> 16);
}

float BFloat16BitsToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) x |= 0x00400000u;  // quiet NaN
  return BitsFloat(x);
}

uint16_t DoubleToBFloat16Bits(double d) {
  const uint64_t x = DoubleBits(d);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  const uint64_t ax = x & 0x7FFFFFFFFFFFFFFFull;
  if (ax >= 0x7FF0000000000000ull) {
    if (ax == 0x7FF0000000000000ull) return sign | 0x7F80u;
    return static_cast<uint16_t>(sign | 0x7FC0u | ((ax >> 45) & 0x7Fu));
  }
  if (ax == 0) return sign;
  uint64_t sig;
  int exp;
  DecomposeDouble(d, &sig, &exp);
  if (exp > 128) return sign | 0x7F80u;
  const uint32_t code = RoundMagnitudeToFormat(sig, 52, exp, 7, 127);
  if (code >= 0x7F80u) return sign | 0x7F80u;
  return static_cast<uint16_t>(sign | code);
}

// ---- bulk ----

void FloatToHalf(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = FloatToHalfBits(in[i]);
}
void HalfToFloat(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(in[i]);
}
void FloatToBFloat16(const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = FloatToBFloat16Bits(in[i]);
}
void BFloat16ToFloat(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = BFloat16BitsToFloat(in[i]);
}

}  // namespace simplecpp::kernels
