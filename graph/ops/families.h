// Registration entry points of the op families (see all_ops.cc).
#pragma once

namespace simplecpp::graph {

class OpRegistry;

void RegisterElementwiseOps(OpRegistry& registry);
void RegisterMatMulOps(OpRegistry& registry);
void RegisterEinsumOps(OpRegistry& registry);
void RegisterConvOps(OpRegistry& registry);
void RegisterPoolOps(OpRegistry& registry);
void RegisterNormalizationOps(OpRegistry& registry);
void RegisterReductionOps(OpRegistry& registry);
void RegisterTensorOps(OpRegistry& registry);
void RegisterCastOps(OpRegistry& registry);
void RegisterIndexingOps(OpRegistry& registry);
void RegisterControlFlowOps(OpRegistry& registry);
void RegisterRecurrentOps(OpRegistry& registry);
void RegisterQuantizationOps(OpRegistry& registry);  // quant/quantize.cc (+ the rest of quant/)
void RegisterSpatialOps(OpRegistry& registry);
void RegisterSequenceOps(OpRegistry& registry);
void RegisterOptionalOps(OpRegistry& registry);
void RegisterLossOps(OpRegistry& registry);
void RegisterBitCastOps(OpRegistry& registry);
void RegisterSignalOps(OpRegistry& registry);
void RegisterAttentionOps(OpRegistry& registry);
void RegisterQuantContribOps(OpRegistry& registry);  // quant/quant_contrib_*.cc: QLinear*...
void RegisterQuantFusedOps(OpRegistry& registry);    // quant/quant_fused.cc: simplecpp.fused (pass)
void RegisterLinearAttentionOps(OpRegistry& registry);  // attention_linear.cc: LinearAttention
void RegisterCausalConvOps(OpRegistry& registry);       // causal_conv.cc: CausalConvWithState
void RegisterFlexAttentionOps(OpRegistry& registry);    // flex_attention.cc: FlexAttention (preview)
void RegisterDeformConvOps(OpRegistry& registry);       // deform_conv.cc: DeformConv
void RegisterMelWeightMatrixOps(OpRegistry& registry);  // mel_weight_matrix.cc: MelWeightMatrix
void RegisterTrainingOps(OpRegistry& registry);  // training.cc: ai.onnx.preview.training optimizers
void RegisterMatMulNBitsOps(OpRegistry& registry);  // quant/matmul_nbits.cc: MatMulNBits
void RegisterMsftNormalizationOps(OpRegistry& registry);  // msft_normalization.cc: Skip*LayerNorm
void RegisterMsftActivationOps(OpRegistry& registry);  // msft_activation.cc: BiasGelu, FastGelu...
void RegisterMsftRotaryOps(OpRegistry& registry);  // msft_rotary.cc: com.microsoft RotaryEmbedding
void RegisterMsftAttentionOps(OpRegistry& registry);  // msft_group_query_attention.cc: GQA

}  // namespace simplecpp::graph
