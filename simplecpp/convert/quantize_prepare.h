// What both quantizers do to a model before quantizing it: raise an ai.onnx opset older than the
// quantized ops they emit, and make Constant-node weights initializers (quantize.h). Internal to
// simplecpp/convert.
#pragma once

#include <cstdint>

#include "graph/ir.h"
#include "simplecpp/convert/quantize.h"

namespace simplecpp::convert::detail {

// A copy of `model` with its ai.onnx opset raised to `target` when below `min_opset`, and every
// Constant node holding a tensor turned into an initializer. Fills `report` when non-null.
graph::Model PrepareForQuantization(const graph::Model& model, int64_t min_opset, int64_t target,
                                    QuantizeReport* report);

}  // namespace simplecpp::convert::detail
