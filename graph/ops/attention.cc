// Transformer ops: Attention (23, 24), RotaryEmbedding (23) and RMSNormalization (23).
//
// All three compute in float32 on float32 / float16 / bfloat16 storage (kernels/nn/attention.h).
// Attention reads Q/K/V in either layout ([B,H,S,D], or [B,S,H*D] with q_num_heads /
// kv_num_heads) through strides, without transposing; K and V are only copied when the KV cache
// must be built (past_key/past_value given, or present_key/present_value requested). The
// numerics follow the ONNX reference: scores = scale * Q K^T, then softcap, then the additive
// bias (attn_mask, is_causal, nonpad_kv_seqlen), then softmax, then P V. A float mask whose
// last dim is shorter than the total key count is padded with -inf (bool: false), as ONNX does.
// qk_matmul_output_mode, as the ONNX 1.22 reference and its conformance data define it:
// 0 = scale * Q K^T, 1 = after the softcap, 2 = after the softcap and the bias, 3 = softmax.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/memory/copy.h"
#include "kernels/nn/attention.h"

namespace simplecpp::graph {
namespace {

kernels::FloatStorage StorageOf(DType dt) {
  if (dt == DType::kFloat16) return kernels::FloatStorage::kF16;
  if (dt == DType::kBFloat16) return kernels::FloatStorage::kBF16;
  return kernels::FloatStorage::kF32;
}

std::string IntStr(int64_t v) { return std::to_string(v); }

// ---------------------------------------------------------------------------------------------
// Attention (23; 24 adds the nonpad_kv_seqlen input)
//
// Inputs: Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen? (24).
// Outputs: Y, present_key?, present_value?, qk_matmul_output?.

// The sizes of one Attention node's operands (3-D inputs split into heads by the attributes).
struct AttentionShape {
  size_t rank = 4;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_size = 0,
          v_head_size = 0;
  int64_t past = 0, total = 0;  // past_key's sequence length; past + kv_len
  // Element strides of [batch, head, position] in a rank-4 [B, heads, seq, hs] or rank-3
  // [B, seq, heads * hs] tensor.
  void SetStrides(int64_t* s, int64_t heads, int64_t seq, int64_t hs) const {
    if (rank == 4) {
      s[0] = heads * seq * hs;
      s[1] = seq * hs;
      s[2] = hs;
    } else {
      s[0] = seq * heads * hs;
      s[1] = hs;
      s[2] = heads * hs;
    }
  }
};

// What Prepare decides once; RunAttention reads it on every run.
struct AttentionPlan {
  AttentionShape shape;
  kernels::AttentionArgs args;  // without the data pointers
  DType dtype = DType::kFloat32;
  bool has_past = false, has_mask = false, has_nonpad = false;
  bool out_present_key = false, out_present_value = false, out_qk = false;
  bool build_k = false, build_v = false;  // K / V copied into a [B, kv_heads, total, hs] cache
  int64_t new_k_stride[3] = {0, 0, 0}, new_v_stride[3] = {0, 0, 0};  // of the K / V inputs
};

// Copies past (if any) and the new K or V (strides `src`) into the cache [B, kv_heads, total, hs].
void FillKvCache(const AttentionPlan& plan, const Tensor* past_t, const Tensor& cur,
                 const int64_t* src, int64_t hs, char* dst, const kernels::Parallel& par) {
  const AttentionShape& sh = plan.shape;
  const size_t es = DTypeSize(plan.dtype);
  const int64_t B = sh.batch, hkv = sh.kv_heads, past = sh.past, total = sh.total, skv = sh.kv_len;
  if (past_t && past > 0) {
    kernels::CopyRowsBytes(past_t->raw_data(), past * hs, dst, total * hs, B * hkv, past * hs, es,
                           par);
  }
  if (skv == 0 || hs == 0) return;
  if (sh.rank == 4) {
    kernels::CopyRowsBytes(cur.raw_data(), skv * hs, dst + past * hs * es, total * hs, B * hkv,
                           skv * hs, es, par);
    return;
  }
  const char* base = static_cast<const char*>(cur.raw_data());
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < hkv; ++g) {
      kernels::CopyRowsBytes(base + (b * src[0] + g * src[1]) * es, src[2],
                             dst + ((b * hkv + g) * total + past) * hs * es, hs, skv, hs, es,
                             kernels::SerialParallel());
    }
  }
}

