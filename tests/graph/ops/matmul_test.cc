// Tests for graph/ops/matmul.cc: MatMul (numpy broadcasting, 1-D promotion, constant B packed at
// Prepare, non-float32 dtypes) and Gemm (transposes, alpha/beta, every C broadcast shape, old
// opsets' `broadcast`), plus error cases. References are scalar loops in double.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "simplecpp/builder.h"
#include "simplecpp/error.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::testing {
namespace {

// numpy.matmul reference (double) on float data.
std::vector<double> MatMulRef(const Tensor& a, const Tensor& b, Dims* out_dims) {
  Dims da = a.dims(), db = b.dims();
  const bool av = da.size() == 1, bv = db.size() == 1;
  if (av) da.insert(da.begin(), 1);
  if (bv) db.push_back(1);
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
  if (!av) out_dims->push_back(m);
  if (!bv) out_dims->push_back(n);
  int64_t nbatch = 1;
  for (int64_t d : batch) nbatch *= d;
  std::vector<double> out;
  for (int64_t t = 0; t < nbatch; ++t) {
    // Decompose t, then map to A's and B's batch index (size-1 dims broadcast).
    int64_t rem = t, oa = 0, ob = 0, sa = 1, sb = 1;
    for (size_t i = nb; i-- > 0;) {
      const int64_t idx = rem % batch[i];
      rem /= batch[i];
      const int64_t ia = static_cast<int64_t>(i) - static_cast<int64_t>(nb - ba.size());
      const int64_t ib = static_cast<int64_t>(i) - static_cast<int64_t>(nb - bb.size());
      const int64_t xa = ia >= 0 ? ba[ia] : 1, xb = ib >= 0 ? bb[ib] : 1;
      if (xa != 1) oa += idx * sa;
      if (xb != 1) ob += idx * sb;
      sa *= xa;
      sb *= xb;
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          s += static_cast<double>(a.data<float>()[(oa * m + i) * k + kk]) *
               b.data<float>()[(ob * k + kk) * n + j];
        }
        out.push_back(s);
      }
    }
  }
  return out;
}

void ExpectNear(const Tensor& got, const Dims& dims, const std::vector<double>& ref) {
  REQUIRE(got.dtype() == DType::kFloat32);
  REQUIRE(got.dims() == dims);
  REQUIRE(got.num_elements() == static_cast<int64_t>(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i) {
    CAPTURE(i);
    REQUIRE(std::fabs(got.data<float>()[i] - ref[i]) <= 1e-4 * (1 + std::fabs(ref[i])));
  }
}

TEST_CASE("MatMul broadcasting shapes against numpy semantics") {
  const std::vector<std::pair<Dims, Dims>> shapes = {
      {{3}, {3}},
      {{3}, {3, 4}},
      {{2, 3}, {3}},
      {{3}, {2, 3, 4}},
      {{2, 3, 4}, {4}},
      {{4, 5}, {5, 6}},
      {{2, 4, 5}, {5, 6}},
      {{4, 5}, {3, 5, 6}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{1, 3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 20}},
      {{3, 1, 2, 7}, {1, 4, 7, 17}},
      {{1, 1}, {1, 1}},
      {{0, 3}, {3, 4}},
      {{2, 0}, {0, 3}},
      {{5, 33, 40}, {40, 70}},
  };
  uint32_t seed = 1;
  for (const auto& shape_pair : shapes) {
    // Not a structured binding: clang 14 (emscripten) cannot capture one (CAPTURE uses a lambda).
    const auto& sa = shape_pair.first;
    const auto& sb = shape_pair.second;
    CAPTURE(DimsToString(sa));
    CAPTURE(DimsToString(sb));
    const Tensor a = RandomF32(sa, seed++), b = RandomF32(sb, seed++);
    Dims out_dims;
    const auto ref = MatMulRef(a, b, &out_dims);
    for (int opset : {1, 9, 13}) {
      RunNodeOptions opt;
      opt.opset = opset;
      ExpectNear(RunNode("MatMul", {a, b}, {}, opt)[0], out_dims, ref);
      opt.constant_inputs = {1};  // B prepacked at Prepare
      ExpectNear(RunNode("MatMul", {a, b}, {}, opt)[0], out_dims, ref);
    }
    RunNodeOptions threaded;
    threaded.threads = 3;
    const Tensor one = RunNode("MatMul", {a, b})[0];
    CHECK(RunNode("MatMul", {a, b}, {}, threaded)[0].BitwiseEquals(one));
  }
}

TEST_CASE("MatMul with a large constant B equals the runtime-B result bitwise") {
  const Tensor a = RandomF32({3, 70, 300}, 5), b = RandomF32({300, 130}, 6);
  const Tensor runtime = RunNode("MatMul", {a, b})[0];
  RunNodeOptions opt;
  opt.constant_inputs = {1};
  opt.threads = 2;
  CHECK(RunNode("MatMul", {a, b}, {}, opt)[0].BitwiseEquals(runtime));
  Dims dims;
  ExpectNear(runtime, {3, 70, 130}, MatMulRef(a, b, &dims));
}

TEST_CASE(
    "Batched attention-sized MatMul: one task per batch, the same bits for any thread count") {
  // 6 heads of 128 x 64 x 128 (1 M MACs each): one GEMM per task when there are at least as many
  // heads as threads, inside each GEMM otherwise (3 heads on 4 threads); runtime and constant B.
  for (int64_t heads : {6, 3}) {
    CAPTURE(heads);
    const Tensor a = RandomF32({heads, 128, 64}, 31), b = RandomF32({heads, 64, 128}, 32);
    Dims dims;
    const auto ref = MatMulRef(a, b, &dims);
    const Tensor one = RunNode("MatMul", {a, b})[0];
    ExpectNear(one, dims, ref);
    for (int threads : {2, 4}) {
      CHECK(RunNode("MatMul", {a, b}, {}, {.threads = threads})[0].BitwiseEquals(one));
      CHECK(RunNode("MatMul", {a, b}, {}, {.constant_inputs = {1}, .threads = threads})[0]
                .BitwiseEquals(one));
    }
  }
}

TEST_CASE(
    "MatMul with a constant B in one session across A shapes: the packed B is reused, results "
    "unchanged") {
  // A decoder's prefill (many rows) then decode (one row) steps: each new A shape prepares the
  // node again and takes the packed weights prepared for the earlier shape.
  GraphBuilder g;
  const std::string x = g.AddInput("x", DType::kFloat32, {-1, 96}, {"rows", ""});
  const std::string w = g.AddInitializer("w", RandomF32({96, 80}, 41));
  g.AddOutput(g.AddNode("MatMul", {x, w}));
  const Model model = g.Build();
  Session session(model);
  for (int64_t rows : {32, 1, 1, 7, 32}) {
    CAPTURE(rows);
    const Tensor a = RandomF32({rows, 96}, static_cast<uint32_t>(50 + rows));
    const Tensor got = session.Run({{x, a}}).begin()->second;
    Session fresh(model);
    CHECK(got.BitwiseEquals(fresh.Run({{x, a}}).begin()->second));
    Dims dims;
    ExpectNear(got, {rows, 80}, MatMulRef(a, RandomF32({96, 80}, 41), &dims));
  }
}

TEST_CASE("MatMul integer and double dtypes") {
  const Tensor a = I32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = I32({3, 2}, {7, 8, 9, 10, 11, 12});
  const Tensor y = RunNode("MatMul", {a, b})[0];
  REQUIRE(y.dtype() == DType::kInt32);
  CHECK(std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 4) ==
        std::vector<int32_t>{58, 64, 139, 154});
  const Tensor a64 = I64({3}, {1, -2, 3});
  const Tensor b64 = I64({2, 3, 1}, {1, 1, 1, 2, 2, 2});
  const Tensor y64 = RunNode("MatMul", {a64, b64})[0];
  REQUIRE(y64.dims() == Dims{2, 1});
  CHECK(y64.data<int64_t>()[0] == 2);
  CHECK(y64.data<int64_t>()[1] == 4);
  const Tensor ad = Tensor::FromVector<double>(DType::kFloat64, {1, 2}, {0.5, 0.25});
  const Tensor bd = Tensor::FromVector<double>(DType::kFloat64, {2, 1}, {2.0, 4.0});
  CHECK(RunNode("MatMul", {ad, bd})[0].data<double>()[0] == 2.0);
  // Integers need opset 9.
  RunNodeOptions old;
  old.opset = 8;
  CHECK_THROWS_AS(RunNode("MatMul", {a, b}, {}, old), Error);
}

TEST_CASE("MatMul errors") {
  CHECK_THROWS_AS(RunNode("MatMul", {RandomF32({2, 3}, 1), RandomF32({4, 2}, 2)}), Error);
  CHECK_THROWS_AS(RunNode("MatMul", {RandomF32({2, 2, 3}, 1), RandomF32({3, 3, 2}, 2)}), Error);
  CHECK_THROWS_AS(RunNode("MatMul", {RandomF32({}, 1), RandomF32({3}, 2)}), Error);
  CHECK_THROWS_AS(RunNode("MatMul", {RandomF32({2, 3}, 1), I32({3}, {1, 2, 3})}), Error);
}

// Gemm reference: alpha * op(A) op(B) + beta * broadcast(C).
std::vector<double> GemmRef(const Tensor& a, const Tensor& b, const Tensor* c, bool ta, bool tb,
                            double alpha, double beta, int64_t* m_out, int64_t* n_out) {
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  *m_out = m;
  *n_out = n;
  std::vector<double> y(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double av = ta ? a.data<float>()[kk * m + i] : a.data<float>()[i * k + kk];
        const double bv = tb ? b.data<float>()[j * k + kk] : b.data<float>()[kk * n + j];
        s += av * bv;
      }
      double cv = 0;
      if (c != nullptr) {
        const Dims& d = c->dims();
        const int64_t rows = d.size() == 2 ? d[0] : 1, cols = d.empty() ? 1 : d.back();
        cv = c->data<float>()[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
      }
      y[i * n + j] = alpha * s + beta * cv;
    }
  }
  return y;
}

