// Elementwise chain fusion over planned steps (graph/passes/elementwise_fusion.h).
#include "graph/passes/elementwise_fusion.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "graph/ops/elementwise_fused.h"

namespace simplecpp::graph {
namespace {

using elementwise::FusedStep;

bool FusibleDType(DType dt) {
  return dt == DType::kFloat32 || dt == DType::kFloat16 || dt == DType::kBFloat16;
}

// How one step would join a chain whose input is `x` and whose running value is `running`.
// Sets *operand_value to the other operand's value id (binary steps), -1 for unary ones.
bool AsChainStep(const PlanStep& step, const std::vector<ValueState>& values, int x, int running,
                 FusedStep* out, int* operand_value) {
  if (step.op == nullptr || step.op->takes_values() || step.outputs.size() != 1 ||
      step.outputs[0] < 0) {
    return false;
  }
  const ValueState& result = values[step.outputs[0]];
  if (!result.type.is_tensor() || !FusibleDType(result.dtype)) return false;
  out->op_type = step.node.op_type;
  *operand_value = -1;
  if (step.inputs.size() == 1 && step.inputs[0] == running &&
      elementwise::AsFusibleUnary(*step.op, &out->unary, &out->params)) {
    out->kind = FusedStep::Kind::kUnary;
    return true;
  }
  if (step.inputs.size() != 2 || !elementwise::AsFusibleBinary(*step.op, &out->binary)) {
    return false;
  }
  const int a = step.inputs[0], b = step.inputs[1];
  if (a < 0 || b < 0) return false;
  // The running value on one side; the other side is x or a one-element constant.
  const bool lhs = a == running;
  const int other = lhs ? b : a;
  if (!lhs && b != running) return false;
  if (other == running && running != x) return false;  // v op v: v would be read twice
  const ValueState& o = values[other];
  if (o.dtype != result.dtype || !o.type.is_tensor()) return false;
  if (other != x && !(o.is_constant && o.constant.num_elements() == 1)) return false;
  out->kind = FusedStep::Kind::kBinary;
  out->running_is_lhs = lhs;
  *operand_value = other;
  return true;
}

}  // namespace

std::vector<size_t> FuseElementwiseChains(std::vector<PlanStep>* steps,
                                          const std::vector<ValueState>& values,
                                          const std::vector<int>& keep) {
  // Consumers of each value (a step reading a value twice counts twice).
  std::map<int, std::vector<size_t>> consumers;
  for (size_t s = 0; s < steps->size(); ++s) {
    for (int id : (*steps)[s].inputs) {
      if (id >= 0) consumers[id].push_back(s);
    }
  }
  const std::set<int> kept(keep.begin(), keep.end());

  std::vector<bool> in_chain(steps->size(), false);
  // Last step of each chain -> (member steps, fused step).
  std::map<size_t, std::pair<std::vector<size_t>, PlanStep>> chains;
  for (size_t first = 0; first < steps->size(); ++first) {
    if (in_chain[first]) continue;
    const PlanStep& start = (*steps)[first];
    if (start.inputs.empty() || start.inputs[0] < 0) continue;
    // The chain input: the non-constant operand of the first step.
    int x = -1;
    for (int id : start.inputs) {
      if (id >= 0 && !values[id].is_constant) {
        x = id;
        break;
      }
    }
    if (x < 0) continue;
    std::vector<FusedStep> program;
    std::vector<size_t> members;
    std::vector<int> operand_values = {x};  // fused op inputs: x, then the constants
    int running = x;
    size_t at = first;
    for (;;) {
      FusedStep fs;
      int operand = -1;
      if (in_chain[at] || !AsChainStep((*steps)[at], values, x, running, &fs, &operand)) break;
      if (operand >= 0) {
        if (operand == x) {
          fs.operand = 0;
        } else {
          fs.operand = static_cast<int>(operand_values.size());
          operand_values.push_back(operand);
        }
      }
      program.push_back(fs);
      members.push_back(at);
      running = (*steps)[at].outputs[0];
      // Grow only through a value nobody else needs.
      auto it = consumers.find(running);
      if (kept.count(running) || it == consumers.end() || it->second.size() != 1) break;
      at = it->second[0];
    }
    if (members.size() < 2) continue;
    for (size_t m : members) in_chain[m] = true;

    const PlanStep& last = (*steps)[members.back()];
    PlanStep fused;
    fused.node.name = start.node.name.empty() ? last.node.name : start.node.name;
    fused.node.op_type = "FusedElementwise";
    fused.node.domain = "simplecpp";
    std::string doc = "fused:";
    for (const FusedStep& fs : program) doc += " " + fs.op_type;
    fused.node.doc = doc;
    for (int id : operand_values) {
      fused.node.inputs.push_back(values[id].name);
      fused.inputs.push_back(id);
    }
    fused.node.outputs = last.node.outputs;
    fused.outputs = last.outputs;
    fused.opset = 1;
    fused.since_version = 1;
    fused.op = elementwise::MakeFusedElementwiseOp(std::move(program),
                                                   static_cast<int>(operand_values.size()));
    chains.emplace(members.back(), std::make_pair(members, std::move(fused)));
  }
  if (chains.empty()) return {};

  // The fused step takes the place of the chain's last step (every input of the chain exists
  // before its first step; every consumer of its result comes after its last).
  std::vector<PlanStep> rewritten;
  std::vector<size_t> fused_indices;
  rewritten.reserve(steps->size());
  for (size_t s = 0; s < steps->size(); ++s) {
    auto it = chains.find(s);
    if (it != chains.end()) {
      fused_indices.push_back(rewritten.size());
      rewritten.push_back(std::move(it->second.second));
    } else if (!in_chain[s]) {
      rewritten.push_back(std::move((*steps)[s]));
    }
  }
  *steps = std::move(rewritten);
  return fused_indices;
}

}  // namespace simplecpp::graph
