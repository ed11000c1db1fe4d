// Small-M matrix products with 16-bit (float16 / bfloat16) constant weights kept 16-bit:
// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C (+ bias, clamp), for M of a few rows (one
// token through a transformer layer). Such products are bound by the memory bandwidth of
// streaming B, so B stays 2 bytes per weight in a packed layout made once (at an op's Prepare)
// and is widened to float32 in registers (F16C on AVX2/AVX3, our own exact integer conversion
// elsewhere, a shift for bfloat16). Larger M should use the float32 GEMM (kernels/gemm/gemm.h) on a
// B widened once with PackedBF32::Pack16, which is compute-bound and faster there.
//
// Numerics: exactly those of kernels/gemm/gemm.h: every C element is one multiply-add chain
// acc = fma(a_k, b_k, acc) over k = 0..K-1 in order from 0 (multiply then add on targets without
// FMA, such as SSE4), then c = clamp((alpha*acc + beta*c_old) + (row_bias[i] + col_bias[j])),
// and a 16-bit C is rounded once per element. So the result does not depend on the thread count
// and equals GemmPackedBMixed on the widened B bit for bit on the same target.
//
// Threading: one task per two packed panels (128 columns; boundaries depend on N only); each
// task computes all M rows of its columns. K is never split.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// Up to this many rows the ops (graph/ops/matmul.cc) use GemvPackedB16 for 16-bit constant B.
constexpr int64_t kGemv16MaxRows = 8;

// op(B) [K,N] as 16-bit bits, packed into column panels: ceil(N/kPanel) panels, each [K][kPanel]
// row-major (element (k, j) at p*K*kPanel + k*kPanel + (j - p*kPanel), p = j / kPanel), columns
// past N zero. The layout is the same for every SIMD target. Immutable once packed: share it.
class PackedB16 {
 public:
  static constexpr int64_t kPanel = 64;
  // op(B) is read as for GemmF32: trans_b == false: b is [K,N] (element (k,j) at b[k*ldb + j]);
  // trans_b == true: b is [N,K] (element (k,j) at b[j*ldb + k]).
  static std::shared_ptr<const PackedB16> Pack(Float16Kind kind, bool trans_b, int64_t k, int64_t n,
                                               const uint16_t* b, int64_t ldb);
  Float16Kind kind() const { return kind_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  const uint16_t* data() const { return data_.get(); }
  // Element (kk, j) of op(B) as stored (16-bit bits).
  uint16_t At(int64_t kk, int64_t j) const;

  PackedB16(Float16Kind kind, int64_t k, int64_t n);  // zero-filled; use Pack
 private:
  Float16Kind kind_;
  int64_t k_, n_;
  std::unique_ptr<uint16_t[], void (*)(uint16_t*)> data_;  // 64-byte aligned
};

// C[M,N] = alpha * op(A) * B + beta * C, then the epilogue, with B packed 16-bit (N and K come
// from `b`). A is float32 or 16-bit (type_a; a 16-bit A is widened once per call), C is float32
// or 16-bit (type_c; computed in float32 and rounded once). trans_a: A stored [K,M] with lda.
// Leading dimensions count elements. When beta == 0, C is not read. Any M works; it is meant
// for M <= kGemv16MaxRows (every row chunk of 4 re-reads B, from cache when it fits).
void GemvPackedB16(GemmType type_a, GemmType type_c, bool trans_a, int64_t m, float alpha,
                   const void* a, int64_t lda, const PackedB16& b, float beta, void* c, int64_t ldc,
                   const Parallel& parallel, const GemmEpilogue& epilogue = {});

}  // namespace simplecpp::kernels
