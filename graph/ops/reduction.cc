// The reduction family: ReduceSum / Mean / Max / Min / Prod / L1 / L2 / LogSum / LogSumExp /
// SumSquare, ArgMax / ArgMin, CumSum and TopK (kernels in kernels/nn/reduce.h and
// kernels/nn/topk.h).
//
// Reduce*: axes come from the `axes` attribute (ReduceSum before 13, the others before 18) or from
// the optional int64 input 1 (listed in ValueInputs()). Empty axes reduce everything unless
// noop_with_empty_axes is set; then only the element-wise part of the composite ops runs
// (ReduceSumSquare gives x*x, ReduceL1 |x|, ReduceLogSum log(x), ...). Repeated axes are an error.
// A reduction over zero elements gives the identity: sum 0, prod 1, max -inf (lowest value for
// integers, false for bool), min +inf (highest value, true), log-sum / log-sum-exp -inf, and
// ReduceMean NaN (0 for integers).
//
// float16 / bfloat16 (where the opset's type constraint lists them): storage stays 16-bit. Reduce*
// widens the input block by block inside the first pass (kernels::Reduce16ToF32), runs the later
// passes and the finishing step in float32 on output-sized buffers, and rounds each output once
// (round to nearest even). ArgMax/ArgMin and TopK compare the exact float32 widenings (TopK's
// values are the input bit patterns); CumSum keeps a float32 running sum per column and rounds
// each output once.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype_visit.h"
#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/reduction_plan.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/nn/reduce.h"
#include "kernels/nn/topk.h"

namespace simplecpp::graph {

namespace {

using kernels::ReduceKind;

// The RunFn f(T{}) makes for T the C++ type of dt; unknown dtypes are rejected by InferTypes
// before.
template <typename F>
RunFn VisitDType(DType dt, F&& f) {
  RunFn run;
  if (!VisitNumericType(dt, [&](auto tag) { run = f(tag); })) {
    throw Error(ErrorCode::kInternal, "reduction: dtype " + DTypeName(dt) + " reached Prepare");
  }
  return run;
}

void RequireOneOf(const TypeContext& ctx, int input, const std::vector<DType>& allowed) {
  ctx.RequireInput(input);
  const DType dt = ctx.input_dtype(input);
  if (std::find(allowed.begin(), allowed.end(), dt) != allowed.end()) return;
  std::string list;
  for (DType d : allowed) list += (list.empty() ? "" : ", ") + DTypeName(d);
  ctx.Unsupported("input " + std::to_string(input) + " has dtype " + DTypeName(dt) +
                  "; supported: " + list);
}


// Appends float16 (always) and bfloat16 (from opset `bf16_since` on) to `types`.
std::vector<DType> With16(std::vector<DType> types, int64_t opset, int64_t bf16_since) {
  types.push_back(DType::kFloat16);
  if (opset >= bf16_since) types.push_back(DType::kBFloat16);
  return types;
}

void RequireIndexDType(const TypeContext& ctx, int input) {
  RequireOneOf(ctx, input, {DType::kInt64, DType::kInt32});
}

const std::vector<DType>& NumericDTypes() {
  static const std::vector<DType> kTypes = {
      DType::kFloat32, DType::kFloat64, DType::kInt8,   DType::kUInt8, DType::kInt16,
      DType::kUInt16,  DType::kInt32,   DType::kUInt32, DType::kInt64, DType::kUInt64};
  return kTypes;
}

// ------------------------------------------------------------------------------------ Reduce*

enum class ReduceOpType {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSquare
};
enum class Finish { kNone, kDivide, kSqrt, kLog };

struct ReduceSpec {
  ReduceKind first;  // the first pass (applies the element-wise transform)
  ReduceKind rest;   // later passes combine partial results
  Finish finish;
};

ReduceSpec SpecOf(ReduceOpType type) {
  switch (type) {
    case ReduceOpType::kSum:
      return {ReduceKind::kSum, ReduceKind::kSum, Finish::kNone};
    case ReduceOpType::kMean:
      return {ReduceKind::kSum, ReduceKind::kSum, Finish::kDivide};
    case ReduceOpType::kMax:
      return {ReduceKind::kMax, ReduceKind::kMax, Finish::kNone};
    case ReduceOpType::kMin:
      return {ReduceKind::kMin, ReduceKind::kMin, Finish::kNone};
    case ReduceOpType::kProd:
      return {ReduceKind::kProd, ReduceKind::kProd, Finish::kNone};
    case ReduceOpType::kL1:
      return {ReduceKind::kAbsSum, ReduceKind::kSum, Finish::kNone};
    case ReduceOpType::kL2:
      return {ReduceKind::kSumSquare, ReduceKind::kSum, Finish::kSqrt};
    case ReduceOpType::kLogSum:
      return {ReduceKind::kSum, ReduceKind::kSum, Finish::kLog};
    case ReduceOpType::kLogSumExp:
      return {ReduceKind::kLogSumExp, ReduceKind::kLogSumExp, Finish::kNone};
    case ReduceOpType::kSumSquare:
      return {ReduceKind::kSumSquare, ReduceKind::kSum, Finish::kNone};
  }
  return {ReduceKind::kSum, ReduceKind::kSum, Finish::kNone};
}

template <typename T>
void FinishDivide(T* y, int64_t count, int64_t divisor) {
  kernels::ReduceDivide<T>(y, count, divisor);
}
template <typename T>
void FinishSqrt(T* y, int64_t count, int64_t) {
  kernels::ReduceSqrt<T>(y, count);
}
template <typename T>
void FinishLog(T* y, int64_t count, int64_t) {
  kernels::ReduceLog<T>(y, count);
}

// T of the Reduce ops: the 32/64-bit numeric types; Max / Min add the 8-bit integers in opset 12
// and bool in 20; float16 always, bfloat16 from opset 13.
std::vector<DType> ReduceDTypes(ReduceOpType type, int64_t opset) {
  std::vector<DType> allowed = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                DType::kInt64,   DType::kUInt32,  DType::kUInt64};
  if ((type == ReduceOpType::kMax || type == ReduceOpType::kMin) && opset >= 12) {
    allowed.push_back(DType::kInt8);
    allowed.push_back(DType::kUInt8);
    if (opset >= 20) allowed.push_back(DType::kBool);
  }
  return With16(allowed, opset, 13);
}

class ReduceOp final : public Op {
 public:
  ReduceOp(const OpInit& init, ReduceOpType type, bool axes_input)
      : type_(type), axes_input_(axes_input) {
    keepdims_ = init.GetInt("keepdims", 1) != 0;
    if (axes_input_) {
      if (init.Has("axes")) {
        init.Fail("'axes' is an input from this opset on, not an attribute");
      }
      noop_with_empty_axes_ = init.GetInt("noop_with_empty_axes", 0) != 0;
    } else {
      axes_ = init.GetInts("axes");
      if (init.num_inputs() > 1 && init.has_input(1)) {
        init.Fail("takes one input in this opset (axes is an attribute)");
      }
    }
    allowed_dtypes_ = ReduceDTypes(type_, init.opset());
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, allowed_dtypes_);
    if (axes_input_ && ctx.has_input(1)) RequireOneOf(ctx, 1, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  std::vector<int> ValueInputs() const override {
    return axes_input_ ? std::vector<int>{1} : std::vector<int>{};
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& dims = ctx.input_dims(0);
    const int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> axes = axes_;
    if (axes_input_ && ctx.has_input(1)) {
      const Tensor& t = ctx.RequireValue(1);
      if (t.rank() > 1) ctx.Fail("axes must be a 1-D tensor, got rank " + std::to_string(t.rank()));
      axes = TensorToInt64s(t);
    }
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    const auto fail = [&ctx](const std::string& m) { ctx.Fail(m); };
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) {
        ctx.Fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
      }
      const int64_t k = NormalizeAxis(a, rank, fail);
      if (reduced[k]) ctx.Fail("axis " + std::to_string(a) + " is repeated in axes");
      reduced[k] = true;
    }
    const bool noop = axes.empty() && noop_with_empty_axes_;
    if (axes.empty() && !noop) std::fill(reduced.begin(), reduced.end(), true);

    Dims out_dims;
    int64_t count = 1;  // elements reduced into each output
    for (int64_t k = 0; k < rank; ++k) {
      if (!reduced[k]) {
        out_dims.push_back(dims[k]);
      } else {
        count *= dims[k];
        if (keepdims_) out_dims.push_back(1);
      }
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out_dims);
    const int64_t out_count = CheckedNumElements(out_dims);
    if (out_count == 0) return [](RunContext&) {};

    const std::vector<ReducePass> passes = PlanReducePasses(dims, reduced);
    const ReduceSpec spec = SpecOf(type_);
    if (Is16BitFloat(dtype)) return Prepare16(passes, spec, Float16KindOf(dtype), count, out_count);
    return VisitDType(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      const kernels::ReduceFn<T> first = kernels::GetReduceFn<T>(spec.first);
      const kernels::ReduceFn<T> rest = kernels::GetReduceFn<T>(spec.rest);
      if (first == nullptr || rest == nullptr) {
        ctx.Unsupported("no kernel for dtype " + DTypeName(dtype));
      }
      void (*finish)(T*, int64_t, int64_t) = nullptr;
      if constexpr (!std::is_same_v<T, bool>) {
        switch (spec.finish) {
          case Finish::kNone:
            break;
          case Finish::kDivide:
            finish = &FinishDivide<T>;
            break;
          case Finish::kSqrt:
            finish = &FinishSqrt<T>;
            break;
          case Finish::kLog:
            finish = &FinishLog<T>;
            break;
        }
      }
      return [passes, first, rest, finish, dtype, count, out_count](RunContext& rc) {
        T* y = rc.output(0).template data<T>();
        RunReducePasses<T>(passes, first, rest, dtype, rc.input(0).template data<T>(), y, rc);
        if (finish != nullptr) finish(y, out_count, count);
      };
    });
  }

 private:
  // 16-bit input: the first pass widens blocks of the input and writes float32; the later passes
  // and the finishing step run in float32 on output-sized scratch; one rounding per output.
  static RunFn Prepare16(const std::vector<ReducePass>& passes, const ReduceSpec& spec,
                         kernels::Float16Kind kind, int64_t count, int64_t out_count) {
    const kernels::ReduceKind first = spec.first;
    const kernels::ReduceFn<float> rest = kernels::GetReduceFn<float>(spec.rest);
    void (*finish)(float*, int64_t, int64_t) = nullptr;
    switch (spec.finish) {
      case Finish::kNone:
        break;
      case Finish::kDivide:
        finish = &FinishDivide<float>;
        break;
      case Finish::kSqrt:
        finish = &FinishSqrt<float>;
        break;
      case Finish::kLog:
        finish = &FinishLog<float>;
        break;
    }
    return [passes, first, rest, finish, kind, count, out_count](RunContext& rc) {
      Tensor result = rc.Scratch(DType::kFloat32, {out_count});
      Tensor buffers[2];
      const float* src = nullptr;
      for (size_t p = 0; p < passes.size(); ++p) {
        const ReducePass& pass = passes[p];
        float* dst = result.data<float>();
        if (p + 1 < passes.size()) {
          buffers[p % 2] = rc.Scratch(DType::kFloat32, {pass.outer * pass.inner});
          dst = buffers[p % 2].data<float>();
        }
        if (p == 0) {
          kernels::Reduce16ToF32(kind, first, rc.input(0).data<uint16_t>(), pass.outer, pass.n,
                                 pass.inner, dst, rc.parallel());
        } else {
          rest(src, pass.outer, pass.n, pass.inner, dst, rc.parallel());
        }
        src = dst;
      }
      if (finish != nullptr) finish(result.data<float>(), out_count, count);
      kernels::Narrow16(kind, result.data<float>(), rc.output(0).data<uint16_t>(),
                        static_cast<size_t>(out_count));
    };
  }

  ReduceOpType type_;
  bool axes_input_;
  std::vector<DType> allowed_dtypes_;  // T, which grew with the opset (ReduceDTypes)
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
  std::vector<int64_t> axes_;
};

