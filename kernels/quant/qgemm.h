// Integer GEMM for the quantized ops (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv):
//
//   C[m,n] = sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n])      (int32, wrapping modulo 2^32)
//
// A and B are 8-bit, each uint8 or int8; za is per row (or one value), zb per column (or one
// value). The result is exact (bit-identical to an int64 reference truncated to int32) for every
// signedness combination, zero-point layout and K, on every SIMD target.
//
// How: signedness is normalized so that the core multiplies a' in [0,255] by b' in [-128,127]:
//   int8 A:  a' = a + 128, za' = za + 128      (a - za = a' - za')
//   uint8 B: b' = b - 128, zb' = zb - 128      (b - zb = b' - zb')
// and the identity  sum (a'-za')(b'-zb') = sum a'b' - zb'*rowsum(a') - za'*colsum(b') + K*za'*zb'
// is evaluated in uint32 arithmetic (so every term wraps like int32 and the sum is exact mod 2^32).
//
// The core is a register-tiled micro-kernel: B is packed once (PackedQB::Pack, e.g. at Prepare)
// into panels of kNR = 32 columns, each panel [Kq][32][4] int8 of b' (Kq = K/4 rounded up; the
// 4 consecutive k of one column are adjacent, K and N zero-padded), plus colsum(b'). A block of
// A rows is normalized to a' per call (with its row sums) and the kernel accumulates an
// MR x 32 int32 tile in registers, broadcasting 4 a' values of a row against one k-quad of the
// panel:
//  - AVX3_DL: vpdpbusd (u8 x s8 -> int32, 4 products summed into each lane; it does not saturate,
//    unlike vpmaddubsw, so it is exact), one 512-bit load = 16 columns x 4 k, 6 x 64 tiles over
//    two panels (8 x 32 on a lone panel).
//  - other targets: the quad is sign-extended to int16 and multiplied pairwise
//    (ReorderWidenMulAccumulate, vpmaddwd on x86: |pair sum| <= 2*255*128, nothing saturates);
//    the two pair sums of a column are added at the end of each K block.
// int32 lane sums wrap modulo 2^32, and integer addition is associative modulo 2^32, so the
// order of the partial sums (K blocking, lanes) cannot change the result.
//
// Threading: tasks are blocks of rows x columns whose sizes are problem-size constants; each C
// element is written by exactly one task, so results never depend on the thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/parallel.h"
#include "quant/packed_formats.h"

namespace simplecpp::kernels {

// Packed layout format of PackedQB: the ids live in quant/packed_formats.h (append-only).
using quant::QGemmPackFormat;

class PackedQB {
 public:
  static constexpr int64_t kKAlign = 4;   // k per quad: K is zero-padded to a multiple of it
  static constexpr int64_t kNR = 32;      // columns per panel (N is zero-padded to a multiple)
  static constexpr QGemmPackFormat kFormat = QGemmPackFormat::kI8PanelsK4V2;

  // Packs op(B) [K,N] of 8-bit values (int8 when b_signed, else uint8):
  //   trans_b == false: B stored [K,N], element (k,n) at b[k*ldb + n]
  //   trans_b == true:  B stored [N,K], element (k,n) at b[n*ldb + k]
  static std::shared_ptr<const PackedQB> Pack(bool b_signed, bool trans_b, int64_t k, int64_t n,
                                              const void* b, int64_t ldb);
  // Pack's result in this object, reusing its storage (B packed per call, e.g. a convolution's
  // activations with swapped operands, from a buffer kept per thread).
  void Repack(bool b_signed, bool trans_b, int64_t k, int64_t n, const void* b, int64_t ldb);
  // Repack of B = Im2ColBytes(g, x, channels, p_begin, p_count, pad_value) ([channels *
  // kernel size, p_count], b_signed as x's type), packed straight from x where the target can
  // (kernels/quant/pack_im2col.cc): the same panels and column sums, without the matrix.
  void RepackIm2Col(bool b_signed, const ConvGeometry& g, const uint8_t* x, int64_t channels,
                    int64_t p_begin, int64_t p_count, uint8_t pad_value);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t kp() const { return kp_; }  // K rounded up to kKAlign (= 4 * quads)
  int64_t panels() const { return (n_ + kNR - 1) / kNR; }
  bool b_signed() const { return b_signed_; }
  // b' = b + shift(): 0 for int8, -128 for uint8.
  int32_t shift() const { return b_signed_ ? 0 : -128; }
  // [panels][Kp/4][kNR][4] int8 of b': b'[k,n] at
  //   ((n / kNR * (Kp/4) + k / 4) * kNR + n % kNR) * 4 + k % 4; padding is 0.
  const int8_t* data() const { return data_.data(); }
  const int32_t* col_sums() const { return col_sums_.data(); }  // [N]: sum_k b'[k,n] (wrapping)

