// Conv (opsets 1, 11): float32, float16, bfloat16, 1-D/2-D/3-D, auto_pad, dilations, groups (incl.
// depthwise), strides, explicit pads, optional bias.
//
// Per image and group, Y_g [Cout/group, P] = W_g [Cout/group, C/group * kernel] x col, with
// P = output positions; the bias is the GEMM's row bias. Three paths, chosen at Prepare:
//   - 1x1 kernel, stride 1, no padding: col is the input itself ([C/group, P]), no copy;
//   - depthwise (group == C, one input channel per group, 1-D or 2-D):
//     kernels/conv/depthwise_conv.h;
//   - otherwise im2col (kernels/conv/conv.h) into a scratch buffer of about kColBudget floats, a
//     chunk of output positions at a time, then the GEMM.
// A constant W is packed per group at Prepare (kernels::PackedAF32).
// float16 / bfloat16: the same paths on 16-bit storage with float32 arithmetic (see Prepare16).
// An elementwise chain fused after the Conv (graph/passes/conv_post_fusion.h) runs on each
// finished run of a float32 output inside the kernels (kernels::PostOpF32); on a 16-bit output,
// on each finished run once its rounding is done (the GEMM's post16, NarrowInto), or per task of
// channels (depthwise).
#include "kernels/conv/conv.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/elementwise_fused.h"
#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/conv/depthwise_conv.h"
#include "kernels/conv/winograd_conv.h"
#include "kernels/gemm/gemm.h"

