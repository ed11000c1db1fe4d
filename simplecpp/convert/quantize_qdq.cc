// Static int8 quantization in ONNX Runtime's QDQ format (quantize.h): BatchNormalization folded
// into Conv, Relu after a quantized producer removed, activation ranges from calibration runs of the
// float model (through the public Session API), QuantizeLinear/DequantizeLinear pairs on
// activations (uint8) and DequantizeLinear on int8 weights and int32 biases.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/convert/convert_util.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/convert/quantize_prepare.h"
#include "simplecpp/convert/seeded_inputs.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::convert {

using namespace detail;  // NOLINT: converter helpers

namespace {

struct Range {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
};

struct QParams {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};

// uint8 asymmetric parameters of a range widened to contain 0.
QParams ParamsOf(const Range& r) {
  const float lo = std::min(0.0f, r.lo), hi = std::max(0.0f, r.hi);
  QParams p;
  if (!(hi > lo)) return p;
  p.scale = (hi - lo) / 255.0f;
  const float zp = std::nearbyint(-lo / p.scale);
  p.zero_point = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, zp)));
  return p;
}

// Removes the nodes marked in `drop` (a folding's absorbed nodes), then every initializer that
// nothing reads any more (their parameters, the folded weights' originals).
void RemoveNodes(graph::Graph* g, const std::vector<bool>& drop) {
  std::vector<graph::Node> kept;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(g->nodes[i]));
  }
  g->nodes = std::move(kept);
  std::set<std::string> candidates;
  for (const auto& init : g->initializers) candidates.insert(init.first);
  DropUnusedInitializers(g, candidates);
}

// Folds Add(Conv(x, W, b), c) into Conv(x, W, b + c) where c is a float32 initializer with one
// value per output channel shaped to broadcast along the channel axis ([1, M, 1, 1], [M, 1, 1],
// ...) or one value, and the Conv's output feeds only that Add (paddle2onnx writes a
// ConvTranspose's bias that way): the BatchNormalization after it can then fold too, and the
// bias is quantized with the weights. The same for ConvTranspose.
void FoldBiasAdd(graph::Graph* g, std::set<std::string>* taken) {
  std::map<std::string, int> uses = CountUses(*g);
  std::set<std::string> graph_outputs;
  for (const auto& v : g->outputs) graph_outputs.insert(v.name);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    for (const std::string& o : g->nodes[i].outputs) producer[o] = i;
  }
  std::vector<bool> drop(g->nodes.size(), false);
  for (size_t ai = 0; ai < g->nodes.size(); ++ai) {
    const graph::Node& add = g->nodes[ai];
    if (add.op_type != "Add" || !IsDefaultDomain(add.domain) || add.inputs.size() != 2 ||
        add.outputs.size() != 1) {
      continue;
    }
    for (int k = 0; k < 2; ++k) {
      const std::string& y = add.inputs[static_cast<size_t>(k)];
      const Tensor* c = g->FindInitializer(add.inputs[static_cast<size_t>(1 - k)]);
      auto pit = producer.find(y);
      if (!c || c->dtype() != DType::kFloat32 || pit == producer.end() || uses[y] != 1 ||
          graph_outputs.count(y) || drop[pit->second]) {
        continue;
      }
      graph::Node& conv = g->nodes[pit->second];
      const bool transpose = conv.op_type == "ConvTranspose";
      if ((conv.op_type != "Conv" && !transpose) || !IsDefaultDomain(conv.domain) ||
          conv.inputs.size() < 2 || conv.outputs.size() != 1) {
        continue;
      }
      const Tensor* w = g->FindInitializer(conv.inputs[1]);
      if (!w || w->rank() < 3) continue;
      const int64_t group = IntAttrOr(conv, "group", 1);
      const int64_t m = transpose ? w->dim(1) * group : w->dim(0);
      // c's dims, aligned to the output's [N, M, spatial...]: ones except M at axis 1.
      const int64_t rank = w->rank();
      bool per_channel = c->rank() <= rank && c->rank() >= rank - 1;
      for (int64_t d = 0; d < c->rank() && per_channel; ++d) {
        const int64_t axis = rank - c->rank() + d;
        per_channel = c->dim(d) == (axis == 1 ? m : 1);
      }
      if (!per_channel && c->num_elements() != 1) continue;
      const bool has_b = conv.inputs.size() > 2 && !conv.inputs[2].empty();
      const Tensor* b = has_b ? g->FindInitializer(conv.inputs[2]) : nullptr;
      if (has_b && (!b || b->dtype() != DType::kFloat32 || b->num_elements() != m)) continue;
      std::vector<float> bv = b ? FloatValues(*b) : std::vector<float>(static_cast<size_t>(m), 0.0f);
      const std::vector<float> cv = FloatValues(*c);
      for (int64_t j = 0; j < m; ++j) bv[static_cast<size_t>(j)] += cv[per_channel ? j : 0];
      const std::string bname =
          UniqueName((has_b ? conv.inputs[2] : conv.name + ".bias") + "_add_folded", taken);
      g->initializers.emplace_back(bname, Tensor::FromVector<float>(DType::kFloat32, {m}, bv));
      conv.inputs.resize(3);
      conv.inputs[2] = bname;
      conv.outputs[0] = add.outputs[0];
      drop[ai] = true;
      break;
    }
  }
  RemoveNodes(g, drop);
}

