// Conv + BatchNormalization folding (graph/passes/conv_batchnorm_fold.h): folded plans stay
// within float32 rounding of the unfused ones (with and without a Conv bias, depthwise, grouped,
// a Relu after the BatchNorm that then fuses into the Conv), float16 and bfloat16 plans within
// their own rounding, and the folds that must not happen do not.
#include "graph/passes/conv_batchnorm_fold.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/thread_pool.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

using test_graph::In;
using test_graph::IntsAttr;
using test_graph::N;
using test_graph::Out;

Tensor Uniform(const Dims& dims, uint32_t seed, float lo, float hi) {
  Tensor t(DType::kFloat32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

struct FoldCase {
  std::string name;
  int64_t channels, out_channels, group;
  bool conv_bias, relu;
};

// x -> Conv (3x3, pad 1) -> BatchNormalization -> [Relu] -> y
Graph ConvBnGraph(const FoldCase& c) {
  Graph g;
  g.inputs.push_back(In("x", DType::kFloat32, {2, c.channels, 9, 11}));
  g.initializers.emplace_back("w", Uniform({c.out_channels, c.channels / c.group, 3, 3}, 1, -1, 1));
  std::vector<std::string> conv_in = {"x", "w"};
  if (c.conv_bias) {
    g.initializers.emplace_back("b", Uniform({c.out_channels}, 2, -1, 1));
    conv_in.push_back("b");
  }
  Attribute group;
  group.name = "group";
  group.kind = AttrKind::kInt;
  group.i = c.group;
  g.nodes.push_back(N("Conv", conv_in, {"conv"}, {IntsAttr("pads", {1, 1, 1, 1}), group}));
  g.initializers.emplace_back("scale", Uniform({c.out_channels}, 3, 0.5f, 2.0f));
  g.initializers.emplace_back("shift", Uniform({c.out_channels}, 4, -1, 1));
  g.initializers.emplace_back("mean", Uniform({c.out_channels}, 5, -1, 1));
  g.initializers.emplace_back("var", Uniform({c.out_channels}, 6, 0.1f, 3.0f));
  const std::string bn_out = c.relu ? "bn" : "y";
  g.nodes.push_back(
      N("BatchNormalization", {"conv", "scale", "shift", "mean", "var"}, {bn_out}));
  if (c.relu) g.nodes.push_back(N("Relu", {"bn"}, {"y"}));
  g.outputs.push_back(Out("y"));
  return g;
}

std::shared_ptr<const Plan> BuildPlan(const Graph& g, bool fold) {
  PlanOptions options;
  options.fold_batch_norm = fold;
  return Plan::Build(g, OpsetMap{{"", 15}}, options);
}

Tensor Run(std::shared_ptr<const Plan> plan, const Tensor& x, int threads) {
  auto pool = MakeThreadPool(threads);
  Executor exec(std::move(plan), pool.get());
  return exec.Run({{"x", x}})[0];
}

int Count(const Plan& plan, const std::string& op) {
  int n = 0;
  for (const PlanStep& s : plan.steps()) n += s.node.op_type == op;
  return n;
}

// The largest |got - want| / (1 + |want|) over two float32 tensors.
double WorstRelative(const Tensor& got, const Tensor& want) {
  double worst = 0.0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double w = want.data<float>()[i], o = got.data<float>()[i];
    worst = std::max(worst, std::fabs(o - w) / (1.0 + std::fabs(w)));
  }
  return worst;
}

TEST_CASE("Conv + BatchNormalization folding stays within float32 rounding of the unfused plan") {
  const FoldCase cases[] = {
      {"bias", 4, 6, 1, true, false},       {"no bias", 4, 6, 1, false, false},
      {"relu after", 3, 16, 1, true, true}, {"depthwise", 8, 8, 8, false, true},
      {"grouped", 6, 4, 2, true, false},
  };
  for (const FoldCase& c : cases) {
    CAPTURE(c.name);
    const Graph g = ConvBnGraph(c);
    auto folded = BuildPlan(g, true);
    auto plain = BuildPlan(g, false);
    CHECK(Count(*folded, "BatchNormalization") == 0);
    CHECK(Count(*plain, "BatchNormalization") == 1);
    CHECK(folded->steps().size() == 1);  // a Relu after the BatchNorm fuses into the Conv
    const Tensor x = Uniform({2, c.channels, 9, 11}, 7, -2, 2);
    const Tensor want = Run(plain, x, 1);
    for (int threads : {1, 3}) {
      CAPTURE(threads);
      const Tensor got = Run(folded, x, threads);
      REQUIRE(got.dims() == want.dims());
      // Each output is a sum of up to 9 * channels products: a few float32 roundings of the
      // largest term apart.
      const double worst = WorstRelative(got, want);
      CAPTURE(worst);
      CHECK(worst <= 2e-6);
    }
  }
}

// The float32 graph's tensors rounded to a 16-bit type (inputs, initializers, output types).
Graph To16Bit(Graph g, DType dt) {
  const kernels::Float16Kind kind =
      dt == DType::kFloat16 ? kernels::Float16Kind::kHalf : kernels::Float16Kind::kBFloat16;
  for (auto& [name, t] : g.initializers) {
    Tensor r(dt, t.dims());
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      r.data<uint16_t>()[i] = kernels::Narrow16One(kind, t.data<float>()[i]);
    }
    t = r;
  }
  for (ValueInfo& in : g.inputs) in.type.dtype = dt;
  return g;
}

