// Weight-only block quantization (simplecpp/convert/quantize_weights.cc) on a model with every
// kind of weight (weight_test_model.h), in both formats, 4 and 8 bits, symmetric and
// asymmetric: the written model loads and runs, every weight is within half a step of the
// original, the ONNX and MatMulNBits forms hold bit-identical dequantized weights and give the
// same outputs, and the outputs stay close to the float model's.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "kernels/float16/float16.h"
#include "quant/int4.h"
#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/constant_initializers.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/convert/seeded_inputs.h"
#include "simplecpp/error.h"
#include "tests/simplecpp/convert/convert_test_util.h"
#include "tests/simplecpp/convert/weight_test_model.h"

namespace simplecpp {
namespace {

using convert_test::CountOp;
using convert_test::MaxAbs;
using convert_test::MaxAbsDiff;
using convert_test::RunModel;
using convert_test::WeightTestModel;

constexpr int64_t kBlock = 16;

// A weight's dequantized values and the scale of each element, [K, N] row-major.
struct Dequantized {
  int64_t k = 0, n = 0;
  std::vector<float> values, scales;
};

std::vector<float> AsFloats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = convert_test::ValueAsFloat(t, static_cast<int64_t>(i));
  return v;
}

int32_t CodeAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt4: return quant::GetSubByte(static_cast<const uint8_t*>(t.raw_data()), i, 4, true);
    case DType::kUInt4: return quant::GetSubByte(static_cast<const uint8_t*>(t.raw_data()), i, 4, false);
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    default: FAIL("unexpected code type " << DTypeName(t.dtype())); return 0;
  }
}

// Every DequantizeLinear of the ONNX form, by the weight it replaced.
std::map<std::string, Dequantized> DequantizeOnnx(const graph::Model& m) {
  std::map<std::string, Dequantized> out;
  for (const graph::Node& n : m.graph.nodes) {
    if (n.op_type != "DequantizeLinear") continue;
    const Tensor* q = m.graph.FindInitializer(n.inputs[0]);
    const Tensor* s = m.graph.FindInitializer(n.inputs[1]);
    const Tensor* zp = n.inputs.size() > 2 ? m.graph.FindInitializer(n.inputs[2]) : nullptr;
    REQUIRE(q != nullptr);
    REQUIRE(s != nullptr);
    CHECK(n.FindAttribute("block_size")->i == kBlock);
    CHECK(n.FindAttribute("axis")->i == 0);
    Dequantized d;
    d.k = q->dim(0);
    d.n = q->dim(1);
    REQUIRE(s->dim(0) == (d.k + kBlock - 1) / kBlock);
    const std::vector<float> scales = AsFloats(*s);
    for (int64_t r = 0; r < d.k; ++r) {
      for (int64_t c = 0; c < d.n; ++c) {
        const int64_t p = (r / kBlock) * d.n + c;
        const float scale = scales[static_cast<size_t>(p)];
        const int32_t z = zp ? CodeAt(*zp, p) : 0;
        d.values.push_back(static_cast<float>(CodeAt(*q, r * d.n + c) - z) * scale);
        d.scales.push_back(scale);
      }
    }
    const std::string suffix = "_quantized";
    out[n.inputs[0].substr(0, n.inputs[0].size() - suffix.size())] = d;
  }
  return out;
}

