// An elementwise function of an 8-bit tensor given as its 256 results (graph/passes/
// quant_lookup_fusion.h builds it from DequantizeLinear -> float chain -> QuantizeLinear), and a
// Concat whose inputs each go through such a table. Not registered: only that pass creates them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/op.h"

namespace simplecpp::graph {

// table[b]: the output byte for the input byte b (int8 inputs index by their bit pattern).
// Input: uint8 or int8; output: out_dtype (uint8 or int8), with the input's dims, raised to
// min_rank with leading 1s (what the replaced chain's operands broadcast it to).
std::unique_ptr<Op> MakeByteLookupOp(std::shared_ptr<const std::array<uint8_t, 256>> table,
                                     DType out_dtype, int min_rank);

// table[b]: the float32 result for the input byte b: what DequantizeLinear -> float chain
// computes when nothing requantizes its result (a model's output, a float op after it). Input:
// uint8 or int8; output: float32, dims as MakeByteLookupOp's.
using FloatTable = std::array<float, 256>;
std::unique_ptr<Op> MakeFloatLookupOp(std::shared_ptr<const FloatTable> table, int min_rank);

// Concat along `axis` (as ONNX Concat: negative counts from the end) of 8-bit inputs, each
// through its own table (tables[i] for input i) into out_dtype: what DequantizeLinear of each
// input -> Concat -> QuantizeLinear computes, element by element.
using ByteTable = std::array<uint8_t, 256>;
std::unique_ptr<Op> MakeByteConcatLookupOp(std::vector<std::shared_ptr<const ByteTable>> tables,
                                           int64_t axis, DType out_dtype);

}  // namespace simplecpp::graph
