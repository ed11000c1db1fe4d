// Tests for kernels/nn/reduce.h and kernels/nn/topk.h against scalar double references, on every
// compiled Highway target, over [outer, n, inner] shapes around the vector widths.
#include "kernels/nn/reduce.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/thread_pool.h"
#include "kernels/nn/topk.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using RefFn = double (*)(const std::vector<double>&);

double RefSum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double RefSumSquare(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}
double RefAbsSum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::fabs(x);
  return s;
}
double RefProd(const std::vector<double>& v) {
  double s = 1;
  for (double x : v) s *= x;
  return s;
}
double RefMax(const std::vector<double>& v) {
  double s = -INFINITY;
  for (double x : v) {
    if (std::isnan(x)) return NAN;
    s = std::max(s, x);
  }
  return s;
}
double RefMin(const std::vector<double>& v) {
  double s = INFINITY;
  for (double x : v) {
    if (std::isnan(x)) return NAN;
    s = std::min(s, x);
  }
  return s;
}
double RefLogSumExp(const std::vector<double>& v) {
  double m = RefMax(v);
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

struct KindCase {
  ReduceKind kind;
  const char* name;
  RefFn ref;
};
const KindCase kKinds[] = {
    {ReduceKind::kSum, "sum", RefSum},
    {ReduceKind::kSumSquare, "sumsq", RefSumSquare},
    {ReduceKind::kAbsSum, "abssum", RefAbsSum},
    {ReduceKind::kProd, "prod", RefProd},
    {ReduceKind::kMax, "max", RefMax},
    {ReduceKind::kMin, "min", RefMin},
    {ReduceKind::kLogSumExp, "lse", RefLogSumExp},
};

std::vector<float> Pseudo(int64_t count, uint32_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(count));
  uint32_t s = seed * 2654435761u + 7u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return v;
}

// Checks fn over x [outer, n, inner] against ref, with a tolerance scaled by the sum of |terms|.
void CheckF32(const KindCase& kc, const std::vector<float>& x, int64_t outer, int64_t n,
              int64_t inner, const Parallel& parallel) {
  std::vector<float> y(static_cast<size_t>(outer * inner), -12345.0f);
  GetReduceFn<float>(kc.kind)(x.data(), outer, n, inner, y.data(), parallel);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      std::vector<double> col;
      double mag = 0;
      for (int64_t i = 0; i < n; ++i) {
        col.push_back(x[(o * n + i) * inner + j]);
        mag +=
            std::fabs(col.back()) * (kc.kind == ReduceKind::kSumSquare ? std::fabs(col.back()) : 1);
      }
      const double want = kc.ref(col);
      const double got = y[o * inner + j];
      if (std::isnan(want) || std::isinf(want)) {
        if (std::isnan(want)) {
          CHECK_MESSAGE(std::isnan(got), kc.name, " o=", o, " j=", j);
        } else {
          CHECK_MESSAGE(got == want, kc.name, " o=", o, " j=", j);
        }
        continue;
      }
      double tol = 1e-5 * std::max(1.0, mag) + 1e-6 * std::fabs(want);
      if (kc.kind == ReduceKind::kProd) tol = 1e-5 * std::max(1e-30, std::fabs(want)) * (n + 1);
      if (kc.kind == ReduceKind::kLogSumExp) tol = 1e-5 * std::max(1.0, std::fabs(want));
      CHECK_MESSAGE(std::fabs(got - want) <= tol, kc.name, " outer=", outer, " n=", n,
                    " inner=", inner, " o=", o, " j=", j, " got=", got, " want=", want);
    }
  }
}

const int64_t kSizes[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65};

