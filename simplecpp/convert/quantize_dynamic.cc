// Dynamic int8 quantization of MatMul / Gemm / Conv weights in ONNX Runtime's quantize_dynamic
// pattern (quantize.h): activations quantized at run time by DynamicQuantizeLinear, MatMulInteger /
// ConvInteger on int8 weights, the int32 result cast to float and rescaled by x_scale * w_scale.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/convert/convert_util.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/convert/quantize_prepare.h"

namespace simplecpp::convert {

using namespace detail;  // NOLINT: converter helpers

namespace {

// The three outputs of a DynamicQuantizeLinear, or the three initializers of a quantized weight.
struct QuantizedX {
  std::string q, scale, zero_point;
};

// Conv(x, W[M, C/group, k...], B[M]) with constant float32 W (and B) becomes, when `node` is one,
//   ConvInteger(xq, Wq, xzp, Wzp) -> Cast(to FLOAT) -> Mul(., Mul(xs, Ws)) [-> Add(., B[M,1..1])]
// (ORT's ConvInteger rewrite), appended to `nodes`. Ws is one scale or, per channel, [M,1..1]
// (broadcast over the output's spatial axes); Wzp is a scalar 0 either way. Returns false for any
// other node.
template <typename QuantizeX>
bool QuantizeConv(const graph::Node& node, bool per_channel, QuantizeX quantize_x, graph::Graph* g,
                  std::set<std::string>* taken, std::map<std::string, QuantizedX>* quantized_w,
                  std::vector<graph::Node>* nodes) {
  if (node.op_type != "Conv" || !IsDefaultDomain(node.domain) || node.inputs.size() < 2 ||
      node.outputs.size() != 1 || g->FindInitializer(node.inputs[0])) {
    return false;
  }
  const Tensor* w = g->FindInitializer(node.inputs[1]);
  if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3) return false;
  const int64_t m = w->dim(0);
  const bool has_bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  const Tensor* bias = has_bias ? g->FindInitializer(node.inputs[2]) : nullptr;
  if (has_bias && (!bias || bias->dtype() != DType::kFloat32 || bias->num_elements() != m)) {
    return false;
  }
  // Copied now: the pointers into g->initializers do not survive the additions below.
  const std::vector<float> bias_values = has_bias ? FloatValues(*bias) : std::vector<float>();
  const std::string& w_name = node.inputs[1];
  const std::string& y = node.outputs[0];
  const std::string base = node.name.empty() ? y : node.name;
  Dims channel_dims(static_cast<size_t>(w->rank() - 1), 1);  // [M, 1, ...]: one per output channel
  channel_dims[0] = m;