// Folds BatchNormalization(Conv(x, W, b)) into Conv(x, W', b') where the Conv output feeds only
// that BatchNormalization and every parameter is a float32 initializer; the same for
// ConvTranspose (W [C, M/group, k...]: output channel gi * M/group + j scales W[c, j, ...] for
// the input channels c of group gi).
void FoldBatchNorm(graph::Graph* g, std::set<std::string>* taken) {
  std::map<std::string, int> uses = CountUses(*g);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    for (const std::string& o : g->nodes[i].outputs) producer[o] = i;
  }
  std::vector<bool> drop(g->nodes.size(), false);
  for (size_t bi = 0; bi < g->nodes.size(); ++bi) {
    const graph::Node& bn = g->nodes[bi];
    if (bn.op_type != "BatchNormalization" || !IsDefaultDomain(bn.domain) || bn.inputs.size() != 5 ||
        bn.outputs.size() != 1 || IntAttrOr(bn, "training_mode", 0) != 0) {
      continue;
    }
    auto pit = producer.find(bn.inputs[0]);
    if (pit == producer.end() || uses[bn.inputs[0]] != 1) continue;
    graph::Node& conv = g->nodes[pit->second];
    const bool transpose = conv.op_type == "ConvTranspose";
    if ((conv.op_type != "Conv" && !transpose) || !IsDefaultDomain(conv.domain) ||
        conv.inputs.size() < 2) {
      continue;
    }
    const Tensor* w = g->FindInitializer(conv.inputs[1]);
    const Tensor* b = conv.inputs.size() > 2 && !conv.inputs[2].empty() ? g->FindInitializer(conv.inputs[2]) : nullptr;
    const bool has_b = conv.inputs.size() > 2 && !conv.inputs[2].empty();
    const Tensor* prm[4];
    const int64_t group = IntAttrOr(conv, "group", 1);
    bool ok = w && w->dtype() == DType::kFloat32 && w->rank() >= (transpose ? 2 : 1) &&
              (!has_b || b) && group >= 1 && (!transpose || w->dim(0) % group == 0);
    // Output channels: Conv W's dim 0; ConvTranspose W's dim 1 per group.
    const int64_t cout = !ok ? 0 : transpose ? w->dim(1) * group : w->dim(0);
    for (int k = 0; k < 4 && ok; ++k) {
      prm[k] = g->FindInitializer(bn.inputs[static_cast<size_t>(k) + 1]);
      ok = prm[k] && prm[k]->dtype() == DType::kFloat32 && prm[k]->num_elements() == cout;
    }
    if (!ok || (b && (b->dtype() != DType::kFloat32 || b->num_elements() != cout))) continue;
    const float eps = FloatAttrOr(bn, "epsilon", 1e-5f);
    std::vector<float> wv = FloatValues(*w);
    std::vector<float> bv = b ? FloatValues(*b) : std::vector<float>(static_cast<size_t>(cout), 0.0f);
    const float* scale = prm[0]->data<float>();
    const float* shift = prm[1]->data<float>();
    const float* mean = prm[2]->data<float>();
    const float* var = prm[3]->data<float>();
    std::vector<float> factor(static_cast<size_t>(cout));
    for (int64_t c = 0; c < cout; ++c) {
      const float f = scale[c] / std::sqrt(var[c] + eps);
      factor[static_cast<size_t>(c)] = f;
      bv[static_cast<size_t>(c)] = (bv[static_cast<size_t>(c)] - mean[c]) * f + shift[c];
    }
    if (transpose) {
      // W [C, og, k...]: element (c, j, ...) feeds output channel (c / (C / group)) * og + j.
      const int64_t channels = w->dim(0), og = w->dim(1);
      const int64_t ksize = w->num_elements() / std::max<int64_t>(1, channels * og);
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = c / (channels / group) * og;
        for (int64_t j = 0; j < og; ++j) {
          const float f = factor[static_cast<size_t>(base + j)];
          float* row = wv.data() + (c * og + j) * ksize;
          for (int64_t k = 0; k < ksize; ++k) row[k] *= f;
        }
      }
    } else {
      const int64_t inner = w->num_elements() / std::max<int64_t>(1, cout);
      for (int64_t c = 0; c < cout; ++c) {
        const float f = factor[static_cast<size_t>(c)];
        for (int64_t i = 0; i < inner; ++i) wv[static_cast<size_t>(c * inner + i)] *= f;
      }
    }
    const std::string wn = UniqueName(conv.inputs[1] + "_bn_folded", taken);
    const std::string bname = UniqueName((has_b ? conv.inputs[2] : conv.name + ".bias") + "_bn_folded", taken);
    g->initializers.emplace_back(wn, Tensor::FromVector<float>(DType::kFloat32, w->dims(), wv));
    g->initializers.emplace_back(bname, Tensor::FromVector<float>(DType::kFloat32, {cout}, bv));
    conv.inputs.resize(3);
    conv.inputs[1] = wn;
    conv.inputs[2] = bname;
    conv.outputs[0] = bn.outputs[0];
    drop[bi] = true;
  }
  RemoveNodes(g, drop);
}

