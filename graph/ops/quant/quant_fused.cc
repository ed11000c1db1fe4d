// Internal fused quantized ops (domain "simplecpp.fused", version 1) that the quantized-pattern
// fusion pass (graph/passes/quant_fusion.h) writes; models never need to name them. Each runs the
// exact int32 core of the integer ops (kernels/quant/qgemm.h through QMatMulPlan / QConvPlan,
// constant weights packed once at Prepare) followed by a float epilogue:
//
//   DynamicQuantizeConv(x f32, W u8/i8, w_scale f32 [1|M], [w_zero_point [1|M]], [bias f32 [M]])
//     + Conv attributes: x is quantized to uint8 exactly as DynamicQuantizeLinear does (xs, xzp
//     from x's range), acc = ConvInteger(xq, W, xzp, w_zp), and
//       y[n, m, p] = float(acc) * (xs * w_scale[m])   then   + bias[m]
//     each step rounded to float32 in this order (no FMA), which is what the unfused
//     Cast -> Mul(Mul(xs, w_scale)) -> Add graph computes: bit-identical results.
//   QLinearMatMulBias(a, a_scale, a_zp, B, b_scale, [b_zp], y_scale, y_zp, [bias i32 [N]])
//     + attribute gemm (1: A and B must be 2-D, as Gemm requires): QLinearMatMul with an int32
//     bias added (wrapping) to the accumulator before requantization:
//       y = saturate(round_half_even(double(acc + bias[n]) * double(a_scale*b_scale[n]/y_scale))
//                    + y_zp)
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/parallel.h"
#include "kernels/quant/quantize.h"
#include "quant/quant_params.h"

