// RNN, GRU and LSTM (graph/ops/recurrent.cc) against the scalar reference of
// tests/reference/recurrent_reference.h: every direction, layouts, activations with parameters,
// clip, sequence_lens (including 0), initial states, peepholes, input_forget,
// linear_before_reset, constant (prepacked) and run-time weights, float64, and shape errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/recurrent_float16_test_util.h"
#include "reference/recurrent_reference.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

using reference::RecurrentRefConfig;
using reference::RefActivation;

graph::Attribute AttrStrings(const std::string& name, std::vector<std::string> v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kStrings;
  a.strings = std::move(v);
  return a;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

struct RecurrentCase {
  RecurrentRefConfig cfg;
  bool bias = true;
  bool initial_h = false;
  bool initial_c = false;
  bool peepholes = false;
  std::vector<int32_t> lens;  // empty: no sequence_lens input
  // Activation attributes; empty names: the op's defaults (cfg.acts must then hold the defaults).
  std::vector<std::string> act_names;
  std::vector<float> alphas, betas;
  bool constant_weights = false;
  bool pass_hidden_size = true;
  int64_t opset = 22;
  int threads = 1;
  bool f64 = false;
  uint32_t seed = 1;
};

std::vector<RefActivation> DefaultActs(const std::string& cell, int64_t dirs) {
  std::vector<RefActivation> per;
  if (cell == "RNN") per = {{"Tanh"}};
  if (cell == "GRU") per = {{"Sigmoid"}, {"Tanh"}};
  if (cell == "LSTM") per = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
  std::vector<RefActivation> all;
  for (int64_t d = 0; d < dirs; ++d) all.insert(all.end(), per.begin(), per.end());
  return all;
}

Tensor ToF64(const Tensor& t) {
  std::vector<double> v(t.data<float>(), t.data<float>() + t.num_elements());
  return Tensor::FromVector(DType::kFloat64, t.dims(), v);
}

void CheckCase(RecurrentCase c) {
  RecurrentRefConfig& cfg = c.cfg;
  const int64_t D = cfg.direction == "bidirectional" ? 2 : 1;
  const int64_t G = cfg.cell == "RNN" ? 1 : (cfg.cell == "GRU" ? 3 : 4);
  const int64_t S = cfg.seq, N = cfg.batch, I = cfg.input, H = cfg.hidden;
  if (cfg.acts.empty()) cfg.acts = DefaultActs(cfg.cell, D);
  CAPTURE(cfg.cell);
  CAPTURE(cfg.direction);
  CAPTURE(cfg.layout);
  CAPTURE(N);
  CAPTURE(H);
  CAPTURE(c.lens.size());
  CAPTURE(c.constant_weights);
  CAPTURE(c.f64);

  const Dims x_dims = cfg.layout == 0 ? Dims{S, N, I} : Dims{N, S, I};
  const Dims state_dims = cfg.layout == 0 ? Dims{D, N, H} : Dims{N, D, H};
  Tensor x = RandomF32(x_dims, c.seed * 11 + 1);
  Tensor w = RandomF32({D, G * H, I}, c.seed * 11 + 2, -0.6f, 0.6f);
  Tensor r = RandomF32({D, G * H, H}, c.seed * 11 + 3, -0.6f, 0.6f);
  Tensor b = c.bias ? RandomF32({D, 2 * G * H}, c.seed * 11 + 4, -0.5f, 0.5f) : Tensor();
  Tensor lens = c.lens.empty() ? Tensor() : I32({N}, c.lens);
  Tensor h0 = c.initial_h ? RandomF32(state_dims, c.seed * 11 + 5) : Tensor();
  Tensor c0 = c.initial_c ? RandomF32(state_dims, c.seed * 11 + 6) : Tensor();
  Tensor p = c.peepholes ? RandomF32({D, 3 * H}, c.seed * 11 + 7) : Tensor();

  std::vector<graph::Attribute> attrs = {AttrString("direction", cfg.direction)};
  if (c.pass_hidden_size) attrs.push_back(AttrInt("hidden_size", H));
  if (c.opset >= 14) attrs.push_back(AttrInt("layout", cfg.layout));
  if (!c.act_names.empty()) attrs.push_back(AttrStrings("activations", c.act_names));
  if (!c.alphas.empty()) attrs.push_back(AttrFloats("activation_alpha", c.alphas));
  if (!c.betas.empty()) attrs.push_back(AttrFloats("activation_beta", c.betas));
  if (cfg.clip > 0) attrs.push_back(AttrFloat("clip", static_cast<float>(cfg.clip)));
  if (cfg.cell == "LSTM" && cfg.input_forget) attrs.push_back(AttrInt("input_forget", 1));
  if (cfg.cell == "GRU" && cfg.linear_before_reset) attrs.push_back(AttrInt("linear_before_reset", 1));

  std::vector<Tensor> inputs = {x, w, r, b, lens, h0};
  if (cfg.cell == "LSTM") {
    inputs.push_back(c0);
    inputs.push_back(p);
  }
  while (!inputs.back().defined()) inputs.pop_back();
  if (c.f64) {
    for (int i : {0, 1, 2, 3, 5, 6, 7}) {
      if (i < static_cast<int>(inputs.size()) && inputs[i].defined()) inputs[i] = ToF64(inputs[i]);
    }
  }

  RunNodeOptions opts;
  opts.opset = c.opset;
  opts.num_outputs = cfg.cell == "LSTM" ? 3 : 2;
  opts.threads = c.threads;
  if (c.constant_weights) opts.constant_inputs = {1, 2, 3};
  const std::vector<Tensor> out = RunNode(cfg.cell, inputs, attrs, opts);

  const auto ref = reference::RecurrentReference(
      cfg, Values(x), Values(w), Values(r), c.bias ? Values(b) : std::vector<float>{}, c.lens,
      c.initial_h ? Values(h0) : std::vector<float>{}, c.initial_c ? Values(c0) : std::vector<float>{},
      c.peepholes ? Values(p) : std::vector<float>{});

  const Dims y_dims = cfg.layout == 0 ? Dims{S, D, N, H} : Dims{N, S, D, H};
  REQUIRE(out.size() == static_cast<size_t>(opts.num_outputs));
  CHECK(out[0].dims() == y_dims);
  CHECK(out[1].dims() == state_dims);
  const DType dt = c.f64 ? DType::kFloat64 : DType::kFloat32;
  auto compare = [&](const Tensor& got, const std::vector<float>& want, const char* name) {
    CAPTURE(name);
    REQUIRE(got.dtype() == dt);
    REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double g = c.f64 ? got.data<double>()[i] : double{got.data<float>()[i]};
      const double tol = c.f64 ? 1e-6 : 2e-5 + 2e-4 * std::fabs(want[i]);
      if (!(std::fabs(g - want[i]) <= tol) && bad++ < 3) {
        CAPTURE(i);
        CHECK(g == doctest::Approx(want[i]));
      }
    }
    CHECK(bad == 0);
  };
  compare(out[0], ref.y, "Y");
  compare(out[1], ref.y_h, "Y_h");
  if (cfg.cell == "LSTM") {
    CHECK(out[2].dims() == state_dims);
    compare(out[2], ref.y_c, "Y_c");
  }
}

