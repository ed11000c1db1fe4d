// Plan building and execution (graph/executor.h).
#include "graph/executor.h"

#include <chrono>
#include <cstring>
#include <set>

#include "graph/buffer_pool.h"
#include "graph/node_typing.h"
#include "graph/passes/blocked_dequant_fusion.h"
#include "graph/passes/conv_batchnorm_fold.h"
#include "graph/passes/conv_post_fusion.h"
#include "graph/passes/elementwise_fusion.h"
#include "graph/passes/quant_lookup_fusion.h"
#include "graph/passes/quant_fusion.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

// Dims of a declared tensor type when every dim is known.
bool StaticDims(const TypeInfo& type, Dims* dims) {
  if (type.kind != TypeInfo::Kind::kTensor || !type.has_shape) return false;
  dims->clear();
  for (const Dim& d : type.dims) {
    if (!d.known()) return false;
    dims->push_back(d.value);
  }
  return true;
}

}  // namespace

class PlanBuilder {
 public:
  PlanBuilder(const Graph& graph, const OpsetMap& opsets, const PlanOptions& options,
              const std::map<std::string, ValueType>& outer_scope, int depth,
              const std::map<std::string, Tensor>* outer_constants)
      : graph_(graph),
        opsets_(opsets),
        options_(options),
        outer_(outer_scope),
        outer_constants_(outer_constants),
        depth_(depth) {}

  std::shared_ptr<const Plan> Build() {
    auto plan = std::make_shared<Plan>();
    plan_ = plan.get();
    plan_->options_ = options_;
    const ScopedTensorLimits limits(options_.tensor_limits);  // checked by set_output at load
    if (depth_ > options_.max_graph_depth) {
      throw Error(ErrorCode::kLimitExceeded, "graph '" + graph_.name + "': subgraph nesting depth " +
                                                 std::to_string(depth_) + " exceeds the limit " +
                                                 std::to_string(options_.max_graph_depth));
    }
    if (static_cast<int64_t>(graph_.nodes.size()) > options_.max_nodes) {
      throw Error(ErrorCode::kLimitExceeded,
                  "graph '" + graph_.name + "' has " + std::to_string(graph_.nodes.size()) +
                      " nodes, more than the limit " + std::to_string(options_.max_nodes));
    }
    AddSources();
    const std::vector<size_t> order = TopologicalOrder();
    for (size_t index : order) AddStep(graph_.nodes[index]);
    if (options_.fuse_elementwise) FuseElementwise();
    for (const ValueInfo& out : graph_.outputs) {
      const int id = plan_->FindValue(out.name);
      if (id < 0) {
        throw Error(ErrorCode::kInvalidModel,
                    "graph output '" + out.name + "' is not produced by any node or input");
      }
      plan_->output_ids_.push_back(id);
      plan_->outputs_.push_back(out);
      TypeInfo& declared = plan_->outputs_.back().type;
      const ValueType& actual = plan_->values_[id].type;
      if (!actual.is_tensor()) {
        // The plan's type wins: the declaration may leave the element type out.
        declared = TypeInfoOf(actual);
        continue;
      }
      if (declared.kind == TypeInfo::Kind::kUnknown) declared.kind = TypeInfo::Kind::kTensor;
      if (declared.dtype == DType::kUndefined) declared.dtype = actual.dtype;
    }
    DropUnreadConstants();
    ComputeLastUses();
    return plan;
  }

 private:
  int NewValue(const std::string& name, const ValueType& type) {
    const int id = static_cast<int>(plan_->values_.size());
    ValueState v;
    v.name = name;
    v.dtype = type.dtype;
    v.type = type;
    plan_->values_.push_back(std::move(v));
    plan_->ids_[name] = id;
    return id;
  }

