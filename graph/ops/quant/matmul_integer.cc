// MatMulInteger (ai.onnx opset 10) and the batched integer matmul plan it shares with
// QLinearMatMul (qlinear.cc).
//
// Y[..., m, n] = sum_k (A[..., m, k] - a_zp) * (B[..., k, n] - b_zp) as int32 (wrapping), with A
// and B each uint8 or int8 (all four combinations), numpy matmul shapes and batch broadcasting.
// Zero points: absent (0), one value, per row of A ([M], or A's shape with K replaced by 1:
// [M, 1], [D, M, 1], ...) and per column of B ([N], or B's shape with K replaced by 1: [1, N],
// [D, 1, N], ...); their dtype must be their operand's. QMatMulParamLayout decides these layouts
// for QLinearMatMul's scales and y's parameters too, so every parameter of either op accepts the
// same shapes. The product runs on kernels/quant/qgemm.h; a constant B is packed once per B matrix
// at Prepare.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/batched_matmul.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/quant/qgemm.h"
#include "kernels/quant/quantize.h"

namespace simplecpp::graph {
namespace quant_ops {

QParamLayout QMatMulParamLayout(const PrepareContext& ctx, int in, const char* name,
                                QParamAxis axis, const Dims& operand, int64_t count) {
  QParamLayout layout;
  if (!ctx.has_input(in)) return layout;
  const Dims& d = ctx.input_dims(in);
  // A one-value parameter of higher rank than the operand would raise the output's rank under
  // numpy broadcasting, so it is not a scalar here.
  if (IsOneElement(d) && d.size() <= std::max<size_t>(operand.size(), 1)) return layout;
  if (d.size() == 1 && d[0] == count) {
    layout.step = 1;
    return layout;
  }
  const bool per_row = axis != QParamAxis::kColumnsOfB;
  if (operand.size() >= 2 && d.size() == operand.size()) {
    Dims want = operand;
    want[want.size() - (per_row ? 1 : 2)] = 1;
    if (d == want) {
      layout.step = 1;
      layout.batch = count;
      return layout;
    }
  }
  const char* whole = axis == QParamAxis::kRowsOfA      ? "A's shape with K replaced by 1"
                      : axis == QParamAxis::kColumnsOfB ? "B's shape with K replaced by 1"
                                                        : "the output's shape with N replaced by 1";
  ctx.Fail(std::string(name) + " has shape " + DimsToString(d) + " but must be a scalar, [" +
           (per_row ? "M" : "N") + "] = [" + std::to_string(count) + "] or " + whole + " (" +
           (axis == QParamAxis::kRowsOfY ? "output " : "operand ") + DimsToString(operand) + ")");
}

QMatMulPlan PlanQMatMul(PrepareContext& ctx, int a_in, int b_in, int a_zp_in, int b_zp_in) {
  QMatMulPlan p;
  const Dims& da = ctx.input_dims(a_in);
  const Dims& db = ctx.input_dims(b_in);
  const BatchedMatMulShape shape = ResolveBatchedMatMul(ctx, da, db);
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.out_dims = shape.out_dims;
  p.num_batches = shape.num_batches;
  p.b_batches = shape.b_batches;
  p.offsets = shape.offsets;
  p.a_signed = ctx.input_dtype(a_in) == DType::kInt8;
  p.b_signed = ctx.input_dtype(b_in) == DType::kInt8;
  const QParamLayout za =
      QMatMulParamLayout(ctx, a_zp_in, "a_zero_point", QParamAxis::kRowsOfA, da, p.m);
  const QParamLayout zb =
      QMatMulParamLayout(ctx, b_zp_in, "b_zero_point", QParamAxis::kColumnsOfB, db, p.n);
  p.za_step = za.step;
  p.za_batch = za.batch;
  p.zb_step = zb.step;
  p.zb_batch = zb.batch;
  if (const Tensor* bc = ctx.input_value(b_in); bc != nullptr && p.num_batches > 0) {
    auto packed = std::make_shared<std::vector<std::shared_ptr<const kernels::PackedQB>>>();
    const auto* bytes = static_cast<const uint8_t*>(bc->raw_data());
    for (int64_t i = 0; i < p.b_batches; ++i) {
      packed->push_back(
          kernels::PackedQB::Pack(p.b_signed, false, p.k, p.n, bytes + i * p.k * p.n, p.n));
    }
    p.packed = packed;
  }
  return p;
}

namespace {

// Calls gemm(t, a_t, za_t, packed B_t, zb_t) for each of the plan's num_batches products, with
// B packed here when it was not constant at Prepare.
template <typename Gemm>
void ForEachProduct(const QMatMulPlan& p, const void* a, const void* b, const int32_t* za,
                    const int32_t* zb, Gemm&& gemm) {
  if (p.num_batches == 0 || p.m == 0 || p.n == 0) return;
  std::vector<std::shared_ptr<const kernels::PackedQB>> local;
  if (!p.packed) {
    const auto* bytes = static_cast<const uint8_t*>(b);
    for (int64_t i = 0; i < p.b_batches; ++i) {
      local.push_back(
          kernels::PackedQB::Pack(p.b_signed, false, p.k, p.n, bytes + i * p.k * p.n, p.n));
    }
  }
  const auto& pk = p.packed ? *p.packed : local;
  const auto* abytes = static_cast<const uint8_t*>(a);
  for (int64_t t = 0; t < p.num_batches; ++t) {
    const auto [ia, ib] = (*p.offsets)[t];
    gemm(t, abytes + ia * p.m * p.k, za ? za + ia * p.za_batch : nullptr, *pk[ib],
         zb ? zb + ib * p.zb_batch : nullptr);
  }
}

// Scales each finished block of one product's sums into y [M, N] (QMatMulPlan::RunToFloat).
class ScaleToFloatSink final : public kernels::QGemmSink {
 public:
  ScaleToFloatSink(const float* mult, int64_t mult_step, const float* bias, float* y, int64_t n)
      : mult_(mult), mult_step_(mult_step), bias_(bias), y_(y), n_(n) {}
  void Block(int64_t m0, int64_t rows, int64_t n0, int64_t cols, const int32_t* c,
             int64_t ldc) const override {
    kernels::ScaleI32RowsToF32(c, ldc, rows, cols, mult_ + n0 * mult_step_, mult_step_,
                               bias_ ? bias_ + n0 : nullptr, y_ + m0 * n_ + n0, n_);
  }

