// Tests for graph/ops/quant/matmul_integer.cc (MatMulInteger) and QLinearMatMul (qlinear.cc):
// all four signedness combinations, every zero-point layout (absent, scalar, per row [M] and
// batched [D,M,1], per column [N] and batched [D,1,N]), batch broadcasting, 1-D operands,
// constant (prepacked) and run-time B, extreme values, zero-point shape errors. QLinearMatMul:
// a grid of every scale / zero-point layout (a per tensor, [M], [M,1], [D,M,1], [D1,D2,M,1]; b per
// tensor, [N], [1,N], [D,1,N]; y per tensor, [M], the output's shape with N replaced by 1) x
// signedness x u8/s8 output x constant/run-time b on every compiled target, with power-of-two
// scales and odd zero points so that many results are exact .5 ties, compared bit-exactly with a
// scalar reference (product in double, round half to even, then + zero point); layout errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"
#include "kernels/targets.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

Tensor Random8(DType t, Dims dims, uint32_t seed, int extreme = 0) {
  Tensor x(t, std::move(dims));
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(x.raw_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    p[i] = extreme == 1 ? (t == DType::kInt8 ? 0x7F : 0xFF)
           : extreme == 2 ? (t == DType::kInt8 ? 0x80 : 0x00)
                          : static_cast<uint8_t>(rng());
  }
  return x;
}

int32_t At8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// The matrix of an operand with batch dims `operand_batch` that output matrix t (row-major over
// the output's batch dims `batch`) reads under numpy broadcasting.
int64_t OperandMatrix(const Dims& batch, const Dims& operand_batch, int64_t t) {
  const size_t lead = batch.size() - operand_batch.size();
  int64_t index = 0, stride = 1;
  for (size_t i = batch.size(); i-- > lead;) {
    const int64_t idx = t % batch[i];
    t /= batch[i];
    const int64_t d = operand_batch[i - lead];
    index += (d == 1 ? 0 : idx) * stride;
    stride *= d;
  }
  return index;
}

// int64 reference of MatMulInteger for A [Da.., M, K], B [Db.., K, N] (rank >= 2 both) with
// zero points indexed by (a batch, row) / (b batch, column) functions.
template <typename ZA, typename ZB>
std::vector<int64_t> Ref(const Tensor& a, const Tensor& b, ZA za, ZB zb, Dims* out_dims) {
  const Dims& da = a.dims();
  const Dims& db = b.dims();
  const int64_t m = da[da.size() - 2], k = da.back(), n = db.back();
  const Dims ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2);
  const size_t nb = std::max(ba.size(), bb.size());
  Dims batch(nb);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t ia = static_cast<int64_t>(i) - static_cast<int64_t>(nb - ba.size());
    const int64_t ib = static_cast<int64_t>(i) - static_cast<int64_t>(nb - bb.size());
    batch[i] = std::max(ia >= 0 ? ba[ia] : 1, ib >= 0 ? bb[ib] : 1);
  }
  *out_dims = batch;
  out_dims->push_back(m);
  out_dims->push_back(n);
  int64_t total = 1;
  for (int64_t d : batch) total *= d;
  std::vector<int64_t> out;
  for (int64_t t = 0; t < total; ++t) {
    const int64_t oa = OperandMatrix(batch, ba, t), ob = OperandMatrix(batch, bb, t);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          s += (At8(a, (oa * m + i) * k + kk) - za(oa, i)) *
               (At8(b, (ob * k + kk) * n + j) - zb(ob, j));
        }
        out.push_back(s);
      }
    }
  }
  return out;
}

void CheckInt32(const Tensor& got, const std::vector<int64_t>& want, const Dims& dims) {
  REQUIRE(got.dtype() == DType::kInt32);
  REQUIRE(got.dims() == dims);
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got.data<int32_t>()[i] == static_cast<int32_t>(static_cast<uint32_t>(want[i])));
  }
}

