// Tests for kernels/nn/attention.cc on every compiled Highway target: RMS normalization rows,
// rotary embedding rows and attention with softcap, over sizes around the vector width (tails),
// against scalar double references.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/nn/attention.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

std::vector<float> Pseudo(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

bool Close(double got, double want, double tol) {
  return std::fabs(got - want) <= tol * (1 + std::fabs(want));
}

TEST_CASE("RmsNormalizeRows float32 over sizes and targets") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 33, 64, 65}) {
      CAPTURE(n);
      const int64_t rows = 3;
      const auto x = Pseudo(static_cast<size_t>(rows * n), static_cast<uint32_t>(n), -4, 4);
      const auto scale = Pseudo(static_cast<size_t>(n), 7);
      std::vector<float> y(x.size());
      RmsNormalizeRows(FloatStorage::kF32, x.data(), FloatStorage::kF32, y.data(), rows, n,
                       scale.data(), 1e-5f, SerialParallel());
      for (int64_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (int64_t j = 0; j < n; ++j) ss += double(x[r * n + j]) * x[r * n + j];
        const double inv = 1.0 / std::sqrt(ss / n + 1e-5);
        for (int64_t j = 0; j < n; ++j) {
          REQUIRE(Close(y[r * n + j], x[r * n + j] * inv * scale[j], 1e-5));
        }
      }
    }
  }
}

TEST_CASE("RotaryEmbedding float32 rows over sizes and targets, in place") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t half : {1, 3, 4, 8, 9, 17}) {
      for (bool interleaved : {false, true}) {
        CAPTURE(half);
        CAPTURE(interleaved);
        const int64_t D = 2 * half + 3, heads = 2, seq = 3;  // 3 elements not rotated
        auto x = Pseudo(static_cast<size_t>(seq * heads * D), static_cast<uint32_t>(half));
        const auto c = Pseudo(static_cast<size_t>(seq * half), 11);
        const auto s = Pseudo(static_cast<size_t>(seq * half), 12);
        const auto x0 = x;
        const int64_t stride[3] = {seq * heads * D, heads * D, D};  // [B=1, S, H, D]
        REQUIRE(RotaryEmbedding(FloatStorage::kF32, x.data(), x.data(), c.data(), s.data(),
                                nullptr, 0, 1, seq, heads, D, 2 * half, interleaved, stride,
                                SerialParallel()) == -1);
        for (int64_t q = 0; q < seq; ++q)
          for (int64_t h = 0; h < heads; ++h) {
            const float* in = x0.data() + (q * heads + h) * D;
            const float* out = x.data() + (q * heads + h) * D;
            for (int64_t k = 0; k < half; ++k) {
              const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
              const double cc = c[q * half + k], ss = s[q * half + k];
              REQUIRE(Close(out[i1], cc * in[i1] - ss * in[i2], 1e-6));
              REQUIRE(Close(out[i2], ss * in[i1] + cc * in[i2], 1e-6));
            }
            for (int64_t d = 2 * half; d < D; ++d) REQUIRE(out[d] == in[d]);
          }
      }
    }
  }
}

TEST_CASE("AttentionForward with softcap over key counts and targets") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t T : {1, 3, 7, 8, 9, 16, 17, 40}) {
      CAPTURE(T);
      const int64_t S = 5, D = 6, Dv = 3;
      const auto q = Pseudo(static_cast<size_t>(S * D), 21, -2, 2);
      const auto k = Pseudo(static_cast<size_t>(T * D), 22, -2, 2);
      const auto v = Pseudo(static_cast<size_t>(T * Dv), 23);
      std::vector<float> y(static_cast<size_t>(S * Dv)), qk(static_cast<size_t>(S * T));
      AttentionArgs a;
      a.batch = a.q_heads = a.kv_heads = 1;
      a.q_len = S;
      a.kv_len = T;
      a.head_size = D;
      a.v_head_size = Dv;
      a.q = q.data();
      a.k = k.data();
      a.v = v.data();
      a.y = y.data();
      a.q_stride[2] = a.k_stride[2] = D;
      a.v_stride[2] = a.y_stride[2] = Dv;
      a.scale = 0.5f;
      a.softcap = 1.25f;
      a.qk_out = qk.data();
      a.qk_stage = AttentionQkStage::kSoftcapped;
      AttentionForward(a, SerialParallel());
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> s(static_cast<size_t>(T));
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < T; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < D; ++d) acc += double(q[i * D + d]) * k[j * D + d];
          s[j] = 1.25 * std::tanh(acc * 0.5 / 1.25);
          REQUIRE(Close(qk[i * T + j], s[j], 1e-5));
          m = std::max(m, s[j]);
        }
        for (auto& e : s) sum += (e = std::exp(e - m));
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < T; ++j) acc += s[j] / sum * v[j * Dv + d];
          REQUIRE(Close(y[i * Dv + d], acc, 1e-5));
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
