// col2im for ConvTranspose, QLinearConvTranspose and Col2Im (see kernels/conv/col2im.h). Plain
// C++: a strided scatter-add, bound by memory; the innermost loop runs over a contiguous range of
// output columns whose image index is valid (computed once per row, no per-element bounds
// checks). One template serves float32 and int32; int32 adds in uint32 so that they wrap modulo
// 2^32 like the int32 sums of the integer ops (and, being associative, in any order).
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

namespace {

// img[i...] += row[q] for tap (k0, k1, k2) of one channel over the columns [p_begin, p_end)
// whose image index lies inside; row holds the tap's values of columns p_begin...
template <typename T>
void AddTap(const ConvGeometry3& w, const T* row, int64_t p_begin, int64_t p_end, int64_t k0,
            int64_t k1, int64_t k2, T* img) {
  const int64_t off0 = k0 * w.dilation[0] - w.pad[0];
  const int64_t off1 = k1 * w.dilation[1] - w.pad[1];
  const int64_t off2 = k2 * w.dilation[2] - w.pad[2];
  int64_t lo2, hi2;
  ValidOutputRange(off2, w.stride[2], w.in[2], w.out[2], &lo2, &hi2);
  if (lo2 >= hi2) return;
  int64_t p = p_begin;
  while (p < p_end) {
    const OutputRun o = OutputRunAt(w, p, p_end);
    const int64_t o0 = o.o0, o1 = o.o1, o2 = o.o2, seg_end = o.end;
    const int64_t i0 = o0 * w.stride[0] + off0;
    const int64_t i1 = o1 * w.stride[1] + off1;
    if (i0 >= 0 && i0 < w.in[0] && i1 >= 0 && i1 < w.in[1]) {
      const int64_t a = std::max(o2, lo2);
      const int64_t b = std::min(o2 + (seg_end - p), hi2);
      T* base = img + (i0 * w.in[1] + i1) * w.in[2] + off2;
      const T* src = row + (p - p_begin) - o2;
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

// base[ow * S + r] += src[r * ld + ow] for ow in [a, b), r < S: S taps filling S adjacent
// elements per column, one contiguous pass (a compile-time S lets the compiler interleave in
// vector registers).
template <int64_t S, typename T>
void AddInterleaved(const T* src, int64_t ld, int64_t a, int64_t b, T* base) {
  for (int64_t ow = a; ow < b; ++ow) {
    for (int64_t r = 0; r < S; ++r) base[ow * S + r] += src[r * ld + ow];
  }
}

// Taps k2 .. k2 + nt - 1 of one (channel, k0, k1), nt <= stride[2] and dilation[2] == 1: tap r
// of column o2 lands at o2 * stride[2] + off2 + r, so over the columns that all nt taps reach
// they fill nt adjacent image elements per column, added in one pass instead of nt strided ones
// (the columns only some of them reach go tap by tap). This changes the order of the adds, so
// it is for integer sums only. rows: tap k2's row, the others ld apart.
template <typename T>
void AddTapTuple(const ConvGeometry3& w, const T* rows, int64_t ld, int64_t p_begin, int64_t p_end,
                 int64_t k0, int64_t k1, int64_t k2, int64_t nt, T* img) {
  constexpr int64_t kMaxTuple = 8;
  const int64_t off0 = k0 * w.dilation[0] - w.pad[0];
  const int64_t off1 = k1 * w.dilation[1] - w.pad[1];
  const int64_t off2 = k2 - w.pad[2];
  const int64_t s2 = w.stride[2];
  int64_t lo[kMaxTuple], hi[kMaxTuple];
  int64_t all_lo = 0, all_hi = w.out[2];
  for (int64_t r = 0; r < nt; ++r) {
    ValidOutputRange(off2 + r, s2, w.in[2], w.out[2], &lo[r], &hi[r]);
    all_lo = std::max(all_lo, lo[r]);
    all_hi = std::min(all_hi, hi[r]);
  }
  int64_t p = p_begin;
  while (p < p_end) {
    const OutputRun o = OutputRunAt(w, p, p_end);
    const int64_t i0 = o.o0 * w.stride[0] + off0;
    const int64_t i1 = o.o1 * w.stride[1] + off1;
    if (i0 >= 0 && i0 < w.in[0] && i1 >= 0 && i1 < w.in[1]) {
      const int64_t seg_lo = o.o2, seg_hi = o.o2 + (o.end - p);
      T* base = img + (i0 * w.in[1] + i1) * w.in[2] + off2;
      const T* src = rows + (p - p_begin) - o.o2;
      // [a, b): the columns every tap reaches (empty when a >= b).
      const int64_t a = std::max(seg_lo, all_lo), b = std::min(seg_hi, all_hi);
      if (a < b) {
        if (nt == s2 && nt == 2) {
          AddInterleaved<2>(src, ld, a, b, base);
        } else if (nt == s2 && nt == 3) {
          AddInterleaved<3>(src, ld, a, b, base);
        } else if (nt == s2 && nt == 4) {
          AddInterleaved<4>(src, ld, a, b, base);
        } else {
          for (int64_t ow = a; ow < b; ++ow) {
            for (int64_t r = 0; r < nt; ++r) base[ow * s2 + r] += src[r * ld + ow];
          }
        }
      }
      for (int64_t r = 0; r < nt; ++r) {
        const T* sr = src + r * ld;
        T* br = base + r;
        // The columns outside [a, b) that tap r reaches (all of them when [a, b) is empty).
        const int64_t r_lo = std::max(seg_lo, lo[r]), r_hi = std::min(seg_hi, hi[r]);
        const int64_t left_end = a < b ? std::min(a, r_hi) : r_hi;
        for (int64_t ow = r_lo; ow < left_end; ++ow) br[ow * s2] += sr[ow];
        if (a < b) {
          for (int64_t ow = std::max(b, r_lo); ow < r_hi; ++ow) br[ow * s2] += sr[ow];
        }
      }
    }
    p = o.end;
  }
}

// kTapTuples (integer sums only): the taps of the innermost dim go in tuples of stride[2]
// (AddTapTuple) when its stride is 2 to 8 and its dilation 1. Without it every image element
// gets its adds in the order of the kernel taps, then of the columns (float32's rounding).
template <typename T, bool kTapTuples>
void Col2Im(const ConvGeometry& g, const T* col, int64_t channels, int64_t p_begin, int64_t p_count,
            T* image, const Parallel& parallel) {
  const ConvGeometry3 w = WidenTo3(g);
  const int64_t in_size = w.in[0] * w.in[1] * w.in[2];
  const int64_t p_end = p_begin + p_count;
  const int64_t tuple =
      kTapTuples && w.dilation[2] == 1 && w.stride[2] >= 2 && w.stride[2] <= 8 ? w.stride[2] : 1;
  parallel.For(channels, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      T* img = image + c * in_size;
      int64_t row_index = c * w.kernel[0] * w.kernel[1] * w.kernel[2];
      for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0) {
        for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
          for (int64_t k2 = 0; k2 < w.kernel[2];) {
            const int64_t nt = std::min(tuple, w.kernel[2] - k2);
            const T* row = col + row_index * p_count;
            if (nt == 1) {
              AddTap(w, row, p_begin, p_end, k0, k1, k2, img);
            } else {
              AddTapTuple(w, row, p_count, p_begin, p_end, k0, k1, k2, nt, img);
            }
            k2 += nt;
            row_index += nt;
          }
        }
      }
    }
  });
}

}  // namespace

void Col2ImF32(const ConvGeometry& g, const float* col, int64_t channels, int64_t p_begin,
               int64_t p_count, float* image, const Parallel& parallel) {
  Col2Im<float, false>(g, col, channels, p_begin, p_count, image, parallel);
}

void Col2ImI32(const ConvGeometry& g, const int32_t* col, int64_t channels, int64_t p_begin,
               int64_t p_count, int32_t* image, const Parallel& parallel) {
  Col2Im<uint32_t, true>(g, reinterpret_cast<const uint32_t*>(col), channels, p_begin, p_count,
                         reinterpret_cast<uint32_t*>(image), parallel);
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
template <int64_t K2, typename T>
void InterleaveRun(const T* rows, int64_t ld, int64_t n, T b, T* dst) {
  for (int64_t o = 0; o < n; ++o) {
    for (int64_t k2 = 0; k2 < K2; ++k2) dst[o * K2 + k2] = b + rows[k2 * ld + o];
  }
}
template <typename T>
void InterleaveRunAny(const T* rows, int64_t ld, int64_t n, int64_t k2s, T b, T* dst) {
  for (int64_t k2 = 0; k2 < k2s; ++k2) {
    const T* r = rows + k2 * ld;
    for (int64_t o = 0; o < n; ++o) dst[o * k2s + k2] = b + r[o];
  }
}

template <typename T>
void Col2ImDisjoint(const ConvGeometry& g, const T* col, int64_t channels, int64_t p_begin,
                    int64_t p_count, const T* bias, T* image, int64_t channel_stride,
                    const Parallel& parallel) {
  const ConvGeometry3 w = WidenTo3(g);
  const int64_t k2s = w.kernel[2];
  const int64_t outer_taps = w.kernel[0] * w.kernel[1];
  const int64_t p_end = p_begin + p_count;
  parallel.For(channels * outer_taps, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c = t / outer_taps, k01 = t % outer_taps;
      const int64_t k0 = k01 / w.kernel[1], k1 = k01 % w.kernel[1];
      // No bias adds +0.0f, as the zero-initialized image does (-0.0f columns become +0.0f).
      const T b = bias ? bias[c] : T(0);
      const T* rows = col + (c * outer_taps + k01) * k2s * p_count;
      T* img = image + c * channel_stride;
      for (int64_t p = p_begin; p < p_end;) {
        const OutputRun o = OutputRunAt(w, p, p_end);
        const int64_t i0 = o.o0 * w.stride[0] + k0, i1 = o.o1 * w.stride[1] + k1;
        T* dst = img + (i0 * w.in[1] + i1) * w.in[2] + o.o2 * k2s;
        const T* src = rows + (p - p_begin);
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

}  // namespace

void Col2ImDisjointF32(const ConvGeometry& g, const float* col, int64_t channels, int64_t p_begin,
                       int64_t p_count, const float* bias, float* image, const Parallel& parallel) {
  Col2ImDisjoint(g, col, channels, p_begin, p_count, bias, image, g.InSize(), parallel);
}

void Col2ImDisjointI32(const ConvGeometry& g, const int32_t* col, int64_t channels, int64_t p_begin,
                       int64_t p_count, const int32_t* bias, int32_t* image,
                       const Parallel& parallel) {
  Col2ImDisjoint(g, reinterpret_cast<const uint32_t*>(col), channels, p_begin, p_count,
                 reinterpret_cast<const uint32_t*>(bias), reinterpret_cast<uint32_t*>(image),
                 g.InSize(), parallel);
}

void Col2ImDisjointBytes(const ConvGeometry& g, const uint8_t* col, int64_t channels,
                         int64_t p_begin, int64_t p_count, uint8_t* image,
                         int64_t channel_stride, const Parallel& parallel) {
  Col2ImDisjoint<uint8_t>(g, col, channels, p_begin, p_count, nullptr, image, channel_stride,
                          parallel);
}

}  // namespace simplecpp::kernels
