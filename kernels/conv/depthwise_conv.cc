// Depthwise convolution kernel (see kernels/conv/depthwise_conv.h): per output row, interior
// columns accumulate every tap in vector registers, up to 8 vectors at once (stride 1 or 2 along
// the row; short rows 2 or 4 at a time), and store once; other strides use the same tap order
// with scalar FMAs. Padded inputs are copied into a zero-bordered plane first, so that every
// column is interior; on AVX-512, square 3x3 / 5x5 kernels at stride 1 or 2 read x directly
// with masked loads instead (DepthwiseChannelDirect), in the same tap order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv/depthwise_conv.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/conv/depthwise_conv.h"
#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm_internal.h"  // ThreadScratch
// Per target, before this file's own HWY_BEFORE_NAMESPACE.
#include "kernels/float16/float16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// R output rows x N vectors of outputs (R * N <= 8 accumulators), every tap inside the row:
// output = b + taps in (ky, kx) order. Row r's input starts at x0 + r * x_step (x0: the first
// kernel row's input for column 0 of the run; row_step: the distance between kernel rows; w0:
// that row's weights) and its outputs at y + r * y_step. Vector n < N - 1 holds the outputs from
// column n * L, the last one those from column `last` (its columns may overlap the previous
// vector's: they get the same values). The R * N sums are independent chains interleaved tap by
// tap: one chain of dependent multiply-adds runs at the instruction's latency, several at its
// throughput, so short rows (a 56-wide row: 4 chains of 9 taps) go several at a time. Stride 2
// loads 2L consecutive inputs per tap and keeps their even lanes.
template <int R, int N, int64_t kStride, class D>
HWY_INLINE void RowsVectors(D d, const float* HWY_RESTRICT x0, int64_t x_step, int64_t row_step,
                            const float* HWY_RESTRICT w0, int64_t rows, int64_t KW, int64_t DW,
                            float b, float* HWY_RESTRICT y, int64_t y_step, int64_t last) {
  static_assert(R >= 1 && N >= 1 && R * N <= 8, "up to 8 accumulators");
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  using V = hn::Vec<D>;
  V acc[R][N];
  for (int r = 0; r < R; ++r) {
    for (int n = 0; n < N; ++n) acc[r][n] = hn::Set(d, b);
  }
  int64_t column[N];
  for (int n = 0; n < N; ++n) column[n] = n == N - 1 ? last : n * L;
  for (int64_t ky = 0; ky < rows; ++ky) {
    const float* wr = w0 + ky * KW;
    for (int64_t kx = 0; kx < KW; ++kx) {
      const auto wv = hn::Set(d, wr[kx]);
      const float* p = x0 + ky * row_step + kx * DW;
      for (int r = 0; r < R; ++r) {
        for (int n = 0; n < N; ++n) {
          const float* q = p + r * x_step + column[n] * kStride;
          V t;
          if constexpr (kStride == 1) {
            t = hn::LoadU(d, q);
          } else {
            t = hn::ConcatEven(d, hn::LoadU(d, q + L), hn::LoadU(d, q));
          }
          acc[r][n] = hn::MulAdd(wv, t, acc[r][n]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int n = 0; n < N; ++n) hn::StoreU(acc[r][n], d, y + r * y_step + column[n]);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// AVX-512 rows whose input rows start on 64-byte boundaries (the zero-bordered plane), stride 1,
// dilation 1: every input vector is one aligned load, and the taps kx = 1.. are its lanes shifted
// across the next vector's (valignd). An unaligned 512-bit load crosses two cache lines and halves
// the loads per cycle; nearly every tap load of the portable twin (RowsVectors) does. The sums are
// RowsVectors's operations in its order: the same bits.
constexpr int64_t kAlignedLanes = 16;

template <int kShift>
HWY_INLINE __m512 LanesFrom(__m512 lo, __m512 hi) {
  if constexpr (kShift == 0) {
    return lo;
  } else {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), kShift));
  }
}

// R rows x N vectors of outputs from column 0 (y + r * y_step + n * 16); the last vector stores
// its first `last_lanes` lanes only. x0: row 0's first kernel row at column 0 (64-byte aligned, as
// are x_step and row_step in bytes); N + 1 vectors of each input row are read. Stride 2: each
// input row is stored deinterleaved, its even columns then (at + odd) its odd ones, so that tap kx
// is lanes kx / 2 on of the even or odd half's vectors.
template <int R, int N, int KW, int kStride>
HWY_INLINE void RowsAligned(const float* HWY_RESTRICT x0, int64_t x_step, int64_t row_step,
                            int64_t odd, const float* HWY_RESTRICT w0, int64_t rows, float b,
                            float* HWY_RESTRICT y, int64_t y_step, int64_t last_lanes) {
  static_assert(R * N <= 8 && (KW == 3 || KW == 5), "up to 8 accumulators, 3 or 5 taps");
  static_assert(kStride == 1 || kStride == 2, "stride 1 or 2");
  __m512 acc[R][N];
  for (int r = 0; r < R; ++r) {
    for (int n = 0; n < N; ++n) acc[r][n] = _mm512_set1_ps(b);
  }
  for (int64_t ky = 0; ky < rows; ++ky) {
    __m512 wv[KW];
    for (int kx = 0; kx < KW; ++kx) wv[kx] = _mm512_set1_ps(w0[ky * KW + kx]);
    for (int r = 0; r < R; ++r) {
      const float* p = x0 + r * x_step + ky * row_step;
      __m512 a[N + 1];
      for (int n = 0; n <= N; ++n) a[n] = _mm512_load_ps(p + n * kAlignedLanes);
      if constexpr (kStride == 1) {
        for (int n = 0; n < N; ++n) {
          acc[r][n] = _mm512_fmadd_ps(wv[0], LanesFrom<0>(a[n], a[n + 1]), acc[r][n]);
          acc[r][n] = _mm512_fmadd_ps(wv[1], LanesFrom<1>(a[n], a[n + 1]), acc[r][n]);
          acc[r][n] = _mm512_fmadd_ps(wv[2], LanesFrom<2>(a[n], a[n + 1]), acc[r][n]);
          if constexpr (KW == 5) {
            acc[r][n] = _mm512_fmadd_ps(wv[3], LanesFrom<3>(a[n], a[n + 1]), acc[r][n]);
            acc[r][n] = _mm512_fmadd_ps(wv[4], LanesFrom<4>(a[n], a[n + 1]), acc[r][n]);
          }
        }
      } else {
        __m512 o[N + 1];
        for (int n = 0; n <= N; ++n) o[n] = _mm512_load_ps(p + odd + n * kAlignedLanes);
        for (int n = 0; n < N; ++n) {
          acc[r][n] = _mm512_fmadd_ps(wv[0], LanesFrom<0>(a[n], a[n + 1]), acc[r][n]);
          acc[r][n] = _mm512_fmadd_ps(wv[1], LanesFrom<0>(o[n], o[n + 1]), acc[r][n]);
          acc[r][n] = _mm512_fmadd_ps(wv[2], LanesFrom<1>(a[n], a[n + 1]), acc[r][n]);
          if constexpr (KW == 5) {
            acc[r][n] = _mm512_fmadd_ps(wv[3], LanesFrom<1>(o[n], o[n + 1]), acc[r][n]);
            acc[r][n] = _mm512_fmadd_ps(wv[4], LanesFrom<2>(a[n], a[n + 1]), acc[r][n]);
          }
        }
      }
    }
  }
  const __mmask16 last_mask = static_cast<__mmask16>((1u << last_lanes) - 1u);
  for (int r = 0; r < R; ++r) {
    float* yr = y + r * y_step;
    for (int n = 0; n + 1 < N; ++n) _mm512_storeu_ps(yr + n * kAlignedLanes, acc[r][n]);
    _mm512_mask_storeu_ps(yr + (N - 1) * kAlignedLanes, last_mask, acc[r][N - 1]);
  }
}

// Outputs [0, OW) of `count` rows (1, 2 or 4; 2 needs OW <= 64, 4 OW <= 32) as RowsAligned.
template <int KW, int kStride>
void RowsAlignedAll(const float* HWY_RESTRICT x0, int64_t x_step, int64_t row_step, int64_t odd,
                    const float* HWY_RESTRICT w0, int64_t rows, float b, float* HWY_RESTRICT y,
                    int64_t y_step, int64_t OW, int count) {
  constexpr int64_t L = kAlignedLanes;
  auto run = [&](auto r, auto n, int64_t col, int64_t last_lanes) {
    RowsAligned<decltype(r)::value, decltype(n)::value, KW, kStride>(
        x0 + col, x_step, row_step, odd, w0, rows, b, y + col, y_step, last_lanes);
  };
  const int64_t vectors = (OW + L - 1) / L;
  const int64_t tail = OW - (vectors - 1) * L;  // lanes of the last vector, 1..16
  using std::integral_constant;
  if (count == 4) {
    if (vectors == 1) {
      run(integral_constant<int, 4>(), integral_constant<int, 1>(), 0, tail);
    } else {
      run(integral_constant<int, 4>(), integral_constant<int, 2>(), 0, tail);
    }
    return;
  }
  if (count == 2) {
    switch (vectors) {
      case 1: run(integral_constant<int, 2>(), integral_constant<int, 1>(), 0, tail); break;
      case 2: run(integral_constant<int, 2>(), integral_constant<int, 2>(), 0, tail); break;
      case 3: run(integral_constant<int, 2>(), integral_constant<int, 3>(), 0, tail); break;
      default: run(integral_constant<int, 2>(), integral_constant<int, 4>(), 0, tail); break;
    }
    return;
  }
  // One row: passes of up to 8 vectors of near-equal sizes, as RowInterior.
  const int64_t passes = (vectors + 7) / 8;
  int64_t v = 0;
  for (int64_t pass = 0; pass < passes; ++pass) {
    const int64_t n = (vectors - v + (passes - pass) - 1) / (passes - pass);
    const int64_t lanes = pass + 1 == passes ? tail : L;
    const int64_t col = v * L;
    using I1 = integral_constant<int, 1>;
    switch (n) {
      case 1: run(I1(), integral_constant<int, 1>(), col, lanes); break;
      case 2: run(I1(), integral_constant<int, 2>(), col, lanes); break;
      case 3: run(I1(), integral_constant<int, 3>(), col, lanes); break;
      case 4: run(I1(), integral_constant<int, 4>(), col, lanes); break;
      case 5: run(I1(), integral_constant<int, 5>(), col, lanes); break;
      case 6: run(I1(), integral_constant<int, 6>(), col, lanes); break;
      case 7: run(I1(), integral_constant<int, 7>(), col, lanes); break;
      default: run(I1(), integral_constant<int, 8>(), col, lanes); break;
    }
    v += n;
  }
}
#endif  // AVX3

// Outputs [lo, hi) (L <= hi - lo <= 4 * L) of `count` rows (1, 2 or 4 with hi - lo <= 2 * L)
// whose kernel rows are all inside the image, several rows per pass.
template <int64_t kStride, class D>
HWY_INLINE void ShortRows(D d, const float* HWY_RESTRICT x0, int64_t x_step, int64_t row_step,
                          const float* HWY_RESTRICT w0, int64_t rows, int64_t KW, int64_t DW,
                          float b, float* HWY_RESTRICT y, int64_t y_step, int64_t lo, int64_t hi,
                          int count) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t vectors = (hi - lo + L - 1) / L;
  const float* x = x0 + lo * kStride;
  float* yo = y + lo;
  const int64_t last = hi - L - lo;
  auto run = [&](auto r, auto n) {
    RowsVectors<decltype(r)::value, decltype(n)::value, kStride>(d, x, x_step, row_step, w0, rows,
                                                                 KW, DW, b, yo, y_step, last);
  };
  using I1 = std::integral_constant<int, 1>;
  using I2 = std::integral_constant<int, 2>;
  using I3 = std::integral_constant<int, 3>;
  using I4 = std::integral_constant<int, 4>;
  if (count == 4) {
    if (vectors == 1) {
      run(I4(), I1());
    } else {
      run(I4(), I2());
    }
    return;
  }
  const bool two = count == 2;
  switch (vectors) {
    case 1: two ? run(I2(), I1()) : run(I1(), I1()); break;
    case 2: two ? run(I2(), I2()) : run(I1(), I2()); break;
    case 3: two ? run(I2(), I3()) : run(I1(), I3()); break;
    default: two ? run(I2(), I4()) : run(I1(), I4()); break;
  }
}

// Outputs [lo, hi) of one row (hi - lo >= L), every tap inside: the row's vectors in passes of
// at most 8, of near-equal sizes (10 vectors as 5 + 5 rather than 8 + 2: a short pass has too
// few chains to hide the multiply-add's latency); the last vector of the last pass ends at hi.
template <int64_t kStride, class D>
HWY_INLINE void RowInterior(D d, const float* HWY_RESTRICT x0, int64_t row_step,
                            const float* HWY_RESTRICT w0, int64_t rows, int64_t KW, int64_t DW,
                            float b, float* HWY_RESTRICT yrow, int64_t lo, int64_t hi) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t vectors = (hi - lo + L - 1) / L;
  const int64_t passes = (vectors + 7) / 8;
  int64_t o = lo;
  for (int64_t pass = 0; pass < passes; ++pass) {
    const int64_t count = (vectors - (o - lo) / L + (passes - pass) - 1) / (passes - pass);
    const float* x = x0 + o * kStride;
    float* y = yrow + o;
    const int64_t last = pass + 1 == passes ? hi - L - o : (count - 1) * L;
    auto run = [&](auto n) {
      RowsVectors<1, decltype(n)::value, kStride>(d, x, 0, row_step, w0, rows, KW, DW, b, y, 0,
                                                  last);
    };
    using std::integral_constant;
    switch (count) {
      case 1: run(integral_constant<int, 1>()); break;
      case 2: run(integral_constant<int, 2>()); break;
      case 3: run(integral_constant<int, 3>()); break;
      case 4: run(integral_constant<int, 4>()); break;
      case 5: run(integral_constant<int, 5>()); break;
      case 6: run(integral_constant<int, 6>()); break;
      case 7: run(integral_constant<int, 7>()); break;
      default: run(integral_constant<int, 8>()); break;
    }
    o += count * L;
  }
}

