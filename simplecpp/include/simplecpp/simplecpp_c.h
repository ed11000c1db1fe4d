/* simplecpp C API: opaque handles, status objects, fixed-width integers, int64 dims.
 *
 * Every function returns sc_status* : NULL on success, otherwise an object carrying a code
 * (SC_ERR_*) and a message that the caller frees with sc_status_free. There is no thread-local
 * "last error". No C++ exception crosses this boundary. Caller memory is never retained after a
 * call returns. Outputs are tensors owned by the library and freed with sc_tensor_free (from any
 * thread). New functions are only ever appended. */
#ifndef SIMPLECPP_SIMPLECPP_C_H_
#define SIMPLECPP_SIMPLECPP_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sc_status sc_status;
typedef struct sc_model sc_model;
typedef struct sc_session sc_session;
typedef struct sc_tensor sc_tensor;

/* Status codes (same numbers as simplecpp::ErrorCode). */
#define SC_OK 0
#define SC_ERR_INVALID_ARGUMENT 1
#define SC_ERR_INVALID_MODEL 2
#define SC_ERR_UNSUPPORTED 3
#define SC_ERR_RUNTIME 4
#define SC_ERR_LIMIT_EXCEEDED 5
#define SC_ERR_IO 6
#define SC_ERR_INTERNAL 7

/* Element types use ONNX's TensorProto numbers: 1 float32, 2 uint8, 3 int8, 6 int32, 7 int64,
 * 9 bool, 10 float16, 11 float64, 16 bfloat16, ... */

int32_t sc_status_code(const sc_status* status);
const char* sc_status_message(const sc_status* status);
void sc_status_free(sc_status* status);

sc_status* sc_model_load(const char* path, sc_model** out_model);
sc_status* sc_model_load_bytes(const void* data, size_t size, sc_model** out_model);
void sc_model_free(sc_model* model);
sc_status* sc_model_input_count(const sc_model* model, int64_t* out_count);
sc_status* sc_model_output_count(const sc_model* model, int64_t* out_count);
/* The returned name stays valid while the model lives. */
sc_status* sc_model_input_name(const sc_model* model, int64_t index, const char** out_name);
sc_status* sc_model_output_name(const sc_model* model, int64_t index, const char** out_name);

/* threads: 0 = number of cores. */
sc_status* sc_session_create(const sc_model* model, int32_t threads, sc_session** out_session);
void sc_session_free(sc_session* session);
/* Working memory of the session (simplecpp::Session::MemoryStats): the high-water mark of bytes
 * in use by intermediate tensors, scratch and outputs, and the number of buffers obtained from the
 * system so far (constant in steady state). Either out pointer may be NULL. */
sc_status* sc_session_memory_stats(const sc_session* session, int64_t* out_peak_bytes_in_use,
                                   int64_t* out_buffer_allocations);

/* Greedy decoding with a KV cache (simplecpp::Decoder in simplecpp.h): for a decoder with
 * onnxruntime-genai's input and output names. The decoder keeps its own session (threads as in
 * sc_session_create); the cache stays inside it between the runs of one generate call. */
typedef struct sc_decoder sc_decoder;
sc_status* sc_decoder_create(const sc_model* model, int32_t threads, sc_decoder** out_decoder);
void sc_decoder_free(sc_decoder* decoder);
/* logits' last dim when the model states it, else -1. */
sc_status* sc_decoder_vocab_size(const sc_decoder* decoder, int64_t* out_vocab_size);
/* Generates up to max_tokens tokens after `prompt` (prompt_length >= 1 ids), ending early after
 * stop_token (-1: none). warmup != 0 runs one untimed prefill first. out_tokens has room for
 * max_tokens ids; *out_count receives how many were generated. out_prefill_ms / out_decode_ms
 * (the time of the prompt's run and of the runs after it) may be NULL. */
sc_status* sc_decoder_generate(sc_decoder* decoder, const int64_t* prompt, int64_t prompt_length,
                               int64_t max_tokens, int64_t stop_token, int32_t warmup,
                               int64_t* out_tokens, int64_t* out_count, double* out_prefill_ms,
                               double* out_decode_ms);

/* Creates a tensor by copying `data` (byte_size bytes; must match dtype and dims exactly). */
sc_status* sc_tensor_create(int32_t dtype, const int64_t* dims, int64_t rank, const void* data,
                            size_t byte_size, sc_tensor** out_tensor);
void sc_tensor_free(sc_tensor* tensor);
int32_t sc_tensor_dtype(const sc_tensor* tensor);
int64_t sc_tensor_rank(const sc_tensor* tensor);
/* Copies up to max_rank dims into out_dims. */
sc_status* sc_tensor_dims(const sc_tensor* tensor, int64_t* out_dims, int64_t max_rank);
size_t sc_tensor_byte_size(const sc_tensor* tensor);
/* Pointer to the tensor's data (valid while the tensor lives). */
const void* sc_tensor_data(const sc_tensor* tensor);
/* Copies the data into a caller-owned buffer of buffer_size bytes. */
sc_status* sc_tensor_copy_data(const sc_tensor* tensor, void* buffer, size_t buffer_size);

