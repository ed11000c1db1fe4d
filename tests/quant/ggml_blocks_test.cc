// Tests for quant/ggml_blocks.h against scalar code written here from the layout text: the type
// table, hand-made blocks with known bytes (nibble order, negative / zero / subnormal scales,
// negative minimum), decode == dequantize == ONNX DequantizeLinear bit for bit, ggml's encoder
// rules byte for byte, the round-trip error bounds, re-encoding stability and the defined
// behaviour on non-finite input. Halves are read and written through the double-arithmetic
// reference of tests/reference/float16_reference.h, not through core's conversion.
#include "quant/ggml_blocks.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "reference/float16_reference.h"

namespace simplecpp::quant {
namespace {

float Half(uint16_t h) { return static_cast<float>(reference::DecodeRef(h, reference::kHalf)); }
uint16_t ToHalf(float f) { return reference::FloatToHalfRef(static_cast<double>(f)); }
uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Deterministic values in offset + [-amp, amp) (an LCG: variety, not quality).
std::vector<float> Values(int64_t n, float amp, float offset, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = offset + amp * (static_cast<float>(seed >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

int BlockBytes(GgmlType t) { return t == GgmlType::kQ8_0 ? 34 : t == GgmlType::kQ4_0 ? 18 : 20; }

// The code of element e of a block, read from the layout text.
int32_t CodeAt(GgmlType t, const uint8_t* block, int e) {
  if (t == GgmlType::kQ8_0) {
    int8_t q;
    std::memcpy(&q, block + 2 + e, 1);
    return q;
  }
  const uint8_t* qs = block + (t == GgmlType::kQ4_1 ? 4 : 2);
  return e < 16 ? (qs[e] & 0x0F) : (qs[e - 16] >> 4);
}

// What a float32 ONNX DequantizeLinear computes: (q - zero_point) * scale, one rounding.
float OnnxDequantize(int32_t q, int32_t zero_point, float scale) {
  volatile float y = static_cast<float>(q - zero_point) * scale;
  return y;
}
// Then a float32 Add (Q4_1's minimum).
float OnnxAdd(float a, float b) {
  volatile float y = a + b;
  return y;
}

// A row's values as the ONNX graph would compute them: Q8_0 int8 with no zero point, Q4_0 as
// uint4 with zero point 8, Q4_1 uint4 without zero point followed by Add(m).
std::vector<float> OnnxRow(GgmlType t, const std::vector<uint8_t>& row, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t b = 0; b < n / 32; ++b) {
    const uint8_t* block = row.data() + b * BlockBytes(t);
    const float d = Half(U16(block));
    for (int e = 0; e < 32; ++e) {
      const int32_t q = CodeAt(t, block, e);
      float y = OnnxDequantize(q, t == GgmlType::kQ4_0 ? 8 : 0, d);
      if (t == GgmlType::kQ4_1) y = OnnxAdd(y, Half(U16(block + 2)));
      out[static_cast<size_t>(b * 32 + e)] = y;
    }
  }
  return out;
}

// ggml's reference encoders for finite blocks, from the rules in the brief of the format
// (volatile: each step is its own float32 rounding, whatever the test's compile flags).
void EncodeRef(GgmlType t, const float* x, uint8_t* out) {
  int32_t code[32];
  if (t == GgmlType::kQ8_0) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[0] = static_cast<uint8_t>(ToHalf(d) & 0xFF);
    out[1] = static_cast<uint8_t>(ToHalf(d) >> 8);
    for (int j = 0; j < 32; ++j) {
      volatile float v = x[j] * id;
      const int8_t q = static_cast<int8_t>(std::roundf(v));
      std::memcpy(out + 2 + j, &q, 1);
    }
    return;
  }
  float d = 0.0f, id = 0.0f, sub = 0.0f, add = 8.5f;
  int qs_at = 2;
  if (t == GgmlType::kQ4_0) {
    int arg = 0;
    for (int j = 1; j < 32; ++j) {
      if (std::fabs(x[j]) > std::fabs(x[arg])) arg = j;
    }
    d = x[arg] / -8.0f;
  } else {
    const float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
    d = (hi - lo) / 15.0f;
    sub = lo;
    add = 0.5f;
    qs_at = 4;
    out[2] = static_cast<uint8_t>(ToHalf(lo) & 0xFF);
    out[3] = static_cast<uint8_t>(ToHalf(lo) >> 8);
  }
  id = d != 0.0f ? 1.0f / d : 0.0f;
  out[0] = static_cast<uint8_t>(ToHalf(d) & 0xFF);
  out[1] = static_cast<uint8_t>(ToHalf(d) >> 8);
  for (int j = 0; j < 32; ++j) {
    volatile float diff = x[j] - sub;  // sub = 0 for Q4_0: exact
    volatile float scaled = diff * id;
    volatile float shifted = scaled + add;
    code[j] = std::min(15, static_cast<int>(std::trunc(static_cast<float>(shifted))));
  }
  for (int j = 0; j < 16; ++j) out[qs_at + j] = static_cast<uint8_t>(code[j] | (code[j + 16] << 4));
}

constexpr GgmlType kBlockTypes[] = {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1};

TEST_CASE("ggml types: names, layouts, row bytes") {
  struct Row {
    uint32_t id;
    const char* name;
    int64_t elements, bytes;
  };
  const Row table[] = {
      {0, "F32", 1, 4},          {1, "F16", 1, 2},          {2, "Q4_0", 32, 18},
      {3, "Q4_1", 32, 20},       {6, "Q5_0", 32, 22},       {7, "Q5_1", 32, 24},
      {8, "Q8_0", 32, 34},       {9, "Q8_1", 32, 36},       {10, "Q2_K", 256, 84},
      {11, "Q3_K", 256, 110},    {12, "Q4_K", 256, 144},    {13, "Q5_K", 256, 176},
      {14, "Q6_K", 256, 210},    {15, "Q8_K", 256, 292},    {16, "IQ2_XXS", 256, 66},
      {17, "IQ2_XS", 256, 74},   {18, "IQ3_XXS", 256, 98},  {19, "IQ1_S", 256, 50},
      {20, "IQ4_NL", 32, 18},    {21, "IQ3_S", 256, 110},   {22, "IQ2_S", 256, 82},
      {23, "IQ4_XS", 256, 136},  {24, "I8", 1, 1},          {25, "I16", 1, 2},
      {26, "I32", 1, 4},         {27, "I64", 1, 8},         {28, "F64", 1, 8},
      {29, "IQ1_M", 256, 56},    {30, "BF16", 1, 2},        {34, "TQ1_0", 256, 54},
      {35, "TQ2_0", 256, 66},
  };
  for (const Row& r : table) {
    CAPTURE(r.id);
    REQUIRE(GgmlTypeName(r.id) != nullptr);
    CHECK(std::strcmp(GgmlTypeName(r.id), r.name) == 0);
    GgmlTypeLayout layout{-1, -1};
    REQUIRE(GgmlTypeLayoutOf(r.id, &layout));
    CHECK(layout.block_elements == r.elements);
    CHECK(layout.block_bytes == r.bytes);
    CHECK(GgmlRowBytes(r.id, 0) == 0);
    CHECK(GgmlRowBytes(r.id, 3 * r.elements) == 3 * r.bytes);
    CHECK(GgmlRowBytes(r.id, -r.elements) == -1);
    if (r.elements > 1) {
      CHECK(GgmlRowBytes(r.id, r.elements + 1) == -1);
      CHECK(GgmlRowBytes(r.id, r.elements / 2) == -1);
    }
  }
  // Every other id up to 40 is unknown (4, 5 and 31-33 were removed from ggml), as are far ids.
  int named = 0;
  for (uint32_t id = 0; id <= 40; ++id) named += GgmlTypeName(id) != nullptr;
  CHECK(named == 31);
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 99u, 0xFFFFFFFFu}) {
    CAPTURE(id);
    CHECK(GgmlTypeName(id) == nullptr);
    GgmlTypeLayout layout{7, 7};
    CHECK_FALSE(GgmlTypeLayoutOf(id, &layout));
    CHECK(layout.block_elements == 7);  // untouched
    CHECK(GgmlRowBytes(id, 32) == -1);
  }
  // Sizes beyond int64_t.
  const int64_t big = std::numeric_limits<int64_t>::max() / 32 * 32;
  CHECK(GgmlRowBytes(8, big) == -1);
  CHECK(GgmlRowBytes(0, std::numeric_limits<int64_t>::max() / 4 + 1) == -1);
  CHECK(GgmlRowBytes(24, std::numeric_limits<int64_t>::max()) == std::numeric_limits<int64_t>::max());