// K (or V) as the kernel reads it: the input in place, or the cache built into the present
// output or into *scratch (which the caller keeps until the kernel has run).
const void* KvOperand(const AttentionPlan& plan, RunContext& rc, bool value, Tensor* scratch) {
  const AttentionShape& sh = plan.shape;
  const int input = value ? 2 : 1;
  if (!(value ? plan.build_v : plan.build_k)) return rc.input(input).raw_data();
  const int64_t hs = value ? sh.v_head_size : sh.head_size;
  char* dst;
  if (value ? plan.out_present_value : plan.out_present_key) {
    dst = static_cast<char*>(rc.output(input).raw_data());
  } else {
    *scratch = rc.Scratch(plan.dtype, {sh.batch, sh.kv_heads, sh.total, hs});
    dst = static_cast<char*>(scratch->raw_data());
  }
  const Tensor* past = plan.has_past ? &rc.input(value ? 5 : 4) : nullptr;
  FillKvCache(plan, past, rc.input(input), value ? plan.new_v_stride : plan.new_k_stride, hs, dst,
              rc.parallel());
  return dst;
}

void RunAttention(const AttentionPlan& plan, RunContext& rc) {
  kernels::AttentionArgs args = plan.args;
  args.q = rc.input(0).raw_data();
  args.y = rc.output(0).raw_data();
  Tensor k_scratch, v_scratch;
  args.k = KvOperand(plan, rc, false, &k_scratch);
  args.v = KvOperand(plan, rc, true, &v_scratch);
  if (plan.has_mask) args.mask = rc.input(3).raw_data();
  if (plan.has_nonpad) args.nonpad_kv_seqlen = rc.input(6).data<int64_t>();
  if (plan.out_qk) args.qk_out = rc.output(3).raw_data();
  kernels::AttentionForward(args, rc.parallel());
}

