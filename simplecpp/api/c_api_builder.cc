// The C API's graph builder, attributes and eager ops (simplecpp/simplecpp_c.h, "Building a graph
// in code"): thin wrappers over simplecpp/builder.h.
#include <cstdlib>
#include <cstring>
#include <deque>

#include "simplecpp/api/c_api_handles.h"
#include "simplecpp/builder.h"

using simplecpp::capi::Guard;
using simplecpp::capi::MakeStatus;
using simplecpp::capi::NullArgument;

struct sc_graph_builder {
  simplecpp::GraphBuilder builder;
  // Output names handed out by sc_builder_add_node: a deque keeps each string where it is.
  std::deque<std::string> names;
};
struct sc_attributes {
  simplecpp::Attributes list;
};

namespace {

using simplecpp::Dims;
using simplecpp::DType;
using simplecpp::Error;
using simplecpp::ErrorCode;

std::string Str(const char* s) { return s ? std::string(s) : std::string(); }

Dims ReadDims(const int64_t* dims, int64_t rank) {
  if (rank < 0 || (rank > 0 && !dims)) {
    throw Error(ErrorCode::kInvalidArgument, "bad dims (rank " + std::to_string(rank) + ")");
  }
  return Dims(dims, dims + rank);
}

void Set(sc_attributes* attributes, const char* name, simplecpp::AttributeValue value) {
  if (!name || !*name) throw Error(ErrorCode::kInvalidArgument, "attribute name is empty");
  for (auto& [n, v] : attributes->list) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  attributes->list.emplace_back(name, std::move(value));
}

template <typename T>
std::vector<T> ReadList(const T* values, int64_t count) {
  if (count < 0 || (count > 0 && !values)) {
    throw Error(ErrorCode::kInvalidArgument, "bad list (count " + std::to_string(count) + ")");
  }
  return std::vector<T>(values, values + count);
}

const simplecpp::Attributes& AttributesOf(const sc_attributes* attributes) {
  static const simplecpp::Attributes kNone;
  return attributes ? attributes->list : kNone;
}

}  // namespace

extern "C" {

sc_status* sc_builder_create(int64_t onnx_opset, sc_graph_builder** out_builder) {
  if (!out_builder) return NullArgument("out_builder");
  *out_builder = nullptr;
  return Guard([&] {
    *out_builder = new sc_graph_builder{
        simplecpp::GraphBuilder(onnx_opset == 0 ? simplecpp::kDefaultOpset : onnx_opset), {}};
  });
}

void sc_builder_free(sc_graph_builder* builder) { delete builder; }

sc_status* sc_builder_import_opset(sc_graph_builder* builder, const char* domain, int64_t version) {
  if (!builder) return NullArgument("builder");
  return Guard([&] { builder->builder.ImportOpset(Str(domain), version); });
}

sc_status* sc_builder_add_input(sc_graph_builder* builder, const char* name, int32_t dtype,
                                const int64_t* dims, int64_t rank, const char* const* dim_names) {
  if (!builder || !name) return NullArgument("builder or name");
  return Guard([&] {
    if (rank == -1) {
      builder->builder.AddInputUnranked(name, static_cast<DType>(dtype));
      return;
    }
    const Dims d = ReadDims(dims, rank);
    std::vector<std::string> params;
    if (dim_names) {
      for (int64_t i = 0; i < rank; ++i) params.push_back(Str(dim_names[i]));
    }
    builder->builder.AddInput(name, static_cast<DType>(dtype), d, params);
  });
}

sc_status* sc_builder_add_initializer(sc_graph_builder* builder, const char* name,
                                      const sc_tensor* value) {
  if (!builder || !name || !value) return NullArgument("builder, name or value");
  return Guard([&] { builder->builder.AddInitializer(name, value->tensor); });
}

sc_status* sc_builder_add_initializer_borrowed(sc_graph_builder* builder, const char* name,
                                               int32_t dtype, const int64_t* dims, int64_t rank,
                                               const void* data, size_t byte_size) {
  if (!builder || !name) return NullArgument("builder or name");
  return Guard([&] {
    const Dims d = ReadDims(dims, rank);
    if (!simplecpp::IsKnownDType(dtype) || dtype == static_cast<int32_t>(DType::kString)) {
      throw Error(ErrorCode::kInvalidArgument, "initializer '" + std::string(name) +
                                                   "': unsupported dtype " + std::to_string(dtype));
    }
    const size_t need = simplecpp::CheckedByteSize(static_cast<DType>(dtype), simplecpp::CheckedNumElements(d));
    if (need != byte_size) {
      throw Error(ErrorCode::kInvalidArgument, "initializer '" + std::string(name) + "': " +
                                                   std::to_string(byte_size) + " bytes given, shape " +
                                                   simplecpp::DimsToString(d) + " needs " + std::to_string(need));
    }
    builder->builder.AddInitializerBorrowed(name, static_cast<DType>(dtype), d, data);
  });
}

sc_status* sc_builder_add_node(sc_graph_builder* builder, const char* domain, const char* op_type,
                               const char* node_name, const char* const* inputs,
                               int64_t num_inputs, const sc_attributes* attributes,
                               int64_t num_outputs, const char** out_names) {
  if (!builder || !op_type) return NullArgument("builder or op_type");
  if (num_inputs < 0 || (num_inputs > 0 && !inputs)) return NullArgument("inputs");
  if (num_outputs < 1 || num_outputs > (1 << 20)) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "num_outputs is " + std::to_string(num_outputs));
  }
  return Guard([&] {
    std::vector<std::string> in;
    for (int64_t i = 0; i < num_inputs; ++i) in.push_back(Str(inputs[i]));
    simplecpp::NodeOptions options;
    options.domain = Str(domain);
    options.name = Str(node_name);
    const std::vector<std::string> outs = builder->builder.AddNode(
        op_type, in, AttributesOf(attributes), static_cast<int>(num_outputs), options);
    for (size_t k = 0; k < outs.size(); ++k) {
      builder->names.push_back(outs[k]);
      if (out_names) out_names[k] = builder->names.back().c_str();
    }
  });
}

