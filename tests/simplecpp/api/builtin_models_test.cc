// The built-in demo models (simplecpp/api/builtin_models.cc): deterministic, only registered
// ops, they survive an ONNX write/read round trip, and they run end to end through the public API
// with sane outputs.
#include "simplecpp/api/builtin_models.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/registry.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp {
namespace {

// ---- scalar references, written from the layer definitions in builtin_models.cc ----

using Vec = std::vector<double>;

Vec Weights(const graph::Model& m, const std::string& name) {
  const Tensor* t = m.graph.FindInitializer(name);
  REQUIRE(t != nullptr);
  return Vec(t->data<float>(), t->data<float>() + t->num_elements());
}

// x [C,H,W], w [O,C,3,3] -> [O,H+2p-2,W+2p-2]
Vec Conv3x3(const Vec& x, int64_t c, int64_t h, int64_t w, const Vec& wt, const Vec& b, int64_t o,
            int64_t pad) {
  const int64_t oh = h + 2 * pad - 2, ow = w + 2 * pad - 2;
  Vec y(o * oh * ow);
  for (int64_t oc = 0; oc < o; ++oc) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double acc = b[oc];
        for (int64_t ic = 0; ic < c; ++ic) {
          for (int64_t ki = 0; ki < 3; ++ki) {
            for (int64_t kj = 0; kj < 3; ++kj) {
              const int64_t yi = i + ki - pad, xj = j + kj - pad;
              if (yi < 0 || yi >= h || xj < 0 || xj >= w) continue;
              acc += x[(ic * h + yi) * w + xj] * wt[((oc * c + ic) * 3 + ki) * 3 + kj];
            }
          }
        }
        y[(oc * oh + i) * ow + j] = acc;
      }
    }
  }
  return y;
}

void Relu(Vec* v) {
  for (double& x : *v) x = std::max(x, 0.0);
}

void SoftmaxRows(Vec* v, int64_t cols) {
  for (size_t r = 0; r < v->size() / cols; ++r) {
    double* p = v->data() + r * cols;
    const double mx = *std::max_element(p, p + cols);
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += (p[j] = std::exp(p[j] - mx));
    for (int64_t j = 0; j < cols; ++j) p[j] /= sum;
  }
}

Vec ReferenceCnn(const graph::Model& m, const Tensor& input) {
  Vec x(input.data<float>(), input.data<float>() + input.num_elements());
  Vec a = Conv3x3(x, 3, 32, 32, Weights(m, "conv1.weight"), Weights(m, "conv1.bias"), 8, 0);
  Relu(&a);  // [8,30,30]
  Vec p(8 * 15 * 15);
  for (int64_t c = 0; c < 8; ++c) {
    for (int64_t i = 0; i < 15; ++i) {
      for (int64_t j = 0; j < 15; ++j) {
        double mx = -1e300;
        for (int64_t di = 0; di < 2; ++di) {
          for (int64_t dj = 0; dj < 2; ++dj) mx = std::max(mx, a[(c * 30 + 2 * i + di) * 30 + 2 * j + dj]);
        }
        p[(c * 15 + i) * 15 + j] = mx;
      }
    }
  }
  Vec b = Conv3x3(p, 8, 15, 15, Weights(m, "conv2.weight"), Weights(m, "conv2.bias"), 16, 1);
  const Vec scale = Weights(m, "bn2.scale"), bias = Weights(m, "bn2.bias"),
            mean = Weights(m, "bn2.mean"), var = Weights(m, "bn2.var");
  Vec gap(16, 0.0);
  for (int64_t c = 0; c < 16; ++c) {
    for (int64_t i = 0; i < 225; ++i) {
      double& v = b[c * 225 + i];
      v = (v - mean[c]) / std::sqrt(var[c] + 1e-5) * scale[c] + bias[c];
      gap[c] += std::max(v, 0.0) / 225.0;
    }
  }
  const Vec fw = Weights(m, "fc.weight"), fb = Weights(m, "fc.bias");
  Vec logits(10);
  for (int64_t j = 0; j < 10; ++j) {
    logits[j] = fb[j];
    for (int64_t i = 0; i < 16; ++i) logits[j] += gap[i] * fw[j * 16 + i];
  }
  SoftmaxRows(&logits, 10);
  return logits;
}

