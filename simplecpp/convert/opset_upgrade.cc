// The opset upgrade driver (opset_upgrade.h): a table of the ai.onnx schema changes between
// opsets 8 and 21, each marked "an older node stays valid" or paired with the adapter that
// rewrites it (opset_adapters.h), walked for every node of the model. The op registry's version
// lists serve as a second source: a version the registry knows and the table does not is refused
// rather than guessed at.
#include "simplecpp/convert/opset_upgrade.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/executor.h"
#include "graph/registry.h"
#include "simplecpp/convert/convert_util.h"
#include "simplecpp/convert/opset_adapters.h"
#include "simplecpp/error.h"

namespace simplecpp::convert {

using namespace detail;  // NOLINT: converter helpers

namespace {

constexpr int64_t kOldestSource =
    7;  // below: broadcast attributes, consumed_inputs, experimental ops
constexpr int64_t kNewestTarget = 21;

struct Change {
  OpsetChange change;
  Adapter adapter;  // nullptr when change.rewrites is false
};

// Every ai.onnx op that existed before `version` and whose schema changed at it, opsets 8 to 21.
// Ops new at a version need no entry: no node of an older model can use them.
const std::vector<Change>& ChangeTable() {
  static const std::vector<Change> kTable = [] {
    std::vector<Change> t;
    auto same = [&t](int version, std::initializer_list<const char*> ops) {
      for (const char* op : ops) t.push_back({{op, version, false}, nullptr});
    };
    auto rewrite = [&t](int version, const char* op, Adapter a) {
      t.push_back({{op, version, true}, a});
    };
    // Op lists stay packed (clang-format would put one name per line).
    // clang-format off
    // 8: multidirectional broadcasting for the variadic ops; MaxPool gains storage_order/Indices.
    same(8, {"Max", "Min", "Sum", "Mean", "MaxPool"});
    // 9: type widening, except the ones rewritten.
    same(9, {"Cast", "Constant", "Flatten", "Gemm", "Greater", "Less", "MatMul", "PRelu"});
    rewrite(9, "BatchNormalization", BatchNormDropSpatial);
    rewrite(9, "Upsample", UpsampleToResize);
    rewrite(9, "Scan", NoAdapter);  // Scan-9 drops Scan-8's batch axis and sequence_lens
    rewrite(9, "MeanVarianceNormalization", NoAdapter);
    // 10: ceil_mode / dilations default to the old behaviour; Slice and TopK take inputs.
    same(10, {"AveragePool", "MaxPool", "ThresholdedRelu"});
    rewrite(10, "Dropout", DropoutDropMask);
    rewrite(10, "Slice", SliceAttributesToInputs);
    rewrite(10, "TopK", TopKAttributeToInput);
    rewrite(10, "Upsample", UpsampleToResize);  // deprecated at 10: Resize replaces it
    // 11: negative axes / indices, optional Gemm C, DepthToSpace mode (DCR default), sparse
    // Constant; Clip and Pad take inputs, Resize gains roi and coordinate modes.
    same(11, {"ArgMax", "ArgMin", "AveragePool", "Compress", "Concat", "Constant", "Conv",
              "ConvTranspose", "DepthToSpace", "Equal", "Flatten", "Gather", "Gemm", "Hardmax",
              "If", "LogSoftmax", "Loop", "LpPool", "MaxPool", "MaxUnpool", "NonMaxSuppression",
              "OneHot", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
              "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Scan",
              "Scatter", "Slice", "Softmax", "Split", "Squeeze", "TopK", "Unsqueeze"});
    rewrite(11, "Clip", ClipAttributesToInputs);
    rewrite(11, "Pad", PadAttributesToInputs);
    rewrite(11, "Resize", ResizeAddRoi);
    // 12: integer types, select_last_index / batch_dims defaulting to the old behaviour; Dropout's
    // ratio becomes an input.
    same(12, {"ArgMax", "ArgMin", "Clip", "Constant", "GatherND", "Max", "MaxPool", "Min", "Pow",
              "ReduceMax", "ReduceMin"});
    rewrite(12, "Dropout", DropoutRatioToInput);
    // 13: bfloat16 almost everywhere and DequantizeLinear / QuantizeLinear axes; axes and split
    // become inputs; the Softmax family stops coercing to 2-D; Resize drops tf_half_pixel_for_nn.
    same(13, {"Abs", "Add", "ArgMax", "ArgMin", "Cast", "Ceil", "Clip", "Concat", "Constant",
              "DepthToSpace", "DequantizeLinear", "Div", "Dropout", "Equal", "Erf", "Exp", "Expand",
              "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gemm", "Greater",
              "Identity", "If", "IsNaN", "LRN", "Less", "Log", "Loop", "MatMul", "Max", "Mean",
              "MeanVarianceNormalization", "Min", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss",
              "NonZero", "Pad", "Pow", "QuantizeLinear", "Reciprocal", "ReduceL1", "ReduceL2",
              "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
              "ReduceProd", "ReduceSumSquare", "Relu", "Reshape", "ScatterElements", "ScatterND",
              "Shape", "Sigmoid", "Sign", "Size", "Slice", "SoftmaxCrossEntropyLoss",
              "SpaceToDepth", "Sqrt", "Sub", "Sum", "Tanh", "Tile", "Transpose"});
    rewrite(13, "Squeeze", AxesAttributeToInput);
    rewrite(13, "Unsqueeze", AxesAttributeToInput);
    rewrite(13, "ReduceSum", AxesAttributeToInput);
    rewrite(13, "Split", SplitAttributeToInput);
    rewrite(13, "Softmax", SoftmaxCoercedToAxis);
    rewrite(13, "LogSoftmax", SoftmaxCoercedToAxis);
    rewrite(13, "Hardmax", SoftmaxCoercedToAxis);
    rewrite(13, "Resize", ResizeCheckMode13);
    // 14-17: types (bfloat16, integer Relu), Reshape's allowzero, the RNN family's layout and
    // BatchNormalization's training_mode default to the old behaviour; RoiAlign gains a coordinate
    // mode whose default differs from what RoiAlign-10 did.
    same(14, {"Add", "BatchNormalization", "CumSum", "Div", "GRU", "Identity", "LSTM", "Mul", "RNN",
              "Relu", "Reshape", "Sub"});
    same(15, {"BatchNormalization", "Pow", "Shape"});
    same(16, {"GreaterOrEqual", "Identity", "If", "LeakyRelu", "LessOrEqual", "Loop", "PRelu",
              "Scan", "ScatterElements", "ScatterND", "Where"});
    rewrite(16, "RoiAlign", RoiAlignKeepOutputHalfPixel);
    // 18: the Reduce family's axes become an input (ReduceSum's did at 13); new optional
    // attributes and inputs (Pad axes, Resize antialias / axes, LpPool ceil_mode) default to the old
    // behaviour; Split wants num_outputs when it has no split input.
    same(18, {"LpPool", "OptionalGetElement", "OptionalHasElement", "Pad", "Resize",
              "ScatterElements", "ScatterND"});
    rewrite(18, "ReduceL1", AxesAttributeToInput);
    rewrite(18, "ReduceL2", AxesAttributeToInput);
    rewrite(18, "ReduceLogSum", AxesAttributeToInput);
    rewrite(18, "ReduceLogSumExp", AxesAttributeToInput);
    rewrite(18, "ReduceMax", AxesAttributeToInput);
    rewrite(18, "ReduceMean", AxesAttributeToInput);
    rewrite(18, "ReduceMin", AxesAttributeToInput);
    rewrite(18, "ReduceProd", AxesAttributeToInput);
    rewrite(18, "ReduceSumSquare", AxesAttributeToInput);
    rewrite(18, "Split", SplitAddNumOutputs);
    // 19-21: float8 / int4 types, AveragePool dilations, Pad's wrap mode, Resize's
    // half_pixel_symmetric, DequantizeLinear's block_size: widenings. DFT's axis becomes an input,
    // GridSample renames its modes and GroupNormalization's scale and bias go from per group to
    // per channel.
    same(19, {"AveragePool", "Cast", "CastLike", "Constant", "DequantizeLinear", "Equal",
              "Identity", "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Resize", "Scan",
              "Shape", "Size"});
    same(20, {"ConstantOfShape", "IsInf", "IsNaN", "ReduceMax", "ReduceMin"});
    rewrite(20, "GridSample", GridSampleRenameModes);
    rewrite(20, "DFT", NoAdapter);
    same(21, {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten",
              "Identity", "If", "Loop", "Pad", "QLinearMatMul", "QuantizeLinear", "Reshape", "Scan",
              "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"});
    rewrite(21, "GroupNormalization", NoAdapter);
    // clang-format on
    return t;
  }();
  return kTable;
}

// The registry's version lists of ai.onnx ops (the versions this build implements).
const std::map<std::string, std::vector<int>>& RegistryVersions() {
  static const std::map<std::string, std::vector<int>> kVersions = [] {
    std::map<std::string, std::vector<int>> m;
    for (const auto& [domain, op, versions] : graph::OpRegistry::Global().List()) {
      if (IsDefaultDomain(domain)) m[op] = versions;
    }
    return m;
  }();
  return kVersions;
}

struct InferredType {
  DType dtype = DType::kUndefined;
  int64_t rank = -1;  // -1: not known at load
};

// Element types (and ranks, where shapes are static) of the top-level graph's values as the
// importer infers them; empty when it cannot plan the model (then adapters assume float32, the
// only type most of them meet, and an unknown rank).
std::map<std::string, InferredType> InferTypes(const graph::Model& m) {
  std::map<std::string, InferredType> out;
  try {
    graph::OpsetMap opsets;
    for (const graph::OpsetImport& o : m.opsets) {
      opsets[graph::CanonicalDomain(o.domain)] = o.version;
    }
    graph::PlanOptions po;  // constant folding on: shapes that follow from constants become static
    po.fuse_quantized = false;
    po.fuse_elementwise = false;
    const std::shared_ptr<const graph::Plan> plan = graph::Plan::Build(m.graph, opsets, po);
    for (const graph::ValueState& v : plan->values()) {
      out[v.name] =
          InferredType{v.dtype, v.static_shape ? static_cast<int64_t>(v.dims.size()) : -1};
    }
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

class Upgrader {
 public:
  Upgrader(graph::Model* model, int64_t from, int64_t to) : model_(model), from_(from), to_(to) {
    taken_ = AllNames(model->graph);
  }

  int Run() {
    // Dtypes come from the model as it is, before any node changes form under the old opset.
    for (const graph::Node& n : model_->graph.nodes) {
      if (IsDefaultDomain(n.domain) && NeedsTypes(n.op_type)) {
        types_ = InferTypes(*model_);
        break;
      }
    }
    UpgradeGraph(&model_->graph, /*top=*/true);
    return rewritten_;
  }

 private:
  void UpgradeGraph(graph::Graph* g, bool top) {
    for (const std::string& name : AllNames(*g)) taken_.insert(name);
    AdapterContext c;
    c.graph = g;
    c.taken = &taken_;
    for (const auto& [name, count] : CountUses(*g)) c.used.insert(name);
    c.dtype_of = [this, top](const std::string& v) {
      auto it = top ? types_.find(v) : types_.end();
      return it != types_.end() && it->second.dtype != DType::kUndefined ? it->second.dtype
                                                                         : DType::kFloat32;
    };
    c.rank_of = [this, top](const std::string& v) {
      auto it = top ? types_.find(v) : types_.end();
      return it != types_.end() ? it->second.rank : int64_t{-1};
    };
    std::vector<graph::Node> nodes;
    for (graph::Node& n : g->nodes) {
      for (graph::Attribute& a : n.attributes) {
        if (a.kind == graph::AttrKind::kGraph && a.g) {
          auto sub = std::make_shared<graph::Graph>(*a.g);
          UpgradeGraph(sub.get(), false);
          a.g = sub;
        }
        for (auto& sg : a.graphs) {
          auto sub = std::make_shared<graph::Graph>(*sg);
          UpgradeGraph(sub.get(), false);
          sg = sub;
        }
      }
      if (IsDefaultDomain(n.domain)) UpgradeNode(&n, &c);
      for (graph::Node& b : c.before) nodes.push_back(std::move(b));
      nodes.push_back(std::move(n));
      for (graph::Node& a : c.after) nodes.push_back(std::move(a));
      c.before.clear();
      c.after.clear();
    }
    g->nodes = std::move(nodes);
  }

  // Ops whose adapters need element types (Clip bounds, Pad value) or ranks (Softmax family).
  static bool NeedsTypes(const std::string& op) {
    return op == "Clip" || op == "Pad" || op == "Softmax" || op == "LogSoftmax" || op == "Hardmax";
  }

  void UpgradeNode(graph::Node* n, AdapterContext* c) {
    const std::string op = n->op_type;
    CheckRegistryAgrees(*n);
    std::vector<const Change*> changes;
    for (const Change& ch : ChangeTable()) {
      if (op == ch.change.op_type && ch.change.version > from_ && ch.change.version <= to_) {
        changes.push_back(&ch);
      }
    }
    std::sort(changes.begin(), changes.end(), [](const Change* a, const Change* b) {
      return a->change.version < b->change.version;
    });
    std::set<Adapter> applied;
    bool changed = false;
    for (const Change* ch : changes) {
      if (!ch->adapter || applied.count(ch->adapter)) continue;
      if (ch->adapter == NoAdapter) {
        throw Error(ErrorCode::kUnsupported, "opset upgrade " + std::to_string(from_) + " -> " +
                                                 std::to_string(to_) + ": " + n->Describe() + ": " +
                                                 op + " changed form at opset " +
                                                 std::to_string(ch->change.version) +
                                                 " and this upgrade has no adapter for it");
      }
      applied.insert(ch->adapter);
      changed = ch->adapter(n, c) || changed;
      if (n->op_type != op) break;  // became another op (Upsample -> Resize-11): done
    }
    rewritten_ += changed ? 1 : 0;
  }

  // A version in (from, to] that the registry lists for an op that existed at `from`, but the
  // table does not know: the table is missing a change, so refuse rather than keep the node as is.
  void CheckRegistryAgrees(const graph::Node& n) const {
    auto it = RegistryVersions().find(n.op_type);
    if (it == RegistryVersions().end() || it->second.empty() || it->second.front() > from_) return;
    for (int v : it->second) {
      if (v <= from_ || v > to_) continue;
      bool known = false;
      for (const Change& ch : ChangeTable()) {
        known = known || (n.op_type == ch.change.op_type && ch.change.version == v);
      }
      if (!known) {
        throw Error(ErrorCode::kUnsupported,
                    "opset upgrade " + std::to_string(from_) + " -> " + std::to_string(to_) + ": " +
                        n.Describe() + ": " + n.op_type + " changed at opset " + std::to_string(v) +
                        " and this upgrade does not know how");
      }
    }
  }

  graph::Model* model_;
  int64_t from_, to_;
  std::set<std::string> taken_;
  std::map<std::string, InferredType> types_;
  int rewritten_ = 0;
};

// The IR version that goes with an opset (ONNX's versioning table).
int64_t IrVersionFor(int64_t opset) {
  return opset <= 8    ? 3
         : opset <= 9  ? 4
         : opset <= 10 ? 5
         : opset <= 11 ? 6
         : opset <= 14 ? 7
         : opset <= 18 ? 8
         : opset <= 20 ? 9
                       : 10;
}

}  // namespace

const std::vector<OpsetChange>& OpsetChanges() {
  static const std::vector<OpsetChange> kChanges = [] {
    std::vector<OpsetChange> out;
    for (const Change& c : ChangeTable()) out.push_back(c.change);
    return out;
  }();
  return kChanges;
}

OpsetUpgrade UpgradeOpset(graph::Model* model, int64_t target) {
  OpsetUpgrade result;
  result.from = result.to = model->OpsetVersion("");
  if (result.from == 0 || result.from >= target) return result;
  if (target > kNewestTarget) {
    throw Error(ErrorCode::kUnsupported,
                "opset upgrade: targets above opset " + std::to_string(kNewestTarget) +
                    " are not implemented (asked for " + std::to_string(target) + ")");
  }
  if (result.from < kOldestSource) {
    throw Error(ErrorCode::kUnsupported,
                "opset upgrade: the model imports ai.onnx opset " + std::to_string(result.from) +
                    "; upgrading is implemented from opset " + std::to_string(kOldestSource) +
                    " (older ops carry broadcast / consumed_inputs attributes this upgrade does "
                    "not rewrite)");
  }
  // On a copy (tensors are shared, not duplicated): a refused node leaves the model untouched.
  graph::Model work = *model;
  Upgrader upgrader(&work, result.from, target);
  result.rewritten = upgrader.Run();
  for (graph::OpsetImport& o : work.opsets) {
    if (IsDefaultDomain(o.domain)) o.version = target;
  }
  work.ir_version = std::max(work.ir_version, IrVersionFor(target));
  *model = std::move(work);
  result.to = target;
  return result;
}

}  // namespace simplecpp::convert
