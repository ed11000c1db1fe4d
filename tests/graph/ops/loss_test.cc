// Tests for graph/ops/loss.cc: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against a
// straightforward scalar reference written here (double arithmetic, loops over n, d1..dk).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"
#include "kernels/float16/float16.h"

namespace simplecpp {
namespace {

using tensor_test::ErrorCodeOf;
using tensor_test::ErrorMessageOf;
using testing::AttrInt;
using testing::AttrString;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RandomF32;
using testing::RunNode;
using testing::RunNodeOptions;

RunNodeOptions Opts(int64_t opset, int num_outputs = 1) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  return o;
}

constexpr int kRuntime = static_cast<int>(ErrorCode::kRuntime);
constexpr int kInvalidArgument = static_cast<int>(ErrorCode::kInvalidArgument);

struct RefLoss {
  std::vector<double> loss;      // reduction none: [N * D]; else one value
  std::vector<double> log_prob;  // SCE only: [N * C * D]
};

// x is [N, C, D] row-major, t is [N, D]. has_ii/ii as the attribute; w empty = no weight.
RefLoss Reference(const std::vector<float>& x, const std::vector<int64_t>& t,
                  const std::vector<float>& w, int64_t n, int64_t c, int64_t d,
                  const std::string& reduction, bool has_ii, int64_t ii, bool softmax) {
  RefLoss r;
  std::vector<double> lp(x.begin(), x.end());
  if (softmax) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        double mx = -INFINITY;
        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, double(x[(i * c + k) * d + j]));
        double s = 0;
        for (int64_t k = 0; k < c; ++k) s += std::exp(double(x[(i * c + k) * d + j]) - mx);
        for (int64_t k = 0; k < c; ++k) {
          lp[(i * c + k) * d + j] = double(x[(i * c + k) * d + j]) - mx - std::log(s);
        }
      }
    }
    r.log_prob = lp;
  }
  std::vector<double> loss(static_cast<size_t>(n * d), 0.0);
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t cls = t[i * d + j];
      if (has_ii && cls == ii) continue;
      const double wc = w.empty() ? 1.0 : w[cls];
      loss[i * d + j] = -lp[(i * c + cls) * d + j] * wc;
      sum += loss[i * d + j];
      wsum += wc;
    }
  }
  if (reduction == "none") {
    r.loss = loss;
  } else if (reduction == "sum") {
    r.loss = {sum};
  } else {
    r.loss = {sum / wsum};
  }
  return r;
}

void CheckClose(const Tensor& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    const double g = got.dtype() == DType::kFloat64 ? got.data<double>()[i] : got.data<float>()[i];
    if (std::isnan(want[i])) {
      CHECK(std::isnan(g));
    } else {
      CHECK(g == doctest::Approx(want[i]).epsilon(tol));
    }
  }
}

