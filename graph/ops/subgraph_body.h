// A compiled subgraph (a GRAPH attribute: If/Loop/Scan bodies, FlexAttention's score_mod /
// prob_mod, ...) that ops of several families run with nested Executors. Internal to graph/ops.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/executor.h"
#include "graph/op.h"

namespace simplecpp::graph {

// A compiled body plus a free list of executors, so concurrent sessions (and nested calls) each
// get their own Executor while the prepared kernels of earlier runs are reused.
// A pooled executor moves between sessions, so it must not keep the Parallel of the session that
// created it (that session's thread pool may be gone: use after free): it runs through a
// forwarding Parallel pointed at the Parallel of the run that has checked the executor out.
// An executor whose run throws may hold partial state: it is dropped, not returned to the pool.
class SubgraphBody {
 public:
  explicit SubgraphBody(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {}
  const Plan& plan() const { return *plan_; }

  std::vector<Value> Run(const std::map<std::string, Value>& inputs,
                         const std::map<std::string, Value>& outer,
                         const kernels::Parallel& parallel) const;

 private:
  class ForwardingParallel final : public kernels::Parallel {
   public:
    int num_threads() const override { return target->num_threads(); }
    void For(int64_t n, kernels::TaskFn fn) const override { target->For(n, fn); }
    const kernels::Parallel* target = nullptr;
  };
  struct Pooled {
    ForwardingParallel parallel;
    std::unique_ptr<Executor> exec;  // destroyed before `parallel`
  };
  std::shared_ptr<const Plan> plan_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Pooled>> free_;
};

// Compiles `g` with the given input types (those with a known dtype replace the body's
// declarations; inputs past input_types.size() keep theirs). Declared body input shapes are not
// enforced: loop-carried values may change shape.
std::shared_ptr<const SubgraphBody> CompileSubgraphBody(const Graph& g, const SubgraphContext& ctx,
                                                        const std::vector<ValueType>& input_types);

}  // namespace simplecpp::graph
