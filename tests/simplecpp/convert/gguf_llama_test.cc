// GGUF LLaMA import and export (simplecpp/convert/gguf_llama.h) on files the project writes: an
// F32 export imports as the built-in float32 graph bit for bit; for Q8_0, Q4_0 and Q4_1 every
// weight of the imported graph, dequantized by scalar code here, has the bits ggml's
// dequantization gives the file's blocks (decoded here from the layout, independently of
// quant/ggml_blocks), and the model runs within float32 rounding of the same decoder on those
// float weights; unsupported files are refused by name.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "quant/ggml_blocks.h"
#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/error.h"
#include "simplecpp/io/gguf.h"
#include "simplecpp/io/gguf_writer.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::convert {
namespace {

using builtin::LlamaConfig;
using quant::GgmlType;

// IEEE half -> float, written from the format (sign, 5-bit exponent, 10-bit fraction).
float HalfToFloat(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(frac), -24);
  } else if (exp == 31) {
    v = frac ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(frac + 1024), exp - 25);
  }
  return sign ? -v : v;
}

uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// Element e of a row in ggml's block layouts, computed as ggml defines it.
float GgmlElement(uint32_t type, const uint8_t* row, int64_t e) {
  const int64_t b = e / 32, j = e % 32;
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kQ8_0: {
      const uint8_t* blk = row + b * 34;
      return static_cast<float>(static_cast<int8_t>(blk[2 + j])) * HalfToFloat(U16(blk));
    }
    case GgmlType::kQ4_0: {
      const uint8_t* blk = row + b * 18;
      const int q = j < 16 ? (blk[2 + j] & 0x0f) : (blk[2 + j - 16] >> 4);
      return static_cast<float>(q - 8) * HalfToFloat(U16(blk));
    }
    case GgmlType::kQ4_1: {
      const uint8_t* blk = row + b * 20;
      const int q = j < 16 ? (blk[4 + j] & 0x0f) : (blk[4 + j - 16] >> 4);
      const float prod = static_cast<float>(q) * HalfToFloat(U16(blk));
      return prod + HalfToFloat(U16(blk + 2));
    }
    case GgmlType::kF32: {
      float v;
      std::memcpy(&v, row + e * 4, 4);
      return v;
    }
    case GgmlType::kF16: return HalfToFloat(U16(row + e * 2));
    default: FAIL("unexpected type"); return 0;
  }
}

int64_t RowBytes(uint32_t type, int64_t n) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kQ8_0: return n / 32 * 34;
    case GgmlType::kQ4_0: return n / 32 * 18;
    case GgmlType::kQ4_1: return n / 32 * 20;
    case GgmlType::kF16: return n * 2;
    default: return n * 4;
  }
}

// ggml's converter: rows reshaped to [heads, 2, head_dim / 2], axes 1 and 2 swapped. perm[new] = old.
std::vector<int64_t> RotaryPermutation(int64_t rows, int64_t head_dim) {
  std::vector<int64_t> perm;
  for (int64_t h = 0; h < rows / head_dim; ++h) {
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) perm.push_back(h * head_dim + j * (head_dim / 2) + i);
    }
  }
  return perm;
}

std::vector<std::string> LinearNames(const LlamaConfig& c) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i);
    for (const char* r : {".attn.q_proj", ".attn.k_proj", ".attn.v_proj", ".attn.o_proj",
                          ".mlp.gate_proj", ".mlp.up_proj", ".mlp.down_proj"}) {
      names.push_back(p + r);
    }
  }
  names.push_back("lm_head");
  return names;
}

const Tensor* Initializer(const graph::Model& m, const std::string& name) {
  for (const auto& [n, t] : m.graph.initializers) {
    if (n == name) return &t;
  }
  return nullptr;
}

