// float16 / bfloat16 through the reduction family (Reduce*, ArgMax/ArgMin, CumSum, TopK): each
// 16-bit result is checked against a double-precision reference computed on the exactly widened
// 16-bit inputs, on every compiled Highway target.
//
// Tolerance (sums and the composite reductions). The kernels accumulate in float32 and round each
// output once to 16 bits. With eps32 = 2^-23, n the number of reduced elements and
// S = sum over the reduced set of |term| (term = x, x*x or |x|), the float32 value before the
// final rounding is within
//   e32 = n * eps32 * S                      (Sum, SumSquare, L1; any summation order)
//   e32 = eps32 * S + eps32 * |ref|          (Mean: the sum's error / n, then one division)
//   e32 = (n + 2) * eps32 * |ref|            (L2 = sqrt(Q): sqrt halves Q's relative error)
//   e32 = n * eps32 * S / sum + 2 eps32|ref| (LogSum: log turns a relative error into an absolute)
//   e32 = (n + 2) * eps32 * |ref|            (Prod: one rounding per multiplication)
//   e32 = (n + 8) * eps32 + 2 * eps32 * |ref| (LogSumExp: terms in (0, 1], Exp within a few ulp)
// of the exact value ref, and rounding to 16 bits (unit roundoff eps16 / 2) adds at most
// eps16 / 2 * (|ref| + e32) plus half the smallest 16-bit subnormal, so we check
//   |y16 - ref| <= eps16 * |ref| + 2 * e32 + min_subnormal16
// with eps16 = 2^-10 (float16) or 2^-7 (bfloat16) and min_subnormal16 = 2^-24 or 2^-133.
// Max / Min / ArgMax / ArgMin / TopK are exact (comparisons of exact widenings).
// CumSum: output i is a float32 running sum of i + 1 terms rounded once:
//   |y16[i] - ref[i]| <= eps16 * |ref[i]| + 2 * (i + 1) * eps32 * S_i + min_subnormal16,
// S_i = sum of |x| over the first i + 1 terms in scan order.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"
#include "kernels/targets.h"

namespace simplecpp::testing {
namespace {

using kernels::Float16Kind;

Float16Kind KindOf(DType dt) {
  return dt == DType::kBFloat16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
}
double Eps16(DType dt) {
  return dt == DType::kBFloat16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
}
double MinSub16(DType dt) {
  return dt == DType::kBFloat16 ? std::ldexp(1.0, -133) : std::ldexp(1.0, -24);
}
const double kEps32 = std::ldexp(1.0, -23);

RunNodeOptions Opts(int64_t opset, std::vector<int> constant_inputs = {}, int num_outputs = 1) {
  RunNodeOptions o;
  o.opset = opset;
  o.constant_inputs = std::move(constant_inputs);
  o.num_outputs = num_outputs;
  return o;
}

// Random values in [lo, hi), rounded to dt.
Tensor Random16(const Dims& dims, uint32_t seed, DType dt, float lo, float hi) {
  const Tensor f = RandomF32(dims, seed, lo, hi);
  Tensor t(dt, dims);
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<uint16_t>()[i] = kernels::Narrow16One(KindOf(dt), f.data<float>()[i]);
  }
  return t;
}

std::vector<double> Widen(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = kernels::Widen16One(KindOf(t.dtype()), t.data<uint16_t>()[i]);
  }
  return v;
}

// Maps each input element (flat index) of `dims` to its output element when `reduced` axes are
// reduced; returns the number of outputs.
int64_t OutputIndexMap(const Dims& dims, const std::vector<bool>& reduced,
                       std::vector<int64_t>* map) {
  const int64_t total = std::accumulate(dims.begin(), dims.end(), int64_t{1},
                                        [](int64_t a, int64_t b) { return a * b; });
  map->assign(static_cast<size_t>(total), 0);
  int64_t out_count = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (!reduced[k]) out_count *= dims[k];
  }
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t f = 0; f < total; ++f) {
    int64_t o = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (!reduced[k]) o = o * dims[k] + idx[k];
    }
    (*map)[f] = o;
    for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return out_count;
}