TEST_CASE("ReduceF32 kinds match a double reference on every target") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const KindCase& kc : kKinds) {
      CAPTURE(kc.name);
      const float lo = kc.kind == ReduceKind::kProd ? 0.5f : -2.0f;
      const float hi = kc.kind == ReduceKind::kProd ? 1.5f : 2.0f;
      for (int64_t n : kSizes) {
        // Rows (inner == 1) and columns (inner > 1), including inner around lane multiples.
        for (int64_t inner : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{17}, int64_t{33}}) {
          const int64_t outer = 2;
          const auto x = Pseudo(outer * n * inner, static_cast<uint32_t>(n * 131 + inner), lo, hi);
          CheckF32(kc, x, outer, n, inner, SerialParallel());
        }
      }
      // Inner wider than one column chunk (512) and several outer blocks.
      const auto x = Pseudo(3 * 5 * 530, 99, lo, hi);
      CheckF32(kc, x, 3, 5, 530, SerialParallel());
      // A long row: many 4-vector iterations.
      const auto r = Pseudo(1000 + 7, 5, lo, hi);
      CheckF32(kc, r, 1, 1007, 1, SerialParallel());
    }
  }
}

TEST_CASE("ReduceF32 n == 0 writes the identity") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t inner : {int64_t{1}, int64_t{5}, int64_t{40}}) {
      std::vector<float> y(static_cast<size_t>(2 * inner));
      const float* none = nullptr;
      const struct {
        ReduceKind kind;
        float want;
      } cases[] = {{ReduceKind::kSum, 0.0f},           {ReduceKind::kSumSquare, 0.0f},
                   {ReduceKind::kAbsSum, 0.0f},        {ReduceKind::kProd, 1.0f},
                   {ReduceKind::kMax, -INFINITY},      {ReduceKind::kMin, INFINITY},
                   {ReduceKind::kLogSumExp, -INFINITY}};
      for (const auto& c : cases) {
        GetReduceFn<float>(c.kind)(none, 2, 0, inner, y.data(), SerialParallel());
        for (float v : y) CHECK(v == c.want);
      }
    }
  }
}

TEST_CASE("ReduceF32 Max/Min propagate NaN in every position (vector body, tails, columns)") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{33}, int64_t{70}}) {
      for (int64_t inner : {int64_t{1}, int64_t{3}, int64_t{20}, int64_t{70}}) {
        for (int64_t pos : {int64_t{0}, n / 2, n - 1}) {
          auto x = Pseudo(n * inner, 3, -1.0f, 1.0f);
          const int64_t col = inner - 1;  // NaN only in the last column
          x[pos * inner + col] = std::numeric_limits<float>::quiet_NaN();
          std::vector<float> y(static_cast<size_t>(inner));
          for (ReduceKind kind :
               {ReduceKind::kMax, ReduceKind::kMin, ReduceKind::kLogSumExp, ReduceKind::kSum}) {
            GetReduceFn<float>(kind)(x.data(), 1, n, inner, y.data(), SerialParallel());
            CHECK(std::isnan(y[col]));
            for (int64_t j = 0; j < col; ++j) CHECK(!std::isnan(y[j]));
          }
        }
      }
    }
  }
}

TEST_CASE("ReduceLogSumExpF32 is stable and handles infinities") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<float> big(37, 1000.0f);
    float y = 0;
    ReduceLogSumExpF32(big.data(), 1, 37, 1, &y, SerialParallel());
    CHECK(y == doctest::Approx(1000.0 + std::log(37.0)).epsilon(1e-6));
    std::vector<float> neg(19, -INFINITY);
    ReduceLogSumExpF32(neg.data(), 1, 19, 1, &y, SerialParallel());
    CHECK(y == -INFINITY);
    neg[4] = 2.0f;
    ReduceLogSumExpF32(neg.data(), 1, 19, 1, &y, SerialParallel());
    CHECK(y == doctest::Approx(2.0));
    neg[5] = INFINITY;
    ReduceLogSumExpF32(neg.data(), 1, 19, 1, &y, SerialParallel());
    CHECK(y == INFINITY);
    // Columns: column 0 all -inf, column 1 has +inf, the rest large.
    std::vector<float> cols(10 * 9, 500.0f);
    for (int i = 0; i < 10; ++i) cols[i * 9] = -INFINITY;
    cols[3 * 9 + 1] = INFINITY;
    std::vector<float> out(9);
    ReduceLogSumExpF32(cols.data(), 1, 10, 9, out.data(), SerialParallel());
    CHECK(out[0] == -INFINITY);
    CHECK(out[1] == INFINITY);
    for (int j = 2; j < 9; ++j) CHECK(out[j] == doctest::Approx(500.0 + std::log(10.0)));
  }
}

