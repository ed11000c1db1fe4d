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

}  // namespace simplecpp::kernels