  void AddSources() {
    // Reserve every value up front: ops may keep pointers to constants (ValueState::constant)
    // captured at Prepare, so the vector must never reallocate once steps are built.
    size_t capacity = graph_.initializers.size() + graph_.inputs.size() + outer_.size();
    for (const Node& n : graph_.nodes) capacity += n.outputs.size();
    plan_->values_.reserve(capacity);
    std::set<std::string> initializer_names;
    for (const auto& [name, tensor] : graph_.initializers) {
      if (!initializer_names.insert(name).second) {
        throw Error(ErrorCode::kInvalidModel, "duplicate initializer '" + name + "'");
      }
      const int id = NewValue(name, ValueType::TensorOf(tensor.dtype()));
      ValueState& v = plan_->values_[id];
      v.is_constant = true;
      v.constant = tensor;
      v.static_shape = true;
      v.dims = tensor.dims();
    }
    for (const ValueInfo& in : graph_.inputs) {
      // IR < 4: initializers may also be listed as inputs; they stay constants here.
      if (initializer_names.count(in.name)) continue;
      if (plan_->ids_.count(in.name)) {
        throw Error(ErrorCode::kInvalidModel, "graph input '" + in.name + "' is declared twice");
      }
      if (in.type.kind == TypeInfo::Kind::kUnknown) {
        throw Error(ErrorCode::kInvalidModel, "graph input '" + in.name + "' has no type");
      }
      const ValueType type = ValueTypeOf(in.type, "graph input '" + in.name + "'");
      if (type.dtype == DType::kUndefined) {
        throw Error(ErrorCode::kInvalidModel, "graph input '" + in.name + "' has no element type");
      }
      const int id = NewValue(in.name, type);
      ValueState& v = plan_->values_[id];
      v.static_shape = StaticDims(in.type, &v.dims);
      plan_->input_ids_.push_back(id);
      plan_->inputs_.push_back(in);
    }
    // Outer-scope values: only those this graph (or its own subgraphs) actually reads.
    std::vector<std::string> free_names;
    CollectFreeNames(graph_, &free_names);
    for (const std::string& name : free_names) {
      if (plan_->ids_.count(name)) continue;  // shadowed by a local input or initializer
      auto it = outer_.find(name);
      if (it == outer_.end()) continue;  // reported as a dangling name when ordering nodes
      const int id = NewValue(name, it->second);
      plan_->outer_ids_.emplace_back(name, id);
      // An enclosing graph's constant (initializer or folded value) is a constant here too, so
      // the subgraph's ops prepack it and fold what depends only on constants, as they would at
      // the top level (a model whose whole body sits in an If branch, like Silero VAD, would
      // otherwise repack every weight on every run).
      if (outer_constants_ != nullptr) {
        if (auto c = outer_constants_->find(name); c != outer_constants_->end()) {
          ValueState& v = plan_->values_[id];
          v.is_constant = true;
          v.constant = c->second;
          v.static_shape = true;
          v.dims = c->second.dims();
        }
      }
    }
  }

