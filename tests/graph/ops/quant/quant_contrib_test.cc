// Tests for the com.microsoft quantized contrib ops (graph/ops/quant/quant_contrib_*.cc):
// MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm, QLinearAdd/Mul/Sigmoid/LeakyRelu/Concat,
// QLinearGlobalAveragePool and QLinearAveragePool. References are scalar loops in this file:
// integer accumulation in int64, real-valued math in double, then round-half-even and
// saturation; integer outputs are compared bit-exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

RunNodeOptions Ms(std::vector<int> constant_inputs = {}) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "com.microsoft";
  o.constant_inputs = std::move(constant_inputs);
  return o;
}

Tensor Random8(DType t, Dims dims, uint32_t seed) {
  Tensor x(t, std::move(dims));
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(x.raw_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) p[i] = static_cast<uint8_t>(rng());
  return x;
}

Tensor Q8(DType t, Dims dims, const std::vector<int32_t>& v) {
  Tensor x(t, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kInt8) {
      x.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
    } else {
      x.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
    }
  }
  return x;
}
Tensor Zp(DType t, int32_t v) { return Q8(t, {}, {v}); }
Tensor Sc(float s) { return F32({}, {s}); }

int32_t At8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

int32_t QuantD(double v, double scale, int32_t zp, DType t) {
  const double lo = t == DType::kInt8 ? -128 : 0, hi = t == DType::kInt8 ? 127 : 255;
  double q = v / scale;
  if (std::isnan(q)) q = 0;
  q = std::nearbyint(q) + zp;
  return static_cast<int32_t>(std::min(hi, std::max(lo, q)));
}

const char* Name(DType t) { return t == DType::kInt8 ? "int8" : "uint8"; }

void CheckErrorNames(const std::function<void()>& fn, const std::string& node) {
  try {
    fn();
    FAIL("expected an error naming " << node);
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(node) != std::string::npos);
  }
}

// acc[m,n] = sum (a - za) * (b - zb[n]) for A [rows, K] (rows = all leading dims), B [K, N].
std::vector<int64_t> IntRef(const Tensor& a, const Tensor& b, int64_t rows, int64_t k, int64_t n,
                            int32_t za, const std::vector<int32_t>& zb) {
  std::vector<int64_t> acc(rows * n, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t q = 0; q < k; ++q)
        s += static_cast<int64_t>(At8(a, r * k + q) - za) *
             (At8(b, q * n + j) - zb[zb.size() > 1 ? j : 0]);
      acc[r * n + j] = s;
    }
  return acc;
}

TEST_CASE("MatMulIntegerToFloat: signedness, zero points, bias, odd shapes") {
  const DType kTypes[] = {DType::kUInt8, DType::kInt8};
  struct Shape {
    Dims a;
    int64_t k, n;
  };
  const Shape shapes[] = {{{1, 1}, 1, 1}, {{3, 17}, 17, 5}, {{2, 3, 4}, 4, 17}, {{1, 3}, 3, 1}};
  uint32_t seed = 1;
  for (DType ta : kTypes)
    for (DType tb : kTypes)
      for (const Shape& s : shapes)
        for (int mode = 0; mode < 3; ++mode)  // 0: no zp/bias, 1: scalar zp + bias, 2: per column
          for (bool const_b : {false, true}) {
            CAPTURE(Name(ta));
            CAPTURE(Name(tb));
            CAPTURE(DimsToString(s.a));
            CAPTURE(mode);
            const Tensor a = Random8(ta, s.a, seed++);
            const Tensor b = Random8(tb, {s.k, s.n}, seed++);
            const int64_t rows = a.num_elements() / s.k;
            const int32_t za = mode == 0 ? 0 : (ta == DType::kInt8 ? -3 : 130);
            std::vector<int32_t> zb{0};
            std::vector<float> bs{0.02f};
            if (mode == 1) zb = {tb == DType::kInt8 ? 5 : 120};
            if (mode == 2) {
              zb.clear();
              bs.clear();
              for (int64_t j = 0; j < s.n; ++j) {
                zb.push_back(tb == DType::kInt8 ? static_cast<int32_t>(j % 7) - 3
                                                : 125 + static_cast<int32_t>(j % 9));
                bs.push_back(0.01f + 0.003f * static_cast<float>(j));
              }
            }
            const Tensor bias = RandomF32({s.n}, seed++);
            std::vector<Tensor> in = {a, b, Sc(0.05f), F32({static_cast<int64_t>(bs.size())}, bs)};
            if (mode == 2 && s.n == 1) in[3] = F32({}, bs);
            if (mode > 0) {
              in.push_back(Zp(ta, za));
              in.push_back(mode == 1 || s.n == 1 ? Zp(tb, zb[0])
                                                 : Q8(tb, {static_cast<int64_t>(zb.size())}, zb));
              in.push_back(bias);
            }
            const Tensor y = RunNode("MatMulIntegerToFloat", in, {},
                                     Ms(const_b ? std::vector<int>{1} : std::vector<int>{}))[0];
            Dims want = s.a;
            want.back() = s.n;
            REQUIRE(y.dims() == want);
            const auto acc = IntRef(a, b, rows, s.k, s.n, za, zb);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t j = 0; j < s.n; ++j) {
                const double m = 0.05 * bs[bs.size() > 1 ? j : 0];
                double ref = static_cast<double>(acc[r * s.n + j]) * m;
                if (mode > 0) ref += bias.data<float>()[j];
                CHECK(y.data<float>()[r * s.n + j] == doctest::Approx(ref).epsilon(1e-5));
              }
          }
}

