// Normalization ops that ONNX Runtime's transformer exports use:
//   SimplifiedLayerNormalization (ONNX domain 1, as ORT registers it, and com.microsoft 1):
//     Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale;
//     inputs X (T), scale (V); outputs Y (V), inv_std_var (float32, optional).
//   com.microsoft SkipLayerNormalization (1):
//     s = input + skip (+ bias);  output = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma (+ beta)
//     inputs input, skip, gamma, beta?, bias?; outputs output, mean?, inv_std_var?,
//     input_skip_bias_sum? (= s).
//   com.microsoft SkipSimplifiedLayerNormalization (1):
//     s = input + skip (+ bias);  output = s / sqrt(mean(s^2) + epsilon) * gamma
//     inputs input, skip, gamma, bias?; outputs output, mean? (refused: RMS norm has no mean),
//     inv_std_var?, input_skip_bias_sum?.
// Skip ops: input is [B, S, H] or [T, H]; skip has input's shape, or [1, S, H] / [S, H] for a
// 3-D input (repeated over the batch); gamma, beta and bias are [H]. The statistics outputs are
// float32 with input's shape and a last dim of 1.
//
// T is float32, float16 or bfloat16. The sum s is formed in float32 and normalized from float32
// (16-bit storage is rounded once: s when it is an output, and the result); parameters are
// widened to float32 at Prepare when constant. The row math is kernels/nn/normalization.h
// (NormalizeRowsF32) and kernels/nn/attention.h (RmsNormalizeRows).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/float16/float16.h"
#include "kernels/nn/attention.h"
#include "kernels/nn/normalization.h"

namespace simplecpp::graph {
namespace {

using FloatVec = std::shared_ptr<const std::vector<float>>;


kernels::FloatStorage StorageOf(DType t) {
  if (t == DType::kFloat16) return kernels::FloatStorage::kF16;
  if (t == DType::kBFloat16) return kernels::FloatStorage::kBF16;
  return kernels::FloatStorage::kF32;
}

std::string IntStr(int64_t v) { return std::to_string(v); }

// A float32 / float16 / bfloat16 tensor's elements as float32.
FloatVec ToF32(const Tensor& t) {
  auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == DType::kFloat32) {
    if (!v->empty()) std::memcpy(v->data(), t.raw_data(), v->size() * sizeof(float));
  } else {
    kernels::Widen16(Float16KindOf(t.dtype()), t.data<uint16_t>(), v->data(), v->size());
  }
  return v;
}

// The float32 values of input i: from Prepare when it is constant, else widened per run.
FloatVec ParamAtRun(const FloatVec& fixed, const RunContext& rc, int i) {
  return fixed ? fixed : ToF32(rc.input(i));
}

// Reads `count` elements of a T row into float32.
void LoadRow(DType t, const void* src, int64_t offset, int64_t count, float* dst) {
  if (t == DType::kFloat32) {
    std::memcpy(dst, static_cast<const float*>(src) + offset, static_cast<size_t>(count) * 4);
  } else {
    kernels::Widen16(Float16KindOf(t), static_cast<const uint16_t*>(src) + offset, dst,
                     static_cast<size_t>(count));
  }
}

// Writes `count` float32 values to a T row (rounded once for 16-bit storage).
void StoreRow(DType t, const float* src, void* dst, int64_t offset, int64_t count) {
  if (t == DType::kFloat32) {
    std::memcpy(static_cast<float*>(dst) + offset, src, static_cast<size_t>(count) * 4);
  } else {
    kernels::Narrow16(Float16KindOf(t), src, static_cast<uint16_t*>(dst) + offset,
                      static_cast<size_t>(count));
  }
}

// 1 / sqrt(mean(x^2) + epsilon) of one float32 row, accumulated in double.
float InvRms(const float* x, int64_t n, float epsilon) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  return static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + epsilon));
}

// Rows per task: fixed, so the split (and the result) does not depend on the thread count.
constexpr int64_t kRowsPerTask = 4;

// ---------------------------------------------------------------------------------------------
// SimplifiedLayerNormalization

