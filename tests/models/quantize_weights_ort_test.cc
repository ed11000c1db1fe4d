// The weight quantizer's output (simplecpp/convert/quantize_weights.cc) in ONNX Runtime
// (onnxruntime-node through tests/models/ort_reference.mjs): the test model of
// tests/simplecpp/convert/weight_test_model.h quantized in both formats (blocked
// DequantizeLinear at opset 21, com.microsoft MatMulNBits), 4 and 8 bits, symmetric and
// asymmetric, must load and run in ORT and match simplecpp's outputs within a float32
// summation-order tolerance. Skipped with a message when `node` or the npm package is missing.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/onnx/model_writer.h"
#include "tests/models/ort_node.h"
#include "tests/simplecpp/convert/convert_test_util.h"
#include "tests/simplecpp/convert/weight_test_model.h"

namespace simplecpp {
namespace {

TEST_CASE("weight quantization vs onnxruntime-node: both formats load and match") {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipping the onnxruntime-node check of quantized weights: " << why);
    return;
  }
  const graph::Model f32 = convert_test::WeightTestModel();
  builtin::Random rng(11);
  const Tensor x = builtin::RandomFloatTensor({3, 45}, rng.Next(), -1.0f, 1.0f);
  const Tensor z = builtin::RandomFloatTensor({3, 8}, rng.Next(), -1.0f, 1.0f);
  const std::vector<std::string> outputs = {"y", "y2", "y3"};
  for (auto format : {convert::WeightOptions::kOnnx, convert::WeightOptions::kMsft}) {
    for (int bits : {4, 8}) {
      for (bool symmetric : {false, true}) {
        convert::WeightOptions o;
        o.bits = bits;
        o.block = 16;
        o.symmetric = symmetric;
        o.format = format;
        const std::string tag = std::string(format == convert::WeightOptions::kOnnx ? "onnx" : "msft") +
                                std::to_string(bits) + (symmetric ? "s" : "a");
        CAPTURE(tag);
        const graph::Model q = convert::QuantizeWeights(f32, o);
        std::vector<std::vector<float>> ort;
        std::string error;
        REQUIRE_MESSAGE(testing::RunOrtReference(ort_dir, onnx::WriteModel(q), {{"x", x}, {"z", z}},
                                                 "wquant-" + tag, &ort, &error),
                        error);
        REQUIRE(ort.size() == outputs.size());
        const std::map<std::string, Tensor> ours = convert_test::RunModel(q, {{"x", x}, {"z", z}});
        double max_diff = 0.0;
        for (size_t k = 0; k < outputs.size(); ++k) {
          const Tensor& y = ours.at(outputs[k]);
          REQUIRE(static_cast<size_t>(y.num_elements()) == ort[k].size());
          for (size_t i = 0; i < ort[k].size(); ++i) {
            const double d = std::fabs(static_cast<double>(y.data<float>()[i]) - ort[k][i]);
            max_diff = std::max(max_diff, d);
            // The same weights summed in another order over K <= 45 terms.
            CHECK_MESSAGE(d <= 1e-4 * (1.0 + std::fabs(ort[k][i])),
                          outputs[k] << "[" << i << "] = " << y.data<float>()[i] << ", onnxruntime "
                                     << ort[k][i]);
          }
        }
        MESSAGE(tag << ": max |simplecpp - onnxruntime| = " << max_diff);
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp
