// Tests for quant/quant_params.h and quant/int4.h: rounding, saturation, ranges, the
// DynamicQuantizeLinear parameters (including the all-zero input) and sub-byte packing.
#include "quant/quant_params.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "quant/int4.h"

namespace simplecpp::quant {
namespace {

TEST_CASE("QuantizeValue rounds half to even and saturates") {
  CHECK(QuantizeValue(2.5f, 1.0f, 0, 0, 255) == 2);
  CHECK(QuantizeValue(3.5f, 1.0f, 0, 0, 255) == 4);
  CHECK(QuantizeValue(-2.5f, 1.0f, 0, -128, 127) == -2);
  CHECK(QuantizeValue(1000.0f, 1.0f, 0, -128, 127) == 127);
  CHECK(QuantizeValue(-1000.0f, 1.0f, 10, 0, 255) == 0);
  CHECK(QuantizeValue(std::numeric_limits<float>::infinity(), 1.0f, 0, 0, 255) == 255);
  CHECK(QuantizeValue(-std::numeric_limits<float>::infinity(), 1.0f, 0, -8, 7) == -8);
  // A NaN quotient gives the zero point.
  CHECK(QuantizeValue(std::nanf(""), 1.0f, 7, 0, 255) == 7);
  CHECK(QuantizeValue(0.0f, 0.0f, 3, 0, 255) == 3);
  // The division is a real float32 division (not a multiply by 1/scale).
  CHECK(QuantizeValue(3.0f, 0.1f, 0, 0, 255) == static_cast<int32_t>(std::nearbyint(3.0f / 0.1f)));
}

TEST_CASE("QuantizedRange") {
  int32_t lo = 0, hi = 0;
  CHECK(QuantizedRange(DType::kInt4, &lo, &hi));
  CHECK(lo == -8);
  CHECK(hi == 7);
  CHECK(QuantizedRange(DType::kUInt2, &lo, &hi));
  CHECK(hi == 3);
  CHECK(QuantizedRange(DType::kUInt16, &lo, &hi));
  CHECK(hi == 65535);
  CHECK_FALSE(QuantizedRange(DType::kFloat32, &lo, &hi));
  CHECK_FALSE(QuantizedRange(DType::kFloat8E4M3FN, &lo, &hi));
}

TEST_CASE("IsQuantIntDType and IsFloat8DType") {
  for (DType t : {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kInt32,
                  DType::kUInt4, DType::kInt4, DType::kUInt2, DType::kInt2}) {
    CHECK(IsQuantIntDType(t));
    CHECK_FALSE(IsFloat8DType(t));
  }
  for (DType t : {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                  DType::kFloat8E5M2FNUZ, DType::kFloat8E8M0, DType::kFloat4E2M1}) {
    CHECK(IsFloat8DType(t));
    CHECK_FALSE(IsQuantIntDType(t));
  }
  CHECK_FALSE(IsQuantIntDType(DType::kInt64));
  CHECK_FALSE(IsQuantIntDType(DType::kFloat32));
  CHECK_FALSE(IsFloat8DType(DType::kFloat16));
}

TEST_CASE("ComputeDynamicQuantParams") {
  // Range widened to include 0: [0, 2] -> scale 2/255, zero point 0.
  DynamicQuantParams p = ComputeDynamicQuantParams(1.0f, 2.0f);
  CHECK(p.scale == 2.0f / 255.0f);
  CHECK(p.zero_point == 0);
  // [-1, 0]: zero point 255.
  p = ComputeDynamicQuantParams(-1.0f, -0.5f);
  CHECK(p.scale == 1.0f / 255.0f);
  CHECK(p.zero_point == 255);
  // [-1, 3]: zp = round(1 / (4/255)) = round(63.75) = 64.
  p = ComputeDynamicQuantParams(-1.0f, 3.0f);
  CHECK(p.zero_point == 64);
  // All zeros: scale 1, zero point 0 (the ONNX reference's definition; no division by 0).
  p = ComputeDynamicQuantParams(0.0f, 0.0f);
  CHECK(p.scale == 1.0f);
  CHECK(p.zero_point == 0);
}

TEST_CASE("RequantizeValue uses double precision and rounds half to even") {
  CHECK(RequantizeValue(5, 0.5f, 0, 0, 255) == 2);   // 2.5 -> 2
  CHECK(RequantizeValue(7, 0.5f, 0, 0, 255) == 4);   // 3.5 -> 4
  CHECK(RequantizeValue(-7, 0.5f, 0, -128, 127) == -4);
  CHECK(RequantizeValue(1 << 30, 1.0f, 0, -128, 127) == 127);
  CHECK(RequantizeValue(100, 0.1f, 10, 0, 255) ==
        static_cast<int32_t>(std::nearbyint(100.0 * static_cast<double>(0.1f)) + 10));
  // Rounded before the zero point is added: with an odd zero point a tie rounds to even first.
  CHECK(RequantizeValue(5, 0.5f, 1, 0, 255) == 3);       // round(2.5) + 1, not round(3.5)
  CHECK(RequantizeValue(7, 0.5f, -3, -128, 127) == 1);   // round(3.5) - 3
  CHECK(RequantizeValue(-5, 0.5f, 127, 0, 255) == 125);  // round(-2.5) + 127
  CHECK(RequantizeValue(-1, 0.5f, 255, 0, 255) == 255);  // round(-0.5) = -0, + 255
}

TEST_CASE("Sub-byte packing: low bits first, sign extension") {
  std::vector<uint8_t> buf(2, 0xFF);
  const std::vector<int32_t> v = {1, -2, 7, -8};
  PackSubByte(v.data(), 0, 4, 4, buf.data());
  CHECK(buf[0] == 0xE1);  // -2 = 0xE in the high nibble, 1 in the low nibble
  CHECK(buf[1] == 0x87);
  for (int i = 0; i < 4; ++i) CHECK(GetSubByte(buf.data(), i, 4, true) == v[i]);
  CHECK(GetSubByte(buf.data(), 1, 4, false) == 14);
  // Odd count: the unused high nibble of the last byte is 0.
  std::vector<uint8_t> odd(2, 0xFF);
  const std::vector<int32_t> w = {3, 4, 5};
  PackSubByte(w.data(), 0, 3, 4, odd.data());
  CHECK(odd[1] == 0x05);
  // 2-bit: four per byte.
  std::vector<uint8_t> b2(1, 0);
  const std::vector<int32_t> t = {1, -2, 0, -1};
  PackSubByte(t.data(), 0, 4, 2, b2.data());
  CHECK(b2[0] == (1 | (2 << 2) | (0 << 4) | (3 << 6)));
  std::vector<int32_t> back(4);
  UnpackSubByte(b2.data(), 0, 4, 2, true, back.data());
  CHECK(back == t);
  // Writing from an odd start keeps the neighbour.
  std::vector<uint8_t> s(1, 0x0A);
  const std::vector<int32_t> one = {6};
  PackSubByte(one.data(), 1, 1, 4, s.data());
  CHECK(s[0] == 0x6A);
  CHECK(SubByteBytes(5, 4) == 3);
  CHECK(SubByteBytes(5, 2) == 2);
}

}  // namespace
}  // namespace simplecpp::quant
