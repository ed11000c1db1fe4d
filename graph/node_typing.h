// Making a node's op and typing its outputs: the first half of turning a node into something
// runnable, shared by the plan builder (graph/executor.cc) and one-node inference for graphs built
// in code (graph/node_inference.cc), so that both accept and refuse exactly the same nodes with the
// same messages. Shapes (Prepare) and constant folding stay with the callers: the plan works on
// known dims, inference also on symbolic ones.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/op.h"

namespace simplecpp::graph {

// What typing needs to know of one input value.
struct NodeInputFacts {
  ValueType type;
  const Tensor* constant = nullptr;  // its load-time value, when known
};

// The values visible where a node sits: its graph's and, for a subgraph body, the enclosing ones'.
class NodeScope {
 public:
  virtual ~NodeScope() = default;
  // False when no value of that name is visible.
  virtual bool Lookup(const std::string& name, NodeInputFacts* facts) const = 0;
  // Every visible value, for binding the node's subgraphs (called only for nodes that have some).
  virtual void Visible(std::map<std::string, ValueType>* types,
                       std::map<std::string, Tensor>* constants) const = 0;
};

struct TypedNode {
  std::unique_ptr<Op> op;
  int64_t opset = 0;
  int since_version = 0;  // of the registered op chosen for the opset
  bool has_subgraph = false;
  // node.inputs, then the outer-scope names its subgraphs read that are not explicit inputs (the
  // implicit inputs, each once): ordering, lifetimes and folding treat them like any input.
  std::vector<std::string> input_names;
  std::vector<NodeInputFacts> inputs;  // per input_names; a default ValueType for "" (absent)
  std::vector<ValueType> outputs;      // per node.outputs; a default ValueType for "" (omitted)
};

// Finds the op for the node's domain and the scope's opset, reads its attributes (the factory),
// checks its inputs are visible and of kinds it takes (an Identity of a sequence or optional gets
// the value Identity), binds its subgraphs, and infers the output types. Throws Error naming the
// node and op: no outputs, no opset imported for the domain, unknown op or version, bad attribute,
// dangling input, sequence or optional where the op takes tensors, type inference failures.
TypedNode TypeNode(const Node& node, const OpsetMap& opsets, const NodeScope& scope,
                   const PlanOptions& options, int depth);

// Whether the node has a graph attribute (If, Loop, Scan bodies).
bool HasSubgraph(const Node& node);
// Appends the outer-scope names the node's subgraphs read (may repeat names and explicit inputs).
void CollectSubgraphReads(const Node& node, std::vector<std::string>* out);

// Plain heap tensors, for running a node at load time (folding): the results live in the plan.
class HeapAllocator final : public TensorAllocator {
 public:
  Tensor Allocate(DType dtype, const Dims& dims) override { return Tensor(dtype, dims); }
};

}  // namespace simplecpp::graph
