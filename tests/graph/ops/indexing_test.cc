// Tests for graph/ops/indexing.cc and indexing_scatter.cc: GatherND, ScatterND, ScatterElements,
// Scatter, OneHot, Trilu, ReverseSequence, EyeLike, DepthToSpace, SpaceToDepth against scalar
// references written here, over several element sizes and strings, odd and empty shapes,
// negative indices, and the error cases (out-of-range indices -> Error kRuntime).
#include <doctest/doctest.h>

#include <cstring>
#include <functional>

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
using tensor_test::Unravel;
using testing::AttrInt;
using testing::AttrInts;
using testing::AttrString;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

constexpr int kRuntime = static_cast<int>(ErrorCode::kRuntime);
constexpr int kInvalidArgument = static_cast<int>(ErrorCode::kInvalidArgument);

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}
std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
}

// ------------------------------------------------------------------------------------ GatherND

// Reference: out index = (batch..., tuple..., rest...); data index = (batch, indices[...], rest).
Tensor GatherNDRef(const Tensor& data, const std::vector<int64_t>& idx, const Dims& idims, int64_t b) {
  const int64_t q = static_cast<int64_t>(idims.size()), k = idims[q - 1];
  Dims out(idims.begin(), idims.end() - 1);
  out.insert(out.end(), data.dims().begin() + b + k, data.dims().end());
  return MapRef(data, out, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> tuple_pos(o.begin(), o.begin() + (q - 1));
    tuple_pos.push_back(0);
    const int64_t base = Ravel(tuple_pos, idims);
    std::vector<int64_t> d(o.begin(), o.begin() + b);
    for (int64_t e = 0; e < k; ++e) {
      int64_t v = idx[base + e];
      if (v < 0) v += data.dim(b + e);
      d.push_back(v);
    }
    d.insert(d.end(), o.begin() + (q - 1), o.end());
    return Ravel(d, data.dims());
  });
}

TEST_CASE("GatherND: batch_dims 0/1/2, negative indices, dtypes, int32 indices") {
  for (DType dt : MovableDTypes()) {
    CAPTURE(DTypeName(dt));
    const Tensor data = Pattern(dt, {2, 3, 4, 5});
    {  // batch_dims 0, k = 2, indices [2, 3, 2]
      const std::vector<int64_t> idx = {0, 1, 1, -1, -2, 2, 1, 0, 0, 0, 1, 2};
      CheckSame(RunNode("GatherND", {data, I64({2, 3, 2}, idx)})[0],
                GatherNDRef(data, idx, {2, 3, 2}, 0));
      std::vector<int32_t> idx32(idx.begin(), idx.end());
      CheckSame(RunNode("GatherND", {data, I32({2, 3, 2}, idx32)})[0],
                GatherNDRef(data, idx, {2, 3, 2}, 0));
    }
    {  // batch_dims 1, k = 3 (full index -> scalars)
      const std::vector<int64_t> idx = {0, 0, 0, 2, 3, 4, 1, -1, 2, -3, 0, 1};
      CheckSame(RunNode("GatherND", {data, I64({2, 2, 3}, idx)}, {AttrInt("batch_dims", 1)})[0],
                GatherNDRef(data, idx, {2, 2, 3}, 1));
    }
    {  // batch_dims 2, k = 1
      const std::vector<int64_t> idx = {0, 3, 1, 2, 2, 0};
      CheckSame(RunNode("GatherND", {data, I64({2, 3, 1}, idx)}, {AttrInt("batch_dims", 2)})[0],
                GatherNDRef(data, idx, {2, 3, 1}, 2));
    }
  }
}

