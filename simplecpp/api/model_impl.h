// What a loaded Model and a Session hold (private to the simplecpp layer).
#pragma once

#include <memory>
#include <vector>

#include "graph/executor.h"
#include "graph/ir.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::detail {

struct ModelImpl {
  graph::Model model;  // owns initializers (possibly borrowing the mapped file)
  std::shared_ptr<const graph::Plan> plan;
  std::vector<ValueDescription> inputs;
  std::vector<ValueDescription> outputs;
};

// Builds the ModelImpl from an imported graph::Model (plan, descriptions).
std::shared_ptr<const ModelImpl> CompileModel(graph::Model model, const LoadOptions& options);

}  // namespace simplecpp::detail