TEST_CASE("Gemm transposes, alpha/beta and every C broadcast shape") {
  const int64_t M = 7, N = 19, K = 11;
  uint32_t seed = 10;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const Tensor a = RandomF32(ta ? Dims{K, M} : Dims{M, K}, seed++);
      const Tensor b = RandomF32(tb ? Dims{N, K} : Dims{K, N}, seed++);
      const std::vector<Dims> c_shapes = {{}, {N}, {1, N}, {M, 1}, {M, N}, {1, 1}, {1}};
      for (const float beta : {1.0f, 0.5f, 0.0f}) {
        for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
          const bool has_c = ci < c_shapes.size();
          const Tensor c = has_c ? RandomF32(c_shapes[ci], seed++) : Tensor();
          CAPTURE(ta);
          CAPTURE(tb);
          CAPTURE(beta);
          CAPTURE(has_c ? DimsToString(c_shapes[ci]) : std::string("none"));
          const std::vector<graph::Attribute> attrs = {AttrInt("transA", ta), AttrInt("transB", tb),
                                                       AttrFloat("alpha", 0.75f),
                                                       AttrFloat("beta", beta)};
          int64_t m, n;
          const auto ref = GemmRef(a, b, has_c ? &c : nullptr, ta, tb, 0.75, beta, &m, &n);
          std::vector<Tensor> inputs = {a, b};
          if (has_c) inputs.push_back(c);
          ExpectNear(RunNode("Gemm", inputs, attrs)[0], {m, n}, ref);
          RunNodeOptions opt;
          opt.constant_inputs = {1};
          ExpectNear(RunNode("Gemm", inputs, attrs, opt)[0], {m, n}, ref);
        }
      }
    }
  }
}

TEST_CASE("Gemm old opsets: C required, broadcast attribute") {
  const Tensor a = RandomF32({3, 4}, 1), b = RandomF32({4, 5}, 2), c = RandomF32({5}, 3);
  const Tensor cfull = RandomF32({3, 5}, 4);
  RunNodeOptions opt6;
  opt6.opset = 6;
  int64_t m, n;
  // broadcast=1 allows C [N]; broadcast=0 needs [M,N].
  ExpectNear(RunNode("Gemm", {a, b, c}, {AttrInt("broadcast", 1)}, opt6)[0], {3, 5},
             GemmRef(a, b, &c, false, false, 1, 1, &m, &n));
  CHECK_THROWS_AS(RunNode("Gemm", {a, b, c}, {}, opt6), Error);
  ExpectNear(RunNode("Gemm", {a, b, cfull}, {}, opt6)[0], {3, 5},
             GemmRef(a, b, &cfull, false, false, 1, 1, &m, &n));
  CHECK_THROWS_AS(RunNode("Gemm", {a, b}, {}, opt6), Error);  // C required before 11
  RunNodeOptions opt9;
  opt9.opset = 9;
  CHECK_THROWS_AS(RunNode("Gemm", {a, b}, {}, opt9), Error);
  CHECK_THROWS_AS(RunNode("Gemm", {a, b, c}, {AttrInt("broadcast", 1)}, opt9), Error);
  ExpectNear(RunNode("Gemm", {a, b, c}, {}, opt9)[0], {3, 5},
             GemmRef(a, b, &c, false, false, 1, 1, &m, &n));
}

TEST_CASE("Gemm integer dtype and errors") {
  const Tensor a = I32({2, 2}, {1, 2, 3, 4});
  const Tensor b = I32({2, 2}, {5, 6, 7, 8});
  const Tensor c = I32({2}, {100, 200});
  const Tensor y = RunNode("Gemm", {a, b, c})[0];
  CHECK(std::vector<int32_t>(y.data<int32_t>(), y.data<int32_t>() + 4) ==
        std::vector<int32_t>{119, 222, 143, 250});
  CHECK_THROWS_AS(RunNode("Gemm", {RandomF32({2, 3}, 1), RandomF32({2, 3}, 2)}), Error);
  CHECK_THROWS_AS(RunNode("Gemm", {RandomF32({2, 3, 1}, 1), RandomF32({3, 2}, 2)}), Error);
  CHECK_THROWS_AS(RunNode("Gemm", {RandomF32({2, 3}, 1), RandomF32({3, 4}, 2), RandomF32({3}, 3)}),
                  Error);
  CHECK_THROWS_AS(
      RunNode("Gemm", {RandomF32({2, 3}, 1), RandomF32({3, 4}, 2)}, {AttrInt("transA", 2)}), Error);
}

}  // namespace
}  // namespace simplecpp::testing
