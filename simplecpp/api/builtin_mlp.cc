// The built-in "mlp" model (builtin_models.h): a 4-layer perceptron on a batch of 16 feature
// vectors, sized so the MatMuls (28 M multiply-adds per run) dominate, written as MatMul + Add the
// way PyTorch exports Linear on 3-D inputs and ONNX Runtime's dynamic quantizer rewrites it.
#include <cmath>
#include <string>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"

namespace simplecpp::builtin {

using namespace detail;  // NOLINT: the builder helpers (builtin_builder.h)

graph::Model MakeMlpModel() {
  constexpr int64_t kBatch = 16, kIn = 512, kHidden1 = 1024, kHidden2 = 1024, kHidden3 = 256,
                    kClasses = 10;
  graph::Model m = NewModel("mlp", "simplecpp built-in MLP 512-1024-1024-256-10 (deterministic weights)", 17);
  graph::Graph& g = m.graph;
  Builder b(&g, 0x3171ull);
  g.inputs.push_back(TensorValue("features", {kBatch, kIn}));

  // x [B,in] @ W [in,out] + bias [out]
  auto linear = [&](const std::string& name, const std::string& in, int64_t n_in, int64_t n_out) {
    const std::string mm = b.Op("MatMul", name + ".matmul", {in, b.FanInWeight(name + ".weight", {n_in, n_out}, n_in)});
    return b.Op("Add", name, {mm, b.Weight(name + ".bias", {n_out}, 0.05f)});
  };
  std::string x = b.Op("Relu", "relu1", {linear("fc1", "features", kIn, kHidden1)});
  x = b.Op("Relu", "relu2", {linear("fc2", x, kHidden1, kHidden2)});
  x = b.Op("Relu", "relu3", {linear("fc3", x, kHidden2, kHidden3)});
  x = linear("fc4", x, kHidden3, kClasses);
  b.Op("Softmax", "probabilities", {x}, {AttrInt("axis", -1)});
  g.outputs.push_back(TensorValue("probabilities", {kBatch, kClasses}));
  return m;
}

}  // namespace simplecpp::builtin