TEST_CASE("MatMulInteger: signedness x zero-point layouts x constant/run-time B") {
  uint32_t seed = 1;
  for (DType ta : {DType::kUInt8, DType::kInt8}) {
    for (DType tb : {DType::kUInt8, DType::kInt8}) {
      for (int layout = 0; layout < 4; ++layout) {
        for (int constant = 0; constant < 2; ++constant) {
          CAPTURE(DTypeName(ta)); CAPTURE(DTypeName(tb)); CAPTURE(layout); CAPTURE(constant);
          const int64_t m = 5, k = 37, n = 19;
          const Tensor a = Random8(ta, {2, m, k}, seed++);
          const Tensor b = Random8(tb, {k, n}, seed++);
          std::vector<Tensor> in = {a, b};
          Tensor za, zb;
          if (layout == 1) {  // scalars
            za = Random8(ta, {}, seed++);
            zb = Random8(tb, {}, seed++);
          } else if (layout == 2) {  // [M] / [N]
            za = Random8(ta, {m}, seed++);
            zb = Random8(tb, {n}, seed++);
          } else if (layout == 3) {  // batched per row, b per column [1, N]
            za = Random8(ta, {2, m, 1}, seed++);
            zb = Random8(tb, {1, n}, seed++);
          }
          if (layout > 0) {
            in.push_back(za);
            in.push_back(zb);
          }
          auto zaf = [&](int64_t batch, int64_t i) -> int64_t {
            if (layout == 0) return 0;
            if (layout == 1) return At8(za, 0);
            if (layout == 2) return At8(za, i);
            return At8(za, batch * m + i);
          };
          auto zbf = [&](int64_t, int64_t j) -> int64_t {
            if (layout == 0) return 0;
            if (layout == 1) return At8(zb, 0);
            return At8(zb, j);
          };
          Dims dims;
          const auto want = Ref(a, b, zaf, zbf, &dims);
          RunNodeOptions opt;
          opt.opset = 10;
          if (constant) opt.constant_inputs = {1};
          for (const auto& t : kernels::CompiledTargets()) {
            kernels::ScopedTarget st(t);
            CAPTURE(t.name);
            CheckInt32(RunNode("MatMulInteger", in, {}, opt)[0], want, dims);
          }
        }
      }
    }
  }
}

TEST_CASE("MatMulInteger: batch broadcasting, batched b zero point, 1-D operands") {
  const Tensor a = Random8(DType::kUInt8, {3, 1, 4, 6}, 1);
  const Tensor b = Random8(DType::kInt8, {2, 6, 5}, 2);
  const Tensor zb = Random8(DType::kInt8, {2, 1, 5}, 3);
  const Tensor za = Random8(DType::kUInt8, {}, 4);
  Dims dims;
  const auto want = Ref(a, b, [&](int64_t, int64_t) -> int64_t { return At8(za, 0); },
                        [&](int64_t batch, int64_t j) -> int64_t { return At8(zb, batch * 5 + j); }, &dims);
  CheckInt32(RunNode("MatMulInteger", {a, b, za, zb}, {}, {.opset = 10})[0], want, dims);
  // 1-D A [K] and 1-D B [K].
  const Tensor av = Random8(DType::kInt8, {7}, 5);
  const Tensor bv = Random8(DType::kUInt8, {7}, 6);
  auto out = RunNode("MatMulInteger", {av, bv}, {}, {.opset = 10});
  int64_t s = 0;
  for (int i = 0; i < 7; ++i) s += At8(av, i) * At8(bv, i);
  REQUIRE(out[0].dims() == Dims{});
  CHECK(out[0].data<int32_t>()[0] == s);
}

TEST_CASE("MatMulInteger: extreme values wrap like int32 for large K") {
  for (DType ta : {DType::kUInt8, DType::kInt8}) {
    for (DType tb : {DType::kUInt8, DType::kInt8}) {
      const int64_t k = 70000;
      const Tensor a = Random8(ta, {2, k}, 1, 1);
      const Tensor b = Random8(tb, {k, 3}, 2, 2);
      const Tensor za = Random8(ta, {}, 3, 2);
      const Tensor zb = Random8(tb, {}, 4, 1);
      Dims dims;
      const auto want = Ref(a, b, [&](int64_t, int64_t) -> int64_t { return At8(za, 0); },
                            [&](int64_t, int64_t) -> int64_t { return At8(zb, 0); }, &dims);
      CHECK(std::llabs(want[0]) > (int64_t{1} << 31));  // really wraps
      CheckInt32(RunNode("MatMulInteger", {a, b, za, zb}, {}, {.opset = 10})[0], want, dims);
    }
  }
}

