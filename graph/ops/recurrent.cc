// Recurrent ops: RNN (opsets 1, 7, 14, 22), GRU (1, 3, 7, 14, 22), LSTM (1, 7, 14, 22).
//
// Shapes (layout 0; layout 1, opset >= 14, swaps the first two dims of X and Y and puts batch
// first in initial_h/initial_c/Y_h/Y_c): X [seq, batch, input]; W [dirs, G*hidden, input];
// R [dirs, G*hidden, hidden]; B [dirs, 2*G*hidden] (Wb then Rb); sequence_lens [batch];
// initial_h/initial_c [dirs, batch, hidden]; P [dirs, 3*hidden] (LSTM peepholes, order i o f);
// Y [seq, dirs, batch, hidden]; Y_h/Y_c [dirs, batch, hidden]. G = 1 (RNN), 3 (GRU, gates z r h),
// 4 (LSTM, gates i o f c).
//
// Algorithm per direction: one GEMM computes X*W^T (+ biases) for every time step, then each
// step runs one GEMM H*R^T over the batch (GRU without linear_before_reset runs a second one for
// (r . H)*Rh^T) followed by the gate math of kernels/nn/recurrent.h per batch row. Constant W and R
// are prepacked at Prepare (float32). sequence_lens: batch b runs its first len[b] steps only
// (a reverse direction starts at its own step len[b]-1); Y is zero beyond len[b] and Y_h/Y_c
// hold the state after the last step run (the initial state when len[b] == 0).
//
// Activations: `activations` lists per direction (f) for RNN, (f, g) for GRU, (f, g, h) for
// LSTM; names are case-insensitive. activation_alpha / activation_beta are consumed in order by
// the activations that take a parameter (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
// HardSigmoid, Elu); when a list runs out the operator's default is used. `clip` bounds every
// activation input (also h's input C in LSTM; the cell state itself is not clipped).
// input_forget couples LSTM's forget gate to the input gate: f = 1 - i.
//
// Dtypes: float32 (SIMD gate math, packed GEMM), float64 (scalar), float16 (every opset) and
// bfloat16 (opset >= 22, as the spec's T allows): 16-bit storage, float32 arithmetic through
// float16_wrap.h (constant W/R/B/P widened once at Prepare and prepacked; other inputs
// widened per run; Y/Y_h/Y_c rounded once to 16 bits; the state between steps stays float32). The opset-1 attribute output_sequence only says that Y is optional;
// Y is computed whenever it is requested.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/registry.h"
#include "kernels/gemm/gemm.h"
#include "kernels/nn/recurrent.h"

