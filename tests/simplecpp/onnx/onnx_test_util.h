// Test helpers for the ONNX reader/writer tests: deep equality of graph::Model (with a path to
// the first difference), a temporary folder, and small model builders.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <tuple>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/tensor.h"

namespace simplecpp::onnx::testing {

// Returns "" when equal, else a description of the first difference.
inline std::string Diff(const graph::Graph& a, const graph::Graph& b, const std::string& at);

inline std::string Diff(const graph::TypeInfo& a, const graph::TypeInfo& b, const std::string& at) {
  if (a.kind != b.kind) return at + ".kind";
  if (a.dtype != b.dtype) return at + ".dtype";
  if (a.has_shape != b.has_shape) return at + ".has_shape";
  if (a.dims.size() != b.dims.size()) return at + ".dims.size";
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].value != b.dims[i].value || a.dims[i].param != b.dims[i].param) {
      return at + ".dims[" + std::to_string(i) + "]";
    }
  }
  if ((a.elem == nullptr) != (b.elem == nullptr)) return at + ".elem presence";
  if (a.elem) return Diff(*a.elem, *b.elem, at + ".elem");
  return "";
}

inline std::string Diff(const std::vector<graph::ValueInfo>& a, const std::vector<graph::ValueInfo>& b,
                        const std::string& at) {
  if (a.size() != b.size()) return at + ".size";
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string here = at + "[" + std::to_string(i) + "]";
    if (a[i].name != b[i].name) return here + ".name";
    if (a[i].doc != b[i].doc) return here + ".doc";
    std::string d = Diff(a[i].type, b[i].type, here + ".type");
    if (!d.empty()) return d;
  }
  return "";
}

