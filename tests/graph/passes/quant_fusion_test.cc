// The quantized-pattern fusion pass (graph/passes/quant_fusion.h) through Plan::Build: small
// graphs built in code run with fusion on and off on the same seeded inputs.
//  - The pass fires (the plan holds the fused op, not the integer op) exactly when it is safe.
//  - Dynamic patterns (DynamicQuantizeLinear -> MatMulInteger/ConvInteger -> Cast -> Mul [-> Add]):
//    the fused float output is bit-identical (0 ulps) to the unfused graph and to
//    float(acc) * (xs * ws) [+ bias] computed here from the unfused graph's int32 accumulator.
//  - QDQ patterns: the fused quantized output equals the requantization of the exact int32
//    accumulator computed here, and differs from the unfused float graph by at most 1.
#include "graph/passes/quant_fusion.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/executor.h"
#include "graph/graph_builder_util.h"
#include "graph/op_test_util.h"
#include "graph/thread_pool.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"

namespace simplecpp::graph {
namespace {

using testing::AttrFloat;
using testing::AttrInt;
using testing::AttrInts;

using test_graph::In;
using test_graph::N;
using test_graph::Out;

// Random 8-bit tensor (int8 when is_signed) of dims.
Tensor Random8(const Dims& dims, bool is_signed, std::mt19937* rng) {
  Tensor t(is_signed ? DType::kInt8 : DType::kUInt8, dims);
  std::uniform_int_distribution<int> d(is_signed ? -128 : 0, is_signed ? 127 : 255);
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<uint8_t>(d(*rng));
  return t;
}

Tensor RandomFloats(const Dims& dims, float lo, float hi, std::mt19937* rng) {
  Tensor t(DType::kFloat32, dims);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = d(*rng);
  return t;
}

int32_t Int8At(const Tensor& t, int64_t i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return t.dtype() == DType::kInt8 ? static_cast<int32_t>(static_cast<int8_t>(p[i])) : p[i];
}

bool HasOp(const Plan& plan, const std::string& op_type) {
  for (const PlanStep& s : plan.steps()) {
    if (s.node.op_type == op_type) return true;
  }
  return false;
}

struct Runs {
  std::shared_ptr<const Plan> plan;
  std::vector<Tensor> out;
};

Runs BuildAndRun(const Graph& g, bool fuse, const std::map<std::string, Tensor>& feeds,
                 int threads = 2) {
  PlanOptions o;
  o.fuse_quantized = fuse;
  const OpsetMap opsets{{"", 19}};
  Runs r;
  r.plan = Plan::Build(g, opsets, o);
  auto pool = MakeThreadPool(threads);
  Executor exec(r.plan, pool.get());
  r.out = exec.Run(feeds);
  return r;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// ---------------------------------------------------------------------------------------------
// Dynamic MatMul: x -> DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(Mul(xs, ws)) [-> Add]

struct DynMatMul {
  Dims x_dims = {2, 5, 37};  // [..., K]
  int64_t n = 19;
  bool w_signed = false;
  bool zp_per_column = false;
  bool scale_per_column = false;
  bool bias = false;
  bool swap_operands = false;  // Mul(ws, xs), Mul(s, accf), Add(bias, y)
  bool acc_is_output = false;  // an extra consumer: the pass must not fire
  bool xs_second_use = false;   // shared DynamicQuantizeLinear: fuses, the node stays
  bool accf_second_use = false;  // Cast output read twice: no fusion
  bool w_not_constant = false;
  bool w_from_constant_node = false;
  uint32_t seed = 1;
};

struct DynGraph {
  Graph g;
  std::map<std::string, Tensor> feeds;
  Tensor ws, bias;
};

DynGraph MakeDynMatMul(const DynMatMul& s) {
  std::mt19937 rng(s.seed);
  const int64_t k = s.x_dims.back();
  DynGraph d;
  Graph& g = d.g;
  g.inputs.push_back(In("x", DType::kFloat32, s.x_dims));
  d.feeds["x"] = RandomFloats(s.x_dims, -3.0f, 2.0f, &rng);
  Tensor w = Random8({k, s.n}, s.w_signed, &rng);
  if (s.w_not_constant) {
    g.inputs.push_back(In("W", w.dtype(), {k, s.n}));
    d.feeds["W"] = w;
  } else if (s.w_from_constant_node) {
    g.nodes.push_back(N("Constant", {}, {"W"}, {testing::AttrTensor("value", w)}));
  } else {
    g.initializers.emplace_back("W", w);
  }
  g.initializers.emplace_back(
      "wzp", Random8(s.zp_per_column ? Dims{s.n} : Dims{}, s.w_signed, &rng));
  d.ws = RandomFloats(s.scale_per_column ? Dims{s.n} : Dims{}, 0.001f, 0.05f, &rng);
  g.initializers.emplace_back("ws", d.ws);
  g.nodes.push_back(N("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"}));
  g.nodes.push_back(N("MatMulInteger", {"xq", "W", "xzp", "wzp"}, {"acc"}));
  g.nodes.push_back(N("Cast", {"acc"}, {"accf"}, {AttrInt("to", 1)}));
  g.nodes.push_back(N("Mul", s.swap_operands ? std::vector<std::string>{"ws", "xs"}
                                             : std::vector<std::string>{"xs", "ws"},
                      {"s"}));
  g.nodes.push_back(N("Mul", s.swap_operands ? std::vector<std::string>{"s", "accf"}
                                             : std::vector<std::string>{"accf", "s"},
                      {s.bias ? "y0" : "y"}));
  if (s.bias) {
    d.bias = RandomFloats({s.n}, -1.0f, 1.0f, &rng);
    g.initializers.emplace_back("bias", d.bias);
    g.nodes.push_back(N("Add", s.swap_operands ? std::vector<std::string>{"bias", "y0"}
                                               : std::vector<std::string>{"y0", "bias"},
                        {"y"}));
  }
  if (s.xs_second_use) g.nodes.push_back(N("Identity", {"xs"}, {"xs_copy"}));
  if (s.accf_second_use) g.nodes.push_back(N("Identity", {"accf"}, {"accf_copy"}));
  g.outputs.push_back(Out("y"));
  if (s.acc_is_output) g.outputs.push_back(Out("acc"));
  if (s.xs_second_use) g.outputs.push_back(Out("xs_copy"));
  if (s.accf_second_use) g.outputs.push_back(Out("accf_copy"));
  return d;
}

// Runs fused and unfused; checks bit equality with float(acc) * (xs * ws) [+ bias] built from the
// unfused graph's int32 accumulator (and that accumulator against a scalar reference).
void CheckDynMatMul(const DynMatMul& s) {
  CAPTURE(s.seed);
  DynGraph d = MakeDynMatMul(s);
  Runs fused = BuildAndRun(d.g, true, d.feeds);
  Runs plain = BuildAndRun(d.g, false, d.feeds);
  CHECK(HasOp(*fused.plan, "DynamicQuantizeMatMul"));
  CHECK_FALSE(HasOp(*fused.plan, "MatMulInteger"));
  CHECK(HasOp(*plain.plan, "MatMulInteger"));
  // Probe: the unfused graph with its intermediates as outputs.
  Graph probe = d.g;
  for (const char* v : {"xq", "xzp", "acc", "s"}) probe.outputs.push_back(Out(v));
  Runs p = BuildAndRun(probe, true, d.feeds);
  CHECK_FALSE(HasOp(*p.plan, "DynamicQuantizeMatMul"));  // intermediates are outputs now
  const size_t base = d.g.outputs.size();
  const Tensor& xq = p.out[base];
  const int32_t xzp = Int8At(p.out[base + 1], 0);
  const Tensor& acc = p.out[base + 2];
  const Tensor& sc = p.out[base + 3];
  const Tensor& yf = fused.out[0];
  const Tensor& yu = plain.out[0];
  REQUIRE(yf.dims() == yu.dims());
  const int64_t k = s.x_dims.back(), n = s.n, rows = yf.num_elements() / n;
  const Tensor* w = d.g.FindInitializer("W");
  Tensor w_t = w ? *w : (d.feeds.count("W") ? d.feeds.at("W") : d.g.nodes[0].attributes[0].t);
  const Tensor& wzp = *d.g.FindInitializer("wzp");
  int64_t bad_acc = 0, bad_fused = 0, bad_plain = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t ref = 0;
      for (int64_t q = 0; q < k; ++q) {
        ref += (Int8At(xq, r * k + q) - xzp) *
               (Int8At(w_t, q * n + j) - Int8At(wzp, wzp.num_elements() > 1 ? j : 0));
      }
      const int64_t i = r * n + j;
      if (acc.data<int32_t>()[i] != ref) ++bad_acc;
      float y = static_cast<float>(acc.data<int32_t>()[i]) *
                sc.data<float>()[sc.num_elements() > 1 ? j : 0];
      if (s.bias) {
        volatile float prod = y;  // keep the two roundings apart
        y = prod + d.bias.data<float>()[j];
      }
      if (!SameBits(yf.data<float>()[i], y)) ++bad_fused;
      if (!SameBits(yu.data<float>()[i], y)) ++bad_plain;
    }
  }
  if (s.xs_second_use) {
    CHECK(HasOp(*fused.plan, "DynamicQuantizeLinear"));  // still read by the Identity
    CHECK(fused.out[1].BitwiseEquals(plain.out[1]));
  } else {
    CHECK_FALSE(HasOp(*fused.plan, "DynamicQuantizeLinear"));
  }
  CHECK(bad_acc == 0);
  CHECK(bad_fused == 0);  // 0 ulps
  CHECK(bad_plain == 0);
}

TEST_CASE("QuantFusion: dynamic MatMulInteger pattern fuses bit-exactly") {
  DynMatMul s;
  SUBCASE("uint8 weights, scalar zero point and scale") { CheckDynMatMul(s); }
  SUBCASE("int8 weights, per-column zero point and scale, bias") {
    s.w_signed = true;
    s.zp_per_column = true;
    s.scale_per_column = true;
    s.bias = true;
    s.seed = 2;
    CheckDynMatMul(s);
  }
  SUBCASE("uint8 weights, per-column, bias, swapped operands, 2-D x") {
    s.x_dims = {7, 64};
    s.n = 33;
    s.zp_per_column = true;
    s.scale_per_column = true;
    s.bias = true;
    s.swap_operands = true;
    s.seed = 3;
    CheckDynMatMul(s);
  }
  SUBCASE("shared DynamicQuantizeLinear (x scale read elsewhere)") {
    s.xs_second_use = true;
    s.seed = 5;
    CheckDynMatMul(s);
  }
  SUBCASE("int8 weights from a Constant node, batched 3-D x") {
    s.x_dims = {3, 4, 130};
    s.n = 40;
    s.w_signed = true;
    s.w_from_constant_node = true;
    s.bias = true;
    s.seed = 4;
    CheckDynMatMul(s);
  }
}

TEST_CASE("QuantFusion: dynamic MatMulInteger pattern is left alone when unsafe") {
  DynMatMul s;
  s.bias = true;
  auto check_unfused = [](const DynMatMul& spec) {
    DynGraph d = MakeDynMatMul(spec);
    Runs fused = BuildAndRun(d.g, true, d.feeds);
    Runs plain = BuildAndRun(d.g, false, d.feeds);
    CHECK_FALSE(HasOp(*fused.plan, "DynamicQuantizeMatMul"));
    CHECK(HasOp(*fused.plan, "MatMulInteger"));
    REQUIRE(fused.out.size() == plain.out.size());
    for (size_t i = 0; i < fused.out.size(); ++i) CHECK(fused.out[i].BitwiseEquals(plain.out[i]));
  };
  SUBCASE("int32 accumulator is a graph output") {
    s.acc_is_output = true;
    check_unfused(s);
  }
  SUBCASE("the float accumulator has a second consumer") {
    s.accf_second_use = true;
    check_unfused(s);
  }
  SUBCASE("weights are not constant") {
    s.w_not_constant = true;
    check_unfused(s);
  }
  SUBCASE("fusion switched off") {
    DynGraph d = MakeDynMatMul(s);
    Runs plain = BuildAndRun(d.g, false, d.feeds);
    CHECK_FALSE(HasOp(*plain.plan, "DynamicQuantizeMatMul"));
  }
}

TEST_CASE("QuantFusion: the Add is not fused when the bias is not constant") {
  DynMatMul s;
  s.bias = true;
  DynGraph d = MakeDynMatMul(s);
  // Make the bias a graph input: the MatMul part still fuses, the Add stays.
  for (auto it = d.g.initializers.begin(); it != d.g.initializers.end(); ++it) {
    if (it->first == "bias") {
      d.feeds["bias"] = it->second;
      d.g.initializers.erase(it);
      break;
    }
  }
  d.g.inputs.push_back(In("bias", DType::kFloat32, {s.n}));
  Runs fused = BuildAndRun(d.g, true, d.feeds);
  Runs plain = BuildAndRun(d.g, false, d.feeds);
  CHECK(HasOp(*fused.plan, "DynamicQuantizeMatMul"));
  CHECK(HasOp(*fused.plan, "Add"));
  CHECK(fused.out[0].BitwiseEquals(plain.out[0]));
}

// ---------------------------------------------------------------------------------------------
// Dynamic Conv: x -> DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(Mul(xs, ws)) [-> Add]

struct DynConv {
  Dims x_dims = {2, 4, 9, 8};
  int64_t m = 6;
  Dims kernel = {3, 3};
  int64_t group = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0}, strides = {1, 1};
  bool w_signed = false;
  bool zp_per_channel = false;
  Dims scale_dims = {};  // {} (scalar), {M,1,1} or {1,M,1,1}
  Dims bias_dims;        // empty: no bias; else {1,M,1,1} or {M,1,1}
  uint32_t seed = 11;
};

