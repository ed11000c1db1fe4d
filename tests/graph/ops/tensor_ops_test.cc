// Tests for graph/ops/tensor_shape.cc: Transpose, Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Shape, Size — every dtype size and strings, odd and empty shapes, negative axes,
// each opset form (attributes vs inputs), and the error cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"

namespace simplecpp {
namespace {

using tensor_test::CheckSame;
using tensor_test::ErrorCodeOf;
using tensor_test::MapRef;
using tensor_test::MovableDTypes;
using tensor_test::Pattern;
using tensor_test::Ravel;
using testing::AttrInt;
using testing::AttrInts;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

constexpr int kInvalidArgument = static_cast<int>(ErrorCode::kInvalidArgument);
constexpr int kInvalidModel = static_cast<int>(ErrorCode::kInvalidModel);

Tensor TransposeRef(const Tensor& in, const std::vector<int64_t>& perm) {
  Dims out(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) out[k] = in.dim(perm[k]);
  return MapRef(in, out, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = idx[k];
    return Ravel(src, in.dims());
  });
}

TEST_CASE("Transpose: all permutations, every dtype size, strings, empty") {
  for (DType dt : MovableDTypes()) {
    for (const Dims& dims : {Dims{2, 3, 5}, Dims{1, 4, 1}, Dims{3, 0, 2}, Dims{7, 9}, Dims{5}}) {
      std::vector<int64_t> perm(dims.size());
      std::iota(perm.begin(), perm.end(), 0);
      const Tensor x = Pattern(dt, dims);
      do {
        auto out = RunNode("Transpose", {x}, {AttrInts("perm", perm)});
        CheckSame(out[0], TransposeRef(x, perm));
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
  // Default: reverse the axes. Also opset 1 and 13 registrations.
  const Tensor x = Pattern(DType::kFloat32, {2, 3, 4});
  for (int64_t opset : {1, 13, 21}) {
    RunNodeOptions o;
    o.opset = opset;
    CheckSame(RunNode("Transpose", {x}, {}, o)[0], TransposeRef(x, {2, 1, 0}));
  }
  // Large enough for several tiles and threads.
  const Tensor big = Pattern(DType::kFloat32, {3, 70, 50});
  RunNodeOptions threads;
  threads.threads = 3;
  CheckSame(RunNode("Transpose", {big}, {AttrInts("perm", {0, 2, 1})}, threads)[0],
            TransposeRef(big, {0, 2, 1}));
}

TEST_CASE("Transpose: bad perm") {
  const Tensor x = Pattern(DType::kFloat32, {2, 3});
  CHECK(ErrorCodeOf([&] { RunNode("Transpose", {x}, {AttrInts("perm", {0, 0})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Transpose", {x}, {AttrInts("perm", {0})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Transpose", {x}, {AttrInts("perm", {0, 2})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Transpose", {x}, {AttrInts("perm", {-1, 0})}); }) == kInvalidArgument);
}

Dims RunReshape(const Dims& in, const std::vector<int64_t>& shape, int64_t allowzero = 0,
                bool constant = false) {
  const Tensor x = Pattern(DType::kFloat32, in);
  RunNodeOptions o;
  o.opset = 14;
  if (constant) o.constant_inputs = {1};
  auto out = RunNode("Reshape", {x, I64({static_cast<int64_t>(shape.size())}, shape)},
                     {AttrInt("allowzero", allowzero)}, o);
  // The data is unchanged (same buffer order).
  CHECK(std::memcmp(out[0].raw_data(), x.raw_data(), x.byte_size()) == 0);
  return out[0].dims();
}

TEST_CASE("Reshape: 0, -1, allowzero, empty, every dtype") {
  CHECK(RunReshape({2, 3, 4}, {4, -1}) == Dims{4, 6});
  CHECK(RunReshape({2, 3, 4}, {0, -1}) == Dims{2, 12});
  CHECK(RunReshape({2, 3, 4}, {0, 0, 4}) == Dims{2, 3, 4});
  CHECK(RunReshape({2, 3, 4}, {-1}, 0, true) == Dims{24});
  CHECK(RunReshape({2, 3, 4}, {2, 1, 3, 1, 4}) == Dims{2, 1, 3, 1, 4});
  CHECK(RunReshape({0, 3}, {3, 0}, 1) == Dims{3, 0});
  CHECK(RunReshape({0, 3}, {0, 3}, 0) == Dims{0, 3});
  CHECK(RunReshape({2, 0}, {0, 5, -1}, 0) == Dims{2, 5, 0});
  CHECK(RunReshape({1}, {}) == Dims{});
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {2, 6});
    RunNodeOptions o;
    o.opset = 13;
    auto out = RunNode("Reshape", {x, I64({3}, {3, -1, 2})}, {}, o);
    CheckSame(out[0], x.Reshaped({3, 2, 2}));
  }
  // Opset 1-4: the `shape` attribute.
  RunNodeOptions o4;
  o4.opset = 4;
  auto out = RunNode("Reshape", {Pattern(DType::kFloat32, {6})}, {AttrInts("shape", {3, 2})}, o4);
  CHECK(out[0].dims() == Dims{3, 2});
}

TEST_CASE("Reshape: errors") {
  const auto run = [](const Dims& in, const std::vector<int64_t>& shape, int64_t allowzero = 0) {
    return ErrorCodeOf([&] { RunReshape(in, shape, allowzero); });
  };
  CHECK(run({2, 3}, {4, 2}) == kInvalidArgument);       // count mismatch
  CHECK(run({2, 3}, {-1, -1}) == kInvalidArgument);     // two -1
  CHECK(run({2, 3}, {-2, 3}) == kInvalidArgument);      // negative
  CHECK(run({2, 3}, {5, -1}) == kInvalidArgument);      // not divisible
  CHECK(run({2}, {0, 0, 2}) == kInvalidArgument);       // 0 beyond the input rank
  CHECK(run({0, 3}, {0, -1}, 1) == kInvalidArgument);   // allowzero with 0 and -1
}

TEST_CASE("Flatten: every axis incl. negative") {
  const Tensor x = Pattern(DType::kInt64, {2, 3, 4, 5});
  for (int64_t axis = -4; axis <= 4; ++axis) {
    auto out = RunNode("Flatten", {x}, {AttrInt("axis", axis)});
    const int64_t a = axis < 0 ? axis + 4 : axis;
    int64_t outer = 1;
    for (int64_t k = 0; k < a; ++k) outer *= x.dim(k);
    CheckSame(out[0], x.Reshaped({outer, 120 / outer}));
  }
  CHECK(RunNode("Flatten", {Pattern(DType::kString, {2, 0, 3})})[0].dims() == Dims{2, 0});
  CHECK(ErrorCodeOf([&] { RunNode("Flatten", {x}, {AttrInt("axis", 5)}); }) == kInvalidArgument);
  RunNodeOptions o9;
  o9.opset = 9;
  CHECK(ErrorCodeOf([&] { RunNode("Flatten", {x}, {AttrInt("axis", -1)}, o9); }) == kInvalidModel);
}

TEST_CASE("Squeeze / Unsqueeze: attribute and input forms, negative axes, errors") {
  const Tensor x = Pattern(DType::kFloat16, {1, 3, 1, 2});
  RunNodeOptions o11;
  o11.opset = 11;
  CheckSame(RunNode("Squeeze", {x}, {AttrInts("axes", {0, -2})}, o11)[0], x.Reshaped({3, 2}));
  CheckSame(RunNode("Squeeze", {x}, {}, o11)[0], x.Reshaped({3, 2}));
  CheckSame(RunNode("Squeeze", {x, I64({1}, {2})})[0], x.Reshaped({1, 3, 2}));
  CheckSame(RunNode("Squeeze", {x, I64({1}, {-4})})[0], x.Reshaped({3, 1, 2}));
  CheckSame(RunNode("Squeeze", {x})[0], x.Reshaped({3, 2}));
  CHECK(ErrorCodeOf([&] { RunNode("Squeeze", {x, I64({1}, {1})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Squeeze", {x, I64({1}, {4})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Squeeze", {x, I64({2}, {0, -4})}); }) == kInvalidArgument);

  const Tensor y = Pattern(DType::kString, {3, 2});
  CheckSame(RunNode("Unsqueeze", {y}, {AttrInts("axes", {0, 3})}, o11)[0], y.Reshaped({1, 3, 2, 1}));
  CheckSame(RunNode("Unsqueeze", {y, I64({2}, {-1, 1})})[0], y.Reshaped({3, 1, 2, 1}));
  CheckSame(RunNode("Unsqueeze", {y, I64({3}, {4, 0, 2})})[0], y.Reshaped({1, 3, 1, 2, 1}));
  const Tensor s = Pattern(DType::kInt8, {});
  CheckSame(RunNode("Unsqueeze", {s, I64({1}, {0})})[0], s.Reshaped({1}));
  CHECK(ErrorCodeOf([&] { RunNode("Unsqueeze", {y, I64({1}, {3})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Unsqueeze", {y, I64({2}, {1, 1})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Unsqueeze", {y}, {}, o11); }) == kInvalidModel);
}

TEST_CASE("Identity, Shape, Size") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {2, 0, 3});
    CheckSame(RunNode("Identity", {x})[0], x);
    const Tensor y = Pattern(dt, {3, 1, 2});
    CheckSame(RunNode("Identity", {y})[0], y);
  }
  const Tensor x = Pattern(DType::kFloat32, {2, 3, 4, 5});
  CheckSame(RunNode("Shape", {x})[0], I64({4}, {2, 3, 4, 5}));
  RunNodeOptions o15;
  o15.opset = 15;
  CheckSame(RunNode("Shape", {x}, {AttrInt("start", 1), AttrInt("end", -1)}, o15)[0], I64({2}, {3, 4}));
  CheckSame(RunNode("Shape", {x}, {AttrInt("start", -10)}, o15)[0], I64({4}, {2, 3, 4, 5}));
  CheckSame(RunNode("Shape", {x}, {AttrInt("start", 3), AttrInt("end", 1)}, o15)[0], I64({0}, {}));
  CheckSame(RunNode("Shape", {x}, {AttrInt("end", 10)}, o15)[0], I64({4}, {2, 3, 4, 5}));
  CheckSame(RunNode("Shape", {Pattern(DType::kString, {})})[0], I64({0}, {}));
  CheckSame(RunNode("Size", {x})[0], I64({}, {120}));
  CheckSame(RunNode("Size", {Pattern(DType::kInt8, {3, 0})})[0], I64({}, {0}));
}

}  // namespace
}  // namespace simplecpp
