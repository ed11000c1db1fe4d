// The LLaMA-style built-in decoder (builtin_llama.h): one weight stream drawn in a fixed order for
// every form, so the float32, ONNX int4 and com.microsoft models hold the same weights; only the
// way each projection and layer is spelled differs.
#include "simplecpp/api/builtin_llama.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "quant/block_quant.h"
#include "quant/int4.h"
#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/error.h"

namespace simplecpp::builtin {
namespace {

using namespace detail;  // NOLINT: the builder helpers (builtin_builder.h)

constexpr int64_t kBlock = 32;  // int4 block size along K
const char kMs[] = "com.microsoft";

graph::ValueInfo SymbolicValue(const std::string& name, DType dtype,
                               const std::vector<graph::Dim>& dims) {
  graph::ValueInfo v = TensorValue(name, {}, dtype);
  v.type.dims = dims;
  return v;
}

graph::Dim Sym(const std::string& param) { return graph::Dim{-1, param}; }
graph::Dim Fixed(int64_t v) { return graph::Dim{v, ""}; }

class LlamaBuilder {
 public:
  LlamaBuilder(const LlamaConfig& c, LlamaForm form, LlamaWeights* weights, graph::Graph* g)
      : c_(c), form_(form), w_(weights), b_(g, c.seed), head_dim_(c.hidden / c.q_heads) {}

