// Conv + BatchNormalization folding (graph/passes/conv_batchnorm_fold.h).
#include "graph/passes/conv_batchnorm_fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "graph/ops/float16_kind.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

// A constant of shape [channels] in float32 or in the 16-bit type `dt16` (DType::kFloat32 when
// the Conv is float32: then float32 only).
bool ChannelConstant(const std::vector<ValueState>& values, int id, int64_t channels, DType dt16) {
  if (id < 0) return false;
  const ValueState& v = values[id];
  return v.is_constant && (v.dtype == DType::kFloat32 || v.dtype == dt16) &&
         v.constant.dtype() == v.dtype && v.constant.dims() == Dims{channels};
}

// Element i of a float32 or 16-bit float constant, exactly.
double ValueAt(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kFloat32) return t.data<float>()[i];
  return kernels::Widen16One(Float16KindOf(t.dtype()), t.data<uint16_t>()[i]);
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
    const DType dt = vals[y].dtype;
    if ((dt != DType::kFloat32 && !Is16BitFloat(dt)) || kept.count(y) || uses[y] != 1 || w < 0) {
      continue;
    }
    const ValueState& wv = vals[w];
    if (!wv.is_constant || wv.dtype != dt || wv.constant.dtype() != dt ||
        wv.constant.rank() < 3 || uses[w] != 1 || kept.count(w)) {
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
    for (int i = 1; i < 5; ++i) channel_params &= ChannelConstant(vals, bn.inputs[i], m, dt);
    if (!channel_params) continue;
    // Where the folded bias goes: the Conv's own bias, or BatchNorm's B when the Conv has none;
    // either must be read by this step alone (its constant is replaced).
    int bias_slot = bias;
    if (bias >= 0) {
      if (!ChannelConstant(vals, bias, m, dt) || uses[bias] != 1 || kept.count(bias)) continue;
    } else {
      bias_slot = bn.inputs[2];
      if (uses[bias_slot] != 1 || kept.count(bias_slot)) continue;
    }
    const Attribute* eps_attr = bn.node.FindAttribute("epsilon");
    const double eps = eps_attr != nullptr ? eps_attr->f : 1e-5;
    const Tensor& scale = vals[bn.inputs[1]].constant;
    const Tensor& shift = vals[bn.inputs[2]].constant;
    const Tensor& mean = vals[bn.inputs[3]].constant;
    const Tensor& var = vals[bn.inputs[4]].constant;
    // A 16-bit Conv gets float32 weights and bias: it widens them to float32 anyway (one
    // rounding per output, to 16 bits), so folding costs no 16-bit rounding of the weights.
    Tensor new_w(DType::kFloat32, wv.constant.dims());
    Tensor new_b(DType::kFloat32, {m});
    const int64_t per_channel = wv.constant.num_elements() / std::max<int64_t>(m, 1);
    for (int64_t c = 0; c < m; ++c) {
      const double a = ValueAt(scale, c) / std::sqrt(ValueAt(var, c) + eps);
      for (int64_t i = 0; i < per_channel; ++i) {
        new_w.data<float>()[c * per_channel + i] =
            static_cast<float>(ValueAt(wv.constant, c * per_channel + i) * a);
      }
      const double b0 = bias >= 0 ? ValueAt(vals[bias].constant, c) : 0.0;
      new_b.data<float>()[c] = static_cast<float>((b0 - ValueAt(mean, c)) * a + ValueAt(shift, c));
    }
    vals[w].constant = new_w;
    vals[w].dtype = DType::kFloat32;
    vals[bias_slot].constant = new_b;
    vals[bias_slot].dtype = DType::kFloat32;
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
