// GGUF LLaMA import (simplecpp/convert/gguf_llama.h): metadata -> LlamaConfig, tensors -> a
// builtin::LlamaWeights source, and the decoder graph built from them.
#include <algorithm>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "quant/ggml_blocks.h"
#include "quant/int4.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/error.h"

namespace simplecpp::convert {
namespace {

using quant::GgmlType;

constexpr int64_t kGgmlBlock = 32;
// The rotary caches get one row per position up to this many (context_length beyond it would
// cost memory for positions a session on this library is not expected to reach).
constexpr int64_t kMaxRotaryPositions = 32768;
// Real LLaMA heads are 64 to 256 wide; the bound keeps the rotary caches (positions x head size)
// of a hostile header small.
constexpr int64_t kMaxHeadDim = 1024;

[[noreturn]] void Unsupported(const std::string& what) {
  throw Error(ErrorCode::kUnsupported, "gguf: " + what);
}
[[noreturn]] void Bad(const std::string& what) {
  throw Error(ErrorCode::kInvalidModel, "gguf: " + what);
}

int64_t IntKey(const io::GgufFile& f, const std::string& key, int64_t fallback, bool required) {
  const io::GgufValue* v = f.Find(key);
  if (!v) {
    if (required) Bad("LLaMA metadata '" + key + "' is missing");
    return fallback;
  }
  if (!v->is_integer() || v->integer < 1 || v->integer > (int64_t{1} << 40)) {
    Bad("metadata '" + key + "' must be a positive integer");
  }
  return v->integer;
}

double RealKey(const io::GgufFile& f, const std::string& key, double fallback) {
  const io::GgufValue* v = f.Find(key);
  if (!v) return fallback;
  if (v->type != io::GgufType::kFloat32 && v->type != io::GgufType::kFloat64) {
    Bad("metadata '" + key + "' must be a float");
  }
  return v->real;
}

std::string TypeName(uint32_t type) {
  const char* n = quant::GgmlTypeName(type);
  return n ? n : "type " + std::to_string(type);
}

// The decoder's weights read from the file's tensors; records which tensors were used.
class GgufLlamaWeights final : public builtin::LlamaWeights {
 public:
  GgufLlamaWeights(const io::GgufFile& f, const builtin::LlamaConfig& c)
      : f_(f), head_dim_(c.hidden / c.q_heads) {}

  // token_embd: float32 rows, or blocked rows of 8-bit codes (Gather reads whole bytes; a 4-bit
  // code takes one byte here, the same integer).
  builtin::LlamaLinearWeight Embedding(int64_t vocab, int64_t hidden) override {
    const io::GgufTensorInfo& t = Tensor2D("token_embd.weight", hidden, vocab);
    builtin::LlamaLinearWeight e;
    const GgmlType type = static_cast<GgmlType>(t.type);
    if (type == GgmlType::kF32 || type == GgmlType::kF16) {
      e.weight = FloatMatrix(t, hidden, vocab, false, /*transpose=*/false);
      return e;
    }
    const int64_t hb = hidden / kGgmlBlock;
    const int64_t row_bytes = quant::GgmlRowBytes(t.type, hidden);
    std::vector<int32_t> codes(static_cast<size_t>(hidden));
    e.block = kGgmlBlock;
    e.weight = Tensor(type == GgmlType::kQ4_1 ? DType::kUInt8 : DType::kInt8, {vocab, hidden});
    e.scales = Tensor(DType::kFloat32, {vocab, hb});
    if (type == GgmlType::kQ4_1) e.block_min = Tensor(DType::kFloat32, {vocab, hb});
    uint8_t* out = static_cast<uint8_t*>(e.weight.raw_data());
    const int32_t shift = type == GgmlType::kQ4_0 ? 8 : 0;
    for (int64_t v = 0; v < vocab; ++v) {
      quant::DecodeGgmlRow(type, t.data + v * row_bytes, hidden, codes.data(),
                           e.scales.data<float>() + v * hb,
                           type == GgmlType::kQ4_1 ? e.block_min.data<float>() + v * hb : nullptr);
      for (int64_t i = 0; i < hidden; ++i) {
        out[v * hidden + i] = static_cast<uint8_t>(codes[static_cast<size_t>(i)] - shift);
      }
    }
    return e;
  }

