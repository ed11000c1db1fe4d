// ConvTranspose (opsets 1, 11, 22): float32, float16 and (opset >= 22) bfloat16, 1-D/2-D/3-D, group, strides, dilations, pads,
// output_padding, output_shape and auto_pad, optional bias.
//
// ConvTranspose is the adjoint of Conv: per image and group,
//   col [og * kernel, P_in] = W_g^T x X_g [cg, P_in]     (W_g = W[gi*cg .. , og, k...] viewed
//                                                          as [cg, og * kernel] row-major)
//   Y_g [og, out...]        = bias + col2im(col)          (kernels/col2im.h)
// where the "convolution" geometry seen by col2im has the output Y as its input image and the
// input X as its output grid. A constant W is packed per group at Prepare (kernels::PackedAF32,
// transposed view). col is computed a chunk of input positions at a time to bound scratch memory.
//
// Output size per spatial dim d (spec): out = stride*(in-1) + output_padding + (k-1)*dil + 1
// - pad_begin - pad_end. With output_shape (or auto_pad SAME_*, where out = in * stride) the
// pads come from total = stride*(in-1) + output_padding + (k-1)*dil + 1 - out: SAME_UPPER puts
// total/2 at the beginning and the rest at the end; NOTSET and SAME_LOWER put the larger half at
// the beginning. A negative total (output larger than the kernel reach) leaves zeros (bias).
//
// float16 / bfloat16: 16-bit storage, float32 arithmetic (float16_wrap.h): a constant
// W / B is widened once at Prepare (and packed), X per run, and Y is rounded once to 16 bits.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/op.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/col2im.h"
#include "kernels/conv.h"
#include "kernels/gemm.h"

namespace simplecpp::graph {
namespace {

constexpr int64_t kColBudget = int64_t{1} << 18;  // floats of col per chunk (about L2)

class ConvTransposeOp final : public Op {
 public:
  explicit ConvTransposeOp(const OpInit& init) {
    attrs_ = ConvAttributes::Read(init);
    output_padding_ = init.GetInts("output_padding");
    output_shape_ = init.GetInts("output_shape");
    for (int64_t p : output_padding_) {
      if (p < 0) init.Fail("output_padding must be >= 0, got " + DimsToString(output_padding_));
    }
    if (init.num_inputs() < 2 || init.num_inputs() > 3) {
      init.Fail("ConvTranspose takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    // T: float16 and float32 in every opset, bfloat16 from opset 22 (float64 is not implemented).
    if (ctx.opset() >= 22) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16});
    }
    ctx.RequireSameDType(0, 1);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    if (Is16BitFloat(dt)) {
      return widen16::PrepareWidened16(ctx, dt, {0, 1, 2},
                                       [this](PrepareContext& c) { return PrepareF32(c); });
    }
    return PrepareF32(ctx);
  }

