// The 16-bit (float16 / bfloat16 storage) paths of the elementwise, GEMM, softmax and im2col
// kernels, on every compiled target:
//   1. bit-exactness: each 16-bit kernel equals "widen to float32, run the float32 kernel, round
//      once to 16 bits" (the documented arithmetic), so no hidden extra rounding;
//   2. accuracy against a double reference computed on the same (16-bit) inputs, with tolerances
//      derived from the formats' machine epsilons (spacing at 1; rounding to nearest errs by at
//      most eps/2 relative):
//        eps32 = 2^-23 (float32; kEps32 below is its unit roundoff eps32/2 = 2^-24),
//        eps16 = 2^-10 (float16), 2^-7 (bfloat16);
//        elementwise:   |err| <= eps16/2 * |ref| * (1 + c) + tiny, c covering the float32
//                       kernel's own error (a few eps32 for +,-,*,/; a few ulp for exp/tanh...)
//        dot products:  |err| <= (K * eps32 + eps16/2) * sum_k |a_k b_k| + tiny
//                       (the float32 FMA chain's bound plus the final rounding to 16 bits),
//        softmax:       |err| <= (n * eps32 * 8 + eps16/2) * |ref| + tiny,
//      with tiny = the smallest subnormal of the 16-bit format (absolute error floor).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/nn/softmax.h"
#include "kernels/targets.h"
#include "reference/threads_parallel.h"

namespace {

using namespace simplecpp::kernels;

constexpr double kEps32 = 1.0 / (1 << 24);

struct Format {
  Float16Kind kind;
  const char* name;
  double eps;   // machine epsilon (spacing at 1): 2^-10 for float16, 2^-7 for bfloat16
  double tiny;  // smallest positive subnormal
};
const Format kFormats[] = {{Float16Kind::kHalf, "float16", 1.0 / 1024, std::ldexp(1.0, -24)},
                           {Float16Kind::kBFloat16, "bfloat16", 1.0 / 128, std::ldexp(1.0, -133)}};

uint32_t g_state = 12345;
float Rand(float lo, float hi) {
  g_state = g_state * 1664525u + 1013904223u;
  return lo + (hi - lo) * static_cast<float>(g_state >> 8) / 16777216.0f;
}

std::vector<uint16_t> Random16(Float16Kind kind, size_t n, float lo, float hi) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = Narrow16One(kind, Rand(lo, hi));
  return v;
}
std::vector<float> Widened(Float16Kind kind, const std::vector<uint16_t>& v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = Widen16One(kind, v[i]);
  return f;
}
std::vector<uint16_t> Narrowed(Float16Kind kind, const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = Narrow16One(kind, v[i]);
  return h;
}

TEST_CASE("Unary16 / Binary16 / Compare16 / Clip16 equal the float32 kernels rounded once") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Format& f : kFormats) {
      CAPTURE(std::string(f.name));
      for (int64_t n : {0, 1, 3, 17, 255, 256, 257, 1000}) {
        CAPTURE(n);
        const auto a = Random16(f.kind, static_cast<size_t>(n) + 1, -3.0f, 3.0f);
        const auto b = Random16(f.kind, static_cast<size_t>(n) + 1, 0.5f, 2.0f);
        const auto fa = Widened(f.kind, a), fb = Widened(f.kind, b);
        for (UnaryOp op : {UnaryOp::kExp, UnaryOp::kTanh, UnaryOp::kSigmoid, UnaryOp::kSqrt,
                           UnaryOp::kRelu, UnaryOp::kGelu, UnaryOp::kNeg}) {
          std::vector<uint16_t> got(static_cast<size_t>(n));
          Unary16(f.kind, op, UnaryParams{}, a.data(), got.data(), n);
          std::vector<float> want(static_cast<size_t>(n));
          UnaryF32(op, UnaryParams{}, fa.data(), want.data(), n);
          CHECK(got == Narrowed(f.kind, want));
        }
        for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                            BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kMod, BinaryOp::kFmod}) {
          for (int64_t bs : {0, 1}) {
            std::vector<uint16_t> got(static_cast<size_t>(n));
            Binary16(f.kind, op, a.data(), 1, b.data(), bs, got.data(), n);
            std::vector<float> want(static_cast<size_t>(n));
            Binary<float>(op, fa.data(), 1, fb.data(), bs, want.data(), n);
            CHECK(got == Narrowed(f.kind, want));
            // Double reference for the correctly rounded ops: one rounding of the exact value
            // (float32's error is far below half a 16-bit ulp).
            if (op == BinaryOp::kMul || op == BinaryOp::kAdd || op == BinaryOp::kDiv) {
              for (int64_t i = 0; i < n; ++i) {
                const double x = fa[i], y = fb[bs * i];
                const double ref = op == BinaryOp::kMul ? x * y : op == BinaryOp::kAdd ? x + y : x / y;
                const double g = Widen16One(f.kind, got[i]);
                CHECK(std::fabs(g - ref) <= f.eps / 2 * std::fabs(ref) * (1 + 4 * kEps32) + f.tiny);
              }
            }
          }
        }
        // In place (out aliases a), broadcast a.
        std::vector<uint16_t> inplace = a;
        Binary16(f.kind, BinaryOp::kAdd, inplace.data(), 1, b.data(), 1, inplace.data(), n);
        std::vector<uint16_t> sep(static_cast<size_t>(n));
        Binary16(f.kind, BinaryOp::kAdd, a.data(), 1, b.data(), 1, sep.data(), n);
        CHECK(std::equal(sep.begin(), sep.end(), inplace.begin()));
        std::vector<uint8_t> cmp(static_cast<size_t>(n)), cmp_want(static_cast<size_t>(n));
        Compare16(f.kind, CompareOp::kLess, a.data(), 0, b.data(), 1, cmp.data(), n);
        Compare<float>(CompareOp::kLess, fa.data(), 0, fb.data(), 1, cmp_want.data(), n);
        CHECK(cmp == cmp_want);
        std::vector<uint16_t> clip(static_cast<size_t>(n));
        Clip16(f.kind, a.data(), clip.data(), n, -1.0f, 0.5f);
        for (int64_t i = 0; i < n; ++i) {
          CHECK(Widen16One(f.kind, clip[i]) == std::fmin(std::fmax(fa[i], -1.0f), 0.5f));
        }
      }
    }
  }
}

