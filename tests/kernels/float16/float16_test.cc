// float16 / bfloat16 / float8 scalar conversions (kernels/float16/float16.h,
// kernels/float16/float8.h) against the double-arithmetic reference in
// tests/reference/float16_reference.h, over every float16 pattern, a sweep of float32 patterns,
// every tie between neighbouring float16 values, and the special values (+-0, subnormals, Inf, NaN,
// overflow).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/float16/float8.h"
#include "reference/float16_reference.h"

namespace {

using namespace simplecpp::kernels;
namespace ref = simplecpp::reference;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
bool HalfIsNaN(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

// Float32 test patterns: every 2^16-th pattern (both signs) plus boundaries around float16's
// range and subnormals.
std::vector<uint32_t> FloatSweep() {
  std::vector<uint32_t> v;
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 0x10000u - 3) v.push_back(static_cast<uint32_t>(u));
  const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u,
                            0x33000000u, 0x33000001u, 0x32FFFFFFu, 0x33800000u, 0x33C00000u,
                            0x387FC000u, 0x387FE000u, 0x387FFFFFu, 0x38800000u, 0x477FE000u,
                            0x477FEFFFu, 0x477FF000u, 0x477FF001u, 0x47800000u, 0x7F7FFFFFu,
                            0x7F800000u, 0xFF800000u, 0x3F800000u, 0x3F801000u, 0x3F803000u,
                            0x7F7F8000u, 0x7F7F7FFFu, 0x0000FFFFu, 0x00008000u, 0x00018000u};
  for (uint32_t e : edges) {
    v.push_back(e);
    v.push_back(e | 0x80000000u);
  }
  return v;
}

TEST_CASE("Float16: every float16 pattern round-trips through float32") {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t h16 = static_cast<uint16_t>(h);
    const float f = HalfBitsToFloat(h16);
    const double want = ref::DecodeRef(h16, ref::kHalf);
    const uint16_t back = FloatToHalfBits(f);
    CAPTURE(h);
    if (HalfIsNaN(h16)) {
      REQUIRE(std::isnan(f));
      CHECK(std::signbit(f) == ((h16 & 0x8000u) != 0));
      CHECK(back == (h16 | 0x0200u));  // documented rule: quieted, payload and sign kept
      CHECK(DoubleToHalfBits(static_cast<double>(f)) == back);
    } else {
      REQUIRE(static_cast<double>(f) == want);
      CHECK(std::signbit(f) == std::signbit(want));
      CHECK(back == h16);
      CHECK(DoubleToHalfBits(static_cast<double>(f)) == h16);
      CHECK(HalfBitsToDouble(h16) == want);
    }
  }
}

TEST_CASE("Float16: float32 sweep matches the reference") {
  for (uint32_t u : FloatSweep()) {
    const float f = FromBits(u);
    CAPTURE(u);
    const uint16_t got = FloatToHalfBits(f);
    if (std::isnan(f)) {
      CHECK(HalfIsNaN(got));
      CHECK((got & 0x0200u) != 0);
      CHECK(((got & 0x8000u) != 0) == std::signbit(f));
      continue;
    }
    CHECK(got == ref::FloatToHalfRef(f));
    CHECK(DoubleToHalfBits(static_cast<double>(f)) == got);
  }
}

TEST_CASE("Float16: ties between neighbours round to even, and double rounds once") {
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    // Midpoint between h and h + 1 (for h = 0x7BFF, between 65504 and 65536 -> Inf).
    const double lo = ref::DecodeRef(h, ref::kHalf);
    const double hi = h + 1 == 0x7C00 ? 65536.0 : ref::DecodeRef(h + 1, ref::kHalf);
    const double mid = (lo + hi) / 2;
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    CAPTURE(h);
    CHECK(FloatToHalfBits(static_cast<float>(mid)) == even);  // mid is exact in float32
    CHECK(DoubleToHalfBits(mid) == even);
    CHECK(FloatToHalfBits(static_cast<float>(-mid)) == (even | 0x8000u));
    // Just above / below the tie: a double that float32 would round onto the tie.
    const double eps = (hi - lo) * std::ldexp(1.0, -30);
    CHECK(DoubleToHalfBits(mid + eps) == h + 1);
    CHECK(DoubleToHalfBits(mid - eps) == h);
  }
}

