// Real-model coverage (simplecpp/api/builtin_{vad,crnn,segmentation,bert}.cc): each built-in
// model with the structure of a common real model runs through the public API and is compared
// with (a) ONNX Runtime (onnxruntime-node, via tests/models/ort_reference.mjs) when `node` and the
// npm package are available, else skipped with a message, and (b) always, a scalar reference
// written here from the layer definitions (for vad, bert, and 64x64 instances of segmentation).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "graph/executor.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/api/model_impl.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"
#include "tests/models/ort_node.h"

namespace simplecpp {
namespace {

using Vec = std::vector<double>;

// ---- running and comparing ----

std::map<std::string, Tensor> RunModel(const graph::Model& m, const std::map<std::string, Tensor>& inputs) {
  const std::string bytes = onnx::WriteModel(m);
  Session session(Model::LoadFromBytes(bytes.data(), bytes.size()));
  return session.Run(inputs);
}

struct Diff {
  double max_abs = 0, max_rel = 0;
};

// max |got - want| and max |got - want| / max(|want|, 1e-3) (a floor so near-zero values do
// not dominate the relative number).
Diff Compare(const Tensor& got, const Vec& want) {
  REQUIRE(got.dtype() == DType::kFloat32);
  REQUIRE(static_cast<size_t>(got.num_elements()) == want.size());
  Diff d;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.data<float>()[i];
    REQUIRE(std::isfinite(g));
    const double e = std::fabs(g - want[i]);
    d.max_abs = std::max(d.max_abs, e);
    d.max_rel = std::max(d.max_rel, e / std::max(std::fabs(want[i]), 1e-3));
  }
  return d;
}

void Report(const std::string& what, const Diff& d) {
  MESSAGE(what << ": max abs diff " << d.max_abs << ", max rel diff " << d.max_rel);
}

Vec Weights(const graph::Graph& g, const std::string& name) {
  const Tensor* t = g.FindInitializer(name);
  REQUIRE_MESSAGE(t != nullptr, name);
  Vec v(t->num_elements());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t->dtype()) {
      case DType::kFloat32: v[i] = t->data<float>()[i]; break;
      case DType::kInt8: v[i] = t->data<int8_t>()[i]; break;
      case DType::kUInt8: v[i] = t->data<uint8_t>()[i]; break;
      default: FAIL("unexpected initializer dtype");
    }
  }
  return v;
}

Vec ToVec(const Tensor& t) { return Vec(t.data<float>(), t.data<float>() + t.num_elements()); }

// ---- onnxruntime-node reference ----

// Runs the model in ONNX Runtime; returns the outputs (float32, in graph output order), or an
// empty vector when ORT is not available (after saying so).
std::vector<Vec> RunOrt(const std::string& tag, const graph::Model& m,
                        const std::vector<std::pair<std::string, Tensor>>& inputs) {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipping the onnxruntime-node comparison for " << tag << ": " << why);
    return {};
  }
  std::vector<std::vector<float>> ort;
  std::string error;
  REQUIRE_MESSAGE(testing::RunOrtReference(ort_dir, onnx::WriteModel(m), inputs, "real-" + tag, &ort, &error), error);
  REQUIRE(ort.size() == m.graph.outputs.size());
  std::vector<Vec> outs;
  for (const std::vector<float>& v : ort) outs.emplace_back(v.begin(), v.end());
  return outs;
}

// Runs `m` here and in ORT and checks every output within `tol` (absolute, plus tol * |want|).
void CheckAgainstOrt(const std::string& tag, const graph::Model& m,
                     const std::vector<std::pair<std::string, Tensor>>& inputs, double tol) {
  const std::vector<Vec> want = RunOrt(tag, m, inputs);
  if (want.empty()) return;
  const auto got = RunModel(m, std::map<std::string, Tensor>(inputs.begin(), inputs.end()));
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& name = m.graph.outputs[i].name;
    CAPTURE(name);
    const Tensor& t = got.at(name);
    const Diff d = Compare(t, want[i]);
    Report(tag + " vs onnxruntime-node, output " + name, d);
    for (size_t j = 0; j < want[i].size(); ++j) {
      REQUIRE(std::fabs(t.data<float>()[j] - want[i][j]) <= tol * (1.0 + std::fabs(want[i][j])));
    }
  }
}

