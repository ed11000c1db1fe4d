// A decoder-only LLaMA-style language model built in code (random, seeded weights), in the three
// forms real LLM exports take; builtin_models.h lists the built-in names that use it.
//
// Interface (onnxruntime-genai's names, so that `simplecpp generate` runs real exports too):
//   inputs   input_ids int64 [batch, sequence]
//            attention_mask int64 [batch, total_sequence]         (kMsft only; see below)
//            past_key_values.{i}.key / .value float32 [batch, kv_heads, past_sequence, head_dim]
//   outputs  logits float32 [batch, sequence, vocab]
//            present.{i}.key / .value float32 [batch, kv_heads, past_sequence + sequence, head_dim]
// Positions are past_sequence .. past_sequence + sequence - 1, derived in the graph from the
// shapes (kFloat32 / kOnnxInt4: Shape of past_key_values.0.key and input_ids -> Range -> the
// position_ids of RotaryEmbedding). kMsft derives GroupQueryAttention's seqlens_k
// (= ReduceSum(attention_mask, axis 1) - 1, int32) and total_sequence_length
// (= attention_mask's dim 1, int32) in the graph the way onnxruntime-genai exports do, so
// attention_mask must be all ones over past + new tokens (no left padding).
//
// Forms (all with the same float32 embedding table and RMS-norm gains, and the same random
// projection weights before quantization):
//   kFloat32   ai.onnx opset 23: Gather embedding, RMSNormalization, MatMul Q/K/V/O,
//              RotaryEmbedding (rotate-half), Attention (causal, GQA through q_num_heads /
//              kv_num_heads, past_key/past_value -> present_key/present_value), SwiGLU MLP
//              (MatMul gate/up, gate * Sigmoid(gate) * up, MatMul down), residual Adds, final
//              RMSNormalization, MatMul lm_head -> logits.
//   kOnnxInt4  as kFloat32, with every projection and the lm_head weight W [K, N] stored as
//              int4 blocks of 32 along K, symmetric (no zero point): q = clamp(round(w / s),
//              -8, 7) with s = max|w| / 7 of the block, and DequantizeLinear(q, s, axis 0,
//              block_size 32) -> MatMul. simplecpp's load pass rewrites each pair into
//              com.microsoft MatMulNBits.
//   kMsft      com.microsoft ops as onnxruntime-genai writes them (ai.onnx opset 21 beside
//              com.microsoft 1): SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization,
//              MatMulNBits (bits 4, block 32, no zero points = code 8, the same dequantized
//              weights as kOnnxInt4), GroupQueryAttention (do_rotary with cos_cache /
//              sin_cache).
#pragma once

#include <cstdint>
#include <string>

#include "graph/ir.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/tensor.h"

namespace simplecpp::builtin {

struct LlamaConfig {
  int64_t layers = 4;
  int64_t hidden = 1024;
  int64_t q_heads = 16;  // head_dim = hidden / q_heads
  int64_t kv_heads = 4;
  int64_t ffn = 2816;
  int64_t vocab = 32000;
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  uint64_t seed = 0x11A3A;
  int64_t max_positions = 2048;  // rows of the rotary cos / sin caches
  // kMsft: MatMulNBits's accuracy_level (4: A may be quantized to int8 per block, as ONNX
  // Runtime's LLM exporters write for CPUs; 0: float32 A).
  int64_t nbits_accuracy_level = 0;
};

enum class LlamaForm { kFloat32, kOnnxInt4, kMsft };

// One projection weight W [k, n] (the graph computes x @ W) as a weight source hands it over; for
// the token embedding [vocab, hidden] the blocks run along hidden instead (k = vocab, n = hidden:
// scales, zero points and minimums [vocab, hidden / block]), and blocked codes must be int8 or
// uint8 (Gather reads whole rows of them).
struct LlamaLinearWeight {
  int64_t block = 0;   // 0: `weight` is float32 [k, n]; else the block size along k
  Tensor weight;       // float32 [k, n], or the codes [k, n] (int4, uint4, int8 or uint8)
  Tensor scales;       // blocked: float32 [k / block, n]
  Tensor zero_points;  // blocked, optional: the codes' dtype, [k / block, n]
  Tensor block_min;    // blocked, optional: float32 [k / block, n], added after dequantizing
};

// Where the decoder's weights come from. MakeLlamaModel asks for each one once, in graph order:
// Embedding, then per layer i: Gain("model.layers.{i}.input_layernorm"), Linear of
// "model.layers.{i}.attn.{q,k,v,o}_proj", Gain("model.layers.{i}.post_attention_layernorm"),
// Linear of "model.layers.{i}.mlp.{gate,up,down}_proj"; then Gain("model.norm") and
// Linear("lm_head"). Q and K are in the rotate-half layout (Hugging Face's): rotary pairs
// element i of a head with element i + head_dim / 2.
class LlamaWeights {
 public:
  virtual ~LlamaWeights() = default;
  virtual LlamaLinearWeight Embedding(int64_t vocab, int64_t hidden) = 0;
  virtual Tensor Gain(const std::string& name, int64_t hidden) = 0;  // float32 [hidden]
  virtual LlamaLinearWeight Linear(const std::string& name, int64_t k, int64_t n) = 0;
};

// The built-in models' weights: uniform random from config.seed (embedding and projections
// +-1/sqrt(fan in), gains in [0.8, 1.2)), float32.
class RandomLlamaWeights final : public LlamaWeights {
 public:
  explicit RandomLlamaWeights(uint64_t seed) : rng_(seed) {}
  LlamaLinearWeight Embedding(int64_t vocab, int64_t hidden) override;
  Tensor Gain(const std::string& name, int64_t hidden) override;
  LlamaLinearWeight Linear(const std::string& name, int64_t k, int64_t n) override;

 private:
  Random rng_;  // one seed per weight, drawn in the order asked
};

// The small configuration the tests use: 2 layers, hidden 128, 4 / 2 heads (head_dim 32),
// ffn 352, vocab 256, 256 positions.
LlamaConfig SmallLlamaConfig();

// Throws Error(kInvalidArgument) for an inconsistent config (heads not dividing, odd head_dim,
// and for the int4 forms hidden or ffn not a multiple of the block size 32).
graph::Model MakeLlamaModel(const LlamaConfig& config, LlamaForm form);
// The same graph on weights from `weights`. A float weight is spelled per form (kOnnxInt4 and
// kMsft quantize it to symmetric int4 blocks of 32); a blocked one is spelled
// DequantizeLinear(codes, scales[, zero_points], axis 0, block_size) [+ block_min per block]
// -> MatMul in kFloat32 and kOnnxInt4, and refused by kMsft. A blocked embedding is read as
// Gather of its code rows and of their scales (and minimums) -> DequantizeLinear(axis -1,
// block_size) [+ minimum], so only the looked-up rows are ever float.
graph::Model MakeLlamaModel(const LlamaConfig& config, LlamaForm form, LlamaWeights* weights);

}  // namespace simplecpp::builtin
