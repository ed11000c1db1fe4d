// Tests of the GGUF reader and writer (simplecpp/io/gguf.cc, gguf_writer.cc): files assembled
// byte by byte in the test (independently of the writer), the writer's output read back, and
// hostile files (truncation at every byte, huge counts and offsets, overlaps) refused by name.
#include "simplecpp/io/gguf.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/io/gguf_writer.h"

namespace simplecpp::io {
namespace {

// Little-endian byte assembly, independent of the writer under test.
struct Bytes {
  std::string s;
  template <typename T>
  Bytes& Put(T v) {
    for (size_t i = 0; i < sizeof(T); ++i) {
      uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof(T));
      s += static_cast<char>((bits >> (8 * i)) & 0xff);
    }
    return *this;
  }
  Bytes& Str(const std::string& t) {
    Put<uint64_t>(t.size());
    s += t;
    return *this;
  }
  Bytes& Pad(size_t alignment) {
    while (s.size() % alignment) s += '\0';
    return *this;
  }
};

// A version-3 file: one uint32 key, one string key, one F32 tensor of dims [3, 2] at offset 0.
std::string SmallFile() {
  Bytes b;
  b.s = "GGUF";
  b.Put<uint32_t>(3).Put<uint64_t>(1).Put<uint64_t>(2);
  b.Str("general.architecture").Put<uint32_t>(8).Str("llama");
  b.Str("answer").Put<uint32_t>(4).Put<uint32_t>(42);
  b.Str("w").Put<uint32_t>(2).Put<uint64_t>(3).Put<uint64_t>(2).Put<uint32_t>(0).Put<uint64_t>(0);
  b.Pad(32);
  for (int i = 0; i < 6; ++i) b.Put<float>(0.5f * static_cast<float>(i));
  return b.s;
}

GgufValue Integer(GgufType type, int64_t value, uint64_t unsigned_value) {
  GgufValue v;
  v.type = type;
  v.integer = value;
  v.uinteger = unsigned_value;
  return v;
}

// CodeOf's result when the bytes parse.
constexpr ErrorCode kNoError = static_cast<ErrorCode>(0);

ErrorCode CodeOf(const std::string& bytes, std::string* message = nullptr) {
  try {
    ParseGguf(bytes.data(), bytes.size());
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return kNoError;
}

TEST_CASE("gguf: a file assembled byte by byte parses to its header, metadata and tensors") {
  const std::string bytes = SmallFile();
  const GgufFile f = ParseGguf(bytes.data(), bytes.size());
  CHECK(f.version == 3);
  CHECK(f.alignment == 32);
  REQUIRE(f.metadata.size() == 2);
  CHECK(f.metadata[0].first == "general.architecture");
  CHECK(f.metadata[0].second.type == GgufType::kString);
  CHECK(f.metadata[0].second.text == "llama");
  REQUIRE(f.Find("answer") != nullptr);
  CHECK(f.Find("answer")->integer == 42);
  CHECK(f.Find("missing") == nullptr);
  REQUIRE(f.tensors.size() == 1);
  const GgufTensorInfo& t = f.tensors[0];
  CHECK(t.name == "w");
  CHECK(t.dims == std::vector<int64_t>{3, 2});
  CHECK(t.bytes == 24);
  CHECK(t.elements() == 6);
  CHECK(f.data_offset % 32 == 0);
  CHECK(t.data == reinterpret_cast<const uint8_t*>(bytes.data()) + f.data_offset);
  float v[6];
  std::memcpy(v, t.data, sizeof(v));
  CHECK(v[5] == 2.5f);
}

TEST_CASE("gguf: version 2 (the same layout with 64-bit counts) and a file of metadata only") {
  std::string v2 = SmallFile();
  v2[4] = 2;
  const GgufFile f = ParseGguf(v2.data(), v2.size());
  CHECK(f.version == 2);
  CHECK(f.tensors.size() == 1);
  Bytes meta;
  meta.s = "GGUF";
  meta.Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(1).Str("general.name").Put<uint32_t>(8).Str("x");
  const GgufFile g = ParseGguf(meta.s.data(), meta.s.size());  // no padding after the header
  CHECK(g.tensors.empty());
  CHECK(g.Find("general.name")->text == "x");
}

TEST_CASE("gguf: the writer's output reads back with every value type, alignment and tensor type") {
  for (uint64_t alignment : {32u, 64u, 8u}) {
    GgufWriter w(alignment);
    w.Set("u8", Integer(GgufType::kUInt8, 200, 200));
    w.Set("i8", Integer(GgufType::kInt8, -100, 0));
    w.Set("u16", Integer(GgufType::kUInt16, 65535, 65535));
    w.Set("i16", Integer(GgufType::kInt16, -32768, 0));
    w.Set("u32", GgufValue::UInt32(4000000000u));
    w.Set("i32", GgufValue::Int32(-7));
    w.Set("u64", GgufValue::UInt64(18446744073709551615ull));
    w.Set("i64", Integer(GgufType::kInt64, INT64_MIN, 0));
    w.Set("f32", GgufValue::Float32(1e-5f));
    GgufValue f64;
    f64.type = GgufType::kFloat64;
    f64.real = 0.1;
    w.Set("f64", f64);
    w.Set("bool", GgufValue::Bool(true));
    w.Set("empty string", GgufValue::String(""));
    w.Set("strings", GgufValue::Array(GgufType::kString, {GgufValue::String("a"), GgufValue::String("bc")}));
    w.Set("nested", GgufValue::Array(GgufType::kArray,
                                     {GgufValue::Array(GgufType::kInt32, {GgufValue::Int32(1), GgufValue::Int32(2)}),
                                      GgufValue::Array(GgufType::kInt32, {})}));
    std::string f32(4 * 32 * 3, '\0');
    for (size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<char>(i * 7);
    w.AddTensor("a", {32, 3}, 0, f32);
    w.AddTensor("b", {64}, 8, std::string(2 * 34, '\x11'));  // Q8_0: 2 blocks of 34 bytes
    w.AddTensor("c", {32, 1, 1, 2}, 2, std::string(2 * 18, '\x22'));  // Q4_0
    const std::string bytes = w.Serialize();
    const GgufFile f = ParseGguf(bytes.data(), bytes.size());
    CAPTURE(alignment);
    CHECK(f.alignment == alignment);
    CHECK(f.Find("u8")->uinteger == 200);
    CHECK(f.Find("i8")->integer == -100);
    CHECK(f.Find("u16")->uinteger == 65535);
    CHECK(f.Find("i16")->integer == -32768);
    CHECK(f.Find("u32")->uinteger == 4000000000u);
    CHECK(f.Find("i32")->integer == -7);
    CHECK(f.Find("u64")->uinteger == 18446744073709551615ull);
    CHECK(f.Find("i64")->integer == INT64_MIN);
    CHECK(static_cast<float>(f.Find("f32")->real) == 1e-5f);
    CHECK(f.Find("f64")->real == 0.1);
    CHECK(f.Find("bool")->integer == 1);
    CHECK(f.Find("empty string")->text.empty());
    REQUIRE(f.Find("strings")->elements.size() == 2);
    CHECK(f.Find("strings")->elements[1].text == "bc");
    const GgufValue& nested = *f.Find("nested");
    REQUIRE(nested.elements.size() == 2);
    CHECK(nested.elements[0].element_type == GgufType::kInt32);
    CHECK(nested.elements[0].elements[1].integer == 2);
    CHECK(nested.elements[1].elements.empty());
    REQUIRE(f.tensors.size() == 3);
    for (const GgufTensorInfo& t : f.tensors) CHECK((t.data - reinterpret_cast<const uint8_t*>(bytes.data())) % alignment == 0);
    CHECK(std::memcmp(f.tensors[0].data, f32.data(), f32.size()) == 0);
    CHECK(f.tensors[1].bytes == 68);
    CHECK(f.tensors[1].data[67] == 0x11);
    CHECK(f.tensors[2].dims == std::vector<int64_t>{32, 1, 1, 2});
    CHECK(f.tensors[2].bytes == 36);
    CHECK(f.FindTensor("c") == &f.tensors[2]);
  }
}

TEST_CASE("gguf: every truncation of a valid file is a named error, never a crash") {
  GgufWriter w;
  w.Set("general.architecture", GgufValue::String("llama"));
  w.Set("tokens", GgufValue::Array(GgufType::kString, {GgufValue::String("x"), GgufValue::String("yz")}));
  w.AddTensor("t", {32, 2}, 8, std::string(2 * 34, '\x01'));
  const std::string bytes = w.Serialize();
  REQUIRE(CodeOf(bytes) == kNoError);
  const GgufFile whole = ParseGguf(bytes.data(), bytes.size());
  for (size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    const std::string cut = bytes.substr(0, n);
    // Cutting only the padding after the last tensor leaves a valid file.
    if (n >= whole.tensors[0].offset + whole.data_offset + whole.tensors[0].bytes) continue;
    CHECK(CodeOf(cut) == ErrorCode::kInvalidModel);
  }
}

TEST_CASE("gguf: hostile headers are refused with the key or tensor named") {
  std::string why;
  CHECK(CodeOf("GGML", &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("magic") != std::string::npos);

  Bytes v1;
  v1.s = "GGUF";
  v1.Put<uint32_t>(1).Put<uint32_t>(0).Put<uint32_t>(0);
  CHECK(CodeOf(v1.s) == ErrorCode::kUnsupported);
  Bytes big;
  big.s = "GGUF";
  big.Put<uint32_t>(0x03000000u).Put<uint64_t>(0).Put<uint64_t>(0);
  CHECK(CodeOf(big.s, &why) == ErrorCode::kUnsupported);
  CHECK(why.find("big-endian") != std::string::npos);
  Bytes v9;
  v9.s = "GGUF";
  v9.Put<uint32_t>(9).Put<uint64_t>(0).Put<uint64_t>(0);
  CHECK(CodeOf(v9.s) == ErrorCode::kInvalidModel);

  // Counts far larger than the file.
  Bytes counts;
  counts.s = "GGUF";
  counts.Put<uint32_t>(3).Put<uint64_t>(UINT64_MAX).Put<uint64_t>(0);
  CHECK(CodeOf(counts.s) == ErrorCode::kInvalidModel);
  Bytes kvs;
  kvs.s = "GGUF";
  kvs.Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(uint64_t{1} << 60);
  CHECK(CodeOf(kvs.s) == ErrorCode::kInvalidModel);

  auto header = [](uint64_t tensors, uint64_t kvs_count) {
    Bytes b;
    b.s = "GGUF";
    b.Put<uint32_t>(3).Put<uint64_t>(tensors).Put<uint64_t>(kvs_count);
    return b;
  };
  {  // a string longer than the file
    Bytes b = header(0, 1);
    b.Put<uint64_t>(UINT64_MAX - 3).s += "key";
    CHECK(CodeOf(b.s) == ErrorCode::kInvalidModel);
  }
  {  // an array whose count cannot fit
    Bytes b = header(0, 1);
    b.Str("arr").Put<uint32_t>(9).Put<uint32_t>(4).Put<uint64_t>(uint64_t{1} << 62);
    CHECK(CodeOf(b.s, &why) == ErrorCode::kInvalidModel);
    CHECK(why.find("'arr'") != std::string::npos);
  }
  {  // arrays nested without end
    Bytes b = header(0, 1);
    b.Str("deep").Put<uint32_t>(9);
    for (int i = 0; i < 64; ++i) b.Put<uint32_t>(9).Put<uint64_t>(1);
    CHECK(CodeOf(b.s, &why) == ErrorCode::kInvalidModel);
    CHECK(why.find("nested") != std::string::npos);
  }
  {  // unknown value type, bool out of range, duplicate key, empty key
    Bytes b = header(0, 1);
    b.Str("k").Put<uint32_t>(13).Put<uint32_t>(0);
    CHECK(CodeOf(b.s) == ErrorCode::kInvalidModel);
    Bytes c = header(0, 1);
    c.Str("flag").Put<uint32_t>(7).Put<uint8_t>(2);
    CHECK(CodeOf(c.s, &why) == ErrorCode::kInvalidModel);
    CHECK(why.find("'flag'") != std::string::npos);
    Bytes d = header(0, 2);
    d.Str("k").Put<uint32_t>(4).Put<uint32_t>(1).Str("k").Put<uint32_t>(4).Put<uint32_t>(2);
    CHECK(CodeOf(d.s, &why) == ErrorCode::kInvalidModel);
    CHECK(why.find("duplicate") != std::string::npos);
    Bytes e = header(0, 1);
    e.Str("").Put<uint32_t>(4).Put<uint32_t>(1);
    CHECK(CodeOf(e.s) == ErrorCode::kInvalidModel);
  }
  {  // general.alignment that is not a power of two
    Bytes b = header(0, 1);
    b.Str("general.alignment").Put<uint32_t>(4).Put<uint32_t>(24);
    CHECK(CodeOf(b.s) == ErrorCode::kInvalidModel);
    Bytes c = header(0, 1);
    c.Str("general.alignment").Put<uint32_t>(8).Str("32");
    CHECK(CodeOf(c.s) == ErrorCode::kInvalidModel);
  }
}

// A file with the given tensor entries (name, dims, type, offset) and `data_bytes` of data.
std::string TensorFile(const std::vector<std::tuple<std::string, std::vector<uint64_t>, uint32_t, uint64_t>>& tensors,
                       size_t data_bytes) {
  Bytes b;
  b.s = "GGUF";
  b.Put<uint32_t>(3).Put<uint64_t>(tensors.size()).Put<uint64_t>(0);
  for (const auto& [name, dims, type, offset] : tensors) {
    b.Str(name).Put<uint32_t>(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) b.Put<uint64_t>(d);
    b.Put<uint32_t>(type).Put<uint64_t>(offset);
  }
  b.Pad(32);
  b.s += std::string(data_bytes, '\0');
  return b.s;
}

TEST_CASE("gguf: hostile tensor tables are refused with the tensor named") {
  std::string why;
  CHECK(CodeOf(TensorFile({{"ok", {8}, 0, 0}}, 32)) == kNoError);
  // Out of the data section, misaligned, overlapping, duplicate.
  CHECK(CodeOf(TensorFile({{"far", {8}, 0, 64}}, 32), &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("'far'") != std::string::npos);
  CHECK(CodeOf(TensorFile({{"huge", {8}, 0, UINT64_MAX - 31}}, 32)) == ErrorCode::kInvalidModel);
  CHECK(CodeOf(TensorFile({{"odd", {8}, 0, 4}}, 64), &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("alignment") != std::string::npos);
  CHECK(CodeOf(TensorFile({{"a", {16}, 0, 0}, {"b", {8}, 0, 32}}, 96), &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("overlap") != std::string::npos);
  CHECK(CodeOf(TensorFile({{"a", {8}, 0, 0}, {"b", {8}, 0, 0}}, 64), &why) == ErrorCode::kInvalidModel);
  CHECK(CodeOf(TensorFile({{"a", {8}, 0, 0}, {"a", {8}, 0, 32}}, 64), &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("duplicate") != std::string::npos);
  // Dimensions: none, five, zero, overflowing.
  CHECK(CodeOf(TensorFile({{"d0", {}, 0, 0}}, 32)) == ErrorCode::kInvalidModel);
  CHECK(CodeOf(TensorFile({{"d5", {1, 1, 1, 1, 1}, 0, 0}}, 32)) == ErrorCode::kInvalidModel);
  CHECK(CodeOf(TensorFile({{"zero", {0}, 0, 0}}, 32)) == ErrorCode::kInvalidModel);
  CHECK(CodeOf(TensorFile({{"big", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0}}, 32), &why) ==
        ErrorCode::kInvalidModel);
  CHECK(why.find("'big'") != std::string::npos);
  CHECK(CodeOf(TensorFile({{"bytes", {uint64_t{1} << 61, 8}, 0, 0}}, 32)) == ErrorCode::kInvalidModel);
  // Types: unknown ids, a row that is not a whole number of blocks.
  CHECK(CodeOf(TensorFile({{"t", {8}, 99, 0}}, 32), &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("99") != std::string::npos);
  CHECK(CodeOf(TensorFile({{"t", {8}, 4, 0}}, 32)) == ErrorCode::kInvalidModel);
  CHECK(CodeOf(TensorFile({{"q", {48}, 8, 0}}, 64), &why) == ErrorCode::kInvalidModel);
  CHECK(why.find("Q8_0") != std::string::npos);
  // A K-quant tensor is read (its size is known); refusing it is the converter's job.
  CHECK(CodeOf(TensorFile({{"k", {256}, 12, 0}}, 160)) == kNoError);
}

TEST_CASE("gguf writer: refuses sizes that do not match and duplicates") {
  GgufWriter w;
  CHECK_THROWS_AS(w.AddTensor("t", {32}, 8, std::string(33, '\0')), Error);
  CHECK_THROWS_AS(w.AddTensor("t", {31}, 8, std::string(34, '\0')), Error);
  w.AddTensor("t", {32}, 8, std::string(34, '\0'));
  CHECK_THROWS_AS(w.AddTensor("t", {32}, 8, std::string(34, '\0')), Error);
  w.Set("k", GgufValue::Int32(1));
  CHECK_THROWS_AS(w.Set("k", GgufValue::Int32(2)), Error);
  CHECK_THROWS_AS(w.Set("mixed", GgufValue::Array(GgufType::kInt32, {GgufValue::UInt32(1)})), Error);
  CHECK_THROWS_AS(GgufWriter(48), Error);
}

}  // namespace
}  // namespace simplecpp::io
