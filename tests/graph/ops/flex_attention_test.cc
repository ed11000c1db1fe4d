// Tests for graph/ops/flex_attention.cc (ai.onnx.preview FlexAttention) through the executor,
// against a scalar reference in double: default and explicit scale, GQA, different head sizes,
// score_mod / prob_mod subgraphs, float64, float16 / bfloat16, thread-count independence and
// errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/op_test_options.h"
#include "graph/op_test_util.h"
#include "graph/ops/float16_compare.h"
#include "kernels/float16/float16.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

RunNodeOptions Opts(int threads = 1) { return NodeOptions(1, threads, 1, "ai.onnx.preview"); }

using ElemFn = std::function<double(double)>;

// Q [B,hq,L,D], K [B,hkv,S,D], V [B,hkv,S,dv] (float32) -> Y [B,hq,L,dv].
std::vector<double> Reference(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                              const ElemFn& score_mod, const ElemFn& prob_mod) {
  const int64_t B = q.dims()[0], hq = q.dims()[1], L = q.dims()[2], D = q.dims()[3];
  const int64_t hkv = k.dims()[1], S = k.dims()[2], dv = v.dims()[3];
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> y(static_cast<size_t>(B * hq * L * dv), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kh = h / (hq / hkv);
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(static_cast<size_t>(S));
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < D; ++d) {
            acc += static_cast<double>(q.data<float>()[((b * hq + h) * L + i) * D + d]) *
                   k.data<float>()[((b * hkv + kh) * S + j) * D + d];
          }
          s[j] = acc * scale;
          if (score_mod) s[j] = score_mod(s[j]);
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < S; ++j) {
          s[j] /= sum;
          if (prob_mod) s[j] = prob_mod(s[j]);
        }
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < S; ++j) acc += s[j] * v.data<float>()[((b * hkv + kh) * S + j) * dv + e];
          y[((b * hq + h) * L + i) * dv + e] = acc;
        }
      }
    }
  }
  return y;
}

// A one-node subgraph: out = op(in) (unary) or op(in, in) (binary).
graph::Attribute Subgraph(const std::string& attr, const std::string& op, bool binary,
                          DType dt = DType::kFloat32) {
  auto g = std::make_shared<graph::Graph>();
  g->name = attr + "_body";
  // A tensor of dtype dt, shape unknown.
  const auto tensor = [dt](const char* name) {
    graph::ValueInfo v;
    v.name = name;
    v.type.kind = graph::TypeInfo::Kind::kTensor;
    v.type.dtype = dt;
    return v;
  };
  g->inputs.push_back(tensor("scores"));
  graph::Node n;
  n.op_type = op;
  n.inputs = binary ? std::vector<std::string>{"scores", "scores"} : std::vector<std::string>{"scores"};
  n.outputs = {"out"};
  g->nodes.push_back(n);
  g->outputs.push_back(tensor("out"));
  graph::Attribute a;
  a.name = attr;
  a.kind = graph::AttrKind::kGraph;
  a.g = g;
  return a;
}

void CheckClose(const Tensor& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got.data<float>()[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
  }
}

TEST_CASE("FlexAttention matches the reference") {
  struct Case {
    int64_t B, hq, hkv, L, S, D, dv;
    float scale;
  };
  const Case cases[] = {
      {1, 1, 1, 1, 1, 1, 1, 0.0f}, {2, 4, 4, 3, 5, 8, 8, 0.0f}, {2, 8, 2, 4, 6, 16, 16, 0.0f},
      {1, 3, 1, 7, 3, 5, 9, 0.3f}, {2, 2, 2, 17, 19, 3, 2, 0.0f},
  };
  for (const Case& c : cases) {
    CAPTURE(c.hq);
    CAPTURE(c.L);
    CAPTURE(c.S);
    const Tensor q = RandomF32({c.B, c.hq, c.L, c.D}, 1);
    const Tensor k = RandomF32({c.B, c.hkv, c.S, c.D}, 2);
    const Tensor v = RandomF32({c.B, c.hkv, c.S, c.dv}, 3);
    std::vector<graph::Attribute> attrs;
    if (c.scale != 0.0f) attrs.push_back(AttrFloat("scale", c.scale));
    const auto ref = Reference(q, k, v, c.scale, nullptr, nullptr);
    for (int threads : {1, 3}) {
      auto out = RunNode("FlexAttention", {q, k, v}, attrs, Opts(threads));
      CHECK(out[0].dims() == Dims{c.B, c.hq, c.L, c.dv});
      CheckClose(out[0], ref, 1e-5);
    }
  }
}

TEST_CASE("FlexAttention runs score_mod and prob_mod subgraphs") {
  const Tensor q = RandomF32({2, 4, 5, 8}, 11, -2.0f, 2.0f);
  const Tensor k = RandomF32({2, 2, 7, 8}, 12, -2.0f, 2.0f);
  const Tensor v = RandomF32({2, 2, 7, 3}, 13);
  {
    auto out = RunNode("FlexAttention", {q, k, v}, {Subgraph("score_mod", "Tanh", false)}, Opts());
    CheckClose(out[0], Reference(q, k, v, 0.0, [](double s) { return std::tanh(s); }, nullptr), 1e-5);
  }
  {
    auto out = RunNode("FlexAttention", {q, k, v}, {Subgraph("prob_mod", "Add", true)}, Opts(2));
    CheckClose(out[0], Reference(q, k, v, 0.0, nullptr, [](double p) { return 2 * p; }), 1e-5);
  }
  {
    auto out = RunNode("FlexAttention", {q, k, v},
                       {Subgraph("score_mod", "Mul", true), Subgraph("prob_mod", "Sqrt", false),
                        AttrFloat("scale", 0.5f)},
                       Opts());
    CheckClose(out[0], Reference(q, k, v, 0.5, [](double s) { return s * s; },
                                 [](double p) { return std::sqrt(p); }),
               1e-5);
  }
}

