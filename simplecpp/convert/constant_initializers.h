// A pre-pass shared by the model converters: Constant nodes holding a tensor become initializers,
// so that every converter looks for constant weights in one place. Exporters disagree on where
// weights live (paddle2onnx puts every weight in a Constant node, PyTorch and TensorFlow use
// initializers); after this pass both read the same. Internal to simplecpp/convert.
#pragma once

#include "graph/ir.h"

namespace simplecpp::convert::detail {

// Moves the value of every ai.onnx Constant node of `g` (and of its subgraphs) whose value is
// `value`, `value_float(s)` or `value_int(s)` into g->initializers under the node's output name
// and drops the node. Constants that are graph outputs, or that hold strings or sparse tensors,
// stay nodes. `list_as_inputs` (IR version < 4, where every initializer must also be a graph
// input) adds a graph input for each new initializer of the top-level graph. Returns how many
// nodes became initializers.
int ConstantsToInitializers(graph::Graph* g, bool list_as_inputs = false);

}  // namespace simplecpp::convert::detail