  Tensor Gain(const std::string& name, int64_t hidden) override {
    const io::GgufTensorInfo& t = Tensor1D(GgufLlamaTensorName(name), hidden);
    Tensor out(DType::kFloat32, {hidden});
    quant::DequantizeGgmlRow(static_cast<GgmlType>(t.type), t.data, hidden, out.data<float>());
    return out;
  }

  builtin::LlamaLinearWeight Linear(const std::string& name, int64_t k, int64_t n) override {
    std::string gguf_name = GgufLlamaTensorName(name);
    if (name == "lm_head" && !f_.FindTensor(gguf_name)) {
      gguf_name = "token_embd.weight";  // tied embeddings
      tied_ = true;
    }
    const io::GgufTensorInfo& t = Tensor2D(gguf_name, k, n);
    const bool rotary = name.size() > 7 && (name.compare(name.size() - 7, 7, ".q_proj") == 0 ||
                                            name.compare(name.size() - 7, 7, ".k_proj") == 0);
    builtin::LlamaLinearWeight w;
    const GgmlType type = static_cast<GgmlType>(t.type);
    if (type == GgmlType::kF32 || type == GgmlType::kF16) {
      w.weight = FloatMatrix(t, k, n, rotary);
      return w;
    }
    BlockedMatrix(t, k, n, rotary, &w);
    return w;
  }

  bool tied() const { return tied_; }
  const std::set<std::string>& used() const { return used_; }

 private:
  const io::GgufTensorInfo& Find(const std::string& name) {
    const io::GgufTensorInfo* t = f_.FindTensor(name);
    if (!t) Bad("tensor '" + name + "' is missing");
    if (!quant::GgmlTypeIsSupported(static_cast<GgmlType>(t->type))) {
      Unsupported("tensor '" + name + "' is " + TypeName(t->type) +
                  ", which is not supported (F32, F16, Q8_0, Q4_0 and Q4_1 are)");
    }
    used_.insert(name);
    return *t;
  }

  const io::GgufTensorInfo& Tensor1D(const std::string& name, int64_t n) {
    const io::GgufTensorInfo& t = Find(name);
    if (t.dims.size() != 1 || t.dims[0] != n) Bad("tensor '" + name + "' must have dims [" + std::to_string(n) + "]");
    const GgmlType type = static_cast<GgmlType>(t.type);
    if (type != GgmlType::kF32 && type != GgmlType::kF16) Unsupported("tensor '" + name + "' is " + TypeName(t.type) + "; norm weights must be F32 or F16");
    return t;
  }

  // A matrix of `rows` rows of `row_len` elements (ggml dims [row_len, rows]).
  const io::GgufTensorInfo& Tensor2D(const std::string& name, int64_t row_len, int64_t rows) {
    const io::GgufTensorInfo& t = Find(name);
    if (t.dims.size() != 2 || t.dims[0] != row_len || t.dims[1] != rows) {
      Bad("tensor '" + name + "' must have ggml dims [" + std::to_string(row_len) + ", " +
          std::to_string(rows) + "]");
    }
    return t;
  }

  int64_t SourceRow(int64_t n, bool rotary) const {
    return rotary ? GgufRotaryRow(n, head_dim_) : n;
  }

  // n rows of k dequantized to float32: transposed to [k, n] (x @ W), or [n, k] as stored.
  Tensor FloatMatrix(const io::GgufTensorInfo& t, int64_t k, int64_t n, bool rotary,
                     bool transpose = true) {
    const GgmlType type = static_cast<GgmlType>(t.type);
    const int64_t row_bytes = quant::GgmlRowBytes(t.type, k);
    std::vector<float> row(static_cast<size_t>(k));
    Tensor out(DType::kFloat32, transpose ? std::vector<int64_t>{k, n} : std::vector<int64_t>{n, k});
    float* o = out.data<float>();
    for (int64_t j = 0; j < n; ++j) {
      quant::DequantizeGgmlRow(type, t.data + SourceRow(j, rotary) * row_bytes, k, row.data());
      if (!transpose) {
        std::memcpy(o + j * k, row.data(), static_cast<size_t>(k) * sizeof(float));
        continue;
      }
      for (int64_t i = 0; i < k; ++i) o[i * n + j] = row[static_cast<size_t>(i)];
    }
    return out;
  }

