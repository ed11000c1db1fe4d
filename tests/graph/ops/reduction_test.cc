// Tests for graph/ops/reduction.cc: every Reduce* op over all axes subsets of rank-4 tensors
// (keepdims both ways, axes as input and as attribute), empty tensors, noop_with_empty_axes,
// dtypes, NaN propagation, ArgMax/ArgMin, CumSum and TopK, each against a scalar double
// reference written here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/error.h"

namespace simplecpp {
namespace {

using testing::AttrInt;
using testing::AttrInts;
using testing::F32;
using testing::I64;
using testing::RandomF32;
using testing::RunNode;
using testing::RunNodeOptions;

// Options without designated initializers (C++17).
RunNodeOptions Opts(int64_t opset, int num_outputs = 1, int threads = 1,
                    std::vector<int> constant_inputs = {}) {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  o.threads = threads;
  o.constant_inputs = std::move(constant_inputs);
  return o;
}

using RefOp = std::function<double(const std::vector<double>&)>;

struct ReduceCase {
  const char* op;
  RefOp ref;
  float lo, hi;  // input range (positive for Prod / LogSum)
};

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

const std::vector<ReduceCase>& Cases() {
  static const std::vector<ReduceCase> cases = {
      {"ReduceSum", Sum, -1, 1},
      {"ReduceMean", [](const auto& v) { return Sum(v) / v.size(); }, -1, 1},
      {"ReduceMax",
       [](const auto& v) {
         double m = -INFINITY;
         for (double x : v) m = std::max(m, x);
         return m;
       },
       -1, 1},
      {"ReduceMin",
       [](const auto& v) {
         double m = INFINITY;
         for (double x : v) m = std::min(m, x);
         return m;
       },
       -1, 1},
      {"ReduceProd",
       [](const auto& v) {
         double p = 1;
         for (double x : v) p *= x;
         return p;
       },
       0.8f, 1.2f},
      {"ReduceL1",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += std::fabs(x);
         return s;
       },
       -1, 1},
      {"ReduceL2",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return std::sqrt(s);
       },
       -1, 1},
      {"ReduceLogSum", [](const auto& v) { return std::log(Sum(v)); }, 0.5f, 1.5f},
      {"ReduceLogSumExp",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += std::exp(x);
         return std::log(s);
       },
       -3, 3},
      {"ReduceSumSquare",
       [](const auto& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return s;
       },
       -1, 1},
  };
  return cases;
}

