// Conv + BatchNormalization folding (graph/passes/conv_batchnorm_fold.h).
#include "graph/passes/conv_batchnorm_fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace simplecpp::graph {
namespace {

// A float32 constant of shape [channels].
bool ChannelConstant(const std::vector<ValueState>& values, int id, int64_t channels) {
  if (id < 0) return false;
  const ValueState& v = values[id];
  return v.is_constant && v.dtype == DType::kFloat32 && v.constant.dims() == Dims{channels};
}

}  // namespace

std::vector<size_t> FoldConvBatchNorm(std::vector<PlanStep>* steps,
                                      std::vector<ValueState>* values,
                                      const std::vector<int>& keep) {
  std::map<int, int> uses;
  std::map<int, size_t> consumer;
  for (size_t s = 0; s < steps->size(); ++s) {
    for (int id : (*steps)[s].inputs) {
      if (id < 0) continue;
      ++uses[id];
      consumer[id] = s;
    }
  }
  const std::set<int> kept(keep.begin(), keep.end());
  std::vector<ValueState>& vals = *values;
  std::set<size_t> removed, folded;
  for (size_t s = 0; s < steps->size(); ++s) {
    PlanStep& conv = (*steps)[s];
    if (conv.op == nullptr || conv.node.op_type != "Conv" || !conv.node.domain.empty() ||
        conv.inputs.size() < 2 || conv.outputs.size() != 1 || conv.outputs[0] < 0) {
      continue;
    }
    const int y = conv.outputs[0], w = conv.inputs[1];
    const int bias = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
    if (vals[y].dtype != DType::kFloat32 || kept.count(y) || uses[y] != 1 || w < 0) continue;
    const ValueState& wv = vals[w];
    if (!wv.is_constant || wv.dtype != DType::kFloat32 || wv.constant.rank() < 3 ||
        uses[w] != 1 || kept.count(w)) {
      continue;
    }
    const int64_t m = wv.constant.dim(0);
    PlanStep& bn = (*steps)[consumer[y]];
    if (bn.op == nullptr || bn.node.op_type != "BatchNormalization" || !bn.node.domain.empty() ||
        bn.since_version < 9 || bn.inputs.size() != 5 || bn.inputs[0] != y ||
        bn.outputs.empty() || bn.outputs[0] < 0) {
      continue;
    }
    bool extra_outputs = false;
    for (size_t o = 1; o < bn.outputs.size(); ++o) extra_outputs |= bn.outputs[o] >= 0;
    const Attribute* training = bn.node.FindAttribute("training_mode");
    if (extra_outputs || (training != nullptr && training->i != 0)) continue;
    bool channel_params = true;
    for (int i = 1; i < 5; ++i) channel_params &= ChannelConstant(vals, bn.inputs[i], m);
    if (!channel_params) continue;
    // Where the folded bias goes: the Conv's own bias, or BatchNorm's B when the Conv has none;
    // either must be read by this step alone (its constant is replaced).
    int bias_slot = bias;
    if (bias >= 0) {
      if (!ChannelConstant(vals, bias, m) || uses[bias] != 1 || kept.count(bias)) continue;
    } else {
      bias_slot = bn.inputs[2];
      if (uses[bias_slot] != 1 || kept.count(bias_slot)) continue;
    }
    const Attribute* eps_attr = bn.node.FindAttribute("epsilon");
    const double eps = eps_attr != nullptr ? eps_attr->f : 1e-5;
    const float* scale = vals[bn.inputs[1]].constant.data<float>();
    const float* shift = vals[bn.inputs[2]].constant.data<float>();
    const float* mean = vals[bn.inputs[3]].constant.data<float>();
    const float* var = vals[bn.inputs[4]].constant.data<float>();
    const float* b = bias >= 0 ? vals[bias].constant.data<float>() : nullptr;
    Tensor new_w(DType::kFloat32, wv.constant.dims());
    Tensor new_b(DType::kFloat32, {m});
    const int64_t per_channel = wv.constant.num_elements() / std::max<int64_t>(m, 1);
    const float* old_w = wv.constant.data<float>();
    for (int64_t c = 0; c < m; ++c) {
      const double a = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
      for (int64_t i = 0; i < per_channel; ++i) {
        new_w.data<float>()[c * per_channel + i] =
            static_cast<float>(static_cast<double>(old_w[c * per_channel + i]) * a);
      }
      const double b0 = b != nullptr ? static_cast<double>(b[c]) : 0.0;
      new_b.data<float>()[c] = static_cast<float>((b0 - mean[c]) * a + shift[c]);
    }
    vals[w].constant = new_w;
    vals[bias_slot].constant = new_b;
    if (bias < 0) {
      conv.inputs.resize(3, -1);
      conv.inputs[2] = bias_slot;
      conv.node.inputs.resize(3);
      conv.node.inputs[2] = vals[bias_slot].name;
    }
    conv.node.outputs = {bn.node.outputs[0]};
    conv.outputs = {bn.outputs[0]};
    conv.static_run = nullptr;
    conv.static_outputs.clear();
    removed.insert(consumer[y]);
    folded.insert(s);
  }
  if (folded.empty()) return {};
  std::vector<PlanStep> rewritten;
  std::vector<size_t> indices;
  for (size_t s = 0; s < steps->size(); ++s) {
    if (removed.count(s)) continue;
    if (folded.count(s)) indices.push_back(rewritten.size());
    rewritten.push_back(std::move((*steps)[s]));
  }
  *steps = std::move(rewritten);
  return indices;
}

}  // namespace simplecpp::graph
