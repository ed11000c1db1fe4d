// DequantizeLinear -> chain -> QuantizeLinear lookup fusion (graph/passes/quant_lookup_fusion.h):
// which patterns become one table lookup, that every input byte gives the unfused plan's output
// byte (uint8 / int8 in and out, odd zero points, scales that make ties, 1 and 3 threads), and
// which patterns must stay apart.
#include "graph/passes/quant_lookup_fusion.h"

#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/thread_pool.h"

namespace simplecpp::graph {
namespace {

using test_graph::In;
using test_graph::IntsAttr;
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

// The fused plan's output equals the unfused plan's byte for byte, at 1 and 3 threads.
void CheckSameBytes(const std::shared_ptr<const Plan>& fused,
                    std::shared_ptr<const Plan> unfused, const Tensor& x) {
  const Tensor want = Run(std::move(unfused), x, 1);
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    const Tensor got = Run(fused, x, threads);
    REQUIRE(got.dtype() == want.dtype());
    REQUIRE(got.dims() == want.dims());
    CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.byte_size()) == 0);
  }
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
          CheckSameBytes(fused, BuildPlan(g, false, opset), AllBytes(in, dims));
        }
      }
    }
  }
}

TEST_CASE("Dequantized lookup fusion: a float chain's result as a table of the byte, same bits") {
  for (DType in : {DType::kUInt8, DType::kInt8}) {
    for (Chain chain : {Chain::kAffineHardSwish, Chain::kSigmoid}) {
      CAPTURE(DTypeName(in));
      CAPTURE(static_cast<int>(chain));
      // The chain's result is the model's output: nothing requantizes it.
      const Dims dims = {3, 70001};
      Graph g = QdqGraph(in, DType::kUInt8, chain, dims);
      g.nodes.pop_back();
      g.outputs = {Out("h")};
      auto fused = BuildPlan(g, true, 13);
      REQUIRE(fused->steps().size() == 1);
      CHECK(fused->steps()[0].node.op_type == "DequantizedLookup");
      CheckSameBytes(fused, BuildPlan(g, false, 13), AllBytes(in, dims));
    }
  }
  SUBCASE("a DequantizeLinear alone stays") {
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kNone, {8});
    g.nodes.pop_back();
    g.outputs = {Out("f")};
    auto plan = BuildPlan(g, true, 13);
    REQUIRE(plan->steps().size() == 1);
    CHECK(plan->steps()[0].node.op_type == "DequantizeLinear");
  }
}

