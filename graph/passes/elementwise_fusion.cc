// Elementwise chain fusion over planned steps (graph/passes/elementwise_fusion.h).
#include "graph/passes/elementwise_fusion.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <string>
#include <utility>

#include "graph/ops/elementwise_fused.h"
#include "graph/ops/float16_kind.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

using elementwise::FusedStep;

bool FusibleDType(DType dt) {
  return dt == DType::kFloat32 || dt == DType::kFloat16 || dt == DType::kBFloat16;
}

// The value of a one-element float constant (16-bit values widen exactly).
bool ScalarConstant(const ValueState& v, DType dtype, float* out) {
  if (!v.is_constant || v.dtype != dtype || v.constant.num_elements() != 1) return false;
  if (dtype == DType::kFloat32) {
    *out = v.constant.data<float>()[0];
  } else {
    const kernels::Float16Kind kind = Float16KindOf(dtype);
    *out = kernels::Widen16One(kind, static_cast<const uint16_t*>(v.constant.raw_data())[0]);
  }
  return true;
}

// ai.onnx Clip on the running value with constant bounds: attributes before opset 11, optional
// one-element constant inputs from 11 (a missing bound is infinite, as ClipOp reads it).
bool AsClipStep(const PlanStep& step, const std::vector<ValueState>& values, int running,
                FusedStep* out) {
  if (step.node.op_type != "Clip" || !step.node.domain.empty() || step.inputs.empty() ||
      step.inputs[0] != running) {
    return false;
  }
  const DType dt = values[step.outputs[0]].dtype;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (step.since_version < 11) {
    if (step.inputs.size() != 1) return false;
    if (const Attribute* a = step.node.FindAttribute("min")) lo = a->f;
    if (const Attribute* a = step.node.FindAttribute("max")) hi = a->f;
  } else {
    if (step.inputs.size() > 3) return false;
    for (size_t i = 1; i < step.inputs.size(); ++i) {
      const int id = step.inputs[i];
      if (id < 0) continue;
      if (!ScalarConstant(values[id], dt, i == 1 ? &lo : &hi)) return false;
    }
  }
  out->kind = FusedStep::Kind::kClip;
  out->clip_lo = lo;
  out->clip_hi = hi;
  return true;
}

// How one step would join a chain whose input is `x` and whose running value is `running`;
// `saved` holds the earlier chain values a step may read as its other operand. Sets
// *operand_value to the other operand's value id (binary steps), -1 for unary ones.
bool AsChainStep(const PlanStep& step, const std::vector<ValueState>& values, int x, int running,
                 const std::set<int>& saved, FusedStep* out, int* operand_value) {
  if (step.op == nullptr || step.op->takes_values() || step.outputs.size() != 1 ||
      step.outputs[0] < 0) {
    return false;
  }
  const ValueState& result = values[step.outputs[0]];
  if (!result.type.is_tensor() || !FusibleDType(result.dtype)) return false;
  out->op_type = step.node.op_type;
  *operand_value = -1;
  if (AsClipStep(step, values, running, out)) return true;
  if (step.inputs.size() == 1 && step.inputs[0] == running &&
      elementwise::AsFusibleUnary(*step.op, &out->unary, &out->params)) {
    out->kind = FusedStep::Kind::kUnary;
    return true;
  }
  if (step.inputs.size() != 2 || !elementwise::AsFusibleBinary(*step.op, &out->binary)) {
    return false;
  }
  const int a = step.inputs[0], b = step.inputs[1];
  if (a < 0 || b < 0) return false;
  // The running value on one side; the other side is x, an earlier chain value (same shape as
  // the running one: every chain value has x's elements) or a one-element constant.
  const bool lhs = a == running;
  const int other = lhs ? b : a;
  if (!lhs && b != running) return false;
  if (other == running && running != x) return false;  // v op v: v would be read twice
  const ValueState& o = values[other];
  if (o.dtype != result.dtype || !o.type.is_tensor()) return false;
  if (other != x && !saved.count(other) && !(o.is_constant && o.constant.num_elements() == 1)) {
    return false;
  }
  out->kind = FusedStep::Kind::kBinary;
  out->running_is_lhs = lhs;
  *operand_value = other;
  return true;
}

