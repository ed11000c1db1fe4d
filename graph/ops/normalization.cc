// Normalization ops: BatchNormalization (1, 6, 7, 9, 14, 15), InstanceNormalization (1, 6, 22),
// LayerNormalization (17), GroupNormalization (18, 21), MeanVarianceNormalization (9, 13),
// LpNormalization (1, 22), LRN (1, 13), and Softmax / LogSoftmax / Hardmax (1, 11, 13).
//
// Softmax-family semantics change at opset 13: before, the input is coerced to 2-D at `axis`
// (default 1) and each row of the flattened trailing dims is normalized; from 13 the op normalizes
// along the single `axis` (default -1). Both become the kernels' [outer, n, inner] view.
// Row normalizations (Layer/Instance/Group) map onto kernels::NormalizeRows (see its header).
// float16 / bfloat16: 16-bit storage, float32 arithmetic on one widened row / slab at a time,
// one rounding per element (kernels/*16 entry points); parameters are widened to float32.
// MeanVarianceNormalization and training-mode BatchNormalization stay float32/float64 only.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/nn/normalization.h"
#include "kernels/nn/softmax.h"

namespace simplecpp::graph {
namespace {

using kernels::Parallel;

int64_t Product(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

// Kernel entry points per element type, so the ops can be templates.
template <typename T>
struct Kernels;
template <>
struct Kernels<float> {
  static constexpr DType kDType = DType::kFloat32;
  static constexpr auto NormalizeRows = kernels::NormalizeRowsF32;
  static constexpr auto ChannelAffine = kernels::ChannelAffineF32;
  static constexpr auto ChannelMeanVar = kernels::ChannelMeanVarF32;
  static constexpr auto Mvn = kernels::MeanVarianceNormalizeF32;
  static constexpr auto LpNormalize = kernels::LpNormalizeF32;
  static constexpr auto Lrn = kernels::LrnF32;
  static constexpr auto Softmax = kernels::SoftmaxF32;
  static constexpr auto LogSoftmax = kernels::LogSoftmaxF32;
  static constexpr auto Hardmax = kernels::HardmaxF32;
};
template <>
struct Kernels<double> {
  static constexpr DType kDType = DType::kFloat64;
  static constexpr auto NormalizeRows = kernels::NormalizeRowsF64;
  static constexpr auto ChannelAffine = kernels::ChannelAffineF64;
  static constexpr auto ChannelMeanVar = kernels::ChannelMeanVarF64;
  static constexpr auto Mvn = kernels::MeanVarianceNormalizeF64;
  static constexpr auto LpNormalize = kernels::LpNormalizeF64;
  static constexpr auto Lrn = kernels::LrnF64;
  static constexpr auto Softmax = kernels::SoftmaxF64;
  static constexpr auto LogSoftmax = kernels::LogSoftmaxF64;
  static constexpr auto Hardmax = kernels::HardmaxF64;
};

// Calls fn.template operator()<T>() for float32 / double, else throws Unsupported.
template <typename Ctx, typename Fn>
RunFn DispatchFloat(Ctx& ctx, DType dt, const Fn& fn) {
  if (dt == DType::kFloat32) return fn(float{});
  if (dt == DType::kFloat64) return fn(double{});
  ctx.Unsupported("dtype " + DTypeName(dt) + " is not computed yet");
}

// Copies src (dims sd, right-aligned against nd, each dim equal or 1) broadcast to nd into dst.
template <typename T>
void ExpandTo(const T* src, const Dims& sd, const Dims& nd, T* dst) {
  const size_t r = nd.size();
  std::vector<int64_t> stride(r, 0);
  for (int64_t i = static_cast<int64_t>(r) - 1, s = 1, j = static_cast<int64_t>(sd.size()) - 1;
       i >= 0; --i, --j) {
    const int64_t dim = j >= 0 ? sd[j] : 1;
    stride[i] = dim == 1 ? 0 : s;
    s *= dim;
  }
  const int64_t total = Product(nd, 0, r);
  std::vector<int64_t> coord(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    dst[i] = src[off];
    for (int64_t a = static_cast<int64_t>(r) - 1; a >= 0; --a) {
      off += stride[a];
      if (++coord[a] < nd[a]) break;
      off -= stride[a] * nd[a];
      coord[a] = 0;
    }
  }
}

// True when sd broadcasts (unidirectionally) to nd.
bool BroadcastsTo(const Dims& sd, const Dims& nd) {
  if (sd.size() > nd.size()) {
    for (size_t i = 0; i < sd.size() - nd.size(); ++i) {
      if (sd[i] != 1) return false;
    }
  }
  for (size_t k = 1; k <= std::min(sd.size(), nd.size()); ++k) {
    const int64_t s = sd[sd.size() - k], n = nd[nd.size() - k];
    if (s != n && s != 1) return false;
  }
  return true;
}


// A 16-bit parameter tensor (dims sd) widened to float32 and broadcast to nd.
std::vector<float> WidenExpand(kernels::Float16Kind kind, const Tensor& t, const Dims& nd) {
  std::vector<float> src(static_cast<size_t>(t.num_elements()));
  kernels::Widen16(kind, t.data<uint16_t>(), src.data(), src.size());
  std::vector<float> out(static_cast<size_t>(Product(nd, 0, nd.size())));
  ExpandTo(src.data(), t.dims(), nd, out.data());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

class SoftmaxOp final : public Op {
 public:
  SoftmaxOp(const OpInit& init, SoftmaxKind kind)
      : kind_(kind),
        coerce_2d_(init.opset() < 13),
        axis_(init.GetInt("axis", init.opset() < 13 ? 1 : -1)) {}

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    if (r == 0) ctx.Fail("input must have rank >= 1");
    int64_t outer, n, inner;
    if (coerce_2d_) {
      // Coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])]; axis == rank is allowed there.
      if (axis_ < -r || axis_ > r) {
        ctx.Fail("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(r));
      }
      const size_t a = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
      outer = Product(xd, 0, a);
      n = Product(xd, a, xd.size());
      inner = 1;
    } else {
      const size_t a = static_cast<size_t>(
          NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); }));
      outer = Product(xd, 0, a);
      n = xd[a];
      inner = Product(xd, a + 1, xd.size());
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const SoftmaxKind kind = kind_;
    if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
      // 16-bit storage: float32 compute per row / slab, one rounding per element.
      const bool bf16 = dt == DType::kBFloat16;
      auto fn = kind == SoftmaxKind::kSoftmax ? (bf16 ? kernels::SoftmaxBF16 : kernels::SoftmaxF16)
                : kind == SoftmaxKind::kLogSoftmax
                    ? (bf16 ? kernels::LogSoftmaxBF16 : kernels::LogSoftmaxF16)
                    : (bf16 ? kernels::HardmaxBF16 : kernels::HardmaxF16);
      return [fn, outer, n, inner](RunContext& rc) {
        fn(rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(), outer, n, inner,
           rc.parallel());
      };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      auto fn = kind == SoftmaxKind::kSoftmax      ? Kernels<T>::Softmax
                : kind == SoftmaxKind::kLogSoftmax ? Kernels<T>::LogSoftmax
                                                   : Kernels<T>::Hardmax;
      return [fn, outer, n, inner](RunContext& rc) {
        fn(rc.input(0).data<T>(), rc.output(0).data<T>(), outer, n, inner, rc.parallel());
      };
    });
  }

