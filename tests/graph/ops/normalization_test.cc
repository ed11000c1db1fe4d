// Tests for graph/ops/normalization.cc through the executor: Softmax / LogSoftmax / Hardmax with
// both axis semantics (coerce-to-2-D before opset 13, single axis from 13), BatchNormalization
// (inference, spatial = 0, training outputs), InstanceNormalization, LayerNormalization (axis,
// broadcast scale, Mean / InvStdDev), GroupNormalization 18 / 21, MVN, LpNormalization, LRN, and
// the shape / attribute errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "graph/op_test_util.h"
#include "tests/graph/ops/float16_compare.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

// Options without designated initializers (which warn under -Wextra).
RunNodeOptions Opts(int64_t opset, int num_outputs = 1, std::vector<int> constants = {}) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  o.constant_inputs = std::move(constants);
  return o;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

void CheckClose(const Tensor& t, const Dims& dims, const std::vector<double>& want,
                double tol = 1e-5) {
  REQUIRE(t.dims() == dims);
  const auto got = Values(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > tol * (1 + std::fabs(want[i]))) {
      FAIL_CHECK("index " << i << ": got " << got[i] << ", want " << want[i]);
      return;
    }
  }
}

// Softmax of x viewed as [outer, n, inner].
std::vector<double> RefSoftmax(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner,
                               int kind) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * n + k) * inner + j); };
      double m = -INFINITY;
      int64_t arg = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (x[at(k)] > m) {
          m = x[at(k)];
          arg = k;
        }
      }
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(x[at(k)] - m);
      for (int64_t k = 0; k < n; ++k) {
        y[at(k)] = kind == 0   ? std::exp(x[at(k)] - m) / s
                   : kind == 1 ? x[at(k)] - m - std::log(s)
                               : (k == arg ? 1.0 : 0.0);
      }
    }
  }
  return y;
}

TEST_CASE("Softmax family: opset < 13 coerces to 2-D, opset 13 uses one axis") {
  const Tensor x = RandomF32({2, 3, 4}, 5, -3.0f, 3.0f);
  const auto xv = Values(x);
  const char* ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
  for (int kind = 0; kind < 3; ++kind) {
    CAPTURE(ops[kind]);
    // opset 11, default axis 1: rows of 12.
    auto out = RunNode(ops[kind], {x}, {}, Opts(11));
    CheckClose(out[0], {2, 3, 4}, RefSoftmax(xv, 2, 12, 1, kind));
    // opset 11, axis 2: rows of 4.
    out = RunNode(ops[kind], {x}, {AttrInt("axis", 2)}, Opts(11));
    CheckClose(out[0], {2, 3, 4}, RefSoftmax(xv, 6, 4, 1, kind));
    // opset 1, axis 0: one row of 24.
    out = RunNode(ops[kind], {x}, {AttrInt("axis", 0)}, Opts(1));
    CheckClose(out[0], {2, 3, 4}, RefSoftmax(xv, 1, 24, 1, kind));
    // opset 13, default axis -1.
    out = RunNode(ops[kind], {x}, {}, Opts(13));
    CheckClose(out[0], {2, 3, 4}, RefSoftmax(xv, 6, 4, 1, kind));
    // opset 13, axis 1: strided.
    out = RunNode(ops[kind], {x}, {AttrInt("axis", 1)}, Opts(13));
    CheckClose(out[0], {2, 3, 4}, RefSoftmax(xv, 2, 3, 4, kind));
    out = RunNode(ops[kind], {x}, {AttrInt("axis", -3)}, Opts(13));
    CheckClose(out[0], {2, 3, 4}, RefSoftmax(xv, 1, 2, 12, kind));
    CHECK_THROWS_AS(RunNode(ops[kind], {x}, {AttrInt("axis", 3)}, Opts(13)), Error);
  }
  // Double.
  Tensor xd(DType::kFloat64, {2, 2});
  for (int i = 0; i < 4; ++i) xd.data<double>()[i] = i;
  auto out = RunNode("Softmax", {xd});
  CHECK(out[0].data<double>()[1] == doctest::Approx(std::exp(1.0) / (1 + std::exp(1.0))));
  CHECK_THROWS_AS(RunNode("Softmax", {I32({2}, {1, 2})}), Error);
}