// The float32 [k, n] weight the imported graph computes for `name`: (code - 0) * scale
// [+ block minimum], from its initializers, by scalar code.
std::vector<float> GraphWeight(const graph::Model& m, const std::string& name, int64_t k, int64_t n) {
  const Tensor* codes = Initializer(m, name + ".weight.codes");
  const Tensor* scales = Initializer(m, name + ".weight.scale");
  const Tensor* mins = Initializer(m, name + ".weight.block_min");
  std::vector<float> w(static_cast<size_t>(k * n));
  if (!codes) {
    const Tensor* f = Initializer(m, name + ".weight");
    REQUIRE(f != nullptr);
    std::memcpy(w.data(), f->data<float>(), w.size() * sizeof(float));
    return w;
  }
  REQUIRE(scales != nullptr);
  CHECK(Initializer(m, name + ".weight.zero_point") == nullptr);
  const uint8_t* bytes = static_cast<const uint8_t*>(codes->raw_data());
  for (int64_t i = 0; i < k * n; ++i) {
    int q;
    if (codes->dtype() == DType::kInt8) {
      q = static_cast<int8_t>(bytes[i]);
    } else {
      const int nib = (bytes[i / 2] >> (4 * (i % 2))) & 0x0f;  // element 2j low nibble
      q = codes->dtype() == DType::kInt4 && nib >= 8 ? nib - 16 : nib;
    }
    const int64_t p = (i / n / 32) * n + i % n;
    const float prod = static_cast<float>(q) * scales->data<float>()[p];
    w[static_cast<size_t>(i)] = mins ? prod + mins->data<float>()[p] : prod;
  }
  return w;
}

// The float32 [vocab, hidden] token embedding of the imported graph: its float initializer, or
// code * scale [+ block minimum] of its blocked rows, by scalar code.
std::vector<float> GraphEmbedding(const graph::Model& m, int64_t vocab, int64_t hidden) {
  std::vector<float> e(static_cast<size_t>(vocab * hidden));
  if (const Tensor* f = Initializer(m, "model.embed_tokens.weight")) {
    std::memcpy(e.data(), f->data<float>(), e.size() * sizeof(float));
    return e;
  }
  const Tensor* codes = Initializer(m, "model.embed_tokens.codes");
  const Tensor* scales = Initializer(m, "model.embed_tokens.scale");
  const Tensor* mins = Initializer(m, "model.embed_tokens.block_min");
  REQUIRE(codes != nullptr);
  REQUIRE(scales != nullptr);
  for (int64_t i = 0; i < vocab * hidden; ++i) {
    const uint8_t byte = static_cast<const uint8_t*>(codes->raw_data())[i];
    const int q = codes->dtype() == DType::kInt8 ? static_cast<int8_t>(byte) : byte;
    const int64_t p = (i / hidden) * (hidden / 32) + (i % hidden) / 32;
    const float prod = static_cast<float>(q) * scales->data<float>()[p];
    e[static_cast<size_t>(i)] = mins ? prod + mins->data<float>()[p] : prod;
  }
  return e;
}

struct Prefill {
  Tensor logits;
  std::vector<Tensor> presents;
};

