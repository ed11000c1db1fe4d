// Tests for kernels/quant/matmul_nbits_q8.h: GemvNBitsQ8 (MatMulNBits with A quantized to int8
// per block, accuracy_level 4) against the contract restated here in scalar code, bit for bit,
// on every compiled target and at several thread counts: bits 4 and 8, block sizes 16..256, zero
// points absent and packed, K not a multiple of the block (garbage codes in the padding), block
// counts on both sides of the 16-block groups, odd N, M = 1 and 3, row strides, bias, rows of
// zeros and of non-finite values, exact .5 ties in A's rounding; and against a float64 product
// of the dequantized weights within the bound that A's rounding allows.
#include "kernels/quant/matmul_nbits_q8.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "reference/threads_parallel.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using ThreadsParallel = test_util::ThreadsParallel;

struct Case {
  int bits;
  int64_t block, k, n, m;
  bool zp, bias;
};

std::string Describe(const Case& c) {
  return "bits " + std::to_string(c.bits) + " block " + std::to_string(c.block) + " K " +
         std::to_string(c.k) + " N " + std::to_string(c.n) + " M " + std::to_string(c.m) +
         (c.zp ? " packed zp" : " default zp") + (c.bias ? " bias" : "");
}

struct Weights {
  std::vector<uint8_t> packed, zp;
  std::vector<float> scales;
  NBitsWeights view;
};

Weights MakeWeights(const Case& c, std::mt19937& rng) {
  Weights w;
  w.view.bits = c.bits;
  w.view.n = c.n;
  w.view.k = c.k;
  w.view.block_size = c.block;
  const int64_t kb = w.view.k_blocks();
  w.packed.resize(static_cast<size_t>(c.n * kb * w.view.blob_bytes()));
  for (auto& b : w.packed) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  w.scales.resize(static_cast<size_t>(c.n * kb));
  for (auto& s : w.scales) s = scale(rng);
  if (c.zp) {
    w.view.zp_kind = NBitsZeroPoints::kPackedU8;
    w.zp.resize(static_cast<size_t>(c.n * w.view.zp_row_bytes()));
    for (auto& z : w.zp) z = static_cast<uint8_t>(rng());
  }
  w.view.packed = w.packed.data();
  w.view.scales = w.scales.data();
  w.view.zp_packed = w.zp.data();
  return w;
}

int Code(const Weights& w, int64_t n, int64_t k) {
  const int64_t b = k / w.view.block_size, j = k % w.view.block_size;
  const uint8_t* blob = w.packed.data() + (n * w.view.k_blocks() + b) * w.view.blob_bytes();
  return w.view.bits == 8 ? blob[j] : (blob[j / 2] >> (4 * (j % 2))) & 15;
}

int ZeroPoint(const Weights& w, int64_t n, int64_t b) {
  if (w.view.zp_kind != NBitsZeroPoints::kPackedU8) return 1 << (w.view.bits - 1);
  const int64_t row = (w.view.k_blocks() * w.view.bits + 7) / 8;
  if (w.view.bits == 8) return w.zp[n * row + b];
  return (w.zp[n * row + b / 2] >> (4 * (b % 2))) & 15;
}

// The header's numerics, restated: A's blocks, integer block sums, 16 accumulators, the tree.
std::vector<float> Contract(const Weights& w, const float* a, int64_t lda, int64_t m,
                            const float* bias) {
  const int64_t n_out = w.view.n, k = w.view.k, bs = w.view.block_size;
  const int64_t kb = w.view.k_blocks();
  std::vector<float> y(static_cast<size_t>(m * n_out));
  for (int64_t i = 0; i < m; ++i) {
    std::vector<int> qa(static_cast<size_t>(kb * bs), 0);
    std::vector<float> sa(static_cast<size_t>(kb), 0.0f);
    std::vector<int> asum(static_cast<size_t>(kb), 0);
    for (int64_t b = 0; b < kb; ++b) {
      float amax = 0.0f;
      bool nonfinite = false;
      for (int64_t j = b * bs; j < std::min(k, (b + 1) * bs); ++j) {
        const float v = a[i * lda + j];
        if (!std::isfinite(v)) nonfinite = true;
        if (std::fabs(v) > amax) amax = std::fabs(v);
      }
      if (nonfinite) {
        sa[b] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      if (amax == 0.0f) continue;
      sa[b] = amax / 127.0f;
      const float inv = 127.0f / amax;
      for (int64_t j = b * bs; j < std::min(k, (b + 1) * bs); ++j) {
        const float v = a[i * lda + j];
        const float x = std::isinf(inv) ? v / amax * 127.0f : v * inv;
        float r = std::nearbyint(x);  // round half to even in the default mode
        r = std::min(127.0f, std::max(-127.0f, r));
        qa[j] = static_cast<int>(r);
        asum[b] += qa[j];
      }
    }
    for (int64_t n = 0; n < n_out; ++n) {
      float acc[16] = {};
      const int64_t kb16 = (kb + 15) / 16 * 16;
      for (int64_t b = 0; b < kb16; ++b) {
        float f = 0.0f, s = 0.0f;
        if (b < kb) {
          int64_t dot = 0;
          for (int64_t j = b * bs; j < (b + 1) * bs; ++j) dot += int64_t{Code(w, n, j)} * qa[j];
          const int64_t c = dot - int64_t{ZeroPoint(w, n, b)} * asum[b];
          f = static_cast<float>(c);
          s = w.scales[n * kb + b] * sa[b];
        }
        // volatile: a product then a sum, never contracted into one FMA.
        const volatile float prod = f * s;
        acc[b % 16] = acc[b % 16] + prod;
      }
      for (int h = 8; h >= 1; h /= 2) {
        for (int l = 0; l < h; ++l) acc[l] = acc[l] + acc[l + h];
      }
      y[i * n_out + n] = bias != nullptr ? acc[0] + bias[n] : acc[0];
    }
  }
  return y;
}

bool SameBits(float x, float y) {
  if (std::isnan(x) && std::isnan(y)) return true;
  uint32_t bx, by;
  std::memcpy(&bx, &x, 4);
  std::memcpy(&by, &y, 4);
  return bx == by;
}

void CheckCase(const Case& c, uint32_t seed) {
  INFO(Describe(c));
  std::mt19937 rng(seed);
  Weights w = MakeWeights(c, rng);
  const int64_t lda = c.k + 3, ldy = c.n + 2;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(c.m * lda), 99.0f);  // stride padding must not count
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.k; ++j) a[i * lda + j] = dist(rng);
  }
  std::vector<float> bias(static_cast<size_t>(c.n));
  for (auto& b : bias) b = dist(rng);
  const float* bp = c.bias ? bias.data() : nullptr;
  const std::vector<float> want = Contract(w, a.data(), lda, c.m, bp);
  REQUIRE(NBitsQ8Applies(w.view));
  for (const Target& t : CompiledTargets()) {
    INFO("target " << t.name);
    ScopedTarget scoped(t);
    for (int threads : {1, 3}) {
      INFO(threads << " threads");
      std::vector<float> y(static_cast<size_t>(c.m * ldy), -7.0f);
      GemvNBitsQ8(c.m, a.data(), lda, w.view, bp, y.data(), ldy, ThreadsParallel(threads));
      int bad = 0;
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t n = 0; n < c.n; ++n) {
          if (!SameBits(y[i * ldy + n], want[i * c.n + n]) && bad++ < 3) {
            FAIL_CHECK("y[" << i << "," << n << "] = " << y[i * ldy + n] << ", contract "
                            << want[i * c.n + n]);
          }
        }
        CHECK(y[i * ldy + c.n] == -7.0f);  // the row stride's padding is not written
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("NBitsQ8: the contract bit for bit, bits 4/8, every block size, every target") {
  uint32_t seed = 1;
  for (int bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128, 256}) {
      for (bool zp : {false, true}) {
        // K: one block, a partial block, more and fewer than 16 blocks, a partial group.
        for (int64_t k : {block, block * 3 - 5, block * 16, block * 21 + 7}) {
          CheckCase({bits, block, k, 9, 1, zp, true}, seed++);
        }
      }
    }
  }
}

TEST_CASE("NBitsQ8: several rows of A, N in groups of 4 and a tail, no bias") {
  CheckCase({4, 32, 512, 37, 3, true, false}, 101);
  CheckCase({4, 32, 4096, 18, 1, false, false}, 102);
  CheckCase({8, 32, 1000, 21, 3, true, true}, 103);
  CheckCase({4, 128, 1024, 35, 2, true, true}, 104);
}

// A set of A rows with special values against the contract on every target.
void CheckA(const Case& c, const std::vector<float>& a_row, uint32_t seed) {
  std::mt19937 rng(seed);
  Weights w = MakeWeights(c, rng);
  const std::vector<float> want = Contract(w, a_row.data(), c.k, 1, nullptr);
  for (const Target& t : CompiledTargets()) {
    INFO("target " << t.name);
    ScopedTarget scoped(t);
    std::vector<float> y(static_cast<size_t>(c.n));
    GemvNBitsQ8(1, a_row.data(), c.k, w.view, nullptr, y.data(), c.n, SerialParallel());
    for (int64_t n = 0; n < c.n; ++n) CHECK(SameBits(y[n], want[n]));
  }
}

TEST_CASE("NBitsQ8: zeros, ties, non-finite values in A") {
  const Case c{4, 32, 96, 6, 1, true, false};
  std::vector<float> zeros(96, 0.0f);
  CheckA(c, zeros, 5);
  std::vector<float> out_zero(6, 1.0f);
  {
    std::mt19937 rng(5);
    Weights w = MakeWeights(c, rng);
    GemvNBitsQ8(1, zeros.data(), 96, w.view, nullptr, out_zero.data(), 6, SerialParallel());
    for (float v : out_zero) CHECK(v == 0.0f);
  }
  // amax 127: a * (127 / amax) = a, so k + 0.5 are exact ties (half to even: 0.5 -> 0,
  // 1.5 -> 2, -2.5 -> -2).
  std::vector<float> ties(96);
  for (int j = 0; j < 96; ++j) ties[j] = (j % 32 == 0) ? 127.0f : static_cast<float>(j % 7) - 3.5f;
  CheckA(c, ties, 6);
  std::vector<float> special = ties;
  special[40] = std::numeric_limits<float>::infinity();
  CheckA(c, special, 7);
  special[40] = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(8);
  Weights w = MakeWeights(c, rng);
  std::vector<float> y(6);
  GemvNBitsQ8(1, special.data(), 96, w.view, nullptr, y.data(), 6, SerialParallel());
  for (float v : y) CHECK(std::isnan(v));
  // A subnormal block maximum (127 / amax overflows).
  std::vector<float> tiny(96, 0.0f);
  tiny[3] = 1e-39f;
  tiny[4] = -3e-40f;
  CheckA(c, tiny, 9);
}

// Within A's rounding of a float64 product of the dequantized weights: each product moves by at
// most |w| * sa / 2, plus float32 rounding of the epilogue.
TEST_CASE("NBitsQ8: close to the float64 product of the dequantized weights") {
  for (int bits : {4, 8}) {
    const Case c{bits, 32, 1000, 12, 1, true, false};
    INFO(Describe(c));
    std::mt19937 rng(11);
    Weights w = MakeWeights(c, rng);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<float> a(static_cast<size_t>(c.k));
    for (auto& v : a) v = dist(rng);
    std::vector<float> y(static_cast<size_t>(c.n));
    GemvNBitsQ8(1, a.data(), c.k, w.view, nullptr, y.data(), c.n, SerialParallel());
    const int64_t kb = w.view.k_blocks();
    for (int64_t n = 0; n < c.n; ++n) {
      double exact = 0.0, bound = 0.0;
      for (int64_t b = 0; b < kb; ++b) {
        double amax = 0.0;
        for (int64_t j = b * 32; j < std::min(c.k, (b + 1) * 32); ++j) {
          amax = std::max(amax, std::fabs(double{a[j]}));
        }
        for (int64_t j = b * 32; j < std::min(c.k, (b + 1) * 32); ++j) {
          const double wv = (Code(w, n, j) - ZeroPoint(w, n, b)) * double{w.scales[n * kb + b]};
          exact += a[j] * wv;
          bound += std::fabs(wv) * (amax / 127.0 / 2.0 + std::fabs(double{a[j]}) * 1e-6);
        }
      }
      CHECK(std::fabs(y[n] - exact) <= bound);
    }
  }
}

TEST_CASE("NBitsQ8: which weights it takes") {
  NBitsWeights w;
  w.bits = 4;
  w.block_size = 32;
  CHECK(NBitsQ8Applies(w));
  w.block_size = 512;
  CHECK_FALSE(NBitsQ8Applies(w));
  w.block_size = 32;
  w.zp_kind = NBitsZeroPoints::kFloat32;
  CHECK_FALSE(NBitsQ8Applies(w));
  w.zp_kind = NBitsZeroPoints::kDefault;
  const float min = 0.0f;
  w.block_min = &min;
  CHECK_FALSE(NBitsQ8Applies(w));
}

}  // namespace
}  // namespace simplecpp::kernels