// One output channel: yc[oy][ox] = b + sum over taps (ky, then kx, ascending) of
// w[ky][kx] * x[iy][ix], skipping taps that fall into the padding. The columns where every tap
// is inside the row (the interior) accumulate vectors of outputs in registers and store them
// once; the few edge columns take the same sum with bounds checks, in the same tap order.
void DepthwiseChannel(const float* HWY_RESTRICT xc, const float* HWY_RESTRICT wc, float b,
                      float* HWY_RESTRICT yc, int64_t H, int64_t W, int64_t OH, int64_t OW,
                      int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW,
                      int64_t PH, int64_t PW) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  // Interior columns: ox*SW + kx*DW - PW in [0, W) for every kx.
  int64_t lo = PW > 0 ? (PW + SW - 1) / SW : 0;
  const int64_t last_off = (KW - 1) * DW - PW;  // the right-most tap's offset
  int64_t hi = (W - 1 - last_off) < 0 ? 0 : (W - 1 - last_off) / SW + 1;
  lo = std::min(lo, OW);
  hi = std::max(std::min(hi, OW), lo);
  // Stride 2's vectors load one float past their last tap: interior columns whose loads stay
  // inside the row (2*ox + last_off + 1 <= W - 1 for the last one).
  const int64_t hi2 = std::max(std::min(hi, (W - last_off) / 2), lo);
  // The vector run of every row: [lo, vhi).
  int64_t vhi = lo;
  if (SW == 1 && hi - lo >= L) vhi = hi;
  if (SW == 2 && hi2 - lo >= L) vhi = hi2;
  const int64_t vectors = (vhi - lo + L - 1) / L;
  // Rows of at most 4 vectors go 2 or 4 at a time where their kernel rows are all inside the
  // image: output rows [full_lo, full_hi).
  const int group = vhi == lo ? 1 : vectors <= 2 ? 4 : vectors <= 4 ? 2 : 1;
  const int64_t full_lo = std::min(OH, (PH + SH - 1) / SH);
  const int64_t bottom = H - 1 - (KH - 1) * DH + PH;  // the last row's top input row + PH
  const int64_t full_hi = std::max(full_lo, std::min(OH, bottom < 0 ? 0 : bottom / SH + 1));
  // Every column of row oy outside [lo, vhi): scalar sums in the same tap order, skipping taps in
  // the padding.
  auto columns_outside = [&](int64_t oy) {
    float* yrow = yc + oy * OW;
    const int64_t iy0 = oy * SH - PH;
    int64_t ky_lo = 0, ky_hi = KH;
    while (ky_lo < KH && iy0 + ky_lo * DH < 0) ++ky_lo;
    while (ky_hi > ky_lo && iy0 + (ky_hi - 1) * DH >= H) --ky_hi;
    auto edge = [&](int64_t ox) {
      float acc = b;
      for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
        const float* xrow = xc + (iy0 + ky * DH) * W;
        for (int64_t kx = 0; kx < KW; ++kx) {
          const int64_t ix = ox * SW + kx * DW - PW;
          if (ix >= 0 && ix < W) acc = std::fma(wc[ky * KW + kx], xrow[ix], acc);
        }
      }
      yrow[ox] = acc;
    };
    for (int64_t ox = 0; ox < lo; ++ox) edge(ox);
    for (int64_t ox = vhi; ox < hi; ++ox) {
      float acc = b;
      for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
        const float* xp = xc + (iy0 + ky * DH) * W + ox * SW - PW;
        const float* wp = wc + ky * KW;
        for (int64_t kx = 0; kx < KW; ++kx) acc = std::fma(wp[kx], xp[kx * DW], acc);
      }
      yrow[ox] = acc;
    }
    for (int64_t ox = hi; ox < OW; ++ox) edge(ox);
  };
  for (int64_t oy = 0; oy < OH;) {
    int count = 1;
    if (group > 1 && oy >= full_lo) {
      count = group;
      while (count > 1 && oy + count > full_hi) count /= 2;
    }
    const int64_t iy0 = oy * SH - PH;
    if (count > 1) {
      const float* x0 = xc + iy0 * W - PW;
      if (SW == 1) {
        ShortRows<1>(d, x0, SH * W, DH * W, wc, KH, KW, DW, b, yc + oy * OW, OW, lo, vhi, count);
      } else {
        ShortRows<2>(d, x0, SH * W, DH * W, wc, KH, KW, DW, b, yc + oy * OW, OW, lo, vhi, count);
      }
      for (int r = 0; r < count; ++r) columns_outside(oy + r);
      oy += count;
      continue;
    }
    if (vhi > lo) {
      // Rows of the kernel that land inside the image.
      int64_t ky_lo = 0, ky_hi = KH;
      while (ky_lo < KH && iy0 + ky_lo * DH < 0) ++ky_lo;
      while (ky_hi > ky_lo && iy0 + (ky_hi - 1) * DH >= H) --ky_hi;
      const int64_t rows = ky_hi - ky_lo;
      // Column 0's input for the first kernel row inside the image.
      const float* x0 = rows > 0 ? xc + (iy0 + ky_lo * DH) * W - PW : xc;
      const float* w0 = wc + ky_lo * KW;
      if (SW == 1) {
        RowInterior<1>(d, x0, DH * W, w0, rows, KW, DW, b, yc + oy * OW, lo, vhi);
      } else {
        RowInterior<2>(d, x0, DH * W, w0, rows, KW, DW, b, yc + oy * OW, lo, vhi);
      }
    }
    columns_outside(oy);
    ++oy;
  }
}