TEST_CASE("MatMulInteger: errors") {
  const Tensor a = Random8(DType::kUInt8, {4, 3}, 1);
  const Tensor b = Random8(DType::kUInt8, {3, 5}, 2);
  // a_zero_point of the wrong length.
  CHECK_THROWS_AS(RunNode("MatMulInteger", {a, b, Random8(DType::kUInt8, {3}, 3)}, {}, {.opset = 10}), Error);
  // b_zero_point of the wrong shape.
  CHECK_THROWS_AS(RunNode("MatMulInteger", {a, b, Tensor(), Random8(DType::kUInt8, {4}, 3)}, {}, {.opset = 10}),
                  Error);
  // Zero point dtype differs from the operand's.
  CHECK_THROWS_AS(RunNode("MatMulInteger", {a, b, Random8(DType::kInt8, {}, 3)}, {}, {.opset = 10}), Error);
  // Inner dimensions differ.
  CHECK_THROWS_AS(RunNode("MatMulInteger", {a, Random8(DType::kUInt8, {4, 5}, 2)}, {}, {.opset = 10}), Error);
  // float inputs are not MatMulInteger's.
  CHECK_THROWS_AS(RunNode("MatMulInteger", {F32({1, 1}, {1}), F32({1, 1}, {1})}, {}, {.opset = 10}), Error);
}

// Requantization as ONNX Runtime and QuantizeLinear's formula do it: the product in double,
// rounded half to even (the default rounding mode), then the zero point added, then saturation.
int32_t RefRequant(int64_t acc, float mult, int32_t zp, int32_t lo, int32_t hi) {
  const double r =
      std::nearbyint(static_cast<double>(static_cast<int32_t>(acc)) * static_cast<double>(mult));
  return static_cast<int32_t>(std::min<double>(std::max<double>(r + zp, lo), hi));
}

// One layout of a QLinearMatMul parameter in the grid: the operand's shape it goes with and the
// parameter's own shape. `per`: one value per row (a, y) or column (b), else per tensor;
// `matrix`: batched, one set of values per stored matrix.
struct ParamCase {
  std::string name;
  Dims operand;  // A's or B's shape (unused for y)
  Dims param;    // empty: per tensor; for y, built from the output's shape
  bool per = false, matrix = false;
};

constexpr int64_t kGm = 3, kGk = 7, kGn = 5;

std::vector<ParamCase> AGridLayouts() {
  return {{"a per tensor", {2, kGm, kGk}, {}},
          {"a [M]", {2, kGm, kGk}, {kGm}, true},
          {"a [M,1]", {kGm, kGk}, {kGm, 1}, true},
          {"a [D,M,1]", {2, kGm, kGk}, {2, kGm, 1}, true, true},
          {"a [D1,D2,M,1]", {3, 2, kGm, kGk}, {3, 2, kGm, 1}, true, true}};
}

std::vector<ParamCase> BGridLayouts() {
  return {{"b per tensor", {2, kGk, kGn}, {}},
          {"b [N]", {kGk, kGn}, {kGn}, true},
          {"b [1,N]", {kGk, kGn}, {1, kGn}, true},
          {"b [D,1,N]", {2, kGk, kGn}, {2, 1, kGn}, true, true}};
}

std::vector<ParamCase> YGridLayouts() {
  return {{"y per tensor", {}, {}}, {"y [M]", {}, {kGm}, true}, {"y [..,M,1]", {}, {}, true, true}};
}

// Index of the value for (stored matrix, row or column i) in a parameter of layout l.
int64_t ParamIndex(const ParamCase& l, int64_t matrix, int64_t i, int64_t count) {
  return !l.per ? 0 : l.matrix ? matrix * count + i : i;
}

// Odd zero points so that results on .5 ties tell "round, then add the zero point" from "add,
// then round".
int32_t OddZeroPoint(DType t, std::mt19937& rng) {
  static const int32_t u8[] = {3, 127, 255}, s8[] = {3, -5, 127};
  return (t == DType::kInt8 ? s8 : u8)[rng() % 3];
}

