// com.microsoft RotaryEmbedding (version 1) on the ONNX RotaryEmbedding kernel
// (kernels/nn/attention.h), whose rotation is the same:
//   out[d] = x[d] cos - x[d + r/2] sin,  out[d + r/2] = x[d + r/2] cos + x[d] sin   (d < r/2)
// or the pairs (2t, 2t+1) when interleaved; elements of a head past r = rotary_embedding_dim are
// copied. Inputs: input [B, S, hidden] (heads from num_heads, or hidden / (2 * cos_cache's last
// dim) without it) or [B, N, S, H]; position_ids int64 [B, S], or one element p0 meaning
// positions p0 + s; cos_cache and sin_cache [max_positions, r / 2]. r defaults to the head size.
// T is float32, float16 or bfloat16 (float32 arithmetic, one rounding per element).
// Refused: is_packed_batching = 1. `scale` is read and not applied: it only scales cache
// regeneration, which this op (like ORT's CPU kernel) does not do.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/nn/attention.h"

namespace simplecpp::graph {
namespace {

std::string IntStr(int64_t v) { return std::to_string(v); }

kernels::FloatStorage StorageOf(DType t) {
  if (t == DType::kFloat16) return kernels::FloatStorage::kF16;
  if (t == DType::kBFloat16) return kernels::FloatStorage::kBF16;
  return kernels::FloatStorage::kF32;
}

class MsftRotaryEmbeddingOp final : public Op {
 public:
  explicit MsftRotaryEmbeddingOp(const OpInit& init) {
    if (init.num_inputs() != 4) {
      init.Fail("expects 4 inputs (input, position_ids, cos_cache, sin_cache), got " +
                IntStr(init.num_inputs()));
    }
    const int64_t il = init.GetInt("interleaved", 0);
    if (il != 0 && il != 1) init.Fail("interleaved must be 0 or 1, got " + IntStr(il));
    interleaved_ = il == 1;
    num_heads_ = init.GetInt("num_heads", 0);
    rotary_dim_ = init.GetInt("rotary_embedding_dim", 0);
    (void)init.GetFloat("scale", 1.0f);
    if (num_heads_ < 0) init.Fail("num_heads must be >= 0, got " + IntStr(num_heads_));
    if (rotary_dim_ < 0) init.Fail("rotary_embedding_dim must be >= 0, got " + IntStr(rotary_dim_));
    if (rotary_dim_ > 0 && num_heads_ == 0) {
      init.Fail("num_heads must be given when rotary_embedding_dim is");
    }
    if (init.GetInt("is_packed_batching", 0) != 0) {
      init.Unsupported("is_packed_batching = 1 (packed sequences) is not supported");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireDType(1, {DType::kInt64});
    ctx.RequireSameDType(0, 2);
    ctx.RequireSameDType(0, 3);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const Dims& cd = ctx.input_dims(2);
    if (cd.size() != 2)
      ctx.Fail("cos_cache must be [max_positions, rotary_dim / 2], got " + DimsToString(cd));
    if (ctx.input_dims(3) != cd) {
      ctx.Fail("sin_cache " + DimsToString(ctx.input_dims(3)) + " must have cos_cache's shape " +
               DimsToString(cd));
    }
    int64_t B, S, N, H;
    int64_t stride[3];
    if (xd.size() == 4) {
      B = xd[0];
      N = xd[1];
      S = xd[2];
      H = xd[3];
      if (num_heads_ > 0 && num_heads_ != N) {
        ctx.Fail("num_heads " + IntStr(num_heads_) + " does not match the input's head axis " +
                 IntStr(N));
      }
      stride[0] = N * S * H;
      stride[1] = H;
      stride[2] = S * H;
    } else if (xd.size() == 3) {
      B = xd[0];
      S = xd[1];
      const int64_t hidden = xd[2];
      if (num_heads_ > 0) {
        N = num_heads_;
      } else {
        if (cd[1] <= 0) ctx.Fail("cos_cache " + DimsToString(cd) + " gives no head size");
        N = hidden / (2 * cd[1]);
      }
      if (N <= 0 || hidden % N != 0) {
        ctx.Fail("hidden size " + IntStr(hidden) + " is not a multiple of " + IntStr(N) + " heads" +
                 (num_heads_ > 0 ? "" : " (head size 2 * cos_cache dim 1)"));
      }
      H = hidden / N;
      stride[0] = S * hidden;
      stride[1] = hidden;
      stride[2] = H;
    } else {
      ctx.Fail(
          "input must be [batch, sequence, hidden] or [batch, heads, sequence, head_size], "
          "got " +
          DimsToString(xd));
    }
    const int64_t rd = rotary_dim_ > 0 ? rotary_dim_ : H;
    if (rd > H)
      ctx.Fail("rotary_embedding_dim " + IntStr(rd) + " exceeds the head size " + IntStr(H));
    if (rd % 2 != 0) ctx.Fail("the rotary dimension " + IntStr(rd) + " must be even");
    if (cd[1] != rd / 2) {
      ctx.Fail("cos_cache " + DimsToString(cd) +
               " must be [max_positions, rotary_dim / 2 = " + IntStr(rd / 2) + "]");
    }
    const Dims& pd = ctx.input_dims(1);
    const bool offset_form = CheckedNumElements(pd) == 1 && pd.size() <= 1;
    if (!offset_form && pd != Dims{B, S}) {
      ctx.Fail("position_ids " + DimsToString(pd) + " must be [batch, sequence] = " +
               DimsToString({B, S}) + " or hold one start position");
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const kernels::FloatStorage st = StorageOf(dt);
    const int64_t cache_rows = cd[0];
    const bool il = interleaved_;
    const int64_t s0 = stride[0], s1 = stride[1], s2 = stride[2];
    return [=](RunContext& rc) {
      const int64_t strides[3] = {s0, s1, s2};
      const int64_t* pos = rc.input(1).data<int64_t>();
      std::vector<int64_t> expanded;
      if (offset_form) {
        // Positions p0 + s for every batch row.
        expanded.resize(static_cast<size_t>(B * S));
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t s = 0; s < S; ++s) expanded[static_cast<size_t>(b * S + s)] = pos[0] + s;
        }
        pos = expanded.data();
      }
      const int64_t bad = kernels::RotaryEmbedding(
          st, rc.input(0).raw_data(), rc.output(0).raw_data(), rc.input(2).raw_data(),
          rc.input(3).raw_data(), pos, cache_rows, B, S, N, H, rd, il, strides, rc.parallel());
      if (bad >= 0) {
        rc.Fail("position " + IntStr(pos[bad]) + " (batch " + IntStr(bad / S) + ", sequence " +
                IntStr(bad % S) + ") is outside the cache [0, " + IntStr(cache_rows) + ")");
      }
    };
  }

 private:
  bool interleaved_ = false;
  int64_t num_heads_ = 0;
  int64_t rotary_dim_ = 0;
};

}  // namespace

void RegisterMsftRotaryOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "RotaryEmbedding", 1, MakeFactory<MsftRotaryEmbeddingOp>());
}

}  // namespace simplecpp::graph
