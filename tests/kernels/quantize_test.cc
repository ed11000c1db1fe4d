// Tests for kernels/quantize.h against the scalar reference math of quant/quant_params.h (and
// std::nearbyint written out here) on every compiled target: sizes around the vector width,
// per-run and per-element scales / zero points, ties, infinities, NaN, saturation.
#include "kernels/quantize.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/targets.h"
#include "quant/quant_params.h"

namespace simplecpp::kernels {
namespace {

TEST_CASE("QuantizeF32ToI32 matches the scalar reference") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 70}) {
      for (int mode = 0; mode < 4; ++mode) {
        const bool per_scale = mode & 1, per_zp = mode & 2;
        std::vector<float> x(n), s(per_scale ? n : 1);
        std::vector<int32_t> z(per_zp ? n : 1), out(n, -999);
        for (auto& v : x) v = dist(rng);
        // Exact ties and specials.
        if (n > 3) { x[0] = 2.5f; x[1] = -3.5f; x[2] = 0.5f; x[3] = -0.5f; }
        if (n > 7) {
          x[4] = std::numeric_limits<float>::infinity();
          x[5] = -std::numeric_limits<float>::infinity();
          x[6] = std::nanf("");
          x[7] = 1e30f;
        }
        for (auto& v : s) v = per_scale ? 0.25f + static_cast<float>(rng() % 8) * 0.3f : 1.0f;
        for (auto& v : z) v = static_cast<int32_t>(rng() % 256) - 128;
        QuantizeF32ToI32(x.data(), n, s.data(), per_scale, z.data(), per_zp, -128, 127, out.data());
        for (int64_t i = 0; i < n; ++i) {
          const int32_t want =
              quant::QuantizeValue(x[i], s[per_scale ? i : 0], z[per_zp ? i : 0], -128, 127);
          CAPTURE(i);
          CAPTURE(x[i]);
          CHECK(out[i] == want);
        }
      }
    }
  }
}

TEST_CASE("Quantize narrowing variants and the null zero point") {
  const std::vector<float> x = {-70000.0f, -1.5f, 0.0f, 1.5f, 2.5f, 70000.0f};
  const float s = 1.0f;
  std::vector<uint8_t> u8(6);
  QuantizeF32ToU8(x.data(), 6, &s, 0, nullptr, 0, 0, 255, u8.data());
  CHECK(u8 == std::vector<uint8_t>{0, 0, 0, 2, 2, 255});
  std::vector<int16_t> i16(6);
  QuantizeF32ToI16(x.data(), 6, &s, 0, nullptr, 0, -32768, 32767, i16.data());
  CHECK(i16 == std::vector<int16_t>{-32768, -2, 0, 2, 2, 32767});
  std::vector<uint16_t> u16(6);
  const int32_t zp = 100;
  QuantizeF32ToU16(x.data(), 6, &s, 0, &zp, 0, 0, 65535, u16.data());
  CHECK(u16 == std::vector<uint16_t>{0, 98, 100, 102, 102, 65535});
}

TEST_CASE("Dequantize and requantize") {
  const std::vector<uint8_t> q = {0, 128, 255};
  const float s = 0.5f;
  const int32_t zp = 128;
  std::vector<float> y(3);
  DequantizeU8ToF32(q.data(), 3, &s, 0, &zp, 0, y.data());
  CHECK(y == std::vector<float>{-64.0f, 0.0f, 63.5f});
  const std::vector<int32_t> big = {16777217, -3};
  const float one = 1.0f;
  DequantizeI32ToF32(big.data(), 2, &one, 0, nullptr, 0, y.data());
  CHECK(y[0] == 16777216.0f);  // float32(q) * scale
  CHECK(y[1] == -3.0f);
  const std::vector<int32_t> acc = {5, 7, -7, 1000000, -1000000};
  const std::vector<float> m = {0.5f};
  std::vector<int8_t> out(5);
  RequantizeI32ToI8(acc.data(), 5, m.data(), 0, 0, -128, 127, out.data());
  CHECK(out == std::vector<int8_t>{2, 4, -4, 127, -128});
  std::vector<uint8_t> outu(5);
  RequantizeI32ToU8(acc.data(), 5, m.data(), 0, 3, 0, 255, outu.data());
  CHECK(outu == std::vector<uint8_t>{6, 6, 0, 255, 0});  // 5.5 -> 6, 6.5 -> 6, -0.5 -> 0
}

TEST_CASE("MinMaxF32 skips NaN") {
  const std::vector<float> x = {std::nanf(""), 3.0f, -2.0f, std::nanf("")};
  float lo = 1, hi = 1;
  MinMaxF32(x.data(), 4, &lo, &hi);
  CHECK(lo == -2.0f);
  CHECK(hi == 3.0f);
  MinMaxF32(x.data(), 0, &lo, &hi);
  CHECK(lo == 0.0f);
  CHECK(hi == 0.0f);
}

}  // namespace
}  // namespace simplecpp::kernels