// plane [H, WP] = x [H, W] placed at column PW, zeros left and right of it. Every row is zeroed
// and copied by whole vectors (a row's last vector overlaps the one before it; the zeros of the
// last row may run up to a vector past WP: the plane has kPlaneSlack floats more). Loops of
// single elements here were turned into a memset / memmove call per piece, which cost more than
// the copy on rows this short.
constexpr int64_t kPlaneSlack = 64;
void PadColumns(const float* HWY_RESTRICT x, int64_t H, int64_t W, int64_t PW, int64_t WP,
                float* HWY_RESTRICT plane) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  for (int64_t r = 0; r < H; ++r) {
    float* row = plane + r * WP;
    const float* src = x + r * W;
    for (int64_t i = 0; i < WP; i += L) hn::StoreU(zero, d, row + i);
    if (W < L) {
      for (int64_t j = 0; j < W; ++j) row[PW + j] = src[j];
      continue;
    }
    int64_t j = 0;
    for (; j + L <= W; j += L) hn::StoreU(hn::LoadU(d, src + j), d, row + PW + j);
    if (j < W) hn::StoreU(hn::LoadU(d, src + W - L), d, row + PW + W - L);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Whether DepthwiseChannelAligned takes a convolution.
bool AlignedApplies(int64_t KW, int64_t SW, int64_t DW, int64_t OW) {
  return (SW == 1 || SW == 2) && DW == 1 && (KW == 3 || KW == 5) && OW > 0;
}

// The first n lanes (n clamped to [0, 16]).
HWY_INLINE __mmask16 FirstLanes(int64_t n) {
  return n <= 0 ? 0 : n >= kAlignedLanes ? 0xFFFF : static_cast<__mmask16>((1u << n) - 1u);
}

// Input vectors as float32 for AlignedPlane: float32 as it is, 16-bit values widened exactly as
// Widen16 widens them (float16: vcvtph2ps, which Highway's PromoteTo is on this target; bfloat16:
// f16vec's shift with NaNs quieted). Load(p): elements [p, p + 16); Masked(m, p): the lanes of m,
// zero elsewhere (lanes outside m are not read: AVX-512 masked loads suppress their faults).
struct LoadF32 {
  static HWY_INLINE __m512 Load(const float* p) { return _mm512_loadu_ps(p); }
  static HWY_INLINE __m512 Masked(__mmask16 m, const float* p) {
    return _mm512_maskz_loadu_ps(m, p);
  }
};
template <bool kBF16>
struct Load16 {
  static HWY_INLINE __m512 Widen(__m256i bits) {
    if constexpr (kBF16) {
      return f16vec::BF16ToFloatVec(hn::Vec<f16vec::DU16>{bits}).raw;
    } else {
      return _mm512_cvtph_ps(bits);
    }
  }
  static HWY_INLINE __m512 Load(const uint16_t* p) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static HWY_INLINE __m512 Masked(__mmask16 m, const uint16_t* p) {
    return Widen(_mm256_maskz_loadu_epi16(m, p));
  }
};

// The plane of DepthwiseChannelAligned: each input row zero-padded (x at column PW) into rows of
// rowlen floats (a multiple of 16 or, stride 2, of 32), written once by aligned stores; for
// stride 2 each row's even columns go to its first half and its odd ones to its second half.
// (Zeroing a row and then copying into it, or splitting a row right after writing it, reloads
// data still in the store queue from stores that only partly cover the load: it stalls until
// they retire.) Vector v of a padded row is elements [16 v - PW, 16 v - PW + 16) of its input row,
// those outside it zero: one load, masked where it reaches past either end, the same for every
// row. So the plane is written a column of vectors at a time over blocks of rows: the masks and
// offsets are set once per column, and the inner loop is a load (and for stride 2 a permute) and
// a store per vector (per row and vector, the scalar work had cost more than the vector work).
template <class Loader, typename T>
void AlignedPlane(const T* HWY_RESTRICT x, int64_t H, int64_t W, int64_t PW, int64_t SW,
                  int64_t rowlen, float* HWY_RESTRICT plane) {
  constexpr int64_t L = kAlignedLanes;
  constexpr int64_t kBlockRows = 16;  // rows per block: their inputs stay in L1 across columns
  const int64_t count = rowlen / L;
  // Vector v's offset into its input row and the mask of its lanes inside the row (offset 0
  // when it has none, so that no pointer strays far from x).
  auto offset_of = [&](int64_t v, __mmask16* mask) {
    const int64_t s = v * L - PW;
    *mask = static_cast<__mmask16>(FirstLanes(W - s) & ~FirstLanes(-s));
    return *mask == 0 ? 0 : s;
  };
  const __m512i even_lanes = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
                                              2, 0);
  const __m512i odd_lanes = _mm512_add_epi32(even_lanes, _mm512_set1_epi32(1));
  const int64_t half = rowlen / 2;
  for (int64_t r0 = 0; r0 < H; r0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, H - r0);
    const T* xb = x + r0 * W;
    float* pb = plane + r0 * rowlen;
    // The row loops advance pointers (GCC unrolled an indexed loop over a block's rows into
    // per-row bound checks and spilled row addresses).
    if (SW == 1) {
      for (int64_t v = 0; v < count; ++v) {
        __mmask16 m;
        const T* src = xb + offset_of(v, &m);
        float* out = pb + v * L;
        float* const end = out + rows * rowlen;
        if (m == 0xFFFF) {
          for (; out != end; out += rowlen, src += W) _mm512_store_ps(out, Loader::Load(src));
        } else {
          for (; out != end; out += rowlen, src += W) {
            _mm512_store_ps(out, Loader::Masked(m, src));
          }
        }
      }
      continue;
    }
    for (int64_t j = 0; j < count / 2; ++j) {
      __mmask16 m0, m1;
      const T* src0 = xb + offset_of(2 * j, &m0);
      const T* src1 = xb + offset_of(2 * j + 1, &m1);
      float* out = pb + j * L;
      float* const end = out + rows * rowlen;
      auto split = [&](__m512 lo, __m512 hi) {
        _mm512_store_ps(out, _mm512_permutex2var_ps(lo, even_lanes, hi));
        _mm512_store_ps(out + half, _mm512_permutex2var_ps(lo, odd_lanes, hi));
      };
      if ((m0 & m1) == 0xFFFF) {
        for (; out != end; out += rowlen, src0 += W, src1 += W) {
          split(Loader::Load(src0), Loader::Load(src1));
        }
      } else {
        for (; out != end; out += rowlen, src0 += W, src1 += W) {
          split(Loader::Masked(m0, src0), Loader::Masked(m1, src1));
        }
      }
    }
  }
}