// Power-of-two scales put double(acc) * multiplier exactly on .5 often (about one element in
// fourteen of the grid); the others (0.3 * 0.7 / 0.9) check that the multiplier is a_scale *
// b_scale / y_scale in float32, in that order.
float GridScale(std::mt19937& rng, char which) {
  static const float a[] = {0.125f, 0.5f, 4.0f, 1.0f, 2.0f, 0.3f},
                     b[] = {0.5f, 1.0f, 2.0f, 0.25f, 0.7f},
                     y[] = {4.0f, 8.0f, 2.0f, 16.0f, 1.0f, 0.9f};
  return which == 'a' ? a[rng() % 6] : which == 'b' ? b[rng() % 5] : y[rng() % 6];
}

Tensor I8OrU8(DType t, const Dims& dims, const std::vector<int32_t>& v) {
  Tensor x(t, dims);
  auto* p = static_cast<uint8_t*>(x.raw_data());
  for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<uint8_t>(v[i]);
  return x;
}

// Number of elements of a shape.
int64_t ParamSize(const Dims& d) {
  int64_t s = 1;
  for (int64_t x : d) s *= x;
  return s;
}

// One case of the QLinearMatMul layout grid.
struct GridCase {
  ParamCase a, b, y;
  DType ta, tb, ty;
  bool constant_b;
};

// A grid case's inputs and the expected output bytes.
struct GridData {
  std::vector<Tensor> inputs;
  Dims dims;
  std::vector<int64_t> acc;
  std::vector<int32_t> want;
  int64_t ties = 0;  // elements whose double(acc) * multiplier is exactly k + .5
};

const int32_t kGridRange[2][2] = {{0, 255}, {-128, 127}};  // [signed][lo, hi]

// Operand values (A [.., M, K] when per_row, else B [.., K, N]) within 3 of their row's
// (column's) zero point z, so that the sums stay small and many results do not saturate.
std::vector<int32_t> NearZeroPoints(const Dims& dims, const ParamCase& l,
                                    const std::vector<int32_t>& z, bool per_row, bool s8,
                                    std::mt19937& rng) {
  std::vector<int32_t> v(ParamSize(dims));
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    const int64_t index = per_row ? ParamIndex(l, i / (kGm * kGk), i / kGk % kGm, kGm)
                                  : ParamIndex(l, i / (kGk * kGn), i % kGn, kGn);
    const int32_t x = z[index] + static_cast<int32_t>(rng() % 7) - 3;
    v[i] = std::min(std::max(x, kGridRange[s8][0]), kGridRange[s8][1]);
  }
  return v;
}

GridData MakeGridData(GridCase& g, std::mt19937& rng) {
  const bool as8 = g.ta == DType::kInt8, bs8 = g.tb == DType::kInt8, ys8 = g.ty == DType::kInt8;
  std::vector<int32_t> za(ParamSize(g.a.param)), zb(ParamSize(g.b.param));
  for (auto& z : za) z = kGridRange[as8][0] + static_cast<int32_t>(rng() % 256);
  for (auto& z : zb) z = kGridRange[bs8][0] + static_cast<int32_t>(rng() % 256);
  const Tensor a = I8OrU8(g.ta, g.a.operand, NearZeroPoints(g.a.operand, g.a, za, true, as8, rng));
  const Tensor b = I8OrU8(g.tb, g.b.operand, NearZeroPoints(g.b.operand, g.b, zb, false, bs8, rng));
  GridData d;
  d.acc = Ref(
      a, b, [&](int64_t mat, int64_t i) -> int64_t { return za[ParamIndex(g.a, mat, i, kGm)]; },
      [&](int64_t mat, int64_t j) -> int64_t { return zb[ParamIndex(g.b, mat, j, kGn)]; }, &d.dims);
  if (g.y.matrix) {  // the output's shape with N replaced by 1
    g.y.param = d.dims;
    g.y.param.back() = 1;
  }
  std::vector<float> as(ParamSize(g.a.param)), bs(ParamSize(g.b.param)), ys(ParamSize(g.y.param));
  for (auto& v : as) v = GridScale(rng, 'a');
  for (auto& v : bs) v = GridScale(rng, 'b');
  for (auto& v : ys) v = GridScale(rng, 'y');
  std::vector<int32_t> zy(ys.size());
  for (auto& z : zy) z = OddZeroPoint(g.ty, rng);
  d.inputs = {a,
              F32(g.a.param, as),
              I8OrU8(g.ta, g.a.param, za),
              b,
              F32(g.b.param, bs),
              I8OrU8(g.tb, g.b.param, zb),
              F32(g.y.param, ys),
              I8OrU8(g.ty, g.y.param, zy)};
  // The expected bytes, element by element; output matrix t reads A's and B's broadcast
  // matrices oa, ob, and each parameter is indexed by the matrix it belongs to.
  const Dims batch(d.dims.begin(), d.dims.end() - 2);
  const Dims ba(g.a.operand.begin(), g.a.operand.end() - 2);
  const Dims bb(g.b.operand.begin(), g.b.operand.end() - 2);
  d.want.resize(d.acc.size());
  for (int64_t t = 0; t < ParamSize(batch); ++t) {
    const int64_t oa = OperandMatrix(batch, ba, t), ob = OperandMatrix(batch, bb, t);
    for (int64_t r = 0; r < kGm; ++r) {
      const int64_t iy = ParamIndex(g.y, t, r, kGm);
      for (int64_t c = 0; c < kGn; ++c) {
        const int64_t i = (t * kGm + r) * kGn + c;
        const float mult =
            as[ParamIndex(g.a, oa, r, kGm)] * bs[ParamIndex(g.b, ob, c, kGn)] / ys[iy];
        d.want[i] = RefRequant(d.acc[i], mult, zy[iy], kGridRange[ys8][0], kGridRange[ys8][1]);
        const double prod = static_cast<double>(d.acc[i]) * static_cast<double>(mult);
        d.ties += prod - std::floor(prod) == 0.5;
      }
    }
  }
  return d;
}

