// Static QDQ quantization (simplecpp/convert/quantize_qdq.cc): the built-in cnn becomes ONNX
// Runtime's quantize_static QDQ layout (BatchNorm folded, Relu after Conv removed, uint8
// activation Q/DQ pairs, int8 per-channel weight DQ, int32 bias DQ) and stays close to float32.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "tests/simplecpp/convert/convert_graph_models.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using builtin::detail::AttrInt;
using builtin::detail::AttrInts;
using builtin::detail::Builder;
using builtin::detail::NewModel;
using builtin::detail::TensorValue;
using convert_test::ConstantNode;
using convert_test::CountOp;
using convert_test::MaxAbs;
using convert_test::MaxAbsDiff;
using convert_test::OpTypes;
using convert_test::RunModel;

TEST_CASE("QDQ quantization of the built-in cnn: ORT's layout, close to float32") {
  const graph::Model f32 = builtin::MakeBuiltinModel("cnn");
  convert::QdqOptions o;
  for (uint64_t seed = 11; seed < 15; ++seed) {
    o.calibration.push_back({{"input", builtin::RandomFloatTensor({1, 3, 32, 32}, seed, -1.0f, 1.0f)}});
  }
  const graph::Model q = convert::QuantizeQdq(f32, o);
  const std::vector<std::string> want = {
      "QuantizeLinear", "DequantizeLinear",                                  // input
      "DequantizeLinear", "DequantizeLinear", "Conv", "QuantizeLinear", "DequantizeLinear",  // conv1 (+relu1)
      "MaxPool", "QuantizeLinear", "DequantizeLinear",                       // pool1
      "DequantizeLinear", "DequantizeLinear", "Conv", "QuantizeLinear", "DequantizeLinear",  // conv2+bn2+relu2
      "GlobalAveragePool", "QuantizeLinear", "DequantizeLinear",
      "Flatten", "QuantizeLinear", "DequantizeLinear",
      "DequantizeLinear", "DequantizeLinear", "Gemm", "QuantizeLinear", "DequantizeLinear",
      "Softmax"};
  CHECK(OpTypes(q.graph) == want);
  CHECK(CountOp(q.graph, "BatchNormalization") == 0);
  CHECK(CountOp(q.graph, "Relu") == 0);
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type == "QuantizeLinear") {
      CHECK(q.graph.FindInitializer(n.inputs[2])->dtype() == DType::kUInt8);
    }
    if (n.op_type == "Conv") {
      // Weight and bias come from DequantizeLinear of int8 (per channel) / int32 initializers.
      bool found_w = false, found_b = false;
      for (const graph::Node& d : q.graph.nodes) {
        if (d.op_type != "DequantizeLinear") continue;
        const Tensor* src = q.graph.FindInitializer(d.inputs[0]);
        if (d.outputs[0] == n.inputs[1]) {
          found_w = src && src->dtype() == DType::kInt8;
          CHECK(q.graph.FindInitializer(d.inputs[1])->num_elements() == src->dim(0));
          CHECK(d.FindAttribute("axis") != nullptr);
        }
        if (d.outputs[0] == n.inputs[2]) found_b = src && src->dtype() == DType::kInt32;
      }
      CHECK(found_w);
      CHECK(found_b);
    }
  }
  // Bias scale is x_scale * w_scale; the MaxPool output reuses its input's parameters.
  for (size_t i = 0; i + 1 < q.graph.nodes.size(); ++i) {
    if (q.graph.nodes[i].op_type != "MaxPool") continue;
    const graph::Node& in_dq = q.graph.nodes[i - 1];
    const graph::Node& out_q = q.graph.nodes[i + 1];
    CHECK(q.graph.FindInitializer(in_dq.inputs[1])->data<float>()[0] ==
          q.graph.FindInitializer(out_q.inputs[1])->data<float>()[0]);
  }

  // Close to float32 on inputs from the calibration distribution (probabilities in [0, 1]).
  for (uint64_t seed : {11u, 40u}) {
    const Tensor x = builtin::RandomFloatTensor({1, 3, 32, 32}, seed, -1.0f, 1.0f);
    const Tensor pw = RunModel(f32, {{"input", x}}).at("probabilities");
    const Tensor pg = RunModel(q, {{"input", x}}).at("probabilities");
    CAPTURE(seed);
    CAPTURE(MaxAbsDiff(pg, pw));
    CHECK(MaxAbsDiff(pg, pw) <= 0.02);
  }
  // Default calibration (no sets given) also works; per-tensor weights drop the axis.
  convert::QdqOptions pt;
  pt.per_channel = false;
  const graph::Model qt = convert::QuantizeQdq(f32, pt);
  for (const graph::Node& n : qt.graph.nodes) {
    if (n.op_type == "DequantizeLinear") CHECK(n.FindAttribute("axis") == nullptr);
  }
  const Tensor x = builtin::RandomFloatTensor({1, 3, 32, 32}, 1, -1.0f, 1.0f);
  CHECK(MaxAbsDiff(RunModel(qt, {{"input", x}}).at("probabilities"),
                   RunModel(f32, {{"input", x}}).at("probabilities")) <= 0.03);
}

