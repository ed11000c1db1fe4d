// Tests for kernels/nn/recurrent.cc on every compiled Highway target: the gate activation with sum
// and clip for every activation kind, MulAdd/Mul, the LSTM cell update (with and without the
// coupled forget gate) and the GRU update, over sizes around the vector widths, misaligned
// pointers, NaN passing through, against scalar double formulas (and the float64 entry points).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/nn/recurrent.h"
#include "kernels/targets.h"
#include "reference/recurrent_reference.h"

namespace simplecpp::kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

const char* KindName(RnnActivationKind k) {
  switch (k) {
    case RnnActivationKind::kRelu: return "Relu";
    case RnnActivationKind::kTanh: return "Tanh";
    case RnnActivationKind::kSigmoid: return "Sigmoid";
    case RnnActivationKind::kAffine: return "Affine";
    case RnnActivationKind::kLeakyRelu: return "LeakyRelu";
    case RnnActivationKind::kThresholdedRelu: return "ThresholdedRelu";
    case RnnActivationKind::kScaledTanh: return "ScaledTanh";
    case RnnActivationKind::kHardSigmoid: return "HardSigmoid";
    case RnnActivationKind::kElu: return "Elu";
    case RnnActivationKind::kSoftsign: return "Softsign";
    case RnnActivationKind::kSoftplus: return "Softplus";
  }
  return "?";
}

const int64_t kSizes[] = {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100};

TEST_CASE("RnnGateF32: every activation, with and without b and clip, every target") {
  const RnnActivationKind kinds[] = {
      RnnActivationKind::kRelu,        RnnActivationKind::kTanh,
      RnnActivationKind::kSigmoid,     RnnActivationKind::kAffine,
      RnnActivationKind::kLeakyRelu,   RnnActivationKind::kThresholdedRelu,
      RnnActivationKind::kScaledTanh,  RnnActivationKind::kHardSigmoid,
      RnnActivationKind::kElu,         RnnActivationKind::kSoftsign,
      RnnActivationKind::kSoftplus};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (RnnActivationKind kind : kinds) {
      CAPTURE(KindName(kind));
      const RnnActivation act{kind, 0.6f, 0.4f};
      const testing::reference::RefActivation ref{KindName(kind), 0.6f, 0.4f};
      for (int64_t n : kSizes) {
        CAPTURE(n);
        for (int variant = 0; variant < 3; ++variant) {
          const bool with_b = variant != 1;
          const float clip = variant == 2 ? 0.7f : 0.0f;
          const auto a = Random(static_cast<size_t>(n) + 1, 1 + n, -3.0f, 3.0f);
          const auto b = Random(static_cast<size_t>(n) + 1, 2 + n, -1.0f, 1.0f);
          std::vector<float> y(static_cast<size_t>(n) + 1, -99.0f);
          // Offset by one float: misaligned.
          RnnGateF32(act, clip, a.data() + 1, with_b ? b.data() + 1 : nullptr, y.data() + 1, n);
          CHECK(y[0] == -99.0f);
          std::vector<double> a64(a.begin(), a.end()), b64(b.begin(), b.end()), y64(a.size());
          RnnGateF64(act, clip, a64.data() + 1, with_b ? b64.data() + 1 : nullptr, y64.data() + 1, n);
          for (int64_t i = 1; i <= n; ++i) {
            double v = double{a[i]} + (with_b ? double{b[i]} : 0.0);
            if (clip > 0) v = std::min<double>(clip, std::max<double>(-clip, v));
            const double want = testing::reference::RefActivate(ref, v);
            CHECK(y[i] == doctest::Approx(want).epsilon(2e-6).scale(1.0));
            CHECK(y64[i] == doctest::Approx(want).epsilon(1e-12).scale(1.0));
          }
        }
      }
    }
  }
}

TEST_CASE("RnnGateF32: in place, NaN passes through the clip") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<float> a = Random(19, 5, -2.0f, 2.0f);
    a[3] = NAN;
    std::vector<float> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = std::tanh(std::min(1.0f, std::max(-1.0f, a[i])));
    RnnGateF32({RnnActivationKind::kTanh, 0, 0}, 1.0f, a.data(), nullptr, a.data(), 19);
    for (size_t i = 0; i < a.size(); ++i) {
      if (i == 3) {
        CHECK(std::isnan(a[i]));
      } else {
        CHECK(a[i] == doctest::Approx(want[i]).epsilon(2e-6));
      }
    }
  }
}

TEST_CASE("Rnn elementwise helpers: MulAdd, Mul, LstmCell, GruUpdate") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : kSizes) {
      CAPTURE(n);
      const size_t sz = static_cast<size_t>(n);
      const auto a = Random(sz, 10 + n, -1.0f, 1.0f);
      const auto b = Random(sz, 20 + n, -1.0f, 1.0f);
      const auto c0 = Random(sz, 30 + n, -1.0f, 1.0f);
      const auto g = Random(sz, 40 + n, -1.0f, 1.0f);

      std::vector<float> y = c0;
      RnnMulAddF32(a.data(), b.data(), y.data(), n);
      for (size_t i = 0; i < sz; ++i) CHECK(y[i] == doctest::Approx(c0[i] + a[i] * b[i]).epsilon(1e-6));
      RnnMulF32(a.data(), b.data(), y.data(), n);
      for (size_t i = 0; i < sz; ++i) CHECK(y[i] == doctest::Approx(a[i] * b[i]).epsilon(1e-6));

      for (bool coupled : {false, true}) {
        std::vector<float> c = c0;
        LstmCellF32(a.data(), coupled ? nullptr : b.data(), g.data(), c.data(), n);
        std::vector<double> cd(c0.begin(), c0.end()), ad(a.begin(), a.end()), bd(b.begin(), b.end()),
            gd(g.begin(), g.end());
        LstmCellF64(ad.data(), coupled ? nullptr : bd.data(), gd.data(), cd.data(), n);
        for (size_t i = 0; i < sz; ++i) {
          const double f = coupled ? 1.0 - a[i] : b[i];
          const double want = f * c0[i] + double{a[i]} * g[i];
          CHECK(c[i] == doctest::Approx(want).epsilon(1e-5).scale(1.0));
          CHECK(cd[i] == doctest::Approx(want).epsilon(1e-12));
        }
      }

      std::vector<float> h = c0;
      GruUpdateF32(a.data(), g.data(), h.data(), n);
      std::vector<double> hd(c0.begin(), c0.end()), ad(a.begin(), a.end()), gd(g.begin(), g.end());
      GruUpdateF64(ad.data(), gd.data(), hd.data(), n);
      for (size_t i = 0; i < sz; ++i) {
        const double want = (1.0 - a[i]) * g[i] + double{a[i]} * c0[i];
        CHECK(h[i] == doctest::Approx(want).epsilon(1e-5).scale(1.0));
        CHECK(hd[i] == doctest::Approx(want).epsilon(1e-12));
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