 private:
  SoftmaxKind kind_;
  bool coerce_2d_;  // before opset 13 the input is coerced to 2-D at axis
  int64_t axis_;
};

template <SoftmaxKind kKind>
OpFactory SoftmaxFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<SoftmaxOp>(init, kKind);
  };
}

// ---------------------------------------------------------------------------------------------
// BatchNormalization

// What BatchNormalization's Prepare decides; RunBatchNorm16 / RunBatchNormTraining /
// RunBatchNormInference run it. Without `spatial`, channels counts every (C, D1, ...) position
// and inner is 1 (per-activation statistics).
struct BatchNormPlan {
  kernels::Float16Kind kind = kernels::Float16Kind::kHalf;  // 16-bit storage only
  int64_t batch = 0, channels = 0, inner = 0;
  double eps = 0.0, momentum = 0.0;
  bool out_mean = false, out_var = false;  // training: running_mean / running_var wanted
};

// mul[c] = scale[c] / sqrt(var[c] + eps), computed in double and rounded once to T.
template <typename T>
void InferenceMultiplier(const T* scale, const T* var, int64_t channels, double eps, T* mul) {
  for (int64_t c = 0; c < channels; ++c) {
    mul[c] = static_cast<T>(static_cast<double>(scale[c]) /
                            std::sqrt(static_cast<double>(var[c]) + eps));
  }
}

