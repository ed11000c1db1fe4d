// Round trips through the ModelProto writer (simplecpp/onnx/model_writer.cc): a model holding
// every attribute kind, every dtype, every type kind, subgraphs, functions and metadata must read
// back equal, and writing it again must give the same bytes.
#include "simplecpp/onnx/model_writer.h"

#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/onnx/model_reader.h"
#include "tests/simplecpp/onnx/onnx_test_util.h"

namespace simplecpp::onnx {
namespace {

using graph::AttrKind;
using Kind = graph::TypeInfo::Kind;
using testing::PatternTensor;

graph::Model RoundTrip(const graph::Model& m) {
  const std::string bytes = WriteModel(m);
  return ReadModel(bytes.data(), bytes.size(), ReadOptions(), nullptr);
}

graph::TypeInfo TensorType(DType dtype, std::vector<graph::Dim> dims, bool has_shape = true) {
  graph::TypeInfo t;
  t.kind = Kind::kTensor;
  t.dtype = dtype;
  t.has_shape = has_shape;
  t.dims = std::move(dims);
  return t;
}

graph::TypeInfo Wrap(Kind kind, const graph::TypeInfo& elem, DType key = DType::kUndefined) {
  graph::TypeInfo t;
  t.kind = kind;
  t.dtype = key;
  t.elem = std::make_shared<graph::TypeInfo>(elem);
  return t;
}

graph::Attribute Attr(const std::string& name, AttrKind kind) {
  graph::Attribute a;
  a.name = name;
  a.kind = kind;
  return a;
}

std::shared_ptr<graph::Graph> Body(const std::string& name) {
  auto g = std::make_shared<graph::Graph>();
  g->name = name;
  g->doc = "body of " + name;
  graph::Node n;
  n.op_type = "Identity";
  n.inputs = {"outer_value"};
  n.outputs = {name + "_out"};
  g->nodes.push_back(n);
  g->outputs.push_back({name + "_out", TensorType(DType::kFloat32, {}), ""});
  g->initializers.emplace_back(name + "_c", PatternTensor(DType::kInt32, {3}));
  return g;
}

graph::Model FullModel() {
  graph::Model m;
  m.ir_version = 10;
  m.opsets = {{"", 21}, {"com.microsoft", 1}, {"local", 1}};
  m.producer_name = "writer-test";
  m.producer_version = "1.2.3";
  m.domain = "org.example";
  m.model_version = 42;
  m.doc = "a model with everything";
  m.metadata = {{"author", "me"}, {"empty", ""}, {"k", "v"}};

  graph::Graph& g = m.graph;
  g.name = "main";
  g.doc = "main graph";
  // One initializer per dtype, odd sizes for the sub-byte ones.
  for (int n = 1; n <= 26; ++n) {
    const DType dtype = static_cast<DType>(n);
    g.initializers.emplace_back("init_" + DTypeName(dtype), PatternTensor(dtype, {3, 3}, n));
  }
  g.initializers.emplace_back("scalar", PatternTensor(DType::kFloat32, {}));
  g.initializers.emplace_back("empty", PatternTensor(DType::kInt64, {0, 4}));

  g.inputs.push_back({"x", TensorType(DType::kFloat32, {{-1, "batch"}, {3, ""}, {-1, ""}}), "input x"});
  g.inputs.push_back({"unranked", TensorType(DType::kInt64, {}, false), ""});
  g.inputs.push_back({"scalar_in", TensorType(DType::kBool, {}, true), ""});
  g.inputs.push_back({"no_type", graph::TypeInfo(), ""});
  g.inputs.push_back({"seq", Wrap(Kind::kSequence, TensorType(DType::kFloat16, {{2, ""}})), ""});
  g.inputs.push_back({"opt", Wrap(Kind::kOptional, Wrap(Kind::kSequence, TensorType(DType::kUndefined, {}, false))), ""});
  g.inputs.push_back({"map", Wrap(Kind::kMap, TensorType(DType::kFloat32, {}), DType::kString), ""});
  graph::TypeInfo sparse = TensorType(DType::kFloat32, {{4, ""}, {5, ""}});
  sparse.kind = Kind::kSparseTensor;
  g.inputs.push_back({"sparse", sparse, ""});
  g.inputs.push_back({"seq_unknown_elem", [] { graph::TypeInfo t; t.kind = Kind::kSequence; return t; }(), ""});
  g.outputs.push_back({"y", TensorType(DType::kFloat32, {{-1, "batch"}}), ""});
  g.value_info.push_back({"mid", TensorType(DType::kFloat32, {{0, ""}}), "intermediate"});

  graph::Node n;
  n.name = "everything";
  n.op_type = "Custom";
  n.domain = "local";
  n.doc = "node doc";
  n.inputs = {"x", "", "init_float32"};
  n.outputs = {"y", ""};
  {
    graph::Attribute a = Attr("f", AttrKind::kFloat);
    a.f = -0.0f;
    n.attributes.push_back(a);
    a = Attr("f_nan", AttrKind::kFloat);
    a.f = std::numeric_limits<float>::quiet_NaN();
    n.attributes.push_back(a);
    a = Attr("f_zero", AttrKind::kFloat);
    n.attributes.push_back(a);
    a = Attr("i", AttrKind::kInt);
    a.i = std::numeric_limits<int64_t>::min();
    n.attributes.push_back(a);
    a = Attr("i_zero", AttrKind::kInt);
    n.attributes.push_back(a);
    a = Attr("s", AttrKind::kString);
    a.s = std::string("bytes\0with nul", 14);
    n.attributes.push_back(a);
    a = Attr("s_empty", AttrKind::kString);
    n.attributes.push_back(a);
    a = Attr("t", AttrKind::kTensor);
    a.t = PatternTensor(DType::kFloat64, {2, 2});
    n.attributes.push_back(a);
    a = Attr("t_str", AttrKind::kTensor);
    a.t = PatternTensor(DType::kString, {3});
    n.attributes.push_back(a);
    a = Attr("g", AttrKind::kGraph);
    a.g = Body("then");
    n.attributes.push_back(a);
    a = Attr("g_empty", AttrKind::kGraph);
    a.g = std::make_shared<graph::Graph>();
    n.attributes.push_back(a);
    a = Attr("floats", AttrKind::kFloats);
    a.floats = {1.0f, -2.5f, std::numeric_limits<float>::infinity()};
    n.attributes.push_back(a);
    a = Attr("floats_empty", AttrKind::kFloats);
    n.attributes.push_back(a);
    a = Attr("ints", AttrKind::kInts);
    a.ints = {0, -1, 1LL << 40};
    n.attributes.push_back(a);
    a = Attr("strings", AttrKind::kStrings);
    a.strings = {"a", "", "ccc"};
    n.attributes.push_back(a);
    a = Attr("tensors", AttrKind::kTensors);
    a.tensors = {PatternTensor(DType::kInt8, {4}), PatternTensor(DType::kInt4, {5}),
                 PatternTensor(DType::kBFloat16, {})};
    n.attributes.push_back(a);
    a = Attr("graphs", AttrKind::kGraphs);
    a.graphs = {Body("b0"), Body("b1")};
    n.attributes.push_back(a);
    a = Attr("sparse", AttrKind::kSparseTensor);
    a.t = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {0, 1, 0, -0.0f, 0, 2});
    n.attributes.push_back(a);
    a = Attr("sparse_all_zero", AttrKind::kSparseTensor);
    a.t = Tensor(DType::kInt32, {4});
    n.attributes.push_back(a);
    a = Attr("sparse_list", AttrKind::kSparseTensors);
    a.tensors = {Tensor::FromVector<int64_t>(DType::kInt64, {3}, {0, 5, 0}), PatternTensor(DType::kUInt4, {7}),
                 PatternTensor(DType::kString, {2})};
    a.tensors[2].strings()[0] = "";
    n.attributes.push_back(a);
    a = Attr("tp", AttrKind::kTypeProto);
    a.types = {TensorType(DType::kInt64, {{5, ""}})};
    n.attributes.push_back(a);
    a = Attr("tps", AttrKind::kTypeProtos);
    a.types = {TensorType(DType::kUInt8, {}), Wrap(Kind::kSequence, TensorType(DType::kFloat32, {}, false))};
    n.attributes.push_back(a);
  }
  g.nodes.push_back(n);
  graph::Node plain;
  plain.op_type = "Relu";
  plain.inputs = {"y"};
  plain.outputs = {"z"};
  g.nodes.push_back(plain);

