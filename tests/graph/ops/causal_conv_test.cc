// Tests for graph/ops/causal_conv.cc (CausalConvWithState) through the executor, against a
// scalar reference in double written from the ONNX description: with and without bias / past
// state, silu and swish, kernel size 1, inputs shorter than the state, float16 / bfloat16,
// thread-count independence and shape errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "graph/op_test_options.h"
#include "graph/op_test_util.h"
#include "graph/ops/float16_compare.h"
#include "kernels/float16/float16.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

RunNodeOptions Opts(int threads = 1, int num_outputs = 2) {
  return NodeOptions(27, threads, num_outputs);
}

struct ConvRef {
  std::vector<double> y, state;
};

// x [B,C,L], w [C,1,K], bias [C] or empty, past [B,C,K-1] or empty.
ConvRef Reference(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor* past,
                  bool silu) {
  const int64_t B = x.dims()[0], C = x.dims()[1], L = x.dims()[2], K = w.dims()[2];
  const int64_t S = K - 1;
  ConvRef r;
  r.y.resize(static_cast<size_t>(B * C * L));
  r.state.resize(static_cast<size_t>(B * C * S));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      std::vector<double> p;
      for (int64_t j = 0; j < S; ++j) {
        p.push_back(past ? past->data<float>()[(b * C + c) * S + j] : 0.0);
      }
      for (int64_t t = 0; t < L; ++t) p.push_back(x.data<float>()[(b * C + c) * L + t]);
      for (int64_t t = 0; t < L; ++t) {
        double acc = bias ? bias->data<float>()[c] : 0.0;
        for (int64_t k = 0; k < K; ++k) acc += w.data<float>()[c * K + k] * p[t + k];
        if (silu) acc = acc / (1.0 + std::exp(-acc));
        r.y[(b * C + c) * L + t] = acc;
      }
      for (int64_t j = 0; j < S; ++j) r.state[(b * C + c) * S + j] = p[L + j];
    }
  }
  return r;
}

void CheckClose(const Tensor& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    if (tol == 0.0) {
      CHECK(static_cast<double>(got.data<float>()[i]) == want[i]);
    } else {
      CHECK(got.data<float>()[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
    }
  }
}

TEST_CASE("CausalConvWithState matches the reference") {
  struct Case {
    int64_t B, C, L, K;
    bool bias, past;
    const char* act;
  };
  const Case cases[] = {
      {1, 1, 6, 4, false, false, "none"}, {2, 3, 7, 4, true, false, "none"},
      {2, 5, 1, 4, true, true, "none"},   {3, 2, 9, 3, false, true, "silu"},
      {2, 3, 5, 1, true, false, "swish"}, {2, 4, 2, 5, false, false, "none"},
      {1, 7, 3, 6, true, true, "silu"},   {2, 17, 33, 4, true, true, "silu"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.B);
    CAPTURE(c.C);
    CAPTURE(c.L);
    CAPTURE(c.K);
    CAPTURE(c.act);
    const Tensor x = RandomF32({c.B, c.C, c.L}, 1);
    const Tensor w = RandomF32({c.C, 1, c.K}, 2);
    const Tensor bias = RandomF32({c.C}, 3);
    const Tensor past = RandomF32({c.B, c.C, c.K - 1}, 4);
    std::vector<Tensor> inputs = {x, w, c.bias ? bias : Tensor(), c.past ? past : Tensor()};
    const bool silu = std::string(c.act) != "none";
    const ConvRef ref = Reference(x, w, c.bias ? &bias : nullptr, c.past ? &past : nullptr, silu);
    for (int threads : {1, 3}) {
      auto out = RunNode("CausalConvWithState", inputs, {AttrString("activation", c.act)},
                         Opts(threads));
      REQUIRE(out.size() == 2);
      CHECK(out[0].dims() == Dims{c.B, c.C, c.L});
      CHECK(out[1].dims() == Dims{c.B, c.C, c.K - 1});
      CheckClose(out[0], ref.y, 1e-5);
      CheckClose(out[1], ref.state, 0.0);
    }
  }
}

TEST_CASE("CausalConvWithState streaming equals one long call") {
  // Two calls carrying present_state give the same output as one call over the whole input.
  const int64_t B = 2, C = 3, K = 4, L1 = 5, L2 = 3;
  const Tensor x = RandomF32({B, C, L1 + L2}, 7);
  const Tensor w = RandomF32({C, 1, K}, 8);
  Tensor x1(DType::kFloat32, {B, C, L1}), x2(DType::kFloat32, {B, C, L2});
  for (int64_t r = 0; r < B * C; ++r) {
    for (int64_t t = 0; t < L1; ++t) x1.data<float>()[r * L1 + t] = x.data<float>()[r * (L1 + L2) + t];
    for (int64_t t = 0; t < L2; ++t) x2.data<float>()[r * L2 + t] = x.data<float>()[r * (L1 + L2) + L1 + t];
  }
  auto full = RunNode("CausalConvWithState", {x, w}, {}, Opts());
  auto a = RunNode("CausalConvWithState", {x1, w}, {}, Opts());
  auto b = RunNode("CausalConvWithState", {x2, w, Tensor(), a[1]}, {}, Opts());
  for (int64_t r = 0; r < B * C; ++r) {
    for (int64_t t = 0; t < L2; ++t) {
      CHECK(b[0].data<float>()[r * L2 + t] ==
            doctest::Approx(full[0].data<float>()[r * (L1 + L2) + L1 + t]).epsilon(1e-6));
    }
  }
  for (int64_t i = 0; i < full[1].num_elements(); ++i) {
    CHECK(b[1].data<float>()[i] == full[1].data<float>()[i]);
  }
}

TEST_CASE("CausalConvWithState float16 / bfloat16") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    auto to16 = [&](const Tensor& f) { return f16::To16(f, dt); };
    auto to32 = [](const Tensor& h) { return f16::To32(h); };
    const Tensor x = to16(RandomF32({2, 3, 5}, 11));
    const Tensor w = to16(RandomF32({3, 1, 3}, 12));
    const Tensor bias = to16(RandomF32({3}, 13));
    const Tensor past = to16(RandomF32({2, 3, 2}, 14));
    for (const char* act : {"none", "silu"}) {
      auto out = RunNode("CausalConvWithState", {x, w, bias, past}, {AttrString("activation", act)}, Opts());
      REQUIRE(out[0].dtype() == dt);
      REQUIRE(out[1].dtype() == dt);
      const Tensor x32 = to32(x), w32 = to32(w), b32 = to32(bias), p32 = to32(past);
      const ConvRef ref = Reference(x32, w32, &b32, &p32, std::string(act) == "silu");
      const double tol = dt == DType::kBFloat16 ? 2e-2 : 3e-3;
      CheckClose(to32(out[0]), ref.y, tol);
      CheckClose(to32(out[1]), ref.state, 0.0);
    }
  }
}

TEST_CASE("CausalConvWithState rejects bad shapes and attributes") {
  const Tensor x = RandomF32({2, 3, 5}, 1);
  const Tensor w = RandomF32({3, 1, 4}, 2);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {x, RandomF32({4, 1, 4}, 2)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {x, RandomF32({3, 2, 4}, 2)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {x, RandomF32({3, 1, 0}, 2)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {RandomF32({2, 3}, 1), w}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {x, w, RandomF32({4}, 3)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {x, w, Tensor(), RandomF32({2, 3, 4}, 3)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("CausalConvWithState", {x, w}, {AttrString("activation", "relu")}, Opts()), Error);
}

}  // namespace
}  // namespace simplecpp::testing
