// LinearAttention (ai.onnx 27): recurrent linear attention with a per-KV-head state matrix, for
// decoding (T = 1) and prefill (T > 1) of linear / gated / delta-rule models.
//
// Inputs (packed heads): query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv],
// past_state? [B, Hkv, dk, dv] (zeros when absent), decay? [B, T, Hkv*dk] or [B, T, Hkv]
// (log-space gate), beta? [B, T, Hkv] or [B, T, 1].
// Outputs: output [B, T, Hq*dv], present_state? [B, Hkv, dk, dv].
// For each step t, with S the state of one (batch, kv head):
//   gated rules:  S = exp(g_t) * S                      (g_t per key dim or per head)
//   delta rules:  v_t = beta_t * (v_t - S^T k_t)
//   all rules:    S = S + k_t v_t^T;   o_t = scale * q_t^T S   for each query head of the group
// update_rule: linear | gated | delta | gated_delta (default). scale = 1/sqrt(dk) when absent or 0.
// Query head h reads KV head h / (Hq / Hkv). Arithmetic in float32; 16-bit storage is widened
// once and narrowed once (the state stays float32 across the T steps).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

std::string IntStr(int64_t v) { return std::to_string(v); }

enum Input { kQuery = 0, kKey, kValue, kPastState, kDecay, kBeta };

// What LinearAttention's PrepareF32 decides; RunLinearAttention runs it.
struct LinearAttentionPlan {
  int64_t B = 0, T = 0;                // batch, sequence length
  int64_t hq = 0, hkv = 0, group = 0;  // query heads, KV heads, query heads per KV head
  int64_t dk = 0, dv = 0;              // key / value head sizes
  int64_t decay_per = 0;   // decay values per (b, t, kv head): dk or 1 (gated only)
  int64_t beta_heads = 0;  // beta values per (b, t): hkv or 1 (delta only)
  bool has_past = false, gated = false, delta = false, want_state = false;
  float scale = 1.0f;
};

// The inputs and outputs of one run, as float32 pointers (nullptr for an absent input).
struct LinearAttentionData {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const float* past = nullptr;
  const float* decay = nullptr;
  const float* beta = nullptr;
  float* y = nullptr;
};

// S = exp(g_t) * S, row i of S scaled by the decay of key dim i (or the head's one decay).
void DecayState(const LinearAttentionPlan& p, const float* g, float* S) {
  for (int64_t i = 0; i < p.dk; ++i) {
    const float f = std::exp(g[p.decay_per == 1 ? 0 : i]);
    float* row = S + i * p.dv;
    for (int64_t j = 0; j < p.dv; ++j) row[j] *= f;
  }
}

// vt = beta_t * (vin - S^T k_t): the delta rule's correction of the value.
void DeltaValue(const LinearAttentionPlan& p, const float* S, const float* kt, const float* vin,
                float bb, float* vt) {
  for (int64_t j = 0; j < p.dv; ++j) vt[j] = 0.0f;
  for (int64_t i = 0; i < p.dk; ++i) {
    const float* row = S + i * p.dv;
    const float ki = kt[i];
    for (int64_t j = 0; j < p.dv; ++j) vt[j] += row[j] * ki;
  }
  for (int64_t j = 0; j < p.dv; ++j) vt[j] = bb * (vin[j] - vt[j]);
}

// S = S + k_t vt^T.
void AddOuterProduct(const LinearAttentionPlan& p, const float* kt, const float* vt, float* S) {
  for (int64_t i = 0; i < p.dk; ++i) {
    float* row = S + i * p.dv;
    const float ki = kt[i];
    for (int64_t j = 0; j < p.dv; ++j) row[j] += ki * vt[j];
  }
}

// o_t = scale * q_t^T S for each query head of KV head h's group at step bt = b * T + t.
void ReadQueryHeads(const LinearAttentionPlan& p, const LinearAttentionData& d, int64_t bt,
                    int64_t h, const float* S) {
  for (int64_t g = 0; g < p.group; ++g) {
    const int64_t qh = h * p.group + g;
    const float* qt = d.q + (bt * p.hq + qh) * p.dk;
    float* yt = d.y + (bt * p.hq + qh) * p.dv;
    for (int64_t j = 0; j < p.dv; ++j) yt[j] = 0.0f;
    for (int64_t i = 0; i < p.dk; ++i) {
      const float* row = S + i * p.dv;
      const float qi = qt[i];
      for (int64_t j = 0; j < p.dv; ++j) yt[j] += qi * row[j];
    }
    for (int64_t j = 0; j < p.dv; ++j) yt[j] *= p.scale;
  }
}

