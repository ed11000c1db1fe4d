// Regression tests for what the libFuzzer targets (tests/fuzz) found: each case embeds the input
// that crashed (or hit a sanitizer) and checks that it now loads/runs or fails with a clean
// simplecpp::Error. Named after the finding.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include "graph/graph_builder_util.h"
#include "graph/ir.h"
#include "simplecpp/io/npy.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "simplecpp/simplecpp.h"

namespace {

using namespace simplecpp;

// What the fuzz targets do with their bytes, minus the instrumentation: load with small limits
// and describe; errors are fine, anything else fails the test.
LoadOptions SmallLimits() {
  LoadOptions o;
  o.limits.max_model_bytes = 1 << 20;
  o.limits.max_tensor_elements = 1 << 16;
  o.limits.max_tensor_bytes = 1 << 19;
  o.limits.max_nodes = 512;
  o.limits.max_graph_depth = 8;
  o.limits.max_total_bytes = 16 << 20;
  return o;
}

[[maybe_unused]] void LoadAndRun(const std::vector<uint8_t>& bytes,
                                 const std::map<std::string, Tensor>& inputs = {}) {
  try {
    Model m = Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits());
    SessionOptions so;
    so.threads = 1;
    Session s(m, so);
    s.Run(inputs);
  } catch (const Error& e) {
    MESSAGE(e.what());
  }
}

}  // namespace

namespace {

// An empty opset-17 model named "g" (inputs and outputs from graph/graph_builder_util.h).
graph::Model EmptyModel() {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 17});
  m.graph.name = "g";
  return m;
}



// y = op(x, s): x float32 [1,...,1] (rank n), s int64 [n] a graph input (size known only at run).
Model ShapeInputModel(const std::string& op, int64_t n) {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 17});
  m.graph.name = "g";
  for (auto [name, dtype, len] : {std::tuple<const char*, DType, int64_t>{"x", DType::kFloat32, n},
                                  {"s", DType::kInt64, n}}) {
    graph::ValueInfo v;
    v.name = name;
    v.type.kind = graph::TypeInfo::Kind::kTensor;
    v.type.dtype = dtype;
    v.type.has_shape = true;
    v.type.dims.resize(dtype == DType::kFloat32 ? static_cast<size_t>(len) : 1);
    for (auto& d : v.type.dims) d.value = 1;
    if (dtype == DType::kInt64) v.type.dims[0].value = len;
    m.graph.inputs.push_back(v);
  }
  graph::Node node;
  node.name = op + "_1";
  node.op_type = op;
  node.inputs = {"x", "s"};
  node.outputs = {"y"};
  m.graph.nodes.push_back(node);
  graph::ValueInfo y;
  y.name = "y";
  m.graph.outputs.push_back(y);
  const std::string bytes = onnx::WriteModel(m);
  return Model::LoadFromBytes(bytes.data(), bytes.size());
}

// Runs op(x, s) with the given shape/repeats values: must end in Error(kLimitExceeded).
void ExpectLimitError(const std::string& op, const std::vector<int64_t>& s) {
  const int64_t n = static_cast<int64_t>(s.size());
  Session session(ShapeInputModel(op, n));
  Tensor x(DType::kFloat32, Dims(static_cast<size_t>(n), 1));
  x.data<float>()[0] = 1;
  try {
    session.Run({{"x", x}, {"s", Tensor::FromVector<int64_t>(DType::kInt64, {n}, s)}});
    FAIL("no error");
  } catch (const Error& e) {
    CAPTURE(e.what());
    CHECK(e.code() == ErrorCode::kLimitExceeded);
  }
}

}  // namespace

// Found with the CLI while preparing the fuzz corpus: Expand built its per-axis offset tables
// (as long as each output dim) before declaring the output, so new_shape [2^61, 1, 8] threw
// std::length_error ("vector::_M_default_append") out of Session::Run instead of an Error; Tile
// had the same order. Now the output is size-checked first, and every dim is bounded by
// max_tensor_elements (so [0, 2^40] cannot allocate a 2^40-entry table either).
TEST_CASE("fuzz regression expand_huge_shape_length_error") {
  ExpectLimitError("Expand", {int64_t{1} << 61, 1, 8});
  ExpectLimitError("Expand", {int64_t{1} << 40, 4});
  ExpectLimitError("Expand", {0, int64_t{1} << 40});
  ExpectLimitError("Tile", {int64_t{1} << 40, 4});
  ExpectLimitError("Tile", {0, int64_t{1} << 40});
}

