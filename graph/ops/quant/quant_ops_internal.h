// Shared helpers of the quantization op family (quantize.cc, qlinear.cc, matmul_integer.cc,
// conv_integer.cc): reading scales and zero points of any supported dtype, dtype lists, and the
// registration functions that RegisterQuantizationOps (quantize.cc) calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/op.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/conv/conv.h"
#include "kernels/memory/transpose.h"
#include "kernels/quant/depthwise_q8.h"
#include "kernels/quant/qgemm.h"
#include "quant/param_readers.h"
#include "quant/param_shapes.h"
#include "quant/quant_params.h"

namespace simplecpp::graph::quant_ops {

// The parameter vocabulary of quant/: dtype classes, one-element shapes, and the readers of scale
// and zero-point tensors.
using quant::FirstScaleAsF32;
using quant::FirstZeroPointAsI32;
using quant::IsFloat8DType;
using quant::IsOneElement;
using quant::IsQuantIntDType;
using quant::ScalesAsF32;
using quant::ZeroPointsAsI32;

// Fails unless input i is absent or holds one element (a per-tensor scale or zero point).
inline void RequireOne(const PrepareContext& ctx, int i, const char* name) {
  if (ctx.has_input(i) && !IsOneElement(ctx.input_dims(i))) {
    ctx.Fail(std::string(name) + " must be a scalar (per-tensor), got shape " +
             DimsToString(ctx.input_dims(i)));
  }
}

// DynamicQuantizeLinear of x[0, n) into y (uint8): min / max over x (NaN skipped), the scale and
// zero point of quant::ComputeDynamicQuantParams, then the quantization, both in parallel chunks
// whose bounds do not depend on the thread count (min and max are exact, so neither does the
// result). Shared by DynamicQuantizeLinear, DynamicQuantizeMatMul and DynamicQuantizeConv, so
// all three give the same bytes.
quant::DynamicQuantParams DynamicQuantizeU8(const kernels::Parallel& par, const float* x, int64_t n,
                                            uint8_t* y);

// What a quantization parameter of an integer matmul varies along: the rows of A (a_scale,
// a_zero_point), the columns of B (b_scale, b_zero_point) or the rows of the output (y_scale,
// y_zero_point).
enum class QParamAxis { kRowsOfA, kColumnsOfB, kRowsOfY };

// Where such a parameter's values lie in its flattened tensor: the value of row (column) i of
// stored matrix t is at t * batch + i * step. A stored matrix is A's or B's matrix index
// (QMatMulPlan::offsets), or the output matrix's.
struct QParamLayout {
  int64_t step = 0;   // 1: one value per row (column); 0: one value for the whole tensor
  int64_t batch = 0;  // values per stored matrix; 0: all matrices share them
};

// The layout of input `in` (called `name` in errors) as a parameter along `axis` of `operand`
// (A's, B's or the output's shape) with `count` rows (M) or columns (N). Accepted: absent or one
// value (of rank <= max(operand's, 1)), [count], or the operand's shape with the other matrix
// dimension replaced by 1 (A: [..., M, 1]; B: [..., 1, N]; output: [..., M, 1]). Anything else
// fails, naming the input, its shape and the shapes allowed.
QParamLayout QMatMulParamLayout(const PrepareContext& ctx, int in, const char* name,
                                QParamAxis axis, const Dims& operand, int64_t count);

// A batched integer matmul (MatMulInteger, QLinearMatMul): numpy matmul shapes (1-D A is [1,K],
// 1-D B is [K,1], batch dims broadcast), A/B uint8 or int8, zero points laid out as
// QMatMulParamLayout accepts (per tensor, per row of A, per column of B).
struct QMatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  Dims out_dims;
  int64_t num_batches = 0;
  std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>> offsets;  // A, B matrix index
  int64_t b_batches = 0;
  bool a_signed = false, b_signed = false;
  int64_t za_step = 0, za_batch = 0;  // za index = a_matrix * za_batch + row * za_step
  int64_t zb_step = 0, zb_batch = 0;  // zb index = b_matrix * zb_batch + col * zb_step
  std::shared_ptr<const std::vector<std::shared_ptr<const kernels::PackedQB>>> packed;  // const B