  for (uint32_t id = 0; id <= 40; ++id) {
    const GgmlType t = static_cast<GgmlType>(id);
    CAPTURE(id);
    CHECK(GgmlTypeIsSupported(t) == (id == 0 || id == 1 || id == 2 || id == 3 || id == 8));
  }
  CHECK(kGgmlBlock32 == 32);
  CHECK(static_cast<uint32_t>(GgmlType::kBF16) == 30);
  CHECK(static_cast<uint32_t>(GgmlType::kTQ2_0) == 35);
}

TEST_CASE("ggml blocks: a hand-made Q4_0 block, nibble order and scales") {
  // Byte j: low nibble j (element j), high nibble 15 - j (element j + 16).
  std::vector<uint8_t> block(18);
  for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  struct Case {
    uint16_t d_bits;
    float d;
  };
  const Case cases[] = {{0x3800, 0.5f},
                        {0xB800, -0.5f},
                        {0x0000, 0.0f},
                        {0x0001, std::ldexp(1.0f, -24)},           // smallest subnormal half
                        {0x83FF, -1023.0f * std::ldexp(1.0f, -24)},  // largest, negative
                        {0x7BFF, 65504.0f}};
  for (const Case& c : cases) {
    CAPTURE(c.d_bits);
    block[0] = static_cast<uint8_t>(c.d_bits & 0xFF);
    block[1] = static_cast<uint8_t>(c.d_bits >> 8);
    std::vector<int32_t> codes(32);
    float scale = -1.0f;
    REQUIRE(DecodeGgmlRow(GgmlType::kQ4_0, block.data(), 32, codes.data(), &scale, nullptr));
    CHECK(std::memcmp(&scale, &c.d, 4) == 0);
    for (int j = 0; j < 16; ++j) {
      CHECK(codes[j] == j);
      CHECK(codes[j + 16] == 15 - j);
    }
    std::vector<float> y(32);
    REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_0, block.data(), 32, y.data()));
    std::vector<float> want(32);
    for (int j = 0; j < 32; ++j) want[j] = OnnxDequantize(j < 16 ? j : 31 - j, 8, c.d);
    CHECK(SameBits(y, want));
    if (c.d_bits == 0x3800) {
      CHECK(y[0] == -4.0f);   // code 0
      CHECK(y[1] == -3.5f);   // code 1: element 1 is byte 1's low nibble
      CHECK(y[16] == 3.5f);   // code 15: element 16 is byte 0's high nibble
      CHECK(y[17] == 3.0f);
      CHECK(y[31] == -4.0f);  // code 0
    }
    if (c.d_bits == 0x0000) {
      for (float v : y) CHECK(v == 0.0f);
    }
  }
}

