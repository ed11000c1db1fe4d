// The node rewrites behind UpgradeOpset (opset_upgrade.h), one per op whose form changed between
// opsets 7 and 21. Each takes a node written for the op's previous version and rewrites it in
// place into the form of the newer one (new constant inputs become initializers of the node's
// graph; helper nodes go before or after it). Internal to simplecpp/convert.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "simplecpp/dtype.h"

namespace simplecpp::convert::detail {

struct AdapterContext {
  graph::Graph* graph = nullptr;           // the graph holding the node
  std::set<std::string>* taken = nullptr;  // value names in use (new names are added)
  std::set<std::string> used;              // values some node or graph output reads
  // The element type of a value (float32 when it cannot be told: the importer could not plan
  // the model, or the value lives in a subgraph).
  std::function<DType(const std::string&)> dtype_of;
  // The rank of a value, or -1 when the importer cannot tell it at load.
  std::function<int64_t(const std::string&)> rank_of;
  // Nodes the adapter adds around the one it rewrites (the driver splices them in, in order).
  std::vector<graph::Node> before, after;
};

// Returns true when the node changed. Throws Error(kUnsupported) naming the node for a form the
// newer version cannot express.
using Adapter = bool (*)(graph::Node* node, AdapterContext* context);

bool ClipAttributesToInputs(graph::Node* node, AdapterContext* context);   // Clip 6 -> 11
bool PadAttributesToInputs(graph::Node* node, AdapterContext* context);    // Pad 2 -> 11
bool SliceAttributesToInputs(graph::Node* node, AdapterContext* context);  // Slice 1 -> 10
bool TopKAttributeToInput(graph::Node* node, AdapterContext* context);     // TopK 1 -> 10
bool UpsampleToResize(graph::Node* node, AdapterContext* context);      // Upsample 7/9 -> Resize 11
bool ResizeAddRoi(graph::Node* node, AdapterContext* context);          // Resize 10 -> 11
bool BatchNormDropSpatial(graph::Node* node, AdapterContext* context);  // BatchNormalization 7 -> 9
bool DropoutDropMask(graph::Node* node, AdapterContext* context);       // Dropout 7 -> 10
bool DropoutRatioToInput(graph::Node* node, AdapterContext* context);   // Dropout 10 -> 12
bool AxesAttributeToInput(graph::Node* node,
                          AdapterContext* context);  // Squeeze, Unsqueeze, ReduceSum -> 13
bool SplitAttributeToInput(graph::Node* node, AdapterContext* context);  // Split 11 -> 13
bool SoftmaxCoercedToAxis(graph::Node* node,
                          AdapterContext* context);                  // (Log)Softmax, Hardmax -> 13
bool ResizeCheckMode13(graph::Node* node, AdapterContext* context);  // Resize 11 -> 13
bool SplitAddNumOutputs(graph::Node* node, AdapterContext* context);           // Split 13 -> 18
bool GridSampleRenameModes(graph::Node* node, AdapterContext* context);        // GridSample 16 -> 20
bool RoiAlignKeepOutputHalfPixel(graph::Node* node, AdapterContext* context);  // RoiAlign 10 -> 16
// For a change no rewrite covers (Scan 8 -> 9, MeanVarianceNormalization 1 -> 9): always throws.
bool NoAdapter(graph::Node* node, AdapterContext* context);

}  // namespace simplecpp::convert::detail
