// Quantized-pattern fusion (see quant_fusion.h for the patterns and the exactness bounds).
//
// The pass is a pure function of the graph: it reads the graph once to find, for every value,
// its producer, its readers (including reads from nested subgraphs) and its constant value, then
// matches each pattern from its integer / quantize node outwards. A match claims its nodes; the
// rewrite copies the graph, drops the claimed nodes and puts the fused node where the pattern's
// last node was (Plan::Build orders nodes topologically anyway).
#include "graph/passes/quant_fusion.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>
#include <vector>

namespace simplecpp::graph::passes {
namespace {

bool IsQ8(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// One element and rank <= max_rank.
bool IsOneElementOfRank(const Tensor& t, int64_t max_rank) {
  return t.num_elements() == 1 && t.rank() <= max_rank;
}

// Reads an int attribute; false when it exists with another kind.
bool IntAttr(const Node& n, const char* name, int64_t def, int64_t* v) {
  const Attribute* a = n.FindAttribute(name);
  if (a == nullptr) {
    *v = def;
    return true;
  }
  if (a->kind != AttrKind::kInt) return false;
  *v = a->i;
  return true;
}

bool FloatAttrIs(const Node& n, const char* name, float expected) {
  const Attribute* a = n.FindAttribute(name);
  if (a == nullptr) return true;  // the default (1.0 for alpha / beta)
  return a->kind == AttrKind::kFloat && a->f == expected;
}

std::vector<float> FloatValues(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.num_elements());
}

bool AllPositiveFinite(const std::vector<float>& v) {
  for (float x : v) {
    if (!(x > 0.0f) || !std::isfinite(x)) return false;
  }
  return true;
}

// Every name read by the nodes (and output lists) of g and its nested subgraphs.
void CollectSubgraphReads(const Graph& g, std::vector<std::string>* reads) {
  for (const Node& n : g.nodes) {
    for (const std::string& i : n.inputs) {
      if (!i.empty()) reads->push_back(i);
    }
    for (const Attribute& a : n.attributes) {
      if (a.g) CollectSubgraphReads(*a.g, reads);
      for (const auto& sg : a.graphs) {
        if (sg) CollectSubgraphReads(*sg, reads);
      }
    }
  }
  for (const ValueInfo& o : g.outputs) reads->push_back(o.name);
}

// A rewrite found on the input graph.
struct Rewrite {
  std::vector<int> nodes;  // claimed node indices
  // DequantizeLinear / DynamicQuantizeLinear nodes the fused node no longer needs; they may feed other nodes too (a
  // shared activation or weight), so they are dropped only when nothing reads them any more.
  std::vector<int> maybe_dead;
  int anchor = -1;         // where the fused node goes
  Node fused;
  std::vector<std::pair<std::string, Tensor>> initializers;
  int kind = 0;  // 1..4 as in quant_fusion.h
};

class Matcher {
 public:
  // opset: the graph's ai.onnx opset version (which dtypes the rewritten nodes' ops take).
  Matcher(const Graph& g, int64_t opset) : g_(g), opset_(opset) {
    for (const auto& [name, t] : g.initializers) {
      constants_[name] = &t;
      names_.insert(name);
    }
    for (const ValueInfo& v : g.inputs) names_.insert(v.name);
    for (const ValueInfo& v : g.outputs) {
      outputs_.insert(v.name);
      ++uses_[v.name];
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      for (const std::string& in : n.inputs) {
        if (in.empty()) continue;
        ++uses_[in];
        readers_[in].push_back(static_cast<int>(i));
      }
      for (const std::string& out : n.outputs) {
        if (out.empty()) continue;
        producer_[out] = static_cast<int>(i);
        names_.insert(out);
      }
      if (n.op_type == "Constant" && CanonicalDomain(n.domain).empty() && n.outputs.size() == 1) {
        const Attribute* v = n.FindAttribute("value");
        if (v != nullptr && v->kind == AttrKind::kTensor && v->t.defined() &&
            !constants_.count(n.outputs[0])) {
          constants_[n.outputs[0]] = &v->t;
        }
      }
      std::vector<std::string> sub;
      for (const Attribute& a : n.attributes) {
        if (a.g) CollectSubgraphReads(*a.g, &sub);
        for (const auto& sg : a.graphs) {
          if (sg) CollectSubgraphReads(*sg, &sub);
        }
      }
      for (const std::string& s : sub) ++uses_[s];  // conservative: any read may be ours
    }
  }

  std::vector<Rewrite> FindAll() {
    std::vector<Rewrite> found;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (!CanonicalDomain(n.domain).empty()) continue;
      Rewrite rw;
      bool ok = false;
      if (n.op_type == "MatMulInteger" || n.op_type == "ConvInteger") {
        ok = MatchDynamic(static_cast<int>(i), &rw);
      } else if (n.op_type == "QuantizeLinear") {
        ok = MatchQdq(static_cast<int>(i), &rw) || MatchQdqAround(static_cast<int>(i), &rw);
      }
      if (!ok) continue;
      bool overlap = false;
      for (int c : rw.nodes) overlap = overlap || claimed_.count(c) > 0;
      if (overlap) continue;
      claimed_.insert(rw.nodes.begin(), rw.nodes.end());
      found.push_back(std::move(rw));
    }
    return found;
  }

 private:
  const Node& node(int i) const { return g_.nodes[static_cast<size_t>(i)]; }

