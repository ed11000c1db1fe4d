// float32 -> float16 conversion (simplecpp/convert/float16_convert.cc): the built-in models
// convert completely (no float32 left in initializers or declared types), run, and agree with
// float32 within float16 precision.
#include <doctest/doctest.h>

#include <string>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "tests/simplecpp/convert/convert_graph_models.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using builtin::detail::AttrInt;
using builtin::detail::AttrString;
using builtin::detail::Builder;
using builtin::detail::NewModel;
using builtin::detail::TensorValue;
using convert_test::ConstantNode;
using convert_test::CountOp;
using convert_test::MaxAbs;
using convert_test::MaxAbsDiff;
using convert_test::OpTypes;
using convert_test::RunModel;

Tensor Half(const Tensor& t) {
  Tensor h(DType::kFloat16, t.dims());
  kernels::FloatToHalf(t.data<float>(), static_cast<uint16_t*>(h.raw_data()), static_cast<size_t>(t.num_elements()));
  return h;
}

TEST_CASE("float16 conversion of cnn, transformer and mlp") {
  struct Case {
    const char* model;
    const char* input;
    Dims dims;
    const char* output;
    double tolerance;  // relative to max |float32 output|
  };
  for (const Case& c : {Case{"cnn", "input", {1, 3, 32, 32}, "probabilities", 0.01},
                        Case{"transformer", "x", {1, 16, 64}, "y", 0.01},
                        Case{"mlp", "features", {16, 512}, "probabilities", 0.01}}) {
    CAPTURE(c.model);
    const graph::Model f32 = builtin::MakeBuiltinModel(c.model);
    const graph::Model h = convert::ConvertToFloat16(f32);
    CHECK(OpTypes(h.graph) == OpTypes(f32.graph));  // nothing needed a float32 island
    for (const auto& [name, t] : h.graph.initializers) {
      const auto& initializer = name;  // CAPTURE cannot capture a structured binding (clang, C++17)
      CAPTURE(initializer);
      CHECK(t.dtype() != DType::kFloat32);
    }
    CHECK(h.graph.inputs[0].type.dtype == DType::kFloat16);
    CHECK(h.graph.outputs[0].type.dtype == DType::kFloat16);
    const Tensor x = builtin::RandomFloatTensor(c.dims, 2, -1.0f, 1.0f);
    const Tensor want = RunModel(f32, {{c.input, x}}).at(c.output);
    const Tensor got = RunModel(h, {{c.input, Half(x)}}).at(c.output);
    CHECK(got.dtype() == DType::kFloat16);
    CAPTURE(MaxAbsDiff(got, want));
    CHECK(MaxAbsDiff(got, want) <= c.tolerance * MaxAbs(want));
  }
}

TEST_CASE("float16 conversion of a dynamically quantized model: float32 islands behind Casts") {
  graph::Model m = builtin::MakeBuiltinModel("transformer");
  const graph::Model q = convert::QuantizeDynamic(m);
  const graph::Model h = convert::ConvertToFloat16(q);
  // Every DynamicQuantizeLinear now reads a Cast to float32 and its scale output is cast down.
  // The int32 MatMulInteger sums (up to 127 * 127 * K, past float16's 65504) stay float32: their
  // Cast keeps to = FLOAT and the rescaling Mul casts its float16 scale up and its result down.
  const int dql = CountOp(q.graph, "DynamicQuantizeLinear");
  const int mmi = CountOp(q.graph, "MatMulInteger");
  CHECK(CountOp(h.graph, "Cast") == CountOp(q.graph, "Cast") + 2 * dql + 2 * mmi);
  for (const graph::Node& n : h.graph.nodes) {
    if (n.op_type == "DynamicQuantizeLinear") CHECK(n.inputs[0].find("_fp32") != std::string::npos);
    if (n.op_type == "Cast" && n.inputs[0].find("_output_quantized") != std::string::npos &&
        n.inputs[0].find("_cast_output") == std::string::npos) {
      CHECK(n.FindAttribute("to")->i == static_cast<int64_t>(DType::kFloat32));
    }
  }
  const Tensor x = builtin::RandomFloatTensor({1, 16, 64}, 4, -1.0f, 1.0f);
  const Tensor want = RunModel(q, {{"x", x}}).at("y");
  const Tensor got = RunModel(h, {{"x", Half(x)}}).at("y");
  CAPTURE(MaxAbsDiff(got, want));
  CHECK(MaxAbsDiff(got, want) <= 0.02 * MaxAbs(want));
}

