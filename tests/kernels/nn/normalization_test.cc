// Tests for kernels/nn/normalization.cc on every compiled Highway target against scalar double
// references: row normalization in its LayerNorm / InstanceNorm / GroupNorm shapes (odd sizes,
// rows of 768, large offsets), channel affine / statistics, MVN, LpNormalization, LRN.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/nn/normalization.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Reference for NormalizeRows.
void RefNormalizeRows(const std::vector<float>& x, std::vector<double>& y, int64_t rows,
                      int64_t channels, int64_t spatial, int64_t period, const float* scale,
                      const float* bias, double eps, std::vector<double>& mean,
                      std::vector<double>& inv) {
  const int64_t len = channels * spatial;
  y.assign(x.size(), 0.0);
  mean.assign(rows, 0.0);
  inv.assign(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t i = 0; i < len; ++i) s += x[r * len + i];
    const double m = s / len;
    double q = 0;
    for (int64_t i = 0; i < len; ++i) q += (x[r * len + i] - m) * (x[r * len + i] - m);
    const double is = 1.0 / std::sqrt(q / len + eps);
    mean[r] = m;
    inv[r] = is;
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t pc = (r % period) * channels + c;
      for (int64_t k = 0; k < spatial; ++k) {
        const int64_t i = r * len + c * spatial + k;
        y[i] = (x[i] - m) * is * (scale ? scale[pc] : 1.0) + (bias ? bias[pc] : 0.0);
      }
    }
  }
}

void CheckClose(const float* got, const double* want, size_t n, double tol) {
  for (size_t i = 0; i < n; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(err <= tol * (1.0 + std::fabs(want[i])))) {
      FAIL_CHECK("index " << i << ": got " << got[i] << ", want " << want[i]);
      return;
    }
  }
}

struct RowCase {
  int64_t rows, channels, spatial, period;
};

TEST_CASE("NormalizeRowsF32 matches a double reference") {
  const RowCase cases[] = {
      {1, 1, 1, 1},   {3, 1, 1, 1},     {2, 3, 1, 1},   {4, 17, 1, 1},  {5, 768, 1, 1},
      {3, 15, 1, 1},  {2, 16, 1, 1},    {2, 33, 1, 1},  {6, 1, 17, 3},  {6, 1, 1, 3},
      {4, 1, 64, 2},  {6, 4, 5, 3},     {4, 8, 31, 2},  {2, 3, 1000, 1},
  };
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 11;
    for (const RowCase& c : cases) {
      CAPTURE(c.rows);
      CAPTURE(c.channels);
      CAPTURE(c.spatial);
      const int64_t len = c.channels * c.spatial;
      const auto x = Random(static_cast<size_t>(c.rows * len), seed++, -3.0f, 5.0f);
      const auto scale = Random(static_cast<size_t>(c.period * c.channels), seed++, 0.5f, 2.0f);
      const auto bias = Random(static_cast<size_t>(c.period * c.channels), seed++, -1.0f, 1.0f);
      for (int variant = 0; variant < 2; ++variant) {
        const float* s = variant == 0 ? scale.data() : nullptr;
        const float* b = variant == 0 ? bias.data() : nullptr;
        std::vector<float> y(x.size()), mean(c.rows), inv(c.rows);
        NormalizeRowsF32(x.data(), y.data(), c.rows, c.channels, c.spatial, c.period, s, b, 1e-5f,
                         mean.data(), inv.data(), SerialParallel());
        std::vector<double> want, want_mean, want_inv;
        RefNormalizeRows(x, want, c.rows, c.channels, c.spatial, c.period, s, b, 1e-5f, want_mean,
                         want_inv);
        CheckClose(y.data(), want.data(), y.size(), 1e-6);
        CheckClose(mean.data(), want_mean.data(), mean.size(), 1e-6);
        for (int64_t r = 0; r < c.rows; ++r) {
          CHECK(inv[r] == doctest::Approx(want_inv[r]).epsilon(1e-6));
        }
      }
    }
  }
}

TEST_CASE("NormalizeRowsF32 keeps precision with a large mean") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    auto x = Random(768 * 2, 5, -1.0f, 1.0f);
    for (auto& v : x) v += 1000.0f;
    std::vector<float> y(x.size());
    NormalizeRowsF32(x.data(), y.data(), 2, 768, 1, 1, nullptr, nullptr, 1e-5f, nullptr, nullptr,
                     SerialParallel());
    std::vector<double> want, m, inv;
    RefNormalizeRows(x, want, 2, 768, 1, 1, nullptr, nullptr, 1e-5f, m, inv);
    CheckClose(y.data(), want.data(), y.size(), 1e-6);
  }
}

TEST_CASE("NormalizeRowsF64") {
  const auto xf = Random(3 * 4 * 7, 3, -2.0f, 2.0f);
  const auto sf = Random(3 * 4, 4, 0.5f, 2.0f), bf = Random(3 * 4, 5, -1.0f, 1.0f);
  std::vector<double> x(xf.begin(), xf.end()), s(sf.begin(), sf.end()), b(bf.begin(), bf.end());
  std::vector<double> y(x.size()), mean(3), inv(3);
  NormalizeRowsF64(x.data(), y.data(), 3, 4, 7, 3, s.data(), b.data(), 1e-5f, mean.data(),
                   inv.data(), SerialParallel());
  std::vector<double> want, wm, wi;
  RefNormalizeRows(xf, want, 3, 4, 7, 3, sf.data(), bf.data(), 1e-5f, wm, wi);
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-12));
  for (size_t r = 0; r < 3; ++r) CHECK(mean[r] == doctest::Approx(wm[r]).epsilon(1e-12));
}

