// com.microsoft GroupQueryAttention (version 1), the decoder self-attention with a KV cache, on
// the ONNX Attention kernel (kernels/attention.h AttentionForward) and its rotary kernel.
//
// Supported: query [B, S, N*H] with key / value [B, S, Nkv*H], or packed QKV [B, S, (N+2Nkv)*H];
// past_key / past_value [B, Nkv, P, H] of T (absent: P = 0); seqlens_k (int32 [B], total length
// of batch b minus 1); total_sequence_length (int32 scalar, must be constant at Prepare);
// do_rotary with cos_cache / sin_cache [max_positions, rotary_dim / 2] (rotary_interleaved);
// scale, softcap, local_window_size; outputs output, present_key, present_value
// [B, Nkv, max(P, total_sequence_length), H]. T is float32, float16 or bfloat16.
// Refused by name: causal = 0, position_ids, attention_bias, head_sink, k_scale / v_scale
// (quantized caches), q_norm_weight / k_norm_weight, smooth_softmax, qk_output, output_qk,
// sliding_window_cache, a cache dtype other than T.
//
// Semantics (ORT's CPU kernel): with L_b = seqlens_k[b] + 1, the step is the first prompt when
// S == total_sequence_length (its new tokens sit at positions 0..S-1; rows past L_b are
// right padding), otherwise the new tokens sit at positions L_b - S .. L_b - 1 after the first
// L_b - S cached rows. present = those cached rows, then the new (rotated) K / V; other rows are
// copied from past where it has them, else zero. Query at position p attends keys j < L_b with
// j <= p and, with local_window_size W > 0, j > p - W (the last W positions, as ORT counts them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/attention.h"

namespace simplecpp::graph {
namespace {

constexpr int kQuery = 0, kKey = 1, kValue = 2, kPastKey = 3, kPastValue = 4, kSeqlensK = 5,
              kTotalSeq = 6, kCos = 7, kSin = 8;

std::string IntStr(int64_t v) { return std::to_string(v); }

kernels::FloatStorage StorageOf(DType t) {
  if (t == DType::kFloat16) return kernels::FloatStorage::kF16;
  if (t == DType::kBFloat16) return kernels::FloatStorage::kBF16;
  return kernels::FloatStorage::kF32;
}

class GroupQueryAttentionOp final : public Op {
 public:
  explicit GroupQueryAttentionOp(const OpInit& init) {
    num_heads_ = init.RequireInt("num_heads");
    kv_num_heads_ = init.RequireInt("kv_num_heads");
    if (num_heads_ <= 0 || kv_num_heads_ <= 0 || num_heads_ % kv_num_heads_ != 0) {
      init.Fail("num_heads " + IntStr(num_heads_) +
                " must be a positive multiple of kv_num_heads " + IntStr(kv_num_heads_));
    }
    do_rotary_ = init.GetInt("do_rotary", 0) != 0;
    interleaved_ = init.GetInt("rotary_interleaved", 0) != 0;
    scale_ = init.GetFloat("scale", 0.0f);
    softcap_ = init.GetFloat("softcap", 0.0f);
    window_ = init.GetInt("local_window_size", -1);
    if (init.GetInt("causal", 1) != 1) init.Unsupported("causal = 0 (bidirectional attention)");
    if (init.GetInt("smooth_softmax", 0) != 0) init.Unsupported("smooth_softmax = 1");
    if (init.GetInt("qk_output", 0) != 0) init.Unsupported("qk_output (the output_qk output)");
    if (init.GetInt("sliding_window_cache", 0) != 0) init.Unsupported("sliding_window_cache = 1");
    if (init.Has("k_quant_type") || init.Has("v_quant_type") || init.Has("kv_cache_bit_width")) {
      if (init.GetString("k_quant_type", "NONE") != "NONE" ||
          init.GetString("v_quant_type", "NONE") != "NONE") {
        init.Unsupported("quantized KV caches (k_quant_type / v_quant_type)");
      }
    }
    static const char* kRefusedInputs[] = {"position_ids", "attention_bias", "head_sink",
                                           "k_scale",      "v_scale",        "q_norm_weight",
                                           "k_norm_weight"};
    for (int i = 9; i < init.num_inputs(); ++i) {
      if (init.has_input(i))
        init.Unsupported(std::string("the ") + kRefusedInputs[i - 9] + " input");
    }
    if (init.num_outputs() > 3 && init.has_output(3)) init.Unsupported("the output_qk output");
    if (init.num_inputs() < 7)
      init.Fail("expects at least 7 inputs, got " + IntStr(init.num_inputs()));
  }