TEST_CASE("BatchNormalization inference") {
  const Tensor x = RandomF32({2, 3, 2, 5}, 1, -2.0f, 2.0f);
  const Tensor scale = F32({3}, {1.0f, 0.5f, 2.0f});
  const Tensor bias = F32({3}, {0.0f, 1.0f, -1.0f});
  const Tensor mean = F32({3}, {0.1f, -0.2f, 0.3f});
  const Tensor var = F32({3}, {1.0f, 0.25f, 4.0f});
  const auto xv = Values(x);
  std::vector<double> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = (i / 10) % 3;
    want[i] = (xv[i] - mean.data<float>()[c]) * scale.data<float>()[c] /
                  std::sqrt(var.data<float>()[c] + 1e-3) +
              bias.data<float>()[c];
  }
  for (int64_t opset : {7, 9, 15}) {
    CAPTURE(opset);
    auto out = RunNode("BatchNormalization", {x, scale, bias, mean, var},
                       {AttrFloat("epsilon", 1e-3f)}, Opts(opset));
    CheckClose(out[0], {2, 3, 2, 5}, want);
    // Constant parameters take the folded path.
    out = RunNode("BatchNormalization", {x, scale, bias, mean, var}, {AttrFloat("epsilon", 1e-3f)},
                  Opts(opset, 1, {1, 2, 3, 4}));
    CheckClose(out[0], {2, 3, 2, 5}, want);
  }
  // spatial = 0 (opset 7): per-activation parameters of shape [C, H, W].
  const Tensor x2 = RandomF32({2, 2, 3}, 2);
  const Tensor s2 = RandomF32({2, 3}, 3, 0.5f, 1.5f), b2 = RandomF32({2, 3}, 4);
  const Tensor m2 = RandomF32({2, 3}, 5), v2 = RandomF32({2, 3}, 6, 0.5f, 1.5f);
  auto out = RunNode("BatchNormalization", {x2, s2, b2, m2, v2}, {AttrInt("spatial", 0)},
                     Opts(7));
  std::vector<double> want2(12);
  for (int i = 0; i < 12; ++i) {
    const int c = i % 6;
    want2[i] = (x2.data<float>()[i] - m2.data<float>()[c]) * s2.data<float>()[c] /
                   std::sqrt(v2.data<float>()[c] + 1e-5) +
               b2.data<float>()[c];
  }
  CheckClose(out[0], {2, 2, 3}, want2);
  // Bad parameter shape.
  CHECK_THROWS_AS(RunNode("BatchNormalization", {x, F32({2}, {1, 1}), bias, mean, var}), Error);
}

TEST_CASE("BatchNormalization training_mode") {
  const Tensor x = RandomF32({3, 2, 4}, 7, -1.0f, 3.0f);
  const Tensor scale = F32({2}, {1.5f, 0.5f}), bias = F32({2}, {0.1f, -0.2f});
  const Tensor mean = F32({2}, {0.0f, 1.0f}), var = F32({2}, {1.0f, 2.0f});
  auto out = RunNode("BatchNormalization", {x, scale, bias, mean, var},
                     {AttrInt("training_mode", 1), AttrFloat("momentum", 0.8f)},
                     Opts(15, 3));
  REQUIRE(out.size() == 3);
  const auto xv = Values(x);
  for (int c = 0; c < 2; ++c) {
    double s = 0, q = 0;
    for (int n = 0; n < 3; ++n) {
      for (int k = 0; k < 4; ++k) s += xv[(n * 2 + c) * 4 + k];
    }
    const double m = s / 12;
    for (int n = 0; n < 3; ++n) {
      for (int k = 0; k < 4; ++k) q += std::pow(xv[(n * 2 + c) * 4 + k] - m, 2);
    }
    const double v = q / 12;
    for (int n = 0; n < 3; ++n) {
      for (int k = 0; k < 4; ++k) {
        const int i = (n * 2 + c) * 4 + k;
        const double want = (xv[i] - m) / std::sqrt(v + 1e-5) * scale.data<float>()[c] +
                            bias.data<float>()[c];
        CHECK(out[0].data<float>()[i] == doctest::Approx(want).epsilon(1e-5));
      }
    }
    CHECK(out[1].data<float>()[c] ==
          doctest::Approx(mean.data<float>()[c] * 0.8 + m * 0.2).epsilon(1e-5));
    CHECK(out[2].data<float>()[c] ==
          doctest::Approx(var.data<float>()[c] * 0.8 + v * 0.2).epsilon(1e-5));
  }
  // Training outputs before opset 14 are not computed.
  CHECK_THROWS_AS(RunNode("BatchNormalization", {x, scale, bias, mean, var}, {},
                          Opts(9, 3)),
                  Error);
}

