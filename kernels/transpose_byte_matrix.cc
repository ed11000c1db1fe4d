// The byte matrix transpose of kernels/transpose.h (TransposeByteMatrix): 16 x 16 blocks in
// 128-bit vectors, which every target has (WASM and EMU128 included). Sixteen rows of one block
// are transposed by four rounds of the same step, "zip row i with row i + 8" (bytes interleaved:
// InterleaveLower / InterleaveUpper): after log2(16) = 4 perfect shuffles, row i holds column i.
// Pure data movement, so every target gives the same bytes. The edges (fewer than 16 rows or
// columns) are copied one byte at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/transpose_byte_matrix.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>

#include "kernels/transpose.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void TransposeByteMatrixImpl(const uint8_t* HWY_RESTRICT in, int64_t ldi, uint8_t* HWY_RESTRICT out,
                             int64_t ldo, int64_t rows, int64_t cols) {
  const hn::Full128<uint8_t> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t full_rows = rows / 16 * 16, full_cols = cols / 16 * 16;
  for (int64_t i0 = 0; i0 < full_rows; i0 += 16) {
    for (int64_t j0 = 0; j0 < full_cols; j0 += 16) {
      V r[16], t[16];
      for (int i = 0; i < 16; ++i) r[i] = hn::LoadU(d, in + (i0 + i) * ldi + j0);
      for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 8; ++i) {
          t[2 * i] = hn::InterleaveLower(d, r[i], r[i + 8]);
          t[2 * i + 1] = hn::InterleaveUpper(d, r[i], r[i + 8]);
        }
        for (int i = 0; i < 16; ++i) r[i] = t[i];
      }
      for (int j = 0; j < 16; ++j) hn::StoreU(r[j], d, out + (j0 + j) * ldo + i0);
    }
  }
  // Edges: the columns past the last full block (all rows), then the rows past it.
  for (int64_t j = full_cols; j < cols; ++j) {
    for (int64_t i = 0; i < rows; ++i) out[j * ldo + i] = in[i * ldi + j];
  }
  for (int64_t j = 0; j < full_cols; ++j) {
    for (int64_t i = full_rows; i < rows; ++i) out[j * ldo + i] = in[i * ldi + j];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(TransposeByteMatrixImpl);

void TransposeByteMatrix(const uint8_t* in, int64_t ldi, uint8_t* out, int64_t ldo, int64_t rows,
                         int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(TransposeByteMatrixImpl)(in, ldi, out, ldo, rows, cols);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