TEST_CASE("ChannelAffineF32 / ChannelMeanVarF32") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t inner : {1, 3, 16, 17, 100}) {
      for (int64_t channels : {1, 3, 17, 33}) {
        CAPTURE(inner);
        CAPTURE(channels);
        const int64_t outer = 3;
        const auto x = Random(static_cast<size_t>(outer * channels * inner), 1, -4.0f, 4.0f);
        const auto center = Random(channels, 2, -1.0f, 1.0f);
        const auto mul = Random(channels, 3, 0.5f, 2.0f);
        const auto add = Random(channels, 4, -1.0f, 1.0f);
        std::vector<float> y(x.size());
        ChannelAffineF32(x.data(), y.data(), outer, channels, inner, center.data(), mul.data(),
                         add.data(), SerialParallel());
        std::vector<double> want(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
          want[i] = (static_cast<double>(x[i]) - center[c]) * mul[c] + add[c];
        }
        CheckClose(y.data(), want.data(), y.size(), 1e-6);

        std::vector<double> mean(channels), var(channels);
        ChannelMeanVarF32(x.data(), outer, channels, inner, mean.data(), var.data(),
                          SerialParallel());
        for (int64_t c = 0; c < channels; ++c) {
          double s = 0, q = 0;
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t k = 0; k < inner; ++k) s += x[(o * channels + c) * inner + k];
          }
          const double m = s / (outer * inner);
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t k = 0; k < inner; ++k) {
              const double d = x[(o * channels + c) * inner + k] - m;
              q += d * d;
            }
          }
          CHECK(mean[c] == doctest::Approx(m).epsilon(1e-12));
          CHECK(var[c] == doctest::Approx(q / (outer * inner)).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("MeanVarianceNormalizeF32 over arbitrary axes") {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  const auto x = Random(120, 8, -2.0f, 3.0f);
  for (std::vector<bool> reduce :
       {std::vector<bool>{true, false, true, true}, std::vector<bool>{false, true, false, true},
        std::vector<bool>{true, true, true, true}, std::vector<bool>{false, false, false, true}}) {
    std::vector<float> y(120);
    MeanVarianceNormalizeF32(x.data(), y.data(), dims, reduce, 1e-9, SerialParallel());
    // Reference: statistics keyed by the kept coordinates.
    std::vector<double> sum(120, 0), sq(120, 0), cnt(120, 0);
    auto key = [&](int64_t i) {
      int64_t c[4] = {i / 60, (i / 20) % 3, (i / 5) % 4, i % 5};
      int64_t k = 0;
      for (int a = 0; a < 4; ++a) k = k * dims[a] + (reduce[a] ? 0 : c[a]);
      return k;
    };
    for (int64_t i = 0; i < 120; ++i) {
      sum[key(i)] += x[i];
      cnt[key(i)] += 1;
    }
    for (int64_t i = 0; i < 120; ++i) {
      const double d = x[i] - sum[key(i)] / cnt[key(i)];
      sq[key(i)] += d * d;
    }
    for (int64_t i = 0; i < 120; ++i) {
      const double k = key(i);
      const double want =
          (x[i] - sum[k] / cnt[k]) / (std::sqrt(sq[k] / cnt[k]) + 1e-9);
      CHECK(y[i] == doctest::Approx(want).epsilon(1e-5));
    }
  }
}

TEST_CASE("LpNormalizeF32 and LrnF32") {
  const auto x = Random(2 * 5 * 7, 12, -2.0f, 2.0f);
  for (int p : {1, 2}) {
    std::vector<float> y(x.size());
    LpNormalizeF32(x.data(), y.data(), 2, 5, 7, p, SerialParallel());
    for (int64_t o = 0; o < 2; ++o) {
      for (int64_t j = 0; j < 7; ++j) {
        double norm = 0;
        for (int64_t k = 0; k < 5; ++k) {
          const double v = x[(o * 5 + k) * 7 + j];
          norm += p == 1 ? std::fabs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < 5; ++k) {
          const int64_t i = (o * 5 + k) * 7 + j;
          CHECK(y[i] == doctest::Approx(x[i] / norm).epsilon(1e-6));
        }
      }
    }
  }
  // LRN over [N 2, C 5, spatial 7], sizes 1..4 (even sizes have an asymmetric window).
  for (int64_t size : {1, 2, 3, 4}) {
    std::vector<float> y(x.size());
    LrnF32(x.data(), y.data(), 2, 5, 7, size, 1e-2f, 0.75f, 1.5f, SerialParallel());
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t c = 0; c < 5; ++c) {
        for (int64_t s = 0; s < 7; ++s) {
          double sq = 0;
          const int64_t lo = std::max<int64_t>(0, c - (size - 1) / 2);
          const int64_t hi = std::min<int64_t>(4, c + (size - 1 + 1) / 2);
          for (int64_t i = lo; i <= hi; ++i) sq += std::pow(x[(n * 5 + i) * 7 + s], 2);
          const int64_t idx = (n * 5 + c) * 7 + s;
          const double want = x[idx] / std::pow(1.5 + 1e-2 / size * sq, 0.75);
          CHECK(y[idx] == doctest::Approx(want).epsilon(1e-6));
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
