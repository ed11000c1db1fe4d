// Tests for QGemmU8ToBytes / QGemmS8ToBytes (kernels/quant/qgemm.h): every output byte against
// an independent reference, the int64 sum of (a - za)(b - zb) truncated to int32, plus the bias,
// through the scalar quant::RequantizeValue. Bias and multipliers per row and per column, one
// multiplier for all, tie-laden power-of-two multipliers with odd zero points, multipliers the
// tiles do not take (>= 1: the int32 path), both output types, sizes around the tiles (rows per
// tile, 32-column panels, partial panels, 128-column task blocks, 64-row blocks), every compiled
// target and several thread counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/quant/qgemm.h"
#include "kernels/targets.h"
#include "quant/quant_params.h"
#include "reference/threads_parallel.h"

namespace simplecpp::kernels {
namespace {

struct RequantCase {
  int64_t m, n, k;
  bool a_signed, b_signed, out_signed, per_row, per_channel_mult, with_bias;
  int mult_kind;  // 0: powers of two (ties), 1: general below 1 (0.1 among them), 2: some >= 1
  // 0: one zero point for A and one for B; 1: one per row of A and per column of B, all equal
  // (the tiles' folded corrections); 2: one per row and column, not all equal (the general form).
  int zp_layout = 0;
};

void CheckRequantCase(const RequantCase& c, uint32_t seed, const Parallel& par) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.a_signed);
  CAPTURE(c.b_signed);
  CAPTURE(c.out_signed);
  CAPTURE(c.per_row);
  CAPTURE(c.per_channel_mult);
  CAPTURE(c.with_bias);
  CAPTURE(c.mult_kind);
  CAPTURE(c.zp_layout);
  std::mt19937 rng(seed);
  // Small values around the zero points keep the sums near the output range (ties survive the
  // clamp); a few extreme bytes reach it.
  auto byte = [&](bool is_signed, int32_t zp) {
    int32_t v = zp + static_cast<int32_t>(rng() % 9) - 4;
    if (rng() % 50 == 0) v = is_signed ? -128 : 255;
    return static_cast<uint8_t>(is_signed ? std::clamp(v, -128, 127) : std::clamp(v, 0, 255));
  };
  const int32_t za0 = c.a_signed ? -3 : 131, zb0 = c.b_signed ? 0 : 127;
  std::vector<int32_t> za(static_cast<size_t>(c.m), za0), zb(static_cast<size_t>(c.n), zb0);
  if (c.zp_layout == 2) {
    for (int64_t i = 0; i < c.m; ++i) za[i] = za0 + static_cast<int32_t>(i % 5) - 2;
    for (int64_t j = 0; j < c.n; ++j) zb[j] = zb0 + static_cast<int32_t>(j % 3);
  }
  std::vector<uint8_t> a(static_cast<size_t>(c.m * c.k)), b(static_cast<size_t>(c.k * c.n));
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t kk = 0; kk < c.k; ++kk) a[i * c.k + kk] = byte(c.a_signed, za[i]);
  }
  for (int64_t kk = 0; kk < c.k; ++kk) {
    for (int64_t j = 0; j < c.n; ++j) b[kk * c.n + j] = byte(c.b_signed, zb[j]);
  }
  auto as_int = [](uint8_t v, bool is_signed) {
    return is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v);
  };
  const int64_t count = c.per_row ? c.m : c.n;
  std::vector<float> mult(static_cast<size_t>(c.per_channel_mult ? count : 1));
  for (size_t i = 0; i < mult.size(); ++i) {
    if (c.mult_kind == 0) {
      mult[i] = std::ldexp(1.0f, -1 - static_cast<int>(i % 4));
    } else if (c.mult_kind == 1) {
      // 0.1f: 5 * 0.1f rounds to 0.5f in float32 (round: 0) where the exact product is above
      // 0.5 (1): lanes that only the scalar reference decides.
      mult[i] = i % 5 == 0 ? 0.1f : 0.0137f + 0.0031f * static_cast<float>(i % 11);
    } else {
      mult[i] = i % 3 == 0 ? 1.5f : 0.25f;
    }
  }
  std::vector<int32_t> bias(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) bias[i] = static_cast<int32_t>(i % 13) * 5 - 31;
  const int32_t zp = c.out_signed ? -7 : 129;
  const int32_t lo = c.out_signed ? -128 : 0, hi = c.out_signed ? 127 : 255;
  auto packed = PackedQB::Pack(c.b_signed, false, c.k, c.n, b.data(), c.n);
  const int64_t ldo = c.n + 3;
  std::vector<uint8_t> got(static_cast<size_t>(c.m * ldo), 0xAB);
  QGemmRequant rq;
  rq.per_row = c.per_row;
  rq.bias = c.with_bias ? bias.data() : nullptr;
  rq.mult = mult.data();
  rq.mult_step = c.per_channel_mult ? 1 : 0;
  rq.zp = zp;
  rq.lo = lo;
  rq.hi = hi;
  rq.out_signed = c.out_signed;
  rq.out = got.data();
  rq.ldo = ldo;
  const int64_t zp_step = c.zp_layout == 0 ? 0 : 1;
  if (c.a_signed) {
    QGemmS8ToBytes(c.m, reinterpret_cast<const int8_t*>(a.data()), c.k, za.data(), zp_step, *packed,
                   zb.data(), zp_step, rq, par);
  } else {
    QGemmU8ToBytes(c.m, a.data(), c.k, za.data(), zp_step, *packed, zb.data(), zp_step, rq, par);
  }
  int64_t wrong = 0, ties = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t sum = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        sum += static_cast<int64_t>(as_int(a[i * c.k + kk], c.a_signed) - za[i]) *
               (as_int(b[kk * c.n + j], c.b_signed) - zb[j]);
      }
      const int64_t at = c.per_row ? i : j;
      const int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(sum) +
                                               static_cast<uint32_t>(c.with_bias ? bias[at] : 0));
      const float m = mult[c.per_channel_mult ? at : 0];
      const double prod = static_cast<double>(acc) * static_cast<double>(m);
      if (prod - std::floor(prod) == 0.5) ++ties;
      const int32_t want = quant::RequantizeValue(acc, m, zp, lo, hi);
      const uint8_t g = got[i * ldo + j];
      if (as_int(g, c.out_signed) != want) ++wrong;
    }
    for (int64_t j = c.n; j < ldo; ++j) wrong += got[i * ldo + j] != 0xAB;  // past N: untouched
  }
  CHECK(wrong == 0);
  if (c.mult_kind == 0 && c.m * c.n >= 64) CHECK(ties > 0);  // the data does reach ties
}

