// Tests for the float8 / float4e2m1 paths of graph/ops/quant/quantize.cc: QuantizeLinear (per tensor,
// per axis, saturate on/off, zero point added, float16 precision) and DequantizeLinear (with and
// without zero point, float16 output), packed float4 with an odd element count, opset gating and
// attribute errors. Expected codes are hand-computed bit patterns plus a scalar reference loop
// that uses the scalar conversions of kernels/float16/float8.h.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "graph/op_test_options.h"
#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"
#include "kernels/float16/float16.h"
#include "kernels/float16/float8.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

using tensor_test::ErrorCodeOf;

Tensor Bytes(DType t, Dims dims, std::vector<uint8_t> v) {
  Tensor out(t, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) static_cast<uint8_t*>(out.raw_data())[i] = v[i];
  return out;
}

std::vector<uint8_t> BytesOf(const Tensor& t) {
  const uint8_t* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

uint8_t Nib(const Tensor& t, int64_t i) {
  const uint8_t b = static_cast<const uint8_t*>(t.raw_data())[i / 2];
  return i % 2 == 0 ? (b & 0xF) : (b >> 4);
}

TEST_CASE("QuantizeLinear float8e4m3fn: known codes, saturate on and off") {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = F32({6}, {0.0f, 2.0f, -1.0f, 1000.0f, 3.0f, -inf});
  const Tensor zp = Bytes(DType::kFloat8E4M3FN, {}, {0x00});
  auto sat = RunNode("QuantizeLinear", {x, F32({}, {2.0f}), zp}, {}, NodeOptions(21));
  REQUIRE(sat[0].dtype() == DType::kFloat8E4M3FN);
  // 0, 1, -0.5, 500 -> 448, 1.5, -inf -> -448.
  CHECK(BytesOf(sat[0]) == std::vector<uint8_t>{0x00, 0x38, 0xB0, 0x7E, 0x3C, 0xFE});
  auto nosat = RunNode("QuantizeLinear", {x, F32({}, {2.0f}), zp}, {AttrInt("saturate", 0)},
                       NodeOptions(21));
  CHECK(BytesOf(nosat[0]) == std::vector<uint8_t>{0x00, 0x38, 0xB0, 0x7F, 0x3C, 0xFF});
}

TEST_CASE("QuantizeLinear float8e5m2 / fnuz per axis: reference loop, zero point added") {
  const Tensor x = RandomF32({3, 5, 2}, 7, -300.0f, 300.0f);
  const Tensor s = F32({5}, {0.5f, 1.0f, 3.0f, 0.01f, 7.0f});
  for (DType t : {DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ, DType::kFloat8E4M3FNUZ}) {
    CAPTURE(DTypeName(t));
    const kernels::Float8Format f = t == DType::kFloat8E5M2       ? kernels::Float8Format::kE5M2
                                    : t == DType::kFloat8E5M2FNUZ ? kernels::Float8Format::kE5M2FNUZ
                                                                  : kernels::Float8Format::kE4M3FNUZ;
    std::vector<uint8_t> zpc(5);
    for (int a = 0; a < 5; ++a) zpc[a] = kernels::FloatToFloat8(static_cast<float>(a) - 2.0f, f, true);
    for (int sat = 0; sat < 2; ++sat) {
      auto out = RunNode("QuantizeLinear", {x, s, Bytes(t, {5}, zpc)},
                         {AttrInt("axis", -2), AttrInt("saturate", sat)}, NodeOptions(21));
      const std::vector<uint8_t> got = BytesOf(out[0]);
      REQUIRE(got.size() == 30);
      for (int64_t i = 0; i < 30; ++i) {
        const int64_t a = (i / 2) % 5;
        const float v = x.data<float>()[i] / s.data<float>()[a] + kernels::Float8ToFloat(zpc[a], f);
        CHECK(got[i] == kernels::FloatToFloat8(v, f, sat == 1));
      }
    }
  }
}

TEST_CASE("QuantizeLinear float4e2m1: odd count packs a partial byte, always saturates") {
  const Tensor x = F32({5}, {0.5f, -2.5f, 13.0f, -100.0f, 2.9f});
  auto out = RunNode("QuantizeLinear", {x, F32({}, {1.0f}), Bytes(DType::kFloat4E2M1, {}, {0})},
                     {AttrInt("saturate", 0)}, NodeOptions(23));
  REQUIRE(out[0].dtype() == DType::kFloat4E2M1);
  REQUIRE(out[0].byte_size() == 3);
  // 0.5 -> 0x1; -2.5 -> -2 (tie to even) 0xC; 13 -> 6 (0x7); -100 -> -6 (0xF); 2.9 -> 3 (0x5).
  const uint8_t want[5] = {0x1, 0xC, 0x7, 0xF, 0x5};
  for (int i = 0; i < 5; ++i) CHECK(Nib(out[0], i) == want[i]);
  CHECK((static_cast<const uint8_t*>(out[0].raw_data())[2] >> 4) == 0);
}

TEST_CASE("QuantizeLinear float8 with float16 input and scale (16-bit precision)") {
  Tensor x(DType::kFloat16, {4});
  Tensor s(DType::kFloat16, {});
  const float xv[4] = {1.0f, -3.0f, 0.1f, 600.0f};
  for (int i = 0; i < 4; ++i) x.data<uint16_t>()[i] = kernels::FloatToHalfBits(xv[i]);
  s.data<uint16_t>()[0] = kernels::FloatToHalfBits(0.5f);
  auto out =
      RunNode("QuantizeLinear", {x, s, Bytes(DType::kFloat8E4M3FN, {}, {0})}, {}, NodeOptions(21));
  for (int i = 0; i < 4; ++i) {
    const float h = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(xv[i]));
    const float q = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(h / 0.5f));
    CHECK(BytesOf(out[0])[i] == kernels::FloatToFloat8(q, kernels::Float8Format::kE4M3FN, true));
  }
}