TEST_CASE("InstanceNormalization and GroupNormalization") {
  const Tensor x = RandomF32({2, 4, 3, 3}, 9, -2.0f, 2.0f);
  const auto xv = Values(x);
  // Reference: groups of `cpg` channels; scale / bias per channel.
  auto ref = [&](int64_t groups, const std::vector<float>& s, const std::vector<float>& b,
                 double eps) {
    const int64_t cpg = 4 / groups, len = cpg * 9;
    std::vector<double> y(xv.size());
    for (int64_t r = 0; r < 2 * groups; ++r) {
      double m = 0, q = 0;
      for (int64_t i = 0; i < len; ++i) m += xv[r * len + i];
      m /= len;
      for (int64_t i = 0; i < len; ++i) q += std::pow(xv[r * len + i] - m, 2);
      const double inv = 1 / std::sqrt(q / len + eps);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t c = (r % groups) * cpg + i / 9;
        y[r * len + i] = (xv[r * len + i] - m) * inv * s[c] + b[c];
      }
    }
    return y;
  };
  const std::vector<float> s = {1, 2, 0.5f, -1}, b = {0, 0.5f, -0.5f, 1};
  auto out = RunNode("InstanceNormalization", {x, F32({4}, s), F32({4}, b)},
                     {AttrFloat("epsilon", 1e-2f)});
  CheckClose(out[0], {2, 4, 3, 3}, ref(4, s, b, 1e-2));
  // GroupNormalization-21: per-channel scale.
  out = RunNode("GroupNormalization", {x, F32({4}, s), F32({4}, b)}, {AttrInt("num_groups", 2)},
                Opts(21));
  CheckClose(out[0], {2, 4, 3, 3}, ref(2, s, b, 1e-5));
  // GroupNormalization-18: per-group scale.
  out = RunNode("GroupNormalization", {x, F32({2}, {2, 3}), F32({2}, {1, -1})},
                {AttrInt("num_groups", 2)}, Opts(18));
  CheckClose(out[0], {2, 4, 3, 3}, ref(2, {2, 2, 3, 3}, {1, 1, -1, -1}, 1e-5));
  CHECK_THROWS_AS(RunNode("GroupNormalization", {x, F32({4}, s), F32({4}, b)},
                          {AttrInt("num_groups", 3)}, Opts(21)),
                  Error);
  CHECK_THROWS_AS(RunNode("InstanceNormalization", {x, F32({3}, {1, 1, 1}), F32({4}, b)}), Error);
}

