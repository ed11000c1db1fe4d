// Static QDQ quantization (simplecpp/convert/quantize_qdq.cc): the built-in cnn becomes ONNX
// Runtime's quantize_static QDQ layout (BatchNorm folded, Relu after Conv removed, uint8
// activation Q/DQ pairs, int8 per-channel weight DQ, int32 bias DQ) and stays close to float32.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using convert_test::CountOp;
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

}  // namespace
}  // namespace simplecpp