TEST_CASE("MatMulIntegerToFloat: empty rows and bad zero points") {
  const Tensor a(DType::kUInt8, {0, 4});
  const Tensor b = Random8(DType::kInt8, {4, 3}, 9);
  const Tensor y = RunNode("MatMulIntegerToFloat", {a, b, Sc(0.1f), Sc(0.2f)}, {}, Ms())[0];
  CHECK(y.dims() == Dims{0, 3});
  const Tensor a2 = Random8(DType::kUInt8, {2, 4}, 10);
  CheckErrorNames(
      [&] {
        RunNode(
            "MatMulIntegerToFloat",
            {a2, b, Sc(0.1f), Sc(0.2f), Zp(DType::kUInt8, 1), Q8(DType::kInt8, {4}, {1, 2, 3, 4})},
            {}, Ms());
      },
      "MatMulIntegerToFloat_under_test");
  CheckErrorNames(
      [&] {
        RunNode("MatMulIntegerToFloat", {a2, b, Sc(0.1f), Sc(0.2f), Q8(DType::kUInt8, {2}, {1, 2})},
                {}, Ms());
      },
      "MatMulIntegerToFloat_under_test");
}

TEST_CASE("DynamicQuantizeMatMul: A quantized like DynamicQuantizeLinear") {
  for (DType tb : {DType::kUInt8, DType::kInt8})
    for (bool per_col : {false, true}) {
      CAPTURE(Name(tb));
      CAPTURE(per_col);
      const int64_t m = 3, k = 17, n = 5;
      const Tensor a = RandomF32({m, k}, 21, -2.0f, 3.0f);
      const Tensor b = Random8(tb, {k, n}, 22);
      std::vector<int32_t> zb{tb == DType::kInt8 ? 2 : 128};
      std::vector<float> bs{0.03f};
      if (per_col) {
        zb = {};
        bs = {};
        for (int j = 0; j < n; ++j) {
          zb.push_back(tb == DType::kInt8 ? j - 2 : 120 + j);
          bs.push_back(0.01f * static_cast<float>(j + 1));
        }
      }
      const Tensor bias = RandomF32({n}, 23);
      const Tensor y = RunNode("DynamicQuantizeMatMul",
                               {a, b, F32({static_cast<int64_t>(bs.size())}, bs),
                                Q8(tb, {static_cast<int64_t>(zb.size())}, zb), bias},
                               {}, Ms())[0];
      REQUIRE(y.dims() == Dims{m, n});
      // DynamicQuantizeLinear of A.
      float mn = 0, mx = 0;
      for (int64_t i = 0; i < m * k; ++i) {
        mn = std::min(mn, a.data<float>()[i]);
        mx = std::max(mx, a.data<float>()[i]);
      }
      const float scale = (mx - mn) / 255.0f;
      const int32_t za = QuantD(-static_cast<double>(mn / scale), 1.0, 0, DType::kUInt8);
      Tensor qa(DType::kUInt8, {m, k});
      for (int64_t i = 0; i < m * k; ++i) {
        const float q = std::nearbyint(a.data<float>()[i] / scale) + static_cast<float>(za);
        qa.data<uint8_t>()[i] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, q)));
      }
      const auto acc = IntRef(qa, b, m, k, n, za, zb);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          const double ref = static_cast<double>(acc[r * n + j]) * scale * bs[per_col ? j : 0] +
                             bias.data<float>()[j];
          CHECK(y.data<float>()[r * n + j] == doctest::Approx(ref).epsilon(1e-4));
        }
    }
}