 private:
  RunFn PrepareF32(PrepareContext& ctx) const {
    const Dims& xd = ctx.input_dims(0);
    const Dims& wd = ctx.input_dims(1);
    if (xd.size() < 3 || xd.size() > 5) {
      ctx.Unsupported("X must have 1 to 3 spatial dims, got shape " + DimsToString(xd));
    }
    if (wd.size() != xd.size()) {
      ctx.Fail("W " + DimsToString(wd) + " must have the rank of X " + DimsToString(xd));
    }
    const int rank = static_cast<int>(xd.size()) - 2;
    const int64_t batch = xd[0], channels = xd[1], og = wd[1];
    if (wd[0] != channels) {
      ctx.Fail("W has " + std::to_string(wd[0]) + " input channels, X has " +
               std::to_string(channels));
    }
    const WindowAttributes& window = attrs_.window;
    const int64_t group = attrs_.group;
    if (channels % group != 0) {
      ctx.Fail("X channels " + std::to_string(channels) + " not divisible by group " +
               std::to_string(group));
    }
    const int64_t cg = channels / group;
    const int64_t out_channels = og * group;
    const std::vector<int64_t>& ks = window.kernel_shape;
    if (!ks.empty() && (static_cast<int>(ks.size()) != rank || !std::equal(ks.begin(), ks.end(), wd.begin() + 2))) {
      ctx.Fail("kernel_shape " + DimsToString(ks) + " does not match W " + DimsToString(wd));
    }
    auto check_size = [&](const std::vector<int64_t>& v, size_t want, const char* name) {
      if (!v.empty() && v.size() != want) {
        ctx.Fail(std::string(name) + " " + DimsToString(v) + " must have " + std::to_string(want) +
                 " values");
      }
    };
    window.CheckRank(ctx, rank);
    check_size(output_padding_, rank, "output_padding");
    std::vector<int64_t> oshape = output_shape_;
    if (oshape.size() == static_cast<size_t>(rank) + 2)
      oshape.erase(oshape.begin(), oshape.begin() + 2);
    check_size(oshape, rank, "output_shape");
    if (ctx.has_input(2) && ctx.input_dims(2) != Dims{out_channels}) {
      ctx.Fail("B " + DimsToString(ctx.input_dims(2)) + " must be [" +
               std::to_string(out_channels) + "]");
    }

    kernels::ConvGeometry g;  // image = Y's spatial dims, grid = X's spatial dims
    g.rank = rank;
    Dims out_dims = {batch, out_channels};
    for (int d = 0; d < rank; ++d) {
      const int64_t in = xd[2 + d], k = wd[2 + d];
      const int64_t s = window.stride(d), dil = window.dilation(d);
      const int64_t op = output_padding_.empty() ? 0 : output_padding_[d];
      if (op >= s && op >= dil) {
        ctx.Fail("output_padding " + DimsToString(output_padding_) +
                 " must be smaller than the stride or the dilation");
      }
      if (k < 1) ctx.Fail("W " + DimsToString(wd) + " has an empty kernel dim");
      const int64_t full = s * (in - 1) + op + (k - 1) * dil + 1;
      int64_t pb = 0, pe = 0, out = 0;
      if (!oshape.empty() || window.same()) {
        out = !oshape.empty() ? oshape[d] : in * s;
        const int64_t total = full - out;
        // Halves rounded down (floor, also for a negative total), as the ONNX reference does.
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        if (window.auto_pad == AutoPad::kSameUpper) {
          pb = half;
          pe = total - pb;
        } else {
          pe = half;
          pb = total - pe;
        }
      } else {
        const WindowAttributes::Axis a = window.ResolveAxis(d, rank, in, (k - 1) * dil + 1);
        pb = a.pad_begin;
        pe = a.pad_end;
        out = full - pb - pe;
      }
      if (out < 0) ctx.Fail("pads " + DimsToString(window.pads) + " make the output size negative");
      g.in[d] = out;
      g.out[d] = in;
      g.kernel[d] = k;
      g.stride[d] = s;
      g.dilation[d] = dil;
      g.pad[d] = pb;
      out_dims.push_back(out);
    }
    ctx.set_output(0, DType::kFloat32, out_dims);
    if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};

    const int64_t ksize = g.KernelSize();
    const int64_t m = og * ksize;  // GEMM M (rows of col)
    const int64_t p_in = g.OutSize(), p_out = g.InSize();
    const bool has_bias = ctx.has_input(2);
    std::shared_ptr<std::vector<std::shared_ptr<const kernels::PackedAF32>>> packed;
    if (const Tensor* wc = ctx.input_value(1); wc != nullptr && cg > 0) {
      packed = std::make_shared<std::vector<std::shared_ptr<const kernels::PackedAF32>>>();
      for (int64_t gi = 0; gi < group; ++gi) {
        packed->push_back(
            kernels::PackedAF32::Pack(true, m, cg, wc->data<float>() + gi * cg * m, m));
      }
    }
    int64_t chunk = std::max<int64_t>(kColBudget / std::max<int64_t>(m, 1), 16);
    chunk = std::max<int64_t>(std::min(chunk, p_in), 1);
    return [g, packed, batch, group, channels, cg, og, m, p_in, p_out, out_channels, has_bias,
            chunk](RunContext& rc) {
      const float* x = rc.input(0).data<float>();
      const float* w = rc.input(1).data<float>();
      const float* b = has_bias ? rc.input(2).data<float>() : nullptr;
      float* y = rc.output(0).data<float>();
      Tensor scratch = rc.Scratch(DType::kFloat32, {m * chunk});
      float* col = scratch.data<float>();
      for (int64_t n = 0; n < batch; ++n) {
        float* yn = y + n * out_channels * p_out;
        kernels::Col2ImInitF32(out_channels, p_out, b, yn, rc.parallel());
        if (cg == 0) continue;
        for (int64_t gi = 0; gi < group; ++gi) {
          const float* xg = x + (n * channels + gi * cg) * p_in;
          float* yg = yn + gi * og * p_out;
          for (int64_t p0 = 0; p0 < p_in; p0 += chunk) {
            const int64_t pc = std::min(chunk, p_in - p0);
            if (packed) {
              kernels::GemmPackedAF32(*(*packed)[gi], false, pc, 1.0f, xg + p0, p_in, 0.0f, col, pc,
                                      rc.parallel());
            } else {
              kernels::GemmF32(true, false, m, pc, cg, 1.0f, w + gi * cg * m, m, xg + p0, p_in,
                               0.0f, col, pc, rc.parallel());
            }
            kernels::Col2ImF32(g, col, og, p0, pc, yg, rc.parallel());
          }
        }
      }
    };
  }

  ConvAttributes attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
};

}  // namespace

void RegisterConvTransposeOps(OpRegistry& registry) {
  for (int v : {1, 11, 22})
    registry.Register("", "ConvTranspose", v, MakeFactory<ConvTransposeOp>());
}

}  // namespace simplecpp::graph