TEST_CASE("QDQ quantization of the transformer and mlp: MatMuls with constant weights") {
  const graph::Model mlp = builtin::MakeBuiltinModel("mlp");
  const graph::Model q = convert::QuantizeQdq(mlp);
  CHECK(CountOp(q.graph, "MatMul") == 4);
  // Relu follows the bias Add, not the MatMul, so it stays (with Q/DQ pairs around it). The
  // bias Add has an initializer operand, so it is not a quantized node (it stays float between
  // the MatMul's output pair and the Relu's input pair). Every MatMul reads DQ outputs for both
  // the activation and the int8 weight; every Add reads its MatMul through a DQ.
  CHECK(CountOp(q.graph, "Relu") == 3);
  std::set<std::string> dq_outputs;
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type == "DequantizeLinear") dq_outputs.insert(n.outputs[0]);
  }
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type != "MatMul" && n.op_type != "Add") continue;
    CAPTURE(n.name);
    CHECK(dq_outputs.count(n.inputs[0]) == 1);
    if (n.op_type == "MatMul") CHECK(dq_outputs.count(n.inputs[1]) == 1);
  }
  const Tensor x = builtin::RandomFloatTensor({16, 512}, 1, -1.0f, 1.0f);
  CHECK(MaxAbsDiff(RunModel(q, {{"features", x}}).at("probabilities"),
                   RunModel(mlp, {{"features", x}}).at("probabilities")) <= 0.03);
}

// Every weight in a Constant node (paddle2onnx's layout): conv_a (+ BatchNormalization, whose
// parameters are Constants too) and Relu; conv_b and conv_c share one weight, which a third
// reader (Identity to a graph output) also sees as float.
graph::Model ConstantWeightCnn() {
  graph::Model m = NewModel("constant_cnn", "Conv + BN with Constant-node weights", 13);
  graph::Graph& g = m.graph;
  Builder b(&g, 21);
  g.inputs.push_back(TensorValue("x", {1, 3, 8, 8}));
  auto rnd = [](const Dims& d, uint64_t seed, float lo, float hi) {
    return builtin::RandomFloatTensor(d, seed, lo, hi);
  };
  const std::string wa = ConstantNode(&b, "wa", rnd({4, 3, 3, 3}, 1, -0.5f, 0.5f));
  const std::string ba = ConstantNode(&b, "ba", rnd({4}, 2, -0.2f, 0.2f));
  const std::string conv_a =
      b.Op("Conv", "conv_a", {"x", wa, ba}, {AttrInts("pads", {1, 1, 1, 1})});
  const std::string bn = b.Op("BatchNormalization", "bn",
                              {conv_a, ConstantNode(&b, "bn_scale", rnd({4}, 3, 0.5f, 1.5f)),
                               ConstantNode(&b, "bn_bias", rnd({4}, 4, -0.3f, 0.3f)),
                               ConstantNode(&b, "bn_mean", rnd({4}, 5, -0.2f, 0.2f)),
                               ConstantNode(&b, "bn_var", rnd({4}, 6, 0.5f, 1.5f))});
  const std::string relu = b.Op("Relu", "relu", {bn});
  const std::string ws = ConstantNode(&b, "ws", rnd({4, 4, 1, 1}, 7, -0.8f, 0.8f));
  const std::string conv_b = b.Op("Conv", "conv_b", {relu, ws});
  const std::string conv_c = b.Op("Conv", "conv_c", {conv_b, ws});
  b.Op("Add", "y", {conv_b, conv_c});
  b.Op("Identity", "ws_copy", {ws});
  g.outputs.push_back(TensorValue("y", {1, 4, 8, 8}));
  g.outputs.push_back(TensorValue("ws_copy", {4, 4, 1, 1}));
  return m;
}

