// Writing GGUF files (version 3, little-endian; the layout in simplecpp/io/gguf.h). Used to
// export the built-in decoder as a ggml model, and by tests and fuzz seeds to make files whose
// every byte is known.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/io/gguf.h"

namespace simplecpp::io {

class GgufWriter {
 public:
  // alignment: a power of two; other than 32 it is written as general.alignment.
  explicit GgufWriter(uint64_t alignment = 32);

  // Adds a metadata entry (in call order). Throws Error(kInvalidArgument) for a duplicate key or
  // an array whose elements are not all of its element type.
  void Set(const std::string& key, GgufValue value);
  // Adds a tensor: dims in ggml order (dims[0] innermost), `bytes` already in the type's block
  // layout. Throws Error(kInvalidArgument) when the size does not match dims and type.
  void AddTensor(const std::string& name, std::vector<int64_t> dims, uint32_t ggml_type,
                 std::string bytes);

  std::string Serialize() const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> dims;
    uint32_t type;
    std::string bytes;
  };
  uint64_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace simplecpp::io
