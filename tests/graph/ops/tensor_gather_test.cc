// Tests for graph/ops/tensor_gather.cc: Concat, Split, Slice, Gather, GatherElements, Expand and
// Tile against scalar index-mapping references, for every dtype size and strings, odd and empty
// shapes, negative axes / indices / steps, and the error cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"

namespace simplecpp {
namespace {

using tensor_test::CheckSame;
using tensor_test::ErrorCodeOf;
using tensor_test::ErrorMessageOf;
using tensor_test::MapRef;
using tensor_test::MovableDTypes;
using tensor_test::Pattern;
using tensor_test::Ravel;
using testing::AttrInt;
using testing::AttrInts;
using testing::I32;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

constexpr int kInvalidArgument = static_cast<int>(ErrorCode::kInvalidArgument);
constexpr int kRuntime = static_cast<int>(ErrorCode::kRuntime);

TEST_CASE("Concat: every axis incl. negative, empty inputs, dtypes") {
  for (DType dt : MovableDTypes()) {
    const Tensor a = Pattern(dt, {2, 3, 4}, 1), b = Pattern(dt, {2, 3, 4}, 5);
    for (int64_t axis = -3; axis < 3; ++axis) {
      const int64_t ax = axis < 0 ? axis + 3 : axis;
      Dims bd = {2, 3, 4};
      bd[ax] = 1;
      const Tensor c = Pattern(dt, bd, 9), e = Pattern(dt, [&] { Dims d = {2, 3, 4}; d[ax] = 0; return d; }(), 3);
      Dims out = {2, 3, 4};
      out[ax] = a.dim(ax) + 1 + 0 + b.dim(ax);
      const std::vector<const Tensor*> parts = {&a, &c, &e, &b};
      Tensor want(dt, out);
      // Reference: walk the output and pick the part by the axis coordinate.
      for (int64_t o = 0; o < want.num_elements(); ++o) {
        auto idx = tensor_test::Unravel(o, out);
        int64_t p = 0;
        while (idx[ax] >= parts[p]->dim(ax)) idx[ax] -= parts[p++]->dim(ax);
        const int64_t s = Ravel(idx, parts[p]->dims());
        if (dt == DType::kString) {
          want.strings()[o] = parts[p]->strings()[s];
        } else {
          const size_t es = DTypeSize(dt);
          std::memcpy(static_cast<unsigned char*>(want.raw_data()) + o * es,
                      static_cast<const unsigned char*>(parts[p]->raw_data()) + s * es, es);
        }
      }
      CheckSame(RunNode("Concat", {a, c, e, b}, {AttrInt("axis", axis)})[0], want);
    }
  }
  const Tensor a = Pattern(DType::kFloat32, {2, 3}), b = Pattern(DType::kFloat32, {3, 3});
  CHECK(ErrorCodeOf([&] { RunNode("Concat", {a, b}, {AttrInt("axis", 1)}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Concat", {a, b}, {AttrInt("axis", 2)}); }) == kInvalidArgument);
  CHECK(RunNode("Concat", {a, b}, {AttrInt("axis", -2)})[0].dims() == Dims{5, 3});
}

std::vector<Tensor> RunSplit(const Tensor& x, int64_t opset, int num_outputs,
                             std::vector<graph::Attribute> attrs, const Tensor& split = Tensor()) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  std::vector<Tensor> in = {x};
  if (split.defined()) in.push_back(split);
  return RunNode("Split", in, attrs, o);
}

// Checks that the outputs are consecutive slices of x along axis with the given sizes.
void CheckSplit(const Tensor& x, int64_t axis, const std::vector<Tensor>& outs,
                const std::vector<int64_t>& sizes) {
  REQUIRE(outs.size() == sizes.size());
  int64_t offset = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    Dims d = x.dims();
    d[axis] = sizes[i];
    CheckSame(outs[i], MapRef(x, d, [&](std::vector<int64_t> idx) {
                idx[axis] += offset;
                return Ravel(idx, x.dims());
              }));
    offset += sizes[i];
  }
}

TEST_CASE("Split: equal, explicit sizes, num_outputs with an uneven last chunk, opsets") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {4, 7});
    CheckSplit(x, 1, RunSplit(x, 13, 3, {AttrInt("axis", -1)}, I64({3}, {2, 0, 5})), {2, 0, 5});
    CheckSplit(x, 0, RunSplit(x, 13, 2, {}), {2, 2});
    CheckSplit(x, 1, RunSplit(x, 11, 2, {AttrInt("axis", 1), AttrInts("split", {3, 4})}), {3, 4});
    CheckSplit(x, 1, RunSplit(x, 18, 3, {AttrInt("axis", 1), AttrInt("num_outputs", 3)}), {3, 3, 1});
    CheckSplit(x, 0, RunSplit(x, 18, 3, {AttrInt("num_outputs", 3)}), {2, 2, 0});
    CheckSplit(x, 1, RunSplit(x, 18, 2, {AttrInt("axis", 1)}, I64({2}, {6, 1})), {6, 1});
  }
  const Tensor x = Pattern(DType::kFloat32, {4, 7});
  CHECK(ErrorCodeOf([&] { RunSplit(x, 13, 2, {AttrInt("axis", 1)}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunSplit(x, 13, 2, {AttrInt("axis", 1)}, I64({2}, {3, 3})); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunSplit(x, 13, 2, {AttrInt("axis", 1)}, I64({3}, {3, 3, 1})); }) == kInvalidArgument);
}

// Slice reference, written from the spec as a filter over each axis' indices.
std::vector<int64_t> SliceIndices(int64_t d, int64_t start, int64_t end, int64_t step) {
  auto adjust = [d](int64_t v) { return v < 0 ? v + d : v; };
  int64_t s = adjust(start), e = adjust(end);
  std::vector<int64_t> out;
  if (step > 0) {
    s = std::max<int64_t>(0, std::min(s, d));
    e = std::max<int64_t>(0, std::min(e, d));
    for (int64_t i = 0; i < d; ++i) {
      if (i >= s && i < e && (i - s) % step == 0) out.push_back(i);
    }
  } else {
    s = std::max<int64_t>(0, std::min(s, d - 1));
    e = std::max<int64_t>(-1, std::min(e, d - 1));
    for (int64_t i = d - 1; i >= 0; --i) {
      if (i <= s && i > e && (s - i) % (-step) == 0) out.push_back(i);
    }
  }
  return out;
}

TEST_CASE("Slice: sweep of starts / ends / steps incl. negative and INT_MAX / INT_MIN") {
  const std::vector<int64_t> bounds = {0, 1, 3, 5, 7, -1, -3, -5, -8, INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN};
  const std::vector<int64_t> steps = {1, 2, 3, -1, -2, -4};
  const Tensor x = Pattern(DType::kFloat32, {3, 5, 4});
  int checked = 0;
  for (int64_t start : bounds) {
    for (int64_t end : bounds) {
      for (int64_t step : steps) {
        // Slice axis 1 (size 5), and axis -1 (size 4) with a fixed slice [1, 4, 2].
        const auto idx1 = SliceIndices(5, start, end, step);
        const auto idx2 = SliceIndices(4, -3, INT64_MAX, 2);
        const Dims out = {3, static_cast<int64_t>(idx1.size()), static_cast<int64_t>(idx2.size())};
        const Tensor want = MapRef(x, out, [&](const std::vector<int64_t>& i) {
          return Ravel({i[0], idx1[i[1]], idx2[i[2]]}, x.dims());
        });
        auto got = RunNode("Slice", {x, I64({2}, {start, -3}), I64({2}, {end, INT64_MAX}),
                                     I64({2}, {1, -1}), I64({2}, {step, 2})});
        CAPTURE(start);
        CAPTURE(end);
        CAPTURE(step);
        CheckSame(got[0], want);
        ++checked;
      }
    }
  }
  CHECK(checked == 13 * 13 * 6);
}

TEST_CASE("Slice: dtypes, default axes / steps, int32 inputs, opset 1 attributes, errors") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {4, 6});
    const Tensor want = MapRef(x, {2, 6}, [&](const std::vector<int64_t>& i) {
      return Ravel({i[0] + 1, i[1]}, x.dims());
    });
    CheckSame(RunNode("Slice", {x, I64({1}, {1}), I64({1}, {3})})[0], want);
    CheckSame(RunNode("Slice", {x, I32({1}, {1}), I32({1}, {3}), I32({1}, {0})})[0], want);
    RunNodeOptions o1;
    o1.opset = 1;
    CheckSame(RunNode("Slice", {x}, {AttrInts("starts", {1}), AttrInts("ends", {3})}, o1)[0], want);
    RunNodeOptions constant;
    constant.constant_inputs = {1, 2, 3, 4};
    CheckSame(RunNode("Slice", {x, I64({1}, {1}), I64({1}, {3}), I64({1}, {0}), I64({1}, {1})}, {},
                      constant)[0],
              want);
  }
  const Tensor e = Pattern(DType::kInt64, {0, 3});
  CHECK(RunNode("Slice", {e, I64({1}, {0}), I64({1}, {-1}), I64({1}, {0}), I64({1}, {-1})})[0].dims() ==
        Dims{0, 3});
  const Tensor x = Pattern(DType::kFloat32, {4, 6});
  CHECK(ErrorCodeOf([&] { RunNode("Slice", {x, I64({1}, {0}), I64({1}, {3}), I64({1}, {0}), I64({1}, {0})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Slice", {x, I64({1}, {0}), I64({1}, {3}), I64({1}, {2})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Slice", {x, I64({2}, {0, 0}), I64({2}, {3, 3}), I64({2}, {1, -1})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Slice", {x, I64({2}, {0, 0}), I64({1}, {3})}); }) == kInvalidArgument);
}

TEST_CASE("Gather: axes, negative and int32 indices, scalar indices, dtypes") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {3, 4, 5});
    for (int64_t axis = -3; axis < 3; ++axis) {
      const int64_t ax = axis < 0 ? axis + 3 : axis;
      const int64_t d = x.dim(ax);
      const std::vector<int64_t> ind = {d - 1, -1, 0, -d, 1, 1};
      Dims out = x.dims();
      out.erase(out.begin() + ax);
      out.insert(out.begin() + ax, {2, 3});
      const Tensor want = MapRef(x, out, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src(i.begin(), i.begin() + ax);
        int64_t v = ind[i[ax] * 3 + i[ax + 1]];
        src.push_back(v < 0 ? v + d : v);
        src.insert(src.end(), i.begin() + ax + 2, i.end());
        return Ravel(src, x.dims());
      });
      CheckSame(RunNode("Gather", {x, I64({2, 3}, ind)}, {AttrInt("axis", axis)})[0], want);
      std::vector<int32_t> ind32(ind.begin(), ind.end());
      CheckSame(RunNode("Gather", {x, I32({2, 3}, ind32)}, {AttrInt("axis", axis)})[0], want);
    }
  }
  const Tensor x = Pattern(DType::kFloat32, {3, 2});
  const Tensor want = MapRef(x, {2}, [&](const std::vector<int64_t>& i) { return 4 + i[0]; });
  CheckSame(RunNode("Gather", {x, I64({}, {-1})})[0], want);
  CHECK(RunNode("Gather", {x, I64({0}, {})})[0].dims() == Dims{0, 2});
}

TEST_CASE("Gather: out-of-range index fails at run time, naming index and bound") {
  const Tensor x = Pattern(DType::kFloat32, {3, 2});
  CHECK(ErrorCodeOf([&] { RunNode("Gather", {x, I64({2}, {0, 3})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("Gather", {x, I64({2}, {-4, 0})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("Gather", {x, I32({1}, {INT32_MAX})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("Gather", {x, I64({1}, {INT64_MIN})}); }) == kRuntime);
  const std::string msg = ErrorMessageOf([&] { RunNode("Gather", {x, I64({2}, {0, 7})}, {AttrInt("axis", 1)}); });
  CHECK(msg.find("index 7") != std::string::npos);
  CHECK(msg.find("size 2") != std::string::npos);
  CHECK(ErrorCodeOf([&] { RunNode("Gather", {x, I64({1}, {0})}, {AttrInt("axis", 2)}); }) == kInvalidArgument);
}

TEST_CASE("GatherElements: axes, negative indices, smaller index shapes, errors") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {3, 4, 2});
    for (int64_t axis = -3; axis < 3; ++axis) {
      const int64_t ax = axis < 0 ? axis + 3 : axis;
      const Dims idims = {2, 3, 2};
      std::vector<int64_t> ind(12);
      for (size_t i = 0; i < ind.size(); ++i) {
        const int64_t d = x.dim(ax);
        ind[i] = static_cast<int64_t>((i * 5 + 1) % (2 * d)) - d;  // covers [-d, d)
      }
      const Tensor want = MapRef(x, idims, [&](std::vector<int64_t> i) {
        int64_t v = ind[Ravel(i, idims)];
        i[ax] = v < 0 ? v + x.dim(ax) : v;
        return Ravel(i, x.dims());
      });
      CheckSame(RunNode("GatherElements", {x, I64(idims, ind)}, {AttrInt("axis", axis)})[0], want);
    }
  }
  const Tensor x = Pattern(DType::kFloat32, {2, 2});
  CHECK(ErrorCodeOf([&] { RunNode("GatherElements", {x, I64({1, 2}, {0, 2})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("GatherElements", {x, I64({2}, {0, 1})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("GatherElements", {x, I64({1, 3}, {0, 1, 0})}); }) == kInvalidArgument);
}

Tensor BroadcastRef(const Tensor& x, const Dims& out) {
  const size_t pad = out.size() - x.dims().size();
  return MapRef(x, out, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src;
    for (size_t k = pad; k < out.size(); ++k) src.push_back(x.dim(k - pad) == 1 ? 0 : i[k]);
    return Ravel(src, x.dims());
  });
}

TEST_CASE("Expand: bidirectional broadcast, dtypes, errors") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {3, 1, 2});
    CheckSame(RunNode("Expand", {x, I64({3}, {3, 4, 2})})[0], BroadcastRef(x, {3, 4, 2}));
    CheckSame(RunNode("Expand", {x, I64({4}, {2, 1, 5, 1})})[0], BroadcastRef(x, {2, 3, 5, 2}));
    CheckSame(RunNode("Expand", {x, I64({1}, {2})})[0], BroadcastRef(x, {3, 1, 2}));
    CheckSame(RunNode("Expand", {x, I64({2}, {0, 1})})[0], BroadcastRef(x, {3, 0, 2}));
  }
  const Tensor s = Pattern(DType::kFloat32, {});
  CheckSame(RunNode("Expand", {s, I64({2}, {2, 3})})[0], BroadcastRef(s, {2, 3}));
  const Tensor x = Pattern(DType::kFloat32, {3, 2});
  CHECK(ErrorCodeOf([&] { RunNode("Expand", {x, I64({2}, {3, 3})}); }) == kInvalidArgument);
}

TEST_CASE("Tile: repeats incl. 0 and 1, dtypes, opsets, errors") {
  for (DType dt : MovableDTypes()) {
    const Tensor x = Pattern(dt, {2, 3});
    for (const std::vector<int64_t>& rep : {std::vector<int64_t>{1, 1}, {2, 3}, {3, 1}, {0, 2}}) {
      const Dims out = {2 * rep[0], 3 * rep[1]};
      const Tensor want = MapRef(x, out, [&](const std::vector<int64_t>& i) {
        return Ravel({i[0] % 2, i[1] % 3}, x.dims());
      });
      CheckSame(RunNode("Tile", {x, I64({2}, rep)})[0], want);
    }
  }
  const Tensor x = Pattern(DType::kFloat32, {2, 3});
  RunNodeOptions o1;
  o1.opset = 1;
  const Tensor want = MapRef(x, {2, 6}, [&](const std::vector<int64_t>& i) { return Ravel({i[0], i[1] % 3}, x.dims()); });
  CheckSame(RunNode("Tile", {x, I64({}, {2}), I64({}, {1})}, {}, o1)[0], want);
  CHECK(ErrorCodeOf([&] { RunNode("Tile", {x, I64({1}, {2})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("Tile", {x, I64({2}, {2, -1})}); }) == kInvalidArgument);
}

}  // namespace
}  // namespace simplecpp