  void Build() {
    graph::Graph& g = *b_.graph();
    g.inputs.push_back(
        SymbolicValue("input_ids", DType::kInt64, {Sym("batch_size"), Sym("sequence_length")}));
    if (form_ == LlamaForm::kMsft) {
      g.inputs.push_back(SymbolicValue("attention_mask", DType::kInt64,
                                       {Sym("batch_size"), Sym("total_sequence_length")}));
    }
    for (int64_t i = 0; i < c_.layers; ++i) {
      for (const char* kv : {"key", "value"}) {
        g.inputs.push_back(SymbolicValue("past_key_values." + std::to_string(i) + "." + kv,
                                         DType::kFloat32,
                                         {Sym("batch_size"), Fixed(c_.kv_heads),
                                          Sym("past_sequence_length"), Fixed(head_dim_)}));
      }
    }
    g.outputs.push_back(SymbolicValue(
        "logits", DType::kFloat32, {Sym("batch_size"), Sym("sequence_length"), Fixed(c_.vocab)}));
    for (int64_t i = 0; i < c_.layers; ++i) {
      for (const char* kv : {"key", "value"}) {
        g.outputs.push_back(SymbolicValue("present." + std::to_string(i) + "." + kv,
                                          DType::kFloat32,
                                          {Sym("batch_size"), Fixed(c_.kv_heads),
                                           Sym("total_sequence_length"), Fixed(head_dim_)}));
      }
    }

    EmbeddingInitializers();
    RotaryCaches();
    if (form_ == LlamaForm::kMsft) {
      MsftMaskInputs();
    } else {
      PositionIds();
    }
    std::string x = EmbedTokens();
    std::string residual;  // kMsft: the running sum (SkipSimplifiedLayerNormalization output 3)
    std::string pending;   // kMsft: the last sublayer output not yet added to the residual
    for (int64_t i = 0; i < c_.layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i);
      // Attention block.
      const std::string g1 = Gain(p + ".input_layernorm");
      std::string n1;
      if (form_ == LlamaForm::kMsft) {
        if (i == 0) {
          n1 = b_.Op("SimplifiedLayerNormalization", p + ".input_layernorm", {x, g1},
                     {AttrInt("axis", -1), AttrFloat("epsilon", c_.rms_eps)});
          residual = x;
        } else {
          std::tie(n1, residual) = SkipNorm(p + ".input_layernorm", pending, residual, g1);
        }
      } else {
        n1 = RmsNorm(p + ".input_layernorm", x, g1);
      }
      const int64_t qw = c_.q_heads * head_dim_, kvw = c_.kv_heads * head_dim_;
      const std::string q = Linear(p + ".attn.q_proj", n1, c_.hidden, qw);
      const std::string k = Linear(p + ".attn.k_proj", n1, c_.hidden, kvw);
      const std::string v = Linear(p + ".attn.v_proj", n1, c_.hidden, kvw);
      const std::string pk = "past_key_values." + std::to_string(i) + ".key";
      const std::string pv = "past_key_values." + std::to_string(i) + ".value";
      const std::string ok = "present." + std::to_string(i) + ".key";
      const std::string ov = "present." + std::to_string(i) + ".value";
      std::string attn;
      if (form_ == LlamaForm::kMsft) {
        attn = b_.OpN("GroupQueryAttention", p + ".attn",
                      {q, k, v, pk, pv, seqlens_k_, total_seq_, cos_, sin_}, {p + ".attn", ok, ov},
                      {AttrInt("num_heads", c_.q_heads), AttrInt("kv_num_heads", c_.kv_heads),
                       AttrInt("do_rotary", 1), AttrInt("rotary_interleaved", 0)})[0];
        b_.graph()->nodes.back().domain = kMs;
      } else {
        const std::string qr = b_.Op("RotaryEmbedding", p + ".attn.q_rotary", {q, cos_, sin_, pos_},
                                     {AttrInt("num_heads", c_.q_heads)});
        const std::string kr = b_.Op("RotaryEmbedding", p + ".attn.k_rotary", {k, cos_, sin_, pos_},
                                     {AttrInt("num_heads", c_.kv_heads)});
        attn = b_.OpN("Attention", p + ".attn", {qr, kr, v, "", pk, pv}, {p + ".attn", ok, ov},
                      {AttrInt("is_causal", 1), AttrInt("q_num_heads", c_.q_heads),
                       AttrInt("kv_num_heads", c_.kv_heads)})[0];
      }
      const std::string o = Linear(p + ".attn.o_proj", attn, qw, c_.hidden);

      // MLP block.
      const std::string g2 = Gain(p + ".post_attention_layernorm");
      std::string n2;
      if (form_ == LlamaForm::kMsft) {
        std::tie(n2, residual) = SkipNorm(p + ".post_attention_layernorm", o, residual, g2);
      } else {
        x = b_.Op("Add", p + ".attn.residual", {x, o});
        n2 = RmsNorm(p + ".post_attention_layernorm", x, g2);
      }
      const std::string gate = Linear(p + ".mlp.gate_proj", n2, c_.hidden, c_.ffn);
      const std::string up = Linear(p + ".mlp.up_proj", n2, c_.hidden, c_.ffn);
      const std::string sig = b_.Op("Sigmoid", p + ".mlp.act.sigmoid", {gate});
      const std::string silu = b_.Op("Mul", p + ".mlp.act", {gate, sig});
      const std::string h = b_.Op("Mul", p + ".mlp.act_times_up", {silu, up});
      const std::string down = Linear(p + ".mlp.down_proj", h, c_.ffn, c_.hidden);
      if (form_ == LlamaForm::kMsft) {
        pending = down;
      } else {
        x = b_.Op("Add", p + ".mlp.residual", {x, down});
      }
    }
    const std::string gf = Gain("model.norm");
    std::string nf;
    if (form_ == LlamaForm::kMsft) {
      nf = b_.OpN("SkipSimplifiedLayerNormalization", "model.norm", {pending, residual, gf},
                  {"model.norm"}, {AttrFloat("epsilon", c_.rms_eps)})[0];
      b_.graph()->nodes.back().domain = kMs;
    } else {
      nf = RmsNorm("model.norm", x, gf);
    }
    LinearTo("lm_head", nf, c_.hidden, c_.vocab, "logits");
  }

 private:
  // cos / sin [max_positions, head_dim / 2] of position p and frequency theta^(-2i / head_dim).
  void RotaryCaches() {
    const int64_t half = head_dim_ / 2;
    std::vector<float> cs(static_cast<size_t>(c_.max_positions * half)), sn(cs.size());
    for (int64_t p = 0; p < c_.max_positions; ++p) {
      for (int64_t i = 0; i < half; ++i) {
        const double inv_freq = std::pow(static_cast<double>(c_.rope_theta), -2.0 * i / head_dim_);
        cs[p * half + i] = static_cast<float>(std::cos(p * inv_freq));
        sn[p * half + i] = static_cast<float>(std::sin(p * inv_freq));
      }
    }
    cos_ = b_.Floats("rotary.cos_cache", {c_.max_positions, half}, cs);
    sin_ = b_.Floats("rotary.sin_cache", {c_.max_positions, half}, sn);
  }