  const QuantizedX qx = quantize_x(node.inputs[0]);
  const std::string key = w_name + "#conv";
  auto wit = quantized_w->find(key);
  if (wit == quantized_w->end()) {
    auto [q, scales] = QuantizeWeightSymmetric(*w, per_channel ? 0 : -1);
    QuantizedX qw{UniqueName(w_name + "_quantized", taken), UniqueName(w_name + "_scale", taken),
                  UniqueName(w_name + "_zero_point", taken)};
    g->initializers.emplace_back(qw.q, std::move(q));
    g->initializers.emplace_back(
        qw.scale, per_channel ? Tensor::FromVector<float>(DType::kFloat32, channel_dims, scales)
                              : FloatVector(scales, true));
    // One zero point even per channel: symmetric weights have 0 everywhere, and ORT's ConvInteger
    // refuses a per-channel w_zero_point.
    g->initializers.emplace_back(qw.zero_point, Tensor::FromVector<int8_t>(DType::kInt8, {}, {0}));
    wit = quantized_w->emplace(key, qw).first;
  }
  const QuantizedX qw = wit->second;
  const std::string conv_out = UniqueName(y + "_output_quantized", taken);
  const std::string cast_out = UniqueName(conv_out + "_cast_output", taken);
  const std::string scales_mul = UniqueName(base + "_quant_scales_mul", taken);
  const std::string scales_out = UniqueName(scales_mul + ":0", taken);
  const std::string scaled = has_bias ? UniqueName(y + "_scaled", taken) : y;
  nodes->push_back(MakeNode("ConvInteger", UniqueName(base + "_quant", taken),
                            {qx.q, qw.q, qx.zero_point, qw.zero_point}, {conv_out},
                            node.attributes));
  nodes->push_back(MakeNode("Cast", UniqueName(conv_out + "_cast", taken), {conv_out}, {cast_out},
                            {IntAttr("to", static_cast<int64_t>(DType::kFloat32))}));
  nodes->push_back(MakeNode("Mul", scales_mul, {qx.scale, qw.scale}, {scales_out}));
  nodes->push_back(MakeNode("Mul", UniqueName(base + "_quant_output_scale_mul", taken),
                            {cast_out, scales_out}, {scaled}));
  if (has_bias) {
    const std::string b = UniqueName(node.inputs[2] + "_reshaped", taken);
    g->initializers.emplace_back(
        b, Tensor::FromVector<float>(DType::kFloat32, channel_dims, bias_values));
    nodes->push_back(MakeNode("Add", UniqueName(base + "_bias_add", taken), {scaled, b}, {y}));
  }
  return true;
}

// One QuantizeDynamic run: the graph being rewritten, the names taken, the quantized values made so
// far (each made once, however many nodes use it) and the rewritten node list.
struct DynamicQuantizer {
  const DynamicOptions& options;
  graph::Graph& g;
  std::set<std::string> taken;
  std::map<std::string, QuantizedX> quantized_x;  // activation -> its DynamicQuantizeLinear
  std::map<std::string, QuantizedX> quantized_w;  // weight (+ transB, alpha) -> Wq, Ws, Wzp
  std::set<std::string> replaced_weights;
  std::vector<graph::Node> nodes;
};

// The activation: one DynamicQuantizeLinear per distinct input value.
QuantizedX QuantizeActivation(const std::string& x, DynamicQuantizer* dq) {
  auto xit = dq->quantized_x.find(x);
  if (xit == dq->quantized_x.end()) {
    std::set<std::string>& taken = dq->taken;
    QuantizedX qx{UniqueName(x + "_quantized", &taken), UniqueName(x + "_scale", &taken),
                  UniqueName(x + "_zero_point", &taken)};
    dq->nodes.push_back(MakeNode("DynamicQuantizeLinear",
                                 UniqueName(x + "_QuantizeLinear", &taken), {x},
                                 {qx.q, qx.scale, qx.zero_point}));
    xit = dq->quantized_x.emplace(x, qx).first;
  }
  return xit->second;
}

// A MatMul / Gemm the rewrite applies to, with the Gemm attributes it folds in.
struct MatMulMatch {
  const Tensor* w = nullptr;
  bool is_gemm = false;
  float alpha = 1.0f, beta = 1.0f;
  bool trans_b = false;
};

// True when `node` is a MatMul (or, if enabled, a Gemm) on a run-time activation and a constant
// float32 rank-2 weight; a Gemm also needs no transA, alpha > 0 and, when beta scales C, a constant
// float32 C.
bool MatchMatMul(const graph::Node& node, const graph::Graph& g, const DynamicOptions& options,
                 MatMulMatch* m) {
  const bool is_matmul = node.op_type == "MatMul" && IsDefaultDomain(node.domain);
  m->is_gemm = options.quantize_gemm && node.op_type == "Gemm" && IsDefaultDomain(node.domain);
  if ((!is_matmul && !m->is_gemm) || node.inputs.size() < 2) return false;
  m->w = g.FindInitializer(node.inputs[1]);
  const Tensor* x_init = g.FindInitializer(node.inputs[0]);
  bool ok = m->w && !x_init && m->w->dtype() == DType::kFloat32 && m->w->rank() == 2;
  if (ok && m->is_gemm) {
    m->alpha = FloatAttrOr(node, "alpha", 1.0f);
    m->beta = FloatAttrOr(node, "beta", 1.0f);
    m->trans_b = IntAttrOr(node, "transB", 0) != 0;
    // transA would need a Transpose of the activation; ORT's tool leaves such Gemms alone too.
    ok = IntAttrOr(node, "transA", 0) == 0 && m->alpha > 0;
    if (ok && node.inputs.size() > 2 && !node.inputs[2].empty() && m->beta != 1.0f) {
      const Tensor* c = g.FindInitializer(node.inputs[2]);
      ok = c && c->dtype() == DType::kFloat32;
    }
  }
  return ok;
}

// The weight, as [K, N]: int8 symmetric, per tensor or per column (axis 1), alpha folded into the
// scales.
QuantizedX QuantizeMatMulWeight(const std::string& w_name, const MatMulMatch& m,
                                DynamicQuantizer* dq) {
  const bool trans_b = m.trans_b;
  const float alpha = m.alpha;
  const std::string key = w_name + (trans_b ? "#T" : "") + (alpha != 1.0f ? "#a" + std::to_string(alpha) : "");
  auto wit = dq->quantized_w.find(key);
  if (wit == dq->quantized_w.end()) {
    std::set<std::string>& taken = dq->taken;
    const Tensor kn = trans_b ? Transpose2D(*m.w) : *m.w;
    auto [q, scales] = QuantizeWeightSymmetric(kn, dq->options.per_channel ? 1 : -1);
    QuantizedX qw{UniqueName(w_name + "_quantized", &taken), UniqueName(w_name + "_scale", &taken),
                  UniqueName(w_name + "_zero_point", &taken)};
    for (float& s : scales) s *= alpha;
    const bool scalar = !dq->options.per_channel;
    const int64_t n = kn.dim(1);
    dq->g.initializers.emplace_back(qw.q, std::move(q));
    dq->g.initializers.emplace_back(qw.scale, FloatVector(scales, scalar));
    dq->g.initializers.emplace_back(
        qw.zero_point,
        scalar ? Tensor::FromVector<int8_t>(DType::kInt8, {}, {0})
               : Tensor::FromVector<int8_t>(DType::kInt8, {n}, std::vector<int8_t>(static_cast<size_t>(n), 0)));
    wit = dq->quantized_w.emplace(key, qw).first;
  }
  return wit->second;
}

// MatMulInteger(xq, Wq, xzp, Wzp) -> Cast(to FLOAT) -> Mul(., Mul(xs, Ws)) [-> Add(., beta C)] in
// place of `node`.
void EmitMatMulInteger(const graph::Node& node, const MatMulMatch& m, const QuantizedX& qx,
                       const QuantizedX& qw, DynamicQuantizer* dq) {
  std::set<std::string>& taken = dq->taken;
  graph::Graph& g = dq->g;
  std::vector<graph::Node>& nodes = dq->nodes;
  const std::string& y = node.outputs[0];
  const std::string base = node.name.empty() ? y : node.name;
  const bool has_bias = m.is_gemm && node.inputs.size() > 2 && !node.inputs[2].empty();
  const std::string mm_out = UniqueName(y + "_output_quantized", &taken);
  const std::string cast_out = UniqueName(mm_out + "_cast_output", &taken);
  const std::string scales_mul = UniqueName(base + "_quant_scales_mul", &taken);
  const std::string scales_out = UniqueName(scales_mul + ":0", &taken);
  const std::string scaled = has_bias ? UniqueName(y + "_scaled", &taken) : y;
  nodes.push_back(MakeNode("MatMulInteger", UniqueName(base + "_quant", &taken),
                           {qx.q, qw.q, qx.zero_point, qw.zero_point}, {mm_out}));
  nodes.push_back(MakeNode("Cast", UniqueName(mm_out + "_cast", &taken), {mm_out}, {cast_out},
                           {IntAttr("to", static_cast<int64_t>(DType::kFloat32))}));
  nodes.push_back(MakeNode("Mul", scales_mul, {qx.scale, qw.scale}, {scales_out}));
  nodes.push_back(MakeNode("Mul", UniqueName(base + "_quant_output_scale_mul", &taken),
                           {cast_out, scales_out}, {scaled}));
  if (has_bias) {
    std::string c = node.inputs[2];
    if (m.beta != 1.0f) {
      std::vector<float> v = FloatValues(*g.FindInitializer(c));
      for (float& e : v) e *= m.beta;
      const Dims dims = g.FindInitializer(c)->dims();
      const std::string scaled_c = UniqueName(c + "_beta", &taken);
      g.initializers.emplace_back(scaled_c, Tensor::FromVector<float>(DType::kFloat32, dims, v));
      c = scaled_c;
    }
    nodes.push_back(MakeNode("Add", UniqueName(base + "_bias_add", &taken), {scaled, c}, {y}));
  }
}

// Rewrites one node into `dq->nodes`: quantized when it is a Conv / MatMul / Gemm the rewrite
// applies to (returns true), moved over unchanged otherwise.
bool QuantizeNode(graph::Node& node, DynamicQuantizer* dq) {
  auto quantize_x = [dq](const std::string& x) { return QuantizeActivation(x, dq); };
  if (dq->options.quantize_conv &&
      QuantizeConv(node, dq->options.per_channel, quantize_x, &dq->g, &dq->taken, &dq->quantized_w,
                   &dq->nodes)) {
    dq->replaced_weights.insert(node.inputs[1]);
    if (node.inputs.size() > 2) dq->replaced_weights.insert(node.inputs[2]);
    return true;
  }
  MatMulMatch m;
  if (!MatchMatMul(node, dq->g, dq->options, &m)) {
    dq->nodes.push_back(std::move(node));
    return false;
  }
  const QuantizedX qx = QuantizeActivation(node.inputs[0], dq);
  const QuantizedX qw = QuantizeMatMulWeight(node.inputs[1], m, dq);
  dq->replaced_weights.insert(node.inputs[1]);
  EmitMatMulInteger(node, m, qx, qw, dq);
  return true;
}

}  // namespace

graph::Model QuantizeDynamic(const graph::Model& model, const DynamicOptions& options,
                             QuantizeReport* report) {
  graph::Model out = PrepareForQuantization(model, 11, 11, report);
  if (out.OpsetVersion("") < 11) {
    throw Error(ErrorCode::kUnsupported,
                "dynamic quantization needs ai.onnx opset >= 11 (DynamicQuantizeLinear); the model "
                "imports opset " +
                    std::to_string(out.OpsetVersion("")));
  }
  graph::Graph& g = out.graph;
  DynamicQuantizer dq{options, g, AllNames(g), {}, {}, {}, {}};
  int converted = 0;
  for (graph::Node& node : g.nodes) {
    if (QuantizeNode(node, &dq)) ++converted;
  }
  if (converted == 0) {
    throw Error(ErrorCode::kUnsupported,
                "dynamic quantization: the model has no MatMul/Gemm with a constant float32 "
                "rank-2 weight and no Conv with a constant float32 weight");
  }
  g.nodes = std::move(dq.nodes);
  DropUnusedInitializers(&g, dq.replaced_weights);
  return out;
}

}  // namespace simplecpp::convert
