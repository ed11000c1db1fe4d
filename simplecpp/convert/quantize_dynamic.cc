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
  std::set<std::string> taken = AllNames(g);
  std::map<std::string, QuantizedX> quantized_x;       // activation -> its DynamicQuantizeLinear
  std::map<std::string, QuantizedX> quantized_w;       // weight (+ transB, alpha) -> Wq, Ws, Wzp
  std::set<std::string> replaced_weights;
  std::vector<graph::Node> nodes;
  int converted = 0;
  // The activation: one DynamicQuantizeLinear per distinct input value.
  auto quantize_x = [&](const std::string& x) {
    auto xit = quantized_x.find(x);
    if (xit == quantized_x.end()) {
      QuantizedX qx{UniqueName(x + "_quantized", &taken), UniqueName(x + "_scale", &taken),
                    UniqueName(x + "_zero_point", &taken)};
      nodes.push_back(MakeNode("DynamicQuantizeLinear", UniqueName(x + "_QuantizeLinear", &taken),
                               {x}, {qx.q, qx.scale, qx.zero_point}));
      xit = quantized_x.emplace(x, qx).first;
    }
    return xit->second;
  };

  for (graph::Node& node : g.nodes) {
    if (options.quantize_conv &&
        QuantizeConv(node, options.per_channel, quantize_x, &g, &taken, &quantized_w, &nodes)) {
      replaced_weights.insert(node.inputs[1]);
      if (node.inputs.size() > 2) replaced_weights.insert(node.inputs[2]);
      ++converted;
      continue;
    }
    const bool is_matmul = node.op_type == "MatMul" && IsDefaultDomain(node.domain);
    const bool is_gemm = options.quantize_gemm && node.op_type == "Gemm" && IsDefaultDomain(node.domain);
    if ((!is_matmul && !is_gemm) || node.inputs.size() < 2) {
      nodes.push_back(std::move(node));
      continue;
    }
    const Tensor* w = g.FindInitializer(node.inputs[1]);
    const Tensor* x_init = g.FindInitializer(node.inputs[0]);
    bool ok = w && !x_init && w->dtype() == DType::kFloat32 && w->rank() == 2;
    float alpha = 1.0f, beta = 1.0f;
    bool trans_b = false;
    if (ok && is_gemm) {
      alpha = FloatAttrOr(node, "alpha", 1.0f);
      beta = FloatAttrOr(node, "beta", 1.0f);
      trans_b = IntAttrOr(node, "transB", 0) != 0;
      // transA would need a Transpose of the activation; ORT's tool leaves such Gemms alone too.
      ok = IntAttrOr(node, "transA", 0) == 0 && alpha > 0;
      if (ok && node.inputs.size() > 2 && !node.inputs[2].empty() && beta != 1.0f) {
        const Tensor* c = g.FindInitializer(node.inputs[2]);
        ok = c && c->dtype() == DType::kFloat32;
      }
    }
    if (!ok) {
      nodes.push_back(std::move(node));
      continue;
    }
    const std::string& x = node.inputs[0];
    const std::string& w_name = node.inputs[1];
    const std::string& y = node.outputs[0];
    const std::string base = node.name.empty() ? y : node.name;

    const QuantizedX qx = quantize_x(x);

    // The weight, as [K, N]: int8 symmetric, per tensor or per column (axis 1).
    const std::string key = w_name + (trans_b ? "#T" : "") + (alpha != 1.0f ? "#a" + std::to_string(alpha) : "");
    auto wit = quantized_w.find(key);
    if (wit == quantized_w.end()) {
      const Tensor kn = trans_b ? Transpose2D(*w) : *w;
      auto [q, scales] = QuantizeWeightSymmetric(kn, options.per_channel ? 1 : -1);
      QuantizedX qw{UniqueName(w_name + "_quantized", &taken), UniqueName(w_name + "_scale", &taken),
                    UniqueName(w_name + "_zero_point", &taken)};
      for (float& s : scales) s *= alpha;
      const bool scalar = !options.per_channel;
      const int64_t n = kn.dim(1);
      g.initializers.emplace_back(qw.q, std::move(q));
      g.initializers.emplace_back(qw.scale, FloatVector(scales, scalar));
      g.initializers.emplace_back(
          qw.zero_point,
          scalar ? Tensor::FromVector<int8_t>(DType::kInt8, {}, {0})
                 : Tensor::FromVector<int8_t>(DType::kInt8, {n}, std::vector<int8_t>(static_cast<size_t>(n), 0)));
      wit = quantized_w.emplace(key, qw).first;
    }
    const std::string wq = wit->second.q, ws = wit->second.scale, wzp = wit->second.zero_point;
    replaced_weights.insert(w_name);

    const bool has_bias = is_gemm && node.inputs.size() > 2 && !node.inputs[2].empty();
    const std::string mm_out = UniqueName(y + "_output_quantized", &taken);
    const std::string cast_out = UniqueName(mm_out + "_cast_output", &taken);
    const std::string scales_mul = UniqueName(base + "_quant_scales_mul", &taken);
    const std::string scales_out = UniqueName(scales_mul + ":0", &taken);
    const std::string scaled = has_bias ? UniqueName(y + "_scaled", &taken) : y;
    nodes.push_back(MakeNode("MatMulInteger", UniqueName(base + "_quant", &taken),
                             {qx.q, wq, qx.zero_point, wzp}, {mm_out}));
    nodes.push_back(MakeNode("Cast", UniqueName(mm_out + "_cast", &taken), {mm_out}, {cast_out},
                             {IntAttr("to", static_cast<int64_t>(DType::kFloat32))}));
    nodes.push_back(MakeNode("Mul", scales_mul, {qx.scale, ws}, {scales_out}));
    nodes.push_back(MakeNode("Mul", UniqueName(base + "_quant_output_scale_mul", &taken),
                             {cast_out, scales_out}, {scaled}));
    if (has_bias) {
      std::string c = node.inputs[2];
      if (beta != 1.0f) {
        std::vector<float> v = FloatValues(*g.FindInitializer(c));
        for (float& e : v) e *= beta;
        const Dims dims = g.FindInitializer(c)->dims();
        const std::string scaled_c = UniqueName(c + "_beta", &taken);
        g.initializers.emplace_back(scaled_c, Tensor::FromVector<float>(DType::kFloat32, dims, v));
        c = scaled_c;
      }
      nodes.push_back(MakeNode("Add", UniqueName(base + "_bias_add", &taken), {scaled, c}, {y}));
    }
    ++converted;
  }
  if (converted == 0) {
    throw Error(ErrorCode::kUnsupported,
                "dynamic quantization: the model has no MatMul/Gemm with a constant float32 "
                "rank-2 weight and no Conv with a constant float32 weight");
  }
  g.nodes = std::move(nodes);
  DropUnusedInitializers(&g, replaced_weights);
  return out;
}

}  // namespace simplecpp::convert
