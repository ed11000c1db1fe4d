// Per-target float16 / bfloat16 <-> float32 conversions of one vector, shared by the bulk
// conversions (kernels/float16/float16.cc, which states the rules and why each target takes the
// path it takes) and the kernels that convert in registers (kernels/elementwise/chain.cc).
// Included once per target (Highway's toggled include guard).
#if defined(SIMPLECPP_KERNELS_FLOAT16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SIMPLECPP_KERNELS_FLOAT16_INL_H_
#undef SIMPLECPP_KERNELS_FLOAT16_INL_H_
#else
#define SIMPLECPP_KERNELS_FLOAT16_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace f16vec {

namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define SIMPLECPP_F16C 1
#else
#define SIMPLECPP_F16C 0
#endif

using DF = hn::ScalableTag<float>;
using DU32 = hn::RebindToUnsigned<DF>;
using DI32 = hn::RebindToSigned<DF>;
using DU16 = hn::Rebind<uint16_t, DF>;  // half-width vectors of 16-bit lanes, one per float lane

// Widens one vector of float16 bits (as u32 lanes) to float32 bits, integer-SIMD path.
HWY_INLINE hn::Vec<DF> HalfBitsToFloatVec(hn::Vec<DU32> h) {
  const DF df;
  const DU32 du;
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto em = hn::And(h, hn::Set(du, 0x7FFFu));
  const auto shifted = hn::ShiftLeft<13>(em);
  // Finite values (normal and subnormal): the bits em << 13 read as a float are the value times
  // 2^-112; one exact multiply rescales them.
  const auto two112 = hn::BitCast(df, hn::Set(du, 0x77800000u));  // 2^112
  const auto finite = hn::BitCast(du, hn::Mul(hn::BitCast(df, shifted), two112));
  if (HWY_LIKELY(hn::AllFalse(du, hn::Gt(em, hn::Set(du, 0x7BFFu))))) {
    return hn::BitCast(df, hn::Or(finite, sign));  // no Inf / NaN lane
  }
  // Inf / NaN: exponent all ones; NaNs get the quiet bit.
  const auto is_infnan = hn::Gt(hn::BitCast(DI32(), em), hn::Set(DI32(), 0x7BFF));
  const auto is_nan = hn::Gt(hn::BitCast(DI32(), em), hn::Set(DI32(), 0x7C00));
  auto special = hn::Or(shifted, hn::Set(du, 0x7F800000u));
  special = hn::Or(special,
                   hn::IfThenElseZero(hn::RebindMask(du, is_nan), hn::Set(du, 0x00400000u)));
  const auto r = hn::IfThenElse(hn::RebindMask(du, is_infnan), special, finite);
  return hn::BitCast(df, hn::Or(r, sign));
}

// Whether every lane of f has a normal float16 (or zero) as its rounding: 2^-14 <= |f| < 65520
// or f = +-0. Then the rounding is the float32 significand rounded to 10 bits in place (nearest
// even; a carry into the exponent is the right result), which the integer paths below take for
// the whole vector; any other lane (float16 subnormals, overflow, Inf, NaN) sends the vector
// through the general code.
HWY_INLINE bool AllHalfNormal(hn::Vec<DF> f) {
  const DI32 di;
  const auto a = hn::And(hn::BitCast(di, f), hn::Set(di, 0x7FFFFFFF));
  const auto small = hn::And(hn::Gt(a, hn::Zero(di)), hn::Lt(a, hn::Set(di, 0x38800000)));
  return hn::AllFalse(di, hn::Or(small, hn::Gt(a, hn::Set(di, 0x477FEFFF))));
}

// f's float32 bits with the significand rounded to float16's 10 bits (AllHalfNormal lanes).
HWY_INLINE hn::Vec<DU32> RoundSignificandToHalf(hn::Vec<DF> f) {
  const DU32 du;
  const auto x = hn::BitCast(du, f);
  const auto up = hn::Add(hn::Set(du, 0xFFFu), hn::And(hn::ShiftRight<13>(x), hn::Set(du, 1u)));
  return hn::And(hn::Add(x, up), hn::Set(du, 0xFFFFE000u));
}

