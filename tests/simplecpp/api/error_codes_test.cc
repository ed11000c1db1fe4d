// Every simplecpp::ErrorCode is reachable and carries a useful message: one real trigger per code
// (the examples in tests/fuzz/ERRORS.md come from running this with -s).
#include <doctest/doctest.h>

#include <string>

#include "graph/executor.h"
#include "graph/ir.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace {

using namespace simplecpp;

graph::ValueInfo TensorInfo(const std::string& name, DType dtype, std::vector<int64_t> dims) {
  graph::ValueInfo v;
  v.name = name;
  v.type.kind = graph::TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  for (int64_t d : dims) {
    graph::Dim dim;
    dim.value = d;
    v.type.dims.push_back(dim);
  }
  return v;
}

graph::Model OneNode(const std::string& op, std::vector<graph::ValueInfo> inputs,
                     std::vector<std::string> node_inputs) {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 17});
  m.graph.name = "g";
  m.graph.inputs = std::move(inputs);
  graph::Node n;
  n.name = op + "_1";
  n.op_type = op;
  n.inputs = std::move(node_inputs);
  n.outputs = {"y"};
  m.graph.nodes.push_back(n);
  graph::ValueInfo y;
  y.name = "y";
  m.graph.outputs.push_back(y);
  return m;
}

Model LoadModel(const graph::Model& m, const Limits& limits = {}) {
  const std::string bytes = onnx::WriteModel(m);
  LoadOptions o;
  o.limits = limits;
  return Model::LoadFromBytes(bytes.data(), bytes.size(), o);
}

template <typename Fn>
void Expect(ErrorCode code, Fn&& fn) {
  try {
    fn();
    FAIL("no error");
  } catch (const Error& e) {
    MESSAGE("code " << static_cast<int>(e.code()) << ": " << e.what());
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).size() > 10);
  }
}

}  // namespace

TEST_CASE("ErrorCode examples: each code is reachable with a descriptive message") {
  const graph::Model relu = OneNode("Relu", {TensorInfo("x", DType::kFloat32, {2, 3})}, {"x"});
  SUBCASE("kInvalidArgument") {
    Session s(LoadModel(relu));
    Expect(ErrorCode::kInvalidArgument,
           [&] { s.Run({{"x", Tensor(DType::kFloat32, {3, 2})}}); });
  }
  SUBCASE("kInvalidModel") {
    const std::string bytes = "\x0a\xff\xff\xff\x0f garbage";
    Expect(ErrorCode::kInvalidModel, [&] { Model::LoadFromBytes(bytes.data(), bytes.size()); });
  }
  SUBCASE("kUnsupported") {
    Expect(ErrorCode::kUnsupported, [&] {
      LoadModel(OneNode("FancyNewOp", {TensorInfo("x", DType::kFloat32, {2})}, {"x"}));
    });
  }
  SUBCASE("kRuntime") {
    // Gather with a data-dependent index that is out of range.
    Session s(LoadModel(OneNode("Gather",
                                {TensorInfo("x", DType::kFloat32, {2, 3}),
                                 TensorInfo("i", DType::kInt64, {1})},
                                {"x", "i"})));
    Expect(ErrorCode::kRuntime, [&] {
      s.Run({{"x", Tensor(DType::kFloat32, {2, 3})},
             {"i", Tensor::FromVector<int64_t>(DType::kInt64, {1}, {7})}});
    });
  }
  SUBCASE("kLimitExceeded") {
    Limits l;
    l.max_tensor_elements = 4;
    Expect(ErrorCode::kLimitExceeded, [&] { LoadModel(relu, l); });
  }
  SUBCASE("kIo") {
    Expect(ErrorCode::kIo, [&] { Model::Load("/nonexistent/model.onnx"); });
  }
  SUBCASE("kInternal") {
    // Only a bug inside the library raises kInternal; the executor's own consistency checks are
    // the easiest to reach directly: a subgraph plan run without its enclosing graph's values.
    graph::Graph body;
    body.name = "body";
    graph::Node n;
    n.op_type = "Relu";
    n.inputs = {"outer_x"};
    n.outputs = {"y"};
    body.nodes.push_back(n);
    graph::ValueInfo y;
    y.name = "y";
    body.outputs.push_back(y);
    auto plan = graph::Plan::Build(body, {{"", 17}}, graph::PlanOptions(),
                                   {{"outer_x", graph::ValueType::TensorOf(DType::kFloat32)}}, 1);
    graph::Executor exec(plan);
    Expect(ErrorCode::kInternal, [&] { exec.Run({}); });
  }
}
