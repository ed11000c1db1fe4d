// SubgraphBody (see subgraph_body.h): the executor pool and body compilation shared by the
// control flow ops and FlexAttention.
#include "graph/ops/subgraph_body.h"

namespace simplecpp::graph {

std::vector<Value> SubgraphBody::Run(const std::map<std::string, Value>& inputs,
                                     const std::map<std::string, Value>& outer,
                                     const kernels::Parallel& parallel) const {
  std::unique_ptr<Pooled> pooled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      pooled = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!pooled) {
    pooled = std::make_unique<Pooled>();
    pooled->exec = std::make_unique<Executor>(plan_, &pooled->parallel);
  }
  pooled->parallel.target = &parallel;
  // If RunValues throws, `pooled` (executor and forwarding Parallel) is destroyed here.
  std::vector<Value> out = pooled->exec->RunValues(inputs, &outer);
  pooled->parallel.target = nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(std::move(pooled));
  return out;
}

std::shared_ptr<const SubgraphBody> CompileSubgraphBody(const Graph& g, const SubgraphContext& ctx,
                                                        const std::vector<ValueType>& input_types) {
  Graph copy = g;
  for (size_t i = 0; i < copy.inputs.size(); ++i) {
    TypeInfo& t = copy.inputs[i].type;
    if (i < input_types.size() && input_types[i].dtype != DType::kUndefined) {
      t = TypeInfoOf(input_types[i]);
    } else if (t.kind == TypeInfo::Kind::kUnknown) {
      t.kind = TypeInfo::Kind::kTensor;
    }
    t.has_shape = false;
    t.dims.clear();
  }
  return std::make_shared<const SubgraphBody>(
      Plan::Build(copy, *ctx.opsets, *ctx.options, *ctx.outer_types, ctx.depth,
                  ctx.outer_constants));
}

}  // namespace simplecpp::graph
