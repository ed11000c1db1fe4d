// Tests for graph/ops/quant/quantize.cc: QuantizeLinear / DequantizeLinear per tensor, per axis
// (negative axis), blocked (incl. a partial last block), all integer types incl. packed 4-/2-bit,
// float16 scales / outputs, output_dtype, opset gating, shape errors; DynamicQuantizeLinear incl.
// the all-zero input. References are scalar loops written here (std::nearbyint).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

template <typename T>
Tensor Q(DType t, Dims dims, std::vector<T> v) {
  return Tensor::FromVector<T>(t, std::move(dims), v);
}

// A one-element packed 4-bit tensor (FromVector only takes byte-sized types).
Tensor Nibble(DType t, uint8_t v) {
  Tensor z(t, {});
  *static_cast<uint8_t*>(z.raw_data()) = v;
  return z;
}

int32_t RefQuant(float x, float s, int32_t zp, int32_t lo, int32_t hi) {
  const float q = x / s;
  if (std::isnan(q)) return std::min(std::max(zp, lo), hi);
  double r = std::nearbyint(q) + zp;
  return static_cast<int32_t>(std::min<double>(std::max<double>(r, lo), hi));
}

TEST_CASE("QuantizeLinear per tensor, uint8 and int8, ties to even") {
  const Tensor x = F32({6}, {0.0f, 2.0f, 3.0f, -3.0f, 1000.0f, -1000.0f});
  auto out = RunNode("QuantizeLinear", {x, F32({}, {2.0f}), Q<uint8_t>(DType::kUInt8, {}, {128})},
                     {}, {.opset = 13});
  REQUIRE(out[0].dtype() == DType::kUInt8);
  const std::vector<uint8_t> want = {128, 129, 130, 126, 255, 0};  // 1.5 -> 2, -1.5 -> -2
  for (int i = 0; i < 6; ++i) CHECK(out[0].data<uint8_t>()[i] == want[i]);
  // No zero point: uint8 with zp 0.
  out = RunNode("QuantizeLinear", {x, F32({}, {2.0f})}, {}, {.opset = 10});
  CHECK(out[0].dtype() == DType::kUInt8);
  CHECK(out[0].data<uint8_t>()[2] == 2);
  CHECK(out[0].data<uint8_t>()[3] == 0);
  out = RunNode("QuantizeLinear", {x, F32({}, {2.0f}), Q<int8_t>(DType::kInt8, {}, {-1})});
  CHECK(out[0].data<int8_t>()[3] == -3);
  CHECK(out[0].data<int8_t>()[4] == 127);
  CHECK(out[0].data<int8_t>()[5] == -128);
}

TEST_CASE("QuantizeLinear / DequantizeLinear per axis with negative axis, random data") {
  const Tensor x = RandomF32({2, 3, 4}, 3, -10.0f, 10.0f);
  const Tensor s = F32({3}, {0.1f, 0.25f, 0.07f});
  const Tensor z = Q<int8_t>(DType::kInt8, {3}, {-5, 0, 7});
  auto out = RunNode("QuantizeLinear", {x, s, z}, {AttrInt("axis", -2)}, {.opset = 13});
  for (int64_t i = 0; i < 24; ++i) {
    const int64_t c = (i / 4) % 3;
    CHECK(out[0].data<int8_t>()[i] ==
          RefQuant(x.data<float>()[i], s.data<float>()[c], z.data<int8_t>()[c], -128, 127));
  }
  auto back = RunNode("DequantizeLinear", {out[0], s, z}, {AttrInt("axis", -2)}, {.opset = 13});
  for (int64_t i = 0; i < 24; ++i) {
    const int64_t c = (i / 4) % 3;
    CHECK(back[0].data<float>()[i] ==
          static_cast<float>(out[0].data<int8_t>()[i] - z.data<int8_t>()[c]) * s.data<float>()[c]);
  }
  // Last axis (inner == 1).
  const Tensor s4 = F32({4}, {1.0f, 0.5f, 0.25f, 2.0f});
  out = RunNode("QuantizeLinear", {x, s4}, {AttrInt("axis", 2)}, {.opset = 13});
  for (int64_t i = 0; i < 24; ++i) {
    CHECK(out[0].data<uint8_t>()[i] == RefQuant(x.data<float>()[i], s4.data<float>()[i % 4], 0, 0, 255));
  }
}