namespace simplecpp::graph {
namespace {

using kernels::RnnActivation;
using kernels::RnnActivationKind;

enum class Cell { kRnn, kGru, kLstm };

// Prepacking a weight matrix with fewer output columns than this wastes most of each panel.
constexpr int64_t kMinPackedColumns = 16;

struct ActivationName {
  const char* name;
  RnnActivationKind kind;
  bool uses_alpha;
  float default_alpha;
  bool uses_beta;
  float default_beta;
};

const ActivationName kActivationNames[] = {
    {"relu", RnnActivationKind::kRelu, false, 0.0f, false, 0.0f},
    {"tanh", RnnActivationKind::kTanh, false, 0.0f, false, 0.0f},
    {"sigmoid", RnnActivationKind::kSigmoid, false, 0.0f, false, 0.0f},
    {"affine", RnnActivationKind::kAffine, true, 1.0f, true, 0.0f},
    {"leakyrelu", RnnActivationKind::kLeakyRelu, true, 0.01f, false, 0.0f},
    {"thresholdedrelu", RnnActivationKind::kThresholdedRelu, true, 1.0f, false, 0.0f},
    {"scaledtanh", RnnActivationKind::kScaledTanh, true, 1.0f, true, 1.0f},
    {"hardsigmoid", RnnActivationKind::kHardSigmoid, true, 0.2f, true, 0.5f},
    {"elu", RnnActivationKind::kElu, true, 1.0f, false, 0.0f},
    {"softsign", RnnActivationKind::kSoftsign, false, 0.0f, false, 0.0f},
    {"softplus", RnnActivationKind::kSoftplus, false, 0.0f, false, 0.0f},
};

const char* CellName(Cell cell) {
  switch (cell) {
    case Cell::kRnn: return "RNN";
    case Cell::kGru: return "GRU";
    case Cell::kLstm: return "LSTM";
  }
  return "?";
}

// Everything the op reads from its attributes.
struct RecurrentAttrs {
  Cell cell = Cell::kRnn;
  int64_t gates = 1;             // G
  int64_t acts_per_dir = 1;      // activations per direction
  int64_t hidden_size = -1;      // -1: take it from W
  int64_t num_dirs = 1;
  bool forward = true;           // direction "forward" (or the first of "bidirectional")
  bool bidirectional = false;
  std::vector<RnnActivation> acts;  // num_dirs * acts_per_dir
  float clip = 0.0f;                // 0: none
  bool input_forget = false;
  bool linear_before_reset = false;
  bool layout1 = false;
};

// ---------------------------------------------------------------------------------------------
// Type-dependent pieces of the run: float32 uses the kernels, float64 scalar loops.

// c[m, n] (row stride ldc) = a[m, k] (row stride lda) * b^T + col_bias, b stored [n, k] row-major.
void MatMulNT(const float* a, int64_t m, int64_t k, int64_t lda, const float* b, int64_t n,
              const kernels::PackedBF32* packed, const float* col_bias, float* c, int64_t ldc,
              const kernels::Parallel& parallel) {
  if (m == 0 || n == 0) return;
  kernels::GemmEpilogue epilogue;
  epilogue.col_bias = col_bias;
  if (packed != nullptr) {
    kernels::GemmPackedBF32(false, m, 1.0f, a, lda, *packed, 0.0f, c, ldc, parallel, epilogue);
  } else {
    kernels::GemmF32(false, true, m, n, k, 1.0f, a, lda, b, k, 0.0f, c, ldc, parallel, epilogue);
  }
}
void MatMulNT(const double* a, int64_t m, int64_t k, int64_t lda, const double* b, int64_t n,
              const kernels::PackedBF32* /*packed*/, const double* col_bias, double* c,
              int64_t ldc, const kernels::Parallel& /*parallel*/) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[i * lda + kk] * b[j * k + kk];
      c[i * ldc + j] = acc + (col_bias != nullptr ? col_bias[j] : 0.0);
    }
  }
}

void Gate(const RnnActivation& act, float clip, const float* a, const float* b, float* y,
          int64_t n) {
  kernels::RnnGateF32(act, clip, a, b, y, n);
}
void Gate(const RnnActivation& act, float clip, const double* a, const double* b, double* y,
          int64_t n) {
  kernels::RnnGateF64(act, clip, a, b, y, n);
}
void MulAdd(const float* a, const float* b, float* y, int64_t n) { kernels::RnnMulAddF32(a, b, y, n); }
void MulAdd(const double* a, const double* b, double* y, int64_t n) {
  kernels::RnnMulAddF64(a, b, y, n);
}
void Mul(const float* a, const float* b, float* y, int64_t n) { kernels::RnnMulF32(a, b, y, n); }
void Mul(const double* a, const double* b, double* y, int64_t n) { kernels::RnnMulF64(a, b, y, n); }
void LstmCell(const float* in, const float* f, const float* g, float* c, int64_t n) {
  kernels::LstmCellF32(in, f, g, c, n);
}
void LstmCell(const double* in, const double* f, const double* g, double* c, int64_t n) {
  kernels::LstmCellF64(in, f, g, c, n);
}
void GruUpdate(const float* z, const float* cand, float* h, int64_t n) {
  kernels::GruUpdateF32(z, cand, h, n);
}
void GruUpdate(const double* z, const double* cand, double* h, int64_t n) {
  kernels::GruUpdateF64(z, cand, h, n);
}

