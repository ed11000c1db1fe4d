// The elementwise op family, binary and variadic part: Add Sub Mul Div Pow Mod PRelu BitShift
// Bitwise{And,Or,Xor} And Or Xor, comparisons (Equal Less LessOrEqual Greater GreaterOrEqual),
// Max Min Sum Mean (variadic) and Where; all with multidirectional broadcasting
// (graph/ops/broadcast.h). Unary ops live in elementwise_unary.cc. Kernels:
// kernels/elementwise/elementwise.h.
//
// Defined results (see kernels/elementwise/elementwise.h): integer division / modulo by zero gives
// 0, INT_MIN / -1 wraps to INT_MIN, integer arithmetic wraps, BitShift by >= the bit width gives 0.
// Mod with fmod=0 on floats follows numpy.mod (sign of the divisor) instead of being refused.
// Before opset 7, Add/Sub/Mul/Div/Pow/And/Or/Xor/Equal/Less/Greater used the legacy
// `broadcast` / `axis` attributes: broadcast=0 requires equal shapes, broadcast=1 aligns B with A
// at `axis` (default: on the right); both are supported. float16 / bfloat16 are stored as 16 bits
// and computed in float32 block by block (kernels/elementwise/elementwise.h), rounded once per
// element; the variadic Sum (3+ inputs) and Mean accumulate in a float32 scratch and round once at
// the end.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/broadcast.h"
#include "graph/ops/elementwise_common.h"
#include "graph/ops/elementwise_fused.h"
#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "kernels/elementwise/elementwise.h"

namespace simplecpp::graph {
namespace elementwise {
namespace {

using kernels::BinaryOp;
using kernels::CompareOp;

// The opset < 7 `broadcast` / `axis` attributes of two-input ops.
struct LegacyBroadcast {
  bool legacy = false;
  bool broadcast = false;
  bool has_axis = false;
  int64_t axis = 0;

  void Read(const OpInit& init) {
    legacy = init.opset() < 7;
    if (!legacy) return;
    broadcast = init.GetInt("broadcast", 0) != 0;
    has_axis = init.Has("axis");
    axis = init.GetInt("axis", 0);
  }
};

// Output dims of a two-input op; *in_dims gets the dims the broadcast plan should use for A and B.
Dims BroadcastTwo(const PrepareContext& ctx, const LegacyBroadcast& lb, std::vector<Dims>* in_dims) {
  const Dims& a = ctx.input_dims(0);
  const Dims& b = ctx.input_dims(1);
  *in_dims = {a, b};
  if (lb.legacy) {
    if (!lb.broadcast) {
      if (a != b) {
        ctx.Fail("shapes " + DimsToString(a) + " and " + DimsToString(b) +
                 " differ and broadcast=0 (opset < 7 semantics)");
      }
      return a;
    }
    const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
    int64_t axis = lb.has_axis ? lb.axis : ra - rb;
    if (axis < 0) axis += ra;
    if (axis < 0 || axis + rb > ra) {
      ctx.Fail("legacy broadcast of " + DimsToString(b) + " into " + DimsToString(a) + " at axis " +
               std::to_string(lb.axis) + " is out of range");
    }
    Dims b_eff = b;
    b_eff.resize(static_cast<size_t>(ra - axis), 1);  // trailing ones align B at `axis`
    Dims out;
    std::string why;
    if (!BroadcastShape({a, b_eff}, &out, &why) || out != a) {
      ctx.Fail("legacy broadcast: B " + DimsToString(b) + " does not fit A " + DimsToString(a) +
               " at axis " + std::to_string(axis));
    }
    (*in_dims)[1] = b_eff;
    return a;
  }
  Dims out;
  std::string why;
  if (!BroadcastShape(*in_dims, &out, &why)) ctx.Fail(why);
  return out;
}

// ------------------------------------------------------------------------------ same-type binary

struct BinaryDef {
  const char* name;
  std::vector<int> versions;
  BinaryOp op;
  std::vector<DType> types;
};

class BinaryArithOp : public Op {
 public:
  BinaryArithOp(const OpInit& init, const BinaryDef& def) : def_(def), op_(def.op) {
    legacy_.Read(init);
    if (std::string(def.name) == "Mod") {
      op_ = init.GetInt("fmod", 0) != 0 ? BinaryOp::kFmod : BinaryOp::kMod;
    } else if (std::string(def.name) == "BitShift") {
      const std::string direction = init.GetString("direction", "");
      if (direction == "LEFT") {
        op_ = BinaryOp::kBitShiftLeft;
      } else if (direction == "RIGHT") {
        op_ = BinaryOp::kBitShiftRight;
      } else {
        init.Fail("attribute 'direction' is '" + direction + "', expected 'LEFT' or 'RIGHT'");
      }
    }
    // Legacy attributes exist only for the ops that had them; PRelu / logic ops before 7 follow.
    if (op_ == BinaryOp::kPRelu) legacy_ = LegacyBroadcast{};
    fusible_ok_ = Fusible(&fusible_.op);
  }

