// Conv + BatchNormalization folding (graph/passes/conv_batchnorm_fold.h): folded plans stay
// within float32 rounding of the unfused ones (with and without a Conv bias, depthwise, grouped,
// a Relu after the BatchNorm that then fuses into the Conv), float16 and bfloat16 plans within
// their own rounding, and the folds that must not happen do not.
#include "graph/passes/conv_batchnorm_fold.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/thread_pool.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

using test_graph::In;
using test_graph::N;
using test_graph::Out;

Tensor Uniform(const Dims& dims, uint32_t seed, float lo, float hi) {
  Tensor t(DType::kFloat32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

Attribute Ints(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::kInts;
  a.ints = std::move(v);
  return a;
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
  g.nodes.push_back(N("Conv", conv_in, {"conv"}, {Ints("pads", {1, 1, 1, 1}), group}));
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
      double worst = 0.0;
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        const double w = want.data<float>()[i], o = got.data<float>()[i];
        worst = std::max(worst, std::fabs(o - w) / (1.0 + std::fabs(w)));
      }
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

TEST_CASE("Conv + BatchNormalization folding leaves shared or observed values alone") {
  const FoldCase c{"bias", 4, 6, 1, true, false};
  SUBCASE("the Conv output is also a graph output") {
    Graph g = ConvBnGraph(c);
    g.outputs.push_back(Out("conv"));
    CHECK(Count(*BuildPlan(g, true), "BatchNormalization") == 1);
  }
  SUBCASE("the weights feed a second Conv") {
    Graph g = ConvBnGraph(c);
    g.nodes.push_back(N("Conv", {"x", "w"}, {"conv2"}, {Ints("pads", {1, 1, 1, 1})}));
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
