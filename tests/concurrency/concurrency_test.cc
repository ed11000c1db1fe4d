// Concurrency: one loaded Model (each built-in model in turn, the segmentation ones at 64x64)
// shared by 8 threads, each building its own Session and running it on its own input, all at the
// same time; every result must be byte-identical to a sequential run of the same input. Once with
// serial sessions (threads = 1) and once with intra-op threads (threads = 2: 8 Eigen thread pools
// working at once). Built alone into simplecpp_concurrency_test (ctest "concurrency"), which
// scripts/tsan-test.sh also runs under ThreadSanitizer.
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "determinism/determinism_util.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

namespace simplecpp {
namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 4;

// Releases every waiting thread at once, so the sessions are built and run concurrently.
class StartGate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

bool SameOutputs(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || !t.BitwiseEquals(it->second)) return false;
  }
  return true;
}

// Runs `graph_model` on kThreads threads at once (each its own Session with `intra_op_threads`
// and its own input) and compares every run with a sequential single-threaded run.
void CheckConcurrentSessions(const std::string& model_name, const graph::Model& graph_model,
                             int intra_op_threads) {
  CAPTURE(model_name);
  CAPTURE(intra_op_threads);
  const std::string bytes = onnx::WriteModel(graph_model);
  const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());

  std::vector<std::map<std::string, Tensor>> inputs, sequential;
  {
    Session s(model, SessionOptions{1});
    for (int t = 0; t < kThreads; ++t) {
      inputs.push_back(determinism::RandomInputs(model, 1000 + 10 * t));
      sequential.push_back(s.Run(inputs.back()));
    }
  }
  // Different inputs must give different outputs, or the comparison below proves little.
  REQUIRE_FALSE(SameOutputs(sequential[0], sequential[1]));

  StartGate gate;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        gate.Wait();
        SessionOptions options;
        options.threads = intra_op_threads;
        Session session(model, options);
        for (int r = 0; r < kRunsPerThread; ++r) {
          if (!SameOutputs(session.Run(inputs[t]), sequential[t])) ++mismatches[t];
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  gate.Open();
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(errors[t] == "");
    CHECK(mismatches[t] == 0);
  }
}

TEST_CASE("one Model, 8 concurrent serial Sessions with different inputs: sequential bytes") {
  for (const auto& m : determinism::BuiltinModelsForTests()) {
    CheckConcurrentSessions(m.first, m.second, 1);
  }
}

TEST_CASE("one Model, 8 concurrent Sessions with 2 intra-op threads each: sequential bytes") {
  for (const auto& m : determinism::BuiltinModelsForTests()) {
    CheckConcurrentSessions(m.first, m.second, 2);
  }
}

}  // namespace
}  // namespace simplecpp

#endif
