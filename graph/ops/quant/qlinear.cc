// QLinearMatMul (ai.onnx opsets 10, 21) and QLinearConv (10): integer matmul / convolution of
// quantized operands, requantized to the output's quantized type.
//
//   acc = sum (a - a_zp) * (b - b_zp)                    (int32, kernels/quant/qgemm.h;
//                                                         + int32 bias for QLinearConv)
//   multiplier = a_scale * b_scale / y_scale             computed in the scales' dtype, in this
//                                                         order: float32, or float16 (21+) with
//                                                         each product / quotient rounded to
//                                                         float16
//   y = saturate(round_half_even(double(acc) * double(multiplier)) + y_zp)
// The product is in double as in ONNX's reference implementation (numpy: int32 array * float32
// is float64); the zero point is added after rounding, as ONNX Runtime and QuantizeLinear do.
//
// QLinearMatMul's scales and zero points follow the operand they describe (QMatMulParamLayout,
// the same shapes MatMulInteger's zero points take): a_scale / a_zero_point per tensor or per row
// of a ([M], or a's shape with K replaced by 1: [M, 1], [D, M, 1], ...); b_scale / b_zero_point
// per tensor or per column of b ([N], or b's shape with K replaced by 1: [1, N], [D, 1, N], ...);
// y_scale / y_zero_point per tensor or per output row ([M], or the output's shape with N replaced
// by 1). Each output row is requantized with its own multiplier vector, rebuilt only when the
// row's a / b / y scales differ from the previous row's, so per-tensor a and y cost one build.
// QLinearConv: x per tensor; w per tensor or per output channel ([M]); y per tensor. y's dtype is
// y_zero_point's (uint8 or int8); float8 operands (QLinearMatMul-21) are out of scope:
// Unsupported.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/quant/quantize.h"
#include "quant/quant_params.h"

namespace simplecpp::graph {
namespace quant_ops {
namespace {

// a_scale * b_scale / y_scale in float32, or with each step rounded to float16 (float16 scales).
float Multiplier(float a_scale, float b_scale, float y_scale, bool half) {
  if (!half) return a_scale * b_scale / y_scale;
  const float ab = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(a_scale * b_scale));
  return kernels::HalfBitsToFloat(kernels::FloatToHalfBits(ab / y_scale));
}

// multiplier[j] = Multiplier(a_scale, b_scale[j], y_scale).
std::vector<float> Multipliers(float a_scale, const std::vector<float>& b_scale, float y_scale,
                               bool half) {
  std::vector<float> m(b_scale.size());
  for (size_t j = 0; j < b_scale.size(); ++j) m[j] = Multiplier(a_scale, b_scale[j], y_scale, half);
  return m;
}

using RequantFn = void (*)(const int32_t*, int64_t, const float*, int64_t, int32_t, int32_t,
                           int32_t, void*);
template <typename T, void (*K)(const int32_t*, int64_t, const float*, int64_t, int32_t, int32_t,
                                int32_t, T*)>
void RequantTo(const int32_t* acc, int64_t n, const float* m, int64_t ms, int32_t zp, int32_t lo,
               int32_t hi, void* out) {
  K(acc, n, m, ms, zp, lo, hi, static_cast<T*>(out));
}

void RequireQuantOperand(TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  const DType t = ctx.input_dtype(i);
  if (IsFloat8DType(t)) {
    ctx.Unsupported("input " + std::to_string(i) + " is " + DTypeName(t) +
                    " (float8 operands are not supported by this build)");
  }
  ctx.RequireDType(i, {DType::kUInt8, DType::kInt8});
}

// b_scale / w_scale: one value or `count` values (1-D).
void RequireOneOrVector(const PrepareContext& ctx, int i, int64_t count, const char* name,
                        const char* what) {
  if (!ctx.has_input(i)) return;
  const Dims& d = ctx.input_dims(i);
  if (IsOneElement(d)) return;
  if (d.size() == 1 && d[0] == count) return;
  ctx.Fail(std::string(name) + " has shape " + DimsToString(d) + " but must be a scalar or [" +
           std::to_string(count) + "] (" + what + ")");
}

RequantFn ChooseRequant(DType out) {
  return out == DType::kInt8 ? RequantTo<int8_t, kernels::RequantizeI32ToI8>
                             : RequantTo<uint8_t, kernels::RequantizeI32ToU8>;
}

// The layouts of QLinearMatMul's scales and of y's zero point, decided at Prepare.
struct QLinearMatMulLayouts {
  QParamLayout a_scale, b_scale, y_scale, y_zero_point;
};

// The multipliers of one output row: a_scale[ia] * b_scale[ib + j * b_step] / y_scale[iy] for its
// n columns (one value when b_scale is per tensor). Consecutive rows usually have the same scale
// indices (every row does when a and y are per tensor and b_scale is not batched), so the vector
// is rebuilt only when they change.
class RowMultipliers {
 public:
  RowMultipliers(const std::vector<float>& a, const std::vector<float>& b, int64_t b_step,
                 int64_t n, const std::vector<float>& y, bool half)
      : a_(a), b_(b), y_(y), b_step_(b_step), half_(half), row_(b_step != 0 ? n : 1) {}

  const float* Row(int64_t ia, int64_t ib, int64_t iy) {
    if (ia != ia_ || ib != ib_ || iy != iy_) {
      for (size_t j = 0; j < row_.size(); ++j) {
        row_[j] = Multiplier(a_[ia], b_[ib + static_cast<int64_t>(j) * b_step_], y_[iy], half_);
      }
      ia_ = ia;
      ib_ = ib;
      iy_ = iy;
    }
    return row_.data();
  }
  int64_t step() const { return b_step_; }

 private:
  const std::vector<float>& a_;
  const std::vector<float>& b_;
  const std::vector<float>& y_;
  const int64_t b_step_;
  const bool half_;
  std::vector<float> row_;
  int64_t ia_ = -1, ib_ = -1, iy_ = -1;
};

// Requantizes acc [num_batches, M, N] into y row by row, each row with its own a / y scale, y
// zero point and b_scale vector (the B matrix its product used).
void RequantizeRows(const QMatMulPlan& p, const QLinearMatMulLayouts& l, const int32_t* acc,
                    RowMultipliers& mult, const std::vector<int32_t>& yzp, int32_t lo, int32_t hi,
                    RequantFn requant, uint8_t* y) {
  for (int64_t t = 0; t < p.num_batches; ++t) {
    const auto [am, bm] = (*p.offsets)[t];
    for (int64_t r = 0; r < p.m; ++r) {
      const float* row_mult =
          mult.Row(am * l.a_scale.batch + r * l.a_scale.step, bm * l.b_scale.batch,
                   t * l.y_scale.batch + r * l.y_scale.step);
      const int32_t zp = yzp[t * l.y_zero_point.batch + r * l.y_zero_point.step];
      const int64_t off = (t * p.m + r) * p.n;
      requant(acc + off, p.n, row_mult, mult.step(), zp, lo, hi, y + off);
    }
  }
}

// ---------------------------------------------------------------------------------------------

class QLinearMatMulOp final : public Op {
 public:
  explicit QLinearMatMulOp(const OpInit& init) : float16_scales_(init.opset() >= 21) {
    if (init.num_inputs() != 8)
      init.Fail("QLinearMatMul takes 8 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireQuantOperand(ctx, 0);
    RequireQuantOperand(ctx, 3);
    for (int i : {1, 4, 6}) {
      if (float16_scales_) {
        ctx.RequireDType(i, {DType::kFloat32, DType::kFloat16});
      } else {
        ctx.RequireDType(i, {DType::kFloat32});
      }
    }
    ctx.RequireSameDType(1, 4);
    ctx.RequireSameDType(1, 6);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(5)) ctx.RequireSameDType(3, 5);
    RequireQuantOperand(ctx, 7);
    ctx.set_output_dtype(0, ctx.input_dtype(7));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    auto plan = std::make_shared<const QMatMulPlan>(PlanQMatMul(ctx, 0, 3, 2, 5));
    const DType out = ctx.input_dtype(7);
    ctx.set_output(0, out, plan->out_dims);
    const QLinearMatMulLayouts layouts = Layouts(ctx, *plan);
    const bool half = ctx.input_dtype(1) == DType::kFloat16;
    const bool has_za = ctx.has_input(2), has_zb = ctx.has_input(5);
    int32_t lo = 0, hi = 0;
    quant::QuantizedRange(out, &lo, &hi);
    const RequantFn requant = ChooseRequant(out);
    const int64_t total = CheckedNumElements(plan->out_dims);
    if (total == 0) return [](RunContext&) {};
    return [plan, layouts, half, has_za, has_zb, lo, hi, requant, total](RunContext& rc) {
      const std::vector<int32_t> za = has_za ? ZeroPointsAsI32(rc.input(2)) : std::vector<int32_t>();
      const std::vector<int32_t> zb = has_zb ? ZeroPointsAsI32(rc.input(5)) : std::vector<int32_t>();
      Tensor acc = rc.Scratch(DType::kInt32, {total});
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(3).raw_data(),
                has_za ? za.data() : nullptr, has_zb ? zb.data() : nullptr, acc.data<int32_t>());
      const std::vector<float> a_scale = ScalesAsF32(rc.input(1));
      const std::vector<float> b_scale = ScalesAsF32(rc.input(4));
      const std::vector<float> y_scale = ScalesAsF32(rc.input(6));
      RowMultipliers mult(a_scale, b_scale, layouts.b_scale.step, plan->n, y_scale, half);
      RequantizeRows(*plan, layouts, acc.data<int32_t>(), mult, ZeroPointsAsI32(rc.input(7)), lo,
                     hi, requant, static_cast<uint8_t*>(rc.output(0).raw_data()));
    };
  }

 private:
  static QLinearMatMulLayouts Layouts(const PrepareContext& ctx, const QMatMulPlan& plan) {
    QLinearMatMulLayouts l;
    l.a_scale =
        QMatMulParamLayout(ctx, 1, "a_scale", QParamAxis::kRowsOfA, ctx.input_dims(0), plan.m);
    l.b_scale =
        QMatMulParamLayout(ctx, 4, "b_scale", QParamAxis::kColumnsOfB, ctx.input_dims(3), plan.n);
    // With a 1-D operand the output has no pair of row and column axes (its last axis is M when b
    // is 1-D; M is 1 when a is), so y's parameters are per tensor or [M].
    const bool vector_operand = ctx.input_rank(0) == 1 || ctx.input_rank(3) == 1;
    const Dims y_rows = vector_operand ? Dims{plan.m} : plan.out_dims;
    l.y_scale = QMatMulParamLayout(ctx, 6, "y_scale", QParamAxis::kRowsOfY, y_rows, plan.m);
    l.y_zero_point =
        QMatMulParamLayout(ctx, 7, "y_zero_point", QParamAxis::kRowsOfY, y_rows, plan.m);
    return l;
  }
  bool float16_scales_;  // opset 21+: float16 scales besides float32
};

// ---------------------------------------------------------------------------------------------

class QLinearConvOp final : public Op {
 public:
  explicit QLinearConvOp(const OpInit& init) {
    attrs_ = ConvAttributes::Read(init);
    if (init.num_inputs() < 8 || init.num_inputs() > 9)
      init.Fail("QLinearConv takes 8 or 9 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override { InferQLinearConvTypes(ctx); }
  bool AttachOutputTable(std::shared_ptr<const std::array<uint8_t, 256>> table) override {
    if (table_ || !table) return false;
    table_ = std::move(table);
    return true;
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    RequireOne(ctx, 1, "x_scale");
    RequireOne(ctx, 2, "x_zero_point");
    RequireOne(ctx, 6, "y_scale");
    RequireOne(ctx, 7, "y_zero_point");
    auto plan = std::make_shared<const QConvPlan>(PlanQConv(ctx, attrs_, 0, 3, 5));
    const DType out = ctx.input_dtype(7);
    ctx.set_output(0, out, plan->out_dims);
    const int64_t m = plan->out_channels;
    RequireOneOrVector(ctx, 4, m, "w_scale", "one per output channel");
    const bool has_bias = ctx.has_input(8);
    if (has_bias && ctx.input_dims(8) != Dims{m}) {
      ctx.Fail("B " + DimsToString(ctx.input_dims(8)) + " must be [" + std::to_string(m) + "]");
    }
    const bool has_xz = ctx.has_input(2), has_wz = ctx.has_input(5);
    int32_t lo = 0, hi = 0;
    quant::QuantizedRange(out, &lo, &hi);
    const bool out_signed = out == DType::kInt8;
    if (CheckedNumElements(plan->out_dims) == 0) return [](RunContext&) {};
    // Zero points and multipliers: read once here where they are constants (the usual case),
    // else per run. The same values either way.
    struct Params {
      int32_t xzp = 0, yzp = 0;
      std::vector<int32_t> wz;
      std::vector<float> mult;
    };
    auto read = [has_xz, has_wz](auto&& input) {
      Params p;
      p.xzp = has_xz ? FirstZeroPointAsI32(input(2)) : 0;
      if (has_wz) p.wz = ZeroPointsAsI32(input(5));
      p.mult = Multipliers(FirstScaleAsF32(input(1)), ScalesAsF32(input(4)),
                           FirstScaleAsF32(input(6)), false);
      p.yzp = FirstZeroPointAsI32(input(7));
      return p;
    };
    bool constant = true;
    for (int i : {1, 2, 4, 5, 6, 7}) {
      constant = constant && (!ctx.has_input(i) || ctx.input_value(i) != nullptr);
    }
    std::shared_ptr<const Params> fixed;
    // With constant multipliers, whether the tiles requantize (and so whether the run needs
    // scratch) is decided here once.
    int fuses = -1;
    if (constant) {
      fixed = std::make_shared<const Params>(
          read([&ctx](int i) -> const Tensor& { return *ctx.input_value(i); }));
      QConvRequant probe;
      probe.mult = fixed->mult.data();
      probe.mult_step = fixed->mult.size() > 1 ? 1 : 0;
      probe.zp = fixed->yzp;
      probe.lo = lo;
      probe.hi = hi;
      probe.out_signed = out_signed;
      fuses = plan->FusesRequant(probe) ? 1 : 0;
    }
    return [plan, has_bias, has_wz, lo, hi, out_signed, table = table_, fixed, fuses,
            read](RunContext& rc) {
      Params local;
      if (!fixed) local = read([&rc](int i) -> const Tensor& { return rc.input(i); });
      const Params& params = fixed ? *fixed : local;
      const int32_t xzp = params.xzp;
      const std::vector<int32_t>& wz = params.wz;
      const std::vector<float>& mult = params.mult;
      const int32_t yzp = params.yzp;
      QConvRequant rq;
      rq.fuses = fuses;
      rq.bias = has_bias ? rc.input(8).data<int32_t>() : nullptr;
      rq.mult = mult.data();
      rq.mult_step = mult.size() > 1 ? 1 : 0;
      rq.zp = yzp;
      rq.lo = lo;
      rq.hi = hi;
      rq.out_signed = out_signed;
      rq.y = rc.output(0).raw_data();
      rq.table = table ? table->data() : nullptr;
      const bool fused = fuses >= 0 ? fuses != 0 : plan->FusesRequant(rq);
      rq.fuses = fused ? 1 : 0;
      const QConvPlan::Scratch scratch =
          plan->NeedsScratch(&rq, fused) ? plan->AllocateScratch(rc) : QConvPlan::Scratch();
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(3).raw_data(), xzp,
                has_wz ? wz.data() : nullptr, wz.size() > 1 ? 1 : 0, nullptr, scratch.c,
                scratch.rows, &rq);
    };
  }

 private:
  ConvAttributes attrs_;
  // Lookup fusion's table for the output bytes (graph/passes/quant_lookup_fusion.h), or null.
  std::shared_ptr<const std::array<uint8_t, 256>> table_;
};

}  // namespace

void InferQLinearConvTypes(TypeContext& ctx) {
  RequireQuantOperand(ctx, 0);
  RequireQuantOperand(ctx, 3);
  for (int i : {1, 4, 6}) ctx.RequireDType(i, {DType::kFloat32});
  if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
  if (ctx.has_input(5)) ctx.RequireSameDType(3, 5);
  RequireQuantOperand(ctx, 7);
  if (ctx.has_input(8)) ctx.RequireDType(8, {DType::kInt32});
  ctx.set_output_dtype(0, ctx.input_dtype(7));
}

void RegisterQLinearOps(OpRegistry& registry) {
  registry.Register("", "QLinearMatMul", 10, MakeFactory<QLinearMatMulOp>());
  registry.Register("", "QLinearMatMul", 21, MakeFactory<QLinearMatMulOp>());
  registry.Register("", "QLinearConv", 10, MakeFactory<QLinearConvOp>());
}

}  // namespace quant_ops
}  // namespace simplecpp::graph
