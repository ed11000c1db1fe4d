// The built-in decoder written as a LLaMA GGUF (simplecpp/convert/gguf_llama.h): its weights
// are recorded while the float32 graph is built (so they are the ones the built-in models hold),
// then laid out the way ggml's Hugging Face converter lays them out.
#include <string>
#include <utility>
#include <vector>

#include "quant/ggml_blocks.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/error.h"
#include "simplecpp/io/gguf_writer.h"

namespace simplecpp::convert {
namespace {

using quant::GgmlType;

struct RecordedWeight {
  std::string name;  // builtin::LlamaWeights' name
  Tensor value;      // float32: embedding [vocab, hidden], gain [hidden], linear [k, n]
  bool linear = false;
};

class RecordingWeights final : public builtin::LlamaWeights {
 public:
  explicit RecordingWeights(uint64_t seed) : random_(seed) {}
  builtin::LlamaLinearWeight Embedding(int64_t vocab, int64_t hidden) override {
    builtin::LlamaLinearWeight e = random_.Embedding(vocab, hidden);
    Record("model.embed_tokens", e.weight, false);
    return e;
  }
  Tensor Gain(const std::string& name, int64_t hidden) override {
    return Record(name, random_.Gain(name, hidden), false);
  }
  builtin::LlamaLinearWeight Linear(const std::string& name, int64_t k, int64_t n) override {
    builtin::LlamaLinearWeight w = random_.Linear(name, k, n);
    Record(name, w.weight, true);
    return w;
  }
  const std::vector<RecordedWeight>& weights() const { return weights_; }

 private:
  Tensor Record(const std::string& name, Tensor t, bool linear) {
    weights_.push_back(RecordedWeight{name, t, linear});
    return t;
  }
  builtin::RandomLlamaWeights random_;
  std::vector<RecordedWeight> weights_;
};

// LLAMA_FTYPE of a model whose weights are mostly `type` (general.file_type).
uint32_t FileType(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return 0;
    case GgmlType::kF16: return 1;
    case GgmlType::kQ4_0: return 2;
    case GgmlType::kQ4_1: return 3;
    case GgmlType::kQ8_0: return 7;
    default: return 0;
  }
}

std::string Rows(GgmlType type, const float* rows, int64_t count, int64_t len) {
  std::string out;
  for (int64_t r = 0; r < count; ++r) {
    const std::vector<uint8_t> b = quant::QuantizeGgmlRow(type, rows + r * len, len);
    out.append(reinterpret_cast<const char*>(b.data()), b.size());
  }
  return out;
}

void SetMetadata(const builtin::LlamaConfig& c, GgmlType type, const std::string& name,
                 io::GgufWriter* w) {
  using io::GgufValue;
  const int64_t head_dim = c.hidden / c.q_heads;
  w->Set("general.architecture", GgufValue::String("llama"));
  w->Set("general.name", GgufValue::String(name));
  w->Set("general.file_type", GgufValue::UInt32(FileType(type)));
  w->Set("llama.context_length", GgufValue::UInt32(static_cast<uint32_t>(c.max_positions)));
  w->Set("llama.embedding_length", GgufValue::UInt32(static_cast<uint32_t>(c.hidden)));
  w->Set("llama.block_count", GgufValue::UInt32(static_cast<uint32_t>(c.layers)));
  w->Set("llama.feed_forward_length", GgufValue::UInt32(static_cast<uint32_t>(c.ffn)));
  w->Set("llama.rope.dimension_count", GgufValue::UInt32(static_cast<uint32_t>(head_dim)));
  w->Set("llama.attention.head_count", GgufValue::UInt32(static_cast<uint32_t>(c.q_heads)));
  w->Set("llama.attention.head_count_kv", GgufValue::UInt32(static_cast<uint32_t>(c.kv_heads)));
  w->Set("llama.attention.layer_norm_rms_epsilon", GgufValue::Float32(c.rms_eps));
  w->Set("llama.rope.freq_base", GgufValue::Float32(c.rope_theta));
  w->Set("llama.vocab_size", GgufValue::UInt32(static_cast<uint32_t>(c.vocab)));
  // A placeholder vocabulary ("<0>", "<1>", ...): the graph takes token ids, but readers of the
  // file (and its tests) see the arrays a real model carries.
  std::vector<GgufValue> tokens, scores, types;
  for (int64_t i = 0; i < c.vocab; ++i) {
    tokens.push_back(GgufValue::String("<" + std::to_string(i) + ">"));
    scores.push_back(GgufValue::Float32(0.0f));
    types.push_back(GgufValue::Int32(1));
  }
  w->Set("tokenizer.ggml.model", GgufValue::String("llama"));
  w->Set("tokenizer.ggml.tokens", GgufValue::Array(io::GgufType::kString, std::move(tokens)));
  w->Set("tokenizer.ggml.scores", GgufValue::Array(io::GgufType::kFloat32, std::move(scores)));
  w->Set("tokenizer.ggml.token_type", GgufValue::Array(io::GgufType::kInt32, std::move(types)));
}

}  // namespace

std::string ExportLlamaGguf(const builtin::LlamaConfig& c, GgmlType type, const std::string& name) {
  if (type != GgmlType::kF32 && type != GgmlType::kF16 && type != GgmlType::kQ8_0 &&
      type != GgmlType::kQ4_0 && type != GgmlType::kQ4_1) {
    throw Error(ErrorCode::kInvalidArgument, "gguf export: the weight type must be F32, F16, Q8_0, Q4_0 or Q4_1");
  }
  RecordingWeights recorder(c.seed);
  builtin::MakeLlamaModel(c, builtin::LlamaForm::kFloat32, &recorder);
  io::GgufWriter w;
  SetMetadata(c, type, name, &w);
  const int64_t head_dim = c.hidden / c.q_heads;
  for (const RecordedWeight& r : recorder.weights()) {
    const std::string gguf_name = GgufLlamaTensorName(r.name);
    const float* v = r.value.data<float>();
    const std::vector<int64_t>& d = r.value.dims();
    if (d.size() == 1) {  // norm gains: F32
      w.AddTensor(gguf_name, {d[0]}, static_cast<uint32_t>(GgmlType::kF32),
                  Rows(GgmlType::kF32, v, 1, d[0]));
      continue;
    }
    if (!r.linear) {  // the embedding [vocab, hidden]: rows of hidden, as stored
      w.AddTensor(gguf_name, {d[1], d[0]}, static_cast<uint32_t>(type), Rows(type, v, d[0], d[1]));
      continue;
    }
    // W [k, n] -> n rows of k; Q and K rows in ggml's rotary order.
    const int64_t k = d[0], n = d[1];
    const bool rotary = r.name.find(".q_proj") != std::string::npos ||
                        r.name.find(".k_proj") != std::string::npos;
    std::vector<float> rows(static_cast<size_t>(k * n));
    for (int64_t j = 0; j < n; ++j) {
      const int64_t row = rotary ? GgufRotaryRow(j, head_dim) : j;
      for (int64_t i = 0; i < k; ++i) rows[static_cast<size_t>(row * k + i)] = v[i * n + j];
    }
    w.AddTensor(gguf_name, {k, n}, static_cast<uint32_t>(type), Rows(type, rows.data(), n, k));
  }
  return w.Serialize();
}

}  // namespace simplecpp::convert
