// ONNX ModelProto bytes -> graph::Model, with protozero. The only place (with model_writer and
// tensor_proto) that knows the ONNX protobuf schema.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graph/ir.h"

namespace simplecpp::io {
class MappedFile;
}  // namespace simplecpp::io

namespace simplecpp::onnx {

struct ReadOptions {
  // Folder that external-data locations are resolved in. Empty: external data is refused.
  std::string external_data_dir;
  int64_t max_model_bytes = int64_t{4} << 30;
  int64_t max_tensor_bytes = int64_t{16} << 30;
  int64_t max_nodes = 1 << 22;
  int64_t max_graph_depth = 64;
  // The mapped file the model bytes lie in (ReadModelFile sets it): tensors copied out of it
  // (raw_data not aligned for its element type) give its pages back as they are copied, so the
  // mapped source and the copy are never both resident for a large weight.
  const io::MappedFile* mapping = nullptr;
};

// Parses a ModelProto. Large raw_data tensors may borrow the bytes (zero copy): `owner` keeps
// `data` alive for as long as any tensor of the returned model lives (pass nullptr to force
// copies). Borrowed data is only aligned to its element type (raw_data has no alignment
// guarantee; misaligned blocks are copied) and, from ReadModelFile, lies in read-only pages.
// External data (options.external_data_dir) is mapped by the reader itself and may be borrowed
// from that mapping regardless of `owner`. Throws Error(kInvalidModel) for malformed input,
// naming what was wrong and where; Error(kLimitExceeded) past the ReadOptions limits.
graph::Model ReadModel(const void* data, size_t size, const ReadOptions& options,
                       std::shared_ptr<const void> owner);

// Maps (or reads once) the file and parses it; external data is resolved in the file's folder
// unless options.external_data_dir is set.
graph::Model ReadModelFile(const std::string& path, ReadOptions options = {});
// As above, also handing back the mapping the tensors borrow from (io/mapped_file.h).
graph::Model ReadModelFile(const std::string& path, ReadOptions options,
                           std::shared_ptr<const io::MappedFile>* file_out);

}  // namespace simplecpp::onnx
