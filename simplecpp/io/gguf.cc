// GGUF reader (simplecpp/io/gguf.h). Hostile-input code: every read goes through Cursor, which
// checks the bytes that remain; counts are checked against the smallest encoding of what they
// count before any allocation.
#include "simplecpp/io/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "quant/ggml_blocks.h"
#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"

namespace simplecpp::io {
namespace {

// ggml's GGML_MAX_DIMS.
constexpr uint32_t kMaxDims = 4;
// Arrays of arrays are allowed by the format; deeper nesting than this is refused (it would only
// serve to exhaust the stack).
constexpr int kMaxArrayDepth = 4;
// The largest general.alignment accepted (ggml writes 32; larger ones only waste the file).
constexpr uint64_t kMaxAlignment = uint64_t{1} << 24;

[[noreturn]] void Bad(const std::string& what) {
  throw Error(ErrorCode::kInvalidModel, "gguf: " + what);
}

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  T Read(const char* what) {
    if (remaining() < sizeof(T)) Truncated(what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string String(const std::string& what) {
    const uint64_t n = Read<uint64_t>(what.c_str());
    if (n > remaining()) {
      Bad(what + ": string length " + std::to_string(n) + " exceeds the " +
          std::to_string(remaining()) + " bytes left");
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

 private:
  [[noreturn]] void Truncated(const char* what) const {
    Bad(std::string("truncated at byte ") + std::to_string(pos_) + " (reading " + what + ")");
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The fewest bytes one value of `type` takes in the file (arrays and strings: their headers).
size_t MinEncodedSize(GgufType type) {
  switch (type) {
    case GgufType::kUInt8: case GgufType::kInt8: case GgufType::kBool: return 1;
    case GgufType::kUInt16: case GgufType::kInt16: return 2;
    case GgufType::kUInt32: case GgufType::kInt32: case GgufType::kFloat32: return 4;
    case GgufType::kUInt64: case GgufType::kInt64: case GgufType::kFloat64: return 8;
    case GgufType::kString: return 8;
    case GgufType::kArray: return 12;
  }
  return 1;
}

bool KnownType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

GgufValue ReadValue(Cursor* c, GgufType type, const std::string& key, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::kUInt8: v.uinteger = c->Read<uint8_t>("uint8"); v.integer = static_cast<int64_t>(v.uinteger); break;
    case GgufType::kInt8: v.integer = c->Read<int8_t>("int8"); break;
    case GgufType::kUInt16: v.uinteger = c->Read<uint16_t>("uint16"); v.integer = static_cast<int64_t>(v.uinteger); break;
    case GgufType::kInt16: v.integer = c->Read<int16_t>("int16"); break;
    case GgufType::kUInt32: v.uinteger = c->Read<uint32_t>("uint32"); v.integer = static_cast<int64_t>(v.uinteger); break;
    case GgufType::kInt32: v.integer = c->Read<int32_t>("int32"); break;
    case GgufType::kUInt64:
      v.uinteger = c->Read<uint64_t>("uint64");
      v.integer = v.uinteger > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v.uinteger);
      break;
    case GgufType::kInt64: v.integer = c->Read<int64_t>("int64"); break;
    case GgufType::kFloat32: v.real = c->Read<float>("float32"); break;
    case GgufType::kFloat64: v.real = c->Read<double>("float64"); break;
    case GgufType::kBool: {
      const uint8_t b = c->Read<uint8_t>("bool");
      if (b > 1) Bad("key '" + key + "': bool value " + std::to_string(b) + " is neither 0 nor 1");
      v.integer = b;
      v.uinteger = b;
      break;
    }
    case GgufType::kString: v.text = c->String("string value of '" + key + "'"); break;
    case GgufType::kArray: {
      if (depth >= kMaxArrayDepth) Bad("key '" + key + "': arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      const uint32_t et = c->Read<uint32_t>("array element type");
      if (!KnownType(et)) Bad("key '" + key + "': unknown array element type " + std::to_string(et));
      v.element_type = static_cast<GgufType>(et);
      const uint64_t n = c->Read<uint64_t>("array length");
      if (n > c->remaining() / MinEncodedSize(v.element_type)) {
        Bad("key '" + key + "': array of " + std::to_string(n) + " " + GgufTypeName(v.element_type) +
            " values cannot fit in the " + std::to_string(c->remaining()) + " bytes left");
      }
      v.elements.reserve(static_cast<size_t>(n));
      for (uint64_t i = 0; i < n; ++i) v.elements.push_back(ReadValue(c, v.element_type, key, depth + 1));
      break;
    }
  }
  return v;
}

void ReadMetadata(Cursor* c, uint64_t count, GgufFile* f) {
  std::set<std::string> seen;
  for (uint64_t i = 0; i < count; ++i) {
    std::string key = c->String("metadata key " + std::to_string(i));
    if (key.empty()) Bad("metadata key " + std::to_string(i) + " is empty");
    if (!seen.insert(key).second) Bad("duplicate metadata key '" + key + "'");
    const uint32_t t = c->Read<uint32_t>("metadata value type");
    if (!KnownType(t)) Bad("key '" + key + "': unknown value type " + std::to_string(t));
    GgufValue v = ReadValue(c, static_cast<GgufType>(t), key, 0);
    f->metadata.emplace_back(std::move(key), std::move(v));
  }
}

// The byte size of a tensor from its dims and type, or a named error.
uint64_t TensorBytes(const GgufTensorInfo& t) {
  quant::GgmlTypeLayout layout;
  if (!quant::GgmlTypeLayoutOf(t.type, &layout)) {
    const char* name = quant::GgmlTypeName(t.type);
    Bad("tensor '" + t.name + "': " +
        (name ? std::string("ggml type ") + name + " has no known block layout"
              : "unknown ggml type id " + std::to_string(t.type)));
  }
  if (t.dims[0] % layout.block_elements != 0) {
    Bad("tensor '" + t.name + "': its first dimension " + std::to_string(t.dims[0]) +
        " is not a multiple of the " + quant::GgmlTypeName(t.type) + " block of " +
        std::to_string(layout.block_elements));
  }
  // rows * blocks per row * block bytes, each step checked against overflow.
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  uint64_t bytes = static_cast<uint64_t>(t.dims[0] / layout.block_elements) *
                   static_cast<uint64_t>(layout.block_bytes);
  for (size_t d = 1; d < t.dims.size(); ++d) {
    const uint64_t n = static_cast<uint64_t>(t.dims[d]);
    if (bytes != 0 && n > max / bytes) Bad("tensor '" + t.name + "': its byte size overflows");
    bytes *= n;
  }
  return bytes;
}

GgufTensorInfo ReadTensorInfo(Cursor* c, uint64_t index) {
  GgufTensorInfo t;
  t.name = c->String("name of tensor " + std::to_string(index));
  const uint32_t n_dims = c->Read<uint32_t>("tensor dimension count");
  if (n_dims < 1 || n_dims > kMaxDims) {
    Bad("tensor '" + t.name + "': " + std::to_string(n_dims) + " dimensions (1 to " +
        std::to_string(kMaxDims) + " allowed)");
  }
  int64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t n = c->Read<uint64_t>("tensor dimension");
    if (n == 0 || n > static_cast<uint64_t>(INT64_MAX) ||
        elements > INT64_MAX / static_cast<int64_t>(n)) {
      Bad("tensor '" + t.name + "': dimension " + std::to_string(d) + " (" + std::to_string(n) +
          ") is zero or makes the element count overflow");
    }
    t.dims.push_back(static_cast<int64_t>(n));
    elements *= static_cast<int64_t>(n);
  }
  t.type = c->Read<uint32_t>("tensor type");
  t.offset = c->Read<uint64_t>("tensor offset");
  t.bytes = TensorBytes(t);
  return t;
}

uint64_t ReadAlignment(const GgufFile& f) {
  const GgufValue* a = f.Find("general.alignment");
  if (!a) return 32;
  if (!a->is_integer() || a->integer <= 0 || static_cast<uint64_t>(a->integer) > kMaxAlignment ||
      (a->integer & (a->integer - 1)) != 0) {
    Bad("general.alignment must be a power of two integer up to " + std::to_string(kMaxAlignment));
  }
  return static_cast<uint64_t>(a->integer);
}

// Places every tensor in the data section; refuses misaligned, out-of-range and overlapping ones.
void PlaceTensors(const uint8_t* base, size_t size, GgufFile* f) {
  const uint64_t data_size = size - f->data_offset;
  std::vector<const GgufTensorInfo*> by_offset;
  for (GgufTensorInfo& t : f->tensors) {
    if (t.offset % f->alignment != 0) {
      Bad("tensor '" + t.name + "': offset " + std::to_string(t.offset) +
          " is not a multiple of the alignment " + std::to_string(f->alignment));
    }
    if (t.offset > data_size || t.bytes > data_size - t.offset) {
      Bad("tensor '" + t.name + "': bytes [" + std::to_string(t.offset) + ", +" +
          std::to_string(t.bytes) + ") lie outside the data section of " +
          std::to_string(data_size) + " bytes");
    }
    t.data = base + f->data_offset + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensorInfo& a = *by_offset[i - 1];
    const GgufTensorInfo& b = *by_offset[i];
    if (a.offset + a.bytes > b.offset) Bad("tensors '" + a.name + "' and '" + b.name + "' overlap");
  }
}

}  // namespace

const char* GgufTypeName(GgufType type) {
  switch (type) {
    case GgufType::kUInt8: return "uint8";
    case GgufType::kInt8: return "int8";
    case GgufType::kUInt16: return "uint16";
    case GgufType::kInt16: return "int16";
    case GgufType::kUInt32: return "uint32";
    case GgufType::kInt32: return "int32";
    case GgufType::kFloat32: return "float32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kUInt64: return "uint64";
    case GgufType::kInt64: return "int64";
    case GgufType::kFloat64: return "float64";
  }
  return "unknown";
}

GgufValue GgufValue::String(std::string s) {
  GgufValue v;
  v.type = GgufType::kString;
  v.text = std::move(s);
  return v;
}
GgufValue GgufValue::UInt32(uint32_t x) {
  GgufValue v;
  v.type = GgufType::kUInt32;
  v.uinteger = x;
  v.integer = x;
  return v;
}
GgufValue GgufValue::Int32(int32_t x) {
  GgufValue v;
  v.type = GgufType::kInt32;
  v.integer = x;
  return v;
}
GgufValue GgufValue::UInt64(uint64_t x) {
  GgufValue v;
  v.type = GgufType::kUInt64;
  v.uinteger = x;
  v.integer = x > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(x);
  return v;
}
GgufValue GgufValue::Float32(float x) {
  GgufValue v;
  v.type = GgufType::kFloat32;
  v.real = x;
  return v;
}
GgufValue GgufValue::Bool(bool x) {
  GgufValue v;
  v.type = GgufType::kBool;
  v.integer = x;
  v.uinteger = x;
  return v;
}
GgufValue GgufValue::Array(GgufType element_type, std::vector<GgufValue> elements) {
  GgufValue v;
  v.type = GgufType::kArray;
  v.element_type = element_type;
  v.elements = std::move(elements);
  return v;
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::kUInt8: case GgufType::kInt8: case GgufType::kUInt16: case GgufType::kInt16:
    case GgufType::kUInt32: case GgufType::kInt32: case GgufType::kUInt64: case GgufType::kInt64:
      return true;
    default:
      return false;
  }
}

int64_t GgufTensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  for (const auto& [k, v] : metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

const GgufTensorInfo* GgufFile::FindTensor(const std::string& name) const {
  for (const GgufTensorInfo& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

GgufFile ParseGguf(const void* data, size_t size) {
  const uint8_t* base = static_cast<const uint8_t*>(data);
  if (size < 4 || std::memcmp(base, "GGUF", 4) != 0) Bad("not a GGUF file (no 'GGUF' magic)");
  Cursor c(base, size);
  c.Read<uint32_t>("magic");
  GgufFile f;
  f.version = c.Read<uint32_t>("version");
  if (f.version == 1) throw Error(ErrorCode::kUnsupported, "gguf: version 1 files (32-bit counts) are not supported");
  if (f.version != 2 && f.version != 3) {
    // A big-endian file reads its version byte-swapped (2 or 3 in the high byte).
    if (f.version == 0x02000000u || f.version == 0x03000000u) {
      throw Error(ErrorCode::kUnsupported, "gguf: big-endian files are not supported");
    }
    Bad("unknown version " + std::to_string(f.version));
  }
  const uint64_t tensor_count = c.Read<uint64_t>("tensor count");
  const uint64_t kv_count = c.Read<uint64_t>("metadata count");
  // Each key/value takes at least 8 + 1 + 4 + 1 bytes, each tensor entry 8 + 4 + 8 + 4 + 8.
  if (kv_count > c.remaining() / 14) Bad(std::to_string(kv_count) + " metadata entries cannot fit in the file");
  if (tensor_count > c.remaining() / 32) Bad(std::to_string(tensor_count) + " tensor entries cannot fit in the file");
  ReadMetadata(&c, kv_count, &f);
  f.alignment = ReadAlignment(f);
  std::set<std::string> names;
  f.tensors.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    f.tensors.push_back(ReadTensorInfo(&c, i));
    if (!names.insert(f.tensors.back().name).second) {
      Bad("duplicate tensor name '" + f.tensors.back().name + "'");
    }
  }
  const uint64_t end = c.pos();
  const uint64_t pad = (f.alignment - end % f.alignment) % f.alignment;
  f.data_offset = end + pad;
  if (f.data_offset > size) {
    if (!f.tensors.empty()) Bad("the data section starts past the end of the file");
    f.data_offset = size;  // no tensors: the padding may be left out
  }
  PlaceTensors(base, size, &f);
  return f;
}

GgufFile OpenGguf(const std::string& path) {
  std::shared_ptr<const MappedFile> file = MappedFile::Open(path);
  GgufFile f;
  try {
    f = ParseGguf(file->data(), file->size());
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
  f.file = std::move(file);
  return f;
}

}  // namespace simplecpp::io
