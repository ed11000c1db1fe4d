// Pattern 7 of the quantized-pattern fusion pass (graph/passes/quant_fusion.h): QuantizeLinear(
// Add | Sub | Mul | Div (DequantizeLinear(a), DequantizeLinear(b))) becomes simplecpp.fused
// QdqBinary; and pattern 5 with a nearest Resize. Each graph runs with fusion on and off on the
// same inputs and must give the same bytes (both fusions are exact), and the fused output is also
// checked against a scalar float32 evaluation of the ONNX formulas written here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/op_test_util.h"
#include "graph/thread_pool.h"

namespace simplecpp::graph {
namespace {

using testing::AttrString;
using test_graph::In;
using test_graph::N;
using test_graph::Out;

bool HasOp(const Plan& plan, const std::string& op_type) {
  for (const PlanStep& s : plan.steps()) {
    if (s.node.op_type == op_type) return true;
  }
  return false;
}

Tensor Scalar8(int32_t v, bool is_signed) {
  Tensor t(is_signed ? DType::kInt8 : DType::kUInt8, {});
  static_cast<uint8_t*>(t.raw_data())[0] = static_cast<uint8_t>(v);
  return t;
}

Tensor ScalarF(float v) { return Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{v}); }

int32_t At8(const Tensor& t, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return t.dtype() == DType::kInt8 ? static_cast<int32_t>(static_cast<int8_t>(p[i])) : p[i];
}

// Every value of the type in turn (so both extremes occur), then random ones.
Tensor Sweep8(const Dims& dims, bool is_signed, std::mt19937* rng) {
  Tensor t(is_signed ? DType::kInt8 : DType::kUInt8, dims);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  std::uniform_int_distribution<int> d(0, 255);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    p[i] = static_cast<uint8_t>(i < 256 ? i : d(*rng));
  }
  return t;
}

struct QdqBinaryCase {
  std::string op = "Add";
  bool a_signed = false, b_signed = false, y_signed = false;
  Dims a_dims = {2, 3, 17, 19}, b_dims = {2, 3, 17, 19};
  float as = 0.05f, bs = 0.05f, ys = 0.1f;  // power-of-two ratios: many exact .5 ties
  int32_t azp = 3, bzp = 7, yzp = 5;         // odd zero points (int8: the stored value)
  bool y_is_output = false;                  // the float op output is read twice: not fused
  bool a_dq_shared = false;                  // DequantizeLinear(a) also a graph output
  uint32_t seed = 1;
};

// ONNX's formulas in float32, element by element: the reference for the fused output.
int32_t Reference(const QdqBinaryCase& c, int32_t a, int32_t b) {
  const float fa = static_cast<float>(a - c.azp) * c.as;
  const float fb = static_cast<float>(b - c.bzp) * c.bs;
  float y = 0.0f;
  if (c.op == "Add") y = fa + fb;
  if (c.op == "Sub") y = fa - fb;
  if (c.op == "Mul") y = fa * fb;
  if (c.op == "Div") y = fa / fb;
  float q = std::nearbyint(y / c.ys);
  if (std::isnan(q)) q = 0.0f;
  const float lo = c.y_signed ? -128.0f : 0.0f, hi = c.y_signed ? 127.0f : 255.0f;
  return static_cast<int32_t>(std::fmin(hi, std::fmax(lo, q + static_cast<float>(c.yzp))));
}

