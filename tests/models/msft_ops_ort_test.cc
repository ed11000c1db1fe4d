// The com.microsoft decoder-block ops (graph/ops/msft_normalization.cc, msft_activation.cc,
// msft_rotary.cc) against ONNX Runtime (onnxruntime-node through tests/models/ort_reference.mjs):
// one-node float32 models (SkipLayerNormalization, SkipSimplifiedLayerNormalization,
// SimplifiedLayerNormalization, BiasGelu, FastGelu, QuickGelu, RotaryEmbedding) run here through
// the public API and in ORT, compared within 1e-5 * max(1, |ref|). Skipped with a message when
// `node` or the npm package is missing; set SIMPLECPP_ORT_NODE_DIR to a folder holding
// node_modules/onnxruntime-node (default bench/).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"
#include "tests/models/ort_node.h"

namespace simplecpp {
namespace {


graph::ValueInfo FloatValue(const std::string& name, const Dims& dims) {
  graph::ValueInfo v;
  v.name = name;
  v.type.kind = graph::TypeInfo::Kind::kTensor;
  v.type.dtype = DType::kFloat32;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(graph::Dim{d, ""});
  return v;
}

graph::Attribute Int(const std::string& name, int64_t v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kInt;
  a.i = v;
  return a;
}

Tensor Int64s(Dims dims, const std::vector<int64_t>& values) {
  Tensor t(DType::kInt64, std::move(dims));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

Tensor Int32s(Dims dims, const std::vector<int32_t>& values) {
  Tensor t(DType::kInt32, std::move(dims));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<int32_t>()[i] = values[i];
  return t;
}

graph::Attribute Float(const std::string& name, float v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kFloat;
  a.f = v;
  return a;
}

Tensor RandomFloat(Dims dims, std::mt19937& rng, float lo, float hi) {
  Tensor t(DType::kFloat32, std::move(dims));
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// One node: `inputs` by position ("" = omitted); the first is the graph input X, the others
// initializers; `outputs` by position ("" = omitted).
struct Case {
  std::string tag, op, domain;
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::vector<std::string> outputs;
  std::vector<graph::Attribute> attributes;
};

// Runs the case in ORT; returns each named output's values.
std::vector<std::vector<float>> RunOrt(const std::string& ort_dir, const graph::Model& m,
                                       const Case& c) {
  std::vector<std::vector<float>> result;
  std::string error;
  REQUIRE_MESSAGE(testing::RunOrtReference(ort_dir, onnx::WriteModel(m), {c.inputs[0]}, "msft-" + c.tag,
                                           &result, &error),
                  error);
  return result;
}

graph::Model MakeModel(const Case& c) {
  graph::Model m;
  m.ir_version = 8;
  m.opsets.push_back(graph::OpsetImport{"", 17});
  m.opsets.push_back(graph::OpsetImport{"com.microsoft", 1});
  m.producer_name = "simplecpp";
  m.graph.name = "msft_" + c.tag;
  graph::Graph& g = m.graph;
  graph::Node node;
  node.name = "node";
  node.op_type = c.op;
  node.domain = c.domain;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const auto& [name, t] = c.inputs[i];
    node.inputs.push_back(name);
    if (name.empty()) continue;
    if (i == 0) {
      g.inputs.push_back(FloatValue(name, t.dims()));
    } else {
      g.initializers.emplace_back(name, t);
    }
  }
  node.outputs = c.outputs;
  node.attributes = c.attributes;
  g.nodes.push_back(node);
  for (const std::string& name : c.outputs) {
    if (!name.empty()) g.outputs.push_back(FloatValue(name, {}));
  }
  for (auto& o : g.outputs) o.type.has_shape = false;
  return m;
}

std::vector<Tensor> RunOurs(const graph::Model& m, const Case& c) {
  const std::string bytes = onnx::WriteModel(m);
  Session session(Model::LoadFromBytes(bytes.data(), bytes.size()));
  const auto out =
      session.Run(std::map<std::string, Tensor>{{c.inputs[0].first, c.inputs[0].second}});
  std::vector<Tensor> result;
  for (const std::string& name : c.outputs) {
    if (!name.empty()) result.push_back(out.at(name));
  }
  return result;
}

double MaxDiff(const Tensor& got, const std::vector<float>& want) {
  if (got.num_elements() != static_cast<int64_t>(want.size())) return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got.data<float>()[i]) - want[i]) /
                     std::max(1.0, std::fabs(static_cast<double>(want[i])));
    worst = std::max(worst, d);
  }
  return worst;
}