// x [rows, n_in] @ W [n_in, n_out] + b
Vec Linear(const graph::Model& m, const std::string& name, const Vec& x, int64_t n_in, int64_t n_out) {
  const Vec w = Weights(m, name + ".weight"), b = Weights(m, name + ".bias");
  const int64_t rows = static_cast<int64_t>(x.size()) / n_in;
  Vec y(rows * n_out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n_out; ++j) {
      double acc = b[j];
      for (int64_t i = 0; i < n_in; ++i) acc += x[r * n_in + i] * w[i * n_out + j];
      y[r * n_out + j] = acc;
    }
  }
  return y;
}

Vec LayerNorm(const graph::Model& m, const std::string& name, const Vec& x, int64_t n) {
  const Vec g = Weights(m, name + ".gamma"), b = Weights(m, name + ".beta");
  Vec y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * n + i] / n;
    for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean) / n;
    for (int64_t i = 0; i < n; ++i) {
      y[r * n + i] = (x[r * n + i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
    }
  }
  return y;
}

Vec ReferenceTransformer(const graph::Model& m, const Tensor& input) {
  constexpr int64_t S = 16, M = 64, H = 4, D = 16, F = 256;
  const Vec x(input.data<float>(), input.data<float>() + input.num_elements());
  const Vec ln1 = LayerNorm(m, "ln1", x, M);
  const Vec q = Linear(m, "q", ln1, M, M), k = Linear(m, "k", ln1, M, M), v = Linear(m, "v", ln1, M, M);
  Vec ctx(S * M, 0.0);
  for (int64_t h = 0; h < H; ++h) {
    Vec scores(S * S);
    for (int64_t i = 0; i < S; ++i) {
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += q[i * M + h * D + d] * k[j * M + h * D + d];
        scores[i * S + j] = acc / std::sqrt(static_cast<double>(D));
      }
    }
    SoftmaxRows(&scores, S);
    for (int64_t i = 0; i < S; ++i) {
      for (int64_t d = 0; d < D; ++d) {
        for (int64_t j = 0; j < S; ++j) ctx[i * M + h * D + d] += scores[i * S + j] * v[j * M + h * D + d];
      }
    }
  }
  Vec hidden = Linear(m, "attn_out", ctx, M, M);
  for (size_t i = 0; i < hidden.size(); ++i) hidden[i] += x[i];
  Vec up = Linear(m, "mlp_up", LayerNorm(m, "ln2", hidden, M), M, F);
  for (double& u : up) u = 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
  Vec y = Linear(m, "mlp_down", up, F, M);
  for (size_t i = 0; i < y.size(); ++i) y[i] += hidden[i];
  return y;
}

void CheckClose(const Tensor& got, const Vec& want, double tol) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    REQUIRE(std::fabs(got.data<float>()[i] - want[i]) <= tol * (1.0 + std::fabs(want[i])));
  }
}

TEST_CASE("builtin::Random is deterministic and uniform in range") {
  builtin::Random a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const float x = a.Uniform(-1.0f, 1.0f);
    CHECK(x == b.Uniform(-1.0f, 1.0f));
    CHECK(x >= -1.0f);
    CHECK(x < 1.0f);
  }
  CHECK(builtin::Random(42).Next() != c.Next());
  // Pinned: the demo's weights and the CLI's generated inputs must not change silently.
  CHECK(builtin::Random(0).Next() == 0xE220A8397B1DCDAFull);
}

