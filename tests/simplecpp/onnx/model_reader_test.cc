// Tests of the ModelProto reader (simplecpp/onnx/model_reader.cc and the attribute, type and
// tensor readers): field coverage, attribute-kind inference, sparse initializers, borrowing,
// external data confinement, limits, malformed and truncated input, and the ONNX test corpus.
#include "simplecpp/onnx/model_reader.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/onnx/proto_fields.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "tests/simplecpp/onnx/onnx_test_util.h"

namespace simplecpp::onnx {
namespace {

namespace fs = std::filesystem;
using protozero::pbf_writer;
using testing::PatternTensor;
using testing::TempDir;

graph::Model Read(const std::string& bytes, const ReadOptions& options = {}) {
  return ReadModel(bytes.data(), bytes.size(), options, nullptr);
}

// What ReadModel throws for bytes (fails the test when it does not throw).
Error ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected simplecpp::Error");
  return Error(ErrorCode::kInternal, "");
}

graph::ValueInfo TensorValue(const std::string& name, DType dtype, std::vector<graph::Dim> dims) {
  graph::ValueInfo v;
  v.name = name;
  v.type.kind = graph::TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  v.type.dims = std::move(dims);
  return v;
}

// y = Add(x, w) with a float initializer w: no metadata or functions, so opset_import is the
// last field written (every strict prefix of its bytes is incomplete).
graph::Model SmallModel() {
  graph::Model m;
  m.ir_version = 8;
  m.producer_name = "simplecpp-test";
  m.opsets.push_back({"", 13});
  m.graph.name = "small";
  graph::Node n;
  n.name = "add";
  n.op_type = "Add";
  n.inputs = {"x", "w"};
  n.outputs = {"y"};
  m.graph.nodes.push_back(n);
  m.graph.initializers.emplace_back("w", Tensor::FromVector<float>(DType::kFloat32, {2}, {1.5f, -2.0f}));
  m.graph.inputs.push_back(TensorValue("x", DType::kFloat32, {{-1, "N"}, {2, ""}}));
  m.graph.outputs.push_back(TensorValue("y", DType::kFloat32, {{-1, "N"}, {2, ""}}));
  return m;
}

// A ModelProto around one graph whose fields are written by `fill_graph`.
std::string ModelWithGraph(const std::function<void(pbf_writer&)>& fill_graph, int64_t ir_version = 8) {
  std::string buf;
  pbf_writer pw(buf);
  pw.add_int64(fields::model::kIrVersion, ir_version);
  {
    pbf_writer g(pw, fields::model::kGraph);
    g.add_string(fields::graph::kName, "g");
    fill_graph(g);
  }
  {
    pbf_writer o(pw, fields::model::kOpsetImport);
    o.add_int64(fields::opset::kVersion, 13);
  }
  return buf;
}

// A model with one node (op_type "Op", name "n1") whose extra fields are written by `fill_node`.
std::string ModelWithNode(const std::function<void(pbf_writer&)>& fill_node) {
  return ModelWithGraph([&](pbf_writer& g) {
    pbf_writer n(g, fields::graph::kNode);
    n.add_string(fields::node::kName, "n1");
    n.add_string(fields::node::kOpType, "Op");
    fill_node(n);
  });
}

// A node attribute without the `type` field (IR version 1 style).
std::string ModelWithAttribute(const std::function<void(pbf_writer&)>& fill_attr) {
  return ModelWithNode([&](pbf_writer& n) {
    pbf_writer a(n, fields::node::kAttribute);
    a.add_string(fields::attribute::kName, "a");
    fill_attr(a);
  });
}

void WriteRawTensor(pbf_writer& t, DType dtype, const Dims& dims, const std::string& raw,
                    const std::string& name = "") {
  t.add_packed_int64(fields::tensor::kDims, dims.begin(), dims.end());
  t.add_int32(fields::tensor::kDataType, static_cast<int32_t>(dtype));
  if (!name.empty()) t.add_string(fields::tensor::kName, name);
  t.add_bytes(fields::tensor::kRawData, raw);
}

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST_CASE("ReadModel reads the model, graph, nodes and value infos") {
  const graph::Model m = Read(WriteModel(SmallModel()));
  CHECK(m.ir_version == 8);
  CHECK(m.producer_name == "simplecpp-test");
  REQUIRE(m.opsets.size() == 1);
  CHECK(m.OpsetVersion("") == 13);
  CHECK(m.OpsetVersion("ai.onnx") == 13);
  CHECK(m.graph.name == "small");
  REQUIRE(m.graph.nodes.size() == 1);
  CHECK(m.graph.nodes[0].op_type == "Add");
  CHECK(m.graph.nodes[0].inputs == std::vector<std::string>{"x", "w"});
  const Tensor* w = m.graph.FindInitializer("w");
  REQUIRE(w != nullptr);
  CHECK(w->data<float>()[1] == -2.0f);
  REQUIRE(m.graph.inputs.size() == 1);
  const graph::TypeInfo& t = m.graph.inputs[0].type;
  CHECK(t.kind == graph::TypeInfo::Kind::kTensor);
  CHECK(t.dtype == DType::kFloat32);
  REQUIRE(t.dims.size() == 2);
  CHECK(!t.dims[0].known());
  CHECK(t.dims[0].param == "N");
  CHECK(t.dims[1].value == 2);
}

TEST_CASE("ReadModel infers the attribute kind when `type` is missing") {
  using graph::AttrKind;
  auto attr = [](const std::function<void(pbf_writer&)>& fill) {
    const graph::Model m = Read(ModelWithAttribute(fill));
    return m.graph.nodes.at(0).attributes.at(0);
  };
  CHECK(attr([](pbf_writer& a) { a.add_float(fields::attribute::kF, 0.5f); }).kind == AttrKind::kFloat);
  CHECK(attr([](pbf_writer& a) { a.add_int64(fields::attribute::kI, -3); }).i == -3);
  CHECK(attr([](pbf_writer& a) { a.add_bytes(fields::attribute::kS, "str"); }).kind == AttrKind::kString);
  {
    const std::vector<int64_t> v = {1, -2};
    graph::Attribute a = attr([&](pbf_writer& w) { w.add_packed_int64(fields::attribute::kInts, v.begin(), v.end()); });
    CHECK(a.kind == AttrKind::kInts);
    CHECK(a.ints == v);
  }
  {
    // Unpacked repeated floats.
    graph::Attribute a = attr([](pbf_writer& w) {
      w.add_float(fields::attribute::kFloats, 1.0f);
      w.add_float(fields::attribute::kFloats, 2.0f);
    });
    CHECK(a.kind == AttrKind::kFloats);
    CHECK(a.floats == std::vector<float>{1.0f, 2.0f});
  }
  {
    graph::Attribute a = attr([](pbf_writer& w) {
      pbf_writer t(w, fields::attribute::kT);
      WriteRawTensor(t, DType::kInt64, {1}, Raw(std::vector<int64_t>{7}));
    });
    CHECK(a.kind == AttrKind::kTensor);
    CHECK(a.t.data<int64_t>()[0] == 7);
  }
  {
    graph::Attribute a = attr([](pbf_writer& w) {
      pbf_writer g(w, fields::attribute::kG);
      g.add_string(fields::graph::kName, "body");
    });
    CHECK(a.kind == AttrKind::kGraph);
    REQUIRE(a.g != nullptr);
    CHECK(a.g->name == "body");
  }
  // No type and no value: refused.
  const Error e = ErrorOf([] { Read(ModelWithAttribute([](pbf_writer&) {})); });
  CHECK(e.code() == ErrorCode::kInvalidModel);
  CHECK(std::string(e.what()).find("node 'n1' (Op): attribute 'a'") != std::string::npos);
}

TEST_CASE("ReadModel validates attribute types") {
  // Unknown type number.
  CHECK(ErrorOf([] { Read(ModelWithAttribute([](pbf_writer& a) { a.add_int32(fields::attribute::kType, 99); })); })
            .code() == ErrorCode::kInvalidModel);
  // TENSOR without t.
  CHECK(ErrorOf([] { Read(ModelWithAttribute([](pbf_writer& a) { a.add_int32(fields::attribute::kType, 4); })); })
            .code() == ErrorCode::kInvalidModel);
  // A reference attribute needs no value.
  const graph::Model m = Read(ModelWithAttribute([](pbf_writer& a) {
    a.add_int32(fields::attribute::kType, 4);
    a.add_string(fields::attribute::kRefAttrName, "outer");
  }));
  CHECK(m.graph.nodes[0].attributes[0].ref_attr_name == "outer");
  // Fields of another kind are dropped: the attribute holds only its kind's value.
  const graph::Model m2 = Read(ModelWithAttribute([](pbf_writer& a) {
    a.add_int32(fields::attribute::kType, 2);
    a.add_int64(fields::attribute::kI, 5);
    a.add_float(fields::attribute::kF, 9.0f);
  }));
  CHECK(m2.graph.nodes[0].attributes[0].i == 5);
  CHECK(m2.graph.nodes[0].attributes[0].f == 0.0f);
}

TEST_CASE("ReadModel densifies sparse initializers") {
  auto model = [](const std::string& indices_raw, const Dims& indices_dims) {
    return ModelWithGraph([&](pbf_writer& g) {
      pbf_writer s(g, fields::graph::kSparseInitializer);
      {
        pbf_writer v(s, fields::sparse_tensor::kValues);
        WriteRawTensor(v, DType::kFloat32, {2}, Raw(std::vector<float>{1.5f, 2.5f}), "sp");
      }
      {
        pbf_writer i(s, fields::sparse_tensor::kIndices);
        WriteRawTensor(i, DType::kInt64, indices_dims, indices_raw);
      }
      const Dims dims = {2, 3};
      s.add_packed_int64(fields::sparse_tensor::kDims, dims.begin(), dims.end());
    });
  };
  const std::vector<float> want = {0, 1.5f, 0, 0, 0, 2.5f};
  for (const auto& [raw, dims] : {std::make_pair(Raw(std::vector<int64_t>{1, 5}), Dims{2}),
                                  std::make_pair(Raw(std::vector<int64_t>{0, 1, 1, 2}), Dims{2, 2})}) {
    const graph::Model m = Read(model(raw, dims));
    const Tensor* t = m.graph.FindInitializer("sp");
    REQUIRE(t != nullptr);
    CHECK(t->dims() == Dims{2, 3});
    CHECK(std::vector<float>(t->data<float>(), t->data<float>() + 6) == want);
  }
  CHECK(ErrorOf([&] { Read(model(Raw(std::vector<int64_t>{1, 6}), {2})); }).code() == ErrorCode::kInvalidModel);
  CHECK(ErrorOf([&] { Read(model(Raw(std::vector<int64_t>{0, 1, 2, 0}), {2, 2})); }).code() ==
        ErrorCode::kInvalidModel);
  CHECK(ErrorOf([&] { Read(model(Raw(std::vector<int64_t>{1, 2, 3}), {3})); }).code() == ErrorCode::kInvalidModel);
}

TEST_CASE("ReadModel keeps initializers that are also graph inputs (IR < 4)") {
  graph::Model m = SmallModel();
  m.ir_version = 3;
  m.graph.inputs.push_back(TensorValue("w", DType::kFloat32, {{2, ""}}));
  const graph::Model back = Read(WriteModel(m));
  CHECK(back.graph.inputs.size() == 2);
  CHECK(back.graph.FindInitializer("w") != nullptr);
}

TEST_CASE("ReadModel refuses duplicate initializers and names the place of errors") {
  graph::Model m = SmallModel();
  m.graph.initializers.emplace_back("w", Tensor::FromVector<float>(DType::kFloat32, {1}, {0.0f}));
  const Error e = ErrorOf([&] { Read(WriteModel(m)); });
  CHECK(e.code() == ErrorCode::kInvalidModel);
  CHECK(std::string(e.what()).find("duplicate initializer 'w'") != std::string::npos);

  const Error e2 = ErrorOf([] {
    Read(ModelWithGraph([](pbf_writer& g) {
      pbf_writer t(g, fields::graph::kInitializer);
      WriteRawTensor(t, DType::kFloat32, {3}, std::string(11, '\0'), "bias");
    }));
  });
  CHECK(e2.code() == ErrorCode::kInvalidModel);
  CHECK(std::string(e2.what()).find("graph 'g': initializer 'bias': raw_data has 11 bytes") !=
        std::string::npos);

  const Error e3 = ErrorOf([] {
    Read(ModelWithNode([](pbf_writer& n) {
      pbf_writer a(n, fields::node::kAttribute);
      a.add_string(fields::attribute::kName, "value");
      a.add_int32(fields::attribute::kType, 4);
      pbf_writer t(a, fields::attribute::kT);
      WriteRawTensor(t, DType::kFloat32, {-2}, "");
    }));
  });
  CHECK(std::string(e3.what()).find("node 'n1' (Op): attribute 'value': t: negative dimension") !=
        std::string::npos);
}

TEST_CASE("ReadModel refuses wrong wire types") {
  {
    std::string buf;
    pbf_writer(buf).add_string(fields::model::kIrVersion, "8");
    CHECK(ErrorOf([&] { Read(buf); }).code() == ErrorCode::kInvalidModel);
  }
  {
    std::string buf;
    pbf_writer(buf).add_int64(fields::model::kGraph, 1);
    CHECK(ErrorOf([&] { Read(buf); }).code() == ErrorCode::kInvalidModel);
  }
  CHECK(ErrorOf([] { Read(ModelWithNode([](pbf_writer& n) { n.add_int64(fields::node::kInput, 3); })); })
            .code() == ErrorCode::kInvalidModel);
  CHECK(ErrorOf([] {
          Read(ModelWithAttribute([](pbf_writer& a) { a.add_fixed64(fields::attribute::kF, 3); }));
        }).code() == ErrorCode::kInvalidModel);
  CHECK(ErrorOf([] {
          Read(ModelWithAttribute([](pbf_writer& a) { a.add_string(fields::attribute::kType, "x"); }));
        }).code() == ErrorCode::kInvalidModel);
  // Wire types 3/4 (groups) and 6/7 do not exist in proto3: refused by protozero.
  {
    std::string buf = WriteModel(SmallModel());
    buf.push_back(static_cast<char>((30 << 3) | 3));
    CHECK(ErrorOf([&] { Read(buf); }).code() == ErrorCode::kInvalidModel);
  }
}

TEST_CASE("ReadModel requires ir_version, opset_import and graph") {
  CHECK(ErrorOf([] { Read(std::string()); }).code() == ErrorCode::kInvalidModel);
  graph::Model m = SmallModel();
  m.opsets.clear();
  CHECK(ErrorOf([&] { Read(WriteModel(m)); }).code() == ErrorCode::kInvalidModel);
  std::string no_graph;
  pbf_writer(no_graph).add_int64(fields::model::kIrVersion, 2);
  CHECK(ErrorOf([&] { Read(no_graph); }).code() == ErrorCode::kInvalidModel);
}

TEST_CASE("ReadModel: every truncation of a small model throws simplecpp::Error") {
  const std::string full = WriteModel(SmallModel());
  REQUIRE_NOTHROW(Read(full));
  for (size_t len = 0; len < full.size(); ++len) {
    CAPTURE(len);
    CHECK_THROWS_AS(Read(full.substr(0, len)), Error);
  }
}

TEST_CASE("ReadModel: corrupted bytes throw simplecpp::Error or parse, never crash") {
  const std::string full = WriteModel(SmallModel());
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t flip : {uint8_t{0xff}, uint8_t{0x80}, uint8_t{0x01}, static_cast<uint8_t>(next() >> 24)}) {
      std::string bad = full;
      bad[i] = static_cast<char>(bad[i] ^ flip);
      try {
        Read(bad);
      } catch (const Error&) {
      }
    }
  }
  for (int k = 0; k < 200; ++k) {
    std::string junk(static_cast<size_t>(next() % 64), '\0');
    for (char& c : junk) c = static_cast<char>(next() >> 24);
    try {
      Read(junk);
    } catch (const Error&) {
    }
  }
}