  // The default-domain node `op_type` producing `value` with exactly `outputs` outputs; -1 if none.
  int Producer(const std::string& value, const char* op_type, size_t outputs = 1) const {
    auto it = producer_.find(value);
    if (it == producer_.end()) return -1;
    const Node& n = node(it->second);
    if (n.op_type != op_type || !CanonicalDomain(n.domain).empty()) return -1;
    if (n.outputs.size() != outputs) return -1;
    return it->second;
  }
  // The one reader of `value` when it is read once, by a default-domain node, and is no graph
  // output; -1 otherwise.
  int SoleReader(const std::string& value) const {
    if (!SingleUse(value)) return -1;
    auto it = readers_.find(value);
    if (it == readers_.end() || it->second.size() != 1) return -1;
    return it->second[0];
  }
  bool SingleUse(const std::string& value) const {
    if (value.empty() || outputs_.count(value)) return false;
    auto it = uses_.find(value);
    return it != uses_.end() && it->second == 1;
  }
  const Tensor* Const(const std::string& value) const {
    if (value.empty()) return nullptr;
    auto it = constants_.find(value);
    return it == constants_.end() ? nullptr : it->second;
  }
  const Tensor* ConstOf(const std::string& value, DType dtype) const {
    const Tensor* t = Const(value);
    return t != nullptr && t->dtype() == dtype ? t : nullptr;
  }
  static bool IsOp(const Node& n, const char* op_type, size_t min_in, size_t max_in) {
    return n.op_type == op_type && CanonicalDomain(n.domain).empty() && n.inputs.size() >= min_in &&
           n.inputs.size() <= max_in && n.outputs.size() == 1 && !n.outputs[0].empty();
  }
  static const std::string& Input(const Node& n, size_t i) {
    static const std::string kNone;
    return i < n.inputs.size() ? n.inputs[i] : kNone;
  }

  std::string FreshName(const std::string& base) {
    for (int k = 0;; ++k) {
      std::string name = base + "__qfuse" + (k ? "_" + std::to_string(k) : "");
      if (names_.insert(name).second) return name;
    }
  }

  // A per-channel float vector for an output [N, M, spatial...] of rank `rank`: t is one element
  // (rank <= rank) or M values along the channel axis ([M, 1, ...] right-aligned to the output).
  // Returns the M values (or 1) in *out.
  static bool ChannelVector(const Tensor& t, int64_t m, int64_t rank, std::vector<float>* out) {
    if (t.dtype() != DType::kFloat32 || t.rank() > rank) return false;
    if (t.num_elements() == 1) {
      *out = FloatValues(t);
      return true;
    }
    if (t.rank() < rank - 1) return false;
    const int64_t channel_axis = 1 - (rank - t.rank());
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (t.dim(d) != (d == channel_axis ? m : 1)) return false;
    }
    *out = FloatValues(t);
    return true;
  }

  std::string VectorInitializer(Rewrite* rw, const std::string& base, const std::vector<float>& v) {
    const std::string name = FreshName(base);
    rw->initializers.emplace_back(
        name, Tensor::FromVector(DType::kFloat32, {static_cast<int64_t>(v.size())}, v));
    return name;
  }

  // ------------------------------------------------------------------------------------------
  // Patterns 1 and 2: DynamicQuantizeLinear -> MatMulInteger / ConvInteger -> Cast -> Mul [-> Add]

  // What patterns 1 and 2 match, node by node.
  struct DynamicMatch {
    bool conv = false;  // ConvInteger (pattern 2), else MatMulInteger (pattern 1)
    int mi = -1, dq = -1, cast = -1, mul1 = -1, mul2 = -1, add = -1;
    int last = -1;          // the pattern's last node: mul2, or the Add
    std::string xq, xs;     // DynamicQuantizeLinear's quantized x and its scale
    const Tensor* w = nullptr;
    int64_t cols = 0;       // N (matmul) or M (conv)
    std::string wzp_name, ws_name;
    const Tensor* ws = nullptr;
    std::vector<float> ws_vec;  // conv: the per-channel weight scales
    std::vector<float> bias;    // the Add's bias (empty without one)
    std::string y;              // the pattern's output
  };

  // mi_idx is a MatMulInteger / ConvInteger whose x comes from a DynamicQuantizeLinear (its
  // quantized x and zero point).
  bool MatchDynamicQuantize(int mi_idx, DynamicMatch* m) const {
    const Node& mi = node(mi_idx);
    m->mi = mi_idx;
    m->conv = mi.op_type == "ConvInteger";
    if (!IsOp(mi, mi.op_type.c_str(), 3, 4)) return false;
    m->xq = mi.inputs[0];
    m->dq = Producer(m->xq, "DynamicQuantizeLinear", 3);
    if (m->dq < 0) return false;
    const Node& dq = node(m->dq);
    if (dq.inputs.size() != 1 || dq.inputs[0].empty() || dq.outputs[0] != m->xq ||
        dq.outputs[2].empty() || dq.outputs[2] != mi.inputs[2] || dq.outputs[1].empty()) {
      return false;
    }
    m->xs = dq.outputs[1];
    // xq / xs / xzp may have other readers (one DynamicQuantizeLinear shared by the MatMuls of the
    // same x, as ONNX Runtime's quantizer writes it): the fused op quantizes x itself (the same
    // arithmetic, so the same bytes) and the DynamicQuantizeLinear stays while others read it.
    return true;
  }