// Found by fuzz_model_load and fuzz_model_run (tests/fuzz/findings/pad_prepare_huge_table.*):
// Pad's Prepare sized its per-axis source tables from `pads` (here about 2^56 entries, a constant
// initializer, so at load during static prepare) before the output size was checked, so ASan
// reported an allocation of 0x800000028 bytes; `d + begin + end` could also overflow. Now the
// output dims are overflow-checked and declared (limits enforced) before any table is built.
TEST_CASE("fuzz regression pad_prepare_huge_table") {
  const std::vector<uint8_t> model = {
      0x08, 0x08, 0x12, 0x0f, 0x73, 0x69, 0x6d, 0x70, 0x6c, 0x65, 0x63, 0x70, 0x70, 0x2d, 0x73, 0x65,
      0x65, 0x64, 0x73, 0x3a, 0x74, 0x0a, 0x29, 0x0a, 0x01, 0x78, 0x0a, 0x01, 0x70, 0x12, 0x01, 0x79,
      0x1a, 0x05, 0x50, 0x61, 0x64, 0x5f, 0x30, 0x22, 0x03, 0x50, 0x61, 0x64, 0x2a, 0x12, 0x0a, 0x04,
      0x6d, 0x6f, 0x64, 0x65, 0x22, 0x07, 0x72, 0x65, 0x66, 0x6c, 0x65, 0x63, 0x74, 0xa0, 0x01, 0x03,
      0x12, 0x01, 0x67, 0x2a, 0x2a, 0x0a, 0x01, 0x04, 0x10, 0x07, 0x42, 0x01, 0x70, 0x4a, 0x20, 0x01,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
      0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5a,
      0x13, 0x0a, 0x01, 0x78, 0x12, 0x0e, 0x0a, 0x0c, 0x08, 0x01, 0x12, 0x08, 0x0a, 0x02, 0x08, 0x03,
      0x0a, 0x02, 0x08, 0x03, 0x62, 0x03, 0x0a, 0x01, 0x79, 0x42, 0x02, 0x10, 0x11,
  };
  try {
    Model m = Model::LoadFromBytes(model.data(), model.size(), SmallLimits());
    Session s(m);
    Tensor x(DType::kFloat32, {3, 3});
    s.Run({{"x", x}});
    FAIL("the padded output is far over the limits; expected an Error");
  } catch (const Error& e) {
    CAPTURE(e.what());
    CHECK((e.code() == ErrorCode::kLimitExceeded || e.code() == ErrorCode::kInvalidModel ||
           e.code() == ErrorCode::kInvalidArgument));
  }
}

// Found by fuzz_model_load and fuzz_model_run (tests/fuzz/findings/resize_scale_float_overflow.*):
// Resize's Prepare converted scales[i] * dim (here about 1e27, a constant initializer, so at load
// during static prepare) to int64_t unchecked: UBSan "outside the range of representable values".
// Now an output dim that large (or an infinite scale) fails with an Error before the conversion.
TEST_CASE("fuzz regression resize_scale_float_overflow") {
  const std::vector<uint8_t> model = {
      0x08, 0x08, 0x12, 0x0f, 0x73, 0x69, 0x91, 0x8f, 0x93, 0x9a, 0xdd, 0x8f, 0x8f, 0xd2, 0x73, 0x65,
      0x65, 0x64, 0x73, 0x3a, 0x75, 0x0a, 0x31, 0x0a, 0x01, 0x78, 0x0a, 0x00, 0x0a, 0x02, 0x73, 0x63,
      0x12, 0x01, 0x79, 0x1a, 0x08, 0x52, 0x65, 0x73, 0x69, 0x7a, 0x65, 0x5f, 0x30, 0x22, 0x06, 0x52,
      0x65, 0x73, 0x69, 0x7a, 0x65, 0x2a, 0x11, 0x0a, 0x04, 0x6d, 0x6f, 0x64, 0x65, 0x22, 0x06, 0x6c,
      0x69, 0x6e, 0x65, 0x61, 0x72, 0xa0, 0x01, 0x03, 0x12, 0x01, 0x67, 0x2a, 0x1b, 0x0a, 0x01, 0x04,
      0x10, 0x01, 0x42, 0x02, 0x73, 0x63, 0x4a, 0x10, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x45, 0x6c,
      0x65, 0x6d, 0x65, 0x64, 0x74, 0x73, 0x5f, 0x3f, 0x5a, 0x1b, 0x0a, 0x01, 0x78, 0x12, 0x16, 0x0a,
      0x14, 0x08, 0x01, 0x12, 0x10, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08,
      0x02, 0x0a, 0x02, 0x08, 0x02, 0x62, 0x03, 0x0a, 0x01, 0x79, 0x42, 0x02, 0x10, 0x11,
  };
  LoadAndRun(model);
}