namespace simplecpp::graph {
namespace {

// Size (floats) of the im2col scratch buffer per run: about L2-sized, so that im2col, the GEMM's
// packing of it and the GEMM itself stay in cache (multi-MB chunks spill them to memory).
// The buffer grows beyond it only to hold kChunkColumns columns of a very deep kernel.
constexpr int64_t kColBudget = int64_t{1} << 17;
constexpr int64_t kChunkColumns = 192;
// 16-bit input: largest group image (floats) widened whole into scratch before im2col (1 MiB).
constexpr int64_t kWidenImageLimit = int64_t{1} << 18;

// A 1x1 convolution with stride 1 and no padding: X itself is the GEMM's B.
bool IsPointwise(const kernels::ConvGeometry& g) {
  for (int d = 0; d < g.rank; ++d) {
    if (g.kernel[d] != 1 || g.stride[d] != 1 || g.pad[d] != 0 || g.out[d] != g.in[d]) return false;
  }
  return true;
}

// Output positions per im2col chunk: about kColBudget floats of columns, in whole multiples of
// kChunkColumns (they keep the GEMM's column blocks full), at most P.
int64_t Im2ColChunk(int64_t kdim, int64_t P) {
  int64_t chunk = kColBudget / std::max<int64_t>(kdim, 1);
  chunk = chunk >= kChunkColumns ? chunk / kChunkColumns * kChunkColumns : kChunkColumns;
  return std::min(chunk, P);
}

// The sizes every Conv path works with, from the resolved geometry.
struct ConvShape {
  kernels::ConvGeometry g;
  int64_t batch = 0, group = 1, channels = 0, cg = 0, og = 0, out_channels = 0;
  int64_t ksize = 0;    // kernel elements
  int64_t kdim = 0;     // GEMM K: cg * ksize
  int64_t in_size = 0;  // spatial elements of one input channel
  int64_t P = 0;        // output positions
  bool has_bias = false;
};

ConvShape ConvShapeOf(const kernels::ConvGeometry& g, const Dims& xd, const Dims& wd,
                      int64_t group, bool has_bias) {
  ConvShape s;
  s.g = g;
  s.batch = xd[0];
  s.channels = xd[1];
  s.out_channels = wd[0];
  s.cg = wd[1];
  s.group = group;
  s.og = s.out_channels / group;
  s.ksize = g.KernelSize();
  s.kdim = s.cg * s.ksize;
  s.in_size = g.InSize();
  s.P = g.OutSize();
  s.has_bias = has_bias;
  return s;
}

// The transformed weights of a constant W (float32, or 16-bit of `kind`) where the Winograd
// form applies (one group, 3x3, stride 1: kernels/conv/winograd_conv.h); nullptr elsewhere.
std::shared_ptr<const kernels::WinogradWeightsF32> WinogradWeightsOf(const Tensor* w,
                                                                      const ConvShape& s,
                                                                      kernels::Float16Kind kind) {
  if (w == nullptr || s.group != 1 || !kernels::ConvWinogradApplies(s.g, s.cg, s.og)) {
    return nullptr;
  }
  if (w->dtype() == DType::kFloat32) {
    return kernels::WinogradWeightsF32::Transform(s.og, s.cg, w->data<float>());
  }
  std::vector<float> wf(static_cast<size_t>(w->num_elements()));
  kernels::Widen16(kind, w->data<uint16_t>(), wf.data(), wf.size());
  return kernels::WinogradWeightsF32::Transform(s.og, s.cg, wf.data());
}

// What a float32 Conv's Prepare decides; the Run*F32 functions below run it.
struct ConvF32Plan : ConvShape {
  int64_t chunk = 0;    // output positions per im2col chunk
  bool direct = false;  // kernels::ConvDirectApplies
  std::vector<std::shared_ptr<const kernels::PackedAF32>> packed;  // per group; empty: W not constant
  // Constant W of a 3x3 stride-1 layer of one group, transformed for kernels::ConvWinogradF32.
  std::shared_ptr<const kernels::WinogradWeightsF32> winograd;
  // Few output positions (RunFewPositionsF32): W^T [kdim, og] as the GEMM's B, instead of packed.
  std::shared_ptr<const kernels::PackedBF32> packed_wt;
  // The fused chain, kept alive by the plan that applies it.
  std::shared_ptr<const elementwise::FusedChain> chain;
  kernels::PostOpF32 post;
};

void RunDepthwiseF32(const ConvF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* w = rc.input(1).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  for (int64_t n = 0; n < p.batch; ++n) {
    kernels::DepthwiseConvF32(p.g, x + n * p.channels * p.in_size, p.channels, p.og, w, b,
                              y + n * p.out_channels * p.P, rc.parallel(), p.post);
  }
}

// y_g[og, cols] (ld = P) = W_g x b[kdim, cols] (ld = ldb) + bias.
void GroupGemmF32(const ConvF32Plan& p, const float* w, int64_t gi, const float* b, int64_t cols,
                  int64_t ldb, const float* bias, float* y, const kernels::Parallel& par) {
  kernels::GemmEpilogue epi;
  epi.row_bias = bias;
  epi.post = p.post;
  if (!p.packed.empty()) {
    kernels::GemmPackedAF32(*p.packed[gi], false, cols, 1.0f, b, ldb, 0.0f, y, p.P, par, epi);
  } else {
    kernels::GemmF32(false, false, p.og, cols, p.kdim, 1.0f, w + gi * p.og * p.kdim, p.kdim, b,
                     ldb, 0.0f, y, p.P, par, epi);
  }
}

// Pointwise: col_g is X_g itself, [cg, P] with ld = P. With constant W and rows of whole
// vectors the direct convolution's tiles read X_g in place (no packed copy of X; the same bits).
void RunPointwiseF32(const ConvF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* w = rc.input(1).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      const float* xg = x + (n * p.channels + gi * p.cg) * p.P;
      const float* bg = b ? b + gi * p.og : nullptr;
      float* yg = y + (n * p.out_channels + gi * p.og) * p.P;
      if (!p.packed.empty() && kernels::ConvPointwiseInPlaceF32(p.g, xg, p.cg, *p.packed[gi], bg,
                                                                 yg, rc.parallel(), p.post)) {
        continue;
      }
      GroupGemmF32(p, w, gi, xg, p.P, p.P, bg, yg, rc.parallel());
    }
  }
}