  std::vector<size_t> TopologicalOrder() {
    // Producer of each name; then Kahn's algorithm, keeping file order among ready nodes.
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      for (const std::string& out : graph_.nodes[i].outputs) {
        if (out.empty()) continue;
        if (plan_->ids_.count(out)) {
          throw Error(ErrorCode::kInvalidModel, graph_.nodes[i].Describe() + ": output '" + out +
                                                    "' redefines a graph input or initializer");
        }
        if (!producer.emplace(out, i).second) {
          throw Error(ErrorCode::kInvalidModel, graph_.nodes[i].Describe() + ": output '" + out +
                                                    "' is produced by more than one node");
        }
      }
    }
    const size_t n = graph_.nodes.size();
    std::vector<std::vector<size_t>> consumers(n);
    std::vector<size_t> pending(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::set<size_t> deps;
      for (const std::string& in : NodeReads(graph_.nodes[i])) {
        if (in.empty() || plan_->ids_.count(in)) continue;
        auto it = producer.find(in);
        if (it == producer.end()) {
          throw Error(ErrorCode::kInvalidModel,
                      graph_.nodes[i].Describe() + ": input '" + in +
                          "' is not a graph input, initializer or output of any node");
        }
        if (it->second == i) {
          throw Error(ErrorCode::kInvalidModel,
                      graph_.nodes[i].Describe() + ": consumes its own output '" + in + "'");
        }
        deps.insert(it->second);
      }
      pending[i] = deps.size();
      for (size_t d : deps) consumers[d].push_back(i);
    }
    std::set<size_t> ready;
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.insert(i);
    }
    std::vector<size_t> order;
    while (!ready.empty()) {
      const size_t i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (size_t c : consumers[i]) {
        if (--pending[c] == 0) ready.insert(c);
      }
    }
    if (order.size() != n) {
      for (size_t i = 0; i < n; ++i) {
        if (pending[i] != 0) {
          throw Error(ErrorCode::kInvalidModel,
                      "graph '" + graph_.name + "' has a cycle through " + graph_.nodes[i].Describe());
        }
      }
    }
    return order;
  }

  // Inputs of a node plus the outer-scope names its subgraphs read (so ordering sees them).
  std::vector<std::string> NodeReads(const Node& node) {
    std::vector<std::string> reads = node.inputs;
    CollectSubgraphReads(node, &reads);
    return reads;
  }

  // The values visible to a node of this plan (outer-scope values were added as sources).
  class PlanScope final : public NodeScope {
   public:
    explicit PlanScope(const Plan& plan) : plan_(plan) {}
    bool Lookup(const std::string& name, NodeInputFacts* facts) const override {
      const int id = plan_.FindValue(name);
      if (id < 0) return false;
      const ValueState& v = plan_.values()[id];
      facts->type = v.type;
      facts->constant = v.is_constant ? &v.constant : nullptr;
      return true;
    }
    void Visible(std::map<std::string, ValueType>* types,
                 std::map<std::string, Tensor>* constants) const override {
      for (const ValueState& v : plan_.values()) {
        (*types)[v.name] = v.type;
        if (v.is_constant) (*constants)[v.name] = v.constant;
      }
    }

   private:
    const Plan& plan_;
  };

  void AddStep(const Node& node) {
    TypedNode typed = TypeNode(node, opsets_, PlanScope(*plan_), options_, depth_);
    PlanStep step;
    step.node = node;
    step.opset = typed.opset;
    step.since_version = typed.since_version;
    step.op = std::move(typed.op);
    for (const std::string& name : typed.input_names) {
      step.inputs.push_back(name.empty() ? -1 : plan_->FindValue(name));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      step.outputs.push_back(node.outputs[i].empty() ? -1 : NewValue(node.outputs[i], typed.outputs[i]));
    }
    step.value_inputs = step.op->ValueInputs();
    if (step.op->takes_values()) {
      PrepareValueStep(step);
      plan_->steps_.push_back(std::move(step));
      return;
    }

    if (TryFold(step)) return;
    TryStaticPrepare(step);
    plan_->steps_.push_back(std::move(step));
  }

  std::vector<InputInfo> InputInfos(const PlanStep& step, bool* all_static) {
    std::vector<InputInfo> infos;
    *all_static = true;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      InputInfo info;
      const int id = step.inputs[i];
      if (id >= 0) {
        const ValueState& v = plan_->values_[id];
        info.present = true;
        info.dtype = v.dtype;
        info.dims = v.dims;
        if (!v.static_shape) *all_static = false;
        if (v.is_constant) info.value = &v.constant;
      }
      infos.push_back(std::move(info));
    }
    return infos;
  }

  bool TryFold(PlanStep& step) {
    if (!options_.constant_folding || !step.op->deterministic() || HasSubgraph(step.node)) {
      return false;
    }
    for (int id : step.inputs) {
      if (id >= 0 && !plan_->values_[id].is_constant) return false;
    }
    bool all_static = false;
    std::vector<InputInfo> infos = InputInfos(step, &all_static);
    PrepareContext prep(step.node, step.opset, infos, static_cast<int>(step.outputs.size()),
                        nullptr);
    RunFn run = step.op->Prepare(prep);
    std::vector<Tensor> outs(step.outputs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const auto& spec = prep.outputs()[i];
      // Outputs the node leaves out ("") get a buffer too, dropped after the step: an op may
      // write every output it declared (fuzz finding absent_output_written).
      if (spec.declared && !spec.dynamic) outs[i] = Tensor(spec.dtype, spec.dims);
    }
    std::vector<const Tensor*> in_ptrs;
    for (int id : step.inputs) in_ptrs.push_back(id >= 0 ? &plan_->values_[id].constant : nullptr);
    HeapAllocator heap;
    RunContext ctx(step.node, in_ptrs, &outs, &heap, nullptr);
    run(ctx);
    for (size_t i = 0; i < outs.size(); ++i) {
      const int id = step.outputs[i];
      if (id < 0) continue;
      if (!outs[i].defined()) {
        throw Error(ErrorCode::kInternal, step.node.Describe() + ": produced no output " + std::to_string(i));
      }
      ValueState& v = plan_->values_[id];
      v.is_constant = true;
      v.constant = outs[i];
      v.static_shape = true;
      v.dims = outs[i].dims();
    }
    ++plan_->folded_nodes_;
    return true;
  }

  // Ops with takes_values() are prepared once, at load, with whatever is known then.
  void PrepareValueStep(PlanStep& step) {
    bool all_static = false;
    std::vector<InputInfo> infos = InputInfos(step, &all_static);
    PrepareContext prep(step.node, step.opset, infos, static_cast<int>(step.outputs.size()),
                        nullptr);
    step.static_run = step.op->Prepare(prep);
    step.static_outputs = prep.outputs();
    for (auto& spec : step.static_outputs) spec.dynamic = true;  // the RunFn sets every output
  }

  void TryStaticPrepare(PlanStep& step) {
    bool all_static = false;
    std::vector<InputInfo> infos = InputInfos(step, &all_static);
    if (!all_static) return;
    for (int vi : step.value_inputs) {
      if (vi < static_cast<int>(infos.size()) && infos[vi].present && infos[vi].value == nullptr) {
        return;  // shape depends on data known only at run time
      }
    }
    PrepareContext prep(step.node, step.opset, infos, static_cast<int>(step.outputs.size()),
                        nullptr);
    step.static_run = step.op->Prepare(prep);
    step.static_outputs = prep.outputs();
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const int id = step.outputs[i];
      if (id < 0) continue;
      const auto& spec = step.static_outputs[i];
      if (spec.declared && !spec.dynamic) {
        plan_->values_[id].static_shape = true;
        plan_->values_[id].dims = spec.dims;
      }
    }
  }

  void FuseElementwise() {
    std::vector<int> keep;
    for (const ValueInfo& out : graph_.outputs) {
      const int id = plan_->FindValue(out.name);
      if (id >= 0) keep.push_back(id);
    }
    if (options_.fold_batch_norm) {
      for (size_t index : FoldConvBatchNorm(&plan_->steps_, &plan_->values_, keep)) {
        TryStaticPrepare(plan_->steps_[index]);
      }
    }
    for (size_t index : FuseElementwiseChains(&plan_->steps_, plan_->values_, keep)) {
      TryStaticPrepare(plan_->steps_[index]);
    }
    for (size_t index : FuseConvPostChains(&plan_->steps_, plan_->values_, keep)) {
      TryStaticPrepare(plan_->steps_[index]);
    }
    for (size_t index : FuseQuantizedLookups(&plan_->steps_, &plan_->values_, keep)) {
      TryStaticPrepare(plan_->steps_[index]);
    }
  }

  // A constant that no step reads and that is not a graph output was only the input of folded
  // nodes (or of steps a fusion replaced): its value is freed, so a chain of folded constants
  // (DequantizeLinear -> Reshape -> Add -> Reshape ...) does not keep every intermediate alive
  // beside the result. The same rule as ReleaseUnreadWeightPages (simplecpp/api): steps read
  // their constants (a subgraph's captured ones included) through their inputs.
  void DropUnreadConstants() {
    std::vector<bool> read(plan_->values_.size(), false);
    for (const PlanStep& step : plan_->steps_) {
      for (int id : step.inputs) {
        if (id >= 0) read[static_cast<size_t>(id)] = true;
      }
    }
    for (int id : plan_->output_ids_) read[static_cast<size_t>(id)] = true;
    for (size_t id = 0; id < read.size(); ++id) {
      ValueState& v = plan_->values_[id];
      if (v.is_constant && !read[id]) v.constant = Tensor();
    }
  }

  void ComputeLastUses() {
    std::vector<int> last_use(plan_->values_.size(), -1);
    for (size_t s = 0; s < plan_->steps_.size(); ++s) {
      for (int id : plan_->steps_[s].inputs) {
        if (id >= 0) last_use[id] = static_cast<int>(s);
      }
    }
    std::set<int> keep(plan_->output_ids_.begin(), plan_->output_ids_.end());
    for (size_t id = 0; id < last_use.size(); ++id) {
      if (last_use[id] < 0 || keep.count(static_cast<int>(id)) || plan_->values_[id].is_constant) continue;
      plan_->steps_[last_use[id]].release_after.push_back(static_cast<int>(id));
    }
  }

  const Graph& graph_;
  const OpsetMap& opsets_;
  const PlanOptions& options_;
  const std::map<std::string, ValueType>& outer_;
  const std::map<std::string, Tensor>* outer_constants_;
  int depth_;
  Plan* plan_ = nullptr;
};

