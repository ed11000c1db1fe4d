// Helpers the JavaScript API (simplecpp/js/index.mjs) needs beyond the C API, compiled only into
// the JS module (simplecpp_wasm): graph input/output descriptions (dtype and dims; the C API has
// only names) and the built-in demo models as ONNX bytes. Exception-free like the C API: errors
// come back as malloc'd messages that the caller releases with free().
// The built-in models (their builders and the ONNX writer, about 0.25 MB of wasm) are compiled in
// only with SIMPLECPP_JS_BUILTINS (CMake option SIMPLECPP_WASM_JS_BUILTINS, default OFF); without
// it the name list is empty and asking for a model is an error naming the option.
//
// TODO(c-api): once simplecpp_c.h gains per-input/output dtype and dims accessors and a built-in
// model export, index.mjs should call those and this file shrinks to nothing.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/api/c_api_handles.h"
#include "simplecpp/simplecpp.h"
#include "simplecpp/simplecpp_c.h"
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

// [{"name":..., "dtype":N, "sequence":b, "optional":b, "dims":[...]|null, "dimParams":[...]}, ...];
// unknown dims are -1 with their symbolic name (or "") in dimParams; dims is null when the model
// declares no shape. For a sequence, dtype is the element dtype.
void AppendValues(std::string* out, const std::vector<simplecpp::ValueDescription>& values) {
  *out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    const simplecpp::ValueDescription& v = values[i];
    if (i) *out += ',';
    *out += "{\"name\":";
    AppendJsonString(out, v.name);
    *out += ",\"dtype\":" + std::to_string(static_cast<int32_t>(v.dtype));
    *out += std::string(",\"sequence\":") + (v.sequence ? "true" : "false");
    *out += std::string(",\"optional\":") + (v.optional ? "true" : "false") + ",\"dims\":";
    if (!v.has_shape) {
      *out += "null,\"dimParams\":null}";
      continue;
    }
    *out += '[';
    for (size_t d = 0; d < v.dims.size(); ++d) {
      if (d) *out += ',';
      *out += std::to_string(v.dims[d]);
    }
    *out += "],\"dimParams\":[";
    for (size_t d = 0; d < v.dims.size(); ++d) {
      if (d) *out += ',';
      AppendJsonString(out, d < v.dim_params.size() ? v.dim_params[d] : std::string());
    }
    *out += "]}";
  }
  *out += ']';
}

}  // namespace

extern "C" {

// *out_json receives {"inputs":[...],"outputs":[...]} (see AppendValues). Returns NULL on success,
// else a malloc'd error message.
char* scjs_model_describe(const sc_model* model, char** out_json) {
  if (!model || !out_json) return MallocString("model or out_json is NULL");
  *out_json = nullptr;
  try {
    std::string json = "{\"inputs\":";
    AppendValues(&json, model->model.inputs());
    json += ",\"outputs\":";
    AppendValues(&json, model->model.outputs());
    json += '}';
    *out_json = MallocString(json);
    return *out_json ? nullptr : MallocString("out of memory");
  } catch (const std::exception& e) {
    return MallocString(e.what());
  } catch (...) {
    return MallocString("unknown error");
  }
}

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
