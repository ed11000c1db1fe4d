// TensorProto and SparseTensorProto -> Tensor, shared by the model reader (initializers, TENSOR
// attributes) and ParseTensorProto (.pb test data). Accepts raw_data (little-endian, borrowed from
// the input when large and aligned), every typed field in packed and unpacked form, and external
// data confined to the model's folder. Every size is checked before anything is allocated.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/proto_fields.h"
#include "simplecpp/onnx/proto_reader.h"

namespace simplecpp::onnx::internal {
namespace {

namespace tf = fields::tensor;

// Which typed field holds a dtype's values when raw_data is not used (onnx.proto3).
enum class TypedField { kFloat, kInt32, kString, kInt64, kDouble, kUInt64 };

const char* TypedFieldName(TypedField f) {
  switch (f) {
    case TypedField::kFloat: return "float_data";
    case TypedField::kInt32: return "int32_data";
    case TypedField::kString: return "string_data";
    case TypedField::kInt64: return "int64_data";
    case TypedField::kDouble: return "double_data";
    case TypedField::kUInt64: return "uint64_data";
  }
  return "?";
}

TypedField FieldForDType(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kComplex64:
      return TypedField::kFloat;
    case DType::kString:
      return TypedField::kString;
    case DType::kInt64:
      return TypedField::kInt64;
    case DType::kFloat64:
    case DType::kComplex128:
      return TypedField::kDouble;
    case DType::kUInt32:
    case DType::kUInt64:
      return TypedField::kUInt64;
    default:
      // int32, int16, int8, uint16, uint8, bool, (b)float16, float8*, 4-bit and 2-bit types.
      return TypedField::kInt32;
  }
}

// Number of typed-field entries that encode n elements of t.
int64_t TypedCount(DType t, int64_t n) {
  const int bits = DTypeBits(t);
  if (t == DType::kComplex64 || t == DType::kComplex128) return 2 * n;  // real, imaginary
  if (bits == 4) return n / 2 + n % 2;                                  // one byte per entry
  if (bits == 2) return (n + 3) / 4;
  return n;
}

struct TensorFields {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::string name;
  bool has_segment = false;
  bool has_raw = false;
  protozero::data_view raw;
  std::vector<float> floats;
  std::vector<int32_t> int32s;
  std::vector<std::string> strings;
  std::vector<int64_t> int64s;
  std::vector<double> doubles;
  std::vector<uint64_t> uint64s;
  int32_t data_location = tf::kLocationDefault;
  std::vector<std::pair<std::string, std::string>> external_data;

