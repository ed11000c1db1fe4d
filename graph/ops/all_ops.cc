// Every built-in op family registers itself here. One function per family, defined in
// graph/ops/<family>.cc next to the ops it registers.
#include "graph/ops/families.h"
#include "graph/registry.h"

namespace simplecpp::graph {

void RegisterAllOps(OpRegistry& registry) {
  RegisterElementwiseOps(registry);   // elementwise.cc: unary/binary math, logic, activations
  RegisterMatMulOps(registry);        // matmul.cc: MatMul, Gemm
  RegisterEinsumOps(registry);        // einsum.cc: Einsum
  RegisterConvOps(registry);          // conv.cc: Conv
  RegisterPoolOps(registry);          // pool.cc: MaxPool, AveragePool, Global*Pool
  RegisterNormalizationOps(registry); // normalization.cc: BatchNorm, InstanceNorm, LayerNorm, Softmax
  RegisterReductionOps(registry);     // reduction.cc: Reduce*, ArgMax/Min, CumSum, TopK
  RegisterTensorOps(registry);        // tensor_*.cc: shape and data movement ops
  RegisterCastOps(registry);          // cast.cc: Cast, CastLike
  RegisterIndexingOps(registry);      // indexing*.cc: GatherND, Scatter*, NonZero, Unique, random ops...
  RegisterControlFlowOps(registry);   // control_flow.cc: If, Loop, Scan
  RegisterRecurrentOps(registry);     // recurrent.cc: RNN, GRU, LSTM
  RegisterQuantizationOps(registry);  // quant/quantize.cc (+ qlinear, matmul_integer, conv_integer)
  RegisterSpatialOps(registry);       // spatial.cc (+ conv_transpose, resize .cc): Resize, RoiAlign...
  RegisterSequenceOps(registry);      // sequence.cc: Sequence*, SplitToSequence, ConcatFromSequence
  RegisterOptionalOps(registry);      // optional.cc: Optional, OptionalHasElement, OptionalGetElement
  RegisterLossOps(registry);          // loss.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
  RegisterBitCastOps(registry);       // bitcast.cc: BitCast, TensorScatter
  RegisterSignalOps(registry);        // signal.cc: DFT, STFT, Hann/Hamming/BlackmanWindow
  RegisterAttentionOps(registry);     // attention.cc: Attention, RotaryEmbedding, RMSNormalization
  RegisterQuantContribOps(registry);  // quant/quant_contrib_*.cc: com.microsoft QLinear*, QGemm...
  RegisterQuantFusedOps(registry);    // quant/quant_fused.cc: simplecpp.fused (quant_fusion pass)
  RegisterLinearAttentionOps(registry);  // attention_linear.cc: LinearAttention (27)
  RegisterCausalConvOps(registry);       // causal_conv.cc: CausalConvWithState (27)
  RegisterFlexAttentionOps(registry);    // flex_attention.cc: ai.onnx.preview FlexAttention (1)
  RegisterDeformConvOps(registry);       // deform_conv.cc: DeformConv (19, 22)
  RegisterMelWeightMatrixOps(registry);  // mel_weight_matrix.cc: MelWeightMatrix (17)
  RegisterTrainingOps(registry);         // training.cc: preview.training Adagrad, Momentum, Adam (1)
  RegisterMatMulNBitsOps(registry);      // quant/matmul_nbits.cc: com.microsoft MatMulNBits (1)
  RegisterMsftNormalizationOps(registry);  // msft_normalization.cc: com.microsoft Skip*LayerNorm
  RegisterMsftActivationOps(registry);     // msft_activation.cc: BiasGelu, FastGelu, QuickGelu
  RegisterMsftRotaryOps(registry);         // msft_rotary.cc: com.microsoft RotaryEmbedding (1)
  RegisterMsftAttentionOps(registry);      // msft_group_query_attention.cc: GroupQueryAttention
}

}  // namespace simplecpp::graph
