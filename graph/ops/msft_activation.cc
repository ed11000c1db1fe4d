// com.microsoft activations (version 1) that transformer exports fuse:
//   BiasGelu(A, B)        Y = Gelu(A + B), Gelu(x) = 0.5 x (1 + erf(x / sqrt 2))
//   FastGelu(X, bias?)    Y = Gelu_tanh(X + bias), 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   QuickGelu(X)          Y = X * sigmoid(alpha X), attribute alpha (default 1.702)
// The bias is 1-D with the size of X's last dimension and is added to every row.
// T is float32, float16 or bfloat16. The math is the ONNX elementwise kernels (kernels/
// elementwise.h: BinaryF32 kAdd, then UnaryF32 kGelu / kGeluTanh / kSwish) on float32; 16-bit
// storage is widened a block at a time, and x + bias is not rounded before the activation.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

enum class GeluKind { kBiasGelu, kFastGelu, kQuickGelu };


using FloatVec = std::shared_ptr<const std::vector<float>>;

FloatVec ToF32(const Tensor& t) {
  auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == DType::kFloat32) {
    if (!v->empty()) std::memcpy(v->data(), t.raw_data(), v->size() * sizeof(float));
  } else {
    kernels::Widen16(Float16KindOf(t.dtype()), t.data<uint16_t>(), v->data(), v->size());
  }
  return v;
}

// Elements per task (fixed, so results do not depend on the thread count) and per block of
// float32 scratch for 16-bit storage.
constexpr int64_t kTaskElements = 16384;
constexpr int64_t kBlock = 512;

// y[i] = act(x[i] + bias[(offset + i) % n]) for i in [begin, end) of the flat tensor; bias may be
// null. x and y are float32, or 16-bit (kind) when is16.
void ApplyRange(kernels::UnaryOp op, const kernels::UnaryParams& params, bool is16,
                kernels::Float16Kind kind, const void* x, void* y, const float* bias, int64_t n,
                int64_t begin, int64_t end) {
  float buf[kBlock];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t col = bias ? pos % n : 0;
    int64_t len = std::min(end - pos, kBlock);
    if (bias) len = std::min(len, n - col);
    if (!is16) {
      const float* xs = static_cast<const float*>(x) + pos;
      float* ys = static_cast<float*>(y) + pos;
      if (bias) {
        kernels::BinaryF32(kernels::BinaryOp::kAdd, xs, 1, bias + col, 1, ys, len);
        kernels::UnaryF32(op, params, ys, ys, len);
      } else {
        kernels::UnaryF32(op, params, xs, ys, len);
      }
    } else {
      kernels::Widen16(kind, static_cast<const uint16_t*>(x) + pos, buf, static_cast<size_t>(len));
      if (bias) kernels::BinaryF32(kernels::BinaryOp::kAdd, buf, 1, bias + col, 1, buf, len);
      kernels::UnaryF32(op, params, buf, buf, len);
      kernels::Narrow16(kind, buf, static_cast<uint16_t*>(y) + pos, static_cast<size_t>(len));
    }
    pos += len;
  }
}

class MsftGeluOp final : public Op {
 public:
  MsftGeluOp(const OpInit& init, GeluKind kind) : kind_(kind) {
    const int min_inputs = kind == GeluKind::kBiasGelu ? 2 : 1;
    const int max_inputs = kind == GeluKind::kQuickGelu ? 1 : 2;
    if (init.num_inputs() < min_inputs || init.num_inputs() > max_inputs) {
      init.Fail("expects " + std::to_string(min_inputs) +
                (max_inputs != min_inputs ? " or " + std::to_string(max_inputs) : std::string()) +
                " input(s), got " + std::to_string(init.num_inputs()));
    }
    if (kind == GeluKind::kQuickGelu) alpha_ = init.GetFloat("alpha", 1.702f);
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    if (kind_ == GeluKind::kBiasGelu) ctx.RequireInput(1);
    if (ctx.has_input(1)) ctx.RequireSameDType(0, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const bool has_bias = ctx.has_input(1);
    int64_t n = 1;
    FloatVec fixed_bias;
    if (has_bias) {
      if (xd.empty()) ctx.Fail("input must have rank >= 1 when a bias is given");
      n = xd.back();
      const Dims& bd = ctx.input_dims(1);
      if (bd != Dims{n}) {
        ctx.Fail("bias " + DimsToString(bd) +
                 " must be 1-D with the size of the input's last "
                 "dimension, [" +
                 std::to_string(n) + "]");
      }
      if (const Tensor* c = ctx.input_value(1)) fixed_bias = ToF32(*c);
    }
    const DType t = ctx.input_dtype(0);
    ctx.set_output(0, t, xd);
    const int64_t total = CheckedNumElements(xd);
    if (total == 0) return [](RunContext&) {};
    kernels::UnaryParams params;
    kernels::UnaryOp op = kernels::UnaryOp::kGelu;
    if (kind_ == GeluKind::kFastGelu) op = kernels::UnaryOp::kGeluTanh;
    if (kind_ == GeluKind::kQuickGelu) {
      op = kernels::UnaryOp::kSwish;
      params.alpha = alpha_;
    }
    const bool is16 = t != DType::kFloat32;
    const kernels::Float16Kind kind = Float16KindOf(t);
    return [=](RunContext& rc) {
      const FloatVec bias = !has_bias ? nullptr : fixed_bias ? fixed_bias : ToF32(rc.input(1));
      const void* x = rc.input(0).raw_data();
      void* y = rc.output(0).raw_data();
      const float* b = bias ? bias->data() : nullptr;
      rc.parallel().For((total + kTaskElements - 1) / kTaskElements,
                        [&](int64_t first, int64_t last) {
                          ApplyRange(op, params, is16, kind, x, y, b, n, first * kTaskElements,
                                     std::min(total, last * kTaskElements));
                        });
    };
  }

 private:
  GeluKind kind_;
  float alpha_ = 1.702f;
};

template <GeluKind kKind>
OpFactory GeluFactory() {
  return [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<MsftGeluOp>(init, kKind);
  };
}

}  // namespace

void RegisterMsftActivationOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "BiasGelu", 1, GeluFactory<GeluKind::kBiasGelu>());
  registry.Register("com.microsoft", "FastGelu", 1, GeluFactory<GeluKind::kFastGelu>());
  registry.Register("com.microsoft", "QuickGelu", 1, GeluFactory<GeluKind::kQuickGelu>());
}

}  // namespace simplecpp::graph
