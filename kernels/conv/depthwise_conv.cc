// Depthwise convolution kernel (see kernels/conv/depthwise_conv.h): per output row, interior
// columns accumulate every tap in vector registers (stride 1 or 2 along the row) and store once;
// other strides use the same tap order with scalar FMAs. Padded inputs are copied into a
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

// acc + the 5 taps of one kernel row (stride 1, dilation 1) in kx order.
template <class D>
HWY_INLINE hn::Vec<D> RowTaps5(D d, const float* HWY_RESTRICT wp, const float* HWY_RESTRICT xp,
                               hn::Vec<D> acc) {
  acc = hn::MulAdd(hn::Set(d, wp[0]), hn::LoadU(d, xp), acc);
  acc = hn::MulAdd(hn::Set(d, wp[1]), hn::LoadU(d, xp + 1), acc);
  acc = hn::MulAdd(hn::Set(d, wp[2]), hn::LoadU(d, xp + 2), acc);
  acc = hn::MulAdd(hn::Set(d, wp[3]), hn::LoadU(d, xp + 3), acc);
  return hn::MulAdd(hn::Set(d, wp[4]), hn::LoadU(d, xp + 4), acc);
}

// One output channel: yc[oy][ox] = b + sum over taps (ky, then kx, ascending) of
// w[ky][kx] * x[iy][ix], skipping taps that fall into the padding. The columns where every tap
// is inside the row (the interior) accumulate a vector of outputs in registers and store it once;
// the few edge columns take the same sum with bounds checks, in the same tap order.
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
    if (SW == 1 && hi - lo >= L) {
      auto vector_at = [&](int64_t o) {
        auto acc = hn::Set(d, b);
        for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
          const float* xp = xc + (iy0 + ky * DH) * W + o - PW;
          const float* wp = wc + ky * KW;
          if (KW == 5 && DW == 1) {
            acc = RowTaps5(d, wp, xp, acc);  // the same taps, unrolled
            continue;
          }
          for (int64_t kx = 0; kx < KW; ++kx) {
            acc = hn::MulAdd(hn::Set(d, wp[kx]), hn::LoadU(d, xp + kx * DW), acc);
          }
        }
        hn::StoreU(acc, d, yrow + o);
      };
      if (KH == 3 && KW == 3 && DW == 1 && ky_lo == 0 && ky_hi == 3) {
        // The common 3x3 case with all rows inside: weights stay in registers along the row
        // (the same taps in the same order as vector_at).
        const auto w0 = hn::Set(d, wc[0]), w1 = hn::Set(d, wc[1]), w2 = hn::Set(d, wc[2]);
        const auto w3 = hn::Set(d, wc[3]), w4 = hn::Set(d, wc[4]), w5 = hn::Set(d, wc[5]);
        const auto w6 = hn::Set(d, wc[6]), w7 = hn::Set(d, wc[7]), w8 = hn::Set(d, wc[8]);
        const float* r0 = xc + iy0 * W - PW;
        const float* r1 = r0 + DH * W;
        const float* r2 = r1 + DH * W;
        auto vector3x3 = [&](int64_t o) {
          auto acc = hn::Set(d, b);
          acc = hn::MulAdd(w0, hn::LoadU(d, r0 + o), acc);
          acc = hn::MulAdd(w1, hn::LoadU(d, r0 + o + 1), acc);
          acc = hn::MulAdd(w2, hn::LoadU(d, r0 + o + 2), acc);
          acc = hn::MulAdd(w3, hn::LoadU(d, r1 + o), acc);
          acc = hn::MulAdd(w4, hn::LoadU(d, r1 + o + 1), acc);
          acc = hn::MulAdd(w5, hn::LoadU(d, r1 + o + 2), acc);
          acc = hn::MulAdd(w6, hn::LoadU(d, r2 + o), acc);
          acc = hn::MulAdd(w7, hn::LoadU(d, r2 + o + 1), acc);
          acc = hn::MulAdd(w8, hn::LoadU(d, r2 + o + 2), acc);
          hn::StoreU(acc, d, yrow + o);
        };
        for (; ox + L <= hi; ox += L) vector3x3(ox);
        if (ox < hi) vector3x3(hi - L);
      } else {
        for (; ox + L <= hi; ox += L) vector_at(ox);
        // The last partial vector overlaps the previous one: those columns get the same values.
        if (ox < hi) vector_at(hi - L);
      }
      ox = hi;
    } else if (SW == 2 && hi2 - lo >= L) {
      // Stride 2: L outputs read 2L consecutive inputs per tap, whose even lanes are the
      // taps' values (ConcatEven); the same taps in the same order as the scalar loop below.
      auto vector_s2 = [&](int64_t o) {
        auto acc = hn::Set(d, b);
        for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
          const float* xp = xc + (iy0 + ky * DH) * W + 2 * o - PW;
          const float* wp = wc + ky * KW;
          for (int64_t kx = 0; kx < KW; ++kx) {
            const float* p = xp + kx * DW;
            const auto even = hn::ConcatEven(d, hn::LoadU(d, p + L), hn::LoadU(d, p));
            acc = hn::MulAdd(hn::Set(d, wp[kx]), even, acc);
          }
        }
        hn::StoreU(acc, d, yrow + o);
      };
      for (; ox + L <= hi2; ox += L) vector_s2(ox);
      if (ox < hi2) vector_s2(hi2 - L);
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

