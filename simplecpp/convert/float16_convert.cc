// float32 -> float16 model conversion (quantize.h): initializers, declared value types, Constant
// values and Cast targets become float16; nodes that must compute on float32 inputs get Casts, and
// inputs ONNX types as float32 only (Resize scales, ...) stay float32.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/float16/float16.h"
#include "simplecpp/convert/constant_initializers.h"
#include "simplecpp/convert/convert_util.h"
#include "simplecpp/convert/quantize.h"

namespace simplecpp::convert {

using namespace detail;  // NOLINT: converter helpers

namespace {

constexpr float kHalfMax = 65504.0f;

Tensor ToHalf(const Tensor& t) {
  Tensor h(DType::kFloat16, t.dims());
  const float* in = t.data<float>();
  uint16_t* out = static_cast<uint16_t*>(h.raw_data());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const float v = std::isnan(in[i]) ? in[i] : std::min(kHalfMax, std::max(-kHalfMax, in[i]));
    out[i] = kernels::FloatToHalfBits(v);
  }
  return h;
}

void ConvertType(graph::TypeInfo* t) {
  if (t->dtype == DType::kFloat32 &&
      (t->kind == graph::TypeInfo::Kind::kTensor || t->kind == graph::TypeInfo::Kind::kUnknown ||
       t->kind == graph::TypeInfo::Kind::kSparseTensor)) {
    t->dtype = DType::kFloat16;
  }
  if (t->elem) {
    auto e = std::make_shared<graph::TypeInfo>(*t->elem);
    ConvertType(e.get());
    t->elem = e;
  }
}

// Nodes computed entirely in float32 (every float input cast up, every float output cast back
// down): the quantization ops, whose scales are float32 before opset 19.
bool KeepsFloat32(const graph::Node& n) {
  static const std::set<std::string> kOps = {"QuantizeLinear", "DequantizeLinear",
                                             "DynamicQuantizeLinear"};
  return IsDefaultDomain(n.domain) && kOps.count(n.op_type) > 0;
}

// A node whose every input and output has the data type T (so all may be cast to float32 and
// back) and that reads a float32 initializer with a finite value float16 cannot hold.
bool NeedsFloat32Range(const graph::Node& n, const graph::Graph& g) {
  static const std::set<std::string> kAllT = {
      "BatchNormalization", "InstanceNormalization", "Conv", "ConvTranspose", "Gemm",
      "MatMul", "Add", "Sub", "Mul", "Div", "PRelu", "Sum", "Max", "Min", "Mean"};
  if (!IsDefaultDomain(n.domain) || !kAllT.count(n.op_type)) return false;
  for (const std::string& in : n.inputs) {
    const Tensor* t = in.empty() ? nullptr : g.FindInitializer(in);
    if (!t || t->dtype() != DType::kFloat32) continue;
    const float* p = t->data<float>();
    for (int64_t i = 0; i < t->num_elements(); ++i) {
      if (std::isfinite(p[i]) && std::fabs(p[i]) > kHalfMax) return true;
    }
  }
  return false;
}

// Inputs that the ONNX spec types as tensor(float) whatever the data type (left float32), at the
// model's ai.onnx opset. Resize's roi (T2) would accept float16, but it is a coordinate like the
// scales and T2 is free of T1, so it keeps float32's precision too. Inputs typed T (Clip min/max,
// Pad constant_value, BatchNormalization's parameters, Pow's exponent before 12) follow the data.
bool FloatOnlyInput(const graph::Node& n, size_t index, int64_t opset) {
  if (!IsDefaultDomain(n.domain)) return false;
  if (n.op_type == "Resize")
    return opset < 11 ? index == 1 : index == 1 || index == 2;  // roi, scales
  if (n.op_type == "Upsample") return index == 1;               // scales
  if (n.op_type == "NonMaxSuppression") return index == 0 || index == 1 || index == 3 || index == 4;
  return false;
}

void ConvertGraph(graph::Graph* g, std::set<std::string>* taken, int64_t opset);

void ConvertAttributes(graph::Node* n, std::set<std::string>* taken, bool keep_cast_float32,
                       int64_t opset) {
  for (graph::Attribute& a : n->attributes) {
    if (a.kind == graph::AttrKind::kTensor && a.t.dtype() == DType::kFloat32 &&
        (n->op_type == "Constant" || n->op_type == "ConstantOfShape")) {
      a.t = ToHalf(a.t);
    }
    if ((n->op_type == "Constant") && (a.name == "value_float" || a.name == "value_floats")) {
      // Turn scalar/list float attributes into a float16 tensor value.
      std::vector<float> v = a.name == "value_float" ? std::vector<float>{a.f} : a.floats;
      Tensor t = a.name == "value_float"
                     ? Tensor::FromVector<float>(DType::kFloat32, {}, v)
                     : Tensor::FromVector<float>(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
      a = graph::Attribute();
      a.name = "value";
      a.kind = graph::AttrKind::kTensor;
      a.t = ToHalf(t);
    }
    if (n->op_type == "Cast" && a.name == "to" && a.kind == graph::AttrKind::kInt &&
        a.i == static_cast<int64_t>(DType::kFloat32) && !keep_cast_float32) {
      a.i = static_cast<int64_t>(DType::kFloat16);
    }
    if (a.kind == graph::AttrKind::kGraph && a.g) {
      auto sub = std::make_shared<graph::Graph>(*a.g);
      ConvertGraph(sub.get(), taken, opset);
      a.g = sub;
    }
    for (auto& sg : a.graphs) {
      auto sub = std::make_shared<graph::Graph>(*sg);
      ConvertGraph(sub.get(), taken, opset);
      sg = sub;
    }
  }
}

// One graph's conversion; Run calls the phases in order.
class GraphToFloat16 {
 public:
  GraphToFloat16(graph::Graph* g, std::set<std::string>* taken, int64_t opset)
      : g_(*g), taken_(*taken), opset_(opset) {}

  void Run() {
    MarkFloat32Islands();
    ConvertInitializersAndTypes();
    FindFloat32Values();
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      graph::Node& n = g_.nodes[k];
      const bool wide_consumer = IsWideConsumer(n);
      ConvertAttributes(&n, &taken_, IsWideCast(n) || IsFloatOnlyCast(n), opset_);
      if (island_[k] || wide_consumer) {
        EmitFloat32Island(std::move(n), wide_consumer);
      } else {
        EmitFloat16Node(std::move(n));
      }
    }
    g_.nodes = std::move(nodes_);
  }

 private:
  // Nodes whose float32 constants float16 cannot hold (|v| > 65504, e.g. BatchNormalization
  // variances of 1e8 in PP-OCRv4's detector head: clamped, they wreck the output) run in float32.
  void MarkFloat32Islands() {
    island_.assign(g_.nodes.size(), false);
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      island_[k] = KeepsFloat32(g_.nodes[k]) || NeedsFloat32Range(g_.nodes[k], g_);
    }
  }