// A chain under construction. Values it defines with more than one consumer stay "pending" until
// every consumer has joined the chain; only a chain with nothing pending may end, so it is cut
// back to the last such point (Checkpoint) when growth stops.
struct Chain {
  std::vector<FusedStep> program;
  std::vector<size_t> members;
  std::vector<int> operand_values;     // fused op inputs: x, then the constants
  std::map<int, int> program_index;    // chain value -> index of the step that defines it
  std::map<int, int> slot_of;          // chain value -> scratch slot, once a later step reads it
  std::map<int, int> pending;          // chain value -> consumers that have not joined yet
  std::set<int> saved;                 // chain values later steps may read (pending ones)
  int num_slots = 0;

  struct Checkpoint {
    size_t program = 0, operands = 0;
    int num_slots = 0;
  };
  Checkpoint closed;

  bool NothingPending() const {
    for (const auto& [value, count] : pending) {
      if (count > 0) return false;
    }
    return true;
  }
  void Close() { closed = {program.size(), operand_values.size(), num_slots}; }
  void CutToClosed() {
    program.resize(closed.program);
    members.resize(closed.program);
    operand_values.resize(closed.operands);
    num_slots = closed.num_slots;
  }
};

}  // namespace

bool AsSingleChainStep(const PlanStep& step, const std::vector<ValueState>& values, int x,
                       FusedStep* out, int* operand_value) {
  return AsChainStep(step, values, x, x, std::set<int>(), out, operand_value);
}

namespace {

// A one-element constant of `dtype` and rank <= max_rank: its bits (float32 as float, 16-bit
// floats as uint16_t) appended to *out.
template <typename T>
bool ScalarOperand(const ValueState& v, DType dtype, int max_rank, int* rank, std::vector<T>* out) {
  if (!v.is_constant || v.dtype != dtype || v.constant.num_elements() != 1 ||
      static_cast<int>(v.constant.dims().size()) > max_rank) {
    return false;
  }
  *rank = std::max(*rank, static_cast<int>(v.constant.dims().size()));
  out->push_back(*static_cast<const T*>(v.constant.raw_data()));
  return true;
}

template <typename T>
std::shared_ptr<const elementwise::FusedChain> ChainOnValueTyped(
    const PlanStep& consumer, const std::vector<ValueState>& values, int x, DType dtype,
    int max_rank, int* rank) {
  elementwise::FusedProgram program;
  std::vector<T> constants = {T{}};
  if (const elementwise::FusedProgram* fused = consumer.op->AsFusedProgram()) {
    if (consumer.inputs.empty() || consumer.inputs[0] != x) return nullptr;
    for (size_t i = 1; i < consumer.inputs.size(); ++i) {
      if (consumer.inputs[i] < 0 ||
          !ScalarOperand(values[consumer.inputs[i]], dtype, max_rank, rank, &constants)) {
        return nullptr;
      }
    }
    program = *fused;
  } else {
    FusedStep step;
    int operand = -1;
    if (!AsSingleChainStep(consumer, values, x, &step, &operand)) return nullptr;
    if (operand >= 0 && operand != x) {
      if (!ScalarOperand(values[operand], dtype, max_rank, rank, &constants)) return nullptr;
      step.operand = 1;
    }
    program.steps.push_back(step);
  }
  if constexpr (std::is_same_v<T, float>) {
    return std::make_shared<elementwise::FusedChain>(std::move(program), std::move(constants));
  } else {
    const kernels::Float16Kind kind = Float16KindOf(dtype);
    return std::make_shared<elementwise::FusedChain>(std::move(program), kind,
                                                     std::move(constants));
  }
}

}  // namespace