// ---- scalar building blocks (double precision) ----

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// x [rows, n] @ w [n, m] + b [m]
Vec Linear(const Vec& x, int64_t n, const Vec& w, int64_t m, const Vec& b) {
  const int64_t rows = static_cast<int64_t>(x.size()) / n;
  Vec y(rows * m);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < m; ++j) {
      double acc = b.empty() ? 0.0 : b[j];
      for (int64_t k = 0; k < n; ++k) acc += x[r * n + k] * w[k * m + j];
      y[r * m + j] = acc;
    }
  }
  return y;
}

// One ONNX LSTM direction (gates i, o, f, c; default activations), x [T, in], h/c [H] updated.
Vec Lstm(const Vec& x, int64_t in, const Vec& w, const Vec& r, const Vec& b, int64_t hs, Vec* h, Vec* c) {
  const int64_t steps = static_cast<int64_t>(x.size()) / in;
  Vec y;
  for (int64_t t = 0; t < steps; ++t) {
    Vec gates(4 * hs);
    for (int64_t g = 0; g < 4 * hs; ++g) {
      double acc = b[g] + b[4 * hs + g];
      for (int64_t k = 0; k < in; ++k) acc += w[g * in + k] * x[t * in + k];
      for (int64_t k = 0; k < hs; ++k) acc += r[g * hs + k] * (*h)[k];
      gates[g] = acc;
    }
    for (int64_t j = 0; j < hs; ++j) {
      const double i = Sigmoid(gates[j]), o = Sigmoid(gates[hs + j]), f = Sigmoid(gates[2 * hs + j]);
      const double cc = std::tanh(gates[3 * hs + j]);
      (*c)[j] = f * (*c)[j] + i * cc;
      (*h)[j] = o * std::tanh((*c)[j]);
    }
    y.insert(y.end(), h->begin(), h->end());
  }
  return y;
}

// LayerNorm over rows of width n (the spelled-out form: population variance, eps inside sqrt).
Vec LayerNorm(const Vec& x, int64_t n, const Vec& gamma, const Vec& beta, double eps) {
  Vec y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < n; ++k) mean += x[r * n + k];
    mean /= n;
    for (int64_t k = 0; k < n; ++k) var += (x[r * n + k] - mean) * (x[r * n + k] - mean);
    var /= n;
    for (int64_t k = 0; k < n; ++k) y[r * n + k] = (x[r * n + k] - mean) / std::sqrt(var + eps) * gamma[k] + beta[k];
  }
  return y;
}

void SoftmaxRows(Vec* v, int64_t n) {
  for (size_t r = 0; r < v->size() / n; ++r) {
    double mx = -1e300, sum = 0;
    for (int64_t k = 0; k < n; ++k) mx = std::max(mx, (*v)[r * n + k]);
    for (int64_t k = 0; k < n; ++k) sum += ((*v)[r * n + k] = std::exp((*v)[r * n + k] - mx));
    for (int64_t k = 0; k < n; ++k) (*v)[r * n + k] /= sum;
  }
}

// ---- vad ----

struct VadResult {
  Vec output, hn, cn;
};

VadResult ReferenceVad(const graph::Model& m, const Vec& audio, int64_t sr, const Vec& h, const Vec& c) {
  constexpr int64_t kH = 64, kF = 32;
  const graph::Graph& g = m.graph;
  Vec feat;
  if (sr == 16000) {
    const graph::Graph& then_g = *g.nodes[1].FindAttribute("then_branch")->g;
    feat = Linear(audio, 64, Weights(then_g, "sr16k.weight"), kF, Weights(then_g, "sr16k.bias"));
    for (double& v : feat) v = std::max(v, 0.0);
  } else {
    feat = Linear(audio, 64, Weights(g, "sr8k.weight"), kF, Weights(g, "sr8k.bias"));
    for (double& v : feat) v = std::tanh(v);
  }
  VadResult res;
  Vec seq = feat;
  int64_t in = kF;
  for (int l = 0; l < 2; ++l) {
    const std::string p = "lstm" + std::to_string(l);
    Vec hl(h.begin() + l * kH, h.begin() + (l + 1) * kH), cl(c.begin() + l * kH, c.begin() + (l + 1) * kH);
    seq = Lstm(seq, in, Weights(g, p + ".W"), Weights(g, p + ".R"), Weights(g, p + ".B"), kH, &hl, &cl);
    res.hn.insert(res.hn.end(), hl.begin(), hl.end());
    res.cn.insert(res.cn.end(), cl.begin(), cl.end());
    in = kH;
  }
  Vec last(res.hn.begin() + kH, res.hn.end());
  Vec x = Linear(last, kH, Weights(g, "head.fc1.weight"), 16, Weights(g, "head.fc1.bias"));
  for (double& v : x) v = std::max(v, 0.0);
  x = Linear(x, 16, Weights(g, "head.fc2.weight"), 1, Weights(g, "head.fc2.bias"));
  res.output = {Sigmoid(x[0])};
  return res;
}

