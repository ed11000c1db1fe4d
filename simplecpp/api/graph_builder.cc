// simplecpp::GraphBuilder (simplecpp/builder.h): a graph::Model assembled call by call, each
// node inferred as it is added (graph/node_inference.h), compiled by the same CompileModel that
// Model::Load uses.
#include <set>

#include "graph/executor.h"
#include "graph/node_inference.h"
#include "simplecpp/api/model_impl.h"
#include "simplecpp/builder.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp {
namespace detail {

struct GraphBuilderImpl {
  graph::Model model;
  // Every value a node may read: the enclosing graphs' (a subgraph's snapshot) and this graph's.
  std::map<std::string, graph::KnownValue> values;
  std::set<std::string> own_values;    // defined by this graph
  std::set<std::string> node_names;
  std::set<std::string> used_domains;  // opsets that nodes depend on
  bool is_subgraph = false;
  int depth = 0;
  graph::PlanOptions plan_options;  // the limits that apply while nodes are added
  int64_t next_node = 0;
  int64_t next_dim = 0;

  graph::OpsetMap Opsets() const {
    graph::OpsetMap opsets;
    for (const auto& o : model.opsets) opsets[graph::CanonicalDomain(o.domain)] = o.version;
    return opsets;
  }
  void RequireNewName(const std::string& name, const std::string& what) const {
    if (name.empty()) throw Error(ErrorCode::kInvalidArgument, what + ": the name is empty");
    if (values.count(name)) {
      throw Error(ErrorCode::kInvalidArgument, what + " '" + name + "': a value of that name exists");
    }
  }
  void Define(const std::string& name, graph::KnownValue v) {
    values[name] = std::move(v);
    own_values.insert(name);
  }
};

namespace {

// Builder-internal names of unnamed unknown dims (not a character a model's dim_param starts with
// in practice; stripped from everything the builder shows or writes).
constexpr char kInternalDimPrefix[] = "\x01dim";

bool IsInternalDim(const std::string& param) { return param.rfind(kInternalDimPrefix, 0) == 0; }

// The IR version that goes with an ai.onnx opset (ONNX's versioning table).
int64_t IrVersionFor(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset <= 9) return 4;
  if (opset <= 10) return 5;
  if (opset <= 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  return 11;
}

void CheckDType(DType dtype, const std::string& what) {
  if (dtype == DType::kUndefined || !IsKnownDType(static_cast<int32_t>(dtype))) {
    throw Error(ErrorCode::kInvalidArgument,
                what + ": element type " + std::to_string(static_cast<int32_t>(dtype)) + " is not an ONNX type");
  }
}

graph::Attribute ToAttribute(const std::string& name, const AttributeValue& value) {
  graph::Attribute a;
  a.name = name;
  switch (value.kind()) {
    case AttributeValue::Kind::kInt: a.kind = graph::AttrKind::kInt; a.i = value.i(); break;
    case AttributeValue::Kind::kFloat: a.kind = graph::AttrKind::kFloat; a.f = value.f(); break;
    case AttributeValue::Kind::kString: a.kind = graph::AttrKind::kString; a.s = value.s(); break;
    case AttributeValue::Kind::kInts: a.kind = graph::AttrKind::kInts; a.ints = value.ints(); break;
    case AttributeValue::Kind::kFloats: a.kind = graph::AttrKind::kFloats; a.floats = value.floats(); break;
    case AttributeValue::Kind::kStrings:
      a.kind = graph::AttrKind::kStrings;
      a.strings = value.strings();
      break;
    case AttributeValue::Kind::kTensor:
      if (!value.tensor().defined()) {
        throw Error(ErrorCode::kInvalidArgument, "attribute '" + name + "': the tensor is undefined");
      }
      a.kind = graph::AttrKind::kTensor;
      a.t = value.tensor();
      break;
    case AttributeValue::Kind::kGraph:
      if (!value.graph().defined()) {
        throw Error(ErrorCode::kInvalidArgument, "attribute '" + name + "': the subgraph is empty");
      }
      a.kind = graph::AttrKind::kGraph;
      a.g = std::make_shared<graph::Graph>(*std::static_pointer_cast<const graph::Graph>(value.graph().impl()));
      break;
  }
  return a;
}

graph::ValueInfo DeclaredValue(const std::string& name, const graph::KnownValue& v) {
  graph::ValueInfo info;
  info.name = name;
  info.type = graph::TypeInfoOf(v);
  for (graph::Dim& d : info.type.dims) {
    if (IsInternalDim(d.param)) d.param.clear();
  }
  return info;
}

}  // namespace
}  // namespace detail