struct RefOut {
  std::vector<double> value;
  std::vector<double> tol;
};

// Double reference and tolerance (see the file comment) of `op` over `reduced` axes.
RefOut ReduceReference(const std::string& op, const std::vector<double>& x, const Dims& dims,
                       const std::vector<bool>& reduced, DType dt) {
  std::vector<int64_t> map;
  const int64_t outs = OutputIndexMap(dims, reduced, &map);
  const size_t no = static_cast<size_t>(outs);
  std::vector<double> acc(no, 0.0), abs_acc(no, 0.0), cnt(no, 0.0);
  std::vector<double> mx(no, -std::numeric_limits<double>::infinity());
  std::vector<double> mn(no, std::numeric_limits<double>::infinity());
  std::vector<bool> nan(no, false);
  if (op == "ReduceProd") std::fill(acc.begin(), acc.end(), 1.0);
  for (size_t f = 0; f < x.size(); ++f) {
    const size_t o = static_cast<size_t>(map[f]);
    const double v = x[f];
    cnt[o] += 1;
    if (std::isnan(v)) nan[o] = true;
    mx[o] = std::max(mx[o], v);
    mn[o] = std::min(mn[o], v);
    if (op == "ReduceSumSquare" || op == "ReduceL2") {
      acc[o] += v * v;
      abs_acc[o] += v * v;
    } else if (op == "ReduceL1") {
      acc[o] += std::fabs(v);
      abs_acc[o] += std::fabs(v);
    } else if (op == "ReduceProd") {
      acc[o] *= v;
    } else {
      acc[o] += v;
      abs_acc[o] += std::fabs(v);
    }
  }
  if (op == "ReduceLogSumExp") {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (size_t f = 0; f < x.size(); ++f) {
      const size_t o = static_cast<size_t>(map[f]);
      if (std::isfinite(mx[o])) acc[o] += std::exp(x[f] - mx[o]);
    }
  }
  RefOut r;
  r.value.resize(no);
  r.tol.resize(no);
  const double eps16 = Eps16(dt);
  for (size_t o = 0; o < no; ++o) {
    const double n = cnt[o];
    double ref = 0, e32 = 0;
    if (op == "ReduceSum" || op == "ReduceSumSquare" || op == "ReduceL1") {
      ref = acc[o];
      e32 = n * kEps32 * abs_acc[o];
    } else if (op == "ReduceMean") {
      ref = acc[o] / n;
      e32 = kEps32 * abs_acc[o] + kEps32 * std::fabs(ref);
    } else if (op == "ReduceL2") {
      ref = std::sqrt(acc[o]);
      e32 = (n + 2) * kEps32 * ref;
    } else if (op == "ReduceLogSum") {
      ref = std::log(acc[o]);
      e32 = n * kEps32 * abs_acc[o] / std::fabs(acc[o]) + 2 * kEps32 * std::fabs(ref);
    } else if (op == "ReduceProd") {
      ref = acc[o];
      e32 = (n + 2) * kEps32 * std::fabs(ref);
    } else if (op == "ReduceMax") {
      ref = nan[o] ? std::nan("") : mx[o];
    } else if (op == "ReduceMin") {
      ref = nan[o] ? std::nan("") : mn[o];
    } else if (op == "ReduceLogSumExp") {
      ref = std::isfinite(mx[o]) ? mx[o] + std::log(acc[o]) : mx[o];
      e32 = (n + 8) * kEps32 + 2 * kEps32 * std::fabs(ref);
    } else {
      FAIL("unknown op " << op);
    }
    if (op != "ReduceMax" && op != "ReduceMin" && nan[o]) ref = std::nan("");
    r.value[o] = ref;
    r.tol[o] = op == "ReduceMax" || op == "ReduceMin"
                   ? 0.0
                   : eps16 * std::fabs(ref) + 2 * e32 + MinSub16(dt);
  }
  return r;
}