TEST_CASE("real models: vad (LSTM stack with state I/O, If on the sample rate)") {
  const graph::Model m = builtin::MakeVadModel();
  const Tensor audio = builtin::RandomFloatTensor({1, 512}, 21, -1.0f, 1.0f);
  const Tensor h = builtin::RandomFloatTensor({2, 1, 64}, 22, -0.5f, 0.5f);
  const Tensor c = builtin::RandomFloatTensor({2, 1, 64}, 23, -0.5f, 0.5f);
  for (int64_t sr : {int64_t{16000}, int64_t{8000}}) {
    CAPTURE(sr);
    const Tensor srt = Tensor::FromVector<int64_t>(DType::kInt64, {}, {sr});
    const auto got = RunModel(m, {{"input", audio}, {"sr", srt}, {"h", h}, {"c", c}});
    const VadResult want = ReferenceVad(m, ToVec(audio), sr, ToVec(h), ToVec(c));
    const std::string tag = "vad sr=" + std::to_string(sr);
    Diff d = Compare(got.at("output"), want.output);
    Report(tag + " vs scalar reference, output", d);
    CHECK(d.max_abs < 1e-5);
    d = Compare(got.at("hn"), want.hn);
    Report(tag + " vs scalar reference, hn", d);
    CHECK(d.max_abs < 1e-5);
    d = Compare(got.at("cn"), want.cn);
    Report(tag + " vs scalar reference, cn", d);
    CHECK(d.max_abs < 1e-5);
    CheckAgainstOrt("vad" + std::to_string(sr), m, {{"input", audio}, {"sr", srt}, {"h", h}, {"c", c}}, 1e-5);
  }
}

// ---- bert ----

struct BertResult {
  Vec hidden, pooled;
};

BertResult ReferenceBert(const graph::Model& m, const std::vector<int64_t>& ids, const std::vector<int64_t>& mask) {
  constexpr int64_t kS = 16, kM = 64, kHeads = 4, kD = 16, kFfn = 128;
  const graph::Graph& g = m.graph;
  auto lin = [&](const std::string& name, const Vec& x, int64_t n, int64_t out) {
    return Linear(x, n, Weights(g, name + ".weight"), out, Weights(g, name + ".bias"));
  };
  auto ln = [&](const std::string& name, const Vec& x) {
    return LayerNorm(x, kM, Weights(g, name + ".gamma"), Weights(g, name + ".beta"), 1e-12);
  };
  const Vec word = Weights(g, "emb.word.weight"), pos = Weights(g, "emb.pos.weight"),
            type = Weights(g, "emb.type.weight");
  Vec x(kS * kM);
  for (int64_t s = 0; s < kS; ++s) {
    for (int64_t k = 0; k < kM; ++k) x[s * kM + k] = word[ids[s] * kM + k] + pos[s * kM + k] + type[k];
  }
  x = ln("emb.ln", x);
  for (int l = 0; l < 2; ++l) {
    const std::string p = "layer" + std::to_string(l);
    const Vec q = lin(p + ".q", x, kM, kM), k = lin(p + ".k", x, kM, kM), v = lin(p + ".v", x, kM, kM);
    Vec ctx(kS * kM);
    for (int64_t hd = 0; hd < kHeads; ++hd) {
      Vec s(kS * kS);
      for (int64_t i = 0; i < kS; ++i) {
        for (int64_t j = 0; j < kS; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < kD; ++d) acc += q[i * kM + hd * kD + d] * k[j * kM + hd * kD + d];
          s[i * kS + j] = acc / std::sqrt(double{kD}) + (1.0 - mask[j]) * -10000.0;
        }
      }
      SoftmaxRows(&s, kS);
      for (int64_t i = 0; i < kS; ++i) {
        for (int64_t d = 0; d < kD; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < kS; ++j) acc += s[i * kS + j] * v[j * kM + hd * kD + d];
          ctx[i * kM + hd * kD + d] = acc;
        }
      }
    }
    Vec a = lin(p + ".attn_out", ctx, kM, kM);
    for (size_t i = 0; i < a.size(); ++i) a[i] += x[i];
    x = ln(p + ".ln1", a);
    Vec u = lin(p + ".ffn_up", x, kM, kFfn);
    for (double& e : u) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
    Vec dn = lin(p + ".ffn_down", u, kFfn, kM);
    for (size_t i = 0; i < dn.size(); ++i) dn[i] += x[i];
    x = ln(p + ".ln2", dn);
  }
  BertResult r;
  r.hidden = x;
  r.pooled = lin("pooler.dense", Vec(x.begin(), x.begin() + kM), kM, kM);
  for (double& e : r.pooled) e = std::tanh(e);
  return r;
}

