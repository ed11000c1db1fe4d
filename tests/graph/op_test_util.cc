// RunNode: one node through Plan::Build + Executor::Run (tests/graph/op_test_util.h).
#include "graph/op_test_util.h"

#include <algorithm>

#include "graph/executor.h"
#include "graph/thread_pool.h"

namespace simplecpp::testing {

std::vector<Tensor> RunNode(const std::string& op_type, const std::vector<Tensor>& inputs,
                            const std::vector<graph::Attribute>& attributes,
                            const RunNodeOptions& options) {
  graph::Graph g;
  g.name = "test_" + op_type;
  graph::Node node;
  node.name = op_type + "_under_test";
  node.op_type = op_type;
  node.domain = options.domain;
  node.attributes = attributes;
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      node.inputs.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    node.inputs.push_back(name);
    const bool constant = std::find(options.constant_inputs.begin(), options.constant_inputs.end(),
                                    static_cast<int>(i)) != options.constant_inputs.end();
    if (constant) {
      g.initializers.emplace_back(name, inputs[i]);
    } else {
      graph::ValueInfo vi;
      vi.name = name;
      vi.type.kind = graph::TypeInfo::Kind::kTensor;
      vi.type.dtype = inputs[i].dtype();
      vi.type.has_shape = true;
      for (int64_t d : inputs[i].dims()) vi.type.dims.push_back(graph::Dim{d, ""});
      g.inputs.push_back(vi);
      feeds[name] = inputs[i];
    }
  }
  for (int i = 0; i < options.num_outputs; ++i) {
    if (std::find(options.omitted_outputs.begin(), options.omitted_outputs.end(), i) !=
        options.omitted_outputs.end()) {
      node.outputs.push_back("");
      continue;
    }
    const std::string name = "out" + std::to_string(i);
    node.outputs.push_back(name);
    graph::ValueInfo vi;
    vi.name = name;
    g.outputs.push_back(vi);
  }
  g.nodes.push_back(node);
  graph::OpsetMap opsets{{graph::CanonicalDomain(options.domain), options.opset}};
  if (!options.domain.empty()) opsets[""] = 18;
  graph::PlanOptions plan_options;
  plan_options.constant_folding = false;  // exercise the run-time path, not load-time folding
  auto plan = graph::Plan::Build(g, opsets, plan_options);
  auto pool = graph::MakeThreadPool(options.threads);
  graph::Executor executor(plan, pool.get());
  return executor.Run(feeds);
}

namespace {
graph::Attribute Attr(const std::string& name, graph::AttrKind kind) {
  graph::Attribute a;
  a.name = name;
  a.kind = kind;
  return a;
}
}  // namespace

graph::Attribute AttrInt(const std::string& name, int64_t v) {
  auto a = Attr(name, graph::AttrKind::kInt);
  a.i = v;
  return a;
}
graph::Attribute AttrFloat(const std::string& name, float v) {
  auto a = Attr(name, graph::AttrKind::kFloat);
  a.f = v;
  return a;
}
graph::Attribute AttrString(const std::string& name, const std::string& v) {
  auto a = Attr(name, graph::AttrKind::kString);
  a.s = v;
  return a;
}
graph::Attribute AttrInts(const std::string& name, std::vector<int64_t> v) {
  auto a = Attr(name, graph::AttrKind::kInts);
  a.ints = std::move(v);
  return a;
}
graph::Attribute AttrFloats(const std::string& name, std::vector<float> v) {
  auto a = Attr(name, graph::AttrKind::kFloats);
  a.floats = std::move(v);
  return a;
}
graph::Attribute AttrTensor(const std::string& name, const Tensor& v) {
  auto a = Attr(name, graph::AttrKind::kTensor);
  a.t = v;
  return a;
}

Tensor F32(Dims dims, std::vector<float> values) {
  return Tensor::FromVector(DType::kFloat32, std::move(dims), values);
}
Tensor I64(Dims dims, std::vector<int64_t> values) {
  return Tensor::FromVector(DType::kInt64, std::move(dims), values);
}
Tensor I32(Dims dims, std::vector<int32_t> values) {
  return Tensor::FromVector(DType::kInt32, std::move(dims), values);
}
Tensor Bool(Dims dims, std::vector<bool> values) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  return Tensor::FromVector(DType::kBool, std::move(dims), bytes);
}
Tensor RandomF32(Dims dims, uint32_t seed, float lo, float hi) {
  Tensor t(DType::kFloat32, std::move(dims));
  uint32_t state = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    state = state * 1664525u + 1013904223u;
    const float unit = static_cast<float>(state >> 8) / 16777216.0f;
    t.data<float>()[i] = lo + (hi - lo) * unit;
  }
  return t;
}

}  // namespace simplecpp::testing
