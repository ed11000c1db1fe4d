// Depthwise convolution (group == input channels): every output channel oc reads only input
// channel oc / multiplier, so the work is a small stencil per channel rather than a GEMM.
#pragma once

#include <cstdint>

#include "kernels/conv/conv.h"
#include "kernels/elementwise/post_op.h"
#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// 1-D or 2-D (g.rank 1 or 2) depthwise convolution of one image.
//   x: [channels, in...]; w: [channels*multiplier, kernel...]; bias: [channels*multiplier] or
//   nullptr; y: [channels*multiplier, out...]. Each output is bias + taps in kernel order.
// Parallel over groups of output channels (group size depends only on the shape). `post`, when
// set, is applied to each output channel right after it is computed.
void DepthwiseConvF32(const ConvGeometry& g, const float* x, int64_t channels, int64_t multiplier,
                      const float* w, const float* bias, float* y, const Parallel& parallel,
                      const PostOpF32& post = {});

// The same with x as 16-bit values of `kind` (float16 or bfloat16 bits), widened exactly (as
// Widen16) where they are read, without a float32 copy of the image; y float32: the same bits as
// DepthwiseConvF32 of the widened x.
void DepthwiseConvFrom16(const ConvGeometry& g, Float16Kind kind, const uint16_t* x,
                         int64_t channels, int64_t multiplier, const float* w, const float* bias,
                         float* y, const Parallel& parallel, const PostOpF32& post = {});

}  // namespace simplecpp::kernels
