// Scalar reference for the ONNX recurrent ops (RNN, GRU, LSTM), written from the operator spec
// with plain loops in double precision. Used by tests/graph/ops/recurrent_test.cc.
//
// Tensors are flat row-major vectors in the op's own layouts (see graph/ops/recurrent.cc):
// layout 0: X [seq, batch, input], states [dirs, batch, hidden], Y [seq, dirs, batch, hidden];
// layout 1: X [batch, seq, input], states [batch, dirs, hidden], Y [batch, seq, dirs, hidden].
// Empty vectors stand for omitted optional inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace simplecpp::testing::reference {

struct RefActivation {
  std::string name;  // spec spelling: "Tanh", "Sigmoid", "Relu", "Affine", ...
  double alpha = 0;
  double beta = 0;
};

inline double RefActivate(const RefActivation& a, double x) {
  const std::string& n = a.name;
  if (n == "Relu") return std::max(0.0, x);
  if (n == "Tanh") return std::tanh(x);
  if (n == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (n == "Affine") return a.alpha * x + a.beta;
  if (n == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
  if (n == "ThresholdedRelu") return x > a.alpha ? x : 0.0;
  if (n == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (n == "HardSigmoid") return std::min(1.0, std::max(0.0, a.alpha * x + a.beta));
  if (n == "Elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
  if (n == "Softsign") return x / (1.0 + std::fabs(x));
  if (n == "Softplus") return std::log(1.0 + std::exp(x));
  return NAN;
}

struct RecurrentRefConfig {
  std::string cell = "RNN";  // "RNN", "GRU", "LSTM"
  std::string direction = "forward";
  int64_t seq = 1, batch = 1, input = 1, hidden = 1;
  int layout = 0;
  // Activations of every direction in order: (f) / (f, g) / (f, g, h) per direction.
  std::vector<RefActivation> acts;
  double clip = 0;  // 0: none
  bool input_forget = false;
  bool linear_before_reset = false;
};

struct RecurrentRefResult {
  std::vector<float> y, y_h, y_c;
};

inline RecurrentRefResult RecurrentReference(const RecurrentRefConfig& c,
                                             const std::vector<float>& x,
                                             const std::vector<float>& w,
                                             const std::vector<float>& r,
                                             const std::vector<float>& b,
                                             const std::vector<int32_t>& lens,
                                             const std::vector<float>& h0,
                                             const std::vector<float>& c0,
                                             const std::vector<float>& p) {
  const int64_t S = c.seq, N = c.batch, I = c.input, H = c.hidden;
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const int64_t G = c.cell == "RNN" ? 1 : (c.cell == "GRU" ? 3 : 4);
  const int64_t per_dir = c.cell == "RNN" ? 1 : (c.cell == "GRU" ? 2 : 3);
  auto X = [&](int64_t t, int64_t n, int64_t i) {
    return double{c.layout == 0 ? x[(t * N + n) * I + i] : x[(n * S + t) * I + i]};
  };
  auto state_index = [&](int64_t d, int64_t n, int64_t j) {
    return c.layout == 0 ? (d * N + n) * H + j : (n * D + d) * H + j;
  };
  auto y_index = [&](int64_t t, int64_t d, int64_t n, int64_t j) {
    return c.layout == 0 ? ((t * D + d) * N + n) * H + j : ((n * S + t) * D + d) * H + j;
  };
  auto clip = [&](double v) {
    if (c.clip > 0) v = std::min(c.clip, std::max(-c.clip, v));
    return v;
  };
  RecurrentRefResult out;
  out.y.assign(static_cast<size_t>(S * D * N * H), 0.0f);
  out.y_h.assign(static_cast<size_t>(D * N * H), 0.0f);
  out.y_c.assign(static_cast<size_t>(D * N * H), 0.0f);

  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = c.direction == "reverse" || (D == 2 && d == 1);
    const RefActivation* act = &c.acts[static_cast<size_t>(d * per_dir)];
    // Row `row` of gate block `gate` of W / R, bias blocks of B.
    auto Wv = [&](int64_t gate, int64_t row, int64_t i) { return double{w[((d * G + gate) * H + row) * I + i]}; };
    auto Rv = [&](int64_t gate, int64_t row, int64_t j) { return double{r[((d * G + gate) * H + row) * H + j]}; };
    auto Wb = [&](int64_t gate, int64_t row) { return b.empty() ? 0.0 : double{b[d * 2 * G * H + gate * H + row]}; };
    auto Rb = [&](int64_t gate, int64_t row) { return b.empty() ? 0.0 : double{b[d * 2 * G * H + (G + gate) * H + row]}; };
    auto Pv = [&](int64_t which, int64_t row) { return p.empty() ? 0.0 : double{p[d * 3 * H + which * H + row]}; };

    for (int64_t n = 0; n < N; ++n) {
      const int64_t len = lens.empty() ? S : lens[n];
      std::vector<double> h(H), cell(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0.empty() ? 0.0 : h0[state_index(d, n, j)];
        cell[j] = c0.empty() ? 0.0 : c0[state_index(d, n, j)];
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        // xw(gate, j) = Xt*W^T, hr(gate, j) = Ht-1*R^T
        auto xw = [&](int64_t gate, int64_t j) {
          double s = 0;
          for (int64_t i = 0; i < I; ++i) s += X(t, n, i) * Wv(gate, j, i);
          return s;
        };
        auto hr = [&](const std::vector<double>& hv, int64_t gate, int64_t j) {
          double s = 0;
          for (int64_t k = 0; k < H; ++k) s += hv[k] * Rv(gate, j, k);
          return s;
        };
        std::vector<double> hn(H), cn(H);
        if (c.cell == "RNN") {
          for (int64_t j = 0; j < H; ++j) {
            hn[j] = RefActivate(act[0], clip(xw(0, j) + hr(h, 0, j) + Wb(0, j) + Rb(0, j)));
          }
        } else if (c.cell == "GRU") {
          std::vector<double> z(H), rr(H), rh(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = RefActivate(act[0], clip(xw(0, j) + hr(h, 0, j) + Wb(0, j) + Rb(0, j)));
            rr[j] = RefActivate(act[0], clip(xw(1, j) + hr(h, 1, j) + Wb(1, j) + Rb(1, j)));
            rh[j] = rr[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre;
            if (c.linear_before_reset) {
              pre = xw(2, j) + rr[j] * (hr(h, 2, j) + Rb(2, j)) + Wb(2, j);
            } else {
              pre = xw(2, j) + hr(rh, 2, j) + Rb(2, j) + Wb(2, j);
            }
            const double cand = RefActivate(act[1], clip(pre));
            hn[j] = (1 - z[j]) * cand + z[j] * h[j];
          }
        } else {  // LSTM, gates i o f c
          for (int64_t j = 0; j < H; ++j) {
            const double i_g = RefActivate(
                act[0], clip(xw(0, j) + hr(h, 0, j) + Pv(0, j) * cell[j] + Wb(0, j) + Rb(0, j)));
            const double f_g =
                c.input_forget
                    ? 1.0 - i_g
                    : RefActivate(act[0], clip(xw(2, j) + hr(h, 2, j) + Pv(2, j) * cell[j] +
                                               Wb(2, j) + Rb(2, j)));
            const double c_g = RefActivate(act[1], clip(xw(3, j) + hr(h, 3, j) + Wb(3, j) + Rb(3, j)));
            cn[j] = f_g * cell[j] + i_g * c_g;
            const double o_g = RefActivate(
                act[0], clip(xw(1, j) + hr(h, 1, j) + Pv(1, j) * cn[j] + Wb(1, j) + Rb(1, j)));
            hn[j] = o_g * RefActivate(act[2], clip(cn[j]));
          }
          cell = cn;
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) out.y[y_index(t, d, n, j)] = static_cast<float>(h[j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        out.y_h[state_index(d, n, j)] = static_cast<float>(h[j]);
        out.y_c[state_index(d, n, j)] = static_cast<float>(cell[j]);
      }
    }
  }
  return out;
}

}  // namespace simplecpp::testing::reference