TEST_CASE("Conv + BatchNormalization folding of float16 and bfloat16 Convs") {
  const FoldCase cases[] = {
      {"bias", 4, 6, 1, true, false},
      {"relu after, depthwise", 8, 8, 8, false, true},
      {"grouped", 6, 4, 2, true, false},
  };
  for (const DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const kernels::Float16Kind kind =
        dt == DType::kFloat16 ? kernels::Float16Kind::kHalf : kernels::Float16Kind::kBFloat16;
    // One rounding to 16 bits is at most half an ulp: 2^-11 (float16), 2^-8 (bfloat16)
    // relative; the unfused plan rounds twice, the folded one once.
    const double ulp = dt == DType::kFloat16 ? 1.0 / 1024 : 1.0 / 128;
    for (const FoldCase& c : cases) {
      CAPTURE(c.name);
      CAPTURE(DTypeName(dt));
      const Graph g = To16Bit(ConvBnGraph(c), dt);
      auto folded = BuildPlan(g, true);
      auto plain = BuildPlan(g, false);
      CHECK(Count(*folded, "BatchNormalization") == 0);
      CHECK(folded->steps().size() == 1);
      const Tensor xf = Uniform({2, c.channels, 9, 11}, 7, -2, 2);
      Tensor x(dt, xf.dims());
      for (int64_t i = 0; i < xf.num_elements(); ++i) {
        x.data<uint16_t>()[i] = kernels::Narrow16One(kind, xf.data<float>()[i]);
      }
      const Tensor want = Run(plain, x, 1);
      const Tensor got = Run(folded, x, 3);
      REQUIRE(got.dims() == want.dims());
      REQUIRE(got.dtype() == dt);
      double worst = 0.0;
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        const double w = kernels::Widen16One(kind, want.data<uint16_t>()[i]);
        const double o = kernels::Widen16One(kind, got.data<uint16_t>()[i]);
        worst = std::max(worst, std::fabs(o - w) / (1.0 + std::fabs(w)));
      }
      CAPTURE(worst);
      CHECK(worst <= 2 * ulp);
    }
  }
}

// x -> Conv (3x3, pad 1) or ConvTranspose (2x2 stride 2, or 3x3 stride 2 pad 1: overlapping
// taps), no bias -> the affine steps of `chain` -> [Relu] -> y. Chain letters: 'A' Add of a
// [1, M, 1, 1] constant, 'B' BatchNormalization, 'M' Mul by a one-element [1], 'S' Sub of an
// [M, 1, 1] constant, 'R' that constant minus the running value.
struct AffineCase {
  std::string name;
  std::string op;  // "Conv", "ConvTranspose", "ConvTranspose3"
  int64_t channels, out_channels, group;
  std::string chain;
  bool relu;
};

Graph AffineGraph(const AffineCase& c) {
  Graph g;
  g.inputs.push_back(In("x", DType::kFloat32, {2, c.channels, 9, 11}));
  const bool transpose = c.op != "Conv";
  const int64_t k = c.op == "ConvTranspose" ? 2 : 3;
  const Dims wd = transpose ? Dims{c.channels, c.out_channels / c.group, k, k}
                            : Dims{c.out_channels, c.channels / c.group, k, k};
  g.initializers.emplace_back("w", Uniform(wd, 1, -1, 1));
  Attribute group;
  group.name = "group";
  group.kind = AttrKind::kInt;
  group.i = c.group;
  std::vector<Attribute> attrs = {group};
  if (c.op == "Conv") attrs.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  if (transpose) attrs.push_back(IntsAttr("strides", {2, 2}));
  if (c.op == "ConvTranspose3") attrs.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  g.nodes.push_back(N(transpose ? "ConvTranspose" : "Conv", {"x", "w"}, {"v0"}, attrs));
  const int64_t m = c.out_channels;
  for (size_t i = 0; i < c.chain.size(); ++i) {
    const std::string in = "v" + std::to_string(i), out = "v" + std::to_string(i + 1);
    const std::string p = "p" + std::to_string(i);
    const uint32_t seed = 20 + static_cast<uint32_t>(i) * 5;
    switch (c.chain[i]) {
      case 'A':
        g.initializers.emplace_back(p, Uniform({1, m, 1, 1}, seed, -1, 1));
        g.nodes.push_back(N("Add", {in, p}, {out}));
        break;
      case 'B':
        g.initializers.emplace_back(p + "s", Uniform({m}, seed, 0.5f, 2.0f));
        g.initializers.emplace_back(p + "b", Uniform({m}, seed + 1, -1, 1));
        g.initializers.emplace_back(p + "m", Uniform({m}, seed + 2, -1, 1));
        g.initializers.emplace_back(p + "v", Uniform({m}, seed + 3, 0.1f, 3.0f));
        g.nodes.push_back(N("BatchNormalization", {in, p + "s", p + "b", p + "m", p + "v"}, {out}));
        break;
      case 'M':
        g.initializers.emplace_back(p, Uniform({1}, seed, 0.5f, 2.0f));
        g.nodes.push_back(N("Mul", {p, in}, {out}));
        break;
      case 'S':
        g.initializers.emplace_back(p, Uniform({m, 1, 1}, seed, -1, 1));
        g.nodes.push_back(N("Sub", {in, p}, {out}));
        break;
      default:  // 'R'
        g.initializers.emplace_back(p, Uniform({m, 1, 1}, seed, -1, 1));
        g.nodes.push_back(N("Sub", {p, in}, {out}));
        break;
    }
  }
  const std::string last = "v" + std::to_string(c.chain.size());
  if (c.relu) {
    g.nodes.push_back(N("Relu", {last}, {"y"}));
  } else {
    g.nodes.back().outputs = {"y"};
  }
  g.outputs.push_back(Out("y"));
  return g;
}

TEST_CASE("Per-channel Add / Sub / Mul and BatchNormalization fold into Conv and ConvTranspose") {
  const AffineCase cases[] = {
      {"ConvTranspose + Add + BN + Relu", "ConvTranspose", 6, 4, 1, "AB", true},
      {"grouped ConvTranspose + Mul + BN + Add", "ConvTranspose", 6, 4, 2, "MBA", false},
      {"overlapping ConvTranspose + BN + Relu", "ConvTranspose3", 3, 5, 1, "B", true},
      {"Conv + Mul + Add + Relu (an affine block)", "Conv", 4, 6, 1, "MA", true},
      {"Conv + Sub + k - y + Mul", "Conv", 4, 6, 2, "SRM", false},
  };
  for (const AffineCase& c : cases) {
    CAPTURE(c.name);
    const Graph g = AffineGraph(c);
    auto folded = BuildPlan(g, true);
    auto plain = BuildPlan(g, false);
    CHECK(folded->steps().size() == 1);  // the Relu fuses into the Conv / ConvTranspose
    CHECK(plain->steps().size() >= 2);
    const Tensor x = Uniform({2, c.channels, 9, 11}, 7, -2, 2);
    const Tensor want = Run(plain, x, 1);
    for (int threads : {1, 3}) {
      CAPTURE(threads);
      const Tensor got = Run(folded, x, threads);
      REQUIRE(got.dims() == want.dims());
      const double worst = WorstRelative(got, want);
      CAPTURE(worst);
      CHECK(worst <= 4e-6);  // a few float32 roundings of the largest term per step
    }
  }
  SUBCASE("float16 ConvTranspose: float32 weights, one rounding") {
    // (bfloat16 ConvTranspose needs opset 22; the same code path.)
    for (const DType dt : {DType::kFloat16}) {
      CAPTURE(DTypeName(dt));
      const kernels::Float16Kind kind =
          dt == DType::kFloat16 ? kernels::Float16Kind::kHalf : kernels::Float16Kind::kBFloat16;
      const double ulp = dt == DType::kFloat16 ? 1.0 / 1024 : 1.0 / 128;
      const Graph g = To16Bit(AffineGraph(cases[0]), dt);
      auto folded = BuildPlan(g, true);
      CHECK(folded->steps().size() == 2);  // the 16-bit ConvTranspose keeps its Relu apart
      const Tensor xf = Uniform({2, 6, 9, 11}, 7, -2, 2);
      Tensor x(dt, xf.dims());
      for (int64_t i = 0; i < xf.num_elements(); ++i) {
        x.data<uint16_t>()[i] = kernels::Narrow16One(kind, xf.data<float>()[i]);
      }
      const Tensor want = Run(BuildPlan(g, false), x, 1);
      const Tensor got = Run(folded, x, 3);
      REQUIRE(got.dims() == want.dims());
      double worst = 0.0;
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        const double w = kernels::Widen16One(kind, want.data<uint16_t>()[i]);
        const double o = kernels::Widen16One(kind, got.data<uint16_t>()[i]);
        worst = std::max(worst, std::fabs(o - w) / (1.0 + std::fabs(w)));
      }
      CAPTURE(worst);
      CHECK(worst <= 3 * ulp);  // the unfused plan rounds after each of its three steps
    }
  }
}

