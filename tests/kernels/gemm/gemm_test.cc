// Tests for kernels/gemm/gemm.h: GemmF32 and the prepacked variants against a double-precision
// naive reference over many shapes, transposes, alpha/beta, bias/clamp epilogues and misaligned
// pointers, on every compiled target; plus bitwise determinism across thread counts and paths.
#include "kernels/gemm/gemm.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/parallel.h"
#include "reference/threads_parallel.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using TestParallel = test_util::ThreadsParallel;

struct GemmCase {
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool row_bias = false, col_bias = false, clamp = false;
  int64_t offset = 0;  // floats added to every pointer (misalignment)
  int64_t pad = 0;     // extra leading-dimension floats
};

// Operands in the stored layouts of gemm.h, with leading dimensions padded by c.pad.
struct GemmData {
  std::vector<float> a, b, c0, rbias, cbias;
  int64_t lda, ldb, ldc;
};

GemmData MakeData(const GemmCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  GemmData d;
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k;
  const int64_t b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  d.lda = a_cols + c.pad;
  d.ldb = b_cols + c.pad;
  d.ldc = c.n + c.pad;
  d.a.resize(c.offset + a_rows * d.lda + 1);
  d.b.resize(c.offset + b_rows * d.ldb + 1);
  d.c0.resize(c.offset + c.m * d.ldc + 1);
  for (auto& x : d.a) x = u(rng);
  for (auto& x : d.b) x = u(rng);
  for (auto& x : d.c0) x = u(rng);
  d.rbias.resize(c.offset + c.m + 1);
  d.cbias.resize(c.offset + c.n + 1);
  for (auto& x : d.rbias) x = u(rng);
  for (auto& x : d.cbias) x = u(rng);
  return d;
}

GemmEpilogue MakeEpilogue(const GemmCase& c, const GemmData& d) {
  GemmEpilogue e;
  if (c.row_bias) e.row_bias = d.rbias.data() + c.offset;
  if (c.col_bias) e.col_bias = d.cbias.data() + c.offset;
  if (c.clamp) {
    e.clamp = true;
    e.clamp_lo = -0.5f;
    e.clamp_hi = 0.75f;
  }
  return e;
}

// Reference in double, with an error bound per element.
void Reference(const GemmCase& c, const GemmData& d, std::vector<double>* out,
               std::vector<double>* bound) {
  out->assign(c.m * c.n, 0.0);
  bound->assign(c.m * c.n, 0.0);
  const float* a = d.a.data() + c.offset;
  const float* b = d.b.data() + c.offset;
  const float* c0 = d.c0.data() + c.offset;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0.0, sa = 0.0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        const double av = c.ta ? a[kk * d.lda + i] : a[i * d.lda + kk];
        const double bv = c.tb ? b[j * d.ldb + kk] : b[kk * d.ldb + j];
        s += av * bv;
        sa += std::fabs(av * bv);
      }
      double v = c.alpha * s;
      double mag = std::fabs(c.alpha) * sa;
      if (c.beta != 0.0f) {
        v += c.beta * static_cast<double>(c0[i * d.ldc + j]);
        mag += std::fabs(c.beta * c0[i * d.ldc + j]);
      }
      if (c.row_bias) v += d.rbias[c.offset + i], mag += 1.0;
      if (c.col_bias) v += d.cbias[c.offset + j], mag += 1.0;
      if (c.clamp) v = std::min(std::max(v, -0.5), 0.75);
      (*out)[i * c.n + j] = v;
      (*bound)[i * c.n + j] = 2e-7 * (c.k + 8) * (mag + 1e-3);
    }
  }
}

enum class Path { kPlain, kPackedB, kPackedA };

// Runs the case through one path; returns C (with its padding) for bitwise comparisons.
std::vector<float> Run(const GemmCase& c, const GemmData& d, Path path, const Parallel& par) {
  std::vector<float> cbuf = d.c0;
  const float* a = d.a.data() + c.offset;
  const float* b = d.b.data() + c.offset;
  float* cp = cbuf.data() + c.offset;
  const GemmEpilogue e = MakeEpilogue(c, d);
  switch (path) {
    case Path::kPlain:
      GemmF32(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a, d.lda, b, d.ldb, c.beta, cp, d.ldc, par, e);
      break;
    case Path::kPackedB: {
      auto pb = PackedBF32::Pack(c.tb, c.k, c.n, b, d.ldb);
      GemmPackedBF32(c.ta, c.m, c.alpha, a, d.lda, *pb, c.beta, cp, d.ldc, par, e);
      break;
    }
    case Path::kPackedA: {
      auto pa = PackedAF32::Pack(c.ta, c.m, c.k, a, d.lda);
      GemmPackedAF32(*pa, c.tb, c.n, c.alpha, b, d.ldb, c.beta, cp, d.ldc, par, e);
      break;
    }
  }
  return cbuf;
}

void Check(const GemmCase& c, const GemmData& d, const std::vector<float>& got) {
  std::vector<double> ref, bound;
  Reference(c, d, &ref, &bound);
  int bad = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const float v = got[c.offset + i * d.ldc + j];
      if (!(std::fabs(v - ref[i * c.n + j]) <= bound[i * c.n + j]) && bad++ < 3) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(v == doctest::Approx(ref[i * c.n + j]));
      }
    }
  }
  CHECK(bad == 0);
  // Padding columns of C and memory before the offset are untouched.
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = c.n; j < d.ldc; ++j) {
      if (c.offset + i * d.ldc + j < static_cast<int64_t>(got.size())) {
        REQUIRE(got[c.offset + i * d.ldc + j] == d.c0[c.offset + i * d.ldc + j]);
      }
    }
  }
  for (int64_t i = 0; i < c.offset; ++i) REQUIRE(got[i] == d.c0[i]);
  REQUIRE(got.back() == d.c0.back());
}

std::string Describe(const GemmCase& c) {
  return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " ta=" + std::to_string(c.ta) + " tb=" + std::to_string(c.tb) +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
         " off=" + std::to_string(c.offset) + " pad=" + std::to_string(c.pad) +
         " rb=" + std::to_string(c.row_bias) + " cb=" + std::to_string(c.col_bias) +
         " clamp=" + std::to_string(c.clamp);
}

std::vector<GemmCase> ManyCases() {
  const int64_t small[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33};
  const int64_t large[] = {64, 100, 257};
  std::mt19937 rng(1234);
  std::vector<GemmCase> cases;
  auto randomize = [&](GemmCase c) {
    c.ta = rng() & 1;
    c.tb = rng() & 1;
    const float alphas[] = {1.0f, 0.5f, -2.0f};
    const float betas[] = {0.0f, 0.0f, 1.0f, -0.75f};
    c.alpha = alphas[rng() % 3];
    c.beta = betas[rng() % 4];
    c.offset = rng() % 3;
    c.pad = rng() % 3;
    c.row_bias = (rng() % 4) == 0;
    c.col_bias = (rng() % 4) == 0;
    c.clamp = (rng() % 6) == 0;
    return c;
  };
  for (int64_t m : small) {
    for (int64_t n : small) {
      for (int64_t k : small) {
        if ((rng() % 4) != 0) continue;  // a quarter of the small cube, chosen at random
        GemmCase c;
        c.m = m, c.n = n, c.k = k;
        cases.push_back(randomize(c));
      }
    }
  }
  const int64_t all[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 64, 100, 257};
  for (int64_t big : large) {
    for (int rep = 0; rep < 8; ++rep) {
      GemmCase c;
      c.m = all[rng() % 15], c.n = all[rng() % 15], c.k = all[rng() % 15];
      // At least one dimension is large.
      switch (rep % 3) {
        case 0:
          c.m = big;
          break;
        case 1:
          c.n = big;
          break;
        default:
          c.k = big;
          break;
      }
      cases.push_back(randomize(c));
    }
  }
  GemmCase cube;
  cube.m = cube.n = cube.k = 100;
  cases.push_back(randomize(cube));
  // K above one K block (256): partial sums are carried between blocks.
  GemmCase deep;
  deep.m = 17, deep.n = 33, deep.k = 600;
  cases.push_back(randomize(deep));
  return cases;
}

TEST_CASE("GemmF32 matches a double reference on every target") {
  const std::vector<GemmCase> cases = ManyCases();
  uint32_t seed = 1;
  for (const GemmCase& c : cases) {
    const GemmData d = MakeData(c, seed++);
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      CAPTURE(Describe(c));
      Check(c, d, Run(c, d, Path::kPlain, SerialParallel()));
    }
  }
}

TEST_CASE("GemmPackedBF32 and GemmPackedAF32 match the reference and GemmF32 bitwise") {
  const std::vector<GemmCase> cases = ManyCases();
  uint32_t seed = 100;
  int i = 0;
  for (const GemmCase& c : cases) {
    if ((i++ % 3) != 0) continue;  // a third of the cases keeps the test quick
    const GemmData d = MakeData(c, seed++);
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      CAPTURE(Describe(c));
      const std::vector<float> plain = Run(c, d, Path::kPlain, SerialParallel());
      const std::vector<float> pb = Run(c, d, Path::kPackedB, SerialParallel());
      const std::vector<float> pa = Run(c, d, Path::kPackedA, SerialParallel());
      Check(c, d, pb);
      Check(c, d, pa);
      CHECK(pb == plain);
      CHECK(pa == plain);
    }
  }
}

// Short M (transformer decoding, M = 1..16): the short last strip runs tiles spanning several
// whole panels; wide N gives groups of panels plus a partial tail. K = 300 is one pass for
// M <= 2*mr and several K blocks (partial sums parked between them) for the larger M, whose
// short last strip (17, 20, 25 rows: 1, 4, 1 rows past whole strips of 8) also spans panels.
TEST_CASE("GemmF32 with short M and wide N matches the reference on every target") {
  uint32_t seed = 500;
  int i = 0;
  for (int64_t m : {1, 2, 3, 4, 5, 7, 9, 12, 13, 15, 16, 17, 20, 25}) {
    for (int64_t n : {200, 390}) {
      GemmCase c;
      c.m = m, c.n = n, c.k = 300;
      c.ta = (i % 3) == 2;
      c.tb = (i % 4) == 3;
      c.alpha = (i % 2) == 0 ? 1.0f : -0.5f;
      c.beta = (i % 3) == 1 ? 0.75f : 0.0f;
      c.row_bias = (i % 4) == 1;
      c.col_bias = (i % 3) == 0;
      c.clamp = (i % 5) == 4;
      c.offset = i % 2;
      c.pad = i % 3;
      ++i;
      const GemmData d = MakeData(c, seed++);
      for (const auto& t : CompiledTargets()) {
        ScopedTarget st(t);
        CAPTURE(t.name);
        CAPTURE(Describe(c));
        const std::vector<float> plain = Run(c, d, Path::kPlain, SerialParallel());
        Check(c, d, plain);
        CHECK(Run(c, d, Path::kPackedB, SerialParallel()) == plain);
        CHECK(Run(c, d, Path::kPackedA, SerialParallel()) == plain);
        TestParallel par(3);
        CHECK(Run(c, d, Path::kPackedB, par) == plain);
      }
    }
  }
}

// One column (a 1x1 convolution of a 1x1 image): GemmPackedAF32 runs its own GEMV over the
// packed strips, which must give the tiles' bits: rows past whole strips, K = 0, every epilogue,
// a column of C with a leading dimension > 1, threads.
TEST_CASE("GemmPackedAF32 with one column equals GemmF32 bitwise on every target") {
  uint32_t seed = 700;
  int i = 0;
  for (int64_t m : {1, 5, 8, 9, 17, 50, 200}) {
    for (int64_t k : {0, 1, 7, 50, 300}) {
      GemmCase c;
      c.m = m, c.n = 1, c.k = k;
      c.ta = (i % 3) == 2;
      c.tb = (i % 2) == 1;
      c.alpha = (i % 4) == 3 ? -0.5f : 1.0f;
      c.beta = (i % 3) == 1 ? 0.75f : 0.0f;
      c.row_bias = (i % 2) == 0;
      c.col_bias = (i % 5) == 1;
      c.clamp = (i % 4) == 2;
      c.offset = i % 2;
      c.pad = i % 3;
      ++i;
      const GemmData d = MakeData(c, seed++);
      for (const auto& t : CompiledTargets()) {
        ScopedTarget st(t);
        CAPTURE(t.name);
        CAPTURE(Describe(c));
        const std::vector<float> plain = Run(c, d, Path::kPlain, SerialParallel());
        Check(c, d, plain);
        const std::vector<float> pa = Run(c, d, Path::kPackedA, SerialParallel());
        Check(c, d, pa);
        CHECK(pa == plain);
        TestParallel par(3);
        CHECK(Run(c, d, Path::kPackedA, par) == plain);
      }
    }
  }
}

TEST_CASE("GemmF32 results do not depend on the thread count") {
  GemmCase c;
  c.m = 301, c.n = 517, c.k = 530;
  c.alpha = 0.5f, c.beta = 1.0f, c.row_bias = true, c.offset = 1;
  const GemmData d = MakeData(c, 7);
  const std::vector<float> one = Run(c, d, Path::kPlain, SerialParallel());
  Check(c, d, one);
  for (int threads : {2, 3, 5}) {
    CAPTURE(threads);
    TestParallel par(threads);
    CHECK(Run(c, d, Path::kPlain, par) == one);
    CHECK(Run(c, d, Path::kPackedB, par) == one);
    CHECK(Run(c, d, Path::kPackedA, par) == one);
  }
}

TEST_CASE("Packed operands from another target are repacked") {
  const auto targets = CompiledTargets();
  if (targets.size() < 2) return;
  GemmCase c;
  c.m = 19, c.n = 70, c.k = 45;
  const GemmData d = MakeData(c, 9);
  std::shared_ptr<const PackedBF32> pb;
  std::shared_ptr<const PackedAF32> pa;
  {
    ScopedTarget st(targets.back());
    pb = PackedBF32::Pack(false, c.k, c.n, d.b.data(), d.ldb);
    pa = PackedAF32::Pack(false, c.m, c.k, d.a.data(), d.lda);
  }
  for (int64_t kk = 0; kk < c.k; ++kk) {
    for (int64_t j = 0; j < c.n; ++j) REQUIRE(pb->At(kk, j) == d.b[kk * d.ldb + j]);
  }
  ScopedTarget st(targets.front());
  std::vector<float> out1 = d.c0, out2 = d.c0;
  GemmPackedBF32(false, c.m, 1.0f, d.a.data(), d.lda, *pb, 0.0f, out1.data(), d.ldc,
                 SerialParallel());
  GemmPackedAF32(*pa, false, c.n, 1.0f, d.b.data(), d.ldb, 0.0f, out2.data(), d.ldc,
                 SerialParallel());
  Check(c, d, out1);
  Check(c, d, out2);
}

TEST_CASE("GemmF32 with beta == 0 ignores NaN in C; K == 0 gives beta*C + bias") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<float> a(6, 1.0f), b(6, 2.0f), c(4, std::nanf(""));
    GemmF32(false, false, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2, 0.0f, c.data(), 2,
            SerialParallel());
    for (float v : c) CHECK(v == 6.0f);
    std::vector<float> c2 = {1, 2, 3, 4};
    const float bias[2] = {10, 20};
    GemmEpilogue e;
    e.col_bias = bias;
    GemmF32(false, false, 2, 2, 0, 1.0f, a.data(), 0, b.data(), 2, 2.0f, c2.data(), 2,
            SerialParallel(), e);
    CHECK(c2 == std::vector<float>{12, 24, 16, 28});
  }
}

}  // namespace
}  // namespace simplecpp::kernels