class AttentionOp final : public Op {
 public:
  explicit AttentionOp(const OpInit& init) {
    const int max_inputs = init.opset() >= 24 ? 7 : 6;
    if (init.num_inputs() < 3 || init.num_inputs() > max_inputs) {
      init.Fail("expects 3 to " + IntStr(max_inputs) + " inputs, got " + IntStr(init.num_inputs()));
    }
    if (init.num_outputs() < 1 || init.num_outputs() > 4) {
      init.Fail("expects 1 to 4 outputs, got " + IntStr(init.num_outputs()));
    }
    const int64_t causal = init.GetInt("is_causal", 0);
    if (causal != 0 && causal != 1) init.Fail("is_causal must be 0 or 1, got " + IntStr(causal));
    causal_ = causal == 1;
    q_num_heads_ = init.GetInt("q_num_heads", 0);
    kv_num_heads_ = init.GetInt("kv_num_heads", 0);
    if (q_num_heads_ < 0 || kv_num_heads_ < 0) init.Fail("q_num_heads / kv_num_heads must be >= 0");
    qk_mode_ = init.GetInt("qk_matmul_output_mode", 0);
    if (qk_mode_ < 0 || qk_mode_ > 3) {
      init.Fail("qk_matmul_output_mode must be 0, 1, 2 or 3, got " + IntStr(qk_mode_));
    }
    has_scale_ = init.Has("scale");
    scale_ = init.GetFloat("scale", 1.0f);
    if (has_scale_ && !std::isfinite(scale_)) init.Fail("scale must be finite");
    softcap_ = init.GetFloat("softcap", 0.0f);
    if (!std::isfinite(softcap_)) init.Fail("softcap must be finite");
    if (init.Has("softmax_precision")) {
      // The softmax always runs in float32 (with a double sum), at least as precise as any
      // allowed precision for float32/float16/bfloat16 inputs.
      const int64_t p = init.GetInt("softmax_precision", 1);
      if (p != static_cast<int64_t>(DType::kFloat32) && p != static_cast<int64_t>(DType::kFloat16) &&
          p != static_cast<int64_t>(DType::kBFloat16) && p != static_cast<int64_t>(DType::kFloat64)) {
        init.Fail("softmax_precision must be a float type (1, 10, 11 or 16), got " + IntStr(p));
      }
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    const DType dt = ctx.input_dtype(0);
    if (ctx.has_input(3)) {
      const DType mt = ctx.input_dtype(3);
      if (mt != DType::kBool && mt != dt) {
        ctx.Unsupported("attn_mask must be bool or " + DTypeName(dt) + ", got " + DTypeName(mt));
      }
    }
    if (ctx.has_input(4) != ctx.has_input(5)) {
      ctx.Fail("past_key and past_value must be given together");
    }
    if (ctx.has_input(4)) {
      ctx.RequireSameDType(0, 4);
      ctx.RequireSameDType(0, 5);
    }
    if (ctx.has_input(6)) ctx.RequireDType(6, {DType::kInt64});
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, dt);
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    auto plan = std::make_shared<AttentionPlan>();
    plan->shape = ResolveShape(ctx);
    const AttentionShape& sh = plan->shape;
    kernels::AttentionArgs& a = plan->args;
    ResolveMask(ctx, sh, &a);
    plan->has_past = ctx.has_input(4);
    plan->has_mask = ctx.has_input(3);
    plan->has_nonpad = ctx.has_input(6);
    if (plan->has_nonpad) {
      const Dims& nd = ctx.input_dims(6);
      if (nd.size() != 1 || nd[0] != sh.batch) ctx.Fail("nonpad_kv_seqlen must be [batch_size]");
    }
    // Outputs.
    plan->dtype = ctx.input_dtype(0);
    const DType dt = plan->dtype;
    if (sh.rank == 4) {
      ctx.set_output(0, dt, {sh.batch, sh.q_heads, sh.q_len, sh.v_head_size});
    } else {
      ctx.set_output(0, dt, {sh.batch, sh.q_len, sh.q_heads * sh.v_head_size});
    }
    plan->out_present_key = ctx.has_output(1);
    plan->out_present_value = ctx.has_output(2);
    plan->out_qk = ctx.has_output(3);
    if (plan->out_present_key) ctx.set_output(1, dt, {sh.batch, sh.kv_heads, sh.total, sh.head_size});
    if (plan->out_present_value) ctx.set_output(2, dt, {sh.batch, sh.kv_heads, sh.total, sh.v_head_size});
    if (plan->out_qk) ctx.set_output(3, dt, {sh.batch, sh.q_heads, sh.q_len, sh.total});

    a.type = StorageOf(dt);
    a.batch = sh.batch;
    a.q_heads = sh.q_heads;
    a.kv_heads = sh.kv_heads;
    a.q_len = sh.q_len;
    a.kv_len = sh.total;
    a.head_size = sh.head_size;
    a.v_head_size = sh.v_head_size;
    sh.SetStrides(a.q_stride, sh.q_heads, sh.q_len, sh.head_size);
    sh.SetStrides(a.y_stride, sh.q_heads, sh.q_len, sh.v_head_size);
    // K / V: read in place, unless the cache [B, kv_heads, total, hs] is built.
    plan->build_k = plan->has_past || plan->out_present_key;
    plan->build_v = plan->has_past || plan->out_present_value;
    sh.SetStrides(plan->new_k_stride, sh.kv_heads, sh.kv_len, sh.head_size);
    sh.SetStrides(plan->new_v_stride, sh.kv_heads, sh.kv_len, sh.v_head_size);
    const int64_t cache_k_stride[3] = {sh.kv_heads * sh.total * sh.head_size, sh.total * sh.head_size,
                                       sh.head_size};
    const int64_t cache_v_stride[3] = {sh.kv_heads * sh.total * sh.v_head_size,
                                       sh.total * sh.v_head_size, sh.v_head_size};
    for (int i = 0; i < 3; ++i) {
      a.k_stride[i] = plan->build_k ? cache_k_stride[i] : plan->new_k_stride[i];
      a.v_stride[i] = plan->build_v ? cache_v_stride[i] : plan->new_v_stride[i];
    }
    const int64_t d = sh.head_size;
    a.scale = has_scale_ ? scale_ : (d > 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))) : 1.0f);
    a.softcap = softcap_ > 0.0f ? softcap_ : 0.0f;
    a.causal = causal_;
    a.causal_offset = sh.past;
    a.causal_offset_from_nonpad = causal_ && !plan->has_past && plan->has_nonpad;
    a.qk_stage = qk_mode_ == 0   ? kernels::AttentionQkStage::kScaled
                 : qk_mode_ == 1 ? kernels::AttentionQkStage::kSoftcapped
                 : qk_mode_ == 2 ? kernels::AttentionQkStage::kBiased
                                 : kernels::AttentionQkStage::kSoftmax;
    return [plan](RunContext& rc) { RunAttention(*plan, rc); };
  }

  // Q, K, V and the past cache's sizes, checked against each other.
  AttentionShape ResolveShape(const PrepareContext& ctx) const {
    const Dims& qd = ctx.input_dims(0);
    const Dims& kd = ctx.input_dims(1);
    const Dims& vd = ctx.input_dims(2);
    AttentionShape sh;
    sh.rank = qd.size();
    if (sh.rank != 3 && sh.rank != 4) ctx.Fail("Q must have rank 3 or 4");
    if (kd.size() != sh.rank || vd.size() != sh.rank) ctx.Fail("Q, K and V must have the same rank");
    sh.batch = qd[0];
    if (kd[0] != sh.batch || vd[0] != sh.batch) ctx.Fail("Q, K and V must have the same batch size");
    if (sh.rank == 4) {
      sh.q_heads = qd[1];
      sh.q_len = qd[2];
      sh.head_size = qd[3];
      sh.kv_heads = kd[1];
      sh.kv_len = kd[2];
      if (kd[3] != sh.head_size) {
        ctx.Fail("K head size " + IntStr(kd[3]) + " differs from Q's " + IntStr(sh.head_size));
      }
      if (vd[1] != sh.kv_heads || vd[2] != sh.kv_len) {
        ctx.Fail("V must be [B, kv_heads, kv_seq, v_head_size] like K");
      }
      sh.v_head_size = vd[3];
    } else {
      if (q_num_heads_ <= 0 || kv_num_heads_ <= 0) {
        ctx.Fail("3-D inputs need the q_num_heads and kv_num_heads attributes");
      }
      sh.q_heads = q_num_heads_;
      sh.kv_heads = kv_num_heads_;
      sh.q_len = qd[1];
      sh.kv_len = kd[1];
      if (vd[1] != sh.kv_len) ctx.Fail("K and V must have the same sequence length");
      if (qd[2] % sh.q_heads != 0) ctx.Fail("Q hidden size is not a multiple of q_num_heads");
      if (kd[2] % sh.kv_heads != 0 || vd[2] % sh.kv_heads != 0) {
        ctx.Fail("K / V hidden sizes are not multiples of kv_num_heads");
      }
      sh.head_size = qd[2] / sh.q_heads;
      if (kd[2] / sh.kv_heads != sh.head_size) ctx.Fail("K head size differs from Q head size");
      sh.v_head_size = vd[2] / sh.kv_heads;
    }
    if (sh.kv_heads <= 0 || sh.q_heads <= 0 || sh.q_heads % sh.kv_heads != 0) {
      ctx.Fail("q_num_heads (" + IntStr(sh.q_heads) + ") must be a positive multiple of kv_num_heads (" +
               IntStr(sh.kv_heads) + ")");
    }
    if (ctx.has_input(4)) {
      const Dims& pk = ctx.input_dims(4);
      const Dims& pv = ctx.input_dims(5);
      if (pk.size() != 4 || pk[0] != sh.batch || pk[1] != sh.kv_heads || pk[3] != sh.head_size) {
        ctx.Fail("past_key must be [B, kv_num_heads, past_seq, head_size]");
      }
      sh.past = pk[2];
      if (pv.size() != 4 || pv[0] != sh.batch || pv[1] != sh.kv_heads || pv[2] != sh.past ||
          pv[3] != sh.v_head_size) {
        ctx.Fail("past_value must be [B, kv_num_heads, past_seq, v_head_size]");
      }
    }
    sh.total = sh.past + sh.kv_len;
    return sh;
  }

  // The mask, right-aligned against [B, q_heads, q_seq, total] (its last dim may be shorter):
  // its type, length and broadcast strides in *a.
  static void ResolveMask(const PrepareContext& ctx, const AttentionShape& sh,
                          kernels::AttentionArgs* a) {
    a->mask_type = kernels::AttentionMaskType::kNone;
    if (!ctx.has_input(3)) return;
    const Dims& md = ctx.input_dims(3);
    if (md.empty() || md.size() > 4) ctx.Fail("attn_mask must have rank 1 to 4");
    int64_t full[4] = {1, 1, 1, 1};
    for (size_t i = 0; i < md.size(); ++i) full[4 - md.size() + i] = md[i];
    const int64_t want[3] = {sh.batch, sh.q_heads, sh.q_len};
    for (int i = 0; i < 3; ++i) {
      if (full[i] != 1 && full[i] != want[i]) {
        ctx.Fail("attn_mask " + DimsToString(md) + " does not broadcast to [" + IntStr(sh.batch) +
                 "," + IntStr(sh.q_heads) + "," + IntStr(sh.q_len) + "," + IntStr(sh.total) + "]");
      }
    }
    if (full[3] > sh.total) {
      ctx.Fail("attn_mask last dim " + IntStr(full[3]) + " exceeds the total sequence length " +
               IntStr(sh.total));
    }
    a->mask_type = ctx.input_dtype(3) == DType::kBool ? kernels::AttentionMaskType::kBool
                                                      : kernels::AttentionMaskType::kFloat;
    a->mask_len = full[3];
    const int64_t s2 = full[3], s1 = full[2] * s2, s0 = full[1] * s1;
    a->mask_stride[0] = full[0] == 1 ? 0 : s0;
    a->mask_stride[1] = full[1] == 1 ? 0 : s1;
    a->mask_stride[2] = full[2] == 1 ? 0 : s2;
  }

 private:
  bool causal_ = false;
  int64_t q_num_heads_ = 0, kv_num_heads_ = 0;
  int64_t qk_mode_ = 0;
  bool has_scale_ = false;
  float scale_ = 1.0f;
  float softcap_ = 0.0f;
};

