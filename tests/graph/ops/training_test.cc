// Tests for graph/ops/training.cc (ai.onnx.preview.training Adagrad, Momentum, Adam) against
// scalar references written here, with two tensors of odd shapes, T = 0 and T > 0, both Momentum
// modes, float64, an omitted output, and the errors (input count, shapes, attributes, dtypes).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

int CodeOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return static_cast<int>(e.code());
  }
  return 0;
}

RunNodeOptions Training(int outputs) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "ai.onnx.preview.training";
  o.num_outputs = outputs;
  return o;
}

void CheckClose(const Tensor& t, const std::vector<double>& want) {
  REQUIRE(t.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double v = t.dtype() == DType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i];
    CHECK(v == doctest::Approx(want[i]).epsilon(1e-5));
  }
}

double At(const Tensor& t, int64_t i) { return t.data<float>()[i]; }

TEST_CASE("Adagrad, two tensors, decay and norm coefficient") {
  const Tensor x1 = RandomF32({3, 5}, 1), x2 = RandomF32({7}, 2);
  const Tensor g1 = RandomF32({3, 5}, 3), g2 = RandomF32({7}, 4);
  const Tensor h1 = RandomF32({3, 5}, 5, 0.0f, 2.0f), h2 = RandomF32({7}, 6, 0.0f, 2.0f);
  const float r = 0.3f, decay = 0.1f, eps = 1e-4f, norm = 0.01f;
  const int64_t t = 4;
  auto out = RunNode("Adagrad", {F32({}, {r}), I64({}, {t}), x1, x2, g1, g2, h1, h2},
                     {AttrFloat("decay_factor", decay), AttrFloat("epsilon", eps),
                      AttrFloat("norm_coefficient", norm)},
                     Training(4));
  const Tensor* xs[2] = {&x1, &x2};
  const Tensor* gs[2] = {&g1, &g2};
  const Tensor* hs[2] = {&h1, &h2};
  for (int k = 0; k < 2; ++k) {
    std::vector<double> xw, hw;
    const double rr = r / (1.0 + t * decay);
    for (int64_t i = 0; i < xs[k]->num_elements(); ++i) {
      const double g = norm * At(*xs[k], i) + At(*gs[k], i);
      const double h = At(*hs[k], i) + g * g;
      hw.push_back(h);
      xw.push_back(At(*xs[k], i) - rr * g / (std::sqrt(h) + eps));
    }
    CheckClose(out[k], xw);
    CheckClose(out[2 + k], hw);
  }
}

TEST_CASE("Momentum standard and nesterov, T = 0 uses beta 1") {
  const Tensor x = RandomF32({2, 3, 3}, 1), g = RandomF32({2, 3, 3}, 2), v = RandomF32({2, 3, 3}, 3);
  const float r = 0.1f, alpha = 0.9f, beta = 0.5f, norm = 0.02f;
  for (const char* mode : {"standard", "nesterov"}) {
    for (int64_t t : {0, 3}) {
      CAPTURE(mode);
      CAPTURE(t);
      auto out = RunNode("Momentum", {F32({}, {r}), I64({}, {t}), x, g, v},
                         {AttrFloat("alpha", alpha), AttrFloat("beta", beta),
                          AttrString("mode", mode), AttrFloat("norm_coefficient", norm)},
                         Training(2));
      std::vector<double> xw, vw;
      const double b = t > 0 ? beta : 1.0;
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const double gr = norm * At(x, i) + At(g, i);
        const double vn = alpha * At(v, i) + b * gr;
        vw.push_back(vn);
        xw.push_back(std::string(mode) == "nesterov" ? At(x, i) - r * (gr + alpha * vn)
                                                      : At(x, i) - r * vn);
      }
      CheckClose(out[0], xw);
      CheckClose(out[1], vw);
    }
  }
}

