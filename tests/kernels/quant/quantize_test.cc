// Tests for kernels/quant/quantize.h against the scalar reference math of quant/quant_params.h (and
// std::nearbyint written out here) on every compiled target: sizes around the vector width,
// per-run and per-element scales / zero points, ties, infinities, NaN, saturation.
#include "kernels/quant/quantize.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
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

TEST_CASE("8-bit QuantizeF32ToU8 / ToI8: a NaN or infinity among decided quotients") {
  // Quotients that are whole numbers (decided: no lane near a half-integer) around one special
  // value, at each position of a 32-lane pair: the special alone must send its pair to the
  // steps that give NaN the zero point and saturate infinities and huge values.
  const float kInf = std::numeric_limits<float>::infinity();
  const float s = 0.25f;
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const float special : {std::nanf(""), -std::nanf(""), kInf, -kInf, 3e38f, -1e20f}) {
      for (int64_t at : {0, 15, 16, 31, 40, 63}) {
        CAPTURE(special);
        CAPTURE(at);
        std::vector<float> x(64);
        for (int64_t i = 0; i < 64; ++i) x[i] = static_cast<float>(i % 9 - 4) * s;
        x[at] = special;
        for (int32_t zp : {3, 128}) {
          std::vector<uint8_t> out(64, 0xAB);
          QuantizeF32ToU8(x.data(), 64, &s, 0, &zp, 0, 0, 255, out.data());
          for (int64_t i = 0; i < 64; ++i) {
            CAPTURE(i);
            CHECK(out[i] == quant::QuantizeValue(x[i], s, zp, 0, 255));
          }
        }
        const int32_t zp8 = -7;
        std::vector<int8_t> out8(64, 0x5A);
        QuantizeF32ToI8(x.data(), 64, &s, 0, &zp8, 0, -128, 127, out8.data());
        for (int64_t i = 0; i < 64; ++i) {
          CAPTURE(i);
          CHECK(out8[i] == quant::QuantizeValue(x[i], s, zp8, -128, 127));
        }
      }
    }
  }
}

TEST_CASE("8-bit QuantizeF32ToU8 / ToI8 (reciprocal multiply or division) match the reference") {
  // The one-pass kernel multiplies by 1 / scale where it can decide the rounding: values on and
  // a hair off half-integer quotients, scales with and without a usable reciprocal, specials.
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> scales = {1.0f / 255.0f, 0.1f,   3.0f,  0.0078125f,
                                     7.3e-3f,       1e-30f, 3e38f, 1e-39f /* subnormal: division */,
                                     0.5f,          2.7e-5f};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (float s : scales) {
      CAPTURE(s);
      for (int64_t n : {1, 5, 16, 17, 64, 100, 1000}) {
        CAPTURE(n);
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          const float k = std::floor(unit(rng) * 300.0f);
          switch (i % 6) {
            case 0:
              x[i] = unit(rng) * 300.0f * s;
              break;  // any quotient
            case 1:
              x[i] = (k + 0.5f) * s;
              break;  // near a tie
            case 2:
              x[i] = std::nextafter((k + 0.5f) * s, kInf);
              break;  // a hair above
            case 3:
              x[i] = std::nextafter((k + 0.5f) * s, -kInf);
              break;  // a hair below
            case 4:
              x[i] = unit(rng) * 1e4f * s;
              break;  // saturating
            default:
              x[i] = unit(rng);
              break;
          }
        }
        if (n >= 17) {
          x[7] = kInf;
          x[8] = -kInf;
          x[9] = std::nanf("");
          x[10] = -0.0f;
          x[11] = 3e38f;
          x[12] = -1e-42f;
        }
        for (int32_t zp : {0, 128, 255}) {
          std::vector<uint8_t> out(static_cast<size_t>(n), 0xAB);
          QuantizeF32ToU8(x.data(), n, &s, 0, &zp, 0, 0, 255, out.data());
          for (int64_t i = 0; i < n; ++i) {
            CAPTURE(i);
            CAPTURE(x[i]);
            CHECK(out[i] == quant::QuantizeValue(x[i], s, zp, 0, 255));
          }
        }
        for (int32_t zp : {-128, 0, 127}) {
          std::vector<int8_t> out(static_cast<size_t>(n), 0x5A);
          QuantizeF32ToI8(x.data(), n, &s, 0, &zp, 0, -128, 127, out.data());
          for (int64_t i = 0; i < n; ++i) {
            CAPTURE(i);
            CAPTURE(x[i]);
            CHECK(out[i] == quant::QuantizeValue(x[i], s, zp, -128, 127));
          }
        }
        // Per-element scales and zero points take the division.
        std::vector<float> sv(static_cast<size_t>(n));
        std::vector<int32_t> zv(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          sv[i] = s * (1.0f + 0.25f * static_cast<float>(i % 3));
          zv[i] = static_cast<int32_t>(rng() % 256);
        }
        std::vector<uint8_t> out(static_cast<size_t>(n));
        QuantizeF32ToU8(x.data(), n, sv.data(), 1, zv.data(), 1, 0, 255, out.data());
        for (int64_t i = 0; i < n; ++i) {
          CAPTURE(i);
          CHECK(out[i] == quant::QuantizeValue(x[i], sv[i], zv[i], 0, 255));
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
  // Rounded before the zero point: 2.5 -> 2 (+3 = 5), 3.5 -> 4 (+3 = 7), -3.5 -> -4 (+3 = -1 -> 0);
  // adding 3 first would give 6, 6, 0.
  CHECK(outu == std::vector<uint8_t>{5, 7, 0, 255, 0});
}

// The double-precision reference: round_half_even(double(acc) * double(m)) + zp, NaN -> zp,
// clamped (written out independently of the kernel).
template <typename T>
std::vector<T> RequantizeRef(const std::vector<int32_t>& acc, const std::vector<float>& m,
                             int64_t mstep, int32_t zp, int32_t lo, int32_t hi) {
  std::vector<T> out(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    double v = static_cast<double>(acc[i]) * static_cast<double>(m[i * mstep]);
    v = std::nearbyint(v);
    if (std::isnan(v)) v = 0;
    v = v + static_cast<double>(zp);
    v = std::min(std::max(v, static_cast<double>(lo)), static_cast<double>(hi));
    out[i] = static_cast<T>(static_cast<int32_t>(v));
  }
  return out;
}

TEST_CASE("Requantize is bit-identical to the double reference on every target") {
  std::mt19937 rng(11);
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  const float kInf = std::numeric_limits<float>::infinity();
  // Multipliers: typical small ones, exact powers of two (ties: acc * 0.5, * 0.25), 1, large,
  // tiny, denormal, infinities and NaN.
  const std::vector<float> special = {0.5f,    0.25f,  0.125f, 1.0f,  1.5f,   3.0e-5f, 7.1e-3f,
                                      0.0f,    -0.5f,  1e-30f, 1e-40f, 65536.0f, kInf, -kInf,
                                      std::nanf(""), 0.0078125f, 2.5f};
  std::uniform_int_distribution<int32_t> any_acc(kMin, kMax);
  std::uniform_int_distribution<int32_t> small_acc(-1000, 1000);
  std::uniform_int_distribution<size_t> pick(0, special.size() - 1);
  std::uniform_real_distribution<float> mdist(1e-6f, 0.1f);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100}) {
      for (int mode = 0; mode < 6; ++mode) {
        CAPTURE(n);
        CAPTURE(mode);
        const bool per_elem = mode & 1;
        std::vector<int32_t> acc(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          switch ((i + mode) % 5) {
            case 0: acc[i] = any_acc(rng); break;
            case 1: acc[i] = small_acc(rng); break;
            case 2: acc[i] = (i & 2) ? kMin : kMax; break;
            case 3: acc[i] = 2 * small_acc(rng) + 1; break;  // odd: x.5 ties with m = 0.5
            default: acc[i] = (i & 1) ? kMin + 1 : kMax - 1; break;
          }
        }
        std::vector<float> m(per_elem ? static_cast<size_t>(std::max<int64_t>(n, 1)) : 1);
        for (auto& v : m) v = (mode < 2) ? special[pick(rng)] : (mode < 4 ? 0.5f : mdist(rng));
        const int64_t mstep = per_elem ? 1 : 0;
        for (int32_t zp : {0, 3, 128, -128, 127, 255}) {
          CAPTURE(zp);
          if (zp >= 0) {
            std::vector<uint8_t> out(static_cast<size_t>(n), 0xAB);
            RequantizeI32ToU8(acc.data(), n, m.data(), mstep, zp, 0, 255, out.data());
            CHECK(out == RequantizeRef<uint8_t>(acc, m, mstep, zp, 0, 255));
          }
          if (zp <= 127) {
            std::vector<int8_t> out(static_cast<size_t>(n), 0x5A);
            RequantizeI32ToI8(acc.data(), n, m.data(), mstep, zp, -128, 127, out.data());
            CHECK(out == RequantizeRef<int8_t>(acc, m, mstep, zp, -128, 127));
          }
        }
      }
    }
  }
}

