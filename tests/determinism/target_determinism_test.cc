// Highway target determinism: every ONNX node conformance case ($SIMPLECPP_ONNX_TESTS/node; skips
// and passes when unset) and every built-in model runs under each compiled target in turn
// (kernels::ScopedTarget; the model is loaded under the forced target too, since constant folding
// runs kernels). Against the first (best) target:
//   - integer, bool, string and every other non-float output: byte-identical;
//   - float32/float64/float16 outputs: |x_t - x_best| <= atol + rtol * |x_best| with the
//     conformance runner's rtol = 1e-3, atol = 1e-7 (NaN equals NaN, infinities must match):
//     targets differ legitimately only by FMA contraction and lane-count-dependent summation
//     order, both far below that;
//   - bfloat16 outputs: rtol = 2^-7 (one bfloat16 rounding step, 8 significant bits), same atol;
//   - dtype, dims and the error a run raises: identical.
// Unseeded random ops (determinism_util.h) are compared on dtype and dims only.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "determinism/determinism_util.h"
#include "kernels/targets.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp::determinism {
namespace {

constexpr Tolerance kTolerance{1e-3, 1e-7};

// Loads and runs under the current target, on the calling thread.
Outcome LoadAndRun(const std::string& path, const std::map<std::string, Tensor>& inputs) {
  try {
    const Model model = Model::Load(path);
    Session session(model, SessionOptions{1});
    return RunOnce(session, inputs);
  } catch (const Error& e) {
    Outcome o;
    if (e.code() == ErrorCode::kUnsupported) {
      o.unsupported = true;
    } else {
      o.error = "code " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
    }
    return o;
  }
}

TEST_CASE("conformance cases: every compiled Highway target agrees with the best one") {
  const std::string dir = NodeTestsDir();
  if (dir.empty()) {
    MESSAGE("SIMPLECPP_ONNX_TESTS is not set (or has no node/ folder): skipping");
    return;
  }
  const std::vector<kernels::Target> targets = kernels::CompiledTargets();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ConformanceCase> cases = LoadAllCases(dir);
  std::vector<Outcome> reference(cases.size());
  int mismatches = 0;
  std::string names;
  for (size_t t = 0; t < targets.size(); ++t) {
    kernels::ScopedTarget scoped(targets[t]);
    CAPTURE(targets[t].name);
    names += (t ? ", " : "") + targets[t].name;
    for (size_t i = 0; i < cases.size(); ++i) {
      const ConformanceCase& c = cases[i];
      Outcome o = LoadAndRun(c.model_path, c.inputs);
      if (t == 0) {
        reference[i] = std::move(o);
        continue;
      }
      if (reference[i].unsupported && o.unsupported) continue;
      const std::string diff = CompareOutcomes(reference[i], o, c.unseeded_random, &kTolerance);
      if (!diff.empty()) ++mismatches;
      CHECK_MESSAGE(diff.empty(), c.name << ": " << targets[t].name << " vs " << targets[0].name
                                         << ": " << diff);
    }
  }
  MESSAGE(cases.size() << " cases over targets " << names << ": " << mismatches
                       << " mismatches; " << SecondsSince(start) << " s");
}

TEST_CASE("built-in models: every compiled Highway target agrees with the best one") {
  const std::vector<kernels::Target> targets = kernels::CompiledTargets();
  for (const auto& entry : BuiltinModelsForTests()) {
    const std::string& name = entry.first;
    CAPTURE(name);
    const std::string bytes = onnx::WriteModel(entry.second);
    std::map<std::string, Tensor> inputs;
    Outcome reference;
    for (size_t t = 0; t < targets.size(); ++t) {
      kernels::ScopedTarget scoped(targets[t]);
      CAPTURE(targets[t].name);
      const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
      if (t == 0) inputs = RandomInputs(model, 23);
      Session session(model, SessionOptions{1});
      Outcome o = RunOnce(session, inputs);
      REQUIRE_MESSAGE(o.error.empty(), o.error);
      if (t == 0) {
        reference = std::move(o);
      } else {
        CHECK(CompareOutcomes(reference, o, false, &kTolerance) == "");
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::determinism