TEST_CASE("ggml blocks: hand-made Q4_1 and Q8_0 blocks") {
  // Q4_1: d = 0.25, m = -1.5; element j code j % 16 in the low nibbles, 3 in every high nibble.
  std::vector<uint8_t> q41(20);
  q41[0] = 0x00, q41[1] = 0x34;  // 0.25
  q41[2] = 0x00, q41[3] = 0xBE;  // -1.5
  for (int j = 0; j < 16; ++j) q41[4 + j] = static_cast<uint8_t>(j | (3 << 4));
  std::vector<int32_t> codes(32);
  float d = 0, m = 0;
  REQUIRE(DecodeGgmlRow(GgmlType::kQ4_1, q41.data(), 32, codes.data(), &d, &m));
  CHECK(d == 0.25f);
  CHECK(m == -1.5f);
  CHECK(codes[1] == 1);
  CHECK(codes[16] == 3);
  std::vector<float> y(32);
  REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_1, q41.data(), 32, y.data()));
  for (int j = 0; j < 16; ++j) CHECK(y[j] == 0.25f * static_cast<float>(j) - 1.5f);
  for (int j = 16; j < 32; ++j) CHECK(y[j] == -0.75f);
  // The sum rounds: m = -60000 (0xFB53), d = 0x3555 (~1/3): code * d is exact, + m is not.
  q41[0] = 0x55, q41[1] = 0x35;
  q41[2] = 0x53, q41[3] = 0xFB;
  REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_1, q41.data(), 32, y.data()));
  CHECK(SameBits(y, OnnxRow(GgmlType::kQ4_1, q41, 32)));
  CHECK(y[15] == OnnxAdd(15.0f * Half(0x3555), -60000.0f));
  CHECK(static_cast<double>(y[15]) != 15.0 * Half(0x3555) - 60000.0);

  // Q8_0: d = -2, codes -128, 127, -1, 0, then j - 16.
  std::vector<uint8_t> q8(34);
  q8[0] = 0x00, q8[1] = 0xC0;
  const uint8_t first[4] = {0x80, 0x7F, 0xFF, 0x00};
  for (int j = 0; j < 32; ++j) q8[2 + j] = j < 4 ? first[j] : static_cast<uint8_t>(j - 16);
  REQUIRE(DecodeGgmlRow(GgmlType::kQ8_0, q8.data(), 32, codes.data(), &d, nullptr));
  CHECK(d == -2.0f);
  CHECK(codes[0] == -128);
  CHECK(codes[1] == 127);
  CHECK(codes[2] == -1);
  CHECK(codes[3] == 0);
  CHECK(codes[4] == -12);
  CHECK(codes[31] == 15);
  REQUIRE(DequantizeGgmlRow(GgmlType::kQ8_0, q8.data(), 32, y.data()));
  CHECK(y[0] == 256.0f);
  CHECK(y[1] == -254.0f);
  CHECK(y[31] == -30.0f);
}

