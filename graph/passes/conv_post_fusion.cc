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

using elementwise::FusedChain;
using elementwise::FusedStep;

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
    if (conv.op == nullptr ||
        (conv.node.op_type != "Conv" && conv.node.op_type != "ConvTranspose") ||
        !conv.node.domain.empty() ||
        conv.outputs.size() != 1 || conv.outputs[0] < 0) {
      continue;
    }
    const int y = conv.outputs[0];
    const DType dt = values[y].dtype;
    if ((dt != DType::kFloat32 && dt != DType::kFloat16 && dt != DType::kBFloat16) ||
        kept.count(y)) {
      continue;
    }
    auto it = consumers.find(y);
    if (it == consumers.end() || it->second.size() != 1) continue;
    const size_t c = it->second[0];
    if (removed.count(c)) continue;
    PlanStep& chain_step = (*steps)[c];
    // Operands of rank <= 3 broadcast to nothing larger than the Conv output (rank >= 3).
    int rank = 0;
    std::shared_ptr<const FusedChain> chain = ChainOnValue(chain_step, values, y, 3, &rank);
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