std::shared_ptr<const elementwise::FusedChain> ChainOnValue(
    const PlanStep& consumer, const std::vector<ValueState>& values, int x, int max_rank,
    int* rank) {
  *rank = 0;
  if (consumer.op == nullptr || consumer.outputs.size() != 1 || consumer.outputs[0] < 0 ||
      x < 0 || values[consumer.outputs[0]].dtype != values[x].dtype) {
    return nullptr;
  }
  const DType dt = values[x].dtype;
  if (dt == DType::kFloat32) {
    return ChainOnValueTyped<float>(consumer, values, x, dt, max_rank, rank);
  }
  if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
    return ChainOnValueTyped<uint16_t>(consumer, values, x, dt, max_rank, rank);
  }
  return nullptr;
}

namespace {

// Consumers of each value (a step reading a value twice counts twice).
std::map<int, std::vector<size_t>> ConsumersOfValues(const std::vector<PlanStep>& steps) {
  std::map<int, std::vector<size_t>> consumers;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int id : steps[s].inputs) {
      if (id >= 0) consumers[id].push_back(s);
    }
  }
  return consumers;
}

// The chain input: the non-constant operand of the first step; -1 when a chain cannot start here.
int ChainInput(const PlanStep& start, const std::vector<ValueState>& values) {
  if (start.inputs.empty() || start.inputs[0] < 0) return -1;
  for (int id : start.inputs) {
    if (id >= 0 && !values[id].is_constant) return id;
  }
  return -1;
}

// What growing a chain reads: the planned steps, their values, each value's consumers, the
// values that must stay visible, and the steps earlier chains have taken.
struct ChainSearch {
  const std::vector<PlanStep>& steps;
  const std::vector<ValueState>& values;
  const std::map<int, std::vector<size_t>>& consumers;
  const std::set<int>& kept;
  const std::vector<bool>& in_chain;
};

// Wires a binary step's other operand `operand` into the chain: x is fused input 0, an earlier
// chain value is read from a scratch slot (its defining step saves it there, given a slot the
// first time it is read), and a one-element constant becomes a new fused input.
void AttachOperand(int operand, int x, Chain* chain, FusedStep* fs) {
  if (operand == x) {
    fs->operand = 0;
  } else if (chain->saved.count(operand)) {
    auto slot = chain->slot_of.find(operand);
    if (slot == chain->slot_of.end()) {
      slot = chain->slot_of.emplace(operand, chain->num_slots++).first;
      chain->program[chain->program_index[operand]].save_slot = slot->second;
    }
    fs->operand_slot = slot->second;
    if (--chain->pending[operand] == 0) chain->saved.erase(operand);
  } else {
    fs->operand = static_cast<int>(chain->operand_values.size());
    chain->operand_values.push_back(operand);
  }
}

// The step the chain continues into after step `at` defined `running`; false when it must stop.
// Grow only through a value no step outside the chain needs: a value with several consumers
// continues into the first one that can take it as the running value; the others must join
// later, reading it from a slot, so the value becomes pending and saved.
bool NextChainStep(const ChainSearch& search, int x, int running, size_t at, Chain* chain,
                   size_t* next) {
  auto it = search.consumers.find(running);
  if (search.kept.count(running) || it == search.consumers.end()) return false;
  const std::vector<size_t>& users = it->second;
  *next = users[0];
  if (users.size() > 1) {
    bool found = false;
    for (size_t u : users) {
      FusedStep probe;
      int probe_operand = -1;
      if (u > at && !search.in_chain[u] &&
          AsChainStep(search.steps[u], search.values, x, running, chain->saved, &probe,
                      &probe_operand)) {
        *next = u;
        found = true;
        break;
      }
    }
    if (!found) return false;
    chain->pending[running] = static_cast<int>(users.size()) - 1;
    chain->saved.insert(running);
  }
  return true;
}