// Runs the case on every compiled target and compares every output byte.
void CheckGridCase(const GridCase& g, const GridData& d) {
  RunNodeOptions opt;
  opt.opset = 10;
  if (g.constant_b) opt.constant_inputs.push_back(3);  // b
  for (const auto& target : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(target);
    CAPTURE(target.name);
    const Tensor y = RunNode("QLinearMatMul", d.inputs, {}, opt)[0];
    REQUIRE(y.dtype() == g.ty);
    REQUIRE(y.dims() == d.dims);
    int64_t bad = 0, first_bad = -1;
    for (int64_t i = 0; i < static_cast<int64_t>(d.want.size()); ++i) {
      if (At8(y, i) != d.want[i] && bad++ == 0) first_bad = i;
    }
    CAPTURE(first_bad);
    CAPTURE(first_bad >= 0 ? d.acc[first_bad] : 0);
    CAPTURE(first_bad >= 0 ? At8(y, first_bad) : 0);
    CAPTURE(first_bad >= 0 ? d.want[first_bad] : 0);
    CHECK(bad == 0);
  }
}

TEST_CASE("QLinearMatMul: scale and zero-point layouts x signedness x ties, every target") {
  std::mt19937 rng(2024);
  int cases = 0;
  int64_t ties = 0, elements = 0;
  for (const ParamCase& la : AGridLayouts()) {
    for (const ParamCase& lb : BGridLayouts()) {
      for (const ParamCase& ly : YGridLayouts()) {
        for (DType ta : {DType::kUInt8, DType::kInt8}) {
          for (DType tb : {DType::kUInt8, DType::kInt8}) {
            for (DType ty : {DType::kUInt8, DType::kInt8}) {
              for (bool constant_b : {false, true}) {
                GridCase g{la, lb, ly, ta, tb, ty, constant_b};
                CAPTURE(la.name);
                CAPTURE(lb.name);
                CAPTURE(ly.name);
                CAPTURE(DTypeName(ta));
                CAPTURE(DTypeName(tb));
                CAPTURE(DTypeName(ty));
                CAPTURE(constant_b);
                const GridData d = MakeGridData(g, rng);
                CheckGridCase(g, d);
                ++cases;
                ties += d.ties;
                elements += static_cast<int64_t>(d.want.size());
              }
            }
          }
        }
      }
    }
  }
  CHECK(cases == 5 * 4 * 3 * 2 * 2 * 2 * 2);
  // The data really is tie-laden: at least one element in twenty lands exactly on .5.
  CHECK(ties * 20 >= elements);
}