TEST_CASE(
    "QDQ quantization of Constant-node weights: int8 DQ weights, BN folded, shared weight once") {
  const graph::Model f32 = ConstantWeightCnn();
  convert::QdqOptions o;
  for (uint64_t seed = 30; seed < 33; ++seed) {
    o.calibration.push_back({{"x", builtin::RandomFloatTensor({1, 3, 8, 8}, seed, -1.0f, 1.0f)}});
  }
  convert::QuantizeReport report;
  const graph::Model q = convert::QuantizeQdq(f32, o, &report);
  CHECK(report.constants_to_initializers == 7);
  CHECK(report.upgrade.to == report.upgrade.from);
  CHECK(CountOp(q.graph, "Constant") == 0);
  CHECK(CountOp(q.graph, "BatchNormalization") == 0);
  CHECK(CountOp(q.graph, "Relu") == 0);  // folded into conv_a's output range
  CHECK(CountOp(q.graph, "Conv") == 3);
  std::map<std::string, const graph::Node*> producer;
  for (const graph::Node& n : q.graph.nodes) producer[n.outputs[0]] = &n;
  int int8_weight_dqs = 0;
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type == "DequantizeLinear" && q.graph.FindInitializer(n.inputs[0]) &&
        q.graph.FindInitializer(n.inputs[0])->dtype() == DType::kInt8) {
      ++int8_weight_dqs;
      CHECK(n.FindAttribute("axis") != nullptr);  // per channel at opset 13
    }
    if (n.op_type != "Conv") continue;
    CAPTURE(n.name);
    // The activation and the weight both come from DequantizeLinear; the weight's source is int8.
    REQUIRE(producer.count(n.inputs[0]));
    CHECK(producer[n.inputs[0]]->op_type == "DequantizeLinear");
    REQUIRE(producer.count(n.inputs[1]));
    const graph::Node* wdq = producer[n.inputs[1]];
    CHECK(wdq->op_type == "DequantizeLinear");
    CHECK(q.graph.FindInitializer(wdq->inputs[0])->dtype() == DType::kInt8);
  }
  CHECK(int8_weight_dqs == 2);  // conv_a's folded weight; ws once for conv_b and conv_c
  // The shared weight's other reader still sees the float weight.
  const Tensor x = builtin::RandomFloatTensor({1, 3, 8, 8}, 31, -1.0f, 1.0f);
  const auto want = RunModel(f32, {{"x", x}});
  const auto got = RunModel(q, {{"x", x}});
  CHECK(MaxAbsDiff(got.at("ws_copy"), want.at("ws_copy")) == 0.0);
  CAPTURE(MaxAbsDiff(got.at("y"), want.at("y")));
  CAPTURE(MaxAbs(want.at("y")));
  CHECK(MaxAbsDiff(got.at("y"), want.at("y")) <= 0.05 * MaxAbs(want.at("y")));
}