void CheckDynConv(const DynConv& s) {
  CAPTURE(s.seed);
  std::mt19937 rng(s.seed);
  Graph g;
  std::map<std::string, Tensor> feeds;
  g.inputs.push_back(In("x", DType::kFloat32, s.x_dims));
  feeds["x"] = RandomFloats(s.x_dims, -1.0f, 4.0f, &rng);
  const int64_t c = s.x_dims[1];
  Dims wd = {s.m, c / s.group};
  wd.insert(wd.end(), s.kernel.begin(), s.kernel.end());
  g.initializers.emplace_back("W", Random8(wd, s.w_signed, &rng));
  g.initializers.emplace_back("wzp",
                              Random8(s.zp_per_channel ? Dims{s.m} : Dims{}, s.w_signed, &rng));
  const Tensor ws = RandomFloats(s.scale_dims, 0.001f, 0.05f, &rng);
  g.initializers.emplace_back("ws", ws);
  g.nodes.push_back(N("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"}));
  g.nodes.push_back(N("ConvInteger", {"xq", "W", "xzp", "wzp"}, {"acc"},
                      {AttrInts("kernel_shape", s.kernel), AttrInts("pads", s.pads),
                       AttrInts("strides", s.strides), AttrInt("group", s.group)}));
  g.nodes.push_back(N("Cast", {"acc"}, {"accf"}, {AttrInt("to", 1)}));
  g.nodes.push_back(N("Mul", {"xs", "ws"}, {"s"}));
  const bool bias = !s.bias_dims.empty();
  g.nodes.push_back(N("Mul", {"accf", "s"}, {bias ? "y0" : "y"}));
  Tensor b;
  if (bias) {
    b = RandomFloats(s.bias_dims, -1.0f, 1.0f, &rng);
    g.initializers.emplace_back("bias", b);
    g.nodes.push_back(N("Add", {"y0", "bias"}, {"y"}));
  }
  g.outputs.push_back(Out("y"));
  Runs fused = BuildAndRun(g, true, feeds);
  Runs plain = BuildAndRun(g, false, feeds);
  CHECK(HasOp(*fused.plan, "DynamicQuantizeConv"));
  CHECK_FALSE(HasOp(*fused.plan, "ConvInteger"));
  Graph probe = g;
  probe.outputs.push_back(Out("acc"));
  probe.outputs.push_back(Out("s"));
  Runs p = BuildAndRun(probe, true, feeds);
  CHECK(HasOp(*p.plan, "ConvInteger"));
  const Tensor& acc = p.out[1];
  const Tensor& sc = p.out[2];
  const Tensor& yf = fused.out[0];
  REQUIRE(yf.dims() == plain.out[0].dims());
  REQUIRE(yf.dims() == acc.dims());
  const int64_t per_image = yf.num_elements() / yf.dim(0);
  const int64_t positions = per_image / s.m;
  int64_t bad_fused = 0, bad_plain = 0;
  for (int64_t i = 0; i < yf.num_elements(); ++i) {
    const int64_t ch = (i / positions) % s.m;
    float y = static_cast<float>(acc.data<int32_t>()[i]) *
              sc.data<float>()[sc.num_elements() > 1 ? ch : 0];
    if (bias) {
      volatile float prod = y;
      y = prod + b.data<float>()[b.num_elements() > 1 ? ch : 0];
    }
    if (!SameBits(yf.data<float>()[i], y)) ++bad_fused;
    if (!SameBits(plain.out[0].data<float>()[i], y)) ++bad_plain;
  }
  CHECK(bad_fused == 0);  // 0 ulps
  CHECK(bad_plain == 0);
}

TEST_CASE("QuantFusion: dynamic ConvInteger pattern fuses bit-exactly") {
  DynConv s;
  SUBCASE("uint8 weights, scalar scale, no bias") { CheckDynConv(s); }
  SUBCASE("int8 weights, per-channel zero point and scale [M,1,1], bias [1,M,1,1], pads, strides") {
    s.w_signed = true;
    s.zp_per_channel = true;
    s.scale_dims = {6, 1, 1};
    s.bias_dims = {1, 6, 1, 1};
    s.pads = {1, 2, 1, 0};
    s.strides = {2, 1};
    s.seed = 12;
    CheckDynConv(s);
  }
  SUBCASE("groups, scale [1,M,1,1], bias [M,1,1]") {
    s.x_dims = {1, 6, 7, 7};
    s.group = 3;
    s.scale_dims = {1, 6, 1, 1};
    s.bias_dims = {6, 1, 1};
    s.pads = {1, 1, 1, 1};
    s.seed = 13;
    CheckDynConv(s);
  }
  SUBCASE("depthwise with uint8 weights, per-channel zero point") {
    s.x_dims = {2, 6, 10, 5};
    s.group = 6;
    s.zp_per_channel = true;
    s.bias_dims = {1, 6, 1, 1};
    s.strides = {2, 2};
    s.seed = 14;
    CheckDynConv(s);
  }
}

// ---------------------------------------------------------------------------------------------
// QDQ: DequantizeLinear(xq), DequantizeLinear(W) -> MatMul / Gemm / Conv [-> Add] -> QuantizeLinear

enum class Core { kMatMul, kGemm, kGemmTransB, kConv };

struct Qdq {
  Core core = Core::kMatMul;
  Dims x_dims = {2, 5, 40};  // [..., K] or [N, C, H, W]
  int64_t n = 23;            // columns / output channels
  bool x_signed = false, w_signed = true, y_signed = false;
  bool w_per_axis = false;
  bool w_zp = true;
  bool bias_add = false;   // Add after the core op
  bool bias_input = false; // Gemm C / Conv B
  bool bias_dq = false;    // bias_input as DequantizeLinear(int32, xs * ws) (ORT's QDQ format)
  Dims kernel = {3, 3};
  int64_t group = 1;
  std::vector<int64_t> pads = {1, 0, 1, 1}, strides = {1, 2};
  bool wf_second_use = false;    // shared DequantizeLinear: fuses, the DequantizeLinear stays
  bool core_second_use = false;  // the MatMul / Conv output has a second reader: no fusion
  bool ys_not_constant = false;
  // x and w within +-4 of their zero points and y_scale = 2.5 * xs * max(ws): coarse outputs, so
  // the bias rounding (up to 0.2 output steps here) makes some outputs differ by 1.
  bool narrow = false;
  uint32_t seed = 21;
};

// Exact int32 accumulators of the pattern (reference loops), [rows, n] for MatMul / Gemm and
// [N, M, positions] for Conv.
std::vector<int64_t> ReferenceAcc(const Qdq& s, const Tensor& xq, int32_t xzp, const Tensor& w,
                                  const Tensor& wzp, Dims* out_dims) {
  std::vector<int64_t> acc;
  auto wz = [&](int64_t j) {
    return wzp.defined() ? Int8At(wzp, wzp.num_elements() > 1 ? j : 0) : 0;
  };
  if (s.core != Core::kConv) {
    const int64_t k = s.x_dims.back(), n = s.n, rows = xq.num_elements() / k;
    const bool tb = s.core == Core::kGemmTransB;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t q = 0; q < k; ++q)
          sum += (Int8At(xq, r * k + q) - xzp) * (Int8At(w, tb ? j * k + q : q * n + j) - wz(j));
        acc.push_back(sum);
      }
    *out_dims = s.x_dims;
    out_dims->back() = n;
    return acc;
  }
  const int64_t nb = s.x_dims[0], c = s.x_dims[1], h = s.x_dims[2], wi = s.x_dims[3];
  const int64_t kh = s.kernel[0], kw = s.kernel[1], cg = c / s.group, og = s.n / s.group;
  const int64_t oh = (h + s.pads[0] + s.pads[2] - kh) / s.strides[0] + 1;
  const int64_t ow = (wi + s.pads[1] + s.pads[3] - kw) / s.strides[1] + 1;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t m = 0; m < s.n; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t sum = 0;
          const int64_t g0 = m / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = oy * s.strides[0] - s.pads[0] + ky;
                const int64_t ix = ox * s.strides[1] - s.pads[1] + kx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wi) continue;  // padding: x == xzp
                const int64_t xi = ((b * c + g0 * cg + ci) * h + iy) * wi + ix;
                const int64_t wi_ = ((m * cg + ci) * kh + ky) * kw + kx;
                sum += (Int8At(xq, xi) - xzp) * (Int8At(w, wi_) - wz(m));
              }
          acc.push_back(sum);
        }
  *out_dims = {nb, s.n, oh, ow};
  return acc;
}

