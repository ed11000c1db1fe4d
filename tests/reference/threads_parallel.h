// A kernels::Parallel for the kernel tests, kept beside the scalar references that every lower
// layer's tests may include: `threads` std::threads, thread t running tasks num_tasks - 1 - t,
// num_tasks - 1 - t - threads, ... one at a time, so any dependence of a result on the
// task-to-thread assignment or on the task order would show. WebAssembly without pthreads runs
// each thread's share in turn, which still reorders the tasks the same way.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/parallel.h"

namespace simplecpp::kernels::test_util {

class ThreadsParallel final : public Parallel {
 public:
  explicit ThreadsParallel(int threads) : threads_(threads) {}
  int num_threads() const override { return threads_; }
  void For(int64_t num_tasks, TaskFn fn) const override {
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
    std::vector<std::thread> pool;
    for (int t = 0; t < threads_; ++t) {
      pool.emplace_back([&, t] {
        for (int64_t i = num_tasks - 1 - t; i >= 0; i -= threads_) fn(i, i + 1);
      });
    }
    for (auto& th : pool) th.join();
#else
    for (int t = 0; t < threads_; ++t) {
      for (int64_t i = num_tasks - 1 - t; i >= 0; i -= threads_) fn(i, i + 1);
    }
#endif
  }

 private:
  int threads_;
};

}  // namespace simplecpp::kernels::test_util
