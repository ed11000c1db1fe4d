// Model-level converters on graph::Model (what the ONNX reader returns; write the result with
// simplecpp/onnx/model_writer.h): int8 quantization in the two layouts ONNX Runtime's quantization
// tool emits, weight-only block quantization (4 / 8 bits), and float32 -> float16 conversion. Used by `simplecpp quantize` / `simplecpp convert`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/convert/opset_upgrade.h"
#include "simplecpp/tensor.h"

namespace simplecpp::convert {

// Both quantizers first turn Constant nodes holding tensors into initializers (a weight in a
// Constant node, as paddle2onnx exports them, is a weight like any other), and raise an ai.onnx
// opset older than the quantized ops they emit (opset_upgrade.h): dynamic to 11, QDQ to 13 for
// per-channel weights (else 11).

// What a quantizer did to the model besides quantizing it (for the CLI's summary).
struct QuantizeReport {
  OpsetUpgrade upgrade;  // upgrade.to == upgrade.from when the opset was left as it was
  int constants_to_initializers = 0;
  std::string
      note;  // a choice made for the caller (QDQ: per-tensor weights when opset 13 is out of reach)
};

// Dynamic quantization, ONNX Runtime's quantize_dynamic (QOperator) pattern. Every ai.onnx MatMul
// whose B is a float32 initializer (rank 2), and every Gemm with a float32 initializer B (transA
// 0), becomes
//   x -> DynamicQuantizeLinear -> (xq, xs, xzp)        (one per distinct x, shared by its users)
//   MatMulInteger(xq, Wq, xzp, Wzp) -> Cast(to FLOAT) -> Mul(., Mul(xs, Ws)) [-> Add(., beta*C)]
// Wq int8 symmetric ([-127, 127], zero point 0 stored as an int8 initializer), one scale per output
// column (Ws and Wzp of shape [N]) or, without per_channel, one for the tensor. Gemm's transB is
// applied to the stored weight and alpha folded into Ws. MatMuls with a non-constant B stay float.
// Every Conv with a float32 initializer weight becomes ConvInteger(xq, Wq, xzp, Wzp) -> Cast ->
// Mul(., Mul(xs, Ws)) [-> Add(., B as [M,1,..])] the same way (Ws per tensor or, per channel, one
// per output channel as [M,1,..]), as ORT's quantize_dynamic does for Conv.
// A model below ai.onnx opset 11 (DynamicQuantizeLinear) is upgraded to 11 first. Throws
// Error(kUnsupported) for a model with nothing to quantize or an op the upgrade cannot rewrite.
struct DynamicOptions {
  // Per output channel by default: one scale per tensor loses the small channels of CNN weights
  // (on PP-OCR's recognizer it changes most decoded characters); ORT's tool defaults to per tensor.
  bool per_channel = true;
  bool quantize_gemm = true;  // ORT's tool leaves Gemm in float; we quantize it like MatMul
  bool quantize_conv = true;
};
graph::Model QuantizeDynamic(const graph::Model& model, const DynamicOptions& options = {},
                             QuantizeReport* report = nullptr);

// Static quantization in ONNX Runtime's quantize_static QDQ format for CNNs:
//  - pre-processing: BatchNormalization after a Conv with constant weights is folded into the Conv;
//    a Relu right after a quantized Conv/Gemm/MatMul (sole consumer) is removed, its range (>= 0)
//    given to the producer's output (the uint8 quantization then clamps at 0 exactly like Relu).
//  - activations: QuantizeLinear -> DequantizeLinear pairs (uint8, asymmetric, scale and zero point
//    from the min/max over the calibration runs, widened to contain 0) on every float input and
//    output of a quantized node (Conv, Gemm, MatMul with constant B, Add, Mul, MaxPool,
//    AveragePool, GlobalAveragePool, Flatten, Reshape, Transpose, Concat, Relu); MaxPool, Flatten,
//    Reshape and Transpose are quantized only when their input already is, and their outputs
//    reuse the input's parameters. Consumers read the DQ output; a graph output keeps its name
//    (the DQ writes it).
//  - weights: int8 symmetric, per output channel (Conv axis 0; Gemm/MatMul along N) or per tensor,
//    through DequantizeLinear, quantized once per weight however many nodes read it; biases
//    int32 with scale xs * ws and zero point 0 (a weight scale too small for its bias to fit in
//    int32 is raised until it fits).
// Per-channel weights need DequantizeLinear's axis (opset 13): a model below 13 is upgraded to 13
// first, or, when the upgrade cannot rewrite one of its ops, quantized per tensor at opset >= 10
// (upgraded to 11 when below 10), with report->note saying so.
// calibration: input sets (name -> tensor); each runs the float model once. Empty: one run with
// deterministic pseudo-random inputs in [-1, 1) (shapes from the graph inputs, unknown dims 1).
struct QdqOptions {
  std::vector<std::map<std::string, Tensor>> calibration;
  bool per_channel = true;
};
graph::Model QuantizeQdq(const graph::Model& model, const QdqOptions& options = {},
                         QuantizeReport* report = nullptr);

// Weight-only block quantization for transformers (quant/block_quant.h has the arithmetic):
// every MatMul whose B is a constant float32 / float16 rank-2 weight [K, N], and every Gemm
// (transA 0) with a constant B, gets its weight quantized to `bits` in blocks of `block` along K
// (a shorter last block when block does not divide K); activations stay float. Gemm's transB is
// applied to the stored weight and alpha folded in (alpha * B^T is what is quantized, so the
// scales carry alpha); its C stays an Add (beta folded into a constant C) or, in the msft form,
// becomes MatMulNBits' bias when it is a constant of N elements. A weight read by several nodes
// is quantized once. Weights with K < block stay float, as do MatMul/Gemm with a non-constant B
// (the report counts them, with the reason).
//  - kOnnx: DequantizeLinear(Wq [K, N], scale [ceil(K/block), N], [zero_point], axis 0,
//    block_size) -> MatMul, Wq int4/int8 (symmetric, no zero point) or uint4/uint8 (asymmetric,
//    zero point of Wq's type); scales of the weight's float type. Needs ai.onnx opset 21: an older
//    model is upgraded (opset_upgrade.h), and an op the upgrade cannot rewrite fails the
//    conversion with Error(kUnsupported) naming it.
//  - kMsft: com.microsoft MatMulNBits (K, N, bits, block_size; B uint8 [N, blocks, block*bits/8],
//    scales [N * blocks], packed uint8 zero points when asymmetric, optional bias); block must be
//    a power of two >= 16. The model's opset is left as it is.
// Both forms hold the same dequantized weights for the same options. Throws
// Error(kInvalidArgument) for bad options and Error(kUnsupported) when nothing is quantized.
struct WeightOptions {
  int bits = 4;         // 4 or 8
  int64_t block = 32;   // >= 2 (msft: a power of two >= 16)
  bool symmetric = false;
  enum Format { kOnnx, kMsft } format = kOnnx;
  // kMsft: MatMulNBits's accuracy_level, 0 to 4 (4: A may be quantized to int8, as ONNX
  // Runtime's LLM exporters write for CPUs); written only when not 0.
  int64_t accuracy_level = 0;
};

// One quantized weight (after transB / alpha), however many nodes read it.
struct QuantizedWeightReport {
  std::string name;   // the initializer's name
  int64_t k = 0, n = 0;
  int nodes = 0;      // MatMul / Gemm nodes reading it
  double sqnr_db = 0; // 10 log10(sum w^2 / sum (w - w_hat)^2); +inf when exact
};

struct WeightReport {
  QuantizeReport prepare;  // opset upgrade, Constant nodes made initializers
  std::vector<QuantizedWeightReport> weights;
  int nodes_quantized = 0;
  // MatMul / Gemm nodes left in float, by reason ("K < block", "B is not a constant", ...).
  std::map<std::string, int> kept_float;
  int64_t float_weight_bytes = 0;      // the replaced float weights
  int64_t quantized_weight_bytes = 0;  // what replaced them (codes, scales, zero points)
};

graph::Model QuantizeWeights(const graph::Model& model, const WeightOptions& options = {},
                             WeightReport* report = nullptr);

// float32 -> float16: every float32 initializer (values clamped to +-65504), graph input, output,
// value_info and Constant / ConstantOfShape value becomes float16 and Cast(to FLOAT) becomes
// Cast(to FLOAT16). Nodes that must see float32 (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear) are wrapped in Casts. Inputs that ONNX types as float32 whatever the
// data type (Resize scales and roi, Upsample scales, NonMaxSuppression boxes / scores /
// thresholds) stay float32: initializers and Constant values (Constant nodes become initializers
// first) keep float32, with a float16 copy for any other reader; a computed value gets a
// Cast(to FLOAT), and a Cast(to FLOAT) read only by such inputs keeps its target. A Cast(to FLOAT)
// of a MatMulInteger / ConvInteger int32 result stays float32 (such sums overflow float16) and the
// Mul/Add/Sub/Div that rescales it runs in float32 behind Casts, its result cast to float16. A node
// whose float32 constants float16 cannot hold (|v| > 65504: BatchNormalization variances of 1e8 in
// PP-OCRv4's detector) runs in float32 the same way, its constants kept float32. Subgraphs are
// converted too.
graph::Model ConvertToFloat16(const graph::Model& model);

}  // namespace simplecpp::convert
