// Broadcast shapes and the run plan of graph/ops/broadcast.h.
#include "graph/ops/broadcast.h"

namespace simplecpp::graph {

bool BroadcastShape(const std::vector<Dims>& shapes, Dims* out, std::string* error) {
  size_t rank = 0;
  for (const Dims& s : shapes) rank = std::max(rank, s.size());
  Dims result(rank, 1);
  for (size_t k = 0; k < rank; ++k) {  // k counts from the right
    int64_t dim = 1;
    for (const Dims& s : shapes) {
      if (k >= s.size()) continue;
      const int64_t d = s[s.size() - 1 - k];
      if (d == 1) continue;
      if (dim == 1) {
        dim = d;
      } else if (d != dim) {
        if (error != nullptr) {
          std::string list;
          for (const Dims& t : shapes) list += (list.empty() ? "" : " and ") + DimsToString(t);
          *error = "shapes " + list + " do not broadcast (dimension " +
                   std::to_string(rank - 1 - k) + " of the result: " + std::to_string(dim) +
                   " vs " + std::to_string(d) + ")";
        }
        return false;
      }
    }
    result[rank - 1 - k] = dim;
  }
  *out = std::move(result);
  return true;
}

BroadcastPlan::BroadcastPlan(const std::vector<Dims>& inputs, const Dims& output) {
  num_inputs_ = static_cast<int>(std::min<size_t>(inputs.size(), kMaxInputs));
  const size_t rank = output.size();
  for (int64_t d : output) {
    if (d == 0) {  // nothing to iterate
      num_runs_ = 0;
      run_length_ = 0;
      return;
    }
  }
  // Collapse: drop output dims of size 1, merge neighbours with the same broadcast pattern.
  std::vector<int64_t> sizes;
  std::vector<unsigned> patterns;  // bit i: input i is broadcast along this dim
  for (size_t k = 0; k < rank; ++k) {
    if (output[k] == 1) continue;
    unsigned pattern = 0;
    for (int i = 0; i < num_inputs_; ++i) {
      const Dims& in = inputs[i];
      const size_t lead = rank - in.size();
      const int64_t d = k < lead ? 1 : in[k - lead];
      if (d == 1) pattern |= 1u << i;
    }
    if (!sizes.empty() && patterns.back() == pattern) {
      sizes.back() *= output[k];
    } else {
      sizes.push_back(output[k]);
      patterns.push_back(pattern);
    }
  }
  if (sizes.empty()) {  // a single element
    sizes.push_back(1);
    patterns.push_back((1u << num_inputs_) - 1);
  }
  // Element strides of each input along the collapsed dims (0 where broadcast).
  const size_t n = sizes.size();
  std::vector<std::array<int64_t, kMaxInputs>> strides(n);
  for (int i = 0; i < num_inputs_; ++i) {
    int64_t stride = 1;
    for (size_t k = n; k-- > 0;) {
      const bool broadcast = (patterns[k] >> i) & 1u;
      strides[k][i] = broadcast ? 0 : stride;
      if (!broadcast) stride *= sizes[k];
    }
  }
  run_length_ = sizes.back();
  for (int i = 0; i < num_inputs_; ++i) step_[i] = strides.back()[i] == 0 ? 0 : 1;
  outer_dims_.assign(sizes.begin(), sizes.end() - 1);
  outer_strides_.assign(strides.begin(), strides.end() - 1);
  num_runs_ = 1;
  for (int64_t d : outer_dims_) num_runs_ *= d;
}

void BroadcastPlan::StartOffsets(int64_t run, int64_t* counter, int64_t* offsets) const {
  for (int i = 0; i < num_inputs_; ++i) offsets[i] = 0;
  for (size_t k = outer_dims_.size(); k-- > 0;) {
    counter[k] = run % outer_dims_[k];
    run /= outer_dims_[k];
    for (int i = 0; i < num_inputs_; ++i) offsets[i] += counter[k] * outer_strides_[k][i];
  }
}

}  // namespace simplecpp::graph
