// TensorProto <-> Tensor: the .pb files of the ONNX test layout and the CLI's inputs/outputs.
#pragma once

#include <cstddef>
#include <string>

#include "simplecpp/tensor.h"

namespace simplecpp::onnx {

// Parses a serialized TensorProto (raw_data or typed fields, packed or not). `name` (optional)
// receives TensorProto.name. External data is refused here (no folder to resolve it in).
Tensor ParseTensorProto(const void* data, size_t size, std::string* name = nullptr);
std::string SerializeTensorProto(const Tensor& tensor, const std::string& name);

Tensor ReadTensorProtoFile(const std::string& path, std::string* name = nullptr);
void WriteTensorProtoFile(const std::string& path, const Tensor& tensor, const std::string& name);

}  // namespace simplecpp::onnx