// An opset-9 CNN head in paddle2onnx's style: Conv (Constant weight; output channel 2 nearly
// dead with a large bias), Clip-6, Flatten, MatMul, Softmax-1, then a Reshape of the
// probabilities.
graph::Model Opset9Classifier(const std::string& resize_mode = "") {
  graph::Model m = NewModel("opset9_cls", "opset-9 classifier head", resize_mode.empty() ? 9 : 11);
  graph::Graph& g = m.graph;
  Builder b(&g, 5);
  g.inputs.push_back(TensorValue("x", {1, 3, 4, 4}));
  Tensor w = builtin::RandomFloatTensor({4, 3, 3, 3}, 2, -0.5f, 0.5f);
  for (int64_t i = 2 * 27; i < 3 * 27; ++i) w.data<float>()[i] *= 1e-9f;
  const std::string conv = b.Op(
      "Conv", "conv",
      {"x", ConstantNode(&b, "w", w),
       ConstantNode(&b, "bias",
                    Tensor::FromVector<float>(DType::kFloat32, {4}, {0.1f, -0.2f, 5.0f, 0.3f}))},
      {AttrInts("pads", {1, 1, 1, 1})});
  std::string act =
      resize_mode.empty()
          ? b.Op("Clip", "clip", {conv},
                 {builtin::detail::AttrFloat("min", 0.0f), builtin::detail::AttrFloat("max", 6.0f)})
          : b.Op("Relu", "relu", {conv});
  if (!resize_mode.empty()) {  // opset 11: a Resize whose mode opset 13 no longer has
    act = b.Op(
        "Resize", "resize",
        {act, ConstantNode(&b, "roi", Tensor(DType::kFloat32, {0})),
         ConstantNode(&b, "scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 1, 1}))},
        {builtin::detail::AttrString("mode", "nearest"),
         builtin::detail::AttrString("coordinate_transformation_mode", resize_mode)});
  }
  const std::string flat = b.Op("Flatten", "flat", {act});
  const std::string mm =
      b.Op("MatMul", "mm",
           {flat, ConstantNode(&b, "fc", builtin::RandomFloatTensor({64, 5}, 3, -0.3f, 0.3f))});
  const std::string sm = b.Op("Softmax", "sm", {mm});
  b.Op("Reshape", "probs",
       {sm, ConstantNode(&b, "shape", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {5, 1}))});
  g.outputs.push_back(TensorValue("probs", {5, 1}));
  return m;
}

TEST_CASE("QDQ quantization of an opset-9 model: upgraded to 13 for per-channel weights") {
  const graph::Model f32 = Opset9Classifier();
  convert::QdqOptions o;
  for (uint64_t seed = 40; seed < 43; ++seed) {
    o.calibration.push_back({{"x", builtin::RandomFloatTensor({1, 3, 4, 4}, seed, -1.0f, 1.0f)}});
  }
  convert::QuantizeReport report;
  const graph::Model q = convert::QuantizeQdq(f32, o, &report);
  CHECK(report.upgrade.from == 9);
  CHECK(report.upgrade.to == 13);
  // Clip, and Softmax (its input's rank is unknown at load: Flatten -> Softmax -> Reshape).
  CHECK(report.upgrade.rewritten == 2);
  CHECK(report.note.empty());
  CHECK(q.OpsetVersion("") == 13);
  std::map<std::string, const graph::Node*> producer;
  for (const graph::Node& n : q.graph.nodes) producer[n.outputs[0]] = &n;
  for (const graph::Node& n : q.graph.nodes) {
    CAPTURE(n.name);
    const Tensor* src =
        n.op_type == "DequantizeLinear" ? q.graph.FindInitializer(n.inputs[0]) : nullptr;
    if (src && src->dtype() == DType::kInt8) CHECK(n.FindAttribute("axis") != nullptr);
    // Nothing int8 reaches the Reshape after the float Softmax: it stays float, no Q/DQ around it.
    auto p = producer.find(n.inputs[0]);
    if (n.op_type == "Reshape") CHECK(p->second->op_type != "DequantizeLinear");
    if (n.op_type == "QuantizeLinear" && p != producer.end()) {
      CHECK(p->second->op_type != "Softmax");
    }
  }
  // Channel 2's weight scale is raised so that its bias (5.0) fits int32: the output stays close.
  const Tensor x = builtin::RandomFloatTensor({1, 3, 4, 4}, 41, -1.0f, 1.0f);
  const Tensor want = RunModel(f32, {{"x", x}}).at("probs");
  const Tensor got = RunModel(q, {{"x", x}}).at("probs");
  CAPTURE(MaxAbsDiff(got, want));
  CHECK(MaxAbsDiff(got, want) <= 0.03);
}

TEST_CASE("QDQ quantization falls back to per-tensor weights when opset 13 is out of reach") {
  // Resize's tf_half_pixel_for_nn was removed at 13, so the upgrade refuses; QDQ stays at 11.
  const graph::Model f32 = Opset9Classifier("tf_half_pixel_for_nn");
  convert::QuantizeReport report;
  const graph::Model q = convert::QuantizeQdq(f32, {}, &report);
  CHECK(q.OpsetVersion("") == 11);
  CHECK(report.note.find("per tensor") != std::string::npos);
  CHECK(report.note.find("tf_half_pixel_for_nn") != std::string::npos);
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type == "DequantizeLinear") CHECK(n.FindAttribute("axis") == nullptr);
  }
  const Tensor x = builtin::RandomFloatTensor({1, 3, 4, 4}, 1, -1.0f, 1.0f);
  CHECK(MaxAbsDiff(RunModel(q, {{"x", x}}).at("probs"), RunModel(f32, {{"x", x}}).at("probs")) <=
        0.05);
}

}  // namespace
}  // namespace simplecpp

