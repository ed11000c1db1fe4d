// Dynamic quantization (simplecpp/convert/quantize_dynamic.cc): the rewritten built-in models
// carry ONNX Runtime's quantize_dynamic pattern, load, run, and stay close to float32.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "tests/simplecpp/convert/convert_graph_models.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using builtin::detail::AttrFloat;
using builtin::detail::AttrInts;
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

TEST_CASE("dynamic quantization: transformer gets ORT's MatMulInteger pattern per constant MatMul") {
  const graph::Model f32 = builtin::MakeBuiltinModel("transformer");
  const graph::Model q = convert::QuantizeDynamic(f32);
  // 6 MatMuls with constant weights (q, k, v, attn_out, mlp_up, mlp_down); the two
  // activation x activation MatMuls (scores, context) stay float.
  CHECK(CountOp(q.graph, "MatMulInteger") == 6);
  CHECK(CountOp(q.graph, "MatMul") == 2);
  // q, k and v read the same LayerNorm output: one shared DynamicQuantizeLinear.
  CHECK(CountOp(q.graph, "DynamicQuantizeLinear") == 4);
  // The pattern, in ORT's node order: DQL, MatMulInteger, Cast, Mul (scales), Mul (output), then
  // the model's own bias Add.
  const std::vector<std::string> ops = OpTypes(q.graph);
  const std::vector<std::string> first = {"LayerNormalization", "DynamicQuantizeLinear", "MatMulInteger",
                                          "Cast", "Mul", "Mul", "Add"};
  REQUIRE(ops.size() > first.size());
  CHECK(std::vector<std::string>(ops.begin(), ops.begin() + static_cast<long>(first.size())) == first);
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type == "MatMulInteger") {
      REQUIRE(n.inputs.size() == 4);
      const Tensor* w = q.graph.FindInitializer(n.inputs[1]);
      const Tensor* wzp = q.graph.FindInitializer(n.inputs[3]);
      REQUIRE(w != nullptr);
      REQUIRE(wzp != nullptr);
      CHECK(w->dtype() == DType::kInt8);
      CHECK(wzp->dtype() == DType::kInt8);
      CHECK(wzp->data<int8_t>()[0] == 0);
    }
    if (n.op_type == "Cast") CHECK(n.FindAttribute("to")->i == 1);
  }
  // The float weights are gone; int8 copies replace them.
  CHECK(q.graph.FindInitializer("q.weight") == nullptr);
  CHECK(q.graph.FindInitializer("q.weight_quantized") != nullptr);

  const Tensor x = builtin::RandomFloatTensor({1, 16, 64}, 5, -1.0f, 1.0f);
  const Tensor want = RunModel(f32, {{"x", x}}).at("y");
  const Tensor got = RunModel(q, {{"x", x}}).at("y");
  // Tolerance: 8-bit activations and weights through 6 layers; measured ~1-2 % of max |y|.
  CAPTURE(MaxAbsDiff(got, want));
  CAPTURE(MaxAbs(want));
  CHECK(MaxAbsDiff(got, want) <= 0.05 * MaxAbs(want));
}

TEST_CASE("dynamic quantization: per-column weights, Gemm with transB/alpha/beta, mlp") {
  const graph::Model mlp = builtin::MakeBuiltinModel("mlp");
  convert::DynamicOptions o;
  o.per_channel = true;
  const graph::Model q = convert::QuantizeDynamic(mlp, o);
  CHECK(CountOp(q.graph, "MatMulInteger") == 4);
  CHECK(CountOp(q.graph, "MatMul") == 0);
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type != "MatMulInteger") continue;
    const Tensor* w = q.graph.FindInitializer(n.inputs[1]);
    const Tensor* wzp = q.graph.FindInitializer(n.inputs[3]);
    REQUIRE(wzp->rank() == 1);
    CHECK(wzp->dim(0) == w->dim(1));
  }
  const Tensor x = builtin::RandomFloatTensor({16, 512}, 9, -1.0f, 1.0f);
  const Tensor want = RunModel(mlp, {{"features", x}}).at("probabilities");
  const Tensor got = RunModel(q, {{"features", x}}).at("probabilities");
  CAPTURE(MaxAbsDiff(got, want));
  CHECK(MaxAbsDiff(got, want) <= 0.02);

  // The cnn's Gemm (transB 1) is quantized too; alpha folds into the weight scale.
  graph::Model cnn = builtin::MakeBuiltinModel("cnn");
  for (graph::Node& n : cnn.graph.nodes) {
    if (n.op_type == "Gemm") {
      graph::Attribute a;
      a.name = "alpha";
      a.kind = graph::AttrKind::kFloat;
      a.f = 0.5f;
      n.attributes.push_back(a);
      a.name = "beta";
      a.f = 2.0f;
      n.attributes.push_back(a);
    }
  }
  convert::DynamicOptions gemm_only;
  gemm_only.quantize_conv = false;
  const graph::Model qc = convert::QuantizeDynamic(cnn, gemm_only);
  CHECK(CountOp(qc.graph, "Gemm") == 0);
  CHECK(CountOp(qc.graph, "MatMulInteger") == 1);
  const Tensor img = builtin::RandomFloatTensor({1, 3, 32, 32}, 3, -1.0f, 1.0f);
  const Tensor pw = RunModel(cnn, {{"input", img}}).at("probabilities");
  const Tensor pg = RunModel(qc, {{"input", img}}).at("probabilities");
  CAPTURE(MaxAbsDiff(pg, pw));
  CHECK(MaxAbsDiff(pg, pw) <= 0.01);

  convert::DynamicOptions no_gemm;
  no_gemm.quantize_gemm = false;
  no_gemm.quantize_conv = false;
  CHECK_THROWS_AS(convert::QuantizeDynamic(builtin::MakeBuiltinModel("cnn"), no_gemm), Error);
}