  // W: a constant int8 / uint8 matrix (matmul) or kernel (conv), its zero point one element or
  // one per output column / channel.
  bool MatchDynamicWeight(DynamicMatch* m) const {
    const Node& mi = node(m->mi);
    m->w = Const(mi.inputs[1]);
    const Tensor* w = m->w;
    if (w == nullptr || !IsQ8(w->dtype())) return false;
    if (m->conv ? w->rank() < 3 : w->rank() != 2) return false;
    m->cols = m->conv ? w->dim(0) : w->dim(1);
    m->wzp_name = Input(mi, 3);
    if (!m->wzp_name.empty()) {
      const Tensor* wzp = ConstOf(m->wzp_name, w->dtype());
      if (wzp == nullptr) return false;
      if (!IsOneElementOfRank(*wzp, 1) && !(wzp->rank() == 1 && wzp->dim(0) == m->cols)) {
        return false;
      }
    }
    return true;
  }

  // The int32 result cast to float, then y = Mul(accf, s) with s = Mul(xs, ws), ws constant.
  bool MatchDynamicRescale(DynamicMatch* m) const {
    const std::string& acc = node(m->mi).outputs[0];
    m->cast = SoleReader(acc);
    if (m->cast < 0 || !IsOp(node(m->cast), "Cast", 1, 1)) return false;
    int64_t to = 0;
    if (!IntAttr(node(m->cast), "to", 0, &to) || to != static_cast<int64_t>(DType::kFloat32))
      return false;
    const std::string& accf = node(m->cast).outputs[0];
    m->mul2 = SoleReader(accf);
    if (m->mul2 < 0 || !IsOp(node(m->mul2), "Mul", 2, 2)) return false;
    const Node& mul2 = node(m->mul2);
    const std::string& s = mul2.inputs[0] == accf ? mul2.inputs[1] : mul2.inputs[0];
    m->mul1 = Producer(s, "Mul");
    if (m->mul1 < 0 || !SingleUse(s) || !IsOp(node(m->mul1), "Mul", 2, 2)) return false;
    const Node& mul1 = node(m->mul1);
    if (mul1.inputs[0] != m->xs && mul1.inputs[1] != m->xs) return false;
    m->ws_name = mul1.inputs[0] == m->xs ? mul1.inputs[1] : mul1.inputs[0];
    m->ws = ConstOf(m->ws_name, DType::kFloat32);
    if (m->ws == nullptr) return false;
    if (m->conv) return ChannelVector(*m->ws, m->cols, m->w->rank(), &m->ws_vec);
    return IsOneElementOfRank(*m->ws, 1) || (m->ws->rank() == 1 && m->ws->dim(0) == m->cols);
  }

  // An optional Add of a constant bias (one element, or one per output column / channel) after
  // the rescale; a one-element bias is expanded to `cols` values.
  void MatchDynamicBias(DynamicMatch* m) const {
    m->y = node(m->mul2).outputs[0];
    m->last = m->mul2;
    const int reader = SoleReader(m->y);
    if (reader >= 0 && IsOp(node(reader), "Add", 2, 2)) {
      const Node& add = node(reader);
      const std::string& b = add.inputs[0] == m->y ? add.inputs[1] : add.inputs[0];
      const Tensor* bt = ConstOf(b, DType::kFloat32);
      bool ok = bt != nullptr;
      if (ok && m->conv) {
        ok = ChannelVector(*bt, m->cols, m->w->rank(), &m->bias);
      } else if (ok) {
        ok = IsOneElementOfRank(*bt, 1) || (bt->rank() == 1 && bt->dim(0) == m->cols);
        if (ok) m->bias = FloatValues(*bt);
      }
      if (ok) {
        m->add = reader;
        m->last = reader;
        m->y = add.outputs[0];
      }
    }
    if (m->add >= 0 && m->bias.size() == 1 && m->cols != 1) m->bias.assign(m->cols, m->bias[0]);
  }

  // Pattern 1's fused node: DynamicQuantizeMatMul, or MatMulIntegerToFloat when several nodes
  // read xq (the Q, K and V projections of one activation): the DynamicQuantizeLinear stays and
  // runs once, and each MatMul reads its result (the same int32 sums and float epilogue).
  void BuildDynamicMatMul(const DynamicMatch& m, Rewrite* rw, Node* f) {
    const Node& mi = node(m.mi);
    const Node& dq = node(m.dq);
    f->domain = "com.microsoft";
    if (!SingleUse(m.xq)) {
      f->op_type = "MatMulIntegerToFloat";
      f->inputs = {m.xq, mi.inputs[1], m.xs, m.ws_name, dq.outputs[2], m.wzp_name, ""};
    } else {
      f->op_type = "DynamicQuantizeMatMul";
      f->inputs = {dq.inputs[0], mi.inputs[1], m.ws_name, m.wzp_name, ""};
    }
    if (m.add >= 0) {
      // DynamicQuantizeMatMul wants bias [N]: a one-element bias is expanded (same values).
      const Node& add = node(m.add);
      const std::string& mul2_out = node(m.mul2).outputs[0];
      const std::string& bname = add.inputs[0] == mul2_out ? add.inputs[1] : add.inputs[0];
      const Tensor* bt = Const(bname);
      f->inputs.back() = (bt->rank() == 1 && bt->dim(0) == m.cols)
                             ? bname
                             : VectorInitializer(rw, m.y + "_bias", m.bias);
    }
    rw->kind = 1;
  }

