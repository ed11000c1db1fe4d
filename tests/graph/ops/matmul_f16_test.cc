// MatMul / Gemm with 16-bit constant weights and few rows of A (the kernels/gemm/gemv_f16.h path,
// weights kept 16-bit): against a double reference with a stated tolerance, bit-identical to the
// same node with a runtime B (the float32 GEMM on 16-bit storage) and to itself for 1, 2, 3 and 8
// threads, float16 and bfloat16, odd sizes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"

namespace simplecpp::testing {
namespace {

using kernels::Float16Kind;

Float16Kind KindOf(DType dt) {
  return dt == DType::kBFloat16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
}

Tensor Random16(DType dt, Dims dims, uint32_t seed) {
  Tensor t(dt, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.data<uint16_t>()[i] = kernels::Narrow16One(KindOf(dt), dist(rng));
  }
  return t;
}

double At(const Tensor& t, int64_t i) {
  return kernels::Widen16One(KindOf(t.dtype()), t.data<uint16_t>()[i]);
}

bool SameBits(const Tensor& x, const Tensor& y) {
  return x.dtype() == y.dtype() && x.dims() == y.dims() &&
         std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.num_elements()) * 2) == 0;
}

// Runs the node with B constant (threads 1, 2, 3, 8) and with B a runtime input; all must agree
// bit for bit. Returns the constant-B result.
Tensor RunAll(const std::string& op, const std::vector<Tensor>& in,
              const std::vector<graph::Attribute>& attrs) {
  RunNodeOptions o;
  o.constant_inputs = {1};
  const Tensor first = RunNode(op, in, attrs, o)[0];
  for (int threads : {2, 3, 8}) {
    CAPTURE(threads);
    o.threads = threads;
    CHECK(SameBits(RunNode(op, in, attrs, o)[0], first));
  }
  CHECK(SameBits(RunNode(op, in, attrs)[0], first));
  return first;
}

// |y - ref| <= K * 2^-23 * sum|a*b| (float32 chain) + half an ulp of the 16-bit output.
void CheckClose(double got, double ref, double mag, int64_t k, DType dt, bool* ok) {
  const double ulp16 = dt == DType::kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  const double tol = (k + 2) * std::ldexp(mag, -23) + ulp16 * std::fabs(ref) + 1e-7;
  if (std::fabs(got - ref) > tol && *ok) {
    CHECK(got == doctest::Approx(ref));
    *ok = false;
  }
}

TEST_CASE("MatMul with 16-bit constant weights and few rows (weights kept 16-bit)") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    struct S {
      Dims a;
      int64_t n;
    };
    // Rows = product of A's leading dims: 1, 6, 8 (the 16-bit path) and 9 (the float32 GEMM).
    for (const S& s : std::vector<S>{{{17}, 16},
                                     {{1, 4095}, 17},
                                     {{2, 3, 33}, 130},
                                     {{8, 64}, 65},
                                     {{9, 19}, 100},
                                     {{1, 1, 3}, 200}}) {
      CAPTURE(DimsToString(s.a));
      CAPTURE(s.n);
      const int64_t k = s.a.back();
      const Tensor a = Random16(dt, s.a, 1);
      const Tensor b = Random16(dt, {k, s.n}, 2);
      const Tensor y = RunAll("MatMul", {a, b}, {});
      REQUIRE(y.dtype() == dt);
      const int64_t rows = a.num_elements() / k;
      REQUIRE(y.num_elements() == rows * s.n);
      bool ok = true;
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double ref = 0.0, mag = 0.0;
          for (int64_t kk = 0; kk < k; ++kk) {
            const double p = At(a, i * k + kk) * At(b, kk * s.n + j);
            ref += p;
            mag += std::fabs(p);
          }
          CheckClose(At(y, i * s.n + j), ref, mag, k, dt, &ok);
        }
      }
      CHECK(ok);
    }
  }
}

TEST_CASE("Gemm with 16-bit constant weights and few rows: transposes, alpha/beta, C shapes") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    struct S {
      int64_t m, k, n;
      bool ta, tb;
      Dims c;
      float alpha, beta;
    };
    for (const S& s : std::vector<S>{{1, 100, 33, false, true, {33}, 1.0f, 1.0f},
                                     {3, 17, 64, true, false, {3, 1}, 1.0f, 1.0f},
                                     {5, 40, 70, true, true, {5, 70}, 0.5f, -1.5f},
                                     {8, 3, 16, false, false, {}, 2.0f, 0.0f},
                                     {2, 64, 130, false, true, {1}, 1.0f, 0.25f}}) {
      CAPTURE(s.m);
      CAPTURE(s.k);
      CAPTURE(s.n);
      CAPTURE(s.ta);
      CAPTURE(s.tb);
      const Tensor a = Random16(dt, s.ta ? Dims{s.k, s.m} : Dims{s.m, s.k}, 3);
      const Tensor b = Random16(dt, s.tb ? Dims{s.n, s.k} : Dims{s.k, s.n}, 4);
      std::vector<Tensor> in = {a, b};
      const bool has_c = !s.c.empty();
      if (has_c) in.push_back(Random16(dt, s.c, 5));
      const std::vector<graph::Attribute> attrs = {AttrInt("transA", s.ta), AttrInt("transB", s.tb),
                                                   AttrFloat("alpha", s.alpha),
                                                   AttrFloat("beta", s.beta)};
      const Tensor y = RunAll("Gemm", in, attrs);
      REQUIRE(y.dims() == Dims{s.m, s.n});
      bool ok = true;
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double ref = 0.0, mag = 0.0;
          for (int64_t kk = 0; kk < s.k; ++kk) {
            const double p = At(a, s.ta ? kk * s.m + i : i * s.k + kk) *
                             At(b, s.tb ? j * s.k + kk : kk * s.n + j);
            ref += p;
            mag += std::fabs(p);
          }
          ref *= s.alpha;
          mag *= std::fabs(s.alpha);
          if (has_c) {
            const Dims& dc = s.c;
            const int64_t rows = dc.size() == 2 ? dc[0] : 1, cols = dc.back();
            const double cv = At(in[2], (rows == 1 ? 0 : i * cols) + (cols == 1 ? 0 : j));
            ref += s.beta * cv;
            mag += std::fabs(s.beta * cv);
          }
          CheckClose(At(y, i * s.n + j), ref, mag, s.k, dt, &ok);
        }
      }
      CHECK(ok);
    }
  }
}

}  // namespace
}  // namespace simplecpp::testing