  size_t TypedSize(TypedField f) const {
    switch (f) {
      case TypedField::kFloat: return floats.size();
      case TypedField::kInt32: return int32s.size();
      case TypedField::kString: return strings.size();
      case TypedField::kInt64: return int64s.size();
      case TypedField::kDouble: return doubles.size();
      case TypedField::kUInt64: return uint64s.size();
    }
    return 0;
  }
};

TensorFields ScanTensor(pbf_reader msg) {
  TensorFields f;
  while (msg.next()) {
    switch (msg.tag()) {
      case tf::kDims: AppendInt64s(msg, "dims", &f.dims); break;
      case tf::kDataType: f.data_type = ReadInt32(msg, "data_type"); break;
      case tf::kSegment:
        ReadBytesView(msg, "segment");
        f.has_segment = true;
        break;
      case tf::kFloatData: AppendFloats(msg, "float_data", &f.floats); break;
      case tf::kInt32Data: AppendInt32s(msg, "int32_data", &f.int32s); break;
      case tf::kStringData: f.strings.push_back(ReadString(msg, "string_data")); break;
      case tf::kInt64Data: AppendInt64s(msg, "int64_data", &f.int64s); break;
      case tf::kName: f.name = ReadString(msg, "name"); break;
      case tf::kRawData:
        f.raw = ReadBytesView(msg, "raw_data");
        f.has_raw = true;
        break;
      case tf::kDoubleData: AppendDoubles(msg, "double_data", &f.doubles); break;
      case tf::kUint64Data: AppendUInt64s(msg, "uint64_data", &f.uint64s); break;
      case tf::kExternalData:
        f.external_data.push_back(ReadStringEntry(ReadMessage(msg, "external_data")));
        break;
      case tf::kDataLocation: f.data_location = ReadInt32(msg, "data_location"); break;
      default: msg.skip();
    }
  }
  return f;
}

// Alignment a borrowed buffer of t must have (complex128 needs only double's alignment).
size_t ElementAlignment(DType t) {
  const size_t bytes = DTypeSize(t);
  if (bytes == 0) return 1;
  return bytes > 8 ? 8 : bytes;
}

// Wraps `size` bytes at `data` (already checked to be the tensor's byte size): borrows when an
// owner is given, the block is large enough and aligned for the element type; copies otherwise.
// A copy out of `mapping` (when given) gives the source pages back chunk by chunk.
Tensor TensorFromBytes(DType dtype, const Dims& dims, const char* data, size_t size,
                       const std::shared_ptr<const void>& owner, const io::MappedFile* mapping) {
  if (owner != nullptr && size >= kMinBorrowBytes &&
      reinterpret_cast<uintptr_t>(data) % ElementAlignment(dtype) == 0) {
    return Tensor::Borrow(dtype, dims, owner, data);
  }
  Tensor t(dtype, dims);
  constexpr size_t kChunk = size_t{4} << 20;
  for (size_t done = 0; done < size; done += kChunk) {
    const size_t n = std::min(kChunk, size - done);
    std::memcpy(static_cast<char*>(t.raw_data()) + done, data + done, n);
    if (mapping != nullptr) mapping->ReleasePages(data + done, n);
  }
  return t;
}

void CheckTensorBytes(uint64_t bytes, const ParseContext& ctx) {
  if (bytes > static_cast<uint64_t>(ctx.options.max_tensor_bytes)) {
    throw Error(ErrorCode::kLimitExceeded,
                "tensor needs " + std::to_string(bytes) + " bytes, over the limit max_tensor_bytes=" +
                    std::to_string(ctx.options.max_tensor_bytes));
  }
}

// Checked element count: negative dims are a malformed model, overflow a limit.
int64_t NumElementsOf(const Dims& dims) {
  for (int64_t d : dims) {
    if (d < 0) ThrowInvalid("negative dimension in dims " + DimsToString(dims));
  }
  return CheckedNumElements(dims);
}

uint64_t ParseDecimal(const std::string& key, const std::string& s) {
  if (s.empty() || s.size() > 20) ThrowInvalid("external_data " + key + " '" + s + "' is not a number");
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') ThrowInvalid("external_data " + key + " '" + s + "' is not a number");
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      ThrowInvalid("external_data " + key + " '" + s + "' overflows");
    }
    v = v * 10 + digit;
  }
  return v;
}

std::string RealPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) {
    throw Error(ErrorCode::kIo, "external data file '" + path + "' cannot be resolved (missing?)");
  }
  std::string out(resolved);
  std::free(resolved);
  return out;
}

// Resolves an external-data location inside `dir`, refusing anything that could leave it.
std::string ResolveExternalPath(const std::string& dir, const std::string& location) {
  if (location.empty()) ThrowInvalid("external_data has no 'location'");
  if (location.find('\0') != std::string::npos) ThrowInvalid("external_data location contains NUL");
  const bool drive = location.size() >= 2 && location[1] == ':' &&
                     ((location[0] >= 'a' && location[0] <= 'z') ||
                      (location[0] >= 'A' && location[0] <= 'Z'));
  if (location[0] == '/' || location[0] == '\\' || drive) {
    ThrowInvalid("external_data location '" + location + "' is an absolute path (refused)");
  }
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2) {
      ThrowInvalid("external_data location '" + location + "' contains '..' (refused)");
    }
    start = end + 1;
  }
  const std::string base = RealPath(dir);
  const std::string resolved = RealPath(dir + "/" + location);
  const std::string prefix = base == "/" ? base : base + "/";
  if (resolved.compare(0, prefix.size(), prefix) != 0) {
    ThrowInvalid("external_data location '" + location + "' resolves outside the model folder");
  }
  return resolved;
}