void CheckQdq(const Qdq& s, bool expect_fused = true) {
  CAPTURE(s.seed);
  std::mt19937 rng(s.seed);
  Graph g;
  std::map<std::string, Tensor> feeds;
  Tensor xq = Random8(s.x_dims, s.x_signed, &rng);
  g.inputs.push_back(In("xq", xq.dtype(), s.x_dims));
  feeds["xq"] = xq;
  const float xs = 0.02f;
  const Tensor xzp = Random8({}, s.x_signed, &rng);
  g.initializers.emplace_back("xs", Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{xs}));
  g.initializers.emplace_back("xzp", xzp);
  Dims wd;
  const bool conv = s.core == Core::kConv;
  const int64_t k = s.x_dims.back();
  if (conv) {
    wd = {s.n, s.x_dims[1] / s.group, s.kernel[0], s.kernel[1]};
  } else if (s.core == Core::kGemmTransB) {
    wd = {s.n, k};
  } else {
    wd = {k, s.n};
  }
  Tensor w = Random8(wd, s.w_signed, &rng);
  g.initializers.emplace_back("W", w);
  const int64_t axis = (conv || s.core == Core::kGemmTransB) ? 0 : 1;
  const Tensor ws = RandomFloats(s.w_per_axis ? Dims{s.n} : Dims{}, 0.002f, 0.01f, &rng);
  g.initializers.emplace_back("ws", ws);
  Tensor wzp;
  if (s.w_zp) {
    wzp = Random8(s.w_per_axis ? Dims{s.n} : Dims{}, s.w_signed, &rng);
    g.initializers.emplace_back("wzp", wzp);
  }
  if (s.narrow) {
    std::uniform_int_distribution<int> small(-4, 4);
    const int32_t lo8 = s.x_signed ? -128 : 0, hi8 = s.x_signed ? 127 : 255;
    for (int64_t i = 0; i < xq.num_elements(); ++i) {
      const int32_t v = std::min(hi8, std::max(lo8, Int8At(xzp, 0) + small(rng)));
      static_cast<uint8_t*>(xq.raw_data())[i] = static_cast<uint8_t>(v);
    }
    const int32_t wlo = s.w_signed ? -128 : 0, whi = s.w_signed ? 127 : 255;
    const int64_t per = w.num_elements() / s.n;  // W is [n, ...] (conv, transB) or [K, n]
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      const int64_t col = (conv || s.core == Core::kGemmTransB) ? i / per : i % s.n;
      const int32_t z = wzp.defined() ? Int8At(wzp, wzp.num_elements() > 1 ? col : 0) : 0;
      static_cast<uint8_t*>(w.raw_data())[i] =
          static_cast<uint8_t>(std::min(whi, std::max(wlo, z + small(rng))));
    }
  }
  // y scale from the exact accumulators, so that outputs span the quantized range (with a few
  // saturating).
  Dims out_dims;
  const std::vector<int64_t> acc0 = ReferenceAcc(s, xq, Int8At(xzp, 0), w, wzp, &out_dims);
  double amax = 0;
  for (size_t i = 0; i < acc0.size(); ++i) {
    const int64_t col = conv ? (static_cast<int64_t>(i) / (acc0.size() / out_dims[0] / s.n)) % s.n
                             : static_cast<int64_t>(i) % s.n;
    amax = std::max(amax, std::fabs(acc0[i] * double(xs) *
                                    ws.data<float>()[ws.num_elements() > 1 ? col : 0]));
  }
  float ys = static_cast<float>(amax / 110.0);
  if (s.narrow) {
    float ws_max = 0.0f;
    for (int64_t i = 0; i < ws.num_elements(); ++i) ws_max = std::max(ws_max, ws.data<float>()[i]);
    ys = 2.5f * xs * ws_max;
  }
  const Tensor ys_t = Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{ys});
  if (s.ys_not_constant) {
    g.inputs.push_back(In("ys", DType::kFloat32, {}));
    feeds["ys"] = ys_t;
  } else {
    g.initializers.emplace_back("ys", ys_t);
  }
  const Tensor yzp = Random8({}, s.y_signed, &rng);
  const int32_t yzp_v = Int8At(yzp, 0) / 4;  // near the middle of the range
  Tensor yzp_t(yzp.dtype(), {});
  static_cast<uint8_t*>(yzp_t.raw_data())[0] =
      static_cast<uint8_t>(s.y_signed ? yzp_v : 128 + yzp_v / 2);
  g.initializers.emplace_back("yzp", yzp_t);
  const bool has_bias = s.bias_add || s.bias_input;
  Tensor bias;
  if (has_bias) {
    Dims bd = {s.n};
    if (conv && s.bias_add) bd = {1, s.n, 1, 1};
    bias = RandomFloats(bd, -20.0f * ys, 20.0f * ys, &rng);
    if (s.bias_dq) {
      // bias_q int32 [n] with scale xs * ws (per tensor or per channel, as ws).
      Tensor bq(DType::kInt32, {s.n}), bs(DType::kFloat32, ws.dims());
      std::uniform_int_distribution<int32_t> d(-3000, 3000);
      for (int64_t j = 0; j < s.n; ++j) bq.data<int32_t>()[j] = d(rng);
      for (int64_t j = 0; j < bs.num_elements(); ++j) bs.data<float>()[j] = xs * ws.data<float>()[j];
      for (int64_t j = 0; j < s.n; ++j) {
        bias.data<float>()[j] =
            static_cast<float>(bq.data<int32_t>()[j]) * bs.data<float>()[bs.num_elements() > 1 ? j : 0];
      }
      g.initializers.emplace_back("bias_q", bq);
      g.initializers.emplace_back("bias_s", bs);
      g.nodes.push_back(N("DequantizeLinear", {"bias_q", "bias_s"}, {"bias"}, {AttrInt("axis", 0)}));
    } else {
      g.initializers.emplace_back("bias", bias);
    }
  }
  g.nodes.push_back(N("DequantizeLinear", {"xq", "xs", "xzp"}, {"xf"}));
  std::vector<std::string> dw_in = {"W", "ws"};
  if (s.w_zp) dw_in.push_back("wzp");
  g.nodes.push_back(N("DequantizeLinear", dw_in, {"wf"}, {AttrInt("axis", axis)}));
  const std::string core_out = s.bias_add ? "z" : "y";
  std::vector<std::string> core_in = {"xf", "wf"};
  if (s.bias_input) core_in.push_back("bias");
  if (s.core == Core::kMatMul) {
    g.nodes.push_back(N("MatMul", core_in, {core_out}));
  } else if (s.core == Core::kConv) {
    g.nodes.push_back(N("Conv", core_in, {core_out},
                        {AttrInts("kernel_shape", s.kernel), AttrInts("pads", s.pads),
                         AttrInts("strides", s.strides), AttrInt("group", s.group)}));
  } else {
    g.nodes.push_back(N("Gemm", core_in, {core_out},
                        {AttrInt("transB", s.core == Core::kGemmTransB ? 1 : 0),
                         AttrFloat("alpha", 1.0f)}));
  }
  if (s.bias_add) g.nodes.push_back(N("Add", {"z", "bias"}, {"y"}));
  g.nodes.push_back(N("QuantizeLinear", {"y", "ys", "yzp"}, {"q"}));
  g.outputs.push_back(Out("q"));
  if (s.wf_second_use) {
    g.nodes.push_back(N("Identity", {"wf"}, {"wf_copy"}));
    g.outputs.push_back(Out("wf_copy"));
  }
  if (s.core_second_use) {
    g.nodes.push_back(N("Identity", {core_out}, {"core_copy"}));
    g.outputs.push_back(Out("core_copy"));
  }

  Runs fused = BuildAndRun(g, true, feeds);
  Runs plain = BuildAndRun(g, false, feeds);
  const char* fused_op = conv ? "QLinearConv"
                         : (s.core == Core::kMatMul && !has_bias) ? "QLinearMatMul"
                                                                  : "QLinearMatMulBias";
  if (!expect_fused) {
    CHECK_FALSE(HasOp(*fused.plan, fused_op));
    CHECK(HasOp(*fused.plan, "QuantizeLinear"));
    CHECK(fused.out[0].BitwiseEquals(plain.out[0]));
    return;
  }
  CHECK(HasOp(*fused.plan, fused_op));
  CHECK_FALSE(HasOp(*fused.plan, "QuantizeLinear"));
  if (s.wf_second_use) {
    // The DequantizeLinear stays for the Identity (folded at load: W is constant).
    CHECK(fused.out[1].BitwiseEquals(plain.out[1]));
  } else {
    CHECK_FALSE(HasOp(*fused.plan, "DequantizeLinear"));  // dropped once nothing reads it
  }
  const Tensor& qf = fused.out[0];
  const Tensor& qu = plain.out[0];
  REQUIRE(qf.dims() == out_dims);
  REQUIRE(qu.dims() == out_dims);
  REQUIRE(qf.dtype() == yzp_t.dtype());
  const int32_t lo = s.y_signed ? -128 : 0, hi = s.y_signed ? 127 : 255;
  const int32_t zp = Int8At(yzp_t, 0);
  const int64_t positions = conv ? out_dims[2] * out_dims[3] : 1;
  int64_t bad_exact = 0, over_one = 0, differ = 0;
  for (size_t i = 0; i < acc0.size(); ++i) {
    const int64_t col = conv ? (static_cast<int64_t>(i) / positions) % s.n
                             : static_cast<int64_t>(i) % s.n;
    const float wsj = ws.data<float>()[ws.num_elements() > 1 ? col : 0];
    int64_t a = acc0[i];
    if (has_bias) {
      const float prod = xs * wsj;
      a += static_cast<int64_t>(std::nearbyint(
          double(bias.data<float>()[bias.num_elements() > 1 ? col : 0]) / double(prod)));
    }
    const float mult = xs * wsj / ys;
    const double v = std::nearbyint(double(a) * double(mult)) + zp;
    const int32_t expect = static_cast<int32_t>(std::min<double>(hi, std::max<double>(lo, v)));
    const int32_t got = Int8At(qf, static_cast<int64_t>(i));
    const int32_t unfused = Int8At(qu, static_cast<int64_t>(i));
    if (got != expect) ++bad_exact;
    if (std::abs(got - unfused) > 1) ++over_one;
    if (got != unfused) ++differ;
  }
  CHECK(bad_exact == 0);  // requantized exact int32 accumulator
  CHECK(over_one == 0);   // documented bound: at most 1 from the unfused float graph
  MESSAGE("QDQ fused vs unfused: " << differ << " of " << acc0.size() << " differ by 1");
  if (s.narrow) CHECK(differ > 0);  // the bound is reached, and respected
}