RecurrentCase Basic(const std::string& cell, const std::string& direction, int64_t batch,
                    int64_t hidden, int layout = 0) {
  RecurrentCase c;
  c.cfg.cell = cell;
  c.cfg.direction = direction;
  c.cfg.seq = 4;
  c.cfg.batch = batch;
  c.cfg.input = 3;
  c.cfg.hidden = hidden;
  c.cfg.layout = layout;
  return c;
}

const char* const kCells[] = {"RNN", "GRU", "LSTM"};
const char* const kDirections[] = {"forward", "reverse", "bidirectional"};

TEST_CASE("Recurrent: directions, layouts, batch and hidden sizes") {
  uint32_t seed = 1;
  for (const char* cell : kCells) {
    for (const char* dir : kDirections) {
      for (int layout : {0, 1}) {
        for (int64_t batch : {1, 3}) {
          for (int64_t hidden : {1, 5, 17}) {
            RecurrentCase c = Basic(cell, dir, batch, hidden, layout);
            c.seed = seed++;
            c.initial_h = seed % 2 == 0;
            c.initial_c = seed % 3 == 0;
            c.bias = seed % 5 != 0;
            c.constant_weights = seed % 2 == 1;
            c.cfg.linear_before_reset = seed % 4 < 2;
            CheckCase(c);
          }
        }
      }
    }
  }
}

TEST_CASE("Recurrent: sequence_lens with varied lengths including 0") {
  uint32_t seed = 100;
  for (const char* cell : kCells) {
    for (const char* dir : kDirections) {
      for (int layout : {0, 1}) {
        for (bool constant : {false, true}) {
          RecurrentCase c = Basic(cell, dir, 3, 17, layout);
          c.cfg.seq = 5;
          c.lens = {5, 0, 2};
          c.initial_h = true;
          c.initial_c = true;
          c.constant_weights = constant;
          c.seed = seed++;
          CheckCase(c);
          RecurrentCase one = Basic(cell, dir, 1, 5, layout);
          one.lens = {3};
          one.seed = seed++;
          CheckCase(one);
        }
      }
    }
  }
}

