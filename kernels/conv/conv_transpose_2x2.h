// ConvTranspose with a 2x2 kernel and stride 2 (no padding, dilation 1, one group): the upsampling
// layer of segmentation and text-detection heads. Each output pixel (2i + a, 2j + b) receives one
// tap, sum over input channels of x[c, i, j] * w[c, o, a, b], so the four taps of a vector of
// input columns are four register accumulators over the input channels, written as two
// interleaved output rows: no column matrix, and Y is written once.
#pragma once

#include <cstdint>

#include "kernels/elementwise/post_op.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// y [cout, 2h, 2w] = ConvTranspose(x [channels, h, w], w [channels, cout, 2, 2] (ONNX's layout
// for one group)) + bias (bias [cout] or nullptr), then `post` on each output channel's two rows
// per input row once they are written. Every output is fma(w, x, acc) over the input channels in
// order from 0, then + bias: the same bits for any thread count.
void ConvTranspose2x2S2F32(int64_t channels, int64_t h, int64_t w, const float* x, int64_t cout,
                           const float* weights, const float* bias, float* y,
                           const Parallel& parallel, const PostOpF32& post = {});

}  // namespace simplecpp::kernels
