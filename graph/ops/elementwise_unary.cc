// Unary elementwise ops: math (Neg Abs Sign Sqrt Reciprocal Exp Log Erf Floor Ceil Round and the
// trigonometric / hyperbolic functions), activations (Tanh Sigmoid Relu LeakyRelu Elu Selu Celu
// HardSigmoid HardSwish Softplus Softsign Gelu Mish ThresholdedRelu Shrink Swish), Clip, Not,
// BitwiseNot, IsNaN, IsInf. Kernels: kernels/elementwise/elementwise.h.
//
// Dtypes: float32 (SIMD), float64, float16 and bfloat16 (16-bit storage, float32 compute block by
// block, one rounding per element) for every float op; Abs, Sign (all integers), Neg, Relu
// (signed integers) and Clip (all integers, opset >= 12) on integers too.
// The opset-1 attribute `consumed_inputs` is a legacy memory hint and is ignored.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/elementwise_common.h"
#include "graph/ops/elementwise_fused.h"
#include "graph/ops/float16_kind.h"
#include "kernels/elementwise/elementwise.h"

namespace simplecpp::graph::elementwise {
namespace {

using kernels::IntUnaryOp;
using kernels::UnaryOp;
using kernels::UnaryParams;

enum class IntSupport { kNone, kSigned, kAll };

struct UnaryDef {
  const char* name;
  std::vector<int> versions;
  UnaryOp op;
  IntSupport ints = IntSupport::kNone;
  IntUnaryOp int_op = IntUnaryOp::kNeg;
};

class UnaryMathOp : public Op {
 public:
  UnaryMathOp(const OpInit& init, const UnaryDef& def) : def_(def), op_(def.op) {
    switch (def.op) {
      case UnaryOp::kLeakyRelu: params_.alpha = init.GetFloat("alpha", 0.01f); break;
      case UnaryOp::kElu: params_.alpha = init.GetFloat("alpha", 1.0f); break;
      case UnaryOp::kSelu:
        params_.alpha = init.GetFloat("alpha", 1.67326319217681884765625f);
        params_.gamma = init.GetFloat("gamma", 1.05070102214813232421875f);
        break;
      case UnaryOp::kCelu:
        params_.alpha = init.GetFloat("alpha", 1.0f);
        if (params_.alpha == 0.0f) init.Fail("attribute 'alpha' must not be 0");
        break;
      case UnaryOp::kHardSigmoid:
        params_.alpha = init.GetFloat("alpha", 0.2f);
        params_.beta = init.GetFloat("beta", 0.5f);
        break;
      case UnaryOp::kThresholdedRelu: params_.alpha = init.GetFloat("alpha", 1.0f); break;
      case UnaryOp::kShrink:
        params_.alpha = init.GetFloat("lambd", 0.5f);
        params_.beta = init.GetFloat("bias", 0.0f);
        break;
      case UnaryOp::kSwish: params_.alpha = init.GetFloat("alpha", 1.0f); break;
      case UnaryOp::kGelu: {
        const std::string approximate = init.GetString("approximate", "none");
        if (approximate == "tanh") {
          op_ = UnaryOp::kGeluTanh;
        } else if (approximate != "none") {
          init.Fail("attribute 'approximate' is '" + approximate + "', expected 'none' or 'tanh'");
        }
        break;
      }
      default: break;
    }
    fusible_.op = op_;
    fusible_.params = params_;
  }

  // Every float unary math op can join a fused chain (the fused op checks the dtype).
  const FusibleUnary* AsFusibleUnary() const override { return &fusible_; }

