// The batch structure of a matrix product with numpy matmul semantics, shared by MatMul,
// MatMulInteger, QLinearMatMul and the com.microsoft integer matmuls: a rank-1 A is a row and a
// rank-1 B a column (their dim dropped from the output), and the dims before the last two
// broadcast right-aligned.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "graph/op.h"

namespace simplecpp::graph {

struct BatchedMatMulShape {
  int64_t m = 0, n = 0, k = 0;
  Dims out_dims;
  int64_t num_batches = 0;  // matrices in the output
  int64_t b_batches = 0;    // matrices stored in B
  // For each output matrix, the indices of the A and B matrices it multiplies.
  std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>> offsets;
};

// Fails (naming both shapes) for a scalar operand, inner dims that differ or batch dims that do
// not broadcast.
BatchedMatMulShape ResolveBatchedMatMul(const PrepareContext& ctx, const Dims& da, const Dims& db);

}  // namespace simplecpp::graph