// Reference: groups the elements of x (dims) by their kept indices, applies ref per group.
std::vector<double> RefReduce(const std::vector<double>& x, const Dims& dims,
                              const std::vector<bool>& reduced, const RefOp& ref) {
  const size_t rank = dims.size();
  int64_t out_count = 1;
  for (size_t k = 0; k < rank; ++k) out_count *= reduced[k] ? 1 : dims[k];
  std::vector<std::vector<double>> groups(static_cast<size_t>(out_count));
  std::vector<int64_t> idx(rank, 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t o = 0;
    for (size_t k = 0; k < rank; ++k) {
      if (!reduced[k]) o = o * dims[k] + idx[k];
    }
    groups[o].push_back(x[flat]);
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(ref(g));
  return out;
}

Dims ExpectedDims(const Dims& dims, const std::vector<bool>& reduced, bool keepdims) {
  Dims out;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (!reduced[k]) {
      out.push_back(dims[k]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

void CheckClose(const Tensor& got, const std::vector<double>& want, double rtol) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.dtype() == DType::kFloat64 ? got.data<double>()[i] : got.data<float>()[i];
    if (std::isnan(want[i])) {
      CHECK_MESSAGE(std::isnan(g), "i=", i);
    } else if (std::isinf(want[i])) {
      CHECK_MESSAGE(g == want[i], "i=", i);
    } else {
      CHECK_MESSAGE(std::fabs(g - want[i]) <= rtol * std::max(1.0, std::fabs(want[i])), "i=", i,
                    " got=", g, " want=", want[i]);
    }
  }
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.data<float>()[i]);
  return v;
}

TEST_CASE("Reduce*: every axes subset of rank-4 tensors, keepdims both ways, axes as input") {
  for (const Dims& dims : {Dims{3, 1, 17, 5}, Dims{2, 9, 7, 16}}) {
    for (const ReduceCase& rc : Cases()) {
      CAPTURE(rc.op);
      const Tensor x = RandomF32(dims, 17, rc.lo, rc.hi);
      const auto xd = ToDoubles(x);
      for (int mask = 0; mask < 16; ++mask) {
        for (int keep = 0; keep < 2; ++keep) {
          CAPTURE(mask);
          CAPTURE(keep);
          std::vector<int64_t> axes;
          std::vector<bool> reduced(4, mask == 0);
          for (int k = 0; k < 4; ++k) {
            if (mask & (1 << k)) {
              // Mix negative and positive axes.
              axes.push_back(k % 2 ? k - 4 : k);
              reduced[k] = true;
            }
          }
          std::vector<Tensor> inputs = {x};
          if (!axes.empty()) inputs.push_back(I64({static_cast<int64_t>(axes.size())}, axes));
          const auto out = RunNode(rc.op, inputs, {AttrInt("keepdims", keep)}, Opts(18));
          CHECK(out[0].dims() == ExpectedDims(dims, reduced, keep));
          CheckClose(out[0], RefReduce(xd, dims, reduced, rc.ref), 2e-5);
        }
      }
    }
  }
}

TEST_CASE("Reduce*: axes as attribute in older opsets") {
  const Dims dims{4, 3, 5};
  for (const ReduceCase& rc : Cases()) {
    CAPTURE(rc.op);
    const Tensor x = RandomF32(dims, 3, rc.lo, rc.hi);
    const auto xd = ToDoubles(x);
    for (int64_t opset : {1, 11, 13}) {
      if (std::string(rc.op) == "ReduceSum" && opset == 13) continue;
      const auto out =
          RunNode(rc.op, {x}, {AttrInts("axes", {0, 2}), AttrInt("keepdims", 0)}, Opts(opset));
      CHECK(out[0].dims() == Dims{3});
      CheckClose(out[0], RefReduce(xd, dims, {true, false, true}, rc.ref), 2e-5);
      // No axes attribute: reduce everything.
      const auto all = RunNode(rc.op, {x}, {}, Opts(opset));
      CHECK(all[0].dims() == Dims{1, 1, 1});
      CheckClose(all[0], RefReduce(xd, dims, {true, true, true}, rc.ref), 2e-5);
    }
  }
  // ReduceSum 11 with a constant axes input is invalid; 13 takes axes as an input.
  const Tensor x = RandomF32({2, 3}, 1);
  CHECK_THROWS_AS(RunNode("ReduceSum", {x, I64({1}, {0})}, {}, Opts(11)), Error);
  CHECK(RunNode("ReduceSum", {x, I64({1}, {0})}, {}, Opts(13))[0].dims() == Dims{1, 3});
  CHECK_THROWS_AS(RunNode("ReduceMean", {x}, {AttrInts("axes", {0})}, Opts(18)), Error);
}

TEST_CASE("Reduce*: constant axes input (prepared at load)") {
  const Tensor x = RandomF32({3, 4}, 5);
  const auto out =
      RunNode("ReduceMax", {x, I64({1}, {-1})}, {AttrInt("keepdims", 0)}, Opts(18, 1, 1, {1}));
  CHECK(out[0].dims() == Dims{3});
}

TEST_CASE("Reduce*: empty reductions give the identity") {
  const Tensor x(DType::kFloat32, {0, 3});
  const struct {
    const char* op;
    float want;
  } cases[] = {
      {"ReduceSum", 0.0f},      {"ReduceMean", NAN},         {"ReduceMax", -INFINITY},
      {"ReduceMin", INFINITY},  {"ReduceProd", 1.0f},        {"ReduceL1", 0.0f},
      {"ReduceL2", 0.0f},       {"ReduceLogSum", -INFINITY}, {"ReduceLogSumExp", -INFINITY},
      {"ReduceSumSquare", 0.0f}};
  for (const auto& c : cases) {
    CAPTURE(c.op);
    const auto out = RunNode(c.op, {x, I64({1}, {0})}, {AttrInt("keepdims", 1)}, Opts(20));
    REQUIRE(out[0].dims() == Dims{1, 3});
    for (int j = 0; j < 3; ++j) {
      const float g = out[0].data<float>()[j];
      if (std::isnan(c.want)) {
        CHECK(std::isnan(g));
      } else {
        CHECK(g == c.want);
      }
    }
    // Reducing the non-empty axis of an empty tensor: an empty result.
    const auto empty = RunNode(c.op, {x, I64({1}, {1})}, {AttrInt("keepdims", 0)}, Opts(18));
    CHECK(empty[0].dims() == Dims{0});
    // Reducing everything of an empty tensor.
    const auto all = RunNode(c.op, {x}, {AttrInt("keepdims", 0)}, Opts(18));
    CHECK(all[0].dims() == Dims{});
  }
  // Two reduced groups, one of them empty: [2, 3, 0] over axes 0 and 2.
  const Tensor y(DType::kFloat32, {2, 3, 0});
  const auto out = RunNode("ReduceProd", {y, I64({2}, {0, 2})}, {}, Opts(18));
  CHECK(out[0].dims() == Dims{1, 3, 1});
  for (int j = 0; j < 3; ++j) CHECK(out[0].data<float>()[j] == 1.0f);
}

TEST_CASE("Reduce*: noop_with_empty_axes keeps the element-wise part") {
  const Tensor x = F32({2, 2}, {-2.0f, 0.5f, 4.0f, 1.0f});
  const auto sq = RunNode("ReduceSumSquare", {x}, {AttrInt("noop_with_empty_axes", 1)});
  CHECK(sq[0].dims() == Dims{2, 2});
  CHECK(ToDoubles(sq[0]) == std::vector<double>{4.0, 0.25, 16.0, 1.0});
  const auto l1 = RunNode("ReduceL1", {x, I64({0}, {})}, {AttrInt("noop_with_empty_axes", 1)});
  CHECK(ToDoubles(l1[0]) == std::vector<double>{2.0, 0.5, 4.0, 1.0});
  const auto l2 = RunNode("ReduceL2", {x}, {AttrInt("noop_with_empty_axes", 1)});
  CHECK(ToDoubles(l2[0]) == std::vector<double>{2.0, 0.5, 4.0, 1.0});
  const auto sum = RunNode("ReduceSum", {x}, {AttrInt("noop_with_empty_axes", 1)}, Opts(13));
  CHECK(ToDoubles(sum[0]) == ToDoubles(x));
  const auto lse = RunNode("ReduceLogSumExp", {x}, {AttrInt("noop_with_empty_axes", 1)});
  CheckClose(lse[0], ToDoubles(x), 1e-6);
  const auto ls =
      RunNode("ReduceLogSum", {F32({2}, {1.0f, 4.0f})}, {AttrInt("noop_with_empty_axes", 1)});
  CheckClose(ls[0], {0.0, std::log(4.0)}, 1e-6);
  // An empty axes input without noop reduces everything.
  const auto all = RunNode("ReduceSum", {x, I64({0}, {})}, {AttrInt("keepdims", 0)}, Opts(13));
  CHECK(all[0].dims() == Dims{});
  CHECK(all[0].data<float>()[0] == doctest::Approx(3.5));
}

TEST_CASE("Reduce*: bad axes are errors") {
  const Tensor x = RandomF32({2, 3, 4}, 2);
  CHECK_THROWS_AS(RunNode("ReduceSum", {x, I64({2}, {1, -2})}, {}, Opts(13)), Error);
  CHECK_THROWS_AS(RunNode("ReduceSum", {x, I64({1}, {3})}, {}, Opts(13)), Error);
  CHECK_THROWS_AS(RunNode("ReduceMax", {x}, {AttrInts("axes", {0, 0})}, Opts(13)), Error);
  CHECK_THROWS_AS(RunNode("ReduceMax", {x}, {AttrInts("axes", {-4})}, Opts(13)), Error);
}

TEST_CASE("Reduce*: Max/Min propagate NaN as numpy does") {
  // NaN in the vector body, in the scalar tail, and in a column reduction.
  std::vector<float> v(2 * 37, 1.0f);
  v[5] = NAN;        // row 0, vector part
  v[37 + 36] = NAN;  // row 1, tail
  const Tensor x = F32({2, 37}, v);
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    const auto rows = RunNode(op, {x, I64({1}, {1})}, {AttrInt("keepdims", 0)});
    CHECK(std::isnan(rows[0].data<float>()[0]));
    CHECK(std::isnan(rows[0].data<float>()[1]));
    const auto cols = RunNode(op, {x, I64({1}, {0})}, {AttrInt("keepdims", 0)});
    for (int j = 0; j < 37; ++j) {
      CHECK(std::isnan(cols[0].data<float>()[j]) == (j == 5 || j == 36));
    }
  }
}

