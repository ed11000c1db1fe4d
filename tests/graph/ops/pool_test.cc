// Tests for graph/ops/pool.cc through the executor: the ONNX documentation examples for MaxPool
// (pads, strides, SAME_UPPER, ceil_mode, Indices with both storage orders), AveragePool
// (count_include_pad, ceil_mode, dilations), LpPool, the global pools, and attribute / shape
// errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "graph/op_test_util.h"
#include "tests/graph/ops/float16_compare.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

// Options without designated initializers (which warn under -Wextra).
RunNodeOptions Opts(int64_t opset, int num_outputs = 1, std::vector<int> constants = {}) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  o.constant_inputs = std::move(constants);
  return o;
}

Tensor Iota(Dims dims, float start = 1.0f) {
  const int64_t n = CheckedNumElements(dims);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return F32(std::move(dims), v);
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

void CheckValues(const Tensor& t, Dims dims, const std::vector<float>& want, float tol = 1e-5f) {
  REQUIRE(t.dims() == dims);
  const auto got = Values(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
  }
}

TEST_CASE("MaxPool documentation examples") {
  const Tensor x = Iota({1, 1, 5, 5});
  auto out = RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {5, 5}), AttrInts("pads", {2, 2, 2, 2})});
  CheckValues(out[0], {1, 1, 5, 5},
              {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25,
               23, 24, 25, 25, 25});
  out = RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  CheckValues(out[0], {1, 1, 2, 2}, {7, 9, 17, 19});
  out = RunNode("MaxPool", {x},
                {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                 AttrString("auto_pad", "SAME_UPPER")});
  CheckValues(out[0], {1, 1, 3, 3}, {7, 9, 10, 17, 19, 20, 22, 24, 25});
  // SAME_LOWER puts the extra padding first.
  out = RunNode("MaxPool", {Iota({1, 1, 4})},
                {AttrInts("kernel_shape", {2}), AttrString("auto_pad", "SAME_LOWER")});
  CheckValues(out[0], {1, 1, 4}, {1, 2, 3, 4});
  out = RunNode("MaxPool", {Iota({1, 1, 4})},
                {AttrInts("kernel_shape", {2}), AttrString("auto_pad", "SAME_UPPER")});
  CheckValues(out[0], {1, 1, 4}, {2, 3, 4, 4});
}

TEST_CASE("MaxPool ceil_mode") {
  auto out = RunNode("MaxPool", {Iota({1, 1, 4, 4})},
                     {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                      AttrInt("ceil_mode", 1)});
  CheckValues(out[0], {1, 1, 2, 2}, {11, 12, 15, 16});
  // The last window would start past the input: dropped.
  out = RunNode("MaxPool", {Iota({1, 1, 2, 2})},
                {AttrInts("kernel_shape", {1, 1}), AttrInts("strides", {2, 2}),
                 AttrInt("ceil_mode", 1)});
  CheckValues(out[0], {1, 1, 1, 1}, {1});
}

TEST_CASE("MaxPool Indices output") {
  const Tensor x = Iota({1, 1, 5, 5});
  RunNodeOptions two;
  two.num_outputs = 2;
  auto out = RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {5, 5}), AttrInts("pads", {2, 2, 2, 2})},
                     two);
  REQUIRE(out.size() == 2);
  REQUIRE(out[1].dtype() == DType::kInt64);
  const std::vector<int64_t> want = {12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24, 24, 24,
                                     22, 23, 24, 24, 24, 22, 23, 24, 24, 24};
  CHECK(std::vector<int64_t>(out[1].data<int64_t>(), out[1].data<int64_t>() + 25) == want);
  // storage_order = 1: column-major index h + w * H.
  out = RunNode("MaxPool", {x},
                {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2}),
                 AttrInt("storage_order", 1)},
                two);
  CheckValues(out[0], {1, 1, 2, 2}, {7, 9, 17, 19});
  CHECK(std::vector<int64_t>(out[1].data<int64_t>(), out[1].data<int64_t>() + 4) ==
        std::vector<int64_t>{1 + 1 * 5, 1 + 3 * 5, 3 + 1 * 5, 3 + 3 * 5});
  // The plane offset is part of the index.
  out = RunNode("MaxPool", {Iota({1, 2, 2, 2})}, {AttrInts("kernel_shape", {2, 2})}, two);
  CHECK(std::vector<int64_t>(out[1].data<int64_t>(), out[1].data<int64_t>() + 2) ==
        std::vector<int64_t>{3, 7});
}