// Found by fuzz_model_load (Resize; OOM: an 8 GiB table) and fuzz_model_run (BatchNormalization;
// UBSan: reference to a null Tensor) (tests/fuzz/findings/node_without_outputs.*): a mutation
// turned the node's only `output` field into another field, leaving a node with no outputs. Its
// output was then never declared, so the size limits were never checked (Resize built per-axis
// tables for a 5e8-long dim at load) and run functions read output 0 of an empty list. Now a
// node without outputs is an invalid model, set_output checks the limits even for an output the
// node leaves out, and RunContext::input/output are bounds-checked.
TEST_CASE("fuzz regression node_without_outputs") {
  const std::vector<uint8_t> model = {
      0x08, 0x08, 0x12, 0x0f, 0x73, 0x69, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x73, 0x65,
      0x65, 0x64, 0x73, 0x3a, 0x75, 0x0a, 0x31, 0x0a, 0x01, 0x78, 0x0a, 0x00, 0x0a, 0x02, 0x73, 0x63,
      0x1a, 0x01, 0x6f, 0x1a, 0x08, 0x52, 0x65, 0x73, 0x69, 0x7a, 0x65, 0x5f, 0x30, 0x22, 0x06, 0x52,
      0x65, 0x73, 0x69, 0x7a, 0x65, 0x2a, 0x11, 0x0a, 0x04, 0x6d, 0x6e, 0x64, 0x65, 0x22, 0x06, 0x6c,
      0x6c, 0x6e, 0x65, 0x61, 0x72, 0xa0, 0x01, 0x03, 0x12, 0x01, 0x67, 0x2a, 0x1b, 0x0a, 0x01, 0x04,
      0x10, 0x01, 0x42, 0x02, 0x73, 0x63, 0x4a, 0x10, 0x00, 0x48, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x3f,
      0x00, 0x00, 0x00, 0x4e, 0x65, 0x6d, 0x6d, 0x3f, 0x5a, 0x1b, 0x0a, 0x01, 0x78, 0x12, 0x16, 0x0a,
      0x14, 0x08, 0x01, 0x12, 0x10, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08, 0x01, 0x0a, 0x02, 0x08,
      0x02, 0x0a, 0x02, 0x08, 0x02, 0x62, 0x03, 0x0a, 0x01, 0x79, 0x42, 0x02, 0x10, 0x11,
  };
  try {
    Model::LoadFromBytes(model.data(), model.size(), SmallLimits());
    FAIL("a node without outputs must be refused at load");
  } catch (const Error& e) {
    CAPTURE(e.what());
    CHECK(e.code() == ErrorCode::kInvalidModel);
  }

  // The same for every op tried: BatchNormalization (the run-time finding), Relu, Resize.
  for (const std::string op : {"BatchNormalization", "Relu", "Resize"}) {
    CAPTURE(op);
    graph::Model m = EmptyModel();
    m.graph.inputs.push_back(graph::test_graph::In("x", DType::kFloat32, {1, 2, 2}));
    graph::Node node;
    node.name = op + "_0";
    node.op_type = op;
    node.inputs = {"x"};
    m.graph.nodes.push_back(node);
    // The graph output is the input: the node is the only thing wrong.
    m.graph.outputs.push_back(graph::test_graph::Out("x"));
    const std::string bytes = onnx::WriteModel(m);
    try {
      Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits());
      FAIL("a node without outputs must be refused at load");
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(e.code() == ErrorCode::kInvalidModel);
      CHECK(std::string(e.what()).find("no outputs") != std::string::npos);
    }
  }
}

