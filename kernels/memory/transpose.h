// Axis permutation (ONNX Transpose) of dense row-major tensors, generic over the element size in
// bytes. The plan is built once (at Prepare): size-1 axes are dropped, axes that stay adjacent
// are merged, and a trailing axis that stays innermost is folded into a bigger "element", so most
// real transposes become a batched 2-D transpose that runs in cache-sized tiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/parallel.h"

namespace simplecpp::kernels {

struct TransposePlan {
  size_t elem_size = 0;  // bytes per (possibly folded) element
  int64_t total = 0;     // elements of elem_size bytes
  bool is_copy = false;  // the permutation keeps the memory order: a plain copy
  // Batched 2-D transpose: out[outer][j][...][i] = in[outer][i][...][j], written as
  // out[o_off + j*out_stride_b + i] = in[i_off + i*in_stride_a + j] for i < dim_a, j < dim_b.
  int64_t dim_a = 0, in_stride_a = 0;   // the output's innermost axis, seen from the input
  int64_t dim_b = 0, out_stride_b = 0;  // the input's innermost axis, seen from the output
  // Remaining axes in output order: sizes and strides (in elements) in input and output.
  std::vector<int64_t> outer_dims, outer_in_strides, outer_out_strides;
  int64_t outer_count = 1;
};

// in_dims: the input shape; perm: a valid permutation of [0, rank) (checked by the caller).
// Output dims are in_dims[perm[i]].
TransposePlan PlanTranspose(size_t elem_size, const std::vector<int64_t>& in_dims,
                            const std::vector<int64_t>& perm);

// Runs a plan; in and out must not overlap.
void TransposeBytes(const TransposePlan& plan, const void* in, void* out, const Parallel& parallel);

// out[j * ldo + i] = in[i * ldi + j] for i < rows, j < cols: a 2-D transpose of bytes (16 x 16
// blocks in vectors; kernels/memory/transpose_byte_matrix.cc). in and out must not overlap.
void TransposeByteMatrix(const uint8_t* in, int64_t ldi, uint8_t* out, int64_t ldo, int64_t rows,
                         int64_t cols);

}  // namespace simplecpp::kernels
