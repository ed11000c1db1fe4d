// Conv (opsets 1, 11): float32, float16, bfloat16, 1-D/2-D/3-D, auto_pad, dilations, groups (incl. depthwise),
// strides, explicit pads, optional bias.
//
// Per image and group, Y_g [Cout/group, P] = W_g [Cout/group, C/group * kernel] x col, with
// P = output positions; the bias is the GEMM's row bias. Three paths, chosen at Prepare:
//   - 1x1 kernel, stride 1, no padding: col is the input itself ([C/group, P]), no copy;
//   - depthwise (group == C, one input channel per group, 1-D or 2-D): kernels/depthwise_conv.h;
//   - otherwise im2col (kernels/conv.h) into a scratch buffer of about kColBudget floats, a
//     chunk of output positions at a time, then the GEMM.
// A constant W is packed per group at Prepare (kernels::PackedAF32).
// float16 / bfloat16: the same paths on 16-bit storage with float32 arithmetic (see Prepare16).
// An elementwise chain fused after the Conv (graph/passes/conv_post_fusion.h) runs on each
// finished run of a float32 output inside the kernels (kernels::PostOpF32); on a 16-bit output,
// once its rounding is done, per channel (depthwise) or per group (RunPost16).
#include "kernels/conv.h"

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
#include "kernels/depthwise_conv.h"
#include "kernels/gemm.h"

namespace simplecpp::graph {
namespace {

// Size (floats) of the im2col scratch buffer per run: about L2-sized, so that im2col, the GEMM's
// packing of it and the GEMM itself stay in cache (multi-MB chunks spill them to memory).
// The buffer grows beyond it only to hold kChunkColumns columns of a very deep kernel.
constexpr int64_t kColBudget = int64_t{1} << 17;
constexpr int64_t kChunkColumns = 192;
// 16-bit input: largest group image (floats) widened whole into scratch before im2col (1 MiB).
constexpr int64_t kWidenImageLimit = int64_t{1} << 18;

// A fused 16-bit chain over a whole output block y[0, n), in parallel blocks of fixed size. The
// 16-bit paths apply their chain per group or channel, not per GEMM tile row: each 16-bit step
// widens and rounds its operands, a cost per call that short rows would multiply.
void RunPost16(const kernels::PostOp16& post, uint16_t* y, int64_t n,
               const kernels::Parallel& parallel) {
  if (!post || n <= 0) return;
  constexpr int64_t kBlock = int64_t{1} << 15;
  const int64_t tasks = (n + kBlock - 1) / kBlock;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) post(y + t * kBlock, std::min(kBlock, n - t * kBlock));
  });
}

// What a float32 Conv's Prepare decides; the Run*F32 functions below run it.
struct ConvF32Plan {
  kernels::ConvGeometry g;
  int64_t batch = 0, group = 1, channels = 0, cg = 0, og = 0, out_channels = 0;
  int64_t kdim = 0;     // GEMM K: cg * kernel size
  int64_t in_size = 0;  // spatial elements of one input channel
  int64_t P = 0;        // output positions
  int64_t chunk = 0;    // output positions per im2col chunk
  bool has_bias = false;
  bool direct = false;  // kernels::ConvDirectApplies
  std::vector<std::shared_ptr<const kernels::PackedAF32>> packed;  // per group; empty: W not constant
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

// Pointwise: col_g is X_g itself, [cg, P] with ld = P.
void RunPointwiseF32(const ConvF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* w = rc.input(1).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      GroupGemmF32(p, w, gi, x + (n * p.channels + gi * p.cg) * p.P, p.P, p.P,
                   b ? b + gi * p.og : nullptr, y + (n * p.out_channels + gi * p.og) * p.P,
                   rc.parallel());
    }
  }
}