  const FusibleBinary* AsFusibleBinary() const override { return fusible_ok_ ? &fusible_ : nullptr; }

  // Add/Sub/Mul/Div with numpy broadcasting (not the opset < 7 attributes) can join a chain.
  bool Fusible(BinaryOp* op) const {
    if (legacy_.legacy) return false;
    if (op_ != BinaryOp::kAdd && op_ != BinaryOp::kSub && op_ != BinaryOp::kMul &&
        op_ != BinaryOp::kDiv) {
      return false;
    }
    *op = op_;
    return true;
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, def_.types);
    ctx.RequireInput(1);
    ctx.RequireSameDType(0, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    std::vector<Dims> in_dims;
    const Dims out_dims = BroadcastTwo(ctx, legacy_, &in_dims);
    if (op_ == BinaryOp::kPRelu && out_dims != ctx.input_dims(0)) {
      ctx.Fail("slope " + DimsToString(ctx.input_dims(1)) + " must broadcast to X " +
               DimsToString(ctx.input_dims(0)));
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out_dims);
    const BroadcastPlan plan(in_dims, out_dims);
    const BinaryOp op = op_;
    if (Is16BitFloat(dt)) {
      const kernels::Float16Kind kind = Float16KindOf(dt);
      return [plan, op, kind](RunContext& c) {
        const uint16_t* a = c.input(0).data<uint16_t>();
        const uint16_t* b = c.input(1).data<uint16_t>();
        uint16_t* o = c.output(0).data<uint16_t>();
        plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
          kernels::Binary16(kind, op, a + in[0], plan.step(0), b + in[1], plan.step(1), o + oo, n);
        });
      };
    }
    RunFn fn;
    VisitNumeric(dt, [&](auto tag) {
      using T = decltype(tag);
      fn = [plan, op](RunContext& c) {
        const T* a = c.input(0).data<T>();
        const T* b = c.input(1).data<T>();
        T* o = c.output(0).data<T>();
        plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
          kernels::Binary<T>(op, a + in[0], plan.step(0), b + in[1], plan.step(1), o + oo, n);
        });
      };
    });
    return fn;
  }

 private:
  BinaryDef def_;
  BinaryOp op_;
  LegacyBroadcast legacy_;
  FusibleBinary fusible_;
  bool fusible_ok_ = false;
};

// ------------------------------------------------------------------------------------------ Pow

// Mixed-type Pow reads the exponent as one type per base type: double, or for an integer base and
// an integer exponent int64_t (uint64_t stays as is). kernels::Pow / Pow16 turn each exponent into
// exactly that value anyway (std::pow on doubles; IntPow on the integer's value, sign and parity),
// so the results are unchanged, and a dozen instantiations replace 46 (each a RunFn plus a
// BroadcastPlan loop: this keeps the WebAssembly package small). A float exponent with a float or
// 16-bit float base stays float (powf). Other exponent types are widened into scratch memory
// once per run; the exponent is usually a scalar.
using WidenFn = void (*)(const void* src, void* dst, int64_t n);

template <typename From, typename To>
void WidenExponents(const void* src, void* dst, int64_t n) {
  const From* s = static_cast<const From*>(src);
  To* d = static_cast<To*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<To>(s[i]);
}

// The widening of exponent dtype `et` to To (double or int64_t); nullptr when et is To already.
template <typename To>
WidenFn WidenTo(DType et) {
  WidenFn fn = nullptr;
  VisitNumeric(et, [&](auto tag) {
    using From = decltype(tag);
    if constexpr (!std::is_same_v<From, To> &&
                  (std::is_same_v<To, double> || std::is_integral_v<From>)) {
      fn = &WidenExponents<From, To>;
    }
  });
  return fn;
}

// The exponent input as E: the tensor itself, or widened into `*scratch`.
template <typename E>
const E* PowExponent(RunContext& c, WidenFn widen, Tensor* scratch) {
  const Tensor& b = c.input(1);
  if (widen == nullptr) return b.data<E>();
  *scratch = c.Scratch(std::is_same_v<E, double> ? DType::kFloat64 : DType::kInt64, b.dims());
  widen(b.raw_data(), scratch->raw_data(), b.num_elements());
  return scratch->data<E>();
}

// out = pow(a, b) for a base of type T (float, double, int32_t, int64_t) and an exponent read as E.
template <typename T, typename E>
RunFn PowRun(const BroadcastPlan& plan, WidenFn widen) {
  return [plan, widen](RunContext& c) {
    Tensor scratch;
    const E* b = PowExponent<E>(c, widen, &scratch);
    const T* a = c.input(0).data<T>();
    T* o = c.output(0).data<T>();
    plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
      kernels::Pow<T, E>(a + in[0], plan.step(0), b + in[1], plan.step(1), o + oo, n);
    });
  };
}

// The same for a float16 / bfloat16 base (E: float or double).
template <typename E>
RunFn Pow16Run(const BroadcastPlan& plan, kernels::Float16Kind kind, WidenFn widen) {
  return [plan, kind, widen](RunContext& c) {
    Tensor scratch;
    const E* b = PowExponent<E>(c, widen, &scratch);
    const uint16_t* a = c.input(0).data<uint16_t>();
    uint16_t* o = c.output(0).data<uint16_t>();
    plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
      kernels::Pow16<E>(kind, a + in[0], plan.step(0), b + in[1], plan.step(1), o + oo, n);
    });
  };
}

class PowOp : public Op {
 public:
  explicit PowOp(const OpInit& init) {
    legacy_.Read(init);
    // Before opset 12 the exponent shares the base's type T; from 12 on it has its own, T1.
    same_dtype_required_ = init.opset() < 12;
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                          DType::kInt32, DType::kInt64});
    RequireOneOf(ctx, 1, NumericTypes());
    if (same_dtype_required_) ctx.RequireSameDType(0, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    std::vector<Dims> in_dims;
    const Dims out_dims = BroadcastTwo(ctx, legacy_, &in_dims);
    ctx.set_output(0, ctx.input_dtype(0), out_dims);
    const BroadcastPlan plan(in_dims, out_dims);
    const DType bt = ctx.input_dtype(0), et = ctx.input_dtype(1);
    if (Is16BitFloat(bt)) {
      const kernels::Float16Kind kind = Float16KindOf(bt);
      if (Is16BitFloat(et)) {
        const kernels::Float16Kind ekind = Float16KindOf(et);
        return [plan, kind, ekind](RunContext& c) {
          const uint16_t* a = c.input(0).data<uint16_t>();
          const uint16_t* b = c.input(1).data<uint16_t>();
          uint16_t* o = c.output(0).data<uint16_t>();
          plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
            kernels::Pow16Exp16(kind, a + in[0], plan.step(0), ekind, b + in[1], plan.step(1),
                                o + oo, n);
          });
        };
      }
      if (et == DType::kFloat32) return Pow16Run<float>(plan, kind, nullptr);
      return Pow16Run<double>(plan, kind, WidenTo<double>(et));
    }
    if (Is16BitFloat(et)) {
      const kernels::Float16Kind ekind = Float16KindOf(et);
      RunFn fn;
      VisitNumeric(bt, [&](auto base_tag) {
        using T = decltype(base_tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                      std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
          fn = [plan, ekind](RunContext& c) {
            const T* a = c.input(0).data<T>();
            const uint16_t* b = c.input(1).data<uint16_t>();
            T* o = c.output(0).data<T>();
            plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
              kernels::PowExp16<T>(a + in[0], plan.step(0), ekind, b + in[1], plan.step(1),
                                   o + oo, n);
            });
          };
        }
      });
      return fn;
    }
    const bool int_exp = et != DType::kFloat32 && et != DType::kFloat64;
    switch (bt) {
      case DType::kFloat32:
        if (et == DType::kFloat32) return PowRun<float, float>(plan, nullptr);
        return PowRun<float, double>(plan, WidenTo<double>(et));
      case DType::kFloat64: return PowRun<double, double>(plan, WidenTo<double>(et));
      case DType::kInt32:
        if (et == DType::kInt32) return PowRun<int32_t, int32_t>(plan, nullptr);
        if (et == DType::kUInt64) return PowRun<int32_t, uint64_t>(plan, nullptr);
        if (int_exp) return PowRun<int32_t, int64_t>(plan, WidenTo<int64_t>(et));
        return PowRun<int32_t, double>(plan, WidenTo<double>(et));
      case DType::kInt64:
        if (et == DType::kUInt64) return PowRun<int64_t, uint64_t>(plan, nullptr);
        if (int_exp) return PowRun<int64_t, int64_t>(plan, WidenTo<int64_t>(et));
        return PowRun<int64_t, double>(plan, WidenTo<double>(et));
      default: break;
    }
    throw Error(ErrorCode::kInternal, "Pow: base dtype " + DTypeName(bt) + " reached Prepare");
  }

 private:
  LegacyBroadcast legacy_;
  bool same_dtype_required_ = false;
};

