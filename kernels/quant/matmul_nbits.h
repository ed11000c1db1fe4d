// Matrix products with block-quantized low-bit weights kept packed (ONNX Runtime's MatMulNBits
// layout, used as given: no repacking, so the weights take exactly their file size in memory):
//   Y[M,N] = A[M,K] * W^T + bias,   W[n,k] = (q[n,k] - zp[n,b]) * scale[n,b],  b = k / block_size
// The weights are unpacked in registers inside the dot products; a float32 copy of W never exists.
//
// Layout (MatMulNBits): packed is [N][k_blocks][blob] bytes, k_blocks = ceil(K / block_size),
// blob = block_size * bits / 8. 4-bit: weight k of a block is in byte k/2, even k in the low
// nibble. 8-bit: one byte per weight. The last block of a row is padded when block_size does not
// divide K (the padding codes are never used: they meet zero A values). scales are [N][k_blocks]
// float32. Zero points are absent (2^(bits-1)), packed uint8 (per row ceil(k_blocks*bits/8)
// bytes, 4-bit low nibble first) or float32 [N][k_blocks].
//
// Numerics (the same for GemvNBitsF32 and GemmNBitsF32, so M below kNBitsViaF32MinRows gives the
// same bits per row; GemmNBitsViaF32 below is the float GEMM's):
// with L the float32 lanes of the target's vectors, each output element is
//   for each block b: lanes d = sum over the block's k of a[k] * (float(q[k]) - zp)
//                           (one multiply-add chain per lane, in k order within the lane;
//                            q - zp is exact for integer zero points, whether the kernel
//                            subtracts before or after the conversion to float32)
//                     lanes acc = acc + d * scale[n,b]            (multiply-add)
//   y = (sum of acc's lanes, Highway's fixed reduction) + bias[n]
// The scale is factored out of each block (one multiply per block, not per weight). Results are
// independent of the thread count; they differ between targets (L, FMA or not) only by
// summation order: |y - exact| <= (block_size/L + k_blocks + log2 L + 2) * 2^-24 * sum|a*w|
// roughly, tested against a float64 reference in tests/kernels/quant/matmul_nbits_test.cc.
//
// Block minimums (optional, simplecpp's own: ggml's Q4_1 weights, w = q * scale + min): every
// weight of block b of row n gets min[n,b] added after its (q - zp) * scale. The kernels add
// min[n,b] * (sum of the block's a[k]) per block instead, the block sums of each A row taken
// once per call in k order and the products summed over b in order after the lanes' sum, the
// same way in GemvNBitsF32 and GemmNBitsF32 (so they still agree bit for bit); GemmNBitsViaF32
// adds min to each dequantized weight. Error bound: the k_blocks term above grows by the same
// count, against sum |a * w| of the weights with their minimums.
//
// Threading: tasks of kNBitsRowsPerTask output columns (boundaries depend on N only); K is
// never split.
#pragma once

#include <cstdint>

#include "kernels/parallel.h"

namespace simplecpp::kernels {

enum class NBitsZeroPoints : int { kDefault, kPackedU8, kFloat32 };

constexpr int64_t kNBitsRowsPerTask = 16;

// A view of the weights of one MatMulNBits (the op validates sizes before building it).
struct NBitsWeights {
  int bits = 4;  // 4 or 8
  int64_t n = 0, k = 0, block_size = 32;  // block_size: power of two >= 16
  const uint8_t* packed = nullptr;        // [n][k_blocks][blob_bytes]
  const float* scales = nullptr;          // [n][k_blocks]
  NBitsZeroPoints zp_kind = NBitsZeroPoints::kDefault;
  const uint8_t* zp_packed = nullptr;  // kPackedU8: [n][zp_row_bytes]
  const float* zp_f32 = nullptr;       // kFloat32: [n][k_blocks]
  const float* block_min = nullptr;    // optional [n][k_blocks], added to each weight of a block

  int64_t k_blocks() const { return (k + block_size - 1) / block_size; }
  int64_t blob_bytes() const { return block_size * bits / 8; }
  int64_t zp_row_bytes() const { return (k_blocks() * bits + 7) / 8; }
  // The zero point of block b of row r, as float32 (exact for the integer ones).
  float ZeroPoint(int64_t r, int64_t b) const { return ZeroPointIn(r, b, k_blocks(), zp_row_bytes()); }
  // As ZeroPoint, with k_blocks() and zp_row_bytes() computed by the caller (hot loops).
  float ZeroPointIn(int64_t r, int64_t b, int64_t kb, int64_t zp_row) const {
    switch (zp_kind) {
      case NBitsZeroPoints::kPackedU8: {
        if (bits == 8) return static_cast<float>(zp_packed[r * zp_row + b]);
        const uint8_t byte = zp_packed[r * zp_row + b / 2];
        return static_cast<float>((byte >> (4 * (b & 1))) & 15);
      }
      case NBitsZeroPoints::kFloat32:
        return zp_f32[r * kb + b];
      case NBitsZeroPoints::kDefault:
        break;
    }
    return static_cast<float>(1 << (bits - 1));
  }
};

// y [M,N] (row stride ldy) = a [M,K] (row stride lda) * W^T + bias (bias: [N] or nullptr).
// Row by row, each streaming every packed weight once: the memory-bound decode case (M = 1).
void GemvNBitsF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w, const float* bias,
                  float* y, int64_t ldy, const Parallel& parallel);
// As GemvNBitsF32 (bit for bit), but each pair of weight rows is dequantized once into a small
// per-task buffer of float32 (q - zp) and reused by all M rows: the compute-bound prefill case.
void GemmNBitsF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w, const float* bias,
                  float* y, int64_t ldy, const Parallel& parallel);
// Prefill of many rows: panels of 64 weight rows dequantized once per call into float32
// (q - zp) * scale, then the float32 GEMM (kernels/gemm/gemm.h) on them, so the weights are
// unpacked once per call instead of once per row tile. Not the bits of GemvNBitsF32 (the scale is
// applied per weight and the GEMM's summation order is its own); within float32 rounding of the
// same products, the same for any thread count. The per-task panel is 64 * K floats.
void GemmNBitsViaF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w,
                     const float* bias, float* y, int64_t ldy, const Parallel& parallel);
// Rows from which MatMulNBitsF32 takes GemmNBitsViaF32: below it, unpacking in registers per row
// tile costs less than dequantizing every weight once.
constexpr int64_t kNBitsViaF32MinRows = 16;
// GemvNBitsF32 for M = 1, GemmNBitsF32 for M below kNBitsViaF32MinRows, GemmNBitsViaF32 above.
void MatMulNBitsF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w,
                    const float* bias, float* y, int64_t ldy, const Parallel& parallel);

}  // namespace simplecpp::kernels
