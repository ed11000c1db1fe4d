// Tests for quant/param_readers.h: scale and zero-point tensors of every storage type read as
// float32 / int32, against values written out here.
#include "quant/param_readers.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "simplecpp/error.h"

namespace simplecpp::quant {
namespace {

TEST_CASE("ScalesAsF32 widens float16, bfloat16, float64 and integer scales") {
  CHECK(ScalesAsF32(Tensor::FromVector<float>(DType::kFloat32, {2}, {0.5f, -3.25f})) ==
        std::vector<float>{0.5f, -3.25f});
  // float16 0x3C00 = 1, 0xC000 = -2, 0x0001 = 2^-24 (the smallest subnormal).
  CHECK(ScalesAsF32(Tensor::FromVector<uint16_t>(DType::kFloat16, {3}, {0x3C00, 0xC000, 0x0001})) ==
        std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24)});
  // bfloat16 0x3F80 = 1, 0x4040 = 3.
  CHECK(ScalesAsF32(Tensor::FromVector<uint16_t>(DType::kBFloat16, {2}, {0x3F80, 0x4040})) ==
        std::vector<float>{1.0f, 3.0f});
  CHECK(ScalesAsF32(Tensor::FromVector<double>(DType::kFloat64, {1}, {0.1})) ==
        std::vector<float>{0.1f});
  CHECK(ScalesAsF32(Tensor::FromVector<int32_t>(DType::kInt32, {2}, {7, -16777217})) ==
        std::vector<float>{7.0f, -16777216.0f});
}

TEST_CASE("ScalesAsF32 quiets a bfloat16 NaN") {
  const std::vector<float> s =
      ScalesAsF32(Tensor::FromVector<uint16_t>(DType::kBFloat16, {1}, {0x7F81}));
  uint32_t bits = 0;
  std::memcpy(&bits, s.data(), 4);
  CHECK(bits == 0x7FC10000u);
}

TEST_CASE("ScalesAsF32 rejects a non-numeric scale") {
  Tensor t(DType::kFloat8E4M3FN, {1});
  CHECK_THROWS_AS(ScalesAsF32(t), Error);
}

TEST_CASE("ZeroPointsAsI32 widens 8-, 16- and 32-bit zero points") {
  CHECK(ZeroPointsAsI32(Tensor::FromVector<uint8_t>(DType::kUInt8, {2}, {0, 255})) ==
        std::vector<int32_t>{0, 255});
  CHECK(ZeroPointsAsI32(Tensor::FromVector<int8_t>(DType::kInt8, {2}, {-128, 127})) ==
        std::vector<int32_t>{-128, 127});
  CHECK(ZeroPointsAsI32(Tensor::FromVector<uint16_t>(DType::kUInt16, {1}, {65535})) ==
        std::vector<int32_t>{65535});
  CHECK(ZeroPointsAsI32(Tensor::FromVector<int16_t>(DType::kInt16, {1}, {-32768})) ==
        std::vector<int32_t>{-32768});
  CHECK(ZeroPointsAsI32(Tensor::FromVector<int32_t>(DType::kInt32, {1}, {-70000})) ==
        std::vector<int32_t>{-70000});
}

TEST_CASE("ZeroPointsAsI32 unpacks 4- and 2-bit zero points, low bits first") {
  Tensor i4(DType::kInt4, {3});
  i4.data<uint8_t>()[0] = 0x87;  // element 0 = 7, element 1 = -8
  i4.data<uint8_t>()[1] = 0x0F;  // element 2 = -1
  CHECK(ZeroPointsAsI32(i4) == std::vector<int32_t>{7, -8, -1});
  Tensor u2(DType::kUInt2, {4});
  u2.data<uint8_t>()[0] = 0xE4;  // 0b11'10'01'00
  CHECK(ZeroPointsAsI32(u2) == std::vector<int32_t>{0, 1, 2, 3});
}

TEST_CASE("FirstScaleAsF32 / FirstZeroPointAsI32 equal the first value of the full readers") {
  const std::vector<Tensor> scales = {
      Tensor::FromVector<float>(DType::kFloat32, {2}, {0.5f, -3.25f}),
      Tensor::FromVector<uint16_t>(DType::kFloat16, {2}, {0x0001, 0x3C00}),
      Tensor::FromVector<uint16_t>(DType::kBFloat16, {1}, {0x7F81}),
      Tensor::FromVector<double>(DType::kFloat64, {1}, {0.1}),
      Tensor::FromVector<int32_t>(DType::kInt32, {1}, {-16777217})};
  for (const Tensor& t : scales) {
    CAPTURE(DTypeName(t.dtype()));
    const float first = FirstScaleAsF32(t), want = ScalesAsF32(t)[0];
    CHECK(std::memcmp(&first, &want, 4) == 0);  // bit for bit (the NaN included)
  }
  Tensor i4(DType::kInt4, {3});
  i4.data<uint8_t>()[0] = 0x87;
  Tensor u2(DType::kUInt2, {1});
  u2.data<uint8_t>()[0] = 0x03;
  const std::vector<Tensor> zps = {Tensor::FromVector<uint8_t>(DType::kUInt8, {2}, {255, 0}),
                                   Tensor::FromVector<int8_t>(DType::kInt8, {1}, {-128}),
                                   Tensor::FromVector<int16_t>(DType::kInt16, {1}, {-32768}),
                                   Tensor::FromVector<int32_t>(DType::kInt32, {1}, {-70000}), i4,
                                   u2};
  for (const Tensor& t : zps) {
    CAPTURE(DTypeName(t.dtype()));
    CHECK(FirstZeroPointAsI32(t) == ZeroPointsAsI32(t)[0]);
  }
  CHECK_THROWS_AS(FirstScaleAsF32(Tensor(DType::kFloat32, {0})), Error);
  CHECK_THROWS_AS(FirstZeroPointAsI32(Tensor(DType::kUInt8, {0})), Error);
  CHECK_THROWS_AS(FirstScaleAsF32(Tensor(DType::kFloat8E4M3FN, {1})), Error);
}

TEST_CASE("ReadQuantParams fills the values and the constant flag, nothing else") {
  const Tensor scale = Tensor::FromVector<uint16_t>(DType::kFloat16, {2}, {0x3C00, 0x3800});
  const Tensor zp = Tensor::FromVector<int8_t>(DType::kInt8, {2}, {-3, 5});
  const QuantParams with_zp = ReadQuantParams(scale, &zp, true);
  CHECK(with_zp.scales == std::vector<float>{1.0f, 0.5f});
  CHECK(with_zp.zero_points == std::vector<int32_t>{-3, 5});
  CHECK(with_zp.constant);
  CHECK(with_zp.granularity == Granularity::kPerTensor);  // left to param_shapes.h
  const QuantParams without = ReadQuantParams(scale, nullptr, false);
  CHECK(without.scales == std::vector<float>{1.0f, 0.5f});
  CHECK(without.zero_points.empty());
  CHECK_FALSE(without.constant);
}

}  // namespace
}  // namespace simplecpp::quant