// Runs the float model over the calibration inputs and returns min/max of every float32 value
// (graph inputs and every node output of the top-level graph).
std::map<std::string, Range> Calibrate(const graph::Model& model,
                                       std::vector<std::map<std::string, Tensor>> sets) {
  graph::Model probe = model;
  std::set<std::string> outputs;
  for (const auto& v : probe.graph.outputs) outputs.insert(v.name);
  for (const graph::Node& n : probe.graph.nodes) {
    for (const std::string& o : n.outputs) {
      if (o.empty() || outputs.count(o)) continue;
      graph::ValueInfo v;
      v.name = o;
      probe.graph.outputs.push_back(v);
      outputs.insert(o);
    }
  }
  const std::string bytes = onnx::WriteModel(probe);
  LoadOptions load;
  load.constant_folding = false;
  const Model loaded = Model::LoadFromBytes(bytes.data(), bytes.size(), load);
  if (sets.empty()) {
    // One deterministic input set: floats uniform in [-1, 1), unknown dims 1.
    std::map<std::string, Tensor> set;
    uint64_t seed = 1;
    for (const ValueDescription& v : loaded.inputs()) {
      Dims dims;
      for (int64_t d : v.dims) dims.push_back(d < 0 ? 1 : d);
      if (v.dtype != DType::kFloat32 || !v.has_shape) {
        throw Error(ErrorCode::kInvalidArgument,
                    "QDQ calibration: input '" + v.name +
                        "' is not a float32 tensor with a known rank; give calibration inputs");
      }
      set[v.name] = SeededFloatTensor(dims, seed++);
    }
    sets.push_back(std::move(set));
  }
  std::map<std::string, Range> ranges;
  auto account = [&](const std::string& name, const Tensor& t) {
    if (t.dtype() != DType::kFloat32) return;
    Range& r = ranges[name];
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      r.lo = std::min(r.lo, p[i]);
      r.hi = std::max(r.hi, p[i]);
    }
  };
  SessionOptions so;
  so.threads = 1;
  Session session(loaded, so);
  for (const auto& set : sets) {
    for (const auto& [name, t] : set) account(name, t);
    for (const auto& [name, t] : session.Run(set)) account(name, t);
  }
  return ranges;
}