class SimplifiedLayerNormOp final : public Op {
 public:
  explicit SimplifiedLayerNormOp(const OpInit& init) {
    if (init.num_inputs() != 2)
      init.Fail("expects 2 inputs (X, scale), got " + IntStr(init.num_inputs()));
    if (init.num_outputs() > 2) init.Fail("has at most 2 outputs (Y, inv_std_var)");
    axis_ = init.GetInt("axis", -1);
    epsilon_ = init.GetFloat("epsilon", 1e-5f);
    if (!(epsilon_ >= 0.0f)) init.Fail("epsilon must be >= 0");
    const int64_t stash = init.GetInt("stash_type", 1);
    if (stash != 1) init.Unsupported("stash_type " + IntStr(stash) + " (only 1, float32)");
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireDType(1, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, ctx.input_dtype(1));
    if (ctx.has_output(1)) ctx.set_output_dtype(1, DType::kFloat32);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    if (r == 0) ctx.Fail("X must have rank >= 1");
    const size_t a =
        static_cast<size_t>(NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); }));
    int64_t rows = 1, n = 1;
    for (size_t i = 0; i < a; ++i) rows *= xd[i];
    for (size_t i = a; i < xd.size(); ++i) n *= xd[i];
    const Dims nd(xd.begin() + static_cast<std::ptrdiff_t>(a), xd.end());
    // scale holds one value per normalized element (ORT compares element counts, so [1, H]
    // for H is accepted too).
    if (CheckedNumElements(ctx.input_dims(1)) != n) {
      ctx.Fail("scale " + DimsToString(ctx.input_dims(1)) +
               " must have as many elements as the "
               "normalized shape " +
               DimsToString(nd) + " (axis " + IntStr(static_cast<int64_t>(a)) + ")");
    }
    const DType xt = ctx.input_dtype(0), yt = ctx.input_dtype(1);
    ctx.set_output(0, yt, xd);
    const bool out_inv = ctx.has_output(1);
    if (out_inv) {
      Dims stat(xd.begin(), xd.begin() + static_cast<std::ptrdiff_t>(a));
      stat.resize(xd.size(), 1);
      ctx.set_output(1, DType::kFloat32, stat);
    }
    FloatVec fixed;
    if (const Tensor* c = ctx.input_value(1)) fixed = ToF32(*c);
    const kernels::FloatStorage xs = StorageOf(xt), ys = StorageOf(yt);
    const float eps = epsilon_;
    return [=](RunContext& rc) {
      const FloatVec scale = ParamAtRun(fixed, rc, 1);
      kernels::RmsNormalizeRows(xs, rc.input(0).raw_data(), ys, rc.output(0).raw_data(), rows, n,
                                scale->data(), eps, rc.parallel());
      if (!out_inv || n == 0) return;
      // The kernel does not return its statistics; recompute them (rarely requested: training).
      const void* x = rc.input(0).raw_data();
      float* inv = rc.output(1).data<float>();
      rc.parallel().For((rows + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t b, int64_t e) {
        std::vector<float> row(static_cast<size_t>(n));
        for (int64_t i = b * kRowsPerTask; i < std::min(rows, e * kRowsPerTask); ++i) {
          LoadRow(xt, x, i * n, n, row.data());
          inv[i] = InvRms(row.data(), n, eps);
        }
      });
    };
  }

 private:
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
};

// ---------------------------------------------------------------------------------------------
// SkipLayerNormalization and SkipSimplifiedLayerNormalization

class SkipLayerNormOp final : public Op {
 public:
  SkipLayerNormOp(const OpInit& init, bool simplified) : simplified_(simplified) {
    const int max_inputs = simplified ? 4 : 5;
    if (init.num_inputs() < 3 || init.num_inputs() > max_inputs) {
      init.Fail("expects 3 to " + IntStr(max_inputs) + " inputs, got " + IntStr(init.num_inputs()));
    }
    if (init.num_outputs() > 4) init.Fail("has at most 4 outputs");
    if (simplified && init.has_output(1)) {
      init.Unsupported("the mean output (RMS normalization computes no mean)");
    }
    // ORT's schema default (kDefaultSkipLayerNormEpsilon).
    epsilon_ = init.GetFloat("epsilon", 1e-12f);
    if (!(epsilon_ >= 0.0f)) init.Fail("epsilon must be >= 0");
  }