// Narrows one vector of float32 to float16 bits (in u32 lanes), integer-SIMD path.
HWY_INLINE hn::Vec<DU32> FloatToHalfBitsVec(hn::Vec<DF> f) {
  if (HWY_LIKELY(AllHalfNormal(f))) {
    // Rebias the rounded bits: exponent 127 -> 15 (zeros stay zero), sign to bit 15.
    const DU32 du;
    const auto r = RoundSignificandToHalf(f);
    const auto mag = hn::And(r, hn::Set(du, 0x7FFFFFFFu));
    const auto rebiased = hn::IfThenZeroElse(hn::Eq(mag, hn::Zero(du)),
                                             hn::Sub(mag, hn::Set(du, 112u << 23)));
    return hn::Or(hn::ShiftRight<13>(rebiased),
                  hn::And(hn::ShiftRight<16>(r), hn::Set(du, 0x8000u)));
  }
  const DF df;
  const DU32 du;
  const DI32 di;
  const auto x = hn::BitCast(du, f);
  const auto sign = hn::And(hn::ShiftRight<16>(x), hn::Set(du, 0x8000u));
  const auto ax = hn::And(x, hn::Set(du, 0x7FFFFFFFu));
  const auto axi = hn::BitCast(di, ax);
  // Normal float16 results: rebias 127 -> 15 and round 23 -> 10 bits to nearest even.
  auto r = hn::Sub(ax, hn::Set(du, 112u << 23));
  r = hn::Add(r, hn::Add(hn::Set(du, 0xFFFu), hn::And(hn::ShiftRight<13>(r), hn::Set(du, 1u))));
  const auto normal = hn::ShiftRight<13>(r);
  // Subnormal (and zero) results: adding 0.5 puts the float16 subnormal grid (2^-24) at the last
  // bit of the sum's significand, so the FPU's rounding is the wanted one; subtracting 0.5's bits
  // leaves the code (0x400 when it rounds up to the smallest normal).
  const auto sub = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, ax), hn::Set(df, 0.5f))),
                           hn::Set(du, 0x3F000000u));
  auto out =
      hn::IfThenElse(hn::RebindMask(du, hn::Lt(axi, hn::Set(di, 0x38800000))), sub, normal);
  // 65520 and above (after rounding) is Inf; NaN keeps its top payload bits and gets quieted.
  out = hn::IfThenElse(hn::RebindMask(du, hn::Gt(axi, hn::Set(di, 0x477FEFFF))),
                       hn::Set(du, 0x7C00u), out);
  const auto nan =
      hn::Or(hn::Set(du, 0x7E00u), hn::And(hn::ShiftRight<13>(ax), hn::Set(du, 0x3FFu)));
  out = hn::IfThenElse(hn::RebindMask(du, hn::Gt(axi, hn::Set(di, 0x7F800000))), nan, out);
  return hn::Or(out, sign);
}

HWY_INLINE hn::Vec<DF> LoadHalf(const uint16_t* HWY_RESTRICT p) {
#if SIMPLECPP_F16C
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
#else
  return HalfBitsToFloatVec(hn::PromoteTo(DU32(), hn::LoadU(DU16(), p)));
#endif
}

HWY_INLINE void StoreHalf(hn::Vec<DF> v, uint16_t* HWY_RESTRICT p) {
#if SIMPLECPP_F16C
  const hn::Rebind<hwy::float16_t, DF> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(p));
#else
  const auto h = FloatToHalfBitsVec(v);
  hn::StoreU(hn::DemoteTo(DU16(), hn::BitCast(DI32(), h)), DU16(), p);
#endif
}

// Widens one vector of bfloat16 bits (NaNs quieted).
HWY_INLINE hn::Vec<DF> BF16ToFloatVec(hn::Vec<DU16> bits) {
  const DU32 du;
  const DI32 di;
  auto x = hn::ShiftLeft<16>(hn::PromoteTo(du, bits));
  const auto is_nan = hn::Gt(hn::BitCast(di, hn::And(x, hn::Set(du, 0x7FFFFFFFu))),
                             hn::Set(di, 0x7F800000));
  x = hn::Or(x, hn::IfThenElseZero(hn::RebindMask(du, is_nan), hn::Set(du, 0x00400000u)));
  return hn::BitCast(DF(), x);
}