TEST_CASE("QGemm: transA/transB, int32 C, float and quantized outputs") {
  uint32_t seed = 100;
  for (DType ta : {DType::kUInt8, DType::kInt8})
    for (DType tb : {DType::kUInt8, DType::kInt8})
      for (int trans = 0; trans < 4; ++trans)
        for (int cmode = 0; cmode < 3; ++cmode)  // no C, C [N], C [M, N]
          for (int out = 0; out < 3; ++out) {    // float, uint8, int8
            const bool tra = trans & 1, trb = trans & 2;
            const int64_t m = 3, k = 17, n = 5;
            CAPTURE(Name(ta));
            CAPTURE(Name(tb));
            CAPTURE(trans);
            CAPTURE(cmode);
            CAPTURE(out);
            const Tensor a = Random8(ta, tra ? Dims{k, m} : Dims{m, k}, seed++);
            const Tensor b = Random8(tb, trb ? Dims{n, k} : Dims{k, n}, seed++);
            const int32_t za = ta == DType::kInt8 ? 1 : 127;
            std::vector<int32_t> zb;
            std::vector<float> bs;
            for (int j = 0; j < n; ++j) {
              zb.push_back(tb == DType::kInt8 ? j - 1 : 126 + j);
              bs.push_back(0.002f * static_cast<float>(j + 1));
            }
            std::vector<int32_t> cv;
            std::mt19937 rng(seed++);
            for (int i = 0; i < (cmode == 2 ? m * n : n); ++i)
              cv.push_back(static_cast<int32_t>(rng() % 20001) - 10000);
            std::vector<Tensor> in = {a, Sc(0.04f), Zp(ta, za), b, F32({n}, bs), Q8(tb, {n}, zb)};
            in.push_back(cmode == 0 ? Tensor() : I32(cmode == 2 ? Dims{m, n} : Dims{n}, cv));
            const DType ty = out == 1 ? DType::kUInt8 : DType::kInt8;
            const float y_scale = 0.03f;
            const int32_t yzp = out == 1 ? 100 : -10;
            if (out > 0) {
              in.push_back(Sc(y_scale));
              in.push_back(Zp(ty, yzp));
            }
            const float alpha = 0.75f;
            const Tensor y =
                RunNode("QGemm", in,
                        {AttrInt("transA", tra), AttrInt("transB", trb), AttrFloat("alpha", alpha)},
                        Ms())[0];
            REQUIRE(y.dims() == Dims{m, n});
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                int64_t acc = 0;
                for (int64_t q = 0; q < k; ++q) {
                  const int32_t av = At8(a, tra ? q * m + i : i * k + q);
                  const int32_t bv = At8(b, trb ? j * k + q : q * n + j);
                  acc += static_cast<int64_t>(av - za) * (bv - zb[j]);
                }
                if (cmode == 1) acc += cv[j];
                if (cmode == 2) acc += cv[i * n + j];
                const float mult = 0.04f * bs[j] * alpha;
                if (out == 0) {
                  CHECK(y.data<float>()[i * n + j] ==
                        doctest::Approx(static_cast<double>(acc) * mult).epsilon(1e-5));
                } else {
                  const float rq = mult / y_scale;
                  const int32_t want =
                      QuantD(static_cast<double>(acc) * static_cast<double>(rq), 1.0, yzp, ty);
                  CHECK(At8(y, i * n + j) == want);
                }
              }
          }
}