Prefill Run(const graph::Model& m, const LlamaConfig& c, const std::vector<int64_t>& ids) {
  const std::string bytes = onnx::WriteModel(m);
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  SessionOptions o;
  o.threads = 1;
  Session s(model, o);
  std::map<std::string, Tensor> feeds;
  feeds["input_ids"] = Tensor::FromVector<int64_t>(DType::kInt64, {1, static_cast<int64_t>(ids.size())}, ids);
  for (int64_t i = 0; i < c.layers; ++i) {
    for (const char* kv : {"key", "value"}) {
      feeds["past_key_values." + std::to_string(i) + "." + kv] =
          Tensor(DType::kFloat32, {1, c.kv_heads, 0, c.hidden / c.q_heads});
    }
  }
  std::map<std::string, Tensor> out = s.Run(feeds);
  Prefill p;
  p.logits = out.at("logits");
  for (int64_t i = 0; i < c.layers; ++i) {
    for (const char* kv : {"key", "value"}) p.presents.push_back(out.at("present." + std::to_string(i) + "." + kv));
  }
  return p;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

const std::vector<int64_t> kPrompt = {1, 17, 42, 200, 5, 255};

TEST_CASE("gguf llama: an F32 export imports as the built-in float32 graph, bit for bit") {
  const LlamaConfig c = builtin::SmallLlamaConfig();
  const std::string bytes = ExportLlamaGguf(c, GgmlType::kF32, "tiny");
  const io::GgufFile f = io::ParseGguf(bytes.data(), bytes.size());
  GgufImportReport report;
  const graph::Model imported = ImportLlamaGguf(f, &report);
  CHECK(report.name == "tiny");
  CHECK(report.tensor_types.at("F32") == static_cast<int>(f.tensors.size()));
  CHECK_FALSE(report.tied_output);
  CHECK(report.config.layers == c.layers);
  CHECK(report.config.hidden == c.hidden);
  CHECK(report.config.q_heads == c.q_heads);
  CHECK(report.config.kv_heads == c.kv_heads);
  CHECK(report.config.ffn == c.ffn);
  CHECK(report.config.vocab == c.vocab);
  CHECK(report.config.max_positions == c.max_positions);
  CHECK(report.config.rms_eps == c.rms_eps);
  CHECK(report.config.rope_theta == c.rope_theta);

  const graph::Model builtin = builtin::MakeLlamaModel(c, builtin::LlamaForm::kFloat32);
  REQUIRE(imported.graph.initializers.size() == builtin.graph.initializers.size());
  for (const auto& [init_name, t] : builtin.graph.initializers) {
    const std::string name = init_name;
    CAPTURE(name);
    const Tensor* u = Initializer(imported, name);
    REQUIRE(u != nullptr);
    CHECK(SameBits(*u, t));
  }
  const Prefill a = Run(imported, c, kPrompt), b = Run(builtin, c, kPrompt);
  CHECK(SameBits(a.logits, b.logits));
  for (size_t i = 0; i < a.presents.size(); ++i) CHECK(SameBits(a.presents[i], b.presents[i]));
}

// Float weights read from the imported graph (its blocked ones dequantized by GraphWeight).
class GraphFloatWeights final : public builtin::LlamaWeights {
 public:
  explicit GraphFloatWeights(const graph::Model& m) : m_(m) {}
  builtin::LlamaLinearWeight Embedding(int64_t vocab, int64_t hidden) override {
    builtin::LlamaLinearWeight e;
    e.weight = Tensor::FromVector<float>(DType::kFloat32, {vocab, hidden}, GraphEmbedding(m_, vocab, hidden));
    return e;
  }
  Tensor Gain(const std::string& name, int64_t) override { return *Initializer(m_, name + ".weight"); }
  builtin::LlamaLinearWeight Linear(const std::string& name, int64_t k, int64_t n) override {
    builtin::LlamaLinearWeight w;
    w.weight = Tensor::FromVector<float>(DType::kFloat32, {k, n}, GraphWeight(m_, name, k, n));
    return w;
  }

 private:
  const graph::Model& m_;
};

TEST_CASE("gguf llama: Q8_0, Q4_0 and Q4_1 weights dequantize to ggml's values exactly") {
  const LlamaConfig c = builtin::SmallLlamaConfig();
  const int64_t head_dim = c.hidden / c.q_heads;
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    CAPTURE(static_cast<int>(type));
    const std::string bytes = ExportLlamaGguf(c, type, "tiny");
    const io::GgufFile f = io::ParseGguf(bytes.data(), bytes.size());
    const graph::Model m = ImportLlamaGguf(f);
    for (const std::string& name : LinearNames(c)) {
      CAPTURE(name);
      const io::GgufTensorInfo* t = f.FindTensor(GgufLlamaTensorName(name));
      REQUIRE(t != nullptr);
      CHECK(t->type == static_cast<uint32_t>(type));
      const int64_t k = t->dims[0], n = t->dims[1];
      const std::vector<float> w = GraphWeight(m, name, k, n);
      const bool rotary = name.find("q_proj") != std::string::npos || name.find("k_proj") != std::string::npos;
      std::vector<int64_t> row_of(static_cast<size_t>(n));
      const std::vector<int64_t> perm = RotaryPermutation(n, head_dim);
      for (int64_t r = 0; r < n; ++r) row_of[static_cast<size_t>(rotary ? perm[static_cast<size_t>(r)] : r)] = r;
      int mismatches = 0;
      for (int64_t col = 0; col < n; ++col) {
        const uint8_t* row = t->data + row_of[static_cast<size_t>(col)] * RowBytes(t->type, k);
        for (int64_t i = 0; i < k; ++i) {
          const float want = GgmlElement(t->type, row, i);
          const float got = w[static_cast<size_t>(i * n + col)];
          if (std::memcmp(&want, &got, sizeof(float)) != 0) ++mismatches;
        }
      }
      CHECK(mismatches == 0);
    }
    // The embedding: blocked 8-bit rows that dequantize to ggml's values.
    const io::GgufTensorInfo* e = f.FindTensor("token_embd.weight");
    CHECK(Initializer(m, "model.embed_tokens.weight") == nullptr);
    const std::vector<float> embed = GraphEmbedding(m, c.vocab, c.hidden);
    int mismatches = 0;
    for (int64_t v = 0; v < c.vocab; ++v) {
      for (int64_t i = 0; i < c.hidden; ++i) {
        const float want = GgmlElement(e->type, e->data + v * RowBytes(e->type, c.hidden), i);
        if (std::memcmp(&want, &embed[static_cast<size_t>(v * c.hidden + i)], 4) != 0) ++mismatches;
      }
    }
    CHECK(mismatches == 0);

    // The model runs like the float32 decoder on the same dequantized weights (the packed
    // MatMulNBits path sums in another order: float32 rounding only).
    GraphFloatWeights floats(m);
    const graph::Model reference = builtin::MakeLlamaModel(c, builtin::LlamaForm::kFloat32, &floats);
    const Prefill a = Run(m, c, kPrompt), b = Run(reference, c, kPrompt);
    REQUIRE(a.logits.dims() == b.logits.dims());
    double max_err = 0, max_ref = 0;
    for (int64_t i = 0; i < a.logits.num_elements(); ++i) {
      max_err = std::max(max_err, std::fabs(static_cast<double>(a.logits.data<float>()[i]) - b.logits.data<float>()[i]));
      max_ref = std::max(max_ref, std::fabs(static_cast<double>(b.logits.data<float>()[i])));
    }
    CHECK(max_ref > 0.1);
    CHECK(max_err <= 1e-5 * std::max(1.0, max_ref));
  }
}