// Every MatMulNBits weight of the msft form, transposed back to [K, N], by the weight it replaced.
std::map<std::string, Dequantized> DequantizeMsft(const graph::Model& m, int bits) {
  std::map<std::string, Dequantized> out;
  for (const graph::Node& n : m.graph.nodes) {
    if (n.op_type != "MatMulNBits") continue;
    CHECK(n.domain == "com.microsoft");
    const int64_t k = n.FindAttribute("K")->i, cols = n.FindAttribute("N")->i;
    CHECK(n.FindAttribute("bits")->i == bits);
    CHECK(n.FindAttribute("block_size")->i == kBlock);
    const Tensor* b = m.graph.FindInitializer(n.inputs[1]);
    const Tensor* s = m.graph.FindInitializer(n.inputs[2]);
    const Tensor* zp = n.inputs.size() > 3 && !n.inputs[3].empty() ? m.graph.FindInitializer(n.inputs[3]) : nullptr;
    REQUIRE(b != nullptr);
    REQUIRE(s != nullptr);
    const int64_t blocks = (k + kBlock - 1) / kBlock, blob = kBlock * bits / 8;
    const int64_t zp_row = (blocks * bits + 7) / 8;
    REQUIRE(b->dims() == Dims{cols, blocks, blob});
    REQUIRE(s->num_elements() == cols * blocks);
    if (zp) REQUIRE(zp->num_elements() == cols * zp_row);
    const std::vector<float> scales = AsFloats(*s);
    const uint8_t* bp = b->data<uint8_t>();
    Dequantized d;
    d.k = k;
    d.n = cols;
    d.values.assign(static_cast<size_t>(k * cols), 0.0f);
    d.scales.assign(static_cast<size_t>(k * cols), 0.0f);
    for (int64_t c = 0; c < cols; ++c) {
      for (int64_t r = 0; r < k; ++r) {
        const int64_t bl = r / kBlock;
        const uint8_t* blob_p = bp + (c * blocks + bl) * blob;
        const int32_t code = bits == 8 ? blob_p[r % kBlock] : quant::GetSubByte(blob_p, r % kBlock, 4, false);
        int32_t z = 1 << (bits - 1);
        if (zp) {
          const uint8_t* zr = zp->data<uint8_t>() + c * zp_row;
          z = bits == 8 ? zr[bl] : quant::GetSubByte(zr, bl, 4, false);
        }
        const float scale = scales[static_cast<size_t>(c * blocks + bl)];
        d.values[static_cast<size_t>(r * cols + c)] = static_cast<float>(code - z) * scale;
        d.scales[static_cast<size_t>(r * cols + c)] = scale;
      }
    }
    const std::string suffix = "_nbits";
    out[n.inputs[1].substr(0, n.inputs[1].size() - suffix.size())] = d;
  }
  return out;
}

// The float weights as the quantizer sees them: [K, N], Gemm's wg transposed and times alpha.
std::map<std::string, std::vector<float>> OriginalWeights() {
  graph::Model m = WeightTestModel();
  convert::detail::ConstantsToInitializers(&m.graph);
  std::map<std::string, std::vector<float>> out;
  for (const char* name : {"w1", "wc", "wo"}) out[name] = AsFloats(*m.graph.FindInitializer(name));
  const Tensor* wg = m.graph.FindInitializer("wg");  // [24, 40] -> [40, 24]
  std::vector<float> t(static_cast<size_t>(wg->num_elements()));
  for (int64_t r = 0; r < 24; ++r) {
    for (int64_t c = 0; c < 40; ++c) {
      t[static_cast<size_t>(c * 24 + r)] = 0.5f * wg->data<float>()[r * 40 + c];
    }
  }
  out["wg"] = t;
  return out;
}

std::map<std::string, Tensor> TestInputs() {
  builtin::Random rng(3);
  return {{"x", builtin::RandomFloatTensor({3, 45}, rng.Next(), -1.0f, 1.0f)},
          {"z", builtin::RandomFloatTensor({3, 8}, rng.Next(), -1.0f, 1.0f)}};
}

convert::WeightOptions Options(int bits, bool symmetric, convert::WeightOptions::Format f) {
  convert::WeightOptions o;
  o.bits = bits;
  o.block = kBlock;
  o.symmetric = symmetric;
  o.format = f;
  return o;
}

