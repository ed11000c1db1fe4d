// core/float16_bits.h: every half pattern widens exactly (against the double-arithmetic
// reference of tests/reference/float16_reference.h) and narrows back to itself, NaN stays NaN,
// and float -> half rounds ties to even. (tests/kernels/float16/float16_test.cc covers the same
// functions through kernels' names with a wider float32 sweep.)
#include "core/float16_bits.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "reference/float16_reference.h"

namespace simplecpp {
namespace {

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST_CASE("float16 bits: all 65536 patterns widen exactly and narrow back") {
  for (uint32_t h = 0; h <= 0xFFFFu; ++h) {
    const uint16_t h16 = static_cast<uint16_t>(h);
    const float f = HalfBitsToFloat(h16);
    const bool is_nan = (h16 & 0x7C00u) == 0x7C00u && (h16 & 0x3FFu) != 0;
    CAPTURE(h);
    if (is_nan) {
      REQUIRE(std::isnan(f));
      CHECK(std::signbit(f) == ((h16 & 0x8000u) != 0));
      const uint16_t back = FloatToHalfBits(f);
      CHECK((back & 0x7C00u) == 0x7C00u);
      CHECK((back & 0x3FFu) != 0);       // still NaN
      CHECK(back == (h16 | 0x0200u));    // quieted, sign and payload kept
    } else {
      CHECK(static_cast<double>(f) == reference::DecodeRef(h16, reference::kHalf));
      CHECK(std::signbit(f) == ((h16 & 0x8000u) != 0));  // -0 stays -0
      CHECK(FloatToHalfBits(f) == h16);
    }
  }
}

TEST_CASE("float16 bits: float -> half rounds to nearest, ties to even") {
  // 1 + 2^-11 lies halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01): ties to 0x3C00.
  CHECK(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00u);
  // 1 + 3 * 2^-11 lies halfway between 0x3C01 (odd) and 0x3C02 (even): ties to 0x3C02.
  CHECK(FloatToHalfBits(1.0f + 3.0f * std::ldexp(1.0f, -11)) == 0x3C02u);
  // Just above the first tie rounds up.
  CHECK(FloatToHalfBits(FromBits(0x3F801001u)) == 0x3C01u);
  // Subnormal ties: 2^-25 (half the smallest subnormal) goes to 0, 3 * 2^-25 to 2 * 2^-24.
  CHECK(FloatToHalfBits(std::ldexp(1.0f, -25)) == 0x0000u);
  CHECK(FloatToHalfBits(-std::ldexp(1.0f, -25)) == 0x8000u);
  CHECK(FloatToHalfBits(3.0f * std::ldexp(1.0f, -25)) == 0x0002u);
  CHECK(FloatToHalfBits(std::ldexp(1.0f, -24)) == 0x0001u);
  // 65504 is the largest finite half; 65520 (its half ulp above) ties to Inf, just below stays.
  CHECK(FloatToHalfBits(65504.0f) == 0x7BFFu);
  CHECK(FloatToHalfBits(65519.996f) == 0x7BFFu);
  CHECK(FloatToHalfBits(65520.0f) == 0x7C00u);
  CHECK(FloatToHalfBits(-65520.0f) == 0xFC00u);
  CHECK(FloatToHalfBits(INFINITY) == 0x7C00u);
  CHECK(FloatToHalfBits(-0.0f) == 0x8000u);
  CHECK(FloatToHalfBits(0.5f) == 0x3800u);
  CHECK(FloatToHalfBits(-2.0f) == 0xC000u);
}

}  // namespace
}  // namespace simplecpp