TEST_CASE("QuantFusion: QDQ MatMul / Gemm fuse with an exact int32 core") {
  Qdq s;
  SUBCASE("MatMul, batched 3-D x, per-tensor, uint8 x, int8 w -> QLinearMatMul") { CheckQdq(s); }
  SUBCASE("MatMul, per-column w, int8 x and y, Add bias -> QLinearMatMulBias") {
    s.x_signed = true;
    s.y_signed = true;
    s.w_per_axis = true;
    s.bias_add = true;
    s.seed = 22;
    CheckQdq(s);
  }
  SUBCASE("MatMul whose dequantized weights are also read elsewhere") {
    s.wf_second_use = true;
    s.bias_add = true;
    s.seed = 27;
    CheckQdq(s);
  }
  SUBCASE("MatMul, uint8 w without zero point, 2-D x, Add bias") {
    s.x_dims = {9, 70};
    s.w_signed = false;
    s.w_zp = false;
    s.bias_add = true;
    s.seed = 23;
    CheckQdq(s);
  }
  SUBCASE("Gemm with C, per-column uint8 w") {
    s.core = Core::kGemm;
    s.x_dims = {6, 50};
    s.w_signed = false;
    s.w_per_axis = true;
    s.bias_input = true;
    s.seed = 24;
    CheckQdq(s);
  }
  SUBCASE("Gemm transB, per-tensor, C from DequantizeLinear(int32)") {
    s.core = Core::kGemmTransB;
    s.x_dims = {5, 48};
    s.bias_input = true;
    s.bias_dq = true;
    s.seed = 26;
    CheckQdq(s);
  }
  SUBCASE("Gemm transB, per-row (axis 0) int8 w, Add bias") {
    s.core = Core::kGemmTransB;
    s.x_dims = {4, 33};
    s.w_per_axis = true;
    s.bias_add = true;
    s.seed = 25;
    CheckQdq(s);
  }
}

TEST_CASE("QuantFusion: QDQ with coarse output scale stays within 1 of the unfused graph") {
  Qdq s;
  s.narrow = true;
  s.bias_add = true;
  s.w_per_axis = true;
  SUBCASE("MatMul") {
    s.x_dims = {64, 8};
    s.seed = 41;
    CheckQdq(s);
  }
  SUBCASE("Conv") {
    s.core = Core::kConv;
    s.x_dims = {2, 4, 8, 9};
    s.n = 6;
    s.seed = 42;
    CheckQdq(s);
  }
}