TEST_CASE("weight quantization: both formats, 4 and 8 bits, symmetric and asymmetric") {
  const graph::Model f32 = WeightTestModel();
  const std::map<std::string, Tensor> inputs = TestInputs();
  const std::map<std::string, Tensor> want = RunModel(f32, inputs);
  const std::map<std::string, std::vector<float>> original = OriginalWeights();
  for (int bits : {4, 8}) {
    for (bool symmetric : {false, true}) {
      CAPTURE(bits);
      CAPTURE(symmetric);
      convert::WeightReport onnx_report, msft_report;
      const graph::Model qo = convert::QuantizeWeights(
          f32, Options(bits, symmetric, convert::WeightOptions::kOnnx), &onnx_report);
      const graph::Model qm = convert::QuantizeWeights(
          f32, Options(bits, symmetric, convert::WeightOptions::kMsft), &msft_report);

      // What was quantized and what stayed float, and why.
      for (const convert::WeightReport* r : {&onnx_report, &msft_report}) {
        CHECK(r->nodes_quantized == 5);
        REQUIRE(r->weights.size() == 4);  // w1, wc (two nodes), wg, wo
        for (const auto& w : r->weights) {
          CHECK(w.nodes == (w.name == "wc" ? 2 : 1));
          CHECK(w.sqnr_db > (bits == 4 ? 15.0 : 38.0));
        }
        CHECK(r->kept_float.at("K < block") == 1);
        CHECK(r->kept_float.at("B is not a constant float32/float16 rank-2 weight") == 1);
        CHECK(r->prepare.constants_to_initializers == 1);
      }
      CHECK(onnx_report.prepare.upgrade.from == 17);
      CHECK(onnx_report.prepare.upgrade.to == 21);
      CHECK(qo.OpsetVersion("") == 21);
      CHECK(qm.OpsetVersion("") == 17);
      CHECK(qm.OpsetVersion("com.microsoft") == 1);
      CHECK(CountOp(qo.graph, "DequantizeLinear") == 4);  // the shared weight once
      CHECK(CountOp(qo.graph, "MatMul") == 7);
      CHECK(CountOp(qo.graph, "Gemm") == 0);
      CHECK(CountOp(qo.graph, "Add") == 1);  // Gemm's C
      CHECK(CountOp(qm.graph, "MatMulNBits") == 5);
      CHECK(CountOp(qm.graph, "Add") == 0);  // C became MatMulNBits' bias
      CHECK(qo.graph.FindInitializer("w1") == nullptr);
      CHECK(qo.graph.FindInitializer("wz") != nullptr);

      // Every weight within half a step of the original; both forms bit-identical.
      const auto dq_onnx = DequantizeOnnx(qo);
      const auto dq_msft = DequantizeMsft(qm, bits);
      REQUIRE(dq_onnx.size() == 4);
      REQUIRE(dq_msft.size() == 4);
      for (const auto& entry : original) {
        const std::string& name = entry.first;
        const std::vector<float>& w = entry.second;
        CAPTURE(name);
        const Dequantized& a = dq_onnx.at(name);
        const Dequantized& b = dq_msft.at(name);
        REQUIRE(a.values.size() == w.size());
        REQUIRE(b.values.size() == w.size());
        int beyond = 0, differ = 0;
        for (size_t i = 0; i < w.size(); ++i) {
          beyond += std::fabs(w[i] - a.values[i]) > 0.5f * a.scales[i] * (1.0f + 1e-5f);
          differ += a.values[i] != b.values[i] || a.scales[i] != b.scales[i];
        }
        CHECK(beyond == 0);
        CHECK(differ == 0);
      }

      // Both run, agree with each other to float rounding and with the float model within
      // the quantization error, relative to the output's magnitude: <= 0.15 (4 bits) and
      // <= 0.01 (8 bits), with a margin over what these layers give.
      const std::map<std::string, Tensor> got_onnx = RunModel(qo, inputs);
      const std::map<std::string, Tensor> got_msft = RunModel(qm, inputs);
      for (const std::string out : {"y", "y2", "y3"}) {
        CAPTURE(out);
        const double scale = MaxAbs(want.at(out));
        CHECK(MaxAbsDiff(got_onnx.at(out), got_msft.at(out)) <= 1e-5 * (1.0 + scale));
        const double err = MaxAbsDiff(got_onnx.at(out), want.at(out));
        MESSAGE(out << ": max |quantized - float| = " << err << " (max |float| " << scale << ")");
        CHECK(err <= (bits == 4 ? 0.15 : 0.01) * scale);
      }
      // y2 and y3 are float paths: exactly the float model's.
      CHECK(MaxAbsDiff(got_onnx.at("y2"), want.at("y2")) == 0.0);
      CHECK(MaxAbsDiff(got_msft.at("y3"), want.at("y3")) == 0.0);
    }
  }
}