// The longest chain from step `first` with input x, cut back to its last point with nothing
// pending.
Chain GrowChain(const ChainSearch& search, size_t first, int x) {
  Chain chain;
  chain.operand_values = {x};
  int running = x;
  size_t at = first;
  for (;;) {
    FusedStep fs;
    int operand = -1;
    if (search.in_chain[at] || !AsChainStep(search.steps[at], search.values, x, running,
                                            chain.saved, &fs, &operand)) {
      break;
    }
    if (operand >= 0) AttachOperand(operand, x, &chain, &fs);
    running = search.steps[at].outputs[0];
    chain.program_index[running] = static_cast<int>(chain.program.size());
    chain.program.push_back(fs);
    chain.members.push_back(at);
    if (chain.NothingPending()) chain.Close();
    if (!NextChainStep(search, x, running, at, &chain, &at)) break;
  }
  chain.CutToClosed();
  return chain;
}

// The FusedElementwise step that runs a closed chain from `start` to `last`: the fused inputs
// (x, then the constants), the last step's outputs.
PlanStep MakeFusedStep(const PlanStep& start, const PlanStep& last, Chain* chain,
                       const std::vector<ValueState>& values) {
  std::vector<FusedStep>& program = chain->program;
  std::vector<int>& operand_values = chain->operand_values;
  PlanStep fused;
  fused.node.name = start.node.name.empty() ? last.node.name : start.node.name;
  fused.node.op_type = "FusedElementwise";
  fused.node.domain = "simplecpp";
  std::string doc = "fused:";
  for (const FusedStep& fs : program) doc += " " + fs.op_type;
  fused.node.doc = doc;
  for (int id : operand_values) {
    fused.node.inputs.push_back(values[id].name);
    fused.inputs.push_back(id);
  }
  fused.node.outputs = last.node.outputs;
  fused.outputs = last.outputs;
  fused.opset = 1;
  fused.since_version = 1;
  elementwise::FusedProgram fused_program;
  fused_program.steps = std::move(program);
  fused_program.num_slots = chain->num_slots;
  fused.op = elementwise::MakeFusedElementwiseOp(std::move(fused_program),
                                                 static_cast<int>(operand_values.size()));
  return fused;
}

// The fused step takes the place of the chain's last step (every input of the chain exists
// before its first step; every consumer of its result comes after its last). Returns the new
// indices of the fused steps.
std::vector<size_t> ReplaceChains(
    std::vector<PlanStep>* steps, const std::vector<bool>& in_chain,
    std::map<size_t, std::pair<std::vector<size_t>, PlanStep>>* chains) {
  std::vector<PlanStep> rewritten;
  std::vector<size_t> fused_indices;
  rewritten.reserve(steps->size());
  for (size_t s = 0; s < steps->size(); ++s) {
    auto it = chains->find(s);
    if (it != chains->end()) {
      fused_indices.push_back(rewritten.size());
      rewritten.push_back(std::move(it->second.second));
    } else if (!in_chain[s]) {
      rewritten.push_back(std::move((*steps)[s]));
    }
  }
  *steps = std::move(rewritten);
  return fused_indices;
}

}  // namespace

std::vector<size_t> FuseElementwiseChains(std::vector<PlanStep>* steps,
                                          const std::vector<ValueState>& values,
                                          const std::vector<int>& keep) {
  const std::map<int, std::vector<size_t>> consumers = ConsumersOfValues(*steps);
  const std::set<int> kept(keep.begin(), keep.end());
  std::vector<bool> in_chain(steps->size(), false);
  const ChainSearch search{*steps, values, consumers, kept, in_chain};
  // Last step of each chain -> (member steps, fused step).
  std::map<size_t, std::pair<std::vector<size_t>, PlanStep>> chains;
  for (size_t first = 0; first < steps->size(); ++first) {
    if (in_chain[first]) continue;
    const int x = ChainInput((*steps)[first], values);
    if (x < 0) continue;
    Chain chain = GrowChain(search, first, x);
    const std::vector<size_t>& members = chain.members;
    if (members.size() < 2) continue;
    for (size_t m : members) in_chain[m] = true;
    PlanStep fused = MakeFusedStep((*steps)[first], (*steps)[members.back()], &chain, values);
    chains.emplace(members.back(), std::make_pair(members, std::move(fused)));
  }
  if (chains.empty()) return {};
  return ReplaceChains(steps, in_chain, &chains);
}

}  // namespace simplecpp::graph
