// RoundNarrow512: 32 float32 lanes rounded half to even, plus a zero point, clamped and narrowed
// to 8-bit results on AVX-512, with the test for lanes too close to a half-integer to decide in
// float32. Shared by the requantization kernels (kernels/quant/quantize.cc) and the integer
// GEMM's fused requantization (kernels/quant/qgemm.cc), with the undecided-lane margin they
// share. Included once per target (Highway's toggled include guard); RoundNarrow512 is defined
// on the AVX-512 targets only.
#if defined(SIMPLECPP_KERNELS_ROUND_NARROW512_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SIMPLECPP_KERNELS_ROUND_NARROW512_INL_H_
#undef SIMPLECPP_KERNELS_ROUND_NARROW512_INL_H_
#else
#define SIMPLECPP_KERNELS_ROUND_NARROW512_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "quant/quant_params.h"  // quant::RequantizeValue: the undecided lanes

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

// How far from every half-integer a requantization's float32 product must lie for its rounding
// to be the float64 reference's (every target; RequantizeF32Vec in kernels/quant/quantize.cc
// derives the bound). Lanes closer than this are "undecided" and take the scalar reference.
constexpr float kRequantNearHalf = 0.5f - 1.0f / 4096.0f;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Rounding 32 float32 lanes f with |f| < 2^31 to 8-bit results on AVX-512 (RequantizeF32Vec,
// QdqBinaryLoop): vcvtps2dq rounds half to even (the default rounding mode; Highway never
// changes it), vreduceps gives f - round(f) for the undecided-lane test, and the narrowing runs
// in int16 lanes with saturation: a rounded value beyond int16 (or past the zero point's
// addition) saturates to a value beyond [lo, hi] on its own side, which the clamp then takes to
// that bound, as the float clamp of the portable code does. Two packs and one permute narrow 32
// lanes instead of two 32-to-8-bit truncations.
struct RoundNarrow512 {
  __m512i zp16, lo16, hi16;
  // [lo, hi] is the whole range of the stored type (T's, checked by Store): the packs' own
  // saturation is then the clamp.
  bool full_u8, full_i8;
  // After the packs, 32-bit unit 4k holds lanes 4k..4k+3 of the first vector, 4k + 1 those of
  // the second (k = 0..3 over the 128-bit blocks).
  __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));

  RoundNarrow512(int32_t zp, int32_t lo, int32_t hi)
      : zp16(_mm512_set1_epi16(static_cast<int16_t>(zp))),
        lo16(_mm512_set1_epi16(static_cast<int16_t>(lo))),
        hi16(_mm512_set1_epi16(static_cast<int16_t>(hi))),
        full_u8(lo == 0 && hi == 255),
        full_i8(lo == -128 && hi == 127) {}

  // |f - round(f)| (imm 8: keep 0 fraction bits, round to nearest even, no exceptions).
  __m512 Distance(__m512 f) const { return _mm512_and_ps(_mm512_reduce_ps(f, 8), abs_mask); }
  // max(Distance(f0), Distance(f1)) per lane: vrangeps imm 0x0B takes the larger magnitude and
  // clears its sign (one instruction for two ands and a max).
  __m512 MaxDistance(__m512 f0, __m512 f1) const {
    return _mm512_range_ps(_mm512_reduce_ps(f0, 8), _mm512_reduce_ps(f1, 8), 0x0B);
  }

  // clamp(round(f) + zp, lo, hi) of the 32 lanes of f0 and f1 as T (Store: at out).
  template <typename T>
  __m256i Narrow(__m512 f0, __m512 f1) const {
    __m512i v16 = _mm512_adds_epi16(
        _mm512_packs_epi32(_mm512_cvtps_epi32(f0), _mm512_cvtps_epi32(f1)), zp16);
    if (!(std::is_signed_v<T> ? full_i8 : full_u8)) {
      v16 = _mm512_min_epi16(_mm512_max_epi16(v16, lo16), hi16);
    }
    const __m512i v8 =
        std::is_signed_v<T> ? _mm512_packs_epi16(v16, v16) : _mm512_packus_epi16(v16, v16);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, v8));
  }
  template <typename T>
  void Store(__m512 f0, __m512 f1, T* HWY_RESTRICT out) const {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), Narrow<T>(f0, f1));
  }
  // Store's first `width` (< 32) bytes only; the others are not touched.
  template <typename T>
  void StoreFirst(__m512 f0, __m512 f1, int width, T* HWY_RESTRICT out) const {
    _mm256_mask_storeu_epi8(out, static_cast<__mmask32>((uint64_t{1} << width) - 1),
                            Narrow<T>(f0, f1));
  }
};

// Lanes that RoundNarrow512 stores left undecided (too close to a half-integer for float32:
// about 1 in 2000), noted while a kernel's accumulators are in registers and decided after its
// stores by the scalar reference (quant::RequantizeValue). Deciding them at once would put a
// call among the stores, across which the compiler keeps every live accumulator in memory.
// Holds kGroups groups of 32 lanes: a kernel notes at most that many between Decide calls.
template <int kGroups>
class UndecidedLanes {
 public:
  UndecidedLanes(int32_t zp, int32_t lo, int32_t hi) : zp_(zp), lo_(lo), hi_(hi) {}

  // The 32 lanes stored from products f0 | f1 of the sums x0 | x1 as bytes at out (the first
  // `width`): those too close to a half-integer are noted. Lane j's multiplier is
  // mult[j * mult_step] (mult_step 0: one for all).
  HWY_INLINE void Note(const RoundNarrow512& narrow, __m512 f0, __m512 f1, __m512i x0, __m512i x1,
                       void* out, int width, const float* mult, int64_t mult_step) {
    if (HWY_LIKELY(!_mm512_cmp_ps_mask(narrow.MaxDistance(f0, f1), _mm512_set1_ps(kRequantNearHalf),
                                       _CMP_GT_OQ))) {
      return;
    }
    Group& g = groups_[count_++];
    _mm512_store_si512(g.held, x0);
    _mm512_store_si512(g.held + 16, x1);
    _mm512_store_ps(g.far, narrow.Distance(f0));
    _mm512_store_ps(g.far + 16, narrow.Distance(f1));
    g.out = static_cast<uint8_t*>(out);
    g.mult = mult;
    g.mult_step = mult_step;
    g.width = width;
  }

  // Rewrites the noted lanes' bytes with the reference's; after the vector stores.
  HWY_INLINE void Decide() {
    if (HWY_LIKELY(count_ == 0)) return;
    DecideNoted();
  }

 private:
  struct Group {
    alignas(64) int32_t held[32];
    alignas(64) float far[32];
    uint8_t* out;
    const float* mult;
    int64_t mult_step;
    int width;
  };

  HWY_NOINLINE void DecideNoted() {
    for (int k = 0; k < count_; ++k) {
      const Group& g = groups_[k];
      for (int j = 0; j < g.width; ++j) {
        if (g.far[j] > kRequantNearHalf) {
          // The low byte of a value in [lo, hi]: the uint8 or int8 result's bits.
          g.out[j] = static_cast<uint8_t>(
              quant::RequantizeValue(g.held[j], g.mult[j * g.mult_step], zp_, lo_, hi_));
        }
      }
    }
    count_ = 0;
  }

  Group groups_[kGroups];
  int count_ = 0;
  int32_t zp_, lo_, hi_;
};
#endif

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#endif  // SIMPLECPP_KERNELS_ROUND_NARROW512_INL_H_ toggle
