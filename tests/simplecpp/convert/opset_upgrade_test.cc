// The opset upgrade (simplecpp/convert/opset_upgrade.cc, opset_adapters.cc): small old-opset
// models rewritten to opset 11 give the same outputs as before; the change table agrees with the
// op registry's version lists; ops without an adapter are refused by name.
#include "simplecpp/convert/opset_upgrade.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "graph/registry.h"
#include "simplecpp/api/builtin_builder.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using builtin::detail::AttrFloat;
using builtin::detail::AttrInt;
using builtin::detail::AttrInts;
using builtin::detail::AttrString;
using builtin::detail::Builder;
using builtin::detail::NewModel;
using builtin::detail::TensorValue;
using convert_test::CountOp;
using convert_test::MaxAbsDiff;
using convert_test::RunModel;

TEST_CASE("opset upgrade: the change table covers every version the op registry lists in 8..21") {
  std::map<std::string, std::vector<int>> table;
  for (const convert::OpsetChange& c : convert::OpsetChanges())
    table[c.op_type].push_back(c.version);
  for (const auto& [domain, op_name, versions] : graph::OpRegistry::Global().List()) {
    if (!domain.empty() && domain != "ai.onnx") continue;
    // A copy: clang before 16 cannot capture a structured binding in CAPTURE's lambda.
    const std::string op = op_name;
    for (int v : versions) {
      // Only changes of ops that existed before v: a node of an older model can be one of those.
      if (v < 8 || v > 21 || versions.front() >= v) continue;
      bool known = false;
      for (int t : table[op]) known = known || t == v;
      CAPTURE(op);
      CAPTURE(v);
      CHECK(known);
    }
  }
}

// An opset-8 model with one node of each rewritten kind: BatchNormalization (spatial=1), Pad-2,
// Clip-6, Upsample-7 (scales attribute, linear), Slice-1, Dropout-7 (unused mask), TopK-1.
graph::Model OldOpsModel() {
  graph::Model m = NewModel("old_ops", "opset-8 model for the upgrade test", 8);
  graph::Graph& g = m.graph;
  Builder b(&g, 7);
  g.inputs.push_back(TensorValue("x", {1, 2, 3, 3}));
  const std::string bn =
      b.Op("BatchNormalization", "bn",
           {"x", b.WeightRange("bn.scale", {2}, 0.5f, 1.5f), b.Weight("bn.bias", {2}, 0.5f),
            b.Weight("bn.mean", {2}, 0.5f), b.WeightRange("bn.var", {2}, 0.5f, 1.5f)},
           {AttrInt("spatial", 1)});
  const std::string pad = b.Op(
      "Pad", "pad", {bn}, {AttrInts("pads", {0, 0, 1, 1, 0, 0, 1, 1}), AttrFloat("value", 0.25f)});
  const std::string clip =
      b.Op("Clip", "clip", {pad}, {AttrFloat("min", -0.75f), AttrFloat("max", 0.75f)});
  graph::Attribute scales;
  scales.name = "scales";
  scales.kind = graph::AttrKind::kFloats;
  scales.floats = {1.0f, 1.0f, 2.0f, 2.0f};
  const std::string up = b.Op("Upsample", "up", {clip}, {scales, AttrString("mode", "linear")});
  const std::string up2 = b.Op("Upsample", "up2", {up}, {[] {
                                 graph::Attribute a;
                                 a.name = "scales";
                                 a.kind = graph::AttrKind::kFloats;
                                 a.floats = {1.0f, 1.0f, 1.0f, 2.0f};
                                 return a;
                               }()});  // nearest, the default mode
  const std::string slice =
      b.Op("Slice", "slice", {up2},
           {AttrInts("starts", {1, 0}), AttrInts("ends", {9, 100}), AttrInts("axes", {2, 3})});
  const std::string drop =
      b.OpN("Dropout", "drop", {slice}, {"drop", "drop_mask"}, {AttrFloat("ratio", 0.3f)})[0];
  b.OpN("TopK", "topk", {drop}, {"values", "indices"}, {AttrInt("k", 3), AttrInt("axis", -1)});
  g.outputs.push_back(TensorValue("values", {1, 2, 8, 3}));
  g.outputs.push_back(TensorValue("indices", {1, 2, 8, 3}, DType::kInt64));
  return m;
}