TEST_CASE("QuantizeLinear blocked with a partial last block, both axis positions") {
  // x [2, 5], blocks of 2 along axis 1 -> scale [2, 3].
  const Tensor x = RandomF32({2, 5}, 9, -4.0f, 4.0f);
  const Tensor s = F32({2, 3}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  const Tensor z = Q<int16_t>(DType::kInt16, {2, 3}, {0, 1, -1, 100, -100, 5});
  auto out = RunNode("QuantizeLinear", {x, s, z}, {AttrInt("axis", 1), AttrInt("block_size", 2)},
                     {.opset = 21});
  REQUIRE(out[0].dtype() == DType::kInt16);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < 5; ++c) {
      const int64_t p = r * 3 + c / 2;
      CHECK(out[0].data<int16_t>()[r * 5 + c] ==
            RefQuant(x.data<float>()[r * 5 + c], s.data<float>()[p], z.data<int16_t>()[p], -32768, 32767));
    }
  }
  // Blocks along axis 0 of [5, 2]: scale [3, 2], inner > 1.
  const Tensor x2 = RandomF32({5, 2}, 10, -4.0f, 4.0f);
  auto out2 = RunNode("QuantizeLinear", {x2, s.Reshaped({3, 2})}, {AttrInt("axis", 0), AttrInt("block_size", 2)},
                      {.opset = 21});
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < 2; ++c) {
      CHECK(out2[0].data<uint8_t>()[r * 2 + c] ==
            RefQuant(x2.data<float>()[r * 2 + c], s.data<float>()[(r / 2) * 2 + c], 0, 0, 255));
    }
  }
  auto back = RunNode("DequantizeLinear", {out[0], s, z}, {AttrInt("axis", 1), AttrInt("block_size", 2)},
                      {.opset = 21});
  for (int64_t i = 0; i < 10; ++i) {
    const int64_t p = (i / 5) * 3 + (i % 5) / 2;
    CHECK(back[0].data<float>()[i] ==
          static_cast<float>(out[0].data<int16_t>()[i] - z.data<int16_t>()[p]) * s.data<float>()[p]);
  }
  // Wrong blocked scale shape.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({2, 2}, {1, 1, 1, 1})},
                          {AttrInt("axis", 1), AttrInt("block_size", 2)}, {.opset = 21}),
                  Error);
}

TEST_CASE("QuantizeLinear to packed int4 / uint4 / int2 and DequantizeLinear back") {
  const Tensor x = F32({5}, {-9.0f, -1.0f, 0.0f, 3.0f, 20.0f});
  auto out = RunNode("QuantizeLinear", {x, F32({}, {1.0f}), Nibble(DType::kInt4, 0x01)},
                     {}, {.opset = 21});
  REQUIRE(out[0].dtype() == DType::kInt4);
  // Values: sat(-9+1)=-8, 0, 1, 4, 7 -> nibbles 8,0,1,4,7, low nibble first.
  const uint8_t* b = static_cast<const uint8_t*>(out[0].raw_data());
  CHECK(b[0] == 0x08);
  CHECK(b[1] == 0x41);
  CHECK(b[2] == 0x07);
  auto back = RunNode("DequantizeLinear", {out[0], F32({}, {0.5f}), Nibble(DType::kInt4, 0x01)},
                      {}, {.opset = 21});
  const std::vector<float> want = {-4.5f, -0.5f, 0.0f, 1.5f, 3.0f};
  for (int i = 0; i < 5; ++i) CHECK(back[0].data<float>()[i] == want[i]);
  // uint4 via output_dtype (no zero point).
  out = RunNode("QuantizeLinear", {x, F32({}, {1.0f})},
                {AttrInt("output_dtype", static_cast<int64_t>(DType::kUInt4))}, {.opset = 21});
  REQUIRE(out[0].dtype() == DType::kUInt4);
  b = static_cast<const uint8_t*>(out[0].raw_data());
  CHECK(b[0] == 0x00);
  CHECK(b[1] == 0x30);
  CHECK(b[2] == 0x0F);
  // int2 (opset 25).
  out = RunNode("QuantizeLinear", {x, F32({}, {1.0f})},
                {AttrInt("output_dtype", static_cast<int64_t>(DType::kInt2))}, {.opset = 25});
  REQUIRE(out[0].dtype() == DType::kInt2);
  b = static_cast<const uint8_t*>(out[0].raw_data());
  // -2, -1, 0, 1 | 1 -> 10 11 00 01 | 01
  CHECK(b[0] == (2 | (3 << 2) | (0 << 4) | (1 << 6)));
  CHECK(b[1] == 1);
  // int4 is not available before opset 21; int2 not before 25.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({}, {1.0f}), Nibble(DType::kInt4, 0)},
                          {}, {.opset = 19}),
                  Error);
}