void CheckCase(const std::string& ort_dir, const Case& c) {
  CAPTURE(c.tag);
  const graph::Model m = MakeModel(c);
  const auto want = RunOrt(ort_dir, m, c);
  const auto got = RunOurs(m, c);
  REQUIRE(want.size() == got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = MaxDiff(got[i], want[i]);
    CHECK_MESSAGE(d <= 1e-5, c.tag << " output " << i << ": max relative difference " << d);
    MESSAGE(c.tag << " output " << i << ": max |simplecpp - onnxruntime| / max(1, |ort|) = " << d);
  }
}

TEST_CASE("msft decoder ops vs onnxruntime-node") {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipping the onnxruntime-node comparison of the com.microsoft decoder ops: " << why);
    return;
  }
  std::mt19937 rng(7);
  for (int64_t h : {7, 33, 1000}) {
    const std::string hs = std::to_string(h);
    const Tensor x = RandomFloat({2, 3, h}, rng, -2.0f, 2.0f);
    const Tensor skip = RandomFloat({2, 3, h}, rng, -1.0f, 1.0f);
    const Tensor skip2d = RandomFloat({3, h}, rng, -1.0f, 1.0f);
    const Tensor gamma = RandomFloat({h}, rng, 0.5f, 1.5f);
    const Tensor beta = RandomFloat({h}, rng, -1.0f, 1.0f);
    const Tensor bias = RandomFloat({h}, rng, -1.0f, 1.0f);
    const std::vector<graph::Attribute> eps = {Float("epsilon", 1e-5f)};
    CheckCase(ort_dir,
              {"skip_ln_" + hs,
               "SkipLayerNormalization",
               "com.microsoft",
               {{"X", x}, {"skip", skip}, {"gamma", gamma}, {"beta", beta}, {"bias", bias}},
               {"Y", "", "", "sum"},
               eps});
    CheckCase(ort_dir, {"skip_ln_2d_skip_" + hs,
                        "SkipLayerNormalization",
                        "com.microsoft",
                        {{"X", x}, {"skip", skip2d}, {"gamma", gamma}},
                        {"Y"},
                        eps});
    CheckCase(ort_dir, {"skip_rms_" + hs,
                        "SkipSimplifiedLayerNormalization",
                        "com.microsoft",
                        {{"X", x}, {"skip", skip}, {"gamma", gamma}},
                        {"Y", "", "", "sum"},
                        eps});
    CheckCase(ort_dir, {"rms_" + hs,
                        "SimplifiedLayerNormalization",
                        "",
                        {{"X", x}, {"scale", gamma}},
                        {"Y"},
                        eps});
    CheckCase(
        ort_dir,
        {"bias_gelu_" + hs, "BiasGelu", "com.microsoft", {{"X", x}, {"bias", bias}}, {"Y"}, {}});
    CheckCase(
        ort_dir,
        {"fast_gelu_" + hs, "FastGelu", "com.microsoft", {{"X", x}, {"bias", bias}}, {"Y"}, {}});
    CheckCase(ort_dir,
              {"fast_gelu_nobias_" + hs, "FastGelu", "com.microsoft", {{"X", x}}, {"Y"}, {}});
    CheckCase(ort_dir, {"quick_gelu_" + hs,
                        "QuickGelu",
                        "com.microsoft",
                        {{"X", x}},
                        {"Y"},
                        {Float("alpha", 1.702f)}});

    // SkipSimplifiedLayerNormalization adds the bias (input 3) to the sum, as the schema says.
    CheckCase(ort_dir, {"skip_rms_bias_" + hs,
                        "SkipSimplifiedLayerNormalization",
                        "com.microsoft",
                        {{"X", x}, {"skip", skip}, {"gamma", gamma}, {"bias", bias}},
                        {"Y", "", "", "sum"},
                        eps});
  }

  // GroupQueryAttention: first prompts and token generation after a cache (every batch entry
  // the same length, so every present row is defined), rotary, local window, softcap, packed QKV.
  struct GqaCase {
    std::string tag;
    int64_t b, s, past;
    bool packed, rotary, interleaved;
    int64_t window;
    float softcap;
  };
  const int64_t n = 4, g = 2, h = 16;  // ORT wants head_size % 16 == 0 with rotary
  for (const GqaCase& k :
       std::vector<GqaCase>{{"gqa_prompt", 2, 5, 0, false, false, false, -1, 0},
                            {"gqa_decode", 2, 1, 5, false, false, false, -1, 0},
                            {"gqa_prompt_rotary", 2, 4, 0, false, true, false, -1, 0},
                            {"gqa_decode_rotary_il", 2, 1, 6, false, true, true, -1, 0},
                            {"gqa_chunk_rotary", 1, 3, 4, false, true, false, -1, 0},
                            {"gqa_decode_window", 1, 1, 7, false, false, false, 3, 0},
                            {"gqa_prompt_window", 1, 6, 0, false, false, false, 2, 0},
                            {"gqa_decode_softcap", 2, 1, 4, false, false, false, -1, 2},
                            {"gqa_packed", 2, 1, 3, true, true, false, -1, 0}}) {
    const int64_t total = k.past + k.s;
    const int64_t width = k.packed ? (n + 2 * g) * h : n * h;
    Case c{k.tag, "GroupQueryAttention",           "com.microsoft",
           {},    {"Y", "present_k", "present_v"}, {Int("num_heads", n), Int("kv_num_heads", g)}};
    c.inputs.push_back({"Q", RandomFloat({k.b, k.s, width}, rng, -1.0f, 1.0f)});
    if (k.packed) {
      c.inputs.push_back({"", Tensor()});
      c.inputs.push_back({"", Tensor()});
    } else {
      c.inputs.push_back({"K", RandomFloat({k.b, k.s, g * h}, rng, -1.0f, 1.0f)});
      c.inputs.push_back({"V", RandomFloat({k.b, k.s, g * h}, rng, -1.0f, 1.0f)});
    }
    if (k.past > 0) {
      c.inputs.push_back({"past_k", RandomFloat({k.b, g, k.past, h}, rng, -1.0f, 1.0f)});
      c.inputs.push_back({"past_v", RandomFloat({k.b, g, k.past, h}, rng, -1.0f, 1.0f)});
    } else {
      c.inputs.push_back({"", Tensor()});
      c.inputs.push_back({"", Tensor()});
    }
    c.inputs.push_back(
        {"seqlens_k", Int32s({k.b}, std::vector<int32_t>(k.b, static_cast<int32_t>(total - 1)))});
    c.inputs.push_back({"total_seq", Int32s({}, {static_cast<int32_t>(total)})});
    if (k.rotary) {
      c.inputs.push_back({"cos", RandomFloat({16, h / 2}, rng, -1.0f, 1.0f)});
      c.inputs.push_back({"sin", RandomFloat({16, h / 2}, rng, -1.0f, 1.0f)});
      c.attributes.push_back(Int("do_rotary", 1));
      c.attributes.push_back(Int("rotary_interleaved", k.interleaved ? 1 : 0));
    }
    if (k.window > 0) c.attributes.push_back(Int("local_window_size", k.window));
    if (k.softcap > 0) c.attributes.push_back(Float("softcap", k.softcap));
    CheckCase(ort_dir, c);
  }

  // RotaryEmbedding (ORT's CPU kernel is float32 only and rotates whole heads here).
  for (int il : {0, 1}) {
    const std::string tag = "rotary_il" + std::to_string(il);
    const Tensor x3 = RandomFloat({2, 3, 32}, rng, -2.0f, 2.0f);
    const Tensor x4 = RandomFloat({2, 4, 3, 8}, rng, -2.0f, 2.0f);
    const Tensor cos = RandomFloat({12, 4}, rng, -1.0f, 1.0f);
    const Tensor sin = RandomFloat({12, 4}, rng, -1.0f, 1.0f);
    const Tensor ids = Int64s({2, 3}, {0, 5, 11, 3, 3, 7});
    const std::vector<graph::Attribute> attrs = {Int("interleaved", il), Int("num_heads", 4)};
    CheckCase(ort_dir, {tag + "_3d",
                        "RotaryEmbedding",
                        "com.microsoft",
                        {{"X", x3}, {"ids", ids}, {"cos", cos}, {"sin", sin}},
                        {"Y"},
                        attrs});
    CheckCase(ort_dir, {tag + "_3d_offset",
                        "RotaryEmbedding",
                        "com.microsoft",
                        {{"X", x3}, {"ids", Int64s({1}, {4})}, {"cos", cos}, {"sin", sin}},
                        {"Y"},
                        attrs});
    CheckCase(ort_dir, {tag + "_4d",
                        "RotaryEmbedding",
                        "com.microsoft",
                        {{"X", x4}, {"ids", ids}, {"cos", cos}, {"sin", sin}},
                        {"Y"},
                        {Int("interleaved", il)}});
  }
}

}  // namespace
}  // namespace simplecpp