// Inference on 16-bit storage: the per-channel center / multiplier / offset in float32
// (multiplier computed in double, as for float32), X streamed in blocks.
void RunBatchNorm16(const BatchNormPlan& p, RunContext& rc) {
  const int64_t channels = p.channels;
  const kernels::Float16Kind kind = p.kind;
  std::vector<float> coef(static_cast<size_t>(3 * channels));
  const uint16_t* sc = rc.input(1).data<uint16_t>();
  const uint16_t* b = rc.input(2).data<uint16_t>();
  const uint16_t* mean = rc.input(3).data<uint16_t>();
  const uint16_t* var = rc.input(4).data<uint16_t>();
  for (int64_t c = 0; c < channels; ++c) {
    coef[c] = kernels::Widen16One(kind, mean[c]);
    coef[channels + c] = static_cast<float>(
        kernels::Widen16One(kind, sc[c]) /
        std::sqrt(static_cast<double>(kernels::Widen16One(kind, var[c])) + p.eps));
    coef[2 * channels + c] = kernels::Widen16One(kind, b[c]);
  }
  kernels::ChannelAffine16(kind, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(),
                           p.batch, channels, p.inner, coef.data(), coef.data() + channels,
                           coef.data() + 2 * channels, rc.parallel());
}

// Training: normalizes with this batch's per-channel mean / variance (kept in double) and, when
// asked, writes the running statistics blended with the input ones by `momentum`.
template <typename T>
void RunBatchNormTraining(const BatchNormPlan& p, RunContext& rc) {
  const int64_t channels = p.channels;
  const double eps = p.eps, momentum = p.momentum;
  const T* x = rc.input(0).data<T>();
  const T* scale = rc.input(1).data<T>();
  const T* bias = rc.input(2).data<T>();
  const T* in_mean = rc.input(3).data<T>();
  const T* in_var = rc.input(4).data<T>();
  Tensor stats = rc.Scratch(DType::kFloat64, {2, channels});
  double* mean = stats.data<double>();
  double* var = mean + channels;
  Kernels<T>::ChannelMeanVar(x, p.batch, channels, p.inner, mean, var, rc.parallel());
  Tensor coef = rc.Scratch(Kernels<T>::kDType, {3, channels});
  T* center = coef.data<T>();
  T* mul = center + channels;
  T* add = mul + channels;
  for (int64_t c = 0; c < channels; ++c) {
    center[c] = static_cast<T>(mean[c]);
    mul[c] = static_cast<T>(static_cast<double>(scale[c]) / std::sqrt(var[c] + eps));
    add[c] = bias[c];
  }
  Kernels<T>::ChannelAffine(x, rc.output(0).data<T>(), p.batch, channels, p.inner, center, mul,
                            add, rc.parallel());
  if (p.out_mean) {
    T* m = rc.output(1).data<T>();
    for (int64_t c = 0; c < channels; ++c) {
      m[c] = static_cast<T>(in_mean[c] * momentum + mean[c] * (1.0 - momentum));
    }
  }
  if (p.out_var) {
    T* v = rc.output(2).data<T>();
    for (int64_t c = 0; c < channels; ++c) {
      v[c] = static_cast<T>(in_var[c] * momentum + var[c] * (1.0 - momentum));
    }
  }
}

