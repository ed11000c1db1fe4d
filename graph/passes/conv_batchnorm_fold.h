// Conv / ConvTranspose + per-channel affine folding: the chain of steps that follow a float32,
// float16 or bfloat16 Conv or ConvTranspose with constant weights, each the only consumer of the
// one before, while they are inference-mode BatchNormalizations or Add / Sub / Mul with a
// per-channel constant (dims all 1 but the channel axis), becomes part of the weights and bias:
// y = a[c] * sums + b[c], with, per step,
//   BatchNormalization: s = scale[c] / sqrt(var[c] + epsilon); a[c] *= s;
//                       b[c] = (b[c] - mean[c]) * s + B[c]
//   Add k: b[c] += k[c]    Sub k: b[c] -= k[c] (k - y: a, b = -a, k - b)
//   Mul k: a[c] *= k[c], b[c] *= k[c]
//   W'[..channel c..] = W * a[c]        b' = b (the Conv's bias, or 0, to start with)
// computed in double and rounded once to float32 (also for a 16-bit op: it computes in float32
// and rounds each output once to 16 bits, where the unfused plan rounds after every step). Not
// bit-identical to the unfused plan (the products are rounded in a different place); tests bound
// the difference. Exporters that keep BatchNorm after every convolution (paddle2onnx, which
// also writes ConvTranspose's bias as an Add) then lose one pass over every activation per step,
// and the activation after the chain can fuse into a Conv (graph/passes/conv_post_fusion.h).
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
