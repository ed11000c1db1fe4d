// Building a graph in code, and running one op eagerly.
//
//   simplecpp::GraphBuilder b;                                   // ai.onnx, kDefaultOpset
//   std::string x = b.AddInput("x", DType::kFloat32, {-1, 3, 32, 32}, {"batch", "", "", ""});
//   std::string w = b.AddInitializer("w", weights);              // copied
//   std::string y = b.AddNode("Conv", {x, w}, {{"pads", Ints({1, 1, 1, 1})}});
//   b.Describe(y);                                               // float32 [batch?,16,32,32] ...
//   b.AddOutput(y);
//   simplecpp::Model model = b.Build();                          // same Model as Model::Load
//   std::string onnx_bytes = b.ToOnnx();                         // a valid ONNX ModelProto
//
//   auto outs = simplecpp::RunOp("", "Relu", 14, {tensor});       // one node, plan cached
//
// Every value's dtype is known as soon as the node producing it is added, and its dims too when
// the dims of the node's inputs are known (graph inputs with fixed dims, initializers, and what
// follows from them); dims that depend on a symbolic input dim read -1 (has_shape false when even
// the rank is unknown). A wrong call (unknown op or version, attribute of the wrong type, a value
// name that does not exist, a dtype the op does not take, shapes that do not fit) throws
// simplecpp::Error naming the node and op, and leaves the builder as it was before the call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/dtype.h"
#include "simplecpp/error.h"
#include "simplecpp/simplecpp.h"
#include "simplecpp/tensor.h"

namespace simplecpp {

// The ai.onnx opset a GraphBuilder imports unless told otherwise.
constexpr int64_t kDefaultOpset = 21;

class GraphBuilder;

// A graph body for an If/Loop/Scan attribute, made by GraphBuilder::BuildSubgraph.
class Subgraph {
 public:
  Subgraph() = default;
  bool defined() const { return impl_ != nullptr; }
  std::shared_ptr<const void> impl() const { return impl_; }

 private:
  friend class GraphBuilder;
  explicit Subgraph(std::shared_ptr<const void> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const void> impl_;  // a graph::Graph
};

// One attribute value. Implicit from the C++ value it holds:
//   {"axis", 1}  {"alpha", 0.2f}  {"mode", "linear"}  {"perm", Ints({0, 2, 1})}
//   {"scales", Floats({1.f, 2.f})}  {"value", tensor}  {"then_branch", subgraph}
class AttributeValue {
 public:
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };

  AttributeValue(int64_t v) : kind_(Kind::kInt), i_(v) {}          // NOLINT
  AttributeValue(int v) : kind_(Kind::kInt), i_(v) {}              // NOLINT
  AttributeValue(float v) : kind_(Kind::kFloat), f_(v) {}          // NOLINT
  AttributeValue(double v) : kind_(Kind::kFloat), f_(static_cast<float>(v)) {}  // NOLINT
  AttributeValue(const char* v) : kind_(Kind::kString), s_(v) {}   // NOLINT
  AttributeValue(std::string v) : kind_(Kind::kString), s_(std::move(v)) {}  // NOLINT
  AttributeValue(std::vector<int64_t> v) : kind_(Kind::kInts), ints_(std::move(v)) {}  // NOLINT
  AttributeValue(std::vector<float> v) : kind_(Kind::kFloats), floats_(std::move(v)) {}  // NOLINT
  AttributeValue(std::vector<std::string> v)  // NOLINT
      : kind_(Kind::kStrings), strings_(std::move(v)) {}
  AttributeValue(Tensor v) : kind_(Kind::kTensor), tensor_(std::move(v)) {}  // NOLINT
  AttributeValue(Subgraph v) : kind_(Kind::kGraph), graph_(std::move(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t i() const { return i_; }
  float f() const { return f_; }
  const std::string& s() const { return s_; }
  const std::vector<int64_t>& ints() const { return ints_; }
  const std::vector<float>& floats() const { return floats_; }
  const std::vector<std::string>& strings() const { return strings_; }
  const Tensor& tensor() const { return tensor_; }
  const Subgraph& graph() const { return graph_; }

 private:
  Kind kind_;
  int64_t i_ = 0;
  float f_ = 0.0f;
  std::string s_;
  std::vector<int64_t> ints_;
  std::vector<float> floats_;
  std::vector<std::string> strings_;
  Tensor tensor_;
  Subgraph graph_;
};

// Braced lists are ambiguous between the list kinds; these say which one is meant.
inline AttributeValue Ints(std::initializer_list<int64_t> v) { return std::vector<int64_t>(v); }
inline AttributeValue Floats(std::initializer_list<float> v) { return std::vector<float>(v); }
inline AttributeValue Strings(std::initializer_list<std::string> v) {
  return std::vector<std::string>(v);
}

using Attributes = std::vector<std::pair<std::string, AttributeValue>>;

// Optional parts of a node.
struct NodeOptions {
  std::string domain;                     // "" (ai.onnx), "com.microsoft", ...
  std::string name;                       // default: "<op_type>_<index>"
  std::vector<std::string> output_names;  // default: "<node name>_out<k>"; "" omits an output
};

namespace detail {
struct GraphBuilderImpl;
}

class GraphBuilder {
 public:
  // A graph importing ai.onnx at `onnx_opset` (more domains through ImportOpset).
  explicit GraphBuilder(int64_t onnx_opset = kDefaultOpset, std::string graph_name = "graph");
  ~GraphBuilder();
  GraphBuilder(GraphBuilder&&) noexcept;
  GraphBuilder& operator=(GraphBuilder&&) noexcept;

  // Imports `domain` at `version` ("com.microsoft", 1); re-importing changes the version and is
  // refused once a node of that domain has been added.
  void ImportOpset(const std::string& domain, int64_t version);

  // Resource limits for what the builder computes while nodes are added (constant folding,
  // shape inference); Build() applies its own LoadOptions::limits. Default: Limits().
  void SetLimits(const Limits& limits);

  // A graph input. dims: -1 for an unknown dim; dim_params (empty, or one per dim) names symbolic
  // dims ("batch"); a named dim is unknown whatever its number says.
  std::string AddInput(const std::string& name, DType dtype, const Dims& dims,
                       const std::vector<std::string>& dim_params = {});
  // A graph input of unknown rank.
  std::string AddInputUnranked(const std::string& name, DType dtype);
  // A constant weight, copied.
  std::string AddInitializer(const std::string& name, const Tensor& value);
  // A constant weight that is not copied: `data` must stay valid and unchanged while this builder
  // and every Model built from it live (a Model keeps the pointer, not the bytes).
  std::string AddInitializerBorrowed(const std::string& name, DType dtype, const Dims& dims,
                                     const void* data);

  // Adds a node and returns its output names (num_outputs of them, "" where omitted). inputs:
  // value names, "" for an omitted optional input.
  std::vector<std::string> AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                                   const Attributes& attributes, int num_outputs,
                                   const NodeOptions& options = {});
  // A node with one output.
  std::string AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                      const Attributes& attributes = {}, const NodeOptions& options = {});

  // Marks a value as a graph output (in call order).
  void AddOutput(const std::string& value_name);

  // What is known about a value now (name, dtype, dims: -1 where unknown, has_shape false when
  // the rank is unknown). Throws Error(kInvalidArgument) for an unknown name.
  ValueDescription Describe(const std::string& value_name) const;
  bool HasValue(const std::string& value_name) const;

  // A builder for an If/Loop/Scan body: it sees this builder's values (outer scope) as they are
  // now. Its inputs and outputs are the body's; BuildSubgraph() ends it.
  GraphBuilder NewSubgraph(const std::string& graph_name = "body") const;
  Subgraph BuildSubgraph() const;

  // The model: the same immutable Model that Model::Load gives for the same graph (same plan,
  // passes and kernels). The builder may go on afterwards.
  Model Build(const LoadOptions& options = {}) const;
  // The graph as an ONNX ModelProto (bytes) / file.
  std::string ToOnnx() const;
  void SaveOnnx(const std::string& path) const;

 private:
  explicit GraphBuilder(std::unique_ptr<detail::GraphBuilderImpl> impl);
  std::unique_ptr<detail::GraphBuilderImpl> impl_;
};

// Runs one node eagerly: op `op_type` of `domain` ("" is ai.onnx) at `opset`, on `inputs`
// (an undefined Tensor for an omitted optional input), returning `num_outputs` outputs. The node
// runs as a one-node Model would (same op, kernels and results); the Model and its Session are
// cached per calling thread, keyed by op, attributes, input dtypes and ranks, and the Session keeps
// the node prepared per input shape, so a repeated call costs one run. threads: as
// SessionOptions::threads (1: the calling thread). Throws Error as a Model would (unknown op, bad
// attribute, dtype or shape). Subgraph attributes are accepted but not cached.
std::vector<Tensor> RunOp(const std::string& domain, const std::string& op_type, int64_t opset,
                          const std::vector<Tensor>& inputs, const Attributes& attributes = {},
                          int num_outputs = 1, int threads = 1);

}  // namespace simplecpp