 private:
  const float* mult_;
  int64_t mult_step_;
  const float* bias_;
  float* y_;
  int64_t n_;
};

}  // namespace

void QMatMulPlan::Run(const kernels::Parallel& par, const void* a, const void* b, const int32_t* za,
                      const int32_t* zb, int32_t* c) const {
  ForEachProduct(*this, a, b, za, zb,
                 [&](int64_t t, const uint8_t* at, const int32_t* zat, const kernels::PackedQB& bt,
                     const int32_t* zbt) {
                   QGemmBytesToI32(m, at, a_signed, k, zat, za_step, bt, zbt, zb_step,
                                   c + t * m * n, n, par);
                 });
}

void QMatMulPlan::RunToFloat(const kernels::Parallel& par, const void* a, const void* b,
                             const int32_t* za, const int32_t* zb, const float* mult,
                             int64_t mult_step, const float* bias, float* y) const {
  ForEachProduct(*this, a, b, za, zb,
                 [&](int64_t t, const uint8_t* at, const int32_t* zat, const kernels::PackedQB& bt,
                     const int32_t* zbt) {
                   const ScaleToFloatSink sink(mult, mult_step, bias, y + t * m * n, n);
                   QGemmBytesToSink(m, at, a_signed, k, zat, za_step, bt, zbt, zb_step, sink, par);
                 });
}

namespace {

class MatMulIntegerOp final : public Op {
 public:
  explicit MatMulIntegerOp(const OpInit& init) {
    if (init.num_inputs() < 2 || init.num_inputs() > 4)
      init.Fail("MatMulInteger takes 2 to 4 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(1, {DType::kUInt8, DType::kInt8});
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(3)) ctx.RequireSameDType(1, 3);
    ctx.set_output_dtype(0, DType::kInt32);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    auto plan = std::make_shared<const QMatMulPlan>(PlanQMatMul(ctx, 0, 1, 2, 3));
    ctx.set_output(0, DType::kInt32, plan->out_dims);
    const bool has_za = ctx.has_input(2), has_zb = ctx.has_input(3);
    return [plan, has_za, has_zb](RunContext& rc) {
      const std::vector<int32_t> za = has_za ? ZeroPointsAsI32(rc.input(2)) : std::vector<int32_t>();
      const std::vector<int32_t> zb = has_zb ? ZeroPointsAsI32(rc.input(3)) : std::vector<int32_t>();
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(1).raw_data(),
                has_za ? za.data() : nullptr, has_zb ? zb.data() : nullptr,
                rc.output(0).data<int32_t>());
    };
  }
};

}  // namespace

void RegisterMatMulIntegerOps(OpRegistry& registry) {
  registry.Register("", "MatMulInteger", 10, MakeFactory<MatMulIntegerOp>());
}

}  // namespace quant_ops
}  // namespace simplecpp::graph