TEST_CASE("QGemm: constant B, threads, saturation, K = 0, bad zero point") {
  for (DType ty : {DType::kUInt8, DType::kInt8}) {
    CAPTURE(Name(ty));
    const int64_t m = 17, k = 33, n = 40;
    const Tensor a = Random8(DType::kUInt8, {m, k}, 1);
    const Tensor b = Random8(DType::kInt8, {n, k}, 2);
    RunNodeOptions o = Ms({3, 4, 5});
    o.threads = 4;
    const float y_scale = 0.0001f;  // nearly every output saturates
    const Tensor y = RunNode("QGemm",
                             {a, Sc(0.1f), Zp(DType::kUInt8, 128), b, Sc(0.05f),
                              Zp(DType::kInt8, 0), Tensor(), Sc(y_scale), Zp(ty, 0)},
                             {AttrInt("transB", 1)}, o)[0];
    REQUIRE(y.dims() == Dims{m, n});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t q = 0; q < k; ++q)
          acc += static_cast<int64_t>(At8(a, i * k + q) - 128) * At8(b, j * k + q);
        const float rq = 0.1f * 0.05f * 1.0f / y_scale;
        CHECK(At8(y, i * n + j) ==
              QuantD(static_cast<double>(acc) * static_cast<double>(rq), 1.0, 0, ty));
      }
  }
  // K = 0: the products are empty sums.
  const Tensor y0 = RunNode(
      "QGemm",
      {Tensor(DType::kUInt8, {2, 0}), Sc(0.1f), Zp(DType::kUInt8, 3), Tensor(DType::kUInt8, {0, 3}),
       Sc(0.1f), Zp(DType::kUInt8, 3), I32({3}, {10, -20, 30})},
      {}, Ms())[0];
  REQUIRE(y0.dims() == Dims{2, 3});
  for (int i = 0; i < 6; ++i)
    CHECK(y0.data<float>()[i] == doctest::Approx(0.01 * (i % 3 == 0 ? 10 : i % 3 == 1 ? -20 : 30)));
  const Tensor yk = RunNode("MatMulIntegerToFloat",
                            {Tensor(DType::kInt8, {2, 0}), Tensor(DType::kInt8, {0, 3}), Sc(0.1f),
                             Sc(0.1f), Tensor(), Tensor(), F32({3}, {1, 2, 3})},
                            {}, Ms())[0];
  REQUIRE(yk.dims() == Dims{2, 3});
  for (int i = 0; i < 6; ++i) CHECK(yk.data<float>()[i] == static_cast<float>(i % 3 + 1));
  CheckErrorNames(
      [&] {
        RunNode("QGemm",
                {Random8(DType::kUInt8, {2, 4}, 1), Sc(0.1f), Zp(DType::kUInt8, 0),
                 Random8(DType::kUInt8, {4, 3}, 2), Sc(0.1f), Q8(DType::kUInt8, {2}, {0, 1})},
                {}, Ms());
      },
      "QGemm_under_test");
}

// ---------------------------------------------------------------------------------------------

TEST_CASE("QLinearAdd / QLinearMul: broadcasting, saturation, empty") {
  struct Case {
    Dims a, b;
  };
  const Case cases[] = {{{2, 3, 17}, {17}}, {{3, 1}, {1, 4}}, {{}, {1}},
                        {{1}, {1}},         {{0, 3}, {3}},    {{2, 3}, {2, 3}}};
  uint32_t seed = 200;
  for (const char* op : {"QLinearAdd", "QLinearMul"})
    for (DType t : {DType::kUInt8, DType::kInt8})
      for (const Case& c : cases)
        for (int zmode = 0; zmode < 2; ++zmode)
          for (float cs : {0.05f, 0.001f}) {  // 0.001: most results saturate
            CAPTURE(op);
            CAPTURE(Name(t));
            CAPTURE(DimsToString(c.a));
            CAPTURE(DimsToString(c.b));
            CAPTURE(zmode);
            CAPTURE(cs);
            const Tensor a = Random8(t, c.a, seed++), b = Random8(t, c.b, seed++);
            const float as = 0.02f, bs = 0.07f;
            const int32_t za = zmode ? (t == DType::kInt8 ? -5 : 128) : 0;
            const int32_t zb = zmode ? (t == DType::kInt8 ? 7 : 100) : 0;
            const int32_t zc = zmode ? (t == DType::kInt8 ? 3 : 90) : 0;
            const Tensor y =
                zmode
                    ? RunNode(op, {a, Sc(as), Zp(t, za), b, Sc(bs), Zp(t, zb), Sc(cs), Zp(t, zc)},
                              {}, Ms())[0]
                    : RunNode(op, {a, Sc(as), Tensor(), b, Sc(bs), Tensor(), Sc(cs)}, {}, Ms())[0];
            REQUIRE(y.dtype() == t);
            const Dims& od = y.dims();
            const size_t r = od.size();
            for (int64_t i = 0; i < y.num_elements(); ++i) {
              // Unravel i, then index a and b with broadcasting (aligned right).
              std::vector<int64_t> idx(r);
              int64_t rem = i;
              for (size_t d = r; d-- > 0;) {
                idx[d] = rem % od[d];
                rem /= od[d];
              }
              auto index = [&](const Dims& dd) {
                int64_t off = 0;
                for (size_t d = 0; d < dd.size(); ++d) {
                  const int64_t v = dd[d] == 1 ? 0 : idx[r - dd.size() + d];
                  off = off * dd[d] + v;
                }
                return off;
              };
              const double va =
                  static_cast<double>(At8(a, index(c.a)) - za) * static_cast<double>(as);
              const double vb =
                  static_cast<double>(At8(b, index(c.b)) - zb) * static_cast<double>(bs);
              const double v = std::string(op) == "QLinearAdd" ? va + vb : va * vb;
              CHECK(At8(y, i) == QuantD(v, cs, zc, t));
            }
          }
}