TEST_CASE("QGemm{U8,S8}ToBytes equals the int64 sums requantized by the scalar reference") {
  const std::vector<std::array<int64_t, 3>> sizes = {
      {1, 1, 1},   {3, 32, 4},   {6, 64, 16},  {7, 96, 17},  {13, 130, 40},
      {2, 200, 8}, {65, 33, 12}, {6, 24, 16},  {5, 56, 9},   {130, 64, 3}, {4, 62, 8}};
  uint32_t seed = 1;
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const auto& sz : sizes) {
      for (int flags = 0; flags < 64; ++flags) {
        RequantCase c{sz[0],
                      sz[1],
                      sz[2],
                      (flags & 1) != 0,
                      (flags & 2) != 0,
                      (flags & 4) != 0,
                      (flags & 8) != 0,
                      (flags & 16) != 0,
                      (flags & 32) != 0,
                      static_cast<int>(seed % 3),
                      static_cast<int>((seed / 3) % 3)};
        CheckRequantCase(c, seed++, SerialParallel());
      }
    }
  }
}

TEST_CASE("QGemmFusesRequant: one multiplier the tiles cannot take anywhere says no") {
  // 200 per-column multipliers in range, then one of them >= 1, NaN, zero or subnormal at a
  // vector's first or last lane or in the scalar tail; a target that fuses the valid set must
  // refuse each of these (the tiles' float32 product would leave vcvtps2dq's range or the
  // margin's assumptions).
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<float> mult(200);
    for (size_t i = 0; i < mult.size(); ++i) mult[i] = 0.001f * static_cast<float>(i + 1);
    QGemmRequant rq;
    rq.mult = mult.data();
    rq.mult_step = 1;
    rq.zp = 3;
    rq.lo = 0;
    rq.hi = 255;
    const bool fuses = QGemmFusesRequant(rq, 7, 200);
    for (size_t at : {size_t{0}, size_t{15}, size_t{16}, size_t{191}, size_t{199}}) {
      for (float bad : {1.0f, -2.5f, std::nanf(""), 0.0f, 1e-40f}) {
        CAPTURE(at);
        CAPTURE(bad);
        std::vector<float> changed = mult;
        changed[at] = bad;
        rq.mult = changed.data();
        CHECK_FALSE(QGemmFusesRequant(rq, 7, 200));
        rq.per_row = true;  // per row: the same values indexed by row
        CHECK_FALSE(QGemmFusesRequant(rq, 200, 7));
        rq.per_row = false;
      }
    }
    rq.mult = mult.data();
    CHECK(QGemmFusesRequant(rq, 7, 200) == fuses);
  }
}

TEST_CASE("QGemm{U8,S8}ToBytes gives the same bytes for 1, 2 and 3 threads") {
  // Enough products for the GEMM to split into tasks (several 64-row and 128-column blocks).
  const RequantCase c{300, 260, 64, false, true, false, false, true, true, 0};
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    test_util::ThreadsParallel par(threads);
    CheckRequantCase(c, 77, par);
    RequantCase rows = c;
    rows.per_row = true;
    rows.out_signed = true;
    CheckRequantCase(rows, 78, par);
  }
}

}  // namespace
}  // namespace simplecpp::kernels