/* Runs the session. input_names/inputs: num_inputs pairs. output_names: the outputs wanted
 * (num_outputs of them); out_tensors receives num_outputs new tensors for the caller to free. */
sc_status* sc_session_run(sc_session* session, const char* const* input_names,
                          const sc_tensor* const* inputs, int64_t num_inputs,
                          const char* const* output_names, int64_t num_outputs,
                          sc_tensor** out_tensors);

/* Load options (simplecpp::LoadOptions): resource limits and loading switches. Create, set what
 * differs from the defaults, pass to sc_model_load_with_options / sc_model_load_bytes_with_options,
 * free (the model does not keep the options). Limit setters refuse negative values
 * (SC_ERR_INVALID_ARGUMENT). Going over a limit makes load or run fail with SC_ERR_LIMIT_EXCEEDED
 * and a message naming the limit, e.g. "... over the limit max_tensor_elements=1000000". */
typedef struct sc_load_options sc_load_options;
sc_status* sc_load_options_create(sc_load_options** out_options);
void sc_load_options_free(sc_load_options* options);
/* Size of the model file or buffer, in bytes (default 4 GiB). */
sc_status* sc_load_options_set_max_model_bytes(sc_load_options* options, int64_t value);
/* Elements of any one tensor: initializers, and every value computed at load or run time. */
sc_status* sc_load_options_set_max_tensor_elements(sc_load_options* options, int64_t value);
/* Bytes of any one tensor (default 16 GiB). */
sc_status* sc_load_options_set_max_tensor_bytes(sc_load_options* options, int64_t value);
/* Nodes in the model, subgraphs included. */
sc_status* sc_load_options_set_max_nodes(sc_load_options* options, int64_t value);
/* Nesting depth of subgraphs (If/Loop/Scan bodies). */
sc_status* sc_load_options_set_max_graph_depth(sc_load_options* options, int64_t value);
/* Working memory of one run: bytes of tensor buffers in use at once (default 64 GiB). */
sc_status* sc_load_options_set_max_total_bytes(sc_load_options* options, int64_t value);
sc_status* sc_load_options_set_max_loop_iterations(sc_load_options* options, int64_t value);
/* 0 disables constant folding at load (default on). */
sc_status* sc_load_options_set_constant_folding(sc_load_options* options, int32_t enabled);
/* 0 disables the fusion of quantized patterns into integer kernels at load (default on). */
sc_status* sc_load_options_set_fuse_quantized(sc_load_options* options, int32_t enabled);
/* Folder external-data paths resolve against (NULL or "" resets to the default). */
sc_status* sc_load_options_set_external_data_dir(sc_load_options* options, const char* dir);
/* As sc_model_load / sc_model_load_bytes; options may be NULL (defaults). */
sc_status* sc_model_load_with_options(const char* path, const sc_load_options* options,
                                      sc_model** out_model);
sc_status* sc_model_load_bytes_with_options(const void* data, size_t size,
                                            const sc_load_options* options, sc_model** out_model);

/* What model input / output `index` holds, as the model declares it:
 *   *out_kind: SC_VALUE_TENSOR, SC_VALUE_SEQUENCE or SC_VALUE_OPTIONAL;
 *   *out_dtype: the element type (for a sequence or optional, its elements'; 0 when undeclared);
 *   *out_rank: the number of dims, or -1 when the model declares no shape.
 * Any out pointer may be NULL. */
#define SC_VALUE_TENSOR 0
#define SC_VALUE_SEQUENCE 1
#define SC_VALUE_OPTIONAL 2
sc_status* sc_model_input_type(const sc_model* model, int64_t index, int32_t* out_kind,
                               int32_t* out_dtype, int64_t* out_rank);
sc_status* sc_model_output_type(const sc_model* model, int64_t index, int32_t* out_kind,
                                int32_t* out_dtype, int64_t* out_rank);
/* The declared dims (max_rank >= the rank; symbolic or unknown dims read -1). */
sc_status* sc_model_input_dims(const sc_model* model, int64_t index, int64_t* out_dims,
                               int64_t max_rank);
sc_status* sc_model_output_dims(const sc_model* model, int64_t index, int64_t* out_dims,
                                int64_t max_rank);
/* The symbolic name of dim `dim` ("" when the dim is a number or unnamed); valid while the model
 * lives. */
sc_status* sc_model_input_dim_name(const sc_model* model, int64_t index, int64_t dim,
                                   const char** out_name);
sc_status* sc_model_output_dim_name(const sc_model* model, int64_t index, int64_t dim,
                                    const char** out_name);

/* ---- Building a graph in code (simplecpp/builder.h) ----
 * A builder adds inputs, initializers, nodes and outputs; every value's dtype is known as soon as
 * its node is added, and its dims when they follow from known dims (sc_builder_value_type /
 * sc_builder_value_dims). A failed call (unknown op, attribute of the wrong type, unknown value
 * name, dtype mismatch, shapes that do not fit) returns a status naming the node and op and leaves
 * the builder as it was. sc_builder_build gives the same model sc_model_load gives for the graph. */