// ---------------------------------------------------------------------------------- comparisons

class CompareOpImpl : public Op {
 public:
  CompareOpImpl(const OpInit& init, CompareOp op) : op_(op) { legacy_.Read(init); }
  void InferTypes(TypeContext& ctx) const override {
    std::vector<DType> allowed = NumericTypes();
    if (op_ == CompareOp::kEqual) allowed = Concat({allowed, {DType::kBool, DType::kString}});
    RequireOneOf(ctx, 0, allowed);
    ctx.RequireInput(1);
    ctx.RequireSameDType(0, 1);
    ctx.set_output_dtype(0, DType::kBool);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    std::vector<Dims> in_dims;
    const Dims out_dims = BroadcastTwo(ctx, legacy_, &in_dims);
    ctx.set_output(0, DType::kBool, out_dims);
    const BroadcastPlan plan(in_dims, out_dims);
    const CompareOp op = op_;
    if (ctx.input_dtype(0) == DType::kString) {
      return [plan](RunContext& c) {
        const auto& a = c.input(0).strings();
        const auto& b = c.input(1).strings();
        uint8_t* o = c.output(0).data<uint8_t>();
        plan.ForEachRun(0, plan.num_runs(), [&](int64_t oo, const int64_t* in, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            o[oo + i] = a[in[0] + i * plan.step(0)] == b[in[1] + i * plan.step(1)] ? 1 : 0;
          }
        });
      };
    }
    if (Is16BitFloat(ctx.input_dtype(0))) {
      const kernels::Float16Kind kind = Float16KindOf(ctx.input_dtype(0));
      return [plan, op, kind](RunContext& c) {
        const uint16_t* a = c.input(0).data<uint16_t>();
        const uint16_t* b = c.input(1).data<uint16_t>();
        uint8_t* o = c.output(0).data<uint8_t>();
        plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
          kernels::Compare16(kind, op, a + in[0], plan.step(0), b + in[1], plan.step(1), o + oo, n);
        });
      };
    }
    RunFn fn;
    VisitNumeric(ctx.input_dtype(0), [&](auto tag) {
      using T = decltype(tag);
      fn = [plan, op](RunContext& c) {
        const T* a = c.input(0).data<T>();
        const T* b = c.input(1).data<T>();
        uint8_t* o = c.output(0).data<uint8_t>();
        plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
          kernels::Compare<T>(op, a + in[0], plan.step(0), b + in[1], plan.step(1), o + oo, n);
        });
      };
    });
    return fn;
  }

 private:
  CompareOp op_;
  LegacyBroadcast legacy_;
};

// -------------------------------------------------------------------- Max Min Sum Mean (variadic)

