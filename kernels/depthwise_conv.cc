// Depthwise convolution kernel (see kernels/depthwise_conv.h). For each output row and kernel
// tap, the valid output interval is computed once; with stride 1 along the row the inner loop is
// a vector FMA over contiguous input (y[ox] += w * x[ox + offset]), otherwise a scalar loop.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/depthwise_conv.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>

#include "kernels/depthwise_conv.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y[i] += w * x[i] for i in [0, n).
HWY_INLINE void AxpyRow(float w, const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto vw = hn::Set(d, w);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    hn::StoreU(hn::MulAdd(vw, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  }
  for (; i < n; ++i) y[i] += w * x[i];
}

void DepthwiseConvF32Impl(const ConvGeometry& g, const float* x, int64_t channels,
                          int64_t multiplier, const float* w, const float* bias, float* y,
                          const Parallel& parallel) {
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
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t oc_end = std::min(out_channels, t1 * per_task);
    for (int64_t oc = t0 * per_task; oc < oc_end; ++oc) {
      const float* xc = x + (oc / multiplier) * H * W;
      const float* wc = w + oc * KH * KW;
      float* yc = y + oc * OH * OW;
      const float b = bias != nullptr ? bias[oc] : 0.0f;
      for (int64_t oy = 0; oy < OH; ++oy) {
        float* yrow = yc + oy * OW;
        std::fill(yrow, yrow + OW, b);
        for (int64_t ky = 0; ky < KH; ++ky) {
          const int64_t iy = oy * SH + ky * DH - PH;
          if (iy < 0 || iy >= H) continue;
          const float* xrow = xc + iy * W;
          for (int64_t kx = 0; kx < KW; ++kx) {
            const float wv = wc[ky * KW + kx];
            const int64_t off = kx * DW - PW;
            // Output columns whose input column ox*SW + off is inside [0, W).
            int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;
            int64_t hi = (W - 1 - off) < 0 ? 0 : (W - 1 - off) / SW + 1;
            lo = std::min(lo, OW);
            hi = std::max(std::min(hi, OW), lo);
            if (SW == 1) {
              AxpyRow(wv, xrow + lo + off, yrow + lo, hi - lo);
            } else {
              for (int64_t ox = lo; ox < hi; ++ox) yrow[ox] += wv * xrow[ox * SW + off];
            }
          }
        }
      }
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
                      const float* w, const float* bias, float* y, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(DepthwiseConvF32Impl)(g, x, channels, multiplier, w, bias, y, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