  // Q8_0 / Q4_0 / Q4_1 rows of k -> codes [k, n], scales (and Q4_1 minimums) [k / 32, n].
  // Each decoded row goes straight into its column of the packed codes: no K x N temporary.
  void BlockedMatrix(const io::GgufTensorInfo& t, int64_t k, int64_t n, bool rotary,
                     builtin::LlamaLinearWeight* w) {
    const GgmlType type = static_cast<GgmlType>(t.type);
    const int64_t kb = k / kGgmlBlock;
    const int64_t row_bytes = quant::GgmlRowBytes(t.type, k);
    std::vector<int32_t> row_codes(static_cast<size_t>(k));
    std::vector<float> row_scales(static_cast<size_t>(kb)), row_mins(static_cast<size_t>(kb));
    w->block = kGgmlBlock;
    w->scales = Tensor(DType::kFloat32, {kb, n});
    if (type == GgmlType::kQ4_1) w->block_min = Tensor(DType::kFloat32, {kb, n});
    const DType code_type = type == GgmlType::kQ8_0   ? DType::kInt8
                            : type == GgmlType::kQ4_0 ? DType::kInt4
                                                      : DType::kUInt4;
    w->weight = Tensor(code_type, {k, n});
    uint8_t* codes = static_cast<uint8_t*>(w->weight.raw_data());
    float* scales = w->scales.data<float>();
    // Q4_0's stored nibble q means q - 8: written as the signed int4 code, no zero point.
    const int32_t shift = type == GgmlType::kQ4_0 ? 8 : 0;
    for (int64_t j = 0; j < n; ++j) {
      quant::DecodeGgmlRow(type, t.data + SourceRow(j, rotary) * row_bytes, k, row_codes.data(),
                           row_scales.data(), row_mins.data());
      for (int64_t i = 0; i < k; ++i) {
        const int32_t code = row_codes[static_cast<size_t>(i)] - shift;
        if (code_type == DType::kInt8) {
          codes[i * n + j] = static_cast<uint8_t>(static_cast<int8_t>(code));
        } else {
          quant::SetSubByte(codes, i * n + j, 4, code);
        }
      }
      for (int64_t b = 0; b < kb; ++b) {
        scales[b * n + j] = row_scales[static_cast<size_t>(b)];
        if (type == GgmlType::kQ4_1) w->block_min.data<float>()[b * n + j] = row_mins[static_cast<size_t>(b)];
      }
    }
  }