  PackedQB(bool b_signed, int64_t k, int64_t n);  // zero-filled; use Pack

 private:
  // The shape of a repacked B: storage for its panels (the last one zeroed where N leaves
  // columns a packer does not write) and its column sums.
  void Reshape(bool b_signed, int64_t k, int64_t n);

  bool b_signed_;
  int64_t k_, n_, kp_;
  std::vector<int8_t> data_;
  std::vector<int32_t> col_sums_;
};

// Integer products below this many multiply-adds run on the calling thread (the same tasks, so
// the same results): waking a second thread costs more than it saves there (bench/README.md has
// the measurements). Four times the float32 GEMM's threshold: the VNNI core does about four times
// the multiply-adds per cycle.
constexpr int64_t kQGemmSerialMacs = int64_t{1} << 22;

// C[M,N] (ldc = row stride in elements) = (A - za) * (B - zb) as above, named by A's type (B's,
// uint8 or int8, is the packed PackedQB's).
//   a: [M,K] row-major with row stride lda. When lda is at least K rounded up to a multiple of 4
//      (Kp), each row's first Kp bytes are read: the ones past K meet B's zero padding, so their
//      values do not matter, but they must be readable. uint8 A is then multiplied in place (no
//      normalized copy); with lda < Kp only K bytes per row are read.
//   a_zp: nullptr (all 0), one value (a_zp_step == 0) or M values (a_zp_step == 1), in the
//         range of A's type, widened to int32.
//   b_zp: nullptr, one value (b_zp_step == 0) or N values (b_zp_step == 1), in B's type's range.
void QGemmU8ToI32(int64_t m, const uint8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                  const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, int32_t* c,
                  int64_t ldc, const Parallel& parallel);
void QGemmS8ToI32(int64_t m, const int8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                  const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, int32_t* c,
                  int64_t ldc, const Parallel& parallel);

// Takes the finished blocks of C from QGemmU8ToSink / QGemmS8ToSink while they are in cache: rows
// [m0, m0 + rows) and columns [n0, n0 + cols) of C, as int32 at c (row stride ldc; valid during the
// call only). The blocks partition C, each is delivered once, by the task that computed it (on any
// thread, concurrently with other blocks), and their bounds do not depend on the thread count.
class QGemmSink {
 public:
  virtual void Block(int64_t m0, int64_t rows, int64_t n0, int64_t cols, const int32_t* c,
                     int64_t ldc) const = 0;