// `groups` groups of R output rows of N vectors (OW outputs each) whose kernel rows are all inside
// the image, one call: per call of RowsAligned, its setup (and on this path the calls through
// RowsAlignedAll) had cost about as much as its taps on short rows. x0: the first row's first
// kernel row.
template <int R, int N, int KW, int kStride>
void FullGroupsAligned(const float* HWY_RESTRICT x0, int64_t x_step, int64_t row_step, int64_t odd,
                       const float* HWY_RESTRICT wc, int64_t KH, float b, float* HWY_RESTRICT y,
                       int64_t OW, int64_t groups) {
  const int64_t last_lanes = OW - (N - 1) * kAlignedLanes;
  for (int64_t g = 0; g < groups; ++g) {
    const float* xg = x0 + g * R * x_step;
    float* yg = y + g * R * OW;
    // Square kernels at stride 1: a constant count of kernel rows (fully unrolled). At stride 2
    // (twice the loads per row) the unrolled form ran out of registers and was slower.
    if (kStride == 1 && KH == KW) {
      RowsAligned<R, N, KW, kStride>(xg, x_step, row_step, odd, wc, KW, b, yg, OW, last_lanes);
    } else {
      RowsAligned<R, N, KW, kStride>(xg, x_step, row_step, odd, wc, KH, b, yg, OW, last_lanes);
    }
  }
}