namespace simplecpp {
namespace {

// conv -> relu -> conv -> v * Clip(v + 3, 0, 6) / 6 (HardSwish as paddle2onnx spells it) ->
// conv. (The Relu is removed by the quantizer before the activation is looked at.)
graph::Model SpelledHardSwishNet() {
  graph::Model m = builtin::detail::NewModel("hswish", "spelled-out HardSwish", 13);
  graph::Graph& g = m.graph;
  builtin::detail::Builder b(&g, 9);
  g.inputs.push_back(builtin::detail::TensorValue("x", {1, 3, 6, 6}));
  const std::string c0 = b.Op("Conv", "c0", {"x", b.Weight("w0", {3, 3, 1, 1}, 0.5f)});
  const std::string r0 = b.Op("Relu", "r0", {c0});
  const std::string c1 = b.Op("Conv", "c1", {r0, b.Weight("w1", {4, 3, 3, 3}, 0.5f)},
                              {builtin::detail::AttrInts("pads", {1, 1, 1, 1})});
  const std::string v3 = b.Op("Add", "v3", {c1, b.Scalar("three", 3.0f)});
  const std::string r = b.Op("Clip", "r", {v3, b.Scalar("zero", 0.0f), b.Scalar("six", 6.0f)});
  const std::string vr = b.Op("Mul", "vr", {c1, r});
  const std::string h = b.Op("Div", "h", {vr, "six"});
  b.Op("Conv", "y", {h, b.Weight("w2", {2, 4, 1, 1}, 0.5f)});
  g.outputs.push_back(builtin::detail::TensorValue("y", {1, 2, 6, 6}));
  return m;
}

TEST_CASE("QDQ quantization keeps a spelled-out activation whole: no Q/DQ inside HardSwish") {
  const graph::Model f32 = SpelledHardSwishNet();
  convert::QdqOptions o;
  o.calibration.push_back({{"x", builtin::RandomFloatTensor({1, 3, 6, 6}, 4, -1.0f, 1.0f)}});
  const graph::Model q = convert::QuantizeQdq(f32, o);
  std::map<std::string, const graph::Node*> producer;
  for (const graph::Node& n : q.graph.nodes) producer[n.outputs[0]] = &n;
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type != "Mul" && n.op_type != "Add" && n.op_type != "Clip" && n.op_type != "Div") {
      continue;
    }
    CAPTURE(n.name);
    // The chain's inner values are not requantized: only its input is dequantized once.
    for (const std::string& in : n.inputs) {
      auto p = producer.find(in);
      if (p == producer.end() || p->second->op_type != "DequantizeLinear") continue;
      CHECK(p->second->inputs[0].find("c1") != std::string::npos);
    }
  }
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type != "QuantizeLinear") continue;
    CAPTURE(n.inputs[0]);
    CHECK((n.inputs[0] != "v3" && n.inputs[0] != "r" && n.inputs[0] != "vr"));
  }
  const Tensor x = builtin::RandomFloatTensor({1, 3, 6, 6}, 4, -1.0f, 1.0f);
  const Tensor want = convert_test::RunModel(f32, {{"x", x}}).at("y");
  const Tensor got = convert_test::RunModel(q, {{"x", x}}).at("y");
  CAPTURE(convert_test::MaxAbsDiff(got, want));
  CHECK(convert_test::MaxAbsDiff(got, want) <= 0.05 * convert_test::MaxAbs(want) + 0.02);
}