TEST_CASE("Binary16 keeps Inf and NaN (float16 specials through the SIMD conversions)") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    const std::vector<uint16_t> a = {0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0x0001, 0x3C00};
    const std::vector<uint16_t> b = {0x3C00, 0x3C00, 0x3C00, 0x7BFF, 0x0001, 0x0000};
    std::vector<uint16_t> got(a.size());
    Binary16(Float16Kind::kHalf, BinaryOp::kAdd, a.data(), 1, b.data(), 1, got.data(), 6);
    CHECK(got[0] == 0x7C00);
    CHECK(got[1] == 0xFC00);
    CHECK((got[2] & 0x7C00) == 0x7C00);
    CHECK((got[2] & 0x3FF) != 0);
    CHECK(got[3] == 0x7C00);  // 65504 + 65504 overflows to Inf
    CHECK(got[4] == 0x0002);  // subnormals add exactly
    CHECK(got[5] == 0x3C00);
  }
}

// Double reference of C = A*B on the widened 16-bit inputs, and sum |a_k b_k| per element.
void RefGemm(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t n,
             int64_t k, std::vector<double>* ref, std::vector<double>* mag) {
  ref->assign(static_cast<size_t>(m * n), 0.0);
  mag->assign(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const double p = static_cast<double>(a[i * k + kk]) * b[kk * n + j];
        (*ref)[i * n + j] += p;
        (*mag)[i * n + j] += std::fabs(p);
      }
    }
  }
}

