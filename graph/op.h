// The contract between the executor and an op implementation.
//
// An op is built once per node at load (its constructor reads and validates attributes through
// OpInit). The executor then calls, in order:
//   InferTypes  at load: check input dtypes, give output dtypes. An unsupported dtype combination
//               is a load-time error here.
//   Prepare     once per input-shape signature (and per value of the inputs listed by
//               ValueInputs()): validate shapes, compute output shapes, choose the kernel, prepack
//               constant weights. Returns a RunFn that captures everything it needs.
//   RunFn       for every run: no validation, no dtype switch; reads inputs, writes outputs.
// An Op and the RunFns it returns are immutable and may be shared by concurrent sessions: scratch
// memory comes from RunContext, never from captured state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/shared_fn.h"
#include "kernels/parallel.h"
#include "simplecpp/error.h"
#include "simplecpp/tensor.h"
#include "simplecpp/value.h"

namespace simplecpp::graph {

// Attribute access for an op's constructor. Getters check the attribute's kind; a wrong kind or a
// missing required attribute throws Error(kInvalidModel) naming node, op and attribute.
class OpInit {
 public:
  OpInit(const Node& node, int64_t opset) : node_(node), opset_(opset) {}
  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  int num_outputs() const { return static_cast<int>(node_.outputs.size()); }
  bool has_input(int i) const;
  bool has_output(int i) const;

  bool Has(const std::string& name) const { return node_.FindAttribute(name) != nullptr; }
  int64_t GetInt(const std::string& name, int64_t default_value) const;
  int64_t RequireInt(const std::string& name) const;
  float GetFloat(const std::string& name, float default_value) const;
  std::string GetString(const std::string& name, const std::string& default_value) const;
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> default_value = {}) const;
  std::vector<float> GetFloats(const std::string& name, std::vector<float> default_value = {}) const;
  std::vector<std::string> GetStrings(const std::string& name) const;
  const Tensor* GetTensor(const std::string& name) const;  // nullptr when absent
  std::shared_ptr<Graph> GetGraph(const std::string& name) const;  // nullptr when absent
  const Attribute* Find(const std::string& name, AttrKind expected) const;  // checks the kind

  // "node 'x' (Op, opset N): "
  std::string Prefix() const;
  [[noreturn]] void Fail(const std::string& message) const;         // kInvalidModel
  [[noreturn]] void Unsupported(const std::string& message) const;  // kUnsupported

 private:
  const Node& node_;
  int64_t opset_;
};

// Size limits for any one tensor (from simplecpp::Limits). PrepareContext::set_output and
// RunContext::allocate_output check the limits installed for the calling thread; the executor
// installs its plan's limits while it builds a plan and while it runs one (none otherwise).
struct TensorLimits {
  int64_t max_tensor_elements = std::numeric_limits<int64_t>::max();
  int64_t max_tensor_bytes = std::numeric_limits<int64_t>::max();
};
class ScopedTensorLimits {
 public:
  explicit ScopedTensorLimits(const TensorLimits& limits);
  ~ScopedTensorLimits();
  ScopedTensorLimits(const ScopedTensorLimits&) = delete;
  ScopedTensorLimits& operator=(const ScopedTensorLimits&) = delete;

 private:
  TensorLimits limits_;
  const TensorLimits* previous_;
};
// Throws Error(kLimitExceeded) when a tensor of `dtype` and `dims` is over `limits`; the message
// starts with `what` ("tensor 'y' of node 'Conv_3'"). Also rejects negative dims and overflow.
void CheckTensorLimits(const TensorLimits& limits, DType dtype, const Dims& dims,
                       const std::string& what);
// The limits installed for this thread (unlimited when none).
const TensorLimits& CurrentTensorLimits();