TEST_CASE("QLinearMatMul: scale and zero-point layout errors name the input") {
  const Tensor a = Random8(DType::kUInt8, {2, 4, 3}, 1);  // M = 4, K = 3
  const Tensor b = Random8(DType::kUInt8, {3, 5}, 2);     // N = 5
  const Tensor z = Random8(DType::kUInt8, {}, 3);
  auto run = [&](const Tensor& as, const Tensor& za, const Tensor& bs, const Tensor& zb,
                 const Tensor& ys, const Tensor& zy) {
    return RunNode("QLinearMatMul", {a, as, za, b, bs, zb, ys, zy}, {}, {.opset = 10});
  };
  const Tensor one = F32({}, {0.5f});
  auto f = [](Dims d) { return F32(d, std::vector<float>(ParamSize(d), 0.5f)); };
  auto u = [](Dims d) { return Tensor(DType::kUInt8, std::move(d)); };
  // a_scale [K] instead of [M].
  CHECK_THROWS_WITH_AS(run(f({3}), z, one, z, one, z), doctest::Contains("a_scale has shape [3]"),
                       Error);
  // a_scale batched with the wrong batch, or with K kept.
  CHECK_THROWS_WITH_AS(run(f({3, 4, 1}), z, one, z, one, z), doctest::Contains("a_scale"), Error);
  CHECK_THROWS_WITH_AS(run(f({2, 4, 3}), z, one, z, one, z), doctest::Contains("a_scale"), Error);
  // A one-value a_scale of higher rank than A.
  CHECK_THROWS_WITH_AS(run(f({1, 1, 1, 1}), z, one, z, one, z), doctest::Contains("a_scale"),
                       Error);
  // b_scale [M,N] and [K] instead of [1,N] / [N].
  CHECK_THROWS_WITH_AS(run(one, z, f({4, 5}), z, one, z),
                       doctest::Contains("b_scale has shape [4,5]"), Error);
  CHECK_THROWS_WITH_AS(run(one, z, f({3}), z, one, z), doctest::Contains("b_scale"), Error);
  // y_scale per column, y_zero_point with N kept or K replaced.
  CHECK_THROWS_WITH_AS(run(one, z, one, z, f({5}), z), doctest::Contains("y_scale"), Error);
  CHECK_THROWS_WITH_AS(run(one, z, one, z, one, u({2, 4, 5})), doctest::Contains("y_zero_point"),
                       Error);
  CHECK_THROWS_WITH_AS(run(one, z, one, z, one, u({2, 1, 5})), doctest::Contains("y_zero_point"),
                       Error);
  // The message lists the allowed shapes.
  CHECK_THROWS_WITH_AS(
      run(f({5}), z, one, z, one, z),
      doctest::Contains("must be a scalar, [M] = [4] or A's shape with K replaced by 1"), Error);
  // Each accepted shape runs.
  CHECK_NOTHROW(run(f({4}), u({4}), f({1, 5}), u({1, 5}), f({2, 4, 1}), u({4})));
  CHECK_NOTHROW(run(f({2, 4, 1}), u({2, 4, 1}), f({5}), u({5}), f({4}), u({2, 4, 1})));
}

