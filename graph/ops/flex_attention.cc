// FlexAttention (ai.onnx.preview 1): scaled dot-product attention whose score and probability
// tensors may be rewritten by user subgraphs (PyTorch flex_attention's score_mod / prob_mod).
//
// Inputs: Q [B, Hq, L, D], K [B, Hkv, S, D], V [B, Hkv, S, Dv]; Hq a multiple of Hkv, query head h
// reads K/V head h / (Hq / Hkv). Output: Y [B, Hq, L, Dv].
//   scores = (Q K^T) * scale                  scale attribute, default 1/sqrt(D)
//   scores = score_mod(scores)                GRAPH attribute, optional
//   scores = mask_mod(scores)                 GRAPH attribute, optional (earlier drafts)
//   probs  = Softmax(scores, axis=-1)
//   probs  = prob_mod(probs)                  GRAPH attribute, optional
//   Y      = probs V
// Each subgraph takes one tensor (the whole [B, Hq, L, S] scores / probs, in Q's dtype) and returns
// one tensor of the same dtype and shape; it may read values of the enclosing graph.
// float32 and float64 compute in their own type; float16 / bfloat16 compute in float32 (inputs
// widened once, output narrowed once; the subgraphs see 16-bit tensors, as the model declares).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/executor.h"
#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/ops/subgraph_body.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/nn/softmax.h"

namespace simplecpp::graph {
namespace {

std::string IntStr(int64_t v) { return std::to_string(v); }

struct Mod {
  std::string attr;                 // score_mod / mask_mod / prob_mod
  std::shared_ptr<Graph> graph;
  std::shared_ptr<const SubgraphBody> body;
  std::string input_name;
};

template <typename C>
constexpr DType ComputeDType() {
  return std::is_same<C, double>::value ? DType::kFloat64 : DType::kFloat32;
}

// For each of the `heads` (batch, query head) pairs bh: c[bh] = alpha * a[bh] op(b[kv]), with kv
// the K/V head (batch, (bh % hq) / group) of hkv per batch. a is [M, K], c [M, N], b [N, K] when
// trans_b else [K, N], all row-major and packed. float uses GemmF32; double a plain loop
// (accumulating over K in order, then scaling by alpha).
template <typename C>
void HeadsGemm(bool trans_b, int64_t heads, int64_t hq, int64_t hkv, int64_t group, int64_t M,
               int64_t N, int64_t K, C alpha, const C* a, const C* b, C* c,
               const kernels::Parallel& parallel) {
  if constexpr (std::is_same<C, float>::value) {
    for (int64_t bh = 0; bh < heads; ++bh) {
      const int64_t batch = bh / hq, kvh = (bh % hq) / group;
      kernels::GemmF32(false, trans_b, M, N, K, alpha, a + bh * M * K, K,
                       b + (batch * hkv + kvh) * N * K, trans_b ? K : N, 0.0f, c + bh * M * N, N,
                       parallel);
    }
  } else {
    // Element (k, j) of op(b) is at b[k * sk + j * sj].
    const int64_t sk = trans_b ? 1 : N, sj = trans_b ? K : 1;
    parallel.For(heads, [=](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t batch = bh / hq, kvh = (bh % hq) / group;
        const C* ah = a + bh * M * K;
        const C* bm = b + (batch * hkv + kvh) * N * K;
        C* ch = c + bh * M * N;
        for (int64_t i = 0; i < M; ++i) {
          for (int64_t j = 0; j < N; ++j) {
            C acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += ah[i * K + k] * bm[k * sk + j * sj];
            ch[i * N + j] = acc * alpha;
          }
        }
      }
    });
  }
}

class FlexAttentionOp final : public Op {
 public:
  explicit FlexAttentionOp(const OpInit& init) {
    if (init.num_inputs() != 3) init.Fail("expects 3 inputs (Q, K, V), got " + IntStr(init.num_inputs()));
    if (init.num_outputs() != 1) init.Fail("expects 1 output (Y), got " + IntStr(init.num_outputs()));
    has_scale_ = init.Has("scale");
    scale_ = init.GetFloat("scale", 1.0f);
    if (has_scale_ && !std::isfinite(scale_)) init.Fail("scale must be finite");
    for (int i = 0; i < 3; ++i) node_inputs_.push_back(init.node().inputs[i]);
    q_name_ = node_inputs_[0];
    for (const char* name : {"score_mod", "mask_mod", "prob_mod"}) {
      std::shared_ptr<Graph> g = init.GetGraph(name);
      if (!g) continue;
      if (g->inputs.size() != 1 || g->outputs.size() != 1) {
        init.Fail(std::string(name) + " must have exactly one input and one output, got " +
                  IntStr(static_cast<int64_t>(g->inputs.size())) + " and " +
                  IntStr(static_cast<int64_t>(g->outputs.size())));
      }
      Mod m;
      m.attr = name;
      m.graph = g;
      m.input_name = g->inputs[0].name;
      (std::string(name) == "prob_mod" ? prob_mods_ : score_mods_).push_back(std::move(m));
    }
  }