// Load-time dtype inference.
class TypeContext {
 public:
  TypeContext(const Node& node, int64_t opset, std::vector<DType> input_dtypes,
              std::vector<const Tensor*> input_constants);
  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(input_dtypes_.size()); }
  bool has_input(int i) const;  // present and not the empty name
  DType input_dtype(int i) const;  // kUndefined when absent
  const Tensor* input_constant(int i) const;  // the value when it is known at load, else nullptr
  int num_outputs() const { return static_cast<int>(output_dtypes_.size()); }
  bool has_output(int i) const;
  void set_output_dtype(int i, DType dtype);
  DType output_dtype(int i) const { return output_dtypes_[i]; }

  // Sequence / optional types (ops with takes_values()). input_dtype(i) is the element dtype of a
  // sequence. Outputs not given a type by set_output_type are tensors of their output dtype.
  ValueType input_type(int i) const {
    if (i >= 0 && i < static_cast<int>(input_types_.size())) return input_types_[i];
    return ValueType::TensorOf(input_dtype(i));
  }
  void set_output_type(int i, const ValueType& type) {
    if (i < 0 || i >= num_outputs()) return;
    set_output_dtype(i, type.dtype);
    if (output_types_.size() < output_dtypes_.size()) output_types_.resize(output_dtypes_.size());
    output_types_[i] = type;
    output_type_set_.resize(output_dtypes_.size(), false);
    output_type_set_[i] = true;
  }
  ValueType output_type(int i) const {
    if (i < static_cast<int>(output_type_set_.size()) && output_type_set_[i]) return output_types_[i];
    return ValueType::TensorOf(output_dtypes_[i]);
  }
  // Called by the executor right after construction.
  void set_input_types(std::vector<ValueType> types) { input_types_ = std::move(types); }

  // Throws Unsupported (naming all input dtypes) unless input i is present with an allowed dtype.
  void RequireDType(int i, std::initializer_list<DType> allowed) const;
  // Throws unless inputs i and j have the same dtype.
  void RequireSameDType(int i, int j) const;
  // Throws Fail unless input i is present.
  void RequireInput(int i) const;
  std::string Prefix() const;  // "node 'x' (Op, opset N) with inputs (float32, int64): "
  [[noreturn]] void Fail(const std::string& message) const;
  [[noreturn]] void Unsupported(const std::string& message) const;

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<DType> input_dtypes_;
  std::vector<const Tensor*> input_constants_;
  std::vector<DType> output_dtypes_;
  std::vector<ValueType> input_types_;
  std::vector<ValueType> output_types_;
  std::vector<bool> output_type_set_;
};

// Prepare-time view of one input: dtype and concrete dims (the data is not available unless the
// op listed the input in ValueInputs() or it is a constant).
struct InputInfo {
  DType dtype = DType::kUndefined;
  Dims dims;
  const Tensor* value = nullptr;
  bool present = false;
};

class PrepareContext {
 public:
  PrepareContext(const Node& node, int64_t opset, std::vector<InputInfo> inputs, int num_outputs,
                 const kernels::Parallel* parallel);
  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].present; }
  DType input_dtype(int i) const { return inputs_[i].dtype; }
  const Dims& input_dims(int i) const { return inputs_[i].dims; }
  int64_t input_rank(int i) const { return static_cast<int64_t>(inputs_[i].dims.size()); }
  // Data of input i when known now: always for ValueInputs() at run time, for constants at load.
  const Tensor* input_value(int i) const { return has_input(i) ? inputs_[i].value : nullptr; }
  // As input_value, but throws when the value is unknown.
  const Tensor& RequireValue(int i) const;
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  bool has_output(int i) const;
  const kernels::Parallel& parallel() const { return *parallel_; }

  // Declares output i with a shape known now (the executor allocates it before RunFn).
  void set_output(int i, DType dtype, Dims dims);
  // Declares output i whose shape is known only while running (NonZero, Unique, ...): the RunFn
  // must call RunContext::allocate_output or set_output for it.
  void set_output_dynamic(int i, DType dtype);

  std::string Prefix() const;  // names node, op and the input shapes
  [[noreturn]] void Fail(const std::string& message) const;  // kInvalidArgument
  [[noreturn]] void Unsupported(const std::string& message) const;

  struct OutputSpec {
    DType dtype = DType::kUndefined;
    Dims dims;
    bool dynamic = false;
    bool declared = false;
  };
  const std::vector<OutputSpec>& outputs() const { return outputs_; }

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<InputInfo> inputs_;
  std::vector<OutputSpec> outputs_;
  const kernels::Parallel* parallel_;
};