TEST_CASE("MaxPool int8 / uint8 / double") {
  Tensor xu(DType::kUInt8, {1, 1, 3, 3});
  for (int i = 0; i < 9; ++i) xu.data<uint8_t>()[i] = static_cast<uint8_t>(250 - i * 20);
  auto out = RunNode("MaxPool", {xu}, {AttrInts("kernel_shape", {2, 2})}, Opts(12));
  REQUIRE(out[0].dtype() == DType::kUInt8);
  CHECK(out[0].data<uint8_t>()[0] == 250);
  CHECK(out[0].data<uint8_t>()[3] == 250 - 4 * 20);
  Tensor xi(DType::kInt8, {1, 1, 3});
  xi.data<int8_t>()[0] = -128;
  xi.data<int8_t>()[1] = -100;
  xi.data<int8_t>()[2] = -128;
  out = RunNode("MaxPool", {xi}, {AttrInts("kernel_shape", {2})});
  CHECK(out[0].data<int8_t>()[0] == -100);
  CHECK(out[0].data<int8_t>()[1] == -100);
  // int8 is not a MaxPool type before opset 12.
  CHECK_THROWS_AS(RunNode("MaxPool", {xi}, {AttrInts("kernel_shape", {2})}, Opts(11)), Error);
  Tensor xd(DType::kFloat64, {1, 1, 4});
  for (int i = 0; i < 4; ++i) xd.data<double>()[i] = i * 0.5;
  out = RunNode("MaxPool", {xd}, {AttrInts("kernel_shape", {2}), AttrInts("strides", {2})});
  CHECK(out[0].data<double>()[0] == 0.5);
  CHECK(out[0].data<double>()[1] == 1.5);
}

TEST_CASE("AveragePool documentation examples") {
  const Tensor x = Iota({1, 1, 5, 5});
  auto out = RunNode("AveragePool", {x}, {AttrInts("kernel_shape", {5, 5}), AttrInts("pads", {2, 2, 2, 2})});
  CheckValues(out[0], {1, 1, 5, 5},
              {7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 12.5, 13, 13.5, 14, 14.5, 15, 15.5,
               16, 16.5, 17, 17.5, 18, 18.5, 19});
  out = RunNode("AveragePool", {x},
                {AttrInts("kernel_shape", {5, 5}), AttrInts("pads", {2, 2, 2, 2}),
                 AttrInt("count_include_pad", 1)});
  CheckValues(out[0], {1, 1, 5, 5},
              {2.52f, 3.6f, 4.8f, 4.08f, 3.24f, 4.56f, 6.4f, 8.4f, 7.04f, 5.52f, 7.2f, 10, 13,
               10.8f, 8.4f, 6.96f, 9.6f, 12.4f, 10.24f, 7.92f, 6.12f, 8.4f, 10.8f, 8.88f, 6.84f});
  out = RunNode("AveragePool", {x},
                {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                 AttrString("auto_pad", "SAME_UPPER")});
  CheckValues(out[0], {1, 1, 3, 3}, {4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22});
  out = RunNode("AveragePool", {Iota({1, 1, 4, 4})},
                {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                 AttrInt("ceil_mode", 1)});
  CheckValues(out[0], {1, 1, 2, 2}, {6, 7.5, 12, 13.5});
  // Dilations (opset 19): kernel 2, dilation 2 on a 4x4 input.
  out = RunNode("AveragePool", {Iota({1, 1, 4, 4})},
                {AttrInts("kernel_shape", {2, 2}), AttrInts("dilations", {2, 2})}, Opts(19));
  CheckValues(out[0], {1, 1, 2, 2}, {6, 7, 10, 11});
}

TEST_CASE("AveragePool ceil_mode: last window starts in the begin padding or input only") {
  // in 3, kernel 2, stride 2, pads 1/1, ceil: (3+2-2)/2 ceil -> 3 windows, but the 3rd would start
  // at 4 - 1 = 3 >= in: dropped -> 2 outputs. Windows: [-1, 0] and [1, 2].
  auto out = RunNode("AveragePool", {Iota({1, 1, 3})},
                     {AttrInts("kernel_shape", {2}), AttrInts("strides", {2}), AttrInts("pads", {1, 1}),
                      AttrInt("ceil_mode", 1)});
  CheckValues(out[0], {1, 1, 2}, {1, 2.5});
  out = RunNode("AveragePool", {Iota({1, 1, 3})},
                {AttrInts("kernel_shape", {2}), AttrInts("strides", {2}), AttrInts("pads", {1, 1}),
                 AttrInt("ceil_mode", 1), AttrInt("count_include_pad", 1)});
  CheckValues(out[0], {1, 1, 2}, {0.5, 2.5});
  // in 4, kernel 3, stride 2, pads 0/1, ceil: windows [0,2], [2,4]: the second covers the end pad
  // (counted with count_include_pad) - and a window past the end padding never counts it.
  out = RunNode("AveragePool", {Iota({1, 1, 4})},
                {AttrInts("kernel_shape", {3}), AttrInts("strides", {2}), AttrInts("pads", {0, 1}),
                 AttrInt("ceil_mode", 1), AttrInt("count_include_pad", 1)});
  CheckValues(out[0], {1, 1, 2}, {2, 7.0f / 3.0f});
  out = RunNode("AveragePool", {Iota({1, 1, 5})},
                {AttrInts("kernel_shape", {3}), AttrInts("strides", {3}), AttrInt("ceil_mode", 1),
                 AttrInt("count_include_pad", 1)});
  CheckValues(out[0], {1, 1, 2}, {2, 4.5});
}

