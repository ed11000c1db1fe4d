// ConvTranspose's attributes and output geometry, shared by the float ConvTranspose
// (conv_transpose.cc) and the fused integer QLinearConvTranspose (quant/qlinear_conv_transpose.cc)
// so that both accept the same attributes and compute the same output size and pads.
//
// Output size per spatial dim d (spec): out = stride*(in-1) + output_padding + (k-1)*dil + 1
// - pad_begin - pad_end. With output_shape (or auto_pad SAME_*, where out = in * stride) the
// pads come from total = stride*(in-1) + output_padding + (k-1)*dil + 1 - out: SAME_UPPER puts
// total/2 at the beginning and the rest at the end; NOTSET and SAME_LOWER put the larger half at
// the beginning. A negative total (output larger than the kernel reach) leaves zeros (bias).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/op.h"
#include "graph/ops/window_attributes.h"
#include "kernels/conv/conv.h"

namespace simplecpp::graph {

// X and W's shapes once checked against each other and against the attributes.
struct ConvTransposeShape {
  int rank = 0;  // spatial dims
  int64_t batch = 0, channels = 0, group = 0;
  int64_t cg = 0;  // input channels per group
  int64_t og = 0;  // output channels per group (W's dim 1)
  int64_t out_channels = 0;
  std::vector<int64_t> oshape;  // output_shape's spatial dims; empty when it is absent
};

struct ConvTransposeAttributes {
  ConvAttributes conv;  // auto_pad, dilations, group, kernel_shape, pads, strides
  std::vector<int64_t> output_padding, output_shape;

  // Reads ConvTranspose's attributes; output_padding must be >= 0.
  static ConvTransposeAttributes Read(const OpInit& init);

  // Checks X [N, C, spatial...] and W [C, M/group, k...] against each other and the attributes'
  // sizes (1 to 3 spatial dims). Errors name X and W as the ConvTranspose spec does.
  ConvTransposeShape CheckShapes(const PrepareContext& ctx, const Dims& xd, const Dims& wd) const;

  // Y's dims [N, M, out...], and *g with Y's spatial dims as the image and X's as the grid (the
  // "convolution" col2im sees): per dim the pads come from the given output size (output_shape,
  // auto_pad SAME_*) or from the pads attribute.
  Dims ResolveGeometry(const PrepareContext& ctx, const ConvTransposeShape& s, const Dims& xd,
                       const Dims& wd, kernels::ConvGeometry* g) const;
};

// The pads of one dim whose output size is given (output_shape or auto_pad SAME_*): total =
// full - out is split in halves rounded down (floor, also for a negative total), as the ONNX
// reference does; SAME_UPPER puts the floor half at the beginning, NOTSET and SAME_LOWER at the
// end.
void ConvTransposePadsForOutputSize(int64_t full, int64_t out, AutoPad auto_pad, int64_t* pb,
                                    int64_t* pe);

}  // namespace simplecpp::graph
