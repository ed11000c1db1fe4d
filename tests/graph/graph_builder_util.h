// Helpers for tests that build graph::Graph values in code (the graph passes, the public API's
// limits): tensor value infos and nodes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace simplecpp::graph::test_graph {

// A tensor value of `dtype` with shape `dims`; a negative dim is unknown, with the symbolic
// name "N".
inline ValueInfo In(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(Dim{d, d < 0 ? "N" : ""});
  return v;
}

// A graph output whose type is left to inference.
inline ValueInfo Out(const std::string& name) {
  ValueInfo v;
  v.name = name;
  return v;
}

inline Node NamedNode(const std::string& name, const std::string& op, std::vector<std::string> in,
                      std::vector<std::string> out, std::vector<Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attributes = std::move(attrs);
  return n;
}

// An integer attribute.
inline Attribute IntAttr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::kInt;
  a.i = v;
  return a;
}

// An integer-list attribute.
inline Attribute IntsAttr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.kind = AttrKind::kInts;
  a.ints = std::move(v);
  return a;
}

// A node named "<op>_<first output>".
inline Node N(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
              std::vector<Attribute> attrs = {}) {
  const std::string name = op + "_" + out[0];
  return NamedNode(name, op, std::move(in), std::move(out), std::move(attrs));
}

}  // namespace simplecpp::graph::test_graph
