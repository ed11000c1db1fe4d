// One-node dtype and shape inference (graph/node_inference.h).
#include "graph/node_inference.h"

#include "graph/executor.h"
#include "graph/node_typing.h"

namespace simplecpp::graph {
namespace {

// Probe values for unknown dims, one list per probing pass. Primes, so that an output dim equal
// to a probe in every pass can only have come from that input dim; the first list starts above
// the usual small kernel and stride sizes so that convolutions and pools still fit.
constexpr int64_t kProbes[3][12] = {
    {17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61},
    {101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157},
    {211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271},
};
constexpr size_t kMaxProbedDims = 12;

// The values visible to a node of a graph under construction.
class KnownScope final : public NodeScope {
 public:
  explicit KnownScope(const std::map<std::string, KnownValue>& values) : values_(values) {}
  bool Lookup(const std::string& name, NodeInputFacts* facts) const override {
    auto it = values_.find(name);
    if (it == values_.end()) return false;
    facts->type = it->second.type;
    facts->constant = it->second.constant.defined() ? &it->second.constant : nullptr;
    return true;
  }
  void Visible(std::map<std::string, ValueType>* types,
               std::map<std::string, Tensor>* constants) const override {
    for (const auto& [name, v] : values_) {
      (*types)[name] = v.type;
      if (v.constant.defined()) (*constants)[name] = v.constant;
    }
  }

