// Conv + elementwise chain post-op fusion (graph/passes/conv_post_fusion.h): every Conv path
// (depthwise, pointwise, direct, im2col with constant and with run-time weights, 1-D and 3-D), in
// float32, float16 and bfloat16, gives byte-identical outputs with the chain fused into it, at 1
// and 3 threads, as does a float32 ConvTranspose; and the cases that must not fuse stay apart.
#include "graph/passes/conv_post_fusion.h"

#include <doctest/doctest.h>

#include <cstring>
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
using test_graph::IntAttr;
using test_graph::N;
using test_graph::Out;

// The float32 values as a tensor of dt (16-bit floats rounded).
Tensor Of(DType dt, const Dims& dims, const std::vector<float>& v) {
  Tensor t(dt, dims);
  if (dt == DType::kFloat32) {
    std::copy(v.begin(), v.end(), t.data<float>());
  } else {
    kernels::Narrow16(dt == DType::kFloat16 ? kernels::Float16Kind::kHalf
                                            : kernels::Float16Kind::kBFloat16,
                      v.data(), static_cast<uint16_t*>(t.raw_data()), v.size());
  }
  return t;
}

Tensor Random(DType dt, const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(CheckedNumElements(dims)));
  for (float& f : v) f = dist(rng);
  return Of(dt, dims, v);
}

DType g_dtype = DType::kFloat32;  // the dtype the graphs below are built in

Tensor Scalar(float v, const Dims& dims = {}) { return Of(g_dtype, dims, {v}); }

enum class Chain { kAffineHardSwish, kRelu, kClip, kSwish };

// y = chain(Conv(x, w, b)). spatial: the input's spatial dims; group 0 means depthwise.
struct ConvCase {
  std::string name;
  int64_t channels, out_channels, group;
  Dims spatial, kernel, strides;
  bool pad;
  bool weights_are_input;
  Chain chain;
  bool transpose = false;  // ConvTranspose (W [channels, out_channels / group, k...])
};

Graph ConvChainGraph(const ConvCase& c) {
  Graph g;
  Dims xdims = {2, c.channels};
  for (int64_t d : c.spatial) xdims.push_back(d);
  g.inputs.push_back(In("x", g_dtype, xdims));
  Dims wdims = c.transpose ? Dims{c.channels, c.out_channels / c.group}
                           : Dims{c.out_channels, c.channels / c.group};
  for (int64_t k : c.kernel) wdims.push_back(k);
  if (c.weights_are_input) {
    g.inputs.push_back(In("w", g_dtype, wdims));
  } else {
    g.initializers.emplace_back("w", Random(g_dtype, wdims, 3));
  }
  g.initializers.emplace_back("b", Random(g_dtype, {c.out_channels}, 4));
  std::vector<int64_t> pads;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t k : c.kernel) pads.push_back(c.pad ? k / 2 : 0);
  }
  g.nodes.push_back(N(c.transpose ? "ConvTranspose" : "Conv", {"x", "w", "b"}, {"conv"},
                      {IntsAttr("kernel_shape", c.kernel), IntsAttr("strides", c.strides),
                       IntsAttr("pads", pads), IntAttr("group", c.group)}));
  switch (c.chain) {
    case Chain::kAffineHardSwish:
      g.initializers.emplace_back("a", Scalar(1.25f, {1}));
      g.initializers.emplace_back("sh", Scalar(-0.375f, {1, 1, 1}));
      g.initializers.emplace_back("three", Scalar(3.0f));
      g.initializers.emplace_back("zero", Scalar(0.0f));
      g.initializers.emplace_back("six", Scalar(6.0f));
      g.nodes.push_back(N("Mul", {"a", "conv"}, {"m"}));
      g.nodes.push_back(N("Add", {"m", "sh"}, {"v"}));
      g.nodes.push_back(N("Add", {"v", "three"}, {"v3"}));
      g.nodes.push_back(N("Clip", {"v3", "zero", "six"}, {"r"}));
      g.nodes.push_back(N("Mul", {"v", "r"}, {"vr"}));
      g.nodes.push_back(N("Div", {"vr", "six"}, {"y"}));
      break;
    case Chain::kRelu:
      g.nodes.push_back(N("Relu", {"conv"}, {"y"}));
      break;
    case Chain::kClip:
      g.initializers.emplace_back("zero", Scalar(0.0f));
      g.initializers.emplace_back("six", Scalar(6.0f));
      g.nodes.push_back(N("Clip", {"conv", "zero", "six"}, {"y"}));
      break;
    case Chain::kSwish:  // reads the Conv output again after the first step
      g.nodes.push_back(N("Sigmoid", {"conv"}, {"s"}));
      g.nodes.push_back(N("Mul", {"conv", "s"}, {"y"}));
      break;
  }
  g.outputs.push_back(Out("y"));
  return g;
}

std::shared_ptr<const Plan> BuildPlan(const Graph& g, bool fuse) {
  PlanOptions options;
  options.fuse_elementwise = fuse;
  // The affine steps would otherwise fold into the weights (graph/passes/conv_batchnorm_fold.h),
  // which is not bitwise; this test is about the chain alone.
  options.fold_batch_norm = false;
  return Plan::Build(g, OpsetMap{{"", 13}}, options);
}

std::vector<Tensor> RunPlan(std::shared_ptr<const Plan> plan, const Graph& g, int threads) {
  auto pool = MakeThreadPool(threads);
  Executor exec(std::move(plan), pool.get());
  std::map<std::string, Tensor> feeds;
  uint32_t seed = 10;
  for (const ValueInfo& in : g.inputs) {
    Dims dims;
    for (const Dim& d : in.type.dims) dims.push_back(d.value);
    feeds.emplace(in.name, Random(g_dtype, dims, seed++));
  }
  return exec.Run(feeds);
}

// The case's graph (in g_dtype) fuses into one step whose output has the unfused plan's bytes,
// at 1 and 3 threads.
void CheckFusedBytes(const ConvCase& c) {
  const Graph g = ConvChainGraph(c);
  auto fused = BuildPlan(g, true);
  auto plain = BuildPlan(g, false);
  REQUIRE(fused->steps().size() == 1);
  CHECK(fused->steps()[0].node.op_type == (c.transpose ? "ConvTranspose" : "Conv"));
  CHECK(fused->steps()[0].node.doc.rfind("post-op:", 0) == 0);
  const Tensor want = RunPlan(plain, g, 1)[0];
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    const Tensor got = RunPlan(fused, g, threads)[0];
    REQUIRE(got.dims() == want.dims());
    CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.byte_size()) == 0);
  }
}

TEST_CASE("Conv post-op fusion: every Conv path gives the unfused bytes") {
  const ConvCase cases[] = {
      {"depthwise 3x3", 8, 8, 8, {13, 17}, {3, 3}, {1, 1}, true, false, Chain::kAffineHardSwish},
      {"depthwise 5x5 stride 2", 6, 6, 6, {19, 11}, {5, 5}, {2, 2}, true, false,
       Chain::kAffineHardSwish},
      {"depthwise multiplier 2", 4, 8, 4, {9, 9}, {3, 3}, {1, 1}, true, false, Chain::kSwish},
      {"pointwise", 16, 24, 1, {15, 21}, {1, 1}, {1, 1}, false, false, Chain::kAffineHardSwish},
      {"pointwise relu", 5, 7, 1, {3, 4}, {1, 1}, {1, 1}, false, false, Chain::kRelu},
      // Several row blocks of the GEMM (> 128 output channels), whose tasks each run the chain.
      {"pointwise 140 channels", 20, 140, 1, {9, 25}, {1, 1}, {1, 1}, false, false,
       Chain::kAffineHardSwish},
      // Rows of whole vectors: the direct kernel reads X in place (16-bit: widened as it loads).
      {"pointwise in place", 12, 20, 1, {5, 32}, {1, 1}, {1, 1}, false, false,
       Chain::kAffineHardSwish},
      {"3x3 direct", 8, 20, 1, {23, 29}, {3, 3}, {1, 1}, true, false, Chain::kAffineHardSwish},
      {"3x3 stride 2 grouped", 8, 12, 2, {17, 15}, {3, 3}, {2, 2}, true, false, Chain::kClip},
      {"run-time weights", 6, 10, 1, {11, 13}, {3, 3}, {1, 1}, true, true, Chain::kSwish},
      {"1-D", 6, 9, 1, {37}, {3}, {1}, true, false, Chain::kAffineHardSwish},
      {"3-D", 3, 5, 1, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, true, false, Chain::kRelu},
  };
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
  for (const ConvCase& c : cases) {
    CAPTURE(c.name);
    CAPTURE(DTypeName(dt));
    g_dtype = dt;
    CheckFusedBytes(c);
  }
  g_dtype = DType::kFloat32;
}

TEST_CASE("ConvTranspose post-op fusion: bands of rows and whole channels give the unfused bytes") {
  const ConvCase cases[] = {
      // Kernel == stride: the chunks' bands of rows (planes in 3-D) run the chain.
      {"2x2 stride 2", 6, 4, 1, {37, 29}, {2, 2}, {2, 2}, false, false, Chain::kRelu, true},
      {"2x2 stride 2 swish", 3, 1, 1, {40, 33}, {2, 2}, {2, 2}, false, false, Chain::kSwish, true},
      {"grouped 2x2", 4, 6, 2, {21, 19}, {2, 2}, {2, 2}, false, false,
       Chain::kAffineHardSwish, true},
      {"1-D", 5, 3, 1, {301}, {4}, {4}, false, false, Chain::kClip, true},
      {"3-D", 3, 2, 1, {9, 6, 7}, {2, 2, 2}, {2, 2, 2}, false, false, Chain::kRelu, true},
      // Overlapping taps: the chain runs per channel once Y is complete.
      {"3x3 stride 2 pad 1", 4, 5, 1, {17, 13}, {3, 3}, {2, 2}, true, false, Chain::kSwish, true},
      {"run-time weights", 4, 6, 2, {11, 9}, {2, 2}, {2, 2}, false, true, Chain::kRelu, true},
      // No input channels: Y is the bias, and the chain still runs on it.
      {"no input channels", 0, 3, 1, {5, 4}, {2, 2}, {2, 2}, false, false, Chain::kSwish, true},
  };
  for (const ConvCase& c : cases) {
    CAPTURE(c.name);
    CheckFusedBytes(c);
  }
  // A 16-bit ConvTranspose runs its float32 plan on widened data: its chain stays a step.
  g_dtype = DType::kFloat16;
  const ConvCase c16 = cases[0];
  CHECK(BuildPlan(ConvChainGraph(c16), true)->steps().size() == 2);
  g_dtype = DType::kFloat32;
}

TEST_CASE("Conv post-op fusion leaves a Conv alone when its output is needed as it is") {
  const ConvCase c{"pointwise", 4, 4, 1, {3, 3}, {1, 1}, {1, 1}, false, false, Chain::kRelu};
  SUBCASE("the Conv output is a graph output") {
    Graph g = ConvChainGraph(c);
    g.outputs.push_back(Out("conv"));
    auto plan = BuildPlan(g, true);
    CHECK(plan->steps().size() == 2);
    const auto got = RunPlan(plan, g, 1);
    const auto want = RunPlan(BuildPlan(g, false), g, 1);
    CHECK(std::memcmp(got[1].raw_data(), want[1].raw_data(), got[1].byte_size()) == 0);
  }
  SUBCASE("the Conv output has a second consumer") {
    Graph g = ConvChainGraph(c);
    g.nodes.push_back(N("Neg", {"conv"}, {"n"}));
    g.outputs.push_back(Out("n"));
    CHECK(BuildPlan(g, true)->steps().size() == 3);
  }
  SUBCASE("the chain's operand is not one element") {
    Graph g = ConvChainGraph(c);
    g.nodes.back().outputs = {"r"};
    g.initializers.emplace_back("vec", Random(g_dtype, {3}, 1));
    g.nodes.push_back(N("Add", {"r", "vec"}, {"y"}));
    CHECK(BuildPlan(g, true)->steps().size() == 2);  // Conv+Relu, then the vector Add
  }
}

}  // namespace
}  // namespace simplecpp::graph
