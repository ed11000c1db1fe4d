// ConvInteger (ai.onnx opset 10) and the integer convolution plan it shares with QLinearConv
// (qlinear.cc).
//
// y[n, m, p] = sum_{c, k} (x[n, c, p*stride + k*dilation - pad] - x_zp) * (w[m, c, k] - w_zp[m])
// as int32, x and w uint8 or int8, every Conv attribute (1-D/2-D/3-D, group incl. depthwise,
// strides, dilations, pads, auto_pad). Padded taps hold x_zp, so they contribute nothing.
//
// Per image and group, x [C/group, in...] is transposed to channels-last [in..., C/group]; per
// block of output positions Im2RowBytesChannelsLast writes one row of kernel * C/group bytes per
// position (columns in (k..., c) order: a kernel row of taps is one contiguous copy), the GEMM
// (kernels/quant/qgemm.h) multiplies those rows by the group's weights reordered to match (op(B)
// stored [M/group, kernel * C/group], packed once at Prepare when constant) with the x zero point
// per tensor and w's per column (output channel), and the [positions, M/group] result is transposed
// into y in cache tiles. With few output channels per group the GEMM's operands swap (the result
// is then y's layout). QLinearConv requantizes each block's sums right there (QConvRequant), so
// no int32 tensor of the whole output exists. Large convolutions run their blocks as the
// parallel tasks (one scratch slot per thread); small ones parallelize inside the GEMM.
// Depthwise convolutions (one input channel per group) skip the GEMM: conv_integer_depthwise.cc.
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/memory/transpose.h"
#include "kernels/quant/byte_lookup.h"
#include "kernels/quant/qgemm.h"
#include "kernels/quant/quantize.h"

namespace simplecpp::graph {
namespace quant_ops {

namespace {

// Bytes of im2row rows per block of positions (within L2 next to the weights).
constexpr int64_t kRowBudget = int64_t{1} << 17;
// Positions from which the blocks of positions are the parallel tasks (4 blocks of 32).
constexpr int64_t kMinBlocked = 128;
// Output channels per group up to which a pointwise convolution swaps the GEMM's operands
// whatever its positions; with more, it swaps when the positions pad their last panel by at
// most 1 / kPointwiseSwapPadShare (the padded columns are multiplied too).
constexpr int64_t kMaxPointwiseSwapChannels = 48;
constexpr int64_t kPointwiseSwapPadShare = 16;
// Input channels per group up to which a convolution with swapped operands takes its B from
// x's channels-first rows (QConvPlan::cols_from_x): a channels-last tap would be a copy of this
// few bytes.
constexpr int64_t kMaxColsFromXChannels = 4;
// Output channels per group up to which such a convolution swaps its operands for it (the GEMM's
// other way round would run partial 16- or 24-column panels; from 32 on full ones).
constexpr int64_t kMaxColsFromXSwapChannels = 24;
// Convolutions that kernels::WorthParallelMacs rejects run on the calling thread: a quarter of
// the plain integer GEMM's threshold (kernels::kQGemmSerialMacs), as a convolution's im2row,
// packing and requantization add work per multiply-add, most of all with few input channels, so
// a layer like cnn-base's first (2 M MACs over 3 channels) already gains from threads, while
// layers of a few hundred thousand MACs lose more to waking them than they save.

// One group's weights w [og, cg, k...] (bytes) with K reordered to (k..., c), the column order
// of Im2RowBytesChannelsLast, into r [og, cg * ksize].
void ReorderConvWeights(int64_t og, int64_t cg, int64_t ksize, const uint8_t* w, uint8_t* r) {
  const int64_t kdim = cg * ksize;
  for (int64_t o = 0; o < og; ++o) {
    const uint8_t* src = w + o * kdim;
    uint8_t* dst = r + o * kdim;
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t k = 0; k < ksize; ++k) dst[k * cg + c] = src[c * ksize + k];
    }
  }
}

// Packs one group's weights w [og, cg, k...] with K reordered to (k..., c).
std::shared_ptr<const kernels::PackedQB> PackConvWeights(bool w_signed, int64_t og, int64_t cg,
                                                         int64_t ksize, const uint8_t* w) {
  const int64_t kdim = cg * ksize;
  if (cg == 1 || ksize == 1) return kernels::PackedQB::Pack(w_signed, true, kdim, og, w, kdim);
  std::vector<uint8_t> r(static_cast<size_t>(og * kdim));
  ReorderConvWeights(og, cg, ksize, w, r.data());
  return kernels::PackedQB::Pack(w_signed, true, kdim, og, r.data(), kdim);
}

// y[j * ldy + q] = c[q * og + j] for q < pc, j < og, in square tiles so that both the reads and
// the writes stay within a few cache lines per tile.
void TransposeToChannelsFirst(const int32_t* c, int64_t pc, int64_t og, int32_t* y,
                              int64_t ldy) {
  constexpr int64_t kT = 16;
  for (int64_t q0 = 0; q0 < pc; q0 += kT) {
    const int64_t qn = std::min(kT, pc - q0);
    for (int64_t j0 = 0; j0 < og; j0 += kT) {
      const int64_t jn = std::min(kT, og - j0);
      if (qn == kT && jn == kT) {
        for (int64_t j = 0; j < kT; ++j) {
          int32_t* yr = y + (j0 + j) * ldy + q0;
          const int32_t* cc = c + q0 * og + j0 + j;
          for (int64_t q = 0; q < kT; ++q) yr[q] = cc[q * og];
        }
      } else {
        for (int64_t j = 0; j < jn; ++j) {
          int32_t* yr = y + (j0 + j) * ldy + q0;
          const int32_t* cc = c + q0 * og + j0 + j;
          for (int64_t q = 0; q < qn; ++q) yr[q] = cc[q * og];
        }
      }
    }
  }
}

}  // namespace