bool ProducesQuantizedOutput(const std::string& op) {
  static const std::set<std::string> kOps = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add",
                                             "Mul", "MaxPool",
                                             "AveragePool", "GlobalAveragePool", "Flatten",
                                             "Reshape", "Transpose", "Concat", "Relu"};
  return kOps.count(op) > 0;
}

// Whether `b` is computed from `a` by a chain of elementwise ops with constant other operands
// (v -> Add 3 -> Clip -> the Clip output, of HardSwish spelled v * Clip(v + 3, 0, 6) / 6).
bool DerivedElementwise(const graph::Graph& g, const std::string& a, std::string b) {
  std::map<std::string, size_t> producer;  // built per call: the graph is edited in between
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& o : g.nodes[i].outputs) producer[o] = i;
  }
  static const std::set<std::string> kElementwise = {
      "Add", "Sub", "Mul", "Div", "Clip", "Relu", "Sigmoid", "HardSigmoid", "Tanh",
      "LeakyRelu", "HardSwish", "Neg", "Abs", "Exp", "Erf"};
  for (int depth = 0; depth < 8; ++depth) {
    if (b == a) return true;
    auto it = producer.find(b);
    if (it == producer.end()) return false;
    const graph::Node& p = g.nodes[it->second];
    if (!IsDefaultDomain(p.domain) || !kElementwise.count(p.op_type)) return false;
    std::string next;
    for (const std::string& in : p.inputs) {
      if (in.empty() || g.FindInitializer(in)) continue;
      if (!next.empty()) return false;  // two activation inputs: not a chain
      next = in;
    }
    if (next.empty()) return false;
    b = next;
  }
  return false;
}

// Ops whose output reuses the input's quantization parameters (ORT's "direct 8-bit" ops).
bool SharesInputParams(const std::string& op) {
  return op == "MaxPool" || op == "Flatten" || op == "Reshape" || op == "Transpose";
}

// Rewrites one graph (after BatchNormalization folding and calibration) into QDQ form; each
// method is one phase of QuantizeQdq, in the order Run calls them.
class QdqQuantizer {
 public:
  QdqQuantizer(graph::Graph* g, std::set<std::string>* taken, std::map<std::string, Range> ranges,
               bool per_channel)
      : g_(*g), taken_(*taken), ranges_(std::move(ranges)), per_channel_(per_channel) {}

  void Run() {
    RemoveFusedRelus();
    AssignParams();
    NameQuantizedValues();
    for (const auto& in : g_.inputs) {
      if (params_.count(in.name) && !g_.FindInitializer(in.name)) EmitPair(in.name);
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      graph::Node n = std::move(g_.nodes[i]);
      const std::string x_orig = n.inputs.empty() ? std::string() : n.inputs[0];
      for (std::string& in : n.inputs) {
        auto it = dq_name_.find(in);
        if (it != dq_name_.end()) in = it->second;
      }
      if (is_q_[i] && IsWeighted(n.op_type)) QuantizeWeightAndBias(&n, x_orig);
      std::vector<std::string> quantized_outputs;
      for (std::string& o : n.outputs) {
        if (params_.count(o)) {
          quantized_outputs.push_back(o);
          o = q_input_[o];
        }
      }
      nodes_.push_back(std::move(n));
      for (const std::string& o : quantized_outputs) EmitPair(o);
    }
    g_.nodes = std::move(nodes_);
    DropUnusedInitializers(&g_, replaced_);
  }