OpFactory ReduceFactory(ReduceOpType type, bool axes_input) {
  return [type, axes_input](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<ReduceOp>(init, type, axes_input);
  };
}

// ------------------------------------------------------------------------------ ArgMax/ArgMin

class ArgReduceOp final : public Op {
 public:
  ArgReduceOp(const OpInit& init, bool is_max)
      : is_max_(is_max), allowed_dtypes_(With16(NumericDTypes(), init.opset(), 13)) {
    axis_ = init.GetInt("axis", 0);
    keepdims_ = init.GetInt("keepdims", 1) != 0;
    select_last_ = init.GetInt("select_last_index", 0) != 0;
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, allowed_dtypes_);
    ctx.set_output_dtype(0, DType::kInt64);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& dims = ctx.input_dims(0);
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank, [&ctx](const std::string& m) { ctx.Fail(m); });
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= dims[k];
    for (int64_t k = axis + 1; k < rank; ++k) inner *= dims[k];
    const int64_t n = dims[axis];
    Dims out_dims;
    for (int64_t k = 0; k < rank; ++k) {
      if (k != axis) {
        out_dims.push_back(dims[k]);
      } else if (keepdims_) {
        out_dims.push_back(1);
      }
    }
    ctx.set_output(0, DType::kInt64, out_dims);
    if (outer * inner == 0) return [](RunContext&) {};
    if (n == 0) ctx.Fail("cannot take the arg max/min over an empty axis");
    const bool is_max = is_max_, select_last = select_last_;
    const DType dtype = ctx.input_dtype(0);
    if (Is16BitFloat(dtype)) {
      const auto fn = is_max ? &kernels::ArgMax16 : &kernels::ArgMin16;
      const kernels::Float16Kind kind = Float16KindOf(dtype);
      return [fn, kind, outer, n, inner, select_last](RunContext& rc) {
        fn(kind, rc.input(0).data<uint16_t>(), outer, n, inner, select_last,
           rc.output(0).data<int64_t>(), rc.parallel());
      };
    }
    return VisitDType(ctx.input_dtype(0), [&](auto tag) -> RunFn {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        ctx.Unsupported("bool input");
      } else {
        const auto fn = is_max ? &kernels::ArgMax<T> : &kernels::ArgMin<T>;
        return [fn, outer, n, inner, select_last](RunContext& rc) {
          fn(rc.input(0).template data<T>(), outer, n, inner, select_last,
             rc.output(0).template data<int64_t>(), rc.parallel());
        };
      }
    });
  }

 private:
  bool is_max_;
  std::vector<DType> allowed_dtypes_;  // numeric types; bfloat16 from opset 13
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool select_last_ = false;
};

// ------------------------------------------------------------------------------------ CumSum

class CumSumOp final : public Op {
 public:
  explicit CumSumOp(const OpInit& init) {
    exclusive_ = init.GetInt("exclusive", 0) != 0;
    reverse_ = init.GetInt("reverse", 0) != 0;
    allowed_dtypes_ = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                       DType::kInt64,   DType::kUInt32,  DType::kUInt64};
    if (init.opset() >= 14) {  // the 16-bit floats joined T in opset 14
      allowed_dtypes_.push_back(DType::kFloat16);
      allowed_dtypes_.push_back(DType::kBFloat16);
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, allowed_dtypes_);
    RequireIndexDType(ctx, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  std::vector<int> ValueInputs() const override { return {1}; }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& dims = ctx.input_dims(0);
    const int64_t rank = static_cast<int64_t>(dims.size());
    const Tensor& axis_t = ctx.RequireValue(1);
    if (axis_t.num_elements() != 1 || axis_t.rank() > 1) {
      ctx.Fail("axis must be a scalar, got shape " + DimsToString(axis_t.dims()));
    }
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    const int64_t a = TensorToInt64s(axis_t)[0];
    if (a < -rank || a >= rank) {
      ctx.Fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    }
    const int64_t axis = a < 0 ? a + rank : a;
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= dims[k];
    for (int64_t k = axis + 1; k < rank; ++k) inner *= dims[k];
    const int64_t n = dims[axis];
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, dims);
    const bool exclusive = exclusive_, reverse = reverse_;
    if (Is16BitFloat(dtype)) {
      const kernels::Float16Kind kind = Float16KindOf(dtype);
      return [kind, outer, n, inner, exclusive, reverse](RunContext& rc) {
        kernels::CumSum16(kind, rc.input(0).data<uint16_t>(), outer, n, inner, exclusive, reverse,
                          rc.output(0).data<uint16_t>(), rc.parallel());
      };
    }
    return VisitDType(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        ctx.Unsupported("bool input");
      } else {
        return [outer, n, inner, exclusive, reverse](RunContext& rc) {
          kernels::CumSum<T>(rc.input(0).template data<T>(), outer, n, inner, exclusive, reverse,
                             rc.output(0).template data<T>(), rc.parallel());
        };
      }
    });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
  std::vector<DType> allowed_dtypes_;
};

// -------------------------------------------------------------------------------------- TopK

class TopKOp final : public Op {
 public:
  explicit TopKOp(const OpInit& init) : k_input_(init.opset() >= 10) {
    const int64_t opset = init.opset();
    axis_ = init.GetInt("axis", -1);
    if (!k_input_) {
      k_ = init.RequireInt("k");
      if (k_ < 0) init.Fail("k must be >= 0, got " + std::to_string(k_));
    }
    if (opset >= 11) {
      largest_ = init.GetInt("largest", 1) != 0;
      // `sorted`: the output is always sorted, which is valid for sorted == 0 too.
      (void)init.GetInt("sorted", 1);
    }
    // T: the floats before opset 11, every numeric type since; bfloat16 from opset 24.
    if (opset < 11) {
      allowed_dtypes_ = {DType::kFloat32, DType::kFloat64, DType::kFloat16};
    } else {
      allowed_dtypes_ = With16(NumericDTypes(), opset, 24);
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, allowed_dtypes_);
    if (k_input_) RequireOneOf(ctx, 1, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
    ctx.set_output_dtype(1, DType::kInt64);
  }

  std::vector<int> ValueInputs() const override {
    return k_input_ ? std::vector<int>{1} : std::vector<int>{};
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& dims = ctx.input_dims(0);
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank, [&ctx](const std::string& m) { ctx.Fail(m); });
    int64_t k = k_;
    if (k_input_) {
      const Tensor& kt = ctx.RequireValue(1);
      if (kt.num_elements() != 1 || kt.rank() > 1) {
        ctx.Fail("K must be a 1-D tensor with one element, got shape " + DimsToString(kt.dims()));
      }
      k = TensorToInt64s(kt)[0];
    }
    const int64_t n = dims[axis];
    if (k < 0 || k > n) {
      ctx.Fail("k = " + std::to_string(k) + " is out of range [0, " + std::to_string(n) +
               "] for axis " + std::to_string(axis));
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
    Dims out_dims = dims;
    out_dims[axis] = k;
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out_dims);
    ctx.set_output(1, DType::kInt64, out_dims);
    const bool largest = largest_;
    const bool want_values = ctx.has_output(0), want_indices = ctx.has_output(1);
    if (Is16BitFloat(dtype)) {
      const kernels::Float16Kind kind = Float16KindOf(dtype);
      return [kind, outer, n, inner, k, largest, dtype, out_dims, want_values,
              want_indices](RunContext& rc) {
        Tensor values_tmp, indices_tmp;  // an omitted output still needs a buffer
        if (!want_values) values_tmp = rc.Scratch(dtype, out_dims);
        if (!want_indices) indices_tmp = rc.Scratch(DType::kInt64, out_dims);
        uint16_t* values =
            want_values ? rc.output(0).data<uint16_t>() : values_tmp.data<uint16_t>();
        int64_t* indices =
            want_indices ? rc.output(1).data<int64_t>() : indices_tmp.data<int64_t>();
        kernels::TopK16(kind, rc.input(0).data<uint16_t>(), outer, n, inner, k, largest, values,
                        indices, rc.parallel());
      };
    }
    return VisitDType(dtype, [&](auto tag) -> RunFn {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        ctx.Unsupported("bool input");
      } else {
        return [outer, n, inner, k, largest, dtype, out_dims, want_values,
                want_indices](RunContext& rc) {
          // An omitted output still needs a buffer for the kernel.
          Tensor values_tmp, indices_tmp;
          T* values;
          int64_t* indices;
          if (want_values) {
            values = rc.output(0).template data<T>();
          } else {
            values_tmp = rc.Scratch(dtype, out_dims);
            values = values_tmp.template data<T>();
          }
          if (want_indices) {
            indices = rc.output(1).template data<int64_t>();
          } else {
            indices_tmp = rc.Scratch(DType::kInt64, out_dims);
            indices = indices_tmp.template data<int64_t>();
          }
          kernels::TopK<T>(rc.input(0).template data<T>(), outer, n, inner, k, largest, values,
                           indices, rc.parallel());
        };
      }
    });
  }

 private:
  bool k_input_;  // K is input 1 from opset 10 on, the attribute k before
  std::vector<DType> allowed_dtypes_;
  int64_t axis_ = -1;
  int64_t k_ = 0;
  bool largest_ = true;
};

}  // namespace