// Inference: y = (x - mean) * (scale / sqrt(var + eps)) + B, with the multiplier folded at
// Prepare (`folded`, when scale and var are constants) or computed here into scratch.
template <typename T>
void RunBatchNormInference(const BatchNormPlan& p, const std::vector<T>* folded,
                           RunContext& rc) {
  const T* mul = nullptr;
  Tensor scratch;
  if (folded) {
    mul = folded->data();
  } else {
    scratch = rc.Scratch(Kernels<T>::kDType, {p.channels});
    T* m = scratch.data<T>();
    InferenceMultiplier(rc.input(1).data<T>(), rc.input(4).data<T>(), p.channels, p.eps, m);
    mul = m;
  }
  Kernels<T>::ChannelAffine(rc.input(0).data<T>(), rc.output(0).data<T>(), p.batch, p.channels,
                            p.inner, rc.input(3).data<T>(), mul, rc.input(2).data<T>(),
                            rc.parallel());
}


class BatchNormOp final : public Op {
 public:
  explicit BatchNormOp(const OpInit& init) {
    const int64_t opset = init.opset();
    epsilon_ = init.GetFloat("epsilon", 1e-5f);
    momentum_ = init.GetFloat("momentum", 0.9f);
    if (opset < 9) spatial_ = init.GetInt("spatial", 1) != 0;
    if (opset >= 14) training_ = init.GetInt("training_mode", 0) != 0;
    if (init.num_inputs() != 5) {
      init.Fail("BatchNormalization takes 5 inputs (X, scale, B, mean, var), got " +
                std::to_string(init.num_inputs()));
    }
    bool extra_outputs = false;
    for (int i = 1; i < init.num_outputs(); ++i) extra_outputs = extra_outputs || init.has_output(i);
    if (opset < 14) {
      const bool is_test = opset >= 7 || init.GetInt("is_test", 0) != 0;
      if (extra_outputs || !is_test) {
        init.Unsupported("training-mode BatchNormalization before opset 14 (is_test = 0 or the "
                         "mean / var / saved_mean / saved_var outputs)");
      }
    } else {
      if (extra_outputs && !training_) {
        init.Fail("running_mean / running_var outputs require training_mode = 1");
      }
      if (init.num_outputs() > 3) init.Fail("at most 3 outputs from opset 14");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    if (training_ && Is16BitFloat(ctx.input_dtype(0))) {
      ctx.Unsupported("training-mode BatchNormalization on " + DTypeName(ctx.input_dtype(0)));
    }
    for (int i = 1; i < 5; ++i) {
      ctx.RequireInput(i);
      if (ctx.input_dtype(i) != ctx.input_dtype(0)) {
        ctx.Unsupported("scale, B, mean and var must have X's dtype (mixed precision is not "
                        "computed yet)");
      }
    }
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, ctx.input_dtype(0));
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    if (xd.size() < 2) ctx.Fail("X must be [N, C, ...] (rank >= 2), got " + DimsToString(xd));
    auto plan = std::make_shared<BatchNormPlan>();
    BatchNormPlan& p = *plan;
    p.batch = xd[0];
    p.channels = xd[1];
    p.inner = Product(xd, 2, xd.size());
    Dims param_dims = {p.channels};
    if (!spatial_) {
      // Per-activation statistics: parameters are [C, D1, ...].
      param_dims.assign(xd.begin() + 1, xd.end());
      p.channels *= p.inner;
      p.inner = 1;
    }
    CheckParamDims(ctx, p.channels, param_dims);
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    if (training_) {
      if (ctx.has_output(1)) ctx.set_output(1, dt, param_dims);
      if (ctx.has_output(2)) ctx.set_output(2, dt, param_dims);
    }
    p.eps = epsilon_;
    p.momentum = momentum_;
    p.out_mean = training_ && ctx.has_output(1);
    p.out_var = training_ && ctx.has_output(2);
    if (Is16BitFloat(dt)) {
      p.kind = Float16KindOf(dt);
      return [plan](RunContext& rc) { RunBatchNorm16(*plan, rc); };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      if (training_) return [plan](RunContext& rc) { RunBatchNormTraining<T>(*plan, rc); };
      // The multiplier is folded here when scale and var are constants.
      std::shared_ptr<std::vector<T>> folded;
      if (ctx.input_value(1) && ctx.input_value(4)) {
        folded = std::make_shared<std::vector<T>>(static_cast<size_t>(p.channels));
        InferenceMultiplier(ctx.input_value(1)->template data<T>(),
                            ctx.input_value(4)->template data<T>(), p.channels, p.eps,
                            folded->data());
      }
      return [plan, folded](RunContext& rc) {
        RunBatchNormInference<T>(*plan, folded.get(), rc);
      };
    });
  }

 private:
  // scale, B, input_mean and input_var: [channels] when spatial, else param_dims (or any shape
  // with as many elements).
  void CheckParamDims(PrepareContext& ctx, int64_t channels, const Dims& param_dims) const {
    static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int i = 1; i < 5; ++i) {
      const Dims& pd = ctx.input_dims(i);
      const bool ok = spatial_ ? (pd.size() == 1 && pd[0] == channels)
                               : (pd == param_dims || Product(pd, 0, pd.size()) == channels);
      if (!ok) {
        ctx.Fail(std::string(kNames[i]) + " " + DimsToString(pd) + " must be " +
                 DimsToString(param_dims));
      }
    }
  }

  float epsilon_ = 1e-5f;
  float momentum_ = 0.9f;
  bool spatial_ = true;
  bool training_ = false;
};

