// Elementwise quantization kernels (kernels/quant/quantize.h). QuantizeF32ToI32 is the Highway
// kernel (division, round-half-even, zero point and clamp in float32, which is exact: a rounded
// quotient beyond 2^24 is far outside every integer range and saturates either way); the narrowing
// wrappers run it over chunks and store the already-clamped values. Requantize is a Highway kernel
// in float32 lanes that decides each lane exactly or hands the vector to the float64 scalar
// reference (RequantizeF32Vec), with float64 lanes for multipliers and ranges outside its bounds;
// the scalar reference runs the tail. Dequantize of 8-bit values is a Highway
// kernel (same operations as the scalar loop, which runs the tail and the 16/32-bit types).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/quantize.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/quant/quantize.h"
#include "kernels/quant/round_narrow512-inl.h"  // RoundNarrow512: AVX-512 rounding to bytes
#include "quant/quant_params.h"

#ifndef SIMPLECPP_KERNELS_QUANTIZE_SHARED_
#define SIMPLECPP_KERNELS_QUANTIZE_SHARED_
namespace simplecpp::kernels::quantize_detail {

// Requantization by the scalar reference, quant::RequantizeValue (the tail of the vector
// kernels, and their fallback).
template <typename T>
inline void RequantizeScalar(const int32_t* acc, int64_t n, const float* multiplier,
                             int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(quant::RequantizeValue(acc[i], multiplier[i * mult_step], zp, lo, hi));
  }
}

}  // namespace simplecpp::kernels::quantize_detail
#endif  // SIMPLECPP_KERNELS_QUANTIZE_SHARED_

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void QuantizeF32ToI32Impl(const float* x, int64_t n, const float* scale, int64_t scale_step,
                          const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi,
                          int32_t* out) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto vlo = hn::Set(df, static_cast<float>(lo));
  const auto vhi = hn::Set(df, static_cast<float>(hi));
  const auto one_scale = hn::Set(df, scale[0]);
  const auto one_zp = hn::Set(df, zp ? static_cast<float>(zp[0]) : 0.0f);
  auto step = [&](const float* xp, const float* sp, const int32_t* zpp, int32_t* op) {
    const auto vs = scale_step ? hn::LoadU(df, sp) : one_scale;
    const auto vz = (zp && zp_step) ? hn::ConvertTo(df, hn::LoadU(di, zpp)) : one_zp;
    auto v = hn::Add(hn::Round(hn::Div(hn::LoadU(df, xp), vs)), vz);
    v = hn::IfThenElse(hn::Eq(v, v), v, vz);  // NaN -> the zero point
    v = hn::Min(hn::Max(v, vlo), vhi);
    hn::StoreU(hn::ConvertTo(di, v), di, op);
  };
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    step(x + i, scale + i * scale_step, zp ? zp + i * zp_step : nullptr, out + i);
  }
  if (i < n) {
    // Tail through stack buffers padded with harmless values (same arithmetic per lane).
    HWY_ALIGN float xb[hn::MaxLanes(df)] = {};
    HWY_ALIGN float sb[hn::MaxLanes(df)];
    HWY_ALIGN int32_t zb[hn::MaxLanes(df)] = {};
    HWY_ALIGN int32_t ob[hn::MaxLanes(df)];
    const int64_t r = n - i;
    for (int64_t j = 0; j < N; ++j) sb[j] = 1.0f;
    std::memcpy(xb, x + i, static_cast<size_t>(r) * sizeof(float));
    if (scale_step) std::memcpy(sb, scale + i, static_cast<size_t>(r) * sizeof(float));
    if (zp && zp_step) std::memcpy(zb, zp + i, static_cast<size_t>(r) * sizeof(int32_t));
    step(xb, sb, zb, ob);
    std::memcpy(out + i, ob, static_cast<size_t>(r) * sizeof(int32_t));
  }
}

// out[i] = float32(q[i] - zp) * scale for 8-bit q: the same int32 difference, the same
// int32 -> float32 conversion and the same float32 multiply as the scalar loop, so the same bits.
// Returns how many elements it did (whole vectors); the caller's scalar loop does the rest.
template <typename T>
int64_t Dequantize8Vec(const T* HWY_RESTRICT q, int64_t n, const float* HWY_RESTRICT scale,
                       int64_t scale_step, const int32_t* HWY_RESTRICT zp, int64_t zp_step,
                       float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<T, decltype(df)> dq;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto one_scale = hn::Set(df, scale[0]);
  const auto one_zp = hn::Set(di, zp ? zp[0] : 0);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto vq = hn::PromoteTo(di, hn::LoadU(dq, q + i));
    const auto vz = (zp && zp_step) ? hn::LoadU(di, zp + i) : one_zp;
    const auto vs = scale_step ? hn::LoadU(df, scale + i) : one_scale;
    hn::StoreU(hn::Mul(hn::ConvertTo(df, hn::Sub(vq, vz)), vs), df, out + i);
  }
  return i;
}
int64_t DequantizeU8ToF32Impl(const uint8_t* q, int64_t n, const float* scale, int64_t scale_step,
                              const int32_t* zp, int64_t zp_step, float* out) {
  return Dequantize8Vec(q, n, scale, scale_step, zp, zp_step, out);
}
int64_t DequantizeI8ToF32Impl(const int8_t* q, int64_t n, const float* scale, int64_t scale_step,
                              const int32_t* zp, int64_t zp_step, float* out) {
  return Dequantize8Vec(q, n, scale, scale_step, zp, zp_step, out);
}

// ScaleI32RowsToF32 (kernels/quant/quantize.h): Mul then Add in separate instructions, as the
// scalar tail computes them; int32 -> float32 rounds to nearest even in both.
void ScaleI32RowsToF32Impl(const int32_t* HWY_RESTRICT acc, int64_t lda, int64_t rows, int64_t n,
                           const float* HWY_RESTRICT mult, int64_t mult_step,
                           const float* HWY_RESTRICT bias, float* HWY_RESTRICT y, int64_t ldy,
                           int64_t bias_step) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto m0 = hn::Set(df, mult[0]);
  const auto b0 = hn::Set(df, bias != nullptr ? bias[0] : 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * lda;
    float* o = y + r * ldy;
    int64_t j = 0;
    for (; j + N <= n; j += N) {
      auto v = hn::Mul(hn::ConvertTo(df, hn::LoadU(di, a + j)),
                       mult_step != 0 ? hn::LoadU(df, mult + j) : m0);
      if (bias != nullptr) v = hn::Add(v, bias_step != 0 ? hn::LoadU(df, bias + j) : b0);
      hn::StoreU(v, df, o + j);
    }
    for (; j < n; ++j) {
      const float v = static_cast<float>(a[j]) * mult[j * mult_step];
      o[j] = bias != nullptr ? v + bias[j * bias_step] : v;
    }
  }
}

// Stores the low byte of each 32-bit lane of a full vector v (lanes of di) as T (8-bit) at out.
// On AVX3 / AVX3_DL one vpmovdb: Highway 1.0.3's TruncateTo(uint8, Vec512<uint32_t>) on AVX3_DL
// permutes 32-bit lanes with byte indices and returns wrong bytes (found by the requantization
// test).
template <typename T, class DI>
HWY_INLINE void StoreLowBytes(DI di, hn::Vec<DI> v, T* HWY_RESTRICT out) {
  static_assert(sizeof(T) == 1 && sizeof(hn::TFromD<DI>) == 4, "32-bit lanes to 8-bit values");
  const hn::Rebind<T, DI> dt;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  static_assert(sizeof(v) == 64, "full 512-bit vectors only");
  (void)di;
  hn::StoreU(hn::Vec<decltype(dt)>{_mm512_cvtepi32_epi8(v.raw)}, dt, out);
#else
  const hn::RebindToUnsigned<DI> du;
  const hn::Rebind<uint8_t, DI> d8;
  hn::StoreU(hn::BitCast(dt, hn::TruncateTo(d8, hn::BitCast(du, v))), dt, out);
#endif
}