void CheckClose(const Tensor& got16, const RefOut& ref) {
  const std::vector<double> got = Widen(got16);
  REQUIRE(got.size() == ref.value.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref.value[i];
    CAPTURE(i);
    CAPTURE(g);
    CAPTURE(r);
    if (std::isnan(r) || std::isnan(g)) {
      CHECK(std::isnan(r) == std::isnan(g));
      continue;
    }
    if (g == r) continue;  // also equal infinities
    CHECK(std::fabs(g - r) <= ref.tol[i]);
  }
}

const char* const kReduceOps[] = {"ReduceSum",       "ReduceMean",     "ReduceMax", "ReduceMin",
                                  "ReduceProd",      "ReduceL1",       "ReduceL2",  "ReduceLogSum",
                                  "ReduceLogSumExp", "ReduceSumSquare"};

// Input range per op: positive for LogSum, near 1 for Prod (products of 1000 terms stay in range).
std::pair<float, float> RangeOf(const std::string& op) {
  if (op == "ReduceLogSum") return {0.05f, 2.0f};
  if (op == "ReduceProd") return {0.9f, 1.1f};
  return {-2.0f, 2.0f};
}

// Runs one Reduce* node at opset 18 (axes as a constant input) and checks it.
void CheckReduce(const std::string& op, DType dt, const Dims& dims, std::vector<int64_t> axes,
                 bool keepdims, bool noop_with_empty_axes, uint32_t seed) {
  CAPTURE(op);
  CAPTURE(DTypeName(dt));
  CAPTURE(DimsToString(dims));
  CAPTURE(keepdims);
  const auto [lo, hi] = RangeOf(op);
  const Tensor x = Random16(dims, seed, dt, lo, hi);
  std::vector<bool> reduced(dims.size(), axes.empty() && !noop_with_empty_axes);
  for (int64_t a : axes) reduced[a < 0 ? a + static_cast<int64_t>(dims.size()) : a] = true;
  Dims out_dims;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (!reduced[k]) {
      out_dims.push_back(dims[k]);
    } else if (keepdims) {
      out_dims.push_back(1);
    }
  }
  std::vector<Tensor> inputs = {x};
  RunNodeOptions opts;
  opts.opset = 18;
  if (!axes.empty()) {
    inputs.push_back(I64({static_cast<int64_t>(axes.size())}, axes));
    opts.constant_inputs = {1};
  }
  const auto out = RunNode(op, inputs,
                           {AttrInt("keepdims", keepdims ? 1 : 0),
                            AttrInt("noop_with_empty_axes", noop_with_empty_axes ? 1 : 0)},
                           opts);
  REQUIRE(out[0].dtype() == dt);
  CHECK(out[0].dims() == out_dims);
  CheckClose(out[0], ReduceReference(op, Widen(x), dims, reduced, dt));
}

TEST_CASE("Reduce* float16/bfloat16 match a double reference on every target") {
  struct Case {
    Dims dims;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {{1}, {}},          {{3}, {0}},         {{17}, {-1}},        {{1000}, {}},
      {{3, 17}, {1}},     {{3, 17}, {0}},     {{3, 17}, {-2, -1}}, {{2, 17, 5}, {0, 2}},
      {{2, 17, 5}, {-2}}, {{4, 1, 3}, {1}},   {{17, 1000}, {0}},   {{5, 3000}, {-1}},
      {{1000, 3}, {0}},   {{3, 600, 2}, {1}}, {{2, 0, 3}, {1}},
  };
  for (const auto& t : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 1;
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      for (const char* op : kReduceOps) {
        for (const Case& c : cases) {
          for (bool keepdims : {true, false}) {
            CheckReduce(op, dt, c.dims, c.axes, keepdims, false, ++seed);
          }
        }
        // noop_with_empty_axes: only the element-wise part runs (x*x, |x|, log x, ...).
        CheckReduce(op, dt, {3, 17}, {}, true, true, ++seed);
      }
    }
  }
}