// Problem sizes and the inputs/outputs present, fixed at Prepare.
struct RunPlan {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  bool has_b = false, has_lens = false, has_h0 = false, has_c0 = false, has_p = false;
  bool has_y = false, has_yh = false, has_yc = false;
  DType lens_dtype = DType::kInt32;
};

// Prepacked weights (float32 with constant W / R); null entries are multiplied unpacked.
struct PackedWeights {
  std::vector<std::shared_ptr<const kernels::PackedBF32>> w;  // [dir]
  // [dir * 2 + part]: part 0 = rows of H*R^T computed before the gates (all G*hidden rows, or
  // z and r for GRU without linear_before_reset), part 1 = GRU's Rh in that case.
  std::vector<std::shared_ptr<const kernels::PackedBF32>> r;
};

// Sequence lengths (all seq_length without the input), validated here because their values are
// known only now.
std::vector<int64_t> SequenceLengths(const RunPlan& p, RunContext& rc) {
  std::vector<int64_t> lens(static_cast<size_t>(p.batch), p.seq);
  if (!p.has_lens) return lens;
  const Tensor& t = rc.input(4);
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t v = p.lens_dtype == DType::kInt64 ? t.data<int64_t>()[b]
                                                    : int64_t{t.data<int32_t>()[b]};
    if (v < 0 || v > p.seq) {
      rc.Fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(v) +
              " is outside [0, seq_length = " + std::to_string(p.seq) + "]");
    }
    lens[b] = v;
  }
  return lens;
}

// The inputs, outputs and working buffers of one run.
template <typename T>
struct RecurrentBuffers {
  const T* x;
  const T* w;
  const T* r;
  const T* bias;  // [dir][2 * G * H] or null
  const T* h0;
  const T* c0;
  const T* peep;
  T* y;
  T* yh;
  T* yc;
  T* xw;   // [S * B, G * H]: X*W^T + bx, one row per (time, batch) in X's row order
  T* rh;   // [B, G * H]: H*R^T of the current step
  T* hs;   // [B, H] hidden state
  T* cs;   // [B, H] cell state (LSTM)
  T* tmp;  // [B, H] GRU's r . H
  T* bx;   // [G * H] added to X*W^T
  T* bh;   // [G * H] added to H*R^T (GRU linear_before_reset)
};

// Where the [hidden] vectors addressed by (time, dir, batch) lie, for either layout.
struct RecurrentLayout {
  bool layout1;
  int64_t S, B, D, H;
  int64_t y_off(int64_t t, int64_t d, int64_t b) const {
    return layout1 ? ((b * S + t) * D + d) * H : ((t * D + d) * B + b) * H;
  }
  int64_t state_off(int64_t d, int64_t b) const { return layout1 ? (b * D + d) * H : (d * B + b) * H; }
  int64_t x_row(int64_t t, int64_t b) const { return layout1 ? b * S + t : t * B + b; }
};

// One cell update of batch row b: the gates from xr (X*W^T + bx, consumed) and g (H*R^T), the
// new hidden state into hrow and, for LSTM, the cell state in crow.
template <typename T>
void UpdateRow(const RecurrentAttrs& a, const RnnActivation* act, const T* pd, T* xr, T* g,
               T* hrow, T* crow, int64_t H) {
  const bool gru_lbr = a.cell == Cell::kGru && a.linear_before_reset;
  switch (a.cell) {
    case Cell::kRnn:
      Gate(act[0], a.clip, xr, g, hrow, H);
      break;
    case Cell::kGru: {
      T* gz = g;
      T* gh = g + 2 * H;
      if (gru_lbr) {
        Gate(act[0], a.clip, xr, g, g, 2 * H);  // z, r
        Mul(g + H, gh, gh, H);                   // r . (H*Rh^T + Rbh)
      }
      Gate(act[1], a.clip, xr + 2 * H, gh, gh, H);  // candidate
      GruUpdate(gz, gh, hrow, H);
      break;
    }
    case Cell::kLstm: {
      T* gi = g;
      T* go = g + H;
      T* gf = g + 2 * H;
      T* gc = g + 3 * H;
      if (pd != nullptr) {
        MulAdd(pd, crow, gi, H);
        if (!a.input_forget) MulAdd(pd + 2 * H, crow, gf, H);
      }
      Gate(act[0], a.clip, xr, gi, gi, H);
      if (!a.input_forget) Gate(act[0], a.clip, xr + 2 * H, gf, gf, H);
      Gate(act[1], a.clip, xr + 3 * H, gc, gc, H);
      LstmCell(gi, a.input_forget ? nullptr : gf, gc, crow, H);
      if (pd != nullptr) MulAdd(pd + H, crow, go, H);
      Gate(act[0], a.clip, xr + H, go, go, H);
      Gate(act[2], a.clip, crow, nullptr, xr, H);  // h(C) into the spent X*W^T row
      Mul(go, xr, hrow, H);
      break;
    }
  }
}