TEST_CASE("RequantizeBias adds the int32 bias with wrapping, then requantizes, on every target") {
  std::mt19937 rng(23);
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  std::uniform_int_distribution<int32_t> any(kMin, kMax);
  std::uniform_int_distribution<int32_t> small(-5000, 5000);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {0, 1, 3, 8, 17, 33, 64, 100}) {
      for (int mode = 0; mode < 4; ++mode) {
        CAPTURE(n);
        CAPTURE(mode);
        const int64_t bstep = mode & 1, mstep = (mode >> 1) & 1;
        std::vector<int32_t> acc(static_cast<size_t>(n)),
            bias(static_cast<size_t>(std::max<int64_t>(n, 1)));
        for (int64_t i = 0; i < n; ++i) acc[i] = (i % 4 == 0) ? any(rng) : small(rng);
        for (size_t i = 0; i < bias.size(); ++i)
          bias[i] = (i % 3 == 0) ? (i & 1 ? kMax : kMin) : small(rng);
        if (n > 2) acc[2] = kMax;  // + a positive bias wraps to negative
        std::vector<float> m(static_cast<size_t>(std::max<int64_t>(n, 1)));
        for (size_t i = 0; i < m.size(); ++i) m[i] = (i % 2) ? 0.5f : 0.0123f;
        // The reference: the wrapped sum, then the plain requantization reference.
        std::vector<int32_t> sum(acc.size());
        for (int64_t i = 0; i < n; ++i) {
          sum[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) +
                                        static_cast<uint32_t>(bias[i * bstep]));
        }
        std::vector<uint8_t> out(static_cast<size_t>(n), 0xAB);
        RequantizeBiasRowsI32ToU8(acc.data(), n, 1, n, bias.data(), bstep, m.data(), mstep, 7, 0,
                                  255, out.data(), n);
        CHECK(out == RequantizeRef<uint8_t>(sum, m, mstep, 7, 0, 255));
        std::vector<int8_t> outs(static_cast<size_t>(n), 0x5A);
        RequantizeBiasRowsI32ToI8(acc.data(), n, 1, n, bias.data(), bstep, m.data(), mstep, -3,
                                  -128, 127, outs.data(), n);
        CHECK(outs == RequantizeRef<int8_t>(sum, m, mstep, -3, -128, 127));
        // The same runs as 3 rows of a strided matrix: every row gets the same result.
        if (n > 0) {
          const int64_t lda = n + 2, ldo = n + 1;
          std::vector<int32_t> acc3(static_cast<size_t>(3 * lda), 0);
          for (int r = 0; r < 3; ++r) std::copy(acc.begin(), acc.end(), acc3.begin() + r * lda);
          std::vector<uint8_t> out3(static_cast<size_t>(3 * ldo), 0xCD);
          RequantizeBiasRowsI32ToU8(acc3.data(), lda, 3, n, bias.data(), bstep, m.data(), mstep, 7,
                                    0, 255, out3.data(), ldo);
          const auto want = RequantizeRef<uint8_t>(sum, m, mstep, 7, 0, 255);
          for (int r = 0; r < 3; ++r) {
            CHECK(std::equal(want.begin(), want.end(), out3.begin() + r * ldo));
            CHECK(out3[r * ldo + n] == 0xCD);  // the stride gap is not written
          }
        }
        // A null bias is the unbiased requantization.
        RequantizeBiasRowsI32ToU8(acc.data(), n, 1, n, nullptr, bstep, m.data(), mstep, 7, 0, 255,
                                  out.data(), n);
        CHECK(out == RequantizeRef<uint8_t>(acc, m, mstep, 7, 0, 255));
      }
    }
  }
}