  // Pattern 2's fused node: DynamicQuantizeConv with per-channel scale and bias vectors.
  void BuildDynamicConv(const DynamicMatch& m, Rewrite* rw, Node* f) {
    const Node& mi = node(m.mi);
    f->domain = kFusedDomain;
    f->op_type = "DynamicQuantizeConv";
    const std::string ws_in = m.ws_vec.size() == 1 && m.ws->rank() <= 1
                                  ? m.ws_name
                                  : VectorInitializer(rw, m.y + "_scale", m.ws_vec);
    f->inputs = {node(m.dq).inputs[0], mi.inputs[1], ws_in, m.wzp_name,
                 m.add >= 0 ? VectorInitializer(rw, m.y + "_bias", m.bias) : ""};
    f->attributes = mi.attributes;  // auto_pad, dilations, group, kernel_shape, pads, strides
    rw->kind = 2;
  }

  bool MatchDynamic(int mi_idx, Rewrite* rw) {
    DynamicMatch m;
    if (!MatchDynamicQuantize(mi_idx, &m) || !MatchDynamicWeight(&m) || !MatchDynamicRescale(&m)) {
      return false;
    }
    MatchDynamicBias(&m);
    Node f;
    f.name = node(m.last).name.empty() ? m.y + "_fused" : node(m.last).name + "_fused";
    f.outputs = {m.y};
    if (m.conv) {
      BuildDynamicConv(m, rw, &f);
    } else {
      BuildDynamicMatMul(m, rw, &f);
    }
    while (!f.inputs.empty() && f.inputs.back().empty()) f.inputs.pop_back();
    rw->fused = std::move(f);
    rw->nodes = {m.mi, m.cast, m.mul1, m.mul2};
    if (m.add >= 0) rw->nodes.push_back(m.add);
    rw->maybe_dead = {m.dq};
    rw->anchor = m.last;
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // Patterns 3 and 4: DequantizeLinear x2 -> MatMul / Gemm / Conv [-> Add] -> QuantizeLinear

  // DequantizeLinear attributes that keep the plain per-tensor / per-axis float32 semantics.
  static bool PlainDequantize(const Node& n) {
    int64_t block = 0, out_dtype = 0;
    if (!IntAttr(n, "block_size", 0, &block) || block != 0) return false;
    if (!IntAttr(n, "output_dtype", 0, &out_dtype)) return false;
    return out_dtype == 0 || out_dtype == static_cast<int64_t>(DType::kFloat32);
  }

  // A QuantizeLinear without blocks or a precision attribute; *out_dtype gets its output_dtype
  // attribute (0 when absent: the zero point's dtype, else uint8).
  static bool PlainQuantize(const Node& n, int64_t* out_dtype) {
    int64_t block = 0;
    if (!IntAttr(n, "block_size", 0, &block) || block != 0) return false;
    if (!IntAttr(n, "output_dtype", 0, out_dtype)) return false;
    return n.FindAttribute("precision") == nullptr;
  }

  // A float32 bias: a constant, or DequantizeLinear(int32 constant, float32 scale constant
  // [, zero int32 zero point]) as ONNX Runtime's QDQ format writes it (values computed as that
  // DequantizeLinear does: float32(q) * scale). *dq_node is the DequantizeLinear (or -1);
  // *q / *q_scale hold its int32 values and per-element scales.
  struct Bias {
    const Tensor* tensor = nullptr;  // the float constant, or the int32 one when dequantized
    Dims dims;
    std::vector<float> values;
    std::vector<int32_t> q;
    std::vector<float> q_scale;
    int dq_node = -1;
  };
  bool FloatOrDequantizedBias(const std::string& name, Bias* b) const {
    if (const Tensor* t = ConstOf(name, DType::kFloat32)) {
      b->tensor = t;
      b->dims = t->dims();
      b->values = FloatValues(*t);
      return true;
    }
    const int dq = Producer(name, "DequantizeLinear");
    if (dq < 0 || !PlainDequantize(node(dq))) return false;
    const Node& n = node(dq);
    if (n.inputs.size() < 2 || n.inputs.size() > 3) return false;
    const Tensor* q = ConstOf(n.inputs[0], DType::kInt32);
    const Tensor* sc = ConstOf(n.inputs[1], DType::kFloat32);
    if (q == nullptr || sc == nullptr || q->rank() > 4) return false;
    if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
      const Tensor* zp = ConstOf(n.inputs[2], DType::kInt32);
      if (zp == nullptr) return false;
      for (int64_t i = 0; i < zp->num_elements(); ++i) {
        if (zp->data<int32_t>()[i] != 0) return false;
      }
    }
    const int64_t count = q->num_elements();
    const bool per_tensor = sc->num_elements() == 1 && sc->rank() <= 1;
    if (!per_tensor && !(q->rank() == 1 && sc->rank() == 1 && sc->dim(0) == count)) return false;
    b->tensor = q;
    b->dims = q->dims();
    b->dq_node = dq;
    for (int64_t i = 0; i < count; ++i) {
      const int32_t v = q->data<int32_t>()[i];
      const float scale = sc->data<float>()[per_tensor ? 0 : i];
      b->q.push_back(v);
      b->q_scale.push_back(scale);
      b->values.push_back(static_cast<float>(v) * scale);
    }
    return true;
  }