TEST_CASE("ggml blocks: dequantize == decoded codes combined == ONNX DequantizeLinear") {
  for (GgmlType t : kBlockTypes) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      const int64_t n = 32 * static_cast<int64_t>(seed * 5);
      std::vector<uint8_t> row(static_cast<size_t>(GgmlRowBytes(static_cast<uint32_t>(t), n)));
      uint32_t s = seed * 7919u;
      for (uint8_t& b : row) {
        s = s * 1664525u + 1013904223u;
        b = static_cast<uint8_t>(s >> 24);
      }
      // Finite halves only (a NaN's payload is not part of the contract): clear exponent 31.
      for (int64_t b = 0; b < n / 32; ++b) {
        uint8_t* block = row.data() + b * BlockBytes(t);
        if ((U16(block) & 0x7C00) == 0x7C00) block[1] &= 0xBF;
        if (t == GgmlType::kQ4_1 && (U16(block + 2) & 0x7C00) == 0x7C00) block[3] &= 0xBF;
      }
      CAPTURE(static_cast<int>(t));
      CAPTURE(seed);
      std::vector<float> y(static_cast<size_t>(n));
      REQUIRE(DequantizeGgmlRow(t, row.data(), n, y.data()));
      std::vector<int32_t> codes(static_cast<size_t>(n));
      std::vector<float> scales(static_cast<size_t>(n / 32)), mins(static_cast<size_t>(n / 32));
      REQUIRE(DecodeGgmlRow(t, row.data(), n, codes.data(), scales.data(), mins.data()));
      std::vector<float> combined(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const int32_t c = codes[static_cast<size_t>(i)];
        CHECK(c == CodeAt(t, row.data() + (i / 32) * BlockBytes(t), static_cast<int>(i % 32)));
        const float sc = scales[static_cast<size_t>(i / 32)];
        float v = OnnxDequantize(c, t == GgmlType::kQ4_0 ? 8 : 0, sc);
        if (t == GgmlType::kQ4_1) v = OnnxAdd(v, mins[static_cast<size_t>(i / 32)]);
        combined[static_cast<size_t>(i)] = v;
      }
      CHECK(SameBits(y, combined));
      CHECK(SameBits(y, OnnxRow(t, row, n)));
      // As int4 codes without a zero point, Q4_0 gives the same bits.
      if (t == GgmlType::kQ4_0) {
        for (int64_t i = 0; i < n; ++i) {
          const float v = OnnxDequantize(codes[static_cast<size_t>(i)] - 8, 0,
                                         scales[static_cast<size_t>(i / 32)]);
          CHECK(std::memcmp(&v, &y[static_cast<size_t>(i)], 4) == 0);
        }
      }
    }
  }
}