TEST_CASE("Recurrent: all sequences empty or seq_length 0") {
  for (const char* cell : kCells) {
    RecurrentCase c = Basic(cell, "bidirectional", 3, 5);
    c.lens = {0, 0, 0};
    c.initial_h = true;
    c.initial_c = true;
    CheckCase(c);
    RecurrentCase e = Basic(cell, "forward", 2, 5);
    e.cfg.seq = 0;
    e.initial_h = true;
    CheckCase(e);
  }
}

TEST_CASE("LSTM: peepholes, input_forget, clip") {
  uint32_t seed = 200;
  for (const char* dir : kDirections) {
    for (int64_t hidden : {1, 5, 17}) {
      for (int variant = 0; variant < 4; ++variant) {
        RecurrentCase c = Basic("LSTM", dir, 3, hidden, variant % 2);
        c.peepholes = variant != 1;
        c.cfg.input_forget = variant >= 2;
        c.cfg.clip = variant == 1 || variant == 3 ? 0.4 : 0.0;
        c.initial_h = true;
        c.initial_c = true;
        c.lens = variant == 3 ? std::vector<int32_t>{1, 4, 0} : std::vector<int32_t>{};
        c.constant_weights = variant % 2 == 0;
        c.seed = seed++;
        CheckCase(c);
      }
    }
  }
}

TEST_CASE("GRU: linear_before_reset and clip") {
  uint32_t seed = 300;
  for (const char* dir : kDirections) {
    for (bool lbr : {false, true}) {
      for (int64_t hidden : {1, 5, 17}) {
        RecurrentCase c = Basic("GRU", dir, 3, hidden);
        c.cfg.linear_before_reset = lbr;
        c.cfg.clip = hidden == 5 ? 0.3 : 0.0;
        c.initial_h = true;
        c.constant_weights = hidden == 17;
        c.seed = seed++;
        CheckCase(c);
      }
    }
  }
}

TEST_CASE("Recurrent: every activation with parameters") {
  struct Act {
    const char* name;
    bool alpha, beta;
    double default_alpha, default_beta;
  };
  const Act acts[] = {{"Relu", false, false, 0, 0},        {"Tanh", false, false, 0, 0},
                      {"Sigmoid", false, false, 0, 0},     {"Affine", true, true, 1, 0},
                      {"LeakyRelu", true, false, 0.01, 0}, {"ThresholdedRelu", true, false, 1, 0},
                      {"ScaledTanh", true, true, 1, 1},    {"HardSigmoid", true, true, 0.2, 0.5},
                      {"Elu", true, false, 1, 0},          {"Softsign", false, false, 0, 0},
                      {"Softplus", false, false, 0, 0}};
  uint32_t seed = 400;
  for (const Act& a : acts) {
    CAPTURE(a.name);
    for (bool with_params : {false, true}) {
      // RNN with the activation in both directions (the second direction with other parameters).
      RecurrentCase c = Basic("RNN", "bidirectional", 3, 5);
      c.act_names = {a.name, a.name};
      c.cfg.acts = {{a.name, a.default_alpha, a.default_beta}, {a.name, a.default_alpha, a.default_beta}};
      if (with_params) {
        if (a.alpha) {
          c.alphas = {0.7f, -0.3f};
          c.cfg.acts[0].alpha = 0.7f;
          c.cfg.acts[1].alpha = -0.3f;
        }
        if (a.beta) {
          c.betas = {0.25f, 1.5f};
          c.cfg.acts[0].beta = 0.25f;
          c.cfg.acts[1].beta = 1.5f;
        }
      }
      c.initial_h = true;
      c.seed = seed++;
      CheckCase(c);
    }
  }
  // Parameters are consumed only by the activations that take them, in order.
  RecurrentCase l = Basic("LSTM", "bidirectional", 3, 5);
  l.act_names = {"HardSigmoid", "Tanh", "ScaledTanh", "Sigmoid", "LeakyRelu", "Affine"};
  l.alphas = {0.3f, 0.9f, 0.05f, 0.5f};
  l.betas = {0.4f, 1.2f, -0.1f};
  l.cfg.acts = {{"HardSigmoid", 0.3f, 0.4f}, {"Tanh"}, {"ScaledTanh", 0.9f, 1.2f},
                {"Sigmoid"}, {"LeakyRelu", 0.05f, 0}, {"Affine", 0.5f, -0.1f}};
  l.initial_c = true;
  CheckCase(l);
  // Names are case-insensitive; GRU with other activations; one direction's list reused twice.
  RecurrentCase g = Basic("GRU", "bidirectional", 3, 5);
  g.act_names = {"hardsigmoid", "SOFTSIGN"};
  g.cfg.acts = {{"HardSigmoid", 0.2, 0.5}, {"Softsign"}, {"HardSigmoid", 0.2, 0.5}, {"Softsign"}};
  CheckCase(g);
}