TEST_CASE("ReadModel enforces node count and nesting limits") {
  graph::Model m = SmallModel();
  for (int i = 0; i < 9; ++i) m.graph.nodes.push_back(m.graph.nodes[0]);
  ReadOptions opts;
  opts.max_nodes = 5;
  CHECK(ErrorOf([&] { Read(WriteModel(m), opts); }).code() == ErrorCode::kLimitExceeded);

  // If nodes nested 6 deep.
  graph::Model nested = SmallModel();
  auto body = std::make_shared<graph::Graph>();
  body->name = "leaf";
  for (int depth = 0; depth < 5; ++depth) {
    graph::Node n;
    n.op_type = "If";
    graph::Attribute a;
    a.name = "then_branch";
    a.kind = graph::AttrKind::kGraph;
    a.g = body;
    n.attributes.push_back(a);
    auto outer = std::make_shared<graph::Graph>();
    outer->name = "level" + std::to_string(depth);
    outer->nodes.push_back(n);
    body = outer;
  }
  nested.graph.nodes.push_back(body->nodes[0]);
  const std::string bytes = WriteModel(nested);
  CHECK_NOTHROW(Read(bytes));
  opts = ReadOptions();
  opts.max_graph_depth = 4;
  CHECK(ErrorOf([&] { Read(bytes, opts); }).code() == ErrorCode::kLimitExceeded);

  // Types nested deeper than the type limit.
  graph::Model deep = SmallModel();
  graph::TypeInfo t;
  t.kind = graph::TypeInfo::Kind::kTensor;
  t.dtype = DType::kFloat32;
  for (int i = 0; i < 100; ++i) {
    graph::TypeInfo s;
    s.kind = graph::TypeInfo::Kind::kSequence;
    s.elem = std::make_shared<graph::TypeInfo>(t);
    t = s;
  }
  deep.graph.outputs[0].type = t;
  CHECK(ErrorOf([&] { Read(WriteModel(deep)); }).code() == ErrorCode::kLimitExceeded);

  opts = ReadOptions();
  opts.max_model_bytes = 10;
  CHECK(ErrorOf([&] { Read(WriteModel(SmallModel()), opts); }).code() == ErrorCode::kLimitExceeded);
}

