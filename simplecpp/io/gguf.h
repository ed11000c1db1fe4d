// GGUF files (ggml's model format, versions 2 and 3, little-endian): the header, the metadata
// key/value pairs and the tensor table, read from bytes that may be hostile. The reader never
// copies tensor data: each tensor points into the bytes it was given, so those must outlive it.
//
// Layout (all integers little-endian):
//   "GGUF"  uint32 version  uint64 tensor_count  uint64 metadata_kv_count
//   metadata_kv_count x { string key, uint32 value_type, value }
//   tensor_count x { string name, uint32 n_dims, uint64 dims[n_dims], uint32 ggml_type,
//                    uint64 offset }
//   padding to `general.alignment` (default 32), then the data section; each tensor's bytes start
//   at data section + offset (a multiple of the alignment).
// A string is uint64 length + bytes (no terminator); an array is uint32 element type + uint64
// count + the elements. dims[0] is the innermost (contiguous) dimension: a ggml matrix of dims
// [K, N] is N rows of K elements.
//
// Every count, length and offset is checked against the bytes that remain before anything is
// allocated for it; any inconsistency (truncation, an offset out of the data section, tensors that
// overlap, a size that overflows, a duplicate key or tensor name) is an Error(kInvalidModel)
// whose message names the key or tensor. Version 1 (32-bit counts) and big-endian files are
// refused with Error(kUnsupported).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace simplecpp::io {

class MappedFile;

enum class GgufType : uint32_t {
  kUInt8 = 0,
  kInt8 = 1,
  kUInt16 = 2,
  kInt16 = 3,
  kUInt32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUInt64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

const char* GgufTypeName(GgufType type);

// One metadata value. Integers and bools keep their bits in `integer` (signed types sign-extended),
// floats their value in `real`; arrays hold their elements (of one element type) in `elements`.
struct GgufValue {
  GgufType type = GgufType::kUInt8;
  int64_t integer = 0;
  uint64_t uinteger = 0;  // the unsigned types' value (kUInt64 may exceed INT64_MAX)
  double real = 0.0;
  std::string text;
  GgufType element_type = GgufType::kUInt8;  // kArray
  std::vector<GgufValue> elements;           // kArray

  static GgufValue String(std::string s);
  static GgufValue UInt32(uint32_t v);
  static GgufValue Int32(int32_t v);
  static GgufValue UInt64(uint64_t v);
  static GgufValue Float32(float v);
  static GgufValue Bool(bool v);
  static GgufValue Array(GgufType element_type, std::vector<GgufValue> elements);

  bool is_integer() const;  // any integer type (not bool)
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] innermost
  uint32_t type = 0;          // ggml type id (quant/ggml_blocks.h)
  uint64_t offset = 0;        // from the start of the data section
  uint64_t bytes = 0;         // computed from dims and the type's block layout
  const uint8_t* data = nullptr;

  int64_t elements() const;
};

struct GgufFile {
  uint32_t version = 3;
  uint64_t alignment = 32;
  uint64_t data_offset = 0;  // where the data section starts in the bytes
  std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
  std::vector<GgufTensorInfo> tensors;                      // in file order
  std::shared_ptr<const MappedFile> file;  // keeps the bytes alive (Open only)

  const GgufValue* Find(const std::string& key) const;
  const GgufTensorInfo* FindTensor(const std::string& name) const;
};

// Parses bytes (borrowed: the tensors point into them).
GgufFile ParseGguf(const void* data, size_t size);
// Maps the file and parses it; the result holds the mapping.
GgufFile OpenGguf(const std::string& path);

}  // namespace simplecpp::io