TEST_CASE("LayerNormalization") {
  const Tensor x = RandomF32({2, 3, 4}, 13, -2.0f, 2.0f);
  const auto xv = Values(x);
  auto ref = [&](int64_t rows, int64_t n, const std::vector<float>& s, const std::vector<float>& b,
                 std::vector<double>* mean, std::vector<double>* inv) {
    std::vector<double> y(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double m = 0, q = 0;
      for (int64_t i = 0; i < n; ++i) m += xv[r * n + i];
      m /= n;
      for (int64_t i = 0; i < n; ++i) q += std::pow(xv[r * n + i] - m, 2);
      const double is = 1 / std::sqrt(q / n + 1e-5);
      if (mean) mean->push_back(m);
      if (inv) inv->push_back(is);
      for (int64_t i = 0; i < n; ++i) {
        y[r * n + i] = (xv[r * n + i] - m) * is * s[i % s.size()] + (b.empty() ? 0 : b[i % b.size()]);
      }
    }
    return y;
  };
  // axis -1 with Mean / InvStdDev.
  std::vector<float> s4 = {1, 2, 3, 4}, b4 = {0.5f, 0, -0.5f, 1};
  std::vector<double> mean, inv;
  auto out = RunNode("LayerNormalization", {x, F32({4}, s4), F32({4}, b4)}, {},
                     Opts(17, 3));
  CheckClose(out[0], {2, 3, 4}, ref(6, 4, s4, b4, &mean, &inv));
  CheckClose(out[1], {2, 3, 1}, mean);
  CheckClose(out[2], {2, 3, 1}, inv);
  // axis 1: normalized shape [3, 4]; a [4] scale broadcasts over it; no bias.
  mean.clear();
  out = RunNode("LayerNormalization", {x, F32({4}, s4)}, {AttrInt("axis", 1)},
                Opts(17, 2));
  CheckClose(out[0], {2, 3, 4}, ref(2, 12, s4, {}, &mean, nullptr));
  CheckClose(out[1], {2, 1, 1}, mean);
  // Full-shape scale / bias, constant.
  const Tensor s12 = RandomF32({3, 4}, 4, 0.5f, 1.5f), b12 = RandomF32({3, 4}, 5);
  out = RunNode("LayerNormalization", {x, s12, b12}, {AttrInt("axis", 1)},
                Opts(17, 1, {1, 2}));
  CheckClose(out[0], {2, 3, 4}, ref(2, 12, Values(s12), Values(b12), nullptr, nullptr));
  // Broadcast constant bias [3, 1].
  const Tensor b31 = F32({3, 1}, {1, 2, 3});
  std::vector<float> b31x(12);
  for (int i = 0; i < 12; ++i) b31x[i] = static_cast<float>(1 + i / 4);
  out = RunNode("LayerNormalization", {x, s12, b31}, {AttrInt("axis", 1)},
                Opts(17, 1, {2}));
  CheckClose(out[0], {2, 3, 4}, ref(2, 12, Values(s12), b31x, nullptr, nullptr));
  // Errors.
  CHECK_THROWS_AS(RunNode("LayerNormalization", {x, F32({3}, {1, 1, 1})}, {}, Opts(17)), Error);
  CHECK_THROWS_AS(RunNode("LayerNormalization", {x, F32({4}, s4)}, {AttrInt("axis", 3)},
                          Opts(17)),
                  Error);
}

TEST_CASE("MeanVarianceNormalization, LpNormalization, LRN") {
  const Tensor x = RandomF32({2, 3, 2, 2}, 21, -2.0f, 2.0f);
  const auto xv = Values(x);
  auto out = RunNode("MeanVarianceNormalization", {x}, {}, Opts(13));
  std::vector<double> want(24);
  for (int c = 0; c < 3; ++c) {
    double m = 0, q = 0;
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 4; ++k) m += xv[(n * 3 + c) * 4 + k];
    }
    m /= 8;
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 4; ++k) q += std::pow(xv[(n * 3 + c) * 4 + k] - m, 2);
    }
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 4; ++k) {
        want[(n * 3 + c) * 4 + k] = (xv[(n * 3 + c) * 4 + k] - m) / (std::sqrt(q / 8) + 1e-9);
      }
    }
  }
  CheckClose(out[0], {2, 3, 2, 2}, want);

  out = RunNode("LpNormalization", {x}, {AttrInt("axis", 1), AttrInt("p", 1)});
  for (int n = 0; n < 2; ++n) {
    for (int k = 0; k < 4; ++k) {
      double norm = 0;
      for (int c = 0; c < 3; ++c) norm += std::fabs(xv[(n * 3 + c) * 4 + k]);
      for (int c = 0; c < 3; ++c) want[(n * 3 + c) * 4 + k] = xv[(n * 3 + c) * 4 + k] / norm;
    }
  }
  CheckClose(out[0], {2, 3, 2, 2}, want);
  CHECK_THROWS_AS(RunNode("LpNormalization", {x}, {AttrInt("p", 3)}), Error);

  out = RunNode("LRN", {x}, {AttrInt("size", 3), AttrFloat("alpha", 0.1f)});
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int k = 0; k < 4; ++k) {
        double sq = 0;
        for (int i = std::max(0, c - 1); i <= std::min(2, c + 1); ++i) {
          sq += std::pow(xv[(n * 3 + i) * 4 + k], 2);
        }
        const int idx = (n * 3 + c) * 4 + k;
        want[idx] = xv[idx] / std::pow(1.0 + 0.1 / 3 * sq, 0.75);
      }
    }
  }
  CheckClose(out[0], {2, 3, 2, 2}, want);
  CHECK_THROWS_AS(RunNode("LRN", {x}), Error);  // size is required
}

}  // namespace
}  // namespace simplecpp::testing

