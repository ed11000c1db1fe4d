// The built-in demo models, generated in code with deterministic weights: what
// `simplecpp run default` runs, and a ready-made end-to-end test of the import/export/executor
// path without any model file. They use only ai.onnx opset-17 ops.
//   "cnn"          input [1,3,32,32] float32 -> Conv+Relu, MaxPool, Conv+BatchNorm+Relu,
//                  GlobalAveragePool, Flatten, Gemm, Softmax -> "probabilities" [1,10]
//   "transformer"  input [1,16,64] float32 -> one pre-norm encoder layer (4 heads, Erf-spelled
//                  Gelu MLP of width 256) -> "y" [1,16,64]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/tensor.h"

namespace simplecpp::builtin {

// {"cnn", "transformer"}; the first is the default model.
std::vector<std::string> BuiltinModelNames();

// Builds the named model. Throws Error(kInvalidArgument) for an unknown name.
graph::Model MakeBuiltinModel(const std::string& name);

// Deterministic pseudo-random generator (SplitMix64) shared by the model weights and the CLI's
// generated inputs, so a given seed gives the same numbers on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi).
  float Uniform(float lo, float hi);

 private:
  uint64_t state_;
};

// A float32 tensor of `dims` with values uniform in [lo, hi).
Tensor RandomFloatTensor(const Dims& dims, uint64_t seed, float lo, float hi);

}  // namespace simplecpp::builtin
