// The depthwise part of the integer convolution plan (graph/ops/quant/conv_integer.cc): one input
// channel per group. Where the SIMD target has the byte kernel (kernels/quant/depthwise_q8.h) and
// w - w_zero_point fits int8, exact int32 sums come from it; elsewhere from the float32 depthwise
// kernel on exactly representable values (QConvPlan::depthwise_float says why that is exact).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/ops/quant/quant_ops_internal.h"
#include "kernels/conv/depthwise_conv.h"
#include "kernels/quant/depthwise_q8.h"
#include "kernels/quant/quantize.h"

namespace simplecpp::graph {
namespace quant_ops {

// A depthwise layer goes to the threads when its multiply-adds are worth it, or when the bytes
// it reads and writes are: per output it also builds the padded plane and requantizes, so a
// stride-2 layer of a few hundred thousand outputs takes far longer than its multiply-add count
// says (and stays on one thread by that count alone).
const kernels::Parallel& QConvPlan::DepthwiseParallel(const kernels::Parallel& pool,
                                                      int64_t ksize) const {
  if (kernels::WorthParallelMacs(batch * out_channels * positions * ksize)) return pool;
  return kernels::ParallelForElements(pool, batch * (channels * in_size + out_channels * positions));
}

DepthwiseBytesWeights QConvPlan::PrepareDepthwiseBytesWeights(const void* w, const int32_t* wzp,
                                                              int64_t wzp_step) const {
  const int64_t ksize = g.KernelSize();
  DepthwiseBytesWeights d;
  std::vector<int8_t> w8(static_cast<size_t>(out_channels * ksize));
  d.wsum.assign(static_cast<size_t>(out_channels), 0);
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    const int32_t z = wzp ? wzp[oc * wzp_step] : 0;
    for (int64_t k = 0; k < ksize; ++k) {
      const uint8_t b = static_cast<const uint8_t*>(w)[oc * ksize + k];
      const int32_t v = (w_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : b) - z;
      if (v < -128 || v > 127) {
        d.fits = false;
        return d;
      }
      w8[oc * ksize + k] = static_cast<int8_t>(v);
      d.wsum[oc] += v;
    }
  }
  // 1-D is 2-D with a kernel height of 1.
  const bool two = g.rank == 2;
  d.prepared = kernels::PrepareDepthwiseQ8Weights(two ? g.kernel[0] : 1,
                                                  two ? g.kernel[1] : g.kernel[0], w8.data(),
                                                  out_channels);
  return d;
}

bool QConvPlan::RunDepthwiseBytes(const kernels::Parallel& pool, const void* x, const void* w,
                                  int32_t xzp, const int32_t* wzp, int64_t wzp_step, int32_t* y,
                                  const QConvRequant* rq) const {
  // 1-D is 2-D with a leading height of 1.
  const bool two = g.rank == 2;
  const int64_t H = two ? g.in[0] : 1, W = two ? g.in[1] : g.in[0];
  const int64_t PH = two ? g.pad[0] : 0, PW = two ? g.pad[1] : g.pad[0];
  const bool dilated = g.dilation[0] != 1 || (two && g.dilation[1] != 1);
  if (dilated) return false;
  kernels::DepthwiseQ8Shape s;
  s.OH = two ? g.out[0] : 1;
  s.OW = two ? g.out[1] : g.out[0];
  s.KH = two ? g.kernel[0] : 1;
  s.KW = two ? g.kernel[1] : g.kernel[0];
  s.SH = two ? g.stride[0] : 1;
  s.SW = two ? g.stride[1] : g.stride[0];
  // The zero-point-padded plane: every tap of every output inside it.
  s.H = std::max(H + PH, (s.OH - 1) * s.SH + s.KH);
  s.W = std::max(W + PW, (s.OW - 1) * s.SW + s.KW);
  if (!kernels::DepthwiseQ8Available(s)) return false;
  // The image rows of the padded plane below (the rest hold the zero point: not read).
  s.rows_begin = PH;
  s.rows_end = PH + H;
  const int64_t ksize = s.KH * s.KW, mult = og;
  // w - w_zero_point as int8 and its sums: prepared with the plan for constant weights.
  DepthwiseBytesWeights local;
  const DepthwiseBytesWeights* dw = depthwise_bytes.get();
  if (dw == nullptr) {
    local = PrepareDepthwiseBytesWeights(w, wzp, wzp_step);
    dw = &local;
  }
  if (!dw->fits) return false;
  const std::vector<int32_t>& wsum = dw->wsum;
  // The kernel reads x as uint8: int8 x is shifted by 128 (a flipped top bit), its zero point
  // with it. Padding holds the zero point, so padded taps add (zp - zp) * w = 0 once the
  // zero point's share, zp * sum(w), is subtracted.
  const uint8_t flip = x_signed ? 0x80 : 0x00;
  const int32_t zp8 = x_signed ? xzp + 128 : xzp;
  s.pad = static_cast<uint8_t>(zp8);
  // Kept per thread between calls (every element is written below): no allocation per run. The
  // tasks below read it through `corr` (inside them the name would be their own thread's).
  static thread_local std::vector<int32_t> correction;
  correction.resize(static_cast<size_t>(out_channels));
  const int32_t* const corr = correction.data();
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    // In uint32, as the requantization adds the bias (wrapping): the same sum modulo 2^32.
    const uint32_t bias = rq && rq->bias ? static_cast<uint32_t>(rq->bias[oc]) : 0u;
    correction[oc] = static_cast<int32_t>(bias - static_cast<uint32_t>(zp8 * wsum[oc]));
  }
  QConvRequant adjusted;
  if (rq) {
    adjusted = *rq;
    adjusted.bias = corr;
  }
  // Requantized output goes in bands whose int32 sums (about kBandSums) stay in L1 between the
  // sums kernel and the requantization: several whole channels where a channel's plane is
  // small (one call per band instead of per channel), else bands of output rows of one channel
  // (an even number, as the kernel takes output rows in pairs).
  constexpr int64_t kBandSums = 4096;
  const int64_t band_channels =
      rq && positions <= kBandSums ? std::max<int64_t>(1, kBandSums / (positions * mult)) : 1;
  const int64_t band_rows =
      rq ? std::max<int64_t>(2, kBandSums / std::max<int64_t>(1, s.OW) / 2 * 2) : s.OH;
  const int64_t bands_per_image = (channels + band_channels - 1) / band_channels;
  const int64_t plane_stride = s.H * s.W + kernels::kDepthwiseQ8Slack;
  // Requantized in the kernel's registers where the target can (no int32 sums in between): one
  // call per band of whole channels, every output row.
  const bool fuse = rq && kernels::DepthwiseQ8FusesRequant(
                              s, GemmRequant(adjusted, true, 0, nullptr, 0), out_channels);
  const kernels::Parallel& par = DepthwiseParallel(pool, ksize);
  par.For(batch * bands_per_image, [&](int64_t t0, int64_t t1) {
    static thread_local std::vector<uint8_t> plane;
    static thread_local std::vector<int32_t> acc;
    plane.resize(std::max(plane.size(), static_cast<size_t>(band_channels * plane_stride)));
    const int64_t acc_size = band_channels > 1 ? band_channels * mult * positions
                                               : std::min(band_rows, s.OH) * s.OW;
    if (!fuse) acc.resize(std::max(acc.size(), static_cast<size_t>(acc_size)));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / bands_per_image;
      const int64_t c0 = t % bands_per_image * band_channels;
      const int64_t nc = std::min(band_channels, channels - c0);
      const uint8_t* xc = static_cast<const uint8_t*>(x) + (n * channels + c0) * in_size;
      // x's rows (shifted) between zero-point borders; the border rows are not read.
      kernels::DepthwiseQ8Planes(s, xc, in_size, W, PW, flip, nc, plane.data(), plane_stride);
      // The band's output channels c0 * mult .. (c0 + nc) * mult are adjacent in y.
      const int64_t oc0 = c0 * mult, noc = nc * mult;
      const int64_t out_at = (n * out_channels + oc0) * positions;
      kernels::DepthwiseQ8Channels chans;
      chans.count = noc;
      chans.mult = mult;
      chans.plane_stride = plane_stride;
      chans.sums_stride = positions;
      chans.first = oc0;
      if (!rq) {
        int32_t* dst = y + out_at;
        kernels::DepthwiseQ8SumsChannels(s, chans, plane.data(), dw->prepared, dst);
        for (int64_t o = 0; o < noc; ++o) {
          for (int64_t i = 0; i < positions; ++i) {
            dst[o * positions + i] = static_cast<int32_t>(
                static_cast<uint32_t>(dst[o * positions + i]) +
                static_cast<uint32_t>(corr[oc0 + o]));
          }
        }
        continue;
      }
      uint8_t* y8 = static_cast<uint8_t*>(rq->y) + out_at;
      if (fuse) {
        kernels::DepthwiseQ8RequantChannels(s, chans, plane.data(), dw->prepared,
                                            GemmRequant(adjusted, true, oc0, y8, positions));
        ApplyOutputTable(adjusted, noc, positions, y8, positions);
        continue;
      }
      if (band_channels > 1) {
        kernels::DepthwiseQ8SumsChannels(s, chans, plane.data(), dw->prepared, acc.data());
        RequantConvRows(adjusted, acc.data(), positions, noc, positions, oc0, y8, positions);
        continue;
      }
      for (int64_t o = 0; o < noc; ++o) {
        const int64_t oc = oc0 + o;
        kernels::DepthwiseQ8Shape band = s;
        chans.count = 1;
        chans.first = oc;
        for (int64_t oy = 0; oy < s.OH; oy += band_rows) {
          band.oy_begin = oy;
          band.oy_end = std::min(s.OH, oy + band_rows);
          const int64_t n_out = (band.oy_end - oy) * s.OW;
          kernels::DepthwiseQ8SumsChannels(band, chans, plane.data() + o / mult * plane_stride,
                                           dw->prepared, acc.data());
          RequantConv(adjusted, acc.data(), n_out, 1, n_out, oc, 0,
                      y8 + o * positions + oy * s.OW, n_out);
        }
      }
    }
  });
  return true;
}