TEST_CASE("GemmMixed with 16-bit A, B, C: bitwise the float32 GEMM rounded once; dot-product bound") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Format& f : kFormats) {
      CAPTURE(std::string(f.name));
      // n = 1 (a 1x1 convolution of a 1x1 image) takes GemmPackedAMixed's GEMV.
      const int64_t shapes[][3] = {{1, 1, 1},    {3, 17, 5}, {7, 33, 300}, {130, 50, 40},
                                   {9, 1, 70},   {1, 200, 9}, {200, 1, 50}, {50, 1, 200},
                                   {13, 1, 0}};
      for (const auto& s : shapes) {
        const int64_t m = s[0], n = s[1], k = s[2];
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        const auto a = Random16(f.kind, static_cast<size_t>(m * k), -1.0f, 1.0f);
        const auto b = Random16(f.kind, static_cast<size_t>(k * n), -1.0f, 1.0f);
        const auto fa = Widened(f.kind, a), fb = Widened(f.kind, b);
        const GemmType type = GemmTypeOf(f.kind);
        std::vector<float> want(static_cast<size_t>(m * n));
        GemmF32(false, false, m, n, k, 1.0f, fa.data(), k, fb.data(), n, 0.0f, want.data(), n,
                SerialParallel());
        const auto want16 = Narrowed(f.kind, want);
        std::vector<uint16_t> got(static_cast<size_t>(m * n));
        GemmMixed(type, type, type, false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                  got.data(), n, SerialParallel());
        CHECK(got == want16);
        // Prepacked 16-bit B and a float32 A.
        auto packed = PackedBF32::Pack16(f.kind, false, k, n, b.data(), n);
        std::vector<uint16_t> got2(static_cast<size_t>(m * n));
        GemmPackedBMixed(GemmType::kF32, type, false, m, 1.0f, fa.data(), k, *packed, 0.0f,
                         got2.data(), n, SerialParallel());
        CHECK(got2 == want16);
        // Prepacked 16-bit A (Conv weights) and a 16-bit B.
        auto pa = PackedAF32::Pack16(f.kind, false, m, k, a.data(), k);
        std::vector<uint16_t> got3(static_cast<size_t>(m * n));
        GemmPackedAMixed(*pa, type, type, false, n, 1.0f, b.data(), n, 0.0f, got3.data(), n,
                         SerialParallel());
        CHECK(got3 == want16);
        std::vector<double> ref, mag;
        RefGemm(fa, fb, m, n, k, &ref, &mag);
        for (int64_t i = 0; i < m * n; ++i) {
          const double g = Widen16One(f.kind, got[i]);
          const double bound = (static_cast<double>(k) * kEps32 + f.eps / 2) * mag[i] + f.tiny;
          CHECK(std::fabs(g - ref[i]) <= bound);
        }
      }
      // Transposed operands and beta with a 16-bit C.
      const int64_t m = 6, n = 21, k = 13;
      const auto a = Random16(f.kind, static_cast<size_t>(m * k), -1.0f, 1.0f);
      const auto b = Random16(f.kind, static_cast<size_t>(k * n), -1.0f, 1.0f);
      const auto c0 = Random16(f.kind, static_cast<size_t>(m * n), -1.0f, 1.0f);
      const auto fa = Widened(f.kind, a), fb = Widened(f.kind, b);
      std::vector<float> fc = Widened(f.kind, c0);
      GemmF32(true, true, m, n, k, 0.5f, fa.data(), m, fb.data(), k, 2.0f, fc.data(), n,
              SerialParallel());
      std::vector<uint16_t> c = c0;
      const GemmType type = GemmTypeOf(f.kind);
      GemmMixed(type, type, type, true, true, m, n, k, 0.5f, a.data(), m, b.data(), k, 2.0f,
                c.data(), n, SerialParallel());
      CHECK(c == Narrowed(f.kind, fc));
      // The same for one column of C (stride n) through prepacked A's GEMV, B transposed.
      std::vector<float> fcol(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i) fcol[i] = Widen16One(f.kind, c0[i * n]);
      GemmF32(true, true, m, 1, k, 0.5f, fa.data(), m, fb.data(), k, 2.0f, fcol.data(), 1,
              SerialParallel());
      auto pa = PackedAF32::Pack16(f.kind, true, m, k, a.data(), m);
      std::vector<uint16_t> col = c0;
      GemmPackedAMixed(*pa, type, type, true, 1, 0.5f, b.data(), k, 2.0f, col.data(), n,
                       SerialParallel());
      for (int64_t i = 0; i < m; ++i) CHECK(col[i * n] == Narrow16One(f.kind, fcol[i]));
    }
  }
}

// A 16-bit post-op that is not idempotent (x -> x/2 + 1, rounded): an element it reaches twice,
// or never, shows.
void HalvePlusOne(const void* ctx, uint16_t* data, int64_t n) {
  const Float16Kind kind = *static_cast<const Float16Kind*>(ctx);
  for (int64_t i = 0; i < n; ++i) data[i] = Narrow16One(kind, Widen16One(kind, data[i]) * 0.5f + 1);
}

TEST_CASE("16-bit B packed per task and post16: bitwise the float32 GEMM, post-op once each") {
  const test_util::ThreadsParallel three(3);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Format& f : kFormats) {
      CAPTURE(std::string(f.name));
      const GemmType type = GemmTypeOf(f.kind);
      // Several blocks of M (> 128 rows), of N (> 192 columns, a partial panel) and of K (> 512);
      // B with a leading dimension past N (a group's slice of a convolution's input).
      const int64_t shapes[][3] = {{140, 200, 600}, {20, 50, 17}, {9, 193, 1030}, {5, 1, 40}};
      for (const auto& s : shapes) {
        const int64_t m = s[0], n = s[1], k = s[2], ldb = n + 7;
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        const auto a = Random16(f.kind, static_cast<size_t>(m * k), -1.0f, 1.0f);
        const auto b = Random16(f.kind, static_cast<size_t>(k * ldb), -1.0f, 1.0f);
        const auto fa = Widened(f.kind, a), fb = Widened(f.kind, b);
        std::vector<float> bias(static_cast<size_t>(m));
        for (auto& v : bias) v = Rand(-1.0f, 1.0f);
        GemmEpilogue e;
        e.row_bias = bias.data();
        std::vector<float> want(static_cast<size_t>(m * n));
        GemmF32(false, false, m, n, k, 1.0f, fa.data(), k, fb.data(), ldb, 0.0f, want.data(), n,
                SerialParallel(), e);
        std::vector<uint16_t> want16 = Narrowed(f.kind, want);
        HalvePlusOne(&f.kind, want16.data(), m * n);
        e.post16 = PostOp16{&HalvePlusOne, &f.kind};
        for (const Parallel* par : {static_cast<const Parallel*>(&SerialParallel()),
                                    static_cast<const Parallel*>(&three)}) {
          std::vector<uint16_t> got(static_cast<size_t>(m * n));
          GemmMixed(type, type, type, false, false, m, n, k, 1.0f, a.data(), k, b.data(), ldb,
                    0.0f, got.data(), n, *par, e);
          CHECK(got == want16);
          auto pa = PackedAF32::Pack16(f.kind, false, m, k, a.data(), k);
          std::vector<uint16_t> got2(static_cast<size_t>(m * n));
          GemmPackedAMixed(*pa, type, type, false, n, 1.0f, b.data(), ldb, 0.0f, got2.data(), n,
                           *par, e);
          CHECK(got2 == want16);
        }
      }
    }
  }
}