TEST_CASE("weight quantization: float16 weights get float16 scales and stay within half a step") {
  // One MatMul in float16: x [2, 40] * w [40, 8].
  graph::Model m = builtin::detail::NewModel("f16", "float16 weight", 21);
  builtin::detail::Builder b(&m.graph, 9);
  m.graph.inputs.push_back(builtin::detail::TensorValue("x", {2, 40}, DType::kFloat16));
  const Tensor w32 = builtin::RandomFloatTensor({40, 8}, 4, -0.7f, 0.7f);
  Tensor w16(DType::kFloat16, {40, 8});
  kernels::FloatToHalf(w32.data<float>(), w16.data<uint16_t>(), 320);
  b.Initializer("w", w16);
  b.Op("MatMul", "y", {"x", "w"});
  m.graph.outputs.push_back(builtin::detail::TensorValue("y", {2, 8}, DType::kFloat16));
  const std::vector<float> w = AsFloats(w16);
  Tensor x(DType::kFloat16, {2, 40});
  const Tensor x32 = builtin::RandomFloatTensor({2, 40}, 8, -1.0f, 1.0f);
  kernels::FloatToHalf(x32.data<float>(), x.data<uint16_t>(), 80);
  const Tensor want = RunModel(m, {{"x", x}}).at("y");
  for (bool symmetric : {false, true}) {
    CAPTURE(symmetric);
    const graph::Model qo =
        convert::QuantizeWeights(m, Options(4, symmetric, convert::WeightOptions::kOnnx));
    const graph::Model qm =
        convert::QuantizeWeights(m, Options(4, symmetric, convert::WeightOptions::kMsft));
    const Dequantized a = DequantizeOnnx(qo).at("w");
    const Dequantized d = DequantizeMsft(qm, 4).at("w");
    CHECK(qo.graph.FindInitializer("w_scale")->dtype() == DType::kFloat16);
    CHECK(qm.graph.FindInitializer("w_scales")->dtype() == DType::kFloat16);
    for (size_t i = 0; i < w.size(); ++i) {
      CHECK(std::fabs(w[i] - a.values[i]) <= 0.5f * a.scales[i] * (1.0f + 1e-5f));
      CHECK(a.values[i] == d.values[i]);
    }
    const Tensor got_onnx = RunModel(qo, {{"x", x}}).at("y");
    const Tensor got_msft = RunModel(qm, {{"x", x}}).at("y");
    CHECK(got_onnx.dtype() == DType::kFloat16);
    CHECK(MaxAbsDiff(got_onnx, want) <= 0.2 * MaxAbs(want));
    CHECK(MaxAbsDiff(got_onnx, got_msft) <= 2e-3 * (1.0 + MaxAbs(want)));
  }
}

TEST_CASE("weight quantization: msft accuracy_level is written when asked, and checked") {
  graph::Model m = builtin::detail::NewModel("acc", "one weight", 17);
  builtin::detail::Builder b(&m.graph, 5);
  m.graph.inputs.push_back(builtin::detail::TensorValue("x", {1, 64}));
  b.Op("MatMul", "y", {"x", b.Weight("w", {64, 16}, 0.3f)});
  m.graph.outputs.push_back(builtin::detail::TensorValue("y", {1, 16}));
  auto level_of = [](const graph::Model& q) -> int64_t {
    for (const graph::Node& n : q.graph.nodes) {
      if (n.op_type != "MatMulNBits") continue;
      for (const graph::Attribute& a : n.attributes) {
        if (a.name == "accuracy_level") return a.i;
      }
      return -1;  // absent: the default, 0
    }
    return -2;
  };
  convert::WeightOptions o = Options(4, false, convert::WeightOptions::kMsft);
  CHECK(level_of(convert::QuantizeWeights(m, o)) == -1);
  o.accuracy_level = 4;
  const graph::Model q4 = convert::QuantizeWeights(m, o);
  CHECK(level_of(q4) == 4);
  // The int8-A kernel runs it: close to the float model, not equal to the level-0 one.
  Tensor x = builtin::RandomFloatTensor({1, 64}, 3, -1.0f, 1.0f);
  const Tensor want = RunModel(m, {{"x", x}}).at("y");
  const Tensor got = RunModel(q4, {{"x", x}}).at("y");
  o.accuracy_level = 0;
  const Tensor got0 = RunModel(convert::QuantizeWeights(m, o), {{"x", x}}).at("y");
  CHECK(MaxAbsDiff(got, want) <= 0.2 * MaxAbs(want));
  CHECK(MaxAbsDiff(got, got0) > 0.0);
  o.accuracy_level = 5;
  CHECK_THROWS_AS(convert::QuantizeWeights(m, o), Error);
  o.accuracy_level = 4;
  o.format = convert::WeightOptions::kOnnx;
  CHECK_THROWS_AS(convert::QuantizeWeights(m, o), Error);
}