// Constant W. 2-D: direct convolution from a padded copy of the image (kernels/conv/conv.h
// ConvDirectF32), no im2col matrix at all (the patches are read in place instead of copied;
// bench/bench_conv.cc compares the two). Otherwise im2col writes the GEMM's packed-B layout
// directly (one copy of the patches instead of two). Both give the im2col + GEMM products bit for
// bit.
void RunConstantWeightF32(const ConvF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  const int64_t nr = kernels::CurrentGemmTileShape().nr;
  Tensor scratch;
  float* pb = nullptr;
  kernels::GemmEpilogue epi;
  epi.post = p.post;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      const float* xg = x + (n * p.channels + gi * p.cg) * p.in_size;
      float* yg = y + (n * p.out_channels + gi * p.og) * p.P;
      epi.row_bias = b ? b + gi * p.og : nullptr;
      if (p.winograd && kernels::ConvWinogradF32(p.g, xg, p.cg, *p.winograd, epi.row_bias, yg,
                                                 rc.parallel(), p.post)) {
        continue;
      }
      if (p.direct && kernels::ConvDirectF32(p.g, xg, p.cg, *p.packed[gi], epi.row_bias, yg,
                                             rc.parallel(), p.post)) {
        continue;
      }
      if (pb == nullptr) {
        scratch = rc.Scratch(DType::kFloat32, {p.kdim * ((p.chunk + nr - 1) / nr * nr)});
        pb = scratch.data<float>();
      }
      for (int64_t p0 = 0; p0 < p.P; p0 += p.chunk) {
        const int64_t pc = std::min(p.chunk, p.P - p0);
        kernels::Im2ColPackedF32(p.g, xg, p.cg, p0, pc, nr, pb, rc.parallel());
        kernels::GemmPackedABF32(*p.packed[gi], pb, nr, pc, 1.0f, 0.0f, yg + p0, p.P,
                                 rc.parallel(), epi);
      }
    }
  }
}

// Constant W, one group, at most kFewPositions output positions (the 1-D convolutions of a
// speech model's encoder: 1 to 3 positions, 64 to 258 channels): Y^T [P, og] = col^T W^T, the
// positions as the GEMM's rows and the channels as its vector lanes. Y [og, P] = W col would run
// whole vectors of columns for P valid ones, and im2col's per-row setup would cost more than its
// copies (im2row: a few contiguous runs per position). Every element is the same FMA chain over
// k, then the bias: the bits of the other paths.
constexpr int64_t kFewPositions = 8;

void RunFewPositionsF32(const ConvF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  Tensor col = rc.Scratch(DType::kFloat32, {p.kdim * p.P});
  Tensor yt = rc.Scratch(DType::kFloat32, {p.P * p.og});
  kernels::GemmEpilogue epi;
  epi.col_bias = b;
  for (int64_t n = 0; n < p.batch; ++n) {
    float* yn = y + n * p.out_channels * p.P;
    kernels::Im2RowF32(p.g, x + n * p.channels * p.in_size, p.cg, 0, p.P, col.data<float>());
    kernels::GemmPackedBF32(false, p.P, 1.0f, col.data<float>(), p.kdim, *p.packed_wt, 0.0f,
                            yt.data<float>(), p.og, rc.parallel(), epi);
    const float* t = yt.data<float>();
    for (int64_t m = 0; m < p.og; ++m) {
      for (int64_t q = 0; q < p.P; ++q) yn[m * p.P + q] = t[q * p.og + m];
    }
    if (p.post) p.post(yn, p.og * p.P);
  }
}

// Any W: im2col a chunk of output positions at a time, then the GEMM.
void RunIm2ColF32(const ConvF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* w = rc.input(1).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  Tensor scratch = rc.Scratch(DType::kFloat32, {p.kdim * p.chunk});
  float* col = scratch.data<float>();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      const float* xg = x + (n * p.channels + gi * p.cg) * p.in_size;
      float* yg = y + (n * p.out_channels + gi * p.og) * p.P;
      for (int64_t p0 = 0; p0 < p.P; p0 += p.chunk) {
        const int64_t pc = std::min(p.chunk, p.P - p0);
        kernels::Im2ColF32(p.g, xg, p.cg, p0, pc, col, rc.parallel());
        GroupGemmF32(p, w, gi, col, pc, pc, b ? b + gi * p.og : nullptr, yg + p0, rc.parallel());
      }
    }
  }
}

// What a float16 / bfloat16 Conv's Prepare decides; the Run*16 functions below run it.
struct Conv16Plan : ConvShape {
  kernels::Float16Kind kind = kernels::Float16Kind::kHalf;
  kernels::GemmType type = kernels::GemmType::kF16;
  int64_t chunk = 0;
  bool widen_image = false, direct = false;
  // Rows per band of the banded direct convolution (images too large for whole-image float32
  // scratch); 0: not banded.
  int64_t band_rows = 0;
  std::vector<float> const_bias;         // widened at Prepare when constant
  std::vector<float> const_depthwise_w;  // depthwise: W widened at Prepare when constant
  std::vector<std::shared_ptr<const kernels::PackedAF32>> packed;  // per group; empty: W not constant
  // With direct or band_rows: the Winograd weights where that form applies (as in float32).
  std::shared_ptr<const kernels::WinogradWeightsF32> winograd;
  // The fused chain (16-bit steps on the rounded output), kept alive by the plan.
  std::shared_ptr<const elementwise::FusedChain> chain;
  kernels::PostOp16 post16;
};

