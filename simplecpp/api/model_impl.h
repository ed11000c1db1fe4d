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

// Sets d->sequence / d->optional / d->dtype (the element dtype) of a sequence or optional type;
// leaves tensor types alone.
inline void DescribeValueKind(const graph::TypeInfo& type, ValueDescription* d) {
  if (type.kind != graph::TypeInfo::Kind::kSequence && type.kind != graph::TypeInfo::Kind::kOptional) return;
  const graph::ValueType t = graph::ValueTypeOf(type, "'" + d->name + "'");
  d->sequence = t.sequence;
  d->optional = t.optional;
  d->dtype = t.dtype;
  d->has_shape = false;
  d->dims.clear();
  d->dim_params.clear();
}

// Builds the ModelImpl from an imported graph::Model (plan, descriptions).
std::shared_ptr<const ModelImpl> CompileModel(graph::Model model, const LoadOptions& options);

}  // namespace simplecpp::detail