std::shared_ptr<const Plan> Plan::Build(const Graph& graph, const OpsetMap& opsets,
                                        const PlanOptions& options,
                                        const std::map<std::string, ValueType>& outer_scope, int depth,
                                        const std::map<std::string, Tensor>* outer_constants) {
  const Graph* source = &graph;
  const OpsetMap* source_opsets = &opsets;
  Graph blocked;
  OpsetMap blocked_opsets;
  if (options.fuse_quantized && passes::FuseBlockedDequantMatMul(graph, opsets, &blocked, &blocked_opsets,
                                                                  nullptr, options.release_weight)) {
    source = &blocked;
    source_opsets = &blocked_opsets;
  }
  if (options.fuse_quantized) {
    Graph fused;
    OpsetMap fused_opsets;
    if (passes::FuseQuantized(*source, *source_opsets, &fused, &fused_opsets)) {
      return PlanBuilder(fused, fused_opsets, options, outer_scope, depth, outer_constants).Build();
    }
  }
  return PlanBuilder(*source, *source_opsets, options, outer_scope, depth, outer_constants).Build();
}

int Plan::FindValue(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

// ---- Executor ----

Executor::Executor(std::shared_ptr<const Plan> plan, const kernels::Parallel* parallel)
    : plan_(std::move(plan)),
      parallel_(parallel ? parallel : &kernels::SerialParallel()),
      pool_(std::make_shared<BufferPool>(plan_->options().tensor_limits,
                                         plan_->options().max_total_bytes)),
      caches_(plan_->steps().size()) {
  constants_.resize(plan_->values().size());
  for (size_t id = 0; id < constants_.size(); ++id) {
    if (plan_->values()[id].is_constant) constants_[id] = Value(plan_->values()[id].constant);
  }
}

Executor::~Executor() = default;

size_t Executor::buffer_allocations() const { return pool_->allocations(); }
size_t Executor::peak_bytes_in_use() const { return pool_->peak_bytes_in_use(); }

namespace {

void AppendKey(std::vector<int64_t>* key, const Tensor& t, bool with_data) {
  key->push_back(static_cast<int64_t>(t.dtype()));
  key->push_back(t.rank());
  key->insert(key->end(), t.dims().begin(), t.dims().end());
  if (!with_data) return;
  if (t.dtype() == DType::kString) {
    for (const std::string& s : t.strings()) key->push_back(static_cast<int64_t>(std::hash<std::string>()(s)));
    return;
  }
  const size_t bytes = t.byte_size();
  key->push_back(static_cast<int64_t>(bytes));
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  for (size_t off = 0; off < bytes; off += 8) {
    int64_t word = 0;
    std::memcpy(&word, p + off, bytes - off < 8 ? bytes - off : 8);
    key->push_back(word);
  }
}

void CheckTensorInput(const ValueInfo& info, const Tensor& t) {
  if (t.dtype() != info.type.dtype) {
    throw Error(ErrorCode::kInvalidArgument, "input '" + info.name + "' has dtype " +
                                                 DTypeName(t.dtype()) + ", the model expects " +
                                                 DTypeName(info.type.dtype));
  }
  if (!info.type.has_shape) return;
  if (t.rank() != static_cast<int64_t>(info.type.dims.size())) {
    throw Error(ErrorCode::kInvalidArgument,
                "input '" + info.name + "' has shape " + DimsToString(t.dims()) + " (rank " +
                    std::to_string(t.rank()) + "), the model expects rank " +
                    std::to_string(info.type.dims.size()));
  }
  for (size_t i = 0; i < info.type.dims.size(); ++i) {
    const Dim& d = info.type.dims[i];
    if (d.known() && d.value != t.dims()[i]) {
      throw Error(ErrorCode::kInvalidArgument,
                  "input '" + info.name + "' has shape " + DimsToString(t.dims()) +
                      ", the model expects dimension " + std::to_string(i) + " to be " +
                      std::to_string(d.value));
    }
  }
}


// Checks a fed value against the input's declared type; returns the value to use (an empty
// sequence fed without an element dtype takes the declared one).
Value CheckInput(const ValueInfo& info, const ValueType& type, const Value& v) {
  if (v.is_none()) {
    if (!type.optional) {
      throw Error(ErrorCode::kInvalidArgument, "input '" + info.name + "' is none, the model expects " +
                                                   type.ToString() + " (not optional)");
    }
    return v;
  }
  if (type.sequence != v.is_sequence() || !v.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "input '" + info.name + "' is " + v.Describe() +
                                                 ", the model expects " + type.ToString());
  }
  if (v.is_tensor()) {
    if (type.is_tensor()) {
      CheckTensorInput(info, v.tensor());
    } else if (v.tensor().dtype() != type.dtype) {
      throw Error(ErrorCode::kInvalidArgument, "input '" + info.name + "' is " + v.Describe() +
                                                   ", the model expects " + type.ToString());
    }
    return v;
  }
  if (v.sequence().empty() && v.dtype() == DType::kUndefined) return Value::Sequence(type.dtype, {});
  if (v.dtype() != type.dtype) {
    throw Error(ErrorCode::kInvalidArgument, "input '" + info.name + "' is " + v.Describe() +
                                                 ", the model expects " + type.ToString());
  }
  return v;
}

}  // namespace