namespace simplecpp::graph {
namespace quant_fused {
namespace {

using quant_ops::IsOneElement;
using quant_ops::RequireOne;
using quant_ops::FirstScaleAsF32;
using quant_ops::FirstZeroPointAsI32;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

void RequireOneOrVector(const PrepareContext& ctx, int i, int64_t count, const char* name) {
  if (!ctx.has_input(i)) return;
  const Dims& d = ctx.input_dims(i);
  if (IsOneElement(d) && d.size() <= 1) return;
  if (d.size() == 1 && d[0] == count) return;
  ctx.Fail(std::string(name) + " has shape " + DimsToString(d) + " but must be a scalar or [" +
           std::to_string(count) + "]");
}

// ---------------------------------------------------------------------------------------------

class DynamicQuantizeConvOp final : public Op {
 public:
  explicit DynamicQuantizeConvOp(const OpInit& init) {
    attrs_ = ConvAttributes::Read(init);
    if (init.num_inputs() < 3 || init.num_inputs() > 5)
      init.Fail("DynamicQuantizeConv takes 3 to 5 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.RequireDType(0, {DType::kFloat32});
    ctx.RequireDType(1, {DType::kUInt8, DType::kInt8});
    ctx.RequireInput(2);
    ctx.RequireDType(2, {DType::kFloat32});
    if (ctx.has_input(3)) ctx.RequireSameDType(1, 3);
    if (ctx.has_input(4)) ctx.RequireDType(4, {DType::kFloat32});
    ctx.set_output_dtype(0, DType::kFloat32);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    // x is float32: the plan treats it as uint8 (what it becomes).
    auto plan = std::make_shared<const quant_ops::QConvPlan>(
        quant_ops::PlanQConv(ctx, attrs_, 0, 1, 3));
    const int64_t m = plan->out_channels;
    RequireOneOrVector(ctx, 2, m, "w_scale");
    const bool has_bias = ctx.has_input(4);
    if (has_bias && ctx.input_dims(4) != Dims{m}) {
      ctx.Fail("bias has shape " + DimsToString(ctx.input_dims(4)) + " but must be [" +
               std::to_string(m) + "]");
    }
    ctx.set_output(0, DType::kFloat32, plan->out_dims);
    const int64_t total = CheckedNumElements(plan->out_dims);
    const int64_t x_total = CheckedNumElements(ctx.input_dims(0));
    if (total == 0) return [](RunContext&) {};
    const bool has_wz = ctx.has_input(3);
    return [plan, has_wz, has_bias, total, x_total, m](RunContext& rc) {
      // Dynamic quantization of x (as DynamicQuantizeLinear).
      Tensor xq_t = rc.Scratch(DType::kUInt8, {std::max<int64_t>(1, x_total)});
      uint8_t* xq = xq_t.data<uint8_t>();
      const quant::DynamicQuantParams p =
          quant_ops::DynamicQuantizeU8(rc.parallel(), rc.input(0).data<float>(), x_total, xq);
      // Integer convolution.
      const std::vector<int32_t> wz = has_wz ? ZeroPointsAsI32(rc.input(3)) : std::vector<int32_t>();
      Tensor acc_t = rc.Scratch(DType::kInt32, {total});
      const quant_ops::QConvPlan::Scratch scratch = plan->AllocateScratch(rc);
      plan->Run(rc.parallel(), xq, rc.input(1).raw_data(), p.zero_point,
                has_wz ? wz.data() : nullptr, wz.size() > 1 ? 1 : 0, acc_t.data<int32_t>(),
                scratch.c, scratch.rows);
      // Float epilogue: (float(acc) * (xs * ws[m])) + bias[m], each rounded to float32.
      const std::vector<float> ws = ScalesAsF32(rc.input(2));
      const float* bias = has_bias ? rc.input(4).data<float>() : nullptr;
      const int32_t* acc = acc_t.data<int32_t>();
      float* y = rc.output(0).data<float>();
      // One output channel of one image per row, the rows split between threads.
      const int64_t positions = plan->positions;
      kernels::ParallelForElements(rc.parallel(), total)
          .For(plan->batch * m, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
              const int64_t ch = r % m;
              const float mult = p.scale * ws[ws.size() > 1 ? ch : 0];
              kernels::ScaleI32RowsToF32(acc + r * positions, positions, 1, positions, &mult, 0,
                                         bias != nullptr ? bias + ch : nullptr,
                                         y + r * positions, positions, /*bias_step=*/0);
            }
          });
    };
  }