TEST_CASE("opset upgrade 8 -> 11: every adapter, outputs unchanged") {
  const graph::Model old = OldOpsModel();
  graph::Model m = old;
  const convert::OpsetUpgrade u = convert::UpgradeOpset(&m, 11);
  CHECK(u.from == 8);
  CHECK(u.to == 11);
  CHECK(u.rewritten == 8);  // bn, pad, clip, up, up2, slice, drop, topk
  CHECK(m.OpsetVersion("") == 11);
  CHECK(m.ir_version >= 6);
  CHECK(CountOp(m.graph, "Upsample") == 0);
  CHECK(CountOp(m.graph, "Resize") == 2);
  for (const graph::Node& n : m.graph.nodes) {
    CAPTURE(n.name);
    if (n.op_type == "Resize") {
      REQUIRE(n.inputs.size() == 3);
      CHECK(m.graph.FindInitializer(n.inputs[1])->num_elements() == 0);  // empty roi
      CHECK(n.FindAttribute("coordinate_transformation_mode")->s == "asymmetric");
    }
    if (n.op_type == "Clip") {
      REQUIRE(n.inputs.size() == 3);
      CHECK(m.graph.FindInitializer(n.inputs[1])->data<float>()[0] == -0.75f);
      CHECK(n.attributes.empty());
    }
    if (n.op_type == "Slice") CHECK(n.inputs.size() == 4);
    if (n.op_type == "Pad") CHECK(n.inputs.size() == 3);
    if (n.op_type == "TopK") CHECK(n.inputs.size() == 2);
    if (n.op_type == "Dropout") CHECK(n.outputs.size() == 1);
    if (n.op_type == "BatchNormalization") CHECK(n.FindAttribute("spatial") == nullptr);
  }
  const Tensor x = builtin::RandomFloatTensor({1, 2, 3, 3}, 3, -2.0f, 2.0f);
  const auto want = RunModel(old, {{"x", x}});
  const auto got = RunModel(m, {{"x", x}});
  CHECK(MaxAbsDiff(got.at("values"), want.at("values")) == 0.0);
  CHECK(got.at("indices").BitwiseEquals(want.at("indices")));

  // Already new enough: nothing happens.
  graph::Model again = m;
  const convert::OpsetUpgrade none = convert::UpgradeOpset(&again, 11);
  CHECK(none.from == 11);
  CHECK(none.to == 11);
  CHECK(none.rewritten == 0);
}

TEST_CASE("opset upgrade refuses what it cannot rewrite, naming the node and op") {
  auto message = [](graph::Model m) {
    try {
      convert::UpgradeOpset(&m, 11);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kUnsupported);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {  // a read Dropout mask changes type at 10
    graph::Model m = OldOpsModel();
    m.graph.outputs.push_back(TensorValue("drop_mask", {1, 2, 8, 20}));
    const std::string what = message(m);
    CHECK(what.find("'drop'") != std::string::npos);
    CHECK(what.find("mask") != std::string::npos);
  }
  {  // BatchNormalization spatial=0
    graph::Model m = OldOpsModel();
    for (graph::Node& n : m.graph.nodes) {
      if (n.op_type == "BatchNormalization") n.attributes[0].i = 0;
    }
    CHECK(message(m).find("spatial=0") != std::string::npos);
  }
  {  // no adapter: MeanVarianceNormalization changed form at 9
    graph::Model m = NewModel("mvn", "", 8);
    m.graph.inputs.push_back(TensorValue("x", {1, 2, 3, 3}));
    Builder b(&m.graph, 1);
    b.Op("MeanVarianceNormalization", "mvn", {"x"});
    m.graph.outputs.push_back(TensorValue("mvn", {1, 2, 3, 3}));
    const std::string what = message(m);
    CHECK(what.find("'mvn' (MeanVarianceNormalization)") != std::string::npos);
    CHECK(what.find("opset 9") != std::string::npos);
  }
  {  // too old
    graph::Model m = OldOpsModel();
    m.opsets[0].version = 6;
    CHECK(message(m).find("opset 6") != std::string::npos);
  }
}

// An opset-11 model with the ops whose form changes at 12 / 13: Softmax on a non-last axis (and
// an unknown input rank: the Flatten / Reshape rewrite), LogSoftmax on the last axis, Hardmax with
// the default axis on a rank-2 input, Squeeze / Unsqueeze / ReduceSum axes, Split sizes, Dropout's
// ratio.
graph::Model Opset11Model() {
  graph::Model m = NewModel("opset11", "opset-11 model for the 11 -> 13 upgrade", 11);
  graph::Graph& g = m.graph;
  Builder b(&g, 9);
  graph::ValueInfo x = TensorValue("x", {2, 3, 4});
  x.type.dims[0] = graph::Dim{-1, "batch"};  // symbolic: ranks are not known at load
  g.inputs.push_back(x);
  const std::string sm = b.Op("Softmax", "sm", {"x"}, {AttrInt("axis", 1)});
  const std::string lsm = b.Op("LogSoftmax", "lsm", {sm}, {AttrInt("axis", -1)});
  const std::string drop = b.Op("Dropout", "drop", {lsm}, {AttrFloat("ratio", 0.2f)});
  const std::string un = b.Op("Unsqueeze", "un", {drop}, {AttrInts("axes", {0})});
  const std::string sq = b.Op("Squeeze", "sq", {un}, {AttrInts("axes", {0})});
  const auto parts = b.OpN("Split", "split", {sq}, {"part0", "part1"},
                           {AttrInt("axis", 2), AttrInts("split", {1, 3})});
  b.Op("ReduceSum", "rsum", {parts[1]}, {AttrInts("axes", {1}), AttrInt("keepdims", 0)});
  b.Op("Hardmax", "hm", {b.Op("Reshape", "flat", {parts[0], b.Shape("flat.shape", {-1, 3})})});
  g.outputs.push_back(TensorValue("rsum", {2, 3}));
  g.outputs.push_back(TensorValue("hm", {2, 3}));
  return m;
}

TEST_CASE("opset upgrade 11 -> 13: axes and split become inputs, Softmax keeps its meaning") {
  const graph::Model old = Opset11Model();
  graph::Model m = old;
  const convert::OpsetUpgrade u = convert::UpgradeOpset(&m, 13);
  CHECK(u.from == 11);
  CHECK(u.to == 13);
  CHECK(u.rewritten == 7);  // all but lsm, whose axis is already the last one
  CHECK(m.ir_version >= 7);
  for (const graph::Node& n : m.graph.nodes) {
    CAPTURE(n.name);
    if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze" || n.op_type == "ReduceSum" ||
        n.op_type == "Split" || n.op_type == "Dropout") {
      CHECK(n.inputs.size() == 2);
    }
    if (n.name == "sm") CHECK(n.FindAttribute("axis")->i == 1);  // on the flattened input
  }
  CHECK(CountOp(m.graph, "Flatten") >= 1);  // at least Softmax axis 1 of an unknown rank
  const Tensor x = builtin::RandomFloatTensor({2, 3, 4}, 4, -3.0f, 3.0f);
  const auto want = RunModel(old, {{"x", x}});
  const auto got = RunModel(m, {{"x", x}});
  CHECK(MaxAbsDiff(got.at("rsum"), want.at("rsum")) == 0.0);
  CHECK(MaxAbsDiff(got.at("hm"), want.at("hm")) == 0.0);
}

