// col2im for ConvTranspose and Col2Im (see kernels/col2im.h). Plain C++: a strided scatter-add,
// bound by memory; the innermost loop runs over a contiguous range of output columns whose image
// index is valid (computed once per row, no per-element bounds checks).
#include "kernels/col2im.h"

#include <algorithm>

namespace simplecpp::kernels {
namespace {

struct Geometry3 {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
};

Geometry3 Widen(const ConvGeometry& g) {
  Geometry3 w;
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

// The positions o in [0, out) whose image index o*stride + offset lies in [0, in).
void ValidRange(int64_t offset, int64_t stride, int64_t in, int64_t out, int64_t* lo, int64_t* hi) {
  *lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  *hi = (in - 1 - offset) < 0 ? 0 : (in - 1 - offset) / stride + 1;
  *lo = std::min(*lo, out);
  *hi = std::max(std::min(*hi, out), *lo);
}

}  // namespace

void Col2ImInitF32(int64_t channels, int64_t image_size, const float* bias, float* image,
                   const Parallel& parallel) {
  parallel.For(channels, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      std::fill(image + c * image_size, image + (c + 1) * image_size, bias ? bias[c] : 0.0f);
    }
  });
}

void Col2ImF32(const ConvGeometry& g, const float* col, int64_t channels, int64_t p_begin,
               int64_t p_count, float* image, const Parallel& parallel) {
  const Geometry3 w = Widen(g);
  const int64_t in_size = w.in[0] * w.in[1] * w.in[2];
  const int64_t p_end = p_begin + p_count;
  parallel.For(channels, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* img = image + c * in_size;
      int64_t row_index = c * w.kernel[0] * w.kernel[1] * w.kernel[2];
      for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0) {
        for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
          for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2, ++row_index) {
            const float* row = col + row_index * p_count;
            const int64_t off0 = k0 * w.dilation[0] - w.pad[0];
            const int64_t off1 = k1 * w.dilation[1] - w.pad[1];
            const int64_t off2 = k2 * w.dilation[2] - w.pad[2];
            int64_t lo2, hi2;
            ValidRange(off2, w.stride[2], w.in[2], w.out[2], &lo2, &hi2);
            if (lo2 >= hi2) continue;
            int64_t p = p_begin;
            while (p < p_end) {
              const int64_t o2 = p % w.out[2];
              const int64_t o01 = p / w.out[2];
              const int64_t o1 = o01 % w.out[1];
              const int64_t o0 = o01 / w.out[1];
              const int64_t seg_end = std::min(p_end, p - o2 + w.out[2]);
              const int64_t i0 = o0 * w.stride[0] + off0;
              const int64_t i1 = o1 * w.stride[1] + off1;
              if (i0 >= 0 && i0 < w.in[0] && i1 >= 0 && i1 < w.in[1]) {
                const int64_t a = std::max(o2, lo2);
                const int64_t b = std::min(o2 + (seg_end - p), hi2);
                float* base = img + (i0 * w.in[1] + i1) * w.in[2] + off2;
                const float* src = row + (p - p_begin) - o2;
                const int64_t s2 = w.stride[2];
                if (s2 == 1) {
                  for (int64_t ow = a; ow < b; ++ow) base[ow] += src[ow];
                } else {
                  for (int64_t ow = a; ow < b; ++ow) base[ow * s2] += src[ow];
                }
              }
              p = seg_end;
            }
          }
        }
      }
    }
  });
}

}  // namespace simplecpp::kernels