// ---------------------------------------------------------------------------------------------
// InstanceNormalization and GroupNormalization: NormalizeRows with per-channel scale / bias.

class GroupNormOp final : public Op {
 public:
  // instance == true: InstanceNormalization (one group per channel).
  GroupNormOp(const OpInit& init, bool instance)
      : instance_(instance), per_group_params_(!instance && init.opset() < 21) {
    epsilon_ = init.GetFloat("epsilon", 1e-5f);
    if (!instance) {
      groups_ = init.RequireInt("num_groups");
      if (groups_ < 1) init.Fail("num_groups must be >= 1, got " + std::to_string(groups_));
      const int64_t stash = init.GetInt("stash_type", 1);
      if (stash != 1) init.Unsupported("stash_type " + std::to_string(stash));
    }
    if (init.num_inputs() != 3) {
      init.Fail("expects 3 inputs (X, scale, B), got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    if (xd.size() < 2) ctx.Fail("X must be [N, C, ...] (rank >= 2), got " + DimsToString(xd));
    const int64_t batch = xd[0], channels = xd[1];
    const int64_t spatial = Product(xd, 2, xd.size());
    const int64_t groups = instance_ ? channels : groups_;
    if (channels % groups != 0) {
      ctx.Fail("C = " + std::to_string(channels) + " is not divisible by num_groups " +
               std::to_string(groups));
    }
    const bool per_group = per_group_params_;
    const int64_t want = per_group ? groups : channels;
    for (int i = 1; i < 3; ++i) {
      const Dims& pd = ctx.input_dims(i);
      if (pd.size() != 1 || pd[0] != want) {
        ctx.Fail(std::string(i == 1 ? "scale " : "B ") + DimsToString(pd) + " must be [" +
                 std::to_string(want) + "]");
      }
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const int64_t cpg = channels / groups;
    const float eps = epsilon_;
    if (Is16BitFloat(dt)) {
      // 16-bit storage: scale / B widened to float32 per channel (small), rows in float32.
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [=](RunContext& rc) {
        std::vector<float> params(static_cast<size_t>(2 * channels));
        const uint16_t* s16 = rc.input(1).data<uint16_t>();
        const uint16_t* b16 = rc.input(2).data<uint16_t>();
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t src = per_group ? c / cpg : c;
          params[c] = kernels::Widen16One(kind, s16[src]);
          params[channels + c] = kernels::Widen16One(kind, b16[src]);
        }
        kernels::NormalizeRows16(kind, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(),
                                 batch * groups, cpg, spatial, groups, params.data(),
                                 params.data() + channels, eps, nullptr, nullptr, rc.parallel());
      };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& rc) {
        const T* scale = rc.input(1).data<T>();
        const T* bias = rc.input(2).data<T>();
        Tensor expanded;
        if (per_group) {
          // Per-group parameters repeated for each channel of the group.
          expanded = rc.Scratch(Kernels<T>::kDType, {2, channels});
          T* s = expanded.data<T>();
          T* b = s + channels;
          for (int64_t c = 0; c < channels; ++c) {
            s[c] = scale[c / cpg];
            b[c] = bias[c / cpg];
          }
          scale = s;
          bias = b;
        }
        Kernels<T>::NormalizeRows(rc.input(0).data<T>(), rc.output(0).data<T>(), batch * groups,
                                  cpg, spatial, groups, scale, bias, eps, nullptr, nullptr,
                                  rc.parallel());
      };
    });
  }

