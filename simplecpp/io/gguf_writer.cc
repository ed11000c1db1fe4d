// GGUF writer (simplecpp/io/gguf_writer.h).
#include "simplecpp/io/gguf_writer.h"

#include <cstring>
#include <utility>

#include "quant/ggml_blocks.h"
#include "simplecpp/error.h"

namespace simplecpp::io {
namespace {

[[noreturn]] void Bad(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "gguf writer: " + what);
}

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
}

void PutValue(std::string* out, const GgufValue& v) {
  switch (v.type) {
    case GgufType::kUInt8: Put<uint8_t>(out, static_cast<uint8_t>(v.uinteger)); break;
    case GgufType::kInt8: Put<int8_t>(out, static_cast<int8_t>(v.integer)); break;
    case GgufType::kUInt16: Put<uint16_t>(out, static_cast<uint16_t>(v.uinteger)); break;
    case GgufType::kInt16: Put<int16_t>(out, static_cast<int16_t>(v.integer)); break;
    case GgufType::kUInt32: Put<uint32_t>(out, static_cast<uint32_t>(v.uinteger)); break;
    case GgufType::kInt32: Put<int32_t>(out, static_cast<int32_t>(v.integer)); break;
    case GgufType::kUInt64: Put<uint64_t>(out, v.uinteger); break;
    case GgufType::kInt64: Put<int64_t>(out, v.integer); break;
    case GgufType::kFloat32: Put<float>(out, static_cast<float>(v.real)); break;
    case GgufType::kFloat64: Put<double>(out, v.real); break;
    case GgufType::kBool: Put<uint8_t>(out, v.integer ? 1 : 0); break;
    case GgufType::kString: PutString(out, v.text); break;
    case GgufType::kArray:
      Put<uint32_t>(out, static_cast<uint32_t>(v.element_type));
      Put<uint64_t>(out, v.elements.size());
      for (const GgufValue& e : v.elements) PutValue(out, e);
      break;
  }
}

void CheckArray(const std::string& key, const GgufValue& v) {
  if (v.type != GgufType::kArray) return;
  for (const GgufValue& e : v.elements) {
    if (e.type != v.element_type) Bad("key '" + key + "': array elements of mixed types");
    CheckArray(key, e);
  }
}

}  // namespace

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) Bad("alignment must be a power of two");
  if (alignment != 32) Set("general.alignment", GgufValue::UInt32(static_cast<uint32_t>(alignment)));
}

void GgufWriter::Set(const std::string& key, GgufValue value) {
  for (const auto& [k, v] : metadata_) {
    if (k == key) Bad("duplicate key '" + key + "'");
  }
  CheckArray(key, value);
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::AddTensor(const std::string& name, std::vector<int64_t> dims, uint32_t ggml_type,
                           std::string bytes) {
  if (dims.empty() || dims.size() > 4) Bad("tensor '" + name + "': 1 to 4 dimensions");
  int64_t rows = 1;
  for (size_t d = 1; d < dims.size(); ++d) rows *= dims[d];
  const int64_t row_bytes = quant::GgmlRowBytes(ggml_type, dims[0]);
  if (row_bytes < 0 || static_cast<uint64_t>(row_bytes * rows) != bytes.size()) {
    Bad("tensor '" + name + "': " + std::to_string(bytes.size()) +
        " bytes do not match its dims and type");
  }
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) Bad("duplicate tensor '" + name + "'");
  }
  tensors_.push_back(PendingTensor{name, std::move(dims), ggml_type, std::move(bytes)});
}

std::string GgufWriter::Serialize() const {
  std::string out = "GGUF";
  Put<uint32_t>(&out, 3);
  Put<uint64_t>(&out, tensors_.size());
  Put<uint64_t>(&out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    PutString(&out, key);
    Put<uint32_t>(&out, static_cast<uint32_t>(value.type));
    PutValue(&out, value);
  }
  auto padded = [this](uint64_t n) { return (n + alignment_ - 1) / alignment_ * alignment_; };
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    PutString(&out, t.name);
    Put<uint32_t>(&out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) Put<uint64_t>(&out, static_cast<uint64_t>(d));
    Put<uint32_t>(&out, t.type);
    Put<uint64_t>(&out, offset);
    offset = padded(offset + t.bytes.size());
  }
  out.resize(padded(out.size()), '\0');
  for (const PendingTensor& t : tensors_) {
    out.append(t.bytes);
    out.resize(padded(out.size()), '\0');
  }
  return out;
}

}  // namespace simplecpp::io