TEST_CASE("Reduce* float16: inner > one column chunk, many rows, multi-block rows") {
  // [2, 5, 1100] over axis 1: inner 1100 spans several column chunks; [2, 9000] over the last
  // axis: rows longer than one widened block.
  for (const auto& t : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      for (const char* op : {"ReduceSum", "ReduceMax", "ReduceLogSumExp", "ReduceL2"}) {
        CheckReduce(op, dt, {2, 5, 1100}, {1}, true, false, 7);
        CheckReduce(op, dt, {2, 9000}, {-1}, false, false, 8);
        CheckReduce(op, dt, {9000, 2}, {0}, false, false, 9);
      }
    }
  }
}

TEST_CASE("Reduce* float16: opsets, NaN, empty reductions, bfloat16 constraint") {
  const Tensor x = Random16({3, 4}, 5, DType::kFloat16, -2.0f, 2.0f);
  // Opset 11 / 13: axes as an attribute (ReduceMean-13) and float16 accepted.
  for (int64_t opset : {1, 11, 13}) {
    RunNodeOptions o;
    o.opset = opset;
    const auto out = RunNode("ReduceMean", {x}, {AttrInts("axes", {1})}, o);
    REQUIRE(out[0].dtype() == DType::kFloat16);
    CheckClose(out[0],
               ReduceReference("ReduceMean", Widen(x), {3, 4}, {false, true}, DType::kFloat16));
  }
  // bfloat16 joins the type constraint in opset 13.
  const Tensor xb = Random16({3, 4}, 5, DType::kBFloat16, -2.0f, 2.0f);
  {
    RunNodeOptions o;
    o.opset = 11;
    CHECK_THROWS(RunNode("ReduceSum", {xb}, {AttrInts("axes", {1})}, o));
    o.opset = 13;
    o.constant_inputs = {1};
    CHECK(RunNode("ReduceSum", {xb, I64({1}, {1})}, {}, o)[0].dtype() == DType::kBFloat16);
  }
  // NaN propagates through Max / Min / Sum.
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    Tensor y = Random16({2, 5}, 9, dt, -1.0f, 1.0f);
    y.data<uint16_t>()[3] = dt == DType::kBFloat16 ? 0x7FC0 : 0x7E00;
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceLogSumExp"}) {
      CAPTURE(op);
      const auto out = RunNode(op, {y, I64({1}, {1})}, {}, Opts(18, {1}));
      const std::vector<double> v = Widen(out[0]);
      CHECK(std::isnan(v[0]));
      CHECK(!std::isnan(v[1]));
    }
  }
  // A reduction over zero elements gives the identity.
  const Tensor empty(DType::kFloat16, {2, 0});
  const auto sum = RunNode("ReduceSum", {empty, I64({1}, {1})}, {}, Opts(18, {1}));
  CHECK(Widen(sum[0]) == std::vector<double>{0.0, 0.0});
  const auto mx = RunNode("ReduceMax", {empty, I64({1}, {1})}, {}, Opts(18, {1}));
  CHECK(Widen(mx[0])[0] == -std::numeric_limits<double>::infinity());
  const auto prod = RunNode("ReduceProd", {empty, I64({1}, {1})}, {}, Opts(18, {1}));
  CHECK(Widen(prod[0])[1] == 1.0);
}

// ----------------------------------------------------------------------- ArgMax / ArgMin

// Values on a coarse grid so there are many ties.
Tensor Coarse16(const Dims& dims, uint32_t seed, DType dt) {
  const Tensor f = RandomF32(dims, seed, -4.0f, 4.0f);
  Tensor t(dt, dims);
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<uint16_t>()[i] =
        kernels::Narrow16One(KindOf(dt), std::round(f.data<float>()[i] * 2.0f) * 0.25f);
  }
  return t;
}

