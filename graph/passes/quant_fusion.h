// Quantized-pattern fusion: a graph pass (run by Plan::Build when PlanOptions::fuse_quantized is
// set) that replaces the integer-quantization patterns quantizers write with standard ONNX ops by
// one node running the packed integer GEMM core (kernels/quant/qgemm.h, weights packed once at
// Prepare) with a float epilogue.
//
// Patterns (all ops in the default domain; W, scales, zero points and biases must be constants:
// initializers of this graph or outputs of Constant nodes; every intermediate must have exactly
// one consumer, in this graph or any nested subgraph, and must not be a graph output; the
// exceptions are the outputs of the DynamicQuantizeLinear (patterns 1, 2) and DequantizeLinear
// (patterns 3, 4) nodes, which may be shared by several patterns or other readers: such a node
// stays while anything reads it and is dropped when nothing does):
//
//  1. Dynamic MatMul (ONNX Runtime's dynamic quantizer):
//       (xq, xs, xzp) = DynamicQuantizeLinear(x)
//       acc = MatMulInteger(xq, W, xzp, [wzp])        W [K,N] uint8/int8, wzp scalar or [N]
//       s = Mul(xs, ws)  (either order)               ws float32 scalar or [N]
//       y = Mul(Cast<float>(acc), s)  (either order)
//       [y = Add(y, bias)  (either order)]            bias float32 [N] or one element
//     -> com.microsoft DynamicQuantizeMatMul(x, W, ws, [wzp], [bias]); when xq has other
//        readers (ONNX Runtime's quantizer shares one DynamicQuantizeLinear between the Q, K and
//        V projections), com.microsoft MatMulIntegerToFloat(xq, W, xs, ws, xzp, [wzp], [bias])
//        instead, so that x is quantized once (the same int32 sums and float epilogue).
//  2. Dynamic Conv: as 1 with ConvInteger(xq, W, xzp, [wzp]) (W [M,C/g,k...], wzp scalar or [M]);
//     ws and bias one element or one value per output channel, shaped to broadcast along the
//     channel axis ([M,1,1], [1,M,1,1], ...)
//     -> simplecpp.fused DynamicQuantizeConv(x, W, ws[M], [wzp], [bias[M]]) + Conv attributes.
//  3. QDQ MatMul / Gemm:
//       xf = DequantizeLinear(xq, xs, xzp)            per tensor, xzp uint8/int8 present
//       wf = DequantizeLinear(W, ws, [wzp])           per tensor or per column of op(W)
//       y = MatMul(xf, wf) | Gemm(xf, wf, [C])        Gemm: alpha = beta = 1, transA = 0
//       [y = Add(y, bias)]                            bias float32 [N] or one element
//     (a bias -- C, Conv's B or the Add's operand -- may also be DequantizeLinear(int32 constant,
//     float32 scale constant[, zero zero point]), ONNX Runtime's QDQ layout; when its scale equals
//     xs * ws[n] exactly, its int32 values are used as they are)
//       q = QuantizeLinear(y, ys, [yzp])              per tensor
//     -> QLinearMatMul (no bias, MatMul) or simplecpp.fused QLinearMatMulBias (int32 bias and/or
//        Gemm; transB weights are transposed once by the pass).
//  4. QDQ Conv: as 3 with Conv(xf, wf, [B]) (w per tensor or per output channel, axis 0) and an
//     optional Add of a per-channel bias -> QLinearConv with int32 bias; ConvTranspose of one
//     group (w per tensor or per output channel, axis 1) -> simplecpp.fused
//     QLinearConvTranspose (graph/ops/quant/qlinear_conv_transpose.cc), the same inputs.
//  5. QDQ around an op that only moves or selects elements (ONNX Runtime's QDQ "drop"):
//       xf = DequantizeLinear(xq, s, zp)              per tensor, zp present
//       y = MaxPool(xf) (opset >= 12, no Indices output) | Flatten | Reshape | Transpose |
//           Squeeze | Unsqueeze | Identity |          (its other inputs unchanged)
//           Resize | Upsample                         (mode nearest, not tf_crop_and_resize)
//       q = QuantizeLinear(y, s, zp)                  the same scale and zero point values
//     -> the op on xq.
//  6. QDQ GlobalAveragePool: xf = DequantizeLinear(xq, xs, xzp), y = GlobalAveragePool(xf),
//     q = QuantizeLinear(y, ys, yzp), all per tensor, xq and q of one dtype
//     -> com.microsoft QLinearGlobalAveragePool (graph/ops/quant/quant_contrib_pool.cc).
//  7. QDQ binary arithmetic (opset >= 7):
//       af = DequantizeLinear(aq, as, azp), bf = DequantizeLinear(bq, bs, bzp)   per tensor
//       y = Add | Sub | Mul | Div (af, bf)            (numpy broadcasting)
//       q = QuantizeLinear(y, ys, yzp)                per tensor
//     -> simplecpp.fused QdqBinary(aq, as, azp, bq, bs, bzp, ys, yzp) + attribute op
//        (graph/ops/quant/qdq_binary.cc).
//
// Exactness (the bounds the tests check):
//  - The int32 part (sum of (xq - xzp)(W - wzp)) is computed exactly in all patterns, as the
//    unfused MatMulInteger / ConvInteger do.
//  - Patterns 1 and 2: the fused float epilogue is bit-identical (0 ulps) to the unfused graph:
//    it computes float(acc) * (xs * ws[n]) and then + bias[n], each step rounded to float32 in
//    that order, with no FMA contraction (the project compiles with -std=c++17, so GCC does not
//    contract, and the scalar epilogue is not built for FMA targets), and quantizes x with the
//    same code as DynamicQuantizeLinear.
//  - Patterns 3 and 4: the unfused graph computes the MatMul/Conv in float32 on dequantized values
//    and divides by ys; the fused op requantizes the exact integer sum:
//        q = saturate(round_half_even(double(acc + bias_i32) * double(xs * ws[n] / ys) + yzp)),
//        bias_i32[n] = round_half_even(double(bias[n]) / double(xs * ws[n]))  (float32 product).
//    Before rounding, the two differ by at most
//        d = 0.5 * xs * ws[n] / ys                     (bias rounding; only with a float bias;
//                                                       2^-24 * |bias| / ys for a dequantized
//                                                       int32 bias whose scale is xs * ws[n])
//          + (K + 3) * 2^-24 * sum_k |xf * wf| / ys    (float32 dot product / dequantization)
//          + 2^-22 * |y / ys|                          (multiplier and division rounding)
//    so whenever d < 1 (any sensible quantization: xs * ws <= ys and K * 2^-24 * sum |xf wf| << ys)
//    the quantized outputs differ by at most 1 (and are equal away from rounding ties).
//  - Pattern 5 is exact (0 difference): dequantization is increasing for a positive scale, so
//    max and data movement commute with it, and with the scale s in [1e-30, 1e30] (checked)
//    round((q - zp) * s / s) == q - zp for every 8-bit q - zp, so QuantizeLinear gives q back.
//  - Pattern 7 is exact (0 difference): the fused op runs the unfused nodes' own float32 kernels
//    (dequantize, the binary op, quantize) per block of elements.
//  - Pattern 6: the fused op averages the exact integers and rounds once, in double; the
//    unfused graph rounds each dequantized value and the mean to float32 before dividing by ys.
//    The two differ by at most 1 (equal away from rounding ties).
//
// A pattern that does not match exactly (an extra consumer, a non-constant weight, an unexpected
// dtype, shape or attribute) is left unchanged; the pass never changes what a graph computes
// beyond the bounds above.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/ir.h"

namespace simplecpp::graph::passes {

// The internal domain of the fused ops (graph/ops/quant/quant_fused.cc).
inline constexpr const char* kFusedDomain = "simplecpp.fused";

struct QuantFusionStats {
  int dynamic_matmul = 0;  // pattern 1
  int dynamic_conv = 0;    // pattern 2
  int qdq_matmul = 0;      // pattern 3
  int qdq_conv = 0;        // pattern 4
  int qdq_data_op = 0;     // pattern 5
  int qdq_global_average = 0;  // pattern 6
  int qdq_binary = 0;          // pattern 7
  int total() const {
    return dynamic_matmul + dynamic_conv + qdq_matmul + qdq_conv + qdq_data_op +
           qdq_global_average + qdq_binary;
  }
};

// Finds the patterns in `graph` (not in its subgraphs: Plan::Build runs the pass again for each
// subgraph it compiles). When none matches, returns false and leaves *out / *out_opsets alone.
// Otherwise writes the rewritten graph to *out and the opsets it needs (the input opsets plus
// com.microsoft and simplecpp.fused, version 1, where missing) to *out_opsets, and returns true.
// `opsets` is keyed by canonical domain ("" for ai.onnx).
bool FuseQuantized(const Graph& graph, const std::map<std::string, int64_t>& opsets, Graph* out,
                   std::map<std::string, int64_t>* out_opsets, QuantFusionStats* stats = nullptr);

}  // namespace simplecpp::graph::passes
