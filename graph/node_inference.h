// Dtype and shape inference for one node at a time, for graphs built in code
// (simplecpp::GraphBuilder): what the executor learns about a value while it builds a plan, but
// available right after each node is added, so that a wrong node is refused where it is written.
//
// Dims: a node whose input dims are all known is prepared as at load (its output dims are then
// exact, and a node on constants only is folded to its value). Unknown input dims are probed: the
// node is prepared three times, with every unknown dim set to a different large prime each time;
// an output dim that comes out equal in all three is known, one that follows a symbolic input dim
// exactly keeps that dim's name, and any other is unknown. An op that cannot be prepared without run-time data
// (a Reshape whose shape is computed) gives outputs of unknown shape.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "graph/op.h"

namespace simplecpp::graph {

// What is known about a value of a graph under construction.
struct KnownValue {
  ValueType type;
  bool has_rank = false;
  std::vector<Dim> dims;  // value -1 where unknown, with the symbolic name when there is one
  Tensor constant;        // defined for initializers and values folded from them
};

// The KnownValue of a declared input type.
KnownValue KnownValueOf(const TypeInfo& type, const std::string& what);
// The TypeInfo that describes a KnownValue (a graph output's or value_info's declared type).
TypeInfo TypeInfoOf(const KnownValue& value);

// Infers the outputs of `node` (one KnownValue per node output; an omitted output is left
// default). `values` maps every name visible to the node (its graph's values and, for a subgraph
// body, the enclosing graphs') to what is known of it. Throws Error naming the node, op and what
// is wrong: unknown op or version, bad attribute, dangling input, unsupported dtype, shapes that
// cannot work.
std::vector<KnownValue> InferNode(const Node& node, const OpsetMap& opsets,
                                  const std::map<std::string, KnownValue>& values,
                                  const PlanOptions& options, int depth);

}  // namespace simplecpp::graph