template <typename T>
Tensor Typed(DType dt, Dims dims, std::vector<T> values) {
  return Tensor::FromVector(dt, std::move(dims), values);
}

TEST_CASE("Reduce*: integer, double and bool dtypes") {
  const auto i32 = RunNode(
      "ReduceSum", {Typed<int32_t>(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6}), I64({1}, {1})}, {},
      Opts(13));
  CHECK(i32[0].dtype() == DType::kInt32);
  CHECK(i32[0].data<int32_t>()[0] == 6);
  CHECK(i32[0].data<int32_t>()[1] == 15);
  const auto i64 = RunNode("ReduceProd", {Typed<int64_t>(DType::kInt64, {3}, {-2, 3, 5})});
  CHECK(i64[0].data<int64_t>()[0] == -30);
  const auto mean = RunNode("ReduceMean", {Typed<int64_t>(DType::kInt64, {2}, {3, 4})});
  CHECK(mean[0].data<int64_t>()[0] == 3);  // truncated like numpy's astype(int)
  const auto u8 = RunNode("ReduceMax", {Typed<uint8_t>(DType::kUInt8, {3}, {7, 250, 3})});
  CHECK(u8[0].data<uint8_t>()[0] == 250);
  const auto i8 = RunNode("ReduceMin", {Typed<int8_t>(DType::kInt8, {3}, {7, -128, 3})});
  CHECK(i8[0].data<int8_t>()[0] == -128);
  const auto d =
      RunNode("ReduceLogSumExp", {Typed<double>(DType::kFloat64, {2}, {1000.0, 1000.0})});
  CHECK(d[0].data<double>()[0] == doctest::Approx(1000.0 + std::log(2.0)));
  const auto l2 = RunNode("ReduceL2", {Typed<int32_t>(DType::kInt32, {2}, {3, 4})});
  CHECK(l2[0].data<int32_t>()[0] == 5);
  const auto u64 = RunNode("ReduceSumSquare", {Typed<uint64_t>(DType::kUInt64, {2}, {3, 4})});
  CHECK(u64[0].data<uint64_t>()[0] == 25);

  const Tensor b = testing::Bool({2, 2}, {true, false, false, false});
  const auto bmax = RunNode("ReduceMax", {b, I64({1}, {1})}, {AttrInt("keepdims", 0)}, Opts(20));
  CHECK(bmax[0].dtype() == DType::kBool);
  CHECK(bmax[0].data<uint8_t>()[0] == 1);
  CHECK(bmax[0].data<uint8_t>()[1] == 0);
  const auto bmin = RunNode("ReduceMin", {b, I64({1}, {1})}, {AttrInt("keepdims", 0)}, Opts(20));
  CHECK(bmin[0].data<uint8_t>()[0] == 0);
  // bool only from opset 20; int8 Max only from 12; no bool sums.
  CHECK_THROWS_AS(RunNode("ReduceMax", {b}, {}, Opts(18)), Error);
  CHECK_THROWS_AS(RunNode("ReduceSum", {b}, {}, Opts(13)), Error);
  CHECK_THROWS_AS(RunNode("ReduceMax", {Typed<int8_t>(DType::kInt8, {1}, {1})}, {}, Opts(11)),
                  Error);
}

