// The byte matrix transpose of kernels/memory/transpose.h (TransposeByteMatrix): 16 x 16 blocks in
// 128-bit vectors, which every target has (WASM and EMU128 included). Sixteen rows of one block
// are transposed by four rounds of the same step, "zip row i with row i + 8" (bytes interleaved:
// InterleaveLower / InterleaveUpper): after log2(16) = 4 perfect shuffles, row i holds column i.
// Pure data movement, so every target gives the same bytes. The edges (fewer than 16 rows or
// columns) take the same transpose on a staged 16 x 16 tile, except 2 to 4 rows into a dense
// output, which are interleaving stores (StoreInterleaved2/3/4).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/memory/transpose_byte_matrix.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/memory/transpose.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void TransposeByteMatrixImpl(const uint8_t* HWY_RESTRICT in, int64_t ldi, uint8_t* HWY_RESTRICT out,
                             int64_t ldo, int64_t rows, int64_t cols) {
  if (ldo == rows && rows >= 2 && rows <= 4) {
    // 2 to 4 rows into dense output (e.g. the 3 planes of an image into pixels): interleaving
    // stores of whole vectors, one per row.
    const hn::ScalableTag<uint8_t> dv;
    const int64_t N = static_cast<int64_t>(hn::Lanes(dv));
    int64_t j = 0;
    for (; j + N <= cols; j += N) {
      const auto v0 = hn::LoadU(dv, in + j);
      const auto v1 = hn::LoadU(dv, in + ldi + j);
      if (rows == 2) {
        hn::StoreInterleaved2(v0, v1, dv, out + j * 2);
      } else if (rows == 3) {
        hn::StoreInterleaved3(v0, v1, hn::LoadU(dv, in + 2 * ldi + j), dv, out + j * 3);
      } else {
        hn::StoreInterleaved4(v0, v1, hn::LoadU(dv, in + 2 * ldi + j),
                              hn::LoadU(dv, in + 3 * ldi + j), dv, out + j * 4);
      }
    }
    for (; j < cols; ++j) {
      for (int64_t i = 0; i < rows; ++i) out[j * rows + i] = in[i * ldi + j];
    }
    return;
  }
  const hn::Full128<uint8_t> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t full_rows = rows / 16 * 16, full_cols = cols / 16 * 16;
  auto transpose16 = [&](V* r) {
    V t[16];
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 8; ++i) {
        t[2 * i] = hn::InterleaveLower(d, r[i], r[i + 8]);
        t[2 * i + 1] = hn::InterleaveUpper(d, r[i], r[i + 8]);
      }
      for (int i = 0; i < 16; ++i) r[i] = t[i];
    }
  };
  for (int64_t i0 = 0; i0 < full_rows; i0 += 16) {
    for (int64_t j0 = 0; j0 < full_cols; j0 += 16) {
      V r[16];
      for (int i = 0; i < 16; ++i) r[i] = hn::LoadU(d, in + (i0 + i) * ldi + j0);
      transpose16(r);
      for (int j = 0; j < 16; ++j) hn::StoreU(r[j], d, out + (j0 + j) * ldo + i0);
    }
  }
  // Edge blocks (h < 16 rows or w < 16 columns, e.g. a convolution's 24 or 36 channels) go
  // through the same vector transpose on a staged 16 x 16 tile: a row is loaded whole where its
  // 16 bytes lie within the matrix's extent (the bytes past w are never stored), else copied;
  // only the h x w transposed bytes are written.
  const int64_t extent = (rows - 1) * ldi + cols;  // bytes from `in` to the matrix's end
  auto edge_block = [&](int64_t i0, int64_t j0, int64_t h, int64_t w) {
    HWY_ALIGN uint8_t staged[16 * 16] = {};
    V r[16];
    for (int64_t i = 0; i < 16; ++i) {
      const int64_t at = (i0 + i) * ldi + j0;
      if (i < h && at + 16 <= extent) {
        r[i] = hn::LoadU(d, in + at);
      } else {
        if (i < h) std::memcpy(staged + i * 16, in + at, static_cast<size_t>(w));
        r[i] = hn::Load(d, staged + i * 16);
      }
    }
    transpose16(r);
    for (int64_t j = 0; j < w; ++j) {
      if (h == 16) {
        hn::StoreU(r[j], d, out + (j0 + j) * ldo + i0);
      } else {
        hn::Store(r[j], d, staged + j * 16);
        std::memcpy(out + (j0 + j) * ldo + i0, staged + j * 16, static_cast<size_t>(h));
      }
    }
  };
  for (int64_t i0 = 0; i0 < rows; i0 += 16) {
    const int64_t h = std::min<int64_t>(16, rows - i0);
    if (full_cols < cols) edge_block(i0, full_cols, h, cols - full_cols);
    if (h == 16) continue;
    for (int64_t j0 = 0; j0 < full_cols; j0 += 16) edge_block(i0, j0, h, 16);
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