std::vector<Tensor> Executor::Run(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Value> feeds;
  for (const auto& [name, t] : inputs) feeds.emplace(name, Value(t));
  std::vector<Value> outs = RunValues(feeds);
  std::vector<Tensor> result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_tensor()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "output '" + plan_->outputs()[i].name + "' is " + outs[i].Describe() +
                      ", not a tensor: use the Value interface (Session::RunValues)");
    }
    result.push_back(outs[i].tensor());
  }
  return result;
}

void Executor::BindInputs(const std::map<std::string, Value>& inputs,
                          const std::map<std::string, Value>* outer) {
  const Plan& plan = *plan_;
  // Constants are read from the plan itself (ValueOf), not copied here on every run. A run that
  // ended normally left every value empty; one that threw may have left some.
  if (!values_clear_ || values_.size() != plan.values().size()) {
    values_.assign(plan.values().size(), Value());
  }
  values_clear_ = false;
  for (const auto& [name, id] : plan.outer_ids()) {
    const Value* v = nullptr;
    if (outer) {
      auto it = outer->find(name);
      if (it != outer->end()) v = &it->second;
    }
    if (v == nullptr) {
      throw Error(ErrorCode::kInternal, "outer-scope value '" + name + "' is not available");
    }
    values_[id] = *v;
  }
  for (const auto& [name, value] : inputs) {
    bool known = false;
    for (size_t k = 0; k < plan.inputs().size(); ++k) {
      if (plan.inputs()[k].name == name) {
        const int id = plan.input_ids()[k];
        values_[id] = CheckInput(plan.inputs()[k], plan.values()[id].type, value);
        known = true;
        break;
      }
    }
    if (!known) {
      throw Error(ErrorCode::kInvalidArgument, "'" + name + "' is not an input of the model");
    }
  }
  for (size_t k = 0; k < plan.inputs().size(); ++k) {
    if (!values_[plan.input_ids()[k]].defined()) {
      throw Error(ErrorCode::kInvalidArgument, "missing input '" + plan.inputs()[k].name + "'");
    }
  }
}