inline std::string Diff(const graph::Attribute& a, const graph::Attribute& b, const std::string& at) {
  if (a.name != b.name) return at + ".name";
  if (a.kind != b.kind) return at + ".kind";
  if (a.ref_attr_name != b.ref_attr_name) return at + ".ref_attr_name";
  if (std::memcmp(&a.f, &b.f, sizeof(float)) != 0) return at + ".f";
  if (a.i != b.i) return at + ".i";
  if (a.s != b.s) return at + ".s";
  if (a.t.defined() != b.t.defined() || (a.t.defined() && !a.t.BitwiseEquals(b.t))) return at + ".t";
  if ((a.g == nullptr) != (b.g == nullptr)) return at + ".g presence";
  if (a.g) {
    std::string d = Diff(*a.g, *b.g, at + ".g");
    if (!d.empty()) return d;
  }
  if (a.floats.size() != b.floats.size() ||
      (!a.floats.empty() && std::memcmp(a.floats.data(), b.floats.data(), a.floats.size() * 4) != 0)) {
    return at + ".floats";
  }
  if (a.ints != b.ints) return at + ".ints";
  if (a.strings != b.strings) return at + ".strings";
  if (a.tensors.size() != b.tensors.size()) return at + ".tensors.size";
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (!a.tensors[i].BitwiseEquals(b.tensors[i])) return at + ".tensors[" + std::to_string(i) + "]";
  }
  if (a.graphs.size() != b.graphs.size()) return at + ".graphs.size";
  for (size_t i = 0; i < a.graphs.size(); ++i) {
    std::string d = Diff(*a.graphs[i], *b.graphs[i], at + ".graphs[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  if (a.types.size() != b.types.size()) return at + ".types.size";
  for (size_t i = 0; i < a.types.size(); ++i) {
    std::string d = Diff(a.types[i], b.types[i], at + ".types[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  return "";
}

inline std::string Diff(const graph::Node& a, const graph::Node& b, const std::string& at) {
  if (a.name != b.name) return at + ".name";
  if (a.op_type != b.op_type) return at + ".op_type";
  if (a.domain != b.domain) return at + ".domain";
  if (a.inputs != b.inputs) return at + ".inputs";
  if (a.outputs != b.outputs) return at + ".outputs";
  if (a.doc != b.doc) return at + ".doc";
  if (a.attributes.size() != b.attributes.size()) return at + ".attributes.size";
  for (size_t i = 0; i < a.attributes.size(); ++i) {
    std::string d = Diff(a.attributes[i], b.attributes[i], at + ".attributes[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  return "";
}

inline std::string Diff(const graph::Graph& a, const graph::Graph& b, const std::string& at) {
  if (a.name != b.name) return at + ".name";
  if (a.doc != b.doc) return at + ".doc";
  if (a.nodes.size() != b.nodes.size()) return at + ".nodes.size";
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    std::string d = Diff(a.nodes[i], b.nodes[i], at + ".nodes[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  for (auto [va, vb, what] : {std::make_tuple(&a.inputs, &b.inputs, ".inputs"),
                              std::make_tuple(&a.outputs, &b.outputs, ".outputs"),
                              std::make_tuple(&a.value_info, &b.value_info, ".value_info")}) {
    std::string d = Diff(*va, *vb, at + what);
    if (!d.empty()) return d;
  }
  if (a.initializers.size() != b.initializers.size()) return at + ".initializers.size";
  for (size_t i = 0; i < a.initializers.size(); ++i) {
    if (a.initializers[i].first != b.initializers[i].first ||
        !a.initializers[i].second.BitwiseEquals(b.initializers[i].second)) {
      return at + ".initializers[" + std::to_string(i) + "]";
    }
  }
  return "";
}

inline std::string Diff(const graph::Model& a, const graph::Model& b) {
  if (a.ir_version != b.ir_version) return "ir_version";
  if (a.producer_name != b.producer_name) return "producer_name";
  if (a.producer_version != b.producer_version) return "producer_version";
  if (a.domain != b.domain) return "domain";
  if (a.model_version != b.model_version) return "model_version";
  if (a.doc != b.doc) return "doc";
  if (a.metadata != b.metadata) return "metadata";
  if (a.opsets.size() != b.opsets.size()) return "opsets.size";
  for (size_t i = 0; i < a.opsets.size(); ++i) {
    if (a.opsets[i].domain != b.opsets[i].domain || a.opsets[i].version != b.opsets[i].version) {
      return "opsets[" + std::to_string(i) + "]";
    }
  }
  if (a.functions.size() != b.functions.size()) return "functions.size";
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const graph::Function& fa = a.functions[i];
    const graph::Function& fb = b.functions[i];
    const std::string at = "functions[" + std::to_string(i) + "]";
    if (fa.name != fb.name || fa.domain != fb.domain || fa.inputs != fb.inputs ||
        fa.outputs != fb.outputs || fa.attribute_names != fb.attribute_names) {
      return at + " header";
    }
    if (fa.opsets.size() != fb.opsets.size()) return at + ".opsets";
    for (size_t k = 0; k < fa.opsets.size(); ++k) {
      if (fa.opsets[k].domain != fb.opsets[k].domain || fa.opsets[k].version != fb.opsets[k].version) {
        return at + ".opsets";
      }
    }
    if (fa.nodes.size() != fb.nodes.size()) return at + ".nodes.size";
    for (size_t k = 0; k < fa.nodes.size(); ++k) {
      std::string d = Diff(fa.nodes[k], fb.nodes[k], at + ".nodes[" + std::to_string(k) + "]");
      if (!d.empty()) return d;
    }
    if (fa.attribute_defaults.size() != fb.attribute_defaults.size()) return at + ".attribute_defaults";
    for (size_t k = 0; k < fa.attribute_defaults.size(); ++k) {
      std::string d = Diff(fa.attribute_defaults[k], fb.attribute_defaults[k],
                           at + ".attribute_defaults[" + std::to_string(k) + "]");
      if (!d.empty()) return d;
    }
  }
  return Diff(a.graph, b.graph, "graph");
}

// A fresh folder under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/simplecpp_onnx_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A tensor of `dtype` and `dims` whose bytes are a deterministic pattern (strings: "s0", "s1"...).
inline Tensor PatternTensor(DType dtype, Dims dims, int seed = 1) {
  Tensor t(dtype, std::move(dims));
  if (dtype == DType::kString) {
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      t.strings()[static_cast<size_t>(i)] = "s" + std::to_string(i * seed);
    }
    return t;
  }
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.byte_size(); ++i) {
    p[i] = static_cast<uint8_t>(i * 37 + seed * 11 + 1);
  }
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < t.byte_size(); ++i) p[i] &= 1;
  }
  // Sub-byte types: the padding bits after the last element stay zero (their canonical form;
  // a densified sparse tensor has them zero too).
  const int bits = DTypeBits(dtype);
  const int64_t used_bits = t.num_elements() * bits;
  if (bits < 8 && used_bits % 8 != 0) {
    p[t.byte_size() - 1] &= static_cast<uint8_t>((1u << (used_bits % 8)) - 1);
  }
  return t;
}

}  // namespace simplecpp::onnx::testing