// One direction d over the whole sequence.
template <typename T>
void RunDirection(const RecurrentAttrs& a, const RunPlan& p, const PackedWeights& packed,
                  const std::vector<int64_t>& lens, const RecurrentLayout& lay,
                  const RecurrentBuffers<T>& buf, int64_t d, RunContext& rc) {
  const int64_t S = p.seq, B = p.batch, I = p.input, H = p.hidden, G = a.gates;
  const int64_t GH = G * H;
  const bool gru_two_step = a.cell == Cell::kGru && !a.linear_before_reset;
  const bool gru_lbr = a.cell == Cell::kGru && a.linear_before_reset;
  const bool reverse = a.bidirectional ? d == 1 : !a.forward;
  const RnnActivation* act = &a.acts[static_cast<size_t>(d * a.acts_per_dir)];
  const T* wd = buf.w + d * GH * I;
  const T* rd = buf.r + d * GH * H;
  const T* pd = buf.peep != nullptr ? buf.peep + d * 3 * H : nullptr;

  // Biases: Wb + Rb folded into the input product, except GRU's Rbh with linear_before_reset
  // (it sits inside r . (H*Rh^T + Rbh)).
  const T* bx_use = nullptr;
  const T* bh_use = nullptr;
  if (buf.bias != nullptr) {
    const T* wb = buf.bias + d * 2 * GH;
    const T* rb = wb + GH;
    for (int64_t j = 0; j < GH; ++j) buf.bx[j] = wb[j] + rb[j];
    bx_use = buf.bx;
    if (gru_lbr) {
      for (int64_t j = 0; j < GH; ++j) buf.bh[j] = j < 2 * H ? T(0) : rb[j];
      for (int64_t j = 2 * H; j < GH; ++j) buf.bx[j] = wb[j];
      bh_use = buf.bh;
    }
  }

  // X*W^T + bx for every (time, batch) row, in X's row order.
  MatMulNT(buf.x, S * B, I, I, wd, GH, packed.w.empty() ? nullptr : packed.w[d].get(), bx_use,
           buf.xw, GH, rc.parallel());

  // Initial states.
  for (int64_t b = 0; b < B; ++b) {
    T* hrow = buf.hs + b * H;
    T* crow = buf.cs + b * H;
    if (buf.h0 != nullptr) {
      std::memcpy(hrow, buf.h0 + lay.state_off(d, b), static_cast<size_t>(H) * sizeof(T));
    } else {
      std::fill(hrow, hrow + H, T(0));
    }
    if (buf.c0 != nullptr) {
      std::memcpy(crow, buf.c0 + lay.state_off(d, b), static_cast<size_t>(H) * sizeof(T));
    } else {
      std::fill(crow, crow + H, T(0));
    }
  }

  const kernels::PackedBF32* r_part0 = packed.r.empty() ? nullptr : packed.r[d * 2].get();
  const kernels::PackedBF32* r_part1 = packed.r.empty() ? nullptr : packed.r[d * 2 + 1].get();
  const int64_t part0_cols = gru_two_step ? 2 * H : GH;
  int64_t max_len = 0;
  for (int64_t v : lens) max_len = std::max(max_len, v);

  for (int64_t s = 0; s < max_len; ++s) {
    // H*R^T for every batch row (rows that already finished compute unused values).
    MatMulNT(buf.hs, B, H, H, rd, part0_cols, r_part0, bh_use, buf.rh, GH, rc.parallel());
    auto time_of = [&](int64_t b) { return reverse ? lens[b] - 1 - s : s; };

    if (gru_two_step) {
      // Phase 1: z, r and r . H for the active rows; inactive rows multiply zeros.
      for (int64_t b = 0; b < B; ++b) {
        T* g = buf.rh + b * GH;
        T* rhrow = buf.tmp + b * H;
        if (s >= lens[b]) {
          std::fill(rhrow, rhrow + H, T(0));
          continue;
        }
        const T* xr = buf.xw + lay.x_row(time_of(b), b) * GH;
        Gate(act[0], a.clip, xr, g, g, 2 * H);  // z and r share f
        Mul(g + H, buf.hs + b * H, rhrow, H);
      }
      MatMulNT(buf.tmp, B, H, H, rd + 2 * H * H, H, r_part1, nullptr, buf.rh + 2 * H, GH,
               rc.parallel());
    }

    for (int64_t b = 0; b < B; ++b) {
      if (s >= lens[b]) continue;
      const int64_t t = time_of(b);
      T* hrow = buf.hs + b * H;
      // Each X*W^T row is used once: UpdateRow may reuse it as a temporary.
      UpdateRow(a, act, pd, buf.xw + lay.x_row(t, b) * GH, buf.rh + b * GH, hrow, buf.cs + b * H, H);
      if (buf.y != nullptr) {
        std::memcpy(buf.y + lay.y_off(t, d, b), hrow, static_cast<size_t>(H) * sizeof(T));
      }
    }
  }

  for (int64_t b = 0; b < B; ++b) {
    if (buf.yh != nullptr) {
      std::memcpy(buf.yh + lay.state_off(d, b), buf.hs + b * H, static_cast<size_t>(H) * sizeof(T));
    }
    if (buf.yc != nullptr) {
      std::memcpy(buf.yc + lay.state_off(d, b), buf.cs + b * H, static_cast<size_t>(H) * sizeof(T));
    }
  }
}

template <typename T>
void RunRecurrent(const RecurrentAttrs& a, const RunPlan& p, const PackedWeights& packed,
                  RunContext& rc) {
  const int64_t S = p.seq, B = p.batch, H = p.hidden, D = a.num_dirs;
  const int64_t GH = a.gates * H;
  const std::vector<int64_t> lens = SequenceLengths(p, rc);
  const DType dt = rc.input(0).dtype();
  RecurrentBuffers<T> buf;
  buf.x = rc.input(0).data<T>();
  buf.w = rc.input(1).data<T>();
  buf.r = rc.input(2).data<T>();
  buf.bias = p.has_b ? rc.input(3).data<T>() : nullptr;
  buf.h0 = p.has_h0 ? rc.input(5).data<T>() : nullptr;
  buf.c0 = p.has_c0 ? rc.input(6).data<T>() : nullptr;
  buf.peep = p.has_p ? rc.input(7).data<T>() : nullptr;
  buf.y = p.has_y ? rc.output(0).data<T>() : nullptr;
  buf.yh = p.has_yh ? rc.output(1).data<T>() : nullptr;
  buf.yc = p.has_yc ? rc.output(2).data<T>() : nullptr;
  if (buf.y != nullptr && p.has_lens) {  // steps beyond a sequence's length stay zero
    std::memset(static_cast<void*>(buf.y), 0, static_cast<size_t>(S * D * B * H) * sizeof(T));
  }
  Tensor xw_t = rc.Scratch(dt, {std::max<int64_t>(S * B, 1), std::max<int64_t>(GH, 1)});
  Tensor rh_t = rc.Scratch(dt, {std::max<int64_t>(B, 1), std::max<int64_t>(GH, 1)});
  Tensor state_t = rc.Scratch(dt, {2, std::max<int64_t>(B * H, 1)});
  Tensor tmp_t = rc.Scratch(dt, {std::max<int64_t>(B * H, 1)});
  Tensor bias_t = rc.Scratch(dt, {2, std::max<int64_t>(GH, 1)});
  buf.xw = xw_t.data<T>();
  buf.rh = rh_t.data<T>();
  buf.hs = state_t.data<T>();
  buf.cs = buf.hs + std::max<int64_t>(B * H, 1);
  buf.tmp = tmp_t.data<T>();
  buf.bx = bias_t.data<T>();
  buf.bh = buf.bx + std::max<int64_t>(GH, 1);
  const RecurrentLayout lay{a.layout1, S, B, D, H};
  for (int64_t d = 0; d < D; ++d) RunDirection(a, p, packed, lens, lay, buf, d, rc);
}