// The bias as float32 for this run (constant, or widened into *holder); nullptr without one.
const float* Bias16AsF32(const Conv16Plan& p, RunContext& rc, Tensor* holder) {
  if (!p.has_bias) return nullptr;
  if (!p.const_bias.empty()) return p.const_bias.data();
  *holder = rc.Scratch(DType::kFloat32, {p.out_channels});
  kernels::Widen16(p.kind, rc.input(2).data<uint16_t>(), holder->data<float>(),
                   static_cast<size_t>(p.out_channels));
  return holder->data<float>();
}

// Depthwise: tasks of whole input channels; each computes their output channels in float32 from
// the 16-bit x (the kernel widens it as it reads it) and rounds them.
void RunDepthwise16(const Conv16Plan& p, RunContext& rc) {
  Tensor bias_holder, w_holder;
  const float* bias = Bias16AsF32(p, rc, &bias_holder);
  const float* w;
  if (!p.const_depthwise_w.empty()) {
    w = p.const_depthwise_w.data();
  } else {
    w_holder = rc.Scratch(DType::kFloat32, {p.out_channels * p.ksize});
    kernels::Widen16(p.kind, rc.input(1).data<uint16_t>(), w_holder.data<float>(),
                     static_cast<size_t>(p.out_channels * p.ksize));
    w = w_holder.data<float>();
  }
  const uint16_t* x = rc.input(0).data<uint16_t>();
  uint16_t* y = rc.output(0).data<uint16_t>();
  const int64_t mult = p.og;
  // Tasks of a few thousand output elements (whole input channels; sizes from the shape only):
  // one depthwise call, one rounding and one post-op call per task rather than per channel,
  // whose fixed costs outweighed the work on small planes.
  const int64_t per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, mult * p.P));
  const int64_t groups = (p.channels + per_task - 1) / per_task;
  const kernels::Parallel& par =
      kernels::ParallelForMacs(rc.parallel(), p.batch * p.out_channels * p.P * p.ksize);
  par.For(p.batch * groups, [&](int64_t t0, int64_t t1) {
    // Kept per thread between calls: a fresh large buffer per call comes from mmap, as fresh
    // pages the kernel faults in and zeroes.
    static thread_local std::vector<float> yout;
    yout.resize(std::max(yout.size(), static_cast<size_t>(per_task * mult * p.P)));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / groups, c0 = (t % groups) * per_task;
      const int64_t cc = std::min(per_task, p.channels - c0);
      kernels::DepthwiseConvFrom16(p.g, p.kind, x + (n * p.channels + c0) * p.in_size, cc, mult,
                                   w + c0 * mult * p.ksize,
                                   bias != nullptr ? bias + c0 * mult : nullptr, yout.data(),
                                   kernels::SerialParallel());
      uint16_t* yc = y + (n * p.out_channels + c0 * mult) * p.P;
      kernels::NarrowThenPost16(p.kind, yout.data(), yc, cc * mult * p.P, p.post16);
    }
  });
}

// y_g[og, cols] (16-bit, ld = P) = W_g x b[kdim, cols] (type_b, ld = ldb) + bias.
void GroupGemm16(const Conv16Plan& p, const uint16_t* w, int64_t gi, kernels::GemmType type_b,
                 const void* b, int64_t cols, int64_t ldb, const float* bias, uint16_t* y,
                 const kernels::Parallel& par) {
  kernels::GemmEpilogue epi;
  epi.row_bias = bias;
  epi.post16 = p.post16;  // on each finished row run, in cache
  if (!p.packed.empty()) {
    kernels::GemmPackedAMixed(*p.packed[gi], type_b, p.type, false, cols, 1.0f, b, ldb, 0.0f, y,
                              p.P, par, epi);
  } else {
    kernels::GemmMixed(p.type, type_b, p.type, false, false, p.og, cols, p.kdim, 1.0f,
                       w + gi * p.og * p.kdim, p.kdim, b, ldb, 0.0f, y, p.P, par, epi);
  }
}

