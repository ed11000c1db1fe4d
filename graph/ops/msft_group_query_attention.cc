// com.microsoft GroupQueryAttention (version 1), the decoder self-attention with a KV cache, on
// the ONNX Attention kernel (kernels/nn/attention.h AttentionForward) and its rotary kernel.
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
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/nn/attention.h"

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

// What Prepare resolves once for a GroupQueryAttention node.
struct GqaPlan {
  int64_t batch = 0, seq = 0, heads = 0, kv_heads = 0, head_size = 0;
  int64_t query_row = 0;     // elements per (batch, position) row of the query input
  int64_t past = 0;          // past_key's sequence length (0 without past)
  int64_t total = 0;         // total_sequence_length
  int64_t present_rows = 0;  // max(past, total)
  int64_t rotary_dim = 0, cos_rows = 0;
  bool packed = false, first_prompt = false, rotary = false, interleaved = false;
  bool out_present_key = false, out_present_value = false;
  DType dtype = DType::kFloat32;
  kernels::FloatStorage storage = kernels::FloatStorage::kF32;
  int64_t element_size = 4;
  float scale = 1.0f, softcap = 0.0f;
  int64_t window = -1;
};

// Per batch row: how many cached rows precede the new tokens, and how many rows are valid.
struct GqaLengths {
  std::vector<int64_t> past_len, valid;
};

GqaLengths ReadLengths(const GqaPlan& p, RunContext& rc) {
  const int32_t* seqlens = rc.input(kSeqlensK).data<int32_t>();
  GqaLengths len;
  len.past_len.resize(static_cast<size_t>(p.batch));
  len.valid.resize(static_cast<size_t>(p.batch));
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t lb = static_cast<int64_t>(seqlens[b]) + 1;
    const int64_t pb = p.first_prompt ? 0 : lb - p.seq;
    if (lb < 1 || lb > p.present_rows || pb < 0 || (!p.first_prompt && pb > p.past)) {
      rc.Fail("seqlens_k[" + IntStr(b) + "] = " + IntStr(seqlens[b]) +
              " does not fit sequence length " + IntStr(p.seq) + ", past length " + IntStr(p.past) +
              " and total_sequence_length " + IntStr(p.total));
    }
    len.past_len[b] = pb;
    len.valid[b] = lb;
  }
  return len;
}

// Present K / V [B, G, present_rows, H]: the past rows, then the new rows at past_len[b], zeros
// elsewhere.
void BuildPresent(const GqaPlan& p, RunContext& rc, const GqaLengths& len, char* pk, char* pv) {
  const int64_t es = p.element_size, H = p.head_size, G = p.kv_heads, S = p.seq;
  const char* q_src = static_cast<const char*>(rc.input(kQuery).raw_data());
  const char* k_src = p.packed ? q_src + p.heads * H * es
                               : static_cast<const char*>(rc.input(kKey).raw_data());
  const char* v_src = p.packed ? q_src + (p.heads + G) * H * es
                               : static_cast<const char*>(rc.input(kValue).raw_data());
  const int64_t kv_row = p.packed ? p.query_row : G * H;
  const size_t head_bytes = static_cast<size_t>(p.present_rows * H * es);
  for (int64_t bg = 0; bg < p.batch * G; ++bg) {
    char* kd = pk + bg * head_bytes;
    char* vd = pv + bg * head_bytes;
    std::memset(kd, 0, head_bytes);
    std::memset(vd, 0, head_bytes);
    if (p.past > 0) {
      const size_t past_bytes = static_cast<size_t>(p.past * H * es);
      std::memcpy(kd, static_cast<const char*>(rc.input(kPastKey).raw_data()) + bg * past_bytes,
                  past_bytes);
      std::memcpy(vd, static_cast<const char*>(rc.input(kPastValue).raw_data()) + bg * past_bytes,
                  past_bytes);
    }
    const int64_t b = bg / G, g = bg % G;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t src = ((b * S + s) * kv_row + g * H) * es;
      std::memcpy(kd + (len.past_len[b] + s) * H * es, k_src + src, static_cast<size_t>(H * es));
      std::memcpy(vd + (len.past_len[b] + s) * H * es, v_src + src, static_cast<size_t>(H * es));
    }
  }
}