TEST_CASE("Float16: special values") {
  CHECK(FloatToHalfBits(0.0f) == 0x0000);
  CHECK(FloatToHalfBits(-0.0f) == 0x8000);
  CHECK(FloatToHalfBits(INFINITY) == 0x7C00);
  CHECK(FloatToHalfBits(-INFINITY) == 0xFC00);
  CHECK(FloatToHalfBits(1e6f) == 0x7C00);
  CHECK(FloatToHalfBits(-1e6f) == 0xFC00);
  CHECK(FloatToHalfBits(65504.0f) == 0x7BFF);
  CHECK(FloatToHalfBits(65519.99f) == 0x7BFF);
  CHECK(FloatToHalfBits(65520.0f) == 0x7C00);
  CHECK(FloatToHalfBits(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(FloatToHalfBits(std::ldexp(1.0f, -25)) == 0x0000);  // tie -> even (0)
  CHECK(FloatToHalfBits(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(HalfBitsToFloat(0x0001) == std::ldexp(1.0f, -24));
  CHECK(std::isinf(HalfBitsToFloat(0x7C00)));
  CHECK(std::isnan(HalfBitsToFloat(0x7C01)));
  CHECK(Bits(HalfBitsToFloat(0x7C01)) == 0x7FC02000u);  // quieted, payload kept
  CHECK(FloatToHalfBits(FromBits(0x7F800001u)) == 0x7E00);  // sNaN with low payload: stays NaN
  CHECK(FloatToHalfBits(FromBits(0xFFC00000u)) == 0xFE00);
  CHECK(DoubleToHalfBits(1e300) == 0x7C00);
  CHECK(DoubleToHalfBits(1e-300) == 0x0000);
  CHECK(DoubleToHalfBits(-1e-300) == 0x8000);
  CHECK(DoubleToHalfBits(NAN) == 0x7E00);
}

TEST_CASE("BFloat16: sweep, ties and specials") {
  for (uint32_t u : FloatSweep()) {
    const float f = FromBits(u);
    CAPTURE(u);
    const uint16_t got = FloatToBFloat16Bits(f);
    if (std::isnan(f)) {
      CHECK((got & 0x7F80u) == 0x7F80u);
      CHECK((got & 0x0040u) != 0);
      continue;
    }
    CHECK(got == ref::FloatToBFloat16Ref(f));
    CHECK(DoubleToBFloat16Bits(static_cast<double>(f)) == got);
  }
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t b16 = static_cast<uint16_t>(b);
    const float f = BFloat16BitsToFloat(b16);
    CAPTURE(b);
    if ((b16 & 0x7F80u) == 0x7F80u && (b16 & 0x7Fu) != 0) {
      CHECK(std::isnan(f));
      CHECK(FloatToBFloat16Bits(f) == (b16 | 0x0040u));
    } else {
      CHECK(static_cast<double>(f) == ref::DecodeRef(b16, ref::kBFloat16));
      CHECK(FloatToBFloat16Bits(f) == b16);
      // Tie with the next value (finite, positive magnitudes): rounds to even.
      if ((b16 & 0x7FFFu) < 0x7F7Fu) {
        const float mid = FromBits((static_cast<uint32_t>(b16) << 16) | 0x8000u);
        const uint16_t even = (b16 & 1) ? static_cast<uint16_t>(b16 + 1) : b16;
        CHECK(FloatToBFloat16Bits(mid) == even);
      }
    }
  }
  CHECK(FloatToBFloat16Bits(FromBits(0x7F7FFFFFu)) == 0x7F80);  // max float rounds to Inf
  CHECK(FloatToBFloat16Bits(-0.0f) == 0x8000);
  CHECK(DoubleToBFloat16Bits(1e300) == 0x7F80);
}

TEST_CASE("Float8: every code round-trips, saturation and NaN rules") {
  struct F {
    Float8Format f;
    uint8_t max;
    bool fnuz;
  };
  for (F fmt : {F{Float8Format::kE4M3FN, 0x7E, false}, F{Float8Format::kE4M3FNUZ, 0x7F, true},
                F{Float8Format::kE5M2, 0x7B, false}, F{Float8Format::kE5M2FNUZ, 0x7F, true}}) {
    CAPTURE(static_cast<int>(fmt.f));
    for (int c = 0; c < 256; ++c) {
      const float v = Float8ToFloat(static_cast<uint8_t>(c), fmt.f);
      CAPTURE(c);
      if (std::isnan(v)) {
        CHECK(std::isnan(Float8ToFloat(FloatToFloat8(v, fmt.f, true), fmt.f)));
        continue;
      }
      if (std::isinf(v)) {
        CHECK(fmt.f == Float8Format::kE5M2);
        CHECK(FloatToFloat8(v, fmt.f, false) == c);
        continue;
      }
      CHECK(FloatToFloat8(v, fmt.f, true) == c);
      CHECK(DoubleToFloat8(v, fmt.f, false) == c);
    }
    const float maxv = Float8ToFloat(fmt.max, fmt.f);
    CHECK(FloatToFloat8(1e9f, fmt.f, true) == fmt.max);
    CHECK(FloatToFloat8(-1e9f, fmt.f, true) == (fmt.max | 0x80));
    CHECK(FloatToFloat8(INFINITY, fmt.f, true) == fmt.max);
    CHECK(std::isnan(Float8ToFloat(FloatToFloat8(NAN, fmt.f, true), fmt.f)));
    if (fmt.fnuz) {
      CHECK(FloatToFloat8(-0.0f, fmt.f, true) == 0);
      CHECK(FloatToFloat8(-1e-30f, fmt.f, true) == 0);
      CHECK(FloatToFloat8(1e9f, fmt.f, false) == 0x80);
    } else {
      CHECK(FloatToFloat8(-0.0f, fmt.f, true) == 0x80);
    }
    CHECK(maxv > 0);
  }
  CHECK(Float8ToFloat(0x7E, Float8Format::kE4M3FN) == 448.0f);
  CHECK(Float8ToFloat(0x7F, Float8Format::kE4M3FNUZ) == 240.0f);
  CHECK(Float8ToFloat(0x7B, Float8Format::kE5M2) == 57344.0f);
  CHECK(FloatToFloat8(464.0f, Float8Format::kE4M3FN, false) == 0x7E);   // tie -> even (448)
  CHECK(FloatToFloat8(465.0f, Float8Format::kE4M3FN, false) == 0x7F);   // NaN
  CHECK(FloatToFloat8(1e9f, Float8Format::kE5M2, false) == 0x7C);       // Inf
  CHECK(FloatToFloat8(std::ldexp(1.0f, -9), Float8Format::kE4M3FN, true) == 0x01);  // subnormal
}

TEST_CASE("Float8E8M0 and Float4E2M1") {
  CHECK(FloatToFloat8E8M0(1.0f, true, E8M0Rounding::kUp) == 127);
  CHECK(FloatToFloat8E8M0(1.1f, true, E8M0Rounding::kUp) == 128);
  CHECK(FloatToFloat8E8M0(1.1f, true, E8M0Rounding::kDown) == 127);
  CHECK(FloatToFloat8E8M0(1.4f, true, E8M0Rounding::kNearest) == 127);
  CHECK(FloatToFloat8E8M0(1.5f, true, E8M0Rounding::kNearest) == 128);
  CHECK(FloatToFloat8E8M0(0.0f, true, E8M0Rounding::kUp) == 0);
  CHECK(FloatToFloat8E8M0(NAN, true, E8M0Rounding::kUp) == 0xFF);
  CHECK(FloatToFloat8E8M0(INFINITY, true, E8M0Rounding::kUp) == 0xFE);
  CHECK(FloatToFloat8E8M0(INFINITY, false, E8M0Rounding::kUp) == 0xFF);
  for (int c = 0; c < 255; ++c) {
    CHECK(FloatToFloat8E8M0(Float8E8M0ToFloat(static_cast<uint8_t>(c)), true, E8M0Rounding::kUp) == c);
  }
  const float values[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int c = 0; c < 16; ++c) {
    const float v = Float4E2M1ToFloat(static_cast<uint8_t>(c));
    CHECK(v == ((c & 8) ? -values[c & 7] : values[c & 7]));
    CHECK(FloatToFloat4E2M1(v) == c);
  }
  CHECK(FloatToFloat4E2M1(0.25f) == 0);    // tie -> even
  CHECK(FloatToFloat4E2M1(-3.5f) == 0xE);  // tie between 3 and 4 -> 4
  CHECK(FloatToFloat4E2M1(100.0f) == 0x7);
  CHECK(FloatToFloat4E2M1(-INFINITY) == 0xF);
  CHECK(FloatToFloat4E2M1(NAN) == 0x8);
}

}  // namespace