TEST_CASE("FlexAttention subgraphs read values of the enclosing graph") {
  // score_mod = scores + Q (the node's own input 'in0', read from the outer scope); S == D so
  // the shapes match.
  const Tensor q = RandomF32({2, 2, 3, 4}, 41), k = RandomF32({2, 1, 4, 4}, 42), v = RandomF32({2, 1, 4, 5}, 43);
  graph::Attribute a = Subgraph("score_mod", "Add", true);
  a.g->nodes[0].inputs = {"scores", "in0"};
  auto out = RunNode("FlexAttention", {q, k, v}, {a}, Opts());
  // Reference: the same attention with Q added to the scores element by element.
  const int64_t B = 2, hq = 2, L = 3, S = 4, dv = 5;
  std::vector<double> want(static_cast<size_t>(B * hq * L * dv));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < 4; ++d) {
            acc += static_cast<double>(q.data<float>()[((b * hq + h) * L + i) * 4 + d]) * k.data<float>()[(b * S + j) * 4 + d];
          }
          s[j] = acc * 0.5 + q.data<float>()[((b * hq + h) * L + i) * 4 + j];
          mx = std::max(mx, s[j]);
        }
        for (int64_t j = 0; j < S; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < S; ++j) acc += s[j] / sum * v.data<float>()[(b * S + j) * dv + e];
          want[((b * hq + h) * L + i) * dv + e] = acc;
        }
      }
    }
  }
  CheckClose(out[0], want, 1e-5);
}

TEST_CASE("FlexAttention float64") {
  const Tensor q = RandomF32({1, 2, 3, 4}, 21), k = RandomF32({1, 2, 5, 4}, 22), v = RandomF32({1, 2, 5, 6}, 23);
  auto to64 = [](const Tensor& f) {
    Tensor t(DType::kFloat64, f.dims());
    for (int64_t i = 0; i < f.num_elements(); ++i) t.data<double>()[i] = f.data<float>()[i];
    return t;
  };
  auto out = RunNode("FlexAttention", {to64(q), to64(k), to64(v)},
                     {Subgraph("score_mod", "Add", true, DType::kFloat64)}, Opts(2));
  REQUIRE(out[0].dtype() == DType::kFloat64);
  const auto ref = Reference(q, k, v, 0.0, [](double s) { return 2 * s; }, nullptr);
  for (size_t i = 0; i < ref.size(); ++i) CHECK(out[0].data<double>()[i] == doctest::Approx(ref[i]).epsilon(1e-12));
}

TEST_CASE("FlexAttention float16 / bfloat16") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    auto to16 = [&](const Tensor& f) { return f16::To16(f, dt); };
    auto to32 = [](const Tensor& h) { return f16::To32(h); };
    const Tensor q = to16(RandomF32({2, 4, 3, 8}, 31)), k = to16(RandomF32({2, 2, 5, 8}, 32));
    const Tensor v = to16(RandomF32({2, 2, 5, 4}, 33));
    const double tol = dt == DType::kBFloat16 ? 2e-2 : 3e-3;
    auto out = RunNode("FlexAttention", {q, k, v}, {}, Opts());
    REQUIRE(out[0].dtype() == dt);
    CheckClose(to32(out[0]), Reference(to32(q), to32(k), to32(v), 0.0, nullptr, nullptr), tol);
    // The subgraph sees 16-bit tensors.
    auto mod = RunNode("FlexAttention", {q, k, v}, {Subgraph("prob_mod", "Add", true, dt)}, Opts());
    REQUIRE(mod[0].dtype() == dt);
    CheckClose(to32(mod[0]), Reference(to32(q), to32(k), to32(v), 0.0, nullptr, [](double p) { return 2 * p; }),
               tol);
  }
}

TEST_CASE("FlexAttention rejects bad inputs") {
  const Tensor q = RandomF32({1, 4, 3, 8}, 1), k = RandomF32({1, 2, 5, 8}, 2), v = RandomF32({1, 2, 5, 4}, 3);
  CHECK_THROWS_AS(RunNode("FlexAttention", {RandomF32({4, 3, 8}, 1), k, v}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, RandomF32({1, 2, 5, 7}, 2), v}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, RandomF32({1, 3, 5, 8}, 2), RandomF32({1, 3, 5, 4}, 3)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, k, RandomF32({1, 2, 6, 4}, 3)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, k, RandomF32({2, 2, 5, 4}, 3)}, {}, Opts()), Error);
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, k, v, v}, {}, Opts()), Error);
  // A score_mod that changes the shape (ReduceSum keeps dims but shrinks the last axis).
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, k, v}, {Subgraph("score_mod", "ReduceSum", false)}, Opts()), Error);
  // A score_mod returning another dtype.
  CHECK_THROWS_AS(RunNode("FlexAttention", {q, k, v}, {Subgraph("score_mod", "IsNaN", false)}, Opts()), Error);
}

}  // namespace
}  // namespace simplecpp::testing
