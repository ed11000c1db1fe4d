// Tests for graph/ops/msft_normalization.cc through the executor: SimplifiedLayerNormalization
// (ONNX and com.microsoft domains), SkipLayerNormalization and SkipSimplifiedLayerNormalization
// against float64 references written from the operator definitions (hidden sizes 1, 7, 33, 1000;
// 2-D and 3-D inputs; skip broadcast over the batch; with and without each optional input and
// output; constant and run-time parameters; several threads). float32 tolerance:
// |got - ref| <= 1e-5 * max(1, |ref|). float16 / bfloat16: the float32 result rounded once
// (tests/graph/ops/float16_compare.h, at most one 16-bit ulp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/float16_compare.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

constexpr double kTol = 1e-5;

RunNodeOptions Ms(int num_outputs = 1, std::vector<int> constant_inputs = {}, int threads = 1,
                  std::vector<int> omitted = {}) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "com.microsoft";
  o.num_outputs = num_outputs;
  o.constant_inputs = std::move(constant_inputs);
  o.threads = threads;
  o.omitted_outputs = std::move(omitted);
  return o;
}

void CheckClose(const Tensor& got, const std::vector<double>& ref, const char* what) {
  REQUIRE(got.dtype() == DType::kFloat32);
  REQUIRE(got.num_elements() == static_cast<int64_t>(ref.size()));
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = got.data<float>()[i];
    if (!(std::fabs(g - ref[i]) <= kTol * std::max(1.0, std::fabs(ref[i]))) && bad++ < 3) {
      CHECK_MESSAGE(false, what << "[" << i << "] = " << g << ", reference " << ref[i]);
    }
  }
  CHECK(bad == 0);
}

// Reference outputs of the skip ops: y, mean, inv_std_var, s (per row of h).
struct SkipRef {
  std::vector<double> y, mean, inv, sum;
};

SkipRef SkipReference(bool simplified, const Tensor& x, const Tensor& skip, const Tensor& gamma,
                      const Tensor* beta, const Tensor* bias, double eps) {
  const int64_t h = x.dims().back();
  const int64_t rows = x.num_elements() / h;
  const int64_t skip_rows = skip.num_elements() / h;
  SkipRef r;
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<double> s(static_cast<size_t>(h));
    double mean = 0.0;
    for (int64_t j = 0; j < h; ++j) {
      s[j] = static_cast<double>(x.data<float>()[row * h + j]) +
             skip.data<float>()[(row % skip_rows) * h + j] + (bias ? bias->data<float>()[j] : 0.0f);
      mean += s[j];
    }
    mean /= static_cast<double>(h);
    double var = 0.0;
    for (int64_t j = 0; j < h; ++j) {
      const double d = simplified ? s[j] : s[j] - mean;
      var += d * d;
    }
    var /= static_cast<double>(h);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < h; ++j) {
      const double c = simplified ? s[j] : s[j] - mean;
      r.y.push_back(c * inv * gamma.data<float>()[j] + (beta ? beta->data<float>()[j] : 0.0f));
      r.sum.push_back(static_cast<float>(s[j]));  // the output stores s rounded to float32
    }
    r.mean.push_back(mean);
    r.inv.push_back(inv);
  }
  return r;
}

std::vector<double> RmsReference(const Tensor& x, const Tensor& scale, int64_t n, double eps,
                                 std::vector<double>* inv_out) {
  std::vector<double> y;
  const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int64_t j = 0; j < n; ++j)
      ss += std::pow(static_cast<double>(x.data<float>()[r * n + j]), 2);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j)
      y.push_back(x.data<float>()[r * n + j] * inv * scale.data<float>()[j]);
    if (inv_out) inv_out->push_back(inv);
  }
  return y;
}

void CheckErrorNames(const std::function<void()>& fn, const std::string& op,
                     const std::string& what) {
  try {
    fn();
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.find(op + "_under_test") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
  }
}

