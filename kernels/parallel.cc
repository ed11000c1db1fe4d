// The serial Parallel: every task on the calling thread.
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

}  // namespace simplecpp::kernels
