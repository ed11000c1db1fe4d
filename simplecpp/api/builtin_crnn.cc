// The "crnn" built-in model (builtin_models.h): a text-line recognizer written at opset 9, the
// opset of many older exported OCR models (Upsample-9, Softmax-1 on 2-D, Squeeze by attribute).
#include <cmath>
#include <string>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"

namespace simplecpp::builtin {

using namespace detail;  // NOLINT: the builder helpers

graph::Model MakeCrnnModel() {
  constexpr int64_t kSteps = 32, kHidden = 48, kClasses = 37, kAttn = 64;
  graph::Model m = NewModel("crnn", "simplecpp built-in CRNN text recognizer (random weights)", 9);
  graph::Graph& g = m.graph;
  Builder b(&g, 0xC7177ull);
  g.inputs.push_back(TensorValue("image", {1, 1, 32, 128}));

  // Conv (+ BatchNorm + Relu when bn) with kernel k, stride s, pads k/2, `group` groups.
  auto conv = [&](const std::string& name, const std::string& in, int64_t cin, int64_t cout, int64_t k,
                  int64_t s, int64_t group, bool bn) {
    const int64_t fan_in = cin / group * k * k;
    std::string x = b.Op("Conv", name,
                         {in, b.FanInWeight(name + ".weight", {cout, cin / group, k, k}, fan_in),
                          b.Weight(name + ".bias", {cout}, 0.1f)},
                         {AttrInts("kernel_shape", {k, k}), AttrInts("strides", {s, s}),
                          AttrInts("pads", {k / 2, k / 2, k / 2, k / 2}), AttrInt("group", group)});
    if (!bn) return x;
    x = b.Op("BatchNormalization", name + ".bn",
             {x, b.WeightRange(name + ".bn.scale", {cout}, 0.5f, 1.5f), b.Weight(name + ".bn.bias", {cout}, 0.1f),
              b.Weight(name + ".bn.mean", {cout}, 0.1f), b.WeightRange(name + ".bn.var", {cout}, 0.5f, 1.5f)},
             {AttrFloat("epsilon", 1e-5f)});
    return b.Op("Relu", name + ".relu", {x});
  };
  auto max_pool = [&](const std::string& name, const std::string& in) {
    return b.Op("MaxPool", name, {in}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  };

  std::string x = conv("conv1", "image", 1, 16, 3, 1, 1, true);  // [1,16,32,128]
  x = max_pool("pool1", x);                                       // [1,16,16,64]
  x = conv("ds1.dw", x, 16, 16, 3, 1, 16, true);                   // depthwise
  x = conv("ds1.pw", x, 16, 32, 1, 1, 1, true);                    // pointwise
  const std::string x1 = max_pool("pool2", x);                     // [1,32,8,32]
  x = conv("conv2", x1, 32, 64, 3, 2, 1, true);                    // [1,64,4,16]
  x = conv("ds2.dw", x, 64, 64, 3, 1, 64, true);
  const std::string x3 = conv("ds2.pw", x, 64, 64, 1, 1, 1, true);
  // Back to [1,32,8,32] two ways: a learned 2x2 stride-2 ConvTranspose, and 1x1 Conv + Upsample.
  const std::string up_a =
      b.Op("ConvTranspose", "up_a",
           {x3, b.FanInWeight("up_a.weight", {64, 32, 2, 2}, 64), b.Weight("up_a.bias", {32}, 0.1f)},
           {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  const std::string up_b = b.Op("Upsample", "up_b", {conv("up_b.proj", x3, 64, 32, 1, 1, 1, false),
                                                     b.Floats("up_b.scales", {4}, {1, 1, 2, 2})},
                                {AttrString("mode", "nearest")});
  x = b.Op("Add", "fuse_a", {x1, up_a});
  x = b.Op("Add", "fuse_b", {x, up_b});
  x = b.Op("Relu", "fuse", {x});
  // [1,C=32,H=8,W=32] -> [W,1,C,H] -> sequence [T=32, batch 1, 256]
  x = b.Op("Transpose", "columns", {x}, {AttrInts("perm", {3, 0, 1, 2})});
  x = b.Op("Reshape", "sequence", {x, b.Shape("sequence.shape", {kSteps, 1, 256})});

  // Bidirectional GRU (gate order z, r, h; linear_before_reset as PyTorch exports it).
  const auto gru = b.OpN(
      "GRU", "gru",
      {x, b.FanInWeight("gru.W", {2, 3 * kHidden, 256}, kHidden),
       b.FanInWeight("gru.R", {2, 3 * kHidden, kHidden}, kHidden), b.Weight("gru.B", {2, 6 * kHidden}, 0.1f)},
      {"gru.Y", ""},
      {AttrInt("hidden_size", kHidden), AttrString("direction", "bidirectional"),
       AttrInt("linear_before_reset", 1)});
  // Y [T,2,1,H] -> [T,1,2,H] -> [T,2H]
  x = b.Op("Transpose", "gru.merged", {gru[0]}, {AttrInts("perm", {0, 2, 1, 3})});
  const std::string r = b.Op("Reshape", "features", {x, b.Shape("features.shape", {kSteps, 2 * kHidden})});

  // One-head self-attention over the steps: softmax(q k^T / sqrt(d)) v.
  const std::string q = b.Op("MatMul", "attn.q", {r, b.FanInWeight("attn.q.weight", {2 * kHidden, kAttn}, 2 * kHidden)});
  const std::string k = b.Op("MatMul", "attn.k", {r, b.FanInWeight("attn.k.weight", {2 * kHidden, kAttn}, 2 * kHidden)});
  const std::string v = b.Op("MatMul", "attn.v", {r, b.FanInWeight("attn.v.weight", {2 * kHidden, kAttn}, 2 * kHidden)});
  const std::string kt = b.Op("Transpose", "attn.kt", {k}, {AttrInts("perm", {1, 0})});
  std::string s = b.Op("MatMul", "attn.scores", {q, kt});  // [T,T]
  s = b.Op("Mul", "attn.scaled", {s, b.Scalar("attn.scale", 1.0f / std::sqrt(static_cast<float>(kAttn)))});
  s = b.Op("Softmax", "attn.probs", {s}, {AttrInt("axis", 1)});
  const std::string ctx = b.Op("MatMul", "attn.context", {s, v});  // [T,64]
  x = b.Op("Concat", "head.in", {r, ctx}, {AttrInt("axis", 1)});   // [T,160]
  x = b.Op("Gemm", "head",
           {x, b.FanInWeight("head.weight", {2 * kHidden + kAttn, kClasses}, 2 * kHidden + kAttn),
            b.Weight("head.bias", {kClasses}, 0.1f)});
  b.Op("Softmax", "probs", {x}, {AttrInt("axis", 1)});
  g.outputs.push_back(TensorValue("probs", {kSteps, kClasses}));
  return m;
}

}  // namespace simplecpp::builtin