sc_status* sc_builder_add_output(sc_graph_builder* builder, const char* value_name) {
  if (!builder || !value_name) return NullArgument("builder or value_name");
  return Guard([&] { builder->builder.AddOutput(value_name); });
}

sc_status* sc_builder_value_type(const sc_graph_builder* builder, const char* value_name,
                                 int32_t* out_dtype, int64_t* out_rank) {
  if (!builder || !value_name) return NullArgument("builder or value_name");
  return Guard([&] {
    const simplecpp::ValueDescription d = builder->builder.Describe(value_name);
    if (out_dtype) *out_dtype = static_cast<int32_t>(d.dtype);
    if (out_rank) *out_rank = d.has_shape ? static_cast<int64_t>(d.dims.size()) : -1;
  });
}

sc_status* sc_builder_value_dims(const sc_graph_builder* builder, const char* value_name,
                                 int64_t* out_dims, int64_t max_rank) {
  if (!builder || !value_name) return NullArgument("builder or value_name");
  return Guard([&] {
    const simplecpp::ValueDescription d = builder->builder.Describe(value_name);
    if (!d.has_shape) throw Error(ErrorCode::kInvalidArgument, "'" + std::string(value_name) + "' has no known rank");
    const int64_t rank = static_cast<int64_t>(d.dims.size());
    if (max_rank < rank || (rank > 0 && !out_dims)) {
      throw Error(ErrorCode::kInvalidArgument, "'" + std::string(value_name) + "' has rank " +
                                                   std::to_string(rank) + ", more than max_rank " +
                                                   std::to_string(max_rank));
    }
    for (int64_t i = 0; i < rank; ++i) out_dims[i] = d.dims[i];
  });
}

sc_status* sc_builder_create_subgraph(const sc_graph_builder* outer, const char* graph_name,
                                      sc_graph_builder** out_builder) {
  if (!outer || !out_builder) return NullArgument("outer or out_builder");
  *out_builder = nullptr;
  return Guard([&] {
    *out_builder = new sc_graph_builder{outer->builder.NewSubgraph(graph_name ? graph_name : "body"), {}};
  });
}

sc_status* sc_builder_build(const sc_graph_builder* builder, const sc_load_options* options,
                            sc_model** out_model) {
  if (!builder || !out_model) return NullArgument("builder or out_model");
  *out_model = nullptr;
  return Guard([&] {
    *out_model = new sc_model{builder->builder.Build(options ? options->options : simplecpp::LoadOptions())};
  });
}

sc_status* sc_builder_to_onnx(const sc_graph_builder* builder, void** out_data, size_t* out_size) {
  if (!builder || !out_data || !out_size) return NullArgument("builder, out_data or out_size");
  *out_data = nullptr;
  *out_size = 0;
  return Guard([&] {
    const std::string bytes = builder->builder.ToOnnx();
    void* data = std::malloc(bytes.size() ? bytes.size() : 1);
    if (!data) throw std::bad_alloc();
    std::memcpy(data, bytes.data(), bytes.size());
    *out_data = data;
    *out_size = bytes.size();
  });
}

