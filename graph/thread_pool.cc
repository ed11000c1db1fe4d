// Eigen ThreadPool adapter (graph/thread_pool.h).
#include "graph/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
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
  void For(int64_t n, kernels::TaskFn fn) const override {
    if (n > 0) fn(0, n);
  }
};

#ifdef SIMPLECPP_HAVE_THREADS
// One For call's shared state. Tasks are claimed in chunks from `next`; whoever claims a chunk
// runs it. The caller returns once `done` reaches n, so a worker that wakes up late (the machine
// is busy, or the call was short) finds nothing left to claim and never touches `fn`: a small op
// costs about what it costs serially instead of waiting for a sleeping thread to wake.
struct ForState {
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  int64_t n = 0;
  int64_t chunk = 1;
  const kernels::TaskFn* fn = nullptr;

  void Drain() {
    for (;;) {
      const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      const int64_t end = std::min(begin + chunk, n);
      (*fn)(begin, end);
      done.fetch_add(end - begin, std::memory_order_release);
    }
  }
};

class EigenPool final : public kernels::Parallel {
 public:
  explicit EigenPool(int threads) : threads_(threads), pool_(threads - 1) {}
  int num_threads() const override { return threads_; }
  void For(int64_t n, kernels::TaskFn fn) const override {
    if (n <= 0) return;
    if (n == 1) {
      fn(0, n);
      return;
    }
    // Which thread runs which task does not change any result: tasks are independent by
    // contract (kernels/parallel.h). A few chunks per thread balance uneven tasks.
    auto state = std::make_shared<ForState>();
    state->n = n;
    state->chunk = std::max<int64_t>(1, n / (4 * static_cast<int64_t>(threads_)));
    state->fn = &fn;
    const int64_t chunks = (n + state->chunk - 1) / state->chunk;
    const int64_t helpers = std::min<int64_t>(threads_ - 1, chunks - 1);
    for (int64_t h = 0; h < helpers; ++h) {
      pool_.Schedule([state] { state->Drain(); });
    }
    state->Drain();
    // Chunks claimed by workers may still be running: wait for them (they are already on a CPU).
    for (int spins = 0; state->done.load(std::memory_order_acquire) < n; ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
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
