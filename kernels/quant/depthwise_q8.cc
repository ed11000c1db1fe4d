// Depthwise convolution sums on 8-bit data (kernels/quant/depthwise_q8.h).
//
// AVX-512 VBMI + VNNI (Highway's AVX3_DL target): 16 outputs of a row are one vector of int32
// lanes. Per kernel row and group of 4 taps, one 64-byte load of the input row, one byte permute
// (vpermb) that gives lane j the 4 bytes it needs (columns j * SW + 0..3 of the window), and one
// vpdpbusd that multiplies them by the 4 int8 weights (zero past the kernel's width) and adds
// the products to the lane: a 3x3 kernel takes 3 permutes and 3 dot products per 16 outputs
// where the float32 kernel takes 9 multiply-adds. Integer arithmetic throughout, so exact. No
// other target has a byte permute across the vector and a 4-way byte dot product: there the
// callers keep their portable path.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/depthwise_q8.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/quant/depthwise_q8.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL
// Highway's AVX3_DL target enables VBMI but not the 512-bit VNNI instructions, which this CPU
// check and the functions' own target attribute add (as kernels/quant/qgemm.cc does).
inline bool HasVnni512() {
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
}
#endif

bool DepthwiseQ8AvailableImpl(const DepthwiseQ8Shape& s) {
#if HWY_TARGET == HWY_AVX3_DL
  return HasVnni512() && s.KW >= 1 && s.KW <= 8 && s.KH >= 1 && s.KH * s.KW <= 64 &&
         (s.SW == 1 || s.SW == 2) && s.SH >= 1 && s.OH >= 0 && s.OW >= 0;
#else
  (void)s;
  return false;
#endif
}

#if HWY_TARGET == HWY_AVX3_DL
// The target's own features are named again with VNNI: clang's target attribute replaces the
// ones Highway's pragma gives the function (VBMI's vpermb would be missing) instead of adding.
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) void SumsVnni(const DepthwiseQ8Shape& s,
                                                                    const uint8_t* plane,
                                                                    const int8_t* w,
                                                                    int32_t* sums) {
  const int64_t groups = (s.KW + 3) / 4;
  // The weight dword of kernel row ky, taps 4g .. 4g + 3 (zero past KW), and the pad byte's
  // share of each kernel row (KH * KW <= 64 taps: at most 64 rows and 128 dwords).
  int32_t wd[128];
  int32_t pad_row[64];
  for (int64_t ky = 0; ky < s.KH; ++ky) {
    int32_t row_sum = 0;
    for (int64_t g = 0; g < groups; ++g) {
      int8_t b[4] = {0, 0, 0, 0};
      for (int64_t t = 0; t < 4 && 4 * g + t < s.KW; ++t) b[t] = w[ky * s.KW + 4 * g + t];
      for (const int8_t v : b) row_sum += v;
      std::memcpy(&wd[ky * groups + g], b, 4);
    }
    pad_row[ky] = static_cast<int32_t>(s.pad) * row_sum;
  }
  const int64_t rows_end = s.rows_end < 0 ? s.H : s.rows_end;
  // Lane j (output column ox0 + j) takes window bytes j * SW + t, t < 4.
  alignas(64) uint8_t idx[64];
  for (int j = 0; j < 16; ++j) {
    for (int t = 0; t < 4; ++t) idx[4 * j + t] = static_cast<uint8_t>(j * s.SW + t);
  }
  const __m512i vidx = _mm512_load_si512(idx);
  // Four vectors of 16 outputs at a time: four independent vpdpbusd chains hide its latency.
  constexpr int64_t kVecs = 4;
  for (int64_t oy = 0; oy < s.OH; ++oy) {
    int32_t* out = sums + oy * s.OW;
    for (int64_t ox0 = 0; ox0 < s.OW; ox0 += 16 * kVecs) {
      const int64_t vecs = std::min<int64_t>(kVecs, (s.OW - ox0 + 15) / 16);
      // Kernel rows on border rows: their sums are known (exact integers, any order).
      int64_t ky_lo = 0, ky_hi = s.KH;
      while (ky_lo < s.KH && oy * s.SH + ky_lo < s.rows_begin) ++ky_lo;
      while (ky_hi > ky_lo && oy * s.SH + ky_hi - 1 >= rows_end) --ky_hi;
      int32_t border = 0;
      for (int64_t ky = 0; ky < s.KH; ++ky) border += ky < ky_lo || ky >= ky_hi ? pad_row[ky] : 0;
      const __m512i init = _mm512_set1_epi32(border);
      __m512i acc[kVecs] = {init, init, init, init};
      for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
        const uint8_t* row = plane + (oy * s.SH + ky) * s.W + ox0 * s.SW;
        for (int64_t g = 0; g < groups; ++g) {
          const __m512i wv = _mm512_set1_epi32(wd[ky * groups + g]);
          for (int64_t v = 0; v < vecs; ++v) {
            const __m512i win = _mm512_loadu_si512(row + v * 16 * s.SW + 4 * g);
            acc[v] = _mm512_dpbusd_epi32(acc[v], _mm512_permutexvar_epi8(vidx, win), wv);
          }
        }
      }
      for (int64_t v = 0; v < vecs; ++v) {
        const int64_t at = ox0 + 16 * v, n = std::min<int64_t>(16, s.OW - at);
        if (n == 16) {
          _mm512_storeu_si512(out + at, acc[v]);
        } else {
          _mm512_mask_storeu_epi32(out + at, static_cast<__mmask16>((1u << n) - 1), acc[v]);
        }
      }
    }
  }
}
#endif

void DepthwiseQ8SumsImpl(const DepthwiseQ8Shape& s, const uint8_t* plane, const int8_t* w,
                         int32_t* sums) {
#if HWY_TARGET == HWY_AVX3_DL
  SumsVnni(s, plane, w, sums);
#else
  (void)s;
  (void)plane;
  (void)w;
  (void)sums;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(DepthwiseQ8AvailableImpl);
HWY_EXPORT(DepthwiseQ8SumsImpl);

bool DepthwiseQ8Available(const DepthwiseQ8Shape& s) {
  return HWY_DYNAMIC_DISPATCH(DepthwiseQ8AvailableImpl)(s);
}

void DepthwiseQ8Sums(const DepthwiseQ8Shape& s, const uint8_t* plane, const int8_t* w,
                     int32_t* sums) {
  HWY_DYNAMIC_DISPATCH(DepthwiseQ8SumsImpl)(s, plane, w, sums);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
