// Eigen ThreadPool adapter (graph/thread_pool.h).
#include "graph/thread_pool.h"

#include <algorithm>
#include <thread>

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define SIMPLECPP_HAVE_THREADS 1
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/ThreadPool>
#endif

namespace simplecpp::graph {
namespace {

class SerialPool final : public kernels::Parallel {
 public:
  int num_threads() const override { return 1; }
  void For(int64_t n, const std::function<void(int64_t, int64_t)>& fn) const override {
    if (n > 0) fn(0, n);
  }
};

#ifdef SIMPLECPP_HAVE_THREADS
class EigenPool final : public kernels::Parallel {
 public:
  explicit EigenPool(int threads) : threads_(threads), pool_(threads - 1) {}
  int num_threads() const override { return threads_; }
  void For(int64_t n, const std::function<void(int64_t, int64_t)>& fn) const override {
    if (n <= 0) return;
    const int64_t parts = std::min<int64_t>(n, threads_);
    if (parts == 1) {
      fn(0, n);
      return;
    }
    // Contiguous ranges; the caller runs the first. Which thread runs which tasks does not change
    // any result: tasks are independent by contract.
    Eigen::Barrier barrier(static_cast<unsigned>(parts - 1));
    for (int64_t p = 1; p < parts; ++p) {
      const int64_t begin = n * p / parts, end = n * (p + 1) / parts;
      pool_.Schedule([&fn, &barrier, begin, end] {
        fn(begin, end);
        barrier.Notify();
      });
    }
    fn(0, n / parts);
    barrier.Wait();
  }

 private:
  int threads_;
  mutable Eigen::ThreadPool pool_;
};
#endif

}  // namespace

int DefaultThreadCount() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::unique_ptr<kernels::Parallel> MakeThreadPool(int threads) {
  if (threads <= 0) threads = DefaultThreadCount();
#ifdef SIMPLECPP_HAVE_THREADS
  if (threads > 1) return std::make_unique<EigenPool>(threads);
#endif
  return std::make_unique<SerialPool>();
}

}  // namespace simplecpp::graph
