// Making a node's op and typing its outputs (graph/node_typing.h).
#include "graph/node_typing.h"

#include <set>

#include "graph/registry.h"

namespace simplecpp::graph {

bool HasSubgraph(const Node& node) {
  for (const Attribute& a : node.attributes) {
    if (a.kind == AttrKind::kGraph || a.kind == AttrKind::kGraphs) return true;
  }
  return false;
}

void CollectSubgraphReads(const Node& node, std::vector<std::string>* out) {
  for (const Attribute& a : node.attributes) {
    if (a.kind == AttrKind::kGraph && a.g) CollectFreeNames(*a.g, out);
    if (a.kind == AttrKind::kGraphs) {
      for (const auto& g : a.graphs) {
        if (g) CollectFreeNames(*g, out);
      }
    }
  }
}

TypedNode TypeNode(const Node& node, const OpsetMap& opsets, const NodeScope& scope,
                   const PlanOptions& options, int depth) {
  // Every ONNX operator has at least one output; ops rely on output 0 existing (fuzz finding
  // node_without_outputs).
  if (node.outputs.empty()) {
    throw Error(ErrorCode::kInvalidModel, node.Describe() + ": the node has no outputs");
  }
  TypedNode typed;
  const std::string domain = CanonicalDomain(node.domain);
  auto opset_it = opsets.find(domain);
  if (opset_it == opsets.end()) {
    throw Error(ErrorCode::kUnsupported, node.Describe() + ": the model imports no opset for domain '" +
                                             (domain.empty() ? "ai.onnx" : domain) + "'");
  }
  typed.opset = opset_it->second;
  const OpFactory* factory =
      OpRegistry::Global().Find(domain, node.op_type, typed.opset, &typed.since_version);
  if (factory == nullptr) {
    throw Error(ErrorCode::kUnsupported,
                node.Describe() + ": " + OpRegistry::Global().WhyMissing(domain, node.op_type, typed.opset));
  }
  OpInit init(node, typed.opset);
  typed.op = (*factory)(init);

  typed.input_names = node.inputs;
  bool has_value_input = false;  // a sequence or optional input
  for (const std::string& name : node.inputs) {
    NodeInputFacts facts;
    if (!name.empty() && !scope.Lookup(name, &facts)) {
      throw Error(ErrorCode::kInvalidModel, node.Describe() + ": input '" + name +
                                                "' is not a graph input, initializer or output of "
                                                "an earlier node");
    }
    has_value_input |= !name.empty() && !facts.type.is_tensor();
    typed.inputs.push_back(facts);
  }
  if (has_value_input && !typed.op->takes_values()) {
    if (domain.empty() && node.op_type == "Identity") {
      typed.op = MakeValueIdentityOp(init);
    } else {
      std::string types;
      for (const NodeInputFacts& in : typed.inputs) {
        types += (types.empty() ? "" : ", ") + in.type.ToString();
      }
      throw Error(ErrorCode::kUnsupported, node.Describe() + ": inputs (" + types +
                                               "): this op takes only tensors, not sequences or "
                                               "optionals");
    }
  }

  typed.has_subgraph = HasSubgraph(node);
  if (typed.has_subgraph) {
    std::vector<std::string> reads;
    CollectSubgraphReads(node, &reads);
    std::set<std::string> seen(node.inputs.begin(), node.inputs.end());
    SubgraphContext sub;
    for (const std::string& name : reads) {
      if (!seen.insert(name).second) continue;
      NodeInputFacts facts;
      if (!scope.Lookup(name, &facts)) {
        throw Error(ErrorCode::kInvalidModel, node.Describe() + ": a subgraph reads '" + name +
                                                  "', which is not defined before this node");
      }
      if (!facts.type.is_tensor() && !typed.op->takes_values()) {
        throw Error(ErrorCode::kUnsupported, node.Describe() + ": a subgraph reads '" + name + "' (" +
                                                 facts.type.ToString() +
                                                 "); this op passes only tensors to it");
      }
      sub.implicit_inputs.push_back(name);
      typed.input_names.push_back(name);
      typed.inputs.push_back(facts);
    }
    std::map<std::string, ValueType> visible;
    std::map<std::string, Tensor> constants;
    scope.Visible(&visible, &constants);
    sub.outer_types = &visible;
    sub.outer_constants = &constants;
    sub.opsets = &opsets;
    sub.options = &options;
    sub.depth = depth + 1;
    typed.op->BindSubgraphs(sub);
  }

  std::vector<DType> dtypes;
  std::vector<ValueType> types;
  std::vector<const Tensor*> constants;
  for (const NodeInputFacts& in : typed.inputs) {
    dtypes.push_back(in.type.dtype);
    types.push_back(in.type);
    constants.push_back(in.constant);
  }
  TypeContext type_ctx(node, typed.opset, dtypes, constants);
  type_ctx.set_input_types(types);
  typed.op->InferTypes(type_ctx);
  typed.outputs.resize(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    const ValueType type = type_ctx.output_type(static_cast<int>(i));
    if (type.dtype == DType::kUndefined) {
      throw Error(ErrorCode::kInternal, node.Describe() + ": no dtype inferred for output '" +
                                            node.outputs[i] + "'");
    }
    if (!type.is_tensor() && !typed.op->takes_values()) {
      throw Error(ErrorCode::kInternal, node.Describe() + ": gave a " + type.ToString() +
                                            " output without takes_values()");
    }
    typed.outputs[i] = type;
  }
  return typed;
}

}  // namespace simplecpp::graph
