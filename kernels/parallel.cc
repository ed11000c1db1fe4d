// The serial Parallel (every task on the calling thread), and when an op is worth more threads.
#include "kernels/parallel.h"

namespace simplecpp::kernels {
namespace {

class Serial final : public Parallel {
 public:
  int num_threads() const override { return 1; }
  void For(int64_t num_tasks, TaskFn fn) const override {
    if (num_tasks > 0) fn(0, num_tasks);
  }
};

}  // namespace

const Parallel& SerialParallel() {
  static const Serial serial;
  return serial;
}

namespace {

// About 10-20 us of work on one core, several times what handing half of it to another core
// costs (the wake-up, and the caches of the second core filling with the op's data).
constexpr int64_t kMinParallelMacs = int64_t{1} << 20;
constexpr int64_t kMinParallelElements = int64_t{1} << 17;

}  // namespace

bool WorthParallelMacs(int64_t macs) { return macs >= kMinParallelMacs; }

const Parallel& ParallelForMacs(const Parallel& parallel, int64_t macs) {
  return WorthParallelMacs(macs) ? parallel : SerialParallel();
}

const Parallel& ParallelForElements(const Parallel& parallel, int64_t elements) {
  return elements >= kMinParallelElements ? parallel : SerialParallel();
}

}  // namespace simplecpp::kernels
