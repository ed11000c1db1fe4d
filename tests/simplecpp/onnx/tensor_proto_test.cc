// Tests of TensorProto parsing and writing (simplecpp/onnx/tensor_proto.cc and the shared
// tensor_reader.cc): every dtype round trip, every typed field in packed and unpacked encoding
// (bytes built with protozero's writer), and malformed input.
#include "simplecpp/onnx/tensor_proto.h"

#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/onnx/proto_fields.h"
#include "tests/simplecpp/onnx/onnx_test_util.h"

namespace simplecpp::onnx {
namespace {

namespace tf = fields::tensor;
using testing::PatternTensor;

Tensor Parse(const std::string& bytes, std::string* name = nullptr) {
  return ParseTensorProto(bytes.data(), bytes.size(), name);
}

// Starts a TensorProto with dims and data_type.
std::string Header(DType dtype, const Dims& dims, bool packed_dims = true) {
  std::string buf;
  protozero::pbf_writer pw(buf);
  if (packed_dims) {
    pw.add_packed_int64(tf::kDims, dims.begin(), dims.end());
  } else {
    for (int64_t d : dims) pw.add_int64(tf::kDims, d);
  }
  pw.add_int32(tf::kDataType, static_cast<int32_t>(dtype));
  return buf;
}

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<uint8_t> TensorBytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

ErrorCode CodeOf(const std::string& bytes) {
  try {
    Parse(bytes);
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("expected an error");
  return ErrorCode::kInternal;
}

// Encodes int32_data entries packed or one field per value.
std::string WithInt32Data(std::string buf, const std::vector<int32_t>& v, bool packed) {
  protozero::pbf_writer pw(buf);
  if (packed) {
    pw.add_packed_int32(tf::kInt32Data, v.begin(), v.end());
  } else {
    for (int32_t x : v) pw.add_int32(tf::kInt32Data, x);
  }
  return buf;
}

TEST_CASE("TensorProto round trip of every dtype") {
  for (int n = 1; n <= 26; ++n) {
    const DType dtype = static_cast<DType>(n);
    CAPTURE(DTypeName(dtype));
    for (const Dims& dims : {Dims{}, Dims{0}, Dims{5}, Dims{2, 3}, Dims{3, 1, 7}}) {
      CAPTURE(DimsToString(dims));
      const Tensor t = PatternTensor(dtype, dims, n);
      std::string name;
      const Tensor back = Parse(SerializeTensorProto(t, "tensor_" + std::to_string(n)), &name);
      CHECK(back.BitwiseEquals(t));
      CHECK(name == "tensor_" + std::to_string(n));
    }
  }
}

TEST_CASE("TensorProto float_data, double_data, int64_data, uint64_data: packed and unpacked") {
  for (bool packed : {true, false}) {
    CAPTURE(packed);
    {
      const std::vector<float> v = {1.5f, -2.0f, 0.0f, std::numeric_limits<float>::infinity(), -0.0f, 3e-40f};
      std::string buf = Header(DType::kFloat32, {2, 3}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_float(tf::kFloatData, v.begin(), v.end());
      else for (float x : v) pw.add_float(tf::kFloatData, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(v));
    }
    {
      const std::vector<float> v = {1, 2, 3, 4};  // complex64: two elements, (re, im) pairs
      std::string buf = Header(DType::kComplex64, {2}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_float(tf::kFloatData, v.begin(), v.end());
      else for (float x : v) pw.add_float(tf::kFloatData, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(v));
    }
    {
      const std::vector<double> v = {1.25, -1e300, 0.0};
      std::string buf = Header(DType::kFloat64, {3}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_double(tf::kDoubleData, v.begin(), v.end());
      else for (double x : v) pw.add_double(tf::kDoubleData, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(v));
    }
    {
      const std::vector<double> v = {1, 2, 3, 4, 5, 6};
      std::string buf = Header(DType::kComplex128, {3}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_double(tf::kDoubleData, v.begin(), v.end());
      else for (double x : v) pw.add_double(tf::kDoubleData, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(v));
    }
    {
      const std::vector<int64_t> v = {-1, 0, std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int64_t>::max()};
      std::string buf = Header(DType::kInt64, {4}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_int64(tf::kInt64Data, v.begin(), v.end());
      else for (int64_t x : v) pw.add_int64(tf::kInt64Data, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(v));
    }
    {
      const std::vector<uint64_t> v = {0, 1, std::numeric_limits<uint64_t>::max()};
      std::string buf = Header(DType::kUInt64, {3}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_uint64(tf::kUint64Data, v.begin(), v.end());
      else for (uint64_t x : v) pw.add_uint64(tf::kUint64Data, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(v));
    }
    {
      const std::vector<uint64_t> v = {0, 7, 0xffffffffu};
      std::string buf = Header(DType::kUInt32, {3}, packed);
      protozero::pbf_writer pw(buf);
      if (packed) pw.add_packed_uint64(tf::kUint64Data, v.begin(), v.end());
      else for (uint64_t x : v) pw.add_uint64(tf::kUint64Data, x);
      CHECK(TensorBytes(Parse(buf)) == Bytes(std::vector<uint32_t>{0, 7, 0xffffffffu}));
    }
  }
}

TEST_CASE("TensorProto values split over several packed and unpacked fields are concatenated") {
  std::string buf = Header(DType::kInt64, {4});
  protozero::pbf_writer pw(buf);
  const std::vector<int64_t> a = {1, 2};
  pw.add_packed_int64(tf::kInt64Data, a.begin(), a.end());
  pw.add_int64(tf::kInt64Data, 3);
  const std::vector<int64_t> b = {4};
  pw.add_packed_int64(tf::kInt64Data, b.begin(), b.end());
  CHECK(TensorBytes(Parse(buf)) == Bytes(std::vector<int64_t>{1, 2, 3, 4}));
}

TEST_CASE("TensorProto int32_data carries the small types' bit patterns") {
  for (bool packed : {true, false}) {
    CAPTURE(packed);
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kInt8, {3}), {-1, 127, -128}, packed))) ==
          Bytes(std::vector<int8_t>{-1, 127, -128}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kUInt8, {2}), {255, 3}, packed))) ==
          Bytes(std::vector<uint8_t>{255, 3}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kInt16, {2}), {-300, 32767}, packed))) ==
          Bytes(std::vector<int16_t>{-300, 32767}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kUInt16, {1}), {65535}, packed))) ==
          Bytes(std::vector<uint16_t>{65535}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kInt32, {2}), {-5, 1 << 30}, packed))) ==
          Bytes(std::vector<int32_t>{-5, 1 << 30}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kBool, {3}), {1, 0, 1}, packed))) ==
          Bytes(std::vector<uint8_t>{1, 0, 1}));
    // float16 1.0 = 0x3C00, -2.0 = 0xC000; bfloat16 1.0 = 0x3F80.
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kFloat16, {2}), {0x3C00, 0xC000}, packed))) ==
          Bytes(std::vector<uint16_t>{0x3C00, 0xC000}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kBFloat16, {1}), {0x3F80}, packed))) ==
          Bytes(std::vector<uint16_t>{0x3F80}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kFloat8E4M3FN, {2}), {0x38, 0x7E}, packed))) ==
          Bytes(std::vector<uint8_t>{0x38, 0x7E}));
    // int4 [1, -1, 2]: two elements per entry, first in the low nibble -> 0xF1, 0x02.
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kInt4, {3}), {0xF1, 0x02}, packed))) ==
          Bytes(std::vector<uint8_t>{0xF1, 0x02}));
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kUInt4, {4}), {0x21, 0x43}, packed))) ==
          Bytes(std::vector<uint8_t>{0x21, 0x43}));
    // uint2: four elements per entry.
    CHECK(TensorBytes(Parse(WithInt32Data(Header(DType::kUInt2, {5}), {0xE4, 0x01}, packed))) ==
          Bytes(std::vector<uint8_t>{0xE4, 0x01}));
  }
}