TEST_CASE("LpPool and global pools") {
  const Tensor x = F32({1, 2, 2, 2}, {3, 4, 0, 0, 1, -1, 1, -1});
  auto out = RunNode("LpPool", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInt("p", 2)});
  CheckValues(out[0], {1, 2, 1, 1}, {5, 2});
  out = RunNode("GlobalLpPool", {x}, {AttrInt("p", 1)});
  CheckValues(out[0], {1, 2, 1, 1}, {7, 4});
  out = RunNode("GlobalAveragePool", {x});
  CheckValues(out[0], {1, 2, 1, 1}, {1.75f, 0});
  out = RunNode("GlobalMaxPool", {x});
  CheckValues(out[0], {1, 2, 1, 1}, {4, 1});
  out = RunNode("GlobalAveragePool", {RandomF32({2, 3, 5, 6, 7}, 3)});
  CHECK(out[0].dims() == Dims{2, 3, 1, 1, 1});
}

TEST_CASE("Pool attribute and shape errors") {
  const Tensor x = Iota({1, 1, 5, 5});
  // X rank does not match kernel_shape.
  CHECK_THROWS_AS(RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {2})}), Error);
  CHECK_THROWS_AS(RunNode("MaxPool", {Iota({5, 5})}, {AttrInts("kernel_shape", {2, 2})}), Error);
  // Missing / bad kernel_shape.
  CHECK_THROWS_AS(RunNode("MaxPool", {x}), Error);
  CHECK_THROWS_AS(RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {0, 2})}), Error);
  CHECK_THROWS_AS(RunNode("AveragePool", {x}, {AttrInts("kernel_shape", {6, 6})}), Error);
  // Wrong attribute lengths / values.
  CHECK_THROWS_AS(
      RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {1})}), Error);
  CHECK_THROWS_AS(
      RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {0, 1})}), Error);
  CHECK_THROWS_AS(
      RunNode("MaxPool", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("pads", {1, 1})}), Error);
  CHECK_THROWS_AS(RunNode("MaxPool", {x},
                          {AttrInts("kernel_shape", {2, 2}), AttrString("auto_pad", "FOO")}),
                  Error);
  CHECK_THROWS_AS(RunNode("MaxPool", {x},
                          {AttrInts("kernel_shape", {2, 2}), AttrInt("storage_order", 2)}),
                  Error);
  // Pads as large as the kernel.
  CHECK_THROWS_AS(RunNode("MaxPool", {x},
                          {AttrInts("kernel_shape", {2, 2}), AttrInts("pads", {2, 0, 0, 0})}),
                  Error);
  // Four spatial dims.
  CHECK_THROWS_AS(RunNode("MaxPool", {Iota({1, 1, 2, 2, 2, 2})},
                          {AttrInts("kernel_shape", {1, 1, 1, 1})}),
                  Error);
  // Integer AveragePool.
  CHECK_THROWS_AS(RunNode("AveragePool", {I32({1, 1, 2}, {1, 2})}, {AttrInts("kernel_shape", {2})}),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing

namespace simplecpp::testing {
namespace {

TEST_CASE("Pool ops give bit-identical results for any thread count") {
  const Tensor x = RandomF32({2, 5, 33, 29}, 41, -5.0f, 5.0f);
  const std::vector<graph::Attribute> attrs = {AttrInts("kernel_shape", {3, 3}),
                                               AttrInts("strides", {2, 1}),
                                               AttrInts("pads", {1, 1, 1, 1})};
  RunNodeOptions many;
  many.threads = 3;
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) {
    CAPTURE(op);
    const auto a = RunNode(op, {x}, attrs);
    const auto c = RunNode(op, {x}, attrs, many);
    CHECK(a[0].BitwiseEquals(c[0]));
  }
}

// float16 / bfloat16: the 16-bit output is the float32 result on the widened input rounded once;
// tolerance (tests/graph/ops/float16_compare.h): |y16 - ref| <= eps16 * max(|ref|, min_normal16),
// eps16 = 2^-10 (float16) or 2^-7 (bfloat16).
TEST_CASE("LpPool and GlobalLpPool float16 / bfloat16") {
  const Tensor x = RandomF32({2, 3, 6, 5}, 401, -2.0f, 2.0f);
  f16::Check16Both("LpPool", {x}, {AttrInts("kernel_shape", {2, 3})}, f16::Opts(22));
  f16::Check16Both("LpPool", {x},
                   {AttrInts("kernel_shape", {3, 3}), AttrInt("p", 3), AttrInts("strides", {2, 2}),
                    AttrInts("pads", {1, 1, 1, 1})},
                   f16::Opts(22));
  f16::Check16Both("GlobalLpPool", {x}, {}, f16::Opts(22));
  f16::Check16Both("GlobalLpPool", {x}, {AttrInt("p", 1)}, f16::Opts(22));
}

}  // namespace
}  // namespace simplecpp::testing
