// Batched matrix products for Einsum (see einsum.h).
#include "kernels/gemm/einsum.h"

#include <algorithm>
#include <type_traits>

#include "kernels/gemm/gemm.h"

namespace simplecpp::kernels {
namespace {

constexpr int64_t kTaskMacs = 1 << 16;  // multiply-adds per task (about)
constexpr int64_t kSmallMacs = 512;     // per batch: below this, float32 skips GemmF32

// Integers multiply-add in their unsigned twin (wrap-around without UB), floats in their type.
template <typename T, bool = std::is_integral_v<T>>
struct AccOf {
  using type = T;
};
template <typename T>
struct AccOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Acc = typename AccOf<T>::type;

template <typename T>
void GenericBatchedMatMul(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n,
                          int64_t k, const T* a, const T* b, T* c, const Parallel& parallel) {
  const int64_t rows = batch * m;
  if (rows <= 0 || n <= 0) return;
  const int64_t rows_per_task = std::max<int64_t>(1, kTaskMacs / std::max<int64_t>(n * k, 1));
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  // Strides of op(A)(i, kk) and op(B)(kk, j) inside one batch.
  const int64_t a_si = trans_a ? 1 : k, a_sk = trans_a ? m : 1;
  const int64_t b_sk = trans_b ? 1 : n, b_sj = trans_b ? k : 1;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t end = std::min(rows, t1 * rows_per_task);
    for (int64_t r = t0 * rows_per_task; r < end; ++r) {
      const int64_t bi = r / m, i = r % m;
      const T* ab = a + bi * m * k + i * a_si;
      const T* bb = b + bi * k * n;
      T* crow = c + r * n;
      using A = Acc<T>;
      if (!trans_b) {
        // Row of C accumulates a[i,kk] * B[kk, :] (contiguous, vectorizable).
        for (int64_t j = 0; j < n; ++j) crow[j] = T(0);
        for (int64_t kk = 0; kk < k; ++kk) {
          const A av = static_cast<A>(ab[kk * a_sk]);
          const T* brow = bb + kk * b_sk;
          for (int64_t j = 0; j < n; ++j) {
            crow[j] = static_cast<T>(static_cast<A>(crow[j]) + av * static_cast<A>(brow[j]));
          }
        }
      } else {
        for (int64_t j = 0; j < n; ++j) {
          A acc = A(0);
          const T* bcol = bb + j * b_sj;
          for (int64_t kk = 0; kk < k; ++kk) {
            acc += static_cast<A>(ab[kk * a_sk]) * static_cast<A>(bcol[kk * b_sk]);
          }
          crow[j] = static_cast<T>(acc);
        }
      }
    }
  });
}

}  // namespace

template <typename T>
void BatchedMatMul(bool trans_a, bool trans_b, int64_t batch, int64_t m, int64_t n, int64_t k,
                   const T* a, const T* b, T* c, const Parallel& parallel) {
  if constexpr (std::is_same_v<T, float>) {
    // Tiny products (a batch of 3x3 blocks, a dot product) cost less as plain loops than as
    // GemmF32 calls, which pack B per call. The choice depends only on the sizes.
    if (m * n * k <= kSmallMacs) {
      GenericBatchedMatMul<T>(trans_a, trans_b, batch, m, n, k, a, b, c, parallel);
      return;
    }
    if (k == 0) {
      std::fill(c, c + batch * m * n, 0.0f);
      return;
    }
    for (int64_t bi = 0; bi < batch; ++bi) {
      GemmF32(trans_a, trans_b, m, n, k, 1.0f, a + bi * m * k, trans_a ? m : k, b + bi * k * n,
              trans_b ? k : n, 0.0f, c + bi * m * n, n, parallel);
    }
  } else {
    GenericBatchedMatMul<T>(trans_a, trans_b, batch, m, n, k, a, b, c, parallel);
  }
}

template void BatchedMatMul<float>(bool, bool, int64_t, int64_t, int64_t, int64_t, const float*,
                                   const float*, float*, const Parallel&);
template void BatchedMatMul<double>(bool, bool, int64_t, int64_t, int64_t, int64_t, const double*,
                                    const double*, double*, const Parallel&);
template void BatchedMatMul<int32_t>(bool, bool, int64_t, int64_t, int64_t, int64_t, const int32_t*,
                                     const int32_t*, int32_t*, const Parallel&);
template void BatchedMatMul<int64_t>(bool, bool, int64_t, int64_t, int64_t, int64_t, const int64_t*,
                                     const int64_t*, int64_t*, const Parallel&);
template void BatchedMatMul<uint32_t>(bool, bool, int64_t, int64_t, int64_t, int64_t,
                                      const uint32_t*, const uint32_t*, uint32_t*, const Parallel&);
template void BatchedMatMul<uint64_t>(bool, bool, int64_t, int64_t, int64_t, int64_t,
                                      const uint64_t*, const uint64_t*, uint64_t*, const Parallel&);

}  // namespace simplecpp::kernels
