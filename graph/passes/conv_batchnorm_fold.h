// Conv + BatchNormalization folding: an inference-mode BatchNormalization that is the only
// consumer of a float32, float16 or bfloat16 Conv with constant weights becomes part of the
// Conv's weights and bias:
//   a[c] = scale[c] / sqrt(var[c] + epsilon)
//   W'[c, ...] = W[c, ...] * a[c]        b'[c] = (b[c] - mean[c]) * a[c] + B[c]
// computed in double and rounded once to float32 (also for a 16-bit Conv: it computes in float32
// and rounds each output once to 16 bits, where the unfused plan rounds the Conv's output and
// then BatchNorm's). Not bit-identical to the unfused plan (the products are
// rounded in a different place); tests bound the difference. Exporters that keep BatchNorm after
// every convolution (paddle2onnx) then lose one pass over every activation, and the activation
// after the BatchNorm can fuse into the Conv (graph/passes/conv_post_fusion.h).
#pragma once

#include <vector>

#include "graph/executor.h"

namespace simplecpp::graph {

// Rewrites *steps in place: the Conv takes over the BatchNormalization's output; the folded
// weights and bias replace the constants of values the Conv alone reads (*values is edited, never
// resized). `keep` lists value ids that must stay materialized (graph outputs). Returns the
// indices (in the new *steps) of the Conv steps that changed: they must be prepared again.
std::vector<size_t> FoldConvBatchNorm(std::vector<PlanStep>* steps,
                                      std::vector<ValueState>* values,
                                      const std::vector<int>& keep);

}  // namespace simplecpp::graph