  int beta_index() const { return simplified_ ? -1 : 3; }
  int bias_index() const { return simplified_ ? 3 : 4; }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.has_input(i)) ctx.RequireSameDType(0, i);
    }
    ctx.RequireInput(1);
    ctx.RequireInput(2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
    for (int i = 1; i < 3; ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, DType::kFloat32);
    }
    if (ctx.has_output(3)) ctx.set_output_dtype(3, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    if (xd.size() != 2 && xd.size() != 3) {
      ctx.Fail("input must be [batch, sequence, hidden] or [tokens, hidden], got " +
               DimsToString(xd));
    }
    const int64_t h = xd.back();
    const int64_t rows = CheckedNumElements(xd) / std::max<int64_t>(h, 1);
    const Dims& sd = ctx.input_dims(1);
    bool skip_ok = sd == xd;
    if (!skip_ok && xd.size() == 3) {
      skip_ok = sd == Dims{xd[1], xd[2]} || sd == Dims{1, xd[1], xd[2]};
    }
    if (!skip_ok) {
      ctx.Fail("skip " + DimsToString(sd) + " must have input's shape " + DimsToString(xd) +
               (xd.size() == 3 ? ", or be [1, S, H] / [S, H] = " + DimsToString({1, xd[1], xd[2]}) +
                                     " / " + DimsToString({xd[1], xd[2]})
                               : std::string()));
    }
    const int64_t skip_rows = h == 0 ? 1 : std::max<int64_t>(CheckedNumElements(sd) / h, 1);
    const int param_index[3] = {2, beta_index(), bias_index()};
    static const char* kParamNames[3] = {"gamma", "beta", "bias"};
    FloatVec fixed[3];
    bool present[3] = {false, false, false};
    for (int p = 0; p < 3; ++p) {
      const int i = param_index[p];
      if (i < 0 || !ctx.has_input(i)) continue;
      present[p] = true;
      if (ctx.input_dims(i) != Dims{h}) {
        ctx.Fail(std::string(kParamNames[p]) + " " + DimsToString(ctx.input_dims(i)) +
                 " must be [hidden_size] = [" + IntStr(h) + "]");
      }
      if (const Tensor* c = ctx.input_value(i)) fixed[p] = ToF32(*c);
    }
    const DType t = ctx.input_dtype(0);
    ctx.set_output(0, t, xd);
    Dims stat = xd;
    stat.back() = 1;
    const bool out_mean = ctx.has_output(1), out_inv = ctx.has_output(2),
               out_sum = ctx.has_output(3);
    if (out_mean) ctx.set_output(1, DType::kFloat32, stat);
    if (out_inv) ctx.set_output(2, DType::kFloat32, stat);
    if (out_sum) ctx.set_output(3, t, xd);
    if (rows == 0 || h == 0) return [](RunContext&) {};
    const float eps = epsilon_;
    const bool simplified = simplified_;
    const bool has_beta = present[1], has_bias = present[2];
    const int beta_i = param_index[1], bias_i = param_index[2];
    FloatVec fixed_gamma = fixed[0], fixed_beta = fixed[1], fixed_bias = fixed[2];
    return [=](RunContext& rc) {
      const FloatVec gamma = ParamAtRun(fixed_gamma, rc, 2);
      const FloatVec beta = has_beta ? ParamAtRun(fixed_beta, rc, beta_i) : nullptr;
      const FloatVec bias = has_bias ? ParamAtRun(fixed_bias, rc, bias_i) : nullptr;
      const void* x = rc.input(0).raw_data();
      const void* skip = rc.input(1).raw_data();
      void* y = rc.output(0).raw_data();
      float* mean = out_mean ? rc.output(1).data<float>() : nullptr;
      float* inv = out_inv ? rc.output(2).data<float>() : nullptr;
      void* sum_out = out_sum ? rc.output(3).raw_data() : nullptr;
      const kernels::FloatStorage ys = StorageOf(t);
      rc.parallel().For((rows + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t b, int64_t e) {
        // s, then (LayerNorm on 16-bit storage) the float32 result before rounding.
        std::vector<float> s(static_cast<size_t>(h)), other(static_cast<size_t>(h));
        for (int64_t row = b * kRowsPerTask; row < std::min(rows, e * kRowsPerTask); ++row) {
          LoadRow(t, x, row * h, h, s.data());
          LoadRow(t, skip, (row % skip_rows) * h, h, other.data());
          kernels::BinaryF32(kernels::BinaryOp::kAdd, s.data(), 1, other.data(), 1, s.data(), h);
          if (bias) {
            kernels::BinaryF32(kernels::BinaryOp::kAdd, s.data(), 1, bias->data(), 1, s.data(), h);
          }
          if (sum_out) StoreRow(t, s.data(), sum_out, row * h, h);
          if (simplified) {
            void* y_row = static_cast<char*>(y) + row * h * (t == DType::kFloat32 ? 4 : 2);
            kernels::RmsNormalizeRows(kernels::FloatStorage::kF32, s.data(), ys, y_row, 1, h,
                                      gamma->data(), eps, kernels::SerialParallel());
            if (inv) inv[row] = InvRms(s.data(), h, eps);
          } else if (t == DType::kFloat32) {
            kernels::NormalizeRowsF32(s.data(), static_cast<float*>(y) + row * h, 1, h, 1, 1,
                                      gamma->data(), beta ? beta->data() : nullptr, eps,
                                      mean ? mean + row : nullptr, inv ? inv + row : nullptr,
                                      kernels::SerialParallel());
          } else {
            kernels::NormalizeRowsF32(s.data(), other.data(), 1, h, 1, 1, gamma->data(),
                                      beta ? beta->data() : nullptr, eps,
                                      mean ? mean + row : nullptr, inv ? inv + row : nullptr,
                                      kernels::SerialParallel());
            StoreRow(t, other.data(), y, row * h, h);
          }
        }
      });
    };
  }

 private:
  bool simplified_;
  float epsilon_ = 1e-12f;
};

template <bool kSimplified>
OpFactory SkipFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<SkipLayerNormOp>(init, kSimplified);
  };
}

}  // namespace

void RegisterMsftNormalizationOps(OpRegistry& registry) {
  registry.Register("", "SimplifiedLayerNormalization", 1, MakeFactory<SimplifiedLayerNormOp>());
  registry.Register("com.microsoft", "SimplifiedLayerNormalization", 1,
                    MakeFactory<SimplifiedLayerNormOp>());
  registry.Register("com.microsoft", "SkipLayerNormalization", 1, SkipFactory<false>());
  registry.Register("com.microsoft", "SkipSimplifiedLayerNormalization", 1, SkipFactory<true>());
}

}  // namespace simplecpp::graph