TEST_CASE("Reduce*: results do not depend on the thread count") {
  const Tensor x = RandomF32({64, 33, 40}, 8);
  for (const ReduceCase& rc : Cases()) {
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, {0, 2}, {2}}) {
      const Tensor ax = I64({static_cast<int64_t>(axes.size())}, axes);
      const auto a = RunNode(rc.op, {x, ax}, {}, Opts(18, 1, 1));
      const auto b = RunNode(rc.op, {x, ax}, {}, Opts(18, 1, 3));
      CHECK(a[0].BitwiseEquals(b[0]));
    }
  }
}

// ---------------------------------------------------------------------------- ArgMax / ArgMin

TEST_CASE("ArgMax / ArgMin: every axis, keepdims, select_last_index, ties") {
  const Dims dims{3, 4, 5};
  std::vector<float> v(60);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 4);  // many ties
  const Tensor x = F32(dims, v);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    const bool is_max = std::string(op) == "ArgMax";
    for (int64_t axis = -3; axis < 3; ++axis) {
      for (int keep = 0; keep < 2; ++keep) {
        for (int last = 0; last < 2; ++last) {
          CAPTURE(op);
          CAPTURE(axis);
          const int64_t a = axis < 0 ? axis + 3 : axis;
          const auto out = RunNode(op, {x},
                                   {AttrInt("axis", axis), AttrInt("keepdims", keep),
                                    AttrInt("select_last_index", last)},
                                   Opts(13));
          CHECK(out[0].dtype() == DType::kInt64);
          std::vector<bool> reduced(3, false);
          reduced[a] = true;
          CHECK(out[0].dims() == ExpectedDims(dims, reduced, keep));
          int64_t outer = 1, inner = 1;
          for (int64_t k = 0; k < a; ++k) outer *= dims[k];
          for (int64_t k = a + 1; k < 3; ++k) inner *= dims[k];
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t j = 0; j < inner; ++j) {
              int64_t best = 0;
              for (int64_t i = 1; i < dims[a]; ++i) {
                const float c = v[(o * dims[a] + i) * inner + j];
                const float b = v[(o * dims[a] + best) * inner + j];
                const bool better = is_max ? (last ? c >= b : c > b) : (last ? c <= b : c < b);
                if (better) best = i;
              }
              CHECK(out[0].data<int64_t>()[o * inner + j] == best);
            }
          }
        }
      }
    }
  }
  CHECK_THROWS_AS(RunNode("ArgMax", {x}, {AttrInt("axis", 3)}), Error);
  CHECK_THROWS_AS(RunNode("ArgMax", {Tensor(DType::kFloat32, {2, 0})}, {AttrInt("axis", 1)}),
                  Error);
  CHECK(RunNode("ArgMin", {Tensor(DType::kFloat32, {0, 3})}, {AttrInt("axis", 1)})[0].dims() ==
        Dims{0, 1});
  const auto i = RunNode("ArgMax", {Typed<int32_t>(DType::kInt32, {4}, {1, 9, 9, 2})},
                         {AttrInt("keepdims", 0)}, Opts(11));
  CHECK(i[0].dims() == Dims{});
  CHECK(i[0].data<int64_t>()[0] == 1);
}

