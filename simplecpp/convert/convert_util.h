// Helpers shared by the model converters (quantize_dynamic.cc, quantize_qdq.cc,
// float16_convert.cc): node and attribute construction, initializer lookup and the weight
// quantization arithmetic. Internal to simplecpp/convert.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/float16_bits.h"
#include "graph/ir.h"
#include "simplecpp/error.h"
#include "simplecpp/tensor.h"

namespace simplecpp::convert::detail {

inline graph::Attribute IntAttr(const std::string& name, int64_t v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kInt;
  a.i = v;
  return a;
}

inline graph::Node MakeNode(const std::string& op_type, const std::string& name,
                            std::vector<std::string> inputs, std::vector<std::string> outputs,
                            std::vector<graph::Attribute> attributes = {}) {
  graph::Node n;
  n.op_type = op_type;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attributes = std::move(attributes);
  return n;
}

inline bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

// Integer attribute value or fallback.
inline int64_t IntAttrOr(const graph::Node& n, const std::string& name, int64_t fallback) {
  const graph::Attribute* a = n.FindAttribute(name);
  return a && a->kind == graph::AttrKind::kInt ? a->i : fallback;
}
inline float FloatAttrOr(const graph::Node& n, const std::string& name, float fallback) {
  const graph::Attribute* a = n.FindAttribute(name);
  return a && a->kind == graph::AttrKind::kFloat ? a->f : fallback;
}

// Index of the initializer named `name` in g.initializers, or -1.
inline int FindInitializerIndex(const graph::Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.initializers.size(); ++i) {
    if (g.initializers[i].first == name) return static_cast<int>(i);
  }
  return -1;
}

// How many node inputs (and graph outputs) read each value.
inline std::map<std::string, int> CountUses(const graph::Graph& g) {
  std::map<std::string, int> uses;
  for (const graph::Node& n : g.nodes) {
    for (const std::string& in : n.inputs) {
      if (!in.empty()) uses[in]++;
    }
  }
  for (const graph::ValueInfo& v : g.outputs) uses[v.name]++;
  return uses;
}

// Drops initializers no node input or graph output reads any more (only those named in
// `candidates`, so that unrelated unused initializers survive untouched).
inline void DropUnusedInitializers(graph::Graph* g, const std::set<std::string>& candidates) {
  const std::map<std::string, int> uses = CountUses(*g);
  std::vector<std::pair<std::string, Tensor>> kept;
  for (auto& init : g->initializers) {
    if (candidates.count(init.first) && !uses.count(init.first)) continue;
    kept.push_back(std::move(init));
  }
  g->initializers = std::move(kept);
  std::vector<graph::ValueInfo> inputs;
  for (auto& v : g->inputs) {
    if (candidates.count(v.name) && !uses.count(v.name) && FindInitializerIndex(*g, v.name) < 0) {
      continue;  // an initializer that was also listed as a graph input (IR < 4 style)
    }
    inputs.push_back(std::move(v));
  }
  g->inputs = std::move(inputs);
}

// The groups of a per-axis layout: `channels` indices along `axis`, each repeated over `inner`
// consecutive elements; axis -1 is one group of every element (channels 1, inner unchanged).
inline void AxisGroups(const Dims& dims, int axis, int64_t* channels, int64_t* inner) {
  if (axis < 0) return;
  *channels = dims[static_cast<size_t>(axis)];
  *inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) *inner *= dims[d];
}

// Symmetric int8 scales of a float32 weight: max|w| / 127 over each group (or 1 for an all-zero
// group). `axis` -1: one scale for the whole tensor; else one per index along `axis`.
inline std::vector<float> SymmetricScales(const Tensor& w, int axis) {
  const Dims& dims = w.dims();
  const float* p = w.data<float>();
  const int64_t n = w.num_elements();
  int64_t channels = 1, inner = n;
  AxisGroups(dims, axis, &channels, &inner);
  std::vector<float> scales(static_cast<size_t>(channels), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = axis >= 0 ? (i / inner) % channels : 0;
    scales[static_cast<size_t>(c)] = std::max(scales[static_cast<size_t>(c)], std::fabs(p[i]));
  }
  for (float& s : scales) s = s > 0 ? s / 127.0f : 1.0f;
  return scales;
}

// q = round_half_even(w / scale) clamped to [-127, 127], with the scales laid out as
// SymmetricScales returns them.
inline Tensor QuantizeWithScales(const Tensor& w, int axis, const std::vector<float>& scales) {
  const Dims& dims = w.dims();
  const float* p = w.data<float>();
  const int64_t n = w.num_elements();
  int64_t channels = 1, inner = n;
  AxisGroups(dims, axis, &channels, &inner);
  Tensor q(DType::kInt8, dims);
  int8_t* out = q.data<int8_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = axis >= 0 ? (i / inner) % channels : 0;
    const float v = std::nearbyint(p[i] / scales[static_cast<size_t>(c)]);
    out[i] = static_cast<int8_t>(std::min(127.0f, std::max(-127.0f, v)));
  }
  return q;
}

// Symmetric int8 quantization of a float32 weight (SymmetricScales, then QuantizeWithScales).
// Returns the int8 tensor and the scales.
inline std::pair<Tensor, std::vector<float>> QuantizeWeightSymmetric(const Tensor& w, int axis) {
  std::vector<float> scales = SymmetricScales(w, axis);
  return {QuantizeWithScales(w, axis, scales), std::move(scales)};
}

inline Tensor FloatVector(const std::vector<float>& v, bool scalar) {
  if (scalar) return Tensor::FromVector<float>(DType::kFloat32, {}, {v.at(0)});
  return Tensor::FromVector<float>(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
}

// A float32 or float16 tensor's values as float32 (a copy: initializers may be borrowed
// read-only; float16 widens exactly).
inline std::vector<float> FloatValues(const Tensor& t) {
  if (t.dtype() == DType::kFloat16) {
    const uint16_t* h = t.data<uint16_t>();
    std::vector<float> v(static_cast<size_t>(t.num_elements()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = HalfBitsToFloat(h[i]);
    return v;
  }
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.num_elements());
}

// Transposes a row-major [rows, cols] float32 matrix.
inline Tensor Transpose2D(const Tensor& t) {
  const int64_t rows = t.dim(0), cols = t.dim(1);
  Tensor out(DType::kFloat32, {cols, rows});
  const float* in = t.data<float>();
  float* o = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) o[c * rows + r] = in[r * cols + c];
  }
  return out;
}

// A name not yet used by any value, node output or initializer of `taken` (adds it there).
inline std::string UniqueName(const std::string& base, std::set<std::string>* taken) {
  std::string name = base;
  for (int k = 1; taken->count(name); ++k) name = base + "_" + std::to_string(k);
  taken->insert(name);
  return name;
}

inline std::set<std::string> AllNames(const graph::Graph& g) {
  std::set<std::string> names;
  for (const auto& v : g.inputs) names.insert(v.name);
  for (const auto& v : g.outputs) names.insert(v.name);
  for (const auto& v : g.value_info) names.insert(v.name);
  for (const auto& i : g.initializers) names.insert(i.first);
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs) names.insert(o);
    for (const auto& i : n.inputs) names.insert(i);
  }
  return names;
}

}  // namespace simplecpp::convert::detail
