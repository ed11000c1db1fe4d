// Tests for graph/ops/msft_activation.cc through the executor: com.microsoft BiasGelu, FastGelu
// and QuickGelu against float64 references written from the operator definitions (last dims 1, 7,
// 33, 1000; with and without bias; constant and run-time bias; tensors larger than one task;
// several threads). float32 tolerance: |got - ref| <= 1e-5 * max(1, |ref|). float16 / bfloat16:
// the float32 result rounded once (tests/graph/ops/float16_compare.h).
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

RunNodeOptions Ms(std::vector<int> constant_inputs = {}, int threads = 1) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "com.microsoft";
  o.constant_inputs = std::move(constant_inputs);
  o.threads = threads;
  return o;
}

double GeluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  const double kPi = 3.14159265358979323846;
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
}
double Quick(double x, double alpha) { return x / (1.0 + std::exp(-alpha * x)); }

// y = act(x + bias[i % n]) in float64.
void CheckActivation(const Tensor& y, const Tensor& x, const Tensor* bias,
                     const std::function<double(double)>& act) {
  REQUIRE(y.dtype() == DType::kFloat32);
  REQUIRE(y.dims() == x.dims());
  const int64_t n = bias ? bias->num_elements() : 1;
  int bad = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double v =
        static_cast<double>(x.data<float>()[i]) + (bias ? bias->data<float>()[i % n] : 0.0f);
    const double ref = act(v), got = y.data<float>()[i];
    if (!(std::fabs(got - ref) <= 1e-5 * std::max(1.0, std::fabs(ref))) && bad++ < 3) {
      CHECK_MESSAGE(false,
                    "y[" << i << "] = " << got << ", reference " << ref << " (x = " << v << ")");
    }
  }
  CHECK(bad == 0);
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

TEST_CASE("BiasGelu / FastGelu / QuickGelu: float32 matches a float64 reference") {
  uint32_t seed = 1;
  for (int64_t h : {1, 7, 33, 1000}) {
    // 2 x 13 x h: more than one task of elements for h = 1000.
    const Tensor x = RandomF32({2, 13, h}, seed++, -6.0f, 6.0f);
    const Tensor bias = RandomF32({h}, seed++);
    INFO("h " << h);
    for (int threads : {1, 3}) {
      for (bool constant_bias : {false, true}) {
        const std::vector<int> c = constant_bias ? std::vector<int>{1} : std::vector<int>{};
        CheckActivation(RunNode("BiasGelu", {x, bias}, {}, Ms(c, threads))[0], x, &bias, GeluErf);
        CheckActivation(RunNode("FastGelu", {x, bias}, {}, Ms(c, threads))[0], x, &bias, GeluTanh);
      }
      CheckActivation(RunNode("FastGelu", {x}, {}, Ms({}, threads))[0], x, nullptr, GeluTanh);
      CheckActivation(RunNode("QuickGelu", {x}, {}, Ms({}, threads))[0], x, nullptr,
                      [](double v) { return Quick(v, 1.702); });
      CheckActivation(RunNode("QuickGelu", {x}, {AttrFloat("alpha", -0.5f)}, Ms({}, threads))[0], x,
                      nullptr, [](double v) { return Quick(v, static_cast<double>(-0.5f)); });
    }
  }
  // Empty input and a scalar without bias.
  CHECK(RunNode("QuickGelu", {RandomF32({0, 4}, 9)}, {}, Ms())[0].dims() == Dims{0, 4});
  CHECK(RunNode("BiasGelu", {RandomF32({0, 4}, 9), RandomF32({4}, 9)}, {}, Ms())[0].dims() ==
        Dims{0, 4});
  const Tensor s = F32({}, {0.75f});
  CheckActivation(RunNode("FastGelu", {s}, {}, Ms())[0], s, nullptr, GeluTanh);
}

TEST_CASE("BiasGelu / FastGelu / QuickGelu: float16 and bfloat16 round the float32 result once") {
  for (int64_t h : {1, 33, 1000}) {
    const Tensor x = RandomF32({3, 5, h}, 20, -5.0f, 5.0f);
    const Tensor bias = RandomF32({h}, 21);
    f16::Check16Both("BiasGelu", {x, bias}, {}, Ms({1}));
    f16::Check16Both("BiasGelu", {x, bias}, {}, Ms());
    f16::Check16Both("FastGelu", {x, bias}, {}, Ms());
    f16::Check16Both("FastGelu", {x}, {}, Ms());
    f16::Check16Both("QuickGelu", {x}, {AttrFloat("alpha", 1.5f)}, Ms());
  }
}

TEST_CASE("BiasGelu / FastGelu / QuickGelu: errors name node, op and what is wrong") {
  const Tensor x = RandomF32({2, 3, 8}, 1);
  CheckErrorNames(
      [&] {
        RunNode("BiasGelu", {x, RandomF32({7}, 2)}, {}, Ms());
      },
      "BiasGelu", "bias");
  CheckErrorNames(
      [&] {
        RunNode("BiasGelu", {x, RandomF32({3, 8}, 2)}, {}, Ms());
      },
      "BiasGelu", "bias");
  CheckErrorNames([&] { RunNode("BiasGelu", {x}, {}, Ms()); }, "BiasGelu", "input");
  CheckErrorNames(
      [&] {
        RunNode("FastGelu", {x, RandomF32({1}, 2)}, {}, Ms());
      },
      "FastGelu", "bias");
  CheckErrorNames(
      [&] {
        RunNode("QuickGelu", {x, RandomF32({8}, 2)}, {}, Ms());
      },
      "QuickGelu", "input");
}

}  // namespace
}  // namespace simplecpp::testing