TEST_CASE("ReduceF32 results do not depend on the thread count") {
  auto pool = graph::MakeThreadPool(4);
  for (const KindCase& kc : kKinds) {
    for (const auto& shape : std::vector<std::vector<int64_t>>{{300, 200, 1}, {7, 300, 700}}) {
      const auto x = Pseudo(shape[0] * shape[1] * shape[2], 11, 0.9f, 1.1f);
      std::vector<float> a(static_cast<size_t>(shape[0] * shape[2]));
      std::vector<float> b(a.size());
      GetReduceFn<float>(kc.kind)(x.data(), shape[0], shape[1], shape[2], a.data(),
                                  SerialParallel());
      GetReduceFn<float>(kc.kind)(x.data(), shape[0], shape[1], shape[2], b.data(), *pool);
      CHECK(a == b);
    }
  }
}

TEST_CASE("Generic reductions: int wrap-around, double, bool") {
  const std::vector<int32_t> xi = {2147483647, 1, -5, 7};
  int32_t yi = 0;
  GetReduceFn<int32_t>(ReduceKind::kSum)(xi.data(), 1, 4, 1, &yi, SerialParallel());
  CHECK(yi == static_cast<int32_t>(static_cast<uint32_t>(2147483647u + 1u - 5u + 7u)));
  GetReduceFn<int32_t>(ReduceKind::kMax)(xi.data(), 1, 4, 1, &yi, SerialParallel());
  CHECK(yi == 2147483647);
  GetReduceFn<int32_t>(ReduceKind::kMin)(xi.data(), 1, 4, 1, &yi, SerialParallel());
  CHECK(yi == -5);
  const std::vector<int32_t> xa = {-3, 4, 5, -6};
  int32_t ya[2];
  GetReduceFn<int32_t>(ReduceKind::kAbsSum)(xa.data(), 1, 2, 2, ya, SerialParallel());
  CHECK(ya[0] == 8);
  CHECK(ya[1] == 10);
  GetReduceFn<int32_t>(ReduceKind::kMax)(xi.data(), 1, 0, 1, &yi, SerialParallel());
  CHECK(yi == std::numeric_limits<int32_t>::lowest());

  const std::vector<double> xd = {1.5, NAN, 3.0, -1.0};
  double yd[2];
  GetReduceFn<double>(ReduceKind::kMax)(xd.data(), 1, 2, 2, yd, SerialParallel());
  CHECK(std::isnan(yd[1]));
  CHECK(yd[0] == 3.0);
  GetReduceFn<double>(ReduceKind::kLogSumExp)(xd.data(), 2, 2, 1, yd, SerialParallel());
  CHECK(std::isnan(yd[0]));
  CHECK(yd[1] == doctest::Approx(std::log(std::exp(3.0) + std::exp(-1.0))));

  const bool xb[] = {false, true, false, false};
  bool yb[2];
  GetReduceFn<bool>(ReduceKind::kMax)(xb, 2, 2, 1, yb, SerialParallel());
  CHECK(yb[0] == true);
  CHECK(yb[1] == false);
  GetReduceFn<bool>(ReduceKind::kMin)(xb, 1, 0, 2, yb, SerialParallel());
  CHECK(yb[0] == true);  // empty min of bool: true
  const bool no_bool_sum = GetReduceFn<bool>(ReduceKind::kSum) == nullptr;
  CHECK(no_bool_sum);
}

