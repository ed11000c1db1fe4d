// Small models with the shapes of real paddle2onnx exports, built in code for the converter tests
// (tests/simplecpp/convert/*_test.cc): weights in Constant nodes, opset-9 op forms, Resize scales
// from Constants.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "simplecpp/api/builtin_builder.h"

namespace simplecpp::convert_test {

inline graph::Attribute TensorAttr(const std::string& name, Tensor t) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kTensor;
  a.t = std::move(t);
  return a;
}

// A Constant node holding `t` (the way paddle2onnx stores every weight); returns its output.
inline std::string ConstantNode(builtin::detail::Builder* b, const std::string& name, Tensor t) {
  return b->Op("Constant", name, {}, {TensorAttr("value", std::move(t))});
}

inline graph::Attribute FloatsAttr(const std::string& name, std::vector<float> v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kFloats;
  a.floats = std::move(v);
  return a;
}

}  // namespace simplecpp::convert_test