  // c: [num_batches, M, N] int32. za / zb: nullptr when absent.
  void Run(const kernels::Parallel& par, const void* a, const void* b, const int32_t* za,
           const int32_t* zb, int32_t* c) const;
  // The float epilogue fused into the GEMM (MatMulIntegerToFloat, DynamicQuantizeMatMul):
  // y [num_batches, M, N] = float32(sum) * mult[n * mult_step] + bias[n] (bias may be nullptr),
  // each block of sums scaled by kernels::ScaleI32RowsToF32 while it is in cache, so no int32
  // tensor of the whole product exists. The same bits as Run followed by that scaling.
  void RunToFloat(const kernels::Parallel& par, const void* a, const void* b, const int32_t* za,
                  const int32_t* zb, const float* mult, int64_t mult_step, const float* bias,
                  float* y) const;
};
// a_zp / b_zp: input indices of the zero points (may be absent).
QMatMulPlan PlanQMatMul(PrepareContext& ctx, int a_in, int b_in, int a_zp_in, int b_zp_in);

// QLinearConv's requantization, done by QConvPlan::Run per chunk of output positions while the
// chunk's int32 sums are in cache: y[n, m, p] = requant(acc + bias[m], mult[m * mult_step]) with
// kernels::RequantizeBiasRows* (wrapping int32 bias add, then the float64 requantization).
struct QConvRequant {
  const int32_t* bias = nullptr;  // [out_channels], or nullptr
  const float* mult = nullptr;    // one value (mult_step 0) or one per output channel (1)
  int64_t mult_step = 0;
  int32_t zp = 0, lo = 0, hi = 0;
  bool out_signed = false;  // int8 y, else uint8
  void* y = nullptr;        // [N, M, out...] 8-bit
  // Each requantized byte b becomes table[b] (a fused elementwise function of y), or nullptr.
  const uint8_t* table = nullptr;
  // Whether the GEMM's tiles take this requantization (QConvPlan::FusesRequant), known where
  // the multipliers are constants; -1: QConvPlan::Run asks on each run.
  int fuses = -1;
};

// rq's requantization of `rows` rows of n sums (row stride lda) into out (row stride ldo): one
// output channel `ch` for the whole block (ch_step 0), or channels ch.. along each row (1);
// then rq's table, while the bytes are in cache.
void RequantConv(const QConvRequant& rq, const int32_t* acc, int64_t lda, int64_t rows, int64_t n,
                 int64_t ch, int64_t ch_step, uint8_t* out, int64_t ldo);
// The same with one output channel per row: rows r < rows of n sums are channel ch + r.
void RequantConvRows(const QConvRequant& rq, const int32_t* acc, int64_t lda, int64_t rows,
                     int64_t n, int64_t ch, uint8_t* out, int64_t ldo);
// rq's table (if any) on the requantized bytes [rows, n] at out (row stride ldo).
void ApplyOutputTable(const QConvRequant& rq, int64_t rows, int64_t n, uint8_t* out, int64_t ldo);
// rq's requantization for a kernel that requantizes its own sums (kernels::QGemm*ToBytes,
// kernels::DepthwiseQ8RequantChannels): output channels from ch on along the result's rows
// (per_row) or its columns, written to out (row stride ldo).
kernels::QGemmRequant GemmRequant(const QConvRequant& rq, bool per_row, int64_t ch, void* out,
                                  int64_t ldo);

// A depthwise convolution's weights in the byte kernel's form: w - w_zero_point as int8
// (fits: every one does) prepared for the kernel, and their sum per output channel.
struct DepthwiseBytesWeights {
  bool fits = true;
  kernels::DepthwiseQ8Weights prepared;  // fits only
  std::vector<int32_t> wsum;             // [out_channels]
};

// An integer convolution (ConvInteger, QLinearConv): x and w uint8 or int8, x zero point per
// tensor, w zero point per tensor or per output channel; writes y [N, M, out...] int32, or its
// requantization (QConvRequant). Work goes in blocks of `chunk` output positions.
struct QConvPlan {
  kernels::ConvGeometry g;
  Dims out_dims;
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1, cg = 0, og = 0, kdim = 0;
  int64_t in_size = 0, positions = 0, chunk = 0;
  bool x_signed = false, w_signed = false;
  // x of one image and group [cg, in...] -> channels-last [in..., cg] (unused when cg == 1 or
  // in_size == 1, where both layouts are the same bytes).
  bool transpose_x = false;
  kernels::TransposePlan to_channels_last;
  // Weights packed with the GEMM's K in (k..., c) order (PackConvWeights), one per group.
  std::shared_ptr<const std::vector<std::shared_ptr<const kernels::PackedQB>>> packed;  // const W
  // Few output channels per group (og < the GEMM's panel width): the GEMM's operands swap. The
  // weights, in (k..., c) order, are its A (one row per output channel, w's zero point per row);
  // the im2row rows, packed per chunk, are its B (x's zero point); the [og, positions] result
  // is y's layout already. A panel of positions is then full where a panel of og output channels
  // would be mostly padding.
  bool swap_operands = false;
  std::shared_ptr<const std::vector<uint8_t>> w_rows;  // const W reordered, [group][og][kdim]
  // 1x1, stride 1, no padding: x's channels-last rows are the GEMM's A as they are.
  bool pointwise = false;
  // A pointwise convolution with swapped operands packs its B straight from x's channels-first
  // rows [cg, positions]: x is never transposed, and the result is y's layout, so no byte of
  // the layer moves between layouts.
  bool PackedFromRows() const { return pointwise && swap_operands; }
  // Swapped operands with few input channels per group (a first layer on an RGB image): B is
  // the channels-first im2col of x (kernels::Im2ColBytes, long runs of each input row) packed
  // from its rows, and the weights are A in their stored (c, k...) order; x is not transposed.
  // A channels-last im2row would copy a few bytes per tap.
  bool cols_from_x = false;

  // wzp: nullptr, 1 value (wzp_step 0) or out_channels values (wzp_step 1). Writes the int32
  // sums to y, or, when rq is given, their requantization to rq->y (y is then unused).
  void Run(const kernels::Parallel& par, const void* x, const void* w, int32_t xzp,
           const int32_t* wzp, int64_t wzp_step, int32_t* y, int32_t* scratch_c,
           uint8_t* scratch_rows, const QConvRequant* rq = nullptr) const;
  // Run's scratch_c and scratch_rows in one buffer from the run's pool (one allocation per run;
  // none for a depthwise plan, which takes neither). buffer owns the memory.
  struct Scratch {
    Tensor buffer;
    int32_t* c = nullptr;
    uint8_t* rows = nullptr;
  };
  Scratch AllocateScratch(RunContext& rc) const;
  // Whether the GEMM's tiles requantize rq themselves (the multipliers and range decide).
  bool FusesRequant(const QConvRequant& rq) const;
  // Whether Run touches the scratch: not a depthwise convolution, nor one whose tiles
  // requantize straight into y without im2row rows, a byte tile or a channels-last copy of x
  // (fused: FusesRequant's answer; rq == nullptr: int32 output).
  bool NeedsScratch(const QConvRequant* rq, bool fused) const;
  // Scratch for `threads` threads (the Parallel's num_threads()): one slot per thread when the
  // blocks of positions are the parallel tasks, else one.
  int64_t ScratchCElements(int threads) const { return Slots(threads) * chunk * og; }
  // Per slot: im2row rows [chunk, RowStride()] (RowBytes), then the block's requantized bytes
  // [chunk, og] (rq, unswapped); after the slots, the channels-last copy of x when transpose_x.
  int64_t ScratchRowBytes(int threads) const {
    return Slots(threads) * SlotRowBytes() + (transpose_x ? in_size * cg : 0);
  }
  int64_t SlotRowBytes() const { return RowBytes() + chunk * og; }
  // A pointwise convolution reads x's rows and cols_from_x packs B straight from x: no rows.
  int64_t RowBytes() const { return pointwise || cols_from_x ? 0 : chunk * RowStride(); }
  // im2row rows are kdim rounded up to 4 bytes apart (the gap holds x's zero point), so that the
  // integer GEMM multiplies uint8 rows in place (kernels/quant/qgemm.h).
  int64_t RowStride() const { return (kdim + 3) / 4 * 4; }
  int64_t Slots(int threads) const { return blocks_parallel ? std::max(1, threads) : 1; }
  // Whether the blocks of `chunk` positions are the parallel tasks (else the GEMM parallelizes).
  bool blocks_parallel = false;
  // Depthwise (one input channel per group, 1-D or 2-D, at most kMaxExactFloatTaps taps): the
  // sums are computed by the float32 depthwise kernel on x - x_zero_point and w - w_zero_point.
  // Exact: every product is an integer of magnitude <= 255 * 255 and the sum of at most 256 of
  // them stays below 2^24, so no float32 partial sum ever rounds.
  // Where the SIMD target has it (kernels/quant/depthwise_q8.h) and w - w_zero_point fits int8,
  // the byte kernel computes the same sums in integers instead (RunDepthwiseBytes).
  bool depthwise_float = false;
  static constexpr int64_t kMaxExactFloatTaps = 256;
  // Constant depthwise weights and zero points, prepared once for RunDepthwiseBytes.
  std::shared_ptr<const DepthwiseBytesWeights> depthwise_bytes;
  DepthwiseBytesWeights PrepareDepthwiseBytesWeights(const void* w, const int32_t* wzp,
                                                     int64_t wzp_step) const;

