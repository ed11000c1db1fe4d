// A small float model with every kind of weight the weight quantizer meets (tests of
// simplecpp/convert/quantize_weights.cc here and against onnxruntime in tests/models/):
//   h1 = MatMul(x [3,45], w1 [45,40])               K = 45: odd, two full blocks of 16 and 13
//   h2 = Tanh(h1)
//   h3 = MatMul(h2, wc [40,40])                     wc in a Constant node ...
//   h4 = MatMul(h3, wc)                             ... and shared by two MatMuls
//   g  = Gemm(h4, wg [24,40], c [24], transB=1, alpha=0.5, beta=2)
//   y  = MatMul(g, wo [24,6])
//   y2 = MatMul(z [3,8], wz [8,5])                  K = 8 < block: stays float
//   y3 = MatMul(x, transpose(x))                    B not constant: stays float
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/api/builtin_builder.h"
#include "tests/simplecpp/convert/convert_graph_models.h"

namespace simplecpp::convert_test {

inline graph::Model WeightTestModel(int64_t opset = 17) {
  using builtin::detail::AttrFloat;
  using builtin::detail::AttrInts;
  using builtin::detail::Builder;
  using builtin::detail::NewModel;
  using builtin::detail::TensorValue;
  graph::Model m = NewModel("weights", "weight quantizer test model", opset);
  graph::Graph& g = m.graph;
  Builder b(&g, 21);
  g.inputs.push_back(TensorValue("x", {3, 45}));
  g.inputs.push_back(TensorValue("z", {3, 8}));
  const std::string h1 = b.Op("MatMul", "h1", {"x", b.Weight("w1", {45, 40}, 0.3f)});
  const std::string h2 = b.Op("Tanh", "h2", {h1});
  graph::Graph scratch;
  Builder scratch_b(&scratch, 7);
  scratch_b.Weight("wc_value", {40, 40}, 0.25f);
  const std::string wc = ConstantNode(&b, "wc", scratch.initializers[0].second);
  const std::string h3 = b.Op("MatMul", "h3", {h2, wc});
  const std::string h4 = b.Op("MatMul", "h4", {h3, wc});
  const std::string gemm =
      b.Op("Gemm", "gemm", {h4, b.Weight("wg", {24, 40}, 0.2f), b.Weight("c", {24}, 0.5f)},
           {builtin::detail::AttrInt("transB", 1), AttrFloat("alpha", 0.5f),
            AttrFloat("beta", 2.0f)});
  b.Op("MatMul", "y", {gemm, b.Weight("wo", {24, 6}, 0.4f)});
  b.Op("MatMul", "y2", {"z", b.Weight("wz", {8, 5}, 0.5f)});
  const std::string xt = b.Op("Transpose", "xt", {"x"}, {AttrInts("perm", {1, 0})});
  b.Op("MatMul", "y3", {"x", xt});
  g.outputs.push_back(TensorValue("y", {3, 6}));
  g.outputs.push_back(TensorValue("y2", {3, 5}));
  g.outputs.push_back(TensorValue("y3", {3, 3}));
  return m;
}

}  // namespace simplecpp::convert_test