  void InferTypes(TypeContext& ctx) const override {
    std::vector<DType> allowed = FloatTypes();
    if (def_.ints == IntSupport::kSigned) allowed = Concat({allowed, SignedIntTypes()});
    if (def_.ints == IntSupport::kAll) allowed = Concat({allowed, IntTypes()});
    RequireOneOf(ctx, 0, allowed);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, ctx.input_dims(0));
    const UnaryOp op = op_;
    const UnaryParams params = params_;
    if (dt == DType::kFloat32) {
      return [op, params](RunContext& c) {
        const float* x = c.input(0).data<float>();
        float* y = c.output(0).data<float>();
        ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
          kernels::UnaryF32(op, params, x + b, y + b, e - b);
        });
      };
    }
    if (Is16BitFloat(dt)) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [op, params, kind](RunContext& c) {
        const uint16_t* x = static_cast<const uint16_t*>(c.input(0).raw_data());
        uint16_t* y = static_cast<uint16_t*>(c.output(0).raw_data());
        ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
          kernels::Unary16(kind, op, params, x + b, y + b, e - b);
        });
      };
    }
    if (dt == DType::kFloat64) {
      return [op, params](RunContext& c) {
        const double* x = c.input(0).data<double>();
        double* y = c.output(0).data<double>();
        ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
          kernels::UnaryF64(op, params, x + b, y + b, e - b);
        });
      };
    }
    RunFn fn;
    const IntUnaryOp int_op = def_.int_op;
    VisitNumeric(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        fn = [int_op](RunContext& c) {
          const T* x = c.input(0).data<T>();
          T* y = c.output(0).data<T>();
          ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
            kernels::IntUnary<T>(int_op, x + b, y + b, e - b);
          });
        };
      }
    });
    return fn;
  }

 private:
  UnaryDef def_;
  UnaryOp op_;
  UnaryParams params_;
  FusibleUnary fusible_;
};

// Not (bool) and BitwiseNot (integers).
class NotOp : public Op {
 public:
  NotOp(const OpInit& init, bool bitwise) : bitwise_(bitwise) {}
  void InferTypes(TypeContext& ctx) const override {
    if (bitwise_) {
      RequireOneOf(ctx, 0, IntTypes());
    } else {
      RequireOneOf(ctx, 0, {DType::kBool});
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, ctx.input_dims(0));
    const IntUnaryOp op = bitwise_ ? IntUnaryOp::kBitwiseNot : IntUnaryOp::kNot;
    RunFn fn;
    VisitNumeric(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        fn = [op](RunContext& c) {
          kernels::IntUnary<T>(op, c.input(0).data<T>(), c.output(0).data<T>(),
                               c.input(0).num_elements());
        };
      }
    });
    return fn;
  }

 private:
  bool bitwise_;
};

// Clip: bounds are attributes before opset 11, optional scalar inputs 1 (min) and 2 (max) from 11.
// A missing bound is -inf / +inf (the lowest / highest value for integers). min > max gives max.
class ClipOp : public Op {
 public:
  explicit ClipOp(const OpInit& init) : attr_bounds_(init.opset() < 11) {
    if (attr_bounds_) {
      min_ = init.GetFloat("min", -std::numeric_limits<float>::infinity());
      max_ = init.GetFloat("max", std::numeric_limits<float>::infinity());
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, attr_bounds_ ? FloatTypes() : NumericTypes());
    for (int i = 1; i <= 2; ++i) {
      if (ctx.has_input(i)) {
        if (attr_bounds_) ctx.Fail("Clip before opset 11 takes its bounds as attributes");
        ctx.RequireSameDType(0, i);
      }
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    for (int i = 1; i <= 2; ++i) {
      if (ctx.has_input(i) && CheckedNumElements(ctx.input_dims(i)) != 1) {
        ctx.Fail(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " +
                 DimsToString(ctx.input_dims(i)));
      }
    }
    ctx.set_output(0, dt, ctx.input_dims(0));
    RunFn fn;
    const bool attr = attr_bounds_;
    const double amin = min_, amax = max_;
    if (Is16BitFloat(dt)) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [attr, amin, amax, kind](RunContext& c) {
        float lo = -std::numeric_limits<float>::infinity();
        float hi = std::numeric_limits<float>::infinity();
        if (attr) {
          lo = static_cast<float>(amin);
          hi = static_cast<float>(amax);
        } else {
          // The bounds are 16-bit values too: exact in float32.
          if (c.has_input(1)) lo = kernels::Widen16One(kind, static_cast<const uint16_t*>(c.input(1).raw_data())[0]);
          if (c.has_input(2)) hi = kernels::Widen16One(kind, static_cast<const uint16_t*>(c.input(2).raw_data())[0]);
        }
        const uint16_t* x = static_cast<const uint16_t*>(c.input(0).raw_data());
        uint16_t* y = static_cast<uint16_t*>(c.output(0).raw_data());
        ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
          kernels::Clip16(kind, x + b, y + b, e - b, lo, hi);
        });
      };
    }
    VisitNumeric(dt, [&](auto tag) {
      using T = decltype(tag);
      fn = [attr, amin, amax](RunContext& c) {
        constexpr bool kFloat = std::is_floating_point_v<T>;
        T lo = kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
        T hi = kFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
        if (attr) {
          lo = static_cast<T>(amin);
          hi = static_cast<T>(amax);
        } else {
          if (c.has_input(1)) lo = c.input(1).data<T>()[0];
          if (c.has_input(2)) hi = c.input(2).data<T>()[0];
        }
        const T* x = c.input(0).data<T>();
        T* y = c.output(0).data<T>();
        ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
          kernels::Clip<T>(x + b, y + b, e - b, lo, hi);
        });
      };
    });
    return fn;
  }

 private:
  bool attr_bounds_;
  float min_ = 0, max_ = 0;
};

