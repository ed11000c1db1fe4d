// Raising a model's ai.onnx opset import to a newer version (up to 21), rewriting the nodes whose
// op changed form in between (ONNX's version-converter adapters for the ops exporters emit:
// Upsample -> Resize, Clip / Pad / Slice / TopK attributes -> inputs at 10-11, Resize-10 -> 11,
// the BatchNormalization `spatial` attribute, Dropout's mask and ratio, Squeeze / Unsqueeze /
// ReduceSum axes and Split sizes -> inputs at 13, the Softmax family's 2-D coercion, the other
// Reduce ops' axes -> inputs and Split's num_outputs at 18, GridSample's mode names at 20). The
// quantizers call it when a model is older than the quantized ops they emit
// (DynamicQuantizeLinear: 11, QuantizeLinear: 10, DequantizeLinear with an axis: 13, blocked
// DequantizeLinear with int4: 21).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/ir.h"

namespace simplecpp::convert {

struct OpsetUpgrade {
  int64_t from = 0;   // the ai.onnx opset the model imported
  int64_t to = 0;     // the opset it imports now (== from when nothing was done)
  int rewritten = 0;  // nodes whose form changed (subgraphs included)
};

// Sets the model's ai.onnx opset to `target` when it is lower (IR version raised to the one that
// goes with it) after rewriting every node, subgraphs included, whose op changed between the two
// opsets in a way an older node would not stay valid under. Ops whose newer versions only widen
// what they accept (more types, negative axes, new optional attributes with the old behaviour as
// default) are left as they are. Throws Error(kUnsupported) naming the node and op for an op that
// changed without an adapter here, and for source opsets below 7 or targets above 21, leaving
// the model as it was. Nothing is done (and nothing thrown) when the model's opset is already
// >= target.
OpsetUpgrade UpgradeOpset(graph::Model* model, int64_t target);

// One opset version at which an ai.onnx op's schema changed (opsets 8 to 21), and whether a node
// written for the previous version needs a rewrite to stay valid. The table UpgradeOpset works
// from; exposed so that a test can compare it with the op registry's version lists.
struct OpsetChange {
  const char* op_type;
  int version;
  bool rewrites;  // false: an older node is valid at `version` with the same result
};
const std::vector<OpsetChange>& OpsetChanges();

}  // namespace simplecpp::convert