// A float32 post-op that rounds each finished run of a float32 output block (base `from`) into
// the same place of a 16-bit block (base `to`), then runs the 16-bit chain on it.
struct NarrowInto {
  const float* from;
  uint16_t* to;
  kernels::Float16Kind kind;
  kernels::PostOp16 post16;
  // A band of rows: `from` holds channels from_stride floats apart, `to` to_stride elements apart
  // (a run never crosses a channel). 0: the same layout.
  int64_t from_stride = 0, to_stride = 0;
  static void Run(const void* ctx, float* data, int64_t n) {
    const auto& self = *static_cast<const NarrowInto*>(ctx);
    const int64_t at = data - self.from;
    uint16_t* out = self.from_stride == 0
                        ? self.to + at
                        : self.to + at / self.from_stride * self.to_stride + at % self.from_stride;
    kernels::NarrowThenPost16(self.kind, data, out, n, self.post16);
  }
};

// Pointwise: with constant W and rows of whole vectors, the float32 direct kernel reading X in
// place (widening each vector as it loads), its finished runs rounded into Y in cache; else X
// (16-bit) is the GEMM's B as it is, widened while the GEMM packs it.
void RunPointwise16(const Conv16Plan& p, RunContext& rc) {
  Tensor bias_holder, yf;
  const float* b = Bias16AsF32(p, rc, &bias_holder);
  const uint16_t* x = rc.input(0).data<uint16_t>();
  const uint16_t* w = rc.input(1).data<uint16_t>();
  uint16_t* y = rc.output(0).data<uint16_t>();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      const uint16_t* xg = x + (n * p.channels + gi * p.cg) * p.P;
      uint16_t* yg = y + (n * p.out_channels + gi * p.og) * p.P;
      const float* bg = b ? b + gi * p.og : nullptr;
      if (p.direct) {
        if (yf.num_elements() == 0) yf = rc.Scratch(DType::kFloat32, {p.og * p.P});
        const NarrowInto narrow{yf.data<float>(), yg, p.kind, p.post16};
        const kernels::PostOpF32 narrow_post{&NarrowInto::Run, &narrow};
        if (kernels::ConvPointwiseInPlace16(p.kind, p.g, xg, p.cg, *p.packed[gi], bg,
                                            yf.data<float>(), rc.parallel(), narrow_post)) {
          continue;
        }
      }
      GroupGemm16(p, w, gi, p.type, xg, p.P, p.P, bg, yg, rc.parallel());
    }
  }
}

// The banded direct convolution of one group: per band of p.band_rows output rows, the input
// rows it reads are widened to float32 and convolved (kernels::ConvDirectF32 on the band's
// geometry), its finished runs rounded into y in cache. Each output is the FMA chain of the
// whole-image direct convolution, so the same bits. Returns false, doing nothing, where the
// direct kernel does not apply (W packed for another SIMD target).
bool RunDirectBands16(const Conv16Plan& p, const uint16_t* xg, const float* bias, uint16_t* yg,
                      RunContext& rc) {
  const kernels::ConvGeometry& g = p.g;
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t reach = (g.kernel[0] - 1) * g.dilation[0], sh = g.stride[0];
  const int64_t max_in_rows = std::min(in_h, (p.band_rows - 1) * sh + reach + 1);
  Tensor image = rc.Scratch(DType::kFloat32, {std::max<int64_t>(1, p.cg * max_in_rows * in_w)});
  Tensor yf = rc.Scratch(DType::kFloat32, {p.og * p.band_rows * out_w});
  for (int64_t r0 = 0; r0 < out_h; r0 += p.band_rows) {
    const int64_t r1 = std::min(out_h, r0 + p.band_rows);
    int64_t lo = 0;
    const kernels::ConvGeometry band = kernels::ConvRowBand(g, r0, r1, &lo);
    const int64_t band_in = band.in[0] * in_w;
    float* img = image.data<float>();
    kernels::ParallelForElements(rc.parallel(), p.cg * band_in)
        .For(p.cg, [&](int64_t c0, int64_t c1) {
          for (int64_t c = c0; c < c1; ++c) {
            kernels::Widen16(p.kind, xg + c * p.in_size + lo * in_w, img + c * band_in,
                             static_cast<size_t>(band_in));
          }
        });
    NarrowInto narrow{yf.data<float>(), yg + r0 * out_w, p.kind, p.post16};
    narrow.from_stride = (r1 - r0) * out_w;
    narrow.to_stride = p.P;
    const kernels::PostOpF32 narrow_post{&NarrowInto::Run, &narrow};
    if (!(p.winograd && kernels::ConvWinogradF32(band, img, p.cg, *p.winograd, bias,
                                                 yf.data<float>(), rc.parallel(), narrow_post)) &&
        !kernels::ConvDirectF32(band, img, p.cg, *p.packed[0], bias, yf.data<float>(),
                                rc.parallel(), narrow_post)) {
      if (r0 == 0) return false;
      throw Error(ErrorCode::kInternal, "Conv: the direct convolution refused a band");
    }
  }
  return true;
}

