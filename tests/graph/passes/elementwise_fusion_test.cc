// Elementwise chain fusion (graph/passes/elementwise_fusion.h): which chains fuse, which must not,
// and that fused plans give byte-identical outputs to unfused ones (float32, float16, bfloat16;
// odd sizes, several parallel chunks, empty tensors, extreme values, 1 and 3 threads).
#include "graph/passes/elementwise_fusion.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/thread_pool.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

using test_graph::In;
using test_graph::N;
using test_graph::Out;

// A one-element constant of dtype dt holding v (rank given by dims).
Tensor Scalar(DType dt, float v, const Dims& dims = {}) {
  Tensor t(dt, dims);
  if (dt == DType::kFloat32) {
    *t.data<float>() = v;
  } else {
    const uint16_t bits = dt == DType::kFloat16 ? kernels::FloatToHalfBits(v)
                                                : kernels::FloatToBFloat16Bits(v);
    std::memcpy(t.raw_data(), &bits, 2);
  }
  return t;
}

// Seeded values in [-4, 4] with some extremes mixed in (0, -0, huge, tiny, inf, NaN).
Tensor Data(DType dt, const Dims& dims, uint32_t seed) {
  Tensor t(dt, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  const float extremes[] = {0.0f, -0.0f, 1e30f, -1e30f, 1e-30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const float v = (i % 97 == 5) ? extremes[(i / 97) % 8] : dist(rng);
    if (dt == DType::kFloat32) {
      t.data<float>()[i] = v;
    } else {
      const uint16_t bits = dt == DType::kFloat16 ? kernels::FloatToHalfBits(v)
                                                  : kernels::FloatToBFloat16Bits(v);
      std::memcpy(static_cast<uint8_t*>(t.raw_data()) + 2 * i, &bits, 2);
    }
  }
  return t;
}

// 0.5 * x * (1 + erf(x / sqrt 2)), spelled out the way exporters write it.
Graph GeluGraph(DType dt, const Dims& dims) {
  Graph g;
  g.inputs.push_back(In("x", dt, dims));
  g.initializers.emplace_back("sqrt2", Scalar(dt, 1.4142135f));
  g.initializers.emplace_back("one", Scalar(dt, 1.0f));
  g.initializers.emplace_back("half", Scalar(dt, 0.5f, {1}));
  g.nodes.push_back(N("Div", {"x", "sqrt2"}, {"d"}));
  g.nodes.push_back(N("Erf", {"d"}, {"e"}));
  g.nodes.push_back(N("Add", {"e", "one"}, {"a"}));
  g.nodes.push_back(N("Mul", {"x", "a"}, {"m"}));
  g.nodes.push_back(N("Mul", {"m", "half"}, {"y"}));
  g.outputs.push_back(Out("y"));
  return g;
}

// y = 3 - LeakyRelu(x * sigmoid(x)): the running value on the right of Sub, an attribute.
Graph SwishGraph(DType dt, const Dims& dims) {
  Graph g;
  g.inputs.push_back(In("x", dt, dims));
  g.initializers.emplace_back("three", Scalar(dt, 3.0f, {1, 1}));
  g.nodes.push_back(N("Sigmoid", {"x"}, {"s"}));
  g.nodes.push_back(N("Mul", {"x", "s"}, {"m"}));
  Attribute alpha;
  alpha.name = "alpha";
  alpha.kind = AttrKind::kFloat;
  alpha.f = 0.25f;
  g.nodes.push_back(N("LeakyRelu", {"m"}, {"l"}, {alpha}));
  g.nodes.push_back(N("Sub", {"three", "l"}, {"y"}));
  g.outputs.push_back(Out("y"));
  return g;
}

std::shared_ptr<const Plan> BuildPlan(const Graph& g, bool fuse, int64_t opset = 20) {
  PlanOptions options;
  options.fuse_elementwise = fuse;
  return Plan::Build(g, OpsetMap{{"", opset}}, options);
}

Attribute FloatAttr(const std::string& name, float v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::kFloat;
  a.f = v;
  return a;
}

// What mobile exports (paddle2onnx) put after a convolution: an affine v = a * x + b, HardSwish
// spelled v * Clip(v + 3, 0, 6) / 6 (v read twice, so v has two consumers), another affine.
// Clip takes its bounds as inputs from opset 11 and as attributes before.
Graph AffineHardSwishGraph(DType dt, const Dims& dims, int64_t opset) {
  Graph g;
  g.inputs.push_back(In("x", dt, dims));
  g.initializers.emplace_back("a", Scalar(dt, 1.25f, {1}));
  g.initializers.emplace_back("b", Scalar(dt, -0.375f, {1}));
  g.initializers.emplace_back("three", Scalar(dt, 3.0f));
  g.initializers.emplace_back("zero", Scalar(dt, 0.0f));
  g.initializers.emplace_back("six", Scalar(dt, 6.0f));
  g.initializers.emplace_back("c", Scalar(dt, 0.75f, {1}));
  g.initializers.emplace_back("d", Scalar(dt, 0.125f, {1}));
  g.nodes.push_back(N("Mul", {"a", "x"}, {"m"}));
  g.nodes.push_back(N("Add", {"m", "b"}, {"v"}));
  g.nodes.push_back(N("Add", {"v", "three"}, {"v3"}));
  if (opset >= 11) {
    g.nodes.push_back(N("Clip", {"v3", "zero", "six"}, {"r"}));
  } else {
    g.nodes.push_back(N("Clip", {"v3"}, {"r"}, {FloatAttr("min", 0.0f), FloatAttr("max", 6.0f)}));
  }
  g.nodes.push_back(N("Mul", {"v", "r"}, {"vr"}));
  g.nodes.push_back(N("Div", {"vr", "six"}, {"h"}));
  g.nodes.push_back(N("Mul", {"c", "h"}, {"hc"}));
  g.nodes.push_back(N("Add", {"hc", "d"}, {"y"}));
  g.outputs.push_back(Out("y"));
  return g;
}

int CountSteps(const Plan& plan, const std::string& op_type) {
  int n = 0;
  for (const PlanStep& s : plan.steps()) n += s.node.op_type == op_type;
  return n;
}

std::vector<Tensor> RunPlan(std::shared_ptr<const Plan> plan, const Tensor& x, int threads) {
  auto pool = MakeThreadPool(threads);
  Executor exec(std::move(plan), pool.get());
  return exec.Run({{"x", x}});
}

void CheckSameBytes(const Tensor& a, const Tensor& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.dims() == b.dims());
  CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0);
}