TEST_CASE("ggml blocks: the encoders follow ggml's rules and stay within the error bound") {
  for (GgmlType t : kBlockTypes) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
      const int64_t n = 32 * static_cast<int64_t>(1 + (seed * 13) % 32);  // 32 .. 1024
      const float amp = seed % 3 == 0 ? 1e-3f : seed % 3 == 1 ? 1.0f : 300.0f;
      const float offset = seed % 4 == 0 ? 40.0f * amp : 0.0f;  // Q4_1 with a far minimum
      const std::vector<float> x = Values(n, amp, offset, seed);
      CAPTURE(static_cast<int>(t));
      CAPTURE(seed);
      const std::vector<uint8_t> row = QuantizeGgmlRow(t, x.data(), n);
      REQUIRE(static_cast<int64_t>(row.size()) == GgmlRowBytes(static_cast<uint32_t>(t), n));
      std::vector<uint8_t> want(row.size());
      for (int64_t b = 0; b < n / 32; ++b) {
        EncodeRef(t, x.data() + b * 32, want.data() + b * BlockBytes(t));
      }
      CHECK(row == want);

      std::vector<float> y(static_cast<size_t>(n));
      REQUIRE(DequantizeGgmlRow(t, row.data(), n, y.data()));
      for (int64_t b = 0; b < n / 32; ++b) {
        const float* xb = x.data() + b * 32;
        const float lo = *std::min_element(xb, xb + 32), hi = *std::max_element(xb, xb + 32);
        const double amax = std::max(std::fabs(lo), std::fabs(hi));
        double d = 0, bound = 0;
        if (t == GgmlType::kQ8_0) {
          d = amax / 127.0;
          bound = d / 2 + 127 * std::fabs(d - Half(ToHalf(static_cast<float>(d))));
        } else if (t == GgmlType::kQ4_0) {
          d = amax / 8.0;
          bound = d + 8 * std::fabs(d - std::fabs(Half(ToHalf(static_cast<float>(d)))));
        } else {
          const float fd = (hi - lo) / 15.0f;
          d = fd;
          bound = d / 2 + 15 * std::fabs(d - Half(ToHalf(fd))) + std::fabs(lo - Half(ToHalf(lo)));
        }
        const double slack = 1e-5 * (amax + d);  // float32 rounding of the arithmetic
        for (int j = 0; j < 32; ++j) {
          const double err = std::fabs(static_cast<double>(xb[j]) - y[static_cast<size_t>(b * 32 + j)]);
          CHECK(err <= bound + slack);
          // About one step while the scale is a normal half (>= 2^-14); Q4_1 adds |min - m_h|.
          if (t != GgmlType::kQ4_1 && d >= std::ldexp(1.0, -14)) CHECK(err <= 1.01 * d + slack);
        }
      }

      // Re-encoding decoded Q8_0 / Q4_0 values gives the same bytes (the decoded extreme sits
      // exactly on the grid of the stored scale); Q4_1's sum q * d + m rounds, so its decoded
      // values re-encode to within the bound of themselves.
      const std::vector<uint8_t> again = QuantizeGgmlRow(t, y.data(), n);
      std::vector<float> y2(static_cast<size_t>(n));
      REQUIRE(DequantizeGgmlRow(t, again.data(), n, y2.data()));
      if (t != GgmlType::kQ4_1) {
        CHECK(again == row);
      } else {
        for (int64_t b = 0; b < n / 32; ++b) {
          CHECK(U16(again.data() + b * 20 + 2) == U16(row.data() + b * 20 + 2));  // same m
        }
        for (int64_t i = 0; i < n; ++i) {
          const float step = Half(U16(row.data() + (i / 32) * 20));
          CHECK(std::fabs(y2[static_cast<size_t>(i)] - y[static_cast<size_t>(i)]) <=
                0.51 * step + 1e-5 * (std::fabs(y[static_cast<size_t>(i)]) + step));
        }
      }
    }
  }
}