// ---------------------------------------------------------------------------------------------

class RecurrentOp final : public Op {
 public:
  RecurrentOp(const OpInit& init, Cell cell) {
    a_.cell = cell;
    a_.gates = cell == Cell::kRnn ? 1 : (cell == Cell::kGru ? 3 : 4);
    a_.acts_per_dir = cell == Cell::kRnn ? 1 : (cell == Cell::kGru ? 2 : 3);
    const int max_inputs = cell == Cell::kLstm ? 8 : 6;
    const int max_outputs = cell == Cell::kLstm ? 3 : 2;
    if (init.num_inputs() < 3 || init.num_inputs() > max_inputs) {
      init.Fail(std::string(CellName(cell)) + " takes 3 to " + std::to_string(max_inputs) +
                " inputs, got " + std::to_string(init.num_inputs()));
    }
    if (init.num_outputs() > max_outputs) {
      init.Fail(std::string(CellName(cell)) + " has at most " + std::to_string(max_outputs) +
                " outputs, got " + std::to_string(init.num_outputs()));
    }
    const std::string direction = init.GetString("direction", "forward");
    if (direction == "forward") {
      a_.forward = true;
    } else if (direction == "reverse") {
      a_.forward = false;
    } else if (direction == "bidirectional") {
      a_.bidirectional = true;
      a_.num_dirs = 2;
    } else {
      init.Fail("attribute 'direction' is '" + direction +
                "'; expected forward, reverse or bidirectional");
    }
    if (init.Has("hidden_size")) {
      a_.hidden_size = init.GetInt("hidden_size", 0);
      if (a_.hidden_size < 1) {
        init.Fail("attribute 'hidden_size' must be >= 1, got " + std::to_string(a_.hidden_size));
      }
    }
    if (init.Has("clip")) {
      a_.clip = init.GetFloat("clip", 0.0f);
      if (!(a_.clip > 0.0f)) init.Fail("attribute 'clip' must be > 0, got " + std::to_string(a_.clip));
    }
    if (cell == Cell::kLstm) {
      const int64_t v = init.GetInt("input_forget", 0);
      if (v != 0 && v != 1) init.Fail("attribute 'input_forget' must be 0 or 1");
      a_.input_forget = v == 1;
    }
    if (cell == Cell::kGru) {
      const int64_t v = init.GetInt("linear_before_reset", 0);
      if (v != 0 && v != 1) init.Fail("attribute 'linear_before_reset' must be 0 or 1");
      a_.linear_before_reset = v == 1;
    }
    if (init.opset() >= 14) {
      const int64_t v = init.GetInt("layout", 0);
      if (v != 0 && v != 1) init.Fail("attribute 'layout' must be 0 or 1, got " + std::to_string(v));
      a_.layout1 = v == 1;
    }
    ReadActivations(init);
    bfloat16_allowed_ = init.opset() >= 22;  // bfloat16 joined T in opset 22
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.RequireInput(1);
    ctx.RequireInput(2);
    const DType t = ctx.input_dtype(0);
    const bool bf16_ok = bfloat16_allowed_;
    if (t != DType::kFloat32 && t != DType::kFloat64 && t != DType::kFloat16 &&
        !(t == DType::kBFloat16 && bf16_ok)) {
      ctx.Unsupported("dtype " + DTypeName(t) + " is not supported (float32, float64, float16" +
                      std::string(bf16_ok ? " and bfloat16 are)" : " are; bfloat16 needs opset 22)"));
    }
    for (int i : {1, 2, 3, 5, 6, 7}) {
      if (ctx.has_input(i)) ctx.RequireSameDType(0, i);
    }
    if (ctx.has_input(4)) ctx.RequireDType(4, {DType::kInt32, DType::kInt64});
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_dtype(i, t);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    if (Is16BitFloat(dt)) {
      return widen16::PrepareWidened16(ctx, dt, {0, 1, 2, 3, 5, 6, 7},
                                       [this](PrepareContext& c) { return PrepareTyped(c); });
    }
    return PrepareTyped(ctx);
  }

