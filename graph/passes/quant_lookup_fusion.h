// Lookup fusion: DequantizeLinear -> float32 elementwise chain -> QuantizeLinear on an 8-bit
// tensor with per-tensor parameters (what QDQ models put around every activation: HardSwish,
// Sigmoid, the affine scale/shift of mobile exports) becomes one 256-entry byte table lookup;
// a float32 Concat of DequantizeLinear outputs followed by QuantizeLinear becomes a Concat of
// the bytes, each input through its own table (the FPN merges of quantized detectors); and
// DequantizeLinear -> float32 chain with nothing requantizing its result (a detector's final
// Sigmoid) becomes a 256-entry float32 table of the byte. Where the 8-bit tensor comes from an
// op that can put its output bytes through the table as it writes them (Op::AttachOutputTable:
// QLinearConv, which applies it to each block of requantized bytes while they are in cache)
// and goes nowhere else, that op takes the table and produces the lookup's result itself. A
// float32 MaxPool between the chain and the QuantizeLinear (a mobile classifier's last
// HardSwish -> MaxPool) moves after the table and runs on its bytes: max commutes with the
// non-decreasing quantization (positive scale, no NaN in the table).
//
// Runs on a plan's steps after elementwise chain fusion (graph/passes/elementwise_fusion.h).
// The table is computed at load by running the very ops it replaces (the DequantizeLinear and
// QuantizeLinear nodes as one-node plans, the chain through elementwise::FusedChain) on all
// 256 input bytes, so every output byte equals the unfused plan's: the float intermediates and
// their passes over memory go, no arithmetic changes.
#pragma once

#include <vector>

#include "graph/executor.h"

namespace simplecpp::graph {

// Rewrites *steps in place (a lookup step replaces the QuantizeLinear step; the DequantizeLinear
// and chain steps go; a MaxPool moved after the table reads the DequantizeLinear's output value,
// retyped in *values to the table's bytes). `keep` lists value ids that must stay materialized
// (graph outputs).
// Returns the indices (in the new *steps) of the lookup steps and of the steps that took a table,
// which the caller must prepare (again).
std::vector<size_t> FuseQuantizedLookups(std::vector<PlanStep>* steps,
                                         std::vector<ValueState>* values,
                                         const std::vector<int>& keep);

}  // namespace simplecpp::graph
