// GGUF files the project writes, cross-checked with independent tools through node:
//  - their header, metadata (every value, float bits included) and tensor table as
//    @huggingface/gguf reads them (tests/models/gguf_reference.mjs) against simplecpp's reader;
//  - the ONNX model `convert --from gguf` makes of them run in onnxruntime-node against
//    simplecpp (prefill logits within 1e-4 * max(1, max |ref|)).
// Skipped with a message when node or the npm packages are missing; SIMPLECPP_ORT_NODE_DIR names
// a folder holding node_modules/@huggingface/gguf and node_modules/onnxruntime-node (default
// bench/; `npm install @huggingface/gguf@0.4.6 onnxruntime-node@1.30.0` there).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "quant/ggml_blocks.h"
#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/io/gguf.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"
#include "tests/models/ort_node.h"

namespace simplecpp {
namespace {

namespace fs = std::filesystem;
using quant::GgmlType;

std::string Hex(uint64_t v, int digits) {
  char b[32];
  std::snprintf(b, sizeof(b), "%0*llx", digits, static_cast<unsigned long long>(v));
  return b;
}

// JSON.stringify of a string (what gguf_reference.mjs prints).
std::string Json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (ch < 0x20) {
          out += "\\u" + Hex(ch, 4);
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string Format(const io::GgufValue& v) {
  switch (v.type) {
    case io::GgufType::kFloat32: {
      const float f = static_cast<float>(v.real);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return "f32:" + Hex(bits, 8);
    }
    case io::GgufType::kFloat64: {
      uint64_t bits;
      std::memcpy(&bits, &v.real, 8);
      return "f64:" + Hex(bits, 16);
    }
    case io::GgufType::kBool: return v.integer ? "true" : "false";
    case io::GgufType::kString: return Json(v.text);
    case io::GgufType::kUInt8: case io::GgufType::kUInt16: case io::GgufType::kUInt32:
    case io::GgufType::kUInt64:
      return std::to_string(v.uinteger);
    case io::GgufType::kArray: {
      std::string s = "[" + std::to_string(static_cast<uint32_t>(v.element_type)) + ":";
      for (size_t i = 0; i < v.elements.size(); ++i) s += (i ? "," : "") + Format(v.elements[i]);
      return s + "]";
    }
    default: return std::to_string(v.integer);
  }
}

// The canonical text of gguf_reference.mjs, from simplecpp's reader.
std::string Canonical(const io::GgufFile& f) {
  std::ostringstream o;
  o << "version " << f.version << "\ntensor_count " << f.tensors.size() << "\nkv_count "
    << f.metadata.size() << "\ndata_offset " << f.data_offset << "\n";
  for (const auto& [key, v] : f.metadata) {
    o << "kv " << key << " " << static_cast<uint32_t>(v.type) << " " << Format(v) << "\n";
  }
  for (const io::GgufTensorInfo& t : f.tensors) {
    o << "tensor " << t.name << " type=" << t.type << " dims=[";
    for (size_t d = 0; d < t.dims.size(); ++d) o << (d ? "," : "") << t.dims[d];
    o << "] offset=" << t.offset << "\n";
  }
  return o.str();
}

bool RunCapture(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  return pclose(p) == 0;
}

// The folder holding node_modules/@huggingface/gguf, or "" (reason in *why).
std::string GgufNodeDir(std::string* why) {
  if (std::system("node --version > /dev/null 2>&1") != 0) {
    *why = "node is not on PATH";
    return "";
  }
  const char* env = std::getenv("SIMPLECPP_ORT_NODE_DIR");
  const fs::path dir = env && *env ? fs::path(env) : testing::ModelsTestDir() / ".." / ".." / "bench";
  if (!fs::exists(dir / "node_modules" / "@huggingface" / "gguf" / "package.json")) {
    *why = "@huggingface/gguf not found under " + dir.string() +
           " (set SIMPLECPP_ORT_NODE_DIR to a folder where `npm install @huggingface/gguf@0.4.6` ran)";
    return "";
  }
  return fs::absolute(dir).string();
}

TEST_CASE("gguf: header, metadata and tensor table agree with @huggingface/gguf") {
  std::string why;
  const std::string dir = GgufNodeDir(&why);
  if (dir.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  const builtin::LlamaConfig c = builtin::SmallLlamaConfig();
  for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    CAPTURE(static_cast<int>(type));
    const fs::path file = fs::temp_directory_path() /
                          ("simplecpp-gguf-" + std::to_string(::getpid()) + "-" +
                           std::to_string(static_cast<int>(type)) + ".gguf");
    io::WriteStringToFile(file.string(), convert::ExportLlamaGguf(c, type, "tiny \"quoted\"\tname"));
    std::string theirs;
    const bool ok = RunCapture("SIMPLECPP_ORT_NODE_DIR='" + dir + "' node '" +
                                   (testing::ModelsTestDir() / "gguf_reference.mjs").string() +
                                   "' '" + file.string() + "'",
                               &theirs);
    const std::string ours = Canonical(io::OpenGguf(file.string()));
    fs::remove(file);
    REQUIRE_MESSAGE(ok, "gguf_reference.mjs failed");
    CHECK(ours.size() > 1000);
    if (ours != theirs) {
      // The first differing line, for the report.
      std::istringstream a(ours), b(theirs);
      std::string la, lb;
      while (std::getline(a, la) && std::getline(b, lb) && la == lb) {
      }
      FAIL_CHECK("first difference: ours '" << la.substr(0, 200) << "' vs @huggingface/gguf '"
                                            << lb.substr(0, 200) << "'");
    }
  }
}

TEST_CASE("gguf: the ONNX model imported from Q4_0 / Q4_1 / Q8_0 files runs like onnxruntime") {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  const builtin::LlamaConfig c = builtin::SmallLlamaConfig();
  const std::vector<int64_t> prompt = {1, 17, 42, 99, 3};
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0}) {
    CAPTURE(static_cast<int>(type));
    const std::string gguf = convert::ExportLlamaGguf(c, type, "tiny");
    const std::string bytes = onnx::WriteModel(convert::ImportLlamaGguf(io::ParseGguf(gguf.data(), gguf.size())));
    std::vector<std::pair<std::string, Tensor>> feeds;
    feeds.emplace_back("input_ids", Tensor::FromVector<int64_t>(DType::kInt64, {1, 5}, prompt));
    for (int64_t i = 0; i < c.layers; ++i) {
      for (const char* kv : {"key", "value"}) {
        feeds.emplace_back("past_key_values." + std::to_string(i) + "." + kv,
                           Tensor(DType::kFloat32, {1, c.kv_heads, 0, c.hidden / c.q_heads}));
      }
    }
    std::vector<std::vector<float>> ref;
    std::string error;
    REQUIRE_MESSAGE(testing::RunOrtReference(ort_dir, bytes, feeds, "gguf", &ref, &error), error);
    const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
    SessionOptions one;
    one.threads = 1;
    Session session(model, one);
    const auto ours = session.Run(std::map<std::string, Tensor>(feeds.begin(), feeds.end()));
    const Tensor& logits = ours.at("logits");
    REQUIRE(static_cast<size_t>(logits.num_elements()) == ref[0].size());
    double scale = 1.0, worst = 0.0;
    for (float r : ref[0]) scale = std::max(scale, std::fabs(static_cast<double>(r)));
    for (size_t i = 0; i < ref[0].size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(logits.data<float>()[i]) - ref[0][i]));
    }
    MESSAGE("max |ours - ORT| = " << worst << " (max |ORT| " << scale << ")");
    CHECK(worst <= 1e-4 * scale);
  }
}

}  // namespace
}  // namespace simplecpp
