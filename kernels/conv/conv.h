// Convolution helpers around the GEMM: the geometry of an N-d convolution (1-3 spatial dims) and
// im2col, which lays out input patches as the B operand of Y[Cout, P] = W[Cout, C*kernel] x
// col[C*kernel, P] (P = output positions). The depthwise kernel is in
// kernels/conv/depthwise_conv.h.
#pragma once

#include <cstdint>

#include "kernels/elementwise/post_op.h"
#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// Spatial geometry, innermost dimension last (as in NCHW / NCDHW). Only the first `rank`
// entries are used. Padding at the end of each dimension is implied by `out`.
struct ConvGeometry {
  int rank = 0;  // 1, 2 or 3
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0};  // padding before each dimension (may exceed the input)

  int64_t InSize() const;      // product of in
  int64_t OutSize() const;     // product of out (P)
  int64_t KernelSize() const;  // product of kernel
};

// The transpose of Im2ColF32's col: rows = [p_count, channels * KernelSize()] row-major, row q
// the patch of output position p_begin + q in the order of a weight tensor's row (zeros for taps
// in the padding). For a few output positions (per position, each kernel row is one contiguous
// run of the input when the dilation along the last dim is 1). Serial.
void Im2RowF32(const ConvGeometry& g, const float* x, int64_t channels, int64_t p_begin,
               int64_t p_count, float* rows);

// Writes col = [channels * KernelSize(), p_count] row-major (row (c, k...) in the order of a
// weight tensor [Cout, channels, k...]; column q = output position p_begin + q, positions
// flattened row-major over out). Taps that fall into the padding are 0.
// x is [channels, in...] row-major. Parallel over groups of rows.
void Im2ColF32(const ConvGeometry& g, const float* x, int64_t channels, int64_t p_begin,
               int64_t p_count, float* col, const Parallel& parallel);
// The same col matrix ([channels * KernelSize(), p_count], K = rows, N = output positions),
// written straight into the GEMM's packed-B layout for panels of `nr` columns (kernels/gemm/gemm.h
// GemmPackedABF32): ceil(p_count/nr) panels, panel p is [rows][nr] at out + p*rows*nr; columns
// past p_count are zero. Saves the GEMM's copy of col. Parallel over groups of rows; small
// inputs run on the calling thread (same tasks).
void Im2ColPackedF32(const ConvGeometry& g, const float* x, int64_t channels, int64_t p_begin,
                     int64_t p_count, int64_t nr, float* out, const Parallel& parallel);
// Direct 2-D convolution (any stride, dilation and padding) with packed weights
// (kernels/conv/conv_direct.cc): y [Cout, P] (P = out_h*out_w, row-major) = W x patches(x) + bias
// (bias [Cout] or nullptr), where w = PackedAF32 of W [Cout, channels*kh*kw] and x is
// [channels, in_h, in_w]. Bitwise equal to Im2ColF32 + GemmPackedAF32 (same FMA chains), without
// the im2col matrix: the tiles read their B vectors from a zero-padded copy of x split into
// stride phases (at most kConvDirectMaxImage floats; a larger image goes in bands of output rows
// of at most kConvDirectBandImage floats of copy each). Returns false, doing nothing, when it does
// not apply (see ConvDirectApplies; also when w was packed for another SIMD target's tile).
// The limit bounds that copy's memory (32 MiB); below it the copy, one pass over the input,
// costs less than the im2col matrix's kernel-size-fold copy, also for 3x3 layers at a quarter of
// a 640x480 image with 96 channels (bench/README.md). The bands keep the dilated 3x3 layers of
// 512^2 and 1024^2 segmentation nets off the im2col matrix (9 copies of the image, written and
// read again), which bounded them by memory bandwidth at any thread count.
constexpr int64_t kConvDirectMaxImage = int64_t{1} << 23;
constexpr int64_t kConvDirectBandImage = int64_t{1} << 21;
constexpr int64_t kConvDirectMinBandRows = 4;
bool ConvDirectApplies(const ConvGeometry& g, int64_t channels);
// Output rows per band of ConvDirectF32 (out[0] when the whole image is one band).
int64_t ConvDirectBandRows(const ConvGeometry& g, int64_t channels);
// Output rows [r0, r1) of the 2-D g as a convolution of its own: the input rows its taps can
// reach start at row *first_input_row of x, with the padding the band has on top.
ConvGeometry ConvRowBand(const ConvGeometry& g, int64_t r0, int64_t r1, int64_t* first_input_row);
class PackedAF32;
// `post`, when set, is applied to each task's finished output runs.
bool ConvDirectF32(const ConvGeometry& g, const float* x, int64_t channels, const PackedAF32& w,
                   const float* bias, float* y, const Parallel& parallel,
                   const PostOpF32& post = {});
// A pointwise convolution (1x1, stride 1, no padding) as ConvDirectF32 reading x in place, with
// no copy at all, where that is safe (rows of whole vectors: no partial vector reads past x).
// Returns false, doing nothing, elsewhere. Bitwise equal to GemmPackedAF32 on x.
bool ConvPointwiseInPlaceF32(const ConvGeometry& g, const float* x, int64_t channels,
                             const PackedAF32& w, const float* bias, float* y,
                             const Parallel& parallel, const PostOpF32& post = {});
// Whether the in-place forms apply to g on the current SIMD target (1x1, stride 1, no padding,
// rows of whole vectors), for callers that set up around them.
bool ConvPointwiseInPlaceApplies(const ConvGeometry& g);
// ConvPointwiseInPlaceF32 on 16-bit x (float16 / bfloat16 bits), each vector widened as it
// loads: the float32 results of the same FMA chains on the widened x (y stays float32; `post`
// may round it). Returns false, doing nothing, where the float32 form would, and for float16 on
// targets without hardware float16 conversion (every strip of output channels would widen x
// again; the GEMM's packing widens it once).
bool ConvPointwiseInPlace16(Float16Kind kind, const ConvGeometry& g, const uint16_t* x,
                            int64_t channels, const PackedAF32& w, const float* bias, float* y,
                            const Parallel& parallel, const PostOpF32& post = {});
// Same from 16-bit x (float16 / bfloat16 bits), widened to float32 into col.
void Im2Col16(Float16Kind kind, const ConvGeometry& g, const uint16_t* x, int64_t channels,
              int64_t p_begin, int64_t p_count, float* col, const Parallel& parallel);

}  // namespace simplecpp::kernels