// Random targets in [0, C), with every third sample replaced by `ii` when has_ii.
std::vector<int64_t> Targets(int64_t count, int64_t c, bool has_ii, int64_t ii, uint32_t seed) {
  std::vector<int64_t> t(static_cast<size_t>(count));
  uint32_t s = seed;
  for (int64_t i = 0; i < count; ++i) {
    s = s * 1664525u + 1013904223u;
    t[i] = static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(c));
    if (has_ii && i % 3 == 1) t[i] = ii;
  }
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: shapes, reductions, weights, "
          "ignore_index") {
  const std::vector<Dims> shapes = {{3, 5}, {2, 4, 3}, {2, 3, 2, 4}, {1, 2, 1, 2, 3, 1}};
  for (const bool softmax : {false, true}) {
    const std::string op = softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
    for (const Dims& xd : shapes) {
      const int64_t n = xd[0], c = xd[1];
      int64_t d = 1;
      for (size_t i = 2; i < xd.size(); ++i) d *= xd[i];
      Dims td = {n};
      td.insert(td.end(), xd.begin() + 2, xd.end());
      const Tensor x = RandomF32(xd, 7, -3.0f, 1.0f);
      const std::vector<float> w = Values(RandomF32({c}, 9, 0.1f, 2.0f));
      for (const std::string reduction : {"none", "sum", "mean"}) {
        for (const bool weighted : {false, true}) {
          for (const int64_t ii_mode : {0, 1, 2, 3}) {  // none, inside [0,C), negative, >= C
            const bool has_ii = ii_mode != 0;
            const int64_t ii = ii_mode == 1 ? 1 : ii_mode == 2 ? -5 : c + 7;
            CAPTURE(op);
            CAPTURE(DimsToString(xd));
            CAPTURE(reduction);
            CAPTURE(weighted);
            CAPTURE(ii_mode);
            const std::vector<int64_t> tv = Targets(n * d, c, has_ii, ii, 3);
            std::vector<Tensor> inputs = {x, I64(td, tv)};
            if (weighted) inputs.push_back(F32({c}, w));
            std::vector<graph::Attribute> attrs = {AttrString("reduction", reduction)};
            if (has_ii) attrs.push_back(AttrInt("ignore_index", ii));
            const RefLoss ref = Reference(Values(x), tv, weighted ? w : std::vector<float>{}, n, c,
                                          d, reduction, has_ii, ii, softmax);
            RunNodeOptions o;
            o.opset = 22;
            o.num_outputs = softmax ? 2 : 1;
            const auto out = RunNode(op, inputs, attrs, o);
            CHECK(out[0].dims() == (reduction == "none" ? td : Dims{}));
            CheckClose(out[0], ref.loss);
            if (softmax) {
              CHECK(out[1].dims() == xd);
              CheckClose(out[1], ref.log_prob);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("NegativeLogLikelihoodLoss: hand-computed values, int32 targets, default reduction") {
  // x [2, 3]: loss = -x[n, t[n]] * w[t[n]].
  const Tensor x = F32({2, 3}, {-1, -2, -3, -4, -5, -6});
  const Tensor w = F32({3}, {0.5f, 1.0f, 2.0f});
  const auto none = RunNode("NegativeLogLikelihoodLoss", {x, I32({2}, {2, 0}), w},
                            {AttrString("reduction", "none")}, Opts(13));
  CHECK(Values(none[0]) == std::vector<float>{6.0f, 2.0f});
  // Default reduction is mean: (6 + 2) / (2 + 0.5).
  const auto mean = RunNode("NegativeLogLikelihoodLoss", {x, I32({2}, {2, 0}), w}, {}, Opts(12));
  CHECK(mean[0].dims() == Dims{});
  CHECK(mean[0].data<float>()[0] == doctest::Approx(3.2));
  // Ignored sample contributes neither loss nor weight: 6 / 2.
  const auto ign = RunNode("NegativeLogLikelihoodLoss", {x, I64({2}, {2, -1}), w},
                           {AttrInt("ignore_index", -1)}, Opts(22));
  CHECK(ign[0].data<float>()[0] == doctest::Approx(3.0));
  // All ignored: mean is 0/0 = NaN, sum is 0.
  const auto all = RunNode("NegativeLogLikelihoodLoss", {x, I64({2}, {-1, -1})},
                           {AttrInt("ignore_index", -1)}, Opts(22));
  CHECK(std::isnan(all[0].data<float>()[0]));
  const auto all_sum = RunNode("NegativeLogLikelihoodLoss", {x, I64({2}, {-1, -1})},
                               {AttrInt("ignore_index", -1), AttrString("reduction", "sum")},
                               Opts(22));
  CHECK(all_sum[0].data<float>()[0] == 0.0f);
}

TEST_CASE("Loss ops: empty batch") {
  const Tensor x = F32({0, 3, 2}, {});
  const Tensor t = I64({0, 2}, {});
  CHECK(RunNode("NegativeLogLikelihoodLoss", {x, t}, {AttrString("reduction", "none")})[0].dims() ==
        Dims{0, 2});
  CHECK(RunNode("NegativeLogLikelihoodLoss", {x, t}, {AttrString("reduction", "sum")})[0]
            .data<float>()[0] == 0.0f);
  CHECK(std::isnan(RunNode("NegativeLogLikelihoodLoss", {x, t})[0].data<float>()[0]));
  const auto sce = RunNode("SoftmaxCrossEntropyLoss", {x, t}, {AttrString("reduction", "sum")},
                           Opts(18, 2));
  CHECK(sce[0].data<float>()[0] == 0.0f);
  CHECK(sce[1].dims() == Dims{0, 3, 2});
}

TEST_CASE("Loss ops: out-of-range targets and bad shapes are errors naming the node") {
  const Tensor x = F32({2, 3}, {-1, -2, -3, -4, -5, -6});
  for (const std::string op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    CAPTURE(op);
    for (const int64_t bad : std::vector<int64_t>{3, -1, 1000000000000LL}) {
      const auto run = [&] { RunNode(op, {x, I64({2}, {0, bad})}); };
      CHECK(ErrorCodeOf(run) == kRuntime);
      const std::string msg = ErrorMessageOf(run);
      CHECK(msg.find(op) != std::string::npos);
      CHECK(msg.find("outside the class range") != std::string::npos);
    }
    // An ignore_index that does not match the bad value does not help.
    CHECK(ErrorCodeOf([&] { RunNode(op, {x, I64({2}, {0, 5})}, {AttrInt("ignore_index", 4)}); }) ==
          kRuntime);
    // Shape errors.
    CHECK(ErrorCodeOf([&] { RunNode(op, {x, I64({3}, {0, 1, 2})}); }) == kInvalidArgument);
    CHECK(ErrorCodeOf([&] { RunNode(op, {x, I64({2, 1}, {0, 1})}); }) == kInvalidArgument);
    CHECK(ErrorCodeOf([&] { RunNode(op, {F32({3}, {1, 2, 3}), I64({3}, {0, 1, 2})}); }) ==
          kInvalidArgument);
    CHECK(ErrorCodeOf([&] { RunNode(op, {x, I64({2}, {0, 1}), F32({2}, {1, 1})}); }) ==
          kInvalidArgument);
    CHECK(ErrorCodeOf([&] { RunNode(op, {x, I64({2}, {0, 1})}, {AttrString("reduction", "max")}); }) != 0);
  }
}

TEST_CASE("Loss ops: float64, float16, bfloat16") {
  const Dims xd = {3, 4, 5};
  const Tensor x = RandomF32(xd, 21, -2.0f, 0.5f);
  const std::vector<int64_t> tv = Targets(15, 4, true, 2, 5);
  const std::vector<float> w = {0.5f, 1.5f, 1.0f, 2.0f};
  for (const bool softmax : {false, true}) {
    const std::string op = softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
    CAPTURE(op);
    RunNodeOptions o;
    o.opset = 13;
    o.num_outputs = softmax ? 2 : 1;
    const std::vector<graph::Attribute> attrs = {AttrInt("ignore_index", 2),
                                                 AttrString("reduction", "none")};
    // Double.
    Tensor xd64(DType::kFloat64, xd), wd64(DType::kFloat64, {4});
    for (int64_t i = 0; i < x.num_elements(); ++i) xd64.data<double>()[i] = x.data<float>()[i];
    for (int i = 0; i < 4; ++i) wd64.data<double>()[i] = w[i];
    const RefLoss ref = Reference(Values(x), tv, w, 3, 4, 5, "none", true, 2, softmax);
    const auto o64 = RunNode(op, {xd64, I64({3, 5}, tv), wd64}, attrs, o);
    CHECK(o64[0].dtype() == DType::kFloat64);
    CheckClose(o64[0], ref.loss, 1e-12);
    // 16-bit kinds: inputs rounded, float32 compute, one rounding on output.
    for (const DType dt : {DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(DTypeName(dt));
      const auto kind = dt == DType::kFloat16 ? kernels::Float16Kind::kHalf
                                              : kernels::Float16Kind::kBFloat16;
      Tensor x16(dt, xd), w16(dt, {4});
      std::vector<float> xr(x.num_elements()), wr(4);
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        x16.data<uint16_t>()[i] = kernels::Narrow16One(kind, x.data<float>()[i]);
        xr[i] = kernels::Widen16One(kind, x16.data<uint16_t>()[i]);
      }
      for (int i = 0; i < 4; ++i) {
        w16.data<uint16_t>()[i] = kernels::Narrow16One(kind, w[i]);
        wr[i] = kernels::Widen16One(kind, w16.data<uint16_t>()[i]);
      }
      const RefLoss r16 = Reference(xr, tv, wr, 3, 4, 5, "none", true, 2, softmax);
      const auto out = RunNode(op, {x16, I64({3, 5}, tv), w16}, attrs, o);
      REQUIRE(out[0].dtype() == dt);
      const double tol = dt == DType::kFloat16 ? 1e-3 : 8e-3;
      for (size_t i = 0; i < r16.loss.size(); ++i) {
        CAPTURE(i);
        CHECK(kernels::Widen16One(kind, out[0].data<uint16_t>()[i]) ==
              doctest::Approx(r16.loss[i]).epsilon(tol));
      }
      if (softmax) {
        for (size_t i = 0; i < r16.log_prob.size(); ++i) {
          CHECK(kernels::Widen16One(kind, out[1].data<uint16_t>()[i]) ==
                doctest::Approx(r16.log_prob[i]).epsilon(tol));
        }
      }
    }
  }
  // bfloat16 is only allowed from opset 13.
  Tensor b16(DType::kBFloat16, {2, 3});
  CHECK(ErrorCodeOf([&] {
          RunNode("NegativeLogLikelihoodLoss", {b16, I64({2}, {0, 1})}, {}, Opts(12));
        }) == static_cast<int>(ErrorCode::kUnsupported));
}

TEST_CASE("Loss ops: results do not depend on the thread count") {
  const Dims xd = {8, 10, 33};
  const Tensor x = RandomF32(xd, 4, -4.0f, 4.0f);
  const Tensor t = I64({8, 33}, Targets(8 * 33, 10, true, 0, 11));
  for (const std::string op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    for (const std::string red : {"mean", "sum", "none"}) {
      RunNodeOptions one, four;
      four.threads = 4;
      const std::vector<graph::Attribute> attrs = {AttrString("reduction", red),
                                                   AttrInt("ignore_index", 0)};
      const Tensor a = RunNode(op, {x, t}, attrs, one)[0];
      const Tensor b = RunNode(op, {x, t}, attrs, four)[0];
      CHECK(a.BitwiseEquals(b));
    }
  }
}

}  // namespace
}  // namespace simplecpp
