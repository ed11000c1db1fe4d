// Sequence and optional ops (graph/ops/sequence.cc, optional.cc, SequenceMap in control_flow.cc)
// run through the real executor with Value inputs and outputs, including bad positions and types.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "graph/executor.h"
#include "graph/op_test_util.h"

namespace simplecpp::graph {
namespace {

using simplecpp::testing::AttrInt;
using simplecpp::testing::F32;
using simplecpp::testing::I64;

// One graph input: its declared type and the value fed (undefined Value: omitted input "").
struct In {
  ValueType type;
  Value value;
};
In T(const Tensor& t) { return {ValueType::TensorOf(t.dtype()), t}; }
In S(DType d, std::vector<Tensor> elems) { return {ValueType::SequenceOf(d), Value::Sequence(d, std::move(elems))}; }
In Omitted() { return {ValueType(), Value()}; }

Graph NodeGraph(const std::string& op, const std::vector<In>& inputs, std::vector<Attribute> attrs,
                int num_outputs) {
  Graph g;
  g.name = "one_node";
  Node n;
  n.name = "n";
  n.op_type = op;
  n.attributes = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].type.dtype == DType::kUndefined) {
      n.inputs.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    n.inputs.push_back(name);
    ValueInfo vi;
    vi.name = name;
    vi.type = TypeInfoOf(inputs[i].type);
    g.inputs.push_back(vi);
  }
  for (int k = 0; k < num_outputs; ++k) {
    n.outputs.push_back("out" + std::to_string(k));
    ValueInfo vi;
    vi.name = n.outputs.back();
    g.outputs.push_back(vi);
  }
  g.nodes.push_back(n);
  return g;
}

std::vector<Value> Run(const std::string& op, const std::vector<In>& inputs,
                       std::vector<Attribute> attrs = {}, int opset = 18, int num_outputs = 1) {
  Graph g = NodeGraph(op, inputs, std::move(attrs), num_outputs);
  auto plan = Plan::Build(g, OpsetMap{{"", opset}}, PlanOptions{});
  Executor exec(plan);
  std::map<std::string, Value> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].value.defined() || inputs[i].type.dtype != DType::kUndefined) {
      feeds["in" + std::to_string(i)] = inputs[i].value;
    }
  }
  return exec.RunValues(feeds);
}