TEST_CASE("QuantizeLinear uint16 / DequantizeLinear int32 and float16") {
  const Tensor x = F32({3}, {-1.0f, 1000.0f, 1e9f});
  auto out = RunNode("QuantizeLinear", {x, F32({}, {0.5f}), Q<uint16_t>(DType::kUInt16, {}, {30000})},
                     {}, {.opset = 21});
  CHECK(out[0].data<uint16_t>()[0] == 29998);
  CHECK(out[0].data<uint16_t>()[1] == 32000);
  CHECK(out[0].data<uint16_t>()[2] == 65535);
  auto dq = RunNode("DequantizeLinear", {I32({3}, {-5, 0, 1 << 20}), F32({}, {0.25f})}, {}, {.opset = 13});
  CHECK(dq[0].data<float>()[0] == -1.25f);
  CHECK(dq[0].data<float>()[2] == 262144.0f);
  // float16 scale -> float16 output.
  const uint16_t h = kernels::FloatToHalfBits(0.1f);
  auto dh = RunNode("DequantizeLinear", {Q<uint8_t>(DType::kUInt8, {2}, {10, 200}),
                                         Q<uint16_t>(DType::kFloat16, {}, {h})},
                    {}, {.opset = 19});
  REQUIRE(dh[0].dtype() == DType::kFloat16);
  const float sh = kernels::HalfBitsToFloat(h);
  CHECK(dh[0].data<uint16_t>()[1] == kernels::FloatToHalfBits(200.0f * sh));
  // output_dtype (23+) overrides the scale's type.
  auto df = RunNode("DequantizeLinear", {Q<uint8_t>(DType::kUInt8, {2}, {10, 200}),
                                         Q<uint16_t>(DType::kFloat16, {}, {h})},
                    {AttrInt("output_dtype", 1)}, {.opset = 23});
  REQUIRE(df[0].dtype() == DType::kFloat32);
  CHECK(df[0].data<float>()[1] == 200.0f * sh);
  // float16 scale: the division is done in float16 (the scale's type).
  auto qh = RunNode("QuantizeLinear", {F32({1}, {1000.3f}), Q<uint16_t>(DType::kFloat16, {}, {h})},
                    {}, {.opset = 21});
  const float xq = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(1000.3f));
  const float quot = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(xq / sh));
  CHECK(qh[0].data<uint8_t>()[0] == RefQuant(quot, 1.0f, 0, 0, 255));
}