Tensor ReadExternal(const TensorFields& f, DType dtype, size_t byte_size, ParseContext& ctx) {
  std::string location;
  bool has_length = false;
  uint64_t offset = 0, length = 0;
  for (const auto& [key, value] : f.external_data) {
    if (key == "location") {
      location = value;
    } else if (key == "offset") {
      offset = ParseDecimal(key, value);
    } else if (key == "length") {
      length = ParseDecimal(key, value);
      has_length = true;
    }  // "checksum" and unknown keys are ignored
  }
  if (ctx.options.external_data_dir.empty()) {
    ThrowInvalid("tensor data is external ('" + location +
                 "') but there is no folder to resolve it in");
  }
  const std::string path = ResolveExternalPath(ctx.options.external_data_dir, location);
  std::shared_ptr<const io::MappedFile>& file = ctx.external_files[path];
  if (file == nullptr) file = io::MappedFile::Open(path);
  const uint64_t file_size = file->size();
  if (offset > file_size) {
    ThrowInvalid("external_data offset " + std::to_string(offset) + " is beyond the end of '" +
                 location + "' (" + std::to_string(file_size) + " bytes)");
  }
  if (!has_length) length = file_size - offset;
  if (length > file_size - offset) {  // offset + length > file_size, without overflow
    ThrowInvalid("external_data offset " + std::to_string(offset) + " + length " +
                 std::to_string(length) + " is beyond the end of '" + location + "' (" +
                 std::to_string(file_size) + " bytes)");
  }
  if (length != byte_size) {
    ThrowInvalid("external_data length " + std::to_string(length) + " does not match the " +
                 std::to_string(byte_size) + " bytes of " + DTypeName(dtype) + " " +
                 DimsToString(f.dims));
  }
  std::shared_ptr<const void> owner(file, file->data());
  return TensorFromBytes(dtype, f.dims, file->data() + offset, byte_size, owner, file.get());
}

// Stores typed-field values as the tensor's little-endian bytes.
void FillFromTyped(const TensorFields& f, TypedField field, Tensor* t) {
  char* out = static_cast<char*>(t->raw_data());
  switch (field) {
    case TypedField::kFloat:
      if (!f.floats.empty()) std::memcpy(out, f.floats.data(), f.floats.size() * sizeof(float));
      break;
    case TypedField::kDouble:
      if (!f.doubles.empty()) std::memcpy(out, f.doubles.data(), f.doubles.size() * sizeof(double));
      break;
    case TypedField::kInt64:
      if (!f.int64s.empty()) std::memcpy(out, f.int64s.data(), f.int64s.size() * sizeof(int64_t));
      break;
    case TypedField::kUInt64:
      if (t->dtype() == DType::kUInt32) {
        for (size_t i = 0; i < f.uint64s.size(); ++i) {
          const uint32_t v = static_cast<uint32_t>(f.uint64s[i]);
          std::memcpy(out + i * 4, &v, 4);
        }
      } else if (!f.uint64s.empty()) {
        std::memcpy(out, f.uint64s.data(), f.uint64s.size() * sizeof(uint64_t));
      }
      break;
    case TypedField::kInt32: {
      // Each entry holds one element's bit pattern in its low bits (one packed byte for the 4-
      // and 2-bit types); bool is normalized to 0/1.
      const int bits = DTypeBits(t->dtype());
      const size_t width = bits >= 8 ? static_cast<size_t>(bits / 8) : 1;
      const bool is_bool = t->dtype() == DType::kBool;
      for (size_t i = 0; i < f.int32s.size(); ++i) {
        uint32_t v = static_cast<uint32_t>(f.int32s[i]);
        if (is_bool) v = v != 0;
        for (size_t b = 0; b < width; ++b) out[i * width + b] = static_cast<char>((v >> (8 * b)) & 0xff);
      }
      break;
    }
    case TypedField::kString:
      break;
  }
}