 private:
  static bool IsWeighted(const std::string& op) {
    return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
  }

  bool IsFloatActivation(const std::string& v) const {
    return !v.empty() && !g_.FindInitializer(v) && ranges_.count(v) > 0;
  }

  // Which nodes get quantized: weights must be float32 initializers; data inputs must not be.
  bool Quantizable(const graph::Node& n) const {
    if (!IsDefaultDomain(n.domain) || !ProducesQuantizedOutput(n.op_type) || n.inputs.empty() ||
        n.outputs.empty() || !IsFloatActivation(n.outputs[0])) {
      return false;
    }
    if (IsWeighted(n.op_type)) {
      const Tensor* w = n.inputs.size() > 1 ? g_.FindInitializer(n.inputs[1]) : nullptr;
      if (!w || w->dtype() != DType::kFloat32 || !IsFloatActivation(n.inputs[0])) return false;
      if (n.op_type == "Gemm" && (IntAttrOr(n, "transA", 0) != 0 || w->rank() != 2)) return false;
      if (n.op_type == "MatMul" && w->rank() != 2) return false;
      // ConvTranspose: one group, so that W's axis 1 is the output channel (its per-channel
      // scales and the bias [M] line up), as the fusion of the QDQ pattern expects.
      if (n.op_type == "ConvTranspose" && (IntAttrOr(n, "group", 1) != 1 || w->rank() < 3))
        return false;
      return true;
    }
    if (n.op_type == "Add" || n.op_type == "Mul" || n.op_type == "Concat") {
      for (const std::string& in : n.inputs) {
        if (!IsFloatActivation(in)) return false;
      }
      // A product or sum of a value with a function of itself (the Mul of a spelled-out
      // HardSwish or Swish) belongs to the activation: quantizing it would round inside the
      // activation, and would split the chain that runs as one table lookup once its input is
      // quantized (graph/passes/quant_lookup_fusion.h).
      if (n.op_type != "Concat" && n.inputs.size() == 2 &&
          (DerivedElementwise(g_, n.inputs[0], n.inputs[1]) ||
           DerivedElementwise(g_, n.inputs[1], n.inputs[0]))) {
        return false;
      }
      return true;
    }
    return IsFloatActivation(n.inputs[0]);
  }