TEST_CASE("ArgMax/ArgMin float16/bfloat16 pick the same index as a double reference") {
  struct Case {
    Dims dims;
    int64_t axis;
  };
  const std::vector<Case> cases = {{{1}, 0},     {{17}, 0},       {{1000}, -1},      {{3, 17}, 1},
                                   {{3, 17}, 0}, {{2, 17, 5}, 1}, {{2, 300, 3}, -2}, {{4, 600}, 0}};
  for (const auto& t : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 100;
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      for (const Case& c : cases) {
        Tensor x = Coarse16(c.dims, ++seed, dt);
        if (x.num_elements() > 5) x.data<uint16_t>()[5] = dt == DType::kBFloat16 ? 0x7FC0 : 0x7E00;
        const std::vector<double> v = Widen(x);
        const int64_t rank = static_cast<int64_t>(c.dims.size());
        const int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
        int64_t outer = 1, inner = 1;
        for (int64_t k = 0; k < axis; ++k) outer *= c.dims[k];
        for (int64_t k = axis + 1; k < rank; ++k) inner *= c.dims[k];
        const int64_t n = c.dims[axis];
        for (bool is_max : {true, false}) {
          for (int64_t last : {0, 1}) {
            CAPTURE(DTypeName(dt));
            CAPTURE(DimsToString(c.dims));
            CAPTURE(is_max);
            CAPTURE(last);
            const auto out = RunNode(is_max ? "ArgMax" : "ArgMin", {x},
                                     {AttrInt("axis", c.axis), AttrInt("keepdims", 0),
                                      AttrInt("select_last_index", last)},
                                     Opts(13));
            REQUIRE(out[0].dtype() == DType::kInt64);
            REQUIRE(out[0].num_elements() == outer * inner);
            for (int64_t o = 0; o < outer; ++o) {
              for (int64_t j = 0; j < inner; ++j) {
                // Reference: NaN wins (first NaN, or last with select_last); else the extreme
                // value.
                int64_t best = -1;
                for (int64_t i = 0; i < n; ++i) {
                  const double a = v[(o * n + i) * inner + j];
                  if (best < 0) {
                    best = i;
                    continue;
                  }
                  const double b = v[(o * n + best) * inner + j];
                  bool take;
                  if (std::isnan(b)) {
                    take = last && std::isnan(a);
                  } else if (std::isnan(a)) {
                    take = true;
                  } else if (last) {
                    take = is_max ? a >= b : a <= b;
                  } else {
                    take = is_max ? a > b : a < b;
                  }
                  if (take) best = i;
                }
                CHECK(out[0].data<int64_t>()[o * inner + j] == best);
              }
            }
          }
        }
      }
    }
  }
  // bfloat16 from opset 13 on; float16 in every version.
  const Tensor xb = Coarse16({4}, 3, DType::kBFloat16);
  CHECK_THROWS(RunNode("ArgMax", {xb}, {}, Opts(12)));
  CHECK(RunNode("ArgMax", {Coarse16({4}, 3, DType::kFloat16)}, {}, Opts(1))[0].dtype() ==
        DType::kInt64);
}

// ------------------------------------------------------------------------------------- TopK

TEST_CASE("TopK float16/bfloat16 returns the input values in the reference order") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    for (int64_t largest : {1, 0}) {
      const Dims dims = {3, 50, 4};
      Tensor x = Coarse16(dims, 11, dt);
      x.data<uint16_t>()[7] = dt == DType::kBFloat16 ? 0x7FC0 : 0x7E00;
      const std::vector<double> v = Widen(x);
      const int64_t k = 7;
      CAPTURE(DTypeName(dt));
      CAPTURE(largest);
      const auto out = RunNode("TopK", {x, I64({1}, {k})},
                               {AttrInt("axis", 1), AttrInt("largest", largest)}, Opts(24, {1}, 2));
      REQUIRE(out[0].dtype() == dt);
      REQUIRE(out[0].dims() == Dims{3, k, 4});
      for (int64_t o = 0; o < 3; ++o) {
        for (int64_t j = 0; j < 4; ++j) {
          std::vector<int64_t> idx(50);
          std::iota(idx.begin(), idx.end(), 0);
          const auto val = [&](int64_t i) { return v[(o * 50 + i) * 4 + j]; };
          // NaN above every number; ties by index.
          const auto key_gt = [&](int64_t a, int64_t b) {
            const double va = val(a), vb = val(b);
            if (std::isnan(va)) return !std::isnan(vb);
            if (std::isnan(vb)) return false;
            return va > vb;
          };
          std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
            return largest ? key_gt(a, b) : key_gt(b, a);
          });
          for (int64_t r = 0; r < k; ++r) {
            const int64_t pos = (o * k + r) * 4 + j;
            CHECK(out[1].data<int64_t>()[pos] == idx[r]);
            CHECK(out[0].data<uint16_t>()[pos] == x.data<uint16_t>()[(o * 50 + idx[r]) * 4 + j]);
          }
        }
      }
    }
  }
  // float16 from TopK-1 on, bfloat16 only from opset 24.
  const Tensor xh = Coarse16({6}, 2, DType::kFloat16);
  CHECK(RunNode("TopK", {xh}, {AttrInt("k", 2)}, Opts(1, {}, 2))[0].dtype() == DType::kFloat16);
  CHECK_THROWS(
      RunNode("TopK", {Coarse16({6}, 2, DType::kBFloat16), I64({1}, {2})}, {}, Opts(11, {1}, 2)));
}