void Executor::GatherStepInputs(const PlanStep& step, bool takes_values) {
  const Plan& plan = *plan_;
  in_ptrs_.clear();
  in_values_.clear();
  for (int id : step.inputs) {
    if (id < 0) {
      in_ptrs_.push_back(nullptr);
      in_values_.push_back(nullptr);
      continue;
    }
    const Value& v = ValueOf(id);
    if (!v.defined()) {
      throw Error(ErrorCode::kInternal,
                  step.node.Describe() + ": input '" + plan.values()[id].name + "' has no value");
    }
    if (!v.is_tensor() && !takes_values) {
      throw Error(ErrorCode::kInternal, step.node.Describe() + ": input '" +
                                            plan.values()[id].name + "' is " + v.Describe() +
                                            ", not a tensor");
    }
    in_ptrs_.push_back(v.is_tensor() ? &v.tensor() : nullptr);
    in_values_.push_back(&v);
  }
}

std::pair<const RunFn*, const std::vector<PrepareContext::OutputSpec>*> Executor::PreparedStep(
    size_t s) {
  const Plan& plan = *plan_;
  const PlanStep& step = plan.steps()[s];
  if (step.static_run) return {&step.static_run, &step.static_outputs};
  key_scratch_.clear();
  for (size_t i = 0; i < in_ptrs_.size(); ++i) {
    if (!in_ptrs_[i]) {
      key_scratch_.push_back(-1);
      continue;
    }
    // A constant is the same tensor on every run: nothing of it to compare (a QLinearConv's
    // key is then x's shape only, not also those of its seven parameters).
    if (plan.values()[step.inputs[i]].is_constant) {
      key_scratch_.push_back(-2);
      continue;
    }
    bool with_data = false;
    for (int vi : step.value_inputs) with_data |= (vi == static_cast<int>(i));
    AppendKey(&key_scratch_, *in_ptrs_[i], with_data);
  }
  NodeCache& cache = caches_[s];
  if (!cache.valid || cache.key != key_scratch_) {
    std::vector<InputInfo> infos(in_ptrs_.size());
    for (size_t i = 0; i < in_ptrs_.size(); ++i) {
      if (!in_ptrs_[i]) continue;
      infos[i].present = true;
      infos[i].dtype = in_ptrs_[i]->dtype();
      infos[i].dims = in_ptrs_[i]->dims();
      bool visible = plan.values()[step.inputs[i]].is_constant;
      for (int vi : step.value_inputs) visible |= (vi == static_cast<int>(i));
      if (visible) infos[i].value = in_ptrs_[i];
    }
    cache.valid = false;
    PrepareContext prep(step.node, step.opset, std::move(infos),
                        static_cast<int>(step.outputs.size()), parallel_);
    cache.run = step.op->Prepare(prep);
    cache.outputs = prep.outputs();
    cache.key = key_scratch_;
    cache.valid = true;
  }
  return {&cache.run, &cache.outputs};
}