 private:
  bool instance_;
  // GroupNormalization-18 has one scale / bias per group; 21 (and InstanceNorm) per channel.
  bool per_group_params_;
  float epsilon_ = 1e-5f;
  int64_t groups_ = 1;
};

// ---------------------------------------------------------------------------------------------
// LayerNormalization (17)

class LayerNormOp final : public Op {
 public:
  explicit LayerNormOp(const OpInit& init) {
    axis_ = init.GetInt("axis", -1);
    epsilon_ = init.GetFloat("epsilon", 1e-5f);
    const int64_t stash = init.GetInt("stash_type", 1);
    if (stash != 1) init.Unsupported("stash_type " + std::to_string(stash) + " (only 1, float)");
    if (init.num_inputs() < 2 || init.num_inputs() > 3) {
      init.Fail("expects 2 or 3 inputs (X, Scale[, B]), got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    const bool stats = ctx.has_output(1) || ctx.has_output(2);
    if (stats && ctx.input_dtype(0) == DType::kFloat64) {
      ctx.Unsupported("Mean / InvStdDev outputs (float32 with stash_type 1) for a " +
                      DTypeName(ctx.input_dtype(0)) + " input");
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
    for (int i = 1; i < 3; ++i) {
      if (ctx.has_output(i)) ctx.set_output_dtype(i, DType::kFloat32);
    }
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    if (r == 0) ctx.Fail("X must have rank >= 1");
    const size_t a =
        static_cast<size_t>(NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); }));
    const int64_t rows = Product(xd, 0, a);
    const int64_t n = Product(xd, a, xd.size());
    const Dims nd(xd.begin() + a, xd.end());
    const bool has_bias = ctx.has_input(2);
    // Scale / B must broadcast to the normalized shape; those with fewer elements are expanded
    // (at Prepare when constant, else per run).
    bool expand[3] = {false, false, false};
    for (int i = 1; i < 3; ++i) {
      if (i == 2 && !has_bias) continue;
      const Dims& pd = ctx.input_dims(i);
      if (!BroadcastsTo(pd, nd)) {
        ctx.Fail(std::string(i == 1 ? "Scale " : "B ") + DimsToString(pd) +
                 " does not broadcast to the normalized shape " + DimsToString(nd) +
                 " (axis " + std::to_string(a) + ")");
      }
      expand[i] = CheckedNumElements(pd) != n;
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    Dims stat_dims(xd.begin(), xd.begin() + a);
    stat_dims.resize(xd.size(), 1);
    const bool out_mean = ctx.has_output(1), out_inv = ctx.has_output(2);
    if (out_mean) ctx.set_output(1, DType::kFloat32, stat_dims);
    if (out_inv) ctx.set_output(2, DType::kFloat32, stat_dims);
    const float eps = epsilon_;
    const Dims scale_dims = ctx.input_dims(1);
    const Dims bias_dims = has_bias ? ctx.input_dims(2) : Dims{};
    if (Is16BitFloat(dt)) {
      // 16-bit storage: Scale / B widened (and expanded) to float32 vectors of n, once at
      // Prepare when constant; rows normalized one at a time in float32.
      const kernels::Float16Kind kind = Float16KindOf(dt);
      std::shared_ptr<const std::vector<float>> fixed[3];
      for (int i = 1; i < 3; ++i) {
        if (ctx.has_input(i) && ctx.input_value(i)) {
          fixed[i] = std::make_shared<const std::vector<float>>(
              WidenExpand(kind, *ctx.input_value(i), nd));
        }
      }
      auto fixed_scale = fixed[1], fixed_bias = fixed[2];
      return [=](RunContext& rc) {
        std::vector<float> tmp_scale, tmp_bias;
        const float* scale;
        const float* bias = nullptr;
        if (fixed_scale) {
          scale = fixed_scale->data();
        } else {
          tmp_scale = WidenExpand(kind, rc.input(1), nd);
          scale = tmp_scale.data();
        }
        if (has_bias) {
          if (fixed_bias) {
            bias = fixed_bias->data();
          } else {
            tmp_bias = WidenExpand(kind, rc.input(2), nd);
            bias = tmp_bias.data();
          }
        }
        kernels::NormalizeRows16(kind, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(),
                                 rows, n, 1, 1, scale, bias, eps,
                                 out_mean ? rc.output(1).data<float>() : nullptr,
                                 out_inv ? rc.output(2).data<float>() : nullptr, rc.parallel());
      };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      std::shared_ptr<std::vector<T>> fixed[3];
      for (int i = 1; i < 3; ++i) {
        if (expand[i] && ctx.input_value(i)) {
          fixed[i] = std::make_shared<std::vector<T>>(static_cast<size_t>(n));
          ExpandTo(ctx.input_value(i)->template data<T>(), ctx.input_dims(i), nd, fixed[i]->data());
        }
      }
      auto fixed_scale = fixed[1], fixed_bias = fixed[2];
      const bool expand_scale = expand[1], expand_bias = expand[2];
      return [=](RunContext& rc) {
        const T* scale = rc.input(1).data<T>();
        const T* bias = has_bias ? rc.input(2).data<T>() : nullptr;
        Tensor tmp;
        if (expand_scale || expand_bias) tmp = rc.Scratch(Kernels<T>::kDType, {2, n});
        if (expand_scale) {
          if (fixed_scale) {
            scale = fixed_scale->data();
          } else {
            ExpandTo(scale, scale_dims, nd, tmp.data<T>());
            scale = tmp.data<T>();
          }
        }
        if (expand_bias) {
          if (fixed_bias) {
            bias = fixed_bias->data();
          } else {
            ExpandTo(bias, bias_dims, nd, tmp.data<T>() + n);
            bias = tmp.data<T>() + n;
          }
        }
        if constexpr (std::is_same_v<T, float>) {
          kernels::NormalizeRowsF32(rc.input(0).data<float>(), rc.output(0).data<float>(), rows, n,
                                    1, 1, scale, bias, eps,
                                    out_mean ? rc.output(1).data<float>() : nullptr,
                                    out_inv ? rc.output(2).data<float>() : nullptr, rc.parallel());
        } else {
          kernels::NormalizeRowsF64(rc.input(0).data<double>(), rc.output(0).data<double>(), rows,
                                    n, 1, 1, scale, bias, eps, nullptr, nullptr, rc.parallel());
        }
      };
    });
  }

