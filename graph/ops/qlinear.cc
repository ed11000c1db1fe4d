// QLinearMatMul (ai.onnx opsets 10, 21) and QLinearConv (10): integer matmul / convolution of
// quantized operands, requantized to the output's quantized type.
//
//   acc = sum (a - a_zp) * (b - b_zp)                    (int32, kernels/qgemm.h; + int32 bias
//                                                         for QLinearConv)
//   multiplier = a_scale * b_scale / y_scale             computed in the scales' dtype: float32,
//                                                         or float16 (21+) with each product /
//                                                         quotient rounded to float16
//   y = saturate(round_half_even(double(acc) * double(multiplier) + y_zp))
// which is what ONNX's reference implementation computes (numpy: int32 array * float32 scalar
// is float64). Scales / zero points: a (x) per tensor; b (w) per tensor or per column (output
// channel for QLinearConv: [M]); y per tensor. y's dtype is y_zero_point's (uint8 or int8);
// float8 operands (QLinearMatMul-21) are out of scope: Unsupported.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/float16.h"
#include "kernels/quantize.h"
#include "quant/quant_params.h"

namespace simplecpp::graph {
namespace quant_ops {
namespace {

// multiplier[j] = a_scale * b_scale[j * b_step] / y_scale in float32 or rounded to float16.
std::vector<float> Multipliers(float a_scale, const std::vector<float>& b_scale, float y_scale,
                               bool half) {
  std::vector<float> m(b_scale.size());
  for (size_t j = 0; j < b_scale.size(); ++j) {
    if (half) {
      const float ab = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(a_scale * b_scale[j]));
      m[j] = kernels::HalfBitsToFloat(kernels::FloatToHalfBits(ab / y_scale));
    } else {
      m[j] = a_scale * b_scale[j] / y_scale;
    }
  }
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

void RequireOne(const PrepareContext& ctx, int i, const char* name) {
  if (ctx.has_input(i) && !IsOneElement(ctx.input_dims(i))) {
    ctx.Fail(std::string(name) + " must be a scalar (per-tensor), got shape " +
             DimsToString(ctx.input_dims(i)));
  }
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

// ---------------------------------------------------------------------------------------------

class QLinearMatMulOp final : public Op {
 public:
  explicit QLinearMatMulOp(const OpInit& init) {
    if (init.num_inputs() != 8)
      init.Fail("QLinearMatMul takes 8 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireQuantOperand(ctx, 0);
    RequireQuantOperand(ctx, 3);
    const bool v21 = ctx.opset() >= 21;
    for (int i : {1, 4, 6}) {
      if (v21) {
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
    RequireOne(ctx, 1, "a_scale");
    RequireOne(ctx, 6, "y_scale");
    RequireOne(ctx, 7, "y_zero_point");
    RequireOneOrVector(ctx, 4, plan->n, "b_scale", "per column of b");
    const bool half = ctx.input_dtype(1) == DType::kFloat16;
    const bool has_za = ctx.has_input(2), has_zb = ctx.has_input(5);
    int32_t lo = 0, hi = 0;
    quant::QuantizedRange(out, &lo, &hi);
    const RequantFn requant = ChooseRequant(out);
    const int64_t total = CheckedNumElements(plan->out_dims);
    if (total == 0) return [](RunContext&) {};
    return [plan, half, has_za, has_zb, lo, hi, requant, total](RunContext& rc) {
      const std::vector<int32_t> za = has_za ? ZeroPointsAsI32(rc.input(2)) : std::vector<int32_t>();
      const std::vector<int32_t> zb = has_zb ? ZeroPointsAsI32(rc.input(5)) : std::vector<int32_t>();
      const float a_scale = ScalesAsF32(rc.input(1))[0];
      const float y_scale = ScalesAsF32(rc.input(6))[0];
      const std::vector<float> mult = Multipliers(a_scale, ScalesAsF32(rc.input(4)), y_scale, half);
      const int64_t mstep = mult.size() > 1 ? 1 : 0;
      const int32_t yzp = ZeroPointsAsI32(rc.input(7))[0];
      Tensor acc = rc.Scratch(DType::kInt32, {total});
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(3).raw_data(),
                has_za ? za.data() : nullptr, has_zb ? zb.data() : nullptr, acc.data<int32_t>());
      // Rows of N outputs; the multiplier varies along the row when b is per column.
      const int64_t n = plan->n, rows = total / n;
      auto* y = static_cast<uint8_t*>(rc.output(0).raw_data());  // 1-byte output types
      for (int64_t r = 0; r < rows; ++r) {
        requant(acc.data<int32_t>() + r * n, n, mult.data(), mstep, yzp, lo, hi, y + r * n);
      }
    };
  }
};

// ---------------------------------------------------------------------------------------------

class QLinearConvOp final : public Op {
 public:
  explicit QLinearConvOp(const OpInit& init) {
    attrs_.Read(init);
    if (init.num_inputs() < 8 || init.num_inputs() > 9)
      init.Fail("QLinearConv takes 8 or 9 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireQuantOperand(ctx, 0);
    RequireQuantOperand(ctx, 3);
    for (int i : {1, 4, 6}) ctx.RequireDType(i, {DType::kFloat32});
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(5)) ctx.RequireSameDType(3, 5);
    RequireQuantOperand(ctx, 7);
    if (ctx.has_input(8)) ctx.RequireDType(8, {DType::kInt32});
    ctx.set_output_dtype(0, ctx.input_dtype(7));
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
    return [plan, has_bias, has_xz, has_wz, lo, hi, out_signed](RunContext& rc) {
      const int32_t xzp = has_xz ? ZeroPointsAsI32(rc.input(2))[0] : 0;
      const std::vector<int32_t> wz = has_wz ? ZeroPointsAsI32(rc.input(5)) : std::vector<int32_t>();
      const float x_scale = ScalesAsF32(rc.input(1))[0];
      const float y_scale = ScalesAsF32(rc.input(6))[0];
      const std::vector<float> mult = Multipliers(x_scale, ScalesAsF32(rc.input(4)), y_scale, false);
      const int32_t yzp = ZeroPointsAsI32(rc.input(7))[0];
      const int threads = rc.parallel().num_threads();
      Tensor c = rc.Scratch(DType::kInt32, {std::max<int64_t>(1, plan->ScratchCElements(threads))});
      Tensor rows =
          rc.Scratch(DType::kUInt8, {std::max<int64_t>(1, plan->ScratchRowBytes(threads))});
      QConvRequant rq;
      rq.bias = has_bias ? rc.input(8).data<int32_t>() : nullptr;
      rq.mult = mult.data();
      rq.mult_step = mult.size() > 1 ? 1 : 0;
      rq.zp = yzp;
      rq.lo = lo;
      rq.hi = hi;
      rq.out_signed = out_signed;
      rq.y = rc.output(0).raw_data();
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(3).raw_data(), xzp,
                has_wz ? wz.data() : nullptr, wz.size() > 1 ? 1 : 0, nullptr, c.data<int32_t>(),
                rows.data<uint8_t>(), &rq);
    };
  }

 private:
  ConvAttrs attrs_;
};

}  // namespace

void RegisterQLinearOps(OpRegistry& registry) {
  registry.Register("", "QLinearMatMul", 10, MakeFactory<QLinearMatMulOp>());
  registry.Register("", "QLinearMatMul", 21, MakeFactory<QLinearMatMulOp>());
  registry.Register("", "QLinearConv", 10, MakeFactory<QLinearConvOp>());
}

}  // namespace quant_ops
}  // namespace simplecpp::graph