TEST_CASE("QuantFusion: QDQ Conv fuses into QLinearConv") {
  Qdq s;
  s.core = Core::kConv;
  s.x_dims = {2, 4, 8, 9};
  s.n = 6;
  SUBCASE("per-tensor, pads and strides, no bias") { CheckQdq(s); }
  SUBCASE("per-channel int8 w, Conv bias input, int8 x and y") {
    s.w_per_axis = true;
    s.bias_input = true;
    s.x_signed = true;
    s.y_signed = true;
    s.seed = 31;
    CheckQdq(s);
  }
  SUBCASE("per-channel int8 w, bias from DequantizeLinear(int32) (ORT QDQ layout)") {
    s.w_per_axis = true;
    s.bias_input = true;
    s.bias_dq = true;
    s.seed = 33;
    CheckQdq(s);
  }
  SUBCASE("groups, per-channel uint8 w, Add bias [1,M,1,1]") {
    s.group = 2;
    s.w_signed = false;
    s.w_per_axis = true;
    s.bias_add = true;
    s.seed = 32;
    CheckQdq(s);
  }
}

// QDQ ConvTranspose (one group): DequantizeLinear x, w (per tensor or per output channel along
// W's axis 1), an int32 bias through DequantizeLinear, ConvTranspose, QuantizeLinear.
struct QdqConvTranspose {
  Dims x_dims = {1, 5, 6, 7};
  int64_t m = 4;  // output channels
  std::vector<int64_t> kernel = {2, 2}, strides = {2, 2}, pads, output_padding;
  bool w_per_axis = false, bias = false, x_signed = false, w_signed = true, y_signed = false;
  int group = 1;
  uint32_t seed = 1;
};

// Fused vs unfused: the fused op is in the plan (or not, for group > 1), and its quantized
// output is within 1 of the unfused float graph's (the bound of quant_fusion.h's pattern 4).
void CheckQdqConvTranspose(const QdqConvTranspose& s) {
  std::mt19937 rng(s.seed);
  Graph g;
  std::map<std::string, Tensor> feeds;
  const int64_t c = s.x_dims[1];
  g.inputs.push_back(In("xq", s.x_signed ? DType::kInt8 : DType::kUInt8, s.x_dims));
  feeds["xq"] = Random8(s.x_dims, s.x_signed, &rng);
  const float xs = 0.04f;
  g.initializers.emplace_back("xs",
                              Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{xs}));
  Tensor xzp = Random8({}, s.x_signed, &rng);
  g.initializers.emplace_back("xzp", xzp);
  const int64_t og = s.m / s.group;
  Dims wd = {c, og};
  for (int64_t k : s.kernel) wd.push_back(k);
  g.initializers.emplace_back("W", Random8(wd, s.w_signed, &rng));
  const Tensor ws = RandomFloats(s.w_per_axis ? Dims{og} : Dims{}, 0.002f, 0.01f, &rng);
  g.initializers.emplace_back("ws", ws);
  Tensor wzp(s.w_signed ? DType::kInt8 : DType::kUInt8, ws.dims());
  for (int64_t j = 0; j < wzp.num_elements(); ++j) {
    static_cast<uint8_t*>(wzp.raw_data())[j] =
        static_cast<uint8_t>(s.w_signed ? 2 * j - 3 : 120 + j);
  }
  g.initializers.emplace_back("wzp", wzp);
  const float ys = 0.08f;
  g.initializers.emplace_back("ys",
                              Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{ys}));
  Tensor yzp(s.y_signed ? DType::kInt8 : DType::kUInt8, {});
  static_cast<uint8_t*>(yzp.raw_data())[0] = static_cast<uint8_t>(s.y_signed ? 3 : 131);
  g.initializers.emplace_back("yzp", yzp);
  g.nodes.push_back(N("DequantizeLinear", {"xq", "xs", "xzp"}, {"xf"}));
  g.nodes.push_back(N("DequantizeLinear", {"W", "ws", "wzp"}, {"wf"}, {AttrInt("axis", 1)}));
  std::vector<std::string> core_in = {"xf", "wf"};
  if (s.bias) {
    Tensor bq(DType::kInt32, {s.m});
    std::uniform_int_distribution<int32_t> d(-3000, 3000);
    for (int64_t j = 0; j < s.m; ++j) bq.data<int32_t>()[j] = d(rng);
    Tensor bs(DType::kFloat32, {s.m});
    for (int64_t j = 0; j < s.m; ++j) {
      bs.data<float>()[j] = xs * ws.data<float>()[s.w_per_axis ? j % og : 0];
    }
    g.initializers.emplace_back("bias_q", bq);
    g.initializers.emplace_back("bias_s", bs);
    g.nodes.push_back(N("DequantizeLinear", {"bias_q", "bias_s"}, {"bias"}, {AttrInt("axis", 0)}));
    core_in.push_back("bias");
  }
  std::vector<Attribute> attrs = {AttrInts("kernel_shape", s.kernel),
                                  AttrInts("strides", s.strides), AttrInt("group", s.group)};
  if (!s.pads.empty()) attrs.push_back(AttrInts("pads", s.pads));
  if (!s.output_padding.empty()) attrs.push_back(AttrInts("output_padding", s.output_padding));
  g.nodes.push_back(N("ConvTranspose", core_in, {"y"}, attrs));
  g.nodes.push_back(N("QuantizeLinear", {"y", "ys", "yzp"}, {"q"}));
  g.outputs.push_back(Out("q"));

  const Runs fused = BuildAndRun(g, true, feeds);
  const Runs plain = BuildAndRun(g, false, feeds);
  if (s.group != 1) {
    CHECK_FALSE(HasOp(*fused.plan, "QLinearConvTranspose"));
    CHECK(fused.out[0].BitwiseEquals(plain.out[0]));
    return;
  }
  CHECK(HasOp(*fused.plan, "QLinearConvTranspose"));
  CHECK_FALSE(HasOp(*fused.plan, "QuantizeLinear"));
  CHECK_FALSE(HasOp(*fused.plan, "DequantizeLinear"));
  REQUIRE(fused.out[0].dims() == plain.out[0].dims());
  REQUIRE(fused.out[0].dtype() == yzp.dtype());
  int64_t over_one = 0, differ = 0;
  for (int64_t i = 0; i < fused.out[0].num_elements(); ++i) {
    const int32_t d = Int8At(fused.out[0], i) - Int8At(plain.out[0], i);
    if (std::abs(d) > 1) ++over_one;
    if (d != 0) ++differ;
  }
  CHECK(over_one == 0);
  MESSAGE("QDQ ConvTranspose fused vs unfused: " << differ << " of "
                                                 << fused.out[0].num_elements() << " differ by 1");
}

TEST_CASE("QuantFusion: QDQ ConvTranspose fuses into QLinearConvTranspose, within 1") {
  QdqConvTranspose s;
  SUBCASE("2x2 stride 2, per tensor, no bias") { CheckQdqConvTranspose(s); }
  SUBCASE("2x2 stride 2, per channel, int32 bias (ORT's layout)") {
    s.w_per_axis = true;
    s.bias = true;
    s.seed = 2;
    CheckQdqConvTranspose(s);
  }
  SUBCASE("3x3 stride 2, pads, output_padding, int8 x and y, uint8 w") {
    s.kernel = {3, 3};
    s.pads = {1, 1, 1, 1};
    s.output_padding = {1, 0};
    s.x_signed = true;
    s.y_signed = true;
    s.w_signed = false;
    s.w_per_axis = true;
    s.bias = true;
    s.seed = 3;
    CheckQdqConvTranspose(s);
  }
  SUBCASE("two groups stay unfused") {
    s.group = 2;
    s.m = 4;
    s.x_dims = {1, 4, 5, 5};
    s.seed = 4;
    CheckQdqConvTranspose(s);
  }
}