// General: direct convolution on the widened image when it applies, else im2col chunks (widened
// from the image or from 16-bit X) and the mixed GEMM.
void RunIm2Col16(const Conv16Plan& p, RunContext& rc) {
  Tensor bias_holder;
  const float* b = Bias16AsF32(p, rc, &bias_holder);
  const uint16_t* x = rc.input(0).data<uint16_t>();
  const uint16_t* w = rc.input(1).data<uint16_t>();
  uint16_t* y = rc.output(0).data<uint16_t>();
  Tensor scratch, yf, image;
  float* col = nullptr;
  if (p.widen_image) image = rc.Scratch(DType::kFloat32, {p.cg * p.in_size});
  if (p.direct) yf = rc.Scratch(DType::kFloat32, {p.og * p.P});
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      const uint16_t* xg = x + (n * p.channels + gi * p.cg) * p.in_size;
      uint16_t* yg = y + (n * p.out_channels + gi * p.og) * p.P;
      if (p.band_rows > 0 && RunDirectBands16(p, xg, b, yg, rc)) continue;
      if (p.widen_image) {
        // Split over channels: serial, it would be a fifth of a 56x56 layer at two threads.
        float* img = image.data<float>();
        kernels::ParallelForElements(rc.parallel(), p.cg * p.in_size)
            .For(p.cg, [&](int64_t c0, int64_t c1) {
              kernels::Widen16(p.kind, xg + c0 * p.in_size, img + c0 * p.in_size,
                               static_cast<size_t>((c1 - c0) * p.in_size));
            });
      }
      // The direct kernel's finished runs are rounded into y (and the chain run on them) while
      // they are in cache.
      const NarrowInto narrow{yf.data<float>(), yg, p.kind, p.post16};
      const kernels::PostOpF32 narrow_post{&NarrowInto::Run, &narrow};
      if (p.direct && p.winograd &&
          kernels::ConvWinogradF32(p.g, image.data<float>(), p.cg, *p.winograd,
                                   b ? b + gi * p.og : nullptr, yf.data<float>(), rc.parallel(),
                                   narrow_post)) {
        continue;
      }
      if (p.direct && kernels::ConvDirectF32(p.g, image.data<float>(), p.cg, *p.packed[gi],
                                             b ? b + gi * p.og : nullptr, yf.data<float>(),
                                             rc.parallel(), narrow_post)) {
        continue;
      }
      if (col == nullptr) {
        scratch = rc.Scratch(DType::kFloat32, {p.kdim * p.chunk});
        col = scratch.data<float>();
      }
      for (int64_t p0 = 0; p0 < p.P; p0 += p.chunk) {
        const int64_t pc = std::min(p.chunk, p.P - p0);
        if (p.widen_image) {
          kernels::Im2ColF32(p.g, image.data<float>(), p.cg, p0, pc, col, rc.parallel());
        } else {
          kernels::Im2Col16(p.kind, p.g, xg, p.cg, p0, pc, col, rc.parallel());
        }
        GroupGemm16(p, w, gi, kernels::GemmType::kF32, col, pc, pc, b ? b + gi * p.og : nullptr,
                    yg + p0, rc.parallel());
      }
    }
  }
}

class ConvOp final : public Op {
 public:
  explicit ConvOp(const OpInit& init) {
    attrs_ = ConvAttributes::Read(init);
    if (init.num_inputs() < 2 || init.num_inputs() > 3) {
      init.Fail("Conv takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  bool AttachPostChain(std::shared_ptr<const elementwise::FusedChain> chain) override {
    if (post_ || !chain) return false;
    post_ = std::move(chain);
    return true;
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const Dims& wd = ctx.input_dims(1);
    kernels::ConvGeometry g;
    Dims out_dims;
    attrs_.Resolve(ctx, xd, wd, &g, &out_dims);
    const ConvShape shape = ConvShapeOf(g, xd, wd, attrs_.group, ctx.has_input(2));
    if (shape.has_bias) {
      const Dims& bd = ctx.input_dims(2);
      if (bd != Dims{shape.out_channels}) {
        ctx.Fail("B " + DimsToString(bd) + " must be [" + std::to_string(shape.out_channels) + "]");
      }
    }

    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out_dims);
    if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};
    if (dt != DType::kFloat32) {
      if (post_ && !post_->is_16bit()) {
        ctx.Fail("a fused float32 post-op on a " + DTypeName(dt) + " Conv");
      }
      return Prepare16(ctx, Float16KindOf(dt), shape);
    }
    return PrepareF32(ctx, shape);
  }

