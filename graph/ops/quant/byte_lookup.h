// An elementwise function of an 8-bit tensor given as its 256 results (graph/passes/
// quant_lookup_fusion.h builds it from DequantizeLinear -> float chain -> QuantizeLinear). Not
// registered: only that pass creates it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "graph/op.h"

namespace simplecpp::graph {

// table[b]: the output byte for the input byte b (int8 inputs index by their bit pattern).
// Input: uint8 or int8; output: out_dtype (uint8 or int8), with the input's dims, raised to
// min_rank with leading 1s (what the replaced chain's operands broadcast it to).
std::unique_ptr<Op> MakeByteLookupOp(std::shared_ptr<const std::array<uint8_t, 256>> table,
                                     DType out_dtype, int min_rank);

}  // namespace simplecpp::graph
