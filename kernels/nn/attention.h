// Transformer kernels: scaled dot-product attention (ONNX Attention 23/24), rotary position
// embedding (RotaryEmbedding 23) and RMS normalization (RMSNormalization 23).
//
// Every tensor may be stored as float32, float16 or bfloat16 (FloatStorage); the arithmetic is
// float32 throughout, with one rounding per stored element. The attention products run through
// kernels/gemm/gemm.h (GemmMixed) and the softmax through kernels/nn/softmax.h (SoftmaxF32).
#pragma once

#include <cstdint>

#include "kernels/parallel.h"

namespace simplecpp::kernels {

// Storage of a floating-point tensor.
enum class FloatStorage : int { kF32, kF16, kBF16 };

// ---- Attention -------------------------------------------------------------------------------
// For batch b, query head h (kv head g = h / (q_heads / kv_heads)), query row i and key j:
//   s[i,j] = scale * sum_d Q[b,h,i,d] * K[b,g,j,d]
//   s      = softcap * tanh(s / softcap)                       (only when softcap > 0)
//   s     += bias[i,j]      (mask, causal and padding terms: 0 or -inf, or the float mask)
//   p      = softmax_j(s);  Y[b,h,i,:] = sum_j p[i,j] * V[b,g,j,:]
// Q, K, V and Y are addressed through strides (in elements; the innermost dimension is
// contiguous), so both [B,H,S,D] and [B,S,H*D] layouts are read and written in place.
enum class AttentionMaskType : int { kNone, kBool, kFloat };  // kFloat: stored as `type`

// Which intermediate the optional qk output receives ([B, q_heads, q_len, kv_len], contiguous).
enum class AttentionQkStage : int {
  kScaled,     // scale * Q K^T
  kSoftcapped, // after the softcap (the scaled product when softcap == 0)
  kBiased,     // after adding the bias (softcap, then mask)
  kSoftmax,    // the probabilities
};

struct AttentionArgs {
  FloatStorage type = FloatStorage::kF32;  // Q, K, V, Y, a float mask and the qk output
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_len = 0, kv_len = 0;            // kv_len: total keys (past + new)
  int64_t head_size = 0, v_head_size = 0;
  // Element (b, head, row, d) of X is at x + b*x_stride[0] + head*x_stride[1] + row*x_stride[2] + d.
  const void* q = nullptr;
  int64_t q_stride[3] = {0, 0, 0};
  const void* k = nullptr;
  int64_t k_stride[3] = {0, 0, 0};
  const void* v = nullptr;
  int64_t v_stride[3] = {0, 0, 0};
  void* y = nullptr;
  int64_t y_stride[3] = {0, 0, 0};
  float scale = 1.0f;
  float softcap = 0.0f;  // <= 0: none
  // Mask element (b, h, i, j) at mask + b*mask_stride[0] + h*mask_stride[1] + i*mask_stride[2]
  // + j for j < mask_len (strides 0 on broadcast axes); keys j >= mask_len are masked out
  // (-inf), as ONNX pads a short mask. Bool: true attends (0), false is -inf; float: added.
  AttentionMaskType mask_type = AttentionMaskType::kNone;
  const void* mask = nullptr;
  int64_t mask_stride[3] = {0, 0, 0};
  int64_t mask_len = 0;
  // Causal: key j is masked for query i when j > i + offset_b, where offset_b is
  // nonpad_kv_seqlen[b] - q_len when causal_offset_from_nonpad, else causal_offset.
  bool causal = false;
  int64_t causal_offset = 0;
  bool causal_offset_from_nonpad = false;
  // [batch] or nullptr: keys j >= nonpad_kv_seqlen[b] are masked out.
  const int64_t* nonpad_kv_seqlen = nullptr;
  void* qk_out = nullptr;  // nullptr: not written
  AttentionQkStage qk_stage = AttentionQkStage::kScaled;
};

// K^T and V of each (b, kv head) are packed once (kernels/gemm/gemm.h PackedBF32), then the work is
// split into tasks of (b, h, block of 32 query rows); each writes its own Y (and qk) rows.
void AttentionForward(const AttentionArgs& args, const Parallel& parallel);

// ---- RotaryEmbedding ---------------------------------------------------------------------
// x and y have the same layout: element (b, s, h, d) at b*stride[0] + s*stride[1] + h*stride[2]
// + d. For each (b, s), the cos/sin row is cache[r] with r = position_ids[b*seq + s] when
// position_ids is not null (cache [cache_rows, rotary_dim/2]), else r = b*seq + s (cache
// [batch, seq, rotary_dim/2]). The first rotary_dim elements of each head are rotated as pairs
// (d, d + rotary_dim/2), or (2t, 2t+1) when interleaved:
//   out1 = cos*x1 - sin*x2,  out2 = sin*x1 + cos*x2;  elements past rotary_dim are copied.
// Returns -1, or the index of the first position id outside [0, cache_rows) (nothing written).
// x and y may be the same buffer; otherwise they must not overlap.
int64_t RotaryEmbedding(FloatStorage type, const void* x, void* y, const void* cos_cache,
                        const void* sin_cache, const int64_t* position_ids, int64_t cache_rows,
                        int64_t batch, int64_t seq, int64_t heads, int64_t head_size,
                        int64_t rotary_dim, bool interleaved, const int64_t stride[3],
                        const Parallel& parallel);

// ---- RMSNormalization ----------------------------------------------------------------------
// x is [rows, n] stored as x_type, y is [rows, n] stored as y_type, scale is [n] float32:
//   y = x / sqrt(mean(x^2) + epsilon) * scale.
void RmsNormalizeRows(FloatStorage x_type, const void* x, FloatStorage y_type, void* y,
                      int64_t rows, int64_t n, const float* scale, float epsilon,
                      const Parallel& parallel);

}  // namespace simplecpp::kernels
