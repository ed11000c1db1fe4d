// LLaMA models in ggml's GGUF format <-> the decoder graph of simplecpp/api/builtin_llama.h.
//
// Import (`simplecpp convert --from gguf IN.gguf OUT.onnx`): general.architecture "llama" with
// tensors in F32, F16, Q8_0, Q4_0 or Q4_1 becomes the opset-23 decoder graph (RMSNormalization,
// RotaryEmbedding, Attention with past/present, SwiGLU) with onnxruntime-genai's input and output
// names, so `simplecpp generate` and ONNX Runtime run it. Each tensor type maps exactly
// (quant/ggml_blocks.h explains the bits):
//   F32, F16       float32 initializers (a float16 value widens to float32 exactly);
//   Q8_0           DequantizeLinear(int8 codes, float32 scales, block_size 32) -> MatMul;
//   Q4_0           DequantizeLinear(int4 codes = nibble - 8, float32 scales, block_size 32) -> MatMul;
//   Q4_1           DequantizeLinear(uint4 codes, float32 scales, block_size 32), plus the block
//                  minimum added per block (an Add) -> MatMul.
// Every dequantized weight therefore has the float32 value ggml's reference dequantization
// gives it. The blocked weights are transposed from ggml's rows of K inputs ([N, K]) to ONNX's
// [K, N] (a rearrangement of codes: nothing is rounded), and simplecpp's load pass runs every
// one of these MatMuls as packed MatMulNBits (4 or 8 bits per weight in memory; Q4_1's minimum
// through the pass's block-minimum form, graph/passes/blocked_dequant_fusion.h).
// The token embedding keeps its blocks along hidden: Gather of the code rows (one byte per code:
// int8 for Q8_0 and Q4_0, uint8 for Q4_1) and of their scales (and minimums), then the same
// DequantizeLinear [+ minimum] on the looked-up rows only.
//
// ggml's converter permutes the rows of the Q and K projections so that rotary embedding pairs
// adjacent elements (ggml's "normal" rope); the import puts them back in the rotate-half order of
// the graph (an exact row permutation), so a model exported from Hugging Face weights imports as
// the same graph on the same weights.
//
// Refused by name (Error(kUnsupported)): other architectures, mixture-of-experts, rope scaling
// (rope_freqs or llama.rope.scaling.type other than none), partial rotary, tensor types other than
// the five above (K-quants, IQ, ...), and tensors the graph would not use (biases and the like).
// Tokenizer metadata is not used: the graph takes token ids.
//
// Export (`simplecpp convert --builtin llama-tiny --to gguf --type q4_0 OUT.gguf`): the built-in
// decoder's float32 weights written the way ggml's converter writes a Hugging Face LLaMA (the Q/K
// row permutation included), every projection, the embedding and the output matrix in the
// chosen type and the norms in F32, with LLaMA metadata and a placeholder tokenizer.
#pragma once

#include <map>
#include <string>

#include "graph/ir.h"
#include "quant/ggml_blocks.h"
#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/io/gguf.h"

namespace simplecpp::convert {

struct GgufImportReport {
  builtin::LlamaConfig config;
  std::string name;                        // general.name, when present
  std::map<std::string, int> tensor_types;  // ggml type name -> tensors
  bool tied_output = false;                 // no output.weight: lm_head reads token_embd
};

// The decoder config a LLaMA GGUF describes (validated; see above for what is refused).
builtin::LlamaConfig LlamaConfigFromGguf(const io::GgufFile& file);

graph::Model ImportLlamaGguf(const io::GgufFile& file, GgufImportReport* report = nullptr);

// The GGUF bytes of the built-in decoder `config` (its seeded float32 weights) with projections,
// embedding and output in `type` (F32, F16, Q8_0, Q4_0 or Q4_1).
std::string ExportLlamaGguf(const builtin::LlamaConfig& config, quant::GgmlType type,
                            const std::string& name);

// ggml's tensor name of a decoder weight named as in builtin::LlamaWeights ("model.layers.3.
// attn.q_proj" -> "blk.3.attn_q.weight"); "" for an unknown name.
std::string GgufLlamaTensorName(const std::string& weight_name);

// The ggml row of output feature `hf_row` of a Q or K projection with heads of `head_dim`
// (ggml's converter stores Hugging Face row h*head_dim + j*head_dim/2 + i at
// h*head_dim + 2*i + j).
int64_t GgufRotaryRow(int64_t hf_row, int64_t head_dim);

}  // namespace simplecpp::convert