QConvPlan PlanQConv(PrepareContext& ctx, const ConvAttributes& attrs, int x_in, int w_in, int w_zp_in) {
  QConvPlan p;
  const Dims& xd = ctx.input_dims(x_in);
  const Dims& wd = ctx.input_dims(w_in);
  attrs.Resolve(ctx, xd, wd, &p.g, &p.out_dims);
  p.batch = xd[0];
  p.channels = xd[1];
  p.out_channels = wd[0];
  p.group = attrs.group;
  p.cg = wd[1];
  p.og = p.out_channels / p.group;
  p.kdim = p.cg * p.g.KernelSize();
  p.in_size = p.g.InSize();
  p.positions = p.g.OutSize();
  p.x_signed = ctx.input_dtype(x_in) == DType::kInt8;
  p.w_signed = ctx.input_dtype(w_in) == DType::kInt8;
  if (ctx.has_input(w_zp_in)) {
    const Dims& zd = ctx.input_dims(w_zp_in);
    if (!IsOneElement(zd) && !(zd.size() == 1 && zd[0] == p.out_channels)) {
      ctx.Fail("w_zero_point has shape " + DimsToString(zd) + " but must be a scalar or [M] = [" +
               std::to_string(p.out_channels) + "] (one per output channel)");
    }
  }
  // Output positions per block: about 16 blocks per image and group, a multiple of the GEMM's
  // panel width, at most kRowBudget bytes of im2row rows. With at least kMinBlocked positions the
  // blocks are the parallel tasks (im2row, GEMM and epilogue of a block on one thread, one
  // parallel region per image and group); fewer positions are one block whose GEMM runs in
  // parallel. The sums are exact integers and the epilogue is elementwise, so neither the block
  // size nor the mode can change a result.
  // Blocks are whole 64-byte cache lines of an 8-bit output row (and whole GEMM panels): tasks
  // writing parts of the same lines of y would make those lines bounce between the cores.
  constexpr int64_t kUnit = 64;
  static_assert(kUnit % kernels::PackedQB::kNR == 0, "a block unit is whole panels");
  const int64_t budget = std::max(kUnit, kRowBudget / std::max<int64_t>(p.kdim, 1) / kUnit * kUnit);
  const int64_t sixteenth = (p.positions / 16 + kUnit - 1) / kUnit * kUnit;
  int64_t block = std::clamp(sixteenth, kUnit, 4 * kUnit);
  // (A convolution small enough to run on the calling thread keeps one block per chunk of the
  // row budget: smaller blocks would only add per-block overhead.)
  p.blocks_parallel = p.positions >= kMinBlocked &&
                      kernels::WorthParallelMacs(p.batch * p.out_channels * p.positions * p.kdim);
  if (!p.blocks_parallel) block = p.positions;
  p.chunk = std::max<int64_t>(1, std::min({block, budget, p.positions}));
  p.depthwise_float = p.cg == 1 && p.group == p.channels && p.g.rank <= 2 &&
                      p.g.KernelSize() <= QConvPlan::kMaxExactFloatTaps;
  if (p.depthwise_float) {
    // No GEMM. Constant weights (and zero points) in the byte kernel's form, once.
    const Tensor* wc = ctx.input_value(w_in);
    const Tensor* zc = ctx.has_input(w_zp_in) ? ctx.input_value(w_zp_in) : nullptr;
    if (wc != nullptr && (!ctx.has_input(w_zp_in) || zc != nullptr)) {
      const std::vector<int32_t> wz = zc ? ZeroPointsAsI32(*zc) : std::vector<int32_t>();
      p.depthwise_bytes = std::make_shared<const DepthwiseBytesWeights>(
          p.PrepareDepthwiseBytesWeights(wc->raw_data(), wz.empty() ? nullptr : wz.data(),
                                         wz.size() > 1 ? 1 : 0));
    }
    return p;
  }
  const int64_t ksize = p.g.KernelSize();
  p.pointwise = ksize == 1;
  for (int d = 0; d < p.g.rank; ++d) {
    p.pointwise = p.pointwise && p.g.stride[d] == 1 && p.g.pad[d] == 0 && p.g.out[d] == p.g.in[d];
  }
  // Swap when the GEMM's narrowest tile (16 columns) would be less than half full and there are
  // at least a panel's worth of positions to fill the other way; pointwise convolutions also up
  // to kMaxPointwiseSwapChannels output channels, or with more where the positions fill their
  // panels, since packing x's channels-first rows directly costs less than transposing x to
  // channels-last and the result back (each output channel's row is then requantized straight
  // into y), and
  // convolutions over a few input channels up to kMaxColsFromXSwapChannels, where B comes from
  // x's channels-first im2col (cols_from_x) instead of taps of a few bytes (bench/README.md).
  const bool few_inputs = !p.pointwise && p.cg <= kMaxColsFromXChannels;
  constexpr int64_t kNR = kernels::PackedQB::kNR;
  const int64_t position_pad = (p.positions + kNR - 1) / kNR * kNR - p.positions;
  const bool pointwise_swap = p.pointwise && (p.og <= kMaxPointwiseSwapChannels ||
                                              position_pad * kPointwiseSwapPadShare <= p.positions);
  p.swap_operands =
      (4 * p.og <= kNR || pointwise_swap || (few_inputs && p.og <= kMaxColsFromXSwapChannels)) &&
      p.positions >= kNR;
  p.cols_from_x = p.swap_operands && few_inputs;
  p.transpose_x = p.cg > 1 && p.in_size > 1 && !p.PackedFromRows() && !p.cols_from_x;
  if (p.transpose_x) p.to_channels_last = kernels::PlanTranspose(1, {p.cg, p.in_size}, {1, 0});
  if (p.swap_operands) {
    if (const Tensor* wc = ctx.input_value(w_in); wc != nullptr) {
      const auto* bytes = static_cast<const uint8_t*>(wc->raw_data());
      auto r = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(p.out_channels * p.kdim));
      if (p.cols_from_x) {
        std::copy(bytes, bytes + p.out_channels * p.kdim, r->data());  // (c, k...) as stored
      } else {
        ReorderConvWeights(p.out_channels, p.cg, ksize, bytes, r->data());
      }
      p.w_rows = r;
    }
    return p;
  }
  if (const Tensor* wc = ctx.input_value(w_in); wc != nullptr && p.og > 0) {
    auto packed = std::make_shared<std::vector<std::shared_ptr<const kernels::PackedQB>>>();
    const auto* bytes = static_cast<const uint8_t*>(wc->raw_data());
    for (int64_t gi = 0; gi < p.group; ++gi) {
      packed->push_back(PackConvWeights(p.w_signed, p.og, p.cg, ksize, bytes + gi * p.og * p.kdim));
    }
    p.packed = packed;
  }
  return p;
}