 private:
  // float32: depthwise (one input channel per group, 1-D or 2-D), pointwise (X is the GEMM's B
  // as it is), constant W (direct convolution or im2col into the packed-B layout) or any W
  // (im2col chunks and the GEMM packing W per call).
  RunFn PrepareF32(PrepareContext& ctx, const ConvShape& shape) const {
    auto plan = std::make_shared<ConvF32Plan>();
    ConvF32Plan& p = *plan;
    static_cast<ConvShape&>(p) = shape;
    const kernels::ConvGeometry& g = p.g;
    const int64_t cg = p.cg;
    p.chain = post_;
    if (p.chain && p.chain->is_16bit()) ctx.Fail("a fused 16-bit post-op on a float32 Conv");
    p.post = p.chain ? p.chain->AsPostOpF32() : kernels::PostOpF32{};
    if (p.group > 1 && cg == 1 && g.rank <= 2) {
      return [plan](RunContext& rc) { RunDepthwiseF32(*plan, rc); };
    }
    const Tensor* wconst = ctx.input_value(1);
    if (wconst != nullptr && p.group == 1 && p.P <= kFewPositions) {
      // W [og, kdim] row-major is B^T for B = W^T [kdim, og].
      p.packed_wt = kernels::PackedBF32::Pack(true, p.kdim, p.og, wconst->data<float>(), p.kdim);
      return [plan](RunContext& rc) { RunFewPositionsF32(*plan, rc); };
    }
    // W_g as the GEMM's A: [og, kdim] row-major at w + gi*og*kdim. Packed now when constant.
    if (const Tensor* wc = ctx.input_value(1); wc != nullptr) {
      for (int64_t gi = 0; gi < p.group; ++gi) {
        p.packed.push_back(kernels::PackedAF32::Pack(false, p.og, p.kdim,
                                                     wc->data<float>() + gi * p.og * p.kdim, p.kdim));
      }
    }
    if (IsPointwise(g)) return [plan](RunContext& rc) { RunPointwiseF32(*plan, rc); };
    p.chunk = Im2ColChunk(p.kdim, p.P);
    if (!p.packed.empty()) {
      p.direct = kernels::ConvDirectApplies(g, cg);
      p.winograd = WinogradWeightsOf(ctx.input_value(1), p, kernels::Float16Kind::kHalf);
      return [plan](RunContext& rc) { RunConstantWeightF32(*plan, rc); };
    }
    return [plan](RunContext& rc) { RunIm2ColF32(*plan, rc); };
  }