class VariadicOp : public Op {
 public:
  VariadicOp(const OpInit& init, BinaryOp op, bool mean) : op_(op), mean_(mean) {
    if (init.num_inputs() < 1) init.Fail("needs at least one input");
  }
  void InferTypes(TypeContext& ctx) const override {
    const bool float_only = op_ == BinaryOp::kAdd;  // Sum and Mean
    RequireOneOf(ctx, 0, float_only ? FloatTypes() : NumericTypes());
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      ctx.RequireInput(i);
      ctx.RequireSameDType(0, i);
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const int n_in = ctx.num_inputs();
    std::vector<Dims> all;
    for (int i = 0; i < n_in; ++i) all.push_back(ctx.input_dims(i));
    Dims out_dims;
    std::string why;
    if (!BroadcastShape(all, &out_dims, &why)) ctx.Fail(why);
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out_dims);
    // Step 0: out = in0 op in1 (or a broadcast copy of in0); step k: out = out op in_k, in place.
    std::vector<BroadcastPlan> plans;
    if (n_in == 1) {
      plans.emplace_back(std::vector<Dims>{all[0]}, out_dims);
    } else {
      plans.emplace_back(std::vector<Dims>{all[0], all[1]}, out_dims);
      for (int i = 2; i < n_in; ++i) plans.emplace_back(std::vector<Dims>{out_dims, all[i]}, out_dims);
    }
    const BinaryOp op = op_;
    const bool mean = mean_;
    if (Is16BitFloat(dt)) return Prepare16(dt, n_in, all, out_dims, std::move(plans));
    RunFn fn;
    VisitNumeric(dt, [&](auto tag) {
      using T = decltype(tag);
      fn = [plans, op, mean, n_in](RunContext& c) {
        T* o = c.output(0).data<T>();
        if (n_in == 1) {
          const T* a = c.input(0).data<T>();
          const BroadcastPlan& p = plans[0];
          p.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
            if (p.step(0) == 1) {
              std::memcpy(o + oo, a + in[0], static_cast<size_t>(n) * sizeof(T));
            } else {
              std::fill(o + oo, o + oo + n, a[in[0]]);
            }
          });
        } else {
          for (int k = 1; k < n_in; ++k) {
            const BroadcastPlan& p = plans[k - 1];
            const T* a = k == 1 ? c.input(0).data<T>() : o;
            const T* b = c.input(k).data<T>();
            p.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
              kernels::Binary<T>(op, a + in[0], p.step(0), b + in[1], p.step(1), o + oo, n);
            });
          }
        }
        if (mean) {
          const T count = static_cast<T>(n_in);
          ForChunks(c.parallel(), c.output(0).num_elements(), [&](int64_t b, int64_t e) {
            kernels::Binary<T>(BinaryOp::kDiv, o + b, 1, &count, 0, o + b, e - b);
          });
        }
      };
    });
    return fn;
  }

 private:
  // float16 / bfloat16. Max, Min and a two-input Sum fold in 16 bits (Max/Min are exact, a single
  // Sum is one rounding). Sum of 3+ inputs and Mean accumulate in a float32 scratch tensor, one
  // input at a time, and round once at the end (so the result does not depend on where partial
  // sums would have been rounded).
  RunFn Prepare16(DType dt, int n_in, const std::vector<Dims>& all, const Dims& out_dims,
                  std::vector<BroadcastPlan> plans) const {
    const BinaryOp op = op_;
    const kernels::Float16Kind kind = Float16KindOf(dt);
    const bool accumulate = op == BinaryOp::kAdd && (mean_ || n_in > 2);
    if (!accumulate) {
      return [plans, op, n_in, kind](RunContext& c) {
        uint16_t* o = c.output(0).data<uint16_t>();
        if (n_in == 1) {
          const uint16_t* a = c.input(0).data<uint16_t>();
          const BroadcastPlan& p = plans[0];
          p.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
            if (p.step(0) == 1) {
              std::memcpy(o + oo, a + in[0], static_cast<size_t>(n) * sizeof(uint16_t));
            } else {
              std::fill(o + oo, o + oo + n, a[in[0]]);
            }
          });
          return;
        }
        for (int k = 1; k < n_in; ++k) {
          const BroadcastPlan& p = plans[k - 1];
          const uint16_t* a = k == 1 ? c.input(0).data<uint16_t>() : o;
          const uint16_t* b = c.input(k).data<uint16_t>();
          p.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
            kernels::Binary16(kind, op, a + in[0], p.step(0), b + in[1], p.step(1), o + oo, n);
          });
        }
      };
    }
    // Accumulation plans: input k broadcast onto the output (one input each).
    std::vector<BroadcastPlan> each;
    for (int i = 0; i < n_in; ++i) each.emplace_back(std::vector<Dims>{all[i]}, out_dims);
    const bool mean = mean_;
    return [each, n_in, kind, mean, out_dims](RunContext& c) {
      Tensor scratch = c.Scratch(DType::kFloat32, out_dims);
      float* acc = scratch.data<float>();
      for (int k = 0; k < n_in; ++k) {
        const BroadcastPlan& p = each[k];
        const uint16_t* x = c.input(k).data<uint16_t>();
        p.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
          float buf[kernels::kBlock16];
          for (int64_t i = 0; i < n; i += kernels::kBlock16) {
            const int64_t len = std::min(kernels::kBlock16, n - i);
            if (p.step(0) == 1) {
              kernels::Widen16(kind, x + in[0] + i, buf, static_cast<size_t>(len));
            } else {
              std::fill(buf, buf + len, kernels::Widen16One(kind, x[in[0]]));
            }
            if (k == 0) {
              std::memcpy(acc + oo + i, buf, static_cast<size_t>(len) * sizeof(float));
            } else {
              kernels::BinaryF32(BinaryOp::kAdd, acc + oo + i, 1, buf, 1, acc + oo + i, len);
            }
          }
        });
      }
      const int64_t total = c.output(0).num_elements();
      uint16_t* o = c.output(0).data<uint16_t>();
      const float count = static_cast<float>(n_in);
      ForChunks(c.parallel(), total, [&](int64_t b, int64_t e) {
        if (mean) kernels::BinaryF32(BinaryOp::kDiv, acc + b, 1, &count, 0, acc + b, e - b);
        kernels::Narrow16(kind, acc + b, o + b, static_cast<size_t>(e - b));
      });
    };
  }

  BinaryOp op_;
  bool mean_;
};

