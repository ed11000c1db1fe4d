// Tests for graph/ops/indexing_set.cc, indexing_math.cc and indexing_random.cc: NonZero,
// Compress, Unique (dynamic output shapes), CumProd, Det, MaxUnpool, NonMaxSuppression and the
// random ops, against straightforward references written here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "graph/op_test_util.h"
#include "graph/registry.h"
#include "graph/ops/tensor_test_util.h"

namespace simplecpp {
namespace {

using tensor_test::CheckSame;
using tensor_test::ErrorCodeOf;
using tensor_test::Pattern;
using tensor_test::Unravel;
using testing::AttrFloat;
using testing::AttrInt;
using testing::AttrInts;
using testing::Bool;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

constexpr int kRuntime = static_cast<int>(ErrorCode::kRuntime);
constexpr int kInvalidArgument = static_cast<int>(ErrorCode::kInvalidArgument);

template <typename T>
std::vector<T> Vec(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

// -------------------------------------------------------------------------------------- NonZero

TEST_CASE("NonZero: coordinates in row-major order, scalar, empty, dtypes") {
  const Dims d = {3, 1, 4};
  std::vector<float> v(12, 0.0f);
  v[1] = 2;
  v[5] = -1;
  v[11] = NAN;
  const Tensor y = RunNode("NonZero", {F32(d, v)})[0];
  REQUIRE(y.dims() == Dims{3, 3});
  CHECK(Vec<int64_t>(y) == std::vector<int64_t>{0, 1, 2, 0, 0, 0, 1, 1, 3});
  const Tensor yb = RunNode("NonZero", {Bool({2, 2}, {false, true, true, false})})[0];
  CHECK(Vec<int64_t>(yb) == std::vector<int64_t>{0, 1, 1, 0});
  const Tensor ys = RunNode("NonZero", {F32({}, {3.0f})})[0];
  CHECK(ys.dims() == Dims{1, 1});
  const Tensor ye = RunNode("NonZero", {F32({2, 0}, {})})[0];
  CHECK(ye.dims() == Dims{2, 0});
  const Tensor yz = RunNode("NonZero", {I32({4}, {0, 0, 0, 0})})[0];
  CHECK(yz.dims() == Dims{1, 0});
  Tensor h(DType::kFloat16, {3});
  h.data<uint16_t>()[0] = 0x8000;  // -0
  h.data<uint16_t>()[2] = 0x0001;  // smallest subnormal
  CHECK(Vec<int64_t>(RunNode("NonZero", {h})[0]) == std::vector<int64_t>{2});
}

// ------------------------------------------------------------------------------------- Compress

TEST_CASE("Compress: axis, no axis, short condition, strings, errors") {
  const Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  CHECK(Vec<float>(RunNode("Compress", {x, Bool({3}, {false, true, true})}, {AttrInt("axis", 0)})[0]) ==
        std::vector<float>{3, 4, 5, 6});
  const Tensor c1 = RunNode("Compress", {x, Bool({2}, {false, true})}, {AttrInt("axis", -1)})[0];
  CHECK(c1.dims() == Dims{3, 1});
  CHECK(Vec<float>(c1) == std::vector<float>{2, 4, 6});
  const Tensor c2 = RunNode("Compress", {x, Bool({5}, {false, true, false, false, true})})[0];
  CHECK(Vec<float>(c2) == std::vector<float>{2, 5});
  // Condition shorter than the axis: the rest is dropped.
  CHECK(RunNode("Compress", {x, Bool({1}, {true})}, {AttrInt("axis", 0)})[0].dims() == Dims{1, 2});
  // All false / empty condition.
  CHECK(RunNode("Compress", {x, Bool({0}, {})}, {AttrInt("axis", 1)})[0].dims() == Dims{3, 0});
  const Tensor s = Pattern(DType::kString, {4});
  const Tensor cs = RunNode("Compress", {s, Bool({4}, {true, false, false, true})})[0];
  CHECK(cs.strings() == std::vector<std::string>{s.strings()[0], s.strings()[3]});
  // A true beyond the axis is an error; false beyond it is ignored.
  CHECK(ErrorCodeOf([&] { RunNode("Compress", {x, Bool({4}, {true, false, false, true})}, {AttrInt("axis", 0)}); }) ==
        kRuntime);
  CHECK(RunNode("Compress", {x, Bool({4}, {true, false, false, false})}, {AttrInt("axis", 0)})[0].dims() ==
        Dims{1, 2});
  CHECK(ErrorCodeOf([&] { RunNode("Compress", {x, Bool({1}, {true})}, {AttrInt("axis", 2)}); }) ==
        kInvalidArgument);
}

// --------------------------------------------------------------------------------------- Unique

TEST_CASE("Unique: sorted / first-occurrence order, four outputs, axis, strings") {
  RunNodeOptions o;
  o.opset = 11;
  o.num_outputs = 4;
  const Tensor x = F32({6}, {2, 1, 1, 3, 4, 3});
  auto r = RunNode("Unique", {x}, {AttrInt("sorted", 0)}, o);
  CHECK(Vec<float>(r[0]) == std::vector<float>{2, 1, 3, 4});
  CHECK(Vec<int64_t>(r[1]) == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(Vec<int64_t>(r[2]) == std::vector<int64_t>{0, 1, 1, 2, 3, 2});
  CHECK(Vec<int64_t>(r[3]) == std::vector<int64_t>{1, 2, 2, 1});
  r = RunNode("Unique", {x}, {}, o);
  CHECK(Vec<float>(r[0]) == std::vector<float>{1, 2, 3, 4});
  CHECK(Vec<int64_t>(r[1]) == std::vector<int64_t>{1, 0, 3, 4});
  CHECK(Vec<int64_t>(r[2]) == std::vector<int64_t>{1, 0, 0, 2, 3, 2});
  CHECK(Vec<int64_t>(r[3]) == std::vector<int64_t>{2, 1, 2, 1});
  // Axis 0 of a 3x3 matrix with a repeated row; axis -1 (columns).
  const Tensor m = F32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  r = RunNode("Unique", {m}, {AttrInt("axis", 0)}, o);
  CHECK(r[0].dims() == Dims{2, 3});
  CHECK(Vec<float>(r[0]) == std::vector<float>{1, 0, 0, 2, 3, 4});
  CHECK(Vec<int64_t>(r[2]) == std::vector<int64_t>{0, 0, 1});
  r = RunNode("Unique", {m}, {AttrInt("axis", -1)}, o);
  CHECK(r[0].dims() == Dims{3, 3});
  CHECK(Vec<float>(r[0]) == std::vector<float>{0, 0, 1, 0, 0, 1, 3, 4, 2});  // columns sorted
  CHECK(Vec<int64_t>(r[1]) == std::vector<int64_t>{1, 2, 0});
  // Randomized vs a std::map reference; int64 with negatives.
  std::vector<int64_t> v(50);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 37) % 11) - 5;
  r = RunNode("Unique", {I64({5, 10}, v)}, {}, o);
  std::map<int64_t, std::pair<int64_t, int64_t>> ref;  // value -> (first, count)
  for (size_t i = 0; i < v.size(); ++i) {
    auto it = ref.find(v[i]);
    if (it == ref.end()) ref[v[i]] = {static_cast<int64_t>(i), 1};
    else ++it->second.second;
  }
  std::vector<int64_t> vals, firsts, counts;
  for (auto& [k, p] : ref) {
    vals.push_back(k);
    firsts.push_back(p.first);
    counts.push_back(p.second);
  }
  CHECK(Vec<int64_t>(r[0]) == vals);
  CHECK(Vec<int64_t>(r[1]) == firsts);
  CHECK(Vec<int64_t>(r[3]) == counts);
  for (size_t i = 0; i < v.size(); ++i) CHECK(vals[Vec<int64_t>(r[2])[i]] == v[i]);
  // Strings, and only the first output requested.
  Tensor s(DType::kString, {4});
  s.strings() = {"b", "a", "b", "c"};
  RunNodeOptions o1;
  o1.opset = 11;
  const Tensor su = RunNode("Unique", {s}, {}, o1)[0];
  CHECK(su.strings() == std::vector<std::string>{"a", "b", "c"});
  // Empty input.
  r = RunNode("Unique", {F32({0}, {})}, {}, o);
  CHECK(r[0].dims() == Dims{0});
  CHECK(r[3].dims() == Dims{0});
}

// -------------------------------------------------------------------------------------- CumProd

TEST_CASE("CumProd: axis, exclusive, reverse, int32") {
  RunNodeOptions o;
  o.opset = 26;
  const Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(Vec<float>(RunNode("CumProd", {x, I64({}, {1})}, {}, o)[0]) == std::vector<float>{1, 2, 6, 4, 20, 120});
  CHECK(Vec<float>(RunNode("CumProd", {x, I32({}, {0})}, {}, o)[0]) == std::vector<float>{1, 2, 3, 4, 10, 18});
  CHECK(Vec<float>(RunNode("CumProd", {x, I64({}, {-1})}, {AttrInt("exclusive", 1)}, o)[0]) ==
        std::vector<float>{1, 1, 2, 1, 4, 20});
  CHECK(Vec<float>(RunNode("CumProd", {x, I64({}, {1})}, {AttrInt("reverse", 1)}, o)[0]) ==
        std::vector<float>{6, 6, 3, 120, 30, 6});
  CHECK(Vec<float>(RunNode("CumProd", {x, I64({}, {1})}, {AttrInt("reverse", 1), AttrInt("exclusive", 1)}, o)[0]) ==
        std::vector<float>{6, 3, 1, 30, 6, 1});
  CHECK(Vec<int32_t>(RunNode("CumProd", {I32({4}, {2, -3, 4, 0}), I64({}, {0})}, {}, o)[0]) ==
        std::vector<int32_t>{2, -6, -24, 0});
  CHECK(ErrorCodeOf([&] { RunNode("CumProd", {x, I64({}, {2})}, {}, o); }) == kInvalidArgument);
}

// ------------------------------------------------------------------------------------------ Det

TEST_CASE("Det: 1x1..5x5, batched, singular, pivoting needed") {
  CHECK(Vec<float>(RunNode("Det", {F32({2, 2}, {1, 2, 3, 4})})[0])[0] == doctest::Approx(-2.0));
  // Zero leading pivot: [[0, 1], [1, 0]] has det -1.
  CHECK(Vec<float>(RunNode("Det", {F32({2, 2}, {0, 1, 1, 0})})[0])[0] == doctest::Approx(-1.0));
  CHECK(Vec<float>(RunNode("Det", {F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})})[0])[0] ==
        doctest::Approx(0.0).epsilon(1e-5));
  // Batched [2, 3, M, M] vs a Laplace-expansion reference.
  std::function<double(const std::vector<double>&, int)> laplace = [&](const std::vector<double>& a, int m) {
    if (m == 1) return a[0];
    double s = 0;
    for (int j = 0; j < m; ++j) {
      std::vector<double> minor;
      for (int i = 1; i < m; ++i) {
        for (int k = 0; k < m; ++k) {
          if (k != j) minor.push_back(a[i * m + k]);
        }
      }
      s += (j % 2 ? -1 : 1) * a[j] * laplace(minor, m - 1);
    }
    return s;
  };
  for (int m = 1; m <= 5; ++m) {
    CAPTURE(m);
    const Tensor x = testing::RandomF32({2, 3, m, m}, static_cast<uint32_t>(m), -2.0f, 2.0f);
    const Tensor y = RunNode("Det", {x})[0];
    REQUIRE(y.dims() == Dims{2, 3});
    for (int b = 0; b < 6; ++b) {
      std::vector<double> a(x.data<float>() + b * m * m, x.data<float>() + (b + 1) * m * m);
      CHECK(y.data<float>()[b] == doctest::Approx(laplace(a, m)).epsilon(1e-4));
    }
  }
  CHECK(RunNode("Det", {F32({0, 2, 2}, {})})[0].dims() == Dims{0});
  CHECK(ErrorCodeOf([&] { RunNode("Det", {F32({2, 3}, {1, 2, 3, 4, 5, 6})}); }) == kInvalidArgument);
}