 private:
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
};

// ---------------------------------------------------------------------------------------------
// MeanVarianceNormalization (9, 13): y = (x - mean) / (sqrt(var) + 1e-9) over `axes`.

class MvnOp final : public Op {
 public:
  // T: float16, float, double; bfloat16 from opset 13.
  explicit MvnOp(const OpInit& init)
      : axes_(init.GetInts("axes", {0, 2, 3})), bfloat16_allowed_(init.opset() >= 13) {}

  void InferTypes(TypeContext& ctx) const override {
    if (bfloat16_allowed_) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16});
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    std::vector<bool> reduce(xd.size(), false);
    for (int64_t axis : axes_) {
      const int64_t a = NormalizeAxis(axis, r, [&](const std::string& m) { ctx.Fail(m); });
      if (reduce[a]) ctx.Fail("axes " + DimsToString(axes_) + " repeat an axis");
      reduce[a] = true;
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const Dims dims = xd;
    if (Is16BitFloat(dt)) {
      // Widen to float32 scratch, normalize in float32, round each output once.
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [dims, reduce, kind](RunContext& rc) {
        const size_t n = static_cast<size_t>(rc.input(0).num_elements());
        Tensor x32 = rc.Scratch(DType::kFloat32, dims);
        Tensor y32 = rc.Scratch(DType::kFloat32, dims);
        kernels::Widen16(kind, rc.input(0).data<uint16_t>(), x32.data<float>(), n);
        kernels::MeanVarianceNormalizeF32(x32.data<float>(), y32.data<float>(), dims, reduce,
                                          1e-9, rc.parallel());
        kernels::Narrow16(kind, y32.data<float>(), rc.output(0).data<uint16_t>(), n);
      };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [dims, reduce](RunContext& rc) {
        Kernels<T>::Mvn(rc.input(0).data<T>(), rc.output(0).data<T>(), dims, reduce, 1e-9,
                        rc.parallel());
      };
    });
  }

 private:
  std::vector<int64_t> axes_;
  bool bfloat16_allowed_;
};