  // The pieces of pattern 3/4 (DequantizeLinear x, w -> MatMul / Gemm / Conv [-> Add(bias)] ->
  // QuantizeLinear) as MatchQdq finds them, one step at a time.
  struct QdqMatch {
    int q_idx = -1, core_idx = -1, add_idx = -1, dx_idx = -1, dw_idx = -1;
    std::string yzp_name, wzp_name;
    const Tensor* xs = nullptr;
    const Tensor* w = nullptr;
    const Tensor* ws = nullptr;
    const Tensor* wzp = nullptr;
    Bias add_bias;
    std::string add_bias_name;
    bool is_matmul = false, is_gemm = false, is_conv = false;
    int64_t trans_b = 0, col_axis = 1, cols = 0;
    Bias bias_src;
    std::vector<int32_t> bias_i32;
  };

  bool MatchQdq(int q_idx, Rewrite* rw) {
    QdqMatch m;
    m.q_idx = q_idx;
    if (!MatchOutputQuantize(&m) || !MatchCore(&m) || !MatchDequantizedOperands(&m) ||
        !MatchWeightLayout(&m) || !MatchInt32Bias(&m)) {
      return false;
    }
    BuildQdqFused(m, rw);
    return true;
  }

  // QuantizeLinear with a per-tensor scale and an 8-bit (or absent) zero point.
  bool MatchOutputQuantize(QdqMatch* m) const {
    const Node& q = node(m->q_idx);
    int64_t out_dtype = 0;
    if (!IsOp(q, "QuantizeLinear", 2, 3) || !PlainQuantize(q, &out_dtype)) return false;
    const Tensor* ys = ConstOf(q.inputs[1], DType::kFloat32);
    if (ys == nullptr || ys->num_elements() != 1 || !AllPositiveFinite(FloatValues(*ys)))
      return false;
    m->yzp_name = Input(q, 2);
    if (!m->yzp_name.empty()) {
      const Tensor* yzp = Const(m->yzp_name);
      if (yzp == nullptr || !IsQ8(yzp->dtype()) || yzp->num_elements() != 1) return false;
      if (out_dtype != 0 && out_dtype != static_cast<int64_t>(yzp->dtype())) return false;
    } else if (out_dtype != 0 && out_dtype != static_cast<int64_t>(DType::kUInt8)) {
      return false;
    }
    return true;
  }

  // [Add(bias)] and the core op (MatMul, Gemm or Conv) feeding the QuantizeLinear alone.
  bool MatchCore(QdqMatch* m) const {
    const std::string& y = node(m->q_idx).inputs[0];
    if (!SingleUse(y)) return false;
    auto it = producer_.find(y);
    if (it == producer_.end()) return false;
    m->core_idx = it->second;
    if (IsOp(node(m->core_idx), "Add", 2, 2)) {
      m->add_idx = m->core_idx;
      const Node& add = node(m->add_idx);
      std::string z;
      for (int k = 0; k < 2 && m->add_bias.tensor == nullptr; ++k) {
        Bias b;
        if (FloatOrDequantizedBias(add.inputs[k], &b)) {
          m->add_bias = b;
          m->add_bias_name = add.inputs[k];
          z = add.inputs[1 - k];
        }
      }
      if (m->add_bias.tensor == nullptr || !SingleUse(z)) return false;
      auto zt = producer_.find(z);
      if (zt == producer_.end()) return false;
      m->core_idx = zt->second;
    }
    const Node& core = node(m->core_idx);
    m->is_matmul = IsOp(core, "MatMul", 2, 2);
    m->is_gemm = IsOp(core, "Gemm", 2, 3);
    m->is_conv = IsOp(core, "Conv", 2, 3);
    return m->is_matmul || m->is_gemm || m->is_conv;
  }

  // The core op's operands as DequantizeLinear of a per-tensor activation and a constant 8-bit
  // weight. xf / wf may have other readers (a dequantized activation shared by several MatMuls):
  // the fused node reads the quantized inputs, and the DequantizeLinear stays while others read it.
  bool MatchDequantizedOperands(QdqMatch* m) const {
    const Node& core = node(m->core_idx);
    m->dx_idx = Producer(core.inputs[0], "DequantizeLinear");
    m->dw_idx = Producer(core.inputs[1], "DequantizeLinear");
    if (m->dx_idx < 0 || m->dw_idx < 0 || m->dx_idx == m->dw_idx) return false;
    const Node& dx = node(m->dx_idx);
    const Node& dw = node(m->dw_idx);
    if (dx.inputs.size() != 3 || dw.inputs.size() < 2 || dw.inputs.size() > 3) return false;
    if (!PlainDequantize(dx) || !PlainDequantize(dw)) return false;
    m->xs = ConstOf(dx.inputs[1], DType::kFloat32);
    const Tensor* xzp = Const(dx.inputs[2]);
    if (m->xs == nullptr || m->xs->num_elements() != 1 || !AllPositiveFinite(FloatValues(*m->xs)))
      return false;
    if (xzp == nullptr || !IsQ8(xzp->dtype()) || xzp->num_elements() != 1) return false;
    if (dx.inputs[0].empty()) return false;
    m->w = Const(dw.inputs[0]);
    if (m->w == nullptr || !IsQ8(m->w->dtype())) return false;
    m->ws = ConstOf(dw.inputs[1], DType::kFloat32);
    if (m->ws == nullptr || !AllPositiveFinite(FloatValues(*m->ws))) return false;
    m->wzp_name = Input(dw, 2);
    if (!m->wzp_name.empty()) {
      m->wzp = ConstOf(m->wzp_name, m->w->dtype());
      if (m->wzp == nullptr) return false;
    }
    return true;
  }

