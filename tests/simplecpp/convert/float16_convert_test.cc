// float32 -> float16 conversion (simplecpp/convert/float16_convert.cc): the built-in models
// convert completely (no float32 left in initializers or declared types), run, and agree with
// float32 within float16 precision.
#include <doctest/doctest.h>

#include <string>

#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

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

}  // namespace
}  // namespace simplecpp