TEST_CASE("RequantizeBias of dense rows with per-column parameters (grouped rows) is exact") {
  // A convolution block's sums [positions, channels] with per-channel bias and multiplier:
  // widths that no vector length divides are requantized several rows at a time.
  std::mt19937 rng(29);
  std::uniform_int_distribution<int32_t> small(-3000, 3000);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t cols : {1, 3, 6, 8, 12, 16, 17, 24, 40, 100, 300}) {
      // Row counts that leave remainders after groups of two vectors, then of one.
      for (int64_t rows : {1, 2, 5, 7, 16, 37, 100, 133}) {
        CAPTURE(cols);
        CAPTURE(rows);
        std::vector<int32_t> acc(static_cast<size_t>(rows * cols)), bias(static_cast<size_t>(cols));
        std::vector<float> m(static_cast<size_t>(cols));
        for (auto& v : acc) v = small(rng);
        for (int64_t j = 0; j < cols; ++j) {
          bias[j] = small(rng);
          m[j] = j % 3 == 0 ? 0.5f : (j % 3 == 1 ? 0.25f : 0.0123f);  // .5 ties
        }
        std::vector<uint8_t> got(acc.size(), 0xAB);
        RequantizeBiasRowsI32ToU8(acc.data(), cols, rows, cols, bias.data(), 1, m.data(), 1, 7, 0,
                                  255, got.data(), cols);
        std::vector<int8_t> got_s(acc.size(), 0x5A);
        RequantizeBiasRowsI32ToI8(acc.data(), cols, rows, cols, bias.data(), 1, m.data(), 1, -3,
                                  -128, 127, got_s.data(), cols);
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<int32_t> sum(static_cast<size_t>(cols));
          for (int64_t j = 0; j < cols; ++j) sum[j] = acc[r * cols + j] + bias[j];
          const auto want = RequantizeRef<uint8_t>(sum, m, 1, 7, 0, 255);
          CHECK(std::equal(want.begin(), want.end(), got.begin() + r * cols));
          const auto want_s = RequantizeRef<int8_t>(sum, m, 1, -3, -128, 127);
          CHECK(std::equal(want_s.begin(), want_s.end(), got_s.begin() + r * cols));
        }
        // One bias and multiplier for the whole dense block (requantized as one row).
        std::vector<uint8_t> one(acc.size(), 0xAB);
        RequantizeBiasRowsI32ToU8(acc.data(), cols, rows, cols, bias.data(), 0, m.data(), 0, 7, 0,
                                  255, one.data(), cols);
        std::vector<int32_t> sum(acc.size());
        for (size_t i = 0; i < acc.size(); ++i) sum[i] = acc[i] + bias[0];
        CHECK(one == RequantizeRef<uint8_t>(sum, m, 0, 7, 0, 255));
      }
    }
  }
}

TEST_CASE("RequantizePerRow: one bias and multiplier per row, exact on every target") {
  // A channels-first block [channels, positions]: row r is channel r. Multipliers that are .5-tie
  // makers, one beyond the float32 lanes' range (float64 lanes or the scalar reference for the
  // whole block), odd zero points, strided rows, tails past the vectors, null bias.
  std::mt19937 rng(31);
  std::uniform_int_distribution<int32_t> small(-3000, 3000);
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t cols : {1, 7, 16, 32, 45, 96, 192}) {
      for (int64_t rows : {1, 3, 8}) {
        for (int mode = 0; mode < 6; ++mode) {
          CAPTURE(cols);
          CAPTURE(rows);
          CAPTURE(mode);
          const int64_t mult_row = mode & 1;
          const bool with_bias = (mode & 2) == 0, huge = mode >= 4;
          const int64_t lda = cols + 3, ldo = cols + 2;
          std::vector<int32_t> acc(static_cast<size_t>(rows * lda), 0);
          std::vector<int32_t> bias(static_cast<size_t>(rows));
          std::vector<float> m(static_cast<size_t>(rows));
          for (auto& v : acc) v = small(rng);
          for (int64_t r = 0; r < rows; ++r) {
            bias[r] = r == 1 ? kMax : small(rng);  // wraps with a positive sum
            m[r] = r % 3 == 0 ? 0.5f : (r % 3 == 1 ? 0.125f : 0.0123f);
          }
          if (huge) m[rows - 1] = 0x1p61f;  // outside the float32 lanes' exact range
          std::vector<uint8_t> got(static_cast<size_t>(rows * ldo), 0xAB);
          RequantizePerRowI32ToU8(acc.data(), lda, rows, cols, with_bias ? bias.data() : nullptr,
                                  m.data(), mult_row, 7, 0, 255, got.data(), ldo);
          std::vector<int8_t> got_s(static_cast<size_t>(rows * ldo), 0x5A);
          RequantizePerRowI32ToI8(acc.data(), lda, rows, cols, with_bias ? bias.data() : nullptr,
                                  m.data(), mult_row, -3, -128, 127, got_s.data(), ldo);
          for (int64_t r = 0; r < rows; ++r) {
            CAPTURE(r);
            std::vector<int32_t> sum(static_cast<size_t>(cols));
            for (int64_t j = 0; j < cols; ++j) {
              const uint32_t b = with_bias ? static_cast<uint32_t>(bias[r]) : 0u;
              sum[j] = static_cast<int32_t>(static_cast<uint32_t>(acc[r * lda + j]) + b);
            }
            const std::vector<float> mr = {m[mult_row ? r : 0]};
            const auto want = RequantizeRef<uint8_t>(sum, mr, 0, 7, 0, 255);
            CHECK(std::equal(want.begin(), want.end(), got.begin() + r * ldo));
            CHECK(got[r * ldo + cols] == 0xAB);  // the stride gap is not written
            const auto want_s = RequantizeRef<int8_t>(sum, mr, 0, -3, -128, 127);
            CHECK(std::equal(want_s.begin(), want_s.end(), got_s.begin() + r * ldo));
          }
        }
      }
    }
  }
}

// QdqBinary parameters for the signedness of a, b and y: scales in power-of-two ratios to y's
// (many exact .5 ties) and odd zero points.
QdqBinaryParams TieParams(QdqBinaryOp op, bool as, bool bs, bool ys) {
  QdqBinaryParams p;
  p.a_scale = 0.05f;
  p.b_scale = op == QdqBinaryOp::kMul ? 0.025f : 0.05f;
  p.y_scale = op == QdqBinaryOp::kMul ? 0.0025f : 0.1f;
  p.a_zp = as ? -3 : 131;
  p.b_zp = bs ? 5 : 127;
  p.y_zp = ys ? -7 : 3;
  p.lo = ys ? -128 : 0;
  p.hi = ys ? 127 : 255;
  return p;
}

TEST_CASE("QdqBinary8 equals dequantize, the float32 op and quantize, on every target") {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int combo = 0; combo < 8; ++combo) {
      const bool as = combo & 1, bs = (combo >> 1) & 1, ys = (combo >> 2) & 1;
      for (QdqBinaryOp op : {QdqBinaryOp::kAdd, QdqBinaryOp::kSub, QdqBinaryOp::kMul,
                             QdqBinaryOp::kDiv}) {
        // steps 3 and 4: scales so large that dequantized values, sums and products overflow
        // to infinities and NaN (the kernel's NaN select), both operands full or b broadcast.
        for (int steps = 0; steps < 5; ++steps) {
          const int64_t a_step = steps == 2 ? 0 : 1, b_step = steps == 1 || steps == 4 ? 0 : 1;
          const bool huge = steps >= 3;
          const int64_t n = 97;
          CAPTURE(combo);
          CAPTURE(static_cast<int>(op));
          CAPTURE(steps);
          std::vector<uint8_t> a(n), b(n);
          for (int64_t i = 0; i < n; ++i) {
            a[i] = static_cast<uint8_t>(byte(rng));
            b[i] = static_cast<uint8_t>(byte(rng));
          }
          QdqBinaryParams p = TieParams(op, as, bs, ys);
          if (huge) {
            p.a_scale = 1e37f;
            p.b_scale = 3e36f;
            p.y_scale = 1e36f;
          }
          // The three kernels of the unfused graph.
          std::vector<float> fa(n), fb(n), fy(n);
          for (int64_t i = 0; i < n; ++i) {
            const uint8_t qa = a[i * a_step], qb = b[i * b_step];
            if (as) {
              DequantizeI8ToF32(reinterpret_cast<const int8_t*>(&qa), 1, &p.a_scale, 0, &p.a_zp,
                                0, &fa[i]);
            } else {
              DequantizeU8ToF32(&qa, 1, &p.a_scale, 0, &p.a_zp, 0, &fa[i]);
            }
            if (bs) {
              DequantizeI8ToF32(reinterpret_cast<const int8_t*>(&qb), 1, &p.b_scale, 0, &p.b_zp,
                                0, &fb[i]);
            } else {
              DequantizeU8ToF32(&qb, 1, &p.b_scale, 0, &p.b_zp, 0, &fb[i]);
            }
            fy[i] = op == QdqBinaryOp::kAdd   ? fa[i] + fb[i]
                    : op == QdqBinaryOp::kSub ? fa[i] - fb[i]
                    : op == QdqBinaryOp::kMul ? fa[i] * fb[i]
                                              : fa[i] / fb[i];
          }
          std::vector<uint8_t> want(n);
          if (ys) {
            QuantizeF32ToI8(fy.data(), n, &p.y_scale, 0, &p.y_zp, 0, p.lo, p.hi,
                            reinterpret_cast<int8_t*>(want.data()));
          } else {
            QuantizeF32ToU8(fy.data(), n, &p.y_scale, 0, &p.y_zp, 0, p.lo, p.hi, want.data());
          }
          std::vector<uint8_t> got(n, 0xAB);
          const int64_t done =
              QdqBinary8(op, as, a.data(), a_step, bs, b.data(), b_step, p, ys, got.data(), n);
          CHECK(done <= n);
          CHECK(done >= n - 16);  // whole vectors only
          bool ok = true;
          for (int64_t i = 0; i < done; ++i) ok = ok && got[i] == want[i];
          CHECK(ok);
          for (int64_t i = done; i < n; ++i) CHECK(got[i] == 0xAB);  // the tail is the caller's
        }
      }
    }
  }
  // A y scale whose reciprocal is not a normal float: nothing done (the caller divides).
  QdqBinaryParams p;
  p.y_scale = 1e-39f;
  std::vector<uint8_t> a(64, 1), b(64, 2), y(64, 0);
  CHECK(QdqBinary8(QdqBinaryOp::kAdd, false, a.data(), 1, false, b.data(), 1, p, false, y.data(),
                   64) == 0);
}

TEST_CASE("QdqBinary8Runs equals one QdqBinary8 call per run, on every target") {
  // Runs with a per-run broadcast operand (a squeeze-and-excitation Mul's channel scale), on
  // either side, and dense pairs; the operands' run strides leave gaps, and the output's too, so
  // a run written at the wrong offset, or a broadcast value not reloaded per run, differs.
  std::mt19937 rng(47);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int combo = 0; combo < 8; ++combo) {
      const bool as = combo & 1, bs = (combo >> 1) & 1, ys = (combo >> 2) & 1;
      for (QdqBinaryOp op : {QdqBinaryOp::kAdd, QdqBinaryOp::kMul, QdqBinaryOp::kDiv}) {
        for (int layout = 0; layout < 3; ++layout) {
          CAPTURE(combo);
          CAPTURE(static_cast<int>(op));
          CAPTURE(layout);
          const int64_t n = 83, count = 7;  // a tail in every run
          const int64_t a_step = layout == 1 ? 0 : 1, b_step = layout == 0 ? 0 : 1;
          QdqBinaryRuns runs;
          runs.count = count;
          runs.a_run = a_step ? n + 5 : 2;
          runs.b_run = b_step ? n + 3 : 1;
          runs.out_run = n + 9;
          std::vector<uint8_t> a(count * runs.a_run + n), b(count * runs.b_run + n);
          for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
          for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
          const QdqBinaryParams p = TieParams(op, as, bs, ys);
          const size_t out_size = static_cast<size_t>(count * runs.out_run);
          std::vector<uint8_t> want(out_size, 0xAB), got(out_size, 0xAB);
          int64_t want_done = -1;
          for (int64_t r = 0; r < count; ++r) {
            want_done =
                QdqBinary8(op, as, a.data() + r * runs.a_run, a_step, bs, b.data() + r * runs.b_run,
                           b_step, p, ys, want.data() + r * runs.out_run, n);
          }
          const int64_t done = QdqBinary8Runs(op, as, a.data(), a_step, bs, b.data(), b_step, p, ys,
                                              got.data(), n, runs);
          CHECK(done == want_done);
          CHECK(done >= n - 16);
          CHECK(got == want);  // the tails and gaps untouched in both
        }
      }
    }
  }
}

TEST_CASE("QdqBinary8 and QuantizeF32ToU8 / ToI8 equal the scalar division on every byte pair") {
  // Every (a, b) byte pair of an Add / Mul, quantized with scales whose quotients land on and
  // next to half-integers: the kernels round x * (1 / y_scale) and divide only where that lies
  // within a small margin of a half-integer, so a margin too small for the reciprocal's error
  // shows up here as a byte that differs from quant::QuantizeValue (the division).
  struct Scales {
    float a, b, y;
  };
  const std::vector<Scales> scales = {{0.05f, 0.05f, 0.1f},          {0.0173f, 0.0311f, 0.0457f},
                                      {0.1f, 0.3f, 0.7f},            {0.0123f, 0.0123f, 0.0041f},
                                      {0.003921f, 0.02f, 0.02353f}, {0.25f, 0.125f, 0.37f}};
  std::vector<uint8_t> a(65536), b(65536);
  for (int i = 0; i < 65536; ++i) {
    a[i] = static_cast<uint8_t>(i & 255);
    b[i] = static_cast<uint8_t>(i >> 8);
  }
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Scales& sc : scales) {
      for (QdqBinaryOp op : {QdqBinaryOp::kAdd, QdqBinaryOp::kMul}) {
        for (int zps = 0; zps < 2; ++zps) {
          CAPTURE(sc.y);
          CAPTURE(static_cast<int>(op));
          QdqBinaryParams p;
          p.a_scale = sc.a;
          p.b_scale = op == QdqBinaryOp::kMul ? sc.b * 0.1f : sc.b;
          p.y_scale = op == QdqBinaryOp::kMul ? sc.y * 0.3f : sc.y;
          p.a_zp = zps ? 131 : 0;
          p.b_zp = zps ? 77 : 128;
          p.y_zp = zps ? 3 : 128;
          p.lo = 0;
          p.hi = 255;
          std::vector<float> fy(65536);
          std::vector<uint8_t> want(65536);
          for (int i = 0; i < 65536; ++i) {
            const float fa = quant::DequantizeValue(a[i], p.a_scale, p.a_zp);
            const float fb = quant::DequantizeValue(b[i], p.b_scale, p.b_zp);
            fy[i] = op == QdqBinaryOp::kAdd ? fa + fb : fa * fb;
            want[i] = static_cast<uint8_t>(quant::QuantizeValue(fy[i], p.y_scale, p.y_zp, 0, 255));
          }
          std::vector<uint8_t> got(65536, 0xAB);
          const int64_t done = QdqBinary8(op, false, a.data(), 1, false, b.data(), 1, p, false,
                                          got.data(), 65536);
          CHECK(done == 65536);
          int64_t wrong = 0;
          for (int64_t i = 0; i < done; ++i) wrong += got[i] != want[i];
          CHECK(wrong == 0);
          // The same pairs with one operand broadcast (b, then a): a run of 256 per byte.
          for (int side = 0; side < 2; ++side) {
            CAPTURE(side);
            wrong = 0;
            for (int v = 0; v < 256; ++v) {
              const uint8_t one = static_cast<uint8_t>(v);
              std::vector<uint8_t> run(256, 0xAB);
              const int64_t run_done = side == 0 ? QdqBinary8(op, false, a.data(), 1, false, &one,
                                                              0, p, false, run.data(), 256)
                                                 : QdqBinary8(op, false, &one, 0, false, a.data(),
                                                              1, p, false, run.data(), 256);
              CHECK(run_done == 256);
              // a.data()[i] = i: the pair (a, b) = (i, v) is want[v * 256 + i], and on side 1
              // (a, b) = (v, i) is want[i * 256 + v].
              for (int i = 0; i < 256; ++i) {
                wrong += run[i] != want[side == 0 ? v * 256 + i : i * 256 + v];
              }
            }
            CHECK(wrong == 0);
          }
          // The same float32 values through the one-pass quantizer.
          std::fill(got.begin(), got.end(), 0xAB);
          QuantizeF32ToU8(fy.data(), 65536, &p.y_scale, 0, &p.y_zp, 0, 0, 255, got.data());
          wrong = 0;
          for (int i = 0; i < 65536; ++i) wrong += got[i] != want[i];
          CHECK(wrong == 0);
          // Signed outputs: zero point -3 keeps the ties of the u8 case one apart.
          std::vector<int8_t> got8(65536, 0x5A);
          const int32_t zp8 = -3;
          QuantizeF32ToI8(fy.data(), 65536, &p.y_scale, 0, &zp8, 0, -128, 127, got8.data());
          wrong = 0;
          for (int i = 0; i < 65536; ++i) {
            wrong += got8[i] != quant::QuantizeValue(fy[i], p.y_scale, zp8, -128, 127);
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
}

TEST_CASE("SumU8 / SumI8 and their Rows forms are exact on every target") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {0, 1, 7, 16, 31, 48, 63, 64, 65, 95, 127, 128, 129, 1000, 70001}) {
      CAPTURE(n);
      std::vector<uint8_t> u(static_cast<size_t>(n));
      std::vector<int8_t> s(static_cast<size_t>(n));
      int64_t want_u = 0, want_s = 0;
      for (int64_t i = 0; i < n; ++i) {
        u[i] = static_cast<uint8_t>(i % 5 == 0 ? 255 : i * 37 + 3);
        s[i] = static_cast<int8_t>(i % 7 == 0 ? -128 : (i % 7 == 1 ? 127 : i * 11 - 50));
        want_u += u[i];
        want_s += s[i];
      }
      CHECK(SumU8(u.data(), n) == want_u);
      CHECK(SumI8(s.data(), n) == want_s);
      // The same values as 3 rows of n / 3 at a stride of n / 3 + 1 (a byte between rows that
      // must not count), against per-row sums.
      const int64_t w = n / 3;
      if (w == 0) continue;
      std::vector<uint8_t> ur(static_cast<size_t>(3 * (w + 1)), 200);
      std::vector<int8_t> sr(static_cast<size_t>(3 * (w + 1)), -100);
      int64_t want_ur[3] = {0, 0, 0}, want_sr[3] = {0, 0, 0};
      for (int64_t r = 0; r < 3; ++r) {
        for (int64_t i = 0; i < w; ++i) {
          ur[r * (w + 1) + i] = u[r * w + i];
          sr[r * (w + 1) + i] = s[r * w + i];
          want_ur[r] += u[r * w + i];
          want_sr[r] += s[r * w + i];
        }
      }
      int64_t got_ur[3], got_sr[3];
      SumU8Rows(ur.data(), 3, w, w + 1, got_ur);
      SumI8Rows(sr.data(), 3, w, w + 1, got_sr);
      for (int r = 0; r < 3; ++r) {
        CHECK(got_ur[r] == want_ur[r]);
        CHECK(got_sr[r] == want_sr[r]);
      }
    }
  }
}

// RequantizeMeans' independent reference: the op's definition, one output at a time.
template <typename T>
T MeanReference(int64_t sum, int64_t count, int32_t x_zp, double x_scale, double y_scale,
                int32_t y_zp) {
  const double lo = std::is_signed_v<T> ? -128.0 : 0.0, hi = std::is_signed_v<T> ? 127.0 : 255.0;
  const double mean =
      static_cast<double>(sum - static_cast<int64_t>(x_zp) * count) * x_scale / count;
  double q = mean / y_scale;
  if (std::isnan(q)) q = 0.0;
  q = std::nearbyint(q) + y_zp;
  return static_cast<T>(std::clamp(q, lo, hi));
}

TEST_CASE("RequantizeMeans matches the double definition on every target: ties, NaN, infinity") {
  std::mt19937 rng(11);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    // (count, x_scale, y_scale): scales whose quotients put many means on exact half-integers
    // (x_scale / y_scale = 1/2 with odd plane sums), general ones, a zero y_scale (0 / 0 and
    // x / 0: NaN and infinities), huge ratios (saturation).
    const double cases[][3] = {{1, 0.5, 1.0},       {3, 1.5, 1.0}, {192, 0.02, 0.01},
                               {48, 0.0371, 0.023}, {7, 1.0, 0.0}, {5, 1e30, 1e-30},
                               {96, 0.004, 0.5}};
    for (const auto& c : cases) {
      const int64_t count = static_cast<int64_t>(c[0]);
      for (int32_t x_zp : {0, 3, 128}) {
        for (int32_t y_zp : {0, 5, 127, -7}) {
          CAPTURE(count);
          CAPTURE(c[1]);
          CAPTURE(c[2]);
          CAPTURE(x_zp);
          CAPTURE(y_zp);
          // Odd lengths around the vector widths; sums over the whole range of `count` bytes.
          const int64_t n = 1 + static_cast<int64_t>(rng() % 37);
          std::vector<int64_t> sums(static_cast<size_t>(n));
          for (auto& v : sums) v = static_cast<int64_t>(rng() % (255 * count + 1));
          std::vector<uint8_t> got_u(static_cast<size_t>(n));
          std::vector<int8_t> got_s(static_cast<size_t>(n));
          RequantizeMeansToU8(sums.data(), n, count, x_zp, c[1], c[2], y_zp, got_u.data());
          RequantizeMeansToI8(sums.data(), n, count, x_zp, c[1], c[2], y_zp, got_s.data());
          int64_t wrong = 0;
          for (int64_t i = 0; i < n; ++i) {
            wrong += got_u[i] != MeanReference<uint8_t>(sums[i], count, x_zp, c[1], c[2], y_zp);
            wrong += got_s[i] != MeanReference<int8_t>(sums[i], count, x_zp, c[1], c[2], y_zp);
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
}

TEST_CASE("Requantize: the float32 lanes agree with the double reference on a dense sweep") {
  // Accumulators spread over the in-range outputs and their edges, with multipliers that put
  // many exact products near half-integers (m = k / 2^j) and random ones; every target.
  std::mt19937 rng(97);
  std::uniform_int_distribution<int32_t> acc_dist(-(1 << 20), 1 << 20);
  std::uniform_real_distribution<float> m_dist(1e-5f, 0.05f);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int trial = 0; trial < 24; ++trial) {
      CAPTURE(trial);
      const int64_t n = 4099;
      std::vector<float> m(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        m[i] = trial % 2 ? m_dist(rng) : std::ldexp(static_cast<float>(1 + i % 13), -(6 + i % 9));
      }
      const int64_t mstep = trial % 4 < 2 ? 1 : 0;
      // Most products land in [-300, 300] (the outputs and their clamping edges).
      std::vector<int32_t> acc(static_cast<size_t>(n));
      std::uniform_real_distribution<double> out_dist(-300.0, 300.0);
      for (int64_t i = 0; i < n; ++i) {
        acc[i] = i % 8 == 0 ? acc_dist(rng)
                            : static_cast<int32_t>(out_dist(rng) / m[i * mstep]) + (i % 3) - 1;
      }
      if (trial % 3 == 0) {  // around +-2^24, where float32 stops being exact
        for (int64_t i = 0; i < n; i += 3) acc[i] = (1 << 24) - 2 + static_cast<int32_t>(i % 5);
      }
      const int32_t zp = trial % 5 == 0 ? 0 : (trial % 5 == 1 ? 255 : 128);
      std::vector<uint8_t> out(static_cast<size_t>(n));
      RequantizeI32ToU8(acc.data(), n, m.data(), mstep, zp, 0, 255, out.data());
      CHECK(out == RequantizeRef<uint8_t>(acc, m, mstep, zp, 0, 255));
      const int32_t zs = zp - 128;
      std::vector<int8_t> outs(static_cast<size_t>(n));
      RequantizeI32ToI8(acc.data(), n, m.data(), mstep, zs, -128, 127, outs.data());
      CHECK(outs == RequantizeRef<int8_t>(acc, m, mstep, zs, -128, 127));
    }
  }
}

TEST_CASE("Requantize: products a hair off a half-integer round like the double reference") {
  // 0.1f is 0.100000001490116..., so acc = 5 + 10 k gives k + 0.5 + 1.5e-9 * acc: float32
  // arithmetic lands on the tie (and would round to even), the double reference rounds up.
  // The same below zero, and with 0.3f / 0.7f (slightly below and above 0.3 / 0.7).
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (float m : {0.1f, 0.3f, 0.7f}) {
      std::vector<int32_t> acc;
      for (int32_t k = -400; k < 400; ++k) acc.push_back(5 + 10 * k);
      const std::vector<float> mv = {m};
      for (int32_t zp : {0, 7, 128}) {
        CAPTURE(m);
        CAPTURE(zp);
        const int64_t n = static_cast<int64_t>(acc.size());
        std::vector<uint8_t> out(acc.size());
        RequantizeI32ToU8(acc.data(), n, mv.data(), 0, zp, 0, 255, out.data());
        CHECK(out == RequantizeRef<uint8_t>(acc, mv, 0, zp, 0, 255));
        std::vector<int8_t> outs(acc.size());
        RequantizeI32ToI8(acc.data(), n, mv.data(), 0, zp - 128, -128, 127, outs.data());
        CHECK(outs == RequantizeRef<int8_t>(acc, mv, 0, zp - 128, -128, 127));
      }
    }
  }
}

TEST_CASE("Requantize: narrow output ranges, multipliers just below 1, extreme sums") {
  // A fused activation's range ([lo, hi] inside the type's), sums at the int32 extremes whose
  // products saturate the 16-bit narrowing of the AVX-512 path, and multipliers up to the
  // largest float below 1; every target, 64 elements (whole vector pairs).
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> any(std::numeric_limits<int32_t>::min(),
                                             std::numeric_limits<int32_t>::max());
  std::uniform_int_distribution<int32_t> near(-70000, 70000);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (float m : {0.99999994f, 0.75f, 0.5f, 0.003f}) {
      std::vector<int32_t> acc(64);
      for (int i = 0; i < 64; ++i) {
        acc[i] = i % 4 == 0 ? any(rng)
                 : i % 4 == 1 ? (i & 8 ? std::numeric_limits<int32_t>::max()
                                       : std::numeric_limits<int32_t>::min())
                              : near(rng) / (m < 0.01f ? 1 : 300);
      }
      const std::vector<float> mv = {m};
      CAPTURE(m);
      for (int32_t zp : {0, 5, 250}) {
        CAPTURE(zp);
        std::vector<uint8_t> out(64);
        RequantizeI32ToU8(acc.data(), 64, mv.data(), 0, zp, 10, 200, out.data());
        CHECK(out == RequantizeRef<uint8_t>(acc, mv, 0, zp, 10, 200));
        std::vector<int8_t> outs(64);
        RequantizeI32ToI8(acc.data(), 64, mv.data(), 0, zp - 128, -100, 50, outs.data());
        CHECK(outs == RequantizeRef<int8_t>(acc, mv, 0, zp - 128, -100, 50));
      }
    }
  }
}