TEST_CASE(
    "Softmax{F16,BF16} / LogSoftmax{F16,BF16} equal the float32 kernels rounded once; bound vs "
    "double") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Format& f : kFormats) {
      CAPTURE(std::string(f.name));
      const bool bf16 = f.kind == Float16Kind::kBFloat16;
      const auto softmax16 = bf16 ? SoftmaxBF16 : SoftmaxF16;
      const auto log_softmax16 = bf16 ? LogSoftmaxBF16 : LogSoftmaxF16;
      const int64_t shapes[][3] = {{3, 17, 1}, {2, 5, 70}, {1, 300, 3}, {4, 1, 1}};
      for (const auto& s : shapes) {
        const int64_t outer = s[0], n = s[1], inner = s[2];
        const size_t total = static_cast<size_t>(outer * n * inner);
        const auto x = Random16(f.kind, total, -4.0f, 4.0f);
        const auto fx = Widened(f.kind, x);
        std::vector<float> want(total);
        SoftmaxF32(fx.data(), want.data(), outer, n, inner, SerialParallel());
        std::vector<uint16_t> got(total);
        softmax16(x.data(), got.data(), outer, n, inner, SerialParallel());
        CHECK(got == Narrowed(f.kind, want));
        LogSoftmaxF32(fx.data(), want.data(), outer, n, inner, SerialParallel());
        log_softmax16(x.data(), got.data(), outer, n, inner, SerialParallel());
        CHECK(got == Narrowed(f.kind, want));
        softmax16(x.data(), got.data(), outer, n, inner, SerialParallel());
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) {
            double mx = -INFINITY, sum = 0;
            for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, fx[(o * n + i) * inner + j]);
            for (int64_t i = 0; i < n; ++i) sum += std::exp(fx[(o * n + i) * inner + j] - mx);
            for (int64_t i = 0; i < n; ++i) {
              const size_t idx = static_cast<size_t>((o * n + i) * inner + j);
              const double ref = std::exp(fx[idx] - mx) / sum;
              const double bound = (static_cast<double>(n) * kEps32 * 8 + f.eps / 2) * ref + f.tiny;
              CHECK(std::fabs(Widen16One(f.kind, got[idx]) - ref) <= bound);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("Im2Col16 equals Im2ColF32 on the widened image") {
  ConvGeometry g;
  g.rank = 2;
  g.in[0] = 7;
  g.in[1] = 9;
  g.kernel[0] = 3;
  g.kernel[1] = 2;
  g.stride[0] = 1;
  g.stride[1] = 2;
  g.pad[0] = 1;
  g.pad[1] = 1;
  g.out[0] = (7 + 2 - 3) / 1 + 1;
  g.out[1] = (9 + 2 - 2) / 2 + 1;
  const int64_t channels = 3;
  for (const Format& f : kFormats) {
    for (int64_t s1 : {1, 2}) {
      g.stride[1] = s1;
      g.out[1] = (9 + 2 - 2) / s1 + 1;
      const int64_t p = g.OutSize(), rows = channels * g.KernelSize();
      const auto x = Random16(f.kind, static_cast<size_t>(channels * g.InSize()), -2.0f, 2.0f);
      const auto fx = Widened(f.kind, x);
      std::vector<float> want(static_cast<size_t>(rows * (p - 2))), got(want.size());
      Im2ColF32(g, fx.data(), channels, 1, p - 2, want.data(), SerialParallel());
      Im2Col16(f.kind, g, x.data(), channels, 1, p - 2, got.data(), SerialParallel());
      CHECK(got == want);
    }
  }
}

}  // namespace
