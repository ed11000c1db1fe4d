// Contexts handed to ops (graph/op.h): attribute access and error messages that name the node.
#include "graph/op.h"

#include <cmath>
#include <cstring>

#include "core/bit_cast.h"
#include "core/float16_bits.h"

namespace simplecpp::graph {
namespace {

std::string OpLabel(const Node& node, int64_t opset) {
  std::string op = node.domain.empty() ? node.op_type : node.domain + ":" + node.op_type;
  std::string who = node.name.empty()
                        ? (node.outputs.empty() || node.outputs[0].empty()
                               ? std::string("unnamed node")
                               : "node producing '" + node.outputs[0] + "'")
                        : "node '" + node.name + "'";
  return who + " (" + op + ", opset " + std::to_string(opset) + ")";
}

// "tensor 'y' of node 'Conv_3'" for output i of a node.
std::string OutputLabel(const Node& node, int i) {
  const std::string name =
      i >= 0 && i < static_cast<int>(node.outputs.size()) ? node.outputs[i] : std::to_string(i);
  const std::string who = node.name.empty() ? node.op_type + " node" : "node '" + node.name + "'";
  return "tensor '" + name + "' of " + who;
}

thread_local const TensorLimits* current_limits = nullptr;

}  // namespace

// ---- tensor limits ----

ScopedTensorLimits::ScopedTensorLimits(const TensorLimits& limits)
    : limits_(limits), previous_(current_limits) {
  current_limits = &limits_;
}
ScopedTensorLimits::~ScopedTensorLimits() { current_limits = previous_; }

const TensorLimits& CurrentTensorLimits() {
  static const TensorLimits kUnlimited;
  return current_limits ? *current_limits : kUnlimited;
}

void CheckTensorLimits(const TensorLimits& limits, DType dtype, const Dims& dims,
                       const std::string& what) {
  const int64_t elements = CheckedNumElements(dims);
  if (elements > limits.max_tensor_elements) {
    throw Error(ErrorCode::kLimitExceeded,
                what + " needs " + std::to_string(elements) + " elements (shape " +
                    DimsToString(dims) + "), over the limit max_tensor_elements=" +
                    std::to_string(limits.max_tensor_elements));
  }
  // Each dim too (matters for empty tensors): ops build per-axis tables as long as a dim,
  // even when another dim is 0.
  for (int64_t d : dims) {
    if (d > limits.max_tensor_elements) {
      throw Error(ErrorCode::kLimitExceeded,
                  what + " has a dimension of " + std::to_string(d) + " (shape " +
                      DimsToString(dims) + "), over the limit max_tensor_elements=" +
                      std::to_string(limits.max_tensor_elements));
    }
  }
  // Strings are not sized by dtype; undefined dtypes are rejected elsewhere.
  if (dtype == DType::kString || DTypeBits(dtype) == 0) return;
  const size_t bytes = CheckedByteSize(dtype, elements);
  if (static_cast<uint64_t>(bytes) > static_cast<uint64_t>(limits.max_tensor_bytes)) {
    throw Error(ErrorCode::kLimitExceeded,
                what + " needs " + std::to_string(bytes) + " bytes (" + DTypeName(dtype) +
                    DimsToString(dims) + "), over the limit max_tensor_bytes=" +
                    std::to_string(limits.max_tensor_bytes));
  }
}

// ---- OpInit ----

bool OpInit::has_input(int i) const {
  return i >= 0 && i < num_inputs() && !node_.inputs[i].empty();
}
bool OpInit::has_output(int i) const {
  return i >= 0 && i < num_outputs() && !node_.outputs[i].empty();
}

std::string OpInit::Prefix() const { return OpLabel(node_, opset_) + ": "; }
void OpInit::Fail(const std::string& message) const {
  throw Error(ErrorCode::kInvalidModel, Prefix() + message);
}
void OpInit::Unsupported(const std::string& message) const {
  throw Error(ErrorCode::kUnsupported, Prefix() + message);
}

const Attribute* OpInit::Find(const std::string& name, AttrKind expected) const {
  const Attribute* a = node_.FindAttribute(name);
  if (a == nullptr) return nullptr;
  if (a->kind != expected) {
    Fail("attribute '" + name + "' has type " + AttrKindName(a->kind) + ", expected " +
         AttrKindName(expected));
  }
  return a;
}

int64_t OpInit::GetInt(const std::string& name, int64_t default_value) const {
  const Attribute* a = Find(name, AttrKind::kInt);
  return a ? a->i : default_value;
}
int64_t OpInit::RequireInt(const std::string& name) const {
  const Attribute* a = Find(name, AttrKind::kInt);
  if (!a) Fail("required attribute '" + name + "' is missing");
  return a->i;
}
float OpInit::GetFloat(const std::string& name, float default_value) const {
  const Attribute* a = Find(name, AttrKind::kFloat);
  return a ? a->f : default_value;
}
std::string OpInit::GetString(const std::string& name, const std::string& default_value) const {
  const Attribute* a = Find(name, AttrKind::kString);
  return a ? a->s : default_value;
}
std::vector<int64_t> OpInit::GetInts(const std::string& name,
                                     std::vector<int64_t> default_value) const {
  const Attribute* a = Find(name, AttrKind::kInts);
  return a ? a->ints : default_value;
}
std::vector<float> OpInit::GetFloats(const std::string& name, std::vector<float> default_value) const {
  const Attribute* a = Find(name, AttrKind::kFloats);
  return a ? a->floats : default_value;
}
std::vector<std::string> OpInit::GetStrings(const std::string& name) const {
  const Attribute* a = Find(name, AttrKind::kStrings);
  return a ? a->strings : std::vector<std::string>{};
}
const Tensor* OpInit::GetTensor(const std::string& name) const {
  const Attribute* a = Find(name, AttrKind::kTensor);
  return a ? &a->t : nullptr;
}
std::shared_ptr<Graph> OpInit::GetGraph(const std::string& name) const {
  const Attribute* a = Find(name, AttrKind::kGraph);
  return a ? a->g : nullptr;
}

// ---- TypeContext ----

TypeContext::TypeContext(const Node& node, int64_t opset, std::vector<DType> input_dtypes,
                         std::vector<const Tensor*> input_constants)
    : node_(node),
      opset_(opset),
      input_dtypes_(std::move(input_dtypes)),
      input_constants_(std::move(input_constants)),
      output_dtypes_(node.outputs.size(), DType::kUndefined) {}

bool TypeContext::has_input(int i) const {
  // Indices past the node's own inputs are implicit (outer-scope values read by subgraphs).
  if (i < 0 || i >= num_inputs()) return false;
  return i >= static_cast<int>(node_.inputs.size()) || !node_.inputs[i].empty();
}
DType TypeContext::input_dtype(int i) const {
  return has_input(i) ? input_dtypes_[i] : DType::kUndefined;
}
const Tensor* TypeContext::input_constant(int i) const {
  return has_input(i) ? input_constants_[i] : nullptr;
}
bool TypeContext::has_output(int i) const {
  return i >= 0 && i < num_outputs() && !node_.outputs[i].empty();
}
void TypeContext::set_output_dtype(int i, DType dtype) {
  if (i < 0 || i >= num_outputs()) return;  // optional output not requested
  output_dtypes_[i] = dtype;
}

std::string TypeContext::Prefix() const {
  std::string s = OpLabel(node_, opset_) + " with inputs (";
  for (int i = 0; i < num_inputs(); ++i) {
    if (i) s += ", ";
    s += has_input(i) ? DTypeName(input_dtypes_[i]) : std::string("-");
  }
  return s + "): ";
}
void TypeContext::Fail(const std::string& message) const {
  throw Error(ErrorCode::kInvalidModel, Prefix() + message);
}
void TypeContext::Unsupported(const std::string& message) const {
  throw Error(ErrorCode::kUnsupported, Prefix() + message);
}
void TypeContext::RequireInput(int i) const {
  if (!has_input(i)) Fail("required input " + std::to_string(i) + " is missing");
}
void TypeContext::RequireDType(int i, std::initializer_list<DType> allowed) const {
  RequireInput(i);
  for (DType d : allowed) {
    if (input_dtypes_[i] == d) return;
  }
  std::string list;
  for (DType d : allowed) list += (list.empty() ? "" : ", ") + DTypeName(d);
  Unsupported("input " + std::to_string(i) + " has dtype " + DTypeName(input_dtypes_[i]) +
              "; supported: " + list);
}
void TypeContext::RequireSameDType(int i, int j) const {
  RequireInput(i);
  RequireInput(j);
  if (input_dtypes_[i] != input_dtypes_[j]) {
    Fail("inputs " + std::to_string(i) + " and " + std::to_string(j) +
         " must have the same dtype");
  }
}

// ---- PrepareContext ----

PrepareContext::PrepareContext(const Node& node, int64_t opset, std::vector<InputInfo> inputs,
                               int num_outputs, const kernels::Parallel* parallel)
    : node_(node),
      opset_(opset),
      inputs_(std::move(inputs)),
      outputs_(static_cast<size_t>(num_outputs)),
      parallel_(parallel ? parallel : &kernels::SerialParallel()) {}

bool PrepareContext::has_output(int i) const {
  return i >= 0 && i < num_outputs() && !node_.outputs[i].empty();
}

const Tensor& PrepareContext::RequireValue(int i) const {
  const Tensor* t = input_value(i);
  if (t == nullptr) Unsupported("input " + std::to_string(i) + " must be known when preparing");
  return *t;
}

void PrepareContext::set_output(int i, DType dtype, Dims dims) {
  // Rejects negative dims and overflow, then the size limits (at load for static shapes). Also
  // for an output the node leaves out: the op may still size tables by these dims.
  CheckTensorLimits(CurrentTensorLimits(), dtype, dims, OutputLabel(node_, i));
  if (i < 0 || i >= num_outputs()) return;
  outputs_[i] = OutputSpec{dtype, std::move(dims), false, true};
}
void PrepareContext::set_output_dynamic(int i, DType dtype) {
  if (i < 0 || i >= num_outputs()) return;
  outputs_[i] = OutputSpec{dtype, {}, true, true};
}

std::string PrepareContext::Prefix() const {
  std::string s = OpLabel(node_, opset_) + " with inputs (";
  for (int i = 0; i < num_inputs(); ++i) {
    if (i) s += ", ";
    s += has_input(i) ? DTypeName(inputs_[i].dtype) + DimsToString(inputs_[i].dims)
                      : std::string("-");
  }
  return s + "): ";
}
void PrepareContext::Fail(const std::string& message) const {
  throw Error(ErrorCode::kInvalidArgument, Prefix() + message);
}
void PrepareContext::Unsupported(const std::string& message) const {
  throw Error(ErrorCode::kUnsupported, Prefix() + message);
}

// ---- RunContext ----

RunContext::RunContext(const Node& node, std::vector<const Tensor*> inputs,
                       std::vector<Tensor>* outputs, TensorAllocator* allocator,
                       const kernels::Parallel* parallel)
    : node_(node),
      inputs_(std::move(inputs)),
      outputs_(outputs),
      allocator_(allocator),
      parallel_(parallel ? parallel : &kernels::SerialParallel()) {}

bool RunContext::has_input(int i) const {
  return i >= 0 && i < num_inputs() && inputs_[i] != nullptr;
}

Tensor& RunContext::allocate_output(int i, DType dtype, Dims dims) {
  CheckTensorLimits(CurrentTensorLimits(), dtype, dims, OutputLabel(node_, i));
  (*outputs_)[i] = allocator_->Allocate(dtype, dims);
  return (*outputs_)[i];
}

std::string RunContext::Prefix() const { return node_.Describe() + ": "; }
void RunContext::Fail(const std::string& message) const {
  throw Error(ErrorCode::kRuntime, Prefix() + message);
}
void RunContext::Missing(const char* what, int i) const {
  throw Error(ErrorCode::kInvalidModel,
              Prefix() + "the op reads " + what + " " + std::to_string(i) + ", which the node does not have");
}

// ---- helpers ----

int64_t NormalizeAxis(int64_t axis, int64_t rank,
                      const std::function<void(const std::string&)>& fail) {
  // A scalar has no axis: callers index dims[axis] (fuzz finding split_scalar_input).
  const int64_t lo = -rank;
  const int64_t hi = rank - 1;
  if (axis < lo || axis > hi) {
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> TensorToInt64s(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype()) {
      case DType::kInt64: out[i] = t.data<int64_t>()[i]; break;
      case DType::kInt32: out[i] = t.data<int32_t>()[i]; break;
      case DType::kUInt8: out[i] = t.data<uint8_t>()[i]; break;
      case DType::kInt8: out[i] = t.data<int8_t>()[i]; break;
      case DType::kInt16: out[i] = t.data<int16_t>()[i]; break;
      case DType::kUInt16: out[i] = t.data<uint16_t>()[i]; break;
      case DType::kUInt32: out[i] = t.data<uint32_t>()[i]; break;
      case DType::kUInt64: out[i] = static_cast<int64_t>(t.data<uint64_t>()[i]); break;
      default:
        throw Error(ErrorCode::kInvalidArgument,
                    "expected an integer tensor, got " + DTypeName(t.dtype()));
    }
  }
  return out;
}


double TensorElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return HalfBitsToFloat(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return FloatFromBits(static_cast<uint32_t>(t.data<uint16_t>()[i]) << 16);
    case DType::kBool: return t.data<uint8_t>()[i] ? 1.0 : 0.0;
    default: return static_cast<double>(TensorToInt64s(t.Reshaped({t.num_elements()}))[i]);
  }
}

}  // namespace simplecpp::graph
