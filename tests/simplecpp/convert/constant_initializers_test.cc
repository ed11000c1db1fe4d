// Constant nodes -> initializers (simplecpp/convert/constant_initializers.cc): each dense value
// form moves, graph-output and string Constants stay, and the model computes the same.
#include "simplecpp/convert/constant_initializers.h"

#include <doctest/doctest.h>

#include <string>

#include "simplecpp/api/builtin_builder.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using builtin::detail::AttrFloat;
using builtin::detail::AttrInt;
using builtin::detail::AttrInts;
using builtin::detail::AttrStrings;
using builtin::detail::Builder;
using builtin::detail::NewModel;
using builtin::detail::TensorValue;
using convert_test::CountOp;
using convert_test::MaxAbsDiff;
using convert_test::RunModel;

graph::Attribute TensorAttr(const std::string& name, Tensor t) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kTensor;
  a.t = std::move(t);
  return a;
}

TEST_CASE("Constant nodes become initializers") {
  graph::Model m = NewModel("constants", "", 13);
  graph::Graph& g = m.graph;
  Builder b(&g, 1);
  g.inputs.push_back(TensorValue("x", {2, 3}));
  const std::string w = b.Op("Constant", "w", {},
                             {TensorAttr("value", builtin::RandomFloatTensor({2, 3}, 5, -1, 1))});
  const std::string f = b.Op("Constant", "f", {}, {AttrFloat("value_float", 0.5f)});
  graph::Attribute fs;
  fs.name = "value_floats";
  fs.kind = graph::AttrKind::kFloats;
  fs.floats = {1.0f, 2.0f, 3.0f};
  const std::string v = b.Op("Constant", "v", {}, {fs});
  const std::string shape = b.Op("Constant", "shape", {}, {AttrInts("value_ints", {3, 2})});
  const std::string one = b.Op("Constant", "one", {}, {AttrInt("value_int", 1)});
  b.Op("Constant", "names", {}, {AttrStrings("value_strings", {"a", "b"})});
  b.Op("Constant", "out_c", {}, {AttrFloat("value_float", 7.0f)});  // a graph output: stays a node
  const std::string y = b.Op("Add", "y", {b.Op("Mul", "m", {b.Op("Add", "a", {"x", w}), f}), v});
  const std::string r = b.Op("Reshape", "r", {y, shape});
  b.Op("Gather", "gather", {r, one});
  g.outputs.push_back(TensorValue("gather", {2}));
  g.outputs.push_back(TensorValue("out_c", {}));

  graph::Model c = m;
  CHECK(convert::detail::ConstantsToInitializers(&c.graph) == 5);
  CHECK(CountOp(c.graph, "Constant") == 2);  // the strings and the graph output
  CHECK(c.graph.FindInitializer("w") != nullptr);
  CHECK(c.graph.FindInitializer("f")->dtype() == DType::kFloat32);
  CHECK(c.graph.FindInitializer("f")->rank() == 0);
  CHECK(c.graph.FindInitializer("v")->dim(0) == 3);
  CHECK(c.graph.FindInitializer("shape")->dtype() == DType::kInt64);
  CHECK(c.graph.FindInitializer("one")->rank() == 0);
  CHECK(c.graph.FindInitializer("out_c") == nullptr);
  const Tensor x = builtin::RandomFloatTensor({2, 3}, 9, -1, 1);
  const auto want = RunModel(m, {{"x", x}});
  const auto got = RunModel(c, {{"x", x}});
  CHECK(MaxAbsDiff(got.at("gather"), want.at("gather")) == 0.0);
  CHECK(MaxAbsDiff(got.at("out_c"), want.at("out_c")) == 0.0);
}

}  // namespace
}  // namespace simplecpp