struct EditableTensor {
  std::string name;
  std::vector<int64_t> dims;
  uint32_t type;
  std::string bytes;
};

// The file rewritten with `edit` applied to its metadata and tensors.
std::string Rewrite(const io::GgufFile& f,
                    const std::function<void(std::vector<std::pair<std::string, io::GgufValue>>*,
                                             std::vector<EditableTensor>*)>& edit) {
  std::vector<std::pair<std::string, io::GgufValue>> metadata = f.metadata;
  std::vector<EditableTensor> tensors;
  for (const io::GgufTensorInfo& t : f.tensors) {
    tensors.push_back({t.name, t.dims, t.type, std::string(reinterpret_cast<const char*>(t.data), t.bytes)});
  }
  edit(&metadata, &tensors);
  io::GgufWriter w;
  for (auto& [k, v] : metadata) w.Set(k, v);
  for (EditableTensor& t : tensors) w.AddTensor(t.name, t.dims, t.type, t.bytes);
  return w.Serialize();
}

void SetKey(std::vector<std::pair<std::string, io::GgufValue>>* md, const std::string& key, io::GgufValue v) {
  for (auto& [k, old] : *md) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  md->emplace_back(key, std::move(v));
}

// Import's error code and message ("" when it succeeds).
std::pair<ErrorCode, std::string> ImportError(const std::string& bytes) {
  try {
    const io::GgufFile f = io::ParseGguf(bytes.data(), bytes.size());
    ImportLlamaGguf(f);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {static_cast<ErrorCode>(0), ""};
}

TEST_CASE("gguf llama: other architectures, K-quants, rope scaling and stray tensors are refused by name") {
  const LlamaConfig c = builtin::SmallLlamaConfig();
  const std::string bytes = ExportLlamaGguf(c, GgmlType::kQ4_0, "tiny");
  const io::GgufFile f = io::ParseGguf(bytes.data(), bytes.size());
  using MD = std::vector<std::pair<std::string, io::GgufValue>>;
  using TS = std::vector<EditableTensor>;

  auto e = ImportError(Rewrite(f, [](MD* md, TS*) { SetKey(md, "general.architecture", io::GgufValue::String("qwen2")); }));
  CHECK(e.first == ErrorCode::kUnsupported);
  CHECK(e.second.find("'qwen2'") != std::string::npos);

  e = ImportError(Rewrite(f, [](MD*, TS* ts) {
    for (EditableTensor& t : *ts) {
      if (t.name == "blk.1.attn_v.weight") {  // [128, 64] as Q4_K: 256-element blocks of 144 bytes
        t.dims = {256, 32};
        t.type = static_cast<uint32_t>(GgmlType::kQ4_K);
        t.bytes.assign(32 * 144, '\0');
      }
    }
  }));
  CHECK(e.first == ErrorCode::kUnsupported);
  CHECK(e.second.find("Q4_K") != std::string::npos);
  CHECK(e.second.find("blk.1.attn_v.weight") != std::string::npos);

  e = ImportError(Rewrite(f, [](MD*, TS* ts) { ts->push_back({"blk.0.attn_q.bias", {128}, 0, std::string(512, '\0')}); }));
  CHECK(e.first == ErrorCode::kUnsupported);
  CHECK(e.second.find("blk.0.attn_q.bias") != std::string::npos);

  e = ImportError(Rewrite(f, [](MD*, TS* ts) {
    for (size_t i = 0; i < ts->size(); ++i) {
      if ((*ts)[i].name == "blk.1.ffn_down.weight") ts->erase(ts->begin() + static_cast<std::ptrdiff_t>(i));
    }
  }));
  CHECK(e.first == ErrorCode::kInvalidModel);
  CHECK(e.second.find("blk.1.ffn_down.weight") != std::string::npos);

  e = ImportError(Rewrite(f, [](MD* md, TS*) { SetKey(md, "llama.rope.scaling.type", io::GgufValue::String("linear")); }));
  CHECK(e.first == ErrorCode::kUnsupported);
  CHECK(e.second.find("linear") != std::string::npos);

  e = ImportError(Rewrite(f, [](MD* md, TS*) { SetKey(md, "llama.rope.dimension_count", io::GgufValue::UInt32(16)); }));
  CHECK(e.first == ErrorCode::kUnsupported);

  e = ImportError(Rewrite(f, [](MD* md, TS*) { SetKey(md, "llama.expert_count", io::GgufValue::UInt32(8)); }));
  CHECK(e.first == ErrorCode::kUnsupported);

  e = ImportError(Rewrite(f, [](MD* md, TS*) {
    for (size_t i = 0; i < md->size(); ++i) {
      if ((*md)[i].first == "llama.block_count") md->erase(md->begin() + static_cast<std::ptrdiff_t>(i));
    }
  }));
  CHECK(e.first == ErrorCode::kInvalidModel);
  CHECK(e.second.find("llama.block_count") != std::string::npos);

  e = ImportError(Rewrite(f, [](MD*, TS* ts) {
    for (EditableTensor& t : *ts) {
      if (t.name == "blk.0.attn_k.weight") t.dims = {128, 32}, t.bytes.resize(32 * 4 * 18);
    }
  }));
  CHECK(e.first == ErrorCode::kInvalidModel);
  CHECK(e.second.find("blk.0.attn_k.weight") != std::string::npos);
}

TEST_CASE("gguf llama: without output.weight the output matrix is the token embedding") {
  const LlamaConfig c = builtin::SmallLlamaConfig();
  const std::string bytes = ExportLlamaGguf(c, GgmlType::kQ8_0, "tiny");
  const io::GgufFile f = io::ParseGguf(bytes.data(), bytes.size());
  const std::string tied = Rewrite(f, [](auto*, std::vector<EditableTensor>* ts) {
    for (size_t i = 0; i < ts->size(); ++i) {
      if ((*ts)[i].name == "output.weight") ts->erase(ts->begin() + static_cast<std::ptrdiff_t>(i));
    }
  });
  const io::GgufFile g = io::ParseGguf(tied.data(), tied.size());
  GgufImportReport report;
  const graph::Model m = ImportLlamaGguf(g, &report);
  CHECK(report.tied_output);
  // lm_head [hidden, vocab] is the transposed embedding [vocab, hidden].
  const std::vector<float> head = GraphWeight(m, "lm_head", c.hidden, c.vocab);
  const std::vector<float> embed = GraphEmbedding(m, c.vocab, c.hidden);
  int mismatches = 0;
  for (int64_t v = 0; v < c.vocab; ++v) {
    for (int64_t i = 0; i < c.hidden; ++i) {
      if (head[static_cast<size_t>(i * c.vocab + v)] != embed[static_cast<size_t>(v * c.hidden + i)]) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
  CHECK(Run(m, c, kPrompt).logits.dim(2) == c.vocab);
}

TEST_CASE("gguf llama: tensor names and the rotary row order") {
  CHECK(GgufLlamaTensorName("model.embed_tokens") == "token_embd.weight");
  CHECK(GgufLlamaTensorName("model.layers.12.attn.o_proj") == "blk.12.attn_output.weight");
  CHECK(GgufLlamaTensorName("model.layers.0.post_attention_layernorm") == "blk.0.ffn_norm.weight");
  CHECK(GgufLlamaTensorName("lm_head") == "output.weight");
  CHECK(GgufLlamaTensorName("model.layers.0.mlp.fc1").empty());
  const std::vector<int64_t> perm = RotaryPermutation(96, 32);
  for (int64_t hf = 0; hf < 96; ++hf) {
    CAPTURE(hf);
    CHECK(perm[static_cast<size_t>(GgufRotaryRow(hf, 32))] == hf);
  }
}

}  // namespace
}  // namespace simplecpp::convert