TEST_CASE("QLinearMatMul: 1-D b with a and y per row") {
  // A [M=4, K=3] x B [K] -> Y [M]: the output's last axis is M, so y per row is [M].
  const Tensor a = I8OrU8(DType::kUInt8, {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const Tensor b = I8OrU8(DType::kInt8, {3}, {1, -1, 2});
  const std::vector<float> as = {0.5f, 0.25f, 1.0f, 0.125f}, ys = {1.0f, 2.0f, 0.5f, 4.0f};
  const std::vector<int32_t> zy = {3, -5, 127, 1};
  const auto out = RunNode("QLinearMatMul",
                           {a, F32({4}, as), Tensor(DType::kUInt8, {}), b, F32({}, {0.5f}),
                            Tensor(DType::kInt8, {}), F32({4}, ys), I8OrU8(DType::kInt8, {4}, zy)},
                           {}, {.opset = 10});
  REQUIRE(out[0].dims() == Dims{4});
  for (int64_t r = 0; r < 4; ++r) {
    const int64_t acc = At8(a, r * 3) - At8(a, r * 3 + 1) + 2 * At8(a, r * 3 + 2);
    CHECK(At8(out[0], r) == RefRequant(acc, as[r] * 0.5f / ys[r], zy[r], -128, 127));
  }
}

TEST_CASE("QLinearMatMul: per tensor and per column b, all signedness, float32 and float16 scales") {
  uint32_t seed = 100;
  for (DType ta : {DType::kUInt8, DType::kInt8}) {
    for (DType tb : {DType::kUInt8, DType::kInt8}) {
      for (DType ty : {DType::kUInt8, DType::kInt8}) {
        for (int per_col = 0; per_col < 2; ++per_col) {
          const int64_t m = 3, k = 21, n = 6;
          const Tensor a = Random8(ta, {2, m, k}, seed++);
          const Tensor b = Random8(tb, {k, n}, seed++);
          const Tensor za = Random8(ta, {}, seed++);
          const Tensor zb = Random8(tb, per_col ? Dims{n} : Dims{}, seed++);
          const Tensor zy = Random8(ty, {}, seed++);
          std::vector<float> bs(per_col ? n : 1);
          for (size_t j = 0; j < bs.size(); ++j) bs[j] = 0.01f * static_cast<float>(j + 1);
          const float as = 0.03f, ys = 0.7f;
          const Tensor bst = F32(per_col ? Dims{n} : Dims{}, bs);
          auto out = RunNode("QLinearMatMul", {a, F32({}, {as}), za, b, bst, zb, F32({}, {ys}), zy}, {},
                             {.opset = 10});
          REQUIRE(out[0].dtype() == ty);
          Dims dims;
          const auto acc = Ref(a, b, [&](int64_t, int64_t) -> int64_t { return At8(za, 0); },
                               [&](int64_t, int64_t j) -> int64_t { return At8(zb, per_col ? j : 0); }, &dims);
          const int32_t lo = ty == DType::kInt8 ? -128 : 0, hi = ty == DType::kInt8 ? 127 : 255;
          for (size_t i = 0; i < acc.size(); ++i) {
            const float mult = as * bs[per_col ? i % n : 0] / ys;
            CHECK(At8(out[0], static_cast<int64_t>(i)) == RefRequant(acc[i], mult, At8(zy, 0), lo, hi));
          }
        }
      }
    }
  }
  // float16 scales (opset 21): the multiplier is computed in float16.
  const Tensor a = Random8(DType::kUInt8, {2, 4}, 1);
  const Tensor b = Random8(DType::kUInt8, {4, 3}, 2);
  auto h = [](float v) { return Tensor::FromVector<uint16_t>(DType::kFloat16, {}, {kernels::FloatToHalfBits(v)}); };
  auto out = RunNode("QLinearMatMul", {a, h(0.05f), Random8(DType::kUInt8, {}, 3, 2), b, h(0.02f),
                                       Random8(DType::kUInt8, {}, 4, 2), h(0.3f), Random8(DType::kUInt8, {}, 5, 2)},
                     {}, {.opset = 21});
  auto r16 = [](float v) { return kernels::HalfBitsToFloat(kernels::FloatToHalfBits(v)); };
  const float mult = r16(r16(r16(0.05f) * r16(0.02f)) / r16(0.3f));
  Dims dims;
  const auto acc = Ref(a, b, [](int64_t, int64_t) -> int64_t { return 0; }, [](int64_t, int64_t) -> int64_t { return 0; },
                       &dims);
  for (size_t i = 0; i < acc.size(); ++i) CHECK(out[0].data<uint8_t>()[i] == RefRequant(acc[i], mult, 0, 0, 255));
  // float16 scales are not allowed at opset 10.
  CHECK_THROWS_AS(RunNode("QLinearMatMul", {a, h(0.05f), Random8(DType::kUInt8, {}, 3), b, h(0.02f),
                                            Random8(DType::kUInt8, {}, 4), h(0.3f), Random8(DType::kUInt8, {}, 5)},
                          {}, {.opset = 10}),
                  Error);
  // b_scale of the wrong length.
  CHECK_THROWS_AS(RunNode("QLinearMatMul", {a, F32({}, {1}), Random8(DType::kUInt8, {}, 3), b, F32({2}, {1, 1}),
                                            Random8(DType::kUInt8, {}, 4), F32({}, {1}), Random8(DType::kUInt8, {}, 5)},
                          {}, {.opset = 10}),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing
