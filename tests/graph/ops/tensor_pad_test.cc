// Tests for graph/ops/tensor_pad.cc: Pad in every mode (constant, reflect, edge, wrap) against a
// reference that walks indices back into range one bounce at a time, with negative pads
// (cropping), pads larger than the axis, the axes input (18), the attribute forms (1, 2), every
// dtype size and strings.
#include <doctest/doctest.h>

#include <cstring>

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
using testing::AttrFloat;
using testing::AttrInts;
using testing::AttrString;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

// Source index for output index i on an axis of size d padded by `begin`, or -1 for the fill.
int64_t PadSource(const std::string& mode, int64_t i, int64_t begin, int64_t d) {
  int64_t s = i - begin;
  if (s >= 0 && s < d) return s;
  if (mode == "constant") return -1;
  if (mode == "edge") return s < 0 ? 0 : d - 1;
  if (mode == "wrap") {
    while (s < 0) s += d;
    while (s >= d) s -= d;
    return s;
  }
  // reflect: bounce off the edges without repeating them.
  if (d == 1) return 0;
  while (s < 0 || s >= d) {
    if (s < 0) s = -s;
    if (s >= d) s = 2 * (d - 1) - s;
  }
  return s;
}

Tensor PadRef(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode,
              const void* fill, const std::string& fill_str = "") {
  const size_t r = x.dims().size();
  Dims out(r);
  for (size_t k = 0; k < r; ++k) out[k] = x.dim(k) + pads[k] + pads[k + r];
  return MapRef(
      x, out,
      [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src(r);
        for (size_t k = 0; k < r; ++k) {
          src[k] = PadSource(mode, i[k], pads[k], x.dim(k));
          if (src[k] < 0) return int64_t{-1};
        }
        return Ravel(src, x.dims());
      },
      fill, fill_str);
}

TEST_CASE("Pad: every mode, negative and large pads, dtypes") {
  const std::vector<std::vector<int64_t>> pad_sets = {
      {0, 0, 0, 0}, {1, 2, 3, 0}, {2, 5, 2, 5}, {-1, 1, 0, -2}, {0, -3, 4, 1}, {7, 0, 0, 9}};
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    for (DType dt : MovableDTypes()) {
      const Tensor x = Pattern(dt, {3, 4});
      const Tensor cv = Pattern(dt, {}, 77);
      for (const auto& pads : pad_sets) {
        CAPTURE(mode);
        CAPTURE(DTypeName(dt));
        CAPTURE(DimsToString(pads));
        std::vector<Tensor> in = {x, I64({4}, pads)};
        if (mode == "constant") in.push_back(cv);
        const Tensor want = PadRef(x, pads, mode, cv.raw_data(),
                                   dt == DType::kString ? cv.strings()[0] : std::string());
        RunNodeOptions o19;
        o19.opset = 19;
        CheckSame(RunNode("Pad", in, {AttrString("mode", mode)}, o19)[0], want);
      }
    }
  }
}

TEST_CASE("Pad: default zero, axes input, attribute forms, errors") {
  const Tensor x = Pattern(DType::kFloat32, {2, 3, 2});
  const float zero = 0.0f, half = 0.5f;
  CheckSame(RunNode("Pad", {x, I64({6}, {1, 0, 0, 0, 2, 1})})[0],
            PadRef(x, {1, 0, 0, 0, 2, 1}, "constant", &zero));
  RunNodeOptions o18;
  o18.opset = 18;
  CheckSame(RunNode("Pad", {x, I64({2}, {1, 2}), Tensor(), I64({1}, {-2})}, {}, o18)[0],
            PadRef(x, {0, 1, 0, 0, 2, 0}, "constant", &zero));
  RunNodeOptions o19;
  o19.opset = 19;
  CheckSame(RunNode("Pad", {x, I64({4}, {1, 1, 1, 2}), Tensor(), I64({2}, {0, 2})},
                    {AttrString("mode", "wrap")}, o19)[0],
            PadRef(x, {1, 0, 1, 1, 0, 2}, "wrap", nullptr));
  RunNodeOptions o2;
  o2.opset = 2;
  CheckSame(RunNode("Pad", {x}, {AttrInts("pads", {0, 1, 0, 0, 1, 1}), AttrFloat("value", 0.5f)}, o2)[0],
            PadRef(x, {0, 1, 0, 0, 1, 1}, "constant", &half));
  RunNodeOptions o1;
  o1.opset = 1;
  CheckSame(RunNode("Pad", {x}, {AttrInts("paddings", {0, 1, 0, 0, 1, 1}), AttrString("mode", "edge")}, o1)[0],
            PadRef(x, {0, 1, 0, 0, 1, 1}, "edge", nullptr));
  // int32 with a float attribute value converts the value.
  const int32_t three = 3;
  const Tensor xi = Pattern(DType::kInt32, {2});
  CheckSame(RunNode("Pad", {xi}, {AttrInts("pads", {1, 1}), AttrFloat("value", 3.0f)}, o2)[0],
            PadRef(xi, {1, 1}, "constant", &three));
  const Tensor e = Pattern(DType::kFloat32, {0, 2});
  CHECK(RunNode("Pad", {e, I64({4}, {1, 0, 1, 0})})[0].dims() == Dims{2, 2});
  CHECK(ErrorCodeOf([&] { RunNode("Pad", {e, I64({4}, {1, 0, 1, 0})}, {AttrString("mode", "edge")}); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("Pad", {x, I64({4}, {1, 0, 1, 0})}); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("Pad", {x, I64({6}, {-3, 0, 0, 0, 0, 0})}); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("Pad", {x, I64({6}, {0, 0, 0, 0, 0, 0})}, {AttrString("mode", "mirror")}); }) != 0);
  RunNodeOptions o13;
  o13.opset = 13;
  CHECK(ErrorCodeOf([&] { RunNode("Pad", {x, I64({6}, {0, 0, 0, 0, 0, 0})}, {AttrString("mode", "wrap")}, o13); }) != 0);
}

}  // namespace
}  // namespace simplecpp