// Rotates Q [B, S, N, H] and the new rows of the present K in place, each token at its position.
void RotateQueryAndKey(const GqaPlan& p, RunContext& rc, const GqaLengths& len, char* q, char* pk) {
  const int64_t es = p.element_size, H = p.head_size, S = p.seq, N = p.heads, G = p.kv_heads;
  const int64_t L = p.present_rows;
  std::vector<int64_t> pos(static_cast<size_t>(S));
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t s = 0; s < S; ++s) pos[s] = len.past_len[b] + s;
    const int64_t q_stride[3] = {S * N * H, N * H, H};
    const int64_t k_stride[3] = {G * L * H, H, L * H};
    char* qb = q + b * S * N * H * es;
    int64_t bad = kernels::RotaryEmbedding(p.storage, qb, qb, rc.input(kCos).raw_data(),
                                           rc.input(kSin).raw_data(), pos.data(), p.cos_rows, 1, S,
                                           N, H, p.rotary_dim, p.interleaved, q_stride,
                                           rc.parallel());
    if (bad < 0) {
      char* k_new = pk + (b * G * L + len.past_len[b]) * H * es;
      bad = kernels::RotaryEmbedding(p.storage, k_new, k_new, rc.input(kCos).raw_data(),
                                     rc.input(kSin).raw_data(), pos.data(), p.cos_rows, 1, S, G, H,
                                     p.rotary_dim, p.interleaved, k_stride, rc.parallel());
    }
    if (bad >= 0) {
      rc.Fail("rotary position " + IntStr(pos[bad]) + " of batch " + IntStr(b) +
              " is outside cos_cache [0, " + IntStr(p.cos_rows) + ")");
    }
  }
}

// Which keys each query attends (1) as a bool mask [B, S, present_rows]: causal, within the
// valid rows and, with local_window_size W > 0, the last W positions.
std::vector<uint8_t> CausalWindowMask(const GqaPlan& p, const GqaLengths& len) {
  const int64_t S = p.seq, L = p.present_rows;
  std::vector<uint8_t> mask(static_cast<size_t>(p.batch * S * L), 0);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t s = 0; s < S; ++s) {
      const int64_t pos = len.past_len[b] + s;
      const int64_t lo = p.window > 0 ? std::max<int64_t>(0, pos - p.window + 1) : 0;
      const int64_t hi = std::min(pos, len.valid[b] - 1);
      for (int64_t j = lo; j <= hi; ++j) mask[static_cast<size_t>((b * S + s) * L + j)] = 1;
    }
  }
  return mask;
}

void RunGqa(const GqaPlan& p, RunContext& rc) {
  const int64_t B = p.batch, S = p.seq, N = p.heads, G = p.kv_heads, H = p.head_size;
  const int64_t L = p.present_rows, es = p.element_size;
  const GqaLengths len = ReadLengths(p, rc);
  Tensor k_scratch, v_scratch;
  char* pk;
  char* pv;
  if (p.out_present_key) {
    pk = static_cast<char*>(rc.output(1).raw_data());
  } else {
    k_scratch = rc.Scratch(p.dtype, {B, G, L, H});
    pk = static_cast<char*>(k_scratch.raw_data());
  }
  if (p.out_present_value) {
    pv = static_cast<char*>(rc.output(2).raw_data());
  } else {
    v_scratch = rc.Scratch(p.dtype, {B, G, L, H});
    pv = static_cast<char*>(v_scratch.raw_data());
  }
  BuildPresent(p, rc, len, pk, pv);
  // Q as [B, S, N, H] (rotated in place when do_rotary).
  Tensor q = rc.Scratch(p.dtype, {B, S, N, H});
  char* q_ptr = static_cast<char*>(q.raw_data());
  const char* q_src = static_cast<const char*>(rc.input(kQuery).raw_data());
  for (int64_t bs = 0; bs < B * S; ++bs) {
    std::memcpy(q_ptr + bs * N * H * es, q_src + bs * p.query_row * es,
                static_cast<size_t>(N * H * es));
  }
  if (p.rotary) RotateQueryAndKey(p, rc, len, q_ptr, pk);
  const std::vector<uint8_t> mask = CausalWindowMask(p, len);
  kernels::AttentionArgs a;
  a.type = p.storage;
  a.batch = B;
  a.q_heads = N;
  a.kv_heads = G;
  a.q_len = S;
  a.kv_len = L;
  a.head_size = H;
  a.v_head_size = H;
  a.q = q_ptr;
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
  a.scale = p.scale;
  a.softcap = p.softcap;
  a.mask_type = kernels::AttentionMaskType::kBool;
  a.mask = mask.data();
  a.mask_stride[0] = S * L;
  a.mask_stride[1] = 0;
  a.mask_stride[2] = L;
  a.mask_len = L;
  kernels::AttentionForward(a, rc.parallel());
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
    auto plan = std::make_shared<GqaPlan>(ResolvePlan(ctx));
    const GqaPlan& p = *plan;
    ctx.set_output(0, p.dtype, {p.batch, p.seq, p.heads * p.head_size});
    if (p.out_present_key) ctx.set_output(1, p.dtype, {p.batch, p.kv_heads, p.present_rows, p.head_size});
    if (p.out_present_value) ctx.set_output(2, p.dtype, {p.batch, p.kv_heads, p.present_rows, p.head_size});
    return [plan](RunContext& rc) { RunGqa(*plan, rc); };
  }

 private:
  // Checks the inputs against each other and the attributes; everything Run needs but data.
  GqaPlan ResolvePlan(const PrepareContext& ctx) const {
    GqaPlan p;
    const Dims& qd = ctx.input_dims(kQuery);
    if (qd.size() != 3)
      ctx.Fail("query must be [batch, sequence, hidden], got " + DimsToString(qd));
    const int64_t B = qd[0], S = qd[1], N = num_heads_, G = kv_num_heads_;
    p.batch = B;
    p.seq = S;
    p.heads = N;
    p.kv_heads = G;
    p.query_row = qd[2];
    p.packed = !ctx.has_input(kKey);
    if (p.packed != !ctx.has_input(kValue)) ctx.Fail("key and value must be given together");
    int64_t H;
    if (p.packed) {
      if (qd[2] % (N + 2 * G) != 0) {
        ctx.Fail("packed QKV width " + IntStr(qd[2]) +
                 " is not a multiple of num_heads + 2 * kv_num_heads = " + IntStr(N + 2 * G));
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
    p.head_size = H;
    const bool has_past = ctx.has_input(kPastKey);
    if (has_past != ctx.has_input(kPastValue))
      ctx.Fail("past_key and past_value must be given together");
    if (has_past) {
      p.past = ctx.input_dims(kPastKey).size() == 4 ? ctx.input_dims(kPastKey)[2] : -1;
      for (int i : {kPastKey, kPastValue}) {
        if (ctx.input_dims(i) != Dims{B, G, p.past, H}) {
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
    p.total = total_t->data<int32_t>()[0];
    if (p.total < S) {
      ctx.Fail("total_sequence_length " + IntStr(p.total) + " is below the sequence length " +
               IntStr(S));
    }
    p.present_rows = std::max(p.past, p.total);
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
      p.rotary_dim = 2 * cd[1];
      p.cos_rows = cd[0];
    }
    p.dtype = ctx.input_dtype(kQuery);
    p.storage = StorageOf(p.dtype);
    p.element_size = p.dtype == DType::kFloat32 ? 4 : 2;
    p.out_present_key = ctx.num_outputs() > 1 && ctx.has_output(1);
    p.out_present_value = ctx.num_outputs() > 2 && ctx.has_output(2);
    p.first_prompt = S == p.total;
    p.scale = scale_ != 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(double(H)));
    p.softcap = softcap_;
    p.window = window_;
    p.rotary = do_rotary_;
    p.interleaved = interleaved_;
    return p;
  }

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