std::string RunError(const std::string& op, const std::vector<In>& inputs,
                     std::vector<Attribute> attrs = {}, int opset = 18) {
  try {
    Run(op, inputs, std::move(attrs), opset);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

const Tensor kA = F32({2}, {1, 2});
const Tensor kB = F32({1}, {3});
const Tensor kC = F32({3}, {4, 5, 6});

TEST_CASE("SequenceConstruct, SequenceLength, SequenceAt") {
  auto seq = Run("SequenceConstruct", {T(kA), T(kB), T(kC)});
  REQUIRE(seq[0].is_sequence());
  CHECK(seq[0].dtype() == DType::kFloat32);
  CHECK(seq[0].sequence().size() == 3);
  CHECK(Floats(seq[0].sequence()[2]) == std::vector<float>{4, 5, 6});

  auto len = Run("SequenceLength", {S(DType::kFloat32, {kA, kB, kC})});
  CHECK(len[0].tensor().data<int64_t>()[0] == 3);
  auto at = Run("SequenceAt", {S(DType::kFloat32, {kA, kB, kC}), T(I64({}, {-1}))});
  CHECK(Floats(at[0].tensor()) == std::vector<float>{4, 5, 6});
  at = Run("SequenceAt", {S(DType::kFloat32, {kA, kB, kC}), T(I64({}, {1}))});
  CHECK(Floats(at[0].tensor()) == std::vector<float>{3});

  const std::string err = RunError("SequenceAt", {S(DType::kFloat32, {kA, kB}), T(I64({}, {2}))});
  CHECK(err.find("node 'n' (SequenceAt)") != std::string::npos);
  CHECK(err.find("position 2 is out of range for a sequence of 2") != std::string::npos);
  CHECK(RunError("SequenceAt", {S(DType::kFloat32, {}), T(I64({}, {0}))}).find("out of range") !=
        std::string::npos);
  CHECK(RunError("SequenceConstruct", {T(kA), T(I64({1}, {1}))}).find("same dtype") != std::string::npos);
}

TEST_CASE("SequenceInsert and SequenceErase") {
  auto back = Run("SequenceInsert", {S(DType::kFloat32, {kA, kB}), T(kC)});
  REQUIRE(back[0].sequence().size() == 3);
  CHECK(Floats(back[0].sequence()[2]) == std::vector<float>{4, 5, 6});
  auto front = Run("SequenceInsert", {S(DType::kFloat32, {kA, kB}), T(kC), T(I64({}, {0}))});
  CHECK(Floats(front[0].sequence()[0]) == std::vector<float>{4, 5, 6});
  auto end = Run("SequenceInsert", {S(DType::kFloat32, {kA}), T(kC), T(I64({}, {1}))});
  CHECK(Floats(end[0].sequence()[1]) == std::vector<float>{4, 5, 6});
  CHECK(RunError("SequenceInsert", {S(DType::kFloat32, {kA}), T(kC), T(I64({}, {2}))})
            .find("out of range") != std::string::npos);
  CHECK(RunError("SequenceInsert", {S(DType::kFloat32, {kA}), T(I64({1}, {1}))}).find("dtype") !=
        std::string::npos);

  auto erased = Run("SequenceErase", {S(DType::kFloat32, {kA, kB, kC}), T(I64({}, {-3}))});
  REQUIRE(erased[0].sequence().size() == 2);
  CHECK(Floats(erased[0].sequence()[0]) == std::vector<float>{3});
  auto last = Run("SequenceErase", {S(DType::kFloat32, {kA, kB, kC})});
  CHECK(last[0].sequence().size() == 2);
  CHECK(Floats(last[0].sequence()[1]) == std::vector<float>{3});
  CHECK(RunError("SequenceErase", {S(DType::kFloat32, {})}).find("empty sequence") != std::string::npos);
}

TEST_CASE("SequenceEmpty") {
  auto e = Run("SequenceEmpty", {}, {AttrInt("dtype", static_cast<int64_t>(DType::kInt64))});
  REQUIRE(e[0].is_sequence());
  CHECK(e[0].sequence().empty());
  CHECK(e[0].dtype() == DType::kInt64);
}

TEST_CASE("SplitToSequence and ConcatFromSequence") {
  const Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto parts = Run("SplitToSequence", {T(x)}, {AttrInt("axis", 1)});
  REQUIRE(parts[0].sequence().size() == 3);
  CHECK(parts[0].sequence()[1].dims() == Dims{2, 1});
  CHECK(Floats(parts[0].sequence()[1]) == std::vector<float>{2, 5});
  auto squeezed = Run("SplitToSequence", {T(x)}, {AttrInt("axis", 1), AttrInt("keepdims", 0)});
  CHECK(squeezed[0].sequence()[0].dims() == Dims{2});
  auto chunks = Run("SplitToSequence", {T(x), T(I64({}, {2}))}, {AttrInt("axis", 1)});
  REQUIRE(chunks[0].sequence().size() == 2);
  CHECK(chunks[0].sequence()[1].dims() == Dims{2, 1});
  CHECK(Floats(chunks[0].sequence()[0]) == std::vector<float>{1, 2, 4, 5});
  auto lengths = Run("SplitToSequence", {T(x), T(I64({2}, {1, 2}))}, {AttrInt("axis", -1)});
  CHECK(Floats(lengths[0].sequence()[1]) == std::vector<float>{2, 3, 5, 6});
  CHECK(RunError("SplitToSequence", {T(x), T(I64({2}, {1, 1}))}, {AttrInt("axis", 1)})
            .find("add up to 2") != std::string::npos);
  CHECK(RunError("SplitToSequence", {T(x)}, {AttrInt("axis", 2)}).find("out of range") !=
        std::string::npos);

  auto cat = Run("ConcatFromSequence", {S(DType::kFloat32, {x, F32({2, 1}, {7, 8})})},
                 {AttrInt("axis", 1)});
  CHECK(cat[0].tensor().dims() == Dims{2, 4});
  CHECK(Floats(cat[0].tensor()) == std::vector<float>{1, 2, 3, 7, 4, 5, 6, 8});
  auto stacked = Run("ConcatFromSequence", {S(DType::kFloat32, {kA, kA})},
                     {AttrInt("axis", -1), AttrInt("new_axis", 1)});
  CHECK(stacked[0].tensor().dims() == Dims{2, 2});
  CHECK(Floats(stacked[0].tensor()) == std::vector<float>{1, 1, 2, 2});
  CHECK(RunError("ConcatFromSequence", {S(DType::kFloat32, {kA, kC})}, {AttrInt("axis", 1)})
            .find("out of range") != std::string::npos);
  CHECK(RunError("ConcatFromSequence", {S(DType::kFloat32, {F32({1, 2}, {1, 2}), F32({2, 1}, {1, 2})})},
                 {AttrInt("axis", 0)})
            .find("element 1 has shape [2,1]") != std::string::npos);
  CHECK(RunError("ConcatFromSequence", {S(DType::kFloat32, {})}, {AttrInt("axis", 0)})
            .find("empty sequence") != std::string::npos);
}

TEST_CASE("Optional, OptionalHasElement, OptionalGetElement") {
  const ValueType opt_f32 = ValueType::TensorOf(DType::kFloat32).AsOptional();
  auto has = Run("OptionalHasElement", {{opt_f32, kA}});
  CHECK(has[0].tensor().data<uint8_t>()[0] == 1);
  has = Run("OptionalHasElement", {{opt_f32, Value::None()}});
  CHECK(has[0].tensor().data<uint8_t>()[0] == 0);
  has = Run("OptionalHasElement", {Omitted()});
  CHECK(has[0].tensor().data<uint8_t>()[0] == 0);
  has = Run("OptionalHasElement", {T(kA)});  // opset 18: a plain tensor has an element
  CHECK(has[0].tensor().data<uint8_t>()[0] == 1);

  auto got = Run("OptionalGetElement", {{opt_f32, kA}});
  CHECK(Floats(got[0].tensor()) == std::vector<float>{1, 2});
  got = Run("OptionalGetElement", {S(DType::kFloat32, {kA, kB})});
  CHECK(got[0].sequence().size() == 2);
  CHECK(RunError("OptionalGetElement", {{opt_f32, Value::None()}}).find("optional input is empty") !=
        std::string::npos);
  CHECK(RunError("OptionalGetElement", {T(kA)}, {}, 15).find("expected an optional") !=
        std::string::npos);

  auto wrapped = Run("Optional", {S(DType::kFloat32, {kA})});
  CHECK(wrapped[0].is_sequence());
  Attribute type;
  type.name = "type";
  type.kind = AttrKind::kTypeProto;
  type.types.push_back(TypeInfoOf(ValueType::SequenceOf(DType::kInt32)));
  auto none = Run("Optional", {}, {type});
  CHECK(none[0].is_none());
}

TEST_CASE("Identity passes sequences and optionals; tensor ops refuse them") {
  auto id = Run("Identity", {S(DType::kFloat32, {kA, kB})});
  CHECK(id[0].sequence().size() == 2);
  auto none = Run("Identity", {{ValueType::SequenceOf(DType::kFloat32).AsOptional(), Value::None()}});
  CHECK(none[0].is_none());
  CHECK(RunError("Relu", {S(DType::kFloat32, {kA})}).find("takes only tensors") != std::string::npos);
}

TEST_CASE("Executor checks sequence and optional inputs") {
  Graph g = NodeGraph("SequenceLength", {S(DType::kFloat32, {})}, {}, 1);
  Executor exec(Plan::Build(g, OpsetMap{{"", 18}}, PlanOptions{}));
  CHECK_THROWS_WITH_AS(exec.RunValues({{"in0", kA}}), doctest::Contains("expects seq(float32)"), Error);
  CHECK_THROWS_WITH_AS(exec.RunValues({{"in0", Value::None()}}), doctest::Contains("not optional"), Error);
  CHECK_THROWS_WITH_AS(exec.RunValues({{"in0", Value::Sequence(DType::kInt64, {})}}),
                       doctest::Contains("expects seq(float32)"), Error);
  // An empty sequence without an element dtype takes the declared one.
  auto out = exec.RunValues({{"in0", Value::Sequence(DType::kUndefined, {})}});
  CHECK(out[0].tensor().data<int64_t>()[0] == 0);
  // The tensor-only Run refuses a non-tensor output.
  Graph g2 = NodeGraph("SequenceConstruct", {T(kA)}, {}, 1);
  Executor exec2(Plan::Build(g2, OpsetMap{{"", 18}}, PlanOptions{}));
  CHECK_THROWS_WITH_AS(exec2.Run({{"in0", kA}}), doctest::Contains("not a tensor"), Error);
}

// Body graph of SequenceMap / Loop: out = Add(x, y) or Identity.
std::shared_ptr<Graph> AddBody() {
  auto body = std::make_shared<Graph>();
  body->name = "body";
  for (const char* n : {"x", "y"}) {
    ValueInfo v;
    v.name = n;
    v.type = TypeInfoOf(ValueType::TensorOf(DType::kFloat32));
    body->inputs.push_back(v);
  }
  Node add;
  add.op_type = "Add";
  add.inputs = {"x", "y"};
  add.outputs = {"z"};
  body->nodes.push_back(add);
  ValueInfo z;
  z.name = "z";
  body->outputs.push_back(z);
  return body;
}

TEST_CASE("SequenceMap with a sequence and a tensor, and with two sequences") {
  Attribute body;
  body.name = "body";
  body.kind = AttrKind::kGraph;
  body.g = AddBody();
  auto one = Run("SequenceMap", {S(DType::kFloat32, {kA, F32({2}, {10, 20})}), T(F32({2}, {1, 1}))},
                 {body}, 17);
  REQUIRE(one[0].sequence().size() == 2);
  CHECK(Floats(one[0].sequence()[1]) == std::vector<float>{11, 21});
  auto two = Run("SequenceMap", {S(DType::kFloat32, {kA, kB}), S(DType::kFloat32, {kA, kB})}, {body}, 17);
  CHECK(Floats(two[0].sequence()[1]) == std::vector<float>{6});
  CHECK_THROWS_WITH_AS(
      Run("SequenceMap", {S(DType::kFloat32, {kA, kB}), S(DType::kFloat32, {kA})}, {body}, 17),
      doctest::Contains("has 1 elements, input_sequence 2"), Error);
}

TEST_CASE("Loop carries a sequence; If returns one") {
  // Loop body: (iter, cond, seq) -> (cond, SequenceInsert(seq, x)), x from the outer scope.
  auto body = std::make_shared<Graph>();
  body->name = "loop_body";
  ValueInfo it, cond, seq;
  it.name = "i";
  it.type = TypeInfoOf(ValueType::TensorOf(DType::kInt64));
  cond.name = "c";
  cond.type = TypeInfoOf(ValueType::TensorOf(DType::kBool));
  seq.name = "s";
  seq.type = TypeInfoOf(ValueType::SequenceOf(DType::kFloat32));
  body->inputs = {it, cond, seq};
  Node ident;
  ident.op_type = "Identity";
  ident.inputs = {"c"};
  ident.outputs = {"c_out"};
  Node insert;
  insert.op_type = "SequenceInsert";
  insert.inputs = {"s", "x"};
  insert.outputs = {"s_out"};
  body->nodes = {ident, insert};
  ValueInfo c_out, s_out;
  c_out.name = "c_out";
  s_out.name = "s_out";
  body->outputs = {c_out, s_out};

  Graph g;
  g.name = "loop";
  ValueInfo x, m;
  x.name = "x";
  x.type = TypeInfoOf(ValueType::TensorOf(DType::kFloat32));
  g.inputs = {x};
  g.initializers.emplace_back("m", I64({}, {3}));
  Node empty;
  empty.op_type = "SequenceEmpty";
  empty.outputs = {"e"};
  Node loop;
  loop.op_type = "Loop";
  loop.inputs = {"m", "", "e"};
  loop.outputs = {"result"};
  Attribute b;
  b.name = "body";
  b.kind = AttrKind::kGraph;
  b.g = body;
  loop.attributes = {b};
  g.nodes = {empty, loop};
  ValueInfo result;
  result.name = "result";
  g.outputs = {result};
  auto plan = Plan::Build(g, OpsetMap{{"", 17}}, PlanOptions{});
  CHECK(plan->outputs()[0].type.kind == TypeInfo::Kind::kSequence);
  Executor exec(plan);
  auto out = exec.RunValues({{"x", kB}});
  REQUIRE(out[0].is_sequence());
  CHECK(out[0].sequence().size() == 3);
  CHECK(Floats(out[0].sequence()[2]) == std::vector<float>{3});
}

}  // namespace
}  // namespace simplecpp::graph