 protected:
  ~QGemmSink() = default;
};

// QGemmU8ToI32 / QGemmS8ToI32 without a C matrix: each block of C goes to `sink` (a fused
// epilogue: the float scale of MatMulIntegerToFloat, QLinearConv's requantization) instead of
// memory.
void QGemmU8ToSink(int64_t m, const uint8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                   const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, const QGemmSink& sink,
                   const Parallel& parallel);
void QGemmS8ToSink(int64_t m, const int8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                   const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, const QGemmSink& sink,
                   const Parallel& parallel);

// Requantization fused into the GEMM (QLinearConv, QLinearMatMul): C never reaches memory as
// int32; out[i * ldo + j] = quant::RequantizeValue(C[i,j] + bias, mult, zp, lo, hi) as an 8-bit
// value (int8 when out_signed), bias and mult per row of C (per_row) or per column, so the bytes
// equal QGemm*ToI32 followed by RequantizeBiasRowsI32To* (per column) or
// RequantizePerRowI32To* (per row) of kernels/quant/quantize.h. On VNNI the tiles of full
// panels requantize their sums in registers where the float32 lanes decide every value exactly
// (8-bit zero point and range, every |mult| in [2^-60, 1)); other columns, targets and
// parameters go through a per-task int32 block and those kernels.
struct QGemmRequant {
  bool per_row = false;           // bias and mult index C's rows (true) or its columns
  const int32_t* bias = nullptr;  // nullptr, or one per row / column
  const float* mult = nullptr;    // one value (mult_step 0) or one per row / column (1)
  int64_t mult_step = 0;
  int32_t zp = 0, lo = 0, hi = 255;
  bool out_signed = false;
  void* out = nullptr;  // element (0, 0) of the 8-bit result
  int64_t ldo = 0;      // its row stride in elements
};
// Whether QGemm*ToBytes requantizes in the tiles on this CPU's target for these parameters of an
// m x n C (else it goes through int32 blocks, and a caller with its own int32 path and
// requantization of whole blocks may prefer that).
bool QGemmFusesRequant(const QGemmRequant& rq, int64_t m, int64_t n);
void QGemmU8ToBytes(int64_t m, const uint8_t* a, int64_t lda, const int32_t* a_zp,
                    int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                    const QGemmRequant& rq, const Parallel& parallel);
void QGemmS8ToBytes(int64_t m, const int8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                    const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                    const QGemmRequant& rq, const Parallel& parallel);

// The 8-bit "im2row" for integer convolution: rows[q][(c, k...)] for output positions
// p_begin..p_begin+p_count-1 (row-major over out), columns in the order of a weight tensor
// [Cout, channels, k...] (so the rows are the GEMM's A with the weights as op(B) stored [N,K]).
// x is [channels, in...] bytes. Taps in the padding get `pad_value` (the input's zero point, so
// they contribute nothing after the zero point is subtracted).
void Im2RowBytes(const ConvGeometry& g, const uint8_t* x, int64_t channels, int64_t p_begin,
                 int64_t p_count, uint8_t pad_value, uint8_t* rows, const Parallel& parallel);

// The transpose of Im2RowBytes' rows: col[(c, k...)][q] (row stride ldc >= p_count) for output
// positions p_begin..p_begin+p_count-1, from a channels-first x [channels, in...]; taps in the
// padding get pad_value. Row-major over K, so it packs as a GEMM's B stored [K, N]. Serial.
void Im2ColBytes(const ConvGeometry& g, const uint8_t* x, int64_t channels, int64_t p_begin,
                 int64_t p_count, uint8_t pad_value, uint8_t* col, int64_t ldc);

// The same rows from a channels-last input, with the columns in (k..., c) order (channel
// innermost): rows[q][(k..., c)] for positions p_begin..p_begin+p_count-1. xt is
// [in..., channels] bytes (x transposed so one pixel's channels are adjacent), which turns each
// kernel row of taps into one contiguous copy of kernel[last] * channels bytes (dilation 1) and
// makes every tap a copy of `channels` bytes. The GEMM's weights must be ordered [Cout, k...,
// channels] to match.
// Rows are row_stride >= channels * kernel size bytes apart; the bytes between get pad_value
// (a stride of K rounded up to 4 lets QGemmU8ToI32 read the rows in place).
void Im2RowBytesChannelsLast(const ConvGeometry& g, const uint8_t* xt, int64_t channels,
                             int64_t p_begin, int64_t p_count, uint8_t pad_value, uint8_t* rows,
                             int64_t row_stride, const Parallel& parallel);

}  // namespace simplecpp::kernels
