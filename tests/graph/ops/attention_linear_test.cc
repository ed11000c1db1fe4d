// Tests for graph/ops/attention_linear.cc (LinearAttention) through the executor, against a scalar
// reference in double written from the ONNX description: the four update rules, per-key-dim and
// per-head decay, per-head and shared beta, GQA / MQA, explicit scale, past state, T = 1,
// float16 / bfloat16, thread-count independence and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
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

struct LaRef {
  std::vector<double> y, state;
};

// Shapes as in the op: q [B,T,hq*dk], k [B,T,hkv*dk], v [B,T,hkv*dv], past [B,hkv,dk,dv],
// decay [B,T,hkv*dk] or [B,T,hkv], beta [B,T,hkv] or [B,T,1].
LaRef Reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* past,
                const Tensor* decay, const Tensor* beta, int64_t hq, int64_t hkv, double scale) {
  const int64_t B = q.dims()[0], T = q.dims()[1], dk = q.dims()[2] / hq, dv = v.dims()[2] / hkv;
  const int64_t group = hq / hkv;
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(dk));
  LaRef r;
  r.y.assign(static_cast<size_t>(B * T * hq * dv), 0.0);
  r.state.assign(static_cast<size_t>(B * hkv * dk * dv), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < hkv; ++h) {
      std::vector<double> S(static_cast<size_t>(dk * dv), 0.0);
      if (past) {
        for (int64_t i = 0; i < dk * dv; ++i) S[i] = past->data<float>()[(b * hkv + h) * dk * dv + i];
      }
      for (int64_t t = 0; t < T; ++t) {
        auto K = [&](int64_t i) { return static_cast<double>(k.data<float>()[((b * T + t) * hkv + h) * dk + i]); };
        std::vector<double> vt(static_cast<size_t>(dv));
        for (int64_t j = 0; j < dv; ++j) vt[j] = v.data<float>()[((b * T + t) * hkv + h) * dv + j];
        if (decay) {
          const int64_t per = decay->dims()[2] / hkv;
          for (int64_t i = 0; i < dk; ++i) {
            const double g = decay->data<float>()[((b * T + t) * hkv + h) * per + (per == 1 ? 0 : i)];
            for (int64_t j = 0; j < dv; ++j) S[i * dv + j] *= std::exp(g);
          }
        }
        if (beta) {
          const int64_t nb = beta->dims()[2];
          const double bb = beta->data<float>()[(b * T + t) * nb + (nb == 1 ? 0 : h)];
          for (int64_t j = 0; j < dv; ++j) {
            double ret = 0;
            for (int64_t i = 0; i < dk; ++i) ret += S[i * dv + j] * K(i);
            vt[j] = bb * (vt[j] - ret);
          }
        }
        for (int64_t i = 0; i < dk; ++i) {
          for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += K(i) * vt[j];
        }
        for (int64_t g = 0; g < group; ++g) {
          const int64_t qh = h * group + g;
          for (int64_t j = 0; j < dv; ++j) {
            double acc = 0;
            for (int64_t i = 0; i < dk; ++i) acc += q.data<float>()[((b * T + t) * hq + qh) * dk + i] * S[i * dv + j];
            r.y[((b * T + t) * hq + qh) * dv + j] = scale * acc;
          }
        }
      }
      for (int64_t i = 0; i < dk * dv; ++i) r.state[(b * hkv + h) * dk * dv + i] = S[i];
    }
  }
  return r;
}

void CheckClose(const Tensor& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got.data<float>()[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
  }
}

struct Case {
  const char* rule;
  int64_t B, T, hq, hkv, dk, dv;
  bool past;
  int decay_kind;  // 0: none, 1: per key dim, 2: per head
  int beta_kind;   // 0: none, 1: per head, 2: shared
  float scale;
};

TEST_CASE("LinearAttention matches the reference") {
  const Case cases[] = {
      {"linear", 2, 4, 4, 4, 8, 8, false, 0, 0, 0.0f},
      {"linear", 1, 1, 3, 3, 5, 3, true, 0, 0, 0.0f},
      {"gated", 2, 3, 2, 2, 4, 6, true, 1, 0, 0.0f},
      {"gated", 2, 5, 4, 2, 3, 3, false, 2, 0, 0.5f},
      {"delta", 2, 4, 2, 2, 4, 4, false, 0, 1, 0.0f},
      {"delta", 1, 3, 6, 3, 2, 5, true, 0, 2, 0.0f},
      {"gated_delta", 2, 4, 4, 4, 8, 8, true, 1, 1, 0.0f},
      {"gated_delta", 2, 4, 8, 2, 4, 4, false, 1, 1, 0.0f},
      {"gated_delta", 2, 3, 8, 1, 8, 8, false, 2, 2, 0.25f},
      {"gated_delta", 3, 7, 5, 5, 7, 9, true, 2, 1, 0.0f},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    CAPTURE(c.hq);
    CAPTURE(c.hkv);
    CAPTURE(c.T);
    const Tensor q = RandomF32({c.B, c.T, c.hq * c.dk}, 1);
    // L2-normalized-ish keys keep the delta rule stable.
    const Tensor k = RandomF32({c.B, c.T, c.hkv * c.dk}, 2, -0.4f, 0.4f);
    const Tensor v = RandomF32({c.B, c.T, c.hkv * c.dv}, 3);
    const Tensor past = RandomF32({c.B, c.hkv, c.dk, c.dv}, 4);
    const Tensor decay = RandomF32({c.B, c.T, c.decay_kind == 1 ? c.hkv * c.dk : c.hkv}, 5, -0.5f, 0.0f);
    const Tensor beta = RandomF32({c.B, c.T, c.beta_kind == 1 ? c.hkv : 1}, 6, 0.0f, 1.0f);
    std::vector<Tensor> inputs = {q, k, v, c.past ? past : Tensor(), c.decay_kind ? decay : Tensor(),
                                  c.beta_kind ? beta : Tensor()};
    std::vector<graph::Attribute> attrs = {AttrInt("q_num_heads", c.hq), AttrInt("kv_num_heads", c.hkv),
                                           AttrString("update_rule", c.rule)};
    if (c.scale != 0.0f) attrs.push_back(AttrFloat("scale", c.scale));
    const LaRef ref = Reference(q, k, v, c.past ? &past : nullptr, c.decay_kind ? &decay : nullptr,
                                c.beta_kind ? &beta : nullptr, c.hq, c.hkv, c.scale);
    for (int threads : {1, 3}) {
      auto out = RunNode("LinearAttention", inputs, attrs, Opts(threads));
      REQUIRE(out.size() == 2);
      CHECK(out[0].dims() == Dims{c.B, c.T, c.hq * c.dv});
      CHECK(out[1].dims() == Dims{c.B, c.hkv, c.dk, c.dv});
      CheckClose(out[0], ref.y, 1e-4);
      CheckClose(out[1], ref.state, 1e-4);
    }
    // Output only.
    auto one = RunNode("LinearAttention", inputs, attrs, Opts(1, 1));
    CheckClose(one[0], ref.y, 1e-4);
  }
}

