// The shape and data movement op family. Each file registers its own ops:
//   tensor_shape.cc     Reshape, Flatten, Squeeze, Unsqueeze, Identity, Shape, Size, Transpose
//   tensor_gather.cc    Concat, Split, Slice, Gather, GatherElements, Expand, Tile
//   tensor_pad.cc       Pad
//   tensor_constant.cc  Constant, ConstantOfShape, Range, Dropout
// Kernels: kernels/memory/transpose.h (Transpose) and kernels/memory/copy.h (everything that moves
// data).
#include "graph/ops/families.h"
#include "graph/ops/tensor_ops_internal.h"
#include "graph/registry.h"

namespace simplecpp::graph {

void RegisterTensorOps(OpRegistry& registry) {
  tensor_ops::RegisterShapeOps(registry);
  tensor_ops::RegisterGatherOps(registry);
  tensor_ops::RegisterPadOps(registry);
  tensor_ops::RegisterConstantOps(registry);
}

}  // namespace simplecpp::graph
