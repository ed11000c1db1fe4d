// Tests for quant/block_quant.h: the scale / zero-point rules, round half to even, the half-step
// bound on every element (partial last block included), and the MatMulNBits packing.
#include "quant/block_quant.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "quant/int4.h"

namespace simplecpp::quant {
namespace {

// Deterministic values in [-amp, amp) (an LCG: the test needs variety, not quality).
std::vector<float> Values(int64_t count, float amp, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = amp * (static_cast<float>(seed >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

TEST_CASE("block quant: code ranges, scales and zero points") {
  int32_t lo = 0, hi = 0;
  BlockCodeRange(4, true, &lo, &hi);
  CHECK(lo == -7);
  CHECK(hi == 7);
  BlockCodeRange(4, false, &lo, &hi);
  CHECK(lo == 0);
  CHECK(hi == 15);
  BlockCodeRange(8, true, &lo, &hi);
  CHECK(lo == -127);
  BlockCodeRange(8, false, &lo, &hi);
  CHECK(hi == 255);
  CHECK(BlockScale(-1.4f, 0.7f, 4, true) == doctest::Approx(0.2f));
  CHECK(BlockScale(-1.5f, 0.0f, 4, false) == doctest::Approx(0.1f));
  // The range is widened to contain 0.
  CHECK(BlockScale(1.0f, 3.0f, 4, false) == doctest::Approx(0.2f));
  CHECK(BlockZeroPoint(1.0f, 0.2f, 4, false) == 0);
  CHECK(BlockScale(-3.0f, -1.0f, 4, false) == doctest::Approx(0.2f));
  CHECK(BlockZeroPoint(-3.0f, 0.2f, 4, false) == 15);
  // -lo / scale = 2.5 rounds half to even.
  CHECK(BlockZeroPoint(-0.5f, 0.2f, 4, false) == 2);
  CHECK(BlockZeroPoint(-0.7f, 0.2f, 4, false) == 4);  // 3.5 -> 4
  CHECK(BlockZeroPoint(-1.0f, 0.2f, 4, true) == 0);
  // All zeros: scale 1.
  CHECK(BlockScale(0.0f, 0.0f, 4, false) == 1.0f);
  CHECK(BlockScale(0.0f, 0.0f, 8, true) == 1.0f);
}

TEST_CASE("block quant: codes round half to even") {
  // One column, one block: max|w| = 7 gives scale 1 (symmetric int4), so codes are round(w).
  const std::vector<float> w = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 7.0f, -7.0f, 3.49f};
  const BlockQuantized q = QuantizeBlocked(w.data(), 8, 1, 32, 4, true);
  CHECK(q.scales[0] == 1.0f);
  const std::vector<int32_t> expected = {0, 2, 2, 0, -2, 7, -7, 3};
  CHECK(q.codes == expected);
}

TEST_CASE("block quant: every element within half a step, partial last block included") {
  for (int bits : {4, 8}) {
    for (bool symmetric : {false, true}) {
      const int64_t k = 77, n = 5, block = 32;  // blocks of 32, 32, 13
      std::vector<float> w = Values(k * n, 2.0f, 7u + static_cast<uint32_t>(bits));
      for (int64_t c = 0; c < n; ++c) w[static_cast<size_t>(40 * n + c)] = 0.0f;
      for (int64_t r = 64; r < k; ++r) w[static_cast<size_t>(r * n + 1)] = 0.0f;  // a zero block
      for (int64_t r = 0; r < 32; ++r) w[static_cast<size_t>(r * n + 2)] = 0.25f + 0.01f * r;
      const BlockQuantized q = QuantizeBlocked(w.data(), k, n, block, bits, symmetric);
      CAPTURE(bits);
      CAPTURE(symmetric);
      REQUIRE(q.blocks() == 3);
      int32_t lo = 0, hi = 0;
      BlockCodeRange(bits, symmetric, &lo, &hi);
      for (int64_t r = 0; r < k; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          const float scale = q.scales[static_cast<size_t>((r / block) * n + c)];
          const float x = w[static_cast<size_t>(r * n + c)];
          const int32_t code = q.codes[static_cast<size_t>(r * n + c)];
          CHECK(code >= lo);
          CHECK(code <= hi);
          CHECK(std::fabs(x - q.Dequantized(r, c)) <= scale * 0.5f * (1.0f + 1e-5f));
        }
      }
      // Zero is exact (the zero point is an integer code) and the zero block dequantizes to 0.
      CHECK(q.Dequantized(40, 0) == 0.0f);
      CHECK(q.Dequantized(70, 1) == 0.0f);
      CHECK(q.scales[static_cast<size_t>(2 * n + 1)] == 1.0f);
    }
  }
}

// A rounding that keeps a scale at no less than its value (what a float16 store does).
float RoundUpToQuarter(float s) { return std::ceil(s * 4.0f) / 4.0f; }

TEST_CASE("block quant: a rounded-up scale keeps the half-step bound") {
  const std::vector<float> w = Values(64 * 3, 3.0f, 99u);
  const BlockQuantized q = QuantizeBlocked(w.data(), 64, 3, 16, 4, false, RoundUpToQuarter);
  for (float s : q.scales) CHECK(s == RoundUpToQuarter(s));
  for (int64_t r = 0; r < 64; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      const float scale = q.scales[static_cast<size_t>((r / 16) * 3 + c)];
      CHECK(std::fabs(w[static_cast<size_t>(r * 3 + c)] - q.Dequantized(r, c)) <= scale * 0.5f);
    }
  }
}

TEST_CASE("block quant: MatMulNBits packing") {
  for (int bits : {4, 8}) {
    for (bool symmetric : {false, true}) {
      const int64_t k = 40, n = 3, block = 16;  // blocks 16, 16, 8 (padded)
      const std::vector<float> w = Values(k * n, 1.0f, 5u);
      const BlockQuantized q = QuantizeBlocked(w.data(), k, n, block, bits, symmetric);
      const std::vector<uint8_t> b = PackNBitsWeights(q);
      const std::vector<float> scales = NBitsScales(q);
      const std::vector<uint8_t> zp = PackNBitsZeroPoints(q);
      const int64_t blocks = 3, blob = block * bits / 8, zp_row = (blocks * bits + 7) / 8;
      CAPTURE(bits);
      CAPTURE(symmetric);
      REQUIRE(b.size() == static_cast<size_t>(n * blocks * blob));
      REQUIRE(zp.size() == static_cast<size_t>(n * zp_row));
      const int32_t offset = symmetric ? 1 << (bits - 1) : 0;
      for (int64_t c = 0; c < n; ++c) {
        for (int64_t kk = 0; kk < blocks * block; ++kk) {
          const int64_t bl = kk / block, i = kk % block;
          const uint8_t* blob_p = b.data() + (c * blocks + bl) * blob;
          const int32_t code = bits == 8 ? blob_p[i] : GetSubByte(blob_p, i, 4, false);
          const int32_t z = symmetric ? offset
                            : bits == 8 ? zp[static_cast<size_t>(c * zp_row + bl)]
                                        : GetSubByte(zp.data() + c * zp_row, bl, 4, false);
          const float scale = scales[static_cast<size_t>(c * blocks + bl)];
          const float value = static_cast<float>(code - z) * scale;
          if (kk < k) {
            CHECK(value == q.Dequantized(kk, c));  // the same weights as the [K, N] form
          } else {
            CHECK(value == 0.0f);  // padding holds the zero point
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::quant