void ApplyOutputTable(const QConvRequant& rq, int64_t rows, int64_t n, uint8_t* out, int64_t ldo) {
  if (rq.table == nullptr) return;
  if (ldo == n) {
    kernels::LookupBytes(rq.table, out, out, rows * n);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    kernels::LookupBytes(rq.table, out + r * ldo, out + r * ldo, n);
  }
}
kernels::QGemmRequant GemmRequant(const QConvRequant& rq, bool per_row, int64_t ch, void* out,
                                  int64_t ldo) {
  kernels::QGemmRequant q;
  q.per_row = per_row;
  q.bias = rq.bias ? rq.bias + ch : nullptr;
  q.mult = rq.mult + ch * rq.mult_step;
  q.mult_step = rq.mult_step;
  q.zp = rq.zp;
  q.lo = rq.lo;
  q.hi = rq.hi;
  q.out_signed = rq.out_signed;
  q.out = out;
  q.ldo = ldo;
  return q;
}

// rq's requantization of `rows` rows of n sums (row stride lda) into out (row stride ldo): one
// output channel `ch` for the whole block (ch_step 0), or channels ch.. along each row (1).
void RequantConv(const QConvRequant& rq, const int32_t* acc, int64_t lda, int64_t rows, int64_t n,
                 int64_t ch, int64_t ch_step, uint8_t* out, int64_t ldo) {
  const int32_t* bias = rq.bias ? rq.bias + ch : nullptr;
  const float* mult = rq.mult + ch * rq.mult_step;
  const int64_t ms = rq.mult_step * ch_step;
  if (rq.out_signed) {
    kernels::RequantizeBiasRowsI32ToI8(acc, lda, rows, n, bias, ch_step, mult, ms, rq.zp, rq.lo,
                                       rq.hi, reinterpret_cast<int8_t*>(out), ldo);
  } else {
    kernels::RequantizeBiasRowsI32ToU8(acc, lda, rows, n, bias, ch_step, mult, ms, rq.zp, rq.lo,
                                       rq.hi, out, ldo);
  }
  ApplyOutputTable(rq, rows, n, out, ldo);
}

void RequantConvRows(const QConvRequant& rq, const int32_t* acc, int64_t lda, int64_t rows,
                     int64_t n, int64_t ch, uint8_t* out, int64_t ldo) {
  const int32_t* bias = rq.bias ? rq.bias + ch : nullptr;
  const float* mult = rq.mult + ch * rq.mult_step;
  if (rq.out_signed) {
    kernels::RequantizePerRowI32ToI8(acc, lda, rows, n, bias, mult, rq.mult_step, rq.zp, rq.lo,
                                     rq.hi, reinterpret_cast<int8_t*>(out), ldo);
  } else {
    kernels::RequantizePerRowI32ToU8(acc, lda, rows, n, bias, mult, rq.mult_step, rq.zp, rq.lo,
                                     rq.hi, out, ldo);
  }
  ApplyOutputTable(rq, rows, n, out, ldo);
}

bool QConvPlan::FusesRequant(const QConvRequant& rq) const {
  return kernels::QGemmFusesRequant(GemmRequant(rq, false, 0, nullptr, 0), 1, out_channels);
}

bool QConvPlan::NeedsScratch(const QConvRequant* rq, bool fused) const {
  if (depthwise_float) return false;
  if (rq == nullptr || !fused || transpose_x || RowBytes() > 0) return true;
  // Unswapped, the requantized bytes go through the [chunk, og] tile unless one position.
  return !swap_operands && positions != 1;
}

QConvPlan::Scratch QConvPlan::AllocateScratch(RunContext& rc) const {
  Scratch s;
  if (depthwise_float) return s;
  const int threads = rc.parallel().num_threads();
  // The int32 part rounded up to a cache line: the rows start on one.
  const int64_t c_bytes = (ScratchCElements(threads) * 4 + 63) / 64 * 64;
  s.buffer = rc.Scratch(DType::kUInt8, {std::max<int64_t>(1, c_bytes + ScratchRowBytes(threads))});
  uint8_t* base = s.buffer.data<uint8_t>();
  s.c = reinterpret_cast<int32_t*>(base);
  s.rows = base + c_bytes;
  return s;
}

void QConvPlan::Run(const kernels::Parallel& pool, const void* x, const void* w, int32_t xzp,
                    const int32_t* wzp, int64_t wzp_step, int32_t* y, int32_t* scratch_c,
                    uint8_t* scratch_rows, const QConvRequant* rq) const {
  if (CheckedNumElements(out_dims) == 0) return;
  if (depthwise_float) {
    RunDepthwise(pool, x, w, xzp, wzp, wzp_step, y, rq);
    return;
  }
  // A small convolution (its transposes, im2row and GEMM) runs on the calling thread.
  const kernels::Parallel& par =
      kernels::ParallelForMacs(pool, batch * out_channels * positions * kdim);
  // The weights in the GEMM's form: packed panels (B), or reordered rows when the operands swap
  // (A); constant weights were prepared by PlanQConv.
  std::vector<std::shared_ptr<const kernels::PackedQB>> local_packed;
  std::vector<uint8_t> local_rows;
  const int64_t ksize = g.KernelSize();
  const uint8_t* wr = w_rows ? w_rows->data() : nullptr;
  if (swap_operands && !wr && cols_from_x) {
    wr = static_cast<const uint8_t*>(w);  // [out_channels, cg, k...]: the rows as they are
  } else if (swap_operands && !wr) {
    // [out_channels, cg, k...]; groups are consecutive blocks of og.
    local_rows.resize(static_cast<size_t>(out_channels * kdim));
    ReorderConvWeights(out_channels, cg, ksize, static_cast<const uint8_t*>(w), local_rows.data());
    wr = local_rows.data();
  } else if (!swap_operands && !packed) {
    const auto* bytes = static_cast<const uint8_t*>(w);
    for (int64_t gi = 0; gi < group; ++gi) {
      local_packed.push_back(PackConvWeights(w_signed, og, cg, ksize, bytes + gi * og * kdim));
    }
  }
  const auto& pk = packed ? *packed : local_packed;
  // Whether the GEMM's tiles take the requantization: the target and the multipliers decide, so
  // the answer for all output channels holds for every block.
  const bool fuse_requant = rq != nullptr && (rq->fuses >= 0 ? rq->fuses != 0 : FusesRequant(*rq));
  const auto* xb = static_cast<const uint8_t*>(x);
  const uint8_t pad = static_cast<uint8_t>(xzp);  // int8 zero points keep their bit pattern
  const int slots = blocks_parallel ? std::max(1, par.num_threads()) : 1;
  // Channels-last x (transpose_x). Without scratch (NeedsScratch: none of its parts is used)
  // the pointers below stay null: no offset is applied to a null pointer.
  uint8_t* xt = scratch_rows ? scratch_rows + slots * SlotRowBytes() : nullptr;
  // Scratch slots: one per concurrently running task (a For runs at most num_threads() tasks at
  // once); a task claims a free one. Which slot a task gets changes no result.
  // (On the stack for the usual thread counts: a small convolution allocates nothing per run.)
  constexpr int kStackSlots = 64;
  std::atomic<bool> stack_busy[kStackSlots];
  std::unique_ptr<std::atomic<bool>[]> heap_busy(
      slots > kStackSlots ? new std::atomic<bool>[static_cast<size_t>(slots)] : nullptr);
  std::atomic<bool>* slot_busy = heap_busy ? heap_busy.get() : stack_busy;
  for (int s = 0; s < slots; ++s) slot_busy[s].store(false);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const uint8_t* xg = xb + (n * channels + gi * cg) * in_size;
      if (transpose_x) {
        kernels::TransposeBytes(to_channels_last, xg, xt, par);
        xg = xt;
      }
      int32_t* yg = y ? y + (n * out_channels + gi * og) * positions : nullptr;
      uint8_t* y8 =
          rq ? static_cast<uint8_t*>(rq->y) + (n * out_channels + gi * og) * positions : nullptr;
      const int32_t* wz = wzp ? wzp + gi * og * wzp_step : nullptr;
      // Positions [p0, p0 + pc): im2row, GEMM and epilogue with scratch slot `slot`; `inner`
      // parallelizes within the block (serial when the blocks are the tasks).
      auto run_block = [&](int64_t p0, int64_t pc, int slot, const kernels::Parallel& inner) {
        uint8_t* rows_buf = scratch_rows ? scratch_rows + slot * SlotRowBytes() : nullptr;
        // Requantized [pc, og] (rq, unswapped).
        uint8_t* tile = rows_buf ? rows_buf + RowBytes() : nullptr;
        int32_t* c = scratch_c ? scratch_c + slot * chunk * og : nullptr;
        // Pointwise (1x1, stride 1, no padding): the channels-last x already is the rows.
        const uint8_t* rows = xg + p0 * cg;
        int64_t lda = kdim;
        if (!pointwise && !cols_from_x) {
          lda = RowStride();
          kernels::Im2RowBytesChannelsLast(g, xg, cg, p0, pc, pad, rows_buf, lda, inner);
          rows = rows_buf;
        }
        if (swap_operands) {
          // C [og, pc]: y[n, gi * og + o, p0 + q] directly (row stride `positions`), or the
          // block's sums [og, pc] then requantized (one output channel per row).
          // Packed into a buffer kept per thread: no allocation per block.
          static thread_local kernels::PackedQB packed_b(false, 0, 0);
          if (PackedFromRows()) {
            packed_b.Repack(x_signed, false, kdim, pc, xg + p0, in_size);
          } else if (cols_from_x) {
            // B's rows [(c, k...), pc] of x's channels-first im2col, packed straight from x.
            packed_b.RepackIm2Col(x_signed, g, xg, cg, p0, pc, pad);
          } else {
            packed_b.Repack(x_signed, true, kdim, pc, rows, lda);
          }
          const kernels::PackedQB* b = &packed_b;
          const uint8_t* w_group = wr + gi * og * kdim;
          if (fuse_requant) {
            // One output channel per row of C, requantized in the GEMM's tiles: the bytes go
            // straight to y's rows.
            QGemmBytesToBytes(og, w_group, w_signed, kdim, wz, wz ? wzp_step : 0, *b, &xzp, 0,
                              GemmRequant(*rq, true, gi * og, y8 + p0, positions), inner);
            ApplyOutputTable(*rq, og, pc, y8 + p0, positions);
            return;
          }
          QGemmBytesToI32(og, w_group, w_signed, kdim, wz, wz ? wzp_step : 0, *b, &xzp, 0,
                          rq ? c : yg + p0, rq ? pc : positions, inner);
          if (rq) RequantConvRows(*rq, c, pc, og, pc, gi * og, y8 + p0, positions);
          return;
        }
        uint8_t* bytes = positions == 1 ? y8 : tile;
        if (fuse_requant) {
          // Each position's og bytes (one per output channel) go into the byte tile [pc, og],
          // which is transposed into y's [og, positions] layout; one position (a
          // squeeze-and-excitation layer on a pooled image) is y's [og, 1] as it is.
          QGemmBytesToBytes(pc, rows, x_signed, lda, &xzp, 0, *pk[gi], wz, wzp_step,
                            GemmRequant(*rq, false, gi * og, bytes, og), inner);
          ApplyOutputTable(*rq, pc, og, bytes, og);
          if (positions != 1) kernels::TransposeByteMatrix(tile, og, y8 + p0, positions, pc, og);
        } else if (rq) {
          // The same through int32 sums and the requantization of the whole block.
          QGemmBytesToI32(pc, rows, x_signed, lda, &xzp, 0, *pk[gi], wz, wzp_step, c, og, inner);
          RequantConv(*rq, c, og, pc, og, gi * og, 1, bytes, og);
          if (positions != 1) kernels::TransposeByteMatrix(tile, og, y8 + p0, positions, pc, og);
        } else {
          QGemmBytesToI32(pc, rows, x_signed, lda, &xzp, 0, *pk[gi], wz, wzp_step, c, og, inner);
          TransposeToChannelsFirst(c, pc, og, yg + p0, positions);
        }
      };
      const int64_t num_blocks = (positions + chunk - 1) / chunk;
      if (!blocks_parallel) {
        for (int64_t bi = 0; bi < num_blocks; ++bi) {
          run_block(bi * chunk, std::min(chunk, positions - bi * chunk), 0, par);
        }
        continue;
      }
      par.For(num_blocks, [&](int64_t b0, int64_t b1) {
        int slot = 0;
        while (slot_busy[slot].exchange(true, std::memory_order_acquire)) {
          slot = (slot + 1) % slots;
        }
        for (int64_t bi = b0; bi < b1; ++bi) {
          run_block(bi * chunk, std::min(chunk, positions - bi * chunk), slot,
                    kernels::SerialParallel());
        }
        slot_busy[slot].store(false, std::memory_order_release);
      });
    }
  }
}

namespace {

class ConvIntegerOp final : public Op {
 public:
  explicit ConvIntegerOp(const OpInit& init) {
    attrs_ = ConvAttributes::Read(init);
    if (init.num_inputs() < 2 || init.num_inputs() > 4)
      init.Fail("ConvInteger takes 2 to 4 inputs, got " + std::to_string(init.num_inputs()));
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
    ctx.RequireDType(1, {DType::kUInt8, DType::kInt8});
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    if (ctx.has_input(3)) ctx.RequireSameDType(1, 3);
    ctx.set_output_dtype(0, DType::kInt32);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    if (ctx.has_input(2) && !IsOneElement(ctx.input_dims(2))) {
      ctx.Fail("x_zero_point must be a scalar (per-tensor), got shape " +
               DimsToString(ctx.input_dims(2)));
    }
    auto plan = std::make_shared<const QConvPlan>(PlanQConv(ctx, attrs_, 0, 1, 3));
    ctx.set_output(0, DType::kInt32, plan->out_dims);
    const bool has_xz = ctx.has_input(2), has_wz = ctx.has_input(3);
    return [plan, has_xz, has_wz](RunContext& rc) {
      const int32_t xzp = has_xz ? FirstZeroPointAsI32(rc.input(2)) : 0;
      const std::vector<int32_t> wz = has_wz ? ZeroPointsAsI32(rc.input(3)) : std::vector<int32_t>();
      const int64_t wz_step = wz.size() > 1 ? 1 : 0;
      const QConvPlan::Scratch scratch = plan->AllocateScratch(rc);
      plan->Run(rc.parallel(), rc.input(0).raw_data(), rc.input(1).raw_data(), xzp,
                has_wz ? wz.data() : nullptr, wz_step, rc.output(0).data<int32_t>(), scratch.c,
                scratch.rows);
    };
  }

 private:
  ConvAttributes attrs_;
};

}  // namespace

void RegisterConvIntegerOps(OpRegistry& registry) {
  registry.Register("", "ConvInteger", 10, MakeFactory<ConvIntegerOp>());
}

}  // namespace quant_ops
}  // namespace simplecpp::graph