TEST_CASE("ArgMax / ArgMin: ties, select_last_index, NaN, columns") {
  const std::vector<float> x = {1, 5, 5, 0, 0, NAN, 2, NAN};
  int64_t y[2];
  ArgMax<float>(x.data(), 2, 4, 1, false, y, SerialParallel());
  CHECK(y[0] == 1);
  CHECK(y[1] == 1);  // first NaN
  ArgMax<float>(x.data(), 2, 4, 1, true, y, SerialParallel());
  CHECK(y[0] == 2);
  CHECK(y[1] == 3);  // last NaN
  ArgMin<float>(x.data(), 2, 4, 1, false, y, SerialParallel());
  CHECK(y[0] == 3);
  CHECK(y[1] == 1);
  const std::vector<int32_t> c = {3, 1, 3, 1, 2, 2};  // [3, 2] columns
  ArgMax<int32_t>(c.data(), 1, 3, 2, false, y, SerialParallel());
  CHECK(y[0] == 0);
  CHECK(y[1] == 2);
  ArgMax<int32_t>(c.data(), 1, 3, 2, true, y, SerialParallel());
  CHECK(y[0] == 1);
  CHECK(y[1] == 2);
  ArgMin<int32_t>(c.data(), 1, 3, 2, true, y, SerialParallel());
  CHECK(y[0] == 2);
  CHECK(y[1] == 1);
}

TEST_CASE("CumSum: exclusive / reverse over rows and columns") {
  const std::vector<int64_t> x = {1, 2, 3, 4, 5, 6};  // [1, 3, 2]
  std::vector<int64_t> y(6);
  CumSum<int64_t>(x.data(), 1, 3, 2, false, false, y.data(), SerialParallel());
  CHECK(y == std::vector<int64_t>{1, 2, 4, 6, 9, 12});
  CumSum<int64_t>(x.data(), 1, 3, 2, true, false, y.data(), SerialParallel());
  CHECK(y == std::vector<int64_t>{0, 0, 1, 2, 4, 6});
  CumSum<int64_t>(x.data(), 1, 3, 2, false, true, y.data(), SerialParallel());
  CHECK(y == std::vector<int64_t>{9, 12, 8, 10, 5, 6});
  CumSum<int64_t>(x.data(), 1, 3, 2, true, true, y.data(), SerialParallel());
  CHECK(y == std::vector<int64_t>{8, 10, 5, 6, 0, 0});
  CumSum<int64_t>(x.data(), 3, 2, 1, false, false, y.data(), SerialParallel());
  CHECK(y == std::vector<int64_t>{1, 3, 3, 7, 5, 11});
}

TEST_CASE("TopK: ties by lower index, largest / smallest, NaN order, columns") {
  const std::vector<float> x = {3, 1, 3, NAN, 2, 1};
  std::vector<float> v(4);
  std::vector<int64_t> idx(4);
  TopK<float>(x.data(), 1, 6, 1, 4, true, v.data(), idx.data(), SerialParallel());
  CHECK(std::isnan(v[0]));
  CHECK(idx == std::vector<int64_t>{3, 0, 2, 4});
  TopK<float>(x.data(), 1, 6, 1, 4, false, v.data(), idx.data(), SerialParallel());
  CHECK(idx == std::vector<int64_t>{1, 5, 4, 0});
  CHECK(v == std::vector<float>{1, 1, 2, 3});
  // Columns: x is [3, 2], k = 2 along the middle axis.
  const std::vector<int64_t> c = {5, 1, 5, 9, 4, 1};
  std::vector<int64_t> cv(4), ci(4);
  TopK<int64_t>(c.data(), 1, 3, 2, 2, true, cv.data(), ci.data(), SerialParallel());
  CHECK(cv == std::vector<int64_t>{5, 9, 5, 1});
  CHECK(ci == std::vector<int64_t>{0, 1, 1, 0});
  // k == n sorts everything; k == 0 writes nothing.
  std::vector<int64_t> all(3), alli(3);
  const std::vector<int64_t> s = {2, 2, 2};
  TopK<int64_t>(s.data(), 1, 3, 1, 3, true, all.data(), alli.data(), SerialParallel());
  CHECK(alli == std::vector<int64_t>{0, 1, 2});
  TopK<int64_t>(s.data(), 1, 3, 1, 0, true, nullptr, nullptr, SerialParallel());
}

}  // namespace
}  // namespace simplecpp::kernels