  // position_ids [batch, sequence] = past_sequence + (0 .. sequence - 1), from the input shapes.
  void PositionIds() {
    const std::string past_shape =
        b_.Op("Shape", "positions.past_shape", {"past_key_values.0.key"});
    const std::string ids_shape = b_.Op("Shape", "positions.ids_shape", {"input_ids"});
    const std::string two = b_.Int64s("positions.two", {}, {2});
    const std::string one = b_.Int64s("positions.one", {}, {1});
    const std::string past =
        b_.Op("Gather", "positions.past_length", {past_shape, two}, {AttrInt("axis", 0)});
    const std::string seq =
        b_.Op("Gather", "positions.sequence_length", {ids_shape, one}, {AttrInt("axis", 0)});
    const std::string end = b_.Op("Add", "positions.end", {past, seq});
    const std::string range = b_.Op("Range", "positions.range", {past, end, one});
    const std::string row =
        b_.Op("Unsqueeze", "positions.row", {range, b_.Shape("positions.axes", {0})});
    pos_ = b_.Op("Expand", "position_ids", {row, ids_shape});
  }

  // GroupQueryAttention's seqlens_k and total_sequence_length from attention_mask, as
  // onnxruntime-genai exports spell them.
  void MsftMaskInputs() {
    const std::string sum = b_.Op("ReduceSum", "attn_mask_reformat.sum",
                                  {"attention_mask", b_.Shape("attn_mask_reformat.axes", {1})},
                                  {AttrInt("keepdims", 0)});
    const std::string one = b_.Int64s("attn_mask_reformat.one", {}, {1});
    const std::string sub = b_.Op("Sub", "attn_mask_reformat.sub", {sum, one});
    seqlens_k_ = b_.Op("Cast", "attn_mask_reformat.seqlens_k", {sub},
                       {AttrInt("to", static_cast<int64_t>(DType::kInt32))});
    const std::string shape = b_.Op("Shape", "attn_mask_reformat.shape", {"attention_mask"});
    const std::string total =
        b_.Op("Gather", "attn_mask_reformat.total", {shape, one}, {AttrInt("axis", 0)});
    total_seq_ = b_.Op("Cast", "attn_mask_reformat.total_sequence_length", {total},
                       {AttrInt("to", static_cast<int64_t>(DType::kInt32))});
  }

  std::string RmsNorm(const std::string& name, const std::string& x, const std::string& gain) {
    return b_.Op("RMSNormalization", name, {x, gain},
                 {AttrInt("axis", -1), AttrFloat("epsilon", c_.rms_eps)});
  }

  // (normalized, new residual sum) of SkipSimplifiedLayerNormalization(input, skip).
  std::pair<std::string, std::string> SkipNorm(const std::string& name, const std::string& input,
                                               const std::string& skip, const std::string& gain) {
    const auto outs = b_.OpN("SkipSimplifiedLayerNormalization", name, {input, skip, gain},
                             {name, "", "", name + ".sum"}, {AttrFloat("epsilon", c_.rms_eps)});
    b_.graph()->nodes.back().domain = kMs;
    return {outs[0], outs[3]};
  }

  std::string Linear(const std::string& name, const std::string& x, int64_t k, int64_t n) {
    return LinearTo(name, x, k, n, name);
  }

  // The token embedding's initializers: float32 [vocab, hidden], or blocked codes along hidden.
  void EmbeddingInitializers() {
    const std::string name = "model.embed_tokens";
    LlamaLinearWeight e = w_->Embedding(c_.vocab, c_.hidden);
    embed_block_ = e.block;
    if (e.block == 0) {
      b_.Initializer(name + ".weight", Checked(name, std::move(e.weight), {c_.vocab, c_.hidden}));
      return;
    }
    const DType code = e.weight.dtype();
    if (code != DType::kInt8 && code != DType::kUInt8) {
      throw Error(ErrorCode::kInvalidArgument, "llama weights: blocked embedding codes must be int8 or uint8");
    }
    if (c_.hidden % e.block != 0) {
      throw Error(ErrorCode::kInvalidArgument, "llama weights: the embedding block size must divide hidden");
    }
    const int64_t hb = c_.hidden / e.block;
    b_.Initializer(name + ".codes", Checked(name, std::move(e.weight), {c_.vocab, c_.hidden}, code));
    b_.Initializer(name + ".scale", Checked(name + " scales", std::move(e.scales), {c_.vocab, hb}));
    embed_zero_point_ = e.zero_points.dtype() != DType::kUndefined;
    if (embed_zero_point_) {
      b_.Initializer(name + ".zero_point", Checked(name + " zero points", std::move(e.zero_points), {c_.vocab, hb}, code));
    }
    embed_min_ = e.block_min.dtype() != DType::kUndefined;
    if (embed_min_) {
      b_.Initializer(name + ".block_min", Checked(name + " block minimums", std::move(e.block_min), {c_.vocab, hb}));
    }
  }

