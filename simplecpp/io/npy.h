// NumPy .npy files (format 1.0-3.0, little-endian, C order) <-> Tensor.
#pragma once

#include <string>

#include "simplecpp/tensor.h"

namespace simplecpp::io {

Tensor ReadNpyFile(const std::string& path);
Tensor ParseNpy(const void* data, size_t size);
void WriteNpyFile(const std::string& path, const Tensor& tensor);
std::string SerializeNpy(const Tensor& tensor);

// Reads a tensor from .npy (by magic bytes) or TensorProto .pb; `name` gets the proto's name.
Tensor ReadTensorFile(const std::string& path, std::string* name = nullptr);

}  // namespace simplecpp::io
