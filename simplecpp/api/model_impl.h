// What a loaded Model and a Session hold (private to the simplecpp layer).
#pragma once

#include <memory>
#include <vector>

#include "graph/executor.h"
#include "graph/ir.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::io {
class MappedFile;
}  // namespace simplecpp::io

namespace simplecpp::detail {

struct ModelImpl {
  // The imported model without its top-level initializers: the plan holds the constants it
  // runs with, and the rest (weights repacked or folded at load, copies of misaligned tensors)
  // would only take memory.
  graph::Model model;
  int64_t initializer_bytes = 0;  // of the top-level initializers as imported
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

// Builds the ModelImpl from an imported graph::Model (plan, descriptions). `file`: the mapping the
// model's tensors borrow from, if any; the pages of weights repacked at load are given back as
// each is repacked (MappedFile::ReleasePages).
std::shared_ptr<const ModelImpl> CompileModel(graph::Model model, const LoadOptions& options,
                                              std::shared_ptr<const io::MappedFile> file = nullptr);

// Gives back the pages of the mapped model file that the plan never reads while running: the
// protobuf framing, tensors copied at load, weights folded or repacked at load (a blocked int4
// weight repacked for MatMulNBits, an int8 weight dequantized to float32), whose bytes were read
// once and would otherwise stay resident. Only a hint to the OS: a later read (export, Describe)
// faults the bytes in again from the file.
void ReleaseUnreadWeightPages(const ModelImpl& impl, const io::MappedFile& file);

}  // namespace simplecpp::detail
