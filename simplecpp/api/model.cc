// simplecpp::Model: import + Plan::Build (simplecpp/simplecpp.h).
#include <fstream>

#include "simplecpp/api/model_impl.h"
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
  return d;
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

std::shared_ptr<const ModelImpl> CompileModel(graph::Model model, const LoadOptions& options) {
  auto impl = std::make_shared<ModelImpl>();
  impl->model = std::move(model);
  graph::OpsetMap opsets;
  for (const graph::OpsetImport& o : impl->model.opsets) {
    opsets[graph::CanonicalDomain(o.domain)] = o.version;
  }
  graph::PlanOptions plan_options;
  plan_options.constant_folding = options.constant_folding;
  plan_options.max_nodes = options.limits.max_nodes;
  plan_options.max_graph_depth = options.limits.max_graph_depth;
  impl->plan = graph::Plan::Build(impl->model.graph, opsets, plan_options);
  for (const graph::ValueInfo& v : impl->plan->inputs()) impl->inputs.push_back(Describe(v));
  for (const graph::ValueInfo& v : impl->plan->outputs()) impl->outputs.push_back(Describe(v));
  return impl;
}

}  // namespace detail

Model Model::Load(const std::string& path, const LoadOptions& options) {
  return Model(detail::CompileModel(onnx::ReadModelFile(path, detail::ToReadOptions(options)), options));
}

Model Model::LoadFromBytes(const void* data, size_t size, const LoadOptions& options) {
  // The bytes belong to the caller: the reader copies what it keeps (no owner given).
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

}  // namespace simplecpp
