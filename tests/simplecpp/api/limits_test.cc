// simplecpp::Limits: every limit is enforced, at load where the size is known then and at run time
// otherwise, with Error(kLimitExceeded) naming the limit and its value.
#include "simplecpp/simplecpp.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "graph/graph_builder_util.h"
#include "graph/ir.h"
#include "simplecpp/onnx/model_writer.h"

namespace {

using namespace simplecpp;

using graph::test_graph::In;
using graph::test_graph::NamedNode;

std::string Serialize(graph::Graph g) {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 17});
  m.graph = std::move(g);
  return onnx::WriteModel(m);
}

// y = Relu(x) for x float32 [2, dim] (dim -1: symbolic, so sizes are known only at run time).
std::string ReluModel(int64_t dim) {
  graph::Graph g;
  g.name = "relu";
  g.inputs.push_back(In("x", DType::kFloat32, {2, dim}));
  g.outputs.push_back(In("y", DType::kFloat32, {}));
  g.outputs.back().type.has_shape = false;
  g.nodes.push_back(NamedNode("Relu_1", "Relu", {"x"}, {"y"}));
  return Serialize(std::move(g));
}

// y = Expand(x, shape) with shape a graph input: the output size is data-dependent.
std::string ExpandModel() {
  graph::Graph g;
  g.name = "expand";
  g.inputs.push_back(In("x", DType::kFloat32, {1}));
  g.inputs.push_back(In("shape", DType::kInt64, {1}));
  g.outputs.push_back(In("y", DType::kFloat32, {-1}));
  g.nodes.push_back(NamedNode("Expand_7", "Expand", {"x", "shape"}, {"y"}));
  return Serialize(std::move(g));
}

// Nested Ifs, `levels` deep, each branch an Identity of x (float32 [2]).
std::shared_ptr<graph::Graph> Branch(int levels, const std::string& tag) {
  auto g = std::make_shared<graph::Graph>();
  g->name = "branch_" + tag;
  const std::string out = "out_" + tag;
  if (levels == 0) {
    g->nodes.push_back(NamedNode("id_" + tag, "Identity", {"x"}, {out}));
  } else {
    graph::Node n = NamedNode("if_" + tag, "If", {"c"}, {out});
    for (const char* attr : {"then_branch", "else_branch"}) {
      graph::Attribute a;
      a.name = attr;
      a.kind = graph::AttrKind::kGraph;
      a.g = Branch(levels - 1, tag + attr[0]);
      n.attributes.push_back(a);
    }
    g->nodes.push_back(n);
  }
  g->outputs.push_back(In(out, DType::kFloat32, {2}));
  return g;
}

std::string NestedIfModel(int levels) {
  graph::Graph g = *Branch(levels, "r");
  g.inputs.push_back(In("c", DType::kBool, {}));
  g.inputs.push_back(In("x", DType::kFloat32, {2}));
  return Serialize(std::move(g));
}

// A Loop with trip count M (graph input, int64 scalar) and no condition input, carrying a
// float32 [1] value through an Identity body.
std::string LoopModel() {
  auto body = std::make_shared<graph::Graph>();
  body->name = "body";
  body->inputs.push_back(In("i", DType::kInt64, {}));
  body->inputs.push_back(In("c_in", DType::kBool, {}));
  body->inputs.push_back(In("v_in", DType::kFloat32, {1}));
  body->nodes.push_back(NamedNode("c_id", "Identity", {"c_in"}, {"c_out"}));
  body->nodes.push_back(NamedNode("v_id", "Identity", {"v_in"}, {"v_out"}));
  body->outputs.push_back(In("c_out", DType::kBool, {}));
  body->outputs.push_back(In("v_out", DType::kFloat32, {1}));
  graph::Graph g;
  g.name = "loop";
  g.inputs.push_back(In("m", DType::kInt64, {}));
  g.inputs.push_back(In("v", DType::kFloat32, {1}));
  graph::Node loop = NamedNode("Loop_3", "Loop", {"m", "", "v"}, {"v_final"});
  graph::Attribute a;
  a.name = "body";
  a.kind = graph::AttrKind::kGraph;
  a.g = body;
  loop.attributes.push_back(a);
  g.nodes.push_back(loop);
  g.outputs.push_back(In("v_final", DType::kFloat32, {1}));
  return Serialize(std::move(g));
}

Model Load(const std::string& bytes, const Limits& limits) {
  LoadOptions o;
  o.limits = limits;
  return Model::LoadFromBytes(bytes.data(), bytes.size(), o);
}

// Runs `fn`, expecting Error(kLimitExceeded) whose message contains every string of `parts`.
template <typename Fn>
void ExpectLimit(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    FAIL("no limit error");
  } catch (const Error& e) {
    CAPTURE(e.what());
    CHECK(e.code() == ErrorCode::kLimitExceeded);
    for (const std::string& p : parts) CHECK(std::string(e.what()).find(p) != std::string::npos);
  }
}

Tensor Floats(Dims dims) {
  Tensor t(DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i) - 3;
  return t;
}

}  // namespace

TEST_CASE("Limits: max_model_bytes, from bytes and from a file") {
  const std::string bytes = ReluModel(3);
  Limits l;
  l.max_model_bytes = static_cast<int64_t>(bytes.size()) - 1;
  ExpectLimit([&] { Load(bytes, l); },
              {"max_model_bytes=" + std::to_string(bytes.size() - 1), std::to_string(bytes.size())});
  const std::string path = "limits_test_" + std::to_string(::getpid()) + ".onnx";
  { std::ofstream(path, std::ios::binary) << bytes; }
  LoadOptions o;
  o.limits = l;
  ExpectLimit([&] { Model::Load(path, o); }, {"max_model_bytes=", path});
  l.max_model_bytes = static_cast<int64_t>(bytes.size());
  o.limits = l;
  CHECK_NOTHROW(Model::Load(path, o));
  std::remove(path.c_str());
}

