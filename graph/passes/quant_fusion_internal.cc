// Shared parts of the quantized-pattern fusion pass: the readers the patterns use and the index of
// the input graph they match against (quant_fusion_internal.h).
#include "graph/passes/quant_fusion_internal.h"

#include <cmath>

namespace simplecpp::graph::passes::quant_fusion {

bool IsQ8(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

int32_t Int8At(const Tensor& t) {
  const uint8_t b = static_cast<const uint8_t*>(t.raw_data())[0];
  return t.dtype() == DType::kInt8 ? static_cast<int32_t>(static_cast<int8_t>(b)) : b;
}

bool IsOneElementOfRank(const Tensor& t, int64_t max_rank) {
  return t.num_elements() == 1 && t.rank() <= max_rank;
}

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

bool IsOp(const Node& n, const char* op_type, size_t min_in, size_t max_in) {
  return n.op_type == op_type && CanonicalDomain(n.domain).empty() && n.inputs.size() >= min_in &&
         n.inputs.size() <= max_in && n.outputs.size() == 1 && !n.outputs[0].empty();
}

const std::string& Input(const Node& n, size_t i) {
  static const std::string kNone;
  return i < n.inputs.size() ? n.inputs[i] : kNone;
}

bool ChannelVector(const Tensor& t, int64_t m, int64_t rank, std::vector<float>* out) {
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

bool PlainDequantize(const Node& n) {
  int64_t block = 0, out_dtype = 0;
  if (!IntAttr(n, "block_size", 0, &block) || block != 0) return false;
  if (!IntAttr(n, "output_dtype", 0, &out_dtype)) return false;
  return out_dtype == 0 || out_dtype == static_cast<int64_t>(DType::kFloat32);
}

bool PlainQuantize(const Node& n, int64_t* out_dtype) {
  int64_t block = 0;
  if (!IntAttr(n, "block_size", 0, &block) || block != 0) return false;
  if (!IntAttr(n, "output_dtype", 0, out_dtype)) return false;
  return n.FindAttribute("precision") == nullptr;
}

PatternGraph::PatternGraph(const Graph& g, int64_t opset) : g_(g), opset_(opset) {
  for (const auto& [name, t] : g.initializers) {
    constants_[name] = &t;
    names_.insert(name);
  }
  for (const ValueInfo& v : g.inputs) names_.insert(v.name);
  for (const ValueInfo& v : g.outputs) {
    outputs_.insert(v.name);
    ++uses_[v.name];
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) IndexNode(static_cast<int>(i));
}

void PatternGraph::IndexNode(int i) {
  const Node& n = node(i);
  for (const std::string& in : n.inputs) {
    if (in.empty()) continue;
    ++uses_[in];
    readers_[in].push_back(i);
  }
  for (const std::string& out : n.outputs) {
    if (out.empty()) continue;
    producer_[out] = i;
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

int PatternGraph::AnyProducer(const std::string& value) const {
  auto it = producer_.find(value);
  return it == producer_.end() ? -1 : it->second;
}

int PatternGraph::Producer(const std::string& value, const char* op_type, size_t outputs) const {
  auto it = producer_.find(value);
  if (it == producer_.end()) return -1;
  const Node& n = node(it->second);
  if (n.op_type != op_type || !CanonicalDomain(n.domain).empty()) return -1;
  if (n.outputs.size() != outputs) return -1;
  return it->second;
}

int PatternGraph::SoleReader(const std::string& value) const {
  if (!SingleUse(value)) return -1;
  auto it = readers_.find(value);
  if (it == readers_.end() || it->second.size() != 1) return -1;
  return it->second[0];
}

bool PatternGraph::SingleUse(const std::string& value) const {
  if (value.empty() || outputs_.count(value)) return false;
  auto it = uses_.find(value);
  return it != uses_.end() && it->second == 1;
}

const Tensor* PatternGraph::Const(const std::string& value) const {
  if (value.empty()) return nullptr;
  auto it = constants_.find(value);
  return it == constants_.end() ? nullptr : it->second;
}

const Tensor* PatternGraph::ConstOf(const std::string& value, DType dtype) const {
  const Tensor* t = Const(value);
  return t != nullptr && t->dtype() == dtype ? t : nullptr;
}

std::string PatternGraph::FreshName(const std::string& base) {
  for (int k = 0;; ++k) {
    std::string name = base + "__qfuse" + (k ? "_" + std::to_string(k) : "");
    if (names_.insert(name).second) return name;
  }
}

std::string PatternGraph::VectorInitializer(Rewrite* rw, const std::string& base,
                                            const std::vector<float>& v) {
  const std::string name = FreshName(base);
  rw->initializers.emplace_back(
      name, Tensor::FromVector(DType::kFloat32, {static_cast<int64_t>(v.size())}, v));
  return name;
}

bool PerTensorParams(const PatternGraph& g, const Node& n, PerTensor* p) {
  if (n.inputs.size() != 3 || n.inputs[2].empty()) return false;
  const Tensor* s = g.ConstOf(n.inputs[1], DType::kFloat32);
  if (s == nullptr || s->num_elements() != 1 || s->rank() > 1) return false;
  const float v = s->data<float>()[0];
  if (!(v >= 1e-30f && v <= 1e30f)) return false;
  const Tensor* zp = g.Const(n.inputs[2]);
  if (zp == nullptr || !IsQ8(zp->dtype()) || zp->num_elements() != 1 || zp->rank() > 1)
    return false;
  p->scale = v;
  p->zp = zp;
  return true;
}

int QuantizedProducer(const PatternGraph& g, int q_idx, PerTensor* yq) {
  const Node& q = g.node(q_idx);
  int64_t out_dtype = 0;
  if (!IsOp(q, "QuantizeLinear", 3, 3) || !PlainQuantize(q, &out_dtype)) return -1;
  if (!PerTensorParams(g, q, yq)) return -1;
  if (out_dtype != 0 && out_dtype != static_cast<int64_t>(yq->zp->dtype())) return -1;
  if (!g.SingleUse(q.inputs[0])) return -1;
  return g.AnyProducer(q.inputs[0]);
}

}  // namespace simplecpp::graph::passes::quant_fusion