// Requantization in float32 lanes that gives the float64 reference's result exactly, for
// 8-bit outputs (|zp|, |lo|, |hi| <= 256) and multipliers m with 2^-60 <= |m| <= 2^60:
//   f = float32(float(acc) * m), clamped to [lo - zp, hi - zp], rounded half to even, plus zp.
// Where the exact t = acc * m lies within [lo - zp - 1, hi - zp + 1], |t| <= 513, so f's error
// against t (the rounding of float(acc) and of the product) is below 2^-13, and the double
// reference's own error is below 2^-36. So where the clamped f is farther than 2^-12 from every
// half-integer, its rounding is the reference's integer. Where t lies beyond that range, f
// (relative error below 2^-22) lies beyond [lo - zp - 0.5, hi - zp + 0.5] on the same side and
// clamps to the same bound as the reference (rounding is monotonic); a clamped lane is an
// integer, never undecided. An undecided lane (about 1 in 2000 for random values) goes through
// the scalar reference alone. So every target, WASM included, gives the
// reference's bits. Rounding before the zero point is added matters at exact ties: round(2.5) +
// 1 = 3, round(2.5 + 1) = 4.
// Row r's parameters start at bias + r * bias_row / mult + r * mult_row (0: the same for every
// row; 1 with column steps 0: one per row, a channels-first output's channels).
template <typename T>
int64_t RequantizeF32Vec(const int32_t* HWY_RESTRICT acc, int64_t lda, int64_t rows, int64_t n,
                         const int32_t* HWY_RESTRICT bias, int64_t bias_step,
                         const float* HWY_RESTRICT mult, int64_t mult_step, int32_t zp, int32_t lo,
                         int32_t hi, T* HWY_RESTRICT out, int64_t ldo, int64_t bias_row,
                         int64_t mult_row) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto vzp = hn::Set(di, zp);
  // Bounds of the rounded product: integers, so a clamped lane rounds to itself.
  const auto flo = hn::Set(df, static_cast<float>(lo - zp));
  const auto fhi = hn::Set(df, static_cast<float>(hi - zp));
  const auto near_half = hn::Set(df, kRequantNearHalf);
  const auto magic = hn::Set(df, 12582912.0f);  // 1.5 * 2^23
  // The current row's parameters.
  const float* HWY_RESTRICT mrow = mult;
  const int32_t* HWY_RESTRICT brow = bias;
  auto one_m = hn::Set(df, mult[0]);
  auto one_b = hn::Set(di, bias ? bias[0] : 0);
  // The clamped product f of the lanes at column i.
  auto product = [&](const int32_t* HWY_RESTRICT a, int64_t i, hn::Vec<decltype(di)>* vacc) {
    *vacc = hn::LoadU(di, a + i);
    // int32 lanes wrap like the reference's uint32 addition.
    if (bias) *vacc = hn::Add(*vacc, bias_step ? hn::LoadU(di, brow + i) : one_b);
    const auto vm = mult_step ? hn::LoadU(df, mrow + i) : one_m;
    return hn::Min(hn::Max(hn::Mul(hn::ConvertTo(df, *vacc), vm), flo), fhi);
  };
  // f + 1.5 * 2^23 rounds f half to even into the low mantissa bits (|f| <= 512 < 2^22): the
  // sum's bits are 0x4B400000 + round(f); adding zp to those bits as an integer gives
  // 0x4B400000 + round(f) + zp, whose low byte is the 8-bit result.
  auto store = [&](hn::Vec<decltype(df)> biased, T* HWY_RESTRICT o) {
    StoreLowBytes(di, hn::Add(hn::BitCast(di, biased), vzp), o);
  };
  // |f - round(f)|: undecided where it exceeds near_half.
  auto distance = [&](hn::Vec<decltype(df)> f, hn::Vec<decltype(df)> biased) {
    return hn::Abs(hn::Sub(f, hn::Sub(biased, magic)));
  };
  // Overwrites the undecided lanes of the vector stored at o + i with the scalar reference's.
  auto fix = [&](hn::Vec<decltype(di)> vacc, hn::Vec<decltype(df)> dist, int64_t i,
                 T* HWY_RESTRICT o) {
    HWY_ALIGN int32_t held[hn::MaxLanes(di)];
    HWY_ALIGN float far[hn::MaxLanes(df)];
    hn::Store(vacc, di, held);
    hn::Store(dist, df, far);
    for (int64_t j = 0; j < N; ++j) {
      if (far[j] > kRequantNearHalf) {
        quantize_detail::RequantizeScalar(held + j, 1, mrow + (i + j) * mult_step, mult_step, zp,
                                          lo, hi, o + i + j);
      }
    }
  };
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // AVX-512 with every |m| < 1: then |f| < 2^31 (|acc| <= 2^31, and float(acc) * m rounds below
  // 2^31), as RoundNarrow512 needs. The same integers as the loops below, so the same bytes.
  bool small_mult = true;
  for (int64_t r = 0; r < (mult_row ? rows : 1) && small_mult; ++r) {
    for (int64_t c = 0; c < (mult_step ? n : 1) && small_mult; ++c) {
      small_mult = std::fabs(mult[r * mult_row + c]) < 1.0f;
    }
  }
  const RoundNarrow512 narrow(zp, lo, hi);
  const __m512 near_half512 = _mm512_set1_ps(kRequantNearHalf);
  // f's lanes from column i of row a (bias added to the accumulators in *vacc).
  auto product512 = [&](const int32_t* HWY_RESTRICT a, int64_t i, __m512i* vacc) {
    __m512i v = _mm512_loadu_si512(a + i);
    if (bias) v = _mm512_add_epi32(v, bias_step ? _mm512_loadu_si512(brow + i) : one_b.raw);
    *vacc = v;
    const __m512 vm = mult_step ? _mm512_loadu_ps(mrow + i) : one_m.raw;
    return _mm512_mul_ps(_mm512_cvtepi32_ps(v), vm);
  };
#endif
  int64_t i = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* HWY_RESTRICT a = acc + r * lda;
    T* HWY_RESTRICT o = out + r * ldo;
    if (r > 0 && (mult_row | bias_row) != 0) {
      mrow = mult + r * mult_row;
      brow = bias ? bias + r * bias_row : nullptr;
      one_m = hn::Set(df, mrow[0]);
      one_b = hn::Set(di, brow ? brow[0] : 0);
    }
    i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    for (; small_mult && i + 32 <= n; i += 32) {
      __m512i acc0, acc1;
      const __m512 f0 = product512(a, i, &acc0), f1 = product512(a, i + 16, &acc1);
      narrow.Store(f0, f1, o + i);
      if (HWY_UNLIKELY(_mm512_cmp_ps_mask(narrow.MaxDistance(f0, f1), near_half512,
                                          _CMP_GT_OQ))) {
        fix(hn::Vec<decltype(di)>{acc0}, hn::Vec<decltype(df)>{narrow.Distance(f0)}, i, o);
        fix(hn::Vec<decltype(di)>{acc1}, hn::Vec<decltype(df)>{narrow.Distance(f1)}, i + 16, o);
      }
    }
#endif
    // Two vectors per test of the undecided lanes (one branch instead of two).
    for (; i + 2 * N <= n; i += 2 * N) {
      hn::Vec<decltype(di)> acc0, acc1;
      const auto f0 = product(a, i, &acc0), f1 = product(a, i + N, &acc1);
      const auto b0 = hn::Add(f0, magic), b1 = hn::Add(f1, magic);
      const auto d0 = distance(f0, b0), d1 = distance(f1, b1);
      store(b0, o + i);
      store(b1, o + i + N);
      if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Gt(hn::Max(d0, d1), near_half)))) {
        fix(acc0, d0, i, o);
        fix(acc1, d1, i + N, o);
      }
    }
    for (; i + N <= n; i += N) {
      hn::Vec<decltype(di)> vacc;
      const auto f = product(a, i, &vacc);
      const auto biased = hn::Add(f, magic);
      const auto d = distance(f, biased);
      store(biased, o + i);
      if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Gt(d, near_half)))) fix(vacc, d, i, o);
    }
  }
  return i;
}

