// float16 / bfloat16 tests for graph/ops/indexing_math.cc: Det (computed in double, each
// determinant rounded once to 16 bits) and MaxUnpool (elements moved bit-exactly). The float32
// behaviour of these ops is tested in indexing_set_test.cc.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/error.h"
#include "tests/graph/ops/float16_compare.h"

namespace simplecpp::testing {
namespace {

// Tolerance (see float16_compare.h): |y16 - ref| <= eps16 * max(|ref|, min_normal16), with
// eps16 = 2^-10 (float16) or 2^-7 (bfloat16) and ref the float32 result rounded to 16 bits.

TEST_CASE("Det float16 / bfloat16") {
  f16::Check16Both("Det", {RandomF32({3, 4, 4}, 201, -2.0f, 2.0f)}, {}, f16::Opts(22));
  f16::Check16Both("Det", {RandomF32({2, 2, 1, 1}, 202)}, {}, f16::Opts(22));
  f16::Check16Both("Det", {F32({2, 2}, {1, 2, 2, 4})}, {}, f16::Opts(22));  // singular: 0
  f16::Check16(DType::kFloat16, "Det", {RandomF32({5, 5}, 203)}, {}, f16::Opts(11));
  // Exactly representable result: 1*4 - 2*3 = -2.
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor y = RunNode("Det", {f16::To16(F32({2, 2}, {1, 2, 3, 4}), dt)}, {},
                             f16::Opts(22))[0];
    REQUIRE(y.dtype() == dt);
    CHECK(f16::To32(y).data<float>()[0] == -2.0f);
  }
  // bfloat16 entered Det's type constraint in opset 22.
  CHECK_THROWS_AS(RunNode("Det", {f16::To16(F32({2, 2}, {1, 2, 3, 4}), DType::kBFloat16)}, {},
                          f16::Opts(11)),
                  Error);
}

TEST_CASE("MaxUnpool float16 / bfloat16") {
  // X [1, 2, 2, 2], kernel 2x2 stride 2: default output [1, 2, 4, 4] (32 positions).
  const Tensor x = RandomF32({1, 2, 2, 2}, 211, -3.0f, 3.0f);
  const Tensor ind = I64({1, 2, 2, 2}, {0, 3, 9, 14, 16, 18, 29, 31});
  const std::vector<graph::Attribute> attrs = {AttrInts("kernel_shape", {2, 2}),
                                               AttrInts("strides", {2, 2})};
  f16::Check16Both("MaxUnpool", {x, ind}, attrs, f16::Opts(22));
  f16::Check16(DType::kFloat16, "MaxUnpool", {x, ind}, attrs, f16::Opts(11));
  // With output_shape (larger than the default).
  f16::Check16Both("MaxUnpool", {x, ind, I64({4}, {1, 2, 5, 5})}, attrs, f16::Opts(22, {2}));
  // Values are moved bit-exactly.
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x16 = f16::To16(x, dt);
    const Tensor y = RunNode("MaxUnpool", {x16, ind}, attrs, f16::Opts(22))[0];
    REQUIRE(y.dtype() == dt);
    const std::vector<int64_t> pos = {0, 3, 9, 14, 16, 18, 29, 31};
    for (size_t i = 0; i < pos.size(); ++i) {
      CHECK(y.data<uint16_t>()[pos[i]] == x16.data<uint16_t>()[i]);
    }
  }
  CHECK_THROWS_AS(RunNode("MaxUnpool", {f16::To16(x, DType::kBFloat16), ind}, attrs,
                          f16::Opts(11)),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing
