// Weight-only block quantization of MatMul / Gemm weights (quantize.h): each constant weight is
// brought to [K, N] (Gemm's transB applied, alpha folded in), quantized along K by
// quant::QuantizeBlocked, and written either as a blocked DequantizeLinear feeding the MatMul
// (ONNX opset 21) or as com.microsoft MatMulNBits. Both forms come from the same codes, scales
// and zero points, so they hold the same dequantized weights.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/float16/float16.h"
#include "quant/block_quant.h"
#include "quant/int4.h"
#include "simplecpp/convert/convert_util.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/convert/quantize_prepare.h"

namespace simplecpp::convert {

using namespace detail;  // NOLINT: converter helpers

namespace {

constexpr const char* kMsDomain = "com.microsoft";

// The float16 value nearest above or at s: a float16 scale is never smaller than the float32 one
// it stores, so no code is clipped (quant/block_quant.h). Infinity when s is beyond float16.
float RoundUpToHalf(float s) {
  uint16_t h = kernels::FloatToHalfBits(s);
  if (kernels::HalfBitsToFloat(h) < s) ++h;  // positive values: the next bit pattern is larger
  return kernels::HalfBitsToFloat(h);
}

// float32 values as a tensor of `dtype` (float32 or float16).
Tensor FloatTensorOf(DType dtype, const Dims& dims, const std::vector<float>& v) {
  if (dtype == DType::kFloat32) return Tensor::FromVector<float>(DType::kFloat32, dims, v);
  Tensor t(DType::kFloat16, dims);
  kernels::FloatToHalf(v.data(), t.data<uint16_t>(), v.size());
  return t;
}

// Integer codes as a tensor of an int4 / uint4 / int8 / uint8 dtype.
Tensor CodeTensor(DType dtype, int bits, const Dims& dims, const std::vector<int32_t>& codes) {
  Tensor t(dtype, dims);
  uint8_t* p = static_cast<uint8_t*>(t.raw_data());
  if (bits == 4) {
    quant::PackSubByte(codes.data(), 0, static_cast<int64_t>(codes.size()), 4, p);
  } else {
    for (size_t i = 0; i < codes.size(); ++i) p[i] = static_cast<uint8_t>(codes[i]);  // two's complement for int8
  }
  return t;
}

// 10 log10(sum w^2 / sum (w - w_hat)^2) over the [K, N] weight.
double Sqnr(const std::vector<float>& w, const quant::BlockQuantized& q) {
  double signal = 0.0, noise = 0.0;
  for (int64_t r = 0; r < q.k; ++r) {
    for (int64_t c = 0; c < q.n; ++c) {
      const double x = w[static_cast<size_t>(r * q.n + c)];
      const double d = x - static_cast<double>(q.Dequantized(r, c));
      signal += x * x;
      noise += d * d;
    }
  }
  if (noise == 0.0) return HUGE_VAL;
  return 10.0 * std::log10(signal / noise);
}

// What a quantized weight became: the names its readers use.
struct QuantizedWeight {
  int64_t k = 0, n = 0;
  size_t report_index = 0;
  std::string dequantized;                // kOnnx: the DequantizeLinear output
  std::string b, scales, zero_points;     // kMsft: the MatMulNBits inputs ("" zero points: none)
};

class WeightQuantizer {
 public:
  WeightQuantizer(graph::Model* model, const WeightOptions& o, WeightReport* r)
      : g_(model->graph), o_(o), r_(r), taken_(AllNames(model->graph)) {}

  void Run() {
    std::vector<graph::Node> nodes;
    for (graph::Node& node : g_.nodes) {
      const bool is_matmul = node.op_type == "MatMul" && IsDefaultDomain(node.domain);
      const bool is_gemm = node.op_type == "Gemm" && IsDefaultDomain(node.domain);
      if ((!is_matmul && !is_gemm) || node.inputs.size() < 2 || node.outputs.size() != 1) {
        nodes.push_back(std::move(node));
        continue;
      }
      const std::string why = is_gemm ? QuantizeGemm(node, &nodes) : QuantizeMatMul(node, &nodes);
      if (!why.empty()) {
        r_->kept_float[why]++;
        nodes.push_back(std::move(node));
      } else {
        r_->nodes_quantized++;
      }
    }
    g_.nodes = std::move(nodes);
    DropUnusedInitializers(&g_, replaced_);
  }

 private:
  // Why `w_name` cannot be quantized as a [K, N] weight, or "".
  std::string CheckWeight(const std::string& w_name, bool trans_b) const {
    const Tensor* w = g_.FindInitializer(w_name);
    if (!w || (w->dtype() != DType::kFloat32 && w->dtype() != DType::kFloat16) || w->rank() != 2) {
      return "B is not a constant float32/float16 rank-2 weight";
    }
    const int64_t k = trans_b ? w->dim(1) : w->dim(0);
    if (k < o_.block) return "K < block";
    return "";
  }

  std::string QuantizeMatMul(const graph::Node& node, std::vector<graph::Node>* nodes) {
    const std::string why = CheckWeight(node.inputs[1], false);
    if (!why.empty()) return why;
    const QuantizedWeight* w = Weight(node.inputs[1], false, 1.0f, nodes);
    if (!w) return "non-finite weight values";
    Emit(node.inputs[0], *w, "", node.outputs[0], node.name, nodes);
    return "";
  }

  std::string QuantizeGemm(const graph::Node& node, std::vector<graph::Node>* nodes) {
    if (IntAttrOr(node, "transA", 0) != 0) return "Gemm with transA";
    const bool trans_b = IntAttrOr(node, "transB", 0) != 0;
    const float alpha = FloatAttrOr(node, "alpha", 1.0f);
    const float beta = FloatAttrOr(node, "beta", 1.0f);
    std::string why = CheckWeight(node.inputs[1], trans_b);
    if (!why.empty()) return why;
    const DType wtype = g_.FindInitializer(node.inputs[1])->dtype();
    std::string c = node.inputs.size() > 2 ? node.inputs[2] : "";
    const Tensor* c_init = c.empty() ? nullptr : g_.FindInitializer(c);
    if (!c.empty() && beta != 1.0f && (!c_init || c_init->dtype() != wtype)) {
      return "Gemm with beta != 1 and a computed C";
    }
    if (beta == 0.0f) c.clear();
    const QuantizedWeight* w = Weight(node.inputs[1], trans_b, alpha, nodes);
    if (!w) return "non-finite weight values";
    if (!c.empty() && beta != 1.0f) {
      c_init = g_.FindInitializer(c);  // again: Weight() added initializers
      std::vector<float> v = FloatValues(*c_init);
      for (float& e : v) e *= beta;
      const Dims dims = c_init->dims();
      const std::string scaled = UniqueName(c + "_beta", &taken_);
      g_.initializers.emplace_back(scaled, FloatTensorOf(wtype, dims, v));
      c = scaled;
    }
    Emit(node.inputs[0], *w, c, node.outputs[0], node.name, nodes);
    return "";
  }

  // Y = A * W (+ C): MatMul after the weight's DequantizeLinear, or MatMulNBits (C as its bias
  // when it is a constant of N elements), and an Add for any other C.
  void Emit(const std::string& a, const QuantizedWeight& w, const std::string& c,
            const std::string& y, const std::string& name, std::vector<graph::Node>* nodes) {
    const std::string base = name.empty() ? y : name;
    std::string bias;
    if (o_.format == WeightOptions::kMsft && !c.empty()) {
      const Tensor* ct = g_.FindInitializer(c);
      if (ct && ct->num_elements() == w.n && (ct->rank() == 1 || (ct->rank() == 2 && ct->dim(0) == 1))) {
        bias = UniqueName(c + "_bias", &taken_);
        g_.initializers.emplace_back(bias, ct->Reshaped({w.n}));
        replaced_.insert(c);
      }
    }
    const bool add_c = !c.empty() && bias.empty();
    const std::string product = add_c ? UniqueName(y + "_matmul", &taken_) : y;
    if (o_.format == WeightOptions::kOnnx) {
      nodes->push_back(MakeNode("MatMul", UniqueName(base + "_quant", &taken_), {a, w.dequantized},
                                {product}));
    } else {
      std::vector<std::string> inputs = {a, w.b, w.scales, w.zero_points};
      if (!bias.empty()) {
        inputs.push_back("");  // g_idx
        inputs.push_back(bias);
      } else if (w.zero_points.empty()) {
        inputs.pop_back();
      }
      std::vector<graph::Attribute> attrs = {IntAttr("K", w.k), IntAttr("N", w.n),
                                             IntAttr("bits", o_.bits),
                                             IntAttr("block_size", o_.block)};
      if (o_.accuracy_level != 0) attrs.push_back(IntAttr("accuracy_level", o_.accuracy_level));
      graph::Node mm = MakeNode("MatMulNBits", UniqueName(base + "_quant", &taken_), inputs,
                                {product}, std::move(attrs));
      mm.domain = kMsDomain;
      nodes->push_back(std::move(mm));
    }
    if (add_c) {
      nodes->push_back(MakeNode("Add", UniqueName(base + "_bias_add", &taken_), {product, c}, {y}));
    }
  }

  // The quantized form of initializer `w_name` (transposed when trans_b, times alpha), made on
  // first use; nullptr when it holds a NaN or infinity or its scales do not fit its float type.
  const QuantizedWeight* Weight(const std::string& w_name, bool trans_b, float alpha,
                                std::vector<graph::Node>* nodes) {
    const std::string key = w_name + (trans_b ? "#T" : "") + "#" + std::to_string(alpha);
    auto it = weights_.find(key);
    if (it != weights_.end()) {
      r_->weights[it->second.report_index].nodes++;
      return &it->second;
    }
    const Tensor& w = *g_.FindInitializer(w_name);
    const DType wtype = w.dtype();
    const int64_t k = trans_b ? w.dim(1) : w.dim(0), n = trans_b ? w.dim(0) : w.dim(1);
    std::vector<float> kn = FloatValues(w);
    if (trans_b) kn = FloatValues(Transpose2D(Tensor::FromVector<float>(DType::kFloat32, w.dims(), kn)));
    for (float& v : kn) {
      v *= alpha;
      if (!std::isfinite(v)) return nullptr;
    }
    const int64_t float_bytes = static_cast<int64_t>(w.byte_size());
    const quant::BlockQuantized q =
        quant::QuantizeBlocked(kn.data(), k, n, o_.block, o_.bits, o_.symmetric,
                               wtype == DType::kFloat16 ? RoundUpToHalf : nullptr);
    for (float s : q.scales) {
      if (!std::isfinite(s)) return nullptr;
    }
    QuantizedWeight qw;
    qw.k = k;
    qw.n = n;
    const int64_t blocks = q.blocks();
    int64_t bytes = 0;
    auto add = [&](const std::string& suffix, Tensor t) {
      const std::string name = UniqueName(w_name + suffix, &taken_);
      bytes += static_cast<int64_t>(t.byte_size());
      g_.initializers.emplace_back(name, std::move(t));
      return name;
    };
    if (o_.format == WeightOptions::kOnnx) {
      const DType code_type = o_.symmetric ? (o_.bits == 4 ? DType::kInt4 : DType::kInt8)
                                           : (o_.bits == 4 ? DType::kUInt4 : DType::kUInt8);
      std::vector<std::string> inputs = {add("_quantized", CodeTensor(code_type, o_.bits, {k, n}, q.codes)),
                                         add("_scale", FloatTensorOf(wtype, {blocks, n}, q.scales))};
      if (!o_.symmetric) {
        inputs.push_back(add("_zero_point", CodeTensor(code_type, o_.bits, {blocks, n}, q.zero_points)));
      }
      qw.dequantized = UniqueName(w_name + "_dequantized", &taken_);
      nodes->push_back(MakeNode("DequantizeLinear", UniqueName(w_name + "_DequantizeLinear", &taken_),
                                inputs, {qw.dequantized},
                                {IntAttr("axis", 0), IntAttr("block_size", o_.block)}));
    } else {
      const std::vector<uint8_t> b = quant::PackNBitsWeights(q);
      qw.b = add("_nbits", Tensor::FromVector<uint8_t>(DType::kUInt8, {n, blocks, o_.block * o_.bits / 8}, b));
      qw.scales = add("_scales", FloatTensorOf(wtype, {n * blocks}, quant::NBitsScales(q)));
      if (!o_.symmetric) {
        const std::vector<uint8_t> zp = quant::PackNBitsZeroPoints(q);
        qw.zero_points = add("_zero_points", Tensor::FromVector<uint8_t>(
                                                 DType::kUInt8, {static_cast<int64_t>(zp.size())}, zp));
      }
    }
    QuantizedWeightReport wr;
    wr.name = w_name;
    wr.k = k;
    wr.n = n;
    wr.nodes = 1;
    wr.sqnr_db = Sqnr(kn, q);
    qw.report_index = r_->weights.size();
    r_->weights.push_back(wr);
    r_->float_weight_bytes += float_bytes;
    r_->quantized_weight_bytes += bytes;
    replaced_.insert(w_name);
    return &weights_.emplace(key, std::move(qw)).first->second;
  }

  graph::Graph& g_;
  const WeightOptions& o_;
  WeightReport* r_;
  std::set<std::string> taken_;
  std::map<std::string, QuantizedWeight> weights_;  // by weight name, transB and alpha
  std::set<std::string> replaced_;
};

void CheckOptions(const WeightOptions& o) {
  if (o.bits != 4 && o.bits != 8) {
    throw Error(ErrorCode::kInvalidArgument,
                "weight quantization: bits must be 4 or 8, not " + std::to_string(o.bits));
  }
  if (o.block < 2) {
    throw Error(ErrorCode::kInvalidArgument,
                "weight quantization: block must be >= 2, not " + std::to_string(o.block));
  }
  if (o.format == WeightOptions::kMsft && (o.block < 16 || (o.block & (o.block - 1)) != 0)) {
    throw Error(ErrorCode::kInvalidArgument,
                "weight quantization: MatMulNBits needs a block that is a power of two >= 16, not " +
                    std::to_string(o.block));
  }
  if (o.accuracy_level < 0 || o.accuracy_level > 4) {
    throw Error(ErrorCode::kInvalidArgument,
                "weight quantization: accuracy_level must be 0 to 4, not " +
                    std::to_string(o.accuracy_level));
  }
  if (o.accuracy_level != 0 && o.format != WeightOptions::kMsft) {
    throw Error(ErrorCode::kInvalidArgument,
                "weight quantization: accuracy_level is a MatMulNBits attribute (format msft)");
  }
}

}  // namespace

graph::Model QuantizeWeights(const graph::Model& model, const WeightOptions& options,
                             WeightReport* report) {
  CheckOptions(options);
  WeightReport r;
  // Blocked DequantizeLinear and int4 / uint4 need opset 21; MatMulNBits lives in its own domain.
  const int64_t target = options.format == WeightOptions::kOnnx ? 21 : 0;
  graph::Model out = PrepareForQuantization(model, target, target, &r.prepare);
  WeightQuantizer(&out, options, &r).Run();
  if (r.nodes_quantized == 0) {
    std::string why;
    for (const auto& [reason, count] : r.kept_float) {
      why += (why.empty() ? "" : ", ") + std::to_string(count) + " " + reason;
    }
    throw Error(ErrorCode::kUnsupported,
                "weight quantization: no MatMul/Gemm weight to quantize" +
                    (why.empty() ? std::string(" (the model has none)") : " (" + why + ")"));
  }
  // int4 / uint4 tensors need IR version 10 (the one that goes with opset 21).
  if (options.format == WeightOptions::kOnnx) out.ir_version = std::max<int64_t>(out.ir_version, 10);
  if (options.format == WeightOptions::kMsft && out.OpsetVersion(kMsDomain) == 0) {
    graph::OpsetImport ms;
    ms.domain = kMsDomain;
    ms.version = 1;
    out.opsets.push_back(ms);
  }
  if (report) *report = std::move(r);
  return out;
}

}  // namespace simplecpp::convert