TEST_CASE("Elementwise fusion: Gelu and Swish chains fuse and match the unfused plan bit for bit") {
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (const Dims& dims : {Dims{1}, Dims{3}, Dims{17}, Dims{3, 1000}, Dims{70001}, Dims{0, 5}}) {
      CAPTURE(DTypeName(dt));
      CAPTURE(DimsToString(dims));
      for (int which = 0; which < 2; ++which) {
        const Graph g = which == 0 ? GeluGraph(dt, dims) : SwishGraph(dt, dims);
        auto fused = BuildPlan(g, true);
        auto plain = BuildPlan(g, false);
        CHECK(CountSteps(*fused, "FusedElementwise") == 1);
        CHECK(fused->steps().size() == 1);
        CHECK(CountSteps(*plain, "FusedElementwise") == 0);
        const Tensor x = Data(dt, dims, 7 + which);
        const Tensor want = RunPlan(plain, x, 1)[0];
        for (int threads : {1, 3}) {
          CAPTURE(threads);
          const std::vector<Tensor> got = RunPlan(fused, x, threads);
          CheckSameBytes(got[0], want);
        }
      }
    }
  }
}

TEST_CASE("Elementwise fusion: a value read twice inside the chain (spelled HardSwish) and Clip fuse") {
  for (int64_t opset : {10, 13}) {
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      if (opset < 11 && dt == DType::kBFloat16) continue;  // Clip-6 has no bfloat16
      for (const Dims& dims : {Dims{1}, Dims{5}, Dims{4097}, Dims{2, 3, 70001}, Dims{0}}) {
        CAPTURE(opset);
        CAPTURE(DTypeName(dt));
        CAPTURE(DimsToString(dims));
        const Graph g = AffineHardSwishGraph(dt, dims, opset);
        auto fused = BuildPlan(g, true, opset);
        auto plain = BuildPlan(g, false, opset);
        CHECK(fused->steps().size() == 1);
        CHECK(CountSteps(*fused, "FusedElementwise") == 1);
        const Tensor x = Data(dt, dims, 11);
        const Tensor want = RunPlan(plain, x, 1)[0];
        for (int threads : {1, 3}) {
          CAPTURE(threads);
          CheckSameBytes(RunPlan(fused, x, threads)[0], want);
        }
      }
    }
  }
}

TEST_CASE("Elementwise fusion: a chain stops before a value whose other consumer cannot join") {
  // v = x * a has consumers Add(v, 3) and Mul(v, z) with z a second variable input: the chain
  // cannot take the Mul, so v stays materialized and only Mul(x, a) ... is not fused past it.
  Graph g;
  g.inputs.push_back(In("x", DType::kFloat32, {6}));
  g.inputs.push_back(In("z", DType::kFloat32, {6}));
  g.initializers.emplace_back("a", Scalar(DType::kFloat32, 2.0f));
  g.initializers.emplace_back("three", Scalar(DType::kFloat32, 3.0f));
  g.nodes.push_back(N("Neg", {"x"}, {"n"}));
  g.nodes.push_back(N("Mul", {"n", "a"}, {"v"}));
  g.nodes.push_back(N("Add", {"v", "three"}, {"v3"}));
  g.nodes.push_back(N("Relu", {"v3"}, {"r"}));
  g.nodes.push_back(N("Mul", {"v", "z"}, {"vz"}));
  g.nodes.push_back(N("Add", {"vz", "r"}, {"y"}));
  g.outputs.push_back(Out("y"));
  auto fused = BuildPlan(g, true);
  // Neg + Mul fuse (ending at v), Add + Relu fuse; the two variable-operand ops stay.
  CHECK(CountSteps(*fused, "FusedElementwise") == 2);
  CHECK(fused->steps().size() == 4);
  Tensor z = Data(DType::kFloat32, {6}, 5);
  const Tensor x = Data(DType::kFloat32, {6}, 4);
  auto pool = MakeThreadPool(1);
  Executor a(fused, pool.get()), b(BuildPlan(g, false), pool.get());
  CheckSameBytes(a.Run({{"x", x}, {"z", z}})[0], b.Run({{"x", x}, {"z", z}})[0]);
}