  // float16 / bfloat16 (16-bit storage, float32 arithmetic, one rounding per output element):
  //   - a constant W is widened once while packing at Prepare (PackedAF32::Pack16), a constant
  //     bias once into a float32 vector; otherwise W is packed per call by the GEMM and the bias
  //     widened into a small scratch;
  //   - X is widened one im2col chunk at a time (or, pointwise, while the GEMM packs it);
  //   - depthwise: the kernel reads the 16-bit x (widening it as it builds its padded plane) and
  //     computes the output channels in float32, then they are rounded.
  RunFn Prepare16(PrepareContext& ctx, kernels::Float16Kind kind, const ConvShape& shape) const {
    auto plan = std::make_shared<Conv16Plan>();
    Conv16Plan& p = *plan;
    static_cast<ConvShape&>(p) = shape;
    const kernels::ConvGeometry& g = p.g;
    const int64_t cg = p.cg;
    p.kind = kind;
    p.type = kernels::GemmTypeOf(kind);
    // W and B are float32 constants after a BatchNormalization was folded into them
    // (graph/passes/conv_batchnorm_fold.h); they are taken as they are.
    auto to_f32 = [kind](const Tensor& t, std::vector<float>* out) {
      out->resize(static_cast<size_t>(t.num_elements()));
      if (t.dtype() == DType::kFloat32) {
        std::copy(t.data<float>(), t.data<float>() + out->size(), out->begin());
      } else {
        kernels::Widen16(kind, t.data<uint16_t>(), out->data(), out->size());
      }
    };
    if (p.has_bias) {
      if (const Tensor* bc = ctx.input_value(2); bc != nullptr) to_f32(*bc, &p.const_bias);
    }
    p.chain = post_;
    p.post16 = p.chain ? p.chain->AsPostOp16() : kernels::PostOp16{};
    if (p.group > 1 && cg == 1 && g.rank <= 2) {
      if (const Tensor* wc = ctx.input_value(1); wc != nullptr) to_f32(*wc, &p.const_depthwise_w);
      return [plan](RunContext& rc) { RunDepthwise16(*plan, rc); };
    }
    if (const Tensor* wc = ctx.input_value(1); wc != nullptr) {
      for (int64_t gi = 0; gi < p.group; ++gi) {
        const int64_t offset = gi * p.og * p.kdim;
        p.packed.push_back(
            wc->dtype() == DType::kFloat32
                ? kernels::PackedAF32::Pack(false, p.og, p.kdim, wc->data<float>() + offset,
                                            p.kdim)
                : kernels::PackedAF32::Pack16(kind, false, p.og, p.kdim,
                                              wc->data<uint16_t>() + offset, p.kdim));
      }
    }
    if (IsPointwise(g)) {
      // The float32 output block of the in-place direct kernel is bounded as the direct
      // convolution's scratch is.
      p.direct = !p.packed.empty() && p.og * p.P <= kernels::kConvDirectMaxImage &&
                 kernels::ConvPointwiseInPlaceApplies(g);
      return [plan](RunContext& rc) { RunPointwise16(*plan, rc); };
    }
    p.chunk = Im2ColChunk(p.kdim, p.P);
    // Constant W, 2-D: the float32 direct convolution (as in the float32 path) on the image
    // widened in one SIMD pass, into a float32 output rounded once per element: the same values
    // as the GEMM with a 16-bit C, without an im2col matrix widened element by element. Its
    // scratch (the float32 image and output) is bounded like the direct convolution's own copy.
    p.direct = !p.packed.empty() && p.og * p.P <= kernels::kConvDirectMaxImage &&
               kernels::ConvDirectApplies(g, cg);
    // Larger images (one group): the same in bands of output rows, each band's float32 input
    // rows, phase copy and output within about kConvDirectBandImage floats.
    if (!p.direct && !p.packed.empty() && p.group == 1 && kernels::ConvDirectApplies(g, cg)) {
      const int64_t rows = std::min({kernels::ConvDirectBandRows(g, cg), g.out[0],
                                     kernels::kConvDirectBandImage / std::max<int64_t>(
                                                                         1, p.og * g.out[1])});
      if (rows >= kernels::kConvDirectMinBandRows) p.band_rows = rows;
    }
    if (p.direct || p.band_rows > 0) {
      p.winograd = WinogradWeightsOf(ctx.input_value(1), p, kind);
    }
    if (p.winograd && p.band_rows > 0) {
      // Winograd makes no phase copy (its bands hold the float32 input and output rows only):
      // twice the rows for about a third more memory than the direct form's bands, in whole
      // tiles of every dilation phase (4 rows of a phase are 4 * dilation rows of the band),
      // as short phase columns waste tile rows and lanes.
      const int64_t unit = 4 * g.dilation[0];
      p.band_rows = std::min(g.out[0], std::max(unit, 2 * p.band_rows / unit * unit));
    }
    // Otherwise a group's input image, when small enough, is also widened once: im2col then
    // copies float32 runs instead of widening each short run separately (the same values).
    p.widen_image = p.direct || cg * p.in_size <= kWidenImageLimit;
    return [plan](RunContext& rc) { RunIm2Col16(*plan, rc); };
  }

  ConvAttributes attrs_;
  std::shared_ptr<const elementwise::FusedChain> post_;  // in the output's dtype
};

}  // namespace

void RegisterConvOps(OpRegistry& registry) {
  registry.Register("", "Conv", 1, MakeFactory<ConvOp>());
  registry.Register("", "Conv", 11, MakeFactory<ConvOp>());
}

}  // namespace simplecpp::graph