TEST_CASE("real models: bert (opset 13, spelled-out LayerNorm and Gelu, attention mask)") {
  const graph::Model m = builtin::MakeBertModel();
  std::vector<int64_t> ids(16), mask(16);
  builtin::Random rng(31);
  for (int i = 0; i < 16; ++i) {
    ids[i] = static_cast<int64_t>(rng.Next() % 100);
    mask[i] = i < 11 ? 1 : 0;  // the last 5 tokens are padding
  }
  const Tensor ids_t = Tensor::FromVector<int64_t>(DType::kInt64, {1, 16}, ids);
  const Tensor mask_t = Tensor::FromVector<int64_t>(DType::kInt64, {1, 16}, mask);
  const auto got = RunModel(m, {{"input_ids", ids_t}, {"attention_mask", mask_t}});
  const BertResult want = ReferenceBert(m, ids, mask);
  Diff d = Compare(got.at("last_hidden_state"), want.hidden);
  Report("bert vs scalar reference, last_hidden_state", d);
  CHECK(d.max_abs < 1e-4);
  d = Compare(got.at("pooler_output"), want.pooled);
  Report("bert vs scalar reference, pooler_output", d);
  CHECK(d.max_abs < 1e-4);
  CheckAgainstOrt("bert", m, {{"input_ids", ids_t}, {"attention_mask", mask_t}}, 1e-4);
}

// ---- crnn ----

TEST_CASE("real models: crnn (opset 9, Upsample, ConvTranspose, bidirectional GRU, attention)") {
  const graph::Model m = builtin::MakeCrnnModel();
  const Tensor image = builtin::RandomFloatTensor({1, 1, 32, 128}, 41, 0.0f, 1.0f);
  const auto got = RunModel(m, {{"image", image}});
  const Tensor& p = got.at("probs");
  REQUIRE(p.dims() == Dims{32, 37});
  for (int64_t t = 0; t < 32; ++t) {
    double sum = 0;
    for (int64_t k = 0; k < 37; ++k) sum += p.data<float>()[t * 37 + k];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  }
  CheckAgainstOrt("crnn", m, {{"image", image}}, 1e-5);
}

// ---- segmentation ----

// x [C,H,W] -> Conv(kernel k, pads k/2, stride s, groups) with w [O, C/group, k, k], bias b.
Vec Conv2d(const Vec& x, int64_t c, int64_t h, int64_t w, const Vec& wt, const Vec& b, int64_t o, int64_t k,
           int64_t s, int64_t group, int64_t* oh_out, int64_t* ow_out, double x_zp = 0, const Vec* w_zp = nullptr) {
  const int64_t p = k / 2, oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
  const int64_t cg = c / group, og = o / group;
  Vec y(o * oh * ow);
  for (int64_t oc = 0; oc < o; ++oc) {
    const double wz = w_zp ? (w_zp->size() == 1 ? (*w_zp)[0] : (*w_zp)[oc]) : 0.0;
    const int64_t g0 = oc / og * cg;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double acc = b.empty() ? 0.0 : b[oc];
        for (int64_t ic = 0; ic < cg; ++ic) {
          for (int64_t ki = 0; ki < k; ++ki) {
            for (int64_t kj = 0; kj < k; ++kj) {
              const int64_t yi = i * s + ki - p, xj = j * s + kj - p;
              // Padding is the zero point for ConvInteger (real value 0).
              const double xv = (yi < 0 || yi >= h || xj < 0 || xj >= w) ? x_zp : x[((g0 + ic) * h + yi) * w + xj];
              acc += (xv - x_zp) * (wt[((oc * cg + ic) * k + ki) * k + kj] - wz);
            }
          }
        }
        y[(oc * oh + i) * ow + j] = acc;
      }
    }
  }
  *oh_out = oh;
  *ow_out = ow;
  return y;
}