TEST_CASE("SkipLayerNormalization: float32 matches a float64 reference") {
  uint32_t seed = 100;
  const float eps = 1e-5f;
  for (int64_t h : {1, 7, 33, 1000}) {
    for (int shape = 0; shape < 4; ++shape) {
      // 3-D with full skip, 3-D with [1,S,H] skip, 3-D with [S,H] skip, 2-D tokens.
      const Dims xd = shape == 3 ? Dims{5, h} : Dims{2, 3, h};
      const Dims sd = shape == 1 ? Dims{1, 3, h} : shape == 2 ? Dims{3, h} : xd;
      const Tensor x = RandomF32(xd, seed++, -2.0f, 2.0f);
      const Tensor skip = RandomF32(sd, seed++);
      const Tensor gamma = RandomF32({h}, seed++, 0.5f, 1.5f);
      const Tensor beta = RandomF32({h}, seed++);
      const Tensor bias = RandomF32({h}, seed++);
      INFO("h " << h << " shape " << shape);
      for (int variant = 0; variant < 4; ++variant) {
        const bool with_beta = variant & 1, with_bias = variant & 2;
        std::vector<Tensor> in = {x, skip, gamma, with_beta ? beta : Tensor()};
        if (with_bias) in.push_back(bias);
        const SkipRef ref = SkipReference(false, x, skip, gamma, with_beta ? &beta : nullptr,
                                          with_bias ? &bias : nullptr, eps);
        const auto out =
            RunNode("SkipLayerNormalization", in, {AttrFloat("epsilon", eps)},
                    Ms(4, variant == 3 ? std::vector<int>{2, 3, 4} : std::vector<int>{},
                       variant == 2 ? 3 : 1));
        REQUIRE(out.size() == 4);
        CHECK(out[0].dims() == xd);
        Dims stat = xd;
        stat.back() = 1;
        CHECK(out[1].dims() == stat);
        CHECK(out[2].dims() == stat);
        CHECK(out[3].dims() == xd);
        CheckClose(out[0], ref.y, "output");
        CheckClose(out[1], ref.mean, "mean");
        CheckClose(out[2], ref.inv, "inv_std_var");
        CheckClose(out[3], ref.sum, "input_skip_bias_sum");
        // Only the first output requested.
        const auto y = RunNode("SkipLayerNormalization", in, {AttrFloat("epsilon", eps)}, Ms(1));
        CheckClose(y[0], ref.y, "output alone");
      }
    }
  }
}

TEST_CASE("SkipSimplifiedLayerNormalization: float32 matches a float64 reference") {
  uint32_t seed = 200;
  for (int64_t h : {1, 7, 33, 1000}) {
    for (int shape = 0; shape < 3; ++shape) {
      const Dims xd = shape == 2 ? Dims{4, h} : Dims{3, 2, h};
      const Dims sd = shape == 1 ? Dims{2, h} : xd;
      const Tensor x = RandomF32(xd, seed++, -2.0f, 2.0f);
      const Tensor skip = RandomF32(sd, seed++);
      const Tensor gamma = RandomF32({h}, seed++, 0.5f, 1.5f);
      const Tensor bias = RandomF32({h}, seed++);
      INFO("h " << h << " shape " << shape);
      for (bool with_bias : {false, true}) {
        // Default epsilon (1e-12) and an explicit one.
        for (float eps : {1e-12f, 1e-6f}) {
          std::vector<graph::Attribute> attrs;
          if (eps != 1e-12f) attrs.push_back(AttrFloat("epsilon", eps));
          std::vector<Tensor> in = {x, skip, gamma};
          if (with_bias) in.push_back(bias);
          const SkipRef ref =
              SkipReference(true, x, skip, gamma, nullptr, with_bias ? &bias : nullptr, eps);
          const auto out =
              RunNode("SkipSimplifiedLayerNormalization", in, attrs,
                      Ms(4, with_bias ? std::vector<int>{2} : std::vector<int>{}, 2, {1}));
          REQUIRE(out.size() == 3);  // output, inv_std_var, input_skip_bias_sum
          CheckClose(out[0], ref.y, "output");
          CheckClose(out[1], ref.inv, "inv_std_var");
          CheckClose(out[2], ref.sum, "input_skip_bias_sum");
          const auto y = RunNode("SkipSimplifiedLayerNormalization", in, attrs, Ms(1));
          CheckClose(y[0], ref.y, "output alone");
        }
      }
    }
  }
}

TEST_CASE("SimplifiedLayerNormalization: both domains, axis, inv_std_var") {
  uint32_t seed = 300;
  for (int64_t h : {1, 7, 33, 1000}) {
    const Tensor x = RandomF32({2, 3, h}, seed++, -3.0f, 3.0f);
    const Tensor scale = RandomF32({h}, seed++, 0.5f, 1.5f);
    std::vector<double> inv;
    const std::vector<double> ref = RmsReference(x, scale, h, 1e-5, &inv);
    INFO("h " << h);
    for (const char* domain : {"", "com.microsoft"}) {
      RunNodeOptions o = Ms(2, {1}, 3);
      o.domain = domain;
      if (o.domain.empty()) o.opset = 18;
      const auto out = RunNode("SimplifiedLayerNormalization", {x, scale}, {}, o);
      CheckClose(out[0], ref, "Y");
      CHECK(out[1].dims() == Dims{2, 3, 1});
      CheckClose(out[1], inv, "inv_std_var");
    }
  }
  // axis = 1 over [3, h] with a run-time scale of shape [3, 5].
  const Tensor x = RandomF32({2, 3, 5}, 1);
  const Tensor scale = RandomF32({3, 5}, 2);
  std::vector<double> inv;
  const std::vector<double> ref = RmsReference(x, scale, 15, 1e-3, &inv);
  const auto out = RunNode("SimplifiedLayerNormalization", {x, scale},
                           {AttrInt("axis", 1), AttrFloat("epsilon", 1e-3f)}, Ms(2));
  CheckClose(out[0], ref, "Y axis 1");
  CHECK(out[1].dims() == Dims{2, 1, 1});
  CheckClose(out[1], inv, "inv_std_var axis 1");
}

