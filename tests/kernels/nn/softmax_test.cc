// Tests for kernels/nn/softmax.cc on every compiled Highway target: contiguous rows and strided
// (inner > 1) layouts over sizes around the vector widths and the column chunk, against a scalar
// double reference; large logits, -inf entries, all -inf rows, ties for Hardmax.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/nn/softmax.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

const float kInf = std::numeric_limits<float>::infinity();

std::vector<float> Random(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Scalar double reference over [outer, n, inner].
std::vector<double> RefSoftmax(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner,
                               bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + j; };
      double m = -INFINITY;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, static_cast<double>(x[at(k)]));
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(x[at(k)]) - m);
      for (int64_t k = 0; k < n; ++k) {
        const double d = static_cast<double>(x[at(k)]) - m;
        y[at(k)] = log ? d - std::log(s) : std::exp(d) / s;
      }
    }
  }
  return y;
}

void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double rel,
                double abs) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
      continue;
    }
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (err > rel * std::fabs(want[i]) + abs) {
      FAIL_CHECK("index " << i << ": got " << got[i] << ", want " << want[i]);
      return;
    }
  }
}

struct Shape {
  int64_t outer, n, inner;
};

std::vector<Shape> Shapes() {
  std::vector<Shape> s;
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 768, 1001}) {
    s.push_back({3, n, 1});
  }
  for (int64_t inner : {2, 3, 4, 7, 8, 15, 16, 17, 33, 255, 256, 257, 300}) {
    for (int64_t n : {1, 3, 17}) s.push_back({2, n, inner});
  }
  return s;
}

TEST_CASE("SoftmaxF32 and LogSoftmaxF32 match a double reference") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 1;
    for (const Shape& s : Shapes()) {
      CAPTURE(s.outer);
      CAPTURE(s.n);
      CAPTURE(s.inner);
      const auto x = Random(static_cast<size_t>(s.outer * s.n * s.inner), seed++, -8.0f, 8.0f);
      std::vector<float> y(x.size(), -1.0f);
      SoftmaxF32(x.data(), y.data(), s.outer, s.n, s.inner, SerialParallel());
      CheckClose(y, RefSoftmax(x, s.outer, s.n, s.inner, false), 1e-6, 1e-30);
      LogSoftmaxF32(x.data(), y.data(), s.outer, s.n, s.inner, SerialParallel());
      CheckClose(y, RefSoftmax(x, s.outer, s.n, s.inner, true), 1e-6, 1e-6);
    }
  }
}

TEST_CASE("SoftmaxF32 works in place") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t inner : {1, 19}) {
      auto x = Random(static_cast<size_t>(5 * 37 * inner), 7, -3.0f, 3.0f);
      const auto want = RefSoftmax(x, 5, 37, inner, false);
      SoftmaxF32(x.data(), x.data(), 5, 37, inner, SerialParallel());
      CheckClose(x, want, 1e-6, 1e-30);
    }
  }
}

TEST_CASE("Softmax extreme values") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t inner : {1, 5, 16}) {
      CAPTURE(inner);
      // Rows (columns when inner > 1) of 19 elements: large logits, -inf entries, all -inf.
      const int64_t n = 19;
      std::vector<float> x(static_cast<size_t>(3 * n * inner));
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          x[(0 * n + k) * inner + j] = 1e4f + static_cast<float>(k);          // large logits
          x[(1 * n + k) * inner + j] = k % 3 == 0 ? -kInf : static_cast<float>(k);  // some -inf
          x[(2 * n + k) * inner + j] = -kInf;                                 // all -inf
        }
      }
      std::vector<float> y(x.size());
      SoftmaxF32(x.data(), y.data(), 3, n, inner, SerialParallel());
      CheckClose(y, RefSoftmax(x, 3, n, inner, false), 1e-6, 1e-30);
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          if (k % 3 == 0) CHECK(y[(1 * n + k) * inner + j] == 0.0f);
          CHECK(std::isnan(y[(2 * n + k) * inner + j]));
        }
      }
      LogSoftmaxF32(x.data(), y.data(), 3, n, inner, SerialParallel());
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          if (k % 3 == 0) CHECK(y[(1 * n + k) * inner + j] == -kInf);
          CHECK(std::isnan(y[(2 * n + k) * inner + j]));
        }
      }
      // The large-logit row is finite and matches.
      for (int64_t k = 0; k < n; ++k) CHECK(std::isfinite(y[k * inner]));
    }
  }
}

TEST_CASE("SoftmaxF64 / LogSoftmaxF64") {
  for (const Shape& s : {Shape{2, 17, 1}, Shape{3, 5, 300}, Shape{1, 1, 1}}) {
    const auto xf = Random(static_cast<size_t>(s.outer * s.n * s.inner), 3, -20.0f, 20.0f);
    std::vector<double> x(xf.begin(), xf.end()), y(x.size());
    SoftmaxF64(x.data(), y.data(), s.outer, s.n, s.inner, SerialParallel());
    auto want = RefSoftmax(xf, s.outer, s.n, s.inner, false);
    for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-12));
    LogSoftmaxF64(x.data(), y.data(), s.outer, s.n, s.inner, SerialParallel());
    want = RefSoftmax(xf, s.outer, s.n, s.inner, true);
    for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-12));
  }
}

TEST_CASE("HardmaxF32 picks the first maximum") {
  // [outer 2, n 4, inner 3]
  const std::vector<float> x = {
      1, 5, 2,  3, 5, 2,  3, 1, 9,  0, 0, 2,   // o = 0
      -1, 0, 7, -2, 0, 7, -3, 0, 1, -4, 1, 7,  // o = 1
  };
  std::vector<float> y(x.size(), -1.0f);
  HardmaxF32(x.data(), y.data(), 2, 4, 3, SerialParallel());
  const std::vector<float> want = {
      0, 1, 0,  1, 0, 0,  0, 0, 1,  0, 0, 0,
      1, 0, 1,  0, 0, 0,  0, 0, 0,  0, 1, 0,
  };
  CHECK(y == want);
  std::vector<double> xd(x.begin(), x.end()), yd(x.size());
  HardmaxF64(xd.data(), yd.data(), 2, 4, 3, SerialParallel());
  for (size_t i = 0; i < yd.size(); ++i) CHECK(yd[i] == want[i]);
  // Rows of 300 (more than a chunk of columns when transposed).
  const auto r = Random(600, 9, -1.0f, 1.0f);
  std::vector<float> ry(600);
  HardmaxF32(r.data(), ry.data(), 1, 2, 300, SerialParallel());
  for (int j = 0; j < 300; ++j) {
    const bool first = r[j] >= r[300 + j];
    CHECK(ry[j] == (first ? 1.0f : 0.0f));
    CHECK(ry[300 + j] == (first ? 0.0f : 1.0f));
  }
}

}  // namespace
}  // namespace simplecpp::kernels