using FullGroupsFn = void (*)(const float*, int64_t, int64_t, int64_t, const float*, int64_t,
                              float, float*, int64_t, int64_t);

// FullGroupsAligned for groups of `group` rows (4: up to 2 vectors, 2: up to 4) of `vectors`.
template <int KW, int kStride>
FullGroupsFn FullGroupsFor(int group, int64_t vectors) {
  if (group == 4) {
    return vectors == 1 ? &FullGroupsAligned<4, 1, KW, kStride>
                        : &FullGroupsAligned<4, 2, KW, kStride>;
  }
  switch (vectors) {
    case 1: return &FullGroupsAligned<2, 1, KW, kStride>;
    case 2: return &FullGroupsAligned<2, 2, KW, kStride>;
    case 3: return &FullGroupsAligned<2, 3, KW, kStride>;
    default: return &FullGroupsAligned<2, 4, KW, kStride>;
  }
}

// One output channel from AlignedPlane's plane (rows of rowlen floats, the odd columns at `odd`
// for stride 2): the sums of DepthwiseChannel, in its tap order, several short rows at a time.
void DepthwiseChannelAligned(const float* HWY_RESTRICT plane, int64_t rowlen, int64_t odd,
                             const float* HWY_RESTRICT wc, float b, float* HWY_RESTRICT yc,
                             int64_t H, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                             int64_t SH, int64_t SW, int64_t DH, int64_t PH) {
  const int64_t vectors = (OW + kAlignedLanes - 1) / kAlignedLanes;
  const int group = vectors <= 2 ? 4 : vectors <= 4 ? 2 : 1;
  const int64_t full_lo = std::min(OH, (PH + SH - 1) / SH);
  const int64_t bottom = H - 1 - (KH - 1) * DH + PH;
  const int64_t full_hi = std::max(full_lo, std::min(OH, bottom < 0 ? 0 : bottom / SH + 1));
  auto* rows_aligned = KW == 3 ? (SW == 1 ? &RowsAlignedAll<3, 1> : &RowsAlignedAll<3, 2>)
                               : (SW == 1 ? &RowsAlignedAll<5, 1> : &RowsAlignedAll<5, 2>);
  FullGroupsFn full_groups = nullptr;
  if (group > 1) {
    full_groups = KW == 3 ? (SW == 1 ? FullGroupsFor<3, 1>(group, vectors)
                                     : FullGroupsFor<3, 2>(group, vectors))
                          : (SW == 1 ? FullGroupsFor<5, 1>(group, vectors)
                                     : FullGroupsFor<5, 2>(group, vectors));
  }
  for (int64_t oy = 0; oy < OH;) {
    if (full_groups != nullptr && oy >= full_lo && oy + group <= full_hi) {
      const int64_t groups = (full_hi - oy) / group;
      full_groups(plane + (oy * SH - PH) * rowlen, SH * rowlen, DH * rowlen, odd, wc, KH, b,
                  yc + oy * OW, OW, groups);
      oy += groups * group;
      continue;
    }
    int count = 1;
    if (oy >= full_lo) {
      count = group;
      while (count > 1 && oy + count > full_hi) count /= 2;
    }
    const int64_t iy0 = oy * SH - PH;
    int64_t ky_lo = 0, ky_hi = KH;
    while (ky_lo < KH && iy0 + ky_lo * DH < 0) ++ky_lo;
    while (ky_hi > ky_lo && iy0 + (ky_hi - 1) * DH >= H) --ky_hi;
    const float* x0 = ky_hi > ky_lo ? plane + (iy0 + ky_lo * DH) * rowlen : plane;
    rows_aligned(x0, SH * rowlen, DH * rowlen, odd, wc + ky_lo * KW, ky_hi - ky_lo, b,
                 yc + oy * OW, OW, OW, count);
    oy += count;
  }
}