TEST_CASE("msft normalization: float16 and bfloat16 round the float32 result once") {
  for (int64_t h : {7, 33, 1000}) {
    const Tensor x = RandomF32({2, 3, h}, 10, -2.0f, 2.0f);
    const Tensor skip = RandomF32({3, h}, 11);
    const Tensor gamma = RandomF32({h}, 12, 0.5f, 1.5f);
    const Tensor beta = RandomF32({h}, 13);
    const Tensor bias = RandomF32({h}, 14);
    f16::Check16Both("SkipLayerNormalization", {x, skip, gamma, beta, bias},
                     {AttrFloat("epsilon", 1e-5f)}, Ms(1, {2, 3}));
    f16::Check16Both("SkipLayerNormalization", {x, skip, gamma}, {}, Ms());
    f16::Check16Both("SkipSimplifiedLayerNormalization", {x, skip, gamma, bias}, {}, Ms(1, {2}));
    f16::Check16Both("SkipSimplifiedLayerNormalization", {x, x, gamma}, {}, Ms());
    f16::Check16Both("SimplifiedLayerNormalization", {x, gamma}, {}, Ms(1, {1}));
  }
}

TEST_CASE("msft normalization: 16-bit input_skip_bias_sum is the float32 sum rounded once") {
  const Tensor x = RandomF32({2, 3, 33}, 20, -2.0f, 2.0f);
  const Tensor skip = RandomF32({2, 3, 33}, 21);
  const Tensor gamma = RandomF32({33}, 22, 0.5f, 1.5f);
  const Tensor bias = RandomF32({33}, 23);
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x16 = f16::To16(x, dt), s16 = f16::To16(skip, dt), b16 = f16::To16(bias, dt);
    const auto out = RunNode("SkipSimplifiedLayerNormalization",
                             {x16, s16, f16::To16(gamma, dt), b16}, {}, Ms(4, {}, 1, {1, 2}));
    REQUIRE(out.size() == 2);
    REQUIRE(out[1].dtype() == dt);
    const Tensor xs = f16::To32(x16), ss = f16::To32(s16), bs = f16::To32(b16);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const float want = xs.data<float>()[i] + ss.data<float>()[i] + bs.data<float>()[i % 33];
      CHECK(out[1].data<uint16_t>()[i] == kernels::Narrow16One(f16::KindOf(dt), want));
    }
  }
}

TEST_CASE("msft normalization: errors name node, op and what is wrong") {
  const Tensor x = RandomF32({2, 3, 8}, 1);
  const Tensor g = RandomF32({8}, 2);
  const char* skip_ln = "SkipLayerNormalization";
  CheckErrorNames([&] { RunNode(skip_ln, {x, x, RandomF32({7}, 3)}, {}, Ms()); }, skip_ln, "gamma");
  CheckErrorNames(
      [&] {
        RunNode(skip_ln, {x, x, RandomF32({1, 8}, 3)}, {}, Ms());
      },
      skip_ln, "gamma");
  CheckErrorNames(
      [&] {
        RunNode(skip_ln, {x, x, g, RandomF32({9}, 3)}, {}, Ms());
      },
      skip_ln, "beta");
  CheckErrorNames(
      [&] {
        RunNode(skip_ln, {x, x, g, Tensor(), RandomF32({4}, 3)}, {}, Ms());
      },
      skip_ln, "bias");
  CheckErrorNames(
      [&] {
        RunNode(skip_ln, {x, RandomF32({2, 8}, 3), g}, {}, Ms());
      },
      skip_ln, "skip");
  CheckErrorNames(
      [&] {
        RunNode(skip_ln, {x, RandomF32({2, 1, 8}, 3), g}, {}, Ms());
      },
      skip_ln, "skip");
  CheckErrorNames(
      [&] {
        RunNode(skip_ln, {RandomF32({8}, 3), RandomF32({8}, 4), g}, {}, Ms());
      },
      skip_ln, "input must be");
  const char* skip_rms = "SkipSimplifiedLayerNormalization";
  CheckErrorNames(
      [&] {
        RunNode(skip_rms, {x, x, RandomF32({3}, 3)}, {}, Ms());
      },
      skip_rms, "gamma");
  CheckErrorNames(
      [&] {
        RunNode(skip_rms, {x, x, g, RandomF32({2}, 3)}, {}, Ms());
      },
      skip_rms, "bias");
  CheckErrorNames([&] { RunNode(skip_rms, {x, x, g}, {}, Ms(2)); }, skip_rms, "mean output");
  const char* rms = "SimplifiedLayerNormalization";
  CheckErrorNames([&] { RunNode(rms, {x, RandomF32({7}, 3)}, {}, Ms()); }, rms, "scale");
  CheckErrorNames([&] { RunNode(rms, {x, g}, {AttrInt("axis", 3)}, Ms()); }, rms, "axis");
  CheckErrorNames(
      [&] {
        RunNode(rms, {x, g}, {AttrInt("stash_type", 0)}, Ms());
      },
      rms, "stash_type");
}

}  // namespace
}  // namespace simplecpp::testing