// ------------------------------------------------------------------------------------ MaxUnpool

TEST_CASE("MaxUnpool: default and explicit output shape, index checks") {
  const Tensor x = F32({1, 1, 2, 2}, {5, 6, 7, 8});
  const Tensor i = I64({1, 1, 2, 2}, {5, 7, 13, 15});
  const Tensor y = RunNode("MaxUnpool", {x, i}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})})[0];
  REQUIRE(y.dims() == Dims{1, 1, 4, 4});
  std::vector<float> want(16, 0.0f);
  want[5] = 5;
  want[7] = 6;
  want[13] = 7;
  want[15] = 8;
  CHECK(Vec<float>(y) == want);
  const Tensor y5 = RunNode("MaxUnpool", {x, i, I64({4}, {1, 1, 5, 5})},
                            {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})})[0];
  CHECK(y5.dims() == Dims{1, 1, 5, 5});
  // I indexes the default 4x4 layout; each value keeps its (row, col) in the 5x5 output.
  std::vector<float> want5(25, 0.0f);
  want5[6] = 5;
  want5[8] = 6;
  want5[16] = 7;
  want5[18] = 8;
  CHECK(Vec<float>(y5) == want5);
  CHECK(ErrorCodeOf([&] {
          RunNode("MaxUnpool", {x, i, I64({4}, {1, 1, 3, 3})},
                  {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
        }) == kRuntime);
  CHECK(ErrorCodeOf([&] {
          RunNode("MaxUnpool", {x, i, I64({4}, {2, 1, 4, 4})},
                  {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
        }) == kInvalidArgument);
  // Pads shrink the default shape: (2-1)*2 - 1 - 0 + 2 = 3.
  CHECK(RunNode("MaxUnpool", {x, I64({1, 1, 2, 2}, {0, 1, 2, 8})},
                {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2}), AttrInts("pads", {1, 1, 0, 0})})[0]
            .dims() == Dims{1, 1, 3, 3});
  CHECK(ErrorCodeOf([&] {
          RunNode("MaxUnpool", {x, I64({1, 1, 2, 2}, {0, 1, 2, 16})},
                  {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
        }) == kRuntime);
  CHECK(ErrorCodeOf([&] {
          RunNode("MaxUnpool", {x, I64({1, 1, 2, 2}, {0, -1, 2, 3})},
                  {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
        }) == kRuntime);
}

// ---------------------------------------------------------------------------- NonMaxSuppression

TEST_CASE("NonMaxSuppression: IoU suppression, thresholds, center format, classes") {
  RunNodeOptions o;
  o.opset = 11;
  const Tensor boxes = F32({1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                       0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
  const Tensor scores = F32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  auto run = [&](int64_t max_out, float iou, float score) {
    return Vec<int64_t>(RunNode("NonMaxSuppression",
                                {boxes, scores, I64({1}, {max_out}), F32({1}, {iou}), F32({1}, {score})},
                                {}, o)[0]);
  };
  CHECK(run(3, 0.5f, 0.0f) == std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5});
  CHECK(run(2, 0.5f, 0.0f) == std::vector<int64_t>{0, 0, 3, 0, 0, 0});
  CHECK(run(3, 0.5f, 0.4f) == std::vector<int64_t>{0, 0, 3, 0, 0, 0});
  CHECK(run(0, 0.5f, 0.0f).empty());
  // Optional inputs omitted: max_output 0 -> nothing.
  CHECK(RunNode("NonMaxSuppression", {boxes, scores}, {}, o)[0].dims() == Dims{0, 3});
  // Center format: same boxes as (xc, yc, w, h) give the same selection.
  std::vector<float> c;
  for (int b = 0; b < 6; ++b) {
    const float* p = boxes.data<float>() + b * 4;
    c.insert(c.end(), {(p[1] + p[3]) / 2, (p[0] + p[2]) / 2, p[3] - p[1], p[2] - p[0]});
  }
  CHECK(Vec<int64_t>(RunNode("NonMaxSuppression",
                             {F32({1, 6, 4}, c), scores, I64({1}, {3}), F32({1}, {0.5f}), F32({1}, {0.0f})},
                             {AttrInt("center_point_box", 1)}, o)[0]) ==
        std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5});
  // Two batches, two classes: ordered by batch, class.
  const Tensor b2 = F32({2, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 5, 5, 6, 6});
  const Tensor s2 = F32({2, 2, 2}, {0.1f, 0.9f, 0.8f, 0.2f, 0.5f, 0.6f, 0.7f, 0.0f});
  CHECK(Vec<int64_t>(RunNode("NonMaxSuppression", {b2, s2, I64({1}, {5}), F32({1}, {0.5f})}, {}, o)[0]) ==
        std::vector<int64_t>{0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1});
  CHECK(ErrorCodeOf([&] { RunNode("NonMaxSuppression", {boxes, F32({1, 1, 5}, {1, 1, 1, 1, 1})}, {}, o); }) ==
        kInvalidArgument);
}

// ---------------------------------------------------------------------------------- Random ops

TEST_CASE("Random ops: seeded runs repeat, unseeded differ, ranges and moments") {
  const auto shape = AttrInts("shape", {200, 50});
  const Tensor u1 = RunNode("RandomUniform", {}, {shape, AttrFloat("seed", 3.0f), AttrFloat("low", -2.0f),
                                                  AttrFloat("high", 5.0f)})[0];
  const Tensor u2 = RunNode("RandomUniform", {}, {shape, AttrFloat("seed", 3.0f), AttrFloat("low", -2.0f),
                                                  AttrFloat("high", 5.0f)})[0];
  CHECK(u1.BitwiseEquals(u2));
  double sum = 0;
  for (float v : Vec<float>(u1)) {
    CHECK(v >= -2.0f);
    CHECK(v < 5.0f);
    sum += v;
  }
  CHECK(sum / u1.num_elements() == doctest::Approx(1.5).epsilon(0.05));
  const Tensor u3 = RunNode("RandomUniform", {}, {shape, AttrFloat("seed", 4.0f)})[0];
  CHECK_FALSE(u3.BitwiseEquals(RunNode("RandomUniform", {}, {shape, AttrFloat("seed", 5.0f)})[0]));
  const Tensor n1 = RunNode("RandomNormal", {}, {shape, AttrFloat("mean", 1.0f), AttrFloat("scale", 2.0f),
                                                 AttrInt("dtype", static_cast<int64_t>(DType::kFloat64))})[0];
  const Tensor n2 = RunNode("RandomNormal", {}, {shape, AttrFloat("mean", 1.0f), AttrFloat("scale", 2.0f),
                                                 AttrInt("dtype", static_cast<int64_t>(DType::kFloat64))})[0];
  REQUIRE(n1.dtype() == DType::kFloat64);
  CHECK_FALSE(n1.BitwiseEquals(n2));  // unseeded: fresh numbers per run
  double m = 0, sq = 0;
  for (double v : Vec<double>(n1)) {
    m += v;
    sq += v * v;
  }
  m /= n1.num_elements();
  CHECK(m == doctest::Approx(1.0).epsilon(0.1));
  CHECK(std::sqrt(sq / n1.num_elements() - m * m) == doctest::Approx(2.0).epsilon(0.05));
  // *Like: shape and dtype of the input (or the dtype attribute).
  const Tensor like = RunNode("RandomUniformLike", {Tensor(DType::kFloat16, {3, 7})}, {AttrFloat("seed", 1.0f)})[0];
  CHECK(like.dtype() == DType::kFloat16);
  CHECK(like.dims() == Dims{3, 7});
  const Tensor nl = RunNode("RandomNormalLike", {Tensor(DType::kInt32, {4})}, {AttrInt("dtype", 1)})[0];
  CHECK(nl.dtype() == DType::kFloat32);
  CHECK(ErrorCodeOf([&] { RunNode("RandomNormalLike", {Tensor(DType::kInt32, {4})}); }) != 0);
  // Bernoulli: p = 0 / 1 are exact; p = 0.3 averages near 0.3; seeded repeats.
  std::vector<float> p(4000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i < 1000 ? 0.0f : i < 2000 ? 1.0f : 0.3f;
  const Tensor bern = RunNode("Bernoulli", {F32({4000}, p)}, {AttrFloat("seed", 7.0f)})[0];
  const std::vector<float> bv = Vec<float>(bern);
  double ones = 0;
  for (size_t i = 0; i < bv.size(); ++i) {
    if (i < 1000) CHECK(bv[i] == 0.0f);
    else if (i < 2000) CHECK(bv[i] == 1.0f);
    else ones += bv[i];
  }
  CHECK(ones / 2000 == doctest::Approx(0.3).epsilon(0.15));
  CHECK(bern.BitwiseEquals(RunNode("Bernoulli", {F32({4000}, p)}, {AttrFloat("seed", 7.0f)})[0]));
  const Tensor bb = RunNode("Bernoulli", {F32({3}, {0, 1, 1})}, {AttrInt("dtype", static_cast<int64_t>(DType::kBool))})[0];
  CHECK(Vec<bool>(bb) == std::vector<bool>{false, true, true});
  // Never constant-folded: every random op reports deterministic() == false.
  for (const char* op : {"Bernoulli", "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"}) {
    CAPTURE(op);
    graph::Node node;
    node.op_type = op;
    node.inputs = {"x"};
    node.outputs = {"y"};
    node.attributes = {AttrInts("shape", {2})};
    const auto* factory = graph::OpRegistry::Global().Find("", op, 22);
    REQUIRE(factory != nullptr);
    CHECK_FALSE((*factory)(graph::OpInit(node, 22))->deterministic());
  }
}

}  // namespace
}  // namespace simplecpp