TEST_CASE("Adam with T > 0 and T = 0, float64, omitted output") {
  const Tensor x = RandomF32({5}, 1), g = RandomF32({5}, 2), v = RandomF32({5}, 3);
  const Tensor h = RandomF32({5}, 4, 0.0f, 1.0f);
  const float r = 0.05f, alpha = 0.8f, beta = 0.95f, eps = 1e-3f, norm = 0.1f, post = 0.05f;
  for (int64_t t : {0, 2}) {
    auto out = RunNode("Adam", {F32({}, {r}), I64({}, {t}), x, g, v, h},
                       {AttrFloat("alpha", alpha), AttrFloat("beta", beta), AttrFloat("epsilon", eps),
                        AttrFloat("norm_coefficient", norm),
                        AttrFloat("norm_coefficient_post", post)},
                       Training(3));
    std::vector<double> xw, vw, hw;
    double rr = r;
    if (t > 0) rr = r * std::sqrt(1.0 - std::pow(double(beta), t)) / (1.0 - std::pow(double(alpha), t));
    for (int64_t i = 0; i < 5; ++i) {
      const double gr = norm * At(x, i) + At(g, i);
      const double vn = alpha * At(v, i) + (1.0 - alpha) * gr;
      const double hn = beta * At(h, i) + (1.0 - beta) * gr * gr;
      vw.push_back(vn);
      hw.push_back(hn);
      xw.push_back((1.0 - post) * (At(x, i) - rr * vn / (std::sqrt(hn) + eps)));
    }
    CheckClose(out[0], xw);
    CheckClose(out[1], vw);
    CheckClose(out[2], hw);
  }
  // float64 tensors with a float32 learning rate; Adam defaults.
  auto to64 = [](const Tensor& t) {
    Tensor d(DType::kFloat64, t.dims());
    for (int64_t i = 0; i < t.num_elements(); ++i) d.data<double>()[i] = t.data<float>()[i];
    return d;
  };
  auto out = RunNode("Adam", {F32({}, {r}), I64({}, {1}), to64(x), to64(g), to64(v), to64(h)}, {},
                     Training(3));
  REQUIRE(out[0].dtype() == DType::kFloat64);
  std::vector<double> xw;
  const double rr = r * std::sqrt(1.0 - 0.999) / (1.0 - 0.9);
  for (int64_t i = 0; i < 5; ++i) {
    const double vn = 0.9 * At(v, i) + 0.1 * At(g, i);
    const double hn = 0.999 * At(h, i) + (1.0 - 0.999) * At(g, i) * At(g, i);
    xw.push_back(At(x, i) - rr * vn / (std::sqrt(hn) + 1e-6));
  }
  CheckClose(out[0], xw);
  // Only X_new requested (fewer outputs than 3n).
  auto only_x = RunNode("Adam", {F32({}, {r}), I64({}, {1}), to64(x), to64(g), to64(v), to64(h)}, {},
                        Training(1));
  CheckClose(only_x[0], xw);
}

TEST_CASE("training ops errors") {
  const Tensor x = RandomF32({4}, 1);
  const Tensor r = F32({}, {0.1f});
  const Tensor t = I64({}, {1});
  const int model = static_cast<int>(ErrorCode::kInvalidModel);
  // Input count not 2 + 3n; no tensors at all.
  CHECK(CodeOf([&] { RunNode("Adagrad", {r, t, x, x}, {}, Training(2)); }) == model);
  CHECK(CodeOf([&] { RunNode("Adagrad", {r, t}, {}, Training(1)); }) == model);
  // Too many outputs.
  CHECK(CodeOf([&] { RunNode("Adagrad", {r, t, x, x, x}, {}, Training(3)); }) == model);
  // Mismatched shapes.
  CHECK(CodeOf([&] { RunNode("Adagrad", {r, t, x, RandomF32({5}, 2), x}, {}, Training(2)); }) ==
        static_cast<int>(ErrorCode::kInvalidArgument));
  // Non-scalar R.
  CHECK(CodeOf([&] { RunNode("Adagrad", {F32({2}, {1, 2}), t, x, x, x}, {}, Training(2)); }) ==
        static_cast<int>(ErrorCode::kInvalidArgument));
  // Momentum needs all four attributes and a known mode.
  CHECK(CodeOf([&] { RunNode("Momentum", {r, t, x, x, x}, {AttrFloat("alpha", 0.9f)}, Training(2)); }) ==
        model);
  CHECK(CodeOf([&] {
    RunNode("Momentum", {r, t, x, x, x},
            {AttrFloat("alpha", 0.9f), AttrFloat("beta", 0.1f), AttrString("mode", "fast"),
             AttrFloat("norm_coefficient", 0.0f)},
            Training(2));
  }) == model);
  // int32 T, int tensors.
  CHECK(CodeOf([&] { RunNode("Adagrad", {r, I32({}, {1}), x, x, x}, {}, Training(2)); }) != 0);
  CHECK(CodeOf([&] {
    RunNode("Adagrad", {r, t, I64({1}, {1}), I64({1}, {1}), I64({1}, {1})}, {}, Training(2));
  }) != 0);
}

}  // namespace
}  // namespace simplecpp::testing