// ---------------------------------------------------------------------------------------- Where

class WhereOp : public Op {
 public:
  explicit WhereOp(const OpInit& init) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, {DType::kBool});
    ctx.RequireInput(1);
    ctx.RequireInput(2);
    ctx.RequireSameDType(1, 2);
    const DType dt = ctx.input_dtype(1);
    if (dt != DType::kString && DTypeSize(dt) == 0) {
      ctx.Unsupported("Where on " + DTypeName(dt) + " (sub-byte) is not supported");
    }
    ctx.set_output_dtype(0, dt);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    std::vector<Dims> in_dims = {ctx.input_dims(0), ctx.input_dims(1), ctx.input_dims(2)};
    Dims out_dims;
    std::string why;
    if (!BroadcastShape(in_dims, &out_dims, &why)) ctx.Fail(why);
    const DType dt = ctx.input_dtype(1);
    ctx.set_output(0, dt, out_dims);
    const BroadcastPlan plan(in_dims, out_dims);
    if (dt == DType::kString) {
      return [plan](RunContext& c) {
        const uint8_t* cond = c.input(0).data<uint8_t>();
        const auto& x = c.input(1).strings();
        const auto& y = c.input(2).strings();
        auto& o = c.output(0).strings();
        plan.ForEachRun(0, plan.num_runs(), [&](int64_t oo, const int64_t* in, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            o[oo + i] = cond[in[0] + i * plan.step(0)] ? x[in[1] + i * plan.step(1)]
                                                       : y[in[2] + i * plan.step(2)];
          }
        });
      };
    }
    auto make = [&](auto tag) -> RunFn {
      using T = decltype(tag);
      return [plan](RunContext& c) {
        const uint8_t* cond = c.input(0).data<uint8_t>();
        const T* x = static_cast<const T*>(c.input(1).raw_data());
        const T* y = static_cast<const T*>(c.input(2).raw_data());
        T* o = static_cast<T*>(c.output(0).raw_data());
        plan.Run(c.parallel(), [&](int64_t oo, const int64_t* in, int64_t n) {
          kernels::Where<T>(cond + in[0], plan.step(0), x + in[1], plan.step(1), y + in[2],
                            plan.step(2), o + oo, n);
        });
      };
    };
    switch (DTypeSize(dt)) {
      case 1: return make(uint8_t{});
      case 2: return make(uint16_t{});
      case 4: return make(uint32_t{});
      case 8: return make(uint64_t{});
      default: break;
    }
    ctx.Unsupported("Where on " + DTypeName(dt) + " is not supported");
  }
};

