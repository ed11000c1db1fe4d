// Thread-count determinism: every ONNX node conformance case ($SIMPLECPP_ONNX_TESTS/node; the test
// reports that it skips and passes when the variable is unset) and every built-in model must give
// byte-identical outputs (dtype, dims, bytes) with 1, 2, 3 and 8 intra-op threads, and when the
// same Session runs again (prepared-kernel cache and buffer pool reused). Kernels split work into
// tasks whose boundaries depend only on the problem size (kernels/parallel.h), so nothing may
// change with the thread count.
//
// Cost: the 8-thread session (7 extra threads per case) runs only for cases whose inputs plus
// outputs hold at least kEightThreadMinBytes, where a kernel can have enough tasks for 8 threads to
// split them differently from 3; 2 and 3 threads run for every case. Unseeded random ops may
// differ between runs (see determinism_util.h) and are compared on dtype and dims only.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "determinism/determinism_util.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp::determinism {
namespace {

constexpr size_t kEightThreadMinBytes = 4096;

size_t OutputBytes(const Outcome& o) {
  size_t n = 0;
  for (const auto& [name, t] : o.outputs) n += t.byte_size();
  return n;
}

Session MakeSession(const Model& model, int threads) {
  SessionOptions options;
  options.threads = threads;
  return Session(model, options);
}

TEST_CASE("conformance cases: byte-identical outputs for 1, 2, 3 and 8 threads and repeated runs") {
  const std::string dir = NodeTestsDir();
  if (dir.empty()) {
    MESSAGE("SIMPLECPP_ONNX_TESTS is not set (or has no node/ folder): skipping");
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ConformanceCase> cases = LoadAllCases(dir);
  int compared = 0, with_eight = 0, unsupported = 0, random = 0, failed = 0;
  for (const ConformanceCase& c : cases) {
    CAPTURE(c.name);
    Session serial = MakeSession(*c.model, 1);
    const Outcome ref = RunOnce(serial, c.inputs);
    if (ref.unsupported) {
      ++unsupported;
      continue;
    }
    ++compared;
    random += c.unseeded_random;
    const bool shape_only = c.unseeded_random;
    auto check = [&](const Outcome& o, int threads, const char* what) {
      const std::string diff = CompareOutcomes(ref, o, shape_only);
      if (!diff.empty()) ++failed;
      CHECK_MESSAGE(diff.empty(), c.name << ": " << threads << " threads, " << what << ": " << diff);
    };
    check(RunOnce(serial, c.inputs), 1, "second run of the same session");
    const bool eight = c.input_bytes + OutputBytes(ref) >= kEightThreadMinBytes;
    with_eight += eight;
    for (int threads : {2, 3, 8}) {
      if (threads == 8 && !eight) continue;
      Session s = MakeSession(*c.model, threads);
      check(RunOnce(s, c.inputs), threads, "first run");
      if (threads == 8) check(RunOnce(s, c.inputs), threads, "second run of the same session");
    }
  }
  MESSAGE(compared << " cases compared across 1/2/3 threads (" << with_eight << " also with 8), "
                   << unsupported << " unsupported at run time, " << random
                   << " with unseeded random ops compared on dtype/dims only, " << failed
                   << " mismatches; " << SecondsSince(start) << " s");
}

TEST_CASE("built-in models: byte-identical outputs for 1, 2, 3 and 8 threads and repeated runs") {
  for (const auto& entry : BuiltinModelsForTests()) {
    const std::string& name = entry.first;
    CAPTURE(name);
    const std::string bytes = onnx::WriteModel(entry.second);
    const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
    const std::map<std::string, Tensor> inputs = RandomInputs(model, 17);
    Session serial = MakeSession(model, 1);
    const Outcome ref = RunOnce(serial, inputs);
    REQUIRE_MESSAGE(ref.error.empty(), ref.error);
    REQUIRE_FALSE(ref.unsupported);
    CHECK(CompareOutcomes(ref, RunOnce(serial, inputs), false) == "");
    for (int threads : {2, 3, 8}) {
      CAPTURE(threads);
      Session s = MakeSession(model, threads);
      CHECK(CompareOutcomes(ref, RunOnce(s, inputs), false) == "");
      CHECK(CompareOutcomes(ref, RunOnce(s, inputs), false) == "");
    }
  }
}

}  // namespace
}  // namespace simplecpp::determinism