// How far from every half-integer a quotient t = x * (1 / s) must lie for its rounding to be
// that of the division (QuantizeF32To8Vec below).
constexpr float kDecidedMargin = 1.0f / 4096.0f;

// QuantizeF32ToU8 / ToI8 in one pass: the quotient, round half to even, zero point, NaN -> zero
// point, clamp, then the low byte of each lane (8-bit lo / hi / zero point only). With one scale
// whose reciprocal inv = 1 / s is a normal float (and s normal), the quotient comes from a
// multiplication: t = x * inv is within 3 * 2^-24 * |x/s| of the float32 quotient d = x / s that
// the reference rounds (inv, the product and d each round once). Where |t| < 2^9 that is under
// 2^-13, so where t lies farther than kDecidedMargin = 2^-12 from every half-integer, round(d) =
// round(t). Where |t| >= 2^9, |d| > 511.5 rounds to 512 or more in magnitude, beyond every 8-bit
// range after any 8-bit zero point, so both saturate to the same bound. NaN and infinities
// propagate as in the division. A vector with an undecided lane (t near a half-integer, about 1
// lane in 2000) is divided instead. Returns the elements done (whole vectors); the caller
// finishes the tail with QuantizeF32ToI32.
template <typename T>
int64_t QuantizeF32To8Vec(const float* HWY_RESTRICT x, int64_t n, const float* HWY_RESTRICT scale,
                          int64_t scale_step, const int32_t* HWY_RESTRICT zp, int64_t zp_step,
                          int32_t lo, int32_t hi, T* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto vlo = hn::Set(df, static_cast<float>(lo));
  const auto vhi = hn::Set(df, static_cast<float>(hi));
  const auto one_scale = hn::Set(df, scale[0]);
  const auto one_zp = hn::Set(df, zp ? static_cast<float>(zp[0]) : 0.0f);
  const float inv = 1.0f / scale[0];
  // One scale and one zero point (in the 8-bit range: checked by the callers).
  const bool reciprocal = scale_step == 0 && (zp == nullptr || zp_step == 0) &&
                          std::isnormal(scale[0]) && std::isnormal(inv);
  const auto vinv = hn::Set(df, inv);
  const auto near_half = hn::Set(df, 0.5f - kDecidedMargin);
  // One vector of results at i.
  auto step = [&](int64_t i) {
    const auto vx = hn::LoadU(df, x + i);
    const auto vz = (zp && zp_step) ? hn::ConvertTo(df, hn::LoadU(di, zp + i)) : one_zp;
    hn::Vec<decltype(df)> r;
    if (reciprocal) {
      const auto t = hn::Mul(vx, vinv);
      r = hn::Round(t);
      if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Gt(hn::Abs(hn::Sub(t, r)), near_half)))) {
        r = hn::Round(hn::Div(vx, one_scale));
      }
    } else {
      r = hn::Round(hn::Div(vx, scale_step ? hn::LoadU(df, scale + i) : one_scale));
    }
    auto v = hn::Add(r, vz);
    v = hn::IfThenElse(hn::Eq(v, v), v, vz);  // NaN -> the zero point
    v = hn::Min(hn::Max(v, vlo), vhi);
    // v is an integer in [lo, hi]: the conversion is exact and its low byte is the result.
    StoreLowBytes(di, hn::ConvertTo(di, v), out + i);
  };
  int64_t i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if (reciprocal) {
    // 32 lanes per step with RoundNarrow512 (the same integers, so the same bytes): t clamped
    // to +-2^30 first (beyond the 8-bit range either way; vcvtps2dq needs |t| < 2^31), a NaN
    // kept by the operand order (min and max return their second operand when one is NaN). A
    // pair with an undecided lane or a NaN (which vrangeps would drop: one unordered comparison
    // of the two vectors finds it) takes the steps above.
    const RoundNarrow512 narrow(zp ? zp[0] : 0, lo, hi);
    const __m512 big = _mm512_set1_ps(0x1p30f), minus_big = _mm512_set1_ps(-0x1p30f);
    auto clamped = [&](int64_t at) {
      const __m512 t = _mm512_mul_ps(_mm512_loadu_ps(x + at), vinv.raw);
      return _mm512_max_ps(minus_big, _mm512_min_ps(big, t));
    };
    for (; i + 2 * N <= n; i += 2 * N) {
      const __m512 t0 = clamped(i), t1 = clamped(i + N);
      if (HWY_UNLIKELY((_mm512_cmp_ps_mask(narrow.MaxDistance(t0, t1), near_half.raw, _CMP_GT_OQ) |
                        _mm512_cmp_ps_mask(t0, t1, _CMP_UNORD_Q)) != 0)) {
        step(i);
        step(i + N);
        continue;
      }
      narrow.Store(t0, t1, out + i);
    }
  }
#endif
  for (; i + N <= n; i += N) step(i);
  return i;
}
// QdqBinary8 (kernels/quant/quantize.h): per lane exactly Dequantize8Vec's operations on a and on
// b, the IEEE binary op, and QuantizeF32To8Vec's operations with one scale and zero point, with
// no float32 tensor in between. Whole vectors only; returns the elements done. The op is a
// template constant (no branch per vector); kMaybeNaN is false where the op's result cannot be
// NaN (QdqBinaryVec decides), and the NaN select then has nothing to select.
template <QdqBinaryOp kOp, bool kMaybeNaN, typename TA, typename TB, typename TY>
int64_t QdqBinaryLoop(const TA* HWY_RESTRICT a_first, int64_t a_step,
                      const TB* HWY_RESTRICT b_first, int64_t b_step, const QdqBinaryParams& p,
                      TY* HWY_RESTRICT out_first, int64_t n, const QdqBinaryRuns& runs,
                      bool quotient_below_2_30) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<TA, decltype(df)> da;
  const hn::Rebind<TB, decltype(df)> db;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const float inv = 1.0f / p.y_scale;
  const auto a_scale = hn::Set(df, p.a_scale), b_scale = hn::Set(df, p.b_scale);
  const auto a_zp = hn::Set(di, p.a_zp), b_zp = hn::Set(di, p.b_zp);
  const auto y_scale = hn::Set(df, p.y_scale), vinv = hn::Set(df, inv);
  const auto vz = hn::Set(df, static_cast<float>(p.y_zp));
  const auto vlo = hn::Set(df, static_cast<float>(p.lo));
  const auto vhi = hn::Set(df, static_cast<float>(p.hi));
  const auto near_half = hn::Set(df, 0.5f - kDecidedMargin);
  // (q - zp) converted, times the scale: Dequantize8Vec's steps.
  auto dequantize = [&](hn::Vec<decltype(di)> q, hn::Vec<decltype(di)> zp,
                        hn::Vec<decltype(df)> scale) {
    return hn::Mul(hn::ConvertTo(df, hn::Sub(q, zp)), scale);
  };
  // The current run's operands and output; a broadcast operand (step 0) is dequantized once per
  // run.
  const TA* HWY_RESTRICT a = a_first;
  const TB* HWY_RESTRICT b = b_first;
  TY* HWY_RESTRICT out = out_first;
  auto a_one = hn::Zero(df), b_one = hn::Zero(df);
  // The float32 op's result for the lanes at i.
  auto op_at = [&](int64_t i) {
    const auto fa =
        a_step ? dequantize(hn::PromoteTo(di, hn::LoadU(da, a + i)), a_zp, a_scale) : a_one;
    const auto fb =
        b_step ? dequantize(hn::PromoteTo(di, hn::LoadU(db, b + i)), b_zp, b_scale) : b_one;
    if constexpr (kOp == QdqBinaryOp::kAdd) {
      return hn::Add(fa, fb);
    } else if constexpr (kOp == QdqBinaryOp::kSub) {
      return hn::Sub(fa, fb);
    } else if constexpr (kOp == QdqBinaryOp::kMul) {
      return hn::Mul(fa, fb);
    } else {
      return hn::Div(fa, fb);
    }
  };
  // One vector of results at i, QuantizeF32To8Vec's steps.
  auto quantize_at = [&](int64_t i) {
    const auto x = op_at(i);
    const auto t = hn::Mul(x, vinv);
    auto r = hn::Round(t);
    if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Gt(hn::Abs(hn::Sub(t, r)), near_half)))) {
      r = hn::Round(hn::Div(x, y_scale));
    }
    auto v = hn::Add(r, vz);
    if (kMaybeNaN) v = hn::IfThenElse(hn::Eq(v, v), v, vz);  // NaN -> the zero point
    v = hn::Min(hn::Max(v, vlo), vhi);
    StoreLowBytes(di, hn::ConvertTo(di, v), out + i);
  };
  int64_t i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const RoundNarrow512 narrow(p.y_zp, p.lo, p.hi);