TEST_CASE("LinearAttention default rule is gated_delta") {
  const Tensor q = RandomF32({1, 2, 8}, 1), k = RandomF32({1, 2, 8}, 2), v = RandomF32({1, 2, 8}, 3);
  const Tensor decay = RandomF32({1, 2, 2}, 4, -0.5f, 0.0f), beta = RandomF32({1, 2, 2}, 5, 0.0f, 1.0f);
  auto out = RunNode("LinearAttention", {q, k, v, Tensor(), decay, beta},
                     {AttrInt("q_num_heads", 2), AttrInt("kv_num_heads", 2)}, Opts());
  const LaRef ref = Reference(q, k, v, nullptr, &decay, &beta, 2, 2, 0.0);
  CheckClose(out[0], ref.y, 1e-5);
}

TEST_CASE("LinearAttention float16 / bfloat16") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    auto to16 = [&](const Tensor& f) { return f16::To16(f, dt); };
    auto to32 = [](const Tensor& h) { return f16::To32(h); };
    const Tensor q = to16(RandomF32({2, 3, 16}, 1)), k = to16(RandomF32({2, 3, 8}, 2, -0.4f, 0.4f));
    const Tensor v = to16(RandomF32({2, 3, 8}, 3)), past = to16(RandomF32({2, 2, 4, 4}, 4));
    const Tensor decay = to16(RandomF32({2, 3, 8}, 5, -0.5f, 0.0f)), beta = to16(RandomF32({2, 3, 2}, 6, 0.0f, 1.0f));
    auto out = RunNode("LinearAttention", {q, k, v, past, decay, beta},
                       {AttrInt("q_num_heads", 4), AttrInt("kv_num_heads", 2)}, Opts());
    REQUIRE(out[0].dtype() == dt);
    REQUIRE(out[1].dtype() == dt);
    const Tensor q32 = to32(q), k32 = to32(k), v32 = to32(v), p32 = to32(past), d32 = to32(decay), b32 = to32(beta);
    const LaRef ref = Reference(q32, k32, v32, &p32, &d32, &b32, 4, 2, 0.0);
    const double tol = dt == DType::kBFloat16 ? 2e-2 : 3e-3;
    CheckClose(to32(out[0]), ref.y, tol);
    CheckClose(to32(out[1]), ref.state, tol);
  }
}

TEST_CASE("LinearAttention rejects bad inputs and attributes") {
  const Tensor q = RandomF32({1, 2, 8}, 1), k = RandomF32({1, 2, 8}, 2), v = RandomF32({1, 2, 8}, 3);
  const Tensor decay = RandomF32({1, 2, 2}, 4), beta = RandomF32({1, 2, 2}, 5);
  auto heads = [](int64_t a, int64_t b) {
    return std::vector<graph::Attribute>{AttrInt("q_num_heads", a), AttrInt("kv_num_heads", b),
                                         AttrString("update_rule", "linear")};
  };
  // Heads.
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v}, heads(3, 2), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v}, heads(0, 2), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v}, {AttrInt("q_num_heads", 2)}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v}, heads(3, 3), Opts()), Error);  // 8 % 3
  // Rules and their inputs.
  auto rule = [](const char* r) {
    return std::vector<graph::Attribute>{AttrInt("q_num_heads", 2), AttrInt("kv_num_heads", 2),
                                         AttrString("update_rule", r)};
  };
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v}, rule("bogus"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v}, rule("gated"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v, Tensor(), decay}, rule("linear"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v, Tensor(), Tensor(), beta}, rule("gated"), Opts()), Error);
  // Shapes.
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, RandomF32({1, 2, 6}, 2), v}, rule("linear"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, RandomF32({1, 3, 8}, 3)}, rule("linear"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {RandomF32({2, 8}, 1), k, v}, rule("linear"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v, RandomF32({1, 2, 4, 3}, 4)}, rule("linear"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v, Tensor(), RandomF32({1, 2, 3}, 4)}, rule("gated"), Opts()), Error);
  CHECK_THROWS_AS(RunNode("LinearAttention", {q, k, v, Tensor(), Tensor(), RandomF32({1, 2, 3}, 5)}, rule("delta"), Opts()), Error);
}

}  // namespace
}  // namespace simplecpp::testing