 private:
  void RunDepthwise(const kernels::Parallel& par, const void* x, const void* w, int32_t xzp,
                    const int32_t* wzp, int64_t wzp_step, int32_t* y,
                    const QConvRequant* rq) const;
  // The threads a depthwise run uses (kernel size ksize).
  const kernels::Parallel& DepthwiseParallel(const kernels::Parallel& pool, int64_t ksize) const;
  // The byte kernel's path; false (nothing done) where it does not apply.
  bool RunDepthwiseBytes(const kernels::Parallel& par, const void* x, const void* w, int32_t xzp,
                         const int32_t* wzp, int64_t wzp_step, int32_t* y,
                         const QConvRequant* rq) const;
};
// w_zp_in: input index of w's zero point (checked: one value or [M]).
QConvPlan PlanQConv(PrepareContext& ctx, const ConvAttributes& attrs, int x_in, int w_in, int w_zp_in);
// The types of QLinearConv's inputs (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point[, bias]) and output (y_zero_point's), which QLinearConvTranspose shares.
void InferQLinearConvTypes(TypeContext& ctx);

// The integer GEMM on A rows that this layer holds as bytes, int8 or uint8 by the op's dtype:
// calls the kernel entry point named by A's type (kernels/quant/qgemm.h).
inline void QGemmBytesToI32(int64_t m, const uint8_t* a, bool a_signed, int64_t lda,
                            const int32_t* a_zp, int64_t a_zp_step, const kernels::PackedQB& b,
                            const int32_t* b_zp, int64_t b_zp_step, int32_t* c, int64_t ldc,
                            const kernels::Parallel& parallel) {
  if (a_signed) {
    kernels::QGemmS8ToI32(m, reinterpret_cast<const int8_t*>(a), lda, a_zp, a_zp_step, b, b_zp,
                          b_zp_step, c, ldc, parallel);
  } else {
    kernels::QGemmU8ToI32(m, a, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, parallel);
  }
}
inline void QGemmBytesToBytes(int64_t m, const uint8_t* a, bool a_signed, int64_t lda,
                              const int32_t* a_zp, int64_t a_zp_step, const kernels::PackedQB& b,
                              const int32_t* b_zp, int64_t b_zp_step,
                              const kernels::QGemmRequant& rq, const kernels::Parallel& parallel) {
  if (a_signed) {
    kernels::QGemmS8ToBytes(m, reinterpret_cast<const int8_t*>(a), lda, a_zp, a_zp_step, b, b_zp,
                            b_zp_step, rq, parallel);
  } else {
    kernels::QGemmU8ToBytes(m, a, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, rq, parallel);
  }
}
inline void QGemmBytesToSink(int64_t m, const uint8_t* a, bool a_signed, int64_t lda,
                             const int32_t* a_zp, int64_t a_zp_step, const kernels::PackedQB& b,
                             const int32_t* b_zp, int64_t b_zp_step, const kernels::QGemmSink& sink,
                             const kernels::Parallel& parallel) {
  if (a_signed) {
    kernels::QGemmS8ToSink(m, reinterpret_cast<const int8_t*>(a), lda, a_zp, a_zp_step, b, b_zp,
                           b_zp_step, sink, parallel);
  } else {
    kernels::QGemmU8ToSink(m, a, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, sink, parallel);
  }
}

void RegisterQLinearOps(OpRegistry& registry);        // qlinear.cc
void RegisterMatMulIntegerOps(OpRegistry& registry);  // matmul_integer.cc
void RegisterConvIntegerOps(OpRegistry& registry);    // conv_integer.cc

}  // namespace simplecpp::graph::quant_ops