// One (batch, kv head) task: starts its state S from past_state (or zeros) and runs the T steps,
// with vt (dv floats) the task's own value buffer.
void RunKvHead(const LinearAttentionPlan& p, const LinearAttentionData& d, int64_t task, float* S,
               float* vt) {
  const int64_t b = task / p.hkv, h = task % p.hkv;
  const int64_t dk = p.dk, dv = p.dv, hkv = p.hkv;
  if (d.past) {
    for (int64_t i = 0; i < dk * dv; ++i) S[i] = d.past[task * dk * dv + i];
  } else {
    for (int64_t i = 0; i < dk * dv; ++i) S[i] = 0.0f;
  }
  for (int64_t t = 0; t < p.T; ++t) {
    const int64_t bt = b * p.T + t;
    const float* kt = d.k + (bt * hkv + h) * dk;
    const float* vin = d.v + (bt * hkv + h) * dv;
    if (p.gated) DecayState(p, d.decay + (bt * hkv + h) * p.decay_per, S);
    if (p.delta) {
      const float bb = d.beta[bt * p.beta_heads + (p.beta_heads == 1 ? 0 : h)];
      DeltaValue(p, S, kt, vin, bb, vt);
    } else {
      for (int64_t j = 0; j < dv; ++j) vt[j] = vin[j];
    }
    AddOuterProduct(p, kt, vt, S);
    ReadQueryHeads(p, d, bt, h, S);
  }
}

// Runs every (batch, kv head) recurrence over the T steps, one parallel task each.
void RunLinearAttention(const LinearAttentionPlan& p, RunContext& rc) {
  LinearAttentionData d;
  d.q = rc.input(kQuery).data<float>();
  d.k = rc.input(kKey).data<float>();
  d.v = rc.input(kValue).data<float>();
  d.past = p.has_past ? rc.input(kPastState).data<float>() : nullptr;
  d.decay = p.gated ? rc.input(kDecay).data<float>() : nullptr;
  d.beta = p.delta ? rc.input(kBeta).data<float>() : nullptr;
  d.y = rc.output(0).data<float>();
  // The state of every (batch, kv head) lives in present_state or in scratch.
  Tensor state_scratch;
  float* state;
  if (p.want_state) {
    state = rc.output(1).data<float>();
  } else {
    state_scratch = rc.Scratch(DType::kFloat32, {p.B, p.hkv, p.dk, p.dv});
    state = state_scratch.data<float>();
  }
  // One task per (batch, kv head): its state and its query heads' outputs are disjoint.
  Tensor vtmp = rc.Scratch(DType::kFloat32, {p.B * p.hkv, p.dv});
  float* vbuf = vtmp.data<float>();
  rc.parallel().For(p.B * p.hkv, [&p, &d, state, vbuf](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      RunKvHead(p, d, task, state + task * p.dk * p.dv, vbuf + task * p.dv);
    }
  });
}

class LinearAttentionOp final : public Op {
 public:
  explicit LinearAttentionOp(const OpInit& init) {
    if (init.num_inputs() == 7 && init.has_input(6)) {
      init.Unsupported("the erase_gate input (input 6) is not supported");
    }
    if (init.num_inputs() < 3 || init.num_inputs() > 7) {
      init.Fail("expects 3 to 6 inputs (query, key, value, past_state?, decay?, beta?), got " +
                IntStr(init.num_inputs()));
    }
    if (init.num_outputs() < 1 || init.num_outputs() > 2) {
      init.Fail("expects 1 or 2 outputs (output, present_state?), got " + IntStr(init.num_outputs()));
    }
    if (!init.Has("q_num_heads") || !init.Has("kv_num_heads")) {
      init.Fail("the q_num_heads and kv_num_heads attributes are required");
    }
    q_heads_ = init.RequireInt("q_num_heads");
    kv_heads_ = init.RequireInt("kv_num_heads");
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0) {
      init.Fail("q_num_heads (" + IntStr(q_heads_) + ") must be a positive multiple of kv_num_heads (" +
                IntStr(kv_heads_) + ")");
    }
    const std::string rule = init.GetString("update_rule", "gated_delta");
    if (rule == "linear") {
      gated_ = false, delta_ = false;
    } else if (rule == "gated") {
      gated_ = true, delta_ = false;
    } else if (rule == "delta") {
      gated_ = false, delta_ = true;
    } else if (rule == "gated_delta") {
      gated_ = true, delta_ = true;
    } else {
      init.Fail("update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '" + rule + "'");
    }
    scale_ = init.GetFloat("scale", 0.0f);
    if (!std::isfinite(scale_)) init.Fail("scale must be finite");
    const int64_t chunk = init.GetInt("chunk_size", 64);  // a tuning hint; no effect on results
    if (chunk < 0) init.Fail("chunk_size must be >= 0, got " + IntStr(chunk));
    const bool has_decay = init.has_input(kDecay), has_beta = init.has_input(kBeta);
    if (gated_ != has_decay) {
      init.Fail("update_rule '" + rule + "' " + (gated_ ? "requires" : "forbids") + " the decay input");
    }
    if (delta_ != has_beta) {
      init.Fail("update_rule '" + rule + "' " + (delta_ ? "requires" : "forbids") + " the beta input");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(kQuery, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(kQuery, kKey);
    ctx.RequireSameDType(kQuery, kValue);
    const DType dt = ctx.input_dtype(kQuery);
    if (ctx.has_input(kPastState) && ctx.input_dtype(kPastState) != dt) {
      ctx.Unsupported("past_state of dtype " + DTypeName(ctx.input_dtype(kPastState)) +
                      " with activations of dtype " + DTypeName(dt) +
                      ": only a state of the activation dtype is supported");
    }
    if (ctx.has_input(kDecay)) ctx.RequireSameDType(kQuery, kDecay);
    if (ctx.has_input(kBeta)) ctx.RequireSameDType(kQuery, kBeta);
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, dt);
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(kQuery);
    if (Is16BitFloat(dt)) {
      return widen16::PrepareWidened16(ctx, dt, {0, 1, 2, 3, 4, 5},
                                       [this](PrepareContext& inner) { return PrepareF32(inner); });
    }
    return PrepareF32(ctx);
  }