void Executor::RunStep(const PlanStep& step, const RunFn& run,
                       const std::vector<PrepareContext::OutputSpec>& specs, bool takes_values) {
  outs_.assign(step.outputs.size(), Tensor());
  for (size_t i = 0; i < outs_.size(); ++i) {
    const auto& spec = specs[i];
    // Left-out outputs ("") too, returned to the pool after the step: an op may write every
    // output it declared (fuzz finding absent_output_written).
    if (spec.declared && !spec.dynamic) outs_[i] = pool_->Allocate(spec.dtype, spec.dims);
  }
  RunContext ctx(step.node, in_ptrs_, &outs_, pool_.get(), parallel_);
  if (takes_values) {
    value_outs_.assign(step.outputs.size(), Value());
    ctx.bind_values(&in_values_, &value_outs_);
  }
  try {
    run(ctx);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorCode::kRuntime, step.node.Describe() + ": " + e.what());
  }
}

void Executor::StoreStepOutputs(const PlanStep& step, bool takes_values) {
  const Plan& plan = *plan_;
  for (size_t i = 0; i < outs_.size(); ++i) {
    const int id = step.outputs[i];
    if (id < 0) continue;
    Value out = takes_values && value_outs_[i].defined() ? std::move(value_outs_[i])
                                                         : Value(std::move(outs_[i]));
    if (!out.defined()) {
      throw Error(ErrorCode::kInternal, step.node.Describe() + ": produced no value for output '" +
                                            step.node.outputs[i] + "'");
    }
    const ValueType& type = plan.values()[id].type;
    if (out.is_none() ? !type.optional : out.is_sequence() != type.sequence) {
      throw Error(ErrorCode::kInternal, step.node.Describe() + ": output '" +
                                            step.node.outputs[i] + "' is " + out.Describe() +
                                            ", its type is " + type.ToString());
    }
    values_[id] = std::move(out);
  }
  outs_.clear();  // the left-out outputs go back to the pool now
  value_outs_.clear();
  for (int id : step.release_after) values_[id] = Value();
}

