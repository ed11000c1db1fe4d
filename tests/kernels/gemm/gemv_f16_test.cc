// Tests for kernels/gemm/gemv_f16.h: GemvPackedB16 (16-bit packed weights, small M) against a
// double reference with a stated tolerance over odd sizes, transposes, 16-bit A and C, and the
// epilogue; bit-identical to the float32 GEMM on the widened weights, to itself across thread
// counts, and exact for every float16 / bfloat16 weight pattern (Inf, NaN, subnormals), on every
// target.
#include "kernels/gemm/gemv_f16.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/parallel.h"
#include "reference/threads_parallel.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using ThreadsParallel = test_util::ThreadsParallel;

std::vector<uint16_t> Random16(Float16Kind kind, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = Narrow16One(kind, dist(rng));
  return v;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct Case {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

// op(B)(kk, j) of a raw 16-bit B stored as the case says (ldb = row length as stored).
float BAt(Float16Kind kind, const std::vector<uint16_t>& b, const Case& c, int64_t kk, int64_t j) {
  return Widen16One(kind, c.trans_b ? b[j * c.k + kk] : b[kk * c.n + j]);
}

TEST_CASE("GemvPackedB16: odd sizes against a double reference, every target, f16 and bf16") {
  // Tolerance: a float32 multiply-add chain of K terms is within K * 2^-24 (relative, with
  // fused or rounded products) of the exact sum of |a_k * b_k|, plus the epilogue's roundings.
  const std::vector<Case> cases = {
      {1, 1, 1, false, false},    {1, 3, 17, false, true},   {2, 17, 3, true, false},
      {3, 64, 5, false, false},   {4, 65, 33, true, true},   {5, 130, 7, false, true},
      {8, 17, 64, false, false},  {9, 70, 19, true, false},  {1, 4095, 3, false, false},
      {1, 19, 4095, false, true}, {7, 129, 0, false, false}, {6, 200, 100, false, false},
  };
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
      CAPTURE(static_cast<int>(kind));
      for (const Case& c : cases) {
        CAPTURE(c.m);
        CAPTURE(c.n);
        CAPTURE(c.k);
        CAPTURE(c.trans_a);
        CAPTURE(c.trans_b);
        const auto a16 = Random16(kind, c.m * c.k, 11);
        const auto b16 = Random16(kind, c.k * c.n, 12);
        const auto packed =
            PackedB16::Pack(kind, c.trans_b, c.k, c.n, b16.data(), c.trans_b ? c.k : c.n);
        REQUIRE(packed->k() == c.k);
        REQUIRE(packed->n() == c.n);
        const int64_t lda = c.trans_a ? c.m : c.k;
        const int64_t ldc = c.n + 3;  // padded rows: the gap must stay untouched
        std::vector<float> out(static_cast<size_t>(c.m * ldc), 7.0f);
        const GemmType t16 = GemmTypeOf(kind);
        GemvPackedB16(t16, GemmType::kF32, c.trans_a, c.m, 1.0f, a16.data(), lda, *packed, 0.0f,
                      out.data(), ldc, SerialParallel());
        bool ok = true;
        for (int64_t i = 0; i < c.m && ok; ++i) {
          for (int64_t j = 0; j < c.n && ok; ++j) {
            double ref = 0.0, mag = 0.0;
            for (int64_t kk = 0; kk < c.k; ++kk) {
              const double av = Widen16One(kind, c.trans_a ? a16[kk * c.m + i] : a16[i * c.k + kk]);
              const double p = av * BAt(kind, b16, c, kk, j);
              ref += p;
              mag += std::fabs(p);
            }
            const double tol = (static_cast<double>(c.k) + 1.0) * std::ldexp(mag, -23) + 1e-30;
            const double got = out[i * ldc + j];
            if (std::fabs(got - ref) > tol) {
              CAPTURE(i);
              CAPTURE(j);
              CHECK(got == doctest::Approx(ref));
              ok = false;
            }
          }
          for (int64_t j = c.n; j < ldc; ++j) ok = ok && out[i * ldc + j] == 7.0f;
        }
        CHECK(ok);
        // 16-bit C (and a float32 A): the float32 result rounded once.
        std::vector<float> a32(a16.size());
        for (size_t i = 0; i < a16.size(); ++i) a32[i] = Widen16One(kind, a16[i]);
        std::vector<uint16_t> out16(static_cast<size_t>(c.m * ldc), 0x1234);
        GemvPackedB16(GemmType::kF32, t16, c.trans_a, c.m, 1.0f, a32.data(), lda, *packed, 0.0f,
                      out16.data(), ldc, SerialParallel());
        for (int64_t i = 0; i < c.m && ok; ++i) {
          for (int64_t j = 0; j < c.n; ++j) {
            ok = ok && out16[i * ldc + j] == Narrow16One(kind, out[i * ldc + j]);
          }
          for (int64_t j = c.n; j < ldc; ++j) ok = ok && out16[i * ldc + j] == 0x1234;
        }
        CHECK(ok);
      }
    }
  }
}

