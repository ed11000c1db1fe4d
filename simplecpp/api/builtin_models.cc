// The built-in demo models (builtin_models.h): graphs assembled node by node with weights drawn
// from a fixed-seed generator, scaled by 1/sqrt(fan_in) so activations stay in a sane range.
#include "simplecpp/api/builtin_models.h"

#include <cmath>
#include <utility>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/error.h"

namespace simplecpp::builtin {

uint64_t Random::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float Random::Uniform(float lo, float hi) {
  // 24 random bits -> [0, 1) exactly representable in float.
  const float u = static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * u;
}

Tensor RandomFloatTensor(const Dims& dims, uint64_t seed, float lo, float hi) {
  Tensor t(DType::kFloat32, dims);
  Random rng(seed);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = rng.Uniform(lo, hi);
  return t;
}

namespace {

using namespace detail;  // NOLINT: the builder helpers (builtin_builder.h)

constexpr int64_t kOpset = 17;

graph::Model NewModel(const std::string& graph_name, const std::string& doc) {
  return detail::NewModel(graph_name, doc, kOpset);
}

// A benchmark-sized CNN: [1,3,96,96] -> Conv 3x3/2 32 ch + Relu -> Conv 3x3 64 ch + Relu ->
// MaxPool 2 -> Conv 3x3 128 ch + BatchNorm + Relu -> GlobalAveragePool -> Flatten -> Gemm 10 ->
// Softmax (87 M multiply-adds).
graph::Model MakeCnnBase() {
  graph::Model m = NewModel("cnn-base", "simplecpp built-in benchmark CNN (deterministic weights)");
  graph::Graph& g = m.graph;
  Builder b(&g, 0xC0FFEE2ull);
  g.inputs.push_back(TensorValue("input", {1, 3, 96, 96}));
  auto conv = [&](const std::string& name, const std::string& in, int64_t cin, int64_t cout,
                  int64_t stride) {
    const float fan_in = static_cast<float>(cin * 9);
    return b.Op("Conv", name,
                {in, b.Weight(name + ".weight", {cout, cin, 3, 3}, 1.0f / std::sqrt(fan_in)),
                 b.Weight(name + ".bias", {cout}, 0.1f)},
                {AttrInts("kernel_shape", {3, 3}), AttrInts("pads", {1, 1, 1, 1}),
                 AttrInts("strides", {stride, stride})});
  };
  std::string x = b.Op("Relu", "relu1", {conv("conv1", "input", 3, 32, 2)});  // [1,32,48,48]
  x = b.Op("Relu", "relu2", {conv("conv2", x, 32, 64, 1)});                      // [1,64,48,48]
  x = b.Op("MaxPool", "pool2", {x},
           {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});     // [1,64,24,24]
  x = conv("conv3", x, 64, 128, 1);                                              // [1,128,24,24]
  x = b.Op("BatchNormalization", "bn3",
           {x, b.WeightRange("bn3.scale", {128}, 0.5f, 1.5f), b.Weight("bn3.bias", {128}, 0.1f),
            b.Weight("bn3.mean", {128}, 0.1f), b.WeightRange("bn3.var", {128}, 0.5f, 1.5f)},
           {AttrFloat("epsilon", 1e-5f)});
  x = b.Op("Relu", "relu3", {x});
  x = b.Op("GlobalAveragePool", "gap", {x});
  x = b.Op("Flatten", "flatten", {x}, {AttrInt("axis", 1)});
  x = b.Op("Gemm", "fc",
           {x, b.Weight("fc.weight", {10, 128}, 1.0f / std::sqrt(128.0f)),
            b.Weight("fc.bias", {10}, 0.1f)},
           {AttrInt("transB", 1)});
  b.Op("Softmax", "probabilities", {x}, {AttrInt("axis", -1)});
  g.outputs.push_back(TensorValue("probabilities", {1, 10}));
  return m;
}

graph::Model MakeCnn() {
  graph::Model m = NewModel("cnn", "simplecpp built-in tiny CNN (deterministic weights)");
  graph::Graph& g = m.graph;
  Builder b(&g, 0xC0FFEEull);
  g.inputs.push_back(TensorValue("input", {1, 3, 32, 32}));

  // [1,3,32,32] -> Conv 3x3, 8 channels, no padding -> [1,8,30,30]
  std::string x = b.Op("Conv", "conv1",
                       {"input", b.Weight("conv1.weight", {8, 3, 3, 3}, 1.0f / std::sqrt(27.0f)),
                        b.Weight("conv1.bias", {8}, 0.1f)},
                       {AttrInts("kernel_shape", {3, 3})});
  x = b.Op("Relu", "relu1", {x});
  // -> [1,8,15,15]
  x = b.Op("MaxPool", "pool1", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  // -> Conv 3x3, 16 channels, pads 1 -> [1,16,15,15]
  x = b.Op("Conv", "conv2",
           {x, b.Weight("conv2.weight", {16, 8, 3, 3}, 1.0f / std::sqrt(72.0f)),
            b.Weight("conv2.bias", {16}, 0.1f)},
           {AttrInts("kernel_shape", {3, 3}), AttrInts("pads", {1, 1, 1, 1})});
  x = b.Op("BatchNormalization", "bn2",
           {x, b.WeightRange("bn2.scale", {16}, 0.5f, 1.5f), b.Weight("bn2.bias", {16}, 0.1f),
            b.Weight("bn2.mean", {16}, 0.1f), b.WeightRange("bn2.var", {16}, 0.5f, 1.5f)},
           {AttrFloat("epsilon", 1e-5f)});
  x = b.Op("Relu", "relu2", {x});
  // -> [1,16,1,1] -> [1,16]
  x = b.Op("GlobalAveragePool", "gap", {x});
  x = b.Op("Flatten", "flatten", {x}, {AttrInt("axis", 1)});
  // -> Gemm with a [10,16] weight (transB) -> [1,10]
  x = b.Op("Gemm", "fc",
           {x, b.Weight("fc.weight", {10, 16}, 1.0f / std::sqrt(16.0f)), b.Weight("fc.bias", {10}, 0.1f)},
           {AttrInt("transB", 1)});
  b.Op("Softmax", "probabilities", {x}, {AttrInt("axis", -1)});
  g.outputs.push_back(TensorValue("probabilities", {1, 10}));
  return m;
}

// One pre-norm encoder layer: sequence kSeq, width kModel, kHeads heads, MLP width kHidden.
graph::Model MakeTransformer(const std::string& name, int64_t kSeq, int64_t kModel, int64_t kHeads,
                             int64_t kHidden) {
  const int64_t kHeadDim = kModel / kHeads;
  graph::Model m = NewModel(name,
                            "simplecpp built-in one-layer transformer encoder (deterministic weights)");
  graph::Graph& g = m.graph;
  Builder b(&g, 0x7A11ull);
  g.inputs.push_back(TensorValue("x", {1, kSeq, kModel}));

  auto layer_norm = [&](const std::string& name, const std::string& in) {
    return b.Op("LayerNormalization", name,
                {in, b.WeightRange(name + ".gamma", {kModel}, 0.8f, 1.2f),
                 b.Weight(name + ".beta", {kModel}, 0.05f)},
                {AttrInt("axis", -1), AttrFloat("epsilon", 1e-5f)});
  };
  // x [1,S,in] @ W [in,out] + bias [out]
  auto linear = [&](const std::string& name, const std::string& in, int64_t n_in, int64_t n_out) {
    const std::string mm =
        b.Op("MatMul", name + ".matmul",
             {in, b.Weight(name + ".weight", {n_in, n_out}, 1.0f / std::sqrt(static_cast<float>(n_in)))});
    return b.Op("Add", name, {mm, b.Weight(name + ".bias", {n_out}, 0.02f)});
  };

  // Attention block (pre-norm).
  const std::string ln1 = layer_norm("ln1", "x");
  const std::string heads_shape = b.Shape("heads_shape", {1, kSeq, kHeads, kHeadDim});
  const std::string model_shape = b.Shape("model_shape", {1, kSeq, kModel});
  auto split_heads = [&](const std::string& name, const std::string& in,
                         std::vector<int64_t> perm) {
    const std::string r = b.Op("Reshape", name + ".reshape", {in, heads_shape});
    return b.Op("Transpose", name + ".heads", {r}, {AttrInts("perm", std::move(perm))});
  };
  // q, v: [1,H,S,D]; k transposed to [1,H,D,S].
  const std::string q = split_heads("q", linear("q", ln1, kModel, kModel), {0, 2, 1, 3});
  const std::string k = split_heads("k", linear("k", ln1, kModel, kModel), {0, 2, 3, 1});
  const std::string v = split_heads("v", linear("v", ln1, kModel, kModel), {0, 2, 1, 3});
  std::string s = b.Op("MatMul", "scores", {q, k});  // [1,H,S,S]
  s = b.Op("Div", "scores.scaled",
           {s, b.Scalar("sqrt_head_dim", std::sqrt(static_cast<float>(kHeadDim)))});
  s = b.Op("Softmax", "attention", {s}, {AttrInt("axis", -1)});
  std::string c = b.Op("MatMul", "context", {s, v});  // [1,H,S,D]
  c = b.Op("Transpose", "context.merged", {c}, {AttrInts("perm", {0, 2, 1, 3})});  // [1,S,H,D]
  c = b.Op("Reshape", "context.flat", {c, model_shape});                           // [1,S,M]
  const std::string attn_out = linear("attn_out", c, kModel, kModel);
  const std::string h = b.Op("Add", "residual1", {"x", attn_out});

  // MLP block: Gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))), spelled with Erf (opset 17 has no Gelu).
  const std::string ln2 = layer_norm("ln2", h);
  const std::string up = linear("mlp_up", ln2, kModel, kHidden);
  std::string e = b.Op("Div", "gelu.scaled", {up, b.Scalar("sqrt2", std::sqrt(2.0f))});
  e = b.Op("Erf", "gelu.erf", {e});
  e = b.Op("Add", "gelu.one_plus", {e, b.Scalar("one", 1.0f)});
  e = b.Op("Mul", "gelu.times_x", {up, e});
  e = b.Op("Mul", "gelu", {e, b.Scalar("half", 0.5f)});
  const std::string down = linear("mlp_down", e, kHidden, kModel);
  b.Op("Add", "y", {h, down});
  g.outputs.push_back(TensorValue("y", {1, kSeq, kModel}));
  return m;
}

}  // namespace

std::vector<std::string> BuiltinModelNames() {
  return {"cnn", "transformer", "mlp", "vad", "crnn", "segmentation", "segmentation-int8", "bert",
          "cnn-base", "transformer-base", "llama", "llama-int4", "llama-msft"};
}

graph::Model MakeBuiltinModel(const std::string& name) {
  if (name == "cnn") return MakeCnn();
  if (name == "transformer") return MakeTransformer("transformer", 16, 64, 4, 256);
  // The size of one MiniLM / sentence-embedder layer.
  if (name == "transformer-base") return MakeTransformer("transformer-base", 128, 384, 6, 1536);
  if (name == "cnn-base") return MakeCnnBase();
  if (name == "mlp") return MakeMlpModel();
  if (name == "vad") return MakeVadModel();
  if (name == "crnn") return MakeCrnnModel();
  if (name == "segmentation") return MakeSegmentationModel(kSegmentationSize, false);
  if (name == "segmentation-int8") return MakeSegmentationModel(kSegmentationSize, true);
  if (name == "bert") return MakeBertModel();
  if (name == "llama") return MakeLlamaModel(LlamaConfig{}, LlamaForm::kFloat32);
  if (name == "llama-int4") return MakeLlamaModel(LlamaConfig{}, LlamaForm::kOnnxInt4);
  if (name == "llama-msft") return MakeLlamaModel(LlamaConfig{}, LlamaForm::kMsft);
  // Unlisted: the three forms at SmallLlamaConfig() for quick CLI checks and tests.
  if (name == "llama-tiny") return MakeLlamaModel(SmallLlamaConfig(), LlamaForm::kFloat32);
  if (name == "llama-tiny-int4") return MakeLlamaModel(SmallLlamaConfig(), LlamaForm::kOnnxInt4);
  if (name == "llama-tiny-msft") return MakeLlamaModel(SmallLlamaConfig(), LlamaForm::kMsft);
  // Unlisted: llama-msft with MatMulNBits accuracy_level 4 (int8 A in decode steps).
  if (name == "llama-msft-acc4" || name == "llama-tiny-msft-acc4") {
    LlamaConfig c = name == "llama-msft-acc4" ? LlamaConfig{} : SmallLlamaConfig();
    c.nbits_accuracy_level = 4;
    return MakeLlamaModel(c, LlamaForm::kMsft);
  }
  std::string known;
  for (const std::string& n : BuiltinModelNames()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::kInvalidArgument,
              "unknown built-in model '" + name + "' (known: " + known + ")");
}

}  // namespace simplecpp::builtin
