// Constant nodes -> initializers (constant_initializers.h). A Constant's output and an initializer
// of the same name are the same value to every consumer, so the rewrite changes no result; it only
// lets the quantizers and the float16 converter find weights (and keep float-only inputs float32)
// without asking "initializer or Constant?" at each place they look.
#include "simplecpp/convert/constant_initializers.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/convert/convert_util.h"

namespace simplecpp::convert::detail {

namespace {

// The tensor a Constant node holds, or an undefined tensor when it holds none of the dense
// numeric forms (string values and sparse tensors stay nodes).
Tensor ConstantValue(const graph::Node& n) {
  if (n.attributes.size() != 1) return Tensor();
  const graph::Attribute& a = n.attributes[0];
  if (a.name == "value" && a.kind == graph::AttrKind::kTensor && a.t.defined() &&
      a.t.dtype() != DType::kString) {
    return a.t;
  }
  if (a.name == "value_float" && a.kind == graph::AttrKind::kFloat) {
    return Tensor::FromVector<float>(DType::kFloat32, {}, {a.f});
  }
  if (a.name == "value_floats" && a.kind == graph::AttrKind::kFloats) {
    return Tensor::FromVector<float>(DType::kFloat32, {static_cast<int64_t>(a.floats.size())},
                                     a.floats);
  }
  if (a.name == "value_int" && a.kind == graph::AttrKind::kInt) {
    return Tensor::FromVector<int64_t>(DType::kInt64, {}, {a.i});
  }
  if (a.name == "value_ints" && a.kind == graph::AttrKind::kInts) {
    return Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(a.ints.size())},
                                       a.ints);
  }
  return Tensor();
}

void ConvertSubgraphs(graph::Node* n) {
  for (graph::Attribute& a : n->attributes) {
    if (a.kind == graph::AttrKind::kGraph && a.g) {
      auto sub = std::make_shared<graph::Graph>(*a.g);
      ConstantsToInitializers(sub.get());
      a.g = sub;
    }
    for (auto& sg : a.graphs) {
      auto sub = std::make_shared<graph::Graph>(*sg);
      ConstantsToInitializers(sub.get());
      sg = sub;
    }
  }
}

}  // namespace

int ConstantsToInitializers(graph::Graph* g, bool list_as_inputs) {
  std::set<std::string> graph_outputs;
  for (const graph::ValueInfo& v : g->outputs) graph_outputs.insert(v.name);
  std::vector<graph::Node> kept;
  int moved = 0;
  for (graph::Node& n : g->nodes) {
    ConvertSubgraphs(&n);
    const bool candidate = n.op_type == "Constant" && IsDefaultDomain(n.domain) &&
                           n.outputs.size() == 1 && !n.outputs[0].empty() &&
                           !graph_outputs.count(n.outputs[0]) &&
                           FindInitializerIndex(*g, n.outputs[0]) < 0;
    Tensor value = candidate ? ConstantValue(n) : Tensor();
    if (!value.defined()) {
      kept.push_back(std::move(n));
      continue;
    }
    if (list_as_inputs) {
      graph::ValueInfo v;
      v.name = n.outputs[0];
      v.type.kind = graph::TypeInfo::Kind::kTensor;
      v.type.dtype = value.dtype();
      v.type.has_shape = true;
      for (int64_t d : value.dims()) v.type.dims.push_back(graph::Dim{d, ""});
      g->inputs.push_back(std::move(v));
    }
    g->initializers.emplace_back(n.outputs[0], std::move(value));
    ++moved;
  }
  g->nodes = std::move(kept);
  return moved;
}

}  // namespace simplecpp::convert::detail
