// Multidirectional (numpy-style) broadcasting for elementwise ops, reusable by any op family.
//
//   Dims out;
//   std::string why;
//   if (!BroadcastShape({a.dims, b.dims}, &out, &why)) ctx.Fail(why);
//   BroadcastPlan plan({a.dims, b.dims}, out);           // at Prepare; capture it by value
//   ...
//   plan.Run(ctx.parallel(), [&](int64_t o, const int64_t* in, int64_t n) {   // in the RunFn
//     kernels::Binary<float>(op, a + in[0], plan.step(0), b + in[1], plan.step(1), out + o, n);
//   });
//
// The output is row-major and contiguous. The plan cuts it into runs: contiguous stretches of the
// output over which every input is either contiguous too (step 1) or one repeated element
// (step 0), so the callback can hand each run to a contiguous SIMD kernel. To make runs long,
// output dims of size 1 are dropped and adjacent dims where every input has the same
// broadcast/not-broadcast pattern are merged: [2,3,4] x [4] is [6,4] x [1,4] (runs of 4, `a`
// step 1, `b` step 1), [2,3,4] x [2,3,1] is [6,4] x [6,1] (runs of 4, `b` step 0), and two equal
// shapes are one run of all elements. Between runs the input offsets advance with an odometer
// (additions only, no per-element index arithmetic).
//
// Run() splits the work into tasks whose boundaries depend only on the shapes (never on the thread
// count) and each task writes a disjoint part of the output, so results are deterministic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "simplecpp/tensor.h"

namespace simplecpp::graph {

// The broadcast of `shapes` (aligned on the right; each dim equal to the others or 1; a 0-sized
// dim broadcasts only against 0 or 1). Returns false and sets *error on a mismatch.
bool BroadcastShape(const std::vector<Dims>& shapes, Dims* out, std::string* error);

class BroadcastPlan {
 public:
  static constexpr int kMaxInputs = 3;
  // Output elements per task in Run() (a problem-size constant, never thread-dependent).
  static constexpr int64_t kTaskElements = 1 << 15;

  BroadcastPlan() = default;
  // Every input must broadcast to `output` (check with BroadcastShape first); at most kMaxInputs.
  BroadcastPlan(const std::vector<Dims>& inputs, const Dims& output);

  int num_inputs() const { return num_inputs_; }
  int64_t num_elements() const { return num_runs_ * run_length_; }
  int64_t num_runs() const { return num_runs_; }
  int64_t run_length() const { return run_length_; }
  // Step of input i inside a run: 1 (contiguous) or 0 (one repeated element).
  int64_t step(int input) const { return step_[input]; }
  // Whether run r starts input i at r * run_stride(i) for every run (at most one outer dim:
  // [C, HW] x [C, 1], a per-channel operand); then a kernel can take many runs in one call.
  bool runs_evenly_spaced() const { return outer_dims_.size() <= 1; }
  // Input i's element offset from one run to the next (runs_evenly_spaced() plans).
  int64_t run_stride(int input) const {
    return outer_strides_.empty() ? 0 : outer_strides_[0][input];
  }

  // Calls fn(out_offset, in_offsets, length) for runs [begin, end) in order; in_offsets[i] is the
  // element offset of input i at the start of the run. fn must be callable as
  // void(int64_t, const int64_t*, int64_t).
  template <typename Fn>
  void ForEachRun(int64_t begin, int64_t end, Fn&& fn) const;

  // Every run, in parallel tasks of about kTaskElements output elements; a run longer than that
  // is cut into pieces (fn then sees a part of the run, with offsets adjusted).
  template <typename Fn>
  void Run(const kernels::Parallel& parallel, Fn&& fn) const;

 private:
  // Input offsets at the start of run `run` (by division; used once per task).
  void StartOffsets(int64_t run, int64_t* counter, int64_t* offsets) const;

  static constexpr int kStackRank = 16;

  int num_inputs_ = 0;
  int64_t num_runs_ = 0;
  int64_t run_length_ = 0;
  std::array<int64_t, kMaxInputs> step_{};
  // Outer (collapsed) dims, innermost last, and each input's element stride along them (0 where
  // the input is broadcast).
  std::vector<int64_t> outer_dims_;
  std::vector<std::array<int64_t, kMaxInputs>> outer_strides_;
};

template <typename Fn>
void BroadcastPlan::ForEachRun(int64_t begin, int64_t end, Fn&& fn) const {
  if (begin >= end) return;
  const int rank = static_cast<int>(outer_dims_.size());
  int64_t counter_stack[kStackRank];
  std::vector<int64_t> counter_heap;
  int64_t* counter = rank <= kStackRank ? counter_stack : (counter_heap.resize(rank), counter_heap.data());
  int64_t offsets[kMaxInputs] = {};
  StartOffsets(begin, counter, offsets);
  for (int64_t run = begin; run < end; ++run) {
    fn(run * run_length_, static_cast<const int64_t*>(offsets), run_length_);
    // Odometer step over the outer dims.
    for (int d = rank - 1; d >= 0; --d) {
      const auto& stride = outer_strides_[d];
      if (++counter[d] < outer_dims_[d]) {
        for (int i = 0; i < num_inputs_; ++i) offsets[i] += stride[i];
        break;
      }
      counter[d] = 0;
      for (int i = 0; i < num_inputs_; ++i) offsets[i] -= stride[i] * (outer_dims_[d] - 1);
    }
  }
}

template <typename Fn>
void BroadcastPlan::Run(const kernels::Parallel& pool, Fn&& fn) const {
  if (num_runs_ == 0 || run_length_ == 0) return;
  const kernels::Parallel& parallel =
      kernels::ParallelForElements(pool, (num_inputs_ + 1) * num_runs_ * run_length_);
  if (run_length_ >= kTaskElements) {
    // Long runs: each task is one piece of one run.
    const int64_t pieces = (run_length_ + kTaskElements - 1) / kTaskElements;
    const int64_t tasks = num_runs_ * pieces;
    auto body = [&](int64_t t0, int64_t t1) {
      std::vector<int64_t> counter(outer_dims_.size() + 1);
      int64_t offsets[kMaxInputs] = {};
      int64_t piece_offsets[kMaxInputs] = {};
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t run = t / pieces;
        const int64_t start = (t % pieces) * kTaskElements;
        const int64_t length = std::min(kTaskElements, run_length_ - start);
        StartOffsets(run, counter.data(), offsets);
        for (int i = 0; i < num_inputs_; ++i) piece_offsets[i] = offsets[i] + start * step_[i];
        fn(run * run_length_ + start, static_cast<const int64_t*>(piece_offsets), length);
      }
    };
    if (tasks == 1) {
      body(0, 1);
    } else {
      parallel.For(tasks, body);
    }
    return;
  }
  const int64_t runs_per_task = std::max<int64_t>(1, kTaskElements / run_length_);
  const int64_t tasks = (num_runs_ + runs_per_task - 1) / runs_per_task;
  if (tasks == 1) {
    ForEachRun(0, num_runs_, fn);
    return;
  }
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    ForEachRun(t0 * runs_per_task, std::min(num_runs_, t1 * runs_per_task), fn);
  });
}

}  // namespace simplecpp::graph
