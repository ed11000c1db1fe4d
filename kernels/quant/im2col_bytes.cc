// The 8-bit im2col (kernels/quant/qgemm.h Im2ColBytes): the matrix [channels * kernel size,
// p_count] of a channels-first input, row (c, k...) per weight-tensor order. Each row is a run of
// input bytes per output row: a copy at stride 1, the even bytes of twice as many (one
// ConcatEven per vector) at stride 2, a byte loop at other strides; taps in the padding hold the
// pad byte.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/im2col_bytes.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "kernels/conv/conv_geometry_internal.h"
#include "kernels/quant/qgemm.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = src[2 * i] for i in [i0, n) with vectors of d's lanes, reading no byte past
// src[2 * (n - 1)]; returns where it stopped (n, or i0 when the run is too short for d).
template <class D>
inline int64_t EvenBytesWith(D d, const uint8_t* HWY_RESTRICT src, int64_t i0, int64_t n,
                             uint8_t* HWY_RESTRICT dst) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // The vector pair at 2i covers bytes [2i, 2i + 2N): all within the run while 2i + 2N - 1 <=
  // 2(n - 1), i.e. i + N < n.
  if (i0 + N >= n) return i0;
  int64_t i = i0;
  for (; i + N < n; i += N) {
    hn::StoreU(hn::ConcatEven(d, hn::LoadU(d, src + 2 * i + N), hn::LoadU(d, src + 2 * i)), d,
               dst + i);
  }
  // The rest but the last byte as one vector overlapping the one before (the same bytes again),
  // then that byte: a run of 64-95 bytes (a 192-pixel row at stride 2) costs three vectors
  // instead of a byte loop over its last third.
  if (i < n - 1) {
    const int64_t at = n - 1 - N;
    hn::StoreU(hn::ConcatEven(d, hn::LoadU(d, src + 2 * at + N), hn::LoadU(d, src + 2 * at)), d,
               dst + at);
  }
  dst[n - 1] = src[2 * (n - 1)];
  return n;
}

// dst[i] = src[2 * i] for i < n, reading no byte past src[2 * (n - 1)]: whole vectors, or
// 16-byte ones for a run shorter than a whole vector's pair.
inline void EvenBytes(const uint8_t* HWY_RESTRICT src, int64_t n, uint8_t* HWY_RESTRICT dst) {
  int64_t i = EvenBytesWith(hn::ScalableTag<uint8_t>(), src, 0, n, dst);
  if (i < n) i = EvenBytesWith(hn::Full128<uint8_t>(), src, i, n, dst);
  for (; i < n; ++i) dst[i] = src[2 * i];
}

// dst[0, n) = pad: a byte loop for the one or two bytes of a kernel tap past an image edge
// (most calls), memset for whole padding rows.
inline void FillPad(uint8_t* HWY_RESTRICT dst, uint8_t pad, int64_t n) {
  if (n > 16) {
    std::memset(dst, pad, static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = pad;
}

void Im2ColBytesImpl(const ConvGeometry& geometry, const uint8_t* x, int64_t channels,
                     int64_t p_begin, int64_t p_count, uint8_t pad_value, uint8_t* col,
                     int64_t ldc) {
  const ConvGeometry3 g = WidenTo3(geometry);
  const int64_t ksize = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const OutputRun first = OutputRunAt(g, p_begin, p_begin + p_count);
  for (int64_t r = 0; r < channels * ksize; ++r) {
    const ColRowTap t = ColRowTapAt(g, r);
    const int64_t off_x = t.kx * g.dilation[2] - g.pad[2];
    int64_t x_lo, x_hi;
    ValidOutputRange(off_x, g.stride[2], g.in[2], g.out[2], &x_lo, &x_hi);
    const uint8_t* xc = x + t.channel * in_size;
    uint8_t* dst = col + r * ldc;
    int64_t ox0 = first.o2, oy = first.o1, oz = first.o0;
    for (int64_t q = 0; q < p_count;) {
      // One run along the innermost output dimension.
      const int64_t run = std::min(g.out[2] - ox0, p_count - q);
      const int64_t iz = oz * g.stride[0] + t.kz * g.dilation[0] - g.pad[0];
      const int64_t iy = oy * g.stride[1] + t.ky * g.dilation[1] - g.pad[1];
      uint8_t* d = dst + q;
      if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
        FillPad(d, pad_value, run);
      } else {
        const int64_t lo = std::min(std::max(x_lo, ox0), ox0 + run);
        const int64_t hi = std::max(std::min(x_hi, ox0 + run), lo);
        FillPad(d, pad_value, lo - ox0);
        const uint8_t* src = xc + (iz * g.in[1] + iy) * g.in[2] + lo * g.stride[2] + off_x;
        uint8_t* mid = d + (lo - ox0);
        if (g.stride[2] == 1) {
          std::memcpy(mid, src, static_cast<size_t>(hi - lo));
        } else if (g.stride[2] == 2) {
          EvenBytes(src, hi - lo, mid);
        } else {
          for (int64_t i = 0; i < hi - lo; ++i) mid[i] = src[i * g.stride[2]];
        }
        FillPad(d + (hi - ox0), pad_value, ox0 + run - hi);
      }
      q += run;
      ox0 = 0;
      if (++oy == g.out[1]) {
        oy = 0;
        ++oz;
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(Im2ColBytesImpl);

void Im2ColBytes(const ConvGeometry& g, const uint8_t* x, int64_t channels, int64_t p_begin,
                 int64_t p_count, uint8_t pad_value, uint8_t* col, int64_t ldc) {
  if (channels <= 0 || p_count <= 0) return;
  HWY_DYNAMIC_DISPATCH(Im2ColBytesImpl)(g, x, channels, p_begin, p_count, pad_value, col, ldc);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