  // Rows of the embedding for input_ids: [batch, sequence, hidden] float32.
  std::string EmbedTokens() {
    const std::string name = "model.embed_tokens";
    auto gather = [&](const std::string& table, const std::string& out) {
      return b_.Op("Gather", out, {table, "input_ids"}, {AttrInt("axis", 0)});
    };
    if (embed_block_ == 0) return gather(name + ".weight", name);
    std::vector<std::string> dq = {gather(name + ".codes", name + ".row_codes"),
                                   gather(name + ".scale", name + ".row_scales")};
    if (embed_zero_point_) dq.push_back(gather(name + ".zero_point", name + ".row_zero_points"));
    if (!embed_min_) {
      return b_.Op("DequantizeLinear", name, dq, {AttrInt("axis", -1), AttrInt("block_size", embed_block_)});
    }
    const std::string rows = b_.Op("DequantizeLinear", name + ".rows", dq,
                                   {AttrInt("axis", -1), AttrInt("block_size", embed_block_)});
    // [b, s, hidden] -> [b, s, hidden / block, block] + min [b, s, hidden / block, 1] -> back.
    const int64_t hb = c_.hidden / embed_block_;
    const std::string blocks = b_.Op("Reshape", name + ".blocks",
                                     {rows, b_.Shape(name + ".block_shape", {0, 0, hb, embed_block_})});
    const std::string mins = b_.Op("Unsqueeze", name + ".row_mins",
                                   {gather(name + ".block_min", name + ".row_block_mins"), b_.Shape(name + ".min_axes", {3})});
    const std::string sum = b_.Op("Add", name + ".plus_min", {blocks, mins});
    return b_.Op("Reshape", name, {sum, b_.Shape(name + ".shape", {0, 0, c_.hidden})});
  }

  std::string Gain(const std::string& name) {
    return b_.Initializer(name + ".weight", Checked(name, w_->Gain(name, c_.hidden), {c_.hidden}));
  }

  // A float32 tensor from the weight source, checked against the dims the graph needs.
  static Tensor Checked(const std::string& name, Tensor t, const std::vector<int64_t>& dims,
                        DType dtype = DType::kFloat32) {
    if (t.dtype() != dtype || t.dims() != dims) {
      throw Error(ErrorCode::kInvalidArgument,
                  "llama weights: '" + name + "' must be " + DTypeName(dtype) + " " +
                      DimsString(dims) + ", got " + DTypeName(t.dtype()) + " " +
                      DimsString(t.dims()));
    }
    return t;
  }
  static std::string DimsString(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
  }