 private:
  ConvAttributes attrs_;
};

// ---------------------------------------------------------------------------------------------

class QLinearMatMulBiasOp final : public Op {
 public:
  explicit QLinearMatMulBiasOp(const OpInit& init) {
    if (init.num_inputs() < 8 || init.num_inputs() > 9)
      init.Fail("QLinearMatMulBias takes 8 or 9 inputs, got " + std::to_string(init.num_inputs()));
    gemm_ = init.GetInt("gemm", 0);
    if (gemm_ != 0 && gemm_ != 1) init.Fail("attribute gemm must be 0 or 1");
  }
  void InferTypes(TypeContext& ctx) const override {
    for (int i : {0, 3, 7}) ctx.RequireDType(i, {DType::kUInt8, DType::kInt8});
    for (int i : {1, 4, 6}) ctx.RequireDType(i, {DType::kFloat32});
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(5)) ctx.RequireSameDType(3, 5);
    if (ctx.has_input(8)) ctx.RequireDType(8, {DType::kInt32});
    ctx.set_output_dtype(0, ctx.input_dtype(7));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    if (gemm_ && (ctx.input_rank(0) != 2 || ctx.input_rank(3) != 2)) {
      ctx.Fail("A and B must be 2-D (Gemm), got A " + DimsToString(ctx.input_dims(0)) + " and B " +
               DimsToString(ctx.input_dims(3)));
    }
    auto plan = std::make_shared<const quant_ops::QMatMulPlan>(
        quant_ops::PlanQMatMul(ctx, 0, 3, 2, 5));
    const DType out = ctx.input_dtype(7);
    ctx.set_output(0, out, plan->out_dims);
    RequireOne(ctx, 1, "a_scale");
    RequireOne(ctx, 2, "a_zero_point");
    RequireOne(ctx, 6, "y_scale");
    RequireOne(ctx, 7, "y_zero_point");
    const int64_t n = plan->n;
    RequireOneOrVector(ctx, 4, n, "b_scale");
    const bool has_bias = ctx.has_input(8);
    if (has_bias && ctx.input_dims(8) != Dims{n}) {
      ctx.Fail("bias has shape " + DimsToString(ctx.input_dims(8)) + " but must be [" +
               std::to_string(n) + "]");
    }
    const bool has_za = ctx.has_input(2), has_zb = ctx.has_input(5);
    int32_t lo = 0, hi = 0;
    quant::QuantizedRange(out, &lo, &hi);
    const bool to_i8 = out == DType::kInt8;
    const int64_t total = CheckedNumElements(plan->out_dims);
    if (total == 0) return [](RunContext&) {};
    return [plan, has_za, has_zb, has_bias, lo, hi, to_i8, total, n](RunContext& rc) {
      const std::vector<int32_t> za = has_za ? ZeroPointsAsI32(rc.input(2)) : std::vector<int32_t>();
      const std::vector<int32_t> zb = has_zb ? ZeroPointsAsI32(rc.input(5)) : std::vector<int32_t>();
      const float a_scale = FirstScaleAsF32(rc.input(1));
      const float y_scale = FirstScaleAsF32(rc.input(6));
      const std::vector<float> b_scale = ScalesAsF32(rc.input(4));
      std::vector<float> mult(b_scale.size());
      for (size_t j = 0; j < b_scale.size(); ++j) mult[j] = a_scale * b_scale[j] / y_scale;
      const int64_t mstep = mult.size() > 1 ? 1 : 0;
      const int32_t yzp = FirstZeroPointAsI32(rc.input(7));
      Tensor acc_t = rc.Scratch(DType::kInt32, {total});
      int32_t* acc = acc_t.data<int32_t>();
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(3).raw_data(),
                has_za ? za.data() : nullptr, has_zb ? zb.data() : nullptr, acc);
      const int32_t* bias = has_bias ? rc.input(8).data<int32_t>() : nullptr;
      const int64_t rows = total / n;
      for (int64_t r = 0; r < rows; ++r) {
        int32_t* row = acc + r * n;
        if (bias != nullptr) {
          for (int64_t j = 0; j < n; ++j) {
            row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) +
                                          static_cast<uint32_t>(bias[j]));
          }
        }
        if (to_i8) {
          kernels::RequantizeI32ToI8(row, n, mult.data(), mstep, yzp, lo, hi,
                                     rc.output(0).data<int8_t>() + r * n);
        } else {
          kernels::RequantizeI32ToU8(row, n, mult.data(), mstep, yzp, lo, hi,
                                     rc.output(0).data<uint8_t>() + r * n);
        }
      }
    };
  }

 private:
  int64_t gemm_ = 0;
};

}  // namespace

// QdqBinary (qdq_binary.cc).
void RegisterQdqBinaryOp(OpRegistry& registry);
// QLinearConvTranspose (qlinear_conv_transpose.cc).
void RegisterQLinearConvTransposeOp(OpRegistry& registry);

}  // namespace quant_fused

void RegisterQuantFusedOps(OpRegistry& registry) {
  quant_fused::RegisterQdqBinaryOp(registry);
  quant_fused::RegisterQLinearConvTransposeOp(registry);
  registry.Register("simplecpp.fused", "DynamicQuantizeConv", 1,
                    MakeFactory<quant_fused::DynamicQuantizeConvOp>());
  registry.Register("simplecpp.fused", "QLinearMatMulBias", 1,
                    MakeFactory<quant_fused::QLinearMatMulBiasOp>());
}

}  // namespace simplecpp::graph
