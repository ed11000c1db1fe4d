// ConvTranspose (opsets 1, 11, 22): float32, float16 and (opset >= 22) bfloat16, 1-D/2-D/3-D,
// group, strides, dilations, pads, output_padding, output_shape and auto_pad, optional bias.
//
// ConvTranspose is the adjoint of Conv: per image and group,
//   col [og * kernel, P_in] = W_g^T x X_g [cg, P_in]     (W_g = W[gi*cg .. , og, k...] viewed
//                                                          as [cg, og * kernel] row-major)
//   Y_g [og, out...]        = bias + col2im(col)          (kernels/conv/col2im.h)
// where the "convolution" geometry seen by col2im has the output Y as its input image and the
// input X as its output grid. A constant W is packed per group at Prepare (kernels::PackedAF32,
// transposed view). col is computed a chunk of input positions at a time to bound scratch memory.
//
// The output size and pads (output_padding, output_shape, auto_pad) come from
// conv_transpose_geometry.h, shared with the fused integer QLinearConvTranspose.
//
// float16 / bfloat16: 16-bit storage, float32 arithmetic (float16_wrap.h): a constant
// W / B is widened once at Prepare (and packed), X per run, and Y is rounded once to 16 bits.
// An elementwise chain after a float32 ConvTranspose fuses into it (graph/passes/
// conv_post_fusion.h) and runs on each finished band of Y (see ConvTransposeF32Plan::chain).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/op.h"
#include "graph/ops/conv_transpose_geometry.h"
#include "graph/ops/elementwise_fused.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/conv/col2im.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_transpose_2x2.h"
#include "kernels/gemm/gemm.h"
#include "kernels/parallel.h"

