// com.microsoft (opset 1) quantized matmul contrib ops that ONNX Runtime's quantizer writes:
// MatMulIntegerToFloat, DynamicQuantizeMatMul and QGemm. RegisterQuantContribOps (families.h)
// also registers the elementwise (quant_contrib_elementwise.cc) and pooling
// (quant_contrib_pool.cc) contrib ops.
//
// All three share the integer core of MatMulInteger (kernels/quant/qgemm.h through QMatMulPlan):
//   acc[m,n] = sum_k (A[m,k] - a_zp) * (B[k,n] - b_zp[n])            (int32, wrapping)
// then
//   MatMulIntegerToFloat:  Y = float(acc) * (a_scale * b_scale[n]) + bias[n]        (float32)
//   DynamicQuantizeMatMul: as above, with A (float32) first quantized to uint8 exactly as
//                          DynamicQuantizeLinear does (a_scale, a_zp from A's range).
//   QGemm:                 acc += C[m,n] (int32 bias, broadcast to [M,N]);
//                          float output (no y_scale):  Y = float(acc) * (alpha*a_scale*b_scale[n])
//                          quantized output:  Y = saturate(round_half_even(double(acc) *
//                              double(alpha*a_scale*b_scale[n]/y_scale)) + y_zp)
// The float multipliers are computed in float32 (a_scale * b_scale[n], then * alpha / y_scale).
// a_scale / a_zero_point are per tensor; b_scale / b_zero_point per tensor or per column ([N]).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/quant/qgemm.h"
#include "kernels/quant/quantize.h"
#include "quant/quant_params.h"

