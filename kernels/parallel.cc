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

// About 20-40 us of work on one core, several times what handing half of it to another core
// costs: the wake-up, and the op's input and output moving between the two cores' caches, which
// the next op pays for as well when it runs on one core. (In a small classifier, 1.2 M-MAC
// pointwise convolutions on two threads made themselves and the single-threaded depthwise
// convolutions after them slower than the whole model on one thread.)
constexpr int64_t kMinParallelMacs = int64_t{1} << 21;
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
