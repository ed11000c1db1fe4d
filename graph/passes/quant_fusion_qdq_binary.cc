// Pattern 7 of quant_fusion.h: a float32 Add / Sub / Mul / Div between two DequantizeLinear
// outputs, quantized again, rewritten to simplecpp.fused QdqBinary (graph/ops/quant/
// qdq_binary.cc), which runs the same float32 steps per element without the float32 tensors in
// between: exact.
#include <set>
#include <string>
#include <utility>

#include "graph/passes/quant_fusion.h"
#include "graph/passes/quant_fusion_internal.h"

namespace simplecpp::graph::passes::quant_fusion {
namespace {

// The dequantized operand `value`: the output of a plain per-tensor DequantizeLinear of 8-bit
// data (it may have other readers). Its node index, or -1.
int PerTensorDequantize(const PatternGraph& g, const std::string& value) {
  const int dq_idx = g.Producer(value, "DequantizeLinear");
  if (dq_idx < 0) return -1;
  const Node& dq = g.node(dq_idx);
  PerTensor p;
  if (!PlainDequantize(dq) || !PerTensorParams(g, dq, &p) || dq.inputs[0].empty()) return -1;
  return dq_idx;
}

}  // namespace

bool MatchQdqBinary(const PatternGraph& g, int q_idx, Rewrite* rw) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div"};
  // Before opset 7 these ops broadcast only with the legacy broadcast / axis attributes.
  if (g.opset() < 7) return false;
  const Node& q = g.node(q_idx);
  PerTensor yq;
  const int op_idx = QuantizedProducer(g, q_idx, &yq);
  if (op_idx < 0) return false;
  const Node& op = g.node(op_idx);
  if (!CanonicalDomain(op.domain).empty() || !kOps.count(op.op_type) || op.inputs.size() != 2 ||
      op.outputs.size() != 1) {
    return false;
  }
  const int a_idx = PerTensorDequantize(g, op.inputs[0]);
  const int b_idx = PerTensorDequantize(g, op.inputs[1]);
  if (a_idx < 0 || b_idx < 0) return false;
  const Node& a = g.node(a_idx);
  const Node& b = g.node(b_idx);
  Node f;
  f.op_type = "QdqBinary";
  f.domain = kFusedDomain;
  Attribute kind;
  kind.name = "op";
  kind.kind = AttrKind::kString;
  kind.s = op.op_type;
  f.attributes.push_back(std::move(kind));
  f.inputs = {a.inputs[0], a.inputs[1], a.inputs[2], b.inputs[0], b.inputs[1], b.inputs[2],
              q.inputs[1], q.inputs[2]};
  f.name = (op.name.empty() ? q.outputs[0] : op.name) + "_quantized";
  f.outputs = {q.outputs[0]};
  rw->fused = std::move(f);
  rw->nodes = {op_idx, q_idx};
  rw->maybe_dead = {a_idx, b_idx};
  rw->anchor = q_idx;
  rw->kind = 7;
  return true;
}

}  // namespace simplecpp::graph::passes::quant_fusion