TEST_CASE("Quantized lookup fusion leaves patterns alone that are not a function of one byte") {
  SUBCASE("the float value is also a graph output") {
    // It stays materialized: DequantizeLinear -> Sigmoid becomes its float table, and the
    // QuantizeLinear stays.
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kSigmoid, {8});
    g.outputs.push_back(Out("h"));
    auto plan = BuildPlan(g, true, 13);
    REQUIRE(plan->steps().size() == 2);
    CHECK(plan->steps()[0].node.op_type == "DequantizedLookup");
    CHECK(plan->steps()[1].node.op_type == "QuantizeLinear");
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

// QLinearConv (x [1, c, h, w] uint8, int8 weights per output channel, bias) -> y, then y's
// DequantizeLinear -> affine HardSwish -> QuantizeLinear (QdqGraph's chain) -> z.
Graph ConvLookupGraph(int64_t c, int64_t m, int64_t k, int64_t group, int64_t h, int64_t w,
                      DType out) {
  Graph g = QdqGraph(out, out, Chain::kAffineHardSwish, {1, m, h, w});
  g.inputs = {In("x", DType::kUInt8, {1, c, h, w})};
  g.nodes[0].inputs[0] = "c";
  g.nodes.back().outputs = {"z"};
  g.outputs = {Out("z")};
  const int64_t cg = c / group;
  Tensor wt(DType::kInt8, {m, cg, k, k});
  auto* wp = static_cast<int8_t*>(wt.raw_data());
  for (int64_t i = 0; i < wt.num_elements(); ++i) wp[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  Tensor ws(DType::kFloat32, {m}), wz(DType::kInt8, {m}), bias(DType::kInt32, {m});
  for (int64_t i = 0; i < m; ++i) {
    ws.data<float>()[i] = 0.0009765625f * static_cast<float>(1 + i % 3);  // 2^-10: ties
    static_cast<int8_t*>(wz.raw_data())[i] = 0;
    bias.data<int32_t>()[i] = static_cast<int32_t>(i * 97 % 501) - 250;
  }
  g.initializers.emplace_back("cxs", F32(0.0625f));
  g.initializers.emplace_back("cxz", Byte(DType::kUInt8, 131));
  g.initializers.emplace_back("cw", wt);
  g.initializers.emplace_back("cws", ws);
  g.initializers.emplace_back("cwz", wz);
  g.initializers.emplace_back("cys", F32(0.5f));
  g.initializers.emplace_back("cyz", Byte(out, out == DType::kInt8 ? -7 : 121));
  g.initializers.emplace_back("cb", bias);
  const int64_t p = k / 2;
  g.nodes.insert(g.nodes.begin(),
                 N("QLinearConv", {"x", "cxs", "cxz", "cw", "cws", "cwz", "cys", "cyz", "cb"},
                   {"c"},
                   {IntsAttr("kernel_shape", {k, k}), IntsAttr("pads", {p, p, p, p}),
                    test_graph::IntAttr("group", group)}));
  return g;
}

TEST_CASE("Lookup fusion into QLinearConv: the convolution writes the table's bytes, same bytes") {
  struct Case {
    int64_t c, m, k, group, h, w;
  };
  // A 3x3 convolution (GEMM on im2row rows), pointwise with few output channels (operands
  // swapped), depthwise (the byte kernel), odd sizes.
  const Case cases[] = {{5, 40, 3, 1, 9, 13}, {16, 8, 1, 1, 11, 37}, {24, 24, 3, 24, 10, 70},
                        {7, 3, 3, 1, 5, 5}};
  for (const Case& cs : cases) {
    for (DType out : {DType::kUInt8, DType::kInt8}) {
      CAPTURE(cs.c);
      CAPTURE(cs.m);
      CAPTURE(cs.group);
      CAPTURE(DTypeName(out));
      const Graph g = ConvLookupGraph(cs.c, cs.m, cs.k, cs.group, cs.h, cs.w, out);
      auto fused = BuildPlan(g, true, 13);
      REQUIRE(fused->steps().size() == 1);
      CHECK(fused->steps()[0].node.op_type == "QLinearConv");
      CHECK(fused->steps()[0].node.doc.find("lookup") != std::string::npos);
      const Tensor x = AllBytes(DType::kUInt8, {1, cs.c, cs.h, cs.w});
      CheckSameBytes(fused, BuildPlan(g, false, 13), x);
    }
  }
  SUBCASE("the convolution's own output is also a graph output: a separate lookup") {
    Graph g = ConvLookupGraph(5, 40, 3, 1, 9, 13, DType::kUInt8);
    g.outputs.push_back(Out("c"));
    auto plan = BuildPlan(g, true, 13);
    REQUIRE(plan->steps().size() == 2);
    CHECK(plan->steps()[0].node.op_type == "QLinearConv");
    CHECK(plan->steps()[1].node.op_type == "QuantizedLookup");
  }
}

// A 3x3 stride-2 MaxPool with padding (ceil_mode as given) in front of the graph's last node,
// the QuantizeLinear.
void InsertMaxPool(Graph* g, bool ceil_mode) {
  Node& q = g->nodes.back();
  REQUIRE(q.op_type == "QuantizeLinear");
  const std::string in = q.inputs[0];
  q.inputs[0] = "pooled";
  g->nodes.insert(g->nodes.end() - 1,
                  N("MaxPool", {in}, {"pooled"},
                    {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
                     IntsAttr("pads", {1, 1, 1, 1}),
                     test_graph::IntAttr("ceil_mode", ceil_mode ? 1 : 0)}));
}

std::vector<std::string> OpTypes(const Plan& plan) {
  std::vector<std::string> types;
  for (const PlanStep& step : plan.steps()) types.push_back(step.node.op_type);
  return types;
}

TEST_CASE("Lookup fusion through a MaxPool: the pool runs on the table's bytes, same bytes") {
  // Max commutes with the non-decreasing quantization, so the float MaxPool between the chain
  // and the QuantizeLinear runs on the quantized bytes; the hard-swish chain is not monotonic,
  // so the table comes first. Odd sizes, padding, ceil_mode.
  const Dims dims = {2, 3, 17, 23};
  for (DType in : {DType::kUInt8, DType::kInt8}) {
    for (DType out : {DType::kUInt8, DType::kInt8}) {
      for (Chain chain : {Chain::kNone, Chain::kAffineHardSwish, Chain::kSigmoid}) {
        for (bool ceil_mode : {false, true}) {
          CAPTURE(DTypeName(in));
          CAPTURE(DTypeName(out));
          CAPTURE(static_cast<int>(chain));
          CAPTURE(ceil_mode);
          Graph g = QdqGraph(in, out, chain, dims);
          InsertMaxPool(&g, ceil_mode);
          auto fused = BuildPlan(g, true, 13);
          CHECK(OpTypes(*fused) == std::vector<std::string>{"QuantizedLookup", "MaxPool"});
          CheckSameBytes(fused, BuildPlan(g, false, 13), AllBytes(in, dims));
        }
      }
    }
  }
  SUBCASE("a QLinearConv in front takes the table, the pool reads its bytes") {
    for (DType out : {DType::kUInt8, DType::kInt8}) {
      Graph g = ConvLookupGraph(5, 24, 3, 1, 9, 13, out);
      InsertMaxPool(&g, true);
      auto fused = BuildPlan(g, true, 13);
      CHECK(OpTypes(*fused) == std::vector<std::string>{"QLinearConv", "MaxPool"});
      CheckSameBytes(fused, BuildPlan(g, false, 13), AllBytes(DType::kUInt8, {1, 5, 9, 13}));
    }
  }
  SUBCASE("a negative output scale reverses the order: the pool stays on floats") {
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kAffineHardSwish, dims);
    for (auto& [name, t] : g.initializers) {
      if (name == "ys") *t.data<float>() = -0.03125f;
    }
    InsertMaxPool(&g, false);
    auto fused = BuildPlan(g, true, 13);
    CHECK(OpTypes(*fused) ==
          std::vector<std::string>{"DequantizedLookup", "MaxPool", "QuantizeLinear"});
    CheckSameBytes(fused, BuildPlan(g, false, 13), AllBytes(DType::kUInt8, dims));
  }
  SUBCASE("before opset 12 MaxPool takes no 8-bit data: the pool stays on floats") {
    Graph g = QdqGraph(DType::kUInt8, DType::kUInt8, Chain::kSigmoid, dims);
    InsertMaxPool(&g, false);
    auto fused = BuildPlan(g, true, 11);
    CHECK(OpTypes(*fused) ==
          std::vector<std::string>{"DequantizedLookup", "MaxPool", "QuantizeLinear"});
    CheckSameBytes(fused, BuildPlan(g, false, 11), AllBytes(DType::kUInt8, dims));
  }
}

// x0 (uint8), x1 (int8), x2 (uint8), each through its own DequantizeLinear (odd zero points,
// power-of-two scales: ties) -> Concat(axis) -> QuantizeLinear -> y (out).
Graph ConcatGraph(DType out, int64_t axis, const std::vector<Dims>& dims) {
  Graph g;
  const DType types[] = {DType::kUInt8, DType::kInt8, DType::kUInt8};
  const float scales[] = {0.0625f, 0.125f, 0.03125f};
  const int zps[] = {131, -3, 7};
  std::vector<std::string> floats;
  for (size_t i = 0; i < dims.size(); ++i) {
    const std::string n = std::to_string(i);
    g.inputs.push_back(In("x" + n, types[i], dims[i]));
    g.initializers.emplace_back("s" + n, F32(scales[i]));
    g.initializers.emplace_back("z" + n, Byte(types[i], zps[i]));
    g.nodes.push_back(N("DequantizeLinear", {"x" + n, "s" + n, "z" + n}, {"f" + n}));
    floats.push_back("f" + n);
  }
  Attribute a;
  a.name = "axis";
  a.kind = AttrKind::kInt;
  a.i = axis;
  g.nodes.push_back(N("Concat", floats, {"c"}, {a}));
  g.initializers.emplace_back("ys", F32(0.25f));
  g.initializers.emplace_back("yz", Byte(out, out == DType::kInt8 ? 5 : 77));
  g.nodes.push_back(N("QuantizeLinear", {"c", "ys", "yz"}, {"y"}));
  g.outputs.push_back(Out("y"));
  return g;
}

std::vector<Tensor> RunConcat(std::shared_ptr<const Plan> plan, const std::vector<Dims>& dims,
                              int threads) {
  const DType types[] = {DType::kUInt8, DType::kInt8, DType::kUInt8};
  auto pool = MakeThreadPool(threads);
  Executor exec(std::move(plan), pool.get());
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < dims.size(); ++i) {
    Tensor t = AllBytes(types[i], dims[i]);
    auto* p = static_cast<uint8_t*>(t.raw_data());
    for (int64_t k = 0; k < t.num_elements(); ++k) p[k] = static_cast<uint8_t>(p[k] + 31 * i);
    feeds.emplace("x" + std::to_string(i), t);
  }
  return exec.Run(feeds);
}

