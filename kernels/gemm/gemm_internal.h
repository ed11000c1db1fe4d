// Internals shared by the float32 GEMM files (kernels/gemm/gemm.cc, kernels/gemm/gemm_pack.cc; the
// scratch buffers also by the other kernels that feed the GEMM, e.g.
// kernels/quant/matmul_nbits.cc): the packed layouts, the packing routines and the description of
// one GEMM call handed to the per-target driver. Not for use outside kernels/.
//
// Packed layouts (mr, nr = the register tile of the SIMD target):
//   packed B: ceil(N/nr) panels; panel p is [K][nr] row-major: element (k, j) of op(B) at
//             p*K*nr + k*nr + (j - p*nr), with p = j / nr. Columns past N are zero.
//   packed A: ceil(M/mr) strips; strip s is [K'][mr]: element (i, k) at s*K'*mr + k*mr + (i - s*mr)
//             (K' = K for a whole PackedAF32, K' = the K block size for the driver's own packing).
//             Rows past M are zero.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm/gemm.h"

namespace simplecpp::kernels {

// Aligned (64-byte) float buffers.
float* AllocateFloats(int64_t count);  // contents undefined
void FreeFloats(float* p);

// A per-thread growable scratch buffer (contents undefined after Get).
class ThreadScratch {
 public:
  ~ThreadScratch() { FreeFloats(data_); }
  float* Get(int64_t count);

 private:
  float* data_ = nullptr;
  int64_t capacity_ = 0;
};

// Packs columns [panel_begin*nr, panel_end*nr) of op(B) ([K,N]) into `out` (whole packed-B
// buffer; panel p goes to out + p*k*nr).
void PackBPanels(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, int64_t nr,
                 int64_t panel_begin, int64_t panel_end, float* out);

// Packs rows [i0, i0+rows) x columns [k0, k0+kc) of op(A) into ceil(rows/mr) strips of [kc][mr]
// at out + s*kc*mr (rows past `rows` zero-filled).
void PackABlock(bool trans_a, const float* a, int64_t lda, int64_t i0, int64_t rows, int64_t k0,
                int64_t kc, int64_t mr, float* out);

// 16-bit versions (float16 / bfloat16 bits, widened to float32 while packing).
void PackBPanels16(Float16Kind kind, bool trans_b, int64_t k, int64_t n, const uint16_t* b,
                   int64_t ldb, int64_t nr, int64_t panel_begin, int64_t panel_end, float* out);
void PackABlock16(Float16Kind kind, bool trans_a, const uint16_t* a, int64_t lda, int64_t i0,
                  int64_t rows, int64_t k0, int64_t kc, int64_t mr, float* out);

// C[M,1] = alpha * A * b + beta * C, then the epilogue, with A packed for the current target
// (strips of [K][mr]); b[k] at b[k * b_step]. The same bits as the GEMM's tiles
// (kernels/gemm/gemv_packed_a.cc).
void GemvPackedAF32(const float* pa, int64_t m, int64_t k, const float* b, int64_t b_step,
                    float alpha, float beta, float* c, int64_t ldc, const GemmEpilogue& e,
                    const Parallel& parallel);

// One GEMM call as the per-target driver sees it. B is packed (nr of the target), or 16-bit and
// packed per task (b16); A is either packed (pa != nullptr, mr of the target, strips of
// [K][mr]) or raw.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const float* pa = nullptr;
  const float* a = nullptr;
  int64_t lda = 0;
  bool trans_a = false;
  const float* pb = nullptr;
  float* c = nullptr;
  int64_t ldc = 0;
  GemmEpilogue epilogue;
  // 16-bit storage (kernels/gemm/gemm.h "Mixed storage"): when a16 is set it replaces a; when c16
  // is set it replaces c (each task computes a float32 tile and rounds it into c16).
  const uint16_t* a16 = nullptr;
  Float16Kind a_kind = Float16Kind::kHalf;
  uint16_t* c16 = nullptr;
  Float16Kind c_kind = Float16Kind::kHalf;
  // A 16-bit op(B) [K,N] stored as is (ld = ldb, not transposed), used when pb is nullptr: each
  // task widens the panels of its own columns per K block while packing them, so no float32
  // copy of the whole B is written and read back.
  const uint16_t* b16 = nullptr;
  Float16Kind b_kind = Float16Kind::kHalf;
  int64_t ldb = 0;
};

}  // namespace simplecpp::kernels