// Depthwise rows read straight from x, for stride 1 or 2 in both directions, dilation 1 and a
// square 3x3 or 5x5 kernel: no plane. AlignedPlane's plane costs a masked load and a 512-bit
// store per 16 input columns of every row (at stride 2 also two permutes per 32), as much as the
// taps that read it at stride 2. Here vector n of an output row (outputs 16 n..) takes input
// columns from s = S 16 n - PW: V0 = x[s, s + 16), at stride 2 V1 = x[s + 16, s + 32), and the
// first K - 1 lanes of the next vector (each masked to the row: lanes outside it are zero, as
// the plane's padding). Stride 1: tap kx is V0 moved kx lanes on over V1 (valignd). Stride 2:
// the taps are E = x[s + 2i] (even lanes of V0:V1), O = x[s + 2i + 1] (odd lanes), then E and O
// moved one lane on with V2's lanes (x[s + 2i + 2], x[s + 2i + 3]) and E two lanes on
// (x[s + 2i + 4]). R output rows at a time read their S (R - 1) + K input rows once each,
// input rows outside the image are skipped, and each output's sum is b, then its taps in
// (ky, kx) order: DepthwiseChannelAligned's operations, so its bits.
template <int K>
struct DirectTaps {
  static_assert(K == 3 || K == 5, "3 or 5 taps");
  __m512 t[K];
};

// The masks of DirectLoad's S + 1 vectors at columns s + 16 v of a row of W (the last one's
// first K - 1 lanes only), and their offsets (0 where a mask is empty, so that no pointer strays
// far from the row). The same for every row.
template <int S>
struct DirectColumns {
  __mmask16 m[S + 1];
  int64_t at[S + 1];
  DirectColumns(int64_t s, int64_t W, int K) {
    for (int v = 0; v <= S; ++v) {
      const int64_t c = s + v * kAlignedLanes;
      const __mmask16 keep = v < S ? 0xFFFF : static_cast<__mmask16>((1u << (K - 1)) - 1u);
      m[v] = static_cast<__mmask16>(FirstLanes(W - c) & ~FirstLanes(-c) & keep);
      at[v] = m[v] == 0 ? 0 : c;
    }
  }
};

template <int K, int S, class Loader, typename T>
HWY_INLINE DirectTaps<K> DirectLoad(const T* HWY_RESTRICT row, const DirectColumns<S>& cols) {
  DirectTaps<K> taps;
  const __m512 v0 = Loader::Masked(cols.m[0], row + cols.at[0]);
  const __m512 v1 = Loader::Masked(cols.m[1], row + cols.at[1]);
  if constexpr (S == 1) {
    taps.t[0] = v0;
    taps.t[1] = LanesFrom<1>(v0, v1);
    taps.t[2] = LanesFrom<2>(v0, v1);
    if constexpr (K == 5) {
      taps.t[3] = LanesFrom<3>(v0, v1);
      taps.t[4] = LanesFrom<4>(v0, v1);
    }
    return taps;
  } else {
    const __m512 v2 = Loader::Masked(cols.m[2], row + cols.at[2]);
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512 e = _mm512_permutex2var_ps(v0, even, v1);
    const __m512 o = _mm512_permutex2var_ps(v0, odd, v1);
    taps.t[0] = e;
    taps.t[1] = o;
    taps.t[2] = LanesFrom<1>(e, v2);
    if constexpr (K == 5) {
      // Lanes 1..15 of o, then x[s + 33] (v2's lane 1); lanes 2..15 of e, then v2's lanes 0, 2.
      const __m512i next_odd =
          _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17);
      const __m512i next_even =
          _mm512_setr_epi32(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18);
      taps.t[3] = _mm512_permutex2var_ps(o, next_odd, v2);
      taps.t[4] = _mm512_permutex2var_ps(e, next_even, v2);
    }
    return taps;
  }
}