#else
  (void)quotient_below_2_30;
#endif
  for (int64_t run = 0; run < runs.count; ++run) {
    a = a_first + run * runs.a_run;
    b = b_first + run * runs.b_run;
    out = out_first + run * runs.out_run;
    if (!a_step) a_one = dequantize(hn::Set(di, static_cast<int32_t>(a[0])), a_zp, a_scale);
    if (!b_step) b_one = dequantize(hn::Set(di, static_cast<int32_t>(b[0])), b_zp, b_scale);
    i = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    // AVX-512, no NaN, and every quotient t = x * (1 / y_scale) below 2^30 in magnitude:
    // RoundNarrow512 (the same integers, so the same bytes). A pair of vectors with an undecided
    // lane takes the steps above (the division).
    if (!kMaybeNaN && quotient_below_2_30) {
      // The 32 lanes at `at` from their quotients t0 | t1, or the division's steps where one is
      // undecided.
      auto store_pair = [&](int64_t at, __m512 t0, __m512 t1) {
        if (HWY_UNLIKELY(
                _mm512_cmp_ps_mask(narrow.MaxDistance(t0, t1), near_half.raw, _CMP_GT_OQ))) {
          quantize_at(at);
          quantize_at(at + N);
          return;
        }
        narrow.Store(t0, t1, out + at);
      };
      if constexpr (kOp == QdqBinaryOp::kMul) {
        // A product with one broadcast operand (a squeeze-and-excitation scale): t = f * c with
        // c = one * (1 / y_scale) once per run, one multiplication per vector fewer. t has 3
        // roundings where the division's quotient d has 2, so |t - d| < 5 * 2^-24 * |t|: under
        // 2^-12 for |t| < 2^9 (the same margin decides), and |t| >= 2^9 saturates both.
        if (a_step == 0 || b_step == 0) {
          const auto c = hn::Mul(a_step ? b_one : a_one, vinv);
          auto varying = [&](int64_t at) {
            return a_step ? dequantize(hn::PromoteTo(di, hn::LoadU(da, a + at)), a_zp, a_scale)
                          : dequantize(hn::PromoteTo(di, hn::LoadU(db, b + at)), b_zp, b_scale);
          };
          for (; a_step != b_step && i + 2 * N <= n; i += 2 * N) {
            store_pair(i, hn::Mul(varying(i), c).raw, hn::Mul(varying(i + N), c).raw);
          }
        }
      }
      for (; i + 2 * N <= n; i += 2 * N) {
        store_pair(i, hn::Mul(op_at(i), vinv).raw, hn::Mul(op_at(i + N), vinv).raw);
      }
    }
#endif
    for (; i + N <= n; i += N) quantize_at(i);
  }
  return i;
}

template <typename TA, typename TB, typename TY>
int64_t QdqBinaryVec(QdqBinaryOp op, const TA* HWY_RESTRICT a, int64_t a_step,
                     const TB* HWY_RESTRICT b, int64_t b_step, const QdqBinaryParams& p,
                     TY* HWY_RESTRICT out, int64_t n, const QdqBinaryRuns& runs) {
  const float inv = 1.0f / p.y_scale;
  if (!(std::isnormal(p.y_scale) && std::isnormal(inv))) return 0;  // the caller divides
  // |q - zp| <= 255 + |zp| for 8-bit data, so the dequantized operands are within that times
  // |scale|. Where those bounds keep the sum, difference or product finite (in double, with
  // margin), no operand or result is infinite or NaN, so neither is the quantized quotient's
  // input; a division can always be 0 / 0.
  const double ma = (255.0 + std::abs(p.a_zp)) * std::fabs(static_cast<double>(p.a_scale));
  const double mb = (255.0 + std::abs(p.b_zp)) * std::fabs(static_cast<double>(p.b_scale));
  constexpr double kFiniteBound = 0x1p126;
  const bool finite = std::isfinite(ma) && std::isfinite(mb) && ma < kFiniteBound &&
                      mb < kFiniteBound &&
                      (op == QdqBinaryOp::kMul ? ma * mb < kFiniteBound
                                               : ma + mb < kFiniteBound);
  // |x| within the bound (relative error of the float32 steps included with a margin), |t|
  // within that times |1 / y_scale|.
  const double x_bound = op == QdqBinaryOp::kMul ? ma * mb : ma + mb;
  const bool small_t = finite && x_bound * std::fabs(static_cast<double>(inv)) * 1.01 < 0x1p30;
  // One instantiation per op; a division can always be NaN (0 / 0).
  auto run = [&](auto op_constant) -> int64_t {
    constexpr QdqBinaryOp kOp = decltype(op_constant)::value;
    if constexpr (kOp == QdqBinaryOp::kDiv) {
      return QdqBinaryLoop<kOp, true>(a, a_step, b, b_step, p, out, n, runs, false);
    } else {
      return finite ? QdqBinaryLoop<kOp, false>(a, a_step, b, b_step, p, out, n, runs, small_t)
                    : QdqBinaryLoop<kOp, true>(a, a_step, b, b_step, p, out, n, runs, false);
    }
  };
  switch (op) {
    case QdqBinaryOp::kAdd: return run(std::integral_constant<QdqBinaryOp, QdqBinaryOp::kAdd>());
    case QdqBinaryOp::kSub: return run(std::integral_constant<QdqBinaryOp, QdqBinaryOp::kSub>());
    case QdqBinaryOp::kMul: return run(std::integral_constant<QdqBinaryOp, QdqBinaryOp::kMul>());
    default: return run(std::integral_constant<QdqBinaryOp, QdqBinaryOp::kDiv>());
  }
}

int64_t QdqBinary8Impl(QdqBinaryOp op, bool a_signed, const void* a, int64_t a_step, bool b_signed,
                       const void* b, int64_t b_step, const QdqBinaryParams& p, bool y_signed,
                       void* out, int64_t n, const QdqBinaryRuns& runs) {
  // Eight signedness combinations, one instantiation each.
  auto with_y = [&](const auto* ta, const auto* tb) -> int64_t {
    if (y_signed) {
      return QdqBinaryVec(op, ta, a_step, tb, b_step, p, static_cast<int8_t*>(out), n, runs);
    }
    return QdqBinaryVec(op, ta, a_step, tb, b_step, p, static_cast<uint8_t*>(out), n, runs);
  };
  auto with_b = [&](const auto* ta) -> int64_t {
    if (b_signed) return with_y(ta, static_cast<const int8_t*>(b));
    return with_y(ta, static_cast<const uint8_t*>(b));
  };
  if (a_signed) return with_b(static_cast<const int8_t*>(a));
  return with_b(static_cast<const uint8_t*>(a));
}