TEST_CASE("Requantize ties round half to even in the vector body") {
  // 32 elements so every target's vector loop (not only the scalar tail) sees the ties.
  std::vector<int32_t> acc(32);
  for (int i = 0; i < 32; ++i) acc[i] = (i % 8) - 4 + 2 * (i / 8);  // -4..3 shifted
  const float half = 0.5f;
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<int8_t> out(32);
    RequantizeI32ToI8(acc.data(), 32, &half, 0, 0, -128, 127, out.data());
    for (int i = 0; i < 32; ++i) {
      CAPTURE(i);
      CHECK(out[i] == static_cast<int8_t>(std::nearbyint(acc[i] * 0.5)));
    }
    const std::vector<int32_t> ext = {std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int32_t>::max(), 0, 1,
                                      -1, 255, 256, 511, 513, -255, -257, 3, 5, 7, 9, 11};
    std::vector<uint8_t> outu(ext.size());
    RequantizeI32ToU8(ext.data(), static_cast<int64_t>(ext.size()), &half, 0, 1, 0, 255,
                      outu.data());
    // round(acc / 2) + 1: the ties (1, -1, 255, 511, -255, 3, 5, 7, 9, 11) round to even before
    // the zero point is added.
    const std::vector<uint8_t> want = {0, 255, 1, 1, 1, 129, 129, 255, 255, 0, 0, 3, 3, 5, 5, 7};
    CHECK(outu == want);
  }
}

