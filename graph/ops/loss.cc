// Loss ops: NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13, 22).
//
// Both see the scores as x[N, C, D] (row-major, D = d1 * ... * dk, 1 for a [N, C] input) and the
// target as t[N, D]. For every sample (n, j) with class c = t[n, j]:
//   loss[n, j] = -x[n, c, j] * w[c]        (w = 1 without the weight input)
//   loss[n, j] = 0, w_used = 0              when c == ignore_index (c may then be any value)
// reduction "none" returns loss with the target's shape; "sum" the scalar sum; "mean" the scalar
// sum(loss) / sum(w_used) (the weighted mean; without weights this is the mean over the samples
// that are not ignored; an all-ignored batch gives 0/0 = NaN, as the ONNX reference does).
// SoftmaxCrossEntropyLoss first takes log_prob = LogSoftmax(scores) along C (kernels/nn/softmax.h),
// optionally returned as its second output, then applies the NLL above.
// A target outside [0, C) that is not ignore_index is a run-time error naming the node.
//
// Sums are taken sequentially in double in sample order, so results never depend on the number
// of threads. float16 / bfloat16 inputs are widened to float32, computed in float32 and rounded
// once on output (bfloat16 from opset 13, as the ONNX type constraints allow).
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/nn/softmax.h"

namespace simplecpp::graph {
namespace {

enum class Reduction { kNone, kSum, kMean };

Reduction ParseReduction(const OpInit& init) {
  const std::string r = init.GetString("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  init.Fail("reduction must be 'none', 'sum' or 'mean', got '" + r + "'");
}

// Everything a run needs, fixed at Prepare.
struct LossPlan {
  int64_t n = 0, c = 0, d = 1;  // scores are [n, c, d], target [n, d]
  Reduction reduction = Reduction::kMean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
  bool has_weight = false;
  bool softmax = false;        // SoftmaxCrossEntropyLoss: take LogSoftmax along c first
  bool want_log_prob = false;  // SoftmaxCrossEntropyLoss's second output is requested
  kernels::Float16Kind kind16 = kernels::Float16Kind::kHalf;
};

// Where the NLL stopped on a bad target.
struct BadTarget {
  int64_t position = -1;  // flat index into the target, -1 when every target was valid
  int64_t value = 0;
};

// The NLL over log-probabilities logp[n, c, d] (compute type Acc: float or double). For
// reduction none writes loss[n * d] and returns 0; else returns the reduced value (loss unused).
template <typename Acc, typename Index>
Acc NllCore(const LossPlan& p, const Acc* logp, const Index* target, const Acc* weight, Acc* loss,
            BadTarget* bad) {
  double sum = 0.0, weight_sum = 0.0;
  for (int64_t i = 0; i < p.n; ++i) {
    for (int64_t j = 0; j < p.d; ++j) {
      const int64_t flat = i * p.d + j;
      const int64_t cls = static_cast<int64_t>(target[flat]);
      if (p.has_ignore && cls == p.ignore_index) {
        if (p.reduction == Reduction::kNone) loss[flat] = Acc(0);
        continue;
      }
      if (cls < 0 || cls >= p.c) {
        bad->position = flat;
        bad->value = cls;
        return Acc(0);
      }
      const Acc w = p.has_weight ? weight[cls] : Acc(1);
      const Acc l = -logp[(i * p.c + cls) * p.d + j] * w;
      if (p.reduction == Reduction::kNone) {
        loss[flat] = l;
      } else {
        sum += static_cast<double>(l);
        weight_sum += static_cast<double>(w);
      }
    }
  }
  if (p.reduction == Reduction::kSum) return static_cast<Acc>(sum);
  if (p.reduction == Reduction::kMean) return static_cast<Acc>(sum / weight_sum);
  return Acc(0);
}

template <typename Acc>
constexpr DType AccDType() {
  return std::is_same_v<Acc, double> ? DType::kFloat64 : DType::kFloat32;
}

template <typename Acc>
void LogSoftmax(const Acc* x, Acc* y, int64_t outer, int64_t n, int64_t inner,
                const kernels::Parallel& parallel) {
  if constexpr (std::is_same_v<Acc, double>) {
    kernels::LogSoftmaxF64(x, y, outer, n, inner, parallel);
  } else {
    kernels::LogSoftmaxF32(x, y, outer, n, inner, parallel);
  }
}

// Storage is the element type in memory (float, double, or uint16_t for float16 / bfloat16);
// Acc the compute type (double for double, else float); Index the target's type.
template <typename Storage, typename Acc, typename Index>
RunFn MakeLossRun(const LossPlan p) {
  constexpr bool kIs16 = std::is_same_v<Storage, uint16_t>;
  return [p](RunContext& ctx) {
    const int64_t total = p.n * p.c * p.d;
    const int64_t samples = p.n * p.d;
    // Scores (and weights) in the compute type.
    const Acc* x = nullptr;
    const Acc* weight = nullptr;
    Tensor x_wide, w_wide;
    if constexpr (kIs16) {
      x_wide = ctx.Scratch(DType::kFloat32, {total});
      kernels::Widen16(p.kind16, ctx.input(0).data<uint16_t>(), x_wide.data<float>(),
                       static_cast<size_t>(total));
      x = x_wide.data<float>();
      if (p.has_weight) {
        w_wide = ctx.Scratch(DType::kFloat32, {p.c});
        kernels::Widen16(p.kind16, ctx.input(2).data<uint16_t>(), w_wide.data<float>(),
                         static_cast<size_t>(p.c));
        weight = w_wide.data<float>();
      }
    } else {
      x = ctx.input(0).data<Acc>();
      if (p.has_weight) weight = ctx.input(2).data<Acc>();
    }
    // log_prob for SoftmaxCrossEntropyLoss, written straight into output 1 when it has Acc type.
    const Acc* logp = x;
    Tensor lp_scratch;
    if (p.softmax) {
      Acc* lp = nullptr;
      if (!kIs16 && p.want_log_prob) {
        lp = static_cast<Acc*>(ctx.output(1).raw_data());
      } else {
        lp_scratch = ctx.Scratch(AccDType<Acc>(), {total});
        lp = lp_scratch.data<Acc>();
      }
      if (total > 0) LogSoftmax<Acc>(x, lp, p.n, p.c, p.d, ctx.parallel());
      if constexpr (kIs16) {
        if (p.want_log_prob) {
          kernels::Narrow16(p.kind16, lp, ctx.output(1).data<uint16_t>(),
                            static_cast<size_t>(total));
        }
      }
      logp = lp;
    }
    const Index* target = ctx.input(1).data<Index>();
    BadTarget bad;
    Acc* loss = nullptr;
    Tensor loss_scratch;
    if (p.reduction == Reduction::kNone) {
      if constexpr (kIs16) {
        loss_scratch = ctx.Scratch(DType::kFloat32, {samples});
        loss = loss_scratch.data<float>();
      } else {
        loss = ctx.output(0).data<Acc>();
      }
    }
    const Acc reduced = NllCore<Acc, Index>(p, logp, target, weight, loss, &bad);
    if (bad.position >= 0) {
      ctx.Fail("target value " + std::to_string(bad.value) + " at flat index " +
               std::to_string(bad.position) + " is outside the class range [0, " +
               std::to_string(p.c) + ")" +
               (p.has_ignore ? " and is not ignore_index " + std::to_string(p.ignore_index)
                             : std::string(" (no ignore_index is set)")));
    }
    if constexpr (kIs16) {
      if (p.reduction == Reduction::kNone) {
        kernels::Narrow16(p.kind16, loss, ctx.output(0).data<uint16_t>(),
                          static_cast<size_t>(samples));
      } else {
        ctx.output(0).data<uint16_t>()[0] = kernels::Narrow16One(p.kind16, reduced);
      }
    } else {
      if (p.reduction != Reduction::kNone) ctx.output(0).data<Acc>()[0] = reduced;
    }
  };
}

template <typename Storage, typename Acc>
RunFn DispatchIndex(DType index_dtype, const LossPlan& p) {
  if (index_dtype == DType::kInt32) return MakeLossRun<Storage, Acc, int32_t>(p);
  return MakeLossRun<Storage, Acc, int64_t>(p);
}

// NegativeLogLikelihoodLoss(input, target[, weight]) -> loss and
// SoftmaxCrossEntropyLoss(scores, labels[, weights]) -> output[, log_prob]: same attributes,
// same shape rules; `softmax` selects the second.
class LossOp final : public Op {
 public:
  LossOp(const OpInit& init, bool softmax)
      : softmax_(softmax),
        bfloat16_allowed_(init.opset() >= 13),  // bfloat16 joined T in opset 13
        reduction_(ParseReduction(init)),
        has_ignore_(init.Has("ignore_index")),
        ignore_index_(init.GetInt("ignore_index", 0)) {
    if (init.num_inputs() < 2 || init.num_inputs() > 3) {
      init.Fail("takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    }
    if (init.num_outputs() > (softmax ? 2 : 1)) {
      init.Fail("has at most " + std::string(softmax ? "2 outputs" : "1 output") + ", got " +
                std::to_string(init.num_outputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    if (bfloat16_allowed_) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16});
    }
    ctx.RequireDType(1, {DType::kInt32, DType::kInt64});
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    const DType dt = ctx.input_dtype(0);
    ctx.set_output_dtype(0, dt);
    if (softmax_ && ctx.num_outputs() > 1) ctx.set_output_dtype(1, dt);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const Dims& td = ctx.input_dims(1);
    if (xd.size() < 2) ctx.Fail("scores must have shape [N, C, d1, ..., dk] (rank >= 2)");
    if (td.size() != xd.size() - 1) {
      ctx.Fail("target must have rank " + std::to_string(xd.size() - 1) + " ([N, d1, ..., dk])");
    }
    LossPlan p;
    p.n = xd[0];
    p.c = xd[1];
    p.d = 1;
    for (size_t i = 2; i < xd.size(); ++i) p.d *= xd[i];
    Dims expected_target = {xd[0]};
    expected_target.insert(expected_target.end(), xd.begin() + 2, xd.end());
    if (td != expected_target) {
      ctx.Fail("target shape must be " + DimsToString(expected_target) + " to match the scores");
    }
    p.has_weight = ctx.has_input(2);
    if (p.has_weight && ctx.input_dims(2) != Dims{p.c}) {
      ctx.Fail("weight must have shape [C] = " + DimsToString({p.c}));
    }
    p.reduction = reduction_;
    p.has_ignore = has_ignore_;
    p.ignore_index = ignore_index_;
    p.softmax = softmax_;
    p.want_log_prob = softmax_ && ctx.has_output(1);
    const DType dt = ctx.input_dtype(0);
    p.kind16 = Float16KindOf(dt);

    ctx.set_output(0, dt, reduction_ == Reduction::kNone ? td : Dims{});
    if (p.want_log_prob) ctx.set_output(1, dt, xd);

    const DType index_dtype = ctx.input_dtype(1);
    switch (dt) {
      case DType::kFloat32: return DispatchIndex<float, float>(index_dtype, p);
      case DType::kFloat64: return DispatchIndex<double, double>(index_dtype, p);
      case DType::kFloat16:
      case DType::kBFloat16: return DispatchIndex<uint16_t, float>(index_dtype, p);
      default: break;
    }
    ctx.Unsupported("dtype " + DTypeName(dt) + " is not supported");
  }

 private:
  bool softmax_;
  bool bfloat16_allowed_;
  Reduction reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

template <bool kSoftmax>
OpFactory LossFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<LossOp>(init, kSoftmax);
  };
}

}  // namespace

void RegisterLossOps(OpRegistry& registry) {
  for (int v : {12, 13, 22}) {
    registry.Register("", "NegativeLogLikelihoodLoss", v, LossFactory<false>());
    registry.Register("", "SoftmaxCrossEntropyLoss", v, LossFactory<true>());
  }
}

}  // namespace simplecpp::graph