  // x @ W with W [k, n] from the weight source, spelled per form; the output is named `out`.
  std::string LinearTo(const std::string& name, const std::string& x, int64_t k, int64_t n,
                       const std::string& out) {
    LlamaLinearWeight lw = w_->Linear(name, k, n);
    const std::string wname = name + ".weight";
    if (lw.block > 0) return BlockedLinear(name, x, k, n, std::move(lw), out);
    Tensor w = Checked(name, std::move(lw.weight), {k, n});
    if (form_ == LlamaForm::kFloat32) {
      b_.Initializer(wname, std::move(w));
      return b_.OpN("MatMul", name, {x, wname}, {out})[0];
    }
    // Symmetric int4 blocks along K (quant/block_quant.h): scale max|w| / 7, codes -7..7.
    const quant::BlockQuantized q =
        quant::QuantizeBlocked(w.data<float>(), k, n, kBlock, 4, /*symmetric=*/true);
    const int64_t kb = q.blocks();
    if (form_ == LlamaForm::kOnnxInt4) {
      Tensor codes(DType::kInt4, {k, n});
      quant::PackSubByte(q.codes.data(), 0, k * n, 4, static_cast<uint8_t*>(codes.raw_data()));
      b_.Initializer(wname + ".int4", std::move(codes));
      b_.Floats(wname + ".scale", {kb, n}, q.scales);
      const std::string wf = b_.Op("DequantizeLinear", wname, {wname + ".int4", wname + ".scale"},
                                   {AttrInt("axis", 0), AttrInt("block_size", kBlock)});
      return b_.OpN("MatMul", name, {x, wf}, {out})[0];
    }
    // MatMulNBits: B [n, k_blocks, 16] of unsigned codes q + 8, scales [n * k_blocks], no zero
    // points (the default 8).
    const std::vector<uint8_t> nbits = quant::PackNBitsWeights(q);
    Tensor packed = Tensor::FromVector<uint8_t>(DType::kUInt8, {n, kb, kBlock / 2}, nbits);
    std::vector<float> scales = quant::NBitsScales(q);
    b_.Initializer(wname + ".nbits", std::move(packed));
    b_.Floats(wname + ".scales", {n * kb}, std::move(scales));
    std::vector<graph::Attribute> attrs = {AttrInt("K", k), AttrInt("N", n), AttrInt("bits", 4),
                                           AttrInt("block_size", kBlock)};
    if (c_.nbits_accuracy_level != 0) {
      attrs.push_back(AttrInt("accuracy_level", c_.nbits_accuracy_level));
    }
    const std::string y = b_.OpN("MatMulNBits", name, {x, wname + ".nbits", wname + ".scales"},
                                 {out}, std::move(attrs))[0];
    b_.graph()->nodes.back().domain = kMs;
    return y;
  }

  // A blocked weight as given: DequantizeLinear(codes, scales[, zero points], axis 0) [+ the block
  // minimum, broadcast over each block's rows] -> MatMul.
  std::string BlockedLinear(const std::string& name, const std::string& x, int64_t k, int64_t n,
                            LlamaLinearWeight lw, const std::string& out) {
    if (form_ == LlamaForm::kMsft) {
      throw Error(ErrorCode::kUnsupported,
                  "llama weights: '" + name + "' is blocked; the com.microsoft form takes float weights");
    }
    const DType code = lw.weight.dtype();
    if (code != DType::kInt4 && code != DType::kUInt4 && code != DType::kInt8 && code != DType::kUInt8) {
      throw Error(ErrorCode::kInvalidArgument, "llama weights: '" + name + "' codes must be int4, uint4, int8 or uint8");
    }
    if (lw.block < 1 || k % lw.block != 0) {
      throw Error(ErrorCode::kInvalidArgument, "llama weights: '" + name + "' block size must divide " + std::to_string(k));
    }
    const int64_t kb = k / lw.block;
    const std::string wname = name + ".weight";
    b_.Initializer(wname + ".codes", Checked(name, std::move(lw.weight), {k, n}, code));
    b_.Initializer(wname + ".scale", Checked(name + " scales", std::move(lw.scales), {kb, n}));
    std::vector<std::string> dq_inputs = {wname + ".codes", wname + ".scale"};
    if (lw.zero_points.dtype() != DType::kUndefined) {
      b_.Initializer(wname + ".zero_point", Checked(name + " zero points", std::move(lw.zero_points), {kb, n}, code));
      dq_inputs.push_back(wname + ".zero_point");
    }
    std::string wf = b_.Op("DequantizeLinear", wname, dq_inputs,
                           {AttrInt("axis", 0), AttrInt("block_size", lw.block)});
    if (lw.block_min.dtype() != DType::kUndefined) {
      // [k, n] -> [kb, block, n] + min [kb, 1, n] -> [k, n]: the same float32 sum per element as
      // dequantizing to w and adding the block's minimum.
      // The minimums stored as [kb, 1, n], an initializer the load pass can read.
      const std::string min3 = b_.Initializer(
          wname + ".block_min",
          Checked(name + " block minimums", std::move(lw.block_min), {kb, n}).Reshaped({kb, 1, n}));
      const std::string w3 = b_.Op("Reshape", wname + ".blocks",
                                   {wf, b_.Shape(wname + ".block_shape", {kb, lw.block, n})});
      const std::string sum = b_.Op("Add", wname + ".plus_min", {w3, min3});
      wf = b_.Op("Reshape", wname + ".float", {sum, b_.Shape(wname + ".shape", {k, n})});
    }
    return b_.OpN("MatMul", name, {x, wf}, {out})[0];
  }

