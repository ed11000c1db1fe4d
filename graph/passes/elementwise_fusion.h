// Elementwise fusion: chains of float elementwise steps become one step
// (graph/ops/elementwise_fused.h) that makes one pass over memory and allocates no intermediates.
//
// Runs on a plan's steps after dtype inference and constant folding (Plan::Build), where it knows
// each value's dtype, which values are constants and who consumes what. A chain starts at a
// fusible step reading a running value x and grows while the running value has exactly one
// consumer, is not a graph output, and that consumer is fusible with its other operand a
// one-element constant of the same dtype or x itself. Chains of one step stay as they are.
// Results are bit-identical to the unfused steps (the same kernels on the same elements).
#pragma once

#include <memory>
#include <vector>

#include "graph/executor.h"
#include "graph/ops/elementwise_fused.h"

namespace simplecpp::graph {

// Rewrites *steps in place (values keep their ids; fused-away intermediates simply have no
// producer any more). `keep` lists value ids that must stay materialized (graph outputs).
// Returns the indices (in the new *steps) of the fused steps, which the caller may prepare.
std::vector<size_t> FuseElementwiseChains(std::vector<PlanStep>* steps,
                                          const std::vector<ValueState>& values,
                                          const std::vector<int>& keep);

// Whether `step` alone is a chain step on x (a fusible unary op or Clip on x, or a binary op of
// x with a one-element constant or with x): its program step, and the constant's value id in
// *operand_value (-1 when it reads no constant).
bool AsSingleChainStep(const PlanStep& step, const std::vector<ValueState>& values, int x,
                       elementwise::FusedStep* out, int* operand_value);

// The chain that `consumer` computes on x, to be run in place by whatever produces x: a
// FusedElementwise step reading x, or one fusible elementwise step on x, in x's dtype (float32,
// float16 or bfloat16), whose constant operands are one-element tensors of rank <= max_rank
// (captured as values; *rank: the largest). nullptr when `consumer` is not such a chain.
std::shared_ptr<const elementwise::FusedChain> ChainOnValue(
    const PlanStep& consumer, const std::vector<ValueState>& values, int x, int max_rank,
    int* rank);

}  // namespace simplecpp::graph
