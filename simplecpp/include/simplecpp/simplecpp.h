// simplecpp public C++ API. Include this one header.
//
//   simplecpp::Model model = simplecpp::Model::Load("model.onnx");
//   simplecpp::Session session(model);
//   auto outputs = session.Run({{"x", input_tensor}});
//   const simplecpp::Tensor& y = outputs.at("y");
//
// Models whose inputs or outputs are sequences or optionals run through Session::RunValues with
// simplecpp::Value (simplecpp/value.h); Session::Run handles tensors only.
//
// A Model is immutable after loading and may be shared by many threads; a Session belongs to one
// caller at a time (it owns the scratch memory and prepared kernels). Errors are simplecpp::Error.
// A Decoder runs greedy text generation with a KV cache on a decoder model (GenerateOptions).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/dtype.h"
#include "simplecpp/error.h"
#include "simplecpp/tensor.h"
#include "simplecpp/value.h"

namespace simplecpp {

struct Limits {
  int64_t max_model_bytes = int64_t{4} << 30;        // model file / buffer size
  int64_t max_tensor_elements = int64_t{1} << 34;    // elements in any one tensor
  int64_t max_tensor_bytes = int64_t{16} << 30;      // bytes in any one tensor
  int64_t max_nodes = 1 << 22;                       // nodes in a graph (all subgraphs together)
  int64_t max_graph_depth = 64;                      // nesting of subgraphs
  // Working memory of one Session::Run: tensor buffers the session's pool holds in use at once
  // (intermediate values, outputs, op scratch; inputs and initializers are not counted).
  int64_t max_total_bytes = int64_t{64} << 30;
  // Iterations of any one Loop node per run (a Loop's trip count and condition come from the
  // model or its inputs; a hostile model could otherwise spin for hours).
  int64_t max_loop_iterations = int64_t{1} << 31;
};

struct LoadOptions {
  // Folder that external-data paths are resolved against (defaults to the model file's folder;
  // for Load(bytes) external data is refused unless this is set).
  std::string external_data_dir;
  bool constant_folding = true;
  // Fuse quantized patterns (DynamicQuantizeLinear -> MatMulInteger/ConvInteger -> Cast -> Mul
  // [-> Add], and DequantizeLinear -> MatMul/Gemm/Conv [-> Add] -> QuantizeLinear) into single
  // integer kernels, and blocked DequantizeLinear(int4/int8 weights) -> MatMul into the low-bit
  // kernel with the weights kept packed. Exact in the integer part; the float epilogue is
  // bit-identical for the dynamic patterns, within 1 of the quantized output for QDQ, and within
  // float32 rounding for blocked weights (docs/OPS.md, "Graph passes").
  bool fuse_quantized = true;
  Limits limits;
};

struct SessionOptions {
  int threads = 0;  // intra-op threads; 0 = number of cores, 1 = run on the calling thread
};

// Description of a graph input or output: name, dtype, dims (-1 for unknown, with the symbolic
// name in dim_params when the model gives one). For a sequence, dtype is the element dtype and
// there is no shape; `optional` marks an optional (of a tensor or of a sequence).
struct ValueDescription {
  std::string name;
  bool sequence = false;
  bool optional = false;
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
};

namespace detail {
struct ModelImpl;
struct SessionImpl;
}  // namespace detail

class Model {
 public:
  static Model Load(const std::string& path, const LoadOptions& options = {});
  static Model LoadFromBytes(const void* data, size_t size, const LoadOptions& options = {});

  const std::vector<ValueDescription>& inputs() const;
  const std::vector<ValueDescription>& outputs() const;
  int64_t ir_version() const;
  // (domain, version) for every opset the model imports; "" is ai.onnx.
  std::vector<std::pair<std::string, int64_t>> opsets() const;
  // Bytes of the model's initializers (weights), as stored in the model.
  int64_t initializer_bytes() const;

  std::shared_ptr<const detail::ModelImpl> impl() const { return impl_; }