HWY_INLINE hn::Vec<DF> LoadBF16(const uint16_t* HWY_RESTRICT p) {
  return BF16ToFloatVec(hn::LoadU(DU16(), p));
}

// The bfloat16 bits of v in u32 lanes (each <= 0xFFFF): round to nearest even, NaN quieted.
HWY_INLINE hn::Vec<DU32> FloatToBF16BitsVec(hn::Vec<DF> v) {
  const DU32 du;
  const DI32 di;
  const auto x = hn::BitCast(du, v);
  const auto rounded = hn::ShiftRight<16>(
      hn::Add(x, hn::Add(hn::Set(du, 0x7FFFu), hn::And(hn::ShiftRight<16>(x), hn::Set(du, 1u)))));
  const auto nan = hn::Or(hn::ShiftRight<16>(x), hn::Set(du, 0x0040u));
  const auto is_nan = hn::Gt(hn::BitCast(di, hn::And(x, hn::Set(du, 0x7FFFFFFFu))),
                             hn::Set(di, 0x7F800000));
  return hn::IfThenElse(hn::RebindMask(du, is_nan), nan, rounded);
}

HWY_INLINE void StoreBF16(hn::Vec<DF> v, uint16_t* HWY_RESTRICT p) {
  // Every lane is <= 0xFFFF, so the saturating demotion is exact.
  hn::StoreU(hn::DemoteTo(DU16(), hn::BitCast(DI32(), FloatToBF16BitsVec(v))), DU16(), p);
}

// The 16-bit value nearest to v (the rounding of the Store functions), as float32: what a
// Store then a Load of the same format give, without the memory round trip.
HWY_INLINE hn::Vec<DF> RoundToHalf(hn::Vec<DF> v) {
#if SIMPLECPP_F16C
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::DemoteTo(dh, v));
#else
  if (HWY_LIKELY(AllHalfNormal(v))) return hn::BitCast(DF(), RoundSignificandToHalf(v));
  return HalfBitsToFloatVec(FloatToHalfBitsVec(v));
#endif
}

HWY_INLINE hn::Vec<DF> RoundToBF16(hn::Vec<DF> v) {
  // LoadBF16 of those bits: the NaNs are already quiet.
  return hn::BitCast(DF(), hn::ShiftLeft<16>(FloatToBF16BitsVec(v)));
}

// Whether this target converts float16 in hardware (F16C); elsewhere each conversion is the
// integer code above, several times the cost of a load.
constexpr bool kHardwareHalf = SIMPLECPP_F16C != 0;

#undef SIMPLECPP_F16C

// How a kernel's data is stored: float32, or float16 / bfloat16 bits converted per vector.
enum class Storage { kF32, kHalf, kBF16 };
template <Storage S>
using StorageType = std::conditional_t<S == Storage::kF32, float, uint16_t>;

// One vector of float32 from data stored as S (16-bit: widened exactly).
template <Storage S>
HWY_INLINE hn::Vec<DF> LoadAs(const StorageType<S>* HWY_RESTRICT p) {
  if constexpr (S == Storage::kF32) {
    return hn::LoadU(DF(), p);
  } else if constexpr (S == Storage::kHalf) {
    return LoadHalf(p);
  } else {
    return LoadBF16(p);
  }
}

// Stores v as S (16-bit: rounded to nearest even).
template <Storage S>
HWY_INLINE void StoreAs(hn::Vec<DF> v, StorageType<S>* HWY_RESTRICT p) {
  if constexpr (S == Storage::kF32) {
    hn::StoreU(v, DF(), p);
  } else if constexpr (S == Storage::kHalf) {
    StoreHalf(v, p);
  } else {
    StoreBF16(v, p);
  }
}

// What storing v as S and loading it back gives (float32: v itself).
template <Storage S>
HWY_INLINE hn::Vec<DF> RoundAs(hn::Vec<DF> v) {
  if constexpr (S == Storage::kF32) {
    return v;
  } else if constexpr (S == Storage::kHalf) {
    return RoundToHalf(v);
  } else {
    return RoundToBF16(v);
  }
}

}  // namespace f16vec
}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#endif  // SIMPLECPP_KERNELS_FLOAT16_INL_H_ toggle
