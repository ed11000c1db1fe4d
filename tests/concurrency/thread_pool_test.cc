// graph/thread_pool.cc's job protocol under stress (this executable also runs under
// ThreadSanitizer, scripts/tsan-test.sh): many back-to-back jobs of every size, jobs after the
// workers went to sleep, a For called from inside a task, and two threads sharing one pool.
#include "graph/thread_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace simplecpp::graph {
namespace {

// Runs a job of n tasks on `pool` and checks that each ran exactly once.
void CheckJob(const kernels::Parallel& pool, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto& h : hits) h.store(0);
  pool.For(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) REQUIRE(hits[static_cast<size_t>(i)].load() == 1);
}

TEST_CASE("Thread pool: back-to-back jobs of every size run each task once") {
  for (int threads : {2, 3, 8}) {
    CAPTURE(threads);
    auto pool = MakeThreadPool(threads);
    for (int round = 0; round < 3; ++round) {
      for (int64_t n = 0; n <= 200; ++n) CheckJob(*pool, n);
    }
  }
}

TEST_CASE("Thread pool: jobs after the workers went to sleep") {
  auto pool = MakeThreadPool(2);
  for (int round = 0; round < 5; ++round) {
    CheckJob(*pool, 64);
    // Longer than the workers' polling time, so they sleep and must be woken.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
}

TEST_CASE("Thread pool: a For called from inside a task runs every inner task once") {
  auto pool = MakeThreadPool(4);
  std::vector<std::atomic<int>> hits(16 * 32);
  for (auto& h : hits) h.store(0);
  pool->For(16, [&](int64_t b, int64_t e) {
    for (int64_t outer = b; outer < e; ++outer) {
      pool->For(32, [&](int64_t ib, int64_t ie) {
        for (int64_t i = ib; i < ie; ++i) hits[static_cast<size_t>(outer * 32 + i)].fetch_add(1);
      });
    }
  });
  for (auto& h : hits) REQUIRE(h.load() == 1);
}

TEST_CASE("Thread pool: two threads sharing one pool") {
  auto pool = MakeThreadPool(3);
  std::atomic<int> failures{0};
  auto worker = [&](int64_t base) {
    for (int job = 0; job < 300; ++job) {
      const int64_t n = base + job % 50;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (auto& h : hits) h.store(0);
      pool->For(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (auto& h : hits) failures.fetch_add(h.load() == 1 ? 0 : 1);
    }
  };
  std::thread a(worker, 1), b(worker, 7);
  a.join();
  b.join();
  CHECK(failures.load() == 0);
}

}  // namespace
}  // namespace simplecpp::graph