TEST_CASE("GemvPackedB16 equals the float32 GEMM on widened weights bit for bit, epilogues") {
  struct E {
    float alpha, beta;
    bool row_bias, col_bias, clamp;
  };
  const std::vector<E> epis = {{1.0f, 0.0f, false, false, false},
                               {0.5f, 0.0f, false, true, false},
                               {1.0f, 1.0f, true, false, true},
                               {-2.0f, 0.75f, true, true, true}};
  const std::vector<Case> cases = {
      {1, 33, 57, false, true}, {3, 100, 40, true, false}, {8, 130, 65, false, false}};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
      const GemmType t16 = GemmTypeOf(kind);
      for (const Case& c : cases) {
        CAPTURE(c.m);
        CAPTURE(c.n);
        const auto a16 = Random16(kind, c.m * c.k, 21);
        const auto b16 = Random16(kind, c.k * c.n, 22);
        const int64_t lda = c.trans_a ? c.m : c.k, ldb = c.trans_b ? c.k : c.n;
        const auto p16 = PackedB16::Pack(kind, c.trans_b, c.k, c.n, b16.data(), ldb);
        const auto p32 = PackedBF32::Pack16(kind, c.trans_b, c.k, c.n, b16.data(), ldb);
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> rb(static_cast<size_t>(c.m)), cb(static_cast<size_t>(c.n));
        for (auto& x : rb) x = dist(rng);
        for (auto& x : cb) x = dist(rng);
        std::vector<float> c0(static_cast<size_t>(c.m * c.n));
        for (auto& x : c0) x = dist(rng);
        std::vector<uint16_t> c0_16(c0.size());
        for (size_t i = 0; i < c0.size(); ++i) c0_16[i] = Narrow16One(kind, c0[i]);
        for (const E& e : epis) {
          GemmEpilogue ep;
          ep.row_bias = e.row_bias ? rb.data() : nullptr;
          ep.col_bias = e.col_bias ? cb.data() : nullptr;
          ep.clamp = e.clamp;
          ep.clamp_lo = -0.25f;
          ep.clamp_hi = 0.5f;
          for (GemmType tc : {GemmType::kF32, t16}) {
            CAPTURE(e.alpha);
            CAPTURE(e.beta);
            CAPTURE(static_cast<int>(tc));
            const bool f32 = tc == GemmType::kF32;
            std::vector<float> x32 = c0, y32 = c0;
            std::vector<uint16_t> x16 = c0_16, y16 = c0_16;
            void* x = f32 ? static_cast<void*>(x32.data()) : x16.data();
            void* y = f32 ? static_cast<void*>(y32.data()) : y16.data();
            GemvPackedB16(t16, tc, c.trans_a, c.m, e.alpha, a16.data(), lda, *p16, e.beta, x, c.n,
                          SerialParallel(), ep);
            GemmPackedBMixed(t16, tc, c.trans_a, c.m, e.alpha, a16.data(), lda, *p32, e.beta, y,
                             c.n, SerialParallel(), ep);
            bool same = true;
            for (size_t i = 0; i < x32.size(); ++i) {
              same = same && (f32 ? Bits(x32[i]) == Bits(y32[i]) : x16[i] == y16[i]);
            }
            CHECK(same);
          }
        }
      }
    }
  }
}

TEST_CASE("GemvPackedB16 is byte-identical for 1, 2, 3 and 8 threads") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
      for (int64_t m : {1, 5}) {  // one row takes the paired-panel tile on AVX-512
        CAPTURE(m);
        const GemmType t16 = GemmTypeOf(kind);
        const int64_t n = 1000, k = 77;
        const auto a16 = Random16(kind, m * k, 31);
        const auto b16 = Random16(kind, k * n, 32);
        const auto packed = PackedB16::Pack(kind, true, k, n, b16.data(), k);
        std::vector<uint16_t> ref(static_cast<size_t>(m * n));
        GemvPackedB16(t16, t16, false, m, 1.0f, a16.data(), k, *packed, 0.0f, ref.data(), n,
                      SerialParallel());
        for (int threads : {1, 2, 3, 8}) {
          CAPTURE(threads);
          ThreadsParallel par(threads);
          std::vector<uint16_t> out(ref.size(), 0);
          GemvPackedB16(t16, t16, false, m, 1.0f, a16.data(), k, *packed, 0.0f, out.data(), n, par);
          CHECK(out == ref);
        }
      }
    }
  }
}

TEST_CASE("GemvPackedB16 widens every 16-bit weight pattern exactly (Inf, NaN, subnormals)") {
  // K = 1, A = [1]: C[0, j] = fma(1, widen(b_j), 0) = widen(b_j) (with -0 becoming +0).
  std::vector<uint16_t> b(65536);
  for (uint32_t i = 0; i < 65536; ++i) b[i] = static_cast<uint16_t>(i);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
      CAPTURE(static_cast<int>(kind));
      const auto packed = PackedB16::Pack(kind, false, 1, 65536, b.data(), 65536);
      const float one = 1.0f;
      std::vector<float> out(65536);
      GemvPackedB16(GemmType::kF32, GemmType::kF32, false, 1, 1.0f, &one, 1, *packed, 0.0f,
                    out.data(), 65536, SerialParallel());
      int bad = 0;
      for (uint32_t i = 0; i < 65536; ++i) {
        const float want = Widen16One(kind, static_cast<uint16_t>(i));
        const bool ok = std::isnan(want) ? std::isnan(out[i]) : out[i] == want;
        if (!ok && bad++ < 3) {
          CAPTURE(i);
          CHECK(out[i] == want);
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("PackedB16 layout: At reads op(B) back, both transposes") {
  const int64_t k = 5, n = 70;
  const auto b = Random16(Float16Kind::kHalf, k * n, 41);
  const auto p0 = PackedB16::Pack(Float16Kind::kHalf, false, k, n, b.data(), n);
  const auto p1 = PackedB16::Pack(Float16Kind::kHalf, true, n, k, b.data(), n);  // op(B) = B^T
  bool ok = true;
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) {
      ok = ok && p0->At(kk, j) == b[kk * n + j];
      ok = ok && p1->At(j, kk) == b[kk * n + j];
    }
  }
  CHECK(ok);
}

}  // namespace
}  // namespace simplecpp::kernels
