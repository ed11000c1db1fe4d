// Conv + elementwise chain post-op fusion (graph/passes/conv_post_fusion.h).
#include "graph/passes/conv_post_fusion.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "graph/ops/elementwise_fused.h"
#include "graph/passes/elementwise_fusion.h"

namespace simplecpp::graph {
namespace {

using elementwise::FusedChainF32;
using elementwise::FusedProgram;
using elementwise::FusedStep;

// The value of a one-element float32 constant whose rank does not exceed a Conv output's (3).
bool ScalarOperand(const ValueState& v, float* out) {
  if (!v.is_constant || v.dtype != DType::kFloat32 || v.constant.num_elements() != 1 ||
      v.constant.dims().size() > 3) {
    return false;
  }
  *out = v.constant.data<float>()[0];
  return true;
}

// The chain that `consumer` computes on x (the Conv output), with its constants as values; null
// when it is not such a chain.
std::shared_ptr<const FusedChainF32> ChainOf(const PlanStep& consumer,
                                             const std::vector<ValueState>& values, int x) {
  if (consumer.op == nullptr || consumer.outputs.size() != 1 || consumer.outputs[0] < 0 ||
      values[consumer.outputs[0]].dtype != DType::kFloat32) {
    return nullptr;
  }
  FusedProgram program;
  std::vector<float> constants = {0.0f};
  if (const FusedProgram* fused = consumer.op->AsFusedProgram()) {
    if (consumer.inputs.empty() || consumer.inputs[0] != x) return nullptr;
    for (size_t i = 1; i < consumer.inputs.size(); ++i) {
      float v = 0.0f;
      if (consumer.inputs[i] < 0 || !ScalarOperand(values[consumer.inputs[i]], &v)) return nullptr;
      constants.push_back(v);
    }
    program = *fused;
  } else {
    FusedStep step;
    int operand = -1;
    if (!AsSingleChainStep(consumer, values, x, &step, &operand)) return nullptr;
    if (operand >= 0 && operand != x) {
      float v = 0.0f;
      if (!ScalarOperand(values[operand], &v)) return nullptr;
      step.operand = 1;
      constants.push_back(v);
    }
    program.steps.push_back(step);
  }
  return std::make_shared<FusedChainF32>(std::move(program), std::move(constants));
}

}  // namespace

std::vector<size_t> FuseConvPostChains(std::vector<PlanStep>* steps,
                                       const std::vector<ValueState>& values,
                                       const std::vector<int>& keep) {
  std::map<int, std::vector<size_t>> consumers;
  for (size_t s = 0; s < steps->size(); ++s) {
    for (int id : (*steps)[s].inputs) {
      if (id >= 0) consumers[id].push_back(s);
    }
  }
  const std::set<int> kept(keep.begin(), keep.end());
  std::set<size_t> removed, fused;
  for (size_t s = 0; s < steps->size(); ++s) {
    PlanStep& conv = (*steps)[s];
    if (conv.op == nullptr || conv.node.op_type != "Conv" || !conv.node.domain.empty() ||
        conv.outputs.size() != 1 || conv.outputs[0] < 0) {
      continue;
    }
    const int y = conv.outputs[0];
    if (values[y].dtype != DType::kFloat32 || kept.count(y)) continue;
    auto it = consumers.find(y);
    if (it == consumers.end() || it->second.size() != 1) continue;
    const size_t c = it->second[0];
    if (removed.count(c)) continue;
    PlanStep& chain_step = (*steps)[c];
    std::shared_ptr<const FusedChainF32> chain = ChainOf(chain_step, values, y);
    if (chain == nullptr || !conv.op->AttachPostChain(chain)) continue;
    std::string doc = "post-op:";
    for (const FusedStep& fs : chain->program().steps) doc += " " + fs.op_type;
    conv.node.doc = doc;
    conv.node.outputs = chain_step.node.outputs;
    conv.outputs = chain_step.outputs;
    conv.static_run = nullptr;
    conv.static_outputs.clear();
    removed.insert(c);
    fused.insert(s);
  }
  if (fused.empty()) return {};
  // The chain step was the Conv output's only consumer, so it comes after the Conv, and the
  // chain result's consumers come after it: the Conv may produce it in its own place.
  std::vector<PlanStep> rewritten;
  std::vector<size_t> indices;
  rewritten.reserve(steps->size() - removed.size());
  for (size_t s = 0; s < steps->size(); ++s) {
    if (removed.count(s)) continue;
    if (fused.count(s)) indices.push_back(rewritten.size());
    rewritten.push_back(std::move((*steps)[s]));
  }
  *steps = std::move(rewritten);
  return indices;
}

}  // namespace simplecpp::graph
