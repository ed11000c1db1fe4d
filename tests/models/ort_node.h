// Running a model in ONNX Runtime (onnxruntime-node, through tests/models/ort_reference.mjs) as the
// independent reference of a test. Tests skip, with the reason, when `node` or the npm package is
// missing; SIMPLECPP_ORT_NODE_DIR names a folder holding node_modules/onnxruntime-node (default
// bench/).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/tensor.h"

namespace simplecpp::testing {

inline std::filesystem::path ModelsTestDir() {
  return std::filesystem::path(__FILE__).parent_path();
}

// The folder holding node_modules/onnxruntime-node, or "" (with the reason in *why).
inline std::string OrtNodeDir(std::string* why) {
  namespace fs = std::filesystem;
  if (std::system("node --version > /dev/null 2>&1") != 0) {
    *why = "node is not on PATH";
    return "";
  }
  const char* env = std::getenv("SIMPLECPP_ORT_NODE_DIR");
  const fs::path dir = env && *env ? fs::path(env) : ModelsTestDir() / ".." / ".." / "bench";
  if (!fs::exists(dir / "node_modules" / "onnxruntime-node" / "package.json")) {
    *why = "onnxruntime-node not found under " + dir.string() +
           " (set SIMPLECPP_ORT_NODE_DIR to a folder where `npm install onnxruntime-node` ran)";
    return "";
  }
  return fs::absolute(dir).string();
}

// ort_reference.mjs's name for a dtype ("" when it does not take the dtype).
inline std::string OrtDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kInt64: return "int64";
    case DType::kInt32: return "int32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    default: return "";
  }
}

// Runs the ONNX bytes in ORT on `inputs`; returns every output (in the session's order) as
// float32 values, or false with the reason in *error. `tag` names the scratch folder.
inline bool RunOrtReference(const std::string& ort_dir, const std::string& model_bytes,
                            const std::vector<std::pair<std::string, Tensor>>& inputs,
                            const std::string& tag, std::vector<std::vector<float>>* outputs,
                            std::string* error) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("simplecpp-ort-" + tag + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx", std::ios::binary).write(model_bytes.data(), static_cast<std::streamsize>(model_bytes.size()));
  std::ostringstream manifest;
  manifest << "[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i].second;
    const std::string dtype = OrtDTypeName(t.dtype());
    if (dtype.empty()) {
      *error = "input '" + inputs[i].first + "': dtype not handled by ort_reference.mjs";
      fs::remove_all(dir);
      return false;
    }
    const std::string file = "input_" + std::to_string(i) + ".raw";
    std::ofstream(dir / file, std::ios::binary)
        .write(static_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.byte_size()));
    manifest << (i ? "," : "") << "{\"name\":\"" << inputs[i].first << "\",\"dtype\":\"" << dtype
             << "\",\"dims\":[";
    for (size_t d = 0; d < t.dims().size(); ++d) manifest << (d ? "," : "") << t.dims()[d];
    manifest << "],\"file\":\"" << file << "\"}";
  }
  manifest << "]";
  std::ofstream(dir / "inputs.json") << manifest.str();
  const std::string cmd = "SIMPLECPP_ORT_NODE_DIR='" + ort_dir + "' node '" +
                          (ModelsTestDir() / "ort_reference.mjs").string() + "' '" +
                          (dir / "model.onnx").string() + "' '" + dir.string() + "'";
  if (std::system(cmd.c_str()) != 0) {
    *error = "onnxruntime-node failed: " + cmd;
    return false;  // the folder stays for a look
  }
  outputs->clear();
  for (int k = 0;; ++k) {
    std::ifstream f(dir / ("output_" + std::to_string(k) + ".raw"), std::ios::binary);
    if (!f.good()) break;
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<float> v(bytes.size() / sizeof(float));
    for (size_t i = 0; i < v.size(); ++i) std::memcpy(&v[i], bytes.data() + i * sizeof(float), sizeof(float));
    outputs->push_back(std::move(v));
  }
  fs::remove_all(dir);
  return true;
}

}  // namespace simplecpp::testing
