// Depthwise convolution kernel (see kernels/conv/depthwise_conv.h): per output row, interior
// columns accumulate every tap in vector registers, up to 8 vectors at once (stride 1 or 2 along
// the row), and store once; other strides use the same tap order with scalar FMAs. Padded inputs are copied into a
// zero-bordered plane first, so that every column is interior.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv/depthwise_conv.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>

#include "kernels/conv/depthwise_conv.h"
#include "kernels/gemm/gemm_internal.h"  // ThreadScratch

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// N vectors of outputs of one output row, every tap inside the row: output = b + taps in
// (ky, kx) order. Vector n < N - 1 holds the outputs from column n * L, the last one those from
// column `last` (its columns may overlap the previous vector's: they get the same values). x0
// points at the first kernel row's input for column 0 of the run, row_step is the distance
// between kernel rows, w0 that row's weights. The N sums are independent chains interleaved tap
// by tap: one chain of dependent multiply-adds runs at the instruction's latency, N of them at
// its throughput. Stride 2 loads 2L consecutive inputs per tap and keeps their even lanes.
template <int N, int64_t kStride, class D>
HWY_INLINE void RowVectors(D d, const float* HWY_RESTRICT x0, int64_t row_step,
                           const float* HWY_RESTRICT w0, int64_t rows, int64_t KW, int64_t DW,
                           float b, float* HWY_RESTRICT y, int64_t last) {
  static_assert(N >= 1 && N <= 8, "up to 8 accumulators");
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  auto column = [&](int n) { return n == N - 1 ? last : n * L; };
  auto a0 = hn::Set(d, b), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  auto tap = [&](const float* p, int n) {
    p += column(n) * kStride;
    if constexpr (kStride == 1) {
      return hn::LoadU(d, p);
    } else {
      return hn::ConcatEven(d, hn::LoadU(d, p + L), hn::LoadU(d, p));
    }
  };
  for (int64_t ky = 0; ky < rows; ++ky) {
    const float* xr = x0 + ky * row_step;
    const float* wr = w0 + ky * KW;
    for (int64_t kx = 0; kx < KW; ++kx) {
      const auto wv = hn::Set(d, wr[kx]);
      const float* p = xr + kx * DW;
      a0 = hn::MulAdd(wv, tap(p, 0), a0);
      if constexpr (N > 1) a1 = hn::MulAdd(wv, tap(p, 1), a1);
      if constexpr (N > 2) a2 = hn::MulAdd(wv, tap(p, 2), a2);
      if constexpr (N > 3) a3 = hn::MulAdd(wv, tap(p, 3), a3);
      if constexpr (N > 4) a4 = hn::MulAdd(wv, tap(p, 4), a4);
      if constexpr (N > 5) a5 = hn::MulAdd(wv, tap(p, 5), a5);
      if constexpr (N > 6) a6 = hn::MulAdd(wv, tap(p, 6), a6);
      if constexpr (N > 7) a7 = hn::MulAdd(wv, tap(p, 7), a7);
    }
  }
  // Stored in order, so that an overlapping last vector writes the same values again.
  hn::StoreU(a0, d, y + column(0));
  if constexpr (N > 1) hn::StoreU(a1, d, y + column(1));
  if constexpr (N > 2) hn::StoreU(a2, d, y + column(2));
  if constexpr (N > 3) hn::StoreU(a3, d, y + column(3));
  if constexpr (N > 4) hn::StoreU(a4, d, y + column(4));
  if constexpr (N > 5) hn::StoreU(a5, d, y + column(5));
  if constexpr (N > 6) hn::StoreU(a6, d, y + column(6));
  if constexpr (N > 7) hn::StoreU(a7, d, y + column(7));
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
    switch (count) {
      case 1: RowVectors<1, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      case 2: RowVectors<2, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      case 3: RowVectors<3, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      case 4: RowVectors<4, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      case 5: RowVectors<5, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      case 6: RowVectors<6, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      case 7: RowVectors<7, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
      default: RowVectors<8, kStride>(d, x, row_step, w0, rows, KW, DW, b, y, last); break;
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
  for (int64_t oy = 0; oy < OH; ++oy) {
    float* yrow = yc + oy * OW;
    const int64_t iy0 = oy * SH - PH;
    // Rows of the kernel that land inside the image.
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
    int64_t ox = lo;
    const int64_t rows = ky_hi - ky_lo;
    // Column 0's input for the first kernel row inside the image.
    const float* x0 = rows > 0 ? xc + (iy0 + ky_lo * DH) * W - PW : xc;
    const float* w0 = wc + ky_lo * KW;
    if (SW == 1 && hi - lo >= L) {
      RowInterior<1>(d, x0, DH * W, w0, rows, KW, DW, b, yrow, lo, hi);
      ox = hi;
    } else if (SW == 2 && hi2 - lo >= L) {
      RowInterior<2>(d, x0, DH * W, w0, rows, KW, DW, b, yrow, lo, hi2);
      ox = hi2;
    }
    for (; ox < hi; ++ox) {
      float acc = b;
      for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
        const float* xp = xc + (iy0 + ky * DH) * W + ox * SW - PW;
        const float* wp = wc + ky * KW;
        for (int64_t kx = 0; kx < KW; ++kx) acc = std::fma(wp[kx], xp[kx * DW], acc);
      }
      yrow[ox] = acc;
    }
    for (ox = hi; ox < OW; ++ox) edge(ox);
  }
}

// plane [H, WP] = x [H, W] placed at column PW, zeros left and right of it. Inline loops: the
// rows are short, and a library call per piece cost more than the copy.
void PadColumns(const float* HWY_RESTRICT x, int64_t H, int64_t W, int64_t PW, int64_t WP,
                float* HWY_RESTRICT plane) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < H; ++r) {
    float* row = plane + r * WP;
    const float* src = x + r * W;
    for (int64_t i = 0; i < PW; ++i) row[i] = 0.0f;
    int64_t j = 0;
    for (; j + L <= W; j += L) hn::StoreU(hn::LoadU(d, src + j), d, row + PW + j);
    for (; j < W; ++j) row[PW + j] = src[j];
    for (int64_t i = PW + W; i < WP; ++i) row[i] = 0.0f;
  }
}

void DepthwiseConvF32Impl(const ConvGeometry& g, const float* x, int64_t channels,
                          int64_t multiplier, const float* w, const float* bias, float* y,
                          const Parallel& parallel, const PostOpF32& post) {
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
  const int64_t WP = std::max(W + PW, (OW - 1) * SW + (KW - 1) * DW + 1) + 1;
  const bool pad_columns = PW > 0 || WP - 1 > W;
  par.For(tasks, [&](int64_t t0, int64_t t1) {
    static thread_local ThreadScratch tls_plane;
    float* plane = pad_columns ? tls_plane.Get(H * WP) : nullptr;
    int64_t plane_channel = -1;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t oc_begin = t * per_task;
      const int64_t oc_end = std::min(out_channels, oc_begin + per_task);
      for (int64_t oc = oc_begin; oc < oc_end; ++oc) {
        const int64_t c = oc / multiplier;
        const float* xc = x + c * H * W;
        const float* wc = w + oc * KH * KW;
        const float b = bias != nullptr ? bias[oc] : 0.0f;
        float* yc = y + oc * OH * OW;
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

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