std::vector<Value> Executor::RunValues(const std::map<std::string, Value>& inputs,
                                       const std::map<std::string, Value>* outer) {
  const Plan& plan = *plan_;
  const ScopedTensorLimits limits(plan.options().tensor_limits);  // checked by set_output
  BindInputs(inputs, outer);
  profile_.clear();
  for (size_t s = 0; s < plan.steps().size(); ++s) {
    const PlanStep& step = plan.steps()[s];
    const bool takes_values = step.op->takes_values();
    const auto start = profiling_ ? std::chrono::steady_clock::now()
                                  : std::chrono::steady_clock::time_point();
    GatherStepInputs(step, takes_values);
    const auto [run, specs] = PreparedStep(s);
    RunStep(step, *run, *specs, takes_values);
    StoreStepOutputs(step, takes_values);
    if (profiling_) {
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start).count();
      Timing t{&step.node, ms, {}, false};
      if (!specs->empty() && !(*specs)[0].dynamic) {
        t.output_dims = (*specs)[0].dims;
        t.output_dims_known = true;
      }
      profile_.push_back(std::move(t));
    }
  }
  in_ptrs_.clear();
  in_values_.clear();
  std::vector<Value> result;
  result.reserve(plan.output_ids().size());
  for (int id : plan.output_ids()) result.push_back(ValueOf(id));
  // What is still held (inputs, outputs, values no step releases) goes back before EndRun.
  for (Value& v : values_) {
    if (v.defined()) v = Value();
  }
  values_clear_ = true;
  pool_->EndRun();
  return result;
}

}  // namespace simplecpp::graph