int64_t QuantizeF32ToU8Impl(const float* x, int64_t n, const float* scale, int64_t scale_step,
                            const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi,
                            uint8_t* out) {
  return QuantizeF32To8Vec(x, n, scale, scale_step, zp, zp_step, lo, hi, out);
}
int64_t QuantizeF32ToI8Impl(const float* x, int64_t n, const float* scale, int64_t scale_step,
                            const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi,
                            int8_t* out) {
  return QuantizeF32To8Vec(x, n, scale, scale_step, zp, zp_step, lo, hi, out);
}

// Whether RequantizeF32Vec applies: 8-bit zero point and range, every multiplier a normal float
// in [2^-60, 2^60] in magnitude.
inline bool F32RequantExact(const float* mult, int64_t count, int32_t zp, int32_t lo, int32_t hi) {
  if (zp < -256 || zp > 256 || lo < -256 || hi > 256) return false;
  for (int64_t c = 0; c < count; ++c) {
    const float a = std::fabs(mult[c]);
    if (!(a >= 0x1p-60f && a <= 0x1p60f)) return false;  // NaN fails too
  }
  return true;
}

#if HWY_HAVE_FLOAT64
// Requantization in float64 lanes, the exact same operations as the scalar reference
// (RequantizeScalar above): double(acc) (exact), times double(multiplier) (exact widening, one
// rounding), round half to even, NaN -> 0, plus double(zp) (exact: both are integers), clamp to
// [lo, hi]. Each lane therefore gives the reference's bits; the tail (fewer than a
// vector of elements) goes through the scalar reference.
template <typename T, bool kMaybeNaN>
int64_t RequantizeVec(const int32_t* HWY_RESTRICT acc, int64_t n, const int32_t* HWY_RESTRICT bias,
                      int64_t bias_step, const float* HWY_RESTRICT mult, int64_t mult_step,
                      int32_t zp, int32_t lo, int32_t hi, T* HWY_RESTRICT out) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<int32_t, decltype(dd)> di;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<T, decltype(dd)> dt;
  const int64_t N = static_cast<int64_t>(hn::Lanes(dd));
  const auto vzp = hn::Set(dd, static_cast<double>(zp));
  const auto vlo = hn::Set(dd, static_cast<double>(lo));
  const auto vhi = hn::Set(dd, static_cast<double>(hi));
  const auto one_m = hn::Set(dd, static_cast<double>(mult[0]));
  const auto one_b = hn::Set(di, bias ? bias[0] : 0);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto vacc = hn::LoadU(di, acc + i);
    // int32 lanes wrap like the reference's uint32 addition.
    if (bias) vacc = hn::Add(vacc, bias_step ? hn::LoadU(di, bias + i) : one_b);
    const auto va = hn::PromoteTo(dd, vacc);
    const auto vm = mult_step ? hn::PromoteTo(dd, hn::LoadU(df, mult + i)) : one_m;
    auto v = hn::Round(hn::Mul(va, vm));
    if (kMaybeNaN) v = hn::IfThenElse(hn::Eq(v, v), v, hn::Zero(dd));  // NaN (0 * inf, NaN m) -> 0
    v = hn::Min(hn::Max(hn::Add(v, vzp), vlo), vhi);
    // In [lo, hi] now: both demotions are exact.
    hn::StoreU(hn::DemoteTo(dt, hn::DemoteTo(di, v)), dt, out + i);
  }
  return i;
}

#endif  // HWY_HAVE_FLOAT64

// Rows r < rows of acc (row stride lda) into out (row stride ldo), each row's columns with the
// same bias / multiplier runs. Returns the columns done per row (whole vectors; 0: the caller's
// scalar reference does everything). float64 lanes where the target has them, else float32
// lanes where those are exact (above). A finite multiplier times an int32 is finite in double
// (< 2^31 * 2^128), so their NaN select is only needed when a multiplier is infinite or NaN.
// Row r's parameters start at bias + r * bias_row and mult + r * mult_row (RequantizeF32Vec).
template <typename T>
int64_t RequantizeRowsVec(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                          const int32_t* bias, int64_t bias_step, const float* mult,
                          int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, T* out,
                          int64_t ldo, int64_t bias_row, int64_t mult_row) {
  // The multipliers used: one run per row, or one for all rows.
  const int64_t count = mult_step ? cols : 1, mult_rows = mult_row ? rows : 1;
  bool exact = true;
  for (int64_t r = 0; r < mult_rows && exact; ++r) {
    exact = F32RequantExact(mult + r * mult_row, count, zp, lo, hi);
  }
  int64_t done = 0;
  // float32 lanes wherever they are exact (twice the lanes of float64 and fewer operations per
  // lane); float64 lanes for the other multipliers and ranges. SIMPLECPP_REQUANT_F64 (A/B only).
#ifdef SIMPLECPP_REQUANT_F64
  constexpr bool kPreferF32 = !HWY_HAVE_FLOAT64;
#else
  constexpr bool kPreferF32 = true;
#endif
  if (kPreferF32 && exact) {
    return RequantizeF32Vec<T>(acc, lda, rows, cols, bias, bias_step, mult, mult_step, zp, lo, hi,
                               out, ldo, bias_row, mult_row);
  }
#if HWY_HAVE_FLOAT64
  bool finite = true;
  for (int64_t r = 0; r < mult_rows; ++r) {
    for (int64_t c = 0; c < count; ++c) finite = finite && std::isfinite(mult[r * mult_row + c]);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* b = bias ? bias + r * bias_row : nullptr;
    const float* m = mult + r * mult_row;
    done = finite ? RequantizeVec<T, false>(acc + r * lda, cols, b, bias_step, m, mult_step, zp,
                                            lo, hi, out + r * ldo)
                  : RequantizeVec<T, true>(acc + r * lda, cols, b, bias_step, m, mult_step, zp, lo,
                                           hi, out + r * ldo);
  }
#endif
  return done;
}

int64_t RequantizeI32ToU8Impl(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                              const int32_t* bias, int64_t bias_step, const float* mult,
                              int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, uint8_t* out,
                              int64_t ldo, int64_t bias_row, int64_t mult_row) {
  return RequantizeRowsVec(acc, lda, rows, cols, bias, bias_step, mult, mult_step, zp, lo, hi, out,
                           ldo, bias_row, mult_row);
}
int64_t RequantizeI32ToI8Impl(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                              const int32_t* bias, int64_t bias_step, const float* mult,
                              int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, int8_t* out,
                              int64_t ldo, int64_t bias_row, int64_t mult_row) {
  return RequantizeRowsVec(acc, lda, rows, cols, bias, bias_step, mult, mult_step, zp, lo, hi, out,
                           ldo, bias_row, mult_row);
}

// Min and max of the non-NaN values of x[0, n) over whole vectors (NaN lanes count as +inf for
// the min and -inf for the max); *count gets the number of non-NaN values seen. Returns how many
// elements it did; the caller's scalar loop does the rest. min and max are exact, so the result
// does not depend on the lane count (zeros may come back as -0 or +0 either way).
int64_t MinMaxF32Impl(const float* x, int64_t n, float* lo, float* hi, int64_t* count) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto pinf = hn::Set(d, std::numeric_limits<float>::infinity());
  const auto ninf = hn::Set(d, -std::numeric_limits<float>::infinity());
  auto vlo = pinf, vhi = ninf;
  int64_t seen = 0;
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    const auto ok = hn::Eq(v, v);
    vlo = hn::Min(vlo, hn::IfThenElse(ok, v, pinf));
    vhi = hn::Max(vhi, hn::IfThenElse(ok, v, ninf));
    seen += static_cast<int64_t>(hn::CountTrue(d, ok));
  }
  *lo = hn::GetLane(hn::MinOfLanes(d, vlo));
  *hi = hn::GetLane(hn::MaxOfLanes(d, vhi));
  *count = seen;
  return i;
}