// Hands out output buffers; the executor's memory pool implements it.
class TensorAllocator {
 public:
  virtual ~TensorAllocator() = default;
  virtual Tensor Allocate(DType dtype, const Dims& dims) = 0;
};

class RunContext {
 public:
  RunContext(const Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor>* outputs,
             TensorAllocator* allocator, const kernels::Parallel* parallel);
  const Node& node() const { return node_; }
  bool has_input(int i) const;
  // Bounds-checked (a model can give a node fewer inputs or outputs than its op reads): an
  // absent one is an Error naming the node, never a null dereference.
  const Tensor& input(int i) const {
    if (i < 0 || i >= num_inputs() || inputs_[i] == nullptr) Missing("input", i);
    return *inputs_[i];
  }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  // Output i, already allocated with the dims declared at Prepare (undefined if dynamic).
  Tensor& output(int i) {
    if (i < 0 || i >= num_outputs()) Missing("output", i);
    return (*outputs_)[i];
  }
  // Allocates output i (for dynamic outputs) and returns it.
  Tensor& allocate_output(int i, DType dtype, Dims dims);
  // Replaces output i by an existing tensor (zero-copy Identity/Reshape/Squeeze).
  void set_output(int i, Tensor tensor) { (*outputs_)[i] = std::move(tensor); }
  // A temporary tensor from the session's pool (freed when the returned Tensor dies).
  Tensor Scratch(DType dtype, const Dims& dims) { return allocator_->Allocate(dtype, dims); }
  const kernels::Parallel& parallel() const { return *parallel_; }

  std::string Prefix() const;
  [[noreturn]] void Fail(const std::string& message) const;  // kRuntime, names node and op
  [[noreturn]] void Missing(const char* what, int i) const;  // kInvalidModel

  // Values of ops with takes_values(): input(i) / has_input(i) see only tensor inputs; value(i)
  // sees every input (nullptr when omitted). set_value replaces output i by any value.
  const Value* value(int i) const {
    return values_in_ && i >= 0 && i < static_cast<int>(values_in_->size()) ? (*values_in_)[i] : nullptr;
  }
  void set_value(int i, Value v) { (*values_out_)[i] = std::move(v); }
  // Called by the executor for ops with takes_values().
  void bind_values(const std::vector<const Value*>* in, std::vector<Value>* out) {
    values_in_ = in;
    values_out_ = out;
  }

 private:
  const Node& node_;
  const std::vector<const Value*>* values_in_ = nullptr;
  std::vector<Value>* values_out_ = nullptr;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor>* outputs_;
  TensorAllocator* allocator_;
  const kernels::Parallel* parallel_;
};

using RunFn = SharedFn<void(RunContext&)>;

struct PlanOptions;
using OpsetMap = std::map<std::string, int64_t>;  // canonical domain -> version

// What a control-flow op (If, Loop, Scan) needs to compile its subgraphs at load. The values of
// the enclosing graphs that the subgraphs read are passed to the op as implicit inputs, appended
// after the node's own inputs in `implicit_inputs` order (TypeContext, PrepareContext and
// RunContext all see them at those indices).
struct SubgraphContext {
  const std::map<std::string, ValueType>* outer_types;  // every value visible to the subgraphs
  // The constant ones among them (initializers and folded values): constants in the subgraphs.
  const std::map<std::string, Tensor>* outer_constants = nullptr;
  const OpsetMap* opsets;
  const PlanOptions* options;
  int depth;  // nesting depth of the subgraphs
  std::vector<std::string> implicit_inputs;
};

