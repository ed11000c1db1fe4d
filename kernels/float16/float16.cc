// float16 / bfloat16 <-> float32 conversions (see kernels/float16/float16.h for the rules).
//
// Scalar part (under HWY_ONCE): bit manipulation, portable on purpose, the reference for every
// other path (the float16 <-> float32 pair itself is core's, core/float16_bits.cc). SIMD part (per Highway target): the bulk conversions used by the 16-bit kernels.
//   - float16 on AVX2 / AVX3 / AVX3_DL: Highway's PromoteTo / DemoteTo are F16C instructions
//     (vcvtph2ps / vcvtps2ph with round-to-nearest-even), which follow exactly the rules of the
//     scalar code (NaN quieted with the payload kept, overflow to Inf, subnormals exact).
//   - float16 on every other target (SSE4, EMU128, WASM): Highway 1.0.3 emulates the conversion
//     incorrectly for Inf/NaN/overflow/subnormals (../shared/TOOLCHAIN.md), so we use our own
//     integer-SIMD code: widening rebiases the exponent with one float multiply by 2^112 (exact,
//     also for subnormal inputs) and patches Inf/NaN; narrowing rounds normals with the integer
//     round-to-nearest-even trick and subnormals with one float addition of 0.5 (the FPU rounds
//     to nearest even at the right bit position), then patches NaN and overflow.
//   - bfloat16 on every target: integer shifts (round-to-nearest-even by adding 0x7FFF + lsb,
//     NaN quieted, never rounded into Inf).
// Every path is checked bit-for-bit against the scalar code on every compiled target, for all
// 65536 16-bit patterns (tests/kernels/float16/float16_test.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/float16/float16.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstring>

#include "core/bit_cast.h"
#include "kernels/float16/float16.h"
// Per target, before this file's own HWY_BEFORE_NAMESPACE.
#include "kernels/float16/float16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using namespace f16vec;  // NOLINT: the per-target vector conversions

// Bulk loops: whole vectors, then the tail through full-width stack buffers (same arithmetic).
template <bool kBF16>
void WidenImpl(const uint16_t* HWY_RESTRICT in, float* HWY_RESTRICT out, size_t n) {
  const DF df;
  const size_t L = hn::Lanes(df);
  size_t i = 0;
  for (; i + L <= n; i += L) hn::StoreU(kBF16 ? LoadBF16(in + i) : LoadHalf(in + i), df, out + i);
  if (i < n) {
    HWY_ALIGN uint16_t tin[hn::MaxLanes(df)] = {};
    HWY_ALIGN float tout[hn::MaxLanes(df)];
    std::memcpy(tin, in + i, (n - i) * sizeof(uint16_t));
    hn::Store(kBF16 ? LoadBF16(tin) : LoadHalf(tin), df, tout);
    std::memcpy(out + i, tout, (n - i) * sizeof(float));
  }
}

template <bool kBF16>
void NarrowImpl(const float* HWY_RESTRICT in, uint16_t* HWY_RESTRICT out, size_t n) {
  const DF df;
  const size_t L = hn::Lanes(df);
  size_t i = 0;
  for (; i + L <= n; i += L) {
    if (kBF16) {
      StoreBF16(hn::LoadU(df, in + i), out + i);
    } else {
      StoreHalf(hn::LoadU(df, in + i), out + i);
    }
  }
  if (i < n) {
    HWY_ALIGN float tin[hn::MaxLanes(df)] = {};
    HWY_ALIGN uint16_t tout[hn::MaxLanes(df)];
    std::memcpy(tin, in + i, (n - i) * sizeof(float));
    if (kBF16) {
      StoreBF16(hn::Load(df, tin), tout);
    } else {
      StoreHalf(hn::Load(df, tin), tout);
    }
    std::memcpy(out + i, tout, (n - i) * sizeof(uint16_t));
  }
}

void HalfToFloatImpl(const uint16_t* in, float* out, size_t n) { WidenImpl<false>(in, out, n); }
void BFloat16ToFloatImpl(const uint16_t* in, float* out, size_t n) { WidenImpl<true>(in, out, n); }
void FloatToHalfImpl(const float* in, uint16_t* out, size_t n) { NarrowImpl<false>(in, out, n); }
void FloatToBFloat16Impl(const float* in, uint16_t* out, size_t n) { NarrowImpl<true>(in, out, n); }


}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {
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
  return FloatFromBits(x);
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

// ---- bulk (SIMD, dispatched) ----

HWY_EXPORT(HalfToFloatImpl);
HWY_EXPORT(BFloat16ToFloatImpl);
HWY_EXPORT(FloatToHalfImpl);
HWY_EXPORT(FloatToBFloat16Impl);

void FloatToHalf(const float* in, uint16_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(FloatToHalfImpl)(in, out, n);
}
void HalfToFloat(const uint16_t* in, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(HalfToFloatImpl)(in, out, n);
}
void FloatToBFloat16(const float* in, uint16_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(FloatToBFloat16Impl)(in, out, n);
}
void BFloat16ToFloat(const uint16_t* in, float* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(BFloat16ToFloatImpl)(in, out, n);
}

void Widen16(Float16Kind kind, const uint16_t* in, float* out, size_t n) {
  if (kind == Float16Kind::kBFloat16) {
    BFloat16ToFloat(in, out, n);
  } else {
    HalfToFloat(in, out, n);
  }
}
void Narrow16(Float16Kind kind, const float* in, uint16_t* out, size_t n) {
  if (kind == Float16Kind::kBFloat16) {
    FloatToBFloat16(in, out, n);
  } else {
    FloatToHalf(in, out, n);
  }
}
float Widen16One(Float16Kind kind, uint16_t v) {
  return kind == Float16Kind::kBFloat16 ? BFloat16BitsToFloat(v) : HalfBitsToFloat(v);
}
uint16_t Narrow16One(Float16Kind kind, float v) {
  return kind == Float16Kind::kBFloat16 ? FloatToBFloat16Bits(v) : FloatToHalfBits(v);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
