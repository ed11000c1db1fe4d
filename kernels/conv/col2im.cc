// col2im for ConvTranspose and Col2Im (see kernels/conv/col2im.h). Plain C++: a strided
// scatter-add, bound by memory; the innermost loop runs over a contiguous range of output columns
// whose image index is valid (computed once per row, no per-element bounds checks).
#include "kernels/conv/col2im.h"

#include <algorithm>

#include "kernels/conv/conv_geometry_internal.h"

namespace simplecpp::kernels {

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
  const ConvGeometry3 w = WidenTo3(g);
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
            ValidOutputRange(off2, w.stride[2], w.in[2], w.out[2], &lo2, &hi2);
            if (lo2 >= hi2) continue;
            int64_t p = p_begin;
            while (p < p_end) {
              const OutputRun o = OutputRunAt(w, p, p_end);
              const int64_t o0 = o.o0, o1 = o.o1, o2 = o.o2, seg_end = o.end;
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

bool Col2ImIsDisjoint(const ConvGeometry& g) {
  for (int d = 0; d < g.rank; ++d) {
    const bool tiles = g.kernel[d] == g.stride[d] && (g.dilation[d] == 1 || g.kernel[d] == 1) &&
                       g.pad[d] == 0 && g.in[d] == g.out[d] * g.stride[d];
    if (!tiles) return false;
  }
  return true;
}

namespace {

// One run of n columns of the K2 rows (row stride ld) of one (channel, k0, k1) into an image row
// segment: dst[o * K2 + k2] = b + rows[k2 * ld + o]. A compile-time K2 lets the compiler turn
// the interleave into vector shuffles.
template <int64_t K2>
void InterleaveRun(const float* rows, int64_t ld, int64_t n, float b, float* dst) {
  for (int64_t o = 0; o < n; ++o) {
    for (int64_t k2 = 0; k2 < K2; ++k2) dst[o * K2 + k2] = b + rows[k2 * ld + o];
  }
}
void InterleaveRunAny(const float* rows, int64_t ld, int64_t n, int64_t k2s, float b, float* dst) {
  for (int64_t k2 = 0; k2 < k2s; ++k2) {
    const float* r = rows + k2 * ld;
    for (int64_t o = 0; o < n; ++o) dst[o * k2s + k2] = b + r[o];
  }
}

}  // namespace

void Col2ImDisjointF32(const ConvGeometry& g, const float* col, int64_t channels, int64_t p_begin,
                       int64_t p_count, const float* bias, float* image, const Parallel& parallel) {
  const ConvGeometry3 w = WidenTo3(g);
  const int64_t in_size = w.in[0] * w.in[1] * w.in[2];
  const int64_t k2s = w.kernel[2];
  const int64_t outer_taps = w.kernel[0] * w.kernel[1];
  const int64_t p_end = p_begin + p_count;
  parallel.For(channels * outer_taps, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c = t / outer_taps, k01 = t % outer_taps;
      const int64_t k0 = k01 / w.kernel[1], k1 = k01 % w.kernel[1];
      // No bias adds +0.0f, as the zero-initialized image does (-0.0f columns become +0.0f).
      const float b = bias ? bias[c] : 0.0f;
      const float* rows = col + (c * outer_taps + k01) * k2s * p_count;
      float* img = image + c * in_size;
      for (int64_t p = p_begin; p < p_end;) {
        const OutputRun o = OutputRunAt(w, p, p_end);
        const int64_t i0 = o.o0 * w.stride[0] + k0, i1 = o.o1 * w.stride[1] + k1;
        float* dst = img + (i0 * w.in[1] + i1) * w.in[2] + o.o2 * k2s;
        const float* src = rows + (p - p_begin);
        const int64_t n = o.end - p;
        if (k2s == 1) {
          InterleaveRun<1>(src, p_count, n, b, dst);
        } else if (k2s == 2) {
          InterleaveRun<2>(src, p_count, n, b, dst);
        } else {
          InterleaveRunAny(src, p_count, n, k2s, b, dst);
        }
        p = o.end;
      }
    }
  });
}

}  // namespace simplecpp::kernels