TEST_CASE("dynamic quantization of Conv: ConvInteger per tensor and per channel, close to float") {
  const graph::Model cnn = builtin::MakeBuiltinModel("cnn");
  const Tensor img = builtin::RandomFloatTensor({1, 3, 32, 32}, 8, -1.0f, 1.0f);
  const Tensor want = RunModel(cnn, {{"input", img}}).at("probabilities");
  for (bool per_channel : {false, true}) {
    CAPTURE(per_channel);
    convert::DynamicOptions o;
    o.per_channel = per_channel;
    const graph::Model q = convert::QuantizeDynamic(cnn, o);
    CHECK(CountOp(q.graph, "Conv") == 0);
    CHECK(CountOp(q.graph, "ConvInteger") == CountOp(cnn.graph, "Conv"));
    for (const graph::Node& n : q.graph.nodes) {
      if (n.op_type != "ConvInteger") continue;
      const Tensor* w = q.graph.FindInitializer(n.inputs[1]);
      const Tensor* wzp = q.graph.FindInitializer(n.inputs[3]);
      REQUIRE(w != nullptr);
      CHECK(w->dtype() == DType::kInt8);
      CHECK(wzp->num_elements() == 1);  // ORT's ConvInteger takes one weight zero point
    }
    const Tensor got = RunModel(q, {{"input", img}}).at("probabilities");
    CAPTURE(MaxAbsDiff(got, want));
    CHECK(MaxAbsDiff(got, want) <= 0.03);
  }
}

// An opset-9 model in paddle2onnx's style (weights in Constant nodes): Upsample-9, Clip-6 with
// attribute bounds, Dropout-7, Reshape, MatMul with a constant weight, Slice-1.
graph::Model Opset9Model() {
  graph::Model m = NewModel("opset9", "opset-9 Upsample / Clip / MatMul", 9);
  graph::Graph& g = m.graph;
  Builder b(&g, 3);
  g.inputs.push_back(TensorValue("x", {1, 2, 4, 8}));
  const std::string scales =
      ConstantNode(&b, "scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 2, 2}));
  const std::string up = b.Op("Upsample", "up", {"x", scales}, {AttrString("mode", "nearest")});
  const std::string clip =
      b.Op("Clip", "clip", {up}, {AttrFloat("min", -0.6f), AttrFloat("max", 0.6f)});
  const std::string drop = b.OpN("Dropout", "drop", {clip}, {"drop", "drop_mask"})[0];
  const std::string shape =
      ConstantNode(&b, "shape", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {-1, 16}));
  const std::string flat = b.Op("Reshape", "flat", {drop, shape});
  const std::string w = ConstantNode(&b, "w", builtin::RandomFloatTensor({16, 8}, 8, -0.5f, 0.5f));
  const std::string mm = b.Op("MatMul", "mm", {flat, w});
  b.Op("Slice", "y", {mm}, {AttrInts("starts", {0}), AttrInts("ends", {6}), AttrInts("axes", {1})});
  g.outputs.push_back(TensorValue("y", {32, 6}));
  return m;
}

TEST_CASE("dynamic quantization of an opset-9 model: upgraded to 11, close to float") {
  const graph::Model f32 = Opset9Model();
  convert::QuantizeReport report;
  const graph::Model q = convert::QuantizeDynamic(f32, {}, &report);
  CHECK(report.upgrade.from == 9);
  CHECK(report.upgrade.to == 11);
  CHECK(report.upgrade.rewritten == 4);  // Upsample -> Resize, Clip, Dropout mask, Slice
  CHECK(q.OpsetVersion("") == 11);
  CHECK(CountOp(q.graph, "Upsample") == 0);
  CHECK(CountOp(q.graph, "Resize") == 1);
  CHECK(CountOp(q.graph, "Constant") == 0);
  CHECK(CountOp(q.graph, "MatMulInteger") == 1);
  CHECK(CountOp(q.graph, "MatMul") == 0);
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type == "Clip") CHECK(n.inputs.size() == 3);
    if (n.op_type == "Slice") CHECK(n.inputs.size() == 4);
  }
  const Tensor x = builtin::RandomFloatTensor({1, 2, 4, 8}, 12, -1.0f, 1.0f);
  const Tensor want = RunModel(f32, {{"x", x}}).at("y");
  const Tensor got = RunModel(q, {{"x", x}}).at("y");
  CAPTURE(MaxAbsDiff(got, want));
  CAPTURE(MaxAbs(want));
  CHECK(MaxAbsDiff(got, want) <= 0.03 * MaxAbs(want));
}

}  // namespace
}  // namespace simplecpp