  // Initializers read through float-only inputs or by float32 nodes stay float32 (a copy when
  // float16 readers want them too); all others become float16, with the value types.
  void ConvertInitializersAndTypes() {
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      const graph::Node& n = g_.nodes[k];
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (FloatOnlyInput(n, i, opset_) || island_[k]) {
          keep_f32_.insert(n.inputs[i]);
        } else {
          used_as_f16_.insert(n.inputs[i]);
        }
      }
    }
    for (const graph::ValueInfo& v : g_.outputs) used_as_f16_.insert(v.name);
    std::vector<std::pair<std::string, Tensor>> extra;
    for (auto& [name, t] : g_.initializers) {
      if (t.dtype() != DType::kFloat32) continue;
      if (keep_f32_.count(name) && used_as_f16_.count(name)) {
        const std::string copy = UniqueName(name + "_fp32", &taken_);
        extra.emplace_back(copy, t);
        f32_copy_[name] = copy;
        t = ToHalf(t);
      } else if (!keep_f32_.count(name)) {
        t = ToHalf(t);
      }
    }
    for (auto& e : extra) g_.initializers.push_back(std::move(e));
    for (auto& v : g_.inputs) {
      if (!g_.FindInitializer(v.name) || g_.FindInitializer(v.name)->dtype() == DType::kFloat16) {
        ConvertType(&v.type);
      }
    }
    for (auto& v : g_.outputs) ConvertType(&v.type);
    for (auto& v : g_.value_info) ConvertType(&v.type);
  }

  // Integer accumulators (MatMulInteger / ConvInteger int32 results) overflow float16 (|acc|
  // reaches 127 * 127 * K): their Cast(to FLOAT) stays float32, and the element-wise node that
  // rescales them (ORT's Mul by x_scale * w_scale) runs in float32 with its result cast down.
  // A Cast(to FLOAT) read only through float-only inputs (scales computed from shapes) keeps its
  // target: a round trip through float16 could change the scale and so the output size.
  void FindFloat32Values() {
    for (const graph::Node& n : g_.nodes) {
      for (const std::string& o : n.outputs) producer_op_[o] = n.op_type;
    }
    for (const graph::Node& n : g_.nodes) {
      if (IsWideCast(n)) wide_values_.insert(n.outputs[0]);
      if (IsFloatOnlyCast(n)) float32_values_.insert(n.outputs[0]);
    }
  }

  bool IsWideCast(const graph::Node& n) const {
    if (n.op_type != "Cast" || !IsDefaultDomain(n.domain) || n.inputs.empty()) return false;
    if (IntAttrOr(n, "to", 0) != static_cast<int64_t>(DType::kFloat32)) return false;
    auto it = producer_op_.find(n.inputs[0]);
    return it != producer_op_.end() && (it->second == "MatMulInteger" || it->second == "ConvInteger");
  }
  bool IsFloatOnlyCast(const graph::Node& n) const {
    return n.op_type == "Cast" && IsDefaultDomain(n.domain) && n.outputs.size() == 1 &&
           IntAttrOr(n, "to", 0) == static_cast<int64_t>(DType::kFloat32) &&
           keep_f32_.count(n.outputs[0]) && !used_as_f16_.count(n.outputs[0]);
  }
  bool IsWideConsumer(const graph::Node& n) const {
    static const std::set<std::string> kElementwise = {"Mul", "Add", "Sub", "Div"};
    if (!IsDefaultDomain(n.domain) || !kElementwise.count(n.op_type)) return false;
    for (const std::string& in : n.inputs) {
      if (wide_values_.count(in)) return true;
    }
    return false;
  }

  // Emits Cast(name -> float32) and returns the float32 value's name.
  std::string CastUp(const std::string& name) {
    const std::string up = UniqueName(name + "_fp32", &taken_);
    nodes_.push_back(MakeNode("Cast", UniqueName(up + "_cast", &taken_), {name}, {up},
                              {IntAttr("to", static_cast<int64_t>(DType::kFloat32))}));
    return up;
  }

  // A float16 node: its float-only inputs (ONNX wants float32 there) read float32 values.
  void EmitFloat16Node(graph::Node n) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!FloatOnlyInput(n, i, opset_) || n.inputs[i].empty()) continue;
      if (f32_copy_.count(n.inputs[i])) {
        n.inputs[i] = f32_copy_[n.inputs[i]];
        continue;
      }
      const Tensor* init = g_.FindInitializer(n.inputs[i]);
      if ((init && init->dtype() != DType::kFloat16) || float32_values_.count(n.inputs[i])) continue;
      // A float16 value (graph input, computed) read where ONNX wants float32: cast it up.
      n.inputs[i] = CastUp(n.inputs[i]);
    }
    nodes_.push_back(std::move(n));
  }

  // Float32 island: cast float16 inputs up (initializers stayed float32), outputs back down.
  // Which inputs/outputs are float: QuantizeLinear x (0) and scale (1); DequantizeLinear
  // scale (1) and output; DynamicQuantizeLinear x (0) and output 1 (scale); a rescaling
  // element-wise node of an integer accumulator: its other inputs and its output; a node with
  // out-of-range constants: every input and output (its op types all of them as T).
  void EmitFloat32Island(graph::Node n, bool wide_consumer) {
    std::vector<size_t> float_inputs, float_outputs;
    if (n.op_type == "QuantizeLinear") float_inputs = {0, 1};
    if (n.op_type == "DequantizeLinear") float_inputs = {1}, float_outputs = {0};
    if (n.op_type == "DynamicQuantizeLinear") float_inputs = {0}, float_outputs = {1};
    if (!KeepsFloat32(n) && !wide_consumer) {  // out-of-range constants
      for (size_t i = 0; i < n.inputs.size(); ++i) float_inputs.push_back(i);
      for (size_t o = 0; o < n.outputs.size(); ++o) float_outputs.push_back(o);
    }
    if (wide_consumer) {
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (!wide_values_.count(n.inputs[i])) float_inputs.push_back(i);
      }
      float_outputs = {0};
    }
    for (size_t i : float_inputs) {
      if (i >= n.inputs.size() || n.inputs[i].empty()) continue;
      const Tensor* init = g_.FindInitializer(n.inputs[i]);
      if ((init && init->dtype() == DType::kFloat32) || float32_values_.count(n.inputs[i])) continue;
      if (f32_copy_.count(n.inputs[i])) {
        n.inputs[i] = f32_copy_[n.inputs[i]];
        continue;
      }
      n.inputs[i] = CastUp(n.inputs[i]);
    }
    std::vector<graph::Node> after;
    for (size_t o : float_outputs) {
      if (o >= n.outputs.size() || n.outputs[o].empty()) continue;
      const std::string wide = UniqueName(n.outputs[o] + "_fp32", &taken_);
      after.push_back(MakeNode("Cast", UniqueName(n.outputs[o] + "_cast", &taken_), {wide},
                               {n.outputs[o]}, {IntAttr("to", static_cast<int64_t>(DType::kFloat16))}));
      n.outputs[o] = wide;
    }
    nodes_.push_back(std::move(n));
    for (auto& a : after) nodes_.push_back(std::move(a));
  }

  graph::Graph& g_;
  std::set<std::string>& taken_;
  const int64_t opset_;
  std::vector<bool> island_;
  std::set<std::string> keep_f32_, used_as_f16_;
  std::map<std::string, std::string> f32_copy_;  // initializer used both ways -> its float32 copy
  std::map<std::string, std::string> producer_op_;
  std::set<std::string> wide_values_;     // outputs of the Casts kept at float32
  std::set<std::string> float32_values_;  // computed values that stay float32
  std::vector<graph::Node> nodes_;        // the rewritten node list
};

void ConvertGraph(graph::Graph* g, std::set<std::string>* taken, int64_t opset) {
  GraphToFloat16(g, taken, opset).Run();
}

}  // namespace

graph::Model ConvertToFloat16(const graph::Model& model) {
  graph::Model out = model;
  // Constant values become initializers so that one rule (keep float32, copy for float16 readers)
  // covers both places a float-only input's constant can live.
  ConstantsToInitializers(&out.graph, out.ir_version < 4);
  std::set<std::string> taken = AllNames(out.graph);
  ConvertGraph(&out.graph, &taken, out.OpsetVersion(""));
  return out;
}

}  // namespace simplecpp::convert