TEST_CASE("ggml blocks: Q4_1 values on the half grid re-encode to the same bytes") {
  // x = m + q * d with d = 0.25, m = -1.5: every step of the encoder is exact.
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = -1.5f + 0.25f * static_cast<float>((i * 7) % 16);
  const std::vector<uint8_t> row = QuantizeGgmlRow(GgmlType::kQ4_1, x.data(), 64);
  REQUIRE(row.size() == 40u);
  CHECK(U16(row.data()) == 0x3400);
  CHECK(U16(row.data() + 2) == 0xBE00);
  std::vector<float> y(64);
  REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_1, row.data(), 64, y.data()));
  CHECK(SameBits(x, y));
  CHECK(QuantizeGgmlRow(GgmlType::kQ4_1, y.data(), 64) == row);
}

TEST_CASE("ggml blocks: encoder edge cases") {
  std::vector<float> x(32, 0.0f);
  std::vector<float> y(32);
  SUBCASE("all zero") {
    const auto q8 = QuantizeGgmlRow(GgmlType::kQ8_0, x.data(), 32);
    CHECK(U16(q8.data()) == 0x0000);
    for (int j = 0; j < 32; ++j) CHECK(q8[2 + j] == 0);
    // Q4_0: max stays +0, d = 0 / -8 = -0 (stored 0x8000, as ggml), codes 8.
    const auto q40 = QuantizeGgmlRow(GgmlType::kQ4_0, x.data(), 32);
    CHECK(U16(q40.data()) == 0x8000);
    for (int j = 0; j < 16; ++j) CHECK(q40[2 + j] == 0x88);
    const auto q41 = QuantizeGgmlRow(GgmlType::kQ4_1, x.data(), 32);
    CHECK(U16(q41.data()) == 0x0000);
    CHECK(U16(q41.data() + 2) == 0x0000);
    for (int j = 0; j < 16; ++j) CHECK(q41[4 + j] == 0x00);
    for (GgmlType t : kBlockTypes) {
      REQUIRE(DequantizeGgmlRow(t, QuantizeGgmlRow(t, x.data(), 32).data(), 32, y.data()));
      for (float v : y) CHECK(v == 0.0f);
    }
  }
  SUBCASE("constant block") {
    std::fill(x.begin(), x.end(), 3.0f);
    const auto q8 = QuantizeGgmlRow(GgmlType::kQ8_0, x.data(), 32);
    for (int j = 0; j < 32; ++j) CHECK(q8[2 + j] == 127);
    const auto q40 = QuantizeGgmlRow(GgmlType::kQ4_0, x.data(), 32);
    CHECK(U16(q40.data()) == 0xB600);  // -0.375
    REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_0, q40.data(), 32, y.data()));
    for (float v : y) CHECK(v == 3.0f);
    const auto q41 = QuantizeGgmlRow(GgmlType::kQ4_1, x.data(), 32);
    CHECK(U16(q41.data()) == 0x0000);  // d = 0
    REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_1, q41.data(), 32, y.data()));
    for (float v : y) CHECK(v == 3.0f);
  }
  SUBCASE("one huge value") {
    for (int j = 0; j < 32; ++j) x[j] = 0.01f * static_cast<float>(j);
    x[7] = 1e4f;
    const auto q8 = QuantizeGgmlRow(GgmlType::kQ8_0, x.data(), 32);
    CHECK(q8[2 + 7] == 127);
    for (int j = 0; j < 32; ++j) {
      if (j != 7) CHECK(q8[2 + j] == 0);
    }
    // Beyond the half range the scale is stored as Inf (the format cannot hold it).
    x[7] = 1e7f;
    CHECK(U16(QuantizeGgmlRow(GgmlType::kQ8_0, x.data(), 32).data()) == 0x7C00);
    CHECK(U16(QuantizeGgmlRow(GgmlType::kQ4_0, x.data(), 32).data()) == 0xFC00);
  }
  SUBCASE("ties of |x| with opposite signs: the first one sets Q4_0's sign") {
    x[3] = -2.0f;
    x[10] = 2.0f;
    auto q40 = QuantizeGgmlRow(GgmlType::kQ4_0, x.data(), 32);
    CHECK(U16(q40.data()) == 0x3400);  // d = -2 / -8 = 0.25
    REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_0, q40.data(), 32, y.data()));
    CHECK(y[3] == -2.0f);
    CHECK(y[10] == 1.75f);  // code 16 clips to 15: a full step short
    x[3] = 2.0f;
    x[10] = -2.0f;
    q40 = QuantizeGgmlRow(GgmlType::kQ4_0, x.data(), 32);
    CHECK(U16(q40.data()) == 0xB400);  // -0.25
    REQUIRE(DequantizeGgmlRow(GgmlType::kQ4_0, q40.data(), 32, y.data()));
    CHECK(y[3] == 2.0f);
    CHECK(y[10] == -1.75f);
  }
  SUBCASE("NaN is encoded as 0") {
    for (int j = 0; j < 32; ++j) x[j] = 0.1f * static_cast<float>(j) - 1.3f;
    std::vector<float> with_nan = x, with_zero = x;
    with_nan[5] = std::numeric_limits<float>::quiet_NaN();
    with_nan[20] = -std::numeric_limits<float>::quiet_NaN();
    with_zero[5] = 0.0f;
    with_zero[20] = 0.0f;
    for (GgmlType t : kBlockTypes) {
      CAPTURE(static_cast<int>(t));
      CHECK(QuantizeGgmlRow(t, with_nan.data(), 32) == QuantizeGgmlRow(t, with_zero.data(), 32));
    }
    std::fill(with_nan.begin(), with_nan.end(), std::numeric_limits<float>::quiet_NaN());
    for (GgmlType t : kBlockTypes) {
      REQUIRE(DequantizeGgmlRow(t, QuantizeGgmlRow(t, with_nan.data(), 32).data(), 32, y.data()));
      for (float v : y) CHECK(v == 0.0f);
    }
  }
  SUBCASE("+-Inf gives an infinite scale and a non-finite block, defined") {
    for (int j = 0; j < 32; ++j) x[j] = 0.1f * static_cast<float>(j) - 1.3f;
    for (float inf : {INFINITY, -INFINITY}) {
      std::vector<float> v = x;
      v[9] = inf;
      for (GgmlType t : kBlockTypes) {
        CAPTURE(static_cast<int>(t));
        CAPTURE(inf);
        const auto row = QuantizeGgmlRow(t, v.data(), 32);
        REQUIRE(row.size() == static_cast<size_t>(BlockBytes(t)));
        const uint16_t d = U16(row.data());
        const uint16_t m = U16(row.data() + 2);
        CHECK(((d & 0x7C00) == 0x7C00 || (t == GgmlType::kQ4_1 && (m & 0x7C00) == 0x7C00)));
        REQUIRE(DequantizeGgmlRow(t, row.data(), 32, y.data()));
        for (float f : y) CHECK_FALSE(std::isfinite(f));
      }
    }
    // All +Inf (Q4_1: Inf - Inf is NaN), and the float32 extremes (Q4_1's range overflows).
    std::vector<float> v(32, INFINITY);
    std::vector<float> ext(32, 0.0f);
    ext[0] = -FLT_MAX;
    ext[1] = FLT_MAX;
    for (GgmlType t : kBlockTypes) {
      for (const auto* in : {&v, &ext}) {
        const auto row = QuantizeGgmlRow(t, in->data(), 32);
        REQUIRE(DequantizeGgmlRow(t, row.data(), 32, y.data()));
        for (float f : y) CHECK_FALSE(std::isfinite(f));
      }
    }
  }
  SUBCASE("float32 subnormal inputs stay defined") {
    for (int j = 0; j < 32; ++j) x[j] = std::ldexp(static_cast<float>(j - 16), -140);
    for (GgmlType t : kBlockTypes) {
      const auto row = QuantizeGgmlRow(t, x.data(), 32);
      REQUIRE(DequantizeGgmlRow(t, row.data(), 32, y.data()));
      for (int j = 0; j < 32; ++j) CHECK(std::fabs(y[j] - x[j]) <= 1e-38f);
    }
  }
}

