// Float32 GEMM: C = alpha * op(A) * op(B) + beta * C (+ bias, clamp), the core of MatMul, Gemm,
// Conv and (later) Einsum and the quantized matmuls.
//
// Shapes and layouts: op(A) is [M,K], op(B) is [K,N], C is [M,N]; every matrix is row-major with
// a leading dimension (lda/ldb/ldc = distance in floats between consecutive rows as stored).
//   trans_a == false: A is stored [M,K] (element (i,k) at a[i*lda + k])
//   trans_a == true:  A is stored [K,M] (element (i,k) at a[k*lda + i])
//   trans_b == false: B is stored [K,N] (element (k,j) at b[k*ldb + j])
//   trans_b == true:  B is stored [N,K] (element (k,j) at b[j*ldb + k])
// Pointers need no alignment. M, N, K may be 0 (K == 0 gives C = beta*C + bias).
//
// Numerics: every C element is one fused multiply-add chain acc = fma(a_k, b_k, acc) over
// k = 0..K-1 in order, starting from 0, followed by the epilogue
//   c = clamp((alpha*acc + beta*c_old) + (row_bias[i] + col_bias[j]))
// so the result does not depend on the thread count, the tile an element falls in, or whether an
// operand was prepacked. Results may differ between SIMD targets: SSE4 has no FMA instruction,
// so there the chain (and the beta term) rounds after the multiply and after the add. When
// beta == 0, C is not read (NaN in C is ignored, as BLAS does). The clamp follows the target's
// min/max for NaN (on x86 a NaN becomes clamp_lo).
//
// Constant weights: pack them once (PackedBF32::Pack / PackedAF32::Pack, e.g. in an op's Prepare)
// and keep the result in a shared_ptr<const ...>: a packed operand is immutable and may be used
// by concurrent calls. The packed layout follows the SIMD target chosen at pack time; if the
// dispatch target changed since (tests forcing targets), the call repacks on the fly (slower,
// same results).
//
// Threading: work is split into tasks over blocks of M and N whose boundaries depend only on the
// problem size, and run through `parallel`; each C element is written by exactly one task.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "kernels/elementwise/post_op.h"
#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// What happens to each C element after the product: bias and activation clamp.
struct GemmEpilogue {
  const float* row_bias = nullptr;  // [M] or nullptr: row_bias[i] is added to row i (Conv bias)
  const float* col_bias = nullptr;  // [N] or nullptr: col_bias[j] is added to column j
  // Applied last when clamp is true (Relu: {0, +inf}; Clip): c = min(max(c, lo), hi).
  bool clamp = false;
  float clamp_lo = -std::numeric_limits<float>::infinity();
  float clamp_hi = std::numeric_limits<float>::infinity();
  // Applied after all of the above to each finished row run of a float32 C (at most one task's
  // block wide), while it is in cache. Not applied to 16-bit C.
  PostOpF32 post;
  // The same for a 16-bit C, applied to each row run after its rounding to 16 bits (a graph's
  // 16-bit activation chain, which rounds its own steps). Not applied to float32 C.
  PostOp16 post16;
};

// C[M,N] = alpha * op(A) * op(B) + beta * C, then the epilogue.
void GemmF32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
             int64_t ldc, const Parallel& parallel, const GemmEpilogue& epilogue = {});

// op(B) [K,N] packed into column panels for the micro-kernel (zero-padded to whole panels).
class PackedBF32 {
 public:
  // Same from 16-bit op(B) (float16 / bfloat16 bits): widened to float32 while packing.
  static std::shared_ptr<const PackedBF32> Pack16(Float16Kind kind, bool trans_b, int64_t k,
                                                  int64_t n, const uint16_t* b, int64_t ldb);
  // Copies op(B) (layout as for GemmF32) into the packed layout of the current SIMD target.
  static std::shared_ptr<const PackedBF32> Pack(bool trans_b, int64_t k, int64_t n, const float* b,
                                                int64_t ldb);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // Layout (internal to the kernels): ceil(N/nr) panels, each [K][nr] row-major.
  int64_t nr() const { return nr_; }
  const float* data() const { return data_.get(); }
  // Element (kk, j) of op(B), read back from the packed layout (tests, repacking).
  float At(int64_t kk, int64_t j) const;

  PackedBF32(int64_t k, int64_t n, int64_t nr);  // zero-filled; use Pack
 private:
  int64_t k_, n_, nr_;
  std::unique_ptr<float[], void (*)(float*)> data_;
};