// ----------------------------------------------------------------------------------- CumSum

TEST_CASE("CumSum float16/bfloat16 match a double reference on every target") {
  struct Case {
    Dims dims;
    int64_t axis;
  };
  const std::vector<Case> cases = {{{1}, 0},     {{17}, 0},        {{1000}, -1},     {{3, 17}, 1},
                                   {{3, 17}, 0}, {{2, 17, 5}, -2}, {{2, 700, 3}, 1}, {{3, 600}, 0}};
  for (const auto& t : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    uint32_t seed = 200;
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      const double eps16 = Eps16(dt);
      for (const Case& c : cases) {
        const Tensor x = Random16(c.dims, ++seed, dt, -2.0f, 2.0f);
        const std::vector<double> v = Widen(x);
        const int64_t rank = static_cast<int64_t>(c.dims.size());
        const int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
        int64_t outer = 1, inner = 1;
        for (int64_t k = 0; k < axis; ++k) outer *= c.dims[k];
        for (int64_t k = axis + 1; k < rank; ++k) inner *= c.dims[k];
        const int64_t n = c.dims[axis];
        for (int64_t exclusive : {0, 1}) {
          for (int64_t reverse : {0, 1}) {
            CAPTURE(DTypeName(dt));
            CAPTURE(DimsToString(c.dims));
            CAPTURE(exclusive);
            CAPTURE(reverse);
            const auto out = RunNode("CumSum", {x, I64({}, {c.axis})},
                                     {AttrInt("exclusive", exclusive), AttrInt("reverse", reverse)},
                                     Opts(14, {1}));
            REQUIRE(out[0].dtype() == dt);
            REQUIRE(out[0].dims() == c.dims);
            const std::vector<double> got = Widen(out[0]);
            for (int64_t o = 0; o < outer; ++o) {
              for (int64_t j = 0; j < inner; ++j) {
                double sum = 0, abs_sum = 0;
                for (int64_t s = 0; s < n; ++s) {
                  const int64_t i = reverse ? n - 1 - s : s;
                  const int64_t f = (o * n + i) * inner + j;
                  if (!exclusive) {
                    sum += v[f];
                    abs_sum += std::fabs(v[f]);
                  }
                  const double tol =
                      eps16 * std::fabs(sum) + 2 * (s + 1) * kEps32 * abs_sum + MinSub16(dt);
                  CAPTURE(f);
                  CHECK(std::fabs(got[f] - sum) <= tol);
                  if (exclusive) {
                    sum += v[f];
                    abs_sum += std::fabs(v[f]);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  // 16-bit CumSum starts with CumSum-14.
  CHECK_THROWS(RunNode("CumSum", {Random16({4}, 1, DType::kFloat16, -1, 1), I64({}, {0})}, {},
                       Opts(11, {1})));
}

}  // namespace
}  // namespace simplecpp::testing