TEST_CASE("ggml blocks: F32 / F16 rows and refused arguments") {
  const float x[3] = {1.0f, 1.0f + std::ldexp(1.0f, -11), -0.0f};
  const auto f32 = QuantizeGgmlRow(GgmlType::kF32, x, 3);
  REQUIRE(f32.size() == 12u);
  CHECK(f32[0] == 0x00);
  CHECK(f32[2] == 0x80);
  CHECK(f32[3] == 0x3F);
  const auto f16 = QuantizeGgmlRow(GgmlType::kF16, x, 3);
  REQUIRE(f16.size() == 6u);
  CHECK(U16(f16.data()) == 0x3C00);
  CHECK(U16(f16.data() + 2) == 0x3C00);  // the tie goes to the even neighbour
  CHECK(U16(f16.data() + 4) == 0x8000);
  float y[3];
  REQUIRE(DequantizeGgmlRow(GgmlType::kF32, f32.data(), 3, y));
  CHECK(std::memcmp(y, x, sizeof(y)) == 0);
  REQUIRE(DequantizeGgmlRow(GgmlType::kF16, f16.data(), 3, y));
  CHECK(y[1] == 1.0f);
  CHECK(std::signbit(y[2]));

  std::vector<float> v(64, 1.0f);
  CHECK(QuantizeGgmlRow(GgmlType::kQ8_0, v.data(), 33).empty());
  CHECK(QuantizeGgmlRow(GgmlType::kQ5_0, v.data(), 32).empty());
  CHECK(QuantizeGgmlRow(GgmlType::kBF16, v.data(), 32).empty());
  std::vector<uint8_t> bytes(64, 0);
  std::vector<int32_t> codes(64, -99);
  float scale = -99;
  CHECK_FALSE(DequantizeGgmlRow(GgmlType::kQ5_0, bytes.data(), 32, v.data()));
  CHECK_FALSE(DequantizeGgmlRow(GgmlType::kQ4_0, bytes.data(), 31, v.data()));
  CHECK_FALSE(DecodeGgmlRow(GgmlType::kF32, bytes.data(), 32, codes.data(), &scale, nullptr));
  CHECK_FALSE(DecodeGgmlRow(GgmlType::kQ8_0, bytes.data(), 40, codes.data(), &scale, nullptr));
  CHECK(codes[0] == -99);
  CHECK(scale == -99);
}

}  // namespace
}  // namespace simplecpp::quant