  // The column / output-channel axis of W, and weight scales per tensor or along it.
  bool MatchWeightLayout(QdqMatch* m) const {
    const Node& core = node(m->core_idx);
    const Tensor* w = m->w;
    if (m->is_gemm) {
      int64_t trans_a = 0;
      if (!IntAttr(core, "transA", 0, &trans_a) || trans_a != 0) return false;
      if (!IntAttr(core, "transB", 0, &m->trans_b) || (m->trans_b != 0 && m->trans_b != 1)) return false;
      if (!FloatAttrIs(core, "alpha", 1.0f)) return false;
      if (core.inputs.size() == 3 && !core.inputs[2].empty() && !FloatAttrIs(core, "beta", 1.0f))
        return false;
      if (w->rank() != 2) return false;
      m->col_axis = m->trans_b ? 0 : 1;
    } else if (m->is_matmul) {
      if (w->rank() != 2) return false;
      m->col_axis = 1;
    } else {
      if (w->rank() < 3) return false;
      m->col_axis = 0;
    }
    m->cols = w->dim(m->col_axis);
    const Tensor* ws = m->ws;
    const Tensor* wzp = m->wzp;
    if (ws->num_elements() == 1) {
      return ws->rank() <= 1 && (wzp == nullptr || (wzp->num_elements() == 1 && wzp->rank() <= 1));
    }
    int64_t axis = 1;
    if (!IntAttr(node(m->dw_idx), "axis", 1, &axis)) return false;
    if (axis < 0) axis += w->rank();
    if (axis != m->col_axis || ws->rank() != 1 || ws->dim(0) != m->cols) return false;
    return wzp == nullptr || wzp->dims() == ws->dims();
  }

  // The float bias (Gemm's C / Conv's B, or the Add; not both) as int32 at scale xs * ws[n]: the
  // DequantizeLinear's int32 values when its scale is exactly that float32 product, else
  // round_half_even(bias / (xs * ws[n])).
  bool MatchInt32Bias(QdqMatch* m) const {
    const Node& core = node(m->core_idx);
    Bias& bias_src = m->bias_src;
    bool bias_from_add = false;
    if (core.inputs.size() == 3 && !core.inputs[2].empty()) {
      if (!FloatOrDequantizedBias(core.inputs[2], &bias_src) || m->add_bias.tensor != nullptr)
        return false;
    }
    if (m->add_bias.tensor != nullptr) {
      bias_src = m->add_bias;
      bias_from_add = true;
    }
    if (bias_src.tensor == nullptr) return true;
    const Tensor& bt = *bias_src.tensor;
    const int64_t cols = m->cols;
    if (m->is_conv) {
      if (bias_from_add) {
        // ChannelVector checks the shape; the values are the (dequantized) floats.
        std::vector<float> unused;
        Tensor shape_probe(DType::kFloat32, bt.dims());
        if (!ChannelVector(shape_probe, cols, m->w->rank(), &unused)) return false;
      } else if (bt.rank() != 1 || bt.dim(0) != cols) {
        return false;
      }
    } else {
      const int64_t max_rank = m->is_gemm ? 2 : 1;  // MatMul's output may be 1-D
      const bool one = IsOneElementOfRank(bt, max_rank);
      const bool row = bt.rank() >= 1 && bt.rank() <= max_rank && bt.dim(bt.rank() - 1) == cols &&
                       bt.num_elements() == cols;
      if (!one && !row) return false;
    }
    std::vector<float> bias = bias_src.values;
    if (bias.size() == 1 && cols != 1) bias.assign(cols, bias[0]);
    const std::vector<float> ws_vec = FloatValues(*m->ws);
    const float xs_v = FloatValues(*m->xs)[0];
    for (size_t j = 0; j < bias.size(); ++j) {
      const float prod = xs_v * ws_vec[ws_vec.size() > 1 ? j : 0];
      if (!(prod > 0.0f) || !std::isfinite(prod) || !std::isfinite(bias[j])) return false;
      if (!bias_src.q.empty()) {
        const size_t bj = bias_src.q.size() > 1 ? j : 0;
        if (bias_src.q_scale[bj] == prod) {
          m->bias_i32.push_back(bias_src.q[bj]);
          continue;
        }
      }
      const double r = std::nearbyint(static_cast<double>(bias[j]) / static_cast<double>(prod));
      if (!(std::fabs(r) <= static_cast<double>(std::numeric_limits<int32_t>::max()))) return false;
      m->bias_i32.push_back(static_cast<int32_t>(r));
    }
    return true;
  }

