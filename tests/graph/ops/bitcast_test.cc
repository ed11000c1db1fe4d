// Tests for graph/ops/bitcast.cc: BitCast (bit patterns kept, widths checked) and TensorScatter
// (linear / circular KV-cache updates against a scalar reference, index errors).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"

namespace simplecpp {
namespace {

using tensor_test::ErrorCodeOf;
using tensor_test::ErrorMessageOf;
using testing::AttrInt;
using testing::AttrString;
using testing::F32;
using testing::I64;
using testing::RandomF32;
using testing::RunNode;
using testing::RunNodeOptions;

RunNodeOptions Opts(int64_t opset) {
  RunNodeOptions o;
  o.opset = opset;
  return o;
}

TEST_CASE("BitCast: keeps the bytes, changes the dtype") {
  const Tensor x = F32({2, 2}, {1.0f, -2.5f, 0.0f, 3.0e38f});
  const Tensor y = RunNode("BitCast", {x}, {AttrInt("to", static_cast<int>(DType::kInt32))}, Opts(26))[0];
  REQUIRE(y.dtype() == DType::kInt32);
  CHECK(y.dims() == Dims{2, 2});
  CHECK(std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()) == 0);
  CHECK(y.data<int32_t>()[0] == 0x3F800000);
  // Round trip back to float32, a scalar, an empty tensor.
  const Tensor back = RunNode("BitCast", {y}, {AttrInt("to", 1)}, Opts(26))[0];
  CHECK(back.BitwiseEquals(x));
  const Tensor s = RunNode("BitCast", {F32({}, {1.0f})}, {AttrInt("to", 12)}, Opts(26))[0];
  CHECK(s.dims() == Dims{});
  CHECK(s.data<uint32_t>()[0] == 0x3F800000u);
  CHECK(RunNode("BitCast", {F32({0, 3}, {})}, {AttrInt("to", 6)}, Opts(26))[0].dims() == Dims{0, 3});
  // Other widths: bool -> uint8, int16 -> float16, int64 -> double, int4 -> uint4 (packed).
  Tensor b(DType::kBool, {3});
  b.data<bool>()[1] = true;
  const Tensor u8 = RunNode("BitCast", {b}, {AttrInt("to", 2)}, Opts(26))[0];
  CHECK(u8.data<uint8_t>()[0] == 0);
  CHECK(u8.data<uint8_t>()[1] == 1);
  Tensor i16(DType::kInt16, {1});
  i16.data<int16_t>()[0] = 0x3C00;
  CHECK(RunNode("BitCast", {i16}, {AttrInt("to", 10)}, Opts(26))[0].data<uint16_t>()[0] == 0x3C00);
  Tensor i4(DType::kInt4, {3});
  static_cast<uint8_t*>(i4.raw_data())[0] = 0x9F;
  static_cast<uint8_t*>(i4.raw_data())[1] = 0x07;
  const Tensor u4 = RunNode("BitCast", {i4}, {AttrInt("to", 21)}, Opts(26))[0];
  CHECK(u4.dtype() == DType::kUInt4);
  CHECK(std::memcmp(u4.raw_data(), i4.raw_data(), i4.byte_size()) == 0);
}

TEST_CASE("BitCast: width mismatch, strings and unknown types are rejected") {
  const Tensor x = F32({2}, {1, 2});
  CHECK(ErrorCodeOf([&] { RunNode("BitCast", {x}, {AttrInt("to", 7)}, Opts(26)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("BitCast", {x}, {AttrInt("to", 8)}, Opts(26)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("BitCast", {x}, {AttrInt("to", 99)}, Opts(26)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("BitCast", {x}, {}, Opts(26)); }) != 0);
  Tensor s(DType::kString, {1});
  CHECK(ErrorCodeOf([&] { RunNode("BitCast", {s}, {AttrInt("to", 7)}, Opts(26)); }) != 0);
  CHECK(ErrorMessageOf([&] { RunNode("BitCast", {x}, {AttrInt("to", 7)}, Opts(26)); })
            .find("bit width") != std::string::npos);
}

// present[p, pos, i] = update[p, s, i] with p over dims before axis, pos = w[p0] + s (mod max).
std::vector<float> ScatterRef(const std::vector<float>& past, const std::vector<float>& upd,
                              const Dims& pd, int64_t axis, int64_t seq,
                              const std::vector<int64_t>& w, bool circular) {
  std::vector<float> out = past;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= pd[i];
  for (size_t i = axis + 1; i < pd.size(); ++i) inner *= pd[i];
  const int64_t max_seq = pd[axis];
  const int64_t per_batch = outer / pd[0];
  for (int64_t p = 0; p < outer; ++p) {
    for (int64_t s = 0; s < seq; ++s) {
      int64_t pos = (w.empty() ? 0 : w[p / per_batch]) + s;
      if (circular) pos %= max_seq;
      for (int64_t i = 0; i < inner; ++i) {
        out[(p * max_seq + pos) * inner + i] = upd[(p * seq + s) * inner + i];
      }
    }
  }
  return out;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("TensorScatter: linear and circular, axes, default write_indices") {
  struct Case {
    Dims past;
    int64_t axis;  // normalized
    int64_t seq;
    std::vector<int64_t> w;  // empty: input omitted
    bool circular;
    bool set_axis;
  };
  const std::vector<Case> cases = {
      {{2, 1, 4, 5}, 2, 1, {1, 3}, false, false},
      {{3, 4, 5}, 1, 2, {0, 1, 2}, false, false},
      {{2, 1, 4, 5}, 2, 2, {3, 1}, true, false},
      {{2, 6, 3}, 1, 3, {}, false, true},
      {{2, 6, 3, 2}, 1, 4, {5, 4}, true, true},
      {{2, 3, 5}, 2, 5, {0, 0}, false, true},  // full overwrite
      {{2, 3, 5}, 2, 0, {4, 1}, false, true},  // empty update
  };
  for (const Case& c : cases) {
    CAPTURE(DimsToString(c.past));
    CAPTURE(c.circular);
    Dims ud = c.past;
    ud[c.axis] = c.seq;
    const Tensor past = RandomF32(c.past, 1);
    const Tensor upd = RandomF32(ud, 2);
    std::vector<Tensor> inputs = {past, upd};
    if (!c.w.empty()) inputs.push_back(I64({c.past[0]}, c.w));
    std::vector<graph::Attribute> attrs;
    if (c.circular) attrs.push_back(AttrString("mode", "circular"));
    if (c.set_axis) attrs.push_back(AttrInt("axis", c.axis - static_cast<int64_t>(c.past.size())));
    const Tensor y = RunNode("TensorScatter", inputs, attrs, Opts(24))[0];
    CHECK(y.dims() == c.past);
    CHECK(Values(y) == ScatterRef(Values(past), Values(upd), c.past, c.axis, c.seq, c.w, c.circular));
  }
}

TEST_CASE("TensorScatter: index and shape errors") {
  const Tensor past = RandomF32({2, 4, 3}, 1);
  const Tensor upd = RandomF32({2, 2, 3}, 2);
  const auto linear = [&](std::vector<int64_t> w) {
    RunNode("TensorScatter", {past, upd, I64({2}, w)}, {AttrInt("axis", 1)}, Opts(24));
  };
  CHECK(ErrorCodeOf([&] { linear({0, 3}); }) == static_cast<int>(ErrorCode::kRuntime));
  CHECK(ErrorMessageOf([&] { linear({0, 3}); }).find("TensorScatter") != std::string::npos);
  CHECK(ErrorCodeOf([&] { linear({-1, 0}); }) == static_cast<int>(ErrorCode::kRuntime));
  CHECK(ErrorCodeOf([&] { linear({INT64_MAX, 0}); }) == static_cast<int>(ErrorCode::kRuntime));
  CHECK(ErrorCodeOf([&] { linear({2, 0}); }) == 0);
  // Circular accepts any index, including huge and negative ones.
  const Tensor y = RunNode("TensorScatter", {past, upd, I64({2}, {INT64_MAX, -1})},
                           {AttrInt("axis", 1), AttrString("mode", "circular")}, Opts(24))[0];
  const int64_t m = 4;
  const std::vector<int64_t> norm = {INT64_MAX % m, 3};
  CHECK(Values(y) == ScatterRef(Values(past), Values(upd), {2, 4, 3}, 1, 2, norm, true));
  // Shapes.
  CHECK(ErrorCodeOf([&] {
          RunNode("TensorScatter", {past, RandomF32({2, 5, 3}, 2)}, {AttrInt("axis", 1)}, Opts(24));
        }) != 0);
  CHECK(ErrorCodeOf([&] {
          RunNode("TensorScatter", {past, RandomF32({2, 2, 4}, 2)}, {AttrInt("axis", 1)}, Opts(24));
        }) != 0);
  CHECK(ErrorCodeOf([&] {
          RunNode("TensorScatter", {past, upd, I64({3}, {0, 0, 0})}, {AttrInt("axis", 1)}, Opts(24));
        }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("TensorScatter", {past, upd}, {AttrInt("axis", 0)}, Opts(24)); }) != 0);
  CHECK(ErrorCodeOf([&] {
          RunNode("TensorScatter", {past, upd}, {AttrString("mode", "ring")}, Opts(24));
        }) != 0);
}

}  // namespace
}  // namespace simplecpp