// Found by fuzz_model_run (tests/fuzz/findings/absent_output_written.fuzz_model_run): a Resize
// whose output is left out (output name "") still declared and wrote it, but the executor gave
// left-out outputs no buffer: UBSan "store to null pointer" in the resize kernel. Every output an
// op declares now gets a buffer, dropped after the step, whether the node names it or not.
TEST_CASE("fuzz regression absent_output_written") {
  for (const std::string mode : {"nearest", "linear", "cubic"}) {
    CAPTURE(mode);
    graph::Model m = EmptyModel();
    m.graph.inputs.push_back(graph::test_graph::In("x", DType::kFloat32, {37, 1, 2, 1}));
    m.graph.initializers.emplace_back("sc", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 2, 1.5f}));
    graph::Node resize;
    resize.name = "Resize_0";
    resize.op_type = "Resize";
    resize.inputs = {"x", "", "sc"};
    resize.outputs = {""};
    graph::Attribute a;
    a.name = "mode";
    a.kind = graph::AttrKind::kString;
    a.s = mode;
    resize.attributes.push_back(a);
    graph::Node identity;
    identity.name = "Identity_0";
    identity.op_type = "Identity";
    identity.inputs = {"x"};
    identity.outputs = {"z"};
    m.graph.nodes = {resize, identity};
    m.graph.outputs.push_back(graph::test_graph::Out("z"));
    const std::string bytes = onnx::WriteModel(m);
    Model model = Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits());
    Session session(model);
    Tensor input(DType::kFloat32, {37, 1, 2, 1});
    for (int64_t i = 0; i < input.num_elements(); ++i) input.data<float>()[i] = static_cast<float>(i);
    const auto out = session.Run({{"x", input}});
    REQUIRE(out.count("z") == 1);
    CHECK(out.at("z").data<float>()[73] == 73.0f);
  }
}

// Found by fuzz_model_run (tests/fuzz/findings/slice_huge_step.fuzz_model_run): Slice counted
// its output as (e - s + t - 1) / t, which overflows for a step near INT64_MAX (UBSan: signed
// overflow, at load during static prepare); -t overflowed for INT64_MIN. Now 1 + (e - s - 1) / t.
TEST_CASE("fuzz regression slice_huge_step") {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    int64_t start, end, step;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {1, 9, kMax, {1}},         {4, 14, kMax - 3, {4}}, {8, 0, kMin, {8}},
      {kMax, kMin, kMin, {9}},   {kMin, kMax, kMax, {0}}, {9, -kMax, -kMax, {9}},
      {0, 10, 3, {0, 3, 6, 9}},  {9, -11, -4, {9, 5, 1}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.start);
    CAPTURE(c.end);
    CAPTURE(c.step);
    graph::Model m = EmptyModel();
    m.graph.inputs.push_back(graph::test_graph::In("x", DType::kFloat32, {10}));
    const auto one = [](int64_t v) { return Tensor::FromVector<int64_t>(DType::kInt64, {1}, {v}); };
    m.graph.initializers.emplace_back("st", one(c.start));
    m.graph.initializers.emplace_back("en", one(c.end));
    m.graph.initializers.emplace_back("ax", one(0));
    m.graph.initializers.emplace_back("sp", one(c.step));
    graph::Node slice;
    slice.name = "Slice_0";
    slice.op_type = "Slice";
    slice.inputs = {"x", "st", "en", "ax", "sp"};
    slice.outputs = {"y"};
    m.graph.nodes.push_back(slice);
    m.graph.outputs.push_back(graph::test_graph::Out("y"));
    const std::string bytes = onnx::WriteModel(m);
    Session session(Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits()));
    Tensor input(DType::kFloat32, {10});
    for (int i = 0; i < 10; ++i) input.data<float>()[i] = static_cast<float>(i);
    const Tensor out = session.Run({{"x", input}}).at("y");
    REQUIRE(out.num_elements() == static_cast<int64_t>(c.expected.size()));
    for (size_t i = 0; i < c.expected.size(); ++i) CHECK(out.data<float>()[i] == c.expected[i]);
  }
}

// Found by fuzz_model_run (tests/fuzz/findings/range_int64_huge_count.fuzz_model_run): Range
// over int64 from INT64_MIN (a mutated constant) to a small limit counted ~9.2e18 elements as a
// long double and converted that to int64_t unchecked (UBSan: outside the representable range).
// Now such a count is an Error; and i * delta, which can pass INT64_MAX even when every element
// fits, is formed modulo 2^64.
TEST_CASE("fuzz regression range_int64_huge_count") {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    int64_t start, limit, delta;
    std::vector<int64_t> expected;  // empty: an Error is expected
  };
  const std::vector<Case> cases = {
      {kMin, 10, 1, {}},
      {kMin, kMax, 1, {}},
      {kMax, kMin, -1, {}},
      {kMin, kMax, int64_t{1} << 62, {kMin, kMin + (int64_t{1} << 62), 0, int64_t{1} << 62}},
      {kMax, kMin, kMin, {kMax, -1}},
      {3, -4, -3, {3, 0, -3}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.start);
    CAPTURE(c.limit);
    CAPTURE(c.delta);
    graph::Model m = EmptyModel();
    const auto scalar = [](int64_t v) { return Tensor::FromVector<int64_t>(DType::kInt64, {}, {v}); };
    m.graph.initializers.emplace_back("start", scalar(c.start));
    m.graph.initializers.emplace_back("limit", scalar(c.limit));
    m.graph.initializers.emplace_back("delta", scalar(c.delta));
    graph::Node range;
    range.name = "Range_0";
    range.op_type = "Range";
    range.inputs = {"start", "limit", "delta"};
    range.outputs = {"r"};
    m.graph.nodes.push_back(range);
    m.graph.outputs.push_back(graph::test_graph::Out("r"));
    const std::string bytes = onnx::WriteModel(m);
    try {
      Session session(Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits()));
      const Tensor out = session.Run({}).at("r");
      REQUIRE(!c.expected.empty());
      REQUIRE(out.num_elements() == static_cast<int64_t>(c.expected.size()));
      for (size_t i = 0; i < c.expected.size(); ++i) CHECK(out.data<int64_t>()[i] == c.expected[i]);
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(c.expected.empty());
    }
  }
}