// sum of n bytes, read as uint8 after XOR with `flip` (0x80 turns int8 into int8 + 128), over
// whole vectors with SumsOf8 (exact); returns the elements done through *done.
HWY_INLINE uint64_t SumBytesImpl(const uint8_t* x, int64_t n, uint8_t flip, int64_t* done) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d8));
  const auto vflip = hn::Set(d8, flip);
  auto sum0 = hn::Zero(d64), sum1 = hn::Zero(d64);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    sum0 = hn::Add(sum0, hn::SumsOf8(hn::Xor(hn::LoadU(d8, x + i), vflip)));
    sum1 = hn::Add(sum1, hn::SumsOf8(hn::Xor(hn::LoadU(d8, x + i + N), vflip)));
  }
  for (; i + N <= n; i += N)
    sum0 = hn::Add(sum0, hn::SumsOf8(hn::Xor(hn::LoadU(d8, x + i), vflip)));
  uint64_t total = hn::GetLane(hn::SumOfLanes(d64, hn::Add(sum0, sum1)));
  // The rest in 16-byte vectors: a plane shorter than one whole vector (a pooled row of 48)
  // would otherwise be all scalar.
  const hn::Full128<uint8_t> d16;
  const hn::Full128<uint64_t> d64x2;
  const auto flip16 = hn::Set(d16, flip);
  auto rest = hn::Zero(d64x2);
  for (; i + 16 <= n; i += 16) {
    rest = hn::Add(rest, hn::SumsOf8(hn::Xor(hn::LoadU(d16, x + i), flip16)));
  }
  *done = i;
  return total + hn::GetLane(hn::SumOfLanes(d64x2, rest));
}

// SumBytesImpl of each of `rows` rows of n bytes (row stride `stride`) with the scalar rest:
// one dispatch for a layer's planes.
void SumBytesRowsImpl(const uint8_t* x, int64_t rows, int64_t n, int64_t stride, uint8_t flip,
                      uint64_t* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = x + r * stride;
    int64_t done = 0;
    uint64_t sum = n > 0 ? SumBytesImpl(row, n, flip, &done) : 0;
    for (int64_t i = done; i < n; ++i) sum += static_cast<uint8_t>(row[i] ^ flip);
    sums[r] = sum;
  }
}