void CheckQdqBinary(const QdqBinaryCase& c, bool expect_fused) {
  CAPTURE(c.op);
  CAPTURE(c.a_signed);
  CAPTURE(c.b_signed);
  CAPTURE(c.y_signed);
  std::mt19937 rng(c.seed);
  Graph g;
  g.inputs.push_back(In("a", c.a_signed ? DType::kInt8 : DType::kUInt8, c.a_dims));
  g.inputs.push_back(In("b", c.b_signed ? DType::kInt8 : DType::kUInt8, c.b_dims));
  g.initializers.emplace_back("as", ScalarF(c.as));
  g.initializers.emplace_back("bs", ScalarF(c.bs));
  g.initializers.emplace_back("ys", ScalarF(c.ys));
  g.initializers.emplace_back("azp", Scalar8(c.azp, c.a_signed));
  g.initializers.emplace_back("bzp", Scalar8(c.bzp, c.b_signed));
  g.initializers.emplace_back("yzp", Scalar8(c.yzp, c.y_signed));
  g.nodes.push_back(N("DequantizeLinear", {"a", "as", "azp"}, {"af"}));
  g.nodes.push_back(N("DequantizeLinear", {"b", "bs", "bzp"}, {"bf"}));
  g.nodes.push_back(N(c.op, {"af", "bf"}, {"yf"}));
  g.nodes.push_back(N("QuantizeLinear", {"yf", "ys", "yzp"}, {"y"}));
  g.outputs.push_back(Out("y"));
  if (c.y_is_output) g.outputs.push_back(Out("yf"));
  if (c.a_dq_shared) g.outputs.push_back(Out("af"));
  const Tensor a = Sweep8(c.a_dims, c.a_signed, &rng);
  const Tensor b = Sweep8(c.b_dims, c.b_signed, &rng);
  const OpsetMap opsets{{"", 19}};
  PlanOptions on, off;
  off.fuse_quantized = false;
  auto fused = Plan::Build(g, opsets, on);
  auto plain = Plan::Build(g, opsets, off);
  CHECK(HasOp(*fused, "QdqBinary") == expect_fused);
  for (int threads : {1, 2}) {
    auto pool = MakeThreadPool(threads);
    Executor ef(fused, pool.get()), eu(plain, pool.get());
    const std::map<std::string, Tensor> feeds{{"a", a}, {"b", b}};
    const std::vector<Tensor> yf = ef.Run(feeds), yu = eu.Run(feeds);
    REQUIRE(yf.size() == yu.size());
    for (size_t i = 0; i < yf.size(); ++i) CHECK(yf[i].BitwiseEquals(yu[i]));
    // The reference, with numpy broadcasting of [.., 1, ..] dims (same rank here).
    const Dims& yd = yf[0].dims();
    REQUIRE(yd.size() == c.a_dims.size());
    int mismatches = 0;
    for (int64_t i = 0; i < yf[0].num_elements(); ++i) {
      int64_t rest = i, ai = 0, bi = 0, astride = 1, bstride = 1;
      for (int d = static_cast<int>(yd.size()) - 1; d >= 0; --d) {
        const int64_t coord = rest % yd[d];
        rest /= yd[d];
        ai += (c.a_dims[d] == 1 ? 0 : coord) * astride;
        bi += (c.b_dims[d] == 1 ? 0 : coord) * bstride;
        astride *= c.a_dims[d];
        bstride *= c.b_dims[d];
      }
      if (At8(yf[0], i) != Reference(c, At8(a, ai), At8(b, bi))) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("QuantFusion: QDQ Add / Sub / Mul / Div become QdqBinary, bit-identical") {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (int types = 0; types < 8; ++types) {
      QdqBinaryCase c;
      c.op = op;
      c.a_signed = (types & 1) != 0;
      c.b_signed = (types & 2) != 0;
      c.y_signed = (types & 4) != 0;
      if (c.op == "Mul" || c.op == "Div") c.ys = 0.0025f;
      c.seed = static_cast<uint32_t>(types + 10);
      CheckQdqBinary(c, true);
    }
  }
}

TEST_CASE("QuantFusion: QdqBinary broadcasts like the float op") {
  QdqBinaryCase c;
  SUBCASE("per-channel operand (squeeze-and-excitation Mul)") {
    c.op = "Mul";
    c.ys = 0.0025f;
    c.b_dims = {2, 3, 1, 1};
    CheckQdqBinary(c, true);
  }
  SUBCASE("short runs: a per-channel operand over small images (blocks span runs)") {
    c.op = "Mul";
    c.ys = 0.0025f;
    c.a_dims = {3, 40, 3, 4};
    c.b_dims = {3, 40, 1, 1};
    CheckQdqBinary(c, true);
  }
  SUBCASE("long runs of a per-channel operand (a table per run), every signedness") {
    for (int types = 0; types < 8; ++types) {
      for (const char* op : {"Mul", "Div", "Add"}) {
        QdqBinaryCase t;
        t.op = op;
        t.a_signed = (types & 1) != 0;
        t.b_signed = (types & 2) != 0;
        t.y_signed = (types & 4) != 0;
        t.ys = t.op == std::string("Add") ? 0.1f : 0.0025f;
        // The dense operand first for Mul / Add, second for Div (a table over the divisor).
        t.a_dims = t.op == std::string("Div") ? Dims{1, 3, 1, 1} : Dims{1, 3, 40, 41};
        t.b_dims = t.op == std::string("Div") ? Dims{1, 3, 40, 41} : Dims{1, 3, 1, 1};
        t.seed = static_cast<uint32_t>(types + 40);
        CheckQdqBinary(t, true);
      }
    }
  }
  SUBCASE("many channels' runs per kernel call, two tasks, every signedness") {
    // 200 runs of 194 (a tail of 2 each): more runs than one task takes, so the second task's
    // first run and every run's tail are where a wrong offset would show.
    for (int types = 0; types < 8; ++types) {
      for (const char* op : {"Mul", "Div"}) {
        QdqBinaryCase t;
        t.op = op;
        t.a_signed = (types & 1) != 0;
        t.b_signed = (types & 2) != 0;
        t.y_signed = (types & 4) != 0;
        t.ys = 0.0025f;
        t.a_dims = t.op == std::string("Div") ? Dims{1, 200, 1, 1} : Dims{1, 200, 2, 97};
        t.b_dims = t.op == std::string("Div") ? Dims{1, 200, 2, 97} : Dims{1, 200, 1, 1};
        t.seed = static_cast<uint32_t>(types + 60);
        CheckQdqBinary(t, true);
      }
    }
  }
  SUBCASE("short runs with both operands read contiguously") {
    c.a_dims = {2, 1, 3, 5};
    c.b_dims = {2, 7, 3, 5};
    CheckQdqBinary(c, true);
  }
  SUBCASE("one-element operand") {
    c.b_dims = {1, 1, 1, 1};
    CheckQdqBinary(c, true);
  }
  SUBCASE("both operands broadcast") {
    c.op = "Sub";
    c.a_dims = {2, 1, 17, 19};
    c.b_dims = {1, 3, 17, 1};
    CheckQdqBinary(c, true);
  }
  SUBCASE("an empty tensor") {
    c.a_dims = {2, 0, 17, 19};
    c.b_dims = {2, 1, 17, 19};
    CheckQdqBinary(c, true);
  }
}

TEST_CASE("QuantFusion: QdqBinary is left alone when unsafe, shares a DequantizeLinear") {
  QdqBinaryCase c;
  SUBCASE("the float result is also a graph output") {
    c.y_is_output = true;
    CheckQdqBinary(c, false);
  }
  SUBCASE("a dequantized operand is also read elsewhere: fused, its DequantizeLinear stays") {
    c.a_dq_shared = true;
    CheckQdqBinary(c, true);
  }
}

// xq -> DequantizeLinear -> Resize (nearest, 2x) -> QuantizeLinear, same parameters: pattern 5.
TEST_CASE("QuantFusion: QDQ around a nearest Resize runs on the bytes, exactly") {
  for (const char* mode : {"nearest", "linear"}) {
    CAPTURE(mode);
    std::mt19937 rng(3);
    Graph g;
    const Dims xd = {1, 2, 5, 7};
    g.inputs.push_back(In("xq", DType::kUInt8, xd));
    g.initializers.emplace_back("s", ScalarF(0.3f));
    g.initializers.emplace_back("zp", Scalar8(121, false));
    g.initializers.emplace_back(
        "scales", Tensor::FromVector(DType::kFloat32, {4}, std::vector<float>{1, 1, 2, 2}));
    g.nodes.push_back(N("DequantizeLinear", {"xq", "s", "zp"}, {"xf"}));
    g.nodes.push_back(N("Resize", {"xf", "", "scales"}, {"r"}, {AttrString("mode", mode)}));
    g.nodes.push_back(N("QuantizeLinear", {"r", "s", "zp"}, {"y"}));
    g.outputs.push_back(Out("y"));
    const OpsetMap opsets{{"", 19}};
    PlanOptions on, off;
    off.fuse_quantized = false;
    auto fused = Plan::Build(g, opsets, on);
    auto plain = Plan::Build(g, opsets, off);
    const bool nearest = std::string(mode) == "nearest";
    CHECK(HasOp(*fused, "DequantizeLinear") == !nearest);
    auto pool = MakeThreadPool(2);
    Executor ef(fused, pool.get()), eu(plain, pool.get());
    const std::map<std::string, Tensor> feeds{{"xq", Sweep8(xd, false, &rng)}};
    const std::vector<Tensor> yf = ef.Run(feeds), yu = eu.Run(feeds);
    CHECK(yf[0].BitwiseEquals(yu[0]));
  }
}

}  // namespace
}  // namespace simplecpp::graph