  // Relu removal: Conv/Gemm/MatMul -> Relu with the Relu the sole consumer.
  void RemoveFusedRelus() {
    const std::map<std::string, int> uses = CountUses(g_);
    std::set<std::string> graph_outputs;
    for (const auto& v : g_.outputs) graph_outputs.insert(v.name);
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      for (const std::string& o : g_.nodes[i].outputs) producer[o] = i;
    }
    std::vector<bool> drop(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const graph::Node& r = g_.nodes[i];
      if (r.op_type != "Relu" || !IsDefaultDomain(r.domain) || r.inputs.size() != 1) continue;
      auto pit = producer.find(r.inputs[0]);
      if (pit == producer.end() || graph_outputs.count(r.inputs[0]) || uses.at(r.inputs[0]) != 1) continue;
      graph::Node& p = g_.nodes[pit->second];
      if (!IsWeighted(p.op_type) || !Quantizable(p) || !IsFloatActivation(r.outputs[0])) continue;
      p.outputs[0] = r.outputs[0];
      drop[i] = true;
    }
    std::vector<graph::Node> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      if (!drop[i]) kept.push_back(std::move(g_.nodes[i]));
    }
    g_.nodes = std::move(kept);
  }

  // Quantization parameters of every activation to quantize, in topological order.
  void AssignParams() {
    is_q_.assign(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const graph::Node& n = g_.nodes[i];
      if (!Quantizable(n)) continue;
      // MaxPool / Flatten / Reshape / Transpose only carry an int8 value along: with nothing
      // quantized coming in they stay float (ORT's default, ForceQuantizeNoInputCheck off). This
      // keeps Q/DQ off the reshapes around a float Softmax.
      if (SharesInputParams(n.op_type) && !params_.count(n.inputs[0])) continue;
      is_q_[i] = true;
      const size_t data_inputs = IsWeighted(n.op_type) || n.op_type == "Reshape" ? 1 : n.inputs.size();
      for (size_t k = 0; k < data_inputs; ++k) {
        if (!params_.count(n.inputs[k])) params_[n.inputs[k]] = ParamsOf(ranges_.at(n.inputs[k]));
      }
      params_[n.outputs[0]] =
          SharesInputParams(n.op_type) ? params_.at(n.inputs[0]) : ParamsOf(ranges_.at(n.outputs[0]));
    }
  }

  // What consumers of each quantized value read, and what its QuantizeLinear reads: a graph
  // output keeps its name (its DequantizeLinear writes it).
  void NameQuantizedValues() {
    std::set<std::string> graph_outputs;
    for (const auto& v : g_.outputs) graph_outputs.insert(v.name);
    for (const auto& [v, p] : params_) {
      if (graph_outputs.count(v)) {
        dq_name_[v] = v;
        q_input_[v] = UniqueName(v + "_QuantizeLinear_Input", &taken_);
      } else {
        dq_name_[v] = UniqueName(v + "_DequantizeLinear_Output", &taken_);
        q_input_[v] = v;
      }
    }
  }

  // A Q/DQ pair right after a quantized value's producer.
  void EmitPair(const std::string& v) {
    const QParams p = params_.at(v);
    const std::string s = UniqueName(v + "_scale", &taken_), z = UniqueName(v + "_zero_point", &taken_);
    g_.initializers.emplace_back(s, Tensor::FromVector<float>(DType::kFloat32, {}, {p.scale}));
    g_.initializers.emplace_back(z, Tensor::FromVector<uint8_t>(DType::kUInt8, {}, {p.zero_point}));
    const std::string q = UniqueName(v + "_QuantizeLinear_Output", &taken_);
    nodes_.push_back(MakeNode("QuantizeLinear", UniqueName(v + "_QuantizeLinear", &taken_), {q_input_[v], s, z}, {q}));
    nodes_.push_back(MakeNode("DequantizeLinear", UniqueName(v + "_DequantizeLinear", &taken_), {q, s, z}, {dq_name_[v]}));
  }

  // The weight (int8 symmetric, per channel or per tensor) and the bias (int32 at x_scale *
  // w_scale) of a quantized Conv / Gemm / MatMul, through DequantizeLinear nodes emitted right
  // before it.
  void QuantizeWeightAndBias(graph::Node* node, const std::string& x_orig) {
    graph::Node& n = *node;
    const std::string w_name = n.inputs[1];
    // The output-channel axis of the weight: Conv [M, C/g, ...] axis 0; ConvTranspose [C, M, ...]
    // (one group) axis 1; Gemm B [N,K] (transB) axis 0, [K,N] axis 1; MatMul [K,N] axis 1.
    int axis = 0;
    if (n.op_type == "MatMul" || n.op_type == "ConvTranspose" ||
        (n.op_type == "Gemm" && IntAttrOr(n, "transB", 0) == 0)) {
      axis = 1;
    }
    // The int32 bias (Conv bias [M]; Gemm C of [N]) has scale x_scale * w_scale. A weight scale
    // so small that |bias| / scale passes int32 (a nearly dead channel with a large folded BN
    // shift) is raised until the bias fits, as ORT's quantizer does.
    const int64_t channels = g_.FindInitializer(w_name)->dim(axis);
    const std::string b_name = n.inputs.size() > 2 ? n.inputs[2] : std::string();
    const Tensor* b = b_name.empty() ? nullptr : g_.FindInitializer(b_name);
    const bool quantize_bias =
        b && b->dtype() == DType::kFloat32 && b->rank() == 1 && b->dim(0) == channels &&
        (n.op_type != "Gemm" ||
         (FloatAttrOr(n, "beta", 1.0f) == 1.0f && FloatAttrOr(n, "alpha", 1.0f) == 1.0f));
    const std::vector<float> bias = quantize_bias ? FloatValues(*b) : std::vector<float>();
    const float xs = quantize_bias ? params_.at(x_orig).scale : 1.0f;
    auto wit = quantized_weights_.find({w_name, axis});
    const std::vector<float> base =
        wit != quantized_weights_.end()
            ? wit->second.scales
            : SymmetricScales(*g_.FindInitializer(w_name), per_channel_ ? axis : -1);
    std::vector<float> wscales = base;
    for (size_t c = 0; c < bias.size(); ++c) {
      const float need =
          static_cast<float>(std::fabs(static_cast<double>(bias[c])) / (xs * kMaxBiasCode));
      float& sc = wscales[per_channel_ ? c : 0];
      if (sc < need) sc = std::nextafter(need, INFINITY);
    }
    // A weight read by several nodes along the same axis is quantized once; its DQ output,
    // emitted before the first reader, serves the later ones (a node that needed raised scales
    // gets its own copy).
    std::string w_dq;
    if (wit != quantized_weights_.end() && wscales == base) {
      w_dq = wit->second.dq_output;
    } else {
      w_dq = EmitWeight(w_name, axis, channels, wscales);
      if (wscales == base && wit == quantized_weights_.end()) {
        quantized_weights_.emplace(std::make_pair(w_name, axis), QuantizedWeight{w_dq, wscales});
      }
    }
    replaced_.insert(w_name);
    n.inputs[1] = w_dq;
    if (quantize_bias) {
      n.inputs[2] = EmitBias(b_name, bias, xs, wscales, channels);
      replaced_.insert(b_name);
    }
  }

  // The weight quantized with `wscales` (zero points 0) and its DequantizeLinear; returns the
  // DequantizeLinear's output.
  std::string EmitWeight(const std::string& w_name, int axis, int64_t channels,
                         const std::vector<float>& wscales) {
    const Tensor w = *g_.FindInitializer(w_name);  // a handle: initializers grow below
    const std::string qn = UniqueName(w_name + "_quantized", &taken_);
    const std::string sn = UniqueName(w_name + "_scale", &taken_);
    const std::string zn = UniqueName(w_name + "_zero_point", &taken_);
    const std::string w_dq = UniqueName(w_name + "_DequantizeLinear_Output", &taken_);
    g_.initializers.emplace_back(qn, QuantizeWithScales(w, per_channel_ ? axis : -1, wscales));
    g_.initializers.emplace_back(sn, FloatVector(wscales, !per_channel_));
    g_.initializers.emplace_back(
        zn, per_channel_ ? Tensor::FromVector<int8_t>(
                               DType::kInt8, {channels},
                               std::vector<int8_t>(static_cast<size_t>(channels), 0))
                         : Tensor::FromVector<int8_t>(DType::kInt8, {}, {0}));
    std::vector<graph::Attribute> attrs;
    if (per_channel_) attrs.push_back(IntAttr("axis", axis));
    nodes_.push_back(MakeNode("DequantizeLinear", UniqueName(w_name + "_DequantizeLinear", &taken_),
                              {qn, sn, zn}, {w_dq}, attrs));
    return w_dq;
  }

  // The bias as int32 at scale xs * wscales[c] (zero point 0) and its DequantizeLinear; returns
  // the DequantizeLinear's output.
  std::string EmitBias(const std::string& b_name, const std::vector<float>& bias, float xs,
                       const std::vector<float>& wscales, int64_t channels) {
    std::vector<float> bs(static_cast<size_t>(channels));
    Tensor bq(DType::kInt32, {channels});
    for (int64_t c = 0; c < channels; ++c) {
      bs[static_cast<size_t>(c)] = xs * wscales[per_channel_ ? static_cast<size_t>(c) : 0];
      const double v = std::nearbyint(static_cast<double>(bias[static_cast<size_t>(c)]) /
                                      bs[static_cast<size_t>(c)]);
      bq.data<int32_t>()[c] = static_cast<int32_t>(std::min(kMaxBiasCode, std::max(-kMaxBiasCode, v)));
    }
    const std::string bqn = UniqueName(b_name + "_quantized", &taken_);
    const std::string bsn = UniqueName(b_name + "_quantized_scale", &taken_);
    const std::string bzn = UniqueName(b_name + "_quantized_zero_point", &taken_);
    const std::string bdn = UniqueName(b_name + "_DequantizeLinear_Output", &taken_);
    g_.initializers.emplace_back(bqn, std::move(bq));
    if (per_channel_) {
      g_.initializers.emplace_back(bsn, Tensor::FromVector<float>(DType::kFloat32, {channels}, bs));
      g_.initializers.emplace_back(
          bzn, Tensor::FromVector<int32_t>(DType::kInt32, {channels},
                                           std::vector<int32_t>(static_cast<size_t>(channels), 0)));
    } else {
      g_.initializers.emplace_back(bsn, Tensor::FromVector<float>(DType::kFloat32, {}, {bs[0]}));
      g_.initializers.emplace_back(bzn, Tensor::FromVector<int32_t>(DType::kInt32, {}, {0}));
    }
    std::vector<graph::Attribute> battrs;
    if (per_channel_) battrs.push_back(IntAttr("axis", 0));
    nodes_.push_back(MakeNode("DequantizeLinear", UniqueName(b_name + "_DequantizeLinear", &taken_),
                              {bqn, bsn, bzn}, {bdn}, battrs));
    return bdn;
  }

  static constexpr double kMaxBiasCode = 2147483647.0;
  struct QuantizedWeight {
    std::string dq_output;
    std::vector<float> scales;
  };

  graph::Graph& g_;
  std::set<std::string>& taken_;
  const std::map<std::string, Range> ranges_;
  const bool per_channel_;
  std::map<std::string, QParams> params_;
  std::vector<bool> is_q_;
  std::map<std::string, std::string> dq_name_;  // quantized value -> what consumers read
  std::map<std::string, std::string> q_input_;  // quantized value -> what its Q node reads
  std::vector<graph::Node> nodes_;              // the rewritten node list
  std::set<std::string> replaced_;              // float weights and biases now quantized
  std::map<std::pair<std::string, int>, QuantizedWeight> quantized_weights_;  // by (weight, axis)
};

}  // namespace