GraphBuilder::GraphBuilder(int64_t onnx_opset, std::string graph_name)
    : impl_(std::make_unique<detail::GraphBuilderImpl>()) {
  if (onnx_opset < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "GraphBuilder: ai.onnx opset " + std::to_string(onnx_opset) + " is not a version");
  }
  impl_->model.ir_version = detail::IrVersionFor(onnx_opset);
  impl_->model.opsets.push_back(graph::OpsetImport{"", onnx_opset});
  impl_->model.producer_name = "simplecpp";
  impl_->model.producer_version = "GraphBuilder";
  impl_->model.graph.name = std::move(graph_name);
  SetLimits(Limits());
}

GraphBuilder::GraphBuilder(std::unique_ptr<detail::GraphBuilderImpl> impl) : impl_(std::move(impl)) {}
GraphBuilder::~GraphBuilder() = default;
GraphBuilder::GraphBuilder(GraphBuilder&&) noexcept = default;
GraphBuilder& GraphBuilder::operator=(GraphBuilder&&) noexcept = default;

void GraphBuilder::ImportOpset(const std::string& domain, int64_t version) {
  const std::string canonical = graph::CanonicalDomain(domain);
  const std::string shown = canonical.empty() ? "ai.onnx" : canonical;
  if (impl_->is_subgraph) {
    throw Error(ErrorCode::kInvalidArgument, "ImportOpset('" + shown +
                                                 "'): a subgraph uses its model's opsets; import on the outer builder");
  }
  if (version < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "ImportOpset('" + shown + "', " + std::to_string(version) + "): not a version");
  }
  for (graph::OpsetImport& o : impl_->model.opsets) {
    if (graph::CanonicalDomain(o.domain) != canonical) continue;
    if (o.version == version) return;
    if (impl_->used_domains.count(canonical)) {
      throw Error(ErrorCode::kInvalidArgument, "ImportOpset('" + shown +
                                                   "'): nodes of that domain were added at version " +
                                                   std::to_string(o.version));
    }
    o.version = version;
    if (canonical.empty()) impl_->model.ir_version = detail::IrVersionFor(version);
    return;
  }
  impl_->model.opsets.push_back(graph::OpsetImport{canonical, version});
}

void GraphBuilder::SetLimits(const Limits& limits) {
  graph::PlanOptions& o = impl_->plan_options;
  o.max_nodes = limits.max_nodes;
  o.max_graph_depth = limits.max_graph_depth;
  o.tensor_limits.max_tensor_elements = limits.max_tensor_elements;
  o.tensor_limits.max_tensor_bytes = limits.max_tensor_bytes;
  o.max_total_bytes = limits.max_total_bytes;
  o.max_loop_iterations = limits.max_loop_iterations;
}

std::string GraphBuilder::AddInput(const std::string& name, DType dtype, const Dims& dims,
                                   const std::vector<std::string>& dim_params) {
  const std::string what = "graph input '" + name + "'";
  impl_->RequireNewName(name, "graph input");
  detail::CheckDType(dtype, what);
  if (!dim_params.empty() && dim_params.size() != dims.size()) {
    throw Error(ErrorCode::kInvalidArgument, what + ": " + std::to_string(dim_params.size()) +
                                                 " dim names for " + std::to_string(dims.size()) + " dims");
  }
  graph::ValueInfo info;
  info.name = name;
  info.type.kind = graph::TypeInfo::Kind::kTensor;
  info.type.dtype = dtype;
  info.type.has_shape = true;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -1) {
      throw Error(ErrorCode::kInvalidArgument,
                  what + ": dim " + std::to_string(i) + " is " + std::to_string(dims[i]) + " (use -1 for unknown)");
    }
    const std::string param = dim_params.empty() ? "" : dim_params[i];
    info.type.dims.push_back(graph::Dim{param.empty() ? dims[i] : -1, param});
  }
  graph::KnownValue known = graph::KnownValueOf(info.type, what);
  for (graph::Dim& dim : known.dims) {
    // An unnamed unknown dim gets a name of its own inside the builder, so that inference can
    // tell that two values share it (a Concat of two results of this input); the name is never
    // shown or written.
    if (!dim.known() && dim.param.empty()) dim.param = detail::kInternalDimPrefix + std::to_string(impl_->next_dim++);
  }
  impl_->Define(name, std::move(known));
  impl_->model.graph.inputs.push_back(std::move(info));
  return name;
}