TEST_CASE("ReadModel borrows large aligned raw_data and copies otherwise") {
  std::vector<float> values(1024);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  int borrowed = 0;
  for (int shift = 1; shift <= 4; ++shift) {
    graph::Model m = SmallModel();
    // doc_string is written before the graph: each extra byte moves the raw data by one.
    m.doc = std::string(static_cast<size_t>(shift), 'd');
    m.graph.initializers.emplace_back("big", Tensor::FromVector<float>(DType::kFloat32, {1024}, values));
    auto bytes = std::make_shared<std::string>(WriteModel(m));
    std::shared_ptr<const void> owner(bytes, bytes->data());
    for (bool with_owner : {true, false}) {
      const graph::Model back =
          ReadModel(bytes->data(), bytes->size(), ReadOptions(), with_owner ? owner : nullptr);
      const Tensor* t = back.graph.FindInitializer("big");
      REQUIRE(t != nullptr);
      CHECK(std::memcmp(t->raw_data(), values.data(), 4096) == 0);
      const char* p = static_cast<const char*>(t->raw_data());
      const bool inside = p >= bytes->data() && p < bytes->data() + bytes->size();
      if (inside) {
        CHECK(with_owner);
        CHECK(reinterpret_cast<uintptr_t>(p) % alignof(float) == 0);
        ++borrowed;
      }
      // Small tensors are always copied.
      const char* w = static_cast<const char*>(back.graph.FindInitializer("w")->raw_data());
      CHECK(!(w >= bytes->data() && w < bytes->data() + bytes->size()));
    }
  }
  CHECK(borrowed == 1);  // exactly one of four byte shifts is 4-aligned
}

