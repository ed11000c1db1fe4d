// The C API (simplecpp/simplecpp_c.h): a thin, exception-free wrapper over the C++ API.
#include "simplecpp/simplecpp_c.h"

#include <cstring>
#include <new>
#include <string>

#include "simplecpp/api/c_api_handles.h"
#include "simplecpp/simplecpp.h"

using simplecpp::capi::Guard;
using simplecpp::capi::MakeStatus;
using simplecpp::capi::NullArgument;
using simplecpp::capi::kOutOfMemoryStatus;

extern "C" {

int32_t sc_status_code(const sc_status* status) { return status ? status->code : SC_OK; }
const char* sc_status_message(const sc_status* status) { return status ? status->message.c_str() : ""; }
void sc_status_free(sc_status* status) {
  if (status != &kOutOfMemoryStatus) delete status;
}

sc_status* sc_model_load(const char* path, sc_model** out_model) {
  if (!path) return NullArgument("path");
  if (!out_model) return NullArgument("out_model");
  *out_model = nullptr;
  return Guard([&] { *out_model = new sc_model{simplecpp::Model::Load(path)}; });
}

sc_status* sc_model_load_bytes(const void* data, size_t size, sc_model** out_model) {
  if (!data && size) return NullArgument("data");
  if (!out_model) return NullArgument("out_model");
  *out_model = nullptr;
  return Guard([&] { *out_model = new sc_model{simplecpp::Model::LoadFromBytes(data, size)}; });
}

void sc_model_free(sc_model* model) { delete model; }

sc_status* sc_model_input_count(const sc_model* model, int64_t* out_count) {
  if (!model || !out_count) return NullArgument("model or out_count");
  *out_count = static_cast<int64_t>(model->model.inputs().size());
  return nullptr;
}
sc_status* sc_model_output_count(const sc_model* model, int64_t* out_count) {
  if (!model || !out_count) return NullArgument("model or out_count");
  *out_count = static_cast<int64_t>(model->model.outputs().size());
  return nullptr;
}
sc_status* sc_model_input_name(const sc_model* model, int64_t index, const char** out_name) {
  if (!model || !out_name) return NullArgument("model or out_name");
  const auto& v = model->model.inputs();
  if (index < 0 || index >= static_cast<int64_t>(v.size())) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "input index " + std::to_string(index) + " out of range");
  }
  *out_name = v[index].name.c_str();
  return nullptr;
}
sc_status* sc_model_output_name(const sc_model* model, int64_t index, const char** out_name) {
  if (!model || !out_name) return NullArgument("model or out_name");
  const auto& v = model->model.outputs();
  if (index < 0 || index >= static_cast<int64_t>(v.size())) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "output index " + std::to_string(index) + " out of range");
  }
  *out_name = v[index].name.c_str();
  return nullptr;
}

namespace {

// Model input (is_input) or output `index`, or an out-of-range status.
sc_status* FindValue(const sc_model* model, bool is_input, int64_t index,
                     const simplecpp::ValueDescription** out) {
  if (!model) return NullArgument("model");
  const auto& v = is_input ? model->model.inputs() : model->model.outputs();
  if (index < 0 || index >= static_cast<int64_t>(v.size())) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, std::string(is_input ? "input" : "output") +
                                                   " index " + std::to_string(index) +
                                                   " out of range");
  }
  *out = &v[static_cast<size_t>(index)];
  return nullptr;
}

sc_status* ValueType(const sc_model* model, bool is_input, int64_t index, int32_t* out_kind,
                     int32_t* out_dtype, int64_t* out_rank) {
  const simplecpp::ValueDescription* v = nullptr;
  if (sc_status* st = FindValue(model, is_input, index, &v)) return st;
  if (out_kind) {
    *out_kind = v->sequence ? SC_VALUE_SEQUENCE : v->optional ? SC_VALUE_OPTIONAL : SC_VALUE_TENSOR;
  }
  if (out_dtype) *out_dtype = static_cast<int32_t>(v->dtype);
  if (out_rank) *out_rank = v->has_shape ? static_cast<int64_t>(v->dims.size()) : -1;
  return nullptr;
}