namespace simplecpp::graph {
namespace {

constexpr int64_t kColBudget = int64_t{1} << 18;  // floats of col per chunk (about L2)

// What the float32 run needs, fixed at Prepare.
struct ConvTransposeF32Plan {
  kernels::ConvGeometry g;  // image = Y's spatial dims, grid = X's spatial dims
  int64_t batch = 0, group = 0, channels = 0, cg = 0, og = 0, out_channels = 0;
  int64_t m = 0;                // GEMM M: og * kernel size (rows of col)
  int64_t p_in = 0, p_out = 0;  // spatial sizes of X and Y
  int64_t chunk = 0;            // input positions per col chunk
  bool has_bias = false;
  // The kernel taps tile Y exactly (kernels::Col2ImIsDisjoint): Y is written once per chunk
  // (bias + col) instead of initialized to the bias and then added to.
  bool disjoint = false;
  // 2-D, 2x2 kernel, stride 2, one group (and disjoint): kernels/conv/conv_transpose_2x2.h,
  // straight from W (no packing, no column matrix).
  bool two_by_two = false;
  // W_g^T packed per group; empty when W is not constant (or there are no input channels).
  std::vector<std::shared_ptr<const kernels::PackedAF32>> packed;
  // A fused elementwise chain (graph/passes/conv_post_fusion.h), kept alive by the plan. With
  // disjoint taps the chunks are whole rows of X (whole planes in 3-D), so each writes one
  // contiguous band of every output channel, which the chain then runs on while it is in cache;
  // otherwise it runs per output channel once Y is complete.
  std::shared_ptr<const elementwise::FusedChain> chain;
  kernels::PostOpF32 post;
  int64_t x_inner = 1, y_inner = 1;  // X's / Y's positions per index of the first spatial dim
};

// col = W_g^T x X_g for input positions [p0, p0 + pc) of one image and group.
void ColChunk(const ConvTransposeF32Plan& p, const float* w, int64_t gi, const float* xg,
              int64_t p0, int64_t pc, float* col, const kernels::Parallel& par) {
  if (!p.packed.empty()) {
    kernels::GemmPackedAF32(*p.packed[gi], false, pc, 1.0f, xg + p0, p.p_in, 0.0f, col, pc, par);
  } else {
    kernels::GemmF32(true, false, p.m, pc, p.cg, 1.0f, w + gi * p.cg * p.m, p.m, xg + p0, p.p_in,
                     0.0f, col, pc, par);
  }
}

// Disjoint taps: the chunks write disjoint parts of Y, so they are the parallel tasks, each with
// its own col (one parallel region per call instead of three per chunk).
void RunDisjointChunksF32(const ConvTransposeF32Plan& p, RunContext& rc) {
  const float* x = rc.input(0).data<float>();
  const float* w = rc.input(1).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  const int64_t chunks = (p.p_in + p.chunk - 1) / p.chunk;
  const kernels::Parallel& par =
      kernels::ParallelForMacs(rc.parallel(), p.batch * p.group * p.m * p.p_in * p.cg);
  par.For(p.batch * p.group * chunks, [&](int64_t t0, int64_t t1) {
    static thread_local std::vector<float> col;
    col.resize(std::max(col.size(), static_cast<size_t>(p.m * p.chunk)));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ng = t / chunks, gi = ng % p.group;
      const int64_t p0 = (t % chunks) * p.chunk, pc = std::min(p.chunk, p.p_in - p0);
      const float* xg = x + (ng * p.cg) * p.p_in;  // image n, group gi: channels ng * cg ...
      float* yg = y + ng * p.og * p.p_out;
      ColChunk(p, w, gi, xg, p0, pc, col.data(), kernels::SerialParallel());
      kernels::Col2ImDisjointF32(p.g, col.data(), p.og, p0, pc, b ? b + gi * p.og : nullptr, yg,
                                 kernels::SerialParallel());
      if (p.post) {
        // Rows [p0, p0 + pc) / x_inner of X wrote rows of Y stride[0] times further on.
        const int64_t band0 = p0 / p.x_inner * p.g.stride[0] * p.y_inner;
        const int64_t band1 = (p0 + pc) / p.x_inner * p.g.stride[0] * p.y_inner;
        for (int64_t c = 0; c < p.og; ++c) p.post(yg + c * p.p_out + band0, band1 - band0);
      }
    }
  });
}

// Per image and group: Y_g = bias + col2im(W_g^T x X_g), col a chunk of input positions at a time.
void RunConvTransposeF32(const ConvTransposeF32Plan& p, RunContext& rc) {
  if (p.two_by_two) {
    const float* x = rc.input(0).data<float>();
    const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
    float* y = rc.output(0).data<float>();
    for (int64_t n = 0; n < p.batch; ++n) {
      kernels::ConvTranspose2x2S2F32(p.cg, p.g.out[0], p.g.out[1], x + n * p.channels * p.p_in,
                                     p.og, rc.input(1).data<float>(), b,
                                     y + n * p.out_channels * p.p_out, rc.parallel(), p.post);
    }
    return;
  }
  if (p.disjoint && p.cg > 0) {
    RunDisjointChunksF32(p, rc);
    return;
  }
  const float* x = rc.input(0).data<float>();
  const float* w = rc.input(1).data<float>();
  const float* b = p.has_bias ? rc.input(2).data<float>() : nullptr;
  float* y = rc.output(0).data<float>();
  Tensor scratch = rc.Scratch(DType::kFloat32, {p.m * p.chunk});
  float* col = scratch.data<float>();
  for (int64_t n = 0; n < p.batch; ++n) {
    float* yn = y + n * p.out_channels * p.p_out;
    kernels::Col2ImInitF32(p.out_channels, p.p_out, b, yn, rc.parallel());
    // (No input channels: Y is the bias, which the chain below still runs on.)
    for (int64_t gi = 0; gi < p.group && p.cg > 0; ++gi) {
      const float* xg = x + (n * p.channels + gi * p.cg) * p.p_in;
      float* yg = yn + gi * p.og * p.p_out;
      for (int64_t p0 = 0; p0 < p.p_in; p0 += p.chunk) {
        const int64_t pc = std::min(p.chunk, p.p_in - p0);
        ColChunk(p, w, gi, xg, p0, pc, col, rc.parallel());
        kernels::Col2ImF32(p.g, col, p.og, p0, pc, yg, rc.parallel());
      }
    }
    if (p.post) {
      kernels::ParallelForElements(rc.parallel(), 2 * p.out_channels * p.p_out)
          .For(p.out_channels, [&](int64_t c0, int64_t c1) {
            for (int64_t c = c0; c < c1; ++c) p.post(yn + c * p.p_out, p.p_out);
          });
    }
  }
}

class ConvTransposeOp final : public Op {
 public:
  explicit ConvTransposeOp(const OpInit& init) {
    // T: float16 and float32 in every opset, bfloat16 from opset 22 (float64 is not implemented).
    bfloat16_allowed_ = init.opset() >= 22;
    attrs_ = ConvTransposeAttributes::Read(init);
    if (init.num_inputs() < 2 || init.num_inputs() > 3) {
      init.Fail("ConvTranspose takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    if (bfloat16_allowed_) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16});
    }
    ctx.RequireSameDType(0, 1);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  // A float32 chain only: the 16-bit plan is the float32 one on widened data.
  bool AttachPostChain(std::shared_ptr<const elementwise::FusedChain> chain) override {
    if (post_ || !chain || chain->is_16bit()) return false;
    post_ = std::move(chain);
    return true;
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    if (Is16BitFloat(dt)) {
      // W and B may be float32 constants, after a folding (graph/passes/conv_batchnorm_fold.h)
      // put the following per-channel affine steps into them: those are taken as they are.
      std::vector<int> widen = {0};
      for (int i : {1, 2}) {
        if (ctx.has_input(i) && ctx.input_dtype(i) == dt) widen.push_back(i);
      }
      return widen16::PrepareWidened16(ctx, dt, widen,
                                       [this](PrepareContext& c) { return PrepareF32(c); });
    }
    return PrepareF32(ctx);
  }

 private:
  // Checks X, W and B's shapes and the attributes' sizes against them.
  ConvTransposeShape CheckShapes(PrepareContext& ctx) const {
    const ConvTransposeShape s = attrs_.CheckShapes(ctx, ctx.input_dims(0), ctx.input_dims(1));
    if (ctx.has_input(2) && ctx.input_dims(2) != Dims{s.out_channels}) {
      ctx.Fail("B " + DimsToString(ctx.input_dims(2)) + " must be [" +
               std::to_string(s.out_channels) + "]");
    }
    return s;
  }

  // A constant W is packed per group now (transposed view: W_g is [cg, og * kernel] row-major).
  RunFn PrepareF32(PrepareContext& ctx) const {
    const ConvTransposeShape s = CheckShapes(ctx);
    auto plan = std::make_shared<ConvTransposeF32Plan>();
    ConvTransposeF32Plan& p = *plan;
    const Dims out_dims =
        attrs_.ResolveGeometry(ctx, s, ctx.input_dims(0), ctx.input_dims(1), &p.g);
    ctx.set_output(0, DType::kFloat32, out_dims);
    if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};

    p.batch = s.batch;
    p.group = s.group;
    p.channels = s.channels;
    p.cg = s.cg;
    p.og = s.og;
    p.out_channels = s.out_channels;
    p.m = s.og * p.g.KernelSize();
    p.p_in = p.g.OutSize();
    p.p_out = p.g.InSize();
    p.has_bias = ctx.has_input(2);
    p.disjoint = kernels::Col2ImIsDisjoint(p.g);
    p.two_by_two = p.disjoint && p.group == 1 && p.g.rank == 2 && p.g.kernel[0] == 2 &&
                   p.g.kernel[1] == 2;
    if (const Tensor* wc = ctx.input_value(1); wc != nullptr && p.cg > 0) {
      for (int64_t gi = 0; gi < p.group; ++gi) {
        p.packed.push_back(
            kernels::PackedAF32::Pack(true, p.m, p.cg, wc->data<float>() + gi * p.cg * p.m, p.m));
      }
    }
    p.chunk = std::max<int64_t>(kColBudget / std::max<int64_t>(p.m, 1), 16);
    // Disjoint taps run the chunks as parallel tasks: at least 8 of them where the input allows.
    if (p.disjoint) p.chunk = std::min(p.chunk, std::max<int64_t>(64, (p.p_in + 7) / 8));
    p.chunk = std::max<int64_t>(std::min(p.chunk, p.p_in), 1);
    if (post_) {
      if (post_->is_16bit()) ctx.Fail("a fused 16-bit post-op on a float32 ConvTranspose");
      p.chain = post_;
      p.post = post_->AsPostOpF32();
      for (int d = 1; d < p.g.rank; ++d) {
        p.x_inner *= p.g.out[d];
        p.y_inner *= p.g.in[d];
      }
      if (p.disjoint) p.chunk = std::max<int64_t>(1, p.chunk / p.x_inner) * p.x_inner;
    }
    return [plan](RunContext& rc) { RunConvTransposeF32(*plan, rc); };
  }

  ConvTransposeAttributes attrs_;
  std::shared_ptr<const elementwise::FusedChain> post_;  // in the output's dtype
  bool bfloat16_allowed_ = false;
};

}  // namespace

void RegisterConvTransposeOps(OpRegistry& registry) {
  for (int v : {1, 11, 22})
    registry.Register("", "ConvTranspose", v, MakeFactory<ConvTransposeOp>());
}

}  // namespace simplecpp::graph
