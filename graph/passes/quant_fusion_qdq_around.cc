// Patterns 5 and 6 of quant_fusion.h: DequantizeLinear -> an op that only moves or selects
// elements, or GlobalAveragePool -> QuantizeLinear, rewritten to the op on the quantized input or
// to QLinearGlobalAveragePool.
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "graph/passes/quant_fusion_internal.h"

namespace simplecpp::graph::passes::quant_fusion {
namespace {

// A Resize / Upsample whose every output element is a copy of an input element: mode nearest
// (the default) and no tf_crop_and_resize, which writes extrapolation_value outside the region.
bool NearestCopies(const Node& op) {
  for (const auto& a : op.attributes) {
    if (a.name == "mode" && a.s != "nearest") return false;
    if (a.name == "coordinate_transformation_mode" && a.s == "tf_crop_and_resize") return false;
  }
  return true;
}

// Ops that only select or move elements: with the same per-tensor scale and zero point on both
// sides, Q(op(DQ(q))) == op(q) exactly (DQ is increasing, and Q(DQ(v)) == v).
bool MovesOrSelects(const Node& op, int64_t opset) {
  static const std::set<std::string> kAnyOpset = {"Flatten", "Reshape", "Transpose", "Squeeze",
                                                  "Unsqueeze", "Identity"};
  if (kAnyOpset.count(op.op_type)) return true;
  if (op.op_type == "Resize" || op.op_type == "Upsample") return NearestCopies(op);
  return op.op_type == "MaxPool" && opset >= 12;  // 8-bit MaxPool from opset 12
}

}  // namespace

bool MatchQdqAround(const PatternGraph& g, int q_idx, Rewrite* rw) {
  const Node& q = g.node(q_idx);
  PerTensor yq;
  const int op_idx = QuantizedProducer(g, q_idx, &yq);
  if (op_idx < 0) return false;
  const Node& op = g.node(op_idx);
  if (!CanonicalDomain(op.domain).empty() || op.outputs.size() != 1 || op.inputs.empty())
    return false;
  const bool average = op.op_type == "GlobalAveragePool" && op.inputs.size() == 1;
  if (!average && !MovesOrSelects(op, g.opset())) return false;
  const int dq_idx = g.Producer(op.inputs[0], "DequantizeLinear");
  if (dq_idx < 0) return false;
  const Node& dq = g.node(dq_idx);
  PerTensor xq;
  if (!PlainDequantize(dq) || !PerTensorParams(g, dq, &xq) || dq.inputs[0].empty()) return false;
  if (xq.zp->dtype() != yq.zp->dtype()) return false;
  for (size_t k = 1; k < op.inputs.size(); ++k) {
    if (op.inputs[k] == op.inputs[0]) return false;  // e.g. a shape computed from the data
  }
  Node f;
  if (average) {
    // Pattern 6: the mean of the integers, requantized once (quant_fusion.h: within 1).
    f.op_type = "QLinearGlobalAveragePool";
    f.domain = "com.microsoft";
    f.inputs = {dq.inputs[0], dq.inputs[1], dq.inputs[2], q.inputs[1], q.inputs[2]};
    rw->kind = 6;
  } else {
    // Pattern 5: exact.
    if (xq.scale != yq.scale || xq.zp_value() != yq.zp_value()) return false;
    f.op_type = op.op_type;
    f.attributes = op.attributes;
    f.inputs = op.inputs;
    f.inputs[0] = dq.inputs[0];
    rw->kind = 5;
  }
  f.name = (op.name.empty() ? q.outputs[0] : op.name) + "_quantized";
  f.outputs = {q.outputs[0]};
  rw->fused = std::move(f);
  rw->nodes = {op_idx, q_idx};
  rw->maybe_dead = {dq_idx};
  rw->anchor = q_idx;
  return true;
}

}  // namespace simplecpp::graph::passes::quant_fusion