// ---------------------------------------------------------------------------------------------
// RotaryEmbedding (23)
//
// X is [B, num_heads, S, head_size] or [B, S, hidden] (with the num_heads attribute). With
// position_ids [B, S], cos_cache / sin_cache are [max_positions, rotary_dim/2] and are indexed
// by the ids; without, they are [B, S, rotary_dim/2].

class RotaryEmbeddingOp final : public Op {
 public:
  explicit RotaryEmbeddingOp(const OpInit& init) {
    if (init.num_inputs() < 3 || init.num_inputs() > 4) {
      init.Fail("expects 3 or 4 inputs, got " + IntStr(init.num_inputs()));
    }
    const int64_t il = init.GetInt("interleaved", 0);
    if (il != 0 && il != 1) init.Fail("interleaved must be 0 or 1, got " + IntStr(il));
    interleaved_ = il == 1;
    num_heads_ = init.GetInt("num_heads", 0);
    rotary_dim_ = init.GetInt("rotary_embedding_dim", 0);
    if (num_heads_ < 0) init.Fail("num_heads must be >= 0");
    if (rotary_dim_ < 0) init.Fail("rotary_embedding_dim must be >= 0");
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    if (ctx.has_input(3)) ctx.RequireDType(3, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    int64_t B, S, H, D;
    int64_t stride[3];
    if (xd.size() == 4) {
      B = xd[0];
      H = xd[1];
      S = xd[2];
      D = xd[3];
      stride[0] = H * S * D;
      stride[1] = D;
      stride[2] = S * D;
    } else if (xd.size() == 3) {
      if (num_heads_ <= 0) ctx.Fail("a 3-D input needs the num_heads attribute");
      B = xd[0];
      S = xd[1];
      H = num_heads_;
      if (xd[2] % H != 0) ctx.Fail("hidden size is not a multiple of num_heads");
      D = xd[2] / H;
      stride[0] = S * H * D;
      stride[1] = H * D;
      stride[2] = D;
    } else {
      ctx.Fail("input must have rank 3 or 4");
    }
    const int64_t rd = rotary_dim_ > 0 ? rotary_dim_ : D;
    if (rd > D) ctx.Fail("rotary_embedding_dim " + IntStr(rd) + " exceeds the head size " + IntStr(D));
    if (rd % 2 != 0) ctx.Fail("the rotary dimension " + IntStr(rd) + " must be even");
    const int64_t half = rd / 2;
    const Dims& cd = ctx.input_dims(1);
    if (ctx.input_dims(2) != cd) ctx.Fail("cos_cache and sin_cache must have the same shape");
    const bool has_pos = ctx.has_input(3);
    int64_t cache_rows = 0;
    if (has_pos) {
      if (ctx.input_dims(3) != Dims{B, S}) ctx.Fail("position_ids must be [batch, sequence]");
      if (cd.size() != 2 || cd[1] != half) {
        ctx.Fail("with position_ids, cos_cache must be [max_position, " + IntStr(half) + "]");
      }
      cache_rows = cd[0];
    } else {
      if (cd != Dims{B, S, half}) {
        ctx.Fail("without position_ids, cos_cache must be [" + IntStr(B) + ", " + IntStr(S) + ", " +
                 IntStr(half) + "]");
      }
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const kernels::FloatStorage st = StorageOf(dt);
    const bool il = interleaved_;
    const int64_t s0 = stride[0], s1 = stride[1], s2 = stride[2];
    return [=](RunContext& rc) {
      const int64_t strides[3] = {s0, s1, s2};
      const int64_t* pos = has_pos ? rc.input(3).data<int64_t>() : nullptr;
      const int64_t bad = kernels::RotaryEmbedding(
          st, rc.input(0).raw_data(), rc.output(0).raw_data(), rc.input(1).raw_data(),
          rc.input(2).raw_data(), pos, cache_rows, B, S, H, D, rd, il, strides, rc.parallel());
      if (bad >= 0) {
        rc.Fail("position_ids[" + IntStr(bad) + "] = " + IntStr(pos[bad]) +
                " is outside the cache [0, " + IntStr(cache_rows) + ")");
      }
    };
  }

 private:
  bool interleaved_ = false;
  int64_t num_heads_ = 0;
  int64_t rotary_dim_ = 0;
};

// ---------------------------------------------------------------------------------------------
// RMSNormalization (23): Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * Scale.
// X has type T, Scale and Y type V (each float32, float16 or bfloat16).

// Scale (dims sd, right-aligned against nd, each dim equal or 1) as float32 broadcast to nd.
std::vector<float> ExpandScale(const Tensor& t, const Dims& nd) {
  const Dims& sd = t.dims();
  const size_t r = nd.size();
  std::vector<int64_t> stride(r, 0);
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(r) - 1, j = static_cast<int64_t>(sd.size()) - 1; i >= 0;
       --i, --j) {
    const int64_t dim = j >= 0 ? sd[static_cast<size_t>(j)] : 1;
    stride[static_cast<size_t>(i)] = dim == 1 ? 0 : s;
    s *= dim;
  }
  int64_t total = 1;
  for (int64_t v : nd) total *= v;
  std::vector<float> out(static_cast<size_t>(total));
  std::vector<int64_t> coord(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    out[static_cast<size_t>(i)] = static_cast<float>(TensorElementAsDouble(t, off));
    for (int64_t ax = static_cast<int64_t>(r) - 1; ax >= 0; --ax) {
      const size_t a = static_cast<size_t>(ax);
      off += stride[a];
      if (++coord[a] < nd[a]) break;
      off -= stride[a] * nd[a];
      coord[a] = 0;
    }
  }
  return out;
}

class RmsNormalizationOp final : public Op {
 public:
  explicit RmsNormalizationOp(const OpInit& init) {
    if (init.num_inputs() != 2) init.Fail("expects 2 inputs (X, scale), got " + IntStr(init.num_inputs()));
    axis_ = init.GetInt("axis", -1);
    epsilon_ = init.GetFloat("epsilon", 1e-5f);
    if (!(epsilon_ >= 0.0f)) init.Fail("epsilon must be >= 0");
    const int64_t stash = init.GetInt("stash_type", 1);
    if (stash != 1) init.Unsupported("stash_type " + IntStr(stash) + " (only 1, float32)");
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireDType(1, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, ctx.input_dtype(1));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    if (r == 0) ctx.Fail("X must have rank >= 1");
    const size_t a =
        static_cast<size_t>(NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); }));
    int64_t rows = 1, n = 1;
    for (size_t i = 0; i < a; ++i) rows *= xd[i];
    for (size_t i = a; i < xd.size(); ++i) n *= xd[i];
    const Dims nd(xd.begin() + static_cast<std::ptrdiff_t>(a), xd.end());
    const Dims& sd = ctx.input_dims(1);
    bool ok = sd.size() <= nd.size();
    for (size_t k = 1; ok && k <= sd.size(); ++k) {
      const int64_t s = sd[sd.size() - k];
      ok = s == 1 || s == nd[nd.size() - k];
    }
    if (!ok) {
      ctx.Fail("scale " + DimsToString(sd) + " does not broadcast to the normalized shape " +
               DimsToString(nd) + " (axis " + IntStr(static_cast<int64_t>(a)) + ")");
    }
    const DType xt = ctx.input_dtype(0), yt = ctx.input_dtype(1);
    ctx.set_output(0, yt, xd);
    std::shared_ptr<const std::vector<float>> fixed;
    if (const Tensor* c = ctx.input_value(1)) {
      fixed = std::make_shared<const std::vector<float>>(ExpandScale(*c, nd));
    }
    const kernels::FloatStorage xs = StorageOf(xt), ys = StorageOf(yt);
    const float eps = epsilon_;
    return [=](RunContext& rc) {
      std::vector<float> tmp;
      const float* scale;
      if (fixed) {
        scale = fixed->data();
      } else {
        tmp = ExpandScale(rc.input(1), nd);
        scale = tmp.data();
      }
      kernels::RmsNormalizeRows(xs, rc.input(0).raw_data(), ys, rc.output(0).raw_data(), rows, n,
                                scale, eps, rc.parallel());
    };
  }

 private:
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
};

}  // namespace

void RegisterAttentionOps(OpRegistry& registry) {
  registry.Register("", "Attention", 23, MakeFactory<AttentionOp>());
  registry.Register("", "Attention", 24, MakeFactory<AttentionOp>());
  registry.Register("", "RotaryEmbedding", 23, MakeFactory<RotaryEmbeddingOp>());
  registry.Register("", "RMSNormalization", 23, MakeFactory<RmsNormalizationOp>());
}

}  // namespace simplecpp::graph