// What an op computes per element when it can join a fused elementwise chain
// (graph/ops/elementwise_fused.h).
namespace elementwise {
struct FusibleUnary;
struct FusibleBinary;
struct FusedProgram;
class FusedChain;
}  // namespace elementwise

class Op {
 public:
  virtual ~Op() = default;
  virtual void InferTypes(TypeContext& ctx) const = 0;
  // Inputs whose data Prepare reads (shape tensors, axes, pads, k, ...).
  virtual std::vector<int> ValueInputs() const { return {}; }
  virtual RunFn Prepare(PrepareContext& ctx) const = 0;
  // False for random ops: they are never constant-folded.
  virtual bool deterministic() const { return true; }
  // Called at load, before InferTypes, for nodes with GRAPH/GRAPHS attributes.
  virtual void BindSubgraphs(const SubgraphContext& ctx) { (void)ctx; }
  // True for ops that take or produce sequences / optionals (sequence.cc, optional.cc, If,
  // Loop, SequenceMap). The executor gives them TypeContext::input_type, RunContext::value and
  // set_value, never folds them, and calls Prepare once at load (with whatever shapes are known
  // then: such ops check shapes in their RunFn, since sequence contents are known only there).
  // Other ops never see a sequence or optional input (a load-time Unsupported error).
  virtual bool takes_values() const { return false; }
  // Elementwise chain fusion (graph/passes/elementwise_fusion): the float unary math ops and
  // Add/Sub/Mul/Div return what they compute per element, every other op nullptr. A virtual
  // accessor rather than a dynamic cast, so the library builds without RTTI (the wasm package).
  virtual const elementwise::FusibleUnary* AsFusibleUnary() const { return nullptr; }
  virtual const elementwise::FusibleBinary* AsFusibleBinary() const { return nullptr; }
  // The fused chain op's program (graph/ops/elementwise_fused.h); nullptr for every other op.
  virtual const elementwise::FusedProgram* AsFusedProgram() const { return nullptr; }
  // Post-op fusion (graph/passes/conv_post_fusion.h): an op that can apply an elementwise chain
  // (in its output's dtype) to its output as it produces it keeps `chain` and returns true; it is
  // then prepared again and its output is the chain's result.
  virtual bool AttachPostChain(std::shared_ptr<const elementwise::FusedChain> chain) {
    (void)chain;
    return false;
  }
  // Lookup fusion (graph/passes/quant_lookup_fusion.h): an op with one 8-bit output that can put
  // each output byte b through table[b] as it produces it (in the output's dtype) keeps `table`
  // and returns true; it is then prepared again and its output is the table's.
  virtual bool AttachOutputTable(std::shared_ptr<const std::array<uint8_t, 256>> table) {
    (void)table;
    return false;
  }
};

using OpFactory = SharedFn<std::unique_ptr<Op>(const OpInit&)>;

// Identity for sequence and optional values (graph/ops/sequence.cc). The executor uses it for an
// Identity node whose input is not a tensor (the registered Identity is tensor-only).
std::unique_ptr<Op> MakeValueIdentityOp(const OpInit& init);

template <typename OpT>
OpFactory MakeFactory() {
  // A plain function pointer, not a lambda: every factory made here shares one SharedFn
  // instantiation (a lambda type per op would each bring its own).
  std::unique_ptr<Op> (*create)(const OpInit&) = [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<OpT>(init);
  };
  return create;
}

// Small helpers used by many ops.
// Normalizes a possibly negative axis against rank; throws Fail via `fail` when out of range.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::function<void(const std::string&)>& fail);
// Reads an int64/int32 tensor as int64 values.
std::vector<int64_t> TensorToInt64s(const Tensor& t);
// Reads a float/double/float16/bfloat16/int tensor element i as double.
double TensorElementAsDouble(const Tensor& t, int64_t i);

}  // namespace simplecpp::graph