  // QLinearConv, QLinearMatMul or the fused QLinearMatMulBias in place of the matched nodes.
  void BuildQdqFused(const QdqMatch& m, Rewrite* rw) {
    const Node& q = node(m.q_idx);
    const Node& core = node(m.core_idx);
    const Node& dx = node(m.dx_idx);
    const Node& dw = node(m.dw_idx);
    const std::string& out = q.outputs[0];
    Node f;
    f.name = q.name.empty() ? out + "_fused" : q.name + "_fused";
    f.outputs = {out};
    std::string yzp_in = m.yzp_name;
    if (yzp_in.empty()) {
      yzp_in = FreshName(out + "_zero_point");
      rw->initializers.emplace_back(yzp_in, Tensor(DType::kUInt8, {}));
    }
    std::string bias_in;
    if (!m.bias_i32.empty()) {
      bias_in = FreshName(out + "_bias_i32");
      rw->initializers.emplace_back(bias_in, Tensor::FromVector(DType::kInt32, {m.cols}, m.bias_i32));
    }
    std::string w_in = dw.inputs[0];
    if (m.trans_b) {
      // W [N,K] -> [K,N] bytes.
      const Tensor* w = m.w;
      const int64_t n = w->dim(0), k = w->dim(1);
      Tensor t(w->dtype(), {k, n});
      const auto* src = static_cast<const uint8_t*>(w->raw_data());
      auto* dst = static_cast<uint8_t*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
      w_in = FreshName(dw.inputs[0] + "_t");
      rw->initializers.emplace_back(w_in, t);
    }
    f.inputs = {dx.inputs[0], dx.inputs[1], dx.inputs[2], w_in, dw.inputs[1], m.wzp_name,
                q.inputs[1], yzp_in};
    if (m.is_conv) {
      f.op_type = "QLinearConv";
      f.attributes = core.attributes;  // auto_pad, dilations, group, kernel_shape, pads, strides
      if (!bias_in.empty()) f.inputs.push_back(bias_in);
      rw->kind = 4;
    } else if (m.is_matmul && bias_in.empty()) {
      f.op_type = "QLinearMatMul";
      rw->kind = 3;
    } else {
      f.domain = kFusedDomain;
      f.op_type = "QLinearMatMulBias";
      f.inputs.push_back(bias_in);
      Attribute a;
      a.name = "gemm";
      a.kind = AttrKind::kInt;
      a.i = m.is_gemm ? 1 : 0;
      f.attributes.push_back(a);
      while (f.inputs.size() > 8 && f.inputs.back().empty()) f.inputs.pop_back();
      rw->kind = 3;
    }
    rw->fused = std::move(f);
    rw->nodes = {m.core_idx, m.q_idx};
    if (m.add_idx >= 0) rw->nodes.push_back(m.add_idx);
    rw->maybe_dead = {m.dx_idx, m.dw_idx};
    if (m.bias_src.dq_node >= 0) rw->maybe_dead.push_back(m.bias_src.dq_node);
    rw->anchor = m.q_idx;
  }

  // ------------------------------------------------------------------------------------------
  // Patterns 5 and 6: DequantizeLinear -> data op / GlobalAveragePool -> QuantizeLinear

  // Per-tensor parameters of a QuantizeLinear / DequantizeLinear node with a zero point: a
  // constant float32 scale in [1e-30, 1e30] (normal, so (q - zp) * s / s rounds back to q - zp
  // for any 8-bit q - zp) and a constant 8-bit zero point, one element each.
  struct PerTensor {
    float scale = 0.0f;
    const Tensor* zp = nullptr;
    int32_t zp_value() const { return Int8At(*zp); }
  };
  static int32_t Int8At(const Tensor& t) {
    const uint8_t b = static_cast<const uint8_t*>(t.raw_data())[0];
    return t.dtype() == DType::kInt8 ? static_cast<int32_t>(static_cast<int8_t>(b)) : b;
  }
  bool PerTensorParams(const Node& n, PerTensor* p) const {
    if (n.inputs.size() != 3 || n.inputs[2].empty()) return false;
    const Tensor* s = ConstOf(n.inputs[1], DType::kFloat32);
    if (s == nullptr || s->num_elements() != 1 || s->rank() > 1) return false;
    const float v = s->data<float>()[0];
    if (!(v >= 1e-30f && v <= 1e30f)) return false;
    const Tensor* zp = Const(n.inputs[2]);
    if (zp == nullptr || !IsQ8(zp->dtype()) || zp->num_elements() != 1 || zp->rank() > 1) return false;
    p->scale = v;
    p->zp = zp;
    return true;
  }

  // Ops that only select or move elements: with the same per-tensor scale and zero point on both
  // sides, Q(op(DQ(q))) == op(q) exactly (DQ is increasing, and Q(DQ(v)) == v).
  bool MovesOrSelects(const Node& op) const {
    static const std::set<std::string> kAnyOpset = {"Flatten", "Reshape", "Transpose", "Squeeze",
                                                    "Unsqueeze", "Identity"};
    if (kAnyOpset.count(op.op_type)) return true;
    return op.op_type == "MaxPool" && opset_ >= 12;  // 8-bit MaxPool from opset 12
  }

