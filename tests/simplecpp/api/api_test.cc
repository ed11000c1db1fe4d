// The public C++ API end to end: a model written by the project's ONNX writer, loaded from bytes
// and from a file, run with named inputs; errors surface as simplecpp::Error.
#include "simplecpp/simplecpp.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "graph/op_test_util.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp {
namespace {

using testing::F32;

graph::ValueInfo TensorValue(const std::string& name, DType dtype, std::vector<int64_t> dims) {
  graph::ValueInfo v;
  v.name = name;
  v.type.kind = graph::TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(graph::Dim{d, d < 0 ? "batch" : ""});
  return v;
}

// y = Relu(x * w + b), x: [batch, 4]
std::string AffineReluModelBytes() {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back({"", 17});
  m.producer_name = "simplecpp-test";
  graph::Graph& g = m.graph;
  g.name = "affine_relu";
  g.inputs.push_back(TensorValue("x", DType::kFloat32, {-1, 4}));
  g.outputs.push_back(TensorValue("y", DType::kFloat32, {-1, 4}));
  g.initializers.emplace_back("w", F32({4}, {1, -1, 2, 0.5f}));
  g.initializers.emplace_back("b", F32({4}, {0, 1, -1, 0}));
  graph::Node mul;
  mul.name = "mul";
  mul.op_type = "Mul";
  mul.inputs = {"x", "w"};
  mul.outputs = {"xw"};
  graph::Node add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {"xw", "b"};
  add.outputs = {"s"};
  graph::Node relu;
  relu.name = "relu";
  relu.op_type = "Relu";
  relu.inputs = {"s"};
  relu.outputs = {"y"};
  g.nodes = {mul, add, relu};
  return onnx::WriteModel(m);
}

std::vector<float> Expected(const std::vector<float>& x) {
  const float w[] = {1, -1, 2, 0.5f}, b[] = {0, 1, -1, 0};
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i] * w[i % 4] + b[i % 4];
    y[i] = v > 0 ? v : 0;
  }
  return y;
}

TEST_CASE("Model loads from bytes and from a file, Session runs with named inputs") {
  const std::string bytes = AffineReluModelBytes();
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  REQUIRE(model.inputs().size() == 1);
  CHECK(model.inputs()[0].name == "x");
  CHECK(model.inputs()[0].dims == std::vector<int64_t>{-1, 4});
  CHECK(model.inputs()[0].dim_params[0] == "batch");
  CHECK(model.outputs()[0].name == "y");
  CHECK(model.ir_version() == 8);

  Session session(model);
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, 0, 8};
  auto out = session.Run({{"x", F32({3, 4}, x)}});
  const Tensor& y = out.at("y");
  CHECK(y.dims() == Dims{3, 4});
  const auto expected = Expected(x);
  for (size_t i = 0; i < x.size(); ++i) CHECK(y.data<float>()[i] == expected[i]);

  const std::string path = "api_test_model.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  Model from_file = Model::Load(path);
  Session s2(from_file, SessionOptions{2});
  auto out2 = s2.Run({{"x", F32({3, 4}, x)}}, {"y"});
  CHECK(out2.at("y").BitwiseEquals(y));
  std::remove(path.c_str());
}

TEST_CASE("API errors are simplecpp::Error with useful messages") {
  const std::string bytes = AffineReluModelBytes();
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  Session session(model);
  CHECK_THROWS_WITH_AS(session.Run({{"nope", F32({1, 4}, {1, 2, 3, 4})}}),
                       doctest::Contains("nope"), Error);
  CHECK_THROWS_WITH_AS(session.Run({{"x", F32({1, 4}, {1, 2, 3, 4})}}, {"zz"}),
                       doctest::Contains("zz"), Error);
  CHECK_THROWS_AS(Model::Load("/nonexistent/model.onnx"), Error);
  const std::string garbage = "this is not a model";
  CHECK_THROWS_AS(Model::LoadFromBytes(garbage.data(), garbage.size()), Error);
  CHECK_THROWS_AS(Model::LoadFromBytes(bytes.data(), bytes.size() / 2), Error);
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
TEST_CASE("One Model shared by concurrent Sessions gives the same bytes as a sequential run") {
  const std::string bytes = AffineReluModelBytes();
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  std::vector<Tensor> inputs, sequential;
  for (int t = 0; t < 8; ++t) {
    inputs.push_back(testing::RandomF32({16, 4}, 100 + t));
    Session s(model);
    sequential.push_back(s.Run({{"x", inputs.back()}}).at("y"));
  }
  std::vector<Tensor> concurrent(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Session s(model);
      for (int r = 0; r < 20; ++r) concurrent[t] = s.Run({{"x", inputs[t]}}).at("y");
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) CHECK(concurrent[t].BitwiseEquals(sequential[t]));
}
#endif

}  // namespace
}  // namespace simplecpp