// Output rows oy0 .. oy0 + R - 1 (y: row oy0), columns [0, OW), from input rows
// iy0 = S oy0 - PH on, one vector of each row at a time (two at a time, or 2 or 8 rows, ran
// slower: bench/README.md).
template <int K, int S, int R, class Loader, typename T>
void DirectRowGroup(const T* HWY_RESTRICT x, int64_t H, int64_t W, int64_t PW, int64_t iy0,
                    const float* HWY_RESTRICT wc, float b, float* HWY_RESTRICT y, int64_t OW) {
  constexpr int64_t L = kAlignedLanes;
  constexpr int kRows = S * (R - 1) + K;  // input rows the group reads
  // Input rows [t_lo, t_hi) of the group lie inside the image.
  const int t_lo = static_cast<int>(std::max<int64_t>(0, -iy0));
  const int t_hi = static_cast<int>(std::min<int64_t>(kRows, H - iy0));
  for (int64_t j0 = 0; j0 < OW; j0 += L) {
    const DirectColumns<S> cols(S * j0 - PW, W, K);
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_set1_ps(b);
#pragma GCC unroll 16
    for (int t = 0; t < kRows; ++t) {
      if (t < t_lo || t >= t_hi) continue;
      const DirectTaps<K> taps = DirectLoad<K, S, Loader>(x + (iy0 + t) * W, cols);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const int ky = t - S * r;
        if (ky < 0 || ky >= K) continue;
#pragma GCC unroll 8
        for (int kx = 0; kx < K; ++kx) {
          acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wc[ky * K + kx]), taps.t[kx], acc[r]);
        }
      }
    }
    const __mmask16 m = FirstLanes(OW - j0);
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * OW + j0, m, acc[r]);
  }
}

// Whether DepthwiseChannelDirect takes a convolution.
bool DirectApplies(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t DH, int64_t DW,
                   int64_t OW) {
  return SH == SW && (SW == 1 || SW == 2) && DH == 1 && DW == 1 && KH == KW &&
         (KW == 3 || KW == 5) && OW > 0;
}

// One output channel [OH, OW] from x [H, W] (DirectApplies), four rows at a time.
template <class Loader, typename T>
void DepthwiseChannelDirect(const T* HWY_RESTRICT x, const float* HWY_RESTRICT wc, float b,
                            float* HWY_RESTRICT yc, int64_t H, int64_t W, int64_t OH, int64_t OW,
                            int64_t K, int64_t S, int64_t PH, int64_t PW) {
  auto rows = [&](auto k, auto stride) {
    constexpr int kK = decltype(k)::value, kS = decltype(stride)::value;
    int64_t oy = 0;
    for (; oy + 4 <= OH; oy += 4) {
      DirectRowGroup<kK, kS, 4, Loader>(x, H, W, PW, kS * oy - PH, wc, b, yc + oy * OW, OW);
    }
    for (; oy < OH; ++oy) {
      DirectRowGroup<kK, kS, 1, Loader>(x, H, W, PW, kS * oy - PH, wc, b, yc + oy * OW, OW);
    }
  };
  using std::integral_constant;
  if (S == 1) {
    if (K == 3) {
      rows(integral_constant<int, 3>(), integral_constant<int, 1>());
    } else {
      rows(integral_constant<int, 5>(), integral_constant<int, 1>());
    }
  } else if (K == 3) {
    rows(integral_constant<int, 3>(), integral_constant<int, 2>());
  } else {
    rows(integral_constant<int, 5>(), integral_constant<int, 2>());
  }
}
#endif  // AVX3

// x: float32, or 16-bit values of `kind` (T = uint16_t), which the aligned path widens as it
// builds its plane and the others widen per channel into scratch first (exactly, as Widen16).
template <typename T>
void DepthwiseConv(const ConvGeometry& g, const T* x, Float16Kind kind, int64_t channels,
                   int64_t multiplier, const float* w, const float* bias, float* y,
                   const Parallel& parallel, const PostOpF32& post) {
  constexpr bool kWide = std::is_same_v<T, float>;
  // Widen 1-D to 2-D with a leading height of 1.
  const bool two = g.rank == 2;
  const int64_t H = two ? g.in[0] : 1, W = two ? g.in[1] : g.in[0];
  const int64_t OH = two ? g.out[0] : 1, OW = two ? g.out[1] : g.out[0];
  const int64_t KH = two ? g.kernel[0] : 1, KW = two ? g.kernel[1] : g.kernel[0];
  const int64_t SH = two ? g.stride[0] : 1, SW = two ? g.stride[1] : g.stride[0];
  const int64_t DH = two ? g.dilation[0] : 1, DW = two ? g.dilation[1] : g.dilation[0];
  const int64_t PH = two ? g.pad[0] : 0, PW = two ? g.pad[1] : g.pad[0];
  const int64_t out_channels = channels * multiplier;
  const int64_t per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, OH * OW));
  const int64_t tasks = (out_channels + per_task - 1) / per_task;
  const Parallel& par = ParallelForMacs(parallel, out_channels * OH * OW * KH * KW);
  // A plane padded left or right (or whose last taps reach past its right end) is first copied
  // into rows with zero columns around them, so that every column is interior: the vector paths
  // then cover the whole row instead of scalar edge loops (a large share of the time on small
  // feature maps); those taps add w * 0 in their place in the tap order, as an explicitly
  // zero-padded input (and im2col + GEMM) does. Kernel rows that fall into the top or bottom
  // padding are skipped instead: on the short planes of late layers (2 or 3 rows under a 5x5
  // kernel) they would be most of the work.
  // One float past the last tap's column: stride 2's vectors load it.
  int64_t WP = std::max(W + PW, (OW - 1) * SW + (KW - 1) * DW + 1) + 1;
  bool pad_columns = PW > 0 || WP - 1 > W;
  bool aligned = false;
  bool direct = false;  // DepthwiseChannelDirect: no plane
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // AVX-512: square 3x3 / 5x5 kernels at stride 1 or 2 read x directly (DepthwiseChannelDirect);
  // the other stride 1 or 2 convolutions (other kernel heights, 1-D, unequal strides) go through
  // an aligned plane (DepthwiseChannelAligned), rows of WP floats (stride 2: the even columns in
  // the first half, the odd in the second).
  direct = DirectApplies(KH, KW, SH, SW, DH, DW, OW);
  aligned = !direct && AlignedApplies(KW, SW, DW, OW);
  if (direct) pad_columns = false;
  if (aligned) {
    const int64_t padded = std::max(W + PW, (OW - 1) * SW + KW) + 1;
    const int64_t half = (padded + SW - 1) / SW;
    WP = SW * ((half + kAlignedLanes - 1) / kAlignedLanes * kAlignedLanes);
    pad_columns = true;
  }