  bool MatchQdqAround(int q_idx, Rewrite* rw) {
    const Node& q = node(q_idx);
    int64_t out_dtype = 0;
    if (!IsOp(q, "QuantizeLinear", 3, 3) || !PlainQuantize(q, &out_dtype)) return false;
    PerTensor yq;
    if (!PerTensorParams(q, &yq)) return false;
    if (out_dtype != 0 && out_dtype != static_cast<int64_t>(yq.zp->dtype())) return false;
    const std::string& y = q.inputs[0];
    if (!SingleUse(y)) return false;
    auto it = producer_.find(y);
    if (it == producer_.end()) return false;
    const int op_idx = it->second;
    const Node& op = node(op_idx);
    if (!CanonicalDomain(op.domain).empty() || op.outputs.size() != 1 || op.inputs.empty())
      return false;
    const bool average = op.op_type == "GlobalAveragePool" && op.inputs.size() == 1;
    if (!average && !MovesOrSelects(op)) return false;
    const int dq_idx = Producer(op.inputs[0], "DequantizeLinear");
    if (dq_idx < 0) return false;
    const Node& dq = node(dq_idx);
    PerTensor xq;
    if (!PlainDequantize(dq) || !PerTensorParams(dq, &xq) || dq.inputs[0].empty()) return false;
    if (xq.zp->dtype() != yq.zp->dtype()) return false;
    for (size_t k = 1; k < op.inputs.size(); ++k) {
      if (op.inputs[k] == op.inputs[0]) return false;  // e.g. a shape computed from the data
    }
    Node f;
    if (average) {
      // Pattern 6: the mean of the integers, requantized once (quant_fusion.h: within 1).
      f.op_type = "QLinearGlobalAveragePool";
      f.domain = "com.microsoft";
      f.inputs = {dq.inputs[0], dq.inputs[1], dq.inputs[2], q.inputs[1], q.inputs[2]};
      rw->kind = 6;
    } else {
      // Pattern 5: exact.
      if (xq.scale != yq.scale || xq.zp_value() != yq.zp_value()) return false;
      f.op_type = op.op_type;
      f.attributes = op.attributes;
      f.inputs = op.inputs;
      f.inputs[0] = dq.inputs[0];
      rw->kind = 5;
    }
    f.name = (op.name.empty() ? q.outputs[0] : op.name) + "_quantized";
    f.outputs = {q.outputs[0]};
    rw->fused = std::move(f);
    rw->nodes = {op_idx, q_idx};
    rw->maybe_dead = {dq_idx};
    rw->anchor = q_idx;
    return true;
  }

  const Graph& g_;
  const int64_t opset_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> readers_;
  std::map<std::string, int> uses_;
  std::set<std::string> outputs_;
  std::map<std::string, const Tensor*> constants_;
  std::set<std::string> names_;
  std::set<int> claimed_;
};

}  // namespace

bool FuseQuantized(const Graph& graph, const std::map<std::string, int64_t>& opsets, Graph* out,
                   std::map<std::string, int64_t>* out_opsets, QuantFusionStats* stats) {
  // The patterns need the default domain's quantization ops (opset >= 10).
  auto ai = opsets.find("");
  if (ai == opsets.end() || ai->second < 10) return false;
  Matcher matcher(graph, ai->second);
  std::vector<Rewrite> rewrites = matcher.FindAll();
  if (rewrites.empty()) return false;

  std::map<int, const Node*> at_anchor;
  std::set<int> removed, maybe_dead;
  bool microsoft = false, fused = false;
  QuantFusionStats s;
  for (const Rewrite& rw : rewrites) {
    at_anchor[rw.anchor] = &rw.fused;
    removed.insert(rw.nodes.begin(), rw.nodes.end());
    maybe_dead.insert(rw.maybe_dead.begin(), rw.maybe_dead.end());
    microsoft = microsoft || rw.fused.domain == "com.microsoft";
    fused = fused || rw.fused.domain == kFusedDomain;
    if (rw.kind == 1) ++s.dynamic_matmul;
    if (rw.kind == 2) ++s.dynamic_conv;
    if (rw.kind == 3) ++s.qdq_matmul;
    if (rw.kind == 4) ++s.qdq_conv;
    if (rw.kind == 5) ++s.qdq_data_op;
    if (rw.kind == 6) ++s.qdq_global_average;
  }
  Graph g;
  g.name = graph.name;
  g.inputs = graph.inputs;
  g.outputs = graph.outputs;
  g.value_info = graph.value_info;
  g.initializers = graph.initializers;
  g.doc = graph.doc;
  g.nodes.reserve(graph.nodes.size());
  std::vector<int> origin;  // index in graph.nodes, -1 for a fused node
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    auto a = at_anchor.find(static_cast<int>(i));
    if (a != at_anchor.end()) {
      g.nodes.push_back(*a->second);
      origin.push_back(-1);
    } else if (!removed.count(static_cast<int>(i))) {
      g.nodes.push_back(graph.nodes[i]);
      origin.push_back(static_cast<int>(i));
    }
  }
  // Drop the (Dynamic)DequantizeLinear nodes nothing reads any more (reads in subgraphs count).
  std::set<std::string> read;
  {
    std::vector<std::string> names;
    CollectSubgraphReads(g, &names);  // g's own nodes, their subgraphs and g's outputs
    read.insert(names.begin(), names.end());
  }
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (origin[i] >= 0 && maybe_dead.count(origin[i])) {
      bool used = false;
      for (const std::string& o : g.nodes[i].outputs) used = used || (!o.empty() && read.count(o));
      if (!used) continue;
    }
    kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  for (const Rewrite& rw : rewrites) {
    for (const auto& init : rw.initializers) g.initializers.push_back(init);
  }
  *out = std::move(g);
  *out_opsets = opsets;
  if (microsoft && !out_opsets->count("com.microsoft")) (*out_opsets)["com.microsoft"] = 1;
  if (fused && !out_opsets->count(kFusedDomain)) (*out_opsets)[kFusedDomain] = 1;
  if (stats != nullptr) *stats = s;
  return true;
}

}  // namespace simplecpp::graph::passes