 private:
  friend class GraphBuilder;
  explicit Model(std::shared_ptr<const detail::ModelImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const detail::ModelImpl> impl_;
};

class Session {
 public:
  explicit Session(const Model& model, const SessionOptions& options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Runs the model. Every graph input without an initializer must be given. Returns every graph
  // output by name (or only `output_names` when non-empty).
  // Throws Error(kInvalidArgument) when a requested output is a sequence or optional.
  std::map<std::string, Tensor> Run(const std::map<std::string, Tensor>& inputs,
                                    const std::vector<std::string>& output_names = {});
  // As Run, for any value: tensors, sequences (Value::Sequence), optionals (the value itself, or
  // Value::None() for an empty one). A distinct name, not a Run overload, so that braced
  // initializer lists of tensors stay unambiguous.
  std::map<std::string, Value> RunValues(const std::map<std::string, Value>& inputs,
                                         const std::vector<std::string>& output_names = {});
  // Per-node timings of the last Run when profiling is on.
  void set_profiling(bool on);
  struct NodeTiming {
    std::string node_name;
    std::string op_type;
    double milliseconds = 0;
    // The node's first output shape where it is fixed before the node runs (no data-dependent
    // dims); otherwise output_shape_known is false.
    std::vector<int64_t> output_shape;
    bool output_shape_known = false;
  };
  std::vector<NodeTiming> last_profile() const;

  // Working memory of this session: intermediate tensors, kernel scratch and the outputs handed
  // out all come from one pool that keeps released buffers for the following runs, so once every
  // shape has been seen a run obtains no new memory (buffer_allocations stops growing while the
  // caller releases the previous run's outputs).
  struct MemoryStats {
    int64_t peak_bytes_in_use = 0;   // high-water mark since the session was created
    int64_t buffer_allocations = 0;  // buffers obtained from the system so far
  };
  MemoryStats memory_stats() const;

 private:
  std::unique_ptr<detail::SessionImpl> impl_;
};

// Greedy decoding with a KV cache, for a decoder that uses onnxruntime-genai's names: inputs
// input_ids [batch, sequence] (int64), optional attention_mask / position_ids (int64), and
// past_key_values.{i}.key|value [batch, kv_heads, past_sequence, head_dim]; outputs logits
// [batch, sequence, vocab] and present.{i}.key|value. One prefill run on the prompt, then one run
// per new token; each run's present tensors become the next run's past inputs (the tensors move,
// the cache is not copied by the loop). Batch 1; the next token is the argmax of the last row of
// logits (the lowest index wins ties), so results do not depend on threads or target.
struct GenerateOptions {
  int64_t max_tokens = 16;    // tokens to generate (the prefill's token counts); 0 runs nothing
  int64_t stop_token = -1;    // generation ends after this token is generated; -1: none
  bool warmup = false;        // one untimed prefill first: a session prepares (packs) weights on
                              // its first run, which the prefill time would otherwise include
};

struct GenerateResult {
  std::vector<int64_t> tokens;  // the generated tokens, without the prompt
  double prefill_ms = 0;        // the run on the prompt
  double decode_ms = 0;         // the runs after it (tokens.size() - 1 of them)
};

class Decoder {
 public:
  // Checks the model's inputs and outputs (Error kInvalidArgument naming what is missing or of
  // the wrong kind) and creates the session it decodes with.
  explicit Decoder(const Model& model, const SessionOptions& options = {});
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  // logits' last dim when the model states it, else -1; prompt tokens must be below it.
  int64_t vocab_size() const;
  int64_t num_layers() const;

  // Decodes from `prompt` (at least one token, each in [0, vocab_size)). on_token, when given,
  // sees each token as it is generated and may return false to stop after it. The cache starts
  // empty on every call.
  GenerateResult Generate(const std::vector<int64_t>& prompt, const GenerateOptions& options = {},
                          const std::function<bool(int64_t)>& on_token = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace simplecpp
