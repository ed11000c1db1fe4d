// The "bert" built-in model (builtin_models.h): a BERT-style encoder as exporters write it at
// opset 13, with LayerNorm and Gelu spelled out in primitive ops and an additive attention mask.
#include <cmath>
#include <string>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"

namespace simplecpp::builtin {

using namespace detail;  // NOLINT: the builder helpers

graph::Model MakeBertModel() {
  constexpr int64_t kVocab = 100, kSeq = 16, kModel = 64, kHeads = 4, kHeadDim = kModel / kHeads,
                    kFfn = 128, kLayers = 2;
  graph::Model m = NewModel("bert", "simplecpp built-in BERT-style encoder (random weights)", 13);
  graph::Graph& g = m.graph;
  Builder b(&g, 0xBE47ull);
  g.inputs.push_back(TensorValue("input_ids", {1, kSeq}, DType::kInt64));
  g.inputs.push_back(TensorValue("attention_mask", {1, kSeq}, DType::kInt64));

  const std::string eps = b.Scalar("ln_eps", 1e-12f);
  const std::string two = b.Scalar("two", 2.0f);
  // LayerNorm over the last axis: (x - mean) / sqrt(mean((x - mean)^2) + eps) * gamma + beta.
  auto layer_norm = [&](const std::string& name, const std::string& in) {
    const std::string mean =
        b.Op("ReduceMean", name + ".mean", {in}, {AttrInts("axes", {-1}), AttrInt("keepdims", 1)});
    const std::string d = b.Op("Sub", name + ".centered", {in, mean});
    const std::string sq = b.Op("Pow", name + ".square", {d, two});
    const std::string var =
        b.Op("ReduceMean", name + ".var", {sq}, {AttrInts("axes", {-1}), AttrInt("keepdims", 1)});
    const std::string sd = b.Op("Sqrt", name + ".std", {b.Op("Add", name + ".var_eps", {var, eps})});
    const std::string n = b.Op("Div", name + ".normalized", {d, sd});
    const std::string scaled =
        b.Op("Mul", name + ".scaled", {n, b.WeightRange(name + ".gamma", {kModel}, 0.8f, 1.2f)});
    return b.Op("Add", name, {scaled, b.Weight(name + ".beta", {kModel}, 0.05f)});
  };
  // x [..., in] @ W [in,out] + bias [out]
  auto linear = [&](const std::string& name, const std::string& in, int64_t n_in, int64_t n_out) {
    const std::string mm =
        b.Op("MatMul", name + ".matmul", {in, b.FanInWeight(name + ".weight", {n_in, n_out}, n_in)});
    return b.Op("Add", name, {mm, b.Weight(name + ".bias", {n_out}, 0.02f)});
  };

  // Embeddings: word [V,M] gathered by id, + position [S,M], + token-type row [M], LayerNorm.
  std::string x = b.Op("Gather", "emb.word", {b.Weight("emb.word.weight", {kVocab, kModel}, 1.0f), "input_ids"},
                       {AttrInt("axis", 0)});
  x = b.Op("Add", "emb.pos", {x, b.Weight("emb.pos.weight", {kSeq, kModel}, 0.5f)});
  x = b.Op("Add", "emb.type", {x, b.Weight("emb.type.weight", {kModel}, 0.5f)});
  x = layer_norm("emb.ln", x);

  // Mask [1,S] int64 -> float -> [1,1,1,S] -> (1 - mask) * -10000, added to every score row.
  std::string mask = b.Op("Cast", "mask.float", {"attention_mask"}, {AttrInt("to", 1)});
  mask = b.Op("Unsqueeze", "mask.4d", {mask, b.Shape("mask.axes", {1, 2})});
  mask = b.Op("Sub", "mask.inverted", {b.Scalar("one", 1.0f), mask});
  mask = b.Op("Mul", "mask.additive", {mask, b.Scalar("mask_value", -10000.0f)});

  const std::string heads_shape = b.Shape("heads_shape", {1, kSeq, kHeads, kHeadDim});
  const std::string model_shape = b.Shape("model_shape", {1, kSeq, kModel});
  const std::string sqrt_hd = b.Scalar("sqrt_head_dim", std::sqrt(static_cast<float>(kHeadDim)));
  const std::string sqrt2 = b.Scalar("sqrt2", std::sqrt(2.0f));
  const std::string half = b.Scalar("half", 0.5f);
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "layer" + std::to_string(l);
    auto split_heads = [&](const std::string& name, const std::string& in, std::vector<int64_t> perm) {
      const std::string r = b.Op("Reshape", name + ".reshape", {in, heads_shape});
      return b.Op("Transpose", name + ".heads", {r}, {AttrInts("perm", std::move(perm))});
    };
    // q, v: [1,H,S,D]; k: [1,H,D,S]
    const std::string q = split_heads(p + ".q", linear(p + ".q", x, kModel, kModel), {0, 2, 1, 3});
    const std::string k = split_heads(p + ".k", linear(p + ".k", x, kModel, kModel), {0, 2, 3, 1});
    const std::string v = split_heads(p + ".v", linear(p + ".v", x, kModel, kModel), {0, 2, 1, 3});
    std::string s = b.Op("MatMul", p + ".scores", {q, k});
    s = b.Op("Div", p + ".scores.scaled", {s, sqrt_hd});
    s = b.Op("Add", p + ".scores.masked", {s, mask});
    s = b.Op("Softmax", p + ".probs", {s}, {AttrInt("axis", -1)});
    std::string c = b.Op("MatMul", p + ".context", {s, v});
    c = b.Op("Transpose", p + ".context.merged", {c}, {AttrInts("perm", {0, 2, 1, 3})});
    c = b.Op("Reshape", p + ".context.flat", {c, model_shape});
    const std::string attn = linear(p + ".attn_out", c, kModel, kModel);
    x = layer_norm(p + ".ln1", b.Op("Add", p + ".residual1", {x, attn}));

    const std::string up = linear(p + ".ffn_up", x, kModel, kFfn);
    std::string e = b.Op("Div", p + ".gelu.scaled", {up, sqrt2});
    e = b.Op("Erf", p + ".gelu.erf", {e});
    e = b.Op("Add", p + ".gelu.one_plus", {e, b.Scalar(p + ".gelu.one", 1.0f)});
    e = b.Op("Mul", p + ".gelu.times_x", {up, e});
    e = b.Op("Mul", p + ".gelu", {e, half});
    const std::string down = linear(p + ".ffn_down", e, kFfn, kModel);
    x = layer_norm(p + ".ln2", b.Op("Add", p + ".residual2", {x, down}));
  }
  b.Op("Identity", "last_hidden_state", {x});
  // Pooler: first token [1,M] -> Tanh(x W + b).
  std::string first = b.Op("Gather", "pooler.first", {x, b.Int64s("index0", {}, {0})}, {AttrInt("axis", 1)});
  b.Op("Tanh", "pooler_output", {linear("pooler.dense", first, kModel, kModel)});
  g.outputs.push_back(TensorValue("last_hidden_state", {1, kSeq, kModel}));
  g.outputs.push_back(TensorValue("pooler_output", {1, kModel}));
  return m;
}

}  // namespace simplecpp::builtin
