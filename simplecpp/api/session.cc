// simplecpp::Session: one caller's executor, thread pool and memory (simplecpp/simplecpp.h).
#include "graph/thread_pool.h"
#include "simplecpp/api/model_impl.h"

namespace simplecpp {
namespace detail {

struct SessionImpl {
  std::shared_ptr<const ModelImpl> model;
  std::unique_ptr<kernels::Parallel> threads;
  std::unique_ptr<graph::Executor> executor;
};

}  // namespace detail

Session::Session(const Model& model, const SessionOptions& options)
    : impl_(std::make_unique<detail::SessionImpl>()) {
  if (!model.impl()) throw Error(ErrorCode::kInvalidArgument, "Session: the model is not loaded");
  impl_->model = model.impl();
  impl_->threads = graph::MakeThreadPool(options.threads);
  impl_->executor = std::make_unique<graph::Executor>(impl_->model->plan, impl_->threads.get());
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

namespace {

// The outputs named in `output_names` (all when empty), by name.
template <typename T>
std::map<std::string, T> SelectOutputs(const graph::Plan& plan, std::vector<T> values,
                                       const std::vector<std::string>& output_names) {
  const auto& outs = plan.outputs();
  std::map<std::string, T> result;
  if (output_names.empty()) {
    for (size_t i = 0; i < outs.size(); ++i) result[outs[i].name] = std::move(values[i]);
    return result;
  }
  for (const std::string& name : output_names) {
    bool found = false;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].name == name) {
        result[name] = values[i];
        found = true;
        break;
      }
    }
    if (!found) throw Error(ErrorCode::kInvalidArgument, "'" + name + "' is not an output of the model");
  }
  return result;
}

}  // namespace

std::map<std::string, Tensor> Session::Run(const std::map<std::string, Tensor>& inputs,
                                           const std::vector<std::string>& output_names) {
  std::map<std::string, Value> feeds;
  for (const auto& [name, t] : inputs) feeds.emplace(name, Value(t));
  std::map<std::string, Value> values = RunValues(feeds, output_names);
  std::map<std::string, Tensor> result;
  for (auto& [name, v] : values) {
    if (!v.is_tensor()) {
      throw Error(ErrorCode::kInvalidArgument, "output '" + name + "' is " + v.Describe() +
                                                   ", not a tensor: use Session::RunValues");
    }
    result[name] = v.tensor();
  }
  return result;
}

std::map<std::string, Value> Session::RunValues(const std::map<std::string, Value>& inputs,
                                                const std::vector<std::string>& output_names) {
  return SelectOutputs(*impl_->model->plan, impl_->executor->RunValues(inputs), output_names);
}

void Session::set_profiling(bool on) { impl_->executor->set_profiling(on); }

std::vector<Session::NodeTiming> Session::last_profile() const {
  std::vector<NodeTiming> out;
  for (const auto& t : impl_->executor->last_profile()) {
    out.push_back(NodeTiming{t.node->name, t.node->op_type, t.milliseconds, t.output_dims,
                             t.output_dims_known});
  }
  return out;
}

Session::MemoryStats Session::memory_stats() const {
  MemoryStats stats;
  stats.peak_bytes_in_use = static_cast<int64_t>(impl_->executor->peak_bytes_in_use());
  stats.buffer_allocations = static_cast<int64_t>(impl_->executor->buffer_allocations());
  return stats;
}

}  // namespace simplecpp