// RequantizeMeansTo{U8,I8} (kernels/quant/quantize.h): the op's double steps, lane by lane the
// same IEEE operations as the scalar rest (Round is round half to even, as nearbyint in the
// default rounding mode).
template <typename T>
void RequantizeMeansImpl(const int64_t* HWY_RESTRICT sums, int64_t n, int64_t count, int32_t x_zp,
                         double x_scale, double y_scale, int32_t y_zp, T* HWY_RESTRICT out) {
  constexpr double kLo = std::is_signed_v<T> ? -128.0 : 0.0;
  constexpr double kHi = std::is_signed_v<T> ? 127.0 : 255.0;
  const int64_t offset = static_cast<int64_t>(x_zp) * count;
  const double div = static_cast<double>(count);
  int64_t i = 0;
#if HWY_HAVE_FLOAT64
  const hn::ScalableTag<double> dd;
  const hn::RebindToSigned<decltype(dd)> di64;
  const hn::Rebind<int32_t, decltype(dd)> di32;
  const hn::Rebind<T, decltype(dd)> dt;
  const int64_t N = static_cast<int64_t>(hn::Lanes(dd));
  const auto voffset = hn::Set(di64, offset);
  const auto vx_scale = hn::Set(dd, x_scale), vdiv = hn::Set(dd, div);
  const auto vy_scale = hn::Set(dd, y_scale), vzp = hn::Set(dd, static_cast<double>(y_zp));
  const auto vlo = hn::Set(dd, kLo), vhi = hn::Set(dd, kHi);
  for (; i + N <= n; i += N) {
    const auto sum = hn::ConvertTo(dd, hn::Sub(hn::LoadU(di64, sums + i), voffset));
    auto q = hn::Div(hn::Div(hn::Mul(sum, vx_scale), vdiv), vy_scale);
    q = hn::IfThenZeroElse(hn::IsNaN(q), q);
    const auto r = hn::Min(hn::Max(hn::Add(hn::Round(q), vzp), vlo), vhi);
    hn::StoreU(hn::DemoteTo(dt, hn::DemoteTo(di32, r)), dt, out + i);
  }
#endif
  for (; i < n; ++i) {
    const double mean = static_cast<double>(sums[i] - offset) * x_scale / div;
    double q = mean / y_scale;
    if (std::isnan(q)) q = 0.0;
    q = std::nearbyint(q) + y_zp;
    out[i] = static_cast<T>(q < kLo ? kLo : (q > kHi ? kHi : q));
  }
}
void RequantizeMeansToU8Impl(const int64_t* sums, int64_t n, int64_t count, int32_t x_zp,
                             double x_scale, double y_scale, int32_t y_zp, uint8_t* out) {
  RequantizeMeansImpl(sums, n, count, x_zp, x_scale, y_scale, y_zp, out);
}
void RequantizeMeansToI8Impl(const int64_t* sums, int64_t n, int64_t count, int32_t x_zp,
                             double x_scale, double y_scale, int32_t y_zp, int8_t* out) {
  RequantizeMeansImpl(sums, n, count, x_zp, x_scale, y_scale, y_zp, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(QuantizeF32ToI32Impl);
HWY_EXPORT(RequantizeI32ToU8Impl);
HWY_EXPORT(DequantizeU8ToF32Impl);
HWY_EXPORT(QdqBinary8Impl);
HWY_EXPORT(DequantizeI8ToF32Impl);
HWY_EXPORT(RequantizeI32ToI8Impl);
HWY_EXPORT(MinMaxF32Impl);
HWY_EXPORT(SumBytesRowsImpl);
HWY_EXPORT(RequantizeMeansToU8Impl);
HWY_EXPORT(RequantizeMeansToI8Impl);
HWY_EXPORT(ScaleI32RowsToF32Impl);
HWY_EXPORT(QuantizeF32ToU8Impl);
HWY_EXPORT(QuantizeF32ToI8Impl);

void ScaleI32RowsToF32(const int32_t* acc, int64_t lda, int64_t rows, int64_t n, const float* mult,
                       int64_t mult_step, const float* bias, float* y, int64_t ldy,
                       int64_t bias_step) {
  if (rows <= 0 || n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ScaleI32RowsToF32Impl)(acc, lda, rows, n, mult, mult_step, bias, y, ldy,
                                              bias_step);
}

void QuantizeF32ToI32(const float* x, int64_t n, const float* scale, int64_t scale_step,
                      const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, int32_t* out) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(QuantizeF32ToI32Impl)(x, n, scale, scale_step, zp, zp_step, lo, hi, out);
}

namespace {

template <typename T>
void QuantizeNarrow(const float* x, int64_t n, const float* scale, int64_t scale_step,
                    const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, T* out) {
  constexpr int64_t kChunk = 256;
  int32_t buf[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t len = std::min(kChunk, n - i);
    QuantizeF32ToI32(x + i, len, scale + i * scale_step, scale_step,
                     zp ? zp + i * zp_step : nullptr, zp_step, lo, hi, buf);
    for (int64_t j = 0; j < len; ++j) out[i + j] = static_cast<T>(buf[j]);
  }
}

template <typename T>
void Dequantize(const T* q, int64_t n, const float* scale, int64_t scale_step, const int32_t* zp,
                int64_t zp_step, float* out) {
  if (zp == nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(q[i]) * scale[i * scale_step];
  } else {
    for (int64_t i = 0; i < n; ++i) {
      // q - zp is exact in int32 and in float32 for 8/16-bit types.
      out[i] = static_cast<float>(static_cast<int32_t>(q[i]) - zp[i * zp_step]) *
               scale[i * scale_step];
    }
  }
}

}  // namespace

namespace {

// 8-bit outputs: the one-pass kernel `vec` over whole vectors when the range and a per-tensor zero
// point lie in T's range (its saturation argument needs that), the narrowing wrapper for the
// rest.
template <typename T, typename VecFn>
void Quantize8(VecFn&& vec, const float* x, int64_t n, const float* scale, int64_t scale_step,
               const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, T* out) {
  if (n <= 0) return;
  constexpr int32_t kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  const bool fits = lo >= kMin && hi <= kMax &&
                    (zp == nullptr || zp_step != 0 || (zp[0] >= kMin && zp[0] <= kMax));
  const int64_t d = fits ? vec(x, n, scale, scale_step, zp, zp_step, lo, hi, out) : 0;
  QuantizeNarrow(x + d, n - d, scale + d * scale_step, scale_step, zp ? zp + d * zp_step : nullptr,
                 zp_step, lo, hi, out + d);
}

}  // namespace

void QuantizeF32ToU8(const float* x, int64_t n, const float* scale, int64_t scale_step,
                     const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, uint8_t* out) {
  Quantize8(HWY_DYNAMIC_DISPATCH(QuantizeF32ToU8Impl), x, n, scale, scale_step, zp, zp_step, lo, hi,
            out);
}
void QuantizeF32ToI8(const float* x, int64_t n, const float* scale, int64_t scale_step,
                     const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, int8_t* out) {
  Quantize8(HWY_DYNAMIC_DISPATCH(QuantizeF32ToI8Impl), x, n, scale, scale_step, zp, zp_step, lo, hi,
            out);
}
void QuantizeF32ToU16(const float* x, int64_t n, const float* scale, int64_t scale_step,
                      const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, uint16_t* out) {
  QuantizeNarrow(x, n, scale, scale_step, zp, zp_step, lo, hi, out);
}
void QuantizeF32ToI16(const float* x, int64_t n, const float* scale, int64_t scale_step,
                      const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, int16_t* out) {
  QuantizeNarrow(x, n, scale, scale_step, zp, zp_step, lo, hi, out);
}

void DequantizeU8ToF32(const uint8_t* q, int64_t n, const float* scale, int64_t scale_step,
                       const int32_t* zp, int64_t zp_step, float* out) {
  if (n <= 0) return;
  const int64_t d =
      HWY_DYNAMIC_DISPATCH(DequantizeU8ToF32Impl)(q, n, scale, scale_step, zp, zp_step, out);
  Dequantize(q + d, n - d, scale + d * scale_step, scale_step, zp ? zp + d * zp_step : nullptr,
             zp_step, out + d);
}
void DequantizeI8ToF32(const int8_t* q, int64_t n, const float* scale, int64_t scale_step,
                       const int32_t* zp, int64_t zp_step, float* out) {
  if (n <= 0) return;
  const int64_t d =
      HWY_DYNAMIC_DISPATCH(DequantizeI8ToF32Impl)(q, n, scale, scale_step, zp, zp_step, out);
  Dequantize(q + d, n - d, scale + d * scale_step, scale_step, zp ? zp + d * zp_step : nullptr,
             zp_step, out + d);
}
void DequantizeU16ToF32(const uint16_t* q, int64_t n, const float* scale, int64_t scale_step,
                        const int32_t* zp, int64_t zp_step, float* out) {
  Dequantize(q, n, scale, scale_step, zp, zp_step, out);
}
void DequantizeI16ToF32(const int16_t* q, int64_t n, const float* scale, int64_t scale_step,
                        const int32_t* zp, int64_t zp_step, float* out) {
  Dequantize(q, n, scale, scale_step, zp, zp_step, out);
}
void DequantizeI32ToF32(const int32_t* q, int64_t n, const float* scale, int64_t scale_step,
                        const int32_t* zp, int64_t zp_step, float* out) {
  if (zp == nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(q[i]) * scale[i * scale_step];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(static_cast<float>(q[i])) - zp[i * zp_step];
    out[i] = static_cast<float>(d * static_cast<double>(scale[i * scale_step]));
  }
}

namespace {

// The scalar tail of a biased run: acc + bias (wrapping) in a small buffer, then the reference.
template <typename T>
void RequantizeTail(const int32_t* acc, int64_t n, const int32_t* bias, int64_t bias_step,
                    const float* mult, int64_t mult_step, int32_t zp, int32_t lo, int32_t hi,
                    T* out) {
  if (bias == nullptr) {
    quantize_detail::RequantizeScalar(acc, n, mult, mult_step, zp, lo, hi, out);
    return;
  }
  constexpr int64_t kChunk = 64;
  int32_t sum[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t len = std::min(kChunk, n - i);
    for (int64_t j = 0; j < len; ++j) {
      sum[j] = static_cast<int32_t>(static_cast<uint32_t>(acc[i + j]) +
                                    static_cast<uint32_t>(bias[(i + j) * bias_step]));
    }
    quantize_detail::RequantizeScalar(sum, len, mult + i * mult_step, mult_step, zp, lo, hi,
                                      out + i);
  }
}

// Two vectors of float32 lanes on every target (AVX-512: 2 x 16): RequantizeF32Vec's step.
constexpr int64_t kGroupLanes = 32;
// Largest group of rows RequantizeRows flattens (elements; its parameters are on the stack).
constexpr int64_t kMaxGroupElements = 2048;
// Shortest row RequantizeRows groups rows into.
constexpr int64_t kMinGroupElements = 128;

template <typename T, typename Impl>
void RequantizeRows(Impl impl, const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                    const int32_t* bias, int64_t bias_step, const float* mult, int64_t mult_step,
                    int32_t zp, int32_t lo, int32_t hi, T* out, int64_t ldo,
                    int64_t lanes = kGroupLanes) {
  if (rows <= 0 || cols <= 0) return;
  // Dense rows with the same parameters for every element: one row.
  if (rows > 1 && lda == cols && ldo == cols && mult_step == 0 && (!bias || bias_step == 0)) {
    RequantizeRows(impl, acc, rows * cols, 1, rows * cols, bias, 0, mult, 0, zp, lo, hi, out,
                   rows * cols);
    return;
  }
  // Dense rows with one parameter per column whose length is no multiple of two vectors (a
  // convolution's block of positions x a few output channels, e.g. 24): `group` rows at a time
  // are one row of whole vector pairs, with the parameters repeated per row, instead of each row
  // leaving a scalar tail or a lone vector. The same operations per element, so the same bytes.
  // The rows left over from groups of two vectors are grouped by one vector (lanes / 2).
  int64_t g = lanes;
  for (int64_t a = cols % lanes; a != 0;) {
    const int64_t t = g % a;
    g = a;
    a = t;
  }
  int64_t group = lanes / g;  // lanes / gcd(cols, lanes)
  // Rows of a few vectors only are mostly loop overhead: at least kMinGroupElements per row.
  while (group * cols < kMinGroupElements && 2 * group * cols <= kMaxGroupElements &&
         2 * group <= rows) {
    group *= 2;
  }
  if (group > 1 && lda == cols && ldo == cols && mult_step == 1 && (!bias || bias_step == 1) &&
      rows >= group && group * cols <= kMaxGroupElements) {
    const int64_t n = group * cols;
    float gm[kMaxGroupElements];
    int32_t gb[kMaxGroupElements];
    // group is a power of two: the parameters double until they fill the row.
    std::copy(mult, mult + cols, gm);
    if (bias) std::copy(bias, bias + cols, gb);
    for (int64_t len = cols; len < n; len *= 2) {
      std::copy(gm, gm + len, gm + len);
      if (bias) std::copy(gb, gb + len, gb + len);
    }
    const int64_t whole = rows / group * group;
    RequantizeRows(impl, acc, n, whole / group, n, bias ? gb : nullptr, 1, gm, 1, zp, lo, hi, out,
                   n);
    if (whole == rows) return;
    acc += whole * lda;
    out += whole * ldo;
    rows -= whole;
    if (lanes == kGroupLanes) {
      RequantizeRows(impl, acc, lda, rows, cols, bias, bias_step, mult, mult_step, zp, lo, hi, out,
                     ldo, kGroupLanes / 2);
      return;
    }
  }
  const int64_t done =
      impl(acc, lda, rows, cols, bias, bias_step, mult, mult_step, zp, lo, hi, out, ldo, 0, 0);
  if (done == cols) return;
  for (int64_t r = 0; r < rows; ++r) {
    RequantizeTail(acc + r * lda + done, cols - done, bias ? bias + done * bias_step : nullptr,
                   bias_step, mult + done * mult_step, mult_step, zp, lo, hi, out + r * ldo + done);
  }
}

// Rows with their own bias and multiplier: impl's row steps, then each row's scalar tail.
template <typename T, typename Impl>
void RequantizePerRow(Impl impl, const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                      const int32_t* bias, const float* mult, int64_t mult_row, int32_t zp,
                      int32_t lo, int32_t hi, T* out, int64_t ldo) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t done =
      impl(acc, lda, rows, cols, bias, 0, mult, 0, zp, lo, hi, out, ldo, bias ? 1 : 0, mult_row);
  if (done == cols) return;
  for (int64_t r = 0; r < rows; ++r) {
    RequantizeTail(acc + r * lda + done, cols - done, bias ? bias + r : nullptr, 0,
                   mult + r * mult_row, 0, zp, lo, hi, out + r * ldo + done);
  }
}

}  // namespace