#endif
  par.For(tasks, [&](int64_t t0, int64_t t1) {
    static thread_local ThreadScratch tls_plane, tls_widened;
    float* plane = pad_columns ? tls_plane.Get(H * WP + kPlaneSlack) : nullptr;
    float* widened = nullptr;
    if (!kWide && !aligned && !direct) widened = tls_widened.Get(H * W);
    int64_t plane_channel = -1, widened_channel = -1;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t oc_begin = t * per_task;
      const int64_t oc_end = std::min(out_channels, oc_begin + per_task);
      for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
        const int64_t c = oc / multiplier;
        const T* xt = x + c * H * W;
        const float* wc = w + oc * KH * KW;
        const float b = bias != nullptr ? bias[oc] : 0.0f;
        float* yc = y + oc * OH * OW;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
        if (direct) {
          if constexpr (kWide) {
            DepthwiseChannelDirect<LoadF32>(xt, wc, b, yc, H, W, OH, OW, KW, SW, PH, PW);
          } else if (kind == Float16Kind::kHalf) {
            DepthwiseChannelDirect<Load16<false>>(xt, wc, b, yc, H, W, OH, OW, KW, SW, PH, PW);
          } else {
            DepthwiseChannelDirect<Load16<true>>(xt, wc, b, yc, H, W, OH, OW, KW, SW, PH, PW);
          }
          continue;
        }
        if (aligned) {
          if (plane_channel != c) {
            if constexpr (kWide) {
              AlignedPlane<LoadF32>(xt, H, W, PW, SW, WP, plane);
            } else if (kind == Float16Kind::kHalf) {
              AlignedPlane<Load16<false>>(xt, H, W, PW, SW, WP, plane);
            } else {
              AlignedPlane<Load16<true>>(xt, H, W, PW, SW, WP, plane);
            }
            plane_channel = c;
          }
          DepthwiseChannelAligned(plane, WP, WP / 2, wc, b, yc, H, OH, OW, KH, KW, SH, SW, DH, PH);
          continue;
        }
#endif
        const float* xc;
        if constexpr (kWide) {
          xc = xt;
        } else {
          if (widened_channel != c) {
            Widen16(kind, xt, widened, static_cast<size_t>(H * W));
            widened_channel = c;
          }
          xc = widened;
        }
        if (pad_columns) {
          if (plane_channel != c) {
            PadColumns(xc, H, W, PW, WP, plane);
            plane_channel = c;
          }
          DepthwiseChannel(plane, wc, b, yc, H, WP, OH, OW, KH, KW, SH, SW, DH, DW, PH, 0);
        } else {
          DepthwiseChannel(xc, wc, b, yc, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PH, PW);
        }
      }
      // Once over the task's channels (contiguous in y, a few thousand floats still in cache):
      // per channel, a post-op chain's fixed cost per call outweighed its work on small planes.
      if (post) post(y + oc_begin * OH * OW, (oc_end - oc_begin) * OH * OW);
    }
  });
}

void DepthwiseConvF32Impl(const ConvGeometry& g, const float* x, int64_t channels,
                          int64_t multiplier, const float* w, const float* bias, float* y,
                          const Parallel& parallel, const PostOpF32& post) {
  DepthwiseConv(g, x, Float16Kind::kHalf, channels, multiplier, w, bias, y, parallel, post);
}

void DepthwiseConvFrom16Impl(const ConvGeometry& g, Float16Kind kind, const uint16_t* x,
                             int64_t channels, int64_t multiplier, const float* w,
                             const float* bias, float* y, const Parallel& parallel,
                             const PostOpF32& post) {
  DepthwiseConv(g, x, kind, channels, multiplier, w, bias, y, parallel, post);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(DepthwiseConvF32Impl);

void DepthwiseConvF32(const ConvGeometry& g, const float* x, int64_t channels, int64_t multiplier,
                      const float* w, const float* bias, float* y, const Parallel& parallel,
                      const PostOpF32& post) {
  HWY_DYNAMIC_DISPATCH(DepthwiseConvF32Impl)(g, x, channels, multiplier, w, bias, y, parallel,
                                             post);
}

HWY_EXPORT(DepthwiseConvFrom16Impl);

void DepthwiseConvFrom16(const ConvGeometry& g, Float16Kind kind, const uint16_t* x,
                         int64_t channels, int64_t multiplier, const float* w, const float* bias,
                         float* y, const Parallel& parallel, const PostOpF32& post) {
  HWY_DYNAMIC_DISPATCH(DepthwiseConvFrom16Impl)(g, kind, x, channels, multiplier, w, bias, y,
                                                parallel, post);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