TEST_CASE("QuantFusion: QDQ patterns are left alone when unsafe") {
  Qdq s;
  s.bias_add = true;
  SUBCASE("the MatMul output has a second consumer") {
    s.core_second_use = true;
    CheckQdq(s, false);
  }
  SUBCASE("y scale is not constant") {
    s.ys_not_constant = true;
    CheckQdq(s, false);
  }
}

// `model` planned with quantized fusion on (first) and off (second).
std::pair<std::shared_ptr<const Plan>, std::shared_ptr<const Plan>> PlanFusedAndPlain(
    const Model& model) {
  OpsetMap opsets;
  for (const OpsetImport& o : model.opsets) opsets[CanonicalDomain(o.domain)] = o.version;
  PlanOptions on, off;
  off.fuse_quantized = false;
  return {Plan::Build(model.graph, opsets, on), Plan::Build(model.graph, opsets, off)};
}

// The outputs of `fused` and of `plain` on the same feeds (2 threads); as many of each.
std::pair<std::vector<Tensor>, std::vector<Tensor>> RunBoth(
    const std::shared_ptr<const Plan>& fused, const std::shared_ptr<const Plan>& plain,
    const std::map<std::string, Tensor>& feeds) {
  auto pool = MakeThreadPool(2);
  Executor ef(fused, pool.get()), eu(plain, pool.get());
  std::pair<std::vector<Tensor>, std::vector<Tensor>> y{ef.Run(feeds), eu.Run(feeds)};
  REQUIRE(y.first.size() == y.second.size());
  return y;
}

TEST_CASE("QuantFusion: the built-in segmentation-int8 model fuses every ConvInteger, bit-exactly") {
  for (bool per_channel : {true, false}) {
    CAPTURE(per_channel);
    const Model model = builtin::MakeSegmentationModel(32, true, per_channel);
    const auto [fused, plain] = PlanFusedAndPlain(model);
    int conv_integer = 0, fused_conv = 0;
    for (const PlanStep& st : plain->steps()) conv_integer += st.node.op_type == "ConvInteger";
    for (const PlanStep& st : fused->steps()) fused_conv += st.node.op_type == "DynamicQuantizeConv";
    CHECK(conv_integer > 0);
    CHECK(fused_conv == conv_integer);
    CHECK_FALSE(HasOp(*fused, "ConvInteger"));
    std::map<std::string, Tensor> feeds;
    std::mt19937 rng(7);
    for (const ValueInfo& in : plain->inputs()) {
      Dims dims;
      for (const Dim& d : in.type.dims) dims.push_back(d.known() ? d.value : 1);
      feeds[in.name] = RandomFloats(dims, 0.0f, 1.0f, &rng);
    }
    const auto [yf, yu] = RunBoth(fused, plain, feeds);
    for (size_t i = 0; i < yf.size(); ++i) CHECK(yf[i].BitwiseEquals(yu[i]));
  }
}

// Models written by the converters in ONNX Runtime's layouts (simplecpp/convert/quantize.h).
void CompareConverted(const Model& model, const char* fused_op, bool bit_exact, float tol) {
  const auto [fused, plain] = PlanFusedAndPlain(model);
  CHECK(HasOp(*fused, fused_op));
  std::map<std::string, Tensor> feeds;
  std::mt19937 rng(9);
  for (const ValueInfo& in : plain->inputs()) {
    Dims dims;
    for (const Dim& d : in.type.dims) dims.push_back(d.known() ? d.value : 2);
    if (in.type.dtype == DType::kFloat32) {
      feeds[in.name] = RandomFloats(dims, -1.0f, 1.0f, &rng);
    } else {
      feeds[in.name] = Tensor(in.type.dtype, dims);  // ids / masks: zeros
    }
  }
  const auto [yf, yu] = RunBoth(fused, plain, feeds);
  for (size_t i = 0; i < yf.size(); ++i) {
    if (bit_exact) {
      CHECK(yf[i].BitwiseEquals(yu[i]));
    } else if (yf[i].dtype() == DType::kFloat32) {
      float diff = 0.0f;
      for (int64_t j = 0; j < yf[i].num_elements(); ++j)
        diff = std::max(diff, std::fabs(yf[i].data<float>()[j] - yu[i].data<float>()[j]));
      MESSAGE("fused vs unfused max abs diff " << diff);
      CHECK(diff <= tol);
    }
  }
}

TEST_CASE("QuantFusion: models from the dynamic and QDQ converters") {
  SUBCASE("dynamic mlp: bit-exact") {
    CompareConverted(convert::QuantizeDynamic(builtin::MakeBuiltinModel("mlp")),
                     "DynamicQuantizeMatMul", true, 0.0f);
  }
  SUBCASE("dynamic per-channel transformer (shared DynamicQuantizeLinear): bit-exact") {
    convert::DynamicOptions o;
    o.per_channel = true;
    const Model m = convert::QuantizeDynamic(builtin::MakeBuiltinModel("transformer"), o);
    CompareConverted(m, "DynamicQuantizeMatMul", true, 0.0f);
    // The Q, K and V projections share one DynamicQuantizeLinear, which stays and runs once:
    // they read its result through MatMulIntegerToFloat.
    CompareConverted(m, "MatMulIntegerToFloat", true, 0.0f);
    CompareConverted(m, "DynamicQuantizeLinear", true, 0.0f);
  }
  SUBCASE("QDQ cnn: QLinearConv, within quantization noise") {
    CompareConverted(convert::QuantizeQdq(builtin::MakeBuiltinModel("cnn")), "QLinearConv", false,
                     0.05f);
  }
}

// ---------------------------------------------------------------------------------------------
// Patterns 5 and 6: DequantizeLinear -> MaxPool / data op / GlobalAveragePool -> QuantizeLinear

struct QdqAround {
  bool is_signed = false;
  float s = 0.037f;          // scale of both sides (pattern 5)
  float ys = 0.037f;         // the QuantizeLinear's scale
  int32_t zp = 131, yzp = 131;  // zero points (uint8; int8 subtracts 128)
  bool indices = false;      // MaxPool with its Indices output: not fused
  bool pooled_is_output = false;  // the MaxPool output read twice: not fused
  bool average = false;      // GlobalAveragePool instead of MaxPool -> Flatten
  int64_t opset = 19;
  uint32_t seed = 5;
};

Tensor Scalar8(int32_t v, bool is_signed) {
  Tensor t(is_signed ? DType::kInt8 : DType::kUInt8, {});
  static_cast<uint8_t*>(t.raw_data())[0] = static_cast<uint8_t>(v);
  return t;
}