std::string GraphBuilder::AddInputUnranked(const std::string& name, DType dtype) {
  const std::string what = "graph input '" + name + "'";
  impl_->RequireNewName(name, "graph input");
  detail::CheckDType(dtype, what);
  graph::ValueInfo info;
  info.name = name;
  info.type.kind = graph::TypeInfo::Kind::kTensor;
  info.type.dtype = dtype;
  impl_->Define(name, graph::KnownValueOf(info.type, what));
  impl_->model.graph.inputs.push_back(std::move(info));
  return name;
}

std::string GraphBuilder::AddInitializer(const std::string& name, const Tensor& value) {
  impl_->RequireNewName(name, "initializer");
  if (!value.defined()) {
    throw Error(ErrorCode::kInvalidArgument, "initializer '" + name + "': the tensor is undefined");
  }
  Tensor copy = value.Clone();
  graph::KnownValue v;
  v.type = graph::ValueType::TensorOf(copy.dtype());
  v.has_rank = true;
  for (int64_t d : copy.dims()) v.dims.push_back(graph::Dim{d, ""});
  v.constant = copy;
  impl_->Define(name, std::move(v));
  impl_->model.graph.initializers.emplace_back(name, std::move(copy));
  return name;
}

std::string GraphBuilder::AddInitializerBorrowed(const std::string& name, DType dtype, const Dims& dims,
                                                 const void* data) {
  const std::string what = "initializer '" + name + "'";
  detail::CheckDType(dtype, what);
  const size_t bytes = CheckedByteSize(dtype, CheckedNumElements(dims));
  if (data == nullptr && bytes > 0) throw Error(ErrorCode::kInvalidArgument, what + ": data is null");
  if (dtype == DType::kString) {
    throw Error(ErrorCode::kInvalidArgument, what + ": string tensors cannot be borrowed; copy them");
  }
  return AddInitializer(name, Tensor::Borrow(dtype, dims, nullptr, data));
}

std::vector<std::string> GraphBuilder::AddNode(const std::string& op_type,
                                               const std::vector<std::string>& inputs,
                                               const Attributes& attributes, int num_outputs,
                                               const NodeOptions& options) {
  detail::GraphBuilderImpl& b = *impl_;
  graph::Node node;
  node.op_type = op_type;
  node.domain = graph::CanonicalDomain(options.domain);
  if (op_type.empty()) throw Error(ErrorCode::kInvalidArgument, "AddNode: the op type is empty");
  if (options.name.empty()) {
    do {
      node.name = op_type + "_" + std::to_string(b.next_node++);
    } while (b.node_names.count(node.name));
  } else {
    node.name = options.name;
  }
  if (b.node_names.count(node.name)) {
    throw Error(ErrorCode::kInvalidArgument, node.Describe() + ": a node of that name exists");
  }
  if (static_cast<int64_t>(b.model.graph.nodes.size()) >= b.plan_options.max_nodes) {
    throw Error(ErrorCode::kLimitExceeded, node.Describe() + ": the graph already has " +
                                               std::to_string(b.model.graph.nodes.size()) +
                                               " nodes, the limit max_nodes");
  }
  if (num_outputs < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                node.Describe() + ": num_outputs is " + std::to_string(num_outputs) + " (at least 1)");
  }
  if (!options.output_names.empty() && options.output_names.size() != static_cast<size_t>(num_outputs)) {
    throw Error(ErrorCode::kInvalidArgument,
                node.Describe() + ": " + std::to_string(options.output_names.size()) +
                    " output names for " + std::to_string(num_outputs) + " outputs");
  }
  std::set<std::string> new_names;
  for (int k = 0; k < num_outputs; ++k) {
    std::string out = options.output_names.empty() ? node.name + "_out" + std::to_string(k)
                                                   : options.output_names[k];
    if (!out.empty() && (b.values.count(out) || !new_names.insert(out).second)) {
      throw Error(ErrorCode::kInvalidArgument,
                  node.Describe() + ": output '" + out + "' names a value that exists");
    }
    node.outputs.push_back(out);
  }
  node.inputs = inputs;
  std::set<std::string> attribute_names;
  for (const auto& [name, value] : attributes) {
    if (!attribute_names.insert(name).second) {
      throw Error(ErrorCode::kInvalidArgument, node.Describe() + ": attribute '" + name + "' given twice");
    }
    try {
      node.attributes.push_back(detail::ToAttribute(name, value));
    } catch (const Error& e) {
      throw Error(e.code(), node.Describe() + ": " + e.what());
    }
  }
  std::vector<graph::KnownValue> outs =
      graph::InferNode(node, b.Opsets(), b.values, b.plan_options, b.depth);
  // Nothing changes before inference has accepted the node.
  b.node_names.insert(node.name);
  b.used_domains.insert(node.domain);
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!node.outputs[k].empty()) b.Define(node.outputs[k], std::move(outs[k]));
  }
  std::vector<std::string> result = node.outputs;
  b.model.graph.nodes.push_back(std::move(node));
  return result;
}