sc_status* ValueDims(const sc_model* model, bool is_input, int64_t index, int64_t* out_dims,
                     int64_t max_rank) {
  const simplecpp::ValueDescription* v = nullptr;
  if (sc_status* st = FindValue(model, is_input, index, &v)) return st;
  const int64_t rank = v->has_shape ? static_cast<int64_t>(v->dims.size()) : 0;
  if (rank > 0 && !out_dims) return NullArgument("out_dims");
  if (max_rank < rank) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "max_rank " + std::to_string(max_rank) +
                                                   " is less than the rank " +
                                                   std::to_string(rank));
  }
  for (int64_t d = 0; d < rank; ++d) out_dims[d] = v->dims[static_cast<size_t>(d)];
  return nullptr;
}

sc_status* ValueDimName(const sc_model* model, bool is_input, int64_t index, int64_t dim,
                        const char** out_name) {
  if (!out_name) return NullArgument("out_name");
  const simplecpp::ValueDescription* v = nullptr;
  if (sc_status* st = FindValue(model, is_input, index, &v)) return st;
  if (!v->has_shape || dim < 0 || dim >= static_cast<int64_t>(v->dims.size())) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "dim " + std::to_string(dim) + " out of range");
  }
  static const char kEmpty[] = "";
  *out_name = static_cast<size_t>(dim) < v->dim_params.size()
                  ? v->dim_params[static_cast<size_t>(dim)].c_str()
                  : kEmpty;
  return nullptr;
}

}  // namespace

sc_status* sc_model_input_type(const sc_model* model, int64_t index, int32_t* out_kind,
                               int32_t* out_dtype, int64_t* out_rank) {
  return ValueType(model, true, index, out_kind, out_dtype, out_rank);
}
sc_status* sc_model_output_type(const sc_model* model, int64_t index, int32_t* out_kind,
                                int32_t* out_dtype, int64_t* out_rank) {
  return ValueType(model, false, index, out_kind, out_dtype, out_rank);
}
sc_status* sc_model_input_dims(const sc_model* model, int64_t index, int64_t* out_dims,
                               int64_t max_rank) {
  return ValueDims(model, true, index, out_dims, max_rank);
}
sc_status* sc_model_output_dims(const sc_model* model, int64_t index, int64_t* out_dims,
                                int64_t max_rank) {
  return ValueDims(model, false, index, out_dims, max_rank);
}
sc_status* sc_model_input_dim_name(const sc_model* model, int64_t index, int64_t dim,
                                   const char** out_name) {
  return ValueDimName(model, true, index, dim, out_name);
}
sc_status* sc_model_output_dim_name(const sc_model* model, int64_t index, int64_t dim,
                                    const char** out_name) {
  return ValueDimName(model, false, index, dim, out_name);
}

sc_status* sc_session_create(const sc_model* model, int32_t threads, sc_session** out_session) {
  if (!model || !out_session) return NullArgument("model or out_session");
  *out_session = nullptr;
  return Guard([&] {
    simplecpp::SessionOptions options;
    options.threads = threads;
    *out_session = new sc_session{simplecpp::Session(model->model, options)};
  });
}
void sc_session_free(sc_session* session) { delete session; }
sc_status* sc_session_memory_stats(const sc_session* session, int64_t* out_peak_bytes_in_use,
                                   int64_t* out_buffer_allocations) {
  if (!session) return NullArgument("session");
  return Guard([&] {
    const simplecpp::Session::MemoryStats stats = session->session.memory_stats();
    if (out_peak_bytes_in_use) *out_peak_bytes_in_use = stats.peak_bytes_in_use;
    if (out_buffer_allocations) *out_buffer_allocations = stats.buffer_allocations;
  });
}