  graph::Function fn;
  fn.name = "MyFn";
  fn.domain = "local";
  fn.inputs = {"a", "b"};
  fn.outputs = {"c"};
  fn.attribute_names = {"alpha"};
  graph::Attribute beta = Attr("beta", AttrKind::kFloat);
  beta.f = 0.25f;
  fn.attribute_defaults = {beta};
  fn.opsets = {{"", 18}};
  graph::Node body_node;
  body_node.op_type = "LeakyRelu";
  body_node.inputs = {"a"};
  body_node.outputs = {"c"};
  graph::Attribute ref = Attr("alpha", AttrKind::kFloat);
  ref.ref_attr_name = "alpha";
  body_node.attributes.push_back(ref);
  graph::Attribute ref_t = Attr("value", AttrKind::kTensor);
  ref_t.ref_attr_name = "outer_tensor";
  body_node.attributes.push_back(ref_t);
  fn.nodes.push_back(body_node);
  m.functions.push_back(fn);
  return m;
}

TEST_CASE("WriteModel -> ReadModel round trip is lossless") {
  const graph::Model m = FullModel();
  const graph::Model back = RoundTrip(m);
  CHECK(testing::Diff(m, back) == "");
  // Sparse attributes come back dense.
  const graph::Attribute* sparse = back.graph.nodes[0].FindAttribute("sparse");
  REQUIRE(sparse != nullptr);
  CHECK(sparse->kind == AttrKind::kSparseTensor);
  CHECK(sparse->t.dims() == Dims{2, 3});
  // Writing the model read back gives the same bytes.
  CHECK(WriteModel(back) == WriteModel(m));
}

TEST_CASE("WriteModel round trips every attribute kind on its own") {
  const graph::Model full = FullModel();
  for (const graph::Attribute& a : full.graph.nodes[0].attributes) {
    CAPTURE(a.name);
    graph::Model m;
    m.ir_version = 9;
    m.opsets = {{"", 17}};
    graph::Node n;
    n.op_type = "Op";
    n.attributes = {a};
    m.graph.nodes.push_back(n);
    CHECK(testing::Diff(m, RoundTrip(m)) == "");
  }
}

TEST_CASE("WriteModel round trips every dtype as an initializer and a TENSOR attribute") {
  for (int k = 1; k <= 26; ++k) {
    const DType dtype = static_cast<DType>(k);
    CAPTURE(DTypeName(dtype));
    for (const Dims& dims : {Dims{}, Dims{1}, Dims{7}, Dims{2, 0}, Dims{4, 5}}) {
      graph::Model m;
      m.ir_version = 9;
      m.opsets = {{"", 17}};
      m.graph.initializers.emplace_back("t", PatternTensor(dtype, dims, k));
      graph::Node n;
      n.op_type = "Constant";
      graph::Attribute a = Attr("value", AttrKind::kTensor);
      a.t = PatternTensor(dtype, dims, k + 1);
      n.attributes.push_back(a);
      graph::Attribute s = Attr("sparse_value", AttrKind::kSparseTensor);
      s.t = PatternTensor(dtype, dims, k + 2);
      n.attributes.push_back(s);
      m.graph.nodes.push_back(n);
      CHECK(testing::Diff(m, RoundTrip(m)) == "");
    }
  }
}

TEST_CASE("WriteModel refuses what it cannot write") {
  graph::Model m;
  m.ir_version = 9;
  graph::Node n;
  n.op_type = "Op";
  n.attributes.push_back(Attr("undefined", AttrKind::kUndefined));
  m.graph.nodes.push_back(n);
  CHECK_THROWS_AS(WriteModel(m), Error);
  graph::Model m2;
  m2.graph.initializers.emplace_back("t", Tensor());
  CHECK_THROWS_AS(WriteModel(m2), Error);
}

TEST_CASE("WriteModelFile and ReadModelFile") {
  testing::TempDir dir;
  const graph::Model m = FullModel();
  WriteModelFile(dir.Join("full.onnx"), m);
  CHECK(testing::Diff(m, ReadModelFile(dir.Join("full.onnx"))) == "");
  CHECK_THROWS_AS(WriteModelFile(dir.Join("no/such/dir/x.onnx"), m), Error);
}

}  // namespace
}  // namespace simplecpp::onnx