// A detector head as paddle2onnx writes PP-OCR's: conv -> relu -> ConvTranspose 2x2 s2 -> Add
// (bias [1, 5, 1, 1] from a Constant node) -> BatchNormalization -> Relu -> ConvTranspose 3x3 s2
// (pads, output_padding) -> Add (bias [1, 1, 1, 1]) -> Sigmoid.
graph::Model ConvTransposeHead() {
  graph::Model m = builtin::detail::NewModel("convt_head", "ConvTranspose head", 13);
  graph::Graph& g = m.graph;
  builtin::detail::Builder b(&g, 21);
  g.inputs.push_back(builtin::detail::TensorValue("x", {1, 3, 6, 6}));
  const std::string c0 = b.Op("Conv", "c0", {"x", b.Weight("w0", {4, 3, 3, 3}, 0.5f)},
                              {builtin::detail::AttrInts("pads", {1, 1, 1, 1})});
  const std::string r0 = b.Op("Relu", "r0", {c0});
  const std::string t0 = b.Op(
      "ConvTranspose", "t0", {r0, b.Weight("wt0", {4, 5, 2, 2}, 0.5f)},
      {builtin::detail::AttrInts("kernel_shape", {2, 2}),
       builtin::detail::AttrInts("strides", {2, 2})});
  const std::string a0 = b.Op(
      "Add", "a0",
      {t0, ConstantNode(&b, "bt0", builtin::RandomFloatTensor({1, 5, 1, 1}, 7, -0.2f, 0.2f))});
  const std::string bn =
      b.Op("BatchNormalization", "bn",
           {a0, b.Weight("gamma", {5}, 0.5f), b.Weight("beta", {5}, 0.3f),
            b.Weight("mean", {5}, 0.2f),
            ConstantNode(&b, "var", Tensor::FromVector<float>(DType::kFloat32, {5},
                                                              {0.5f, 1.0f, 2.0f, 0.25f, 1.5f}))});
  const std::string r1 = b.Op("Relu", "r1", {bn});
  const std::string t1 =
      b.Op("ConvTranspose", "t1", {r1, b.Weight("wt1", {5, 1, 3, 3}, 0.5f)},
           {builtin::detail::AttrInts("kernel_shape", {3, 3}),
            builtin::detail::AttrInts("strides", {2, 2}),
            builtin::detail::AttrInts("pads", {1, 1, 1, 1}),
            builtin::detail::AttrInts("output_padding", {1, 1})});
  const std::string a1 =
      b.Op("Add", "a1", {b.Floats("bt1", {1, 1, 1, 1}, {0.25f}), t1});
  b.Op("Sigmoid", "y", {a1});
  g.outputs.push_back(builtin::detail::TensorValue("y", {1, 1, 24, 24}));
  return m;
}

TEST_CASE("QDQ quantization of ConvTranspose: BN folded, int8 weights per output channel") {
  const graph::Model f32 = ConvTransposeHead();
  convert::QdqOptions o;
  for (uint64_t seed = 50; seed < 53; ++seed) {
    o.calibration.push_back({{"x", builtin::RandomFloatTensor({1, 3, 6, 6}, seed, -1.0f, 1.0f)}});
  }
  const graph::Model q = convert::QuantizeQdq(f32, o);
  CHECK(CountOp(q.graph, "BatchNormalization") == 0);
  CHECK(CountOp(q.graph, "Relu") == 0);
  CHECK(CountOp(q.graph, "Add") == 0);  // both biases folded into their ConvTranspose
  CHECK(CountOp(q.graph, "ConvTranspose") == 2);
  std::map<std::string, const graph::Node*> producer;
  for (const graph::Node& n : q.graph.nodes) producer[n.outputs[0]] = &n;
  int with_bias = 0;
  for (const graph::Node& n : q.graph.nodes) {
    if (n.op_type != "ConvTranspose") continue;
    CAPTURE(n.name);
    REQUIRE(producer.count(n.inputs[0]));
    CHECK(producer[n.inputs[0]]->op_type == "DequantizeLinear");
    REQUIRE(producer.count(n.inputs[1]));
    const graph::Node* wdq = producer[n.inputs[1]];
    REQUIRE(wdq->op_type == "DequantizeLinear");
    const Tensor* wq = q.graph.FindInitializer(wdq->inputs[0]);
    REQUIRE(wq != nullptr);
    CHECK(wq->dtype() == DType::kInt8);
    // Per output channel: W [C, M, k, k] along axis 1.
    const graph::Attribute* axis = wdq->FindAttribute("axis");
    REQUIRE(axis != nullptr);
    CHECK(axis->i == 1);
    CHECK(q.graph.FindInitializer(wdq->inputs[1])->num_elements() == wq->dim(1));
    // Each bias (t0's with the BatchNormalization folded into it) is int32 through a DQ.
    REQUIRE(n.inputs.size() == 3);
    ++with_bias;
    REQUIRE(producer.count(n.inputs[2]));
    CHECK(q.graph.FindInitializer(producer[n.inputs[2]]->inputs[0])->dtype() == DType::kInt32);
  }
  CHECK(with_bias == 2);
  for (uint64_t seed : {50u, 60u}) {
    const Tensor x = builtin::RandomFloatTensor({1, 3, 6, 6}, seed, -1.0f, 1.0f);
    const Tensor want = RunModel(f32, {{"x", x}}).at("y");
    const Tensor got = RunModel(q, {{"x", x}}).at("y");
    CAPTURE(seed);
    CAPTURE(MaxAbsDiff(got, want));
    CHECK(MaxAbsDiff(got, want) <= 0.05);
  }
}

}  // namespace
}  // namespace simplecpp