  std::vector<int> ValueInputs() const override { return {kTotalSeq}; }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(kQuery, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    for (int i : {kKey, kValue, kPastKey, kPastValue, kCos, kSin}) {
      if (ctx.has_input(i)) ctx.RequireSameDType(kQuery, i);
    }
    ctx.RequireDType(kSeqlensK, {DType::kInt32});
    ctx.RequireDType(kTotalSeq, {DType::kInt32});
    for (int i = 0; i < 3 && i < ctx.num_outputs(); ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, ctx.input_dtype(kQuery));
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& qd = ctx.input_dims(kQuery);
    if (qd.size() != 3)
      ctx.Fail("query must be [batch, sequence, hidden], got " + DimsToString(qd));
    const int64_t B = qd[0], S = qd[1], N = num_heads_, G = kv_num_heads_;
    const bool packed = !ctx.has_input(kKey);
    if (packed != !ctx.has_input(kValue)) ctx.Fail("key and value must be given together");
    int64_t H;
    if (packed) {
      if (qd[2] % (N + 2 * G) != 0) {
        ctx.Fail("packed QKV width " + IntStr(qd[2]) +
                 " is not a multiple of num_heads + 2 * "
                 "kv_num_heads = " +
                 IntStr(N + 2 * G));
      }
      H = qd[2] / (N + 2 * G);
    } else {
      if (qd[2] % N != 0)
        ctx.Fail("query width " + IntStr(qd[2]) + " is not a multiple of num_heads");
      H = qd[2] / N;
      for (int i : {kKey, kValue}) {
        if (ctx.input_dims(i) != Dims{B, S, G * H}) {
          ctx.Fail(std::string(i == kKey ? "key " : "value ") + DimsToString(ctx.input_dims(i)) +
                   " must be [batch, sequence, kv_num_heads * head_size] = " +
                   DimsToString({B, S, G * H}));
        }
      }
    }
    const bool has_past = ctx.has_input(kPastKey);
    if (has_past != ctx.has_input(kPastValue))
      ctx.Fail("past_key and past_value must be given together");
    int64_t P = 0;
    if (has_past) {
      P = ctx.input_dims(kPastKey).size() == 4 ? ctx.input_dims(kPastKey)[2] : -1;
      for (int i : {kPastKey, kPastValue}) {
        if (ctx.input_dims(i) != Dims{B, G, P, H}) {
          ctx.Fail(std::string(i == kPastKey ? "past_key " : "past_value ") +
                   DimsToString(ctx.input_dims(i)) +
                   " must be [batch, kv_num_heads, past_sequence, head_size] with batch " +
                   IntStr(B) + ", kv_num_heads " + IntStr(G) + ", head_size " + IntStr(H));
        }
      }
    }
    if (ctx.input_dims(kSeqlensK) != Dims{B}) {
      ctx.Fail("seqlens_k " + DimsToString(ctx.input_dims(kSeqlensK)) + " must be [batch]");
    }
    const Tensor* total_t = ctx.input_value(kTotalSeq);
    if (total_t == nullptr) ctx.Unsupported("total_sequence_length must be known at Prepare");
    if (total_t->num_elements() != 1) ctx.Fail("total_sequence_length must hold one value");
    const int64_t total = total_t->data<int32_t>()[0];
    if (total < S) {
      ctx.Fail("total_sequence_length " + IntStr(total) + " is below the sequence length " +
               IntStr(S));
    }
    const int64_t L = std::max(P, total);  // present rows
    int64_t rd = 0, cache_rows = 0;
    if (do_rotary_) {
      if (!ctx.has_input(kCos) || !ctx.has_input(kSin))
        ctx.Fail("do_rotary needs cos_cache and sin_cache");
      const Dims& cd = ctx.input_dims(kCos);
      if (cd.size() != 2 || ctx.input_dims(kSin) != cd || 2 * cd[1] > H || cd[1] <= 0) {
        ctx.Fail("cos_cache / sin_cache " + DimsToString(cd) + " / " +
                 DimsToString(ctx.input_dims(kSin)) +
                 " must both be [max_positions, rotary_dim / 2] with rotary_dim <= head_size " +
                 IntStr(H));
      }
      rd = 2 * cd[1];
      cache_rows = cd[0];
    }
    const DType dt = ctx.input_dtype(kQuery);
    ctx.set_output(0, dt, {B, S, N * H});
    const bool out_k = ctx.num_outputs() > 1 && ctx.has_output(1);
    const bool out_v = ctx.num_outputs() > 2 && ctx.has_output(2);
    if (out_k) ctx.set_output(1, dt, {B, G, L, H});
    if (out_v) ctx.set_output(2, dt, {B, G, L, H});
    const kernels::FloatStorage st = StorageOf(dt);
    const int64_t es = dt == DType::kFloat32 ? 4 : 2;
    const bool first_prompt = S == total;
    const float scale = scale_ != 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(double(H)));
    const float softcap = softcap_;
    const int64_t window = window_;
    const bool rotary = do_rotary_, il = interleaved_;
    return [=](RunContext& rc) {
      const int32_t* seqlens = rc.input(kSeqlensK).data<int32_t>();
      std::vector<int64_t> past_len(static_cast<size_t>(B)), valid(static_cast<size_t>(B));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t lb = static_cast<int64_t>(seqlens[b]) + 1;
        const int64_t pb = first_prompt ? 0 : lb - S;
        if (lb < 1 || lb > L || pb < 0 || (!first_prompt && pb > P)) {
          rc.Fail("seqlens_k[" + IntStr(b) + "] = " + IntStr(seqlens[b]) +
                  " does not fit sequence length " + IntStr(S) + ", past length " + IntStr(P) +
                  " and total_sequence_length " + IntStr(total));
        }
        past_len[b] = pb;
        valid[b] = lb;
      }
      const char* q_src = static_cast<const char*>(rc.input(kQuery).raw_data());
      const int64_t row = qd[2];  // elements per (b, s) row of query
      const char* k_src =
          packed ? q_src + N * H * es : static_cast<const char*>(rc.input(kKey).raw_data());
      const char* v_src =
          packed ? q_src + (N + G) * H * es : static_cast<const char*>(rc.input(kValue).raw_data());
      const int64_t kv_row = packed ? row : G * H;
      // Present K / V: past rows, then the new rows at past_len[b].
      Tensor k_scratch, v_scratch;
      char* pk;
      char* pv;
      if (out_k) {
        pk = static_cast<char*>(rc.output(1).raw_data());
      } else {
        k_scratch = rc.Scratch(dt, {B, G, L, H});
        pk = static_cast<char*>(k_scratch.raw_data());
      }
      if (out_v) {
        pv = static_cast<char*>(rc.output(2).raw_data());
      } else {
        v_scratch = rc.Scratch(dt, {B, G, L, H});
        pv = static_cast<char*>(v_scratch.raw_data());
      }
      const size_t head_bytes = static_cast<size_t>(L * H * es);
      for (int64_t bg = 0; bg < B * G; ++bg) {
        char* kd = pk + bg * head_bytes;
        char* vd = pv + bg * head_bytes;
        std::memset(kd, 0, head_bytes);
        std::memset(vd, 0, head_bytes);
        if (P > 0) {
          const size_t past_bytes = static_cast<size_t>(P * H * es);
          std::memcpy(kd, static_cast<const char*>(rc.input(kPastKey).raw_data()) + bg * past_bytes,
                      past_bytes);
          std::memcpy(vd,
                      static_cast<const char*>(rc.input(kPastValue).raw_data()) + bg * past_bytes,
                      past_bytes);
        }
        const int64_t b = bg / G, g = bg % G;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t src = ((b * S + s) * kv_row + g * H) * es;
          std::memcpy(kd + (past_len[b] + s) * H * es, k_src + src, static_cast<size_t>(H * es));
          std::memcpy(vd + (past_len[b] + s) * H * es, v_src + src, static_cast<size_t>(H * es));
        }
      }
      // Q as [B, S, N, H] (rotated in place when do_rotary).
      Tensor q = rc.Scratch(dt, {B, S, N, H});
      char* qd_ptr = static_cast<char*>(q.raw_data());
      for (int64_t bs = 0; bs < B * S; ++bs) {
        std::memcpy(qd_ptr + bs * N * H * es, q_src + bs * row * es,
                    static_cast<size_t>(N * H * es));
      }
      if (rotary) {
        std::vector<int64_t> pos(static_cast<size_t>(S));
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t s = 0; s < S; ++s) pos[s] = past_len[b] + s;
          const int64_t q_stride[3] = {S * N * H, N * H, H};
          const int64_t k_stride[3] = {G * L * H, H, L * H};
          int64_t bad = kernels::RotaryEmbedding(
              st, qd_ptr + b * S * N * H * es, qd_ptr + b * S * N * H * es,
              rc.input(kCos).raw_data(), rc.input(kSin).raw_data(), pos.data(), cache_rows, 1, S, N,
              H, rd, il, q_stride, rc.parallel());
          if (bad < 0) {
            char* k_new = pk + (b * G * L + past_len[b]) * H * es;
            bad = kernels::RotaryEmbedding(st, k_new, k_new, rc.input(kCos).raw_data(),
                                           rc.input(kSin).raw_data(), pos.data(), cache_rows, 1, S,
                                           G, H, rd, il, k_stride, rc.parallel());
          }
          if (bad >= 0) {
            rc.Fail("rotary position " + IntStr(pos[bad]) + " of batch " + IntStr(b) +
                    " is outside cos_cache [0, " + IntStr(cache_rows) + ")");
          }
        }
      }
      // Which keys each query attends (true) as a bool mask [B, S, L].
      std::vector<uint8_t> mask(static_cast<size_t>(B * S * L), 0);
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t p = past_len[b] + s;
          const int64_t lo = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
          const int64_t hi = std::min(p, valid[b] - 1);
          for (int64_t j = lo; j <= hi; ++j) mask[static_cast<size_t>((b * S + s) * L + j)] = 1;
        }
      }
      kernels::AttentionArgs a;
      a.type = st;
      a.batch = B;
      a.q_heads = N;
      a.kv_heads = G;
      a.q_len = S;
      a.kv_len = L;
      a.head_size = H;
      a.v_head_size = H;
      a.q = qd_ptr;
      a.q_stride[0] = S * N * H;
      a.q_stride[1] = H;
      a.q_stride[2] = N * H;
      a.k = pk;
      a.k_stride[0] = G * L * H;
      a.k_stride[1] = L * H;
      a.k_stride[2] = H;
      a.v = pv;
      a.v_stride[0] = G * L * H;
      a.v_stride[1] = L * H;
      a.v_stride[2] = H;
      a.y = rc.output(0).raw_data();
      a.y_stride[0] = S * N * H;
      a.y_stride[1] = H;
      a.y_stride[2] = N * H;
      a.scale = scale;
      a.softcap = softcap;
      a.mask_type = kernels::AttentionMaskType::kBool;
      a.mask = mask.data();
      a.mask_stride[0] = S * L;
      a.mask_stride[1] = 0;
      a.mask_stride[2] = L;
      a.mask_len = L;
      kernels::AttentionForward(a, rc.parallel());
    };
  }

 private:
  int64_t num_heads_ = 0, kv_num_heads_ = 0;
  bool do_rotary_ = false, interleaved_ = false;
  float scale_ = 0.0f, softcap_ = 0.0f;
  int64_t window_ = -1;
};

}  // namespace

void RegisterMsftAttentionOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "GroupQueryAttention", 1,
                    MakeFactory<GroupQueryAttentionOp>());
}

}  // namespace simplecpp::graph