TEST_CASE("QuantizeLinear / DequantizeLinear errors") {
  const Tensor x = RandomF32({2, 3}, 1);
  // Zero point shape differs from the scale's.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({3}, {1, 1, 1}), Q<uint8_t>(DType::kUInt8, {2}, {0, 0})},
                          {}, {.opset = 13}),
                  Error);
  // Per-axis scale of the wrong length.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({2}, {1, 1})}, {}, {.opset = 13}), Error);
  // Per-axis scale before opset 13.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({3}, {1, 1, 1})}, {}, {.opset = 10}), Error);
  // Axis out of range.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({3}, {1, 1, 1})}, {AttrInt("axis", 2)}, {.opset = 13}), Error);
  // Zero point dtype differs from x (DequantizeLinear).
  CHECK_THROWS_AS(RunNode("DequantizeLinear", {Q<uint8_t>(DType::kUInt8, {2}, {1, 2}), F32({}, {1}),
                                                Q<int8_t>(DType::kInt8, {}, {0})}),
                  Error);
  // output_dtype contradicting the zero point.
  CHECK_THROWS_AS(RunNode("QuantizeLinear", {x, F32({}, {1}), Q<int8_t>(DType::kInt8, {}, {0})},
                          {AttrInt("output_dtype", 2)}, {.opset = 21}),
                  Error);
  // float8e8m0 is not a quantized type: Unsupported (the other float8 / float4 types are tested
  // in quantize_float8_test.cc).
  try {
    RunNode("QuantizeLinear", {x, F32({}, {1})}, {AttrInt("output_dtype", 24)}, {.opset = 25});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
  }
}

TEST_CASE("DynamicQuantizeLinear") {
  const Tensor x = F32({5}, {-1.0f, 0.0f, 0.5f, 3.0f, 1.2f});
  auto out = RunNode("DynamicQuantizeLinear", {x}, {}, {.opset = 11, .num_outputs = 3});
  const float scale = (3.0f - -1.0f) / 255.0f;
  const int32_t zp = static_cast<int32_t>(std::nearbyint(0.0f - -1.0f / scale));
  CHECK(out[1].data<float>()[0] == scale);
  CHECK(out[2].data<uint8_t>()[0] == zp);
  for (int i = 0; i < 5; ++i) CHECK(out[0].data<uint8_t>()[i] == RefQuant(x.data<float>()[i], scale, zp, 0, 255));
  // Positive-only input: min widened to 0, zero point 0.
  out = RunNode("DynamicQuantizeLinear", {F32({2}, {2.0f, 4.0f})}, {}, {.opset = 11, .num_outputs = 3});
  CHECK(out[1].data<float>()[0] == 4.0f / 255.0f);
  CHECK(out[2].data<uint8_t>()[0] == 0);
  CHECK(out[0].data<uint8_t>()[1] == 255);
  // All zeros: scale 1, zero point 0, y 0 (defined as ONNX's reference does; no 0/0).
  out = RunNode("DynamicQuantizeLinear", {F32({3}, {0.0f, 0.0f, -0.0f})}, {}, {.opset = 11, .num_outputs = 3});
  CHECK(out[1].data<float>()[0] == 1.0f);
  CHECK(out[2].data<uint8_t>()[0] == 0);
  for (int i = 0; i < 3; ++i) CHECK(out[0].data<uint8_t>()[i] == 0);
}

TEST_CASE(
    "DynamicQuantizeLinear over many parallel chunks: the serial reference, any thread count") {
  // 100003 elements = 3 chunks of 32 K and a partial one; the extremes sit in different chunks,
  // the whole second chunk is NaN (it reports no range), and NaNs quantize to the zero point.
  const int64_t n = 100003;
  Tensor x = RandomF32({n}, 41, -2.0f, 3.0f);
  float* xv = x.data<float>();
  for (int64_t i = 32768; i < 65536; ++i) xv[i] = std::nanf("");
  xv[5] = -7.25f;    // min, first chunk
  xv[n - 2] = 9.5f;  // max, last chunk
  const float scale = (9.5f - -7.25f) / 255.0f;
  const int32_t zp = static_cast<int32_t>(std::nearbyint(0.0f - -7.25f / scale));
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    auto out = RunNode("DynamicQuantizeLinear", {x}, {},
                       {.opset = 11, .num_outputs = 3, .threads = threads});
    CHECK(out[1].data<float>()[0] == scale);
    CHECK(out[2].data<uint8_t>()[0] == zp);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t want = std::isnan(xv[i]) ? zp : RefQuant(xv[i], scale, zp, 0, 255);
      wrong += out[0].data<uint8_t>()[i] != want;
    }
    CHECK(wrong == 0);
  }
}

}  // namespace
}  // namespace simplecpp::testing