 private:
  // float32 / float64 (16-bit dtypes arrive here as float32 through PrepareWidened16).
  RunFn PrepareTyped(PrepareContext& ctx) const {
    const int64_t G = a_.gates, D = a_.num_dirs;
    const Dims& dx = ctx.input_dims(0);
    const Dims& dw = ctx.input_dims(1);
    const Dims& dr = ctx.input_dims(2);
    if (dx.size() != 3) ctx.Fail("X must have rank 3, got " + DimsToString(dx));
    if (dw.size() != 3) ctx.Fail("W must have rank 3, got " + DimsToString(dw));
    if (dr.size() != 3) ctx.Fail("R must have rank 3, got " + DimsToString(dr));
    RunPlan p;
    p.seq = a_.layout1 ? dx[1] : dx[0];
    p.batch = a_.layout1 ? dx[0] : dx[1];
    p.input = dx[2];
    int64_t h = a_.hidden_size;
    if (h < 0) {
      if (dw[1] % G != 0 || dw[1] == 0) {
        ctx.Fail("hidden_size is not given and W's dim 1 (" + std::to_string(dw[1]) +
                 ") is not a positive multiple of " + std::to_string(G));
      }
      h = dw[1] / G;
    }
    p.hidden = h;
    const int64_t GH = G * h;
    auto expect = [&](int i, const char* name, const Dims& want) {
      if (ctx.input_dims(i) != want) {
        ctx.Fail(std::string(name) + " has shape " + DimsToString(ctx.input_dims(i)) + ", expected " +
                 DimsToString(want) + " (num_directions " + std::to_string(D) + ", hidden_size " +
                 std::to_string(h) + ", input_size " + std::to_string(p.input) + ", batch " +
                 std::to_string(p.batch) + ")");
      }
    };
    expect(1, "W", {D, GH, p.input});
    expect(2, "R", {D, GH, h});
    p.has_b = ctx.has_input(3);
    if (p.has_b) expect(3, "B", {D, 2 * GH});
    p.has_lens = ctx.has_input(4);
    if (p.has_lens) {
      expect(4, "sequence_lens", {p.batch});
      p.lens_dtype = ctx.input_dtype(4);
    }
    const Dims state_dims = a_.layout1 ? Dims{p.batch, D, h} : Dims{D, p.batch, h};
    p.has_h0 = ctx.has_input(5);
    if (p.has_h0) expect(5, "initial_h", state_dims);
    p.has_c0 = ctx.has_input(6);
    if (p.has_c0) expect(6, "initial_c", state_dims);
    p.has_p = ctx.has_input(7);
    if (p.has_p) expect(7, "P", {D, 3 * h});
    const DType dt = ctx.input_dtype(0);
    // Every scratch and output size is checked for overflow here, before running.
    CheckedNumElements({p.seq, p.batch, GH});
    CheckedNumElements({p.seq, D, p.batch, h});
    p.has_y = ctx.has_output(0);
    p.has_yh = ctx.has_output(1);
    p.has_yc = ctx.has_output(2);
    ctx.set_output(0, dt, a_.layout1 ? Dims{p.batch, p.seq, D, h} : Dims{p.seq, D, p.batch, h});
    ctx.set_output(1, dt, state_dims);
    ctx.set_output(2, dt, state_dims);

    auto packed = std::make_shared<PackedWeights>();
    if (dt == DType::kFloat32 && p.seq * p.batch > 0) {
      const Tensor* wc = ctx.input_value(1);
      if (wc != nullptr && GH >= kMinPackedColumns && p.input > 0) {
        for (int64_t d = 0; d < D; ++d) {
          packed->w.push_back(
              kernels::PackedBF32::Pack(true, p.input, GH, wc->data<float>() + d * GH * p.input,
                                        p.input));
        }
      }
      const Tensor* rcst = ctx.input_value(2);
      const bool two_step = a_.cell == Cell::kGru && !a_.linear_before_reset;
      const int64_t part0 = two_step ? 2 * h : GH;
      if (rcst != nullptr && part0 >= kMinPackedColumns) {
        for (int64_t d = 0; d < D; ++d) {
          const float* rd = rcst->data<float>() + d * GH * h;
          packed->r.push_back(kernels::PackedBF32::Pack(true, h, part0, rd, h));
          packed->r.push_back(two_step ? kernels::PackedBF32::Pack(true, h, h, rd + 2 * h * h, h)
                                       : nullptr);
        }
      }
    }
    if (p.batch == 0) return [](RunContext&) {};
    const RecurrentAttrs a = a_;
    std::shared_ptr<const PackedWeights> pw = packed;
    if (dt == DType::kFloat64) {
      return [a, p, pw](RunContext& rc) { RunRecurrent<double>(a, p, *pw, rc); };
    }
    return [a, p, pw](RunContext& rc) { RunRecurrent<float>(a, p, *pw, rc); };
  }

