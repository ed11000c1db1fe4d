// DequantizeLinear -> chain -> QuantizeLinear lookup fusion (graph/passes/quant_lookup_fusion.h):
// which patterns become one table lookup, that every input byte gives the unfused plan's output
// byte (uint8 / int8 in and out, odd zero points, scales that make ties, 1 and 3 threads), and
// which patterns must stay apart.
#include "graph/passes/quant_lookup_fusion.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/thread_pool.h"

namespace simplecpp::graph {
namespace {

using test_graph::In;
using test_graph::N;
using test_graph::Out;

Tensor F32(float v, const Dims& dims = {}) {
  Tensor t(DType::kFloat32, dims);
  *t.data<float>() = v;
  return t;
}
Tensor Byte(DType dt, int v) {
  Tensor t(dt, {});
  *static_cast<uint8_t*>(t.raw_data()) = static_cast<uint8_t>(v);
  return t;
}

enum class Chain { kNone, kAffineHardSwish, kSigmoid };

Graph QdqGraph(DType in, DType out, Chain chain, const Dims& dims) {
  Graph g;
  g.inputs.push_back(In("x", in, dims));
  // Power-of-two scales and odd zero points: many results land exactly on .5 before rounding.
  g.initializers.emplace_back("xs", F32(0.0625f));
  g.initializers.emplace_back("xz", Byte(in, in == DType::kInt8 ? -3 : 131));
  g.initializers.emplace_back("ys", F32(0.03125f));
  g.initializers.emplace_back("yz", Byte(out, out == DType::kInt8 ? 5 : 77));
  g.nodes.push_back(N("DequantizeLinear", {"x", "xs", "xz"}, {"f"}));
  std::string last = "f";
  if (chain == Chain::kAffineHardSwish) {
    g.initializers.emplace_back("a", F32(1.5f, {1}));
    g.initializers.emplace_back("b", F32(-0.25f, {1}));
    g.initializers.emplace_back("three", F32(3.0f));
    g.initializers.emplace_back("zero", F32(0.0f));
    g.initializers.emplace_back("six", F32(6.0f));
    g.nodes.push_back(N("Mul", {"a", "f"}, {"m"}));
    g.nodes.push_back(N("Add", {"m", "b"}, {"v"}));
    g.nodes.push_back(N("Add", {"v", "three"}, {"v3"}));
    g.nodes.push_back(N("Clip", {"v3", "zero", "six"}, {"r"}));
    g.nodes.push_back(N("Mul", {"v", "r"}, {"vr"}));
    g.nodes.push_back(N("Div", {"vr", "six"}, {"h"}));
    last = "h";
  } else if (chain == Chain::kSigmoid) {
    g.nodes.push_back(N("Sigmoid", {"f"}, {"h"}));
    last = "h";
  }
  g.nodes.push_back(N("QuantizeLinear", {last, "ys", "yz"}, {"y"}));
  g.outputs.push_back(Out("y"));
  return g;
}

std::shared_ptr<const Plan> BuildPlan(const Graph& g, bool fuse, int64_t opset) {
  PlanOptions options;
  options.fuse_elementwise = fuse;
  options.fuse_quantized = false;
  return Plan::Build(g, OpsetMap{{"", opset}}, options);
}

Tensor AllBytes(DType dt, const Dims& dims) {
  Tensor t(dt, dims);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<uint8_t>(i * 7 + i / 256);
  return t;
}

Tensor Run(std::shared_ptr<const Plan> plan, const Tensor& x, int threads) {
  auto pool = MakeThreadPool(threads);
  Executor exec(std::move(plan), pool.get());
  return exec.Run({{"x", x}})[0];
}

TEST_CASE("Quantized lookup fusion: every input byte gives the unfused output byte") {
  for (int64_t opset : {13, 21}) {
    for (DType in : {DType::kUInt8, DType::kInt8}) {
      for (DType out : {DType::kUInt8, DType::kInt8}) {
        for (Chain chain : {Chain::kNone, Chain::kAffineHardSwish, Chain::kSigmoid}) {
          CAPTURE(opset);
          CAPTURE(DTypeName(in));
          CAPTURE(DTypeName(out));
          CAPTURE(static_cast<int>(chain));
          const Dims dims = {3, 70001};
          const Graph g = QdqGraph(in, out, chain, dims);
          auto fused = BuildPlan(g, true, opset);
          REQUIRE(fused->steps().size() == 1);
          CHECK(fused->steps()[0].node.op_type == "QuantizedLookup");
          const Tensor x = AllBytes(in, dims);
          const Tensor want = Run(BuildPlan(g, false, opset), x, 1);
          for (int threads : {1, 3}) {
            CAPTURE(threads);
            const Tensor got = Run(fused, x, threads);
            REQUIRE(got.dtype() == want.dtype());
            REQUIRE(got.dims() == want.dims());
            CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.byte_size()) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("Quantized lookup fusion leaves patterns alone that are not a function of one byte") {
  SUBCASE("the float value is also a graph output") {
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kSigmoid, {8});
    g.outputs.push_back(Out("h"));
    auto plan = BuildPlan(g, true, 13);
    CHECK(plan->steps().size() == 3);
  }
  SUBCASE("a per-channel scale") {
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kSigmoid, {2, 4});
    Tensor xs(DType::kFloat32, {4});
    for (int i = 0; i < 4; ++i) xs.data<float>()[i] = 0.5f * (i + 1);
    g.initializers[0].second = xs;
    Tensor xz(DType::kUInt8, {4});
    std::memset(xz.raw_data(), 128, 4);
    g.initializers[1].second = xz;
    CHECK(BuildPlan(g, true, 13)->steps().size() == 3);
  }
  SUBCASE("a chain with a second variable input") {
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kNone, {8});
    g.inputs.push_back(In("z", DType::kFloat32, {8}));
    g.nodes[1].inputs[0] = "fz";
    g.nodes.insert(g.nodes.begin() + 1, N("Mul", {"f", "z"}, {"fz"}));
    CHECK(BuildPlan(g, true, 13)->steps().size() == 3);
  }
}

}  // namespace
}  // namespace simplecpp::graph
