// com.microsoft MatMulNBits (since version 1): Y = A * W^T + bias with W [N,K] block-quantized
// along K to 4 or 8 bits, W[n,k] = (q[n,k] - zero_point[n,b]) * scales[n,b], b = k / block_size.
// Inputs: A (T1 [..., K]), B (uint8 [N, k_blocks, block_size*bits/8]), scales (T1, N*k_blocks
// elements), [zero_points] (uint8 packed N*ceil(k_blocks*bits/8) bytes, or T1 N*k_blocks),
// [g_idx] (int32; only the trivial k / block_size is accepted), [bias] (T1 [N]), and simplecpp's
// own [block_min] (float32 [N * k_blocks], with float32 A only: a value added to every
// dequantized weight of its block; ONNX Runtime's MatMulNBits has no such input: only
// simplecpp's load pass writes it, for ggml's Q4_1 weights, graph/passes/blocked_dequant_fusion.h).
// T1 is float32, float16 or bfloat16; 16-bit A, scales, zero points and bias are widened to
// float32 (A per run, the others at Prepare when constant) and Y is rounded once at the end.
// accuracy_level 4 ("int8 compute", what ONNX Runtime's int8 kernels and LLM exporters for CPUs
// use) quantizes A to int8 per block for fewer than kNBitsViaF32MinRows rows of A
// (kernels/quant/matmul_nbits_q8.h: a decode step at a few integer operations per 64 weights),
// where the weights allow it (NBitsQ8Applies); every other level, and larger M, computes in
// float32 on the exact dequantized weights.
//
// Memory: B, float32 scales and packed zero points are used in place by the kernel
// (kernels/quant/matmul_nbits.h reads ONNX Runtime's layout directly), so nothing is repacked and
// the weights take their file size.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/quant/matmul_nbits.h"
#include "kernels/quant/matmul_nbits_q8.h"

namespace simplecpp::graph {
namespace {

constexpr int kA = 0, kB = 1, kScales = 2, kZeroPoints = 3, kGIdx = 4, kBias = 5, kBlockMin = 6;


// A T1 tensor as float32: the tensor's own data for float32, else a widened copy.
std::shared_ptr<const std::vector<float>> WidenToF32(const Tensor& t) {
  auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(t.num_elements()));
  kernels::Widen16(Float16KindOf(t.dtype()), t.data<uint16_t>(), v->data(), v->size());
  return v;
}

class MatMulNBitsOp final : public Op {
 public:
  explicit MatMulNBitsOp(const OpInit& init) {
    if (init.num_inputs() < 3 || init.num_inputs() > 7)
      init.Fail("MatMulNBits takes 3 to 7 inputs, got " + std::to_string(init.num_inputs()));
    k_ = init.RequireInt("K");
    n_ = init.RequireInt("N");
    bits_ = init.GetInt("bits", 4);
    block_size_ = init.RequireInt("block_size");
    // accuracy_level 0-3 leave A in float32 here; 4 allows int8 A (see the file comment).
    int8_a_ = init.GetInt("accuracy_level", 0) == 4;
    if (init.GetInt("weight_prepacked", 0) != 0)
      init.Unsupported("weight_prepacked = 1 (a runtime-specific layout of B) is not supported");
    if (bits_ != 4 && bits_ != 8)
      init.Unsupported("bits = " + std::to_string(bits_) + " is not supported (only 4 and 8)");
    if (block_size_ < 16 || (block_size_ & (block_size_ - 1)) != 0)
      init.Fail("block_size must be a power of 2 and >= 16, got " + std::to_string(block_size_));
    if (k_ <= 0 || n_ <= 0)
      init.Fail("K and N must be positive, got K = " + std::to_string(k_) +
                ", N = " + std::to_string(n_));
  }

