// Shared helpers of the benchmark binaries: deterministic data, the simplecpp thread pool, the
// throughput counter, and one ONNX node run through the real executor (as a model runs it).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/float16_bits.h"
#include "graph/executor.h"
#include "graph/ir.h"
#include "graph/op.h"
#include "graph/thread_pool.h"
#include "simplecpp/tensor.h"

namespace simplecpp::bench {

// Uniform values in [lo, hi) from a fixed LCG (same data for every library).
inline std::vector<float> RandomFloats(int64_t n, uint32_t seed, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return v;
}

// Sets "GFLOP/s" (or "GOP/s") from the operations one iteration performs; the benchmarks use
// real time, so the rate is wall-clock throughput.
inline void SetRate(benchmark::State& state, double ops_per_iteration,
                    const char* name = "GFLOP/s") {
  state.counters[name] = benchmark::Counter(ops_per_iteration * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate);
}

// One node through Plan::Build + Executor::Run. Constant inputs become initializers (so the op
// prepacks weights at Prepare, as in a model); Run feeds the rest. `then` names one-input ops
// applied to the node's output in turn (e.g. an activation the plan's passes fuse into it).
// With `sliced` the graph's output is the first element of the result (a Slice of a tensor of
// rank `sliced`): the result itself is then an intermediate value, in a buffer the executor
// keeps between runs, as inside a model, instead of a new graph output per run (whose fresh
// pages a large result pays for on every run).
class NodeRunner {
 public:
  NodeRunner(const std::string& op_type, const std::vector<Tensor>& inputs,
             const std::vector<bool>& constant, const std::vector<graph::Attribute>& attributes,
             int threads, int64_t opset = 18, const std::vector<std::string>& then = {},
             int sliced = 0) {
    graph::Graph g;
    g.name = "bench_" + op_type;
    graph::Node node;
    node.name = op_type;
    node.op_type = op_type;
    node.attributes = attributes;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string name = "in" + std::to_string(i);
      node.inputs.push_back(name);
      if (constant[i]) {
        g.initializers.emplace_back(name, inputs[i]);
        continue;
      }
      graph::ValueInfo vi;
      vi.name = name;
      vi.type.kind = graph::TypeInfo::Kind::kTensor;
      vi.type.dtype = inputs[i].dtype();
      vi.type.has_shape = true;
      for (int64_t d : inputs[i].dims()) vi.type.dims.push_back(graph::Dim{d, ""});
      g.inputs.push_back(vi);
      feeds_[name] = inputs[i];
    }
    const std::string result = sliced > 0 ? "result" : "out";
    std::string last = then.empty() ? result : "y0";
    node.outputs.push_back(last);
    g.nodes.push_back(node);
    for (size_t i = 0; i < then.size(); ++i) {
      graph::Node next;
      next.name = then[i] + std::to_string(i);
      next.op_type = then[i];
      next.inputs.push_back(last);
      last = i + 1 == then.size() ? result : "y" + std::to_string(i + 1);
      next.outputs.push_back(last);
      g.nodes.push_back(next);
    }
    if (sliced > 0) {
      Tensor starts(DType::kInt64, {sliced}), ends(DType::kInt64, {sliced});
      for (int d = 0; d < sliced; ++d) {
        starts.data<int64_t>()[d] = 0;
        ends.data<int64_t>()[d] = 1;
      }
      g.initializers.emplace_back("slice_starts", starts);
      g.initializers.emplace_back("slice_ends", ends);
      graph::Node slice;
      slice.name = "first_element";
      slice.op_type = "Slice";
      slice.inputs = {result, "slice_starts", "slice_ends"};
      slice.outputs = {"out"};
      g.nodes.push_back(slice);
    }
    graph::ValueInfo out;
    out.name = "out";
    g.outputs.push_back(out);
    graph::PlanOptions options;
    options.constant_folding = false;
    pool_ = graph::MakeThreadPool(threads);
    executor_ = std::make_unique<graph::Executor>(
        graph::Plan::Build(g, graph::OpsetMap{{graph::CanonicalDomain(""), opset}}, options), pool_.get());
  }
  std::vector<Tensor> Run() { return executor_->Run(feeds_); }

 private:
  std::map<std::string, Tensor> feeds_;
  std::unique_ptr<kernels::Parallel> pool_;
  std::unique_ptr<graph::Executor> executor_;
};

inline graph::Attribute AttrInt(const std::string& name, int64_t v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kInt;
  a.i = v;
  return a;
}
inline graph::Attribute AttrInts(const std::string& name, std::vector<int64_t> v) {
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kInts;
  a.ints = std::move(v);
  return a;
}

inline Tensor TensorF32(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kFloat32, dims);
  const auto v = RandomFloats(t.num_elements(), seed);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

// TensorF32's values rounded to float16.
inline Tensor TensorF16(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kFloat16, dims);
  const auto v = RandomFloats(t.num_elements(), seed);
  auto* bits = static_cast<uint16_t*>(t.raw_data());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = FloatToHalfBits(v[i]);
  return t;
}

}  // namespace simplecpp::bench