void QConvPlan::RunDepthwise(const kernels::Parallel& pool, const void* x, const void* w,
                             int32_t xzp, const int32_t* wzp, int64_t wzp_step, int32_t* y,
                             const QConvRequant* rq) const {
  if (RunDepthwiseBytes(pool, x, w, xzp, wzp, wzp_step, y, rq)) return;
  const int64_t ksize = g.KernelSize();
  const int64_t mult = og;  // output channels per input channel
  const float one = 1.0f;
  // w - w_zero_point as float32, per output channel (small: out_channels * ksize).
  std::vector<float> wf(static_cast<size_t>(out_channels * ksize));
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    const int32_t* wz = wzp ? wzp + oc * wzp_step : nullptr;
    const int64_t at = oc * ksize;
    if (w_signed) {
      kernels::DequantizeI8ToF32(static_cast<const int8_t*>(w) + at, ksize, &one, 0, wz, 0,
                                 wf.data() + at);
    } else {
      kernels::DequantizeU8ToF32(static_cast<const uint8_t*>(w) + at, ksize, &one, 0, wz, 0,
                                 wf.data() + at);
    }
  }
  const kernels::Parallel& par = DepthwiseParallel(pool, ksize);
  // One task per (image, input channel): x - x_zero_point widened (padding reads 0, which is
  // x_zero_point padded), its output channels' exact sums, then requantized or stored.
  par.For(batch * channels, [&](int64_t t0, int64_t t1) {
    // Per-thread buffers kept between calls: every element is written before it is read, so
    // neither a fresh allocation nor zero-filling is needed per task.
    static thread_local std::vector<float> xin, sums;
    static thread_local std::vector<int32_t> acc;
    xin.resize(std::max(xin.size(), static_cast<size_t>(in_size)));
    sums.resize(std::max(sums.size(), static_cast<size_t>(mult * positions)));
    if (rq) acc.resize(std::max(acc.size(), static_cast<size_t>(mult * positions)));
    const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / channels, c = t % channels;
      if (x_signed) {
        kernels::DequantizeI8ToF32(static_cast<const int8_t*>(x) + t * in_size, in_size, &one, 0,
                                   &xzp, 0, xin.data());
      } else {
        kernels::DequantizeU8ToF32(static_cast<const uint8_t*>(x) + t * in_size, in_size, &one, 0,
                                   &xzp, 0, xin.data());
      }
      kernels::DepthwiseConvF32(g, xin.data(), 1, mult, wf.data() + c * mult * ksize, nullptr,
                                sums.data(), kernels::SerialParallel());
      const int64_t oc0 = c * mult;
      const int64_t out_at = (n * out_channels + oc0) * positions;
      int32_t* dst = rq ? acc.data() : y + out_at;
      kernels::QuantizeF32ToI32(sums.data(), mult * positions, &one, 0, nullptr, 0, lo, hi, dst);
      if (rq) {
        uint8_t* y8 = static_cast<uint8_t*>(rq->y) + out_at;
        for (int64_t o = 0; o < mult; ++o) {
          RequantConv(*rq, acc.data() + o * positions, positions, 1, positions, oc0 + o, 0,
                  y8 + o * positions, positions);
        }
      }
    }
  });
}

}  // namespace quant_ops
}  // namespace simplecpp::graph