// xq -> DQ -> MaxPool 2x2/2 (or GlobalAveragePool) -> Q -> DQ -> Flatten -> Q -> y, fused and not.
void CheckQdqAround(const QdqAround& c, bool expect_fused) {
  CAPTURE(c.seed);
  std::mt19937 rng(c.seed);
  const int32_t shift = c.is_signed ? -128 : 0;
  Graph g;
  const Dims xd = {2, 3, 9, 10};
  g.inputs.push_back(In("xq", c.is_signed ? DType::kInt8 : DType::kUInt8, xd));
  Tensor x = Random8(xd, c.is_signed, &rng);
  // The extremes of the type.
  static_cast<uint8_t*>(x.raw_data())[0] = c.is_signed ? 0x80 : 0;
  static_cast<uint8_t*>(x.raw_data())[1] = c.is_signed ? 0x7f : 255;
  g.initializers.emplace_back("s", Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{c.s}));
  g.initializers.emplace_back("ys", Tensor::FromVector(DType::kFloat32, {}, std::vector<float>{c.ys}));
  g.initializers.emplace_back("zp", Scalar8(c.zp + shift, c.is_signed));
  g.initializers.emplace_back("yzp", Scalar8(c.yzp + shift, c.is_signed));
  g.nodes.push_back(N("DequantizeLinear", {"xq", "s", "zp"}, {"xf"}));
  if (c.average) {
    g.nodes.push_back(N("GlobalAveragePool", {"xf"}, {"pooled"}));
  } else {
    std::vector<std::string> outs = {"pooled"};
    if (c.indices) outs.push_back("idx");
    g.nodes.push_back(N("MaxPool", {"xf"}, outs,
                        {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})}));
  }
  g.nodes.push_back(N("QuantizeLinear", {"pooled", "ys", "yzp"}, {"pq"}));
  g.nodes.push_back(N("DequantizeLinear", {"pq", "ys", "yzp"}, {"pf"}));
  g.nodes.push_back(N("Flatten", {"pf"}, {"flat"}, {AttrInt("axis", 1)}));
  g.nodes.push_back(N("QuantizeLinear", {"flat", "ys", "yzp"}, {"y"}));
  g.outputs.push_back(Out("y"));
  if (c.pooled_is_output) g.outputs.push_back(Out("pooled"));
  if (c.indices) g.outputs.push_back(Out("idx"));
  const OpsetMap opsets{{"", c.opset}};
  PlanOptions on, off;
  off.fuse_quantized = false;
  auto fused = Plan::Build(g, opsets, on);
  auto plain = Plan::Build(g, opsets, off);
  auto pool = MakeThreadPool(2);
  Executor ef(fused, pool.get()), eu(plain, pool.get());
  const std::map<std::string, Tensor> feeds{{"xq", x}};
  const std::vector<Tensor> yf = ef.Run(feeds), yu = eu.Run(feeds);
  CHECK(HasOp(*fused.get(), "DequantizeLinear") == !expect_fused);
  CHECK_FALSE(HasOp(*plain.get(), c.average ? "QLinearGlobalAveragePool" : "DummyNone"));
  REQUIRE(yf.size() == yu.size());
  if (!c.average || !expect_fused) {
    for (size_t i = 0; i < yf.size(); ++i) CHECK(yf[i].BitwiseEquals(yu[i]));  // exact
    return;
  }
  CHECK(HasOp(*fused.get(), "QLinearGlobalAveragePool"));
  // Pattern 6: within 1 of the unfused graph, and equal to the mean of the integers requantized.
  const int64_t planes = xd[0] * xd[1], size = xd[2] * xd[3];
  REQUIRE(yf[0].num_elements() == planes);
  for (int64_t p = 0; p < planes; ++p) {
    int64_t sum = 0;
    for (int64_t i = 0; i < size; ++i) sum += Int8At(x, p * size + i) - (c.zp + shift);
    const double mean = double(sum) * double(c.s) / double(size);
    const double q = std::nearbyint(mean / double(c.ys)) + (c.yzp + shift);
    const int32_t expect = static_cast<int32_t>(
        std::min<double>(c.is_signed ? 127 : 255, std::max<double>(c.is_signed ? -128 : 0, q)));
    CHECK(Int8At(yf[0], p) == expect);
    CHECK(std::abs(Int8At(yf[0], p) - Int8At(yu[0], p)) <= 1);
  }
}

TEST_CASE("QuantFusion: QDQ around MaxPool and Flatten runs on the integers, exactly") {
  QdqAround c;
  SUBCASE("uint8") { CheckQdqAround(c, true); }
  SUBCASE("int8") {
    c.is_signed = true;
    c.seed = 6;
    CheckQdqAround(c, true);
  }
  SUBCASE("a tiny scale (1e-30)") {
    c.s = c.ys = 1e-30f;
    CheckQdqAround(c, true);
  }
  // Different parameters on the two sides: not pattern 5, but the lookup fusion's table
  // requantizes the bytes and the pool runs on its result (graph/passes/quant_lookup_fusion.h).
  SUBCASE("the scales differ: a table, then the pool on bytes") {
    c.ys = 0.05f;
    CheckQdqAround(c, true);
  }
  SUBCASE("the zero points differ: a table, then the pool on bytes") {
    c.yzp = 130;
    CheckQdqAround(c, true);
  }
  SUBCASE("left alone: MaxPool's Indices output") {
    c.indices = true;
    CheckQdqAround(c, false);
  }
  SUBCASE("left alone: the MaxPool output is also a graph output") {
    c.pooled_is_output = true;
    CheckQdqAround(c, false);
  }
  SUBCASE("left alone: opset 11 has no 8-bit MaxPool") {
    c.opset = 11;
    CheckQdqAround(c, false);
  }
}

TEST_CASE("QuantFusion: QDQ GlobalAveragePool becomes QLinearGlobalAveragePool, within 1") {
  QdqAround c;
  c.average = true;
  c.ys = 0.011f;
  c.yzp = 100;
  SUBCASE("uint8") { CheckQdqAround(c, true); }
  SUBCASE("int8") {
    c.is_signed = true;
    c.seed = 7;
    CheckQdqAround(c, true);
  }
}

TEST_CASE("QuantFusion: the pass reports what it fused and adds the domains it needs") {
  DynGraph d = MakeDynMatMul(DynMatMul{});
  Graph out;
  std::map<std::string, int64_t> opsets;
  passes::QuantFusionStats stats;
  REQUIRE(passes::FuseQuantized(d.g, {{"", 19}}, &out, &opsets, &stats));
  CHECK(stats.dynamic_matmul == 1);
  CHECK(stats.total() == 1);
  CHECK(opsets.count("com.microsoft") == 1);
  CHECK(out.nodes.size() == 1);
  // Nothing to fuse: false, outputs untouched.
  Graph plain;
  plain.inputs.push_back(In("x", DType::kFloat32, {2}));
  plain.nodes.push_back(N("Relu", {"x"}, {"y"}));
  plain.outputs.push_back(Out("y"));
  Graph untouched;
  CHECK_FALSE(passes::FuseQuantized(plain, {{"", 19}}, &untouched, &opsets, &stats));
  CHECK(untouched.nodes.empty());
}

}  // namespace
}  // namespace simplecpp::graph