TEST_CASE("DequantizeLinear float8 / float4: reference loop, zero point, float16 output") {
  std::vector<uint8_t> codes(7);
  for (int i = 0; i < 7; ++i) codes[i] = static_cast<uint8_t>(i * 37 + 5);
  const Tensor q = Bytes(DType::kFloat8E4M3FN, {7}, codes);
  auto y = RunNode("DequantizeLinear", {q, F32({}, {2.0f})}, {}, NodeOptions(21));
  for (int i = 0; i < 7; ++i) {
    const float want = kernels::Float8ToFloat(codes[i], kernels::Float8Format::kE4M3FN) * 2.0f;
    if (std::isnan(want)) {
      CHECK(std::isnan(y[0].data<float>()[i]));
    } else {
      CHECK(y[0].data<float>()[i] == want);
    }
  }
  // e5m2 with a zero point of 1.0 (0x3C), per axis over [2, 3].
  const Tensor q2 = Bytes(DType::kFloat8E5M2, {2, 3}, {0x3C, 0x40, 0xBC, 0x00, 0x7C, 0x44});
  auto y2 = RunNode(
      "DequantizeLinear",
      {q2, F32({3}, {1.0f, 0.5f, 4.0f}), Bytes(DType::kFloat8E5M2, {3}, {0x3C, 0x3C, 0x3C})},
      {AttrInt("axis", 1)}, NodeOptions(21));
  // values 1, 2, -1, 0, inf, 4 minus 1, times scale.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> want2 = {0.0f, 0.5f, -8.0f, -1.0f, inf, 12.0f};
  for (int i = 0; i < 6; ++i) CHECK(y2[0].data<float>()[i] == want2[i]);
  // float4e2m1, 3 elements (partial byte), float16 scale -> float16 output.
  Tensor s16(DType::kFloat16, {});
  s16.data<uint16_t>()[0] = kernels::FloatToHalfBits(0.25f);
  const Tensor q4 = Bytes(DType::kFloat4E2M1, {3}, {0xF3, 0x0A});  // 1.5, -6, -1
  auto y4 = RunNode("DequantizeLinear", {q4, s16}, {}, NodeOptions(23));
  REQUIRE(y4[0].dtype() == DType::kFloat16);
  const float want4[3] = {0.375f, -1.5f, -0.25f};
  for (int i = 0; i < 3; ++i) CHECK(kernels::HalfBitsToFloat(y4[0].data<uint16_t>()[i]) == want4[i]);
}

TEST_CASE("QuantizeLinear / DequantizeLinear float8: opset gating and attribute errors") {
  const Tensor x = F32({2}, {1.0f, 2.0f});
  const Tensor s = F32({}, {1.0f});
  const int unsupported = static_cast<int>(ErrorCode::kUnsupported);
  // float8 needs opset 19, float4e2m1 opset 23, float8e8m0 is no Q/DQ type.
  CHECK(ErrorCodeOf([&] {
          RunNode("QuantizeLinear", {x, s, Bytes(DType::kFloat8E4M3FN, {}, {0})}, {},
                  NodeOptions(13));
        }) != 0);
  CHECK(
      ErrorCodeOf([&] {
        RunNode("QuantizeLinear", {x, s, Bytes(DType::kFloat4E2M1, {}, {0})}, {}, NodeOptions(21));
      }) == unsupported);
  CHECK(
      ErrorCodeOf([&] {
        RunNode("QuantizeLinear", {x, s, Bytes(DType::kFloat8E8M0, {}, {0})}, {}, NodeOptions(25));
      }) == unsupported);
  CHECK(ErrorCodeOf([&] {
          RunNode("DequantizeLinear", {Bytes(DType::kFloat4E2M1, {2}, {0x21}), s}, {},
                  NodeOptions(21));
        }) == unsupported);
  CHECK(ErrorCodeOf([&] {
          RunNode("QuantizeLinear", {x, s, Bytes(DType::kFloat8E5M2, {}, {0})},
                  {AttrInt("saturate", 2)}, NodeOptions(21));
        }) == static_cast<int>(ErrorCode::kInvalidModel));
  // Zero point shape must match the scale's.
  CHECK(ErrorCodeOf([&] {
          RunNode("DequantizeLinear",
                  {Bytes(DType::kFloat8E5M2, {2}, {1, 2}), F32({2}, {1.0f, 2.0f}),
                   Bytes(DType::kFloat8E5M2, {3}, {0, 0, 0})},
                  {AttrInt("axis", 0)}, NodeOptions(21));
        }) != 0);
}

}  // namespace
}  // namespace simplecpp::testing
