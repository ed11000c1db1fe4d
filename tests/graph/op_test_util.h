// Runs one ONNX node through the real executor (Plan::Build + Executor::Run), so op tests
// exercise the same InferTypes / Prepare / Run path as a model does.
//
//   auto out = RunNode("Add", {a, b});
//   auto out = RunNode("Gemm", {a, b, c}, {AttrFloat("alpha", 0.5f), AttrInt("transB", 1)});
//   auto out = RunNode("Reshape", {x, shape}, {}, {.opset = 14, .constant_inputs = {1}});
// An undefined Tensor() in `inputs` is an omitted optional input.
#pragma once

#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/tensor.h"

namespace simplecpp::testing {

struct RunNodeOptions {
  int64_t opset = 18;
  int num_outputs = 1;
  std::string domain{};
  std::vector<int> constant_inputs{};  // these inputs become initializers (constant at load)
  int threads = 1;
  // Outputs below num_outputs left unnamed (an omitted optional output); the returned vector
  // holds the other outputs, in order.
  std::vector<int> omitted_outputs{};
};

std::vector<Tensor> RunNode(const std::string& op_type, const std::vector<Tensor>& inputs,
                            const std::vector<graph::Attribute>& attributes = {},
                            const RunNodeOptions& options = {});

graph::Attribute AttrInt(const std::string& name, int64_t v);
graph::Attribute AttrFloat(const std::string& name, float v);
graph::Attribute AttrString(const std::string& name, const std::string& v);
graph::Attribute AttrInts(const std::string& name, std::vector<int64_t> v);
graph::Attribute AttrFloats(const std::string& name, std::vector<float> v);
graph::Attribute AttrTensor(const std::string& name, const Tensor& v);

// Convenience constructors.
Tensor F32(Dims dims, std::vector<float> values);
Tensor I64(Dims dims, std::vector<int64_t> values);
Tensor I32(Dims dims, std::vector<int32_t> values);
Tensor Bool(Dims dims, std::vector<bool> values);
// Values filled with a deterministic pseudo-random sequence in [lo, hi).
Tensor RandomF32(Dims dims, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace simplecpp::testing
