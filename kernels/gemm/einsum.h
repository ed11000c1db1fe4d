// The contraction step of Einsum: a batched matrix product C[b] = op(A[b]) * op(B[b]) over dense
// row-major batches (the op permutes each operand so that every contraction has this form).
//
//   A is [batch, M, K] (trans_a: [batch, K, M]), B is [batch, K, N] (trans_b: [batch, N, K]),
//   C is [batch, M, N]; batches are contiguous. K == 0 gives zeros.
// float32 runs GemmF32 (kernels/gemm/gemm.h) per batch. Tiny float32 products (M*N*K <= 512) and
// the other types use a portable loop that sums over k in order (integers wrap around), split into
// tasks of whole rows of C whose boundaries depend only on the sizes.
#pragma once

#include <cstdint>

#include "kernels/parallel.h"

namespace simplecpp::kernels {

// Instantiated for float, double, int32, int64, uint32, uint64.
template <typename T>
void BatchedMatMul(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k,
                   const T* a, const T* b, T* c, const Parallel& parallel);

}  // namespace simplecpp::kernels