 private:
  RunFn PrepareF32(PrepareContext& ctx) const {
    const Dims& qd = ctx.input_dims(kQuery);
    const Dims& kd = ctx.input_dims(kKey);
    const Dims& vd = ctx.input_dims(kValue);
    if (qd.size() != 3 || kd.size() != 3 || vd.size() != 3) {
      ctx.Fail("query, key and value must have rank 3 [batch, seq, heads * head_size]");
    }
    auto plan = std::make_shared<LinearAttentionPlan>();
    LinearAttentionPlan& p = *plan;
    const int64_t B = qd[0], T = qd[1];
    if (kd[0] != B || vd[0] != B || kd[1] != T || vd[1] != T) {
      ctx.Fail("query, key and value must agree on batch size and sequence length");
    }
    const int64_t hq = q_heads_, hkv = kv_heads_;
    if (qd[2] % hq != 0) ctx.Fail("query last dim " + IntStr(qd[2]) + " is not a multiple of q_num_heads " + IntStr(hq));
    const int64_t dk = qd[2] / hq;
    if (kd[2] != hkv * dk) {
      ctx.Fail("key last dim must be kv_num_heads * head_size = " + IntStr(hkv * dk) + ", got " + IntStr(kd[2]));
    }
    if (vd[2] % hkv != 0) ctx.Fail("value last dim " + IntStr(vd[2]) + " is not a multiple of kv_num_heads " + IntStr(hkv));
    const int64_t dv = vd[2] / hkv;
    p.B = B, p.T = T, p.hq = hq, p.hkv = hkv, p.group = hq / hkv, p.dk = dk, p.dv = dv;
    p.has_past = ctx.has_input(kPastState);
    if (p.has_past) {
      const Dims& pd = ctx.input_dims(kPastState);
      if (pd != Dims{B, hkv, dk, dv}) {
        ctx.Fail("past_state must be " + DimsToString(Dims{B, hkv, dk, dv}) + ", got " + DimsToString(pd));
      }
    }
    p.gated = gated_, p.delta = delta_;
    if (p.gated) p.decay_per = DecayValuesPerHead(ctx, p);
    if (p.delta) p.beta_heads = BetaHeads(ctx, p);
    p.scale = scale_ != 0.0f ? scale_ : 1.0f / std::sqrt(static_cast<float>(dk));
    ctx.set_output(0, DType::kFloat32, {B, T, hq * dv});
    p.want_state = ctx.num_outputs() > 1 && ctx.has_output(1);
    if (p.want_state) ctx.set_output(1, DType::kFloat32, {B, hkv, dk, dv});
    return [plan](RunContext& rc) { RunLinearAttention(*plan, rc); };
  }

  // decay is [B, T, hkv * dk] (a gate per key dim: dk values per head) or [B, T, hkv] (one).
  static int64_t DecayValuesPerHead(PrepareContext& ctx, const LinearAttentionPlan& p) {
    const Dims& gd = ctx.input_dims(kDecay);
    if (gd.size() != 3 || gd[0] != p.B || gd[1] != p.T) ctx.Fail("decay must be [batch, seq, ...] of rank 3");
    if (gd[2] == p.hkv * p.dk) return p.dk;
    if (gd[2] == p.hkv) return 1;
    ctx.Fail("decay last dim must be kv_num_heads * head_size (" + IntStr(p.hkv * p.dk) +
             ") or kv_num_heads (" + IntStr(p.hkv) + "), got " + IntStr(gd[2]));
  }

  // beta is [B, T, hkv] (one per KV head) or [B, T, 1] (shared by the heads).
  static int64_t BetaHeads(PrepareContext& ctx, const LinearAttentionPlan& p) {
    const Dims& bd = ctx.input_dims(kBeta);
    if (bd.size() != 3 || bd[0] != p.B || bd[1] != p.T || (bd[2] != p.hkv && bd[2] != 1)) {
      ctx.Fail("beta must be [batch, seq, kv_num_heads] or [batch, seq, 1], got " + DimsToString(bd));
    }
    return bd[2];
  }

  int64_t q_heads_ = 0, kv_heads_ = 0;
  bool gated_ = true, delta_ = true;
  float scale_ = 0.0f;
};

}  // namespace

void RegisterLinearAttentionOps(OpRegistry& registry) {
  registry.Register("", "LinearAttention", 27, MakeFactory<LinearAttentionOp>());
}

}  // namespace simplecpp::graph
