// simplecpp.fused QdqBinary (version 1), written by the quantized-pattern fusion pass (pattern 7
// of graph/passes/quant_fusion.h) for QuantizeLinear(op(DequantizeLinear(a), DequantizeLinear(b)))
// with per-tensor 8-bit parameters:
//
//   QdqBinary(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)
//     attribute op: "Add", "Sub", "Mul" or "Div"; a, b uint8 / int8 (numpy broadcasting),
//     scales float32 and zero points of the data's dtype, one element each; y has y_zero_point's
//     dtype.
//
// It runs the unfused graph's own float32 steps on blocks of elements that stay in L1: the
// DequantizeLinear kernel on each operand, the float32 binary op, the QuantizeLinear kernel.
// Every element goes through the same operations (each IEEE-rounded, no contraction), so the
// bytes are identical to the unfused graph's; what goes away is the float32 tensors between the
// nodes (3 bytes moved per element instead of about 27).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/broadcast.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/quant/quantize.h"

namespace simplecpp::graph {
namespace quant_fused {
namespace {

using quant_ops::IsOneElement;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

// Elements per block: three float32 blocks of 1 KiB each stay in L1.
constexpr int64_t kBlock = 256;

struct QdqParams {
  float a_scale = 1.0f, b_scale = 1.0f, y_scale = 1.0f;
  int32_t a_zp = 0, b_zp = 0, y_zp = 0;
};

// Dequantizes n elements of q (8-bit, step 1; or one element repeated, step 0) into out, through
// the DequantizeLinear kernel. A repeated element is dequantized once and copied.
void DequantizeBlock(const void* q, bool is_signed, int64_t offset, int64_t step, int64_t n,
                     const float* scale, const int32_t* zp, float* out) {
  const int64_t count = step == 0 ? 1 : n;
  if (is_signed) {
    kernels::DequantizeI8ToF32(static_cast<const int8_t*>(q) + offset, count, scale, 0, zp, 0,
                               out);
  } else {
    kernels::DequantizeU8ToF32(static_cast<const uint8_t*>(q) + offset, count, scale, 0, zp, 0,
                               out);
  }
  if (step == 0) std::fill(out + 1, out + n, out[0]);
}

class QdqBinaryOp final : public Op {
 public:
  explicit QdqBinaryOp(const OpInit& init) {
    const std::string op = init.GetString("op", "");
    if (op == "Add") {
      op_ = kernels::BinaryOp::kAdd;
    } else if (op == "Sub") {
      op_ = kernels::BinaryOp::kSub;
    } else if (op == "Mul") {
      op_ = kernels::BinaryOp::kMul;
    } else if (op == "Div") {
      op_ = kernels::BinaryOp::kDiv;
    } else {
      init.Fail("op must be Add, Sub, Mul or Div, got '" + op + "'");
    }
    if (init.num_inputs() != 8) {
      init.Fail("QdqBinary takes 8 inputs, got " + std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    for (int i = 0; i < 8; ++i) ctx.RequireInput(i);
    ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(3, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(7, {DType::kUInt8, DType::kInt8});
    for (int i : {1, 4, 6}) ctx.RequireDType(i, {DType::kFloat32});
    ctx.RequireSameDType(0, 2);
    ctx.RequireSameDType(3, 5);
    ctx.set_output_dtype(0, ctx.input_dtype(7));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    for (int i : {1, 2, 4, 5, 6, 7}) {
      if (!IsOneElement(ctx.input_dims(i))) {
        ctx.Fail("input " + std::to_string(i) + " must be one element (per tensor), got shape " +
                 DimsToString(ctx.input_dims(i)));
      }
    }
    Dims out_dims;
    std::string why;
    if (!BroadcastShape({ctx.input_dims(0), ctx.input_dims(3)}, &out_dims, &why)) ctx.Fail(why);
    const DType yt = ctx.input_dtype(7);
    ctx.set_output(0, yt, out_dims);
    const BroadcastPlan plan({ctx.input_dims(0), ctx.input_dims(3)}, out_dims);
    const bool a_signed = ctx.input_dtype(0) == DType::kInt8;
    const bool b_signed = ctx.input_dtype(3) == DType::kInt8;
    const bool y_signed = yt == DType::kInt8;
    const kernels::BinaryOp op = op_;
    return [plan, a_signed, b_signed, y_signed, op](RunContext& rc) {
      QdqParams p;
      p.a_scale = ScalesAsF32(rc.input(1))[0];
      p.a_zp = ZeroPointsAsI32(rc.input(2))[0];
      p.b_scale = ScalesAsF32(rc.input(4))[0];
      p.b_zp = ZeroPointsAsI32(rc.input(5))[0];
      p.y_scale = ScalesAsF32(rc.input(6))[0];
      p.y_zp = ZeroPointsAsI32(rc.input(7))[0];
      const void* a = rc.input(0).raw_data();
      const void* b = rc.input(3).raw_data();
      void* y = rc.output(0).raw_data();
      const int64_t a_step = plan.step(0), b_step = plan.step(1);
      plan.Run(rc.parallel(), [&](int64_t o, const int64_t* in, int64_t n) {
        float fa[kBlock], fb[kBlock], fy[kBlock];
        for (int64_t i = 0; i < n; i += kBlock) {
          const int64_t m = std::min(kBlock, n - i);
          DequantizeBlock(a, a_signed, in[0] + i * a_step, a_step, m, &p.a_scale, &p.a_zp, fa);
          DequantizeBlock(b, b_signed, in[1] + i * b_step, b_step, m, &p.b_scale, &p.b_zp, fb);
          kernels::BinaryF32(op, fa, 1, fb, 1, fy, m);
          if (y_signed) {
            kernels::QuantizeF32ToI8(fy, m, &p.y_scale, 0, &p.y_zp, 0, -128, 127,
                                     static_cast<int8_t*>(y) + o + i);
          } else {
            kernels::QuantizeF32ToU8(fy, m, &p.y_scale, 0, &p.y_zp, 0, 0, 255,
                                     static_cast<uint8_t*>(y) + o + i);
          }
        }
      });
    };
  }

 private:
  kernels::BinaryOp op_ = kernels::BinaryOp::kAdd;
};

}  // namespace

void RegisterQdqBinaryOp(OpRegistry& registry) {
  registry.Register("simplecpp.fused", "QdqBinary", 1, MakeFactory<QdqBinaryOp>());
}

}  // namespace quant_fused
}  // namespace simplecpp::graph
