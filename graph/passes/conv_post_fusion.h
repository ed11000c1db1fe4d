// Post-op fusion: a Conv (float32 or 16-bit) or a float32 ConvTranspose whose output feeds only
// an elementwise chain (a FusedElementwise step, or one fusible elementwise step) runs that chain
// itself, on each finished run of its output while it is in cache (kernels::PostOpF32 / PostOp16),
// and produces the chain's result directly.
//
// Runs on a plan's steps after elementwise chain fusion (graph/passes/elementwise_fusion.h). The
// chain's operands must be one-element constants (captured as values) of rank <= 3, so that the
// chain's result has the Conv output's dims. The chain's steps are the same kernels on the same
// elements in the same order, so the result is bit-identical to the unfused plan: it removes the
// chain's pass over memory (HardSwish and the affine scale/shift mobile exports put after every
// convolution), not any arithmetic.
#pragma once

#include <vector>

#include "graph/executor.h"

namespace simplecpp::graph {

// Rewrites *steps in place (the fused Conv takes over the chain's outputs; the chain step goes).
// `keep` lists value ids that must stay materialized (graph outputs). Returns the indices (in the
// new *steps) of the Conv steps that took a chain: they must be prepared again.
std::vector<size_t> FuseConvPostChains(std::vector<PlanStep>* steps,
                                       const std::vector<ValueState>& values,
                                       const std::vector<int>& keep);

}  // namespace simplecpp::graph