Tensor BuildTensor(TensorFields& f, ParseContext& ctx) {
  if (f.data_type == 0) ThrowInvalid("tensor has no data_type");
  const DType dtype = ReadDataType(f.data_type, false, "data_type");
  if (f.has_segment) {
    throw Error(ErrorCode::kUnsupported, "segmented tensors (TensorProto.segment) are not supported");
  }
  const int64_t n = NumElementsOf(f.dims);
  if (f.data_location != tf::kLocationDefault && f.data_location != tf::kLocationExternal) {
    ThrowInvalid("unknown data_location " + std::to_string(f.data_location));
  }
  const bool external = f.data_location == tf::kLocationExternal;
  const TypedField expected = FieldForDType(dtype);
  const TypedField all[] = {TypedField::kFloat, TypedField::kInt32, TypedField::kString,
                            TypedField::kInt64, TypedField::kDouble, TypedField::kUInt64};
  for (TypedField other : all) {
    if (other != expected && f.TypedSize(other) > 0) {
      ThrowInvalid(std::string(TypedFieldName(other)) + " is not allowed for data_type " +
                   DTypeName(dtype) + " (it uses " + TypedFieldName(expected) + ")");
    }
  }
  const size_t typed = f.TypedSize(expected);
  const std::string what = DTypeName(dtype) + " " + DimsToString(f.dims);

  if (dtype == DType::kString) {
    if (f.has_raw || external) ThrowInvalid("string tensors must store their data in string_data");
    if (static_cast<uint64_t>(n) != typed) {
      ThrowInvalid("string_data has " + std::to_string(typed) + " strings, expected " +
                   std::to_string(n) + " for " + what);
    }
    Tensor t(DType::kString, f.dims);
    t.strings() = std::move(f.strings);
    return t;
  }

  const size_t byte_size = CheckedByteSize(dtype, n);
  CheckTensorBytes(byte_size, ctx);
  if (external) {
    if (f.has_raw || typed > 0) ThrowInvalid("tensor has external data and inline data");
    return ReadExternal(f, dtype, byte_size, ctx);
  }
  if (f.has_raw) {
    if (typed > 0) {
      ThrowInvalid(std::string("tensor has both raw_data and ") + TypedFieldName(expected));
    }
    if (f.raw.size() != byte_size) {
      ThrowInvalid("raw_data has " + std::to_string(f.raw.size()) + " bytes, expected " +
                   std::to_string(byte_size) + " for " + what);
    }
    return TensorFromBytes(dtype, f.dims, f.raw.data(), byte_size, ctx.owner, ctx.options.mapping);
  }
  const int64_t want = TypedCount(dtype, n);
  if (static_cast<uint64_t>(want) != typed) {
    if (typed == 0) ThrowInvalid("tensor " + what + " has no data");
    ThrowInvalid(std::string(TypedFieldName(expected)) + " has " + std::to_string(typed) +
                 " values, expected " + std::to_string(want) + " for " + what);
  }
  Tensor t(dtype, f.dims);
  FillFromTyped(f, expected, &t);
  return t;
}

}  // namespace

DType ReadDataType(int32_t number, bool allow_undefined, const char* what) {
  if (number == 0 && allow_undefined) return DType::kUndefined;
  if (!IsKnownDType(number)) ThrowInvalid(std::string("unknown ") + what + " " + std::to_string(number));
  return static_cast<DType>(number);
}

// Copies element `from` of src into element `to` of dst (same dtype), sub-byte types included.
void CopyTensorElement(const Tensor& src, int64_t from, Tensor* dst, int64_t to) {
  if (src.dtype() == DType::kString) {
    dst->strings()[static_cast<size_t>(to)] = src.strings()[static_cast<size_t>(from)];
    return;
  }
  const int bits = DTypeBits(src.dtype());
  const auto* in = static_cast<const uint8_t*>(src.raw_data());
  auto* out = static_cast<uint8_t*>(dst->raw_data());
  if (bits >= 8) {
    const size_t w = static_cast<size_t>(bits / 8);
    std::memcpy(out + static_cast<size_t>(to) * w, in + static_cast<size_t>(from) * w, w);
    return;
  }
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const uint8_t v = (in[from / per_byte] >> ((from % per_byte) * bits)) & mask;
  const int shift = static_cast<int>(to % per_byte) * bits;
  uint8_t& o = out[to / per_byte];
  o = static_cast<uint8_t>((o & ~(mask << shift)) | (v << shift));
}

