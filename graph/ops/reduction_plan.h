// Shared by the Reduce* ops (reduction.cc) and Einsum (einsum.cc): turns "reduce these axes of a
// row-major tensor" into a short sequence of [outer, n, inner] passes for the kernels in
// kernels/nn/reduce.h.
//
// Size-1 axes are dropped (reducing or keeping them moves no data), adjacent reduced axes and
// adjacent kept axes are merged, and the groups of reduced axes are reduced one pass each, the
// innermost group first (the data shrinks before the strided passes). Without any reduced group
// (noop_with_empty_axes, or only size-1 axes reduced) there is still one pass with n == 1 so the
// first-pass transform (x*x, |x|) is applied.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/op.h"
#include "kernels/nn/reduce.h"

namespace simplecpp::graph {

struct ReducePass {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// dims: the input shape; reduced[k]: whether axis k is reduced.
inline std::vector<ReducePass> PlanReducePasses(const Dims& dims,
                                                const std::vector<bool>& reduced) {
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  int64_t total = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    total *= dims[k];
    if (dims[k] == 1) continue;
    if (!groups.empty() && groups.back().reduced == reduced[k]) {
      groups.back().size *= dims[k];
    } else {
      groups.push_back({dims[k], reduced[k]});
    }
  }
  std::vector<ReducePass> passes;
  for (;;) {
    int last = -1;
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
      if (groups[g].reduced) last = g;
    }
    if (last < 0) break;
    ReducePass p;
    for (int g = 0; g < last; ++g) p.outer *= groups[g].size;
    p.n = groups[last].size;
    for (int g = last + 1; g < static_cast<int>(groups.size()); ++g) p.inner *= groups[g].size;
    passes.push_back(p);
    groups.erase(groups.begin() + last);
    // Merge the kept neighbours that are now adjacent.
    if (last > 0 && last < static_cast<int>(groups.size()) && !groups[last - 1].reduced &&
        !groups[last].reduced) {
      groups[last - 1].size *= groups[last].size;
      groups.erase(groups.begin() + last);
    }
  }
  if (passes.empty()) passes.push_back(ReducePass{1, 1, total});
  return passes;
}

// Runs the passes from x into y (y holds the final [product of kept dims] values). `first` is the
// kernel of the first pass, `rest` of the later ones (ReduceSumSquare: sum of squares, then sums).
template <typename T>
void RunReducePasses(const std::vector<ReducePass>& passes, kernels::ReduceFn<T> first,
                     kernels::ReduceFn<T> rest, DType dtype, const T* x, T* y, RunContext& ctx) {
  Tensor buffers[2];
  const T* src = x;
  for (size_t p = 0; p < passes.size(); ++p) {
    const ReducePass& pass = passes[p];
    T* dst = y;
    if (p + 1 < passes.size()) {
      buffers[p % 2] = ctx.Scratch(dtype, {pass.outer * pass.inner});
      dst = buffers[p % 2].template data<T>();
    }
    (p == 0 ? first : rest)(src, pass.outer, pass.n, pass.inner, dst, ctx.parallel());
    src = dst;
  }
}

}  // namespace simplecpp::graph