  void BindSubgraphs(const SubgraphContext& ctx) override {
    implicit_ = ctx.implicit_inputs;
    ValueType q_type;
    if (auto it = ctx.outer_types->find(q_name_); it != ctx.outer_types->end()) q_type = it->second;
    for (std::vector<Mod>* list : {&score_mods_, &prob_mods_}) {
      for (Mod& m : *list) {
        m.body = CompileSubgraphBody(*m.graph, ctx, {q_type});
      }
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64});
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    const DType dt = ctx.input_dtype(0);
    for (const std::vector<Mod>* list : {&score_mods_, &prob_mods_}) {
      for (const Mod& m : *list) {
        const Plan& plan = m.body->plan();
        const ValueType out = plan.values()[plan.output_ids()[0]].type;
        if (!out.is_tensor() || (out.dtype != DType::kUndefined && out.dtype != dt)) {
          ctx.Fail(m.attr + " returns " + out.ToString() + "; it must return a " + DTypeName(dt) +
                   " tensor (the dtype of Q)");
        }
      }
    }
    ctx.set_output_dtype(0, dt);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& qd = ctx.input_dims(0);
    const Dims& kd = ctx.input_dims(1);
    const Dims& vd = ctx.input_dims(2);
    if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4) {
      ctx.Fail("Q, K and V must have rank 4 [batch, heads, seq, head_size]");
    }
    const int64_t B = qd[0], hq = qd[1], L = qd[2], D = qd[3];
    const int64_t hkv = kd[1], S = kd[2], dv = vd[3];
    if (kd[0] != B || vd[0] != B) ctx.Fail("Q, K and V must have the same batch size");
    if (kd[3] != D) ctx.Fail("K head size " + IntStr(kd[3]) + " differs from Q's " + IntStr(D));
    if (vd[1] != hkv || vd[2] != S) ctx.Fail("V must be [batch, kv_heads, kv_seq, v_head_size] like K");
    if (hkv <= 0 || hq % hkv != 0) {
      ctx.Fail("Q heads (" + IntStr(hq) + ") must be a positive multiple of K/V heads (" + IntStr(hkv) + ")");
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, {B, hq, L, dv});
    Shape sh{B, hq, hkv, L, S, D, dv};
    if (dt == DType::kFloat64) return MakeRun<double>(sh, dt);
    return MakeRun<float>(sh, dt);
  }

 private:
  struct Shape {
    int64_t B, hq, hkv, L, S, D, dv;
  };

  template <typename C>
  RunFn MakeRun(const Shape& sh, DType dt) const {
    const double scale = has_scale_ ? static_cast<double>(scale_)
                                    : 1.0 / std::sqrt(static_cast<double>(sh.D));
    const bool is16 = Is16BitFloat(dt);
    const kernels::Float16Kind kind = Float16KindOf(dt);
    std::vector<Mod> score_mods = score_mods_, prob_mods = prob_mods_;
    // Names the subgraphs may read from the enclosing graph: Q, K, V themselves (the executor
    // does not repeat a node's own inputs among its implicit inputs), then the implicit inputs.
    std::vector<std::string> outer_names = node_inputs_;
    for (const std::string& n : implicit_) outer_names.push_back(n);
    constexpr DType cdt = ComputeDType<C>();

    return [=](RunContext& rc) {
      const int64_t B = sh.B, hq = sh.hq, hkv = sh.hkv, L = sh.L, S = sh.S, D = sh.D, dv = sh.dv;
      const int64_t group = hq / hkv;
      // Inputs in the compute type.
      std::vector<Tensor> widened(3);
      const C* in[3];
      for (int i = 0; i < 3; ++i) {
        const Tensor& x = rc.input(i);
        if (is16) {
          widened[i] = rc.Scratch(DType::kFloat32, x.dims());
          kernels::Widen16(kind, x.data<uint16_t>(), widened[i].data<float>(),
                           static_cast<size_t>(x.num_elements()));
          in[i] = reinterpret_cast<const C*>(widened[i].data<float>());
        } else {
          in[i] = x.data<C>();
        }
      }
      const C* q = in[0];
      const C* k = in[1];
      const C* v = in[2];
      const Dims sdims{B, hq, L, S};
      Tensor scores_t = rc.Scratch(cdt, sdims);
      C* scores = scores_t.data<C>();
      const int64_t heads = B * hq;
      // scores[b,h] = scale * Q[b,h] K[b,h/group]^T
      HeadsGemm<C>(true, heads, hq, hkv, group, L, S, D, static_cast<C>(scale), q, k, scores,
                   rc.parallel());
      std::map<std::string, Value> outer;
      if (!score_mods.empty() || !prob_mods.empty()) {
        for (size_t i = 0; i < outer_names.size(); ++i) {
          if (!outer_names[i].empty()) outer[outer_names[i]] = Value(rc.input(static_cast<int>(i)));
        }
      }
      // Runs one modifier on `buf` (the [B, hq, L, S] tensor `buf_t`) in place.
      auto apply = [&](const Mod& m, Tensor& buf_t) {
        C* buf = buf_t.data<C>();
        const size_t n = static_cast<size_t>(buf_t.num_elements());
        Tensor arg;
        if (is16) {
          arg = rc.Scratch(dt, sdims);
          kernels::Narrow16(kind, reinterpret_cast<const float*>(buf), arg.data<uint16_t>(), n);
        } else {
          arg = buf_t;
        }
        std::vector<Value> outs = m.body->Run({{m.input_name, Value(arg)}}, outer, rc.parallel());
        if (outs.size() != 1 || !outs[0].is_tensor()) rc.Fail(m.attr + " did not return a tensor");
        const Tensor& r = outs[0].tensor();
        if (r.dtype() != dt || r.dims() != sdims) {
          rc.Fail(m.attr + " returned " + DTypeName(r.dtype()) + DimsToString(r.dims()) +
                  ", expected " + DTypeName(dt) + DimsToString(sdims));
        }
        if (is16) {
          kernels::Widen16(kind, r.data<uint16_t>(), reinterpret_cast<float*>(buf), n);
        } else if (r.data<C>() != buf) {
          std::memmove(buf, r.data<C>(), n * sizeof(C));
        }
      };
      for (const Mod& m : score_mods) apply(m, scores_t);
      Tensor probs_t = rc.Scratch(cdt, sdims);
      C* probs = probs_t.data<C>();
      if constexpr (std::is_same<C, float>::value) {
        kernels::SoftmaxF32(scores, probs, heads * L, S, 1, rc.parallel());
      } else {
        kernels::SoftmaxF64(scores, probs, heads * L, S, 1, rc.parallel());
      }
      for (const Mod& m : prob_mods) apply(m, probs_t);
      // Y[b,h] = probs[b,h] V[b,h/group]
      Tensor& out = rc.output(0);
      Tensor y_scratch;
      C* y;
      if (is16) {
        y_scratch = rc.Scratch(DType::kFloat32, out.dims());
        y = reinterpret_cast<C*>(y_scratch.data<float>());
      } else {
        y = out.data<C>();
      }
      HeadsGemm<C>(false, heads, hq, hkv, group, L, dv, S, C(1), probs, v, y, rc.parallel());
      if (is16) {
        kernels::Narrow16(kind, reinterpret_cast<const float*>(y), out.data<uint16_t>(),
                          static_cast<size_t>(out.num_elements()));
      }
    };
  }

  bool has_scale_ = false;
  float scale_ = 1.0f;
  std::string q_name_;
  std::vector<std::string> node_inputs_;  // Q, K, V value names
  std::vector<Mod> score_mods_, prob_mods_;  // score_mods_: score_mod then mask_mod
  std::vector<std::string> implicit_;
};

}  // namespace

void RegisterFlexAttentionOps(OpRegistry& registry) {
  registry.Register("ai.onnx.preview", "FlexAttention", 1, MakeFactory<FlexAttentionOp>());
}

}  // namespace simplecpp::graph
