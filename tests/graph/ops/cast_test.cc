// Tests for graph/ops/cast.cc (and kernels/float16/cast.h): every pair of dtypes on values exactly
// representable in both, against a double reference; float -> int truncation and saturation;
// int -> int wrap-around; float16 / bfloat16 / float8 specials and `saturate`; packed int4 / int2;
// string formatting and parsing; CastLike; Cast-1's string `to`.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"
#include "kernels/float16/cast.h"
#include "kernels/float16/float16.h"

namespace simplecpp {
namespace {

using tensor_test::ErrorCodeOf;
using testing::AttrInt;
using testing::AttrString;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

Tensor CastTo(const Tensor& x, DType to, int64_t saturate = 1, int64_t opset = 21) {
  RunNodeOptions o;
  o.opset = opset;
  std::vector<graph::Attribute> attrs = {AttrInt("to", static_cast<int64_t>(to))};
  if (opset >= 19) attrs.push_back(AttrInt("saturate", saturate));
  return RunNode("Cast", {x}, attrs, o)[0];
}

// Reads element i of a tensor of a numeric dtype as double (via a Cast kernel to float64).
double ValueAt(const Tensor& t, int64_t i) {
  const Tensor d = CastTo(t, DType::kFloat64);
  return d.data<double>()[i];
}

const std::vector<DType>& NumericDTypes() {
  static const std::vector<DType> kTypes = {
      DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
      DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,    DType::kUInt16,
      DType::kUInt32,  DType::kUInt64,  DType::kBool,    DType::kFloat8E4M3FN,
      DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ, DType::kInt4,
      DType::kUInt4,   DType::kInt2,    DType::kUInt2};
  return kTypes;
}

TEST_CASE("Cast: every dtype pair on values exact in both") {
  // Small integers (and 0 / 1 for bool, 0..1 for 2-bit): exact in every dtype.
  for (DType from : NumericDTypes()) {
    for (DType to : NumericDTypes()) {
      CAPTURE(DTypeName(from));
      CAPTURE(DTypeName(to));
      std::vector<double> values = {0, 1, 2, 3, 1, 0, 5, 7};
      auto fits = [](DType t, double v) {
        if (t == DType::kBool) return v == 0 || v == 1;
        if (t == DType::kInt2) return v <= 1;
        if (t == DType::kUInt2) return v <= 3;
        if (t == DType::kInt4) return v <= 7;
        return true;
      };
      std::vector<double> ok;
      for (double v : values) {
        if (fits(from, v) && fits(to, v)) ok.push_back(v);
      }
      // Build the input by casting a float32 tensor (exact for these values).
      std::vector<float> f(ok.begin(), ok.end());
      const Tensor x = CastTo(F32({static_cast<int64_t>(f.size())}, f), from);
      const Tensor y = CastTo(x, to);
      REQUIRE(y.dtype() == to);
      REQUIRE(y.num_elements() == static_cast<int64_t>(ok.size()));
      for (size_t i = 0; i < ok.size(); ++i) CHECK(ValueAt(y, static_cast<int64_t>(i)) == ok[i]);
    }
  }
}

TEST_CASE("Cast: float -> int truncates toward zero and saturates; NaN -> 0") {
  const Tensor x = F32({8}, {2.9f, -2.9f, 1e10f, -1e10f, INFINITY, -INFINITY, NAN, -0.5f});
  auto i8 = CastTo(x, DType::kInt8);
  CHECK(std::vector<int8_t>(i8.data<int8_t>(), i8.data<int8_t>() + 8) ==
        std::vector<int8_t>{2, -2, 127, -128, 127, -128, 0, 0});
  auto u8 = CastTo(x, DType::kUInt8);
  CHECK(std::vector<uint8_t>(u8.data<uint8_t>(), u8.data<uint8_t>() + 8) ==
        std::vector<uint8_t>{2, 0, 255, 0, 255, 0, 0, 0});
  auto i64 = CastTo(x, DType::kInt64);
  CHECK(i64.data<int64_t>()[2] == 10000000000LL);
  CHECK(i64.data<int64_t>()[4] == INT64_MAX);
  CHECK(i64.data<int64_t>()[5] == INT64_MIN);
  auto u64 = CastTo(F32({2}, {1.8446744e19f, 3e19f}), DType::kUInt64);
  CHECK(u64.data<uint64_t>()[0] == 18446744073709551615ull);  // 2^64 rounds up in float: saturates
  auto i32 = CastTo(Tensor::FromVector<double>(DType::kFloat64, {3}, {2147483647.9, -2147483648.9, 3e9}),
                    DType::kInt32);
  CHECK(std::vector<int32_t>(i32.data<int32_t>(), i32.data<int32_t>() + 3) ==
        std::vector<int32_t>{INT32_MAX, INT32_MIN, INT32_MAX});
  auto b = CastTo(F32({4}, {0.0f, -0.0f, 0.1f, NAN}), DType::kBool);
  CHECK(std::vector<uint8_t>(b.data<uint8_t>(), b.data<uint8_t>() + 4) == std::vector<uint8_t>{0, 0, 1, 1});
}

TEST_CASE("Cast: int -> int wraps, int64 -> float rounds once") {
  auto w = CastTo(I64({4}, {300, -129, 65536 + 5, -1}), DType::kInt8);
  CHECK(std::vector<int8_t>(w.data<int8_t>(), w.data<int8_t>() + 4) == std::vector<int8_t>{44, 127, 5, -1});
  auto u = CastTo(I32({1}, {-1}), DType::kUInt16);
  CHECK(u.data<uint16_t>()[0] == 65535);
  // 2^60 + 2^36 + 1: nearest float is 2^60 + 2^37 (above the tie); a detour through double would
  // land on the tie 2^60 + 2^36 and round to even (2^60).
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  auto f = CastTo(I64({1}, {v}), DType::kFloat32);
  CHECK(f.data<float>()[0] == std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37));
  auto bf = CastTo(I64({1}, {v}), DType::kBFloat16);
  CHECK(kernels::BFloat16BitsToFloat(bf.data<uint16_t>()[0]) == std::ldexp(1.0f, 60));
  auto bf2 = CastTo(I64({1}, {(int64_t{1} << 60) + (int64_t{1} << 52) + 1}), DType::kBFloat16);
  CHECK(kernels::BFloat16BitsToFloat(bf2.data<uint16_t>()[0]) == std::ldexp(1.0f, 60) + std::ldexp(1.0f, 53));
}

TEST_CASE("Cast: float16 / bfloat16 specials, float8 saturate") {
  const Tensor x = F32({6}, {INFINITY, -INFINITY, NAN, 1e6f, -0.0f, std::ldexp(1.0f, -24)});
  auto h = CastTo(x, DType::kFloat16);
  const uint16_t want[] = {0x7C00, 0xFC00, 0x7E00, 0x7C00, 0x8000, 0x0001};
  for (int i = 0; i < 6; ++i) CHECK(h.data<uint16_t>()[i] == want[i]);
  auto back = CastTo(h, DType::kFloat32);
  CHECK(std::isinf(back.data<float>()[0]));
  CHECK(std::isnan(back.data<float>()[2]));
  auto hd = CastTo(Tensor::FromVector<double>(DType::kFloat64, {1}, {65519.999999}), DType::kFloat16);
  CHECK(hd.data<uint16_t>()[0] == 0x7BFF);
  auto f8s = CastTo(F32({2}, {1000.0f, -INFINITY}), DType::kFloat8E4M3FN, 1);
  CHECK(f8s.data<uint8_t>()[0] == 0x7E);
  CHECK(f8s.data<uint8_t>()[1] == 0xFE);
  auto f8n = CastTo(F32({2}, {1000.0f, -INFINITY}), DType::kFloat8E4M3FN, 0);
  CHECK(f8n.data<uint8_t>()[0] == 0x7F);
  auto e5 = CastTo(F32({2}, {1e6f, -INFINITY}), DType::kFloat8E5M2, 0);
  CHECK(e5.data<uint8_t>()[0] == 0x7C);
  CHECK(e5.data<uint8_t>()[1] == 0xFC);
}

// float32 <-> float16 / bfloat16 Casts run the bulk SIMD conversions: the scalar conversions'
// bits on every float32 pattern class (random bits: NaN payloads, subnormals, overflow, ties)
// and on every 16-bit pattern, at a length with a tail.
TEST_CASE("Cast: float32 <-> float16 / bfloat16 equal the scalar conversions bit for bit") {
  std::mt19937 rng(99);
  const int64_t n = 100003;
  Tensor x(DType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t bits = rng();
    std::memcpy(&x.data<float>()[i], &bits, 4);
  }
  const Tensor h = CastTo(x, DType::kFloat16), b = CastTo(x, DType::kBFloat16);
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x.data<float>()[i];
    bad += h.data<uint16_t>()[i] != kernels::FloatToHalfBits(v);
    bad += b.data<uint16_t>()[i] != kernels::FloatToBFloat16Bits(v);
  }
  CHECK(bad == 0);
  for (const DType dt : {DType::kFloat16, DType::kBFloat16}) {
    Tensor bits(dt, {65537});  // every pattern, then one more: a tail past whole vectors
    for (int64_t i = 0; i < 65537; ++i) bits.data<uint16_t>()[i] = static_cast<uint16_t>(i);
    const Tensor f = CastTo(bits, DType::kFloat32);
    int wrong = 0;
    for (int64_t i = 0; i < 65537; ++i) {
      const uint16_t u = bits.data<uint16_t>()[i];
      const float want = dt == DType::kFloat16 ? kernels::HalfBitsToFloat(u)
                                               : kernels::BFloat16BitsToFloat(u);
      wrong += std::memcmp(&f.data<float>()[i], &want, 4) != 0;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("Cast: packed int4 / uint4 / int2 wrap, odd element counts") {
  auto i4 = CastTo(F32({5}, {-9, -8, 7, 8, 1}), DType::kInt4);
  REQUIRE(i4.byte_size() == 3);
  CHECK(i4.data<uint8_t>()[0] == 0x87);
  CHECK(i4.data<uint8_t>()[1] == 0x87);
  CHECK(i4.data<uint8_t>()[2] == 0x01);  // padding nibble is zero
  auto back = CastTo(i4, DType::kInt32);
  CHECK(std::vector<int32_t>(back.data<int32_t>(), back.data<int32_t>() + 5) ==
        std::vector<int32_t>{7, -8, 7, -8, 1});
  auto u2 = CastTo(I32({3}, {5, -1, 2}), DType::kUInt2);
  CHECK(u2.data<uint8_t>()[0] == (1 | (3 << 2) | (2 << 4)));
}

TEST_CASE("Cast: strings") {
  Tensor s(DType::kString, {9});
  s.strings() = {"3.5", " -2 ", "1e-5", "INF", "-inf", "NaN", "+INF", "100.5", "1E8"};
  auto f = CastTo(s, DType::kFloat32);
  CHECK(f.data<float>()[0] == 3.5f);
  CHECK(f.data<float>()[1] == -2.0f);
  CHECK(f.data<float>()[2] == 1e-5f);
  CHECK(f.data<float>()[3] == INFINITY);
  CHECK(f.data<float>()[4] == -INFINITY);
  CHECK(std::isnan(f.data<float>()[5]));
  CHECK(f.data<float>()[6] == INFINITY);
  CHECK(f.data<float>()[8] == 1e8f);
  Tensor si(DType::kString, {3});
  si.strings() = {"100.5", "-9223372036854775808", "18446744073709551615"};
  auto i = CastTo(si, DType::kInt64);
  CHECK(i.data<int64_t>()[0] == 100);
  CHECK(i.data<int64_t>()[1] == INT64_MIN);
  auto u = CastTo(si, DType::kUInt64);
  CHECK(u.data<uint64_t>()[2] == 18446744073709551615ull);
  Tensor bad(DType::kString, {2});
  bad.strings() = {"1", "hello"};
  CHECK(ErrorCodeOf([&] { CastTo(bad, DType::kFloat32); }) == static_cast<int>(ErrorCode::kRuntime));

  auto t = CastTo(F32({5}, {0.1f, -2.0f, 1e20f, INFINITY, NAN}), DType::kString);
  CHECK(t.strings() == std::vector<std::string>{"0.1", "-2", "1e+20", "INF", "NaN"});
  auto ti = CastTo(I64({2}, {-5, 123456789012345}), DType::kString);
  CHECK(ti.strings() == std::vector<std::string>{"-5", "123456789012345"});
  auto td = CastTo(Tensor::FromVector<double>(DType::kFloat64, {1}, {0.1}), DType::kString);
  CHECK(td.strings()[0] == "0.1");
  // Round trip of the shortest representation.
  const Tensor r = F32({4}, {3.14159274f, 1.0f / 3.0f, 1e-40f, 123456.789f});
  auto rt = CastTo(CastTo(r, DType::kString), DType::kFloat32);
  CHECK(rt.BitwiseEquals(r));
}

TEST_CASE("Cast: same type, Cast-1 string `to`, CastLike, unsupported") {
  const Tensor x = F32({3}, {1, 2, 3});
  CHECK(CastTo(x, DType::kFloat32).BitwiseEquals(x));
  RunNodeOptions o1;
  o1.opset = 1;
  auto d = RunNode("Cast", {x}, {AttrString("to", "DOUBLE")}, o1)[0];
  CHECK(d.dtype() == DType::kFloat64);
  CHECK(d.data<double>()[2] == 3.0);
  RunNodeOptions o15;
  o15.opset = 15;
  auto like = RunNode("CastLike", {x, I32({0}, {})}, {}, o15)[0];
  CHECK(like.dtype() == DType::kInt32);
  CHECK(like.data<int32_t>()[1] == 2);
  auto like8 = RunNode("CastLike", {F32({1}, {1000.0f}), CastTo(F32({1}, {0}), DType::kFloat8E4M3FN)},
                       {AttrInt("saturate", 0)}, RunNodeOptions{})[0];
  CHECK(like8.data<uint8_t>()[0] == 0x7F);
  CHECK(ErrorCodeOf([&] { CastTo(x, DType::kComplex64); }) == static_cast<int>(ErrorCode::kUnsupported));
  CHECK(ErrorCodeOf([&] { RunNode("Cast", {x}, {AttrInt("to", 99)}); }) != 0);
  // Large input: split into parallel chunks.
  std::vector<float> big(100003);
  for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<float>(k % 251) - 125.0f;
  RunNodeOptions threads;
  threads.threads = 3;
  threads.opset = 21;
  auto y = RunNode("Cast", {F32({100003}, big)}, {AttrInt("to", static_cast<int64_t>(DType::kInt4))}, threads)[0];
  auto z = CastTo(y, DType::kFloat32);
  for (size_t k = 0; k < big.size(); k += 997) {
    const int v = static_cast<int>(big[k]);
    const int wrapped = ((v % 16) + 16 + 8) % 16 - 8;
    CHECK(z.data<float>()[k] == static_cast<float>(wrapped));
  }
}

}  // namespace
}  // namespace simplecpp
