// Tests for graph/ops/matmul_integer.cc (MatMulInteger) and QLinearMatMul (graph/ops/qlinear.cc):
// all four signedness combinations, every zero-point layout (absent, scalar, per row [M] and
// batched [D,M,1], per column [N] and batched [D,1,N]), batch broadcasting, 1-D operands,
// constant (prepacked) and run-time B, extreme values, zero-point shape errors; QLinearMatMul
// requantization in double with round-half-even against a scalar reference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16.h"
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
    int64_t rem = t, oa = 0, ob = 0, sa = 1, sb = 1;
    for (size_t i = nb; i-- > 0;) {
      const int64_t idx = rem % batch[i];
      rem /= batch[i];
      const int64_t ia = static_cast<int64_t>(i) - static_cast<int64_t>(nb - ba.size());
      const int64_t ib = static_cast<int64_t>(i) - static_cast<int64_t>(nb - bb.size());
      if (ia >= 0) { oa += (ba[ia] == 1 ? 0 : idx) * sa; sa *= ba[ia]; }
      if (ib >= 0) { ob += (bb[ib] == 1 ? 0 : idx) * sb; sb *= bb[ib]; }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          s += (At8(a, (oa * m + i) * k + kk) - za(oa, i)) * (At8(b, (ob * k + kk) * n + j) - zb(ob, j));
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

int32_t RefRequant(int64_t acc, float mult, int32_t zp, int32_t lo, int32_t hi) {
  double v = std::nearbyint(static_cast<double>(static_cast<int32_t>(acc)) * static_cast<double>(mult) + zp);
  return static_cast<int32_t>(std::min<double>(std::max<double>(v, lo), hi));
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
