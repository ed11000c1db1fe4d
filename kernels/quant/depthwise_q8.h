// Exact int32 sums of one depthwise-convolution channel on 8-bit data: the integer core of a
// quantized depthwise convolution (QLinearConv / ConvInteger with one input channel per group).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/quant/qgemm.h"  // QGemmRequant

namespace simplecpp::kernels {

// One channel's geometry on an already padded plane: the plane is [H][W] bytes (row stride W),
// output (oy, ox) reads rows oy * SH + ky and columns ox * SW + kx (dilation 1, no padding left to
// apply), for ky < KH, kx < KW.
struct DepthwiseQ8Shape {
  int64_t H = 0, W = 0, OH = 0, OW = 0, KH = 0, KW = 0, SH = 1, SW = 1;
  // Rows [0, rows_begin) and [rows_end, H) hold only the byte `pad` (the zero-point border of a
  // padded plane): their taps are added as pad * w without being read, so that a short plane
  // under a tall kernel (2 image rows, 4 border rows under 5x5) costs its image rows only. The
  // sums are the same.
  int64_t rows_begin = 0, rows_end = -1;  // rows_end < 0: H
  uint8_t pad = 0;
  // DepthwiseQ8Sums computes output rows [oy_begin, oy_end) only (oy_end < 0: OH), so that a
  // caller can take a band of rows while its sums are in cache.
  int64_t oy_begin = 0, oy_end = -1;
};

// Bytes the plane buffer must hold past its last row (the kernel loads 64-byte windows that
// start up to 4 bytes past a row's last kernel column).
constexpr int64_t kDepthwiseQ8Slack = 128;

// Whether this SIMD target has the byte kernel for `s` (AVX-512 VBMI + VNNI: kernels up to 8
// columns wide, SW 1 or 2). Elsewhere callers take their portable path (the float32 depthwise
// kernel on exactly representable values: graph/ops/quant/conv_integer.cc).
bool DepthwiseQ8Available(const DepthwiseQ8Shape& s);

// The rows [rows_begin, rows_end) of the padded plane from one channel x [h, w] (h = rows_end -
// rows_begin image rows placed at column pad_left): each row is `pad` for pad_left bytes, x's
// row with every byte XOR flip (128 maps int8 to the kernel's uint8), then `pad` to the row's end
// (s.W bytes). The border rows above and below are not written: DepthwiseQ8Sums does not read
// them, nor are the kDepthwiseQ8Slack bytes after the last image row: the kernel reads bytes
// past a row's last kernel column only for taps of weight zero (a kernel row's last dword) and
// for output columns past OW, whose sums it does not store. One pass of whole-vector (masked)
// loads and stores per row where the target has the byte kernel (up to 63 bytes past a row may
// be written: the next row's or the slack); byte copies elsewhere.
void DepthwiseQ8Plane(const DepthwiseQ8Shape& s, const uint8_t* x, int64_t w, int64_t pad_left,
                      uint8_t flip, uint8_t* plane);

// sums[(oy - oy_begin) * OW + ox] = sum over (ky, kx) of plane[oy*SH + ky][ox*SW + kx] *
// w[ky * KW + kx] for the output rows oy of [oy_begin, oy_end), plane bytes read as uint8 and
// weights as int8: exact (each sum is below 2^31 for KH * KW <= 64 taps). The plane buffer
// holds H * W + kDepthwiseQ8Slack bytes. Only where DepthwiseQ8Available(s).
void DepthwiseQ8Sums(const DepthwiseQ8Shape& s, const uint8_t* plane, const int8_t* w,
                     int32_t* sums);

// Depthwise weights [channels][KH * KW] in the byte kernel's form, prepared once: per channel
// and kernel row, the taps as dwords of 4 (zero past KW), and per channel the running sums of
// its kernel rows (the sum of the rows that fall on border rows, times the pad byte, is a
// border's share of a sum: two lookups per output row).
struct DepthwiseQ8Weights {
  int64_t KH = 0, KW = 0, groups = 0;  // groups = (KW + 3) / 4 dwords per kernel row
  std::vector<int32_t> dwords;         // [channels][KH][groups]
  std::vector<int32_t> row_prefix;     // [channels][KH + 1]: sums of the kernel rows before k
};
DepthwiseQ8Weights PrepareDepthwiseQ8Weights(int64_t kh, int64_t kw, const int8_t* w,
                                             int64_t channels);

// Several channels in one call (a small plane's sums cost little next to a call's set-up):
// `count` output channels, channel j from the plane at planes + (j / mult) * plane_stride (mult
// output channels per plane), weights of channel first + j of w (KH and KW as s's), sums at
// sums + j * sums_stride. Each channel's sums are DepthwiseQ8Sums'.
struct DepthwiseQ8Channels {
  int64_t count = 1, mult = 1, plane_stride = 0, sums_stride = 0;
  int64_t first = 0;
};
void DepthwiseQ8SumsChannels(const DepthwiseQ8Shape& s, const DepthwiseQ8Channels& ch,
                             const uint8_t* planes, const DepthwiseQ8Weights& w, int32_t* sums);

// DepthwiseQ8Plane of `count` channels: channel c from x + c * x_stride into planes + c *
// plane_stride (plane_stride >= H * W + kDepthwiseQ8Slack); the row masks are computed once.
void DepthwiseQ8Planes(const DepthwiseQ8Shape& s, const uint8_t* x, int64_t x_stride, int64_t w,
                       int64_t pad_left, uint8_t flip, int64_t count, uint8_t* planes,
                       int64_t plane_stride);

// DepthwiseQ8SumsChannels with the requantization in the kernel, in registers: channel j's sums
// plus rq.bias[j] (wrapping int32), times rq.mult[j * rq.mult_step], rounded half to even, plus
// rq.zp, clamped to [rq.lo, rq.hi] and stored as 8-bit bytes (int8 where rq.out_signed) at
// rq.out + j * rq.ldo + (oy - oy_begin) * OW + ox: RequantizeF32Vec's bytes (rq.per_row: one
// bias and multiplier per channel of the call). Only where DepthwiseQ8FusesRequant(s, rq,
// ch.count).
bool DepthwiseQ8FusesRequant(const DepthwiseQ8Shape& s, const QGemmRequant& rq, int64_t channels);
void DepthwiseQ8RequantChannels(const DepthwiseQ8Shape& s, const DepthwiseQ8Channels& ch,
                                const uint8_t* planes, const DepthwiseQ8Weights& w,
                                const QGemmRequant& rq);

}  // namespace simplecpp::kernels
