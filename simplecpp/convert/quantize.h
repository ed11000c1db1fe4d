// Model-level converters on graph::Model (what the ONNX reader returns; write the result with
// simplecpp/onnx/model_writer.h): int8 quantization in the two layouts ONNX Runtime's quantization
// tool emits, and float32 -> float16 conversion. Used by `simplecpp quantize` / `simplecpp convert`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/tensor.h"

namespace simplecpp::convert {

// Dynamic quantization, ONNX Runtime's quantize_dynamic (QOperator) pattern. Every ai.onnx MatMul
// whose B is a float32 initializer (rank 2), and every Gemm with a float32 initializer B (transA 0),
// becomes
//   x -> DynamicQuantizeLinear -> (xq, xs, xzp)        (one per distinct x, shared by its users)
//   MatMulInteger(xq, Wq, xzp, Wzp) -> Cast(to FLOAT) -> Mul(., Mul(xs, Ws)) [-> Add(., beta*C)]
// Wq int8 symmetric ([-127, 127], zero point 0 stored as an int8 initializer), one scale for the
// tensor or, with per_channel, one per output column (Ws and Wzp of shape [N]). Gemm's transB is
// applied to the stored weight and alpha folded into Ws. MatMuls with a non-constant B stay float.
// Needs ai.onnx opset >= 11. Throws Error(kUnsupported) for a model with nothing to quantize.
struct DynamicOptions {
  bool per_channel = false;
  bool quantize_gemm = true;  // ORT's tool leaves Gemm in float; we quantize it like MatMul
};
graph::Model QuantizeDynamic(const graph::Model& model, const DynamicOptions& options = {});

// Static quantization in ONNX Runtime's quantize_static QDQ format for CNNs:
//  - pre-processing: BatchNormalization after a Conv with constant weights is folded into the Conv;
//    a Relu right after a quantized Conv/Gemm/MatMul (sole consumer) is removed, its range (>= 0)
//    given to the producer's output (the uint8 quantization then clamps at 0 exactly like Relu).
//  - activations: QuantizeLinear -> DequantizeLinear pairs (uint8, asymmetric, scale and zero point
//    from the min/max over the calibration runs, widened to contain 0) on every float input and
//    output of a quantized node (Conv, Gemm, MatMul with constant B, Add, Mul, MaxPool,
//    AveragePool, GlobalAveragePool, Flatten, Reshape, Transpose, Concat, Relu); MaxPool, Flatten,
//    Reshape and Transpose outputs reuse their input's parameters. Consumers read the DQ output;
//    a graph output keeps its name (the DQ writes it).
//  - weights: int8 symmetric, per output channel (Conv axis 0; Gemm/MatMul along N) or per tensor,
//    through DequantizeLinear; biases int32 with scale xs * ws and zero point 0.
// calibration: input sets (name -> tensor); each runs the float model once. Empty: one run with
// deterministic pseudo-random inputs in [-1, 1) (shapes from the graph inputs, unknown dims 1).
struct QdqOptions {
  std::vector<std::map<std::string, Tensor>> calibration;
  bool per_channel = true;
};
graph::Model QuantizeQdq(const graph::Model& model, const QdqOptions& options = {});

// float32 -> float16: every float32 initializer (values clamped to +-65504), graph input, output,
// value_info and Constant / ConstantOfShape value becomes float16 and Cast(to FLOAT) becomes
// Cast(to FLOAT16). Nodes that must see float32 (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear) are wrapped in Casts; float-only inputs (Resize / Upsample scales) keep
// float32 initializers. A Cast(to FLOAT) of a MatMulInteger / ConvInteger int32 result stays
// float32 (such sums overflow float16) and the Mul/Add/Sub/Div that rescales it runs in float32
// behind Casts, its result cast to float16.
// Subgraphs are converted too.
graph::Model ConvertToFloat16(const graph::Model& model);

}  // namespace simplecpp::convert