TEST_CASE("GatherND: empty indices, errors") {
  const Tensor data = Pattern(DType::kFloat32, {3, 4});
  const Tensor out = RunNode("GatherND", {data, I64({0, 1}, {})})[0];
  CHECK(out.dims() == Dims{0, 4});
  CHECK(ErrorCodeOf([&] { RunNode("GatherND", {data, I64({1, 2}, {3, 0})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("GatherND", {data, I64({1, 2}, {0, -5})}); }) == kRuntime);
  const std::string msg = ErrorMessageOf([&] { RunNode("GatherND", {data, I64({1, 2}, {0, 4})}); });
  CHECK(msg.find("index 4") != std::string::npos);
  CHECK(msg.find("size 4") != std::string::npos);
  CHECK(ErrorCodeOf([&] { RunNode("GatherND", {data, I64({1, 3}, {0, 0, 0})}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] {
          RunNode("GatherND", {data, I64({2, 1}, {0, 0})}, {AttrInt("batch_dims", 1)});
        }) == kInvalidArgument);  // batch dims 3 vs 2 differ
}

// ----------------------------------------------------------------------------------- ScatterND

TEST_CASE("ScatterND: none (duplicates in order), add/mul/max/min, dtypes, errors") {
  for (DType dt : MovableDTypes()) {
    CAPTURE(DTypeName(dt));
    const Tensor data = Pattern(dt, {4, 3}, 1), upd = Pattern(dt, {3, 3}, 7);
    // Rows 2, -1 (= 3) and 2 again: row 2 gets the last update (row 2 of updates).
    const Tensor got = RunNode("ScatterND", {data, I64({3, 1}, {2, -1, 2}), upd})[0];
    const Tensor want = MapRef(data, {4, 3}, [&](const std::vector<int64_t>& o) { return o[0] * 3 + o[1]; });
    Tensor expect = want.Clone();
    const size_t es = dt == DType::kString ? 0 : DTypeSize(dt);
    auto put = [&](int64_t row, int64_t urow) {
      for (int64_t c = 0; c < 3; ++c) {
        if (dt == DType::kString) {
          expect.strings()[row * 3 + c] = upd.strings()[urow * 3 + c];
        } else {
          std::memcpy(static_cast<char*>(expect.raw_data()) + (row * 3 + c) * es,
                      static_cast<const char*>(upd.raw_data()) + (urow * 3 + c) * es, es);
        }
      }
    };
    put(3, 1);
    put(2, 2);
    CheckSame(got, expect);
  }
  const Tensor data = F32({2, 2}, {1, 2, 3, 4});
  const Tensor idx = I64({3, 2}, {0, 1, 1, 0, 0, 1});
  const Tensor upd = F32({3}, {10, 20, 5});
  RunNodeOptions o;
  o.opset = 18;
  CHECK(Floats(RunNode("ScatterND", {data, idx, upd}, {AttrString("reduction", "add")}, o)[0]) ==
        std::vector<float>{1, 17, 23, 4});
  CHECK(Floats(RunNode("ScatterND", {data, idx, upd}, {AttrString("reduction", "mul")}, o)[0]) ==
        std::vector<float>{1, 100, 60, 4});
  CHECK(Floats(RunNode("ScatterND", {data, idx, upd}, {AttrString("reduction", "max")}, o)[0]) ==
        std::vector<float>{1, 10, 20, 4});
  CHECK(Floats(RunNode("ScatterND", {data, idx, upd}, {AttrString("reduction", "min")}, o)[0]) ==
        std::vector<float>{1, 2, 3, 4});
  CHECK(Floats(RunNode("ScatterND", {data, idx, upd})[0]) == std::vector<float>{1, 5, 20, 4});
  // Full-tensor update with k = 0 is rejected; out-of-range index fails and names it.
  CHECK(ErrorCodeOf([&] { RunNode("ScatterND", {data, I64({1, 2}, {2, 0}), F32({1}, {1})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("ScatterND", {data, I64({1, 2}, {0, 0}), F32({2}, {1, 1})}); }) ==
        kInvalidArgument);
  // max is not valid before opset 18.
  RunNodeOptions o16;
  o16.opset = 16;
  CHECK(ErrorCodeOf([&] { RunNode("ScatterND", {data, idx, upd}, {AttrString("reduction", "max")}, o16); }) != 0);
  // Integer add.
  CHECK(Ints(RunNode("ScatterND", {I64({3}, {1, 2, 3}), I64({2, 1}, {0, 0}), I64({2}, {5, 6})},
                     {AttrString("reduction", "add")}, o)[0]) == std::vector<int64_t>{12, 2, 3});
}

// ----------------------------------------------------------------------------- ScatterElements

TEST_CASE("ScatterElements: every axis, negative indices, reductions, Scatter alias, errors") {
  const Dims dd = {3, 4, 5};
  const Tensor data = testing::RandomF32(dd, 1);
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    const Dims id = {2, 3, 2};
    std::vector<int64_t> idx(12);
    for (int64_t i = 0; i < 12; ++i) idx[i] = (i * 5 + 1) % dd[ax] - (i % 3 == 0 ? dd[ax] : 0);
    const Tensor upd = testing::RandomF32(id, 3);
    for (const char* red : {"none", "add", "mul", "max", "min"}) {
      CAPTURE(axis);
      CAPTURE(red);
      Tensor want = data.Clone();
      float* w = want.data<float>();
      for (int64_t i = 0; i < 12; ++i) {
        std::vector<int64_t> p = Unravel(i, id);
        p[ax] = idx[i] < 0 ? idx[i] + dd[ax] : idx[i];
        float& y = w[Ravel(p, dd)];
        const float u = upd.data<float>()[i];
        const std::string r = red;
        y = r == "none" ? u : r == "add" ? y + u : r == "mul" ? y * u : r == "max" ? std::max(y, u) : std::min(y, u);
      }
      CheckSame(RunNode("ScatterElements", {data, I64(id, idx), upd},
                        {AttrInt("axis", axis), AttrString("reduction", red)})[0],
                want);
      if (std::string(red) == "none" && axis >= 0) {
        RunNodeOptions o;
        o.opset = 10;
        std::vector<int64_t> pos = idx;
        for (int64_t i = 0; i < 12; ++i) pos[i] = pos[i] < 0 ? pos[i] + dd[ax] : pos[i];
        CheckSame(RunNode("Scatter", {data, I64(id, pos), upd}, {AttrInt("axis", axis)}, o)[0], want);
      }
    }
  }
  // Strings and int32 indices.
  const Tensor s = Pattern(DType::kString, {2, 3});
  const Tensor su = Pattern(DType::kString, {1, 2}, 50);
  const Tensor sg = RunNode("ScatterElements", {s, I32({1, 2}, {2, -3}), su}, {AttrInt("axis", 1)})[0];
  CHECK(sg.strings()[2] == su.strings()[0]);
  CHECK(sg.strings()[0] == su.strings()[1]);
  CHECK(sg.strings()[1] == s.strings()[1]);
  // Errors.
  CHECK(ErrorCodeOf([&] {
          RunNode("ScatterElements", {F32({2}, {1, 2}), I64({1}, {2}), F32({1}, {0})});
        }) == kRuntime);
  CHECK(ErrorCodeOf([&] {
          RunNode("ScatterElements", {F32({2, 2}, {1, 2, 3, 4}), I64({1, 3}, {0, 0, 0}), F32({1, 3}, {0, 0, 0})});
        }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] {
          RunNode("ScatterElements", {F32({2}, {1, 2}), I64({1}, {0}), F32({2}, {0, 1})});
        }) == kInvalidArgument);
  // Empty indices: output equals data.
  CheckSame(RunNode("ScatterElements", {data, I64({0, 4, 5}, {}), F32({0, 4, 5}, {})})[0], data);
}

// -------------------------------------------------------------------------------------- OneHot

TEST_CASE("OneHot: axes, negative and out-of-range indices, float indices, opset 9") {
  const Tensor values = F32({2}, {-1, 7});
  const Tensor idx = I64({2, 3}, {0, 2, -1, 5, -3, 1});
  const int64_t depth = 3;
  for (int64_t axis = -3; axis <= 2; ++axis) {
    CAPTURE(axis);
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    const Tensor got = RunNode("OneHot", {idx, I64({}, {depth}), values}, {AttrInt("axis", axis)})[0];
    Dims od = {2, 3};
    od.insert(od.begin() + ax, depth);
    REQUIRE(got.dims() == od);
    for (int64_t o = 0; o < got.num_elements(); ++o) {
      std::vector<int64_t> p = Unravel(o, od);
      const int64_t d = p[ax];
      p.erase(p.begin() + ax);
      int64_t v = idx.data<int64_t>()[Ravel(p, {2, 3})];
      if (v < 0) v += depth;
      CHECK(got.data<float>()[o] == (v == d ? 7.0f : -1.0f));
    }
  }
  // Float indices are truncated; float depth.
  const Tensor g = RunNode("OneHot", {F32({3}, {1.7f, 0.2f, 9.0f}), F32({1}, {2.0f}), I32({2}, {0, 1})})[0];
  CHECK(g.dims() == Dims{3, 2});
  CHECK(std::vector<int32_t>(g.data<int32_t>(), g.data<int32_t>() + 6) == std::vector<int32_t>{0, 1, 1, 0, 0, 0});
  // Opset 9: negative indices are out of range (all off).
  RunNodeOptions o9;
  o9.opset = 9;
  const Tensor g9 = RunNode("OneHot", {I64({1}, {-1}), I64({}, {2}), F32({2}, {0, 1})}, {}, o9)[0];
  CHECK(Floats(g9) == std::vector<float>{0, 0});
  CHECK(ErrorCodeOf([&] { RunNode("OneHot", {idx, I64({}, {0}), values}); }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("OneHot", {idx, I64({}, {3}), F32({3}, {0, 1, 2})}); }) == kInvalidArgument);
}

// --------------------------------------------------------------------------------------- Trilu

TEST_CASE("Trilu: upper/lower, k from -4..4, batches, odd shapes, dtypes") {
  for (DType dt : MovableDTypes()) {
    for (const Dims& d : {Dims{3, 4}, Dims{2, 5, 3}, Dims{1, 1}, Dims{0, 3}, Dims{2, 0, 4}}) {
      const Tensor x = Pattern(dt, d);
      for (int upper = 0; upper < 2; ++upper) {
        for (int64_t k = -4; k <= 4; ++k) {
          CAPTURE(DTypeName(dt));
          CAPTURE(upper);
          CAPTURE(k);
          const size_t r = d.size();
          const Tensor zero(dt, {1});
          const Tensor want = MapRef(
              x, d,
              [&](const std::vector<int64_t>& o) {
                const int64_t diff = o[r - 1] - o[r - 2];
                const bool keep = upper ? diff >= k : diff <= k;
                return keep ? Ravel(o, d) : -1;
              },
              dt == DType::kString ? nullptr : zero.raw_data(), "");
          CheckSame(RunNode("Trilu", {x, I64({}, {k})}, {AttrInt("upper", upper)})[0], want);
        }
      }
    }
  }
  // k omitted = 0; rank 1 is an error.
  CHECK(Floats(RunNode("Trilu", {F32({2, 2}, {1, 2, 3, 4})})[0]) == std::vector<float>{1, 2, 0, 4});
  CHECK(ErrorCodeOf([&] { RunNode("Trilu", {F32({2}, {1, 2})}); }) == kInvalidArgument);
}

// ----------------------------------------------------------------------------- ReverseSequence

TEST_CASE("ReverseSequence: batch/time layouts, dtypes, errors") {
  for (DType dt : MovableDTypes()) {
    for (int layout = 0; layout < 2; ++layout) {
      const int64_t batch_axis = layout, time_axis = 1 - layout;
      const Dims d = layout ? Dims{5, 3, 2} : Dims{3, 5, 2};  // time 5, batch 3
      const Tensor x = Pattern(dt, d);
      const std::vector<int64_t> lens = {5, 0, 3};
      const Tensor want = MapRef(x, d, [&](const std::vector<int64_t>& o) {
        std::vector<int64_t> p = o;
        const int64_t b = o[batch_axis], t = o[time_axis];
        if (t < lens[b]) p[time_axis] = lens[b] - 1 - t;
        return Ravel(p, d);
      });
      CAPTURE(DTypeName(dt));
      CAPTURE(layout);
      CheckSame(RunNode("ReverseSequence", {x, I64({3}, lens)},
                        {AttrInt("batch_axis", batch_axis), AttrInt("time_axis", time_axis)})[0],
                want);
    }
  }
  const Tensor x = F32({2, 2}, {1, 2, 3, 4});
  CHECK(ErrorCodeOf([&] { RunNode("ReverseSequence", {x, I64({2}, {3, 1})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("ReverseSequence", {x, I64({2}, {-1, 1})}); }) == kRuntime);
  CHECK(ErrorCodeOf([&] { RunNode("ReverseSequence", {x, I64({3}, {1, 1, 1})}); }) == kInvalidArgument);
}

// ------------------------------------------------------------------------------------- EyeLike

TEST_CASE("EyeLike: k, dtype, non-square") {
  const Tensor x(DType::kInt32, {3, 5});
  for (int64_t k = -4; k <= 6; ++k) {
    const Tensor y = RunNode("EyeLike", {x}, {AttrInt("k", k), AttrInt("dtype", 1)})[0];
    REQUIRE(y.dtype() == DType::kFloat32);
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 5; ++j) CHECK(y.data<float>()[i * 5 + j] == (j - i == k ? 1.0f : 0.0f));
    }
  }
  const Tensor yi = RunNode("EyeLike", {x})[0];
  CHECK(yi.dtype() == DType::kInt32);
  CHECK(yi.data<int32_t>()[0] == 1);
  CHECK(yi.data<int32_t>()[6] == 1);
  const Tensor yh = RunNode("EyeLike", {x}, {AttrInt("dtype", static_cast<int64_t>(DType::kFloat16))})[0];
  CHECK(yh.data<uint16_t>()[0] == 0x3C00);
  CHECK(yh.data<uint16_t>()[1] == 0);
  const Tensor yb = RunNode("EyeLike", {Tensor(DType::kBool, {2, 2})})[0];
  CHECK(yb.data<bool>()[3]);
  CHECK(ErrorCodeOf([&] { RunNode("EyeLike", {Tensor(DType::kFloat32, {2})}); }) == kInvalidArgument);
}

// ------------------------------------------------------------------------ DepthToSpace / inverse

TEST_CASE("DepthToSpace DCR/CRD and SpaceToDepth against the reshape-transpose definition") {
  for (DType dt : MovableDTypes()) {
    const int64_t b = 2, n = 2, c = 3, h = 2, w = 3;
    const Dims d = {n, c * b * b, h, w};
    const Tensor x = Pattern(dt, d);
    for (const char* mode : {"DCR", "CRD"}) {
      CAPTURE(DTypeName(dt));
      CAPTURE(mode);
      const bool crd = std::string(mode) == "CRD";
      const Dims od = {n, c, h * b, w * b};
      const Tensor want = MapRef(x, od, [&](const std::vector<int64_t>& o) {
        const int64_t hh = o[2] / b, b1 = o[2] % b, ww = o[3] / b, b2 = o[3] % b;
        const int64_t ch = crd ? o[1] * b * b + b1 * b + b2 : (b1 * b + b2) * c + o[1];
        return Ravel({o[0], ch, hh, ww}, d);
      });
      const Tensor y = RunNode("DepthToSpace", {x}, {AttrInt("blocksize", b), AttrString("mode", mode)})[0];
      CheckSame(y, want);
      if (!crd) {  // SpaceToDepth inverts DCR
        CheckSame(RunNode("SpaceToDepth", {y}, {AttrInt("blocksize", b)})[0], x);
      }
    }
  }
  CHECK(ErrorCodeOf([&] {
          RunNode("DepthToSpace", {Tensor(DType::kFloat32, {1, 3, 2, 2})}, {AttrInt("blocksize", 2)});
        }) == kInvalidArgument);
  CHECK(ErrorCodeOf([&] {
          RunNode("SpaceToDepth", {Tensor(DType::kFloat32, {1, 1, 3, 2})}, {AttrInt("blocksize", 2)});
        }) == kInvalidArgument);
}

}  // namespace
}  // namespace simplecpp