  const io::GgufFile& f_;
  const int64_t head_dim_;
  std::set<std::string> used_;
  bool tied_ = false;
};

}  // namespace

int64_t GgufRotaryRow(int64_t hf_row, int64_t head_dim) {
  const int64_t half = head_dim / 2;
  const int64_t head = hf_row / head_dim, rem = hf_row % head_dim;
  const int64_t j = rem / half, i = rem % half;
  return head * head_dim + 2 * i + j;
}

std::string GgufLlamaTensorName(const std::string& w) {
  if (w == "model.embed_tokens") return "token_embd.weight";
  if (w == "model.norm") return "output_norm.weight";
  if (w == "lm_head") return "output.weight";
  const std::string prefix = "model.layers.";
  if (w.compare(0, prefix.size(), prefix) != 0) return "";
  const size_t dot = w.find('.', prefix.size());
  if (dot == std::string::npos) return "";
  const std::string layer = w.substr(prefix.size(), dot - prefix.size());
  const std::string role = w.substr(dot + 1);
  static const std::pair<const char*, const char*> kRoles[] = {
      {"input_layernorm", "attn_norm"}, {"attn.q_proj", "attn_q"},   {"attn.k_proj", "attn_k"},
      {"attn.v_proj", "attn_v"},        {"attn.o_proj", "attn_output"},
      {"post_attention_layernorm", "ffn_norm"}, {"mlp.gate_proj", "ffn_gate"},
      {"mlp.up_proj", "ffn_up"},        {"mlp.down_proj", "ffn_down"}};
  for (const auto& [hf, gg] : kRoles) {
    if (role == hf) return "blk." + layer + "." + gg + ".weight";
  }
  return "";
}

builtin::LlamaConfig LlamaConfigFromGguf(const io::GgufFile& f) {
  const io::GgufValue* arch = f.Find("general.architecture");
  if (!arch || arch->type != io::GgufType::kString) Bad("general.architecture (a string) is missing");
  if (arch->text != "llama") {
    Unsupported("architecture '" + arch->text + "' is not supported (only llama)");
  }
  if (IntKey(f, "llama.expert_count", 0, false) > 0) {
    Unsupported("mixture-of-experts LLaMA models (llama.expert_count) are not supported");
  }
  if (const io::GgufValue* s = f.Find("llama.rope.scaling.type")) {
    if (s->type != io::GgufType::kString || s->text != "none") {
      Unsupported("rope scaling (llama.rope.scaling.type '" + s->text + "') is not supported");
    }
  }
  if (f.FindTensor("rope_freqs.weight")) {
    Unsupported("rope frequency factors (tensor rope_freqs.weight) are not supported");
  }
  builtin::LlamaConfig c;
  c.layers = IntKey(f, "llama.block_count", 0, true);
  c.hidden = IntKey(f, "llama.embedding_length", 0, true);
  c.ffn = IntKey(f, "llama.feed_forward_length", 0, true);
  c.q_heads = IntKey(f, "llama.attention.head_count", 0, true);
  c.kv_heads = IntKey(f, "llama.attention.head_count_kv", c.q_heads, false);
  c.rms_eps = static_cast<float>(RealKey(f, "llama.attention.layer_norm_rms_epsilon", 1e-5));
  c.rope_theta = static_cast<float>(RealKey(f, "llama.rope.freq_base", 10000.0));
  c.max_positions = std::min(IntKey(f, "llama.context_length", 2048, false), kMaxRotaryPositions);
  // A layer is nine tensors: more layers than tensors cannot be (and would only make the graph
  // builder loop over layers that are not there).
  if (c.layers > static_cast<int64_t>(f.tensors.size())) {
    Bad("llama.block_count " + std::to_string(c.layers) + " exceeds the file's " +
        std::to_string(f.tensors.size()) + " tensors");
  }
  if (c.hidden % c.q_heads != 0) Bad("llama.embedding_length is not a multiple of the head count");
  if (c.q_heads % c.kv_heads != 0) Bad("the head count is not a multiple of llama.attention.head_count_kv");
  const int64_t head_dim = c.hidden / c.q_heads;
  if (head_dim % 2 != 0 || head_dim > kMaxHeadDim) {
    Unsupported("head size " + std::to_string(head_dim) + " (rotary needs an even size up to " +
                std::to_string(kMaxHeadDim) + ")");
  }
  for (const char* key : {"llama.rope.dimension_count", "llama.attention.key_length",
                          "llama.attention.value_length"}) {
    const int64_t v = IntKey(f, key, head_dim, false);
    if (v != head_dim) {
      Unsupported(std::string(key) + " " + std::to_string(v) + " differs from the head size " +
                  std::to_string(head_dim) + " (partial rotary or unusual heads)");
    }
  }
  const io::GgufTensorInfo* embd = f.FindTensor("token_embd.weight");
  if (!embd || embd->dims.size() != 2) Bad("tensor 'token_embd.weight' (2-D) is missing");
  c.vocab = embd->dims[1];
  if (IntKey(f, "llama.vocab_size", c.vocab, false) != c.vocab) {
    Bad("llama.vocab_size differs from the rows of token_embd.weight");
  }
  for (int64_t dim : {c.hidden, c.ffn}) {
    if (dim % kGgmlBlock != 0) Bad("embedding and feed-forward lengths must be multiples of 32");
  }
  return c;
}

graph::Model ImportLlamaGguf(const io::GgufFile& f, GgufImportReport* report) {
  const builtin::LlamaConfig config = LlamaConfigFromGguf(f);
  GgufLlamaWeights weights(f, config);
  graph::Model m = builtin::MakeLlamaModel(config, builtin::LlamaForm::kFloat32, &weights);
  for (const io::GgufTensorInfo& t : f.tensors) {
    if (!weights.used().count(t.name)) {
      Unsupported("tensor '" + t.name + "' is not part of the LLaMA graph this converter writes");
    }
  }
  const io::GgufValue* name = f.Find("general.name");
  m.doc = "LLaMA decoder imported from GGUF" +
          (name && name->type == io::GgufType::kString ? " (" + name->text + ")" : std::string());
  m.producer_version = "gguf import";
  if (report) {
    report->config = config;
    report->name = name && name->type == io::GgufType::kString ? name->text : "";
    report->tensor_types.clear();
    for (const io::GgufTensorInfo& t : f.tensors) report->tensor_types[TypeName(t.type)]++;
    report->tied_output = weights.tied();
  }
  return m;
}

}  // namespace simplecpp::convert
