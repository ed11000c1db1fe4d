// How kernels receive intra-op parallelism without knowing about any thread pool.
// Determinism rule: the caller splits work into tasks whose boundaries do not depend on the
// number of threads, and each task writes disjoint output, so results are bit-identical for any
// thread count. Parallel only decides which thread runs which task.
#pragma once

#include <cstdint>
#include <functional>

namespace simplecpp::kernels {

class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int num_threads() const = 0;
  // Calls fn(begin, end) over disjoint sub-ranges covering [0, num_tasks); may run concurrently.
  // Returns when every task is done. fn must not throw.
  virtual void For(int64_t num_tasks, const std::function<void(int64_t, int64_t)>& fn) const = 0;
};

// Runs every task on the calling thread.
const Parallel& SerialParallel();

}  // namespace simplecpp::kernels