// Found by fuzz_model_run (tests/fuzz/findings/split_scalar_input.fuzz_model_run): Split of a
// scalar (a mutated shape) read the size of "axis 0" from an empty shape (UBSan: reference to
// null). Now a scalar input is an Error, and split sizes whose sum would overflow are refused
// before they are added.
TEST_CASE("fuzz regression split_scalar_input") {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    Dims x_dims;
    std::vector<int64_t> split;  // empty: no split input
    int outputs;
  };
  const std::vector<Case> cases = {
      {{}, {}, 1}, {{}, {}, 2}, {{2}, {kMax, 2}, 2}, {{2}, {kMax, kMax, 4}, 3}, {{3}, {1, -1, 3}, 3}};
  for (const Case& c : cases) {
    CAPTURE(c.x_dims.size());
    CAPTURE(c.split.size());
    graph::Model m = EmptyModel();
    m.graph.inputs.push_back(graph::test_graph::In("x", DType::kFloat32, c.x_dims));
    graph::Node split;
    split.name = "Split_0";
    split.op_type = "Split";
    split.inputs = {"x"};
    if (!c.split.empty()) {
      m.graph.initializers.emplace_back(
          "s", Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(c.split.size())}, c.split));
      split.inputs.push_back("s");
    }
    for (int i = 0; i < c.outputs; ++i) {
      split.outputs.push_back("y" + std::to_string(i));
      m.graph.outputs.push_back(graph::test_graph::Out(split.outputs.back()));
    }
    m.graph.nodes.push_back(split);
    const std::string bytes = onnx::WriteModel(m);
    try {
      Session session(Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits()));
      Tensor input(DType::kFloat32, c.x_dims);
      session.Run({{"x", input}});
      FAIL("expected an Error");
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK((e.code() == ErrorCode::kRuntime || e.code() == ErrorCode::kInvalidModel ||
             e.code() == ErrorCode::kInvalidArgument));
    }
  }
}

// The general fix behind split_scalar_input: NormalizeAxis accepted axis 0 and -1 for a scalar
// (and returned -1 for the latter), so any op indexing dims[axis] could read outside the empty
// shape. A scalar now has no valid axis, for every op.
TEST_CASE("fuzz regression split_scalar_input: no op takes an axis of a scalar") {
  for (const std::string op : {"Softmax", "LogSoftmax", "ArgMax", "Split", "Flatten"}) {
    for (int64_t axis : {0, -1}) {
      CAPTURE(op);
      CAPTURE(axis);
      graph::Model m = EmptyModel();
      m.graph.inputs.push_back(graph::test_graph::In("x", DType::kFloat32, {}));
      graph::Node node;
      node.name = op + "_0";
      node.op_type = op;
      node.inputs = {"x"};
      node.outputs = {"y"};
      graph::Attribute a;
      a.name = "axis";
      a.kind = graph::AttrKind::kInt;
      a.i = axis;
      node.attributes.push_back(a);
      m.graph.nodes.push_back(node);
      m.graph.outputs.push_back(graph::test_graph::Out("y"));
      const std::string bytes = onnx::WriteModel(m);
      try {
        Session session(Model::LoadFromBytes(bytes.data(), bytes.size(), SmallLimits()));
        const auto out = session.Run({{"x", Tensor(DType::kFloat32, {})}});
        // Flatten's axis ranges over [0, rank]: axis 0 of a scalar is valid ([1, 1]).
        CHECK(op == "Flatten");
        CHECK(axis == 0);
      } catch (const Error& e) {
        CAPTURE(e.what());
        CHECK(e.code() != ErrorCode::kInternal);
      }
    }
  }
}