TEST_CASE("Per-channel folding leaves operands that vary along other axes alone") {
  AffineCase c{"Conv + Add", "Conv", 4, 6, 1, "A", false};
  SUBCASE("an Add operand that varies along the width") {
    Graph g = AffineGraph(c);
    g.initializers.back().second = Uniform({1, 6, 1, 11}, 3, -1, 1);
    CHECK(Count(*BuildPlan(g, true), "Add") == 1);
  }
  SUBCASE("an Add operand that is a graph input") {
    Graph g = AffineGraph(c);
    g.initializers.pop_back();
    g.inputs.push_back(In("p0", DType::kFloat32, {1, 6, 1, 1}));
    auto plan = BuildPlan(g, true);
    CHECK(Count(*plan, "Add") + Count(*plan, "FusedElementwise") == 1);
  }
  SUBCASE("a Mul by infinity") {
    c.chain = "M";
    Graph g = AffineGraph(c);
    g.initializers.back().second.data<float>()[0] = std::numeric_limits<float>::infinity();
    // Not folded (weights times infinity would turn 0 * inf into NaN elsewhere): the Mul stays a
    // step of its own or the Conv's post-op, bitwise the unfolded plan.
    const Tensor x = Uniform({2, 4, 9, 11}, 7, -2, 2);
    const Tensor got = Run(BuildPlan(g, true), x, 1), want = Run(BuildPlan(g, false), x, 1);
    CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.byte_size()) == 0);
  }
}

TEST_CASE("Conv + BatchNormalization folding leaves shared or observed values alone") {
  const FoldCase c{"bias", 4, 6, 1, true, false};
  SUBCASE("the Conv output is also a graph output") {
    Graph g = ConvBnGraph(c);
    g.outputs.push_back(Out("conv"));
    CHECK(Count(*BuildPlan(g, true), "BatchNormalization") == 1);
  }
  SUBCASE("the weights feed a second Conv") {
    Graph g = ConvBnGraph(c);
    g.nodes.push_back(N("Conv", {"x", "w"}, {"conv2"}, {IntsAttr("pads", {1, 1, 1, 1})}));
    g.outputs.push_back(Out("conv2"));
    CHECK(Count(*BuildPlan(g, true), "BatchNormalization") == 1);
  }
  SUBCASE("no Conv bias and BatchNorm's B is read elsewhere") {
    const FoldCase nb{"no bias", 4, 6, 1, false, false};
    Graph g = ConvBnGraph(nb);
    g.inputs.push_back(In("z", DType::kFloat32, {6}));
    g.nodes.push_back(N("Add", {"shift", "z"}, {"sz"}));  // not folded: z is an input
    g.outputs.push_back(Out("sz"));
    CHECK(Count(*BuildPlan(g, true), "BatchNormalization") == 1);
  }
}

}  // namespace
}  // namespace simplecpp::graph
