// CausalConvWithState (ai.onnx 27): a depthwise causal 1-D convolution that carries its left
// context between calls (streaming / decode of Mamba- and conv-style token mixers).
//
// Inputs: input [B, C, L], weight [C, 1, K], bias? [C], past_state? [B, C, K-1] (zeros when
// absent). Outputs: output [B, C, L], present_state [B, C, K-1].
// With P = concat(past_state, input) along the last axis (length K-1+L):
//   output[b,c,t] = act(bias[c] + sum_k weight[c,0,k] * P[b,c,t+k]),  act = none | silu (= swish)
//   present_state[b,c,:] = the last K-1 positions of P.
// Arithmetic is float32 (float16 / bfloat16 storage is widened once and narrowed once). As in the
// ONNX reference, the convolution result is rounded to the storage type before the activation.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

std::string IntStr(int64_t v) { return std::to_string(v); }

class CausalConvWithStateOp final : public Op {
 public:
  explicit CausalConvWithStateOp(const OpInit& init) {
    if (init.num_inputs() < 2 || init.num_inputs() > 4) {
      init.Fail("expects 2 to 4 inputs (input, weight, bias?, past_state?), got " +
                IntStr(init.num_inputs()));
    }
    if (init.num_outputs() < 1 || init.num_outputs() > 2) {
      init.Fail("expects 1 or 2 outputs (output, present_state?), got " + IntStr(init.num_outputs()));
    }
    const std::string act = init.GetString("activation", "none");
    if (act == "none") {
      silu_ = false;
    } else if (act == "silu" || act == "swish") {
      silu_ = true;
    } else {
      init.Fail("activation must be 'none', 'silu' or 'swish', got '" + act + "'");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(3)) ctx.RequireSameDType(0, 3);
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, ctx.input_dtype(0));
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    if (Is16BitFloat(dt)) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return widen16::PrepareWidened16(ctx, dt, {0, 1, 2, 3}, [this, kind](PrepareContext& inner) {
        return PrepareF32(inner, true, kind);
      });
    }
    return PrepareF32(ctx, false, kernels::Float16Kind::kHalf);
  }

 private:
  // `round16`: round the convolution result through `kind` before the activation.
  RunFn PrepareF32(PrepareContext& ctx, bool round16, kernels::Float16Kind kind) const {
    const Dims& xd = ctx.input_dims(0);
    const Dims& wd = ctx.input_dims(1);
    if (xd.size() != 3) ctx.Fail("input must have rank 3 [batch, channels, length]");
    if (wd.size() != 3) ctx.Fail("weight must have rank 3 [channels, 1, kernel_size]");
    const int64_t B = xd[0], C = xd[1], L = xd[2];
    const int64_t K = wd[2];
    if (wd[0] != C || wd[1] != 1) {
      ctx.Fail("weight must be [" + IntStr(C) + ", 1, kernel_size] (depthwise), got " +
               DimsToString(wd));
    }
    if (K < 1) ctx.Fail("kernel_size (weight dim 2) must be >= 1, got " + IntStr(K));
    const bool has_bias = ctx.has_input(2);
    if (has_bias) {
      const Dims& bd = ctx.input_dims(2);
      if (bd.size() != 1 || bd[0] != C) ctx.Fail("bias must be [" + IntStr(C) + "], got " + DimsToString(bd));
    }
    const int64_t S = K - 1;
    const bool has_past = ctx.has_input(3);
    if (has_past) {
      const Dims& pd = ctx.input_dims(3);
      if (pd.size() != 3 || pd[0] != B || pd[1] != C || pd[2] != S) {
        ctx.Fail("past_state must be " + DimsToString(Dims{B, C, S}) + " (kernel_size - 1 = " +
                 IntStr(S) + "), got " + DimsToString(pd));
      }
    }
    ctx.set_output(0, DType::kFloat32, {B, C, L});
    const bool want_state = ctx.num_outputs() > 1 && ctx.has_output(1);
    if (want_state) ctx.set_output(1, DType::kFloat32, {B, C, S});
    const bool silu = silu_;

    return [=](RunContext& rc) {
      const float* x = rc.input(0).data<float>();
      const float* w = rc.input(1).data<float>();
      const float* bias = has_bias ? rc.input(2).data<float>() : nullptr;
      const float* past = has_past ? rc.input(3).data<float>() : nullptr;
      float* y = rc.output(0).data<float>();
      float* state = want_state ? rc.output(1).data<float>() : nullptr;
      // One task per (batch, channel) row: disjoint outputs, thread-count independent.
      rc.parallel().For(B * C, [=](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t c = r % C;
          const float* xr = x + r * L;
          const float* pr = past ? past + r * S : nullptr;
          const float* wr = w + c * K;
          // P[j] for j in [0, S + L).
          auto at = [&](int64_t j) -> float {
            if (j >= S) return xr[j - S];
            return pr ? pr[j] : 0.0f;
          };
          float* yr = y + r * L;
          for (int64_t t = 0; t < L; ++t) {
            float acc = bias ? bias[c] : 0.0f;
            for (int64_t k = 0; k < K; ++k) acc += wr[k] * at(t + k);
            if (silu) {
              if (round16) acc = kernels::Widen16One(kind, kernels::Narrow16One(kind, acc));
              acc = acc / (1.0f + std::exp(-acc));
            }
            yr[t] = acc;
          }
          if (state) {
            float* sr = state + r * S;
            for (int64_t j = 0; j < S; ++j) sr[j] = at(L + j);
          }
        }
      });
    };
  }

  bool silu_ = false;
};

}  // namespace

void RegisterCausalConvOps(OpRegistry& registry) {
  registry.Register("", "CausalConvWithState", 27, MakeFactory<CausalConvWithStateOp>());
}

}  // namespace simplecpp::graph