// Resize by 2 with half_pixel coordinates: nearest (round_prefer_floor) or linear.
Vec Resize2x(const Vec& x, int64_t c, int64_t h, int64_t w, bool linear) {
  const int64_t oh = 2 * h, ow = 2 * w;
  Vec y(c * oh * ow);
  auto coord = [](int64_t o, int64_t n) { return std::clamp((o + 0.5) / 2.0 - 0.5, 0.0, double(n - 1)); };
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        const double yi = coord(i, h), xj = coord(j, w);
        double v;
        if (!linear) {
          auto nearest = [](double f) { return f - std::floor(f) == 0.5 ? std::floor(f) : std::round(f); };
          v = x[(ch * h + static_cast<int64_t>(nearest(yi))) * w + static_cast<int64_t>(nearest(xj))];
        } else {
          const int64_t y0 = static_cast<int64_t>(std::floor(yi)), x0 = static_cast<int64_t>(std::floor(xj));
          const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
          const double fy = yi - y0, fx = xj - x0;
          const double* p = &x[ch * h * w];
          v = (1 - fy) * ((1 - fx) * p[y0 * w + x0] + fx * p[y0 * w + x1]) +
              fy * ((1 - fx) * p[y1 * w + x0] + fx * p[y1 * w + x1]);
        }
        y[(ch * oh + i) * ow + j] = v;
      }
    }
  }
  return y;
}

struct Act {
  Vec v;
  int64_t c, h, w;
};

// The segmentation forward pass, float or as the int8 twin computes it (DynamicQuantizeLinear
// in float32 arithmetic as the spec writes it, exact integer convolution, float rescale).
Vec ReferenceSegmentation(const graph::Model& m, const Vec& image, int64_t size, bool int8) {
  const graph::Graph& g = m.graph;
  auto conv = [&](const std::string& name, const Act& x, int64_t o, int64_t k, int64_t s, int64_t group,
                  bool relu) {
    Act y{{}, o, 0, 0};
    if (!int8) {
      y.v = Conv2d(x.v, x.c, x.h, x.w, Weights(g, name + ".weight"), Weights(g, name + ".bias"), o, k, s, group,
                   &y.h, &y.w);
    } else {
      float lo = 0, hi = 0;
      for (double v : x.v) {
        lo = std::min(lo, static_cast<float>(v));
        hi = std::max(hi, static_cast<float>(v));
      }
      const float scale = (hi - lo) / 255.0f;
      const float zp = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
      Vec q(x.v.size());
      for (size_t i = 0; i < q.size(); ++i) {
        q[i] = std::clamp(std::nearbyint(static_cast<float>(x.v[i]) / scale) + zp, 0.0f, 255.0f);
      }
      const Vec wzp = Weights(g, name + ".weight_zero_point");
      y.v = Conv2d(q, x.c, x.h, x.w, Weights(g, name + ".weight_quantized"), {}, o, k, s, group, &y.h, &y.w, zp,
                   &wzp);
      const Vec ws = Weights(g, name + ".weight_scale"), b = Weights(g, name + ".bias");
      const int64_t hw = y.h * y.w;
      for (int64_t oc = 0; oc < o; ++oc) {
        const float sc = static_cast<float>(scale * static_cast<float>(ws.size() == 1 ? ws[0] : ws[oc]));
        for (int64_t i = 0; i < hw; ++i) y.v[oc * hw + i] = static_cast<float>(y.v[oc * hw + i]) * sc + b[oc];
      }
    }
    if (relu) {
      for (double& v : y.v) v = std::max(v, 0.0);
    }
    return y;
  };
  auto add = [](Act a, const Act& b, bool relu) {
    for (size_t i = 0; i < a.v.size(); ++i) a.v[i] = relu ? std::max(a.v[i] + b.v[i], 0.0) : a.v[i] + b.v[i];
    return a;
  };
  auto up = [](const Act& a, bool linear) { return Act{Resize2x(a.v, a.c, a.h, a.w, linear), a.c, 2 * a.h, 2 * a.w}; };
  const Act in{image, 3, size, size};
  const Act e1 = conv("enc1", in, 16, 3, 2, 1, true);
  const Act e2 = conv("enc2.pw", conv("enc2.dw", e1, 16, 3, 2, 16, true), 32, 1, 1, 1, true);
  const Act e3 = conv("enc3.pw", conv("enc3.dw", e2, 32, 3, 2, 32, true), 64, 1, 1, 1, true);
  const Act e4 = conv("enc4.pw", conv("enc4.dw", e3, 64, 3, 2, 64, true), 128, 1, 1, 1, true);
  Act x = conv("bott.pw", conv("bott.dw", e4, 128, 3, 1, 128, true), 128, 1, 1, 1, false);
  x = add(x, e4, true);
  x = add(up(conv("dec3.proj", x, 64, 1, 1, 1, false), false), e3, true);
  x = up(x, true);
  Act cat{x.v, 96, x.h, x.w};
  cat.v.insert(cat.v.end(), e2.v.begin(), e2.v.end());
  x = conv("dec2.dw", conv("dec2.fuse", cat, 32, 1, 1, 1, true), 32, 3, 1, 32, true);
  x = add(up(conv("dec1.proj", x, 16, 1, 1, 1, false), true), e1, true);
  x = up(conv("head", x, 4, 1, 1, 1, false), true);
  // Softmax over the 4 channels at each pixel.
  const int64_t hw = x.h * x.w;
  Vec out(x.v.size());
  for (int64_t i = 0; i < hw; ++i) {
    Vec px(4);
    for (int64_t ch = 0; ch < 4; ++ch) px[ch] = x.v[ch * hw + i];
    SoftmaxRows(&px, 4);
    for (int64_t ch = 0; ch < 4; ++ch) out[ch * hw + i] = px[ch];
  }
  return out;
}