// op(A) [M,K] packed into row strips for the micro-kernel (Conv weights: A is W [Cout, C*kernel]).
class PackedAF32 {
 public:
  // Same from 16-bit op(A): widened to float32 while packing.
  static std::shared_ptr<const PackedAF32> Pack16(Float16Kind kind, bool trans_a, int64_t m,
                                                  int64_t k, const uint16_t* a, int64_t lda);
  static std::shared_ptr<const PackedAF32> Pack(bool trans_a, int64_t m, int64_t k, const float* a,
                                                int64_t lda);
  int64_t m() const { return m_; }
  int64_t k() const { return k_; }
  // Layout (internal to the kernels): ceil(M/mr) strips, each [K][mr] row-major.
  int64_t mr() const { return mr_; }
  const float* data() const { return data_.get(); }
  float At(int64_t i, int64_t kk) const;

  PackedAF32(int64_t m, int64_t k, int64_t mr);  // zero-filled; use Pack
 private:
  int64_t m_, k_, mr_;
  std::unique_ptr<float[], void (*)(float*)> data_;
};

// C[M,N] = alpha * op(A) * B + beta * C with B prepacked (N and K come from `b`).
void GemmPackedBF32(bool trans_a, int64_t m, float alpha, const float* a, int64_t lda,
                    const PackedBF32& b, float beta, float* c, int64_t ldc,
                    const Parallel& parallel, const GemmEpilogue& epilogue = {});

// C[M,N] = alpha * A * op(B) + beta * C with A prepacked (M and K come from `a`).
void GemmPackedAF32(const PackedAF32& a, bool trans_b, int64_t n, float alpha, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc, const Parallel& parallel,
                    const GemmEpilogue& epilogue = {});

// C[M,N] = alpha * A * B + beta * C with A prepacked and B already in the packed-B layout of
// PackedBF32 for panels of `nr` columns: ceil(N/nr) panels, panel p is [K][nr] row-major at
// packed_b + p*K*nr (columns past N are ignored). Producers of B (e.g. Im2ColPackedF32 in
// kernels/conv/conv.h) write this layout directly instead of a plain [K,N] matrix that the GEMM
// would copy again; pass nr = CurrentGemmTileShape().nr (another nr is accepted and repacked,
// slower). Bitwise the same results as GemmPackedAF32 on the plain B.
void GemmPackedABF32(const PackedAF32& a, const float* packed_b, int64_t nr, int64_t n,
                     float alpha, float beta, float* c, int64_t ldc, const Parallel& parallel,
                     const GemmEpilogue& epilogue = {});

// ---------------------------------------------------------------------------------------------
// Mixed storage: each of A, B and C may be float32 or 16-bit (float16 / bfloat16 bits); the
// arithmetic is the float32 GEMM above, bit for bit. A 16-bit A is widened while the driver packs
// its A block (per task and K block), a 16-bit B while its panels are packed (per call, or once
// with PackedBF32::Pack16), a 16-bit C is computed into a float32 tile per task (widened first
// when beta != 0) and rounded to 16 bits once per element. Leading dimensions count elements.
// alpha, beta and the epilogue stay float32. No float32 copy of a whole operand is made, except
// the packed B, which every GEMM makes.
enum class GemmType : int { kF32, kF16, kBF16 };
inline GemmType GemmTypeOf(Float16Kind kind) {
  return kind == Float16Kind::kBFloat16 ? GemmType::kBF16 : GemmType::kF16;
}

void GemmMixed(GemmType type_a, GemmType type_b, GemmType type_c, bool trans_a, bool trans_b,
               int64_t m, int64_t n, int64_t k, float alpha, const void* a, int64_t lda,
               const void* b, int64_t ldb, float beta, void* c, int64_t ldc,
               const Parallel& parallel, const GemmEpilogue& epilogue = {});
void GemmPackedBMixed(GemmType type_a, GemmType type_c, bool trans_a, int64_t m, float alpha,
                      const void* a, int64_t lda, const PackedBF32& b, float beta, void* c,
                      int64_t ldc, const Parallel& parallel, const GemmEpilogue& epilogue = {});
void GemmPackedAMixed(const PackedAF32& a, GemmType type_b, GemmType type_c, bool trans_b,
                      int64_t n, float alpha, const void* b, int64_t ldb, float beta, void* c,
                      int64_t ldc, const Parallel& parallel, const GemmEpilogue& epilogue = {});

// The register tile of the current dispatch target (what Pack uses): rows mr x columns nr.
struct GemmTileShape {
  int64_t mr = 0;
  int64_t nr = 0;
};
GemmTileShape CurrentGemmTileShape();

}  // namespace simplecpp::kernels
