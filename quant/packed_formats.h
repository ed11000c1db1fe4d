// Ids of the packed weight layouts simplecpp builds (once, at Prepare) for its kernels. The
// numbering is append-only: a changed layout gets a new id and the old one stays reserved, so
// a stored or logged id always names one layout. The packing code itself is SIMD and lives with
// its kernel; this is only the vocabulary. Plain data: no graph, no Highway.
//
// MatMulNBits' weights have no id here: they keep ONNX Runtime's file layout as given
// (kernels/quant/matmul_nbits.h describes it), so simplecpp defines no layout of its own for
// them.
#pragma once

#include <cstdint>

namespace simplecpp::quant {

// Layouts of the integer GEMM's packed B (kernels::PackedQB, kernels/quant/qgemm.h): B [K,N] of
// 8-bit values, stored as b' = b + shift (int8 b: shift 0; uint8 b: shift -128).
enum class QGemmPackFormat : int32_t {
  // Retired: int16 rows, one per column, [N][Kp] (Kp = K rounded up to 4).
  kI16RowsPerColumnV1 = 1,
  // int8 panels of 32 columns, [N/32][Kq][32][4] (Kq = ceil(K/4)): the 4 consecutive k of one
  // column adjacent, K and N zero-padded; with the column sums of b'.
  kI8PanelsK4V2 = 2,
};

}  // namespace simplecpp::quant
