// Tests of the .npy reader and writer (simplecpp/io/npy.cc) and ReadTensorFile's format detection.
#include "simplecpp/io/npy.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "tests/simplecpp/onnx/onnx_test_util.h"

namespace simplecpp::io {
namespace {

using onnx::testing::PatternTensor;

// A .npy file with the given version and header text (padded to 64 bytes) followed by data.
std::string Npy(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t prefix = 8 + (major == 1 ? 2 : 4);
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header + data;
}

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

ErrorCode CodeOf(const std::string& bytes) {
  try {
    ParseNpy(bytes.data(), bytes.size());
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("expected an error");
  return ErrorCode::kInternal;
}

TEST_CASE("npy round trip of every numeric dtype and shape") {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8,
                          DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,
                          DType::kUInt32,  DType::kInt64,   DType::kUInt64,  DType::kBool,
                          DType::kComplex64, DType::kComplex128};
  for (DType dtype : dtypes) {
    CAPTURE(DTypeName(dtype));
    for (const Dims& dims : {Dims{}, Dims{0}, Dims{1}, Dims{5}, Dims{2, 3}, Dims{2, 0, 3}, Dims{1, 2, 3, 4}}) {
      CAPTURE(DimsToString(dims));
      const Tensor t = PatternTensor(dtype, dims);
      const std::string bytes = SerializeNpy(t);
      CHECK(bytes.size() % 64 == t.byte_size() % 64);  // data starts at a multiple of 64
      CHECK(ParseNpy(bytes.data(), bytes.size()).BitwiseEquals(t));
    }
  }
}

TEST_CASE("npy writes the header NumPy writes") {
  const std::string bytes = SerializeNpy(Tensor::FromVector<float>(DType::kFloat32, {3}, {1, 2, 3}));
  const std::string header(bytes.data() + 10, bytes.size() - 10 - 12);
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0) == 0);
  CHECK(header.back() == '\n');
  const std::string scalar = SerializeNpy(Tensor(DType::kUInt8, {}));
  CHECK(scalar.find("'descr': '|u1'") != std::string::npos);
  CHECK(scalar.find("'shape': ()") != std::string::npos);
  const std::string rank2 = SerializeNpy(Tensor(DType::kBool, {2, 3}));
  CHECK(rank2.find("'descr': '|b1'") != std::string::npos);
  CHECK(rank2.find("'shape': (2, 3)") != std::string::npos);
}

TEST_CASE("npy reads headers of versions 1.0, 2.0 and 3.0 in any key order") {
  const std::vector<float> v = {1.5f, -2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const std::string data = Raw(v);
  for (int major : {1, 2, 3}) {
    CAPTURE(major);
    for (const std::string& dict :
         {std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"),
          std::string("{'shape': (2,3), 'fortran_order': False, 'descr': '<f4'}"),
          std::string("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2L, 3L)}"),
          std::string("{'descr':'=f4','fortran_order':False,'shape':(2,3,),}")}) {
      CAPTURE(dict);
      const std::string bytes = Npy(major, dict, data);
      const Tensor t = ParseNpy(bytes.data(), bytes.size());
      CHECK(t.dtype() == DType::kFloat32);
      CHECK(t.dims() == Dims{2, 3});
      CHECK(std::memcmp(t.raw_data(), v.data(), 24) == 0);
    }
  }
  // Fortran order is harmless for rank <= 1.
  const std::string f1 = Npy(1, "{'descr': '<i8', 'fortran_order': True, 'shape': (2,), }",
                             Raw(std::vector<int64_t>{7, -7}));
  CHECK(ParseNpy(f1.data(), f1.size()).data<int64_t>()[1] == -7);
  // '>' on a one-byte type is fine.
  const std::string b = Npy(1, "{'descr': '>i1', 'fortran_order': False, 'shape': (1,), }", "\x05");
  CHECK(ParseNpy(b.data(), b.size()).data<int8_t>()[0] == 5);
}

TEST_CASE("npy refuses what it does not support and malformed files") {
  const std::string data = Raw(std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(CodeOf(Npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data)) ==
        ErrorCode::kUnsupported);
  CHECK(CodeOf(Npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data)) ==
        ErrorCode::kUnsupported);
  CHECK(CodeOf(Npy(1, "{'descr': '<U5', 'fortran_order': False, 'shape': (2, 3), }", data)) ==
        ErrorCode::kUnsupported);
  CHECK(CodeOf(Npy(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }", data)) ==
        ErrorCode::kUnsupported);
  CHECK(CodeOf(Npy(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data)) ==
        ErrorCode::kUnsupported);
  // Truncated and trailing data.
  CHECK(CodeOf(Npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data.substr(1))) ==
        ErrorCode::kInvalidArgument);
  CHECK(CodeOf(Npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data + "x")) ==
        ErrorCode::kInvalidArgument);
  // Broken headers.
  for (const std::string& dict :
       {std::string("{'descr': '<f4', 'shape': (2, 3), }"), std::string("{'descr': '<f4'"),
        std::string("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
        std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}"),
        std::string("{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3), }"), std::string("")}) {
    CAPTURE(dict);
    CHECK_THROWS_AS(ParseNpy(Npy(1, dict, data).data(), Npy(1, dict, data).size()), Error);
  }
  // Shapes whose byte size overflows.
  const std::string huge = Npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "");
  CHECK_THROWS_AS(ParseNpy(huge.data(), huge.size()), Error);
  // Every truncation of a valid file.
  const std::string full = SerializeNpy(PatternTensor(DType::kInt32, {2, 2}));
  for (size_t len = 0; len < full.size(); ++len) {
    CAPTURE(len);
    CHECK_THROWS_AS(ParseNpy(full.data(), len), Error);
  }
  CHECK_THROWS_AS(SerializeNpy(Tensor(DType::kString, {1})), Error);
  CHECK_THROWS_AS(SerializeNpy(Tensor(DType::kInt4, {2})), Error);
  CHECK_THROWS_AS(SerializeNpy(Tensor(DType::kBFloat16, {2})), Error);
}

TEST_CASE("npy files and ReadTensorFile detection") {
  onnx::testing::TempDir dir;
  const Tensor t = PatternTensor(DType::kFloat32, {3, 4});
  WriteNpyFile(dir.Join("a.npy"), t);
  CHECK(ReadNpyFile(dir.Join("a.npy")).BitwiseEquals(t));
  std::string name = "stale";
  CHECK(ReadTensorFile(dir.Join("a.npy"), &name).BitwiseEquals(t));
  CHECK(name.empty());
  onnx::WriteTensorProtoFile(dir.Join("a.pb"), t, "proto_name");
  CHECK(ReadTensorFile(dir.Join("a.pb"), &name).BitwiseEquals(t));
  CHECK(name == "proto_name");
  WriteStringToFile(dir.Join("junk.bin"), "\x93NUMPX garbage");
  CHECK_THROWS_AS(ReadTensorFile(dir.Join("junk.bin")), Error);
  CHECK_THROWS_AS(ReadNpyFile(dir.Join("missing.npy")), Error);
  WriteStringToFile(dir.Join("empty.npy"), "");
  CHECK_THROWS_AS(ReadTensorFile(dir.Join("empty.npy")), Error);
}

}  // namespace
}  // namespace simplecpp::io
