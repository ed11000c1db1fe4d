// Intra-op thread pool (graph/thread_pool.h): workers that stay awake between the ops of a run.
//
// Why not a general task queue (Eigen's ThreadPool, used before): posting a task to a sleeping
// worker is a futex wake-up system call on the posting thread, several microseconds in a virtual
// machine, paid by nearly every parallel op because the serial code between two ops is longer
// than the queue's spin (bench/README.md has the figures). Here the calling thread publishes one
// job by bumping a counter; workers that ran a job recently are still polling that counter and
// join without any system call; they go to sleep only after kSpinNanoseconds without work (a
// wake-up is paid once per idle period, not once per op).
#include "graph/thread_pool.h"

#include <algorithm>
#include <thread>

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define SIMPLECPP_HAVE_THREADS 1
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>
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
// How long an idle worker polls for the next job before it sleeps: longer than the serial gaps
// between the parallel ops of a run, short enough not to hold a core long after the run ends.
constexpr int64_t kSpinNanoseconds = 200 * 1000;

// The pool whose job this thread is running tasks of, if any: a For called from inside a task
// (a kernel handing the same Parallel to another kernel) runs on the calling thread, since the
// pool holds one job at a time.
thread_local const void* tls_in_job = nullptr;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// One job at a time (For calls on one pool do not overlap: a session runs its ops in order).
//
// Job protocol, all on `epoch_` (sequentially consistent):
//   - odd epoch: the caller is (re)writing the job fields; workers keep out.
//   - even epoch e: job e is open. A worker announces itself in `busy_`, then re-reads the
//     epoch; only if it is still e does it touch the job. The caller, before rewriting the
//     fields for the next job, makes the epoch odd and waits for `busy_` to drain. (The store
//     of one side and the load of the other cannot both miss each other.)
// Tasks are claimed in chunks from `next_`; the caller returns once `done_` reaches n, so a late
// worker finds nothing to claim and never calls the caller's TaskFn after For returned.
class SpinPool final : public kernels::Parallel {
 public:
  explicit SpinPool(int threads) : threads_(threads) {
    workers_.reserve(static_cast<size_t>(threads - 1));
    for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }
  ~SpinPool() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int num_threads() const override { return threads_; }

  void For(int64_t n, kernels::TaskFn fn) const override {
    if (n <= 0) return;
    if (n == 1 || tls_in_job == this) {
      fn(0, n);
      return;
    }
    std::lock_guard<std::mutex> one_job(job_mu_);  // concurrent callers take turns
    epoch_.fetch_add(1);                            // odd: closed
    while (busy_.load() != 0) CpuRelax();           // stragglers of the previous job
    n_ = n;
    // Which thread runs which task does not change any result: tasks are independent by
    // contract (kernels/parallel.h). A few chunks per thread balance uneven tasks.
    chunk_ = std::max<int64_t>(1, n / (4 * static_cast<int64_t>(threads_)));
    fn_ = &fn;
    next_.store(0);
    done_.store(0);
    epoch_.fetch_add(1);  // even: open
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
    Drain();
    // Chunks claimed by workers may still be running: wait for them (they are already on a CPU).
    for (int spins = 0; done_.load(std::memory_order_acquire) < n; ++spins) {
      if (spins > 64) std::this_thread::yield();
      CpuRelax();
    }
  }

 private:
  void Drain() const {
    tls_in_job = this;
    for (;;) {
      const int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (begin >= n_) break;
      const int64_t end = std::min(begin + chunk_, n_);
      (*fn_)(begin, end);
      done_.fetch_add(end - begin, std::memory_order_release);
    }
    tls_in_job = nullptr;
  }

  // Runs job `e` if it is still open when this worker has announced itself.
  void Join(uint64_t e) const {
    busy_.fetch_add(1);
    if (epoch_.load() == e) Drain();
    busy_.fetch_sub(1);
  }

  void WorkerLoop() const {
    uint64_t seen = 0;
    auto idle_since = std::chrono::steady_clock::now();
    for (int polls = 0;; ++polls) {
      if (stop_.load(std::memory_order_relaxed)) return;
      const uint64_t e = epoch_.load();
      if ((e & 1) == 0 && e != seen) {
        seen = e;
        Join(e);
        idle_since = std::chrono::steady_clock::now();
        polls = 0;
        continue;
      }
      // Yielding rather than pausing: on a machine where other processes compete for the
      // cores, a polling worker must not take CPU time from the thread doing the serial work.
      std::this_thread::yield();
      if ((polls & 15) != 15) continue;
      if (std::chrono::steady_clock::now() - idle_since <
          std::chrono::nanoseconds(kSpinNanoseconds)) {
        continue;
      }
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1);
      cv_.wait(lock, [&] {
        const uint64_t now = epoch_.load();
        return stop_.load() || ((now & 1) == 0 && now != seen);
      });
      sleepers_.fetch_sub(1);
      idle_since = std::chrono::steady_clock::now();
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  // The current job (written only while the epoch is odd and no worker is busy).
  mutable std::mutex job_mu_;
  mutable int64_t n_ = 0;
  mutable int64_t chunk_ = 1;
  mutable const kernels::TaskFn* fn_ = nullptr;
  mutable std::atomic<int64_t> next_{0};
  mutable std::atomic<int64_t> done_{0};
  mutable std::atomic<uint64_t> epoch_{0};
  mutable std::atomic<int> busy_{0};
  // Sleeping workers.
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
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
  if (threads > 1) return std::make_unique<SpinPool>(threads);
#endif
  return std::make_unique<SerialPool>();
}

}  // namespace simplecpp::graph