Tensor ReadTensor(pbf_reader msg, ParseContext& ctx, std::string* name) {
  TensorFields f = ScanTensor(msg);
  if (name != nullptr) *name = f.name;
  return BuildTensor(f, ctx);
}

std::string PeekTensorName(pbf_reader msg, bool sparse) {
  try {
    while (msg.next()) {
      if (sparse && msg.tag() == fields::sparse_tensor::kValues &&
          msg.wire_type() == pbf_wire_type::length_delimited) {
        return PeekTensorName(msg.get_message(), false);
      }
      if (!sparse && msg.tag() == tf::kName && msg.wire_type() == pbf_wire_type::length_delimited) {
        return msg.get_string();
      }
      msg.skip();
    }
  } catch (...) {
  }
  return std::string();
}

Tensor ReadSparseTensor(pbf_reader msg, ParseContext& ctx, std::string* name) {
  namespace sf = fields::sparse_tensor;
  bool has_values = false, has_indices = false;
  Tensor values, indices;
  std::vector<int64_t> dims;
  while (msg.next()) {
    switch (msg.tag()) {
      case sf::kValues: {
        pbf_reader m = ReadMessage(msg, "values");
        values = WithContext([] { return std::string("values"); },
                             [&] { return ReadTensor(m, ctx, name); });
        has_values = true;
        break;
      }
      case sf::kIndices: {
        pbf_reader m = ReadMessage(msg, "indices");
        indices = WithContext([] { return std::string("indices"); },
                              [&] { return ReadTensor(m, ctx, nullptr); });
        has_indices = true;
        break;
      }
      case sf::kDims: AppendInt64s(msg, "dims", &dims); break;
      default: msg.skip();
    }
  }
  if (!has_values) ThrowInvalid("sparse tensor has no values");
  const int64_t n = NumElementsOf(dims);
  const DType dtype = values.dtype();
  if (dtype == DType::kString) {
    CheckTensorBytes(static_cast<uint64_t>(n) * sizeof(std::string), ctx);
  } else {
    CheckTensorBytes(CheckedByteSize(dtype, n), ctx);
  }
  if (values.rank() != 1) {
    ThrowInvalid("sparse tensor values must be 1-D, got shape " + DimsToString(values.dims()));
  }
  const int64_t nnz = values.dim(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  bool linear = true;
  if (!has_indices) {
    if (nnz != 0) ThrowInvalid("sparse tensor has values but no indices");
  } else {
    if (indices.dtype() != DType::kInt64) {
      ThrowInvalid("sparse tensor indices must be int64, got " + DTypeName(indices.dtype()));
    }
    if (indices.rank() == 1 && indices.dim(0) == nnz) {
      linear = true;
    } else if (indices.rank() == 2 && indices.dim(0) == nnz && indices.dim(1) == rank) {
      linear = false;
    } else {
      ThrowInvalid("sparse tensor indices have shape " + DimsToString(indices.dims()) +
                   ", expected [" + std::to_string(nnz) + "] or [" + std::to_string(nnz) + "," +
                   std::to_string(rank) + "]");
    }
  }
  Tensor dense(dtype, dims);
  const int64_t* idx = nnz > 0 ? indices.data<int64_t>() : nullptr;
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t at = 0;
    if (linear) {
      at = idx[k];
      if (at < 0 || at >= n) {
        ThrowInvalid("sparse tensor index " + std::to_string(at) + " is out of range for shape " +
                     DimsToString(dims));
      }
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t c = idx[k * rank + d];
        if (c < 0 || c >= dims[static_cast<size_t>(d)]) {
          ThrowInvalid("sparse tensor coordinate " + std::to_string(c) + " is out of range for shape " +
                       DimsToString(dims));
        }
        at = at * dims[static_cast<size_t>(d)] + c;
      }
    }
    CopyTensorElement(values, k, &dense, at);
  }
  return dense;
}

}  // namespace simplecpp::onnx::internal