// plane [HP, WP] = x [H, W] placed at row PH, column PW, zeros around it.
void PadPlane(const float* HWY_RESTRICT x, int64_t H, int64_t W, int64_t PH, int64_t PW,
              int64_t HP, int64_t WP, float* HWY_RESTRICT plane) {
  std::fill(plane, plane + PH * WP, 0.0f);
  for (int64_t r = 0; r < H; ++r) {
    float* row = plane + (PH + r) * WP;
    std::fill(row, row + PW, 0.0f);
    std::copy(x + r * W, x + (r + 1) * W, row + PW);
    std::fill(row + PW + W, row + WP, 0.0f);
  }
  std::fill(plane + (PH + H) * WP, plane + HP * WP, 0.0f);
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
  // A padded plane (or one whose last taps reach past it) is first copied into a zero-bordered
  // plane, so that every row and column is interior: the vector paths then cover the whole
  // output instead of scalar edge loops (a large share of the time on small feature maps). The
  // padding taps then add w * 0 in their place in the tap order, as an explicitly zero-padded
  // input (and im2col + GEMM) does.
  const int64_t HP = std::max(H + PH, (OH - 1) * SH + (KH - 1) * DH + 1);
  // One float past the last tap's column: stride 2's vectors load it.
  const int64_t WP = std::max(W + PW, (OW - 1) * SW + (KW - 1) * DW + 1) + 1;
  const bool pad_plane = PH > 0 || PW > 0 || HP > H || WP - 1 > W;
  par.For(tasks, [&](int64_t t0, int64_t t1) {
    static thread_local ThreadScratch tls_plane;
    float* plane = pad_plane ? tls_plane.Get(HP * WP) : nullptr;
    int64_t plane_channel = -1;
    const int64_t oc_end = std::min(out_channels, t1 * per_task);
    for (int64_t oc = t0 * per_task; oc < oc_end; ++oc) {
      const int64_t c = oc / multiplier;
      const float* xc = x + c * H * W;
      const float* wc = w + oc * KH * KW;
      const float b = bias != nullptr ? bias[oc] : 0.0f;
      float* yc = y + oc * OH * OW;
      if (pad_plane) {
        if (plane_channel != c) {
          PadPlane(xc, H, W, PH, PW, HP, WP, plane);
          plane_channel = c;
        }
        DepthwiseChannel(plane, wc, b, yc, HP, WP, OH, OW, KH, KW, SH, SW, DH, DW, 0, 0);
      } else {
        DepthwiseChannel(xc, wc, b, yc, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PH, PW);
      }
      if (post) post(yc, OH * OW);
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