TEST_CASE("Recurrent: hidden_size from W, older opsets, threads, float64") {
  uint32_t seed = 500;
  for (const char* cell : kCells) {
    RecurrentCase c = Basic(cell, "bidirectional", 3, 5);
    c.pass_hidden_size = false;
    c.seed = seed++;
    CheckCase(c);
    for (int64_t opset : {1, 7, 14}) {
      RecurrentCase o = Basic(cell, "reverse", 3, 5);
      o.opset = opset;
      o.initial_h = true;
      o.seed = seed++;
      CheckCase(o);
    }
    RecurrentCase t = Basic(cell, "bidirectional", 3, 17);
    t.cfg.seq = 6;
    t.threads = 2;
    t.constant_weights = true;
    t.lens = {6, 3, 1};
    t.seed = seed++;
    CheckCase(t);
    for (int layout : {0, 1}) {
      RecurrentCase f = Basic(cell, "bidirectional", 3, 5, layout);
      f.f64 = true;
      f.initial_h = true;
      f.initial_c = true;
      f.peepholes = true;
      f.lens = {4, 0, 2};
      f.cfg.clip = 0.8;
      f.seed = seed++;
      CheckCase(f);
    }
  }
  // Bigger hidden size: packed GEMM panels, GEMV for batch 1.
  RecurrentCase big = Basic("LSTM", "forward", 1, 64);
  big.cfg.input = 40;
  big.constant_weights = true;
  big.initial_h = true;
  CheckCase(big);
  RecurrentCase bigg = Basic("GRU", "bidirectional", 4, 33);
  bigg.cfg.input = 20;
  bigg.constant_weights = true;
  CheckCase(bigg);
}

TEST_CASE("Recurrent: invalid shapes and attributes are errors") {
  const Tensor x = RandomF32({4, 2, 3}, 1);
  const Tensor w = RandomF32({1, 20, 3}, 2);  // LSTM hidden 5
  const Tensor r = RandomF32({1, 20, 5}, 3);
  RunNodeOptions opts;
  opts.opset = 22;
  opts.num_outputs = 3;
  auto run = [&](std::vector<Tensor> in, std::vector<graph::Attribute> attrs) {
    return RunNode("LSTM", in, attrs, opts);
  };
  CHECK_NOTHROW(run({x, w, r}, {AttrInt("hidden_size", 5)}));
  CHECK_THROWS_AS(run({x, w, r}, {AttrInt("hidden_size", 4)}), Error);
  CHECK_THROWS_AS(run({x, RandomF32({2, 20, 3}, 2), r}, {AttrInt("hidden_size", 5)}), Error);
  CHECK_THROWS_AS(run({x, RandomF32({1, 20, 4}, 2), r}, {}), Error);
  CHECK_THROWS_AS(run({x, w, RandomF32({1, 20, 4}, 3)}, {}), Error);
  CHECK_THROWS_AS(run({x, w, r, RandomF32({1, 20}, 4)}, {}), Error);
  CHECK_THROWS_AS(run({x, w, r, Tensor(), I32({3}, {1, 1, 1})}, {}), Error);
  CHECK_THROWS_AS(run({x, w, r, Tensor(), Tensor(), RandomF32({1, 3, 5}, 5)}, {}), Error);
  CHECK_THROWS_AS(run({x, w, r, Tensor(), Tensor(), Tensor(), Tensor(), RandomF32({1, 10}, 5)}, {}),
                  Error);
  CHECK_THROWS_AS(run({RandomF32({4, 3}, 1), w, r}, {}), Error);
  CHECK_THROWS_AS(run({x, RandomF32({1, 18, 3}, 2), RandomF32({1, 18, 5}, 3)}, {}), Error);
  // sequence_lens values are checked when running.
  CHECK_THROWS_AS(run({x, w, r, Tensor(), I32({2}, {5, 1})}, {}), Error);
  CHECK_THROWS_AS(run({x, w, r, Tensor(), I32({2}, {-1, 1})}, {}), Error);
  CHECK_NOTHROW(run({x, w, r, Tensor(), I32({2}, {4, 0})}, {}));
  // Attributes.
  CHECK_THROWS_AS(run({x, w, r}, {AttrString("direction", "sideways")}), Error);
  CHECK_THROWS_AS(run({x, w, r}, {AttrInt("layout", 2)}), Error);
  CHECK_THROWS_AS(run({x, w, r}, {AttrFloat("clip", -1.0f)}), Error);
  CHECK_THROWS_AS(run({x, w, r}, {AttrStrings("activations", {"Sigmoid", "Tanh"})}), Error);
  CHECK_THROWS_AS(run({x, w, r}, {AttrStrings("activations", {"Sigmoid", "Tanh", "Gelu"})}), Error);
  CHECK_THROWS_AS(run({x, w, r}, {AttrInt("hidden_size", 0)}), Error);
  // Mixed dtypes.
  CHECK_THROWS_AS(run({x, ToF64(w), r}, {}), Error);
}

