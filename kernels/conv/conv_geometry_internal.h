// Geometry helpers shared by the im2col (kernels/conv/conv.cc), col2im (kernels/conv/col2im.cc)
// and 8-bit im2row (kernels/quant/qgemm.cc) loop nests. Not for use outside kernels/.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/conv/conv.h"

namespace simplecpp::kernels {

// A ConvGeometry widened to 3 spatial dims (leading dims of size 1, stride and dilation 1, no
// padding), so that one loop nest serves 1-D, 2-D and 3-D.
struct ConvGeometry3 {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
};

inline ConvGeometry3 WidenTo3(const ConvGeometry& g) {
  ConvGeometry3 w;
  const int lead = 3 - g.rank;
  for (int d = 0; d < 3; ++d) {
    const int s = d - lead;
    const bool used = s >= 0;
    w.in[d] = used ? g.in[s] : 1;
    w.out[d] = used ? g.out[s] : 1;
    w.kernel[d] = used ? g.kernel[s] : 1;
    w.stride[d] = used ? g.stride[s] : 1;
    w.dilation[d] = used ? g.dilation[s] : 1;
    w.pad[d] = used ? g.pad[s] : 0;
  }
  return w;
}

// The positions o in [0, out) whose image index o * stride + offset lies in [0, in), as [lo, hi):
// the inner loops then run without a bounds check per element.
inline void ValidOutputRange(int64_t offset, int64_t stride, int64_t in, int64_t out, int64_t* lo,
                             int64_t* hi) {
  *lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  *hi = (in - 1 - offset) < 0 ? 0 : (in - 1 - offset) / stride + 1;
  *lo = std::min(*lo, out);
  *hi = std::max(std::min(*hi, out), *lo);
}

// Row r of an im2col matrix (channel-major, then the kernel taps row-major): its input channel
// and its kernel tap.
struct ColRowTap {
  int64_t channel, kz, ky, kx;
};
inline ColRowTap ColRowTapAt(const ConvGeometry3& g, int64_t r) {
  const int64_t ksize = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t tap = r % ksize;
  return {r / ksize, tap / (g.kernel[1] * g.kernel[2]), (tap / g.kernel[2]) % g.kernel[1],
          tap % g.kernel[2]};
}

// Output position p (row-major over out) as coordinates, and where the run along the innermost
// dim that holds p ends (capped at p_end): the loop nests walk positions one such run at a time.
struct OutputRun {
  int64_t o0, o1, o2, end;
};
inline OutputRun OutputRunAt(const ConvGeometry3& g, int64_t p, int64_t p_end) {
  const int64_t o2 = p % g.out[2];
  const int64_t o01 = p / g.out[2];
  return {o01 / g.out[1], o01 % g.out[1], o2, std::min(p_end, p - o2 + g.out[2])};
}

}  // namespace simplecpp::kernels