namespace simplecpp::graph {
namespace quant_contrib {

// Defined in quant_contrib_elementwise.cc and quant_contrib_pool.cc.
void RegisterQuantContribElementwiseOps(OpRegistry& registry);
void RegisterQuantContribPoolOps(OpRegistry& registry);

namespace {

using quant_ops::FirstScaleAsF32;
using quant_ops::FirstZeroPointAsI32;
using quant_ops::IsOneElement;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

constexpr int kAbsent = 1 << 20;  // an input index no node has (PlanQMatMul: "no zero point")

void RequireScalar(const PrepareContext& ctx, int i, const char* name) {
  if (ctx.has_input(i) && !IsOneElement(ctx.input_dims(i))) {
    ctx.Fail(std::string(name) + " must be a scalar (per-tensor), got shape " +
             DimsToString(ctx.input_dims(i)));
  }
}

// Per-tensor or per-column ([N]) parameter.
void RequireScalarOrColumns(const PrepareContext& ctx, int i, int64_t n, const char* name) {
  if (!ctx.has_input(i)) return;
  const Dims& d = ctx.input_dims(i);
  if (IsOneElement(d) && d.size() <= 1) return;
  if (d.size() == 1 && d[0] == n) return;
  ctx.Fail(std::string(name) + " has shape " + DimsToString(d) +
           " but must be a scalar or [N] = [" + std::to_string(n) + "] (per column of B)");
}

void RequireFloat32(TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  ctx.RequireDType(i, {DType::kFloat32});
}

// float multipliers a_scale * b_scale[j] (* extra), one per column or one in all.
std::vector<float> ColumnMultipliers(float a_scale, const std::vector<float>& b_scale,
                                     float alpha) {
  std::vector<float> m(b_scale.size());
  for (size_t j = 0; j < b_scale.size(); ++j) m[j] = a_scale * b_scale[j] * alpha;
  return m;
}

// y[r, j] = float(acc[r, j]) * mult[j * mstep] + bias[j] (bias may be nullptr); rows of n, in
// tasks of whole rows (about 16K elements each, boundaries independent of the thread count).
void ScaleRows(const kernels::Parallel& par, const int32_t* acc, int64_t rows, int64_t n,
               const float* mult, int64_t mstep, const float* bias, float* y) {
  const int64_t rows_per_task = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, n));
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  par.For(tasks, [&](int64_t begin, int64_t end) {
    const int64_t r0 = begin * rows_per_task;
    const int64_t r1 = std::min(rows, end * rows_per_task);
    kernels::ScaleI32RowsToF32(acc + r0 * n, n, r1 - r0, n, mult, mstep, bias, y + r0 * n, n);
  });
}

// ---------------------------------------------------------------------------------------------
// MatMulIntegerToFloat: A, B, a_scale, b_scale, [a_zero_point], [b_zero_point], [bias].

class MatMulIntegerToFloatOp final : public Op {
 public:
  explicit MatMulIntegerToFloatOp(const OpInit& init) {
    if (init.num_inputs() < 4 || init.num_inputs() > 7)
      init.Fail("MatMulIntegerToFloat takes 4 to 7 inputs, got " +
                std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(1, {DType::kUInt8, DType::kInt8});
    RequireFloat32(ctx, 2);
    RequireFloat32(ctx, 3);
    if (ctx.has_input(4)) ctx.RequireSameDType(0, 4);
    if (ctx.has_input(5)) ctx.RequireSameDType(1, 5);
    if (ctx.has_input(6)) ctx.RequireDType(6, {DType::kFloat32});
    ctx.set_output_dtype(0, DType::kFloat32);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    RequireScalar(ctx, 2, "a_scale");
    RequireScalar(ctx, 4, "a_zero_point");
    const Dims& db = ctx.input_dims(1);
    if (db.empty()) ctx.Fail("B must have rank >= 1");
    const int64_t n = db.size() == 1 ? 1 : db.back();
    RequireScalarOrColumns(ctx, 3, n, "b_scale");
    RequireScalarOrColumns(ctx, 5, n, "b_zero_point");
    const bool has_bias = ctx.has_input(6);
    if (has_bias && !(ctx.input_dims(6).size() == 1 && ctx.input_dims(6)[0] == n)) {
      ctx.Fail("bias has shape " + DimsToString(ctx.input_dims(6)) + " but must be [N] = [" +
               std::to_string(n) + "]");
    }
    auto plan =
        std::make_shared<const quant_ops::QMatMulPlan>(quant_ops::PlanQMatMul(ctx, 0, 1, 4, 5));
    ctx.set_output(0, DType::kFloat32, plan->out_dims);
    const int64_t total = CheckedNumElements(plan->out_dims);
    if (total == 0) return [](RunContext&) {};
    const bool has_za = ctx.has_input(4), has_zb = ctx.has_input(5);
    return [plan, has_za, has_zb, has_bias](RunContext& rc) {
      const std::vector<int32_t> za =
          has_za ? ZeroPointsAsI32(rc.input(4)) : std::vector<int32_t>();
      const std::vector<int32_t> zb =
          has_zb ? ZeroPointsAsI32(rc.input(5)) : std::vector<int32_t>();
      const std::vector<float> mult =
          ColumnMultipliers(FirstScaleAsF32(rc.input(2)), ScalesAsF32(rc.input(3)), 1.0f);
      plan->RunToFloat(rc.parallel(), rc.input(0).raw_data(), rc.input(1).raw_data(),
                       has_za ? za.data() : nullptr, has_zb ? zb.data() : nullptr, mult.data(),
                       mult.size() > 1 ? 1 : 0, has_bias ? rc.input(6).data<float>() : nullptr,
                       rc.output(0).data<float>());
    };
  }
};

// ---------------------------------------------------------------------------------------------
// DynamicQuantizeMatMul: A (float32), B, b_scale, [b_zero_point], [bias].

class DynamicQuantizeMatMulOp final : public Op {
 public:
  explicit DynamicQuantizeMatMulOp(const OpInit& init) {
    if (init.num_inputs() < 3 || init.num_inputs() > 5)
      init.Fail("DynamicQuantizeMatMul takes 3 to 5 inputs, got " +
                std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireFloat32(ctx, 0);
    ctx.RequireDType(1, {DType::kUInt8, DType::kInt8});
    RequireFloat32(ctx, 2);
    if (ctx.has_input(3)) ctx.RequireSameDType(1, 3);
    if (ctx.has_input(4)) ctx.RequireDType(4, {DType::kFloat32});
    ctx.set_output_dtype(0, DType::kFloat32);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& db = ctx.input_dims(1);
    if (db.empty()) ctx.Fail("B must have rank >= 1");
    const int64_t n = db.size() == 1 ? 1 : db.back();
    RequireScalarOrColumns(ctx, 2, n, "b_scale");
    RequireScalarOrColumns(ctx, 3, n, "b_zero_point");
    const bool has_bias = ctx.has_input(4);
    if (has_bias && !(ctx.input_dims(4).size() == 1 && ctx.input_dims(4)[0] == n)) {
      ctx.Fail("bias has shape " + DimsToString(ctx.input_dims(4)) + " but must be [N] = [" +
               std::to_string(n) + "]");
    }
    // A is float32: the plan treats it as uint8 (what it becomes), with a scalar zero point.
    auto plan = std::make_shared<const quant_ops::QMatMulPlan>(
        quant_ops::PlanQMatMul(ctx, 0, 1, kAbsent, 3));
    ctx.set_output(0, DType::kFloat32, plan->out_dims);
    const int64_t total = CheckedNumElements(plan->out_dims);
    if (total == 0) return [](RunContext&) {};
    const int64_t a_total = CheckedNumElements(ctx.input_dims(0));
    const bool has_zb = ctx.has_input(3);
    return [plan, has_zb, has_bias, a_total](RunContext& rc) {
      Tensor qa = rc.Scratch(DType::kUInt8, {a_total});
      const quant::DynamicQuantParams p = quant_ops::DynamicQuantizeU8(
          rc.parallel(), rc.input(0).data<float>(), a_total, qa.data<uint8_t>());
      const std::vector<int32_t> zb =
          has_zb ? ZeroPointsAsI32(rc.input(3)) : std::vector<int32_t>();
      const std::vector<float> mult = ColumnMultipliers(p.scale, ScalesAsF32(rc.input(2)), 1.0f);
      const int32_t za = p.zero_point;
      plan->RunToFloat(rc.parallel(), qa.raw_data(), rc.input(1).raw_data(), &za,
                       has_zb ? zb.data() : nullptr, mult.data(), mult.size() > 1 ? 1 : 0,
                       has_bias ? rc.input(4).data<float>() : nullptr, rc.output(0).data<float>());
    };
  }
};

// ---------------------------------------------------------------------------------------------
// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, [C], [y_scale], [y_zero_point];
// attributes alpha, transA, transB. A and B are 2-D.

class QGemmOp final : public Op {
 public:
  explicit QGemmOp(const OpInit& init) {
    if (init.num_inputs() < 6 || init.num_inputs() > 9)
      init.Fail("QGemm takes 6 to 9 inputs, got " + std::to_string(init.num_inputs()));
    alpha_ = init.GetFloat("alpha", 1.0f);
    trans_a_ = init.GetInt("transA", 0);
    trans_b_ = init.GetInt("transB", 0);
    if ((trans_a_ != 0 && trans_a_ != 1) || (trans_b_ != 0 && trans_b_ != 1))
      init.Fail("transA and transB must be 0 or 1");
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
    RequireFloat32(ctx, 1);
    ctx.RequireInput(2);
    ctx.RequireSameDType(0, 2);
    ctx.RequireDType(3, {DType::kUInt8, DType::kInt8});
    RequireFloat32(ctx, 4);
    ctx.RequireInput(5);
    ctx.RequireSameDType(3, 5);
    if (ctx.has_input(6)) ctx.RequireDType(6, {DType::kInt32});
    if (ctx.has_input(7)) ctx.RequireDType(7, {DType::kFloat32});
    if (ctx.has_input(8)) {
      ctx.RequireDType(8, {DType::kUInt8, DType::kInt8});
      if (!ctx.has_input(7)) ctx.Fail("y_zero_point is given without y_scale");
      ctx.set_output_dtype(0, ctx.input_dtype(8));
    } else if (ctx.has_input(7)) {
      ctx.Unsupported("y_scale without y_zero_point leaves the output's quantized type undefined");
    } else {
      ctx.set_output_dtype(0, DType::kFloat32);
    }
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& da = ctx.input_dims(0);
    const Dims& db = ctx.input_dims(3);
    if (da.size() != 2 || db.size() != 2)
      ctx.Fail("A and B must be 2-D, got A " + DimsToString(da) + " and B " + DimsToString(db));
    const int64_t m = trans_a_ ? da[1] : da[0], k = trans_a_ ? da[0] : da[1];
    const int64_t kb = trans_b_ ? db[1] : db[0], n = trans_b_ ? db[0] : db[1];
    if (k != kb) {
      ctx.Fail("inner dimensions differ: op(A) has K = " + std::to_string(k) +
               ", op(B) has K = " + std::to_string(kb));
    }
    RequireScalar(ctx, 1, "a_scale");
    RequireScalar(ctx, 2, "a_zero_point");
    RequireScalarOrColumns(ctx, 4, n, "b_scale");
    RequireScalarOrColumns(ctx, 5, n, "b_zero_point");
    RequireScalar(ctx, 7, "y_scale");
    RequireScalar(ctx, 8, "y_zero_point");
    // C: unidirectionally broadcastable to [M, N]: [], [N], [1|M, 1|N].
    int64_t c_row_step = 0, c_col_step = 0;
    const bool has_c = ctx.has_input(6);
    if (has_c) {
      const Dims& dc = ctx.input_dims(6);
      const bool ok = dc.size() <= 2 && (dc.empty() || dc.back() == 1 || dc.back() == n) &&
                      (dc.size() < 2 || dc[0] == 1 || dc[0] == m);
      if (!ok) {
        ctx.Fail("C has shape " + DimsToString(dc) +
                 " which does not broadcast to [M, N] = " + DimsToString({m, n}));
      }
      if (!dc.empty() && dc.back() == n && n != 1) c_col_step = 1;
      if (dc.size() == 2 && dc[0] == m && m != 1) c_row_step = dc.back();
    }
    const DType out = ctx.has_input(8) ? ctx.input_dtype(8) : DType::kFloat32;
    ctx.set_output(0, out, {m, n});
    if (m == 0 || n == 0) return [](RunContext&) {};
    const bool a_signed = ctx.input_dtype(0) == DType::kInt8;
    const bool b_signed = ctx.input_dtype(3) == DType::kInt8;
    std::shared_ptr<const kernels::PackedQB> packed;
    if (const Tensor* bc = ctx.input_value(3)) {
      packed = kernels::PackedQB::Pack(b_signed, trans_b_ != 0, k, n, bc->raw_data(), db[1]);
    }
    const bool trans_a = trans_a_ != 0, trans_b = trans_b_ != 0;
    const float alpha = alpha_;
    const int64_t ldb = db[1];
    int32_t lo = 0, hi = 0;
    quant::QuantizedRange(out, &lo, &hi);
    return [=](RunContext& rc) {
      std::shared_ptr<const kernels::PackedQB> pb = packed;
      if (!pb) pb = kernels::PackedQB::Pack(b_signed, trans_b, k, n, rc.input(3).raw_data(), ldb);
      // A as [M, K] row-major (transposed into scratch when transA).
      const auto* a = static_cast<const uint8_t*>(rc.input(0).raw_data());
      Tensor at;
      if (trans_a && m * k > 0) {
        at = rc.Scratch(DType::kUInt8, {m * k});
        uint8_t* t = at.data<uint8_t>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j) t[i * k + j] = a[j * m + i];
        a = t;
      }
      const int32_t za = FirstZeroPointAsI32(rc.input(2));
      const std::vector<int32_t> zb = ZeroPointsAsI32(rc.input(5));
      Tensor acc_t = rc.Scratch(DType::kInt32, {m * n});
      int32_t* acc = acc_t.data<int32_t>();
      quant_ops::QGemmBytesToI32(m, a, a_signed, k, &za, 0, *pb, zb.data(), zb.size() > 1 ? 1 : 0,
                                 acc, n, rc.parallel());
      if (has_c) {
        const int32_t* c = rc.input(6).data<int32_t>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const uint32_t s = static_cast<uint32_t>(acc[i * n + j]) +
                               static_cast<uint32_t>(c[i * c_row_step + j * c_col_step]);
            acc[i * n + j] = static_cast<int32_t>(s);
          }
      }
      std::vector<float> mult =
          ColumnMultipliers(FirstScaleAsF32(rc.input(1)), ScalesAsF32(rc.input(4)), alpha);
      const int64_t mstep = mult.size() > 1 ? 1 : 0;
      if (out == DType::kFloat32) {
        ScaleRows(rc.parallel(), acc, m, n, mult.data(), mstep, nullptr,
                  rc.output(0).data<float>());
        return;
      }
      const float y_scale = FirstScaleAsF32(rc.input(7));
      for (float& v : mult) v = v / y_scale;
      const int32_t yzp = FirstZeroPointAsI32(rc.input(8));
      if (out == DType::kUInt8) {
        uint8_t* y = rc.output(0).data<uint8_t>();
        for (int64_t i = 0; i < m; ++i)
          kernels::RequantizeI32ToU8(acc + i * n, n, mult.data(), mstep, yzp, lo, hi, y + i * n);
      } else {
        int8_t* y = rc.output(0).data<int8_t>();
        for (int64_t i = 0; i < m; ++i)
          kernels::RequantizeI32ToI8(acc + i * n, n, mult.data(), mstep, yzp, lo, hi, y + i * n);
      }
    };
  }

 private:
  float alpha_ = 1.0f;
  int64_t trans_a_ = 0, trans_b_ = 0;
};

}  // namespace
}  // namespace quant_contrib

void RegisterQuantContribOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "MatMulIntegerToFloat", 1,
                    MakeFactory<quant_contrib::MatMulIntegerToFloatOp>());
  registry.Register("com.microsoft", "DynamicQuantizeMatMul", 1,
                    MakeFactory<quant_contrib::DynamicQuantizeMatMulOp>());
  registry.Register("com.microsoft", "QGemm", 1, MakeFactory<quant_contrib::QGemmOp>());
  quant_contrib::RegisterQuantContribElementwiseOps(registry);
  quant_contrib::RegisterQuantContribPoolOps(registry);
}

}  // namespace simplecpp::graph