TEST_CASE("real models: segmentation and its ConvInteger twin at 64x64 vs a scalar reference") {
  const Tensor image = builtin::RandomFloatTensor({1, 3, 64, 64}, 51, 0.0f, 1.0f);
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    const graph::Model m = builtin::MakeSegmentationModel(64, int8);
    const auto got = RunModel(m, {{"image", image}});
    const Diff d = Compare(got.at("mask"), ReferenceSegmentation(m, ToVec(image), 64, int8));
    Report(std::string(int8 ? "segmentation-int8" : "segmentation") + " 64x64 vs scalar reference, mask", d);
    // int8: a float rounding difference before a DynamicQuantizeLinear can move one quantized
    // value by one step, which the following layers carry on.
    CHECK(d.max_abs < (int8 ? 2e-2 : 1e-5));
    if (!int8) {
      CheckAgainstOrt("segmentation-64", m, {{"image", image}}, 1e-5);
    } else {
      // ORT's CPU ConvInteger takes only per-tensor zero points: compare the per-tensor variant
      // (which the scalar reference also checks).
      const graph::Model pt = builtin::MakeSegmentationModel(64, true, false);
      const Diff dp = Compare(RunModel(pt, {{"image", image}}).at("mask"), ReferenceSegmentation(pt, ToVec(image), 64, true));
      Report("segmentation-int8 (per-tensor zero points) 64x64 vs scalar reference, mask", dp);
      CHECK(dp.max_abs < 2e-2);
      CheckAgainstOrt("segmentation-int8-64-per-tensor", pt, {{"image", image}}, 2e-2);
    }
  }
}

TEST_CASE("real models: 1024x1024 segmentation (float32 and int8) vs onnxruntime-node, planned peak memory") {
  const Tensor image = builtin::RandomFloatTensor({1, 3, 1024, 1024}, 61, 0.0f, 1.0f);
  {
    const graph::Model m = builtin::MakeSegmentationModel(1024, false);
    const std::string bytes = onnx::WriteModel(m);
    const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
    graph::Executor ex(model.impl()->plan);
    const std::vector<Tensor> out = ex.Run({{"image", image}});
    REQUIRE(out.at(0).dims() == Dims{1, 4, 1024, 1024});
    MESSAGE("segmentation 1024x1024 float32: planned peak bytes in use " << ex.peak_bytes_in_use() << " ("
            << ex.peak_bytes_in_use() / (1024.0 * 1024.0) << " MiB)");
    CheckAgainstOrt("segmentation-1024", m, {{"image", image}}, 1e-5);
  }
  CheckAgainstOrt("segmentation-int8-1024-per-tensor", builtin::MakeSegmentationModel(1024, true, false),
                  {{"image", image}}, 2e-2);
}

}  // namespace
}  // namespace simplecpp