TEST_CASE("Recurrent: float16 and bfloat16 against float32") {
  // Storage 16-bit, arithmetic float32, one rounding per output (Check16). atol bounds the effect
  // of rounding the inputs: every input is in [-1, 1) and off by <= eps16/2 after rounding, so each
  // product of two rounded factors is off by <= eps16 and each gate pre-activation by
  // <= (I + H + 2) * eps16; the activations are 1-Lipschitz and the error may grow over the S
  // steps: atol = S * (I + H + 2) * eps16.
  const int64_t S = 4, N = 3, I = 3, H = 5;
  for (const char* cell : kCells) {
    const int64_t G = std::string(cell) == "RNN" ? 1 : (std::string(cell) == "GRU" ? 3 : 4);
    for (const char* direction : {"forward", "bidirectional"}) {
      const int64_t D = std::string(direction) == "bidirectional" ? 2 : 1;
      for (bool constant_weights : {false, true}) {
        for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
          CAPTURE(cell);
          CAPTURE(direction);
          CAPTURE(constant_weights);
          CAPTURE(DTypeName(dt));
          std::vector<Tensor> in = {RandomF32({S, N, I}, 1), RandomF32({D, G * H, I}, 2),
                                    RandomF32({D, G * H, H}, 3), RandomF32({D, 2 * G * H}, 4),
                                    I32({N}, {4, 2, 0}), RandomF32({D, N, H}, 5)};
          if (std::string(cell) == "LSTM") {
            in.push_back(RandomF32({D, N, H}, 6));
            in.push_back(RandomF32({D, 3 * H}, 7));
          }
          std::vector<Tensor> in16, in_rounded;
          for (const Tensor& t : in) {
            in16.push_back(To16(t, dt));
            in_rounded.push_back(From16(in16.back()));
          }
          const std::vector<graph::Attribute> attrs = {AttrString("direction", direction)};
          RunNodeOptions opts;
          opts.opset = 22;  // bfloat16 is allowed from opset 22
          opts.num_outputs = std::string(cell) == "LSTM" ? 3 : 2;
          if (constant_weights) opts.constant_inputs = {1, 2, 3};
          const std::vector<Tensor> got = RunNode(cell, in16, attrs, opts);
          const std::vector<Tensor> exact = RunNode(cell, in_rounded, attrs, opts);
          const std::vector<Tensor> ref = RunNode(cell, in, attrs, opts);
          REQUIRE(got.size() == ref.size());
          const double atol = static_cast<double>(S * (I + H + 2)) * Eps16(dt);
          for (size_t o = 0; o < got.size(); ++o) {
            CAPTURE(o);
            Check16(got[o], exact[o], ref[o], dt, atol);
          }
        }
      }
    }
  }
  // bfloat16 needs opset 22; other dtypes stay unsupported.
  RunNodeOptions old;
  old.opset = 14;
  const std::vector<Tensor> bf = {To16(RandomF32({S, N, I}, 1), DType::kBFloat16),
                                  To16(RandomF32({1, H, I}, 2), DType::kBFloat16),
                                  To16(RandomF32({1, H, H}, 3), DType::kBFloat16)};
  CHECK_THROWS_AS(RunNode("RNN", bf, {}, old), Error);
  CHECK_THROWS_AS(RunNode("RNN", {I32({1, 1, 1}, {1}), I32({1, 1, 1}, {1}), I32({1, 1, 1}, {1})}),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing
