// DequantizeLinear -> chain -> QuantizeLinear lookup fusion (graph/passes/quant_lookup_fusion.h).
#include "graph/passes/quant_lookup_fusion.h"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "graph/ops/quant/byte_lookup.h"
#include "graph/ops/elementwise_fused.h"
#include "graph/passes/elementwise_fusion.h"

namespace simplecpp::graph {
namespace {

bool IsByteDType(DType dt) { return dt == DType::kUInt8 || dt == DType::kInt8; }

// Input i of a step is absent, or a one-element constant.
bool AbsentOrScalarConstant(const PlanStep& step, const std::vector<ValueState>& values,
                            size_t i) {
  if (i >= step.inputs.size() || step.inputs[i] < 0) return true;
  const ValueState& v = values[step.inputs[i]];
  return v.is_constant && v.constant.num_elements() == 1;
}

// A DequantizeLinear / QuantizeLinear step with per-tensor constant parameters.
bool IsPerTensorQdq(const PlanStep& step, const std::vector<ValueState>& values,
                    const char* op_type) {
  if (step.op == nullptr || step.node.op_type != op_type || !step.node.domain.empty() ||
      step.inputs.size() < 2 || step.inputs.size() > 3 || step.inputs[0] < 0 ||
      step.outputs.size() != 1 || step.outputs[0] < 0) {
    return false;
  }
  const ValueState& scale = values[step.inputs[1]];
  return step.inputs[1] >= 0 && scale.is_constant && scale.dtype == DType::kFloat32 &&
         scale.constant.num_elements() == 1 && AbsentOrScalarConstant(step, values, 2);
}

// Runs one node of `step` as a one-node plan on `input` (its input 0), its other inputs the
// step's constants. The same op, opset and attributes as the step: the same results.
Tensor RunAlone(const PlanStep& step, const std::vector<ValueState>& values, const Tensor& input) {
  Graph g;
  Node node = step.node;
  node.name = "lookup_table_" + node.name;
  ValueInfo in;
  in.name = "x";
  in.type.kind = TypeInfo::Kind::kTensor;
  in.type.dtype = input.dtype();
  in.type.has_shape = true;
  for (int64_t d : input.dims()) in.type.dims.push_back(Dim{d, ""});
  g.inputs.push_back(in);
  node.inputs[0] = "x";
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (step.inputs[i] < 0) continue;
    node.inputs[i] = "c" + std::to_string(i);
    g.initializers.emplace_back(node.inputs[i], values[step.inputs[i]].constant);
  }
  node.outputs = {"y"};
  g.nodes.push_back(node);
  ValueInfo out;
  out.name = "y";
  g.outputs.push_back(out);
  PlanOptions options;
  options.fuse_quantized = false;
  options.fuse_elementwise = false;
  Executor exec(Plan::Build(g, OpsetMap{{"", step.opset}}, options), nullptr);
  return exec.Run({{"x", input}})[0];
}

// A float32 MaxPool of opset 12 or later (it also takes 8-bit data there) on value `in`, without
// the Indices output. Where its input is a table of bytes and its output goes to a
// QuantizeLinear with a positive scale, the pool can run on the quantized bytes instead: max
// commutes with a non-decreasing map (q(v) = clamp(round(v / s) + zp) for s > 0), NaN aside,
// and padding never wins in either form. So the bytes are the unfused plan's.
bool IsFloatMaxPool(const PlanStep& step, const std::vector<ValueState>& values, int in) {
  return step.op != nullptr && step.node.op_type == "MaxPool" && step.node.domain.empty() &&
         step.opset >= 12 && step.inputs.size() == 1 && step.inputs[0] == in &&
         !step.outputs.empty() && step.outputs[0] >= 0 &&
         (step.outputs.size() == 1 || step.outputs[1] < 0) &&
         values[step.outputs[0]].dtype == DType::kFloat32;
}

bool HasNaN(const Tensor& floats) {
  const float* p = floats.data<float>();
  for (int64_t i = 0; i < floats.num_elements(); ++i) {
    if (std::isnan(p[i])) return true;
  }
  return false;
}

// The 256 byte values (int8: by bit pattern), in order.
Tensor EveryByte(DType dt) {
  Tensor bytes(dt, {256});
  auto* p = static_cast<uint8_t*>(bytes.raw_data());
  for (int b = 0; b < 256; ++b) p[b] = static_cast<uint8_t>(b);
  return bytes;
}

// The step that replaces DequantizeLinear `dq` -> `chain_step` (the chain on its output, with
// constants of rank <= rank) when nothing requantizes the result: the 256 float32 results of
// the very ops it replaces, looked up per byte. false where the ops fail on the table's input
// (the unfused steps then report it at run time).
bool FloatLookupStep(const PlanStep& dq, const PlanStep& chain_step,
                     const elementwise::FusedChain& chain, int rank,
                     const std::vector<ValueState>& values, PlanStep* out) {
  auto table = std::make_shared<FloatTable>();
  try {
    Tensor floats = RunAlone(dq, values, EveryByte(values[dq.inputs[0]].dtype));
    if (floats.dtype() != DType::kFloat32 || floats.num_elements() != 256) return false;
    chain.RunInPlaceF32(floats.data<float>(), 256);
    std::memcpy(table->data(), floats.data<float>(), sizeof(float) * 256);
  } catch (const Error&) {
    return false;
  }
  PlanStep& lookup = *out;
  lookup.node.name = chain_step.node.name;
  lookup.node.op_type = "DequantizedLookup";
  lookup.node.domain = "simplecpp";
  std::string doc = "lookup: DequantizeLinear";
  for (const elementwise::FusedStep& fs : chain.program().steps) doc += " " + fs.op_type;
  lookup.node.doc = doc;
  lookup.node.inputs = {values[dq.inputs[0]].name};
  lookup.node.outputs = chain_step.node.outputs;
  lookup.inputs = {dq.inputs[0]};
  lookup.outputs = chain_step.outputs;
  lookup.opset = 1;
  lookup.since_version = 1;
  lookup.op = MakeFloatLookupOp(std::move(table), rank);
  return true;
}

}  // namespace

std::vector<size_t> FuseQuantizedLookups(std::vector<PlanStep>* steps,
                                         std::vector<ValueState>* mutable_values,
                                         const std::vector<int>& keep) {
  const std::vector<ValueState>& values = *mutable_values;
  std::map<int, std::vector<size_t>> consumers;
  for (size_t s = 0; s < steps->size(); ++s) {
    for (int id : (*steps)[s].inputs) {
      if (id >= 0) consumers[id].push_back(s);
    }
  }
  const std::set<int> kept(keep.begin(), keep.end());
  // The one consumer of value id, or -1.
  auto only_consumer = [&](int id) -> int64_t {
    auto it = consumers.find(id);
    if (kept.count(id) || it == consumers.end() || it->second.size() != 1) return -1;
    return static_cast<int64_t>(it->second[0]);
  };

  std::map<int, size_t> producer;
  for (size_t s = 0; s < steps->size(); ++s) {
    for (int id : (*steps)[s].outputs) {
      if (id >= 0) producer[id] = s;
    }
  }
  std::set<size_t> removed;
  std::map<size_t, PlanStep> replaced;  // quantize step index -> lookup step
  std::set<size_t> retaken;             // producers that took a table (AttachOutputTable)
  for (size_t d = 0; d < steps->size(); ++d) {
    const PlanStep& dq = (*steps)[d];
    if (!IsPerTensorQdq(dq, values, "DequantizeLinear")) continue;
    const int x = dq.inputs[0];
    const int f = dq.outputs[0];
    if (!IsByteDType(values[x].dtype) || values[f].dtype != DType::kFloat32) continue;
    int64_t next = only_consumer(f);
    if (next < 0 || removed.count(static_cast<size_t>(next))) continue;
    // An optional chain between the two.
    std::shared_ptr<const elementwise::FusedChain> chain;
    int rank = 0;
    int64_t chain_index = -1;
    int g = f;
    if ((*steps)[next].node.op_type != "QuantizeLinear" &&
        !IsFloatMaxPool((*steps)[next], values, f)) {
      chain = ChainOnValue((*steps)[next], values, f, 1, &rank);
      if (chain == nullptr || chain->is_16bit()) continue;
      chain_index = next;
      g = (*steps)[next].outputs[0];
      next = only_consumer(g);
    }
    // A MaxPool between the chain and a QuantizeLinear with a positive scale: it moves after
    // the table.
    int64_t pool_index = -1;
    if (next >= 0 && !removed.count(static_cast<size_t>(next)) &&
        IsFloatMaxPool((*steps)[next], values, g)) {
      const int64_t after = only_consumer((*steps)[next].outputs[0]);
      if (after >= 0 && !removed.count(static_cast<size_t>(after)) &&
          IsPerTensorQdq((*steps)[after], values, "QuantizeLinear") &&
          IsByteDType(values[(*steps)[after].outputs[0]].dtype) &&
          values[(*steps)[after].inputs[1]].constant.data<float>()[0] > 0.0f) {
        pool_index = next;
        next = after;
        g = (*steps)[pool_index].outputs[0];  // what the QuantizeLinear reads
      }
    }
    if (next < 0 || removed.count(static_cast<size_t>(next)) ||
        !IsPerTensorQdq((*steps)[next], values, "QuantizeLinear") ||
        (*steps)[next].inputs[0] != g || !IsByteDType(values[(*steps)[next].outputs[0]].dtype)) {
      // Nothing requantizes the chain's result (a model output, a float op after it): the
      // chain step becomes a float table of the byte.
      if (chain_index >= 0 && values[g].dtype == DType::kFloat32) {
        PlanStep lookup;
        if (FloatLookupStep(dq, (*steps)[static_cast<size_t>(chain_index)], *chain, rank, values,
                            &lookup)) {
          removed.insert(d);
          removed.insert(static_cast<size_t>(chain_index));
          replaced.emplace(static_cast<size_t>(chain_index), std::move(lookup));
        }
      }
      continue;
    }
    const PlanStep& q = (*steps)[next];
    // The 256 results, from the ops themselves.
    const Tensor bytes = EveryByte(values[x].dtype);
    Tensor table_out;
    try {
      Tensor floats = RunAlone(dq, values, bytes);
      if (floats.dtype() != DType::kFloat32 || floats.num_elements() != 256) continue;
      if (chain) chain->RunInPlaceF32(floats.data<float>(), 256);
      if (pool_index >= 0 && HasNaN(floats)) continue;
      table_out = RunAlone(q, values, floats);
    } catch (const Error&) {
      continue;  // the unfused steps report whatever is wrong, at run time
    }
    if (table_out.num_elements() != 256 || !IsByteDType(table_out.dtype())) continue;
    if (pool_index >= 0) {
      // The table's bytes go to the MaxPool through f (DequantizeLinear's output, retyped):
      // x -> table -> f -> MaxPool -> QuantizeLinear's output.
      ValueState& fv = (*mutable_values)[f];
      fv.dtype = table_out.dtype();
      fv.type = ValueType::TensorOf(table_out.dtype());
      fv.static_shape = values[x].static_shape;
      fv.dims = values[x].dims;
      PlanStep& pool = (*steps)[static_cast<size_t>(pool_index)];
      pool.node.inputs[0] = values[f].name;
      pool.node.outputs[0] = q.node.outputs[0];
      pool.inputs[0] = f;
      pool.outputs[0] = q.outputs[0];
      pool.node.doc = "takes the bytes of the table before it, then " + pool.node.doc;
      pool.static_run = nullptr;
      pool.static_outputs.clear();
      retaken.insert(static_cast<size_t>(pool_index));
    }
    auto table = std::make_shared<std::array<uint8_t, 256>>();
    std::memcpy(table->data(), table_out.raw_data(), 256);
    std::string doc = "lookup: DequantizeLinear";
    if (chain) {
      for (const elementwise::FusedStep& fs : chain->program().steps) doc += " " + fs.op_type;
    }
    doc += " QuantizeLinear";
    const auto removes_chain = [&]() {
      removed.insert(d);
      if (chain_index >= 0) removed.insert(static_cast<size_t>(chain_index));
      removed.insert(static_cast<size_t>(next));
    };
    // What the table's bytes become: the QuantizeLinear's output, or the MaxPool's input.
    const int table_value = pool_index >= 0 ? f : q.outputs[0];
    const std::string table_name = pool_index >= 0 ? values[f].name : q.node.outputs[0];
    // x's producer, where x goes nowhere else and keeps its dtype through the table, may put
    // its output bytes through the table as it writes them (QLinearConv): the lookup's result
    // then comes from it directly, without a pass of its own over memory.
    if (auto it = producer.find(x); it != producer.end() && only_consumer(x) == d &&
                                    values[q.outputs[0]].dtype == values[x].dtype) {
      PlanStep& from = (*steps)[it->second];
      if (from.op != nullptr && from.outputs.size() == 1 && from.outputs[0] == x &&
          from.op->AttachOutputTable(table)) {
        from.node.doc = from.node.doc.empty() ? doc : from.node.doc + "; " + doc;
        from.node.outputs = {table_name};
        from.outputs = {table_value};
        from.static_run = nullptr;
        from.static_outputs.clear();
        removes_chain();
        retaken.insert(it->second);
        continue;
      }
    }

    PlanStep lookup;
    lookup.node.name = q.node.name;
    lookup.node.op_type = "QuantizedLookup";
    lookup.node.domain = "simplecpp";
    lookup.node.doc = doc;
    lookup.node.inputs = {values[x].name};
    lookup.node.outputs = {table_name};
    lookup.inputs = {x};
    lookup.outputs = {table_value};
    lookup.opset = 1;
    lookup.since_version = 1;
    lookup.op = MakeByteLookupOp(table, table_out.dtype(), rank);
    removes_chain();
    // Before the MaxPool that reads it, or in the QuantizeLinear's place.
    replaced.emplace(static_cast<size_t>(pool_index >= 0 ? d : next), std::move(lookup));
  }
  // DequantizeLinear of each input -> Concat -> QuantizeLinear: one table per input.
  for (size_t c = 0; c < steps->size(); ++c) {
    const PlanStep& concat = (*steps)[c];
    if (concat.op == nullptr || concat.node.op_type != "Concat" || !concat.node.domain.empty() ||
        concat.inputs.empty() || concat.outputs.size() != 1 || concat.outputs[0] < 0 ||
        removed.count(c) || values[concat.outputs[0]].dtype != DType::kFloat32) {
      continue;
    }
    const int64_t next = only_consumer(concat.outputs[0]);
    if (next < 0 || removed.count(static_cast<size_t>(next))) continue;
    const PlanStep& q = (*steps)[next];
    if (!IsPerTensorQdq(q, values, "QuantizeLinear") || !IsByteDType(values[q.outputs[0]].dtype)) {
      continue;
    }
    std::vector<size_t> dqs;
    for (int id : concat.inputs) {
      auto it = producer.find(id);
      if (id < 0 || it == producer.end() || only_consumer(id) != static_cast<int64_t>(c)) break;
      const PlanStep& dq = (*steps)[it->second];
      if (removed.count(it->second) || !IsPerTensorQdq(dq, values, "DequantizeLinear") ||
          !IsByteDType(values[dq.inputs[0]].dtype)) {
        break;
      }
      dqs.push_back(it->second);
    }
    if (dqs.size() != concat.inputs.size()) continue;
    std::vector<std::shared_ptr<const ByteTable>> tables;
    DType out_dtype = DType::kUndefined;
    for (size_t dq_index : dqs) {
      const PlanStep& dq = (*steps)[dq_index];
      const Tensor bytes = EveryByte(values[dq.inputs[0]].dtype);
      Tensor table_out;
      try {
        Tensor floats = RunAlone(dq, values, bytes);
        if (floats.dtype() != DType::kFloat32 || floats.num_elements() != 256) break;
        table_out = RunAlone(q, values, floats);
      } catch (const Error&) {
        break;  // the unfused steps report whatever is wrong, at run time
      }
      if (table_out.num_elements() != 256 || !IsByteDType(table_out.dtype())) break;
      auto table = std::make_shared<ByteTable>();
      std::memcpy(table->data(), table_out.raw_data(), 256);
      tables.push_back(std::move(table));
      out_dtype = table_out.dtype();
    }
    if (tables.size() != dqs.size()) continue;
    const Attribute* axis = concat.node.FindAttribute("axis");
    PlanStep fused;
    fused.node.name = q.node.name;
    fused.node.op_type = "QuantizedConcat";
    fused.node.domain = "simplecpp";
    fused.node.doc = "lookup: DequantizeLinear Concat QuantizeLinear";
    fused.node.outputs = q.node.outputs;
    for (size_t dq_index : dqs) {
      const int x = (*steps)[dq_index].inputs[0];
      fused.node.inputs.push_back(values[x].name);
      fused.inputs.push_back(x);
      removed.insert(dq_index);
    }
    fused.outputs = q.outputs;
    fused.opset = 1;
    fused.since_version = 1;
    fused.op = MakeByteConcatLookupOp(std::move(tables), axis != nullptr ? axis->i : 1, out_dtype);
    removed.insert(c);
    removed.insert(static_cast<size_t>(next));
    replaced.emplace(static_cast<size_t>(next), std::move(fused));
  }
  if (replaced.empty() && retaken.empty()) return {};
  // The lookup takes the QuantizeLinear's place: x exists before the DequantizeLinear, and the
  // result's consumers come after the QuantizeLinear. A producer that took a table stays where
  // it is: its result's consumers came after the QuantizeLinear, so after it too.
  std::vector<PlanStep> rewritten;
  std::vector<size_t> indices;
  for (size_t s = 0; s < steps->size(); ++s) {
    auto it = replaced.find(s);
    if (retaken.count(s)) {
      indices.push_back(rewritten.size());
      rewritten.push_back(std::move((*steps)[s]));
    } else if (it != replaced.end()) {
      indices.push_back(rewritten.size());
      rewritten.push_back(std::move(it->second));
    } else if (!removed.count(s)) {
      rewritten.push_back(std::move((*steps)[s]));
    }
  }
  *steps = std::move(rewritten);
  return indices;
}

}  // namespace simplecpp::graph