sc_status* sc_tensor_create(int32_t dtype, const int64_t* dims, int64_t rank, const void* data,
                            size_t byte_size, sc_tensor** out_tensor) {
  if (!out_tensor) return NullArgument("out_tensor");
  *out_tensor = nullptr;
  if (rank < 0 || (rank > 0 && !dims)) return MakeStatus(SC_ERR_INVALID_ARGUMENT, "bad dims");
  if (!simplecpp::IsKnownDType(dtype) || dtype == static_cast<int32_t>(simplecpp::DType::kString)) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "unsupported dtype " + std::to_string(dtype));
  }
  return Guard([&] {
    simplecpp::Tensor t(static_cast<simplecpp::DType>(dtype), simplecpp::Dims(dims, dims + rank));
    if (t.byte_size() != byte_size) {
      throw simplecpp::Error(simplecpp::ErrorCode::kInvalidArgument,
                             "tensor data has " + std::to_string(byte_size) + " bytes, shape " +
                                 simplecpp::DimsToString(t.dims()) + " needs " +
                                 std::to_string(t.byte_size()));
    }
    if (byte_size) {
      if (!data) throw simplecpp::Error(simplecpp::ErrorCode::kInvalidArgument, "data is NULL");
      std::memcpy(t.raw_data(), data, byte_size);
    }
    *out_tensor = new sc_tensor{std::move(t)};
  });
}

void sc_tensor_free(sc_tensor* tensor) { delete tensor; }
int32_t sc_tensor_dtype(const sc_tensor* tensor) {
  return tensor ? static_cast<int32_t>(tensor->tensor.dtype()) : 0;
}
int64_t sc_tensor_rank(const sc_tensor* tensor) { return tensor ? tensor->tensor.rank() : 0; }
sc_status* sc_tensor_dims(const sc_tensor* tensor, int64_t* out_dims, int64_t max_rank) {
  if (!tensor || (!out_dims && max_rank > 0)) return NullArgument("tensor or out_dims");
  const auto& d = tensor->tensor.dims();
  for (int64_t i = 0; i < max_rank && i < static_cast<int64_t>(d.size()); ++i) out_dims[i] = d[i];
  return nullptr;
}
size_t sc_tensor_byte_size(const sc_tensor* tensor) { return tensor ? tensor->tensor.byte_size() : 0; }
const void* sc_tensor_data(const sc_tensor* tensor) { return tensor ? tensor->tensor.raw_data() : nullptr; }
sc_status* sc_tensor_copy_data(const sc_tensor* tensor, void* buffer, size_t buffer_size) {
  if (!tensor || (!buffer && buffer_size)) return NullArgument("tensor or buffer");
  if (buffer_size < tensor->tensor.byte_size()) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT,
                      "buffer of " + std::to_string(buffer_size) + " bytes is smaller than the tensor's " +
                          std::to_string(tensor->tensor.byte_size()));
  }
  if (tensor->tensor.byte_size()) std::memcpy(buffer, tensor->tensor.raw_data(), tensor->tensor.byte_size());
  return nullptr;
}