void RequantizePerRowI32ToU8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                             const int32_t* bias, const float* multiplier, int64_t mult_row,
                             int32_t zp, int32_t lo, int32_t hi, uint8_t* out, int64_t ldo) {
  RequantizePerRow(HWY_DYNAMIC_DISPATCH(RequantizeI32ToU8Impl), acc, lda, rows, cols, bias,
                   multiplier, mult_row, zp, lo, hi, out, ldo);
}
void RequantizePerRowI32ToI8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                             const int32_t* bias, const float* multiplier, int64_t mult_row,
                             int32_t zp, int32_t lo, int32_t hi, int8_t* out, int64_t ldo) {
  RequantizePerRow(HWY_DYNAMIC_DISPATCH(RequantizeI32ToI8Impl), acc, lda, rows, cols, bias,
                   multiplier, mult_row, zp, lo, hi, out, ldo);
}

void RequantizeBiasRowsI32ToU8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                               const int32_t* bias, int64_t bias_step, const float* multiplier,
                               int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, uint8_t* out,
                               int64_t ldo) {
  RequantizeRows(HWY_DYNAMIC_DISPATCH(RequantizeI32ToU8Impl), acc, lda, rows, cols, bias, bias_step,
                 multiplier, mult_step, zp, lo, hi, out, ldo);
}
void RequantizeBiasRowsI32ToI8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                               const int32_t* bias, int64_t bias_step, const float* multiplier,
                               int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, int8_t* out,
                               int64_t ldo) {
  RequantizeRows(HWY_DYNAMIC_DISPATCH(RequantizeI32ToI8Impl), acc, lda, rows, cols, bias, bias_step,
                 multiplier, mult_step, zp, lo, hi, out, ldo);
}
void RequantizeI32ToU8(const int32_t* acc, int64_t n, const float* multiplier, int64_t mult_step,
                       int32_t zp, int32_t lo, int32_t hi, uint8_t* out) {
  RequantizeBiasRowsI32ToU8(acc, n, 1, n, nullptr, 0, multiplier, mult_step, zp, lo, hi, out, n);
}
void RequantizeI32ToI8(const int32_t* acc, int64_t n, const float* multiplier, int64_t mult_step,
                       int32_t zp, int32_t lo, int32_t hi, int8_t* out) {
  RequantizeBiasRowsI32ToI8(acc, n, 1, n, nullptr, 0, multiplier, mult_step, zp, lo, hi, out, n);
}

int64_t SumU8(const uint8_t* x, int64_t n) {
  int64_t sum = 0;
  SumU8Rows(x, 1, n, n, &sum);
  return sum;
}
int64_t SumI8(const int8_t* x, int64_t n) {
  int64_t sum = 0;
  SumI8Rows(x, 1, n, n, &sum);
  return sum;
}
void SumU8Rows(const uint8_t* x, int64_t rows, int64_t n, int64_t stride, int64_t* sums) {
  if (rows <= 0) return;
  // uint64 sums of bytes: exact and below 2^63 (n < 2^55), stored as int64.
  HWY_DYNAMIC_DISPATCH(SumBytesRowsImpl)
  (x, rows, n, stride, 0, reinterpret_cast<uint64_t*>(sums));
}
void SumI8Rows(const int8_t* x, int64_t rows, int64_t n, int64_t stride, int64_t* sums) {
  if (rows <= 0) return;
  // Each byte read as int8 + 128 (its top bit flipped), 128 per byte taken off after.
  HWY_DYNAMIC_DISPATCH(SumBytesRowsImpl)
  (reinterpret_cast<const uint8_t*>(x), rows, n, stride, 0x80, reinterpret_cast<uint64_t*>(sums));
  for (int64_t r = 0; r < rows; ++r) sums[r] -= 128 * n;
}

void RequantizeMeansToU8(const int64_t* sums, int64_t n, int64_t count, int32_t x_zp,
                         double x_scale, double y_scale, int32_t y_zp, uint8_t* out) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(RequantizeMeansToU8Impl)(sums, n, count, x_zp, x_scale, y_scale, y_zp, out);
}
void RequantizeMeansToI8(const int64_t* sums, int64_t n, int64_t count, int32_t x_zp,
                         double x_scale, double y_scale, int32_t y_zp, int8_t* out) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(RequantizeMeansToI8Impl)(sums, n, count, x_zp, x_scale, y_scale, y_zp, out);
}

void MinMaxF32(const float* x, int64_t n, float* min_out, float* max_out) {
  float lo = 0.0f, hi = 0.0f;
  int64_t seen = 0;
  const int64_t done = n > 0 ? HWY_DYNAMIC_DISPATCH(MinMaxF32Impl)(x, n, &lo, &hi, &seen) : 0;
  bool any = seen > 0;
  if (!any) lo = hi = 0.0f;
  for (int64_t i = done; i < n; ++i) {
    const float v = x[i];
    if (std::isnan(v)) continue;
    if (!any) {
      lo = hi = v;
      any = true;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  *min_out = lo;
  *max_out = hi;
}

int64_t QdqBinary8(QdqBinaryOp op, bool a_signed, const void* a, int64_t a_step, bool b_signed,
                   const void* b, int64_t b_step, const QdqBinaryParams& p, bool y_signed,
                   void* out, int64_t n) {
  return QdqBinary8Runs(op, a_signed, a, a_step, b_signed, b, b_step, p, y_signed, out, n,
                        QdqBinaryRuns{});
}
int64_t QdqBinary8Runs(QdqBinaryOp op, bool a_signed, const void* a, int64_t a_step, bool b_signed,
                       const void* b, int64_t b_step, const QdqBinaryParams& p, bool y_signed,
                       void* out, int64_t n, const QdqBinaryRuns& runs) {
  if (n <= 0 || runs.count <= 0) return 0;
  return HWY_DYNAMIC_DISPATCH(QdqBinary8Impl)(op, a_signed, a, a_step, b_signed, b, b_step, p,
                                              y_signed, out, n, runs);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