namespace simplecpp::testing {
namespace {

TEST_CASE("Normalization ops give bit-identical results for any thread count") {
  const Tensor x = RandomF32({4, 37, 300}, 31, -5.0f, 5.0f);
  const Tensor s = RandomF32({300}, 32), b = RandomF32({300}, 33);
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    auto opts = Opts(13);
    auto many = opts;
    many.threads = threads;
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      for (int64_t axis : {1, 2}) {
        const auto a = RunNode(op, {x}, {AttrInt("axis", axis)}, opts);
        const auto c = RunNode(op, {x}, {AttrInt("axis", axis)}, many);
        CHECK(a[0].BitwiseEquals(c[0]));
      }
    }
    opts.opset = many.opset = 17;
    const auto a = RunNode("LayerNormalization", {x, s, b}, {}, opts);
    const auto c = RunNode("LayerNormalization", {x, s, b}, {}, many);
    CHECK(a[0].BitwiseEquals(c[0]));
  }
}

// float16 / bfloat16: the 16-bit output is the float32 result on the widened input rounded once;
// tolerance (tests/graph/ops/float16_compare.h): |y16 - ref| <= eps16 * max(|ref|, min_normal16),
// eps16 = 2^-10 (float16) or 2^-7 (bfloat16).
TEST_CASE("MeanVarianceNormalization, LRN, LpNormalization, GroupNormalization float16 / bfloat16") {
  const Tensor x = RandomF32({2, 4, 3, 5}, 301, -2.0f, 2.0f);
  f16::Check16Both("MeanVarianceNormalization", {x}, {}, f16::Opts(13));
  f16::Check16Both("MeanVarianceNormalization", {x}, {AttrInts("axes", {1, 3})}, f16::Opts(13));
  f16::Check16(DType::kFloat16, "MeanVarianceNormalization", {x}, {}, f16::Opts(9));
  // bfloat16 entered MeanVarianceNormalization's type constraint in opset 13.
  CHECK_THROWS_AS(RunNode("MeanVarianceNormalization", {f16::To16(x, DType::kBFloat16)}, {},
                          f16::Opts(9)),
                  Error);
  f16::Check16Both("LRN", {x}, {AttrInt("size", 3), AttrFloat("alpha", 0.01f)}, f16::Opts(13));
  f16::Check16Both("LpNormalization", {x}, {AttrInt("axis", 1)}, f16::Opts(22));
  f16::Check16Both("LpNormalization", {x}, {AttrInt("p", 1)}, f16::Opts(22));
  f16::Check16Both("GroupNormalization", {x, RandomF32({4}, 302), RandomF32({4}, 303)},
                   {AttrInt("num_groups", 2)}, f16::Opts(21));
  f16::Check16Both("GroupNormalization", {x, RandomF32({4}, 302), RandomF32({4}, 303)},
                   {AttrInt("num_groups", 4)}, f16::Opts(21, {1, 2}));
}

}  // namespace
}  // namespace simplecpp::testing