sc_status* sc_session_run(sc_session* session, const char* const* input_names,
                          const sc_tensor* const* inputs, int64_t num_inputs,
                          const char* const* output_names, int64_t num_outputs,
                          sc_tensor** out_tensors) {
  if (!session) return NullArgument("session");
  if (num_inputs < 0 || num_outputs < 0) return MakeStatus(SC_ERR_INVALID_ARGUMENT, "negative count");
  if ((num_inputs && (!input_names || !inputs)) || (num_outputs && (!output_names || !out_tensors))) {
    return NullArgument("names or tensors");
  }
  for (int64_t i = 0; i < num_outputs; ++i) out_tensors[i] = nullptr;
  return Guard([&] {
    std::map<std::string, simplecpp::Tensor> feeds;
    for (int64_t i = 0; i < num_inputs; ++i) {
      if (!input_names[i] || !inputs[i]) {
        throw simplecpp::Error(simplecpp::ErrorCode::kInvalidArgument,
                               "input " + std::to_string(i) + " has a NULL name or tensor");
      }
      feeds[input_names[i]] = inputs[i]->tensor;
    }
    std::vector<std::string> wanted;
    for (int64_t i = 0; i < num_outputs; ++i) {
      if (!output_names[i]) {
        throw simplecpp::Error(simplecpp::ErrorCode::kInvalidArgument,
                               "output name " + std::to_string(i) + " is NULL");
      }
      wanted.push_back(output_names[i]);
    }
    auto results = session->session.Run(feeds, wanted);
    std::vector<sc_tensor*> made;
    try {
      for (int64_t i = 0; i < num_outputs; ++i) made.push_back(new sc_tensor{results.at(wanted[i])});
    } catch (...) {
      for (sc_tensor* t : made) delete t;
      throw;
    }
    for (int64_t i = 0; i < num_outputs; ++i) out_tensors[i] = made[i];
  });
}

sc_status* sc_load_options_create(sc_load_options** out_options) {
  if (!out_options) return NullArgument("out_options");
  *out_options = nullptr;
  return Guard([&] { *out_options = new sc_load_options{}; });
}
void sc_load_options_free(sc_load_options* options) { delete options; }

#define SC_LIMIT_SETTER(field)                                                              \
  sc_status* sc_load_options_set_##field(sc_load_options* options, int64_t value) {        \
    if (!options) return NullArgument("options");                                          \
    if (value < 0) {                                                                        \
      return MakeStatus(SC_ERR_INVALID_ARGUMENT,                                            \
                        #field " must not be negative (got " + std::to_string(value) + ")"); \
    }                                                                                       \
    options->options.limits.field = value;                                                  \
    return nullptr;                                                                         \
  }
SC_LIMIT_SETTER(max_model_bytes)
SC_LIMIT_SETTER(max_tensor_elements)
SC_LIMIT_SETTER(max_tensor_bytes)
SC_LIMIT_SETTER(max_nodes)
SC_LIMIT_SETTER(max_graph_depth)
SC_LIMIT_SETTER(max_total_bytes)
SC_LIMIT_SETTER(max_loop_iterations)
#undef SC_LIMIT_SETTER

sc_status* sc_load_options_set_constant_folding(sc_load_options* options, int32_t enabled) {
  if (!options) return NullArgument("options");
  options->options.constant_folding = enabled != 0;
  return nullptr;
}

sc_status* sc_load_options_set_fuse_quantized(sc_load_options* options, int32_t enabled) {
  if (!options) return NullArgument("options");
  options->options.fuse_quantized = enabled != 0;
  return nullptr;
}

sc_status* sc_load_options_set_external_data_dir(sc_load_options* options, const char* dir) {
  if (!options) return NullArgument("options");
  return Guard([&] { options->options.external_data_dir = dir ? dir : ""; });
}

sc_status* sc_model_load_with_options(const char* path, const sc_load_options* options,
                                      sc_model** out_model) {
  if (!path) return NullArgument("path");
  if (!out_model) return NullArgument("out_model");
  *out_model = nullptr;
  const simplecpp::LoadOptions defaults;
  const simplecpp::LoadOptions& o = options ? options->options : defaults;
  return Guard([&] { *out_model = new sc_model{simplecpp::Model::Load(path, o)}; });
}

sc_status* sc_model_load_bytes_with_options(const void* data, size_t size,
                                            const sc_load_options* options, sc_model** out_model) {
  if (!data && size) return NullArgument("data");
  if (!out_model) return NullArgument("out_model");
  *out_model = nullptr;
  const simplecpp::LoadOptions defaults;
  const simplecpp::LoadOptions& o = options ? options->options : defaults;
  return Guard([&] { *out_model = new sc_model{simplecpp::Model::LoadFromBytes(data, size, o)}; });
}

}  // extern "C"
