// MatMulNBits with A quantized to int8 per block: what com.microsoft MatMulNBits allows with
// accuracy_level = 4 ("int8 compute"), the level ONNX Runtime's own int8 kernels run at and the
// one LLM exporters write for CPUs. Integer dot products of the packed codes with int8 A, one
// float32 epilogue per block: a decode step (M = 1) reads each weight once with a few integer
// operations per 64 weights instead of a float multiply-add per weight.
//
// Numerics (every target and thread count gives the same bits; the scalar code in
// tests/kernels/quant/matmul_nbits_q8_test.cc restates them):
//   A, per row and per weight block b of B (the same block_size; zero past K):
//     amax = max |a[k]|; sa[b] = amax / 127; qa[k] = round_half_even(a[k] * (127 / amax)) in
//     [-127, 127], int8 (a[k] / amax * 127 where 127 / amax overflows); amax = 0 gives
//     sa = 0 and qa = 0; a non-finite value in the block gives sa = NaN and qa = 0 (so the
//     row's outputs become NaN).
//   per output n and block b (exact integers, |c| < 2^24 for block_size <= 256):
//     c = sum over the block of q[n,k] * qa[k] - zp[n,b] * sum qa[k]
//     acc[b % 16] = acc[b % 16] + float(c) * (scale[n,b] * sa[b])   (a product, then a sum:
//                   two roundings, no FMA), 16 accumulators starting at +0, every group of 16
//                   blocks adding +0 in the lanes past the last block
//   y = the 16 accumulators summed as a tree (lane i += lane i + h, h = 8, 4, 2, 1) + bias[n].
// Against float arithmetic on the dequantized weights the error is that of A's rounding: each
// product a * w moves by at most |w| * sa / 2.
//
// Where it runs: bits 4 or 8, block_size <= 256, zero points absent or packed uint8, no block
// minimums (NBitsQ8Applies); elsewhere the caller keeps the float32 kernels. AVX3_DL (VNNI)
// has a kernel for 4-bit blocks of 32 (ONNX Runtime's default); other targets and shapes take
// the portable integer loop, which gives the same bits.
#pragma once

#include <cstdint>

#include "kernels/parallel.h"
#include "kernels/quant/matmul_nbits.h"

namespace simplecpp::kernels {

// Whether GemvNBitsQ8 takes these weights (depends on the shape only, never on the target).
bool NBitsQ8Applies(const NBitsWeights& w);

// y [M,N] (row stride ldy) = a [M,K] (row stride lda), quantized as above, times W^T + bias
// (bias: [N] or nullptr). Each row of A streams the weights once: meant for small M (decode).
void GemvNBitsQ8(int64_t m, const float* a, int64_t lda, const NBitsWeights& w, const float* bias,
                 float* y, int64_t ldy, const Parallel& parallel);

}  // namespace simplecpp::kernels