TEST_CASE("weight quantization: seeded report inputs keep ids inside the table they index") {
  // ids [2, -1] int64 -> Gather(table [7, 40]) -> MatMul(w [40, 16]).
  graph::Model m = builtin::detail::NewModel("ids", "embedding then a weight", 17);
  builtin::detail::Builder b(&m.graph, 4);
  m.graph.inputs.push_back(builtin::detail::TensorValue("ids", {2, -1}, DType::kInt64));
  const std::string emb = b.Op("Gather", "emb", {b.Weight("table", {7, 40}, 1.0f), "ids"});
  b.Op("MatMul", "y", {emb, b.Weight("w", {40, 16}, 0.3f)});
  m.graph.outputs.push_back(builtin::detail::TensorValue("y", {2, -1, 16}));
  CHECK(convert::detail::IdLimits(m.graph).at("ids") == 7);
  const graph::Model q = convert::QuantizeWeights(m, Options(8, false, convert::WeightOptions::kOnnx));
  // Runs both on seeded ids (an id >= 7 would fail the Gather) and measures the difference.
  const convert::detail::OutputError same = convert::detail::CompareOutputs(m, m);
  CHECK(same.max_abs == 0.0);
  CHECK(same.elements == 2 * 16);  // the unknown dim is 1
  const convert::detail::OutputError e = convert::detail::CompareOutputs(m, q);
  CHECK(e.max_abs > 0.0);
  CHECK(e.max_abs <= 0.01 * e.max_ref);
  CHECK(e.mean_abs <= e.max_abs);
}

TEST_CASE("weight quantization: bad options and models are refused with a clear error") {
  const graph::Model f32 = WeightTestModel();
  auto code_of = [&](const graph::Model& m, const convert::WeightOptions& o) {
    try {
      convert::QuantizeWeights(m, o);
    } catch (const Error& e) {
      MESSAGE(std::string(e.what()));
      return static_cast<int>(e.code());
    }
    return 0;
  };
  const int kInvalidArgument = static_cast<int>(ErrorCode::kInvalidArgument);
  const int kUnsupported = static_cast<int>(ErrorCode::kUnsupported);
  CHECK(code_of(f32, Options(3, false, convert::WeightOptions::kOnnx)) == kInvalidArgument);
  convert::WeightOptions odd_block = Options(4, false, convert::WeightOptions::kMsft);
  odd_block.block = 24;
  CHECK(code_of(f32, odd_block) == kInvalidArgument);
  odd_block.format = convert::WeightOptions::kOnnx;  // DequantizeLinear takes any block size
  CHECK(code_of(f32, odd_block) == 0);
  // Every weight shorter than the block: nothing to quantize.
  convert::WeightOptions big = Options(4, false, convert::WeightOptions::kOnnx);
  big.block = 64;
  CHECK(code_of(f32, big) == kUnsupported);
  // An op the upgrade to 21 cannot rewrite is named.
  graph::Model dft = WeightTestModel();
  builtin::detail::Builder b(&dft.graph, 1);
  b.Op("DFT", "spectrum", {"x"});
  dft.graph.outputs.push_back(builtin::detail::TensorValue("spectrum", {-1, -1, -1}));
  bool named = false;
  try {
    convert::QuantizeWeights(dft, Options(4, false, convert::WeightOptions::kOnnx));
  } catch (const Error& e) {
    named = std::string(e.what()).find("DFT") != std::string::npos && e.code() == ErrorCode::kUnsupported;
    MESSAGE(std::string(e.what()));
  }
  CHECK(named);
  // The msft form leaves the opset alone, so the same model quantizes.
  CHECK(code_of(dft, Options(4, false, convert::WeightOptions::kMsft)) == 0);
}

}  // namespace
}  // namespace simplecpp