TEST_CASE("8-bit Dequantize matches the scalar formula on every target") {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int32_t> zpd(-128, 255);
  std::uniform_real_distribution<float> sd(1e-4f, 3.0f);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : {0, 1, 3, 4, 5, 8, 15, 16, 17, 33, 64, 70}) {
      for (int mode = 0; mode < 6; ++mode) {
        CAPTURE(n);
        CAPTURE(mode);
        const bool per_scale = mode & 1;
        const int zmode = mode / 2;  // 0: no zp, 1: one zp, 2: per element
        std::vector<uint8_t> qu(static_cast<size_t>(n));
        std::vector<int8_t> qi(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          qu[i] = static_cast<uint8_t>(byte(rng));
          qi[i] = static_cast<int8_t>(qu[i]);
        }
        std::vector<float> s(per_scale ? std::max<int64_t>(n, 1) : 1);
        for (auto& v : s) v = sd(rng);
        std::vector<int32_t> z(zmode == 2 ? std::max<int64_t>(n, 1) : 1);
        for (auto& v : z) v = zpd(rng);
        const int32_t* zp = zmode == 0 ? nullptr : z.data();
        const int64_t sstep = per_scale ? 1 : 0, zstep = zmode == 2 ? 1 : 0;
        std::vector<float> yu(static_cast<size_t>(n)), yi(static_cast<size_t>(n));
        DequantizeU8ToF32(qu.data(), n, s.data(), sstep, zp, zstep, yu.data());
        DequantizeI8ToF32(qi.data(), n, s.data(), sstep, zp, zstep, yi.data());
        for (int64_t i = 0; i < n; ++i) {
          const int32_t zz = zp ? zp[i * zstep] : 0;
          const float wu = static_cast<float>(static_cast<int32_t>(qu[i]) - zz) * s[i * sstep];
          const float wi = static_cast<float>(static_cast<int32_t>(qi[i]) - zz) * s[i * sstep];
          CHECK(yu[i] == wu);
          CHECK(yi[i] == wi);
        }
      }
    }
  }
}

TEST_CASE("ScaleI32RowsToF32 matches product-then-sum in float32 on every target") {
  std::mt19937 rng(22);
  std::uniform_int_distribution<int32_t> accd(std::numeric_limits<int32_t>::min(),
                                              std::numeric_limits<int32_t>::max());
  std::uniform_real_distribution<float> md(-2e-3f, 2e-3f), bd(-4.0f, 4.0f);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t rows : {1, 3}) {
      for (int64_t n : {1, 3, 4, 15, 16, 17, 33, 70}) {
        // mode 4, 5: one bias value for every column (bias_step 0).
        for (int mode = 0; mode < 6; ++mode) {
          CAPTURE(rows);
          CAPTURE(n);
          CAPTURE(mode);
          const bool per_column = mode & 1, with_bias = mode & 2 || mode >= 4;
          const int64_t bstep = mode >= 4 ? 0 : 1;
          // Row strides past n: the gaps must stay untouched.
          const int64_t lda = n + 5, ldy = n + 3;
          std::vector<int32_t> acc(static_cast<size_t>(rows * lda));
          for (auto& v : acc) v = accd(rng) >> (rng() % 31);  // every magnitude, both signs
          acc[0] = std::numeric_limits<int32_t>::min();
          acc[static_cast<size_t>((rows - 1) * lda + n - 1)] = std::numeric_limits<int32_t>::max();
          std::vector<float> mult(per_column ? n : 1), bias(n);
          for (auto& v : mult) v = md(rng);
          for (auto& v : bias) v = bd(rng);
          const int64_t mstep = per_column ? 1 : 0;
          const float* b = with_bias ? bias.data() : nullptr;
          std::vector<float> y(static_cast<size_t>(rows * ldy), -1.0f);
          ScaleI32RowsToF32(acc.data(), lda, rows, n, mult.data(), mstep, b, y.data(), ldy,
                            bstep);
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < ldy; ++j) {
              if (j >= n) {
                CHECK(y[r * ldy + j] == -1.0f);
                continue;
              }
              const float product = static_cast<float>(acc[r * lda + j]) * mult[j * mstep];
              const float want = with_bias ? product + bias[j * bstep] : product;
              CHECK(y[r * ldy + j] == want);
            }
          }
        }
      }
    }
  }
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

TEST_CASE("MinMaxF32 on every target: odd lengths, NaNs, infinities, all-NaN") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  for (const Target& t : CompiledTargets()) {
    ScopedTarget scoped(t);
    CAPTURE(t.name);
    for (int64_t n : {1, 3, 17, 64, 100, 1001}) {
      for (int kind = 0; kind < 4; ++kind) {
        CAPTURE(n);
        CAPTURE(kind);
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = u(rng);
        if (kind == 1) x[static_cast<size_t>(n / 2)] = std::nanf("");     // one NaN
        if (kind == 2) {                                                    // infinities
          x[0] = -std::numeric_limits<float>::infinity();
          x[static_cast<size_t>(n - 1)] = std::numeric_limits<float>::infinity();
        }
        if (kind == 3) std::fill(x.begin(), x.end(), std::nanf(""));        // all NaN
        float want_lo = 0, want_hi = 0;
        bool any = false;
        for (float v : x) {
          if (std::isnan(v)) continue;
          want_lo = any ? std::min(want_lo, v) : v;
          want_hi = any ? std::max(want_hi, v) : v;
          any = true;
        }
        float lo = 1, hi = 1;
        MinMaxF32(x.data(), n, &lo, &hi);
        CHECK(lo == want_lo);
        CHECK(hi == want_hi);
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
