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

std::map<std::string, Tensor> Session::Run(const std::map<std::string, Tensor>& inputs,
                                           const std::vector<std::string>& output_names) {
  std::vector<Tensor> values = impl_->executor->Run(inputs);
  const auto& outs = impl_->model->plan->outputs();
  std::map<std::string, Tensor> result;
  if (output_names.empty()) {
    for (size_t i = 0; i < outs.size(); ++i) result[outs[i].name] = values[i];
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

void Session::set_profiling(bool on) { impl_->executor->set_profiling(on); }

std::vector<Session::NodeTiming> Session::last_profile() const {
  std::vector<NodeTiming> out;
  for (const auto& t : impl_->executor->last_profile()) {
    out.push_back(NodeTiming{t.node->name, t.node->op_type, t.milliseconds});
  }
  return out;
}

}  // namespace simplecpp