// ------------------------------------------------------------------------------------ CumSum

TEST_CASE("CumSum: every axis, exclusive and reverse, float / double / int") {
  const Dims dims{3, 4, 5};
  const Tensor x = RandomF32(dims, 4);
  const auto xd = ToDoubles(x);
  for (int64_t axis = -3; axis < 3; ++axis) {
    for (int excl = 0; excl < 2; ++excl) {
      for (int rev = 0; rev < 2; ++rev) {
        CAPTURE(axis);
        CAPTURE(excl);
        CAPTURE(rev);
        const int64_t a = axis < 0 ? axis + 3 : axis;
        const Tensor ax = axis % 2 ? Typed<int32_t>(DType::kInt32, {}, {static_cast<int32_t>(axis)})
                                   : I64({}, {axis});
        const auto out = RunNode("CumSum", {x, ax},
                                 {AttrInt("exclusive", excl), AttrInt("reverse", rev)}, Opts(14));
        CHECK(out[0].dims() == dims);
        int64_t outer = 1, inner = 1;
        for (int64_t k = 0; k < a; ++k) outer *= dims[k];
        for (int64_t k = a + 1; k < 3; ++k) inner *= dims[k];
        const int64_t n = dims[a];
        std::vector<double> want(xd.size());
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) {
            for (int64_t i = 0; i < n; ++i) {
              double s = 0;
              for (int64_t t = 0; t < n; ++t) {
                const bool in = rev ? (excl ? t > i : t >= i) : (excl ? t < i : t <= i);
                if (in) s += xd[(o * n + t) * inner + j];
              }
              want[(o * n + i) * inner + j] = s;
            }
          }
        }
        CheckClose(out[0], want, 1e-5);
      }
    }
  }
  const auto d = RunNode("CumSum", {Typed<double>(DType::kFloat64, {3}, {1, 2, 3}), I64({}, {0})},
                         {AttrInt("exclusive", 1)}, Opts(11));
  CHECK(d[0].data<double>()[2] == 3.0);
  const auto i = RunNode("CumSum",
                         {Typed<int32_t>(DType::kInt32, {2, 2}, {1, 2, 3, 4}),
                          Typed<int32_t>(DType::kInt32, {1}, {-2})},
                         {AttrInt("reverse", 1)});
  CHECK(std::vector<int32_t>(i[0].data<int32_t>(), i[0].data<int32_t>() + 4) ==
        std::vector<int32_t>{4, 6, 3, 4});
  CHECK_THROWS_AS(RunNode("CumSum", {x, I64({}, {3})}), Error);
  CHECK_THROWS_AS(RunNode("CumSum", {x, I64({2}, {0, 1})}), Error);
  CHECK(RunNode("CumSum", {Tensor(DType::kFloat32, {0, 2}), I64({}, {0})})[0].dims() == Dims{0, 2});
}

