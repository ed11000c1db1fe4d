// Block quantization of a weight matrix, the form weight-only quantizers write: W [K, N] split
// along K (the reduction axis) into blocks of `block` rows (the last one may be shorter), one
// scale (and, asymmetric, one zero point) per block and column:
//   w_hat[k, n] = (code[k, n] - zero_point[k / block, n]) * scale[k / block, n]
// Plain data and functions: no graph, no Highway.
//
// The rules (the same for 4 and 8 bits; qmax_u = 2^bits - 1, qmax_s = 2^(bits-1) - 1):
//  - asymmetric: unsigned codes [0, qmax_u]. The block's range is widened to contain 0
//    (lo = min(0, min w), hi = max(0, max w)), scale = (hi - lo) / qmax_u and
//    zero_point = clamp(round_half_even(-lo / scale), 0, qmax_u), as ONNX Runtime's blockwise
//    asymmetric quantizer does.
//  - symmetric: signed codes [-qmax_s, qmax_s] (int4 -7..7, int8 -127..127; -2^(bits-1) is never
//    written), scale = max|w| / qmax_s, zero point 0. ONNX Runtime's 4-bit symmetric quantizer
//    instead divides the signed extreme by -8, which uses code -8 but can clip the other side
//    to 7 (an error of up to a full step); this rule never clips.
//  - codes: QuantizeLinear's saturate(round_half_even(w / scale) + zero_point), the division in
//    float32.
//  - an all-zero block gets scale 1 (any scale represents it exactly) and zero point 0.
// Every element then satisfies |w - w_hat| <= scale / 2 up to float32 rounding of the division.
// A scale may be rounded to a coarser storage type (float16) by `round_scale`, which must not
// return less than its argument: the zero point and codes are computed from the stored scale, so
// the bound still holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simplecpp::quant {

// The code range of a block-quantized weight.
void BlockCodeRange(int bits, bool symmetric, int32_t* lo, int32_t* hi);

// The scale of a block whose values lie in [w_min, w_max] (finite).
float BlockScale(float w_min, float w_max, int bits, bool symmetric);
// The zero point that goes with `scale` for a block whose minimum is w_min (0 when symmetric).
int32_t BlockZeroPoint(float w_min, float scale, int bits, bool symmetric);

struct BlockQuantized {
  int64_t k = 0, n = 0, block = 0;
  int bits = 4;
  bool symmetric = false;
  std::vector<int32_t> codes;        // [k, n]; signed when symmetric
  std::vector<float> scales;         // [blocks, n], as stored (after round_scale)
  std::vector<int32_t> zero_points;  // [blocks, n]; all 0 when symmetric

  int64_t blocks() const { return (k + block - 1) / block; }
  float Dequantized(int64_t row, int64_t col) const {
    const std::size_t p = static_cast<std::size_t>((row / block) * n + col);
    return static_cast<float>(codes[static_cast<std::size_t>(row * n + col)] - zero_points[p]) *
           scales[p];
  }
};

// Quantizes the row-major [k, n] float32 matrix w (finite values) in blocks of `block` rows.
// round_scale: nullptr (float32 scales) or the storage rounding of each scale (see above).
BlockQuantized QuantizeBlocked(const float* w, int64_t k, int64_t n, int64_t block, int bits,
                               bool symmetric, float (*round_scale)(float) = nullptr);

// ONNX Runtime's MatMulNBits form of the same weights (W transposed to [n, k]):
//  - B: uint8 [n, blocks, block * bits / 8]; codes unsigned (a symmetric code c is stored as
//    c + 2^(bits-1), MatMulNBits' default zero point), 4-bit packed two per byte, even k in the
//    low nibble; the padding of a partial last block holds the zero point (it dequantizes to 0).
//  - scales: [n, blocks].
//  - zero points (asymmetric only): uint8 per row ceil(blocks * bits / 8) bytes, 4-bit two per
//    byte, even block in the low nibble.
std::vector<uint8_t> PackNBitsWeights(const BlockQuantized& q);
std::vector<float> NBitsScales(const BlockQuantized& q);
std::vector<uint8_t> PackNBitsZeroPoints(const BlockQuantized& q);

}  // namespace simplecpp::quant
