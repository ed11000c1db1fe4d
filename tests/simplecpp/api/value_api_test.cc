// Sequences and optionals through the public API: Value, Session::RunValues, model descriptions,
// the tensor-only Session::Run refusing non-tensor outputs, and SequenceProto / OptionalProto
// parsing (simplecpp/onnx/sequence_proto.h).
#include <doctest/doctest.h>

#include <string>

#include "graph/op_test_util.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/onnx/sequence_proto.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp {
namespace {

using testing::F32;

// seq_out = SequenceInsert(seq, x); n = SequenceLength(seq_out); opt = Optional(x)
std::string SequenceModelBytes() {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 18});
  graph::Graph& g = m.graph;
  g.name = "seq";
  graph::ValueInfo seq, x, seq_out, n, opt;
  seq.name = "seq";
  seq.type = graph::TypeInfoOf(graph::ValueType::SequenceOf(DType::kFloat32));
  x.name = "x";
  x.type = graph::TypeInfoOf(graph::ValueType::TensorOf(DType::kFloat32));
  g.inputs = {seq, x};
  seq_out.name = "seq_out";
  seq_out.type = seq.type;
  n.name = "n";
  opt.name = "opt";
  opt.type = graph::TypeInfoOf(graph::ValueType::TensorOf(DType::kFloat32).AsOptional());
  g.outputs = {seq_out, n, opt};
  graph::Node insert, length, optional;
  insert.op_type = "SequenceInsert";
  insert.inputs = {"seq", "x"};
  insert.outputs = {"seq_out"};
  length.op_type = "SequenceLength";
  length.inputs = {"seq_out"};
  length.outputs = {"n"};
  optional.op_type = "Optional";
  optional.inputs = {"x"};
  optional.outputs = {"opt"};
  g.nodes = {insert, length, optional};
  return onnx::WriteModel(m);
}

TEST_CASE("Value basics") {
  Value t = F32({2}, {1, 2});
  CHECK(t.is_tensor());
  CHECK(t.Describe() == "tensor float32[2]");
  Value s = Value::Sequence(DType::kFloat32, {F32({1}, {1}), F32({2}, {1, 2})});
  CHECK(s.is_sequence());
  CHECK(s.Describe() == "sequence<float32> of 2");
  CHECK_THROWS_AS(s.tensor(), Error);
  CHECK_THROWS_AS(t.sequence(), Error);
  CHECK(Value::None().is_none());
  CHECK(!Value().defined());
  CHECK_THROWS_WITH_AS(Value::Sequence(DType::kInt64, {F32({1}, {1})}),
                       doctest::Contains("element 0 has dtype float32"), Error);
}

TEST_CASE("Session::RunValues takes and returns sequences and optionals") {
  const std::string bytes = SequenceModelBytes();
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  REQUIRE(model.inputs().size() == 2);
  CHECK(model.inputs()[0].sequence);
  CHECK(!model.inputs()[0].optional);
  CHECK(model.inputs()[0].dtype == DType::kFloat32);
  CHECK(!model.inputs()[1].sequence);
  CHECK(model.outputs()[2].optional);
  CHECK(!model.outputs()[2].sequence);

  Session session(model);
  auto out = session.RunValues({{"seq", Value::Sequence(DType::kFloat32, {F32({1}, {7})})},
                                {"x", F32({2}, {1, 2})}});
  REQUIRE(out.at("seq_out").is_sequence());
  CHECK(out.at("seq_out").sequence().size() == 2);
  CHECK(out.at("seq_out").sequence()[1].data<float>()[1] == 2.0f);
  CHECK(out.at("n").tensor().data<int64_t>()[0] == 2);
  CHECK(out.at("opt").is_tensor());  // an optional holding a tensor is the tensor

  auto only_n = session.RunValues({{"seq", Value::Sequence(DType::kFloat32, {})}, {"x", F32({1}, {1})}},
                                  {"n"});
  CHECK(only_n.size() == 1);
  CHECK(only_n.at("n").tensor().data<int64_t>()[0] == 1);

  // The tensor Run cannot feed the sequence input, and says so.
  CHECK_THROWS_WITH_AS(session.Run({{"seq", F32({1}, {1})}, {"x", F32({1}, {1})}}),
                       doctest::Contains("expects seq(float32)"), Error);
  CHECK_THROWS_WITH_AS(
      session.RunValues({{"seq", Value::Sequence(DType::kInt64, {})}, {"x", F32({1}, {1})}}),
      doctest::Contains("expects seq(float32)"), Error);
}

TEST_CASE("Session::Run refuses a sequence output with a clear error") {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 18});
  graph::ValueInfo x, s;
  x.name = "x";
  x.type = graph::TypeInfoOf(graph::ValueType::TensorOf(DType::kFloat32));
  s.name = "s";
  m.graph.inputs = {x};
  m.graph.outputs = {s};
  graph::Node n;
  n.op_type = "SequenceConstruct";
  n.inputs = {"x"};
  n.outputs = {"s"};
  m.graph.nodes = {n};
  const std::string bytes = onnx::WriteModel(m);
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  CHECK(model.outputs()[0].sequence);  // the plan fills in the undeclared type
  Session session(model);
  CHECK_THROWS_WITH_AS(session.Run({{"x", F32({1}, {1})}}),
                       doctest::Contains("output 's' is sequence<float32> of 1, not a tensor"), Error);
  CHECK(session.RunValues({{"x", F32({1}, {1})}}).at("s").sequence().size() == 1);
}

TEST_CASE("SequenceProto and OptionalProto parsing") {
  // SequenceProto{name: "s", elem_type: TENSOR, tensor_values: [TensorProto{dims: [1],
  // data_type: INT64, int64_data: [5]}]}
  const std::string tensor = std::string("\x08\x01\x10\x07\x3a\x01\x05", 7);
  std::string seq = std::string("\x0a\x01s\x10\x01\x1a", 6) + static_cast<char>(tensor.size()) + tensor;
  std::string name;
  Value v = onnx::ParseSequenceProto(seq.data(), seq.size(), &name);
  CHECK(name == "s");
  REQUIRE(v.is_sequence());
  REQUIRE(v.sequence().size() == 1);
  CHECK(v.dtype() == DType::kInt64);
  CHECK(v.sequence()[0].data<int64_t>()[0] == 5);

  // OptionalProto{elem_type: SEQUENCE, sequence_value: seq}; and an empty one.
  std::string opt = std::string("\x10\x03\x2a", 3) + static_cast<char>(seq.size()) + seq;
  Value o = onnx::ParseOptionalProto(opt.data(), opt.size());
  CHECK(o.is_sequence());
  const std::string empty("\x10\x00", 2);
  CHECK(onnx::ParseOptionalProto(empty.data(), empty.size()).is_none());
  // A map element type is refused as unsupported.
  const std::string map_seq("\x10\x04", 2);
  CHECK_THROWS_AS(onnx::ParseSequenceProto(map_seq.data(), map_seq.size()), Error);
  const std::string bad("\x1a\x05\x01", 3);
  CHECK_THROWS_AS(onnx::ParseSequenceProto(bad.data(), bad.size()), Error);
}

}  // namespace
}  // namespace simplecpp