TEST_CASE("TensorProto string_data") {
  std::string buf = Header(DType::kString, {3});
  protozero::pbf_writer pw(buf);
  pw.add_bytes(tf::kStringData, "a");
  pw.add_bytes(tf::kStringData, "");
  pw.add_bytes(tf::kStringData, std::string("x\0y", 3));
  const Tensor t = Parse(buf);
  REQUIRE(t.dtype() == DType::kString);
  CHECK(t.strings() == std::vector<std::string>{"a", "", std::string("x\0y", 3)});
}

TEST_CASE("TensorProto unknown fields are skipped") {
  std::string buf = Header(DType::kFloat32, {1});
  protozero::pbf_writer pw(buf);
  pw.add_int64(99, 5);
  pw.add_string(100, "whatever");
  pw.add_fixed64(101, 1);
  pw.add_fixed32(102, 1);
  pw.add_float(tf::kFloatData, 2.0f);
  pw.add_string(tf::kDocString, "doc");
  CHECK(Parse(buf).data<float>()[0] == 2.0f);
}

TEST_CASE("TensorProto malformed input throws simplecpp::Error") {
  SUBCASE("raw_data size mismatch") {
    std::string buf = Header(DType::kFloat32, {2, 2});
    protozero::pbf_writer(buf).add_bytes(tf::kRawData, std::string(15, '\0'));
    CHECK(CodeOf(buf) == ErrorCode::kInvalidModel);
    std::string buf2 = Header(DType::kFloat32, {2, 2});
    protozero::pbf_writer(buf2).add_bytes(tf::kRawData, std::string(17, '\0'));
    CHECK(CodeOf(buf2) == ErrorCode::kInvalidModel);
  }
  SUBCASE("negative dims") {
    std::string buf = Header(DType::kFloat32, {2, -1});
    protozero::pbf_writer(buf).add_bytes(tf::kRawData, std::string());
    CHECK(CodeOf(buf) == ErrorCode::kInvalidModel);
  }
  SUBCASE("dims whose product overflows") {
    const int64_t big = int64_t{1} << 40;
    std::string buf = Header(DType::kFloat32, {big, big});
    protozero::pbf_writer(buf).add_bytes(tf::kRawData, std::string(4, '\0'));
    CHECK_THROWS_AS(Parse(buf), Error);
    std::string buf2 = Header(DType::kFloat64, {int64_t{1} << 61});
    protozero::pbf_writer(buf2).add_bytes(tf::kRawData, std::string(8, '\0'));
    CHECK_THROWS_AS(Parse(buf2), Error);
    std::string buf3 = Header(DType::kFloat32, {int64_t{1} << 40});  // over max_tensor_bytes
    protozero::pbf_writer(buf3).add_bytes(tf::kRawData, std::string(8, '\0'));
    CHECK(CodeOf(buf3) == ErrorCode::kLimitExceeded);
  }
  SUBCASE("unknown or missing data_type") {
    CHECK(CodeOf(Header(static_cast<DType>(99), {1})) == ErrorCode::kInvalidModel);
    CHECK(CodeOf(Header(static_cast<DType>(-3), {1})) == ErrorCode::kInvalidModel);
    std::string buf;
    protozero::pbf_writer(buf).add_bytes(tf::kRawData, std::string(4, '\0'));
    CHECK(CodeOf(buf) == ErrorCode::kInvalidModel);
  }
  SUBCASE("wrong wire types") {
    std::string buf;
    {
      protozero::pbf_writer pw(buf);
      pw.add_fixed32(tf::kDims, 1);  // dims must be varint or packed
      pw.add_int32(tf::kDataType, 1);
    }
    CHECK(CodeOf(buf) == ErrorCode::kInvalidModel);
    std::string buf2;
    protozero::pbf_writer(buf2).add_string(tf::kDataType, "float");
    CHECK(CodeOf(buf2) == ErrorCode::kInvalidModel);
    std::string buf3 = Header(DType::kFloat32, {1});
    protozero::pbf_writer(buf3).add_int64(tf::kRawData, 4);
    CHECK(CodeOf(buf3) == ErrorCode::kInvalidModel);
    std::string buf4 = Header(DType::kFloat32, {1});
    protozero::pbf_writer(buf4).add_int64(tf::kFloatData, 4);  // float must be fixed32
    CHECK(CodeOf(buf4) == ErrorCode::kInvalidModel);
    std::string buf5 = Header(DType::kFloat64, {1});
    protozero::pbf_writer(buf5).add_fixed32(tf::kDoubleData, 4);
    CHECK(CodeOf(buf5) == ErrorCode::kInvalidModel);
    std::string buf6 = Header(DType::kString, {1});
    protozero::pbf_writer(buf6).add_int32(tf::kStringData, 4);
    CHECK(CodeOf(buf6) == ErrorCode::kInvalidModel);
  }
  SUBCASE("packed fixed-size data whose length is not a multiple of the element size") {
    std::string buf = Header(DType::kFloat32, {1});
    protozero::pbf_writer(buf).add_bytes(tf::kFloatData, std::string(5, '\0'));
    CHECK(CodeOf(buf) == ErrorCode::kInvalidModel);
  }
  SUBCASE("typed field count mismatch, wrong typed field, both raw and typed, no data") {
    CHECK(CodeOf(WithInt32Data(Header(DType::kInt32, {3}), {1, 2}, true)) == ErrorCode::kInvalidModel);
    CHECK(CodeOf(WithInt32Data(Header(DType::kInt4, {3}), {1, 2, 3}, true)) == ErrorCode::kInvalidModel);
    CHECK(CodeOf(WithInt32Data(Header(DType::kFloat32, {1}), {1}, true)) == ErrorCode::kInvalidModel);
    std::string both = WithInt32Data(Header(DType::kInt32, {1}), {1}, true);
    protozero::pbf_writer(both).add_bytes(tf::kRawData, std::string(4, '\0'));
    CHECK(CodeOf(both) == ErrorCode::kInvalidModel);
    CHECK(CodeOf(Header(DType::kFloat32, {2})) == ErrorCode::kInvalidModel);
    std::string strings = Header(DType::kString, {2});
    protozero::pbf_writer(strings).add_bytes(tf::kStringData, "only one");
    CHECK(CodeOf(strings) == ErrorCode::kInvalidModel);
    std::string raw_strings = Header(DType::kString, {0});
    protozero::pbf_writer(raw_strings).add_bytes(tf::kRawData, "");
    CHECK(CodeOf(raw_strings) == ErrorCode::kInvalidModel);
  }
  SUBCASE("segment and external data are refused") {
    std::string seg = Header(DType::kFloat32, {1});
    {
      protozero::pbf_writer pw(seg);
      { protozero::pbf_writer s(pw, tf::kSegment); s.add_int64(1, 0); s.add_int64(2, 1); }
      pw.add_float(tf::kFloatData, 1.0f);
    }
    CHECK(CodeOf(seg) == ErrorCode::kUnsupported);
    std::string ext = Header(DType::kFloat32, {1});
    {
      protozero::pbf_writer pw(ext);
      { protozero::pbf_writer e(pw, tf::kExternalData); e.add_string(1, "location"); e.add_string(2, "w.bin"); }
      pw.add_int32(tf::kDataLocation, tf::kLocationExternal);
    }
    CHECK(CodeOf(ext) == ErrorCode::kInvalidModel);
    std::string loc = Header(DType::kFloat32, {0});
    protozero::pbf_writer(loc).add_int32(tf::kDataLocation, 7);
    CHECK(CodeOf(loc) == ErrorCode::kInvalidModel);
  }
  SUBCASE("truncated bytes never crash") {
    const std::string full = SerializeTensorProto(PatternTensor(DType::kFloat32, {3, 5}), "weights");
    for (size_t len = 0; len < full.size(); ++len) {
      CAPTURE(len);
      // raw_data is the last field, so every cut loses data: all must be refused cleanly.
      try {
        Parse(full.substr(0, len));
        FAIL("a truncated TensorProto was accepted");
      } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::kInvalidModel);
      }
    }
  }
}

TEST_CASE("TensorProto files") {
  testing::TempDir dir;
  const Tensor t = PatternTensor(DType::kInt64, {2, 2});
  WriteTensorProtoFile(dir.Join("t.pb"), t, "x");
  std::string name;
  CHECK(ReadTensorProtoFile(dir.Join("t.pb"), &name).BitwiseEquals(t));
  CHECK(name == "x");
  CHECK_THROWS_AS(ReadTensorProtoFile(dir.Join("missing.pb")), Error);
  try {
    ReadTensorProtoFile(dir.Join("missing.pb"));
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kIo);
  }
}

}  // namespace
}  // namespace simplecpp::onnx
