// simplecpp::Model: import + Plan::Build (simplecpp/simplecpp.h).
#include <sys/stat.h>

#include <fstream>

#include "simplecpp/api/model_impl.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/model_reader.h"

namespace simplecpp {
namespace detail {
namespace {

ValueDescription Describe(const graph::ValueInfo& v) {
  ValueDescription d;
  d.name = v.name;
  d.dtype = v.type.dtype;
  d.has_shape = v.type.has_shape;
  for (const graph::Dim& dim : v.type.dims) {
    d.dims.push_back(dim.known() ? dim.value : -1);
    d.dim_params.push_back(dim.param);
  }
  DescribeValueKind(v.type, &d);  // sequences and optionals
  return d;
}

// Element/byte limits of every tensor stored in the model: initializers and tensor attributes
// (Constant values), subgraphs included. The reader has already bounded each one's bytes before
// allocating it; this adds the element count (and the bytes of the densified sparse tensors).
void CheckStoredTensors(const graph::Graph& g, const graph::TensorLimits& limits, int depth) {
  for (const auto& [name, t] : g.initializers) {
    graph::CheckTensorLimits(limits, t.dtype(), t.dims(), "initializer '" + name + "'");
  }
  for (const graph::Node& n : g.nodes) {
    for (const graph::Attribute& a : n.attributes) {
      const std::string what = "attribute '" + a.name + "' of " + n.Describe();
      if (a.t.defined()) graph::CheckTensorLimits(limits, a.t.dtype(), a.t.dims(), what);
      for (const Tensor& t : a.tensors) graph::CheckTensorLimits(limits, t.dtype(), t.dims(), what);
      // The reader bounds the nesting depth, so this recursion is bounded too.
      if (a.g) CheckStoredTensors(*a.g, limits, depth + 1);
      for (const auto& sub : a.graphs) {
        if (sub) CheckStoredTensors(*sub, limits, depth + 1);
      }
    }
  }
}

void CheckLimitValues(const Limits& l) {
  const std::pair<const char*, int64_t> values[] = {
      {"max_model_bytes", l.max_model_bytes},       {"max_tensor_elements", l.max_tensor_elements},
      {"max_tensor_bytes", l.max_tensor_bytes},     {"max_nodes", l.max_nodes},
      {"max_graph_depth", l.max_graph_depth},       {"max_total_bytes", l.max_total_bytes},
      {"max_loop_iterations", l.max_loop_iterations}};
  for (const auto& [name, value] : values) {
    if (value < 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string("Limits::") + name + " is negative (" + std::to_string(value) + ")");
    }
  }
}

onnx::ReadOptions ToReadOptions(const LoadOptions& options) {
  onnx::ReadOptions r;
  r.external_data_dir = options.external_data_dir;
  r.max_model_bytes = options.limits.max_model_bytes;
  r.max_tensor_bytes = options.limits.max_tensor_bytes;
  r.max_nodes = options.limits.max_nodes;
  r.max_graph_depth = options.limits.max_graph_depth;
  return r;
}

}  // namespace

std::shared_ptr<const ModelImpl> CompileModel(graph::Model model, const LoadOptions& options,
                                              std::shared_ptr<const io::MappedFile> file) {
  CheckLimitValues(options.limits);
  graph::TensorLimits tensor_limits;
  tensor_limits.max_tensor_elements = options.limits.max_tensor_elements;
  tensor_limits.max_tensor_bytes = options.limits.max_tensor_bytes;
  CheckStoredTensors(model.graph, tensor_limits, 0);
  auto impl = std::make_shared<ModelImpl>();
  impl->model = std::move(model);
  graph::OpsetMap opsets;
  for (const graph::OpsetImport& o : impl->model.opsets) {
    opsets[graph::CanonicalDomain(o.domain)] = o.version;
  }
  graph::PlanOptions plan_options;
  plan_options.constant_folding = options.constant_folding;
  plan_options.fuse_quantized = options.fuse_quantized;
  plan_options.max_nodes = options.limits.max_nodes;
  plan_options.max_graph_depth = options.limits.max_graph_depth;
  plan_options.tensor_limits = tensor_limits;
  plan_options.max_total_bytes = options.limits.max_total_bytes;
  plan_options.max_loop_iterations = options.limits.max_loop_iterations;
  if (file != nullptr && file->mapped()) {
    plan_options.release_weight = [file](const void* data, size_t bytes) {
      file->ReleasePages(data, bytes);
    };
  }
  impl->plan = graph::Plan::Build(impl->model.graph, opsets, plan_options);
  // Top-level initializers only: subgraph weights are rare and small.
  for (const auto& [name, t] : impl->model.graph.initializers) {
    impl->initializer_bytes += static_cast<int64_t>(t.byte_size());
  }
  impl->model.graph.initializers = {};
  for (const graph::ValueInfo& v : impl->plan->inputs()) impl->inputs.push_back(Describe(v));
  for (const graph::ValueInfo& v : impl->plan->outputs()) impl->outputs.push_back(Describe(v));
  return impl;
}

}  // namespace detail

Model Model::Load(const std::string& path, const LoadOptions& options) {
  detail::CheckLimitValues(options.limits);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<int64_t>(st.st_size) > options.limits.max_model_bytes) {
    throw Error(ErrorCode::kLimitExceeded, "model file '" + path + "' has " +
                                               std::to_string(st.st_size) +
                                               " bytes, over the limit max_model_bytes=" +
                                               std::to_string(options.limits.max_model_bytes));
  }
  std::shared_ptr<const io::MappedFile> file;
  // Read first: `file` is set by the read, and the order in which a call's arguments are
  // evaluated is unspecified (GCC copied the still-empty `file` first, so the pages of weights
  // repacked at load were never given back while compiling).
  graph::Model read = onnx::ReadModelFile(path, detail::ToReadOptions(options), &file);
  std::shared_ptr<const detail::ModelImpl> impl =
      detail::CompileModel(std::move(read), options, file);
  detail::ReleaseUnreadWeightPages(*impl, *file);
  return Model(std::move(impl));
}

Model Model::LoadFromBytes(const void* data, size_t size, const LoadOptions& options) {
  // The bytes belong to the caller: the reader copies what it keeps (no owner given).
  detail::CheckLimitValues(options.limits);
  return Model(detail::CompileModel(
      onnx::ReadModel(data, size, detail::ToReadOptions(options), nullptr), options));
}

const std::vector<ValueDescription>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueDescription>& Model::outputs() const { return impl_->outputs; }
int64_t Model::ir_version() const { return impl_->model.ir_version; }
std::vector<std::pair<std::string, int64_t>> Model::opsets() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& o : impl_->model.opsets) out.emplace_back(o.domain, o.version);
  return out;
}
int64_t Model::initializer_bytes() const {
  return impl_->initializer_bytes;
}

}  // namespace simplecpp
