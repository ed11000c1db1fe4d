// Shared pieces of the model-converter tests (tests/simplecpp/convert/*_test.cc): run a
// graph::Model through the ONNX writer and the public API, compare outputs, list op types.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/float16/float16.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::convert_test {

// Writes the model as ONNX bytes, loads it with the public API and runs it once (1 thread).
inline std::map<std::string, Tensor> RunModel(const graph::Model& m,
                                              const std::map<std::string, Tensor>& inputs) {
  const std::string bytes = onnx::WriteModel(m);
  const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  SessionOptions so;
  so.threads = 1;
  Session session(model, so);
  return session.Run(inputs);
}

inline float ValueAsFloat(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kFloat16) {
    return kernels::HalfBitsToFloat(static_cast<const uint16_t*>(t.raw_data())[i]);
  }
  return t.data<float>()[i];
}

// max |a - b| over two float32/float16 tensors of equal size (infinity on a size mismatch or
// when either side holds a NaN or an infinity).
inline double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.num_elements() != b.num_elements()) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double e = std::fabs(static_cast<double>(ValueAsFloat(a, i)) - ValueAsFloat(b, i));
    if (!std::isfinite(e)) return INFINITY;
    d = std::max(d, e);
  }
  return d;
}

inline double MaxAbs(const Tensor& a) {
  double m = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) m = std::max(m, std::fabs(static_cast<double>(ValueAsFloat(a, i))));
  return m;
}

inline std::vector<std::string> OpTypes(const graph::Graph& g) {
  std::vector<std::string> ops;
  for (const graph::Node& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

inline int CountOp(const graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const graph::Node& node : g.nodes) n += node.op_type == op;
  return n;
}

}  // namespace simplecpp::convert_test
