// Shared parts of the quantized-pattern fusion pass (quant_fusion.h): the index of the input graph
// that every pattern matches against, the attribute / constant readers the patterns share, and
// the Rewrite record a match produces. The patterns live one per file (quant_fusion_dynamic.cc,
// quant_fusion_qdq.cc, quant_fusion_qdq_around.cc); quant_fusion.cc tries them and applies the
// rewrites.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace simplecpp::graph::passes::quant_fusion {

bool IsQ8(DType t);

// One element and rank <= max_rank.
bool IsOneElementOfRank(const Tensor& t, int64_t max_rank);

// Reads an int attribute; false when it exists with another kind.
bool IntAttr(const Node& n, const char* name, int64_t def, int64_t* v);

// True when the float attribute is absent (the default, 1.0 for alpha / beta) or equals expected.
bool FloatAttrIs(const Node& n, const char* name, float expected);

std::vector<float> FloatValues(const Tensor& t);

bool AllPositiveFinite(const std::vector<float>& v);

// Every name read by the nodes (and output lists) of g and its nested subgraphs.
void CollectSubgraphReads(const Graph& g, std::vector<std::string>* reads);

// A default-domain node `op_type` with min_in..max_in inputs and one named output.
bool IsOp(const Node& n, const char* op_type, size_t min_in, size_t max_in);

// Input i of n, or "" when n has fewer inputs.
const std::string& Input(const Node& n, size_t i);

// A per-channel float vector for an output [N, M, spatial...] of rank `rank`: t is one element
// (rank <= rank) or M values along the channel axis ([M, 1, ...] right-aligned to the output).
// Returns the M values (or 1) in *out.
bool ChannelVector(const Tensor& t, int64_t m, int64_t rank, std::vector<float>* out);

// DequantizeLinear attributes that keep the plain per-tensor / per-axis float32 semantics.
bool PlainDequantize(const Node& n);

// A QuantizeLinear without blocks or a precision attribute; *out_dtype gets its output_dtype
// attribute (0 when absent: the zero point's dtype, else uint8).
bool PlainQuantize(const Node& n, int64_t* out_dtype);

// The value of a one-element uint8 / int8 tensor.
int32_t Int8At(const Tensor& t);

// A rewrite found on the input graph.
struct Rewrite {
  std::vector<int> nodes;  // claimed node indices
  // DequantizeLinear / DynamicQuantizeLinear nodes the fused node no longer needs; they may feed
  // other nodes too (a shared activation or weight), so they are dropped only when nothing reads
  // them any more.
  std::vector<int> maybe_dead;
  int anchor = -1;  // where the fused node goes
  Node fused;
  std::vector<std::pair<std::string, Tensor>> initializers;
  int kind = 0;  // 1..7, the pattern numbers of quant_fusion.h
};

// The input graph as the patterns read it, built once per pass: for every value its producer, its
// readers (reads from nested subgraphs count as uses) and its constant value; plus the set of
// names in use, so that the names the rewrites add are fresh. The patterns share one instance, so
// the fresh names depend on the order the driver tries them in.
class PatternGraph {
 public:
  // opset: the graph's ai.onnx opset version (which dtypes the rewritten nodes' ops take).
  PatternGraph(const Graph& g, int64_t opset);

  const Graph& graph() const { return g_; }
  int64_t opset() const { return opset_; }
  const Node& node(int i) const { return g_.nodes[static_cast<size_t>(i)]; }

  // The node producing `value` (any op and domain); -1 if none.
  int AnyProducer(const std::string& value) const;
  // The default-domain node `op_type` producing `value` with exactly `outputs` outputs; -1 if none.
  int Producer(const std::string& value, const char* op_type, size_t outputs = 1) const;
  // The one reader of `value` when it is read once, by a default-domain node, and is no graph
  // output; -1 otherwise.
  int SoleReader(const std::string& value) const;
  // `value` is read exactly once (subgraph reads included) and is no graph output.
  bool SingleUse(const std::string& value) const;
  // The constant value of `value` (an initializer or a Constant node's output); nullptr if none.
  const Tensor* Const(const std::string& value) const;
  const Tensor* ConstOf(const std::string& value, DType dtype) const;

  // A name based on `base` that no value of the graph, nor an earlier fresh name, uses.
  std::string FreshName(const std::string& base);
  // A new float32 initializer [v.size()] in rw with a fresh name based on `base`; its name.
  std::string VectorInitializer(Rewrite* rw, const std::string& base, const std::vector<float>& v);

 private:
  void IndexNode(int i);

  const Graph& g_;
  const int64_t opset_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> readers_;
  std::map<std::string, int> uses_;
  std::set<std::string> outputs_;
  std::map<std::string, const Tensor*> constants_;
  std::set<std::string> names_;
};

// Per-tensor parameters of a QuantizeLinear / DequantizeLinear node with a zero point: a
// constant float32 scale in [1e-30, 1e30] (normal, so (q - zp) * s / s rounds back to q - zp
// for any 8-bit q - zp) and a constant 8-bit zero point, one element each.
struct PerTensor {
  float scale = 0.0f;
  const Tensor* zp = nullptr;
  int32_t zp_value() const { return Int8At(*zp); }
};
bool PerTensorParams(const PatternGraph& g, const Node& n, PerTensor* p);

// The node whose output QuantizeLinear node q_idx alone reads, when q is a plain per-tensor
// QuantizeLinear (PerTensorParams; *yq gets its parameters) of a value that is no graph output;
// -1 otherwise.
int QuantizedProducer(const PatternGraph& g, int q_idx, PerTensor* yq);

// The patterns, each matched from one node outwards. On a match they fill *rw and return true;
// otherwise they return false and leave the graph's fresh names unchanged.

// Patterns 1 and 2 from a MatMulInteger / ConvInteger node (quant_fusion_dynamic.cc).
bool MatchDynamic(PatternGraph* g, int mi_idx, Rewrite* rw);
// Patterns 3 and 4 from a QuantizeLinear node (quant_fusion_qdq.cc).
bool MatchQdq(PatternGraph* g, int q_idx, Rewrite* rw);
// Patterns 5 and 6 from a QuantizeLinear node (quant_fusion_qdq_around.cc).
bool MatchQdqAround(const PatternGraph& g, int q_idx, Rewrite* rw);
// Pattern 7 from a QuantizeLinear node (quant_fusion_qdq_binary.cc).
bool MatchQdqBinary(const PatternGraph& g, int q_idx, Rewrite* rw);

}  // namespace simplecpp::graph::passes::quant_fusion