sc_status* sc_builder_save_onnx(const sc_graph_builder* builder, const char* path) {
  if (!builder || !path) return NullArgument("builder or path");
  return Guard([&] { builder->builder.SaveOnnx(path); });
}

void sc_buffer_free(void* data) { std::free(data); }

sc_status* sc_attributes_create(sc_attributes** out_attributes) {
  if (!out_attributes) return NullArgument("out_attributes");
  *out_attributes = nullptr;
  return Guard([&] { *out_attributes = new sc_attributes; });
}

void sc_attributes_free(sc_attributes* attributes) { delete attributes; }

sc_status* sc_attributes_set_int(sc_attributes* attributes, const char* name, int64_t value) {
  if (!attributes) return NullArgument("attributes");
  return Guard([&] { Set(attributes, name, value); });
}

sc_status* sc_attributes_set_float(sc_attributes* attributes, const char* name, float value) {
  if (!attributes) return NullArgument("attributes");
  return Guard([&] { Set(attributes, name, value); });
}

sc_status* sc_attributes_set_string(sc_attributes* attributes, const char* name, const char* value) {
  if (!attributes || !value) return NullArgument("attributes or value");
  return Guard([&] { Set(attributes, name, std::string(value)); });
}

sc_status* sc_attributes_set_ints(sc_attributes* attributes, const char* name,
                                  const int64_t* values, int64_t count) {
  if (!attributes) return NullArgument("attributes");
  return Guard([&] { Set(attributes, name, ReadList(values, count)); });
}

sc_status* sc_attributes_set_floats(sc_attributes* attributes, const char* name,
                                    const float* values, int64_t count) {
  if (!attributes) return NullArgument("attributes");
  return Guard([&] { Set(attributes, name, ReadList(values, count)); });
}

sc_status* sc_attributes_set_strings(sc_attributes* attributes, const char* name,
                                     const char* const* values, int64_t count) {
  if (!attributes) return NullArgument("attributes");
  return Guard([&] {
    std::vector<std::string> list;
    for (const char* s : ReadList(values, count)) {
      if (!s) throw Error(ErrorCode::kInvalidArgument, "attribute '" + Str(name) + "': a string is NULL");
      list.emplace_back(s);
    }
    Set(attributes, name, std::move(list));
  });
}

sc_status* sc_attributes_set_tensor(sc_attributes* attributes, const char* name,
                                    const sc_tensor* value) {
  if (!attributes || !value) return NullArgument("attributes or value");
  return Guard([&] { Set(attributes, name, value->tensor); });
}

sc_status* sc_attributes_set_graph(sc_attributes* attributes, const char* name,
                                   const sc_graph_builder* body) {
  if (!attributes || !body) return NullArgument("attributes or body");
  return Guard([&] { Set(attributes, name, body->builder.BuildSubgraph()); });
}

sc_status* sc_run_op(const char* domain, const char* op_type, int64_t opset,
                     const sc_tensor* const* inputs, int64_t num_inputs,
                     const sc_attributes* attributes, int64_t num_outputs,
                     sc_tensor** out_tensors) {
  if (!op_type) return NullArgument("op_type");
  if (num_inputs < 0 || (num_inputs > 0 && !inputs)) return NullArgument("inputs");
  if (num_outputs < 1 || num_outputs > (1 << 20) || !out_tensors) {
    return MakeStatus(SC_ERR_INVALID_ARGUMENT, "num_outputs is " + std::to_string(num_outputs) +
                                                   (out_tensors ? "" : " (out_tensors is NULL)"));
  }
  for (int64_t k = 0; k < num_outputs; ++k) out_tensors[k] = nullptr;
  return Guard([&] {
    std::vector<simplecpp::Tensor> in;
    for (int64_t i = 0; i < num_inputs; ++i) {
      in.push_back(inputs[i] ? inputs[i]->tensor : simplecpp::Tensor());
    }
    std::vector<simplecpp::Tensor> outs = simplecpp::RunOp(Str(domain), op_type, opset, in,
                                                           AttributesOf(attributes),
                                                           static_cast<int>(num_outputs));
    std::vector<sc_tensor*> made;
    try {
      for (simplecpp::Tensor& t : outs) made.push_back(new sc_tensor{std::move(t)});
    } catch (...) {
      for (sc_tensor* t : made) delete t;
      throw;
    }
    for (size_t k = 0; k < made.size(); ++k) out_tensors[k] = made[k];
  });
}

}  // extern "C"