std::vector<DType> FloatsAnd(std::vector<DType> extra) { return Concat({FloatTypes(), extra}); }

const std::vector<BinaryDef>& BinaryDefs() {
  static const std::vector<BinaryDef> kDefs = {
      {"Add", {1, 6, 7, 13, 14}, BinaryOp::kAdd, NumericTypes()},
      {"Sub", {1, 6, 7, 13, 14}, BinaryOp::kSub, NumericTypes()},
      {"Mul", {1, 6, 7, 13, 14}, BinaryOp::kMul, NumericTypes()},
      {"Div", {1, 6, 7, 13, 14}, BinaryOp::kDiv, NumericTypes()},
      {"Mod", {10, 13}, BinaryOp::kMod, NumericTypes()},
      {"PRelu", {1, 6, 7, 9, 16}, BinaryOp::kPRelu,
       FloatsAnd({DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64})},
      {"BitShift", {11}, BinaryOp::kBitShiftLeft, UnsignedIntTypes()},
      {"BitwiseAnd", {18}, BinaryOp::kBitwiseAnd, IntTypes()},
      {"BitwiseOr", {18}, BinaryOp::kBitwiseOr, IntTypes()},
      {"BitwiseXor", {18}, BinaryOp::kBitwiseXor, IntTypes()},
      {"And", {1, 7}, BinaryOp::kBitwiseAnd, {DType::kBool}},
      {"Or", {1, 7}, BinaryOp::kBitwiseOr, {DType::kBool}},
      {"Xor", {1, 7}, BinaryOp::kBitwiseXor, {DType::kBool}},
  };
  return kDefs;
}

}  // namespace

void RegisterBinaryOps(OpRegistry& registry) {
  for (const BinaryDef& def : BinaryDefs()) {
    const BinaryDef* d = &def;  // BinaryDefs() is a static: the pointer stays valid
    for (int v : def.versions) {
      registry.Register("", def.name, v, [d](const OpInit& init) -> std::unique_ptr<Op> {
        return std::make_unique<BinaryArithOp>(init, *d);
      });
    }
  }
  RegisterVersions(registry, "Pow", {1, 7, 12, 13, 15}, MakeFactory<PowOp>());
  struct CompareDef {
    const char* name;
    std::vector<int> versions;
    CompareOp op;
  };
  const CompareDef compares[] = {
      {"Equal", {1, 7, 11, 13, 19}, CompareOp::kEqual},
      {"Less", {1, 7, 9, 13}, CompareOp::kLess},
      {"Greater", {1, 7, 9, 13}, CompareOp::kGreater},
      {"LessOrEqual", {12, 16}, CompareOp::kLessOrEqual},
      {"GreaterOrEqual", {12, 16}, CompareOp::kGreaterOrEqual},
  };
  for (const CompareDef& c : compares) {
    const CompareOp op = c.op;
    RegisterVersions(registry, c.name, c.versions, [op](const OpInit& init) -> std::unique_ptr<Op> {
      return std::make_unique<CompareOpImpl>(init, op);
    });
  }
  struct VariadicDef {
    const char* name;
    BinaryOp op;
    bool mean;
  };
  const VariadicDef variadics[] = {{"Max", BinaryOp::kMax, false},
                                   {"Min", BinaryOp::kMin, false},
                                   {"Sum", BinaryOp::kAdd, false},
                                   {"Mean", BinaryOp::kAdd, true}};
  for (const VariadicDef& v : variadics) {
    const std::vector<int> versions =
        v.op == BinaryOp::kAdd ? std::vector<int>{1, 6, 8, 13} : std::vector<int>{1, 6, 8, 12, 13};
    const BinaryOp op = v.op;
    const bool mean = v.mean;
    RegisterVersions(registry, v.name, versions, [op, mean](const OpInit& init) -> std::unique_ptr<Op> {
      return std::make_unique<VariadicOp>(init, op, mean);
    });
  }
  RegisterVersions(registry, "Where", {9, 16}, MakeFactory<WhereOp>());
}

}  // namespace elementwise

void RegisterElementwiseOps(OpRegistry& registry) {
  elementwise::RegisterUnaryOps(registry);
  elementwise::RegisterBinaryOps(registry);
}

}  // namespace simplecpp::graph
