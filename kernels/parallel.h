// How kernels receive intra-op parallelism without knowing about any thread pool.
// Determinism rule: the caller splits work into tasks whose boundaries do not depend on the
// number of threads, and each task writes disjoint output, so results are bit-identical for any
// thread count. Parallel only decides which thread runs which task.
#pragma once

#include <cstdint>
#include <type_traits>

namespace simplecpp::kernels {

// What Parallel::For runs: a non-owning reference to a callable fn(begin, end), valid while the
// callable lives (For returns before the lambda passed to it goes away). Unlike std::function it
// never copies the callable or allocates, and each lambda costs one small call trampoline instead
// of std::function's clone/destroy machinery (that machinery was about 80 KB of the .wasm).
class TaskFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TaskFn>>>
  TaskFn(const F& f)  // NOLINT(google-explicit-constructor): lambdas convert implicitly
      : callable_(&f), call_([](const void* callable, int64_t begin, int64_t end) {
          (*static_cast<const F*>(callable))(begin, end);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(callable_, begin, end); }

 private:
  const void* callable_;
  void (*call_)(const void*, int64_t, int64_t);
};

class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int num_threads() const = 0;
  // Calls fn(begin, end) over disjoint sub-ranges covering [0, num_tasks); may run concurrently.
  // Returns when every task is done. fn must not throw.
  virtual void For(int64_t num_tasks, TaskFn fn) const = 0;
};

// Runs every task on the calling thread.
const Parallel& SerialParallel();

// Whether an op's work is worth a second thread. Waking a worker and sharing the data between
// cores costs several microseconds per call, more than a small op takes on one core, so a model
// made of small ops ran slower with two threads than with one. Ops pass their size and get
// `parallel` back, or SerialParallel() below the threshold; their tasks stay the same either way,
// so results do not change.
// macs: multiply-adds of vectorized compute (convolution, matrix products, pooling windows);
// elements: elements read plus written by a memory-bound op (element-wise, copies, reductions).
bool WorthParallelMacs(int64_t macs);
const Parallel& ParallelForMacs(const Parallel& parallel, int64_t macs);
const Parallel& ParallelForElements(const Parallel& parallel, int64_t elements);

}  // namespace simplecpp::kernels