// IsNaN / IsInf: float16, bfloat16, float32, float64 -> bool.
class IsSpecialOp : public Op {
 public:
  IsSpecialOp(const OpInit& init, bool inf) : inf_(inf) {
    if (inf_) {
      positive_ = init.GetInt("detect_positive", 1) != 0;
      negative_ = init.GetInt("detect_negative", 1) != 0;
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.set_output_dtype(0, DType::kBool);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, DType::kBool, ctx.input_dims(0));
    const bool pos = positive_, neg = negative_;
    const bool inf = inf_;
    switch (dt) {
      case DType::kFloat32:
        return [inf, pos, neg](RunContext& c) {
          const float* x = c.input(0).data<float>();
          uint8_t* y = c.output(0).data<uint8_t>();
          const int64_t n = c.input(0).num_elements();
          inf ? kernels::IsInfF32(x, y, n, pos, neg) : kernels::IsNaNF32(x, y, n);
        };
      case DType::kFloat64:
        return [inf, pos, neg](RunContext& c) {
          const double* x = c.input(0).data<double>();
          uint8_t* y = c.output(0).data<uint8_t>();
          const int64_t n = c.input(0).num_elements();
          inf ? kernels::IsInfF64(x, y, n, pos, neg) : kernels::IsNaNF64(x, y, n);
        };
      case DType::kFloat16:
        return [inf, pos, neg](RunContext& c) {
          const uint16_t* x = c.input(0).data<uint16_t>();
          uint8_t* y = c.output(0).data<uint8_t>();
          const int64_t n = c.input(0).num_elements();
          inf ? kernels::IsInfF16(x, y, n, pos, neg) : kernels::IsNaNF16(x, y, n);
        };
      default:
        return [inf, pos, neg](RunContext& c) {
          const uint16_t* x = c.input(0).data<uint16_t>();
          uint8_t* y = c.output(0).data<uint8_t>();
          const int64_t n = c.input(0).num_elements();
          inf ? kernels::IsInfBF16(x, y, n, pos, neg) : kernels::IsNaNBF16(x, y, n);
        };
    }
  }

 private:
  bool inf_;
  bool positive_ = true, negative_ = true;
};