graph::Model QuantizeQdq(const graph::Model& model, const QdqOptions& options,
                         QuantizeReport* report) {
  // QuantizeLinear needs opset 10; per-channel weights need DequantizeLinear's axis (opset 13).
  // A model the upgrade cannot take to 13 gets per-tensor weights at opset 11 instead.
  QuantizeReport local;
  if (!report) report = &local;
  graph::Model out;
  try {
    out = options.per_channel ? PrepareForQuantization(model, 13, 13, report)
                              : PrepareForQuantization(model, 10, 11, report);
  } catch (const Error& e) {
    if (!options.per_channel || e.code() != ErrorCode::kUnsupported) throw;
    out = PrepareForQuantization(model, 10, 11, report);
    report->note = std::string("weights per tensor: per-channel needs opset 13 and ") + e.what();
  }
  const int64_t opset = out.OpsetVersion("");
  if (opset < 10) {
    throw Error(ErrorCode::kUnsupported,
                "QDQ quantization needs ai.onnx opset >= 10 (QuantizeLinear); the "
                "model imports opset " +
                    std::to_string(opset));
  }
  const bool per_channel = options.per_channel && opset >= 13;  // DequantizeLinear axis: opset 13
  std::set<std::string> taken = AllNames(out.graph);
  FoldBiasAdd(&out.graph, &taken);
  FoldBatchNorm(&out.graph, &taken);
  std::map<std::string, Range> ranges = Calibrate(out, options.calibration);
  QdqQuantizer(&out.graph, &taken, std::move(ranges), per_channel).Run();
  return out;
}

}  // namespace simplecpp::convert
