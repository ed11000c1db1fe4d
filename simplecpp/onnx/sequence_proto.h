// SequenceProto / OptionalProto -> Value: the .pb files of the ONNX test layout for sequence
// and optional inputs and outputs. Only tensor contents are read (sequences of tensors, optionals
// of a tensor or of a sequence of tensors); maps, sparse tensors and deeper nestings are refused
// with Error(kUnsupported).
#pragma once

#include <cstddef>
#include <string>

#include "simplecpp/value.h"

namespace simplecpp::onnx {

// A sequence of tensors (an empty one has element dtype kUndefined). `name` receives the name.
Value ParseSequenceProto(const void* data, size_t size, std::string* name = nullptr);
// The held value (a tensor or a sequence), or Value::None() when the optional is empty.
Value ParseOptionalProto(const void* data, size_t size, std::string* name = nullptr);

// Reads a .pb file holding a TensorProto, or a SequenceProto when `sequence`, or an OptionalProto
// when `optional` (the declared type of the graph value decides which).
Value ReadValueProtoFile(const std::string& path, bool sequence, bool optional,
                         std::string* name = nullptr);

}  // namespace simplecpp::onnx