const std::vector<UnaryDef>& UnaryDefs() {
  static const std::vector<UnaryDef> kDefs = {
      {"Neg", {1, 6, 13}, UnaryOp::kNeg, IntSupport::kSigned, IntUnaryOp::kNeg},
      {"Abs", {1, 6, 13}, UnaryOp::kAbs, IntSupport::kAll, IntUnaryOp::kAbs},
      {"Sign", {9, 13}, UnaryOp::kSign, IntSupport::kAll, IntUnaryOp::kSign},
      {"Relu", {1, 6, 13, 14}, UnaryOp::kRelu, IntSupport::kSigned, IntUnaryOp::kRelu},
      {"Sqrt", {1, 6, 13}, UnaryOp::kSqrt},
      {"Reciprocal", {1, 6, 13}, UnaryOp::kReciprocal},
      {"Exp", {1, 6, 13}, UnaryOp::kExp},
      {"Log", {1, 6, 13}, UnaryOp::kLog},
      {"Erf", {9, 13}, UnaryOp::kErf},
      {"Tanh", {1, 6, 13}, UnaryOp::kTanh},
      {"Sigmoid", {1, 6, 13}, UnaryOp::kSigmoid},
      {"LeakyRelu", {1, 6, 16}, UnaryOp::kLeakyRelu},
      {"Elu", {1, 6, 22}, UnaryOp::kElu},
      {"Selu", {1, 6, 22}, UnaryOp::kSelu},
      {"Celu", {12}, UnaryOp::kCelu},
      {"HardSigmoid", {1, 6, 22}, UnaryOp::kHardSigmoid},
      {"HardSwish", {14, 22}, UnaryOp::kHardSwish},
      {"Softplus", {1, 22}, UnaryOp::kSoftplus},
      {"Softsign", {1, 22}, UnaryOp::kSoftsign},
      {"Gelu", {20}, UnaryOp::kGelu},
      {"Mish", {18, 22}, UnaryOp::kMish},
      {"Floor", {1, 6, 13}, UnaryOp::kFloor},
      {"Ceil", {1, 6, 13}, UnaryOp::kCeil},
      {"Round", {11, 22}, UnaryOp::kRound},
      {"Sin", {7, 22}, UnaryOp::kSin},
      {"Cos", {7, 22}, UnaryOp::kCos},
      {"Tan", {7, 22}, UnaryOp::kTan},
      {"Asin", {7, 22}, UnaryOp::kAsin},
      {"Acos", {7, 22}, UnaryOp::kAcos},
      {"Atan", {7, 22}, UnaryOp::kAtan},
      {"Sinh", {9, 22}, UnaryOp::kSinh},
      {"Cosh", {9, 22}, UnaryOp::kCosh},
      {"Asinh", {9, 22}, UnaryOp::kAsinh},
      {"Acosh", {9, 22}, UnaryOp::kAcosh},
      {"Atanh", {9, 22}, UnaryOp::kAtanh},
      {"ThresholdedRelu", {10, 22}, UnaryOp::kThresholdedRelu},
      {"Shrink", {9}, UnaryOp::kShrink},
      {"Swish", {24}, UnaryOp::kSwish},
  };
  return kDefs;
}

}  // namespace

void RegisterUnaryOps(OpRegistry& registry) {
  for (const UnaryDef& def : UnaryDefs()) {
    const UnaryDef* d = &def;  // UnaryDefs() is a static: the pointer stays valid
    for (int v : def.versions) {
      registry.Register("", def.name, v, [d](const OpInit& init) -> std::unique_ptr<Op> {
        return std::make_unique<UnaryMathOp>(init, *d);
      });
    }
  }
  RegisterVersions(registry, "Not", {1}, [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<NotOp>(init, false);
  });
  RegisterVersions(registry, "BitwiseNot", {18}, [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<NotOp>(init, true);
  });
  RegisterVersions(registry, "Clip", {1, 6, 11, 12, 13}, MakeFactory<ClipOp>());
  RegisterVersions(registry, "IsNaN", {9, 13, 20}, [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<IsSpecialOp>(init, false);
  });
  RegisterVersions(registry, "IsInf", {10, 20}, [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<IsSpecialOp>(init, true);
  });
}

}  // namespace simplecpp::graph::elementwise