typedef struct sc_graph_builder sc_graph_builder;
typedef struct sc_attributes sc_attributes;

/* A builder importing ai.onnx at onnx_opset (0: the library's default, kDefaultOpset). */
sc_status* sc_builder_create(int64_t onnx_opset, sc_graph_builder** out_builder);
void sc_builder_free(sc_graph_builder* builder);
/* Imports another domain ("com.microsoft", 1). */
sc_status* sc_builder_import_opset(sc_graph_builder* builder, const char* domain, int64_t version);
/* A graph input: dims[i] = -1 for an unknown dim; dim_names may be NULL, or rank entries (NULL or
 * "" for an unnamed dim). rank = -1: unknown rank (dims ignored). */
sc_status* sc_builder_add_input(sc_graph_builder* builder, const char* name, int32_t dtype,
                                const int64_t* dims, int64_t rank, const char* const* dim_names);
/* A constant weight, copied from the tensor. */
sc_status* sc_builder_add_initializer(sc_graph_builder* builder, const char* name,
                                      const sc_tensor* value);
/* A constant weight that is not copied: data (byte_size bytes, matching dtype and dims) must stay
 * valid and unchanged while the builder and every model built from it live. */
sc_status* sc_builder_add_initializer_borrowed(sc_graph_builder* builder, const char* name,
                                               int32_t dtype, const int64_t* dims, int64_t rank,
                                               const void* data, size_t byte_size);
/* Adds a node. domain and node_name may be NULL (ai.onnx; a generated name). inputs: num_inputs
 * value names ("" or NULL for an omitted optional input). attributes may be NULL. out_names
 * receives num_outputs output names (NULL allowed), valid while the builder lives. */
sc_status* sc_builder_add_node(sc_graph_builder* builder, const char* domain, const char* op_type,
                               const char* node_name, const char* const* inputs,
                               int64_t num_inputs, const sc_attributes* attributes,
                               int64_t num_outputs, const char** out_names);
sc_status* sc_builder_add_output(sc_graph_builder* builder, const char* value_name);
/* What is known about a value: *out_dtype (ONNX number), *out_rank (-1 when unknown); either out
 * pointer may be NULL. sc_builder_value_dims copies the dims (-1 where unknown). */
sc_status* sc_builder_value_type(const sc_graph_builder* builder, const char* value_name,
                                 int32_t* out_dtype, int64_t* out_rank);
sc_status* sc_builder_value_dims(const sc_graph_builder* builder, const char* value_name,
                                 int64_t* out_dims, int64_t max_rank);
/* A builder for an If/Loop/Scan body that sees `outer`'s values; pass it to
 * sc_attributes_set_graph (which takes what it has built so far), then free it. */
sc_status* sc_builder_create_subgraph(const sc_graph_builder* outer, const char* graph_name,
                                      sc_graph_builder** out_builder);
/* options may be NULL (defaults). */
sc_status* sc_builder_build(const sc_graph_builder* builder, const sc_load_options* options,
                            sc_model** out_model);
/* The graph as ONNX ModelProto bytes: *out_data is freed with sc_buffer_free. */
sc_status* sc_builder_to_onnx(const sc_graph_builder* builder, void** out_data, size_t* out_size);
sc_status* sc_builder_save_onnx(const sc_graph_builder* builder, const char* path);
void sc_buffer_free(void* data);

/* Node attributes for sc_builder_add_node and sc_run_op. Setting a name again replaces it. */
sc_status* sc_attributes_create(sc_attributes** out_attributes);
void sc_attributes_free(sc_attributes* attributes);
sc_status* sc_attributes_set_int(sc_attributes* attributes, const char* name, int64_t value);
sc_status* sc_attributes_set_float(sc_attributes* attributes, const char* name, float value);
sc_status* sc_attributes_set_string(sc_attributes* attributes, const char* name, const char* value);
sc_status* sc_attributes_set_ints(sc_attributes* attributes, const char* name,
                                  const int64_t* values, int64_t count);
sc_status* sc_attributes_set_floats(sc_attributes* attributes, const char* name,
                                    const float* values, int64_t count);
sc_status* sc_attributes_set_strings(sc_attributes* attributes, const char* name,
                                     const char* const* values, int64_t count);
/* The tensor is shared (not copied); it may be freed after the call. */
sc_status* sc_attributes_set_tensor(sc_attributes* attributes, const char* name,
                                    const sc_tensor* value);
sc_status* sc_attributes_set_graph(sc_attributes* attributes, const char* name,
                                   const sc_graph_builder* body);

/* Runs one node eagerly (simplecpp::RunOp): domain NULL or "" is ai.onnx; inputs: num_inputs
 * tensors (NULL for an omitted optional input); out_tensors receives num_outputs new tensors for
 * the caller to free. The prepared plan is cached per thread. */
sc_status* sc_run_op(const char* domain, const char* op_type, int64_t opset,
                     const sc_tensor* const* inputs, int64_t num_inputs,
                     const sc_attributes* attributes, int64_t num_outputs,
                     sc_tensor** out_tensors);

#ifdef __cplusplus
}
#endif

#endif /* SIMPLECPP_SIMPLECPP_C_H_ */