TEST_CASE("Limits: max_nodes counts subgraph nodes, max_graph_depth counts nesting") {
  const std::string bytes = NestedIfModel(2);  // If -> 2 Ifs -> 4 Identities: 7 nodes, depth 2
  Limits l;
  l.max_nodes = 7;
  l.max_graph_depth = 2;
  CHECK_NOTHROW(Load(bytes, l));
  l.max_nodes = 6;
  ExpectLimit([&] { Load(bytes, l); }, {"max_nodes=6"});
  l.max_nodes = 7;
  l.max_graph_depth = 1;
  ExpectLimit([&] { Load(bytes, l); }, {"max_graph_depth=1"});
}

TEST_CASE("Limits: initializers over max_tensor_elements / max_tensor_bytes fail at load") {
  graph::Graph g;
  g.name = "init";
  g.inputs.push_back(In("x", DType::kFloat32, {-1}));
  g.outputs.push_back(In("y", DType::kFloat32, {-1}));
  g.initializers.emplace_back("big_w", Floats({10, 10}));
  g.nodes.push_back(NamedNode("Add_1", "Add", {"x", "big_w"}, {"y"}));
  const std::string bytes = Serialize(std::move(g));
  Limits l;
  l.max_tensor_elements = 99;
  ExpectLimit([&] { Load(bytes, l); }, {"initializer 'big_w'", "100 elements", "max_tensor_elements=99"});
  l.max_tensor_elements = 100;
  l.max_tensor_bytes = 399;
  ExpectLimit([&] { Load(bytes, l); }, {"400 bytes", "max_tensor_bytes=399"});
  l.max_tensor_bytes = 400;
  CHECK_NOTHROW(Load(bytes, l));
}

TEST_CASE("Limits: statically known tensor sizes are checked at load") {
  const std::string bytes = ReluModel(50);  // y is [2,50]: 100 elements, 400 bytes
  Limits l;
  l.max_tensor_elements = 99;
  ExpectLimit([&] { Load(bytes, l); },
              {"tensor 'y' of node 'Relu_1'", "100 elements", "max_tensor_elements=99"});
  l.max_tensor_elements = 100;
  l.max_tensor_bytes = 300;
  ExpectLimit([&] { Load(bytes, l); }, {"tensor 'y' of node 'Relu_1'", "400 bytes", "max_tensor_bytes=300"});
}

TEST_CASE("Limits: outputs over max_tensor_elements / max_tensor_bytes fail at run time") {
  const std::string bytes = ExpandModel();
  Limits l;
  l.max_tensor_elements = 1000;
  l.max_tensor_bytes = 1 << 20;
  Model model = Load(bytes, l);
  Session session(model);
  const Tensor x = Floats({1});
  auto shape = [](int64_t n) { return Tensor::FromVector<int64_t>(DType::kInt64, {1}, {n}); };
  CHECK(session.Run({{"x", x}, {"shape", shape(1000)}}).at("y").num_elements() == 1000);
  ExpectLimit([&] { session.Run({{"x", x}, {"shape", shape(1001)}}); },
              {"tensor 'y' of node 'Expand_7'", "1001 elements", "max_tensor_elements=1000"});
  // A shape whose element count overflows int64 is a limit error too, never a wrap-around.
  ExpectLimit([&] { session.Run({{"x", x}, {"shape", shape(int64_t{1} << 62)}}); },
              {"max_tensor_elements=1000"});
  l.max_tensor_elements = int64_t{1} << 40;
  l.max_tensor_bytes = 4000;
  Session session2(Load(bytes, l));
  ExpectLimit([&] { session2.Run({{"x", x}, {"shape", shape(1001)}}); },
              {"tensor 'y' of node 'Expand_7'", "4004 bytes", "max_tensor_bytes=4000"});
  // Still usable after a limit error.
  CHECK(session2.Run({{"x", x}, {"shape", shape(10)}}).at("y").num_elements() == 10);
}

TEST_CASE("Limits: max_total_bytes bounds a run's working memory") {
  const std::string bytes = ReluModel(-1);
  Limits l;
  l.max_total_bytes = 4096;
  Session session(Load(bytes, l));
  CHECK(session.Run({{"x", Floats({2, 16})}}).at("y").num_elements() == 32);
  ExpectLimit([&] { session.Run({{"x", Floats({2, 1024})}}); }, {"max_total_bytes=4096", "8192"});
  CHECK(session.Run({{"x", Floats({2, 16})}}).at("y").num_elements() == 32);
}

TEST_CASE("Limits: max_loop_iterations bounds the iterations of a Loop (fuzz finding loop_huge_trip_count)") {
  Limits l;
  l.max_loop_iterations = 100;
  Session session(Load(LoopModel(), l));
  Tensor m(DType::kInt64, {});
  m.data<int64_t>()[0] = 100;
  CHECK(session.Run({{"m", m}, {"v", Floats({1})}}).at("v_final").data<float>()[0] == -3.0f);
  m.data<int64_t>()[0] = int64_t{1} << 40;  // would spin for hours
  ExpectLimit([&] { session.Run({{"m", m}, {"v", Floats({1})}}); },
              {"Loop_3", "max_loop_iterations=100"});
}

TEST_CASE("Limits: negative values are refused") {
  Limits l;
  l.max_total_bytes = -1;
  const std::string bytes = ReluModel(3);
  try {
    Load(bytes, l);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK(std::string(e.what()).find("max_total_bytes") != std::string::npos);
  }
}
