// col2im: the adjoint of im2col (kernels/conv/conv.h). Columns [channels * KernelSize(), P] (P =
// positions of the convolution's output grid `g.out`) are scatter-added into an image
// [channels, in...]: ConvTranspose (col = W^T x X, then col2im) and the Col2Im op.
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

}  // namespace simplecpp::kernels
