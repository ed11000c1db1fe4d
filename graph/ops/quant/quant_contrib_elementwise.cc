// com.microsoft (opset 1) quantized elementwise contrib ops: QLinearAdd, QLinearMul (numpy
// broadcasting), QLinearSigmoid, QLinearLeakyRelu (attribute alpha) and QLinearConcat.
//
// Each computes quantize(f(dequantize(inputs))) for uint8 or int8 tensors with per-tensor scales
// (float32) and zero points (the tensor's dtype; absent = 0). The math is done in double:
//   dequantize: x_real = double(x - x_zp) * double(x_scale)
//   quantize:   y = saturate(round_half_even(y_real / double(y_scale)) + y_zp)   (NaN -> y_zp)
// The unary ops and QLinearConcat map every 8-bit input value through a 256-entry table built
// for the run's scales; QLinearAdd / QLinearMul evaluate the formula per element over the
// broadcast runs of graph/ops/broadcast.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/broadcast.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace quant_contrib {

void RegisterQuantContribElementwiseOps(OpRegistry& registry);

namespace {

using quant_ops::FirstScaleAsF32;
using quant_ops::FirstZeroPointAsI32;
using quant_ops::IsOneElement;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

// Per-tensor quantization parameters read in the RunFn.
struct QParam {
  double scale = 1.0;
  int32_t zp = 0;
};
QParam ReadParam(const RunContext& rc, int scale_in, int zp_in) {
  QParam p;
  p.scale = FirstScaleAsF32(rc.input(scale_in));
  p.zp = rc.has_input(zp_in) ? FirstZeroPointAsI32(rc.input(zp_in)) : 0;
  return p;
}

template <typename T>
inline T QuantizeReal(double v, const QParam& y) {
  constexpr double lo = std::is_signed<T>::value ? -128.0 : 0.0;
  constexpr double hi = std::is_signed<T>::value ? 127.0 : 255.0;
  double q = v / y.scale;
  if (std::isnan(q)) q = 0.0;
  q = std::nearbyint(q) + y.zp;  // default rounding mode: half to even
  q = q < lo ? lo : (q > hi ? hi : q);
  return static_cast<T>(q);
}

void RequireQ8(TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  ctx.RequireDType(i, {DType::kUInt8, DType::kInt8});
}
void RequireScale(TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  ctx.RequireDType(i, {DType::kFloat32});
}
// Zero point i (optional) must have data input x's dtype.
void RequireZeroPointType(TypeContext& ctx, int zp, int x) {
  if (ctx.has_input(zp)) ctx.RequireSameDType(x, zp);
}
void RequireScalarParam(const PrepareContext& ctx, int i, const std::string& name) {
  if (ctx.has_input(i) && !IsOneElement(ctx.input_dims(i))) {
    ctx.Fail(name + " must be a scalar (per-tensor), got shape " + DimsToString(ctx.input_dims(i)));
  }
}

// ---------------------------------------------------------------------------------------------
// QLinearAdd / QLinearMul: A, A_scale, [A_zero_point], B, B_scale, [B_zero_point], C_scale,
// [C_zero_point].

enum class BinaryKind { kAdd, kMul };

template <typename T, BinaryKind kKind>
void BinaryRun(const BroadcastPlan& plan, RunContext& rc) {
  const QParam pa = ReadParam(rc, 1, 2), pb = ReadParam(rc, 4, 5), pc = ReadParam(rc, 6, 7);
  const T* a = rc.input(0).data<T>();
  const T* b = rc.input(3).data<T>();
  T* y = rc.output(0).data<T>();
  const int64_t sa = plan.step(0), sb = plan.step(1);
  plan.Run(rc.parallel(), [&](int64_t o, const int64_t* in, int64_t n) {
    const T* ar = a + in[0];
    const T* br = b + in[1];
    T* yr = y + o;
    for (int64_t i = 0; i < n; ++i) {
      const double va = static_cast<double>(static_cast<int32_t>(ar[i * sa]) - pa.zp) * pa.scale;
      const double vb = static_cast<double>(static_cast<int32_t>(br[i * sb]) - pb.zp) * pb.scale;
      yr[i] = QuantizeReal<T>(kKind == BinaryKind::kAdd ? va + vb : va * vb, pc);
    }
  });
}

template <BinaryKind kKind>
class QLinearBinaryOp final : public Op {
 public:
  explicit QLinearBinaryOp(const OpInit& init) {
    if (init.num_inputs() < 7 || init.num_inputs() > 8)
      init.Fail(std::string(Name()) + " takes 7 or 8 inputs, got " +
                std::to_string(init.num_inputs()));
  }
  static const char* Name() { return kKind == BinaryKind::kAdd ? "QLinearAdd" : "QLinearMul"; }
  void InferTypes(TypeContext& ctx) const override {
    RequireQ8(ctx, 0);
    RequireScale(ctx, 1);
    RequireZeroPointType(ctx, 2, 0);
    RequireQ8(ctx, 3);
    ctx.RequireSameDType(0, 3);
    RequireScale(ctx, 4);
    RequireZeroPointType(ctx, 5, 0);
    RequireScale(ctx, 6);
    RequireZeroPointType(ctx, 7, 0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const char* names[] = {"A",       "A_scale",      "A_zero_point", "B",
                           "B_scale", "B_zero_point", "C_scale",      "C_zero_point"};
    for (int i : {1, 2, 4, 5, 6, 7}) RequireScalarParam(ctx, i, names[i]);
    Dims out;
    std::string why;
    if (!BroadcastShape({ctx.input_dims(0), ctx.input_dims(3)}, &out, &why)) ctx.Fail(why);
    const DType t = ctx.input_dtype(0);
    ctx.set_output(0, t, out);
    BroadcastPlan plan({ctx.input_dims(0), ctx.input_dims(3)}, out);
    auto fn = t == DType::kInt8 ? &BinaryRun<int8_t, kKind> : &BinaryRun<uint8_t, kKind>;
    return [plan, fn](RunContext& rc) { fn(plan, rc); };
  }
};

// ---------------------------------------------------------------------------------------------
// QLinearSigmoid / QLinearLeakyRelu: X, X_scale, [X_zero_point], Y_scale, [Y_zero_point].

enum class UnaryKind { kSigmoid, kLeakyRelu };

template <typename T>
void UnaryRun(UnaryKind kind, double alpha, RunContext& rc, int64_t total) {
  const QParam px = ReadParam(rc, 1, 2), py = ReadParam(rc, 3, 4);
  T table[256];
  for (int v = 0; v < 256; ++v) {
    const T q = static_cast<T>(static_cast<uint8_t>(v));  // the byte's value in T
    const double x = static_cast<double>(static_cast<int32_t>(q) - px.zp) * px.scale;
    const double f =
        kind == UnaryKind::kSigmoid ? 1.0 / (1.0 + std::exp(-x)) : (x >= 0 ? x : alpha * x);
    table[v] = QuantizeReal<T>(f, py);
  }
  const auto* x = static_cast<const uint8_t*>(rc.input(0).raw_data());
  T* y = rc.output(0).data<T>();
  // Fixed-size chunks (a problem-size constant), one writer per output element.
  constexpr int64_t kChunk = 1 << 16;
  const int64_t tasks = (total + kChunk - 1) / kChunk;
  auto body = [&](int64_t t0, int64_t t1) {
    const int64_t end = std::min(total, t1 * kChunk);
    for (int64_t i = t0 * kChunk; i < end; ++i) y[i] = table[x[i]];
  };
  if (tasks == 1) {
    body(0, 1);
  } else if (tasks > 1) {
    rc.parallel().For(tasks, body);
  }
}

class QLinearUnaryOp final : public Op {
 public:
  QLinearUnaryOp(const OpInit& init, UnaryKind kind) : kind_(kind) {
    if (init.num_inputs() < 4 || init.num_inputs() > 5)
      init.Fail(init.node().op_type + " takes 4 or 5 inputs, got " +
                std::to_string(init.num_inputs()));
    if (kind == UnaryKind::kLeakyRelu) alpha_ = init.GetFloat("alpha", 0.01f);
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireQ8(ctx, 0);
    RequireScale(ctx, 1);
    RequireZeroPointType(ctx, 2, 0);
    RequireScale(ctx, 3);
    RequireZeroPointType(ctx, 4, 0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const char* names[] = {"X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point"};
    for (int i : {1, 2, 3, 4}) RequireScalarParam(ctx, i, names[i]);
    const DType t = ctx.input_dtype(0);
    ctx.set_output(0, t, ctx.input_dims(0));
    const int64_t total = CheckedNumElements(ctx.input_dims(0));
    auto fn = t == DType::kInt8 ? &UnaryRun<int8_t> : &UnaryRun<uint8_t>;
    const UnaryKind kind = kind_;
    const double alpha = alpha_;
    return [fn, kind, alpha, total](RunContext& rc) { fn(kind, alpha, rc, total); };
  }

 private:
  UnaryKind kind_;
  float alpha_ = 0.01f;
};

// ---------------------------------------------------------------------------------------------
// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; axis.

template <typename T>
void ConcatRun(RunContext& rc, int num_x, int64_t outer, const std::vector<int64_t>& widths,
               int64_t out_width) {
  const QParam py = ReadParam(rc, 0, 1);
  T* y = rc.output(0).data<T>();
  int64_t col = 0;
  for (int j = 0; j < num_x; ++j) {
    const int base = 2 + 3 * j;
    const QParam px = ReadParam(rc, base + 1, base + 2);
    T table[256];
    for (int v = 0; v < 256; ++v) {
      const T q = static_cast<T>(static_cast<uint8_t>(v));
      table[v] =
          QuantizeReal<T>(static_cast<double>(static_cast<int32_t>(q) - px.zp) * px.scale, py);
    }
    const auto* x = static_cast<const uint8_t*>(rc.input(base).raw_data());
    const int64_t w = widths[j];
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* xr = x + o * w;
      T* yr = y + o * out_width + col;
      for (int64_t i = 0; i < w; ++i) yr[i] = table[xr[i]];
    }
    col += w;
  }
}

class QLinearConcatOp final : public Op {
 public:
  explicit QLinearConcatOp(const OpInit& init) {
    const int n = init.num_inputs();
    if (n < 5 || (n - 2) % 3 != 0) {
      init.Fail(
          "QLinearConcat takes Y_scale, Y_zero_point and then (X, X_scale, X_zero_point) "
          "triplets, got " +
          std::to_string(n) + " inputs");
    }
    num_x_ = (n - 2) / 3;
    axis_ = init.RequireInt("axis");
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireScale(ctx, 0);
    RequireQ8(ctx, 1);
    for (int j = 0; j < num_x_; ++j) {
      const int base = 2 + 3 * j;
      RequireQ8(ctx, base);
      ctx.RequireSameDType(1, base);
      RequireScale(ctx, base + 1);
      RequireZeroPointType(ctx, base + 2, base);
    }
    ctx.set_output_dtype(0, ctx.input_dtype(1));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    RequireScalarParam(ctx, 0, "Y_scale");
    RequireScalarParam(ctx, 1, "Y_zero_point");
    const Dims& d0 = ctx.input_dims(2);
    const int64_t rank = static_cast<int64_t>(d0.size());
    if (rank == 0) ctx.Fail("inputs must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank, [&](const std::string& m) { ctx.Fail(m); });
    Dims out = d0;
    out[axis] = 0;
    std::vector<int64_t> widths;
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= d0[i];
    for (int j = 0; j < num_x_; ++j) {
      const int base = 2 + 3 * j;
      const std::string xi = "input " + std::to_string(j);
      RequireScalarParam(ctx, base + 1, xi + "'s scale");
      RequireScalarParam(ctx, base + 2, xi + "'s zero point");
      const Dims& d = ctx.input_dims(base);
      bool ok = static_cast<int64_t>(d.size()) == rank;
      for (int64_t i = 0; ok && i < rank; ++i) ok = i == axis || d[i] == d0[i];
      if (!ok) {
        ctx.Fail(xi + " has shape " + DimsToString(d) + " which does not match " +
                 DimsToString(d0) + " outside axis " + std::to_string(axis));
      }
      out[axis] += d[axis];
      int64_t w = 1;
      for (int64_t i = axis; i < rank; ++i) w *= d[i];
      widths.push_back(w);
    }
    const DType t = ctx.input_dtype(1);
    ctx.set_output(0, t, out);
    int64_t out_width = 1;
    for (int64_t i = axis; i < rank; ++i) out_width *= out[i];
    auto fn = t == DType::kInt8 ? &ConcatRun<int8_t> : &ConcatRun<uint8_t>;
    const int num_x = num_x_;
    return [fn, num_x, outer, widths, out_width](RunContext& rc) {
      fn(rc, num_x, outer, widths, out_width);
    };
  }

 private:
  int num_x_ = 0;
  int64_t axis_ = 0;
};

}  // namespace

void RegisterQuantContribElementwiseOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "QLinearAdd", 1,
                    MakeFactory<QLinearBinaryOp<BinaryKind::kAdd>>());
  registry.Register("com.microsoft", "QLinearMul", 1,
                    MakeFactory<QLinearBinaryOp<BinaryKind::kMul>>());
  registry.Register("com.microsoft", "QLinearSigmoid", 1,
                    [](const OpInit& init) -> std::unique_ptr<Op> {
                      return std::make_unique<QLinearUnaryOp>(init, UnaryKind::kSigmoid);
                    });
  registry.Register("com.microsoft", "QLinearLeakyRelu", 1,
                    [](const OpInit& init) -> std::unique_ptr<Op> {
                      return std::make_unique<QLinearUnaryOp>(init, UnaryKind::kLeakyRelu);
                    });
  registry.Register("com.microsoft", "QLinearConcat", 1, MakeFactory<QLinearConcatOp>());
}

}  // namespace quant_contrib
}  // namespace simplecpp::graph