// An opset-13 model with the ops whose form changes at 18: ReduceMean / ReduceMax axes
// (attributes -> inputs) and a Split without sizes (num_outputs becomes required).
graph::Model Opset13Model() {
  graph::Model m = NewModel("opset13", "opset-13 model for the 13 -> 21 upgrade", 13);
  graph::Graph& g = m.graph;
  Builder b(&g, 3);
  g.inputs.push_back(TensorValue("x", {2, 4, 6}));
  const auto parts = b.OpN("Split", "split", {"x"}, {"half0", "half1"}, {AttrInt("axis", 2)});
  b.Op("ReduceMean", "mean", {parts[0]}, {AttrInts("axes", {1}), AttrInt("keepdims", 0)});
  b.Op("ReduceMax", "max", {parts[1]}, {AttrInts("axes", {-1})});
  b.Op("ReduceMin", "min", {"x"});  // no axes: every axis, before and after
  g.outputs.push_back(TensorValue("mean", {2, 3}));
  g.outputs.push_back(TensorValue("max", {2, 4, 1}));
  g.outputs.push_back(TensorValue("min", {1, 1, 1}));
  return m;
}

TEST_CASE("opset upgrade 13 -> 21: Reduce axes become inputs, Split gets num_outputs") {
  const graph::Model old = Opset13Model();
  graph::Model m = old;
  const convert::OpsetUpgrade u = convert::UpgradeOpset(&m, 21);
  CHECK(u.from == 13);
  CHECK(u.to == 21);
  CHECK(u.rewritten == 3);  // split, mean, max
  CHECK(m.ir_version >= 10);
  for (const graph::Node& n : m.graph.nodes) {
    CAPTURE(n.name);
    if (n.name == "mean" || n.name == "max") CHECK(n.inputs.size() == 2);
    if (n.name == "min") CHECK(n.inputs.size() == 1);
    if (n.name == "split") CHECK(n.FindAttribute("num_outputs")->i == 2);
    CHECK(n.FindAttribute("axes") == nullptr);
  }
  const Tensor x = builtin::RandomFloatTensor({2, 4, 6}, 5, -3.0f, 3.0f);
  const auto want = RunModel(old, {{"x", x}});
  const auto got = RunModel(m, {{"x", x}});
  for (const std::string out : {"mean", "max", "min"}) {
    CAPTURE(out);
    CHECK(MaxAbsDiff(got.at(out), want.at(out)) == 0.0);
  }
}

}  // namespace
}  // namespace simplecpp