  const LlamaConfig c_;
  const LlamaForm form_;
  LlamaWeights* w_;
  int64_t embed_block_ = 0;  // 0: float32 embedding
  bool embed_zero_point_ = false, embed_min_ = false;
  Builder b_;
  const int64_t head_dim_;
  std::string cos_, sin_, pos_, seqlens_k_, total_seq_;
};

void CheckConfig(const LlamaConfig& c, LlamaForm form) {
  auto bad = [](const std::string& what) {
    throw Error(ErrorCode::kInvalidArgument, "llama config: " + what);
  };
  if (c.layers < 1 || c.hidden < 1 || c.q_heads < 1 || c.kv_heads < 1 || c.ffn < 1 || c.vocab < 1 ||
      c.max_positions < 1) {
    bad("layers, hidden, heads, ffn, vocab and max_positions must be positive");
  }
  if (c.hidden % c.q_heads != 0) bad("hidden must be a multiple of q_heads");
  if (c.q_heads % c.kv_heads != 0) bad("q_heads must be a multiple of kv_heads");
  if ((c.hidden / c.q_heads) % 2 != 0) bad("head_dim (hidden / q_heads) must be even for rotary");
  if (form != LlamaForm::kFloat32 && (c.hidden % kBlock != 0 || c.ffn % kBlock != 0)) {
    bad("hidden and ffn must be multiples of the int4 block size 32");
  }
  if (!(c.rms_eps > 0.0f) || !(c.rope_theta > 0.0f)) bad("rms_eps and rope_theta must be positive");
}

}  // namespace

LlamaConfig SmallLlamaConfig() {
  LlamaConfig c;
  c.layers = 2;
  c.hidden = 128;
  c.q_heads = 4;
  c.kv_heads = 2;
  c.ffn = 352;
  c.vocab = 256;
  c.max_positions = 256;
  return c;
}

graph::Model MakeLlamaModel(const LlamaConfig& config, LlamaForm form, LlamaWeights* weights) {
  CheckConfig(config, form);
  const bool msft = form == LlamaForm::kMsft;
  const char* doc = form == LlamaForm::kFloat32 ? "simplecpp built-in LLaMA-style decoder, float32"
                    : msft
                        ? "simplecpp built-in LLaMA-style decoder, com.microsoft int4 ops"
                        : "simplecpp built-in LLaMA-style decoder, int4 DequantizeLinear -> MatMul";
  // kMsft keeps the ai.onnx opset of onnxruntime-genai exports; the others need 23
  // (RMSNormalization, RotaryEmbedding, Attention, int4 with block_size).
  graph::Model m = detail::NewModel("llama", doc, msft ? 21 : 23);
  // IR 10 brings int4 (opset 21); IR 11 goes with opset 23.
  m.ir_version = msft ? 10 : 11;
  if (msft) m.opsets.push_back(graph::OpsetImport{kMs, 1});
  LlamaBuilder(config, form, weights, &m.graph).Build();
  return m;
}

graph::Model MakeLlamaModel(const LlamaConfig& config, LlamaForm form) {
  RandomLlamaWeights weights(config.seed);
  return MakeLlamaModel(config, form, &weights);
}

LlamaLinearWeight RandomLlamaWeights::Embedding(int64_t vocab, int64_t hidden) {
  const float s = 1.0f / std::sqrt(static_cast<float>(hidden));
  LlamaLinearWeight e;
  e.weight = RandomFloatTensor({vocab, hidden}, rng_.Next(), -s, s);
  return e;
}

Tensor RandomLlamaWeights::Gain(const std::string&, int64_t hidden) {
  return RandomFloatTensor({hidden}, rng_.Next(), 0.8f, 1.2f);
}

LlamaLinearWeight RandomLlamaWeights::Linear(const std::string&, int64_t k, int64_t n) {
  const float s = 1.0f / std::sqrt(static_cast<float>(k));
  LlamaLinearWeight w;
  w.weight = RandomFloatTensor({k, n}, rng_.Next(), -s, s);
  return w;
}

}  // namespace simplecpp::builtin