  void ReadActivations(const OpInit& init) {
    const int64_t per_dir = a_.acts_per_dir, D = a_.num_dirs;
    std::vector<std::string> names;
    if (init.Has("activations")) names = init.GetStrings("activations");
    if (names.empty()) {
      if (a_.cell == Cell::kRnn) names = {"Tanh"};
      if (a_.cell == Cell::kGru) names = {"Sigmoid", "Tanh"};
      if (a_.cell == Cell::kLstm) names = {"Sigmoid", "Tanh", "Tanh"};
    }
    const int64_t count = static_cast<int64_t>(names.size());
    if (count == per_dir && D == 2) {
      const std::vector<std::string> one_dir = names;
      names.insert(names.end(), one_dir.begin(), one_dir.end());  // same functions both ways
    } else if (count == 2 * per_dir && D == 1) {
      names.resize(static_cast<size_t>(per_dir));  // the spec's RNN default lists two
    } else if (count != per_dir * D) {
      init.Fail("attribute 'activations' has " + std::to_string(count) + " entries; expected " +
                std::to_string(per_dir * D) + " (" + std::to_string(per_dir) +
                " per direction)");
    }
    const std::vector<float> alphas = init.GetFloats("activation_alpha");
    const std::vector<float> betas = init.GetFloats("activation_beta");
    size_t next_alpha = 0, next_beta = 0;
    for (const std::string& name : names) {
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const ActivationName* found = nullptr;
      for (const ActivationName& n : kActivationNames) {
        if (lower == n.name) found = &n;
      }
      if (found == nullptr) {
        init.Unsupported("activation '" + name +
                         "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                         "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
      }
      RnnActivation act;
      act.kind = found->kind;
      act.alpha = found->default_alpha;
      act.beta = found->default_beta;
      if (found->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
      if (found->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
      a_.acts.push_back(act);
    }
  }

  RecurrentAttrs a_;
  bool bfloat16_allowed_ = false;
};

template <Cell kCell>
OpFactory RecurrentFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<RecurrentOp>(init, kCell);
  };
}

}  // namespace

void RegisterRecurrentOps(OpRegistry& registry) {
  for (int v : {1, 7, 14, 22}) registry.Register("", "RNN", v, RecurrentFactory<Cell::kRnn>());
  for (int v : {1, 3, 7, 14, 22}) registry.Register("", "GRU", v, RecurrentFactory<Cell::kGru>());
  for (int v : {1, 7, 14, 22}) registry.Register("", "LSTM", v, RecurrentFactory<Cell::kLstm>());
}

}  // namespace simplecpp::graph