TEST_CASE("builtin models use only registered ops and round-trip through the ONNX writer") {
  for (const std::string& name : builtin::BuiltinModelNames()) {
    // The llama models (~110 M parameters each) are checked at a small size in llama_test.cc.
    if (name.rfind("llama", 0) == 0) continue;
    CAPTURE(name);
    const graph::Model m = builtin::MakeBuiltinModel(name);
    for (const graph::Node& n : m.graph.nodes) {
      CAPTURE(n.op_type);
      CHECK(graph::OpRegistry::Global().Find("", n.op_type, m.OpsetVersion("")) != nullptr);
    }
    const std::string bytes = onnx::WriteModel(m);
    CHECK(bytes == onnx::WriteModel(builtin::MakeBuiltinModel(name)));  // deterministic
    const graph::Model back = onnx::ReadModel(bytes.data(), bytes.size(), onnx::ReadOptions{}, nullptr);
    CHECK(back.graph.nodes.size() == m.graph.nodes.size());
    CHECK(back.graph.initializers.size() == m.graph.initializers.size());
    CHECK(back.OpsetVersion("") == m.OpsetVersion(""));
  }
  CHECK_THROWS_AS(builtin::MakeBuiltinModel("nope"), Error);
}

TEST_CASE("builtin cnn runs: softmax probabilities over 10 classes") {
  const std::string bytes = onnx::WriteModel(builtin::MakeBuiltinModel("cnn"));
  const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  REQUIRE(model.inputs().size() == 1);
  CHECK(model.inputs()[0].name == "input");
  Session session(model);
  auto out = session.Run({{"input", builtin::RandomFloatTensor({1, 3, 32, 32}, 7, -1.0f, 1.0f)}});
  const Tensor& p = out.at("probabilities");
  REQUIRE(p.dims() == Dims{1, 10});
  double sum = 0;
  for (int i = 0; i < 10; ++i) {
    CHECK(p.data<float>()[i] > 0.0f);
    sum += p.data<float>()[i];
  }
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("builtin models match a scalar reference") {
  const Tensor image = builtin::RandomFloatTensor({1, 3, 32, 32}, 3, -1.0f, 1.0f);
  const graph::Model cnn = builtin::MakeBuiltinModel("cnn");
  const std::string cnn_bytes = onnx::WriteModel(cnn);
  Session cnn_session(Model::LoadFromBytes(cnn_bytes.data(), cnn_bytes.size()));
  CheckClose(cnn_session.Run({{"input", image}}).at("probabilities"), ReferenceCnn(cnn, image), 1e-5);

  const Tensor tokens = builtin::RandomFloatTensor({1, 16, 64}, 5, -2.0f, 2.0f);
  const graph::Model tf = builtin::MakeBuiltinModel("transformer");
  const std::string tf_bytes = onnx::WriteModel(tf);
  Session tf_session(Model::LoadFromBytes(tf_bytes.data(), tf_bytes.size()));
  CheckClose(tf_session.Run({{"x", tokens}}).at("y"), ReferenceTransformer(tf, tokens), 1e-4);
}

TEST_CASE("builtin transformer runs: finite [1,16,64] output, thread-count independent") {
  const std::string bytes = onnx::WriteModel(builtin::MakeBuiltinModel("transformer"));
  const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  const Tensor x = builtin::RandomFloatTensor({1, 16, 64}, 11, -1.0f, 1.0f);
  SessionOptions one;
  one.threads = 1;
  SessionOptions four;
  four.threads = 4;
  Session s1(model, one), s4(model, four);
  const Tensor y1 = s1.Run({{"x", x}}).at("y");
  const Tensor y4 = s4.Run({{"x", x}}).at("y");
  REQUIRE(y1.dims() == Dims{1, 16, 64});
  for (int64_t i = 0; i < y1.num_elements(); ++i) REQUIRE(std::isfinite(y1.data<float>()[i]));
  CHECK(y1.BitwiseEquals(y4));
}

}  // namespace
}  // namespace simplecpp
