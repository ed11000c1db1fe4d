// Blocked weight dequantization into the low-bit GEMM: a graph pass (run by Plan::Build when
// PlanOptions::fuse_quantized is set, before the integer-pattern fusion) that replaces
//
//     wf = DequantizeLinear(W, scale, [zero_point])   W int4 / uint4 / int8 / uint8 [K, N],
//                                                     axis 0, block_size B (a power of 2, >= 16),
//                                                     scale [ceil(K/B), N] float32 / float16,
//                                                     zero_point like scale in W's dtype
//     y  = MatMul(a, wf)
//
// (what ONNX Runtime's weight-only 4-bit quantizer and blocked int4 LLM exports write, opset 21+),
// and the same with a float32 block minimum added to the dequantized weights, as simplecpp's
// GGUF import writes ggml's Q4_1 (B dividing K, scale float32, each value read once):
//
//     wf = Reshape(Add(Reshape(DequantizeLinear(W, scale[, zero_point]), [K/B, B, N]),
//                      min [K/B, 1, N]), [K, N])
//
// (min goes to MatMulNBits' simplecpp-only block_min input, graph/ops/quant/matmul_nbits.cc)
// by one com.microsoft MatMulNBits node (graph/ops/quant/matmul_nbits.cc) with the same weights
// repacked once, at load, into its layout: W, scale and zero point must be initializers of this
// graph, and wf must have no other reader (in this graph or a subgraph) and not be a graph output.
// The weights then stay packed in memory (4 or 8 bits each) instead of being folded into a
// float32 copy of W.
//
// Repacking is exact: MatMulNBits reads unsigned codes, so a signed code q becomes q + 2^(bits-1)
// and its zero point z becomes z + 2^(bits-1) (absent: 2^(bits-1), MatMulNBits's default), which
// leaves every q - z, and so every dequantized weight (q - z) * scale, the same float32 value.
// An unsigned W without zero points gets explicit zero points of 0. The products are summed in
// another order than the float32 MatMul on the dequantized weights, so the fused result differs
// from the unfused one by float32 rounding only (tests/graph/passes/blocked_dequant_fusion_test.cc
// checks both against a double reference: |y - ref| <= 1e-5 * sum_k |a_k * w_k|).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "graph/ir.h"

namespace simplecpp::graph::passes {

// Rewrites every match in `graph` (not in its subgraphs: Plan::Build runs the pass for each
// subgraph it compiles). When none matches, returns false and leaves *out / *out_opsets alone;
// otherwise writes the rewritten graph and its opsets (com.microsoft version 1 added when
// missing) and returns true. *fused (when given) receives the number of rewritten MatMuls;
// `repacked` (when set) is called with the bytes of W and of its scales as they are repacked, a
// range of block rows at a time (then once with the whole W): the caller may give their pages
// back (PlanOptions::release_weight).
bool FuseBlockedDequantMatMul(const Graph& graph, const std::map<std::string, int64_t>& opsets,
                              Graph* out, std::map<std::string, int64_t>* out_opsets,
                              int* fused = nullptr,
                              const std::function<void(const void*, size_t)>& repacked = nullptr);

}  // namespace simplecpp::graph::passes