// ---------------------------------------------------------------------------------------------
// LpNormalization (1, 22)

class LpNormOp final : public Op {
 public:
  explicit LpNormOp(const OpInit& init) : axis_(init.GetInt("axis", -1)), p_(init.GetInt("p", 2)) {
    if (p_ != 1 && p_ != 2) init.Fail("p must be 1 or 2, got " + std::to_string(p_));
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    if (r == 0) ctx.Fail("input must have rank >= 1");
    const size_t a =
        static_cast<size_t>(NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); }));
    const int64_t outer = Product(xd, 0, a), n = xd[a], inner = Product(xd, a + 1, xd.size());
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const int p = static_cast<int>(p_);
    if (Is16BitFloat(dt)) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [=](RunContext& rc) {
        kernels::LpNormalize16(kind, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(),
                               outer, n, inner, p, rc.parallel());
      };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& rc) {
        Kernels<T>::LpNormalize(rc.input(0).data<T>(), rc.output(0).data<T>(), outer, n, inner, p,
                                rc.parallel());
      };
    });
  }

 private:
  int64_t axis_;
  int64_t p_;
};

// ---------------------------------------------------------------------------------------------
// LRN (1, 13)

class LrnOp final : public Op {
 public:
  explicit LrnOp(const OpInit& init) {
    size_ = init.RequireInt("size");
    if (size_ < 1) init.Fail("size must be >= 1, got " + std::to_string(size_));
    alpha_ = init.GetFloat("alpha", 1e-4f);
    beta_ = init.GetFloat("beta", 0.75f);
    bias_ = init.GetFloat("bias", 1.0f);
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    if (xd.size() < 2) ctx.Fail("X must be [N, C, ...] (rank >= 2), got " + DimsToString(xd));
    const int64_t batch = xd[0], channels = xd[1], spatial = Product(xd, 2, xd.size());
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, xd);
    const int64_t size = size_;
    const float alpha = alpha_, beta = beta_, bias = bias_;
    if (Is16BitFloat(dt)) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [=](RunContext& rc) {
        kernels::Lrn16(kind, rc.input(0).data<uint16_t>(), rc.output(0).data<uint16_t>(), batch,
                       channels, spatial, size, alpha, beta, bias, rc.parallel());
      };
    }
    return DispatchFloat(ctx, dt, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [=](RunContext& rc) {
        Kernels<T>::Lrn(rc.input(0).data<T>(), rc.output(0).data<T>(), batch, channels, spatial,
                        size, alpha, beta, bias, rc.parallel());
      };
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

template <bool kInstance>
OpFactory GroupNormFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<GroupNormOp>(init, kInstance);
  };
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& registry) {
  for (int v : {1, 11, 13}) {
    registry.Register("", "Softmax", v, SoftmaxFactory<SoftmaxKind::kSoftmax>());
    registry.Register("", "LogSoftmax", v, SoftmaxFactory<SoftmaxKind::kLogSoftmax>());
    registry.Register("", "Hardmax", v, SoftmaxFactory<SoftmaxKind::kHardmax>());
  }
  for (int v : {1, 6, 7, 9, 14, 15}) {
    registry.Register("", "BatchNormalization", v, MakeFactory<BatchNormOp>());
  }
  for (int v : {1, 6, 22}) registry.Register("", "InstanceNormalization", v, GroupNormFactory<true>());
  for (int v : {18, 21}) registry.Register("", "GroupNormalization", v, GroupNormFactory<false>());
  registry.Register("", "LayerNormalization", 17, MakeFactory<LayerNormOp>());
  for (int v : {9, 13}) registry.Register("", "MeanVarianceNormalization", v, MakeFactory<MvnOp>());
  for (int v : {1, 22}) registry.Register("", "LpNormalization", v, MakeFactory<LpNormOp>());
  for (int v : {1, 13}) registry.Register("", "LRN", v, MakeFactory<LrnOp>());
}

}  // namespace simplecpp::graph
