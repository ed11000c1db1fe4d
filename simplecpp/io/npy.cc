// NumPy .npy <-> Tensor (simplecpp/io/npy.h). Format: "\x93NUMPY", major/minor version, header
// length (uint16 LE for 1.0, uint32 LE for 2.0/3.0), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded so the data starts at a
// multiple of 64 bytes, then the elements in C order. Only little-endian (or byte-sized) numeric
// dtypes in C order are accepted.
#include "simplecpp/io/npy.h"

#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/tensor_proto.h"

namespace simplecpp::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void Bad(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "npy: " + what);
}

struct DescrEntry {
  const char* code;  // descr without the byte-order character
  DType dtype;
};

constexpr DescrEntry kDescrs[] = {
    {"f4", DType::kFloat32}, {"f8", DType::kFloat64},    {"f2", DType::kFloat16},
    {"i1", DType::kInt8},    {"u1", DType::kUInt8},      {"i2", DType::kInt16},
    {"u2", DType::kUInt16},  {"i4", DType::kInt32},      {"u4", DType::kUInt32},
    {"i8", DType::kInt64},   {"u8", DType::kUInt64},     {"b1", DType::kBool},
    {"c8", DType::kComplex64}, {"c16", DType::kComplex128},
};

DType DTypeFromDescr(const std::string& descr) {
  if (descr.size() < 2) Bad("bad descr '" + descr + "'");
  const char order = descr[0];
  const std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    throw Error(ErrorCode::kUnsupported, "npy: dtype '" + descr + "' is not supported");
  }
  for (const DescrEntry& e : kDescrs) {
    if (code != e.code) continue;
    if (order == '>' && DTypeSize(e.dtype) > 1) {
      throw Error(ErrorCode::kUnsupported, "npy: big-endian data ('" + descr + "') is not supported");
    }
    return e.dtype;
  }
  throw Error(ErrorCode::kUnsupported, "npy: dtype '" + descr + "' is not supported");
}

std::string DescrOf(DType t) {
  for (const DescrEntry& e : kDescrs) {
    if (e.dtype == t) return std::string(DTypeSize(t) == 1 ? "|" : "<") + e.code;
  }
  throw Error(ErrorCode::kUnsupported, "npy: cannot store dtype " + DTypeName(t));
}

// A parser for the header's Python literal: a dict of str keys whose values are str, bool or a
// tuple of ints.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& s) : s_(s) {}

  void Parse(std::string* descr, bool* fortran, Dims* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    Expect('{');
    while (true) {
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = String();
      Expect(':');
      if (key == "descr") {
        *descr = String();
        have_descr = true;
      } else if (key == "fortran_order") {
        *fortran = Bool();
        have_fortran = true;
      } else if (key == "shape") {
        *shape = Tuple();
        have_shape = true;
      } else {
        Bad("unexpected header key '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        Bad("expected ',' or '}' in header");
      }
    }
    SkipSpace();
    if (pos_ != s_.size()) Bad("trailing characters after the header dict");
    if (!have_descr || !have_fortran || !have_shape) {
      Bad("header lacks one of 'descr', 'fortran_order', 'shape'");
    }
  }

 private:
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) Bad(std::string("expected '") + c + "' in header");
    ++pos_;
  }
  std::string String() {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') Bad("expected a string in header");
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string::npos) Bad("unterminated string in header");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool Bool() {
    SkipSpace();
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    Bad("expected True or False in header");
  }
  Dims Tuple() {
    Expect('(');
    Dims dims;
    while (true) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return dims;
      }
      if (Peek() < '0' || Peek() > '9') Bad("expected a non-negative integer in shape");
      int64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        const int64_t digit = Peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) Bad("shape dimension overflows");
        v = v * 10 + digit;
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 long suffix
      dims.push_back(v);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        Bad("expected ',' or ')' in shape");
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

uint32_t ReadLE(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Tensor ParseNpy(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < kMagicSize + 2 || std::memcmp(p, kMagic, kMagicSize) != 0) Bad("not a .npy file (bad magic)");
  const int major = p[6];
  size_t pos = 8;
  size_t header_len = 0;
  if (major == 1) {
    if (size < pos + 2) Bad("truncated header");
    header_len = ReadLE(p + pos, 2);
    pos += 2;
  } else if (major == 2 || major == 3) {
    if (size < pos + 4) Bad("truncated header");
    header_len = ReadLE(p + pos, 4);
    pos += 4;
  } else {
    throw Error(ErrorCode::kUnsupported, "npy: format version " + std::to_string(major) + "." +
                                             std::to_string(p[7]) + " is not supported");
  }
  if (header_len > size - pos) Bad("truncated header");
  const std::string header(reinterpret_cast<const char*>(p + pos), header_len);
  pos += header_len;

  std::string descr;
  bool fortran = false;
  Dims dims;
  HeaderParser(header).Parse(&descr, &fortran, &dims);
  const DType dtype = DTypeFromDescr(descr);
  const int64_t n = CheckedNumElements(dims);
  if (fortran && dims.size() > 1) {
    // A Fortran-ordered array of rank <= 1 has the same bytes as the C-ordered one.
    throw Error(ErrorCode::kUnsupported, "npy: fortran_order arrays are not supported");
  }
  const size_t bytes = CheckedByteSize(dtype, n);
  if (size - pos != bytes) {
    Bad("data has " + std::to_string(size - pos) + " bytes, expected " + std::to_string(bytes) +
        " for " + DTypeName(dtype) + " " + DimsToString(dims));
  }
  Tensor t(dtype, dims);
  if (bytes > 0) std::memcpy(t.raw_data(), p + pos, bytes);
  return t;
}

std::string SerializeNpy(const Tensor& tensor) {
  if (!tensor.defined()) throw Error(ErrorCode::kInvalidArgument, "npy: undefined tensor");
  std::string shape = "(";
  for (size_t i = 0; i < tensor.dims().size(); ++i) {
    shape += std::to_string(tensor.dims()[i]);
    if (tensor.dims().size() == 1 || i + 1 < tensor.dims().size()) shape += ",";
    if (i + 1 < tensor.dims().size()) shape += " ";
  }
  shape += ")";
  std::string header = "{'descr': '" + DescrOf(tensor.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and end with '\n' so that the data starts at a multiple of 64 bytes.
  const bool v2 = header.size() + 1 + 64 > 65535;
  const size_t prefix = kMagicSize + 2 + (v2 ? 4 : 2);
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (v2 ? 4 : 2); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += header;
  if (tensor.byte_size() > 0) out.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  return out;
}

Tensor ReadNpyFile(const std::string& path) {
  std::shared_ptr<const MappedFile> file = MappedFile::Open(path);
  try {
    return ParseNpy(file->data(), file->size());
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

void WriteNpyFile(const std::string& path, const Tensor& tensor) {
  WriteStringToFile(path, SerializeNpy(tensor));
}

Tensor ReadTensorFile(const std::string& path, std::string* name) {
  std::shared_ptr<const MappedFile> file = MappedFile::Open(path);
  if (file->size() >= kMagicSize && std::memcmp(file->data(), kMagic, kMagicSize) == 0) {
    if (name != nullptr) name->clear();
    try {
      return ParseNpy(file->data(), file->size());
    } catch (const Error& e) {
      throw Error(e.code(), path + ": " + e.what());
    }
  }
  try {
    return onnx::ParseTensorProto(file->data(), file->size(), name);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

}  // namespace simplecpp::io
