// Session::memory_stats and Model::initializer_bytes: the working-memory report of
// `simplecpp run --profile`, and the steady-state promise behind it (a run after the first one
// obtains no new memory from the system when the previous outputs were released).
#include <doctest/doctest.h>

#include <string>

#include "simplecpp/api/builtin_models.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp {
namespace {

Model LoadBuiltin(const std::string& name) {
  const std::string bytes = onnx::WriteModel(builtin::MakeBuiltinModel(name));
  return Model::LoadFromBytes(bytes.data(), bytes.size());
}

// Pseudo-random inputs of the declared shapes (symbolic dims as 1).
std::map<std::string, Tensor> InputsFor(const Model& model) {
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 11;
  for (const ValueDescription& in : model.inputs()) {
    Dims dims = in.dims;
    for (int64_t& d : dims) {
      if (d < 0) d = 1;
    }
    if (in.dtype == DType::kFloat32) {
      inputs[in.name] = builtin::RandomFloatTensor(dims, seed++, -1.0f, 1.0f);
    } else {
      inputs[in.name] = Tensor(in.dtype, dims);  // zeros: valid ids / lengths for the builtins
    }
  }
  return inputs;
}

TEST_CASE("Session::memory_stats: steady-state runs obtain no new buffers, for every thread count") {
  // Every built-in model but the two 1024x1024 segmentation networks (slow under sanitizers;
  // same ops as cnn and crnn).
  for (const char* name : {"cnn", "transformer", "mlp", "vad", "crnn", "bert"}) {
    for (int threads : {1, 2, 3}) {
      CAPTURE(name);
      CAPTURE(threads);
      const Model model = LoadBuiltin(name);
      SessionOptions options;
      options.threads = threads;
      Session session(model, options);
      CHECK(session.memory_stats().peak_bytes_in_use == 0);
      CHECK(session.memory_stats().buffer_allocations == 0);
      const auto inputs = InputsFor(model);
      session.Run(inputs);  // outputs released at once
      const Session::MemoryStats first = session.memory_stats();
      CHECK(first.peak_bytes_in_use > 0);
      CHECK(first.buffer_allocations > 0);
      for (int run = 0; run < 4; ++run) session.Run(inputs);
      const Session::MemoryStats later = session.memory_stats();
      CHECK(later.buffer_allocations == first.buffer_allocations);
      CHECK(later.peak_bytes_in_use == first.peak_bytes_in_use);

      // Keeping each run's outputs until the next one returns (as `simplecpp run --repeat` does)
      // costs one more set of output buffers, once.
      auto kept = session.Run(inputs);
      kept = session.Run(inputs);
      const int64_t settled = session.memory_stats().buffer_allocations;
      for (int run = 0; run < 3; ++run) kept = session.Run(inputs);
      CHECK(session.memory_stats().buffer_allocations == settled);
    }
  }
}

TEST_CASE("Model::initializer_bytes counts the weights") {
  const graph::Model cnn = builtin::MakeBuiltinModel("cnn");
  int64_t expected = 0;
  for (const auto& [name, t] : cnn.graph.initializers) expected += static_cast<int64_t>(t.byte_size());
  CHECK(expected > 0);
  CHECK(LoadBuiltin("cnn").initializer_bytes() == expected);
}

TEST_CASE("Session::last_profile: one timing per node, with the output shapes Prepare fixed") {
  const Model model = LoadBuiltin("cnn");
  Session session(model, SessionOptions{});
  session.set_profiling(true);
  const auto inputs = InputsFor(model);
  const auto outputs = session.Run(inputs);
  const auto profile = session.last_profile();
  REQUIRE_FALSE(profile.empty());
  int known = 0;
  for (const auto& t : profile) {
    CHECK(t.milliseconds >= 0.0);
    CHECK_FALSE(t.op_type.empty());
    if (!t.output_shape_known) continue;
    ++known;
    for (int64_t d : t.output_shape) CHECK(d >= 0);
  }
  CHECK(known > 0);  // a static CNN: every shape is fixed before its node runs
  // The last node writes the graph's output: its shape is the output tensor's.
  const auto& last = profile.back();
  REQUIRE(last.output_shape_known);
  bool matches_an_output = false;
  for (const auto& [name, t] : outputs) matches_an_output |= t.dims() == last.output_shape;
  CHECK(matches_an_output);
}

}  // namespace
}  // namespace simplecpp