TEST_CASE("Elementwise fusion: a one-element operand of higher rank broadcasts the output rank") {
  // x [5] * c [1,1] -> [1,5], then Relu.
  Graph g;
  g.inputs.push_back(In("x", DType::kFloat32, {5}));
  g.initializers.emplace_back("c", Scalar(DType::kFloat32, -2.0f, {1, 1}));
  g.nodes.push_back(N("Mul", {"x", "c"}, {"m"}));
  g.nodes.push_back(N("Relu", {"m"}, {"y"}));
  g.outputs.push_back(Out("y"));
  auto fused = BuildPlan(g, true);
  CHECK(CountSteps(*fused, "FusedElementwise") == 1);
  const Tensor x = Data(DType::kFloat32, {5}, 3);
  const Tensor got = RunPlan(fused, x, 1)[0];
  CHECK(got.dims() == Dims{1, 5});
  CheckSameBytes(got, RunPlan(BuildPlan(g, false), x, 1)[0]);
}

TEST_CASE("Elementwise fusion leaves chains alone where fusing would change what is computed") {
  SUBCASE("an intermediate with a second consumer splits the chain") {
    Graph g;
    g.inputs.push_back(In("x", DType::kFloat32, {4}));
    g.nodes.push_back(N("Exp", {"x"}, {"e"}));
    g.nodes.push_back(N("Neg", {"e"}, {"n"}));
    g.nodes.push_back(N("Abs", {"e"}, {"a"}));
    g.outputs.push_back(Out("n"));
    g.outputs.push_back(Out("a"));
    CHECK(CountSteps(*BuildPlan(g, true), "FusedElementwise") == 0);
  }
  SUBCASE("an intermediate that is a graph output stays materialized") {
    Graph g;
    g.inputs.push_back(In("x", DType::kFloat32, {4}));
    g.nodes.push_back(N("Exp", {"x"}, {"e"}));
    g.nodes.push_back(N("Neg", {"e"}, {"n"}));
    g.nodes.push_back(N("Abs", {"n"}, {"a"}));
    g.outputs.push_back(Out("n"));
    g.outputs.push_back(Out("a"));
    auto plan = BuildPlan(g, true);
    CHECK(CountSteps(*plan, "FusedElementwise") == 1);  // Exp+Neg; Abs reads the kept n
    CHECK(CountSteps(*plan, "Abs") == 1);
    const Tensor x = Data(DType::kFloat32, {4}, 1);
    const auto got = RunPlan(plan, x, 1);
    const auto want = RunPlan(BuildPlan(g, false), x, 1);
    CheckSameBytes(got[0], want[0]);
    CheckSameBytes(got[1], want[1]);
  }
  SUBCASE("a non-scalar operand, a second variable input and integer dtypes do not fuse") {
    Graph g;
    g.inputs.push_back(In("x", DType::kFloat32, {2, 3}));
    g.inputs.push_back(In("z", DType::kFloat32, {2, 3}));
    g.inputs.push_back(In("i", DType::kInt32, {3}));
    Tensor bias(DType::kFloat32, {3});
    g.initializers.emplace_back("bias", bias);
    g.nodes.push_back(N("Add", {"x", "bias"}, {"a"}));
    g.nodes.push_back(N("Relu", {"a"}, {"r"}));
    g.nodes.push_back(N("Mul", {"z", "z"}, {"zz"}));
    g.nodes.push_back(N("Add", {"zz", "x"}, {"s"}));
    g.nodes.push_back(N("Neg", {"i"}, {"ni"}));
    g.nodes.push_back(N("Abs", {"ni"}, {"ai"}));
    g.outputs.push_back(Out("r"));
    g.outputs.push_back(Out("s"));
    g.outputs.push_back(Out("ai"));
    auto plan = BuildPlan(g, true);
    // Relu alone after a vector Add; Mul(z, z) then Add(., x): x is not the chain input.
    CHECK(CountSteps(*plan, "FusedElementwise") == 0);
  }
}

}  // namespace
}  // namespace simplecpp::graph