// --- external data ---

struct ExternalSpec {
  std::string location;
  std::string offset;  // "" = absent
  std::string length;  // "" = absent
};

std::string ModelWithExternal(const ExternalSpec& spec, int64_t elements = 4) {
  return ModelWithGraph([&](pbf_writer& g) {
    pbf_writer t(g, fields::graph::kInitializer);
    const Dims dims = {elements};
    t.add_packed_int64(fields::tensor::kDims, dims.begin(), dims.end());
    t.add_int32(fields::tensor::kDataType, static_cast<int32_t>(DType::kFloat32));
    t.add_string(fields::tensor::kName, "ext");
    auto kv = [&](const std::string& k, const std::string& v) {
      pbf_writer e(t, fields::tensor::kExternalData);
      e.add_string(fields::entry::kKey, k);
      e.add_string(fields::entry::kValue, v);
    };
    kv("location", spec.location);
    if (!spec.offset.empty()) kv("offset", spec.offset);
    if (!spec.length.empty()) kv("length", spec.length);
    kv("checksum", "ignored");
    t.add_int32(fields::tensor::kDataLocation, fields::tensor::kLocationExternal);
  });
}

TEST_CASE("ReadModel external data is confined to the model folder") {
  TempDir dir;
  fs::create_directories(dir.Join("model"));
  fs::create_directories(dir.Join("model/sub"));
  fs::create_directories(dir.Join("outside"));
  const std::vector<float> floats = {1.0f, 2.0f, 3.0f, 4.0f};
  const std::string payload = std::string(16, 'x') + Raw(floats);  // 32 bytes, data at 16
  io::WriteStringToFile(dir.Join("model/weights.bin"), payload);
  io::WriteStringToFile(dir.Join("model/sub/weights.bin"), payload);
  io::WriteStringToFile(dir.Join("outside/secret.bin"), payload);
  REQUIRE(::symlink("../outside/secret.bin", dir.Join("model/escape.bin").c_str()) == 0);
  REQUIRE(::symlink("sub/weights.bin", dir.Join("model/inside_link.bin").c_str()) == 0);
  REQUIRE(::symlink("../outside", dir.Join("model/outdir").c_str()) == 0);

  auto load = [&](const ExternalSpec& spec, int64_t elements = 4) {
    const std::string path = dir.Join("model/model.onnx");
    io::WriteStringToFile(path, ModelWithExternal(spec, elements));
    return ReadModelFile(path);
  };
  auto check_values = [&](const graph::Model& m) {
    const Tensor* t = m.graph.FindInitializer("ext");
    REQUIRE(t != nullptr);
    CHECK(std::vector<float>(t->data<float>(), t->data<float>() + 4) == floats);
  };

  SUBCASE("accepted inside the folder") {
    check_values(load({"weights.bin", "16", "16"}));
    check_values(load({"weights.bin", "16", ""}));          // length: rest of the file
    check_values(load({"sub/weights.bin", "16", "16"}));
    check_values(load({"./sub/weights.bin", "16", "16"}));
    check_values(load({"inside_link.bin", "16", "16"}));    // symlink staying inside
    // ReadModel with an explicit folder.
    ReadOptions opts;
    opts.external_data_dir = dir.Join("model");
    check_values(Read(ModelWithExternal({"weights.bin", "16", "16"}), opts));
  }
  SUBCASE("refused: '..', absolute paths, symlink escapes") {
    for (const std::string& location :
         {std::string("../outside/secret.bin"), std::string("sub/../weights.bin"),
          std::string("..\\outside\\secret.bin"), dir.Join("model/weights.bin"),
          std::string("/etc/passwd"), std::string("C:\\weights.bin"), std::string("escape.bin"),
          std::string("outdir/secret.bin")}) {
      CAPTURE(location);
      const Error e = ErrorOf([&] { load({location, "16", "16"}); });
      CHECK(e.code() == ErrorCode::kInvalidModel);
    }
  }
  SUBCASE("refused: offset and length outside the file, overflow, mismatch") {
    CHECK(ErrorOf([&] { load({"weights.bin", "1000", ""}); }).code() == ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "24", "16"}); }).code() == ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "18446744073709551615", "16"}); }).code() ==
          ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "16", "18446744073709551615"}); }).code() ==
          ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "99999999999999999999999", "16"}); }).code() ==
          ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "-16", "16"}); }).code() == ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "16", "12"}); }).code() == ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"weights.bin", "0", ""}); }).code() == ErrorCode::kInvalidModel);  // 32 != 16
    // Element count overflow with external data.
    CHECK_THROWS_AS(load({"weights.bin", "16", "16"}, int64_t{1} << 62), Error);
    CHECK(ErrorOf([&] { load({"", "16", "16"}); }).code() == ErrorCode::kInvalidModel);
    CHECK(ErrorOf([&] { load({"missing.bin", "0", "16"}); }).code() == ErrorCode::kIo);
  }
  SUBCASE("refused without a folder") {
    CHECK(ErrorOf([] { Read(ModelWithExternal({"weights.bin", "16", "16"})); }).code() ==
          ErrorCode::kInvalidModel);
  }
}