// -------------------------------------------------------------------------------------- TopK

TEST_CASE("TopK: every axis and k, largest / smallest, ties by lower index") {
  const Dims dims{3, 6, 4};
  std::vector<float> v(72);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 5) % 7 % 4);  // ties
  const Tensor x = F32(dims, v);
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    for (int64_t k = 0; k <= dims[a]; ++k) {
      for (int largest = 0; largest < 2; ++largest) {
        CAPTURE(axis);
        CAPTURE(k);
        CAPTURE(largest);
        const auto out = RunNode("TopK", {x, I64({1}, {k})},
                                 {AttrInt("axis", axis), AttrInt("largest", largest)}, Opts(11, 2));
        Dims od = dims;
        od[a] = k;
        REQUIRE(out[0].dims() == od);
        REQUIRE(out[1].dims() == od);
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < a; ++d) outer *= dims[d];
        for (int64_t d = a + 1; d < 3; ++d) inner *= dims[d];
        const int64_t n = dims[a];
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < inner; ++j) {
            std::vector<int64_t> order(n);
            std::iota(order.begin(), order.end(), 0);
            const auto val = [&](int64_t i) { return v[(o * n + i) * inner + j]; };
            std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
              return largest ? val(p) > val(q) : val(p) < val(q);
            });
            for (int64_t r = 0; r < k; ++r) {
              CHECK(out[1].data<int64_t>()[(o * k + r) * inner + j] == order[r]);
              CHECK(out[0].data<float>()[(o * k + r) * inner + j] == val(order[r]));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("TopK: opset 1 attribute k, opset 10 input, dtypes, errors") {
  const Tensor x = F32({2, 3}, {1, 3, 2, 6, 5, 4});
  const auto v1 = RunNode("TopK", {x}, {AttrInt("k", 2)}, Opts(1, 2));
  CHECK(ToDoubles(v1[0]) == std::vector<double>{3, 2, 6, 5});
  CHECK(std::vector<int64_t>(v1[1].data<int64_t>(), v1[1].data<int64_t>() + 4) ==
        std::vector<int64_t>{1, 2, 0, 1});
  const auto v10 = RunNode("TopK", {x, I64({1}, {1})}, {AttrInt("axis", 0)}, Opts(10, 2));
  CHECK(ToDoubles(v10[0]) == std::vector<double>{6, 5, 4});
  const auto u = RunNode(
      "TopK",
      {Typed<uint64_t>(DType::kUInt64, {4}, {5, 18446744073709551615ull, 0, 5}), I64({1}, {3})}, {},
      Opts(24, 2));
  CHECK(u[0].data<uint64_t>()[0] == 18446744073709551615ull);
  CHECK(u[1].data<int64_t>()[1] == 0);
  CHECK(u[1].data<int64_t>()[2] == 3);
  // Only the indices requested.
  const auto only = RunNode("TopK", {x, I64({1}, {2})}, {}, Opts(11, 2));
  CHECK(only[1].data<int64_t>()[0] == 1);
  CHECK_THROWS_AS(RunNode("TopK", {x, I64({1}, {4})}, {}, Opts(11, 2)), Error);
  CHECK_THROWS_AS(RunNode("TopK", {x, I64({1}, {-1})}, {}, Opts(11, 2)), Error);
  CHECK_THROWS_AS(RunNode("TopK", {x, I64({2}, {1, 1})}, {}, Opts(11, 2)), Error);
  CHECK_THROWS_AS(
      RunNode("TopK", {Typed<int32_t>(DType::kInt32, {2}, {1, 2}), I64({1}, {1})}, {}, Opts(10, 2)),
      Error);
}

}  // namespace
}  // namespace simplecpp
