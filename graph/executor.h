// Compiling a Graph into an immutable Plan, and running a Plan.
//
// Plan::Build (at load): topological order (cycles and dangling names are errors), op lookup in
// the registry for the model's opsets, dtype inference for every value (unsupported op / version /
// dtype combination -> load-time Error naming node, op, opset and dtypes), constant folding of
// initializer-only subgraphs, static shape inference where graph input shapes are known, and each
// value's last use (for buffer reuse).
// Executor (one per session): runs the steps in order; prepares each node once per input-shape
// signature and reuses the RunFn while shapes repeat; hands buffers back to the session's pool
// as soon as a value's last consumer has run.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "graph/op.h"

namespace simplecpp::graph {

struct PlanOptions {
  bool constant_folding = true;
  // Replace quantized patterns (DynamicQuantizeLinear -> MatMulInteger/ConvInteger -> Cast -> Mul,
  // QDQ around MatMul/Gemm/Conv) by fused integer ops: graph/passes/quant_fusion.h.
  bool fuse_quantized = true;
  // Fuse chains of float elementwise ops into one pass (graph/passes/elementwise_fusion.h);
  // bit-identical results.
  bool fuse_elementwise = true;
  // Fold an inference BatchNormalization into the Conv before it (with fuse_elementwise;
  // graph/passes/conv_batchnorm_fold.h): not bit-identical, within float32 rounding.
  bool fold_batch_norm = true;
  int64_t max_nodes = 1 << 22;
  int64_t max_graph_depth = 64;
  // Per-tensor limits, checked at load for statically known shapes and at run time for every
  // output; max_total_bytes bounds an executor's working memory (its pool's bytes in use).
  TensorLimits tensor_limits;
  int64_t max_total_bytes = std::numeric_limits<int64_t>::max();
  // Iterations of any one Loop node per run (checked by the Loop op at run time).
  int64_t max_loop_iterations = std::numeric_limits<int64_t>::max();
  // Told of the bytes of a weight that a load-time pass has just copied into another layout (a
  // blocked weight repacked for MatMulNBits, a range of its rows at a time), so that the loader
  // can give back the pages it mapped for them right away rather than after the whole load: the
  // source and its copy are then never all resident at once. Only a hint (the bytes may be read
  // again); may be empty.
  std::function<void(const void* data, size_t bytes)> release_weight;
};

// What Build learned about one value.
struct ValueState {
  std::string name;
  DType dtype = DType::kUndefined;  // == type.dtype
  ValueType type;                    // tensor, sequence or optional
  bool static_shape = false;  // dims known at load
  Dims dims;
  bool is_constant = false;   // initializer or folded
  Tensor constant;
};

struct PlanStep {
  Node node;
  int64_t opset = 0;
  int since_version = 0;
  std::unique_ptr<Op> op;
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
  std::vector<int> value_inputs;  // op->ValueInputs()
  std::vector<int> release_after;  // value ids whose last consumer is this step
  RunFn static_run;                // prepared at load when every input shape was known
  std::vector<PrepareContext::OutputSpec> static_outputs;
};

class Plan {
 public:
  // `outer_scope` names values a subgraph may read from its enclosing graph, with their dtypes.
  static std::shared_ptr<const Plan> Build(const Graph& graph, const OpsetMap& opsets,
                                           const PlanOptions& options,
                                           const std::map<std::string, ValueType>& outer_scope = {},
                                           int depth = 0,
                                           const std::map<std::string, Tensor>* outer_constants = nullptr);

  const std::vector<ValueInfo>& inputs() const { return inputs_; }   // excludes initializers
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const std::vector<ValueState>& values() const { return values_; }
  const std::vector<PlanStep>& steps() const { return steps_; }
  const std::vector<int>& input_ids() const { return input_ids_; }
  const std::vector<int>& output_ids() const { return output_ids_; }
  const std::vector<std::pair<std::string, int>>& outer_ids() const { return outer_ids_; }
  int64_t folded_nodes() const { return folded_nodes_; }
  const PlanOptions& options() const { return options_; }  // what Build was given
  int FindValue(const std::string& name) const;  // -1 when unknown

 private:
  std::vector<ValueInfo> inputs_, outputs_;
  std::vector<ValueState> values_;
  std::vector<PlanStep> steps_;
  std::vector<int> input_ids_, output_ids_;
  std::vector<std::pair<std::string, int>> outer_ids_;
  std::map<std::string, int> ids_;
  int64_t folded_nodes_ = 0;
  PlanOptions options_;
  friend class PlanBuilder;
};

class BufferPool;

class Executor {
 public:
  explicit Executor(std::shared_ptr<const Plan> plan, const kernels::Parallel* parallel = nullptr);
  ~Executor();

  // inputs: name -> value for every graph input; outer: values of the enclosing graph (for
  // subgraphs). Returns the graph outputs in order. Throws Error on bad inputs.
  std::vector<Value> RunValues(const std::map<std::string, Value>& inputs,
                               const std::map<std::string, Value>* outer = nullptr);
  // Tensors only: throws Error(kInvalidArgument) when an output is a sequence or optional.
  std::vector<Tensor> Run(const std::map<std::string, Tensor>& inputs);

  void set_profiling(bool on) { profiling_ = on; }
  struct Timing {
    const Node* node;
    double milliseconds;
    Dims output_dims;  // the first output's dims when Prepare fixed them, else empty
    bool output_dims_known = false;
  };
  const std::vector<Timing>& last_profile() const { return profile_; }
  const Plan& plan() const { return *plan_; }
  // Buffers this executor's pool has obtained from the system so far (steady state: constant).
  size_t buffer_allocations() const;
  size_t peak_bytes_in_use() const;

 private:
  struct NodeCache {
    bool valid = false;
    std::vector<int64_t> key;
    RunFn run;
    std::vector<PrepareContext::OutputSpec> outputs;
  };
  std::shared_ptr<const Plan> plan_;
  const kernels::Parallel* parallel_;
  std::shared_ptr<BufferPool> pool_;
  std::vector<NodeCache> caches_;
  std::vector<Value> values_;
  bool values_clear_ = false;  // every entry of values_ empty (set when a run ends normally)
  // The plan's constants as values, made once (a run reads them here instead of copying each
  // into values_).
  std::vector<Value> constants_;
  std::vector<int64_t> key_scratch_;
  bool profiling_ = false;
  std::vector<Timing> profile_;
  // Per-step scratch of RunValues, kept so that a steady-state run allocates nothing for them.
  std::vector<const Tensor*> in_ptrs_;
  std::vector<const Value*> in_values_;
  std::vector<Tensor> outs_;
  std::vector<Value> value_outs_;

  // Value id's value in the current run: the plan's constant, else the run's.
  const Value& ValueOf(int id) const {
    return plan_->values()[id].is_constant ? constants_[id] : values_[id];
  }
  // The phases of RunValues.
  void BindInputs(const std::map<std::string, Value>& inputs,
                  const std::map<std::string, Value>* outer);
  void GatherStepInputs(const PlanStep& step, bool takes_values);
  // The run function and output specs of step s for its current inputs: prepared at load, or
  // prepared once per input-shape signature and cached.
  std::pair<const RunFn*, const std::vector<PrepareContext::OutputSpec>*> PreparedStep(size_t s);
  void RunStep(const PlanStep& step, const RunFn& run,
               const std::vector<PrepareContext::OutputSpec>& specs, bool takes_values);
  void StoreStepOutputs(const PlanStep& step, bool takes_values);
};

}  // namespace simplecpp::graph