TEST_CASE("ReadModelFile maps the file and reports the path") {
  TempDir dir;
  graph::Model m = SmallModel();
  std::vector<float> values(512, 3.0f);
  m.graph.initializers.emplace_back("big", Tensor::FromVector<float>(DType::kFloat32, {512}, values));
  WriteModelFile(dir.Join("m.onnx"), m);
  const graph::Model back = ReadModelFile(dir.Join("m.onnx"));
  CHECK(testing::Diff(m, back) == "");
  const Error e = ErrorOf([&] { ReadModelFile(dir.Join("nope.onnx")); });
  CHECK(e.code() == ErrorCode::kIo);
  io::WriteStringToFile(dir.Join("bad.onnx"), "\x08");
  const Error e2 = ErrorOf([&] { ReadModelFile(dir.Join("bad.onnx")); });
  CHECK(e2.code() == ErrorCode::kInvalidModel);
  CHECK(std::string(e2.what()).find("bad.onnx") != std::string::npos);
}

// Parses every model of the ONNX backend test data ($SIMPLECPP_ONNX_TESTS/node/*/model.onnx) and
// the TensorProto inputs/outputs next to them.
TEST_CASE("ReadModel parses the ONNX backend test models") {
  const char* env = std::getenv("SIMPLECPP_ONNX_TESTS");
  if (env == nullptr || *env == '\0') {
    MESSAGE("SIMPLECPP_ONNX_TESTS is not set: skipped");
    return;
  }
  fs::path root(env);
  if (fs::is_directory(root / "node")) root /= "node";
  if (!fs::is_directory(root)) {
    MESSAGE("no ONNX test folder at " << root.string() << ": skipped");
    return;
  }
  int models = 0, refused = 0, tensors = 0, tensors_refused = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path model_path = entry.path() / "model.onnx";
    if (!fs::is_regular_file(model_path)) continue;
    ++models;
    try {
      ReadModelFile(model_path.string());
    } catch (const Error& e) {
      ++refused;
      MESSAGE("refused " << entry.path().filename().string() << ": " << e.what());
    }
    for (const auto& data_dir : fs::directory_iterator(entry.path())) {
      if (!data_dir.is_directory()) continue;
      for (const auto& pb : fs::directory_iterator(data_dir.path())) {
        if (pb.path().extension() != ".pb") continue;
        ++tensors;
        try {
          ReadTensorProtoFile(pb.path().string());
        } catch (const Error&) {
          ++tensors_refused;  // sequence / optional / map values are not TensorProtos
        }
      }
    }
  }
  MESSAGE(models << " models, " << refused << " refused; " << tensors << " .pb files, "
                 << tensors_refused << " not TensorProto");
  CHECK(models > 0);
  CHECK(refused == 0);
}

}  // namespace
}  // namespace simplecpp::onnx