TEST_CASE("float16 conversion keeps Resize scales and roi float32, from Constants and Casts") {
  graph::Model m = NewModel("resize", "Resize with Constant scales", 11);
  graph::Graph& g = m.graph;
  Builder b(&g, 5);
  g.inputs.push_back(TensorValue("x", {1, 2, 4, 6}));
  const std::string roi = ConstantNode(&b, "roi", Tensor(DType::kFloat32, {0}));
  // ONNX types scales as float32 only: float16 scales make a model ORT and simplecpp refuse.
  const std::string scales =
      ConstantNode(&b, "scales",
                   Tensor::FromVector<float>(DType::kFloat32, {4}, {1.0f, 1.0f, 1.3333334f, 1.5f}));
  const std::string up = b.Op(
      "Resize", "up", {"x", roi, scales},
      {AttrString("mode", "nearest"), AttrString("coordinate_transformation_mode", "asymmetric"),
       AttrString("nearest_mode", "floor")});
  // The same scales Constant also feeds a float16 reader (a copy is made for it).
  b.Op("Mul", "scales_sq", {scales, scales});
  // Scales computed by a Cast(to FLOAT) keep that Cast at float32.
  const std::string int_scales =
      ConstantNode(&b, "int_scales", Tensor::FromVector<int64_t>(DType::kInt64, {4}, {1, 1, 2, 1}));
  const std::string cast = b.Op("Cast", "cast", {int_scales}, {AttrInt("to", 1)});
  b.Op("Resize", "up2", {up, roi, cast}, {AttrString("mode", "linear")});
  g.outputs.push_back(TensorValue("up2", {1, 2, 10, 9}));
  g.outputs.push_back(TensorValue("scales_sq", {4}));

  const graph::Model h = convert::ConvertToFloat16(m);
  CHECK(CountOp(h.graph, "Constant") == 0);
  for (const graph::Node& n : h.graph.nodes) {
    CAPTURE(n.name);
    if (n.op_type == "Resize") {
      const Tensor* r = h.graph.FindInitializer(n.inputs[1]);
      REQUIRE(r != nullptr);
      CHECK(r->dtype() == DType::kFloat32);
      const Tensor* s = h.graph.FindInitializer(n.inputs[2]);
      if (n.name == "up") {
        REQUIRE(s != nullptr);
        CHECK(s->dtype() == DType::kFloat32);
      } else {
        CHECK(n.inputs[2] == "cast");
      }
    }
    if (n.op_type == "Cast") {
      CHECK(n.FindAttribute("to")->i == static_cast<int64_t>(DType::kFloat32));
    }
    if (n.op_type == "Mul") CHECK(h.graph.FindInitializer(n.inputs[0])->dtype() == DType::kFloat16);
  }
  const Tensor x = builtin::RandomFloatTensor({1, 2, 4, 6}, 6, -1.0f, 1.0f);
  const auto want = RunModel(m, {{"x", x}});
  const auto got = RunModel(h, {{"x", Half(x)}});
  CHECK(got.at("up2").dtype() == DType::kFloat16);
  CHECK(got.at("up2").dims() == want.at("up2").dims());
  CHECK(MaxAbsDiff(got.at("up2"), want.at("up2")) <= 0.01);
  CHECK(MaxAbsDiff(got.at("scales_sq"), want.at("scales_sq")) <= 0.01);
}

TEST_CASE("float16 conversion runs nodes with constants past float16's range in float32") {
  // PP-OCRv4's detector head has BatchNormalization variances of ~1e8 (its input is ~1e4): clamped
  // to 65504 they would scale the output up 40x.
  graph::Model m = NewModel("bn_range", "BatchNormalization with huge variances", 13);
  graph::Graph& g = m.graph;
  Builder b(&g, 2);
  g.inputs.push_back(TensorValue("x", {1, 2, 3, 3}));
  const std::string var = b.Floats("bn.var", {2}, {1.0e8f, 4.0e7f});
  const std::string big = b.Op("Mul", "big", {"x", b.Scalar("gain", 5000.0f)});
  const std::string bn =
      b.Op("BatchNormalization", "bn",
           {big, b.Floats("bn.scale", {2}, {1.0f, 2.0f}), b.Floats("bn.bias", {2}, {0.1f, -0.1f}),
            b.Floats("bn.mean", {2}, {100.0f, -50.0f}), var});
  b.Op("Relu", "y", {bn});
  b.Op("Identity", "var_copy", {var});  // a float16 reader of the same constant (clamped there)
  g.outputs.push_back(TensorValue("y", {1, 2, 3, 3}));
  g.outputs.push_back(TensorValue("var_copy", {2}));
  const graph::Model h = convert::ConvertToFloat16(m);
  for (const graph::Node& n : h.graph.nodes) {
    if (n.op_type != "BatchNormalization") continue;
    for (size_t i = 1; i < 5; ++i)
      CHECK(h.graph.FindInitializer(n.inputs[i])->dtype() == DType::kFloat32);
  }
  CHECK(CountOp(h.graph, "Cast") == 2);  // x up, y down around the BatchNormalization
  const Tensor x = builtin::RandomFloatTensor({1, 2, 3, 3}, 3, -1.0f, 1.0f);
  const Tensor want = RunModel(m, {{"x", x}}).at("y");
  const Tensor got = RunModel(h, {{"x", Half(x)}}).at("y");
  CAPTURE(MaxAbsDiff(got, want));
  CHECK(MaxAbsDiff(got, want) <= 0.01 * MaxAbs(want) + 1e-3);
}

}  // namespace
}  // namespace simplecpp