TEST_CASE("Quantized Concat fusion: one table per input gives the unfused bytes") {
  struct Case {
    int64_t axis;
    std::vector<Dims> dims;
  };
  const Case cases[] = {
      {1, {{2, 3, 40, 41}, {2, 5, 40, 41}, {2, 1, 40, 41}}},
      {-1, {{3, 7, 300}, {3, 7, 1}, {3, 7, 129}}},
      {0, {{70000}, {1000}}},
      {1, {{2, 0, 5}, {2, 3, 5}}},  // an empty input
  };
  for (const Case& c : cases) {
    for (DType out : {DType::kUInt8, DType::kInt8}) {
      CAPTURE(c.axis);
      CAPTURE(DTypeName(out));
      const Graph g = ConcatGraph(out, c.axis, c.dims);
      auto fused = BuildPlan(g, true, 13);
      REQUIRE(fused->steps().size() == 1);
      CHECK(fused->steps()[0].node.op_type == "QuantizedConcat");
      const Tensor want = RunConcat(BuildPlan(g, false, 13), c.dims, 1)[0];
      for (int threads : {1, 3}) {
        CAPTURE(threads);
        const Tensor got = RunConcat(fused, c.dims, threads)[0];
        REQUIRE(got.dtype() == want.dtype());
        REQUIRE(got.dims() == want.dims());
        CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.byte_size()) == 0);
      }
    }
  }
  SUBCASE("a dequantized input read elsewhere, or a Concat input that is not dequantized") {
    const std::vector<Dims> dims = {{2, 3}, {2, 4}};
    Graph g = ConcatGraph(DType::kUInt8, 1, dims);
    g.outputs.push_back(Out("f1"));
    CHECK(BuildPlan(g, true, 13)->steps().size() == 4);
    Graph h = ConcatGraph(DType::kUInt8, 1, dims);
    h.inputs.push_back(In("extra", DType::kFloat32, {2, 2}));
    h.nodes[2].inputs.push_back("extra");
    CHECK(BuildPlan(h, true, 13)->steps().size() == 4);
  }
  SUBCASE("mismatched shapes fail at Prepare with the Concat's message") {
    const std::vector<Dims> dims = {{2, 3}, {3, 4}};
    const Graph g = ConcatGraph(DType::kUInt8, 1, dims);
    bool threw = false;
    try {
      RunConcat(BuildPlan(g, true, 13), dims, 1);
    } catch (const Error& e) {
      threw = std::string(e.what()).find("differs from input 0") != std::string::npos;
    }
    CHECK(threw);
  }
}

}  // namespace
}  // namespace simplecpp::graph