// Constant W. 2-D: direct convolution from a padded copy of the image (kernels/conv.h
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
    const int64_t batch = xd[0], channels = xd[1], out_channels = wd[0], cg = wd[1];
    if (ctx.has_input(2)) {
      const Dims& bd = ctx.input_dims(2);
      if (bd != Dims{out_channels}) {
        ctx.Fail("B " + DimsToString(bd) + " must be [" + std::to_string(out_channels) + "]");
      }
    }

    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out_dims);
    if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};
    if (dt != DType::kFloat32) {
      if (post_ && !post_->is_16bit()) {
        ctx.Fail("a fused float32 post-op on a " + DTypeName(dt) + " Conv");
      }
      return Prepare16(ctx, Float16KindOf(dt), g, batch, channels, out_channels, cg);
    }
    return PrepareF32(ctx, g, batch, channels, out_channels, cg);
  }

 private:
  // float32: depthwise (one input channel per group, 1-D or 2-D), pointwise (X is the GEMM's B
  // as it is), constant W (direct convolution or im2col into the packed-B layout) or any W
  // (im2col chunks and the GEMM packing W per call).
  RunFn PrepareF32(PrepareContext& ctx, const kernels::ConvGeometry& g, int64_t batch,
                   int64_t channels, int64_t out_channels, int64_t cg) const {
    auto plan = std::make_shared<ConvF32Plan>();
    ConvF32Plan& p = *plan;
    p.g = g;
    p.batch = batch;
    p.channels = channels;
    p.out_channels = out_channels;
    p.cg = cg;
    p.group = attrs_.group;
    p.og = out_channels / p.group;
    p.kdim = cg * g.KernelSize();  // GEMM K
    p.in_size = g.InSize();
    p.P = g.OutSize();
    p.has_bias = ctx.has_input(2);
    p.chain = post_;
    if (p.chain && p.chain->is_16bit()) ctx.Fail("a fused 16-bit post-op on a float32 Conv");
    p.post = p.chain ? p.chain->AsPostOpF32() : kernels::PostOpF32{};
    if (p.group > 1 && cg == 1 && g.rank <= 2) {
      return [plan](RunContext& rc) { RunDepthwiseF32(*plan, rc); };
    }
    // W_g as the GEMM's A: [og, kdim] row-major at w + gi*og*kdim. Packed now when constant.
    if (const Tensor* wc = ctx.input_value(1); wc != nullptr) {
      for (int64_t gi = 0; gi < p.group; ++gi) {
        p.packed.push_back(kernels::PackedAF32::Pack(false, p.og, p.kdim,
                                                     wc->data<float>() + gi * p.og * p.kdim, p.kdim));
      }
    }
    bool pointwise = true;
    for (int d = 0; d < g.rank; ++d) {
      pointwise =
          pointwise && g.kernel[d] == 1 && g.stride[d] == 1 && g.pad[d] == 0 && g.out[d] == g.in[d];
    }
    if (pointwise) return [plan](RunContext& rc) { RunPointwiseF32(*plan, rc); };
    // Whole multiples of kChunkColumns keep the GEMM's column blocks full.
    int64_t chunk = kColBudget / std::max<int64_t>(p.kdim, 1);
    chunk = chunk >= kChunkColumns ? chunk / kChunkColumns * kChunkColumns : kChunkColumns;
    p.chunk = std::min(chunk, p.P);
    if (!p.packed.empty()) {
      p.direct = kernels::ConvDirectApplies(g, cg);
      return [plan](RunContext& rc) { RunConstantWeightF32(*plan, rc); };
    }
    return [plan](RunContext& rc) { RunIm2ColF32(*plan, rc); };
  }

  // float16 / bfloat16 (16-bit storage, float32 arithmetic, one rounding per output element):
  //   - a constant W is widened once while packing at Prepare (PackedAF32::Pack16), a constant
  //     bias once into a float32 vector; otherwise W is packed per call by the GEMM and the bias
  //     widened into a small scratch;
  //   - X is widened one im2col chunk at a time (or, pointwise, while the GEMM packs it);
  //   - depthwise: one input channel at a time is widened into a scratch row and its output
  //     channels computed in float32, then rounded.
  RunFn Prepare16(PrepareContext& ctx, kernels::Float16Kind kind, const kernels::ConvGeometry& g,
                  int64_t batch, int64_t channels, int64_t out_channels, int64_t cg) const {
    const int64_t group = attrs_.group;
    const int64_t og = out_channels / group;
    const int64_t ksize = g.KernelSize();
    const int64_t kdim = cg * ksize;
    const int64_t in_size = g.InSize(), P = g.OutSize();
    const bool has_bias = ctx.has_input(2);
    const kernels::GemmType type = kernels::GemmTypeOf(kind);
    std::shared_ptr<const std::vector<float>> const_bias;
    if (has_bias) {
      if (const Tensor* bc = ctx.input_value(2); bc != nullptr) {
        auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(out_channels));
        kernels::Widen16(kind, bc->data<uint16_t>(), v->data(), v->size());
        const_bias = v;
      }
    }
    // The fused chain (16-bit steps on the rounded output), kept alive by the run functions.
    const std::shared_ptr<const elementwise::FusedChain> chain = post_;
    const kernels::PostOp16 post16 = chain ? chain->AsPostOp16() : kernels::PostOp16{};
    // The bias as float32 for this run (constant, or widened into `holder`).
    auto bias_of = [const_bias, has_bias, kind, out_channels](RunContext& rc,
                                                              Tensor* holder) -> const float* {
      if (!has_bias) return nullptr;
      if (const_bias) return const_bias->data();
      *holder = rc.Scratch(DType::kFloat32, {out_channels});
      kernels::Widen16(kind, rc.input(2).data<uint16_t>(), holder->data<float>(),
                       static_cast<size_t>(out_channels));
      return holder->data<float>();
    };

    if (group > 1 && cg == 1 && g.rank <= 2) {
      const int64_t mult = og;
      std::shared_ptr<const std::vector<float>> const_w;
      if (const Tensor* wc = ctx.input_value(1); wc != nullptr) {
        auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(out_channels * ksize));
        kernels::Widen16(kind, wc->data<uint16_t>(), v->data(), v->size());
        const_w = v;
      }
      return [=](RunContext& rc) {
        Tensor bias_holder, w_holder;
        const float* bias = bias_of(rc, &bias_holder);
        const float* w;
        if (const_w) {
          w = const_w->data();
        } else {
          w_holder = rc.Scratch(DType::kFloat32, {out_channels * ksize});
          kernels::Widen16(kind, rc.input(1).data<uint16_t>(), w_holder.data<float>(),
                           static_cast<size_t>(out_channels * ksize));
          w = w_holder.data<float>();
        }
        const uint16_t* x = rc.input(0).data<uint16_t>();
        uint16_t* y = rc.output(0).data<uint16_t>();
        // One task per (image, input channel); each widens its channel and rounds its outputs.
        rc.parallel().For(batch * channels, [&](int64_t t0, int64_t t1) {
          std::vector<float> xin(static_cast<size_t>(in_size));
          std::vector<float> yout(static_cast<size_t>(mult * P));
          for (int64_t t = t0; t < t1; ++t) {
            const int64_t n = t / channels, c = t % channels;
            kernels::Widen16(kind, x + t * in_size, xin.data(), static_cast<size_t>(in_size));
            kernels::DepthwiseConvF32(g, xin.data(), 1, mult, w + c * mult * ksize,
                                      bias != nullptr ? bias + c * mult : nullptr, yout.data(),
                                      kernels::SerialParallel());
            kernels::Narrow16(kind, yout.data(), y + (n * out_channels + c * mult) * P,
                              static_cast<size_t>(mult * P));
            if (post16) post16(y + (n * out_channels + c * mult) * P, mult * P);
          }
        });
      };
    }

    std::shared_ptr<std::vector<std::shared_ptr<const kernels::PackedAF32>>> packed;
    if (const Tensor* wc = ctx.input_value(1); wc != nullptr) {
      packed = std::make_shared<std::vector<std::shared_ptr<const kernels::PackedAF32>>>();
      for (int64_t gi = 0; gi < group; ++gi) {
        packed->push_back(kernels::PackedAF32::Pack16(
            kind, false, og, kdim, wc->data<uint16_t>() + gi * og * kdim, kdim));
      }
    }
    // y_g[og, cols] (16-bit, ld = P) = W_g x b[kdim, cols] (type_b, ld = ldb) + bias.
    auto gemm = [packed, og, kdim, P, type](const uint16_t* w, int64_t gi, kernels::GemmType type_b,
                                            const void* b, int64_t cols, int64_t ldb,
                                            const float* bias, uint16_t* y,
                                            const kernels::Parallel& par) {
      kernels::GemmEpilogue epi;
      epi.row_bias = bias;
      if (packed) {
        kernels::GemmPackedAMixed(*(*packed)[gi], type_b, type, false, cols, 1.0f, b, ldb, 0.0f,
                                  y, P, par, epi);
      } else {
        kernels::GemmMixed(type, type_b, type, false, false, og, cols, kdim, 1.0f,
                           w + gi * og * kdim, kdim, b, ldb, 0.0f, y, P, par, epi);
      }
    };
    bool pointwise = true;
    for (int d = 0; d < g.rank; ++d) {
      pointwise =
          pointwise && g.kernel[d] == 1 && g.stride[d] == 1 && g.pad[d] == 0 && g.out[d] == g.in[d];
    }
    if (pointwise) {
      return [=](RunContext& rc) {
        Tensor bias_holder;
        const float* b = bias_of(rc, &bias_holder);
        const uint16_t* x = rc.input(0).data<uint16_t>();
        const uint16_t* w = rc.input(1).data<uint16_t>();
        uint16_t* y = rc.output(0).data<uint16_t>();
        for (int64_t n = 0; n < batch; ++n) {
          for (int64_t gi = 0; gi < group; ++gi) {
            gemm(w, gi, type, x + (n * channels + gi * cg) * P, P, P, b ? b + gi * og : nullptr,
                 y + (n * out_channels + gi * og) * P, rc.parallel());
            RunPost16(post16, y + (n * out_channels + gi * og) * P, og * P, rc.parallel());
          }
        }
      };
    }
    int64_t chunk = kColBudget / std::max<int64_t>(kdim, 1);
    chunk = chunk >= kChunkColumns ? chunk / kChunkColumns * kChunkColumns : kChunkColumns;
    chunk = std::min(chunk, P);
    // A group's input image, when small enough, is widened once in one SIMD pass: im2col then
    // copies float32 runs instead of widening each short run separately (the same values).
    const bool widen_image = cg * in_size <= kWidenImageLimit;
    // Constant W, small 2-D image and output: the float32 direct convolution (as in the float32
    // path) on the widened image into a float32 output, rounded once per element: the same
    // values as the GEMM with a 16-bit C.
    const bool direct = packed && widen_image && og * P <= kWidenImageLimit &&
                        kernels::ConvDirectApplies(g, cg);
    return [=](RunContext& rc) {
      Tensor bias_holder;
      const float* b = bias_of(rc, &bias_holder);
      const uint16_t* x = rc.input(0).data<uint16_t>();
      const uint16_t* w = rc.input(1).data<uint16_t>();
      uint16_t* y = rc.output(0).data<uint16_t>();
      Tensor scratch, yf;
      float* col = nullptr;
      Tensor image;
      if (widen_image) image = rc.Scratch(DType::kFloat32, {cg * in_size});
      if (direct) yf = rc.Scratch(DType::kFloat32, {og * P});
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t gi = 0; gi < group; ++gi) {
          const uint16_t* xg = x + (n * channels + gi * cg) * in_size;
          uint16_t* yg = y + (n * out_channels + gi * og) * P;
          if (widen_image) {
            kernels::Widen16(kind, xg, image.data<float>(), static_cast<size_t>(cg * in_size));
          }
          if (direct && kernels::ConvDirectF32(g, image.data<float>(), cg, *(*packed)[gi],
                                               b ? b + gi * og : nullptr, yf.data<float>(),
                                               rc.parallel())) {
            kernels::Narrow16(kind, yf.data<float>(), yg, static_cast<size_t>(og * P));
            RunPost16(post16, yg, og * P, rc.parallel());
            continue;
          }
          if (col == nullptr) {
            scratch = rc.Scratch(DType::kFloat32, {kdim * chunk});
            col = scratch.data<float>();
          }
          for (int64_t p0 = 0; p0 < P; p0 += chunk) {
            const int64_t pc = std::min(chunk, P - p0);
            if (widen_image) {
              kernels::Im2ColF32(g, image.data<float>(), cg, p0, pc, col, rc.parallel());
            } else {
              kernels::Im2Col16(kind, g, xg, cg, p0, pc, col, rc.parallel());
            }
            gemm(w, gi, kernels::GemmType::kF32, col, pc, pc, b ? b + gi * og : nullptr, yg + p0,
                 rc.parallel());
          }
          RunPost16(post16, yg, og * P, rc.parallel());
        }
      }
    };
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