void RegisterReductionOps(OpRegistry& registry) {
  struct Entry {
    const char* name;
    ReduceOpType type;
    std::vector<int> attr_versions;   // axes as attribute
    std::vector<int> input_versions;  // axes as input
  };
  const Entry entries[] = {
      {"ReduceSum", ReduceOpType::kSum, {1, 11}, {13}},
      {"ReduceMean", ReduceOpType::kMean, {1, 11, 13}, {18}},
      {"ReduceMax", ReduceOpType::kMax, {1, 11, 12, 13}, {18, 20}},
      {"ReduceMin", ReduceOpType::kMin, {1, 11, 12, 13}, {18, 20}},
      {"ReduceProd", ReduceOpType::kProd, {1, 11, 13}, {18}},
      {"ReduceL1", ReduceOpType::kL1, {1, 11, 13}, {18}},
      {"ReduceL2", ReduceOpType::kL2, {1, 11, 13}, {18}},
      {"ReduceLogSum", ReduceOpType::kLogSum, {1, 11, 13}, {18}},
      {"ReduceLogSumExp", ReduceOpType::kLogSumExp, {1, 11, 13}, {18}},
      {"ReduceSumSquare", ReduceOpType::kSumSquare, {1, 11, 13}, {18}},
  };
  for (const Entry& e : entries) {
    for (int v : e.attr_versions) registry.Register("", e.name, v, ReduceFactory(e.type, false));
    for (int v : e.input_versions) registry.Register("", e.name, v, ReduceFactory(e.type, true));
  }
  for (int v : {1, 11, 12, 13}) {
    registry.Register("", "ArgMax", v, [](const OpInit& init) -> std::unique_ptr<Op> {
      return std::make_unique<ArgReduceOp>(init, true);
    });
    registry.Register("", "ArgMin", v, [](const OpInit& init) -> std::unique_ptr<Op> {
      return std::make_unique<ArgReduceOp>(init, false);
    });
  }
  for (int v : {11, 14}) registry.Register("", "CumSum", v, MakeFactory<CumSumOp>());
  for (int v : {1, 10, 11, 24}) registry.Register("", "TopK", v, MakeFactory<TopKOp>());
}

}  // namespace simplecpp::graph
