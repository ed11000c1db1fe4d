// Conv + BatchNormalization folding (graph/passes/conv_batchnorm_fold.h).
#include "graph/passes/conv_batchnorm_fold.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

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

// The group attribute of a Conv / ConvTranspose node (1 when absent).
int64_t GroupOf(const Node& node) {
  const Attribute* a = node.FindAttribute("group");
  return a != nullptr && a->i > 0 ? a->i : 1;
}

// The output channel that element e of W feeds: Conv W is [M, C/group, k...]; ConvTranspose W is
// [C, M/group, k...], input channel ci in group ci / (C/group).
int64_t ChannelOfWeight(bool transpose, const Dims& wd, int64_t group, int64_t e) {
  int64_t ks = 1;
  for (size_t d = 2; d < wd.size(); ++d) ks *= wd[d];
  if (!transpose) return e / (wd[1] * ks);
  const int64_t og = wd[1], ci = e / (og * ks), mo = (e / ks) % og;
  return ci / (wd[0] / group) * og + mo;
}

// The per-channel values of a constant operand of Add / Sub / Mul on an output of rank `rank`
// with m channels (axis 1): every dim 1 except, possibly, the channel axis with m (a single
// value applies to every channel). False for anything that broadcasts otherwise.
bool ChannelOperand(const ValueState& v, size_t rank, int64_t m, DType dt,
                    std::vector<double>* out) {
  if (!v.is_constant || v.dtype != dt || v.constant.dtype() != dt) return false;
  const Dims& d = v.constant.dims();
  if (d.size() > rank) return false;
  const size_t channel_axis = d.size() + 1 >= rank ? d.size() + 1 - rank : d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != 1 && !(i == channel_axis && d[i] == m)) return false;
  }
  const int64_t n = v.constant.num_elements();
  out->assign(static_cast<size_t>(m), 0.0);
  for (int64_t c = 0; c < m; ++c) (*out)[c] = ValueAt(v.constant, n == 1 ? 0 : c);
  return true;
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
    if (conv.op == nullptr || !conv.node.domain.empty() || conv.inputs.size() < 2 ||
        conv.outputs.size() != 1 || conv.outputs[0] < 0 || removed.count(s)) {
      continue;
    }
    const bool transpose = conv.node.op_type == "ConvTranspose";
    if (!transpose && conv.node.op_type != "Conv") continue;
    const int y = conv.outputs[0], w = conv.inputs[1];
    const int bias = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
    const DType dt = vals[y].dtype;
    if ((dt != DType::kFloat32 && !Is16BitFloat(dt)) || w < 0) continue;
    const ValueState& wv = vals[w];
    if (!wv.is_constant || wv.dtype != dt || wv.constant.dtype() != dt ||
        wv.constant.rank() < 3 || uses[w] != 1 || kept.count(w)) {
      continue;
    }
    const Dims& wd = wv.constant.dims();
    const int64_t group = GroupOf(conv.node);
    if (transpose && wd[0] % group != 0) continue;
    const int64_t m = transpose ? wd[1] * group : wd[0];
    const size_t rank = wd.size();
    if (bias >= 0 && (!ChannelConstant(vals, bias, m, dt) || uses[bias] != 1 || kept.count(bias))) {
      continue;
    }
    // y_folded[c] = a[c] * (the Conv's sums) + b[c], gathered over the chain of consumers.
    std::vector<double> a(static_cast<size_t>(m), 1.0), b(static_cast<size_t>(m), 0.0);
    if (bias >= 0) {
      for (int64_t c = 0; c < m; ++c) b[c] = ValueAt(vals[bias].constant, c);
    }
    int bias_slot = bias, out = y;
    std::vector<size_t> absorbed;
    std::vector<double> k;
    while (!kept.count(out) && uses[out] == 1) {
      const size_t next_index = consumer[out];
      const PlanStep& next = (*steps)[next_index];
      if (next.op == nullptr || !next.node.domain.empty() || next.outputs.empty() ||
          next.outputs[0] < 0 || removed.count(next_index)) {
        break;
      }
      bool extra_outputs = false;
      for (size_t o = 1; o < next.outputs.size(); ++o) extra_outputs |= next.outputs[o] >= 0;
      if (extra_outputs) break;
      const std::string& op = next.node.op_type;
      int reusable = -1;  // a constant this step alone reads: a place for the folded bias
      if (op == "BatchNormalization") {
        const Attribute* training = next.node.FindAttribute("training_mode");
        if (next.since_version < 9 || next.inputs.size() != 5 || next.inputs[0] != out ||
            (training != nullptr && training->i != 0)) {
          break;
        }
        bool channel_params = true;
        for (int i = 1; i < 5; ++i) channel_params &= ChannelConstant(vals, next.inputs[i], m, dt);
        if (!channel_params) break;
        const Attribute* eps_attr = next.node.FindAttribute("epsilon");
        const double eps = eps_attr != nullptr ? eps_attr->f : 1e-5;
        const Tensor& scale = vals[next.inputs[1]].constant;
        const Tensor& shift = vals[next.inputs[2]].constant;
        const Tensor& mean = vals[next.inputs[3]].constant;
        const Tensor& var = vals[next.inputs[4]].constant;
        for (int64_t c = 0; c < m; ++c) {
          const double ac = ValueAt(scale, c) / std::sqrt(ValueAt(var, c) + eps);
          a[c] *= ac;
          b[c] = (b[c] - ValueAt(mean, c)) * ac + ValueAt(shift, c);
        }
        reusable = next.inputs[2];
      } else if (op == "Add" || op == "Sub" || op == "Mul") {
        if (next.inputs.size() != 2 || next.outputs.size() != 1) break;
        const int side = next.inputs[0] == out ? 0 : 1;
        const int other = next.inputs[1 - side];
        if (next.inputs[side] != out || other < 0 || other == out ||
            !ChannelOperand(vals[other], rank, m, dt, &k)) {
          break;
        }
        for (int64_t c = 0; c < m; ++c) {
          if (op == "Add") {
            b[c] += k[c];
          } else if (op == "Mul") {
            a[c] *= k[c];
            b[c] *= k[c];
          } else if (side == 0) {  // out - k
            b[c] -= k[c];
          } else {  // k - out
            a[c] = -a[c];
            b[c] = k[c] - b[c];
          }
        }
        reusable = other;
      } else {
        break;
      }
      if (bias_slot < 0 && reusable >= 0 && uses[reusable] == 1 && !kept.count(reusable)) {
        bias_slot = reusable;
      }
      absorbed.push_back(next_index);
      out = next.outputs[0];
    }
    bool finite = true;
    for (int64_t c = 0; c < m; ++c) finite &= std::isfinite(a[c]) && std::isfinite(b[c]);
    if (absorbed.empty() || bias_slot < 0 || !finite) continue;
    // A 16-bit Conv gets float32 weights and bias: it widens them to float32 anyway (one
    // rounding per output, to 16 bits), so folding costs no 16-bit rounding of the weights.
    Tensor new_w(DType::kFloat32, wd);
    Tensor new_b(DType::kFloat32, {m});
    for (int64_t e = 0; e < wv.constant.num_elements(); ++e) {
      const int64_t c = ChannelOfWeight(transpose, wd, group, e);
      new_w.data<float>()[e] = static_cast<float>(ValueAt(wv.constant, e) * a[c]);
    }
    for (int64_t c = 0; c < m; ++c) new_b.data<float>()[c] = static_cast<float>(b[c]);
    vals[w].constant = new_w;
    vals[w].dtype = DType::kFloat32;
    vals[bias_slot].constant = new_b;
    vals[bias_slot].dtype = DType::kFloat32;
    vals[bias_slot].dims = {m};
    vals[bias_slot].static_shape = true;
    if (bias < 0) {
      conv.inputs.resize(3, -1);
      conv.inputs[2] = bias_slot;
      conv.node.inputs.resize(3);
      conv.node.inputs[2] = vals[bias_slot].name;
    }
    const PlanStep& last = (*steps)[absorbed.back()];
    conv.node.outputs = {last.node.outputs[0]};
    conv.outputs = {last.outputs[0]};
    conv.static_run = nullptr;
    conv.static_outputs.clear();
    removed.insert(absorbed.begin(), absorbed.end());
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
