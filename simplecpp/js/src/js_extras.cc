// Helpers the JavaScript API (simplecpp/js/index.mjs) needs beyond the C API, compiled only into
// the JS module (simplecpp_wasm): the built-in demo models as ONNX bytes. (Model input and output
// descriptions come from the C API.) Exception-free like the C API: errors come back as malloc'd
// messages that the caller releases with free().
// The built-in models (their builders and the ONNX writer, about 0.25 MB of wasm) are compiled in
// only with SIMPLECPP_JS_BUILTINS (CMake option SIMPLECPP_WASM_JS_BUILTINS, default OFF); without
// it the name list is empty and asking for a model is an error naming the option.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "simplecpp/simplecpp.h"
#if SIMPLECPP_JS_BUILTINS
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/onnx/model_writer.h"
#endif

namespace {

// A malloc'd copy of s (the JS side frees it with the exported free()); NULL when out of memory.
char* MallocString(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

void AppendJsonString(std::string* out, const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  *out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += static_cast<char>(c);
    } else if (c < 0x20) {
      *out += "\\u00";
      *out += kHex[c >> 4];
      *out += kHex[c & 15];
    } else {
      *out += static_cast<char>(c);  // UTF-8 passes through unchanged
    }
  }
  *out += '"';
}

}  // namespace

extern "C" {

// *out_json receives the built-in model names as a JSON array (the first is the default model).
char* scjs_builtin_model_names(char** out_json) {
  if (!out_json) return MallocString("out_json is NULL");
  *out_json = nullptr;
  try {
    std::string json = "[";
#if SIMPLECPP_JS_BUILTINS
    const std::vector<std::string> names = simplecpp::builtin::BuiltinModelNames();
#else
    const std::vector<std::string> names;
#endif
    for (size_t i = 0; i < names.size(); ++i) {
      if (i) json += ',';
      AppendJsonString(&json, names[i]);
    }
    json += ']';
    *out_json = MallocString(json);
    return *out_json ? nullptr : MallocString("out of memory");
  } catch (const std::exception& e) {
    return MallocString(e.what());
  } catch (...) {
    return MallocString("unknown error");
  }
}

// Serializes the built-in model `name` to ONNX bytes: *out_data (malloc'd, caller frees) and
// *out_size. Returns NULL on success, else a malloc'd error message.
char* scjs_builtin_model(const char* name, void** out_data, size_t* out_size) {
  if (!name || !out_data || !out_size) return MallocString("name, out_data or out_size is NULL");
  *out_data = nullptr;
  *out_size = 0;
#if !SIMPLECPP_JS_BUILTINS
  return MallocString(std::string("built-in model '") + name +
                      "': this build of the module has no built-in models (configure with "
                      "-DSIMPLECPP_WASM_JS_BUILTINS=ON to include them)");
#else
  try {
    const std::string bytes =
        simplecpp::onnx::WriteModel(simplecpp::builtin::MakeBuiltinModel(name));
    void* p = std::malloc(bytes.size() ? bytes.size() : 1);
    if (!p) return MallocString("out of memory");
    std::memcpy(p, bytes.data(), bytes.size());
    *out_data = p;
    *out_size = bytes.size();
    return nullptr;
  } catch (const std::exception& e) {
    return MallocString(e.what());
  } catch (...) {
    return MallocString("unknown error");
  }
#endif
}

}  // extern "C"