  std::vector<int> ValueInputs() const override { return {kGIdx}; }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(kA, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireDType(kB, {DType::kUInt8});
    ctx.RequireInput(kScales);
    ctx.RequireSameDType(kA, kScales);
    if (ctx.has_input(kZeroPoints) && ctx.input_dtype(kZeroPoints) != DType::kUInt8)
      ctx.RequireSameDType(kA, kZeroPoints);
    if (ctx.has_input(kGIdx)) ctx.RequireDType(kGIdx, {DType::kInt32});
    if (ctx.has_input(kBias)) ctx.RequireSameDType(kA, kBias);
    if (ctx.has_input(kBlockMin)) {
      ctx.RequireDType(kA, {DType::kFloat32});
      ctx.RequireDType(kBlockMin, {DType::kFloat32});
    }
    ctx.set_output_dtype(0, ctx.input_dtype(kA));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const int64_t k_blocks = (k_ + block_size_ - 1) / block_size_;
    const int64_t blob = block_size_ * bits_ / 8;
    const Dims& da = ctx.input_dims(kA);
    if (da.empty() || da.back() != k_)
      ctx.Fail("A must have rank >= 1 and last dimension K = " + std::to_string(k_) +
               ", got shape " + DimsToString(da));
    const Dims expect_b{n_, k_blocks, blob};
    if (ctx.input_dims(kB) != expect_b)
      ctx.Fail("B has shape " + DimsToString(ctx.input_dims(kB)) + " but K = " +
               std::to_string(k_) + ", N = " + std::to_string(n_) + ", bits = " +
               std::to_string(bits_) + ", block_size = " + std::to_string(block_size_) +
               " need [N, ceil(K/block_size), block_size*bits/8] = " + DimsToString(expect_b));
    const int64_t scales_count = CheckedNumElements(ctx.input_dims(kScales));
    if (scales_count != n_ * k_blocks)
      ctx.Fail("scales has " + std::to_string(scales_count) + " elements (shape " +
               DimsToString(ctx.input_dims(kScales)) + ") but needs N * k_blocks = " +
               std::to_string(n_ * k_blocks));
    const bool has_zp = ctx.has_input(kZeroPoints);
    const bool zp_packed = has_zp && ctx.input_dtype(kZeroPoints) == DType::kUInt8;
    if (has_zp) {
      const int64_t count = CheckedNumElements(ctx.input_dims(kZeroPoints));
      const int64_t want =
          zp_packed ? n_ * ((k_blocks * bits_ + 7) / 8) : n_ * k_blocks;
      if (count != want)
        ctx.Fail(std::string("zero_points (") + (zp_packed ? "packed uint8" : "float") + ") has " +
                 std::to_string(count) + " elements (shape " +
                 DimsToString(ctx.input_dims(kZeroPoints)) + ") but needs " +
                 (zp_packed ? "N * ceil(k_blocks * bits / 8) = " : "N * k_blocks = ") +
                 std::to_string(want));
    }
    if (ctx.has_input(kGIdx)) CheckGIdx(ctx);
    const bool has_bias = ctx.has_input(kBias);
    if (has_bias && ctx.input_dims(kBias) != Dims{n_})
      ctx.Fail("bias has shape " + DimsToString(ctx.input_dims(kBias)) + " but must be [N] = [" +
               std::to_string(n_) + "]");

    const bool has_min = ctx.has_input(kBlockMin);
    if (has_min && CheckedNumElements(ctx.input_dims(kBlockMin)) != n_ * k_blocks)
      ctx.Fail("block_min has shape " + DimsToString(ctx.input_dims(kBlockMin)) +
               " but needs N * k_blocks = " + std::to_string(n_ * k_blocks) + " elements");

    const DType t1 = ctx.input_dtype(kA);
    Dims dy = da;
    dy.back() = n_;
    ctx.set_output(0, t1, dy);
    const int64_t m = CheckedNumElements(da) / k_;
    if (m == 0) return [](RunContext&) {};

    // 16-bit parameters known now are widened once; the others per run.
    std::shared_ptr<const std::vector<float>> scales16, zp16, bias16;
    if (Is16BitFloat(t1)) {
      if (const Tensor* s = ctx.input_value(kScales)) scales16 = WidenToF32(*s);
      if (has_zp && !zp_packed) {
        if (const Tensor* z = ctx.input_value(kZeroPoints)) zp16 = WidenToF32(*z);
      }
      if (has_bias) {
        if (const Tensor* b = ctx.input_value(kBias)) bias16 = WidenToF32(*b);
      }
    }
    const int64_t n = n_, k = k_, bits = bits_, block_size = block_size_;
    // int8 A: decided from the shapes and attributes only, so every target takes the same path.
    const bool int8_a = int8_a_ && m < kernels::kNBitsViaF32MinRows;
    auto matmul = [int8_a](int64_t rows, const float* a, int64_t lda,
                           const kernels::NBitsWeights& w, const float* bias, float* y,
                           int64_t ldy, const kernels::Parallel& parallel) {
      if (int8_a && kernels::NBitsQ8Applies(w)) {
        kernels::GemvNBitsQ8(rows, a, lda, w, bias, y, ldy, parallel);
      } else {
        kernels::MatMulNBitsF32(rows, a, lda, w, bias, y, ldy, parallel);
      }
    };
    return [=](RunContext& rc) {
      kernels::NBitsWeights w;
      w.bits = static_cast<int>(bits);
      w.n = n;
      w.k = k;
      w.block_size = block_size;
      w.packed = rc.input(kB).data<uint8_t>();
      // Per-run widened copies of 16-bit parameters that were not constant at Prepare.
      std::shared_ptr<const std::vector<float>> s = scales16, z = zp16, bb = bias16;
      const bool wide = Is16BitFloat(t1);
      if (wide && !s) s = WidenToF32(rc.input(kScales));
      w.scales = wide ? s->data() : rc.input(kScales).data<float>();
      if (zp_packed) {
        w.zp_kind = kernels::NBitsZeroPoints::kPackedU8;
        w.zp_packed = rc.input(kZeroPoints).data<uint8_t>();
      } else if (has_zp) {
        w.zp_kind = kernels::NBitsZeroPoints::kFloat32;
        if (wide && !z) z = WidenToF32(rc.input(kZeroPoints));
        w.zp_f32 = wide ? z->data() : rc.input(kZeroPoints).data<float>();
      }
      if (has_min) w.block_min = rc.input(kBlockMin).data<float>();
      const float* bias = nullptr;
      if (has_bias) {
        if (wide && !bb) bb = WidenToF32(rc.input(kBias));
        bias = wide ? bb->data() : rc.input(kBias).data<float>();
      }
      if (!wide) {
        matmul(m, rc.input(kA).data<float>(), k, w, bias, rc.output(0).data<float>(), n,
               rc.parallel());
        return;
      }
      const kernels::Float16Kind kind = Float16KindOf(t1);
      Tensor a32 = rc.Scratch(DType::kFloat32, {m * k});
      kernels::Widen16(kind, rc.input(kA).data<uint16_t>(), a32.data<float>(),
                       static_cast<size_t>(m * k));
      Tensor y32 = rc.Scratch(DType::kFloat32, {m * n});
      matmul(m, a32.data<float>(), k, w, bias, y32.data<float>(), n, rc.parallel());
      kernels::Narrow16(kind, y32.data<float>(), rc.output(0).data<uint16_t>(),
                        static_cast<size_t>(m * n));
    };
  }

 private:
  // g_idx [K] gives each k its block; only the plain order (k / block_size) is supported.
  void CheckGIdx(const PrepareContext& ctx) const {
    const Tensor* g = ctx.input_value(kGIdx);
    if (g == nullptr)
      ctx.Unsupported("g_idx must be a constant (only the trivial k / block_size is supported)");
    if (g->num_elements() != k_)
      ctx.Fail("g_idx has " + std::to_string(g->num_elements()) + " elements but K = " +
               std::to_string(k_));
    const int32_t* v = g->data<int32_t>();
    for (int64_t i = 0; i < k_; ++i) {
      if (v[i] != i / block_size_)
        ctx.Unsupported("g_idx[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                        " reorders the blocks; only g_idx[k] = k / block_size is supported");
    }
  }

  int64_t k_ = 0, n_ = 0, bits_ = 4, block_size_ = 0;
  bool int8_a_ = false;
};

}  // namespace

void RegisterMatMulNBitsOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "MatMulNBits", 1, MakeFactory<MatMulNBitsOp>());
}

}  // namespace simplecpp::graph