 private:
  const std::map<std::string, KnownValue>& values_;
};

// Unknown dims of the inputs, each with the probe slot it gets: one slot per symbolic name, one
// per unnamed unknown dim.
struct ProbeSlots {
  std::vector<std::string> names;               // slot -> symbolic name ("" when unnamed)
  std::vector<std::vector<int>> slot_of_dim;    // input -> dim -> slot (-1 when known)
};

ProbeSlots AssignSlots(const std::vector<const KnownValue*>& inputs) {
  ProbeSlots slots;
  std::map<std::string, int> by_name;
  for (const KnownValue* v : inputs) {
    std::vector<int> per_dim;
    if (v != nullptr) {
      for (const Dim& d : v->dims) {
        if (d.known()) {
          per_dim.push_back(-1);
          continue;
        }
        if (!d.param.empty()) {
          auto [it, inserted] = by_name.emplace(d.param, static_cast<int>(slots.names.size()));
          if (inserted) slots.names.push_back(d.param);
          per_dim.push_back(it->second);
        } else {
          per_dim.push_back(static_cast<int>(slots.names.size()));
          slots.names.emplace_back();
        }
      }
    }
    slots.slot_of_dim.push_back(std::move(per_dim));
  }
  return slots;
}

// Prepares the op with the given input dims; the output specs, or nothing when Prepare refuses
// (with probe dims an op may reject what the real dims would satisfy).
bool TryPrepare(const Op& op, const Node& node, int64_t opset, std::vector<InputInfo> infos,
                std::vector<PrepareContext::OutputSpec>* specs, bool rethrow) {
  try {
    PrepareContext prep(node, opset, std::move(infos), static_cast<int>(node.outputs.size()),
                        nullptr);
    (void)op.Prepare(prep);
    *specs = prep.outputs();
    return true;
  } catch (const Error&) {
    if (rethrow) throw;
    return false;
  }
}

}  // namespace

KnownValue KnownValueOf(const TypeInfo& type, const std::string& what) {
  KnownValue v;
  v.type = ValueTypeOf(type, what);
  if (v.type.is_tensor() && type.has_shape) {
    v.has_rank = true;
    for (const Dim& d : type.dims) v.dims.push_back(d.known() ? d : Dim{-1, d.param});
  }
  return v;
}

TypeInfo TypeInfoOf(const KnownValue& value) {
  TypeInfo t = TypeInfoOf(value.type);
  if (value.type.is_tensor() && value.has_rank) {
    t.has_shape = true;
    t.dims = value.dims;
  }
  return t;
}

std::vector<KnownValue> InferNode(const Node& node, const OpsetMap& opsets,
                                  const std::map<std::string, KnownValue>& values,
                                  const PlanOptions& options, int depth) {
  TypedNode typed = TypeNode(node, opsets, KnownScope(values), options, depth);
  const Op& op = *typed.op;
  const int64_t opset = typed.opset;
  const bool has_subgraph = typed.has_subgraph;
  std::vector<const KnownValue*> inputs;
  for (const std::string& name : typed.input_names) {
    inputs.push_back(name.empty() ? nullptr : &values.at(name));
  }
  std::vector<KnownValue> outputs(node.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i].type = typed.outputs[i];
  if (op.takes_values()) return outputs;  // sequences and optionals carry no shape here
  for (const KnownValue* v : inputs) {
    if (v != nullptr && !v->has_rank) return outputs;  // rank unknown: nothing to prepare with
  }

  const ScopedTensorLimits limits(options.tensor_limits);
  const std::vector<int> value_inputs = op.ValueInputs();
  auto infos_with = [&](const ProbeSlots* slots, int pass) {
    std::vector<InputInfo> infos;
    for (size_t i = 0; i < inputs.size(); ++i) {
      InputInfo info;
      if (const KnownValue* v = inputs[i]) {
        info.present = true;
        info.dtype = v->type.dtype;
        for (size_t d = 0; d < v->dims.size(); ++d) {
          const int slot = slots ? slots->slot_of_dim[i][d] : -1;
          info.dims.push_back(slot < 0 ? v->dims[d].value : kProbes[pass][slot]);
        }
        if (v->constant.defined()) info.value = &v->constant;
      }
      infos.push_back(std::move(info));
    }
    return infos;
  };
  bool all_known = true;
  bool all_constant = true;
  for (const KnownValue* v : inputs) {
    if (v == nullptr) continue;
    all_constant &= v->constant.defined();
    for (const Dim& d : v->dims) all_known &= d.known();
  }
  for (int vi : value_inputs) {
    if (vi < static_cast<int>(inputs.size()) && inputs[vi] != nullptr && !inputs[vi]->constant.defined()) {
      return outputs;  // the output shape depends on data known only at run time
    }
  }

  if (all_known) {
    // Exact dims; an error here is an error of the node (shapes that cannot work).
    std::vector<InputInfo> infos = infos_with(nullptr, 0);
    PrepareContext prep(node, opset, infos, static_cast<int>(node.outputs.size()), nullptr);
    RunFn run = op.Prepare(prep);
    const auto& specs = prep.outputs();
    const bool fold = all_constant && options.constant_folding && op.deterministic() && !has_subgraph;
    std::vector<Tensor> results(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (i >= specs.size() || !specs[i].declared || specs[i].dynamic) continue;
      if (fold) results[i] = Tensor(specs[i].dtype, specs[i].dims);
      if (node.outputs[i].empty()) continue;
      outputs[i].has_rank = true;
      outputs[i].dims.clear();
      for (int64_t d : specs[i].dims) outputs[i].dims.push_back(Dim{d, ""});
    }
    if (fold) {
      std::vector<const Tensor*> in_ptrs;
      for (const KnownValue* v : inputs) in_ptrs.push_back(v ? &v->constant : nullptr);
      HeapAllocator heap;
      RunContext ctx(node, in_ptrs, &results, &heap, nullptr);
      run(ctx);
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (node.outputs[i].empty() || !results[i].defined()) continue;
        outputs[i].constant = results[i];
        outputs[i].has_rank = true;
        outputs[i].dims.clear();
        for (int64_t d : results[i].dims()) outputs[i].dims.push_back(Dim{d, ""});
      }
    }
    return outputs;
  }
  if (has_subgraph) return outputs;  // bodies are not probed

  const ProbeSlots slots = AssignSlots(inputs);
  if (slots.names.size() > kMaxProbedDims) return outputs;
  std::vector<PrepareContext::OutputSpec> passes[3];
  for (int pass = 0; pass < 3; ++pass) {
    if (!TryPrepare(op, node, opset, infos_with(&slots, pass), &passes[pass], false)) return outputs;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    bool ok = true;
    for (const auto& specs : passes) {
      ok &= i < specs.size() && specs[i].declared && !specs[i].dynamic &&
            specs[i].dims.size() == passes[0][i].dims.size();
    }
    if (!ok) continue;
    outputs[i].has_rank = true;
    outputs[i].dims.clear();
    for (size_t d = 0; d < passes[0][i].dims.size(); ++d) {
      const int64_t a = passes[0][i].dims[d], b = passes[1][i].dims[d], c = passes[2][i].dims[d];
      Dim dim;
      if (a == b && b == c) {
        dim.value = a;
      } else {
        for (size_t s = 0; s < slots.names.size(); ++s) {
          if (a == kProbes[0][s] && b == kProbes[1][s] && c == kProbes[2][s]) dim.param = slots.names[s];
        }
      }
      outputs[i].dims.push_back(dim);
    }
  }
  return outputs;
}

}  // namespace simplecpp::graph
