// Helpers shared by the built-in model builders (builtin_models.cc, builtin_<kind>.cc): attribute
// constructors, value infos, and a Builder that appends nodes and deterministic weights to a graph.
// Internal to simplecpp/api (and the tests that rebuild the models).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/tensor.h"

namespace simplecpp::builtin::detail {

inline graph::Attribute AttrInt(const std::string& name, int64_t v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kInt;
  a.i = v;
  return a;
}

inline graph::Attribute AttrFloat(const std::string& name, float v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kFloat;
  a.f = v;
  return a;
}

inline graph::Attribute AttrInts(const std::string& name, std::vector<int64_t> v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kInts;
  a.ints = std::move(v);
  return a;
}

inline graph::Attribute AttrString(const std::string& name, const std::string& v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kString;
  a.s = v;
  return a;
}

inline graph::Attribute AttrStrings(const std::string& name, std::vector<std::string> v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kStrings;
  a.strings = std::move(v);
  return a;
}

inline graph::Attribute AttrGraph(const std::string& name, graph::Graph g) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kGraph;
  a.g = std::make_shared<graph::Graph>(std::move(g));
  return a;
}

// A tensor value info; dims < 0 are unknown.
inline graph::ValueInfo TensorValue(const std::string& name, const Dims& dims,
                                    DType dtype = DType::kFloat32) {
  graph::ValueInfo v;
  v.name = name;
  v.type.kind = graph::TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(graph::Dim{d, ""});
  return v;
}

inline graph::Model NewModel(const std::string& graph_name, const std::string& doc, int64_t opset) {
  graph::Model m;
  // The IR version that goes with the opset (ONNX versioning table).
  m.ir_version = opset <= 9 ? 4 : opset <= 10 ? 5 : opset <= 11 ? 6 : opset <= 14 ? 7 : 8;
  m.opsets.push_back(graph::OpsetImport{"", opset});
  m.producer_name = "simplecpp";
  m.producer_version = "builtin";
  m.doc = doc;
  m.graph.name = graph_name;
  return m;
}

// Appends nodes and initializers to a graph; every weight gets its own seed from one stream.
class Builder {
 public:
  Builder(graph::Graph* g, uint64_t seed) : g_(g), rng_(seed) {}

  // A float weight of `dims`, uniform in [-scale, scale).
  std::string Weight(const std::string& name, const Dims& dims, float scale) {
    return Initializer(name, RandomFloatTensor(dims, rng_.Next(), -scale, scale));
  }
  // A weight scaled by 1/sqrt(fan_in).
  std::string FanInWeight(const std::string& name, const Dims& dims, int64_t fan_in) {
    return Weight(name, dims, 1.0f / std::sqrt(static_cast<float>(fan_in)));
  }
  // A float weight uniform in [lo, hi) (BatchNorm variances, LayerNorm gains).
  std::string WeightRange(const std::string& name, const Dims& dims, float lo, float hi) {
    return Initializer(name, RandomFloatTensor(dims, rng_.Next(), lo, hi));
  }
  std::string Scalar(const std::string& name, float value) {
    return Initializer(name, Tensor::FromVector<float>(DType::kFloat32, {}, {value}));
  }
  std::string Floats(const std::string& name, const Dims& dims, std::vector<float> v) {
    return Initializer(name, Tensor::FromVector<float>(DType::kFloat32, dims, v));
  }
  std::string Int64s(const std::string& name, const Dims& dims, std::vector<int64_t> v) {
    return Initializer(name, Tensor::FromVector<int64_t>(DType::kInt64, dims, v));
  }
  // A 1-D int64 tensor (Reshape shapes, axes, slice bounds).
  std::string Shape(const std::string& name, std::vector<int64_t> dims) {
    const int64_t n = static_cast<int64_t>(dims.size());
    return Int64s(name, {n}, std::move(dims));
  }
  std::string Initializer(const std::string& name, Tensor t) {
    g_->initializers.emplace_back(name, std::move(t));
    return name;
  }

  // Adds a one-output node; the output is named after the node.
  std::string Op(const std::string& op_type, const std::string& name,
                 std::vector<std::string> inputs, std::vector<graph::Attribute> attributes = {}) {
    return OpN(op_type, name, std::move(inputs), {name}, std::move(attributes))[0];
  }
  // Adds a node with the given outputs ("" for omitted ones) and returns them.
  std::vector<std::string> OpN(const std::string& op_type, const std::string& name,
                               std::vector<std::string> inputs, std::vector<std::string> outputs,
                               std::vector<graph::Attribute> attributes = {}) {
    graph::Node n;
    n.name = name;
    n.op_type = op_type;
    n.inputs = std::move(inputs);
    n.outputs = outputs;
    n.attributes = std::move(attributes);
    g_->nodes.push_back(std::move(n));
    return outputs;
  }

  Random& rng() { return rng_; }
  graph::Graph* graph() { return g_; }

 private:
  graph::Graph* g_;
  Random rng_;
};

}  // namespace simplecpp::builtin::detail
