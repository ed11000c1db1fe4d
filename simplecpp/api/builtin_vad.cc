// The "vad" built-in model (builtin_models.h): the shape of a small voice-activity detector with
// recurrent state passed in and out, an If on the sample rate, and a Sigmoid speech probability.
#include <cmath>
#include <string>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"

namespace simplecpp::builtin {

using namespace detail;  // NOLINT: the builder helpers

namespace {

constexpr int64_t kSamples = 512, kFrames = 8, kFrameLen = 64, kFeatures = 32, kHidden = 64;

// One branch of the If: frames [1,8,64] @ W [64,32] + b, then `activation` -> "<prefix>.out".
// `weight` may name an initializer of the branch itself or one of the outer graph.
graph::Graph FramingBranch(const std::string& prefix, const std::string& weight,
                           const std::string& bias, const std::string& activation) {
  graph::Graph g;
  g.name = prefix;
  Builder b(&g, 0);
  const std::string frames = b.Op("Reshape", prefix + ".frames", {"input", "vad.frame_shape"});
  const std::string mm = b.Op("MatMul", prefix + ".matmul", {frames, weight});
  const std::string add = b.Op("Add", prefix + ".add", {mm, bias});
  b.Op(activation, prefix + ".out", {add});
  g.outputs.push_back(TensorValue(prefix + ".out", {1, kFrames, kFeatures}));
  return g;
}

}  // namespace

graph::Model MakeVadModel() {
  graph::Model m = NewModel("vad", "simplecpp built-in voice-activity detector (random weights)", 17);
  graph::Graph& g = m.graph;
  Builder b(&g, 0x5ADull);
  g.inputs.push_back(TensorValue("input", {1, kSamples}));
  g.inputs.push_back(TensorValue("sr", {}, DType::kInt64));
  g.inputs.push_back(TensorValue("h", {2, 1, kHidden}));
  g.inputs.push_back(TensorValue("c", {2, 1, kHidden}));

  b.Shape("vad.frame_shape", {1, kFrames, kFrameLen});
  // 16 kHz branch: its own weights live in the subgraph; 8 kHz branch: outer-scope weights.
  graph::Graph then_branch = FramingBranch("sr16k", "sr16k.weight", "sr16k.bias", "Relu");
  {
    Builder sb(&then_branch, b.rng().Next());
    sb.FanInWeight("sr16k.weight", {kFrameLen, kFeatures}, kFrameLen);
    sb.Weight("sr16k.bias", {kFeatures}, 0.1f);
  }
  const std::string w8 = b.FanInWeight("sr8k.weight", {kFrameLen, kFeatures}, kFrameLen);
  const std::string b8 = b.Weight("sr8k.bias", {kFeatures}, 0.1f);
  graph::Graph else_branch = FramingBranch("sr8k", w8, b8, "Tanh");

  const std::string is16k =
      b.Op("Equal", "is_16k", {"sr", b.Int64s("sr_16000", {}, {16000})});
  const std::string features = b.Op("If", "features", {is16k},
                                    {AttrGraph("then_branch", std::move(then_branch)),
                                     AttrGraph("else_branch", std::move(else_branch))});
  // [1,T,F] -> [T,1,F] (LSTM layout 0: sequence first)
  std::string seq = b.Op("Transpose", "seq", {features}, {AttrInts("perm", {1, 0, 2})});

  const std::string starts0 = b.Shape("slice.start0", {0}), ends0 = b.Shape("slice.end0", {1});
  const std::string starts1 = b.Shape("slice.start1", {1}), ends1 = b.Shape("slice.end1", {2});
  const std::string axes0 = b.Shape("slice.axes", {0});
  std::string hn[2], cn[2];
  int64_t in_size = kFeatures;
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "lstm" + std::to_string(layer);
    const std::string& s = layer == 0 ? starts0 : starts1;
    const std::string& e = layer == 0 ? ends0 : ends1;
    const std::string h0 = b.Op("Slice", p + ".h0", {"h", s, e, axes0});  // [1,1,H]
    const std::string c0 = b.Op("Slice", p + ".c0", {"c", s, e, axes0});
    // ONNX LSTM weights: W [1,4H,in], R [1,4H,H], B [1,8H]; gate order i, o, f, c.
    const std::string w = b.FanInWeight(p + ".W", {1, 4 * kHidden, in_size}, kHidden);
    const std::string r = b.FanInWeight(p + ".R", {1, 4 * kHidden, kHidden}, kHidden);
    const std::string bias = b.Weight(p + ".B", {1, 8 * kHidden}, 0.1f);
    const auto outs = b.OpN("LSTM", p, {seq, w, r, bias, "", h0, c0},
                            {p + ".Y", p + ".Y_h", p + ".Y_c"}, {AttrInt("hidden_size", kHidden)});
    // Y [T,1,1,H] -> [T,1,H]
    seq = b.Op("Squeeze", p + ".seq", {outs[0], b.Shape(p + ".squeeze_axes", {1})});
    hn[layer] = outs[1];
    cn[layer] = outs[2];
    in_size = kHidden;
  }
  b.Op("Concat", "hn", {hn[0], hn[1]}, {AttrInt("axis", 0)});
  b.Op("Concat", "cn", {cn[0], cn[1]}, {AttrInt("axis", 0)});

  // Head on the last hidden state: [1,H] -> Relu(x W1 + b1) W2 + b2 -> Sigmoid -> [1,1]
  std::string x = b.Op("Reshape", "head.in", {hn[1], b.Shape("head.shape", {1, kHidden})});
  x = b.Op("MatMul", "head.fc1.matmul", {x, b.FanInWeight("head.fc1.weight", {kHidden, 16}, kHidden)});
  x = b.Op("Add", "head.fc1", {x, b.Weight("head.fc1.bias", {16}, 0.1f)});
  x = b.Op("Relu", "head.relu", {x});
  x = b.Op("MatMul", "head.fc2.matmul", {x, b.FanInWeight("head.fc2.weight", {16, 1}, 16)});
  x = b.Op("Add", "head.fc2", {x, b.Weight("head.fc2.bias", {1}, 0.1f)});
  b.Op("Sigmoid", "output", {x});
  g.outputs.push_back(TensorValue("output", {1, 1}));
  g.outputs.push_back(TensorValue("hn", {2, 1, kHidden}));
  g.outputs.push_back(TensorValue("cn", {2, 1, kHidden}));
  return m;
}

}  // namespace simplecpp::builtin
