// The built-in demo models, generated in code with deterministic weights: what
// `simplecpp run default` runs, and a ready-made end-to-end test of the import/export/executor
// path without any model file. "cnn" and "transformer" use ai.onnx opset 17; the others have the
// structure of common real models (random weights) at the opsets such models ship with:
//   "cnn"          input [1,3,32,32] float32 -> Conv+Relu, MaxPool, Conv+BatchNorm+Relu,
//                  GlobalAveragePool, Flatten, Gemm, Softmax -> "probabilities" [1,10]
//   "transformer"  input [1,16,64] float32 -> one pre-norm encoder layer (4 heads, Erf-spelled
//                  Gelu MLP of width 256) -> "y" [1,16,64]
//   "mlp"          (opset 17, builtin_mlp.cc) "features" [16,512] float32 -> MatMul+Add+Relu
//                  layers 512-1024-1024-256, MatMul+Add to 10 classes, Softmax ->
//                  "probabilities" [16,10] (28 M multiply-adds: a GEMM-bound model)
//   "vad"          (opset 17, builtin_vad.cc) a voice-activity detector: "input" [1,512] float32,
//                  "sr" int64 scalar, "h"/"c" [2,1,64] LSTM states. An If on sr == 16000 picks
//                  one of two framing sub-networks -> [1,8,32]; two stacked LSTMs (hidden 64)
//                  take and return the states; MLP + Sigmoid head. Outputs "output" [1,1],
//                  "hn"/"cn" [2,1,64].
//   "crnn"         (opset 9, builtin_crnn.cc) a text-line recognizer: "image" [1,1,32,128] ->
//                  Conv/BatchNorm/Relu/MaxPool, depthwise-separable blocks, a strided conv
//                  branch brought back by ConvTranspose and by Upsample, reshape to a sequence
//                  of 32 steps, bidirectional GRU (hidden 48), one self-attention block, Gemm,
//                  Softmax -> "probs" [32,37].
//   "segmentation" (opset 13, builtin_segmentation.cc) "image" [1,3,1024,1024] -> encoder of
//                  strided and depthwise-separable convs down to 1/16, decoder with Resize
//                  (nearest and linear) and skip connections (Add, Concat) -> per-pixel Softmax
//                  over 4 classes "mask" [1,4,1024,1024].
//   "segmentation-int8"  the same weights quantized the way ONNX Runtime's dynamic quantizer
//                  does it: DynamicQuantizeLinear on activations, ConvInteger with int8 weights
//                  (per-tensor, symmetric) and one layer ("dec2.fuse") with uint8 weights and a
//                  per-channel w_zero_point, Cast, Mul by x_scale * w_scale, Add bias.
//   "cnn-base"     benchmark-sized CNN, input [1,3,96,96] float32: Conv 3x3/2 to 32 channels,
//                  Conv 3x3 to 64, MaxPool, Conv 3x3 to 128 + BatchNorm, Relus, GlobalAveragePool,
//                  Gemm, Softmax -> "probabilities" [1,10] (87 M multiply-adds)
//   "transformer-base"  the "transformer" layer at the size of a MiniLM sentence-embedder
//                  layer: input [1,128,384], 6 heads, MLP width 1536 -> "y" [1,128,384]
//   "bert"         (opset 13, builtin_bert.cc) "input_ids" int64 [1,16] (vocabulary 100),
//                  "attention_mask" int64 [1,16] -> embeddings, 2 encoder layers (hidden 64,
//                  4 heads, FFN 128) with LayerNorm spelled ReduceMean/Sub/Pow/Sqrt/Div, Gelu
//                  spelled with Erf, the mask added as (1 - mask) * -10000 ->
//                  "last_hidden_state" [1,16,64], "pooler_output" [1,64].
//   "llama"        (opset 23, builtin_llama.h) a LLaMA-style decoder with a KV cache: 4 layers,
//                  hidden 1024, 16 query / 4 KV heads (head_dim 64), SwiGLU MLP 2816, vocab
//                  32000 (~110 M parameters), float32. "input_ids" int64 [batch, seq],
//                  "past_key_values.{i}.key|value" [batch, 4, past, 64] -> "logits"
//                  [batch, seq, 32000], "present.{i}.key|value" [batch, 4, past + seq, 64].
//                  RMSNormalization, RotaryEmbedding, Attention (GQA, causal, past/present).
//   "llama-int4"   the same weights as int4 blocks of 32 along K (symmetric): DequantizeLinear
//                  -> MatMul for every projection and the lm_head (loaded as MatMulNBits).
//   "llama-msft"   the same int4 weights in onnxruntime-genai's com.microsoft spelling:
//                  MatMulNBits, GroupQueryAttention, (Skip)SimplifiedLayerNormalization, plus an
//                  "attention_mask" int64 [batch, past + seq] input (all ones).
//   Not listed by BuiltinModelNames(): "llama-tiny", "llama-tiny-int4", "llama-tiny-msft", the
//   three forms at SmallLlamaConfig() (2 layers, hidden 128, vocab 256) for quick checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/tensor.h"

namespace simplecpp::builtin {

// {"cnn", "transformer", "mlp", "vad", "crnn", "segmentation", "segmentation-int8", "bert",
// "cnn-base", "transformer-base", "llama", "llama-int4", "llama-msft"}; the first is the default
// model.
std::vector<std::string> BuiltinModelNames();

// Builds the named model. Throws Error(kInvalidArgument) for an unknown name.
graph::Model MakeBuiltinModel(const std::string& name);

// The builders behind the names; tests build smaller segmentation instances (`size` a multiple
// of 16) to compare with a scalar reference. per_channel_zero_point false gives "dec2.fuse" one
// uint8 zero point and scale for the whole tensor (ONNX Runtime's CPU ConvInteger refuses
// per-channel zero points, so that is the variant compared with it).
constexpr int64_t kSegmentationSize = 1024;
graph::Model MakeMlpModel();
graph::Model MakeVadModel();
graph::Model MakeCrnnModel();
graph::Model MakeSegmentationModel(int64_t size, bool int8, bool per_channel_zero_point = true);
graph::Model MakeBertModel();

// Deterministic pseudo-random generator (SplitMix64) shared by the model weights and the CLI's
// generated inputs, so a given seed gives the same numbers on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi).
  float Uniform(float lo, float hi);

 private:
  uint64_t state_;
};

// A float32 tensor of `dims` with values uniform in [lo, hi).
Tensor RandomFloatTensor(const Dims& dims, uint64_t seed, float lo, float hi);

}  // namespace simplecpp::builtin