TEST_CASE("QLinearAdd: bad zero-point shape names the node") {
  const Tensor a = Random8(DType::kUInt8, {3}, 1);
  CheckErrorNames(
      [&] {
        RunNode("QLinearAdd",
                {a, Sc(0.1f), Q8(DType::kUInt8, {2}, {1, 2}), a, Sc(0.1f), Zp(DType::kUInt8, 0),
                 Sc(0.1f), Zp(DType::kUInt8, 0)},
                {}, Ms());
      },
      "QLinearAdd_under_test");
  CheckErrorNames(
      [&] {
        RunNode("QLinearMul",
                {a, Sc(0.1f), Zp(DType::kUInt8, 0), Random8(DType::kUInt8, {4}, 2), Sc(0.1f),
                 Zp(DType::kUInt8, 0), Sc(0.1f), Zp(DType::kUInt8, 0)},
                {}, Ms());
      },
      "QLinearMul_under_test");
}

TEST_CASE("QLinearSigmoid / QLinearLeakyRelu: every input value") {
  for (DType t : {DType::kUInt8, DType::kInt8})
    for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu"})
      for (bool with_zp : {false, true}) {
        CAPTURE(Name(t));
        CAPTURE(op);
        CAPTURE(with_zp);
        std::vector<int32_t> all;
        for (int v = 0; v < 256; ++v) all.push_back(t == DType::kInt8 ? v - 128 : v);
        const Tensor x = Q8(t, {1, 256}, all);
        const float xs = 0.05f, ys = std::string(op) == "QLinearSigmoid" ? 1.0f / 256 : 0.04f;
        const int32_t xz = with_zp ? (t == DType::kInt8 ? -10 : 128) : 0;
        const int32_t yz = with_zp ? (t == DType::kInt8 ? -128 : 20) : 0;
        const float alpha = 0.1f;
        std::vector<graph::Attribute> attrs;
        if (std::string(op) == "QLinearLeakyRelu") attrs.push_back(AttrFloat("alpha", alpha));
        const Tensor y =
            with_zp ? RunNode(op, {x, Sc(xs), Zp(t, xz), Sc(ys), Zp(t, yz)}, attrs, Ms())[0]
                    : RunNode(op, {x, Sc(xs), Tensor(), Sc(ys)}, attrs, Ms())[0];
        REQUIRE(y.dims() == Dims{1, 256});
        for (int i = 0; i < 256; ++i) {
          const double xv = static_cast<double>(all[i] - xz) * static_cast<double>(xs);
          const double f = std::string(op) == "QLinearSigmoid"
                               ? 1.0 / (1.0 + std::exp(-xv))
                               : (xv >= 0 ? xv : static_cast<double>(alpha) * xv);
          CHECK(At8(y, i) == QuantD(f, ys, yz, t));
        }
      }
  // Odd and empty shapes keep their shape.
  for (Dims d : {Dims{3}, Dims{1, 17}, Dims{0, 5}}) {
    const Tensor x = Random8(DType::kUInt8, d, 5);
    const Tensor y = RunNode(
        "QLinearSigmoid",
        {x, Sc(0.1f), Zp(DType::kUInt8, 128), Sc(1.0f / 255), Zp(DType::kUInt8, 0)}, {}, Ms())[0];
    CHECK(y.dims() == d);
  }
}

TEST_CASE("QLinearConcat: requantizes each input, any axis") {
  for (DType t : {DType::kUInt8, DType::kInt8})
    for (int64_t axis : {0, 1, 2, -1}) {
      CAPTURE(Name(t));
      CAPTURE(axis);
      const int64_t ax = axis < 0 ? axis + 3 : axis;
      std::vector<Dims> dims;
      for (int64_t w : {1, 3, 17}) {
        Dims d{2, 3, 4};
        d[ax] = w;
        dims.push_back(d);
      }
      const float scales[] = {0.1f, 0.02f, 0.5f};
      const int32_t zps[] = {t == DType::kInt8 ? 3 : 128, 0, t == DType::kInt8 ? -100 : 250};
      const float ys = 0.05f;
      const int32_t yz = t == DType::kInt8 ? -2 : 120;
      std::vector<Tensor> in = {Sc(ys), Zp(t, yz)};
      std::vector<Tensor> xs;
      for (int j = 0; j < 3; ++j) {
        xs.push_back(Random8(t, dims[j], 300 + j));
        in.push_back(xs.back());
        in.push_back(Sc(scales[j]));
        in.push_back(Zp(t, zps[j]));
      }
      const Tensor y = RunNode("QLinearConcat", in, {AttrInt("axis", axis)}, Ms())[0];
      Dims want{2, 3, 4};
      want[ax] = 1 + 3 + 17;
      REQUIRE(y.dims() == want);
      for (int64_t i0 = 0; i0 < want[0]; ++i0)
        for (int64_t i1 = 0; i1 < want[1]; ++i1)
          for (int64_t i2 = 0; i2 < want[2]; ++i2) {
            int64_t idx[3] = {i0, i1, i2};
            int j = 0;
            while (idx[ax] >= dims[j][ax]) idx[ax] -= dims[j++][ax];
            const Dims& d = dims[j];
            const int64_t src = (idx[0] * d[1] + idx[1]) * d[2] + idx[2];
            const double v =
                static_cast<double>(At8(xs[j], src) - zps[j]) * static_cast<double>(scales[j]);
            CHECK(At8(y, (i0 * want[1] + i1) * want[2] + i2) == QuantD(v, ys, yz, t));
          }
    }
  const Tensor x = Random8(DType::kUInt8, {2, 3}, 1);
  CheckErrorNames(
      [&] {
        RunNode("QLinearConcat",
                {Sc(0.1f), Zp(DType::kUInt8, 0), x, Sc(0.1f), Q8(DType::kUInt8, {3}, {1, 2, 3})},
                {AttrInt("axis", 1)}, Ms());
      },
      "QLinearConcat_under_test");
}

// ---------------------------------------------------------------------------------------------

// Average pool reference on NCHW-ordered data (2 spatial dims).
std::vector<int32_t> PoolRef(const Tensor& x, DType t, int64_t n, int64_t c, int64_t h, int64_t w,
                             int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                             int64_t pb, int64_t pr, int64_t oh, int64_t ow, bool include_pad,
                             double xs, int32_t xz, double ys, int32_t yz, bool channels_last) {
  std::vector<int32_t> out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t sum = 0, cnt = 0;
          for (int64_t u = 0; u < kh; ++u)
            for (int64_t v = 0; v < kw; ++v) {
              const int64_t y = i * sh - pt + u, z = j * sw - pl + v;
              if (y >= 0 && y < h && z >= 0 && z < w) {
                const int64_t off =
                    channels_last ? ((b * h + y) * w + z) * c + ch : ((b * c + ch) * h + y) * w + z;
                sum += At8(x, off) - xz;
                ++cnt;
              }
            }
          if (include_pad) {
            const int64_t y0 = i * sh - pt, z0 = j * sw - pl;
            cnt = (std::min(y0 + kh, h + pb) - y0) * (std::min(z0 + kw, w + pr) - z0);
          }
          const double mean =
              cnt > 0 ? static_cast<double>(sum) * xs / static_cast<double>(cnt) : 0.0;
          out.push_back(QuantD(mean, ys, yz, t));
        }
  return out;
}

// Output element (b, ch, i, j) of an NCHW or NHWC tensor.
int32_t PoolAt(const Tensor& y, bool channels_last, int64_t b, int64_t ch, int64_t i, int64_t j) {
  const Dims& d = y.dims();
  if (channels_last) return At8(y, ((b * d[1] + i) * d[2] + j) * d[3] + ch);
  return At8(y, ((b * d[1] + ch) * d[2] + i) * d[3] + j);
}

TEST_CASE("QLinearGlobalAveragePool: NCHW and channels_last") {
  for (DType t : {DType::kUInt8, DType::kInt8})
    for (bool cl : {false, true}) {
      CAPTURE(Name(t));
      CAPTURE(cl);
      const int64_t n = 2, c = 3, h = 5, w = 7;
      RunNodeOptions threaded = Ms();
      threaded.threads = 3;
      const Tensor x = Random8(t, cl ? Dims{n, h, w, c} : Dims{n, c, h, w}, 77);
      const int32_t xz = t == DType::kInt8 ? 4 : 131, yz = t == DType::kInt8 ? -1 : 125;
      const Tensor y =
          RunNode("QLinearGlobalAveragePool", {x, Sc(0.03f), Zp(t, xz), Sc(0.01f), Zp(t, yz)},
                  {AttrInt("channels_last", cl)}, threaded)[0];
      REQUIRE(y.dims() == (cl ? Dims{n, 1, 1, c} : Dims{n, c, 1, 1}));
      const auto ref =
          PoolRef(x, t, n, c, h, w, h, w, 1, 1, 0, 0, 0, 0, 1, 1, false, 0.03f, xz, 0.01f, yz, cl);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) CHECK(PoolAt(y, cl, b, ch, 0, 0) == ref[b * c + ch]);
    }
}

TEST_CASE("QLinearAveragePool: pads, strides, count_include_pad, ceil_mode, channels_last") {
  for (DType t : {DType::kUInt8, DType::kInt8})
    for (bool cl : {false, true})
      for (bool include_pad : {false, true})
        for (bool ceil_mode : {false, true}) {
          CAPTURE(Name(t));
          CAPTURE(cl);
          CAPTURE(include_pad);
          CAPTURE(ceil_mode);
          const int64_t n = 1, c = 2, h = 7, w = 9, kh = 3, kw = 2, sh = 2, sw = 3;
          const int64_t pt = 1, pl = 0, pb = 1, pr = 1;
          const Tensor x = Random8(t, cl ? Dims{n, h, w, c} : Dims{n, c, h, w}, 88);
          const int32_t xz = t == DType::kInt8 ? -7 : 140, yz = t == DType::kInt8 ? 2 : 118;
          const Tensor y = RunNode(
              "QLinearAveragePool", {x, Sc(0.02f), Zp(t, xz), Sc(0.015f), Zp(t, yz)},
              {AttrInts("kernel_shape", {kh, kw}), AttrInts("strides", {sh, sw}),
               AttrInts("pads", {pt, pl, pb, pr}), AttrInt("count_include_pad", include_pad),
               AttrInt("ceil_mode", ceil_mode), AttrInt("channels_last", cl)},
              Ms())[0];
          auto out_dim = [&](int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
            const int64_t span = in + p0 + p1 - k;
            int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
            if (ceil_mode && (o - 1) * s >= in + p0) --o;
            return o;
          };
          const int64_t oh = out_dim(h, kh, sh, pt, pb), ow = out_dim(w, kw, sw, pl, pr);
          REQUIRE(y.dims() == (cl ? Dims{n, oh, ow, c} : Dims{n, c, oh, ow}));
          const auto ref = PoolRef(x, t, n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, oh, ow,
                                   include_pad, 0.02f, xz, 0.015f, yz, cl);
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t i = 0; i < oh; ++i)
              for (int64_t j = 0; j < ow; ++j)
                CHECK(PoolAt(y, cl, 0, ch, i, j) == ref[(ch * oh + i) * ow + j]);
        }
  // SAME_UPPER keeps ceil(in / stride).
  const Tensor x = Random8(DType::kUInt8, {1, 1, 5, 5}, 3);
  const Tensor y = RunNode("QLinearAveragePool",
                           {x, Sc(0.1f), Zp(DType::kUInt8, 0), Sc(0.1f), Zp(DType::kUInt8, 0)},
                           {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                            AttrString("auto_pad", "SAME_UPPER")},
                           Ms())[0];
  CHECK(y.dims() == Dims{1, 1, 3, 3});
}

}  // namespace
}  // namespace simplecpp::testing
