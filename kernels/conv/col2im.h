// col2im: the adjoint of im2col (kernels/conv/conv.h). Columns [channels * KernelSize(), P] (P =
// positions of the convolution's output grid `g.out`) are scatter-added into an image
// [channels, in...]: ConvTranspose (col = W^T x X, then col2im), QLinearConvTranspose (the same
// in int32) and the Col2Im op.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// image[c, :] = bias ? bias[c] : 0 for c < channels; image is [channels, image_size].
void Col2ImInitF32(int64_t channels, int64_t image_size, const float* bias, float* image,
                   const Parallel& parallel);

// image[c, i...] += col[(c, k...), q] for every column q = position p_begin + q of g.out (flattened
// row-major) and kernel offset k, where i_d = p_d * stride_d - pad_d + k_d * dilation_d; taps
// outside [0, g.in_d) are dropped. col is [channels * KernelSize(), p_count] row-major. The pads
// may be negative (ConvTranspose with an output_shape larger than the natural one).
// Parallel over channels: each task writes its own channels only.
void Col2ImF32(const ConvGeometry& g, const float* col, int64_t channels, int64_t p_begin,
               int64_t p_count, float* image, const Parallel& parallel);

// Col2ImF32 on int32 sums: each add wraps modulo 2^32 (int32 arithmetic of the integer ops, which
// makes the result independent of the order of the adds).
void Col2ImI32(const ConvGeometry& g, const int32_t* col, int64_t channels, int64_t p_begin,
               int64_t p_count, int32_t* image, const Parallel& parallel);

// Whether g's kernel taps tile the image exactly, each image element receiving one tap of one
// column: per spatial dim kernel == stride, dilation 1 (or kernel 1), no padding and
// in == out * stride (ConvTranspose upsampling by its kernel size, e.g. 2x2 stride 2).
bool Col2ImIsDisjoint(const ConvGeometry& g);

// For a disjoint g (Col2ImIsDisjoint): image[c, i...] = (bias ? bias[c] : 0) + col[(c, k...), q]
// for the image elements that columns [p_begin, p_begin + p_count) cover -- the same values
// Col2ImInitF32 followed by Col2ImF32 give, written once instead of initialized and then added
// to. Parallel over (channel, outer kernel taps): each task writes its own image rows.
void Col2ImDisjointF32(const ConvGeometry& g, const float* col, int64_t channels, int64_t p_begin,
                       int64_t p_count, const float* bias, float* image, const Parallel& parallel);
// Col2ImDisjointF32 on int32 sums (bias + col wraps modulo 2^32).
void Col2ImDisjointI32(const ConvGeometry& g, const int32_t* col, int64_t channels, int64_t p_begin,
                       int64_t p_count, const int32_t* bias, int32_t* image,
                       const Parallel& parallel);
// The same placement of bytes, with no bias, channel c's image at image + c * channel_stride
// (>= g.InSize(): a band of rows inside a larger tensor): as every image element receives
// exactly one column element, an elementwise function of the sums (QLinearConvTranspose's
// requantization) may be applied to col before instead of to the image after.
void Col2ImDisjointBytes(const ConvGeometry& g, const uint8_t* col, int64_t channels,
                         int64_t p_begin, int64_t p_count, uint8_t* image,
                         int64_t channel_stride, const Parallel& parallel);

}  // namespace simplecpp::kernels