std::string GraphBuilder::AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                                  const Attributes& attributes, const NodeOptions& options) {
  return AddNode(op_type, inputs, attributes, 1, options)[0];
}

void GraphBuilder::AddOutput(const std::string& value_name) {
  auto it = impl_->values.find(value_name);
  if (it == impl_->values.end()) {
    throw Error(ErrorCode::kInvalidArgument, "AddOutput: no value named '" + value_name + "'");
  }
  for (const graph::ValueInfo& o : impl_->model.graph.outputs) {
    if (o.name == value_name) {
      throw Error(ErrorCode::kInvalidArgument, "AddOutput: '" + value_name + "' is already an output");
    }
  }
  impl_->model.graph.outputs.push_back(detail::DeclaredValue(value_name, it->second));
}

bool GraphBuilder::HasValue(const std::string& value_name) const {
  return impl_->values.count(value_name) != 0;
}

ValueDescription GraphBuilder::Describe(const std::string& value_name) const {
  auto it = impl_->values.find(value_name);
  if (it == impl_->values.end()) {
    throw Error(ErrorCode::kInvalidArgument, "Describe: no value named '" + value_name + "'");
  }
  const graph::KnownValue& v = it->second;
  ValueDescription d;
  d.name = value_name;
  d.dtype = v.type.dtype;
  d.sequence = v.type.sequence;
  d.optional = v.type.optional;
  d.has_shape = v.has_rank;
  for (const graph::Dim& dim : v.dims) {
    d.dims.push_back(dim.known() ? dim.value : -1);
    d.dim_params.push_back(detail::IsInternalDim(dim.param) ? std::string() : dim.param);
  }
  return d;
}

GraphBuilder GraphBuilder::NewSubgraph(const std::string& graph_name) const {
  if (impl_->depth + 1 > impl_->plan_options.max_graph_depth) {
    throw Error(ErrorCode::kLimitExceeded, "NewSubgraph('" + graph_name + "'): nesting depth " +
                                               std::to_string(impl_->depth + 1) + " over the limit max_graph_depth");
  }
  auto child = std::make_unique<detail::GraphBuilderImpl>();
  child->model.opsets = impl_->model.opsets;
  child->model.ir_version = impl_->model.ir_version;
  child->model.graph.name = graph_name;
  child->values = impl_->values;
  child->node_names = impl_->node_names;
  child->is_subgraph = true;
  child->depth = impl_->depth + 1;
  child->plan_options = impl_->plan_options;
  child->next_dim = impl_->next_dim + (int64_t{1} << 32);  // the body's own unnamed dims differ
  return GraphBuilder(std::move(child));
}

Subgraph GraphBuilder::BuildSubgraph() const {
  if (!impl_->is_subgraph) {
    throw Error(ErrorCode::kInvalidArgument, "BuildSubgraph: this builder was not made by NewSubgraph");
  }
  return Subgraph(std::make_shared<const graph::Graph>(impl_->model.graph));
}

Model GraphBuilder::Build(const LoadOptions& options) const {
  if (impl_->is_subgraph) {
    throw Error(ErrorCode::kInvalidArgument, "Build: a subgraph builder gives BuildSubgraph(), not a Model");
  }
  if (impl_->model.graph.outputs.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "Build: the graph has no outputs (AddOutput)");
  }
  return Model(detail::CompileModel(impl_->model, options));
}

std::string GraphBuilder::ToOnnx() const {
  if (impl_->is_subgraph) {
    throw Error(ErrorCode::kInvalidArgument, "ToOnnx: a subgraph is written as part of its model");
  }
  return onnx::WriteModel(impl_->model);
}

void GraphBuilder::SaveOnnx(const std::string& path) const {
  if (impl_->is_subgraph) {
    throw Error(ErrorCode::kInvalidArgument, "SaveOnnx: a subgraph is written as part of its model");
  }
  onnx::WriteModelFile(path, impl_->model);
}

}  // namespace simplecpp
