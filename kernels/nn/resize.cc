// Resampling kernels (see kernels/nn/resize.h). The Resize axis pass vectorizes over the `inner`
// elements that share one source index (every axis but the innermost); along the innermost axis
// (inner == 1) each output is a short dot product over gathered taps. RoiAlign, GridSample and
// AffineGrid are gathers with per-position weights, written as plain loops: per-position taps are
// computed once and reused for every channel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/resize.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles (AVX3_DL, the portable fallback).
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>

#include "kernels/nn/resize.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void ResizeAxisF32Impl(int64_t outer, int64_t in_len, int64_t inner, int64_t out_len, int64_t taps,
                       const int64_t* index, const float* weight, const float* x, float* y,
                       const Parallel& parallel) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  parallel.For(outer * out_len, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / out_len, j = r % out_len;
      const float* xo = x + o * in_len * inner;
      float* yr = y + r * inner;
      const int64_t* idx = index + j * taps;
      const float* wt = weight + j * taps;
      if (inner == 1) {
        float acc = 0.0f;
        for (int64_t t = 0; t < taps; ++t) acc += wt[t] * xo[idx[t]];
        yr[0] = acc;
        continue;
      }
      int64_t i = 0;
      for (; i + lanes <= inner; i += lanes) {
        auto acc = hn::Zero(d);
        for (int64_t t = 0; t < taps; ++t) {
          acc = hn::MulAdd(hn::Set(d, wt[t]), hn::LoadU(d, xo + idx[t] * inner + i), acc);
        }
        hn::StoreU(acc, d, yr + i);
      }
      for (; i < inner; ++i) {
        float acc = 0.0f;
        for (int64_t t = 0; t < taps; ++t) acc += wt[t] * xo[idx[t] * inner + i];
        yr[i] = acc;
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(ResizeAxisF32Impl);

void ResizeAxisF32(int64_t outer, int64_t in_len, int64_t inner, int64_t out_len, int64_t taps,
                   const int64_t* index, const float* weight, const float* x, float* y,
                   const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(ResizeAxisF32Impl)
  (outer, in_len, inner, out_len, taps, index, weight, x, y, parallel);
}

namespace {

template <typename T>
void ResizeAxisScalar(int64_t outer, int64_t in_len, int64_t inner, int64_t out_len, int64_t taps,
                      const int64_t* index, const T* weight, const T* x, T* y,
                      const Parallel& parallel) {
  parallel.For(outer * out_len, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / out_len, j = r % out_len;
      const T* xo = x + o * in_len * inner;
      T* yr = y + r * inner;
      const int64_t* idx = index + j * taps;
      const T* wt = weight + j * taps;
      for (int64_t i = 0; i < inner; ++i) {
        T acc = 0;
        for (int64_t t = 0; t < taps; ++t) acc += wt[t] * xo[idx[t] * inner + i];
        yr[i] = acc;
      }
    }
  });
}

template <typename T>
void FillOutside(const std::vector<int64_t>& dims, const std::vector<const uint8_t*>& outside,
                 T value, T* y) {
  const size_t rank = dims.size();
  if (rank == 0) return;
  int64_t total = 1;
  for (int64_t v : dims) total *= v;
  if (total == 0) return;
  const int64_t last = dims[rank - 1];
  const uint8_t* last_mask = outside[rank - 1];
  std::vector<int64_t> pos(rank, 0);
  for (int64_t base = 0; base < total; base += last) {
    bool row_out = false;
    for (size_t k = 0; k + 1 < rank; ++k) {
      if (outside[k] != nullptr && outside[k][pos[k]]) row_out = true;
    }
    T* row = y + base;
    if (row_out) {
      std::fill(row, row + last, value);
    } else if (last_mask != nullptr) {
      for (int64_t i = 0; i < last; ++i) {
        if (last_mask[i]) row[i] = value;
      }
    }
    for (size_t k = rank - 1; k-- > 0;) {  // odometer over the outer axes
      if (++pos[k] < dims[k]) break;
      pos[k] = 0;
    }
  }
}

template <typename T>
void RoiAlign(const RoiAlignParams& p, const T* x, const T* rois, const int64_t* batch_index,
              int64_t num_rois, T* y, const Parallel& parallel) {
  const int64_t H = p.height, W = p.width, oh = p.out_h, ow = p.out_w;
  const T scale = static_cast<T>(p.spatial_scale);
  const T offset = p.half_pixel ? T(0.5) : T(0);
  parallel.For(num_rois, [&](int64_t r0, int64_t r1) {
    struct Sample {
      int64_t pos[4];
      T w[4];
    };
    std::vector<Sample> samples;
    for (int64_t r = r0; r < r1; ++r) {
      const T* roi = rois + r * 4;
      const T start_w = roi[0] * scale - offset, start_h = roi[1] * scale - offset;
      const T end_w = roi[2] * scale - offset, end_h = roi[3] * scale - offset;
      T roi_w = end_w - start_w, roi_h = end_h - start_h;
      if (!p.half_pixel) {
        roi_w = std::max(roi_w, T(1));
        roi_h = std::max(roi_h, T(1));
      }
      const T bin_h = roi_h / static_cast<T>(oh), bin_w = roi_w / static_cast<T>(ow);
      const int64_t grid_h = p.sampling_ratio > 0
                                 ? p.sampling_ratio
                                 : static_cast<int64_t>(std::ceil(roi_h / static_cast<T>(oh)));
      const int64_t grid_w = p.sampling_ratio > 0
                                 ? p.sampling_ratio
                                 : static_cast<int64_t>(std::ceil(roi_w / static_cast<T>(ow)));
      const int64_t gh = std::max<int64_t>(grid_h, 0), gw = std::max<int64_t>(grid_w, 0);
      const T count = static_cast<T>(std::max<int64_t>(gh * gw, 1));
      // Sample taps for every (ph, pw, iy, ix), shared by all channels.
      samples.assign(static_cast<size_t>(oh * ow * gh * gw), Sample{});
      size_t s = 0;
      for (int64_t ph = 0; ph < oh; ++ph) {
        for (int64_t pw = 0; pw < ow; ++pw) {
          for (int64_t iy = 0; iy < gh; ++iy) {
            T yy = start_h + static_cast<T>(ph) * bin_h +
                   (static_cast<T>(iy) + T(0.5)) * bin_h / static_cast<T>(gh);
            for (int64_t ix = 0; ix < gw; ++ix, ++s) {
              T xx = start_w + static_cast<T>(pw) * bin_w +
                     (static_cast<T>(ix) + T(0.5)) * bin_w / static_cast<T>(gw);
              Sample& smp = samples[s];
              T yv = yy;
              if (yv < T(-1) || yv > static_cast<T>(H) || xx < T(-1) || xx > static_cast<T>(W)) {
                continue;  // zero weights
              }
              if (yv <= 0) yv = 0;
              if (xx <= 0) xx = 0;
              int64_t y_low = static_cast<int64_t>(yv), x_low = static_cast<int64_t>(xx);
              int64_t y_high, x_high;
              if (y_low >= H - 1) {
                y_high = y_low = H - 1;
                yv = static_cast<T>(y_low);
              } else {
                y_high = y_low + 1;
              }
              if (x_low >= W - 1) {
                x_high = x_low = W - 1;
                xx = static_cast<T>(x_low);
              } else {
                x_high = x_low + 1;
              }
              const T ly = yv - static_cast<T>(y_low), lx = xx - static_cast<T>(x_low);
              const T hy = T(1) - ly, hx = T(1) - lx;
              smp.pos[0] = y_low * W + x_low;
              smp.pos[1] = y_low * W + x_high;
              smp.pos[2] = y_high * W + x_low;
              smp.pos[3] = y_high * W + x_high;
              smp.w[0] = hy * hx;
              smp.w[1] = hy * lx;
              smp.w[2] = ly * hx;
              smp.w[3] = ly * lx;
            }
          }
        }
      }
      const int64_t per_bin = gh * gw;
      for (int64_t c = 0; c < p.channels; ++c) {
        const T* xc = x + (batch_index[r] * p.channels + c) * H * W;
        T* yc = y + (r * p.channels + c) * oh * ow;
        for (int64_t b = 0; b < oh * ow; ++b) {
          const Sample* sb = samples.data() + b * per_bin;
          if (p.max_mode) {
            T best = 0;
            for (int64_t k = 0; k < per_bin; ++k) {
              const Sample& q = sb[k];
              const T v = std::max(std::max(q.w[0] * xc[q.pos[0]], q.w[1] * xc[q.pos[1]]),
                                   std::max(q.w[2] * xc[q.pos[2]], q.w[3] * xc[q.pos[3]]));
              best = k == 0 ? v : std::max(best, v);
            }
            yc[b] = best;
          } else {
            T sum = 0;
            for (int64_t k = 0; k < per_bin; ++k) {
              const Sample& q = sb[k];
              sum += q.w[0] * xc[q.pos[0]] + q.w[1] * xc[q.pos[1]] + q.w[2] * xc[q.pos[2]] +
                     q.w[3] * xc[q.pos[3]];
            }
            yc[b] = sum / count;
          }
        }
      }
    }
  });
}

// Reflects x into [lo, hi] by the nearest border, repeatedly (GridSample's reflection padding).
template <typename T>
T Reflect(T x, T lo, T hi) {
  const T range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const T dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const T r = dx - static_cast<T>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const T dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const T r = dx - static_cast<T>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

template <typename T>
void CubicCoeffs(T t, T* c) {
  const T a = T(-0.75);
  t = std::abs(t);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

template <typename T>
void GridSample(const GridSampleParams& p, const T* x, const T* grid, T* y,
                const Parallel& parallel) {
  const int rank = p.rank;
  int64_t in_size = 1, out_size = 1;
  for (int s = 0; s < rank; ++s) {
    in_size *= p.in[s];
    out_size *= p.out[s];
  }
  int64_t in_stride[3];
  {
    int64_t st = 1;
    for (int s = rank - 1; s >= 0; --s) {
      in_stride[s] = st;
      st *= p.in[s];
    }
  }
  const int ntaps = p.mode == GridSampleMode::kNearest  ? 1
                    : p.mode == GridSampleMode::kLinear ? 2
                                                        : 4;
  parallel.For(p.batch * out_size, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / out_size, pos = q % out_size;
      // Per spatial dim: tap offsets (-1: zero padding) and weights.
      int64_t off[3][4];
      T wt[3][4];
      for (int s = 0; s < rank; ++s) {
        const int64_t len = p.in[s];
        const T lo = p.align_corners ? T(0) : T(-0.5);
        const T hi = p.align_corners ? static_cast<T>(len - 1) : static_cast<T>(len) - T(0.5);
        const T g = grid[q * rank + (rank - 1 - s)];
        T c = p.align_corners ? (g + 1) / 2 * static_cast<T>(len - 1)
                              : ((g + 1) * static_cast<T>(len) - 1) / 2;
        if (p.mode == GridSampleMode::kNearest) {
          c = std::nearbyint(c);  // half to even (the conformance data's rounding, 2-D and 3-D)
        }
        if (c < lo || c > hi) {
          if (p.padding == GridSamplePadding::kBorder) {
            c = std::min(std::max(c, T(0)), static_cast<T>(len - 1));
          } else if (p.padding == GridSamplePadding::kReflection) {
            c = Reflect(c, lo, hi);
          }
        }
        int64_t first;
        if (p.mode == GridSampleMode::kNearest) {
          first = static_cast<int64_t>(c);
          wt[s][0] = 1;
        } else {
          const T f = std::floor(c);
          const T t = c - f;
          if (p.mode == GridSampleMode::kLinear) {
            first = static_cast<int64_t>(f);
            wt[s][0] = 1 - t;
            wt[s][1] = t;
          } else {
            first = static_cast<int64_t>(f) - 1;
            CubicCoeffs(t, wt[s]);
          }
        }
        for (int k = 0; k < ntaps; ++k) {
          int64_t i = first + k;
          if (i < 0 || i >= len) {
            if (p.padding == GridSamplePadding::kZeros) {
              i = -1;
            } else if (p.padding == GridSamplePadding::kBorder) {
              i = std::min<int64_t>(std::max<int64_t>(i, 0), len - 1);
            } else {
              i = static_cast<int64_t>(Reflect(static_cast<T>(i), lo, hi));
              i = std::min<int64_t>(std::max<int64_t>(i, 0), len - 1);
            }
          }
          off[s][k] = i < 0 ? -1 : i * in_stride[s];
        }
      }
      for (int s = rank; s < 3; ++s) {  // unused dims: one tap of weight 1
        off[s][0] = 0;
        wt[s][0] = 1;
      }
      const int n0 = rank > 0 ? ntaps : 1, n1 = rank > 1 ? ntaps : 1, n2 = rank > 2 ? ntaps : 1;
      for (int64_t ch = 0; ch < p.channels; ++ch) {
        const T* xc = x + (n * p.channels + ch) * in_size;
        // Nested like the spec's reference: innermost dim first, then outward.
        T acc2 = 0;
        for (int a = 0; a < n0; ++a) {
          T acc1 = 0;
          for (int b = 0; b < n1; ++b) {
            T acc0 = 0;
            for (int c = 0; c < n2; ++c) {
              const int64_t o0 = off[0][a], o1 = rank > 1 ? off[1][b] : 0,
                            o2 = rank > 2 ? off[2][c] : 0;
              if (o0 < 0 || o1 < 0 || o2 < 0) continue;
              acc0 += (rank > 2 ? wt[2][c] : T(1)) * xc[o0 + o1 + o2];
            }
            acc1 += (rank > 1 ? wt[1][b] : T(1)) * acc0;
          }
          acc2 += wt[0][a] * acc1;
        }
        y[(n * p.channels + ch) * out_size + pos] = acc2;
      }
    }
  });
}

template <typename T>
void AffineGrid(int rank, int64_t batch, const int64_t* size, bool align_corners, const T* theta,
                T* grid) {
  // Normalized base coordinate of index i along an axis of length len.
  auto base = [align_corners](int64_t i, int64_t len) -> T {
    if (align_corners) {
      return len <= 1 ? T(-1) : T(-1) + static_cast<T>(2 * i) / static_cast<T>(len - 1);
    }
    return (static_cast<T>(2 * i + 1)) / static_cast<T>(len) - T(1);
  };
  const int64_t d_len = rank == 3 ? size[0] : 1;
  const int64_t h_len = size[rank - 2], w_len = size[rank - 1];
  const int cols = rank + 1;
  T* out = grid;
  for (int64_t n = 0; n < batch; ++n) {
    const T* th = theta + n * rank * cols;
    for (int64_t dz = 0; dz < d_len; ++dz) {
      const T z = rank == 3 ? base(dz, d_len) : T(0);
      for (int64_t hy = 0; hy < h_len; ++hy) {
        const T yv = base(hy, h_len);
        for (int64_t wx = 0; wx < w_len; ++wx) {
          const T xv = base(wx, w_len);
          for (int r = 0; r < rank; ++r) {
            const T* row = th + r * cols;
            *out++ = rank == 3 ? row[0] * xv + row[1] * yv + row[2] * z + row[3]
                               : row[0] * xv + row[1] * yv + row[2];
          }
        }
      }
    }
  }
}

}  // namespace

void ResizeAxisF64(int64_t outer, int64_t in_len, int64_t inner, int64_t out_len, int64_t taps,
                   const int64_t* index, const double* weight, const double* x, double* y,
                   const Parallel& parallel) {
  ResizeAxisScalar(outer, in_len, inner, out_len, taps, index, weight, x, y, parallel);
}

void ResizeFillOutsideF32(const std::vector<int64_t>& dims,
                          const std::vector<const uint8_t*>& outside, float value, float* y) {
  FillOutside(dims, outside, value, y);
}
void ResizeFillOutsideF64(const std::vector<int64_t>& dims,
                          const std::vector<const uint8_t*>& outside, double value, double* y) {
  FillOutside(dims, outside, value, y);
}

void RoiAlignF32(const RoiAlignParams& p, const float* x, const float* rois,
                 const int64_t* batch_index, int64_t num_rois, float* y, const Parallel& parallel) {
  RoiAlign(p, x, rois, batch_index, num_rois, y, parallel);
}
void RoiAlignF64(const RoiAlignParams& p, const double* x, const double* rois,
                 const int64_t* batch_index, int64_t num_rois, double* y,
                 const Parallel& parallel) {
  RoiAlign(p, x, rois, batch_index, num_rois, y, parallel);
}

void GridSampleF32(const GridSampleParams& p, const float* x, const float* grid, float* y,
                   const Parallel& parallel) {
  GridSample(p, x, grid, y, parallel);
}
void GridSampleF64(const GridSampleParams& p, const double* x, const double* grid, double* y,
                   const Parallel& parallel) {
  GridSample(p, x, grid, y, parallel);
}

void AffineGridF32(int rank, int64_t batch, const int64_t* size, bool align_corners,
                   const float* theta, float* grid) {
  AffineGrid(rank, batch, size, align_corners, theta, grid);
}
void AffineGridF64(int rank, int64_t batch, const int64_t* size, bool align_corners,
                   const double* theta, double* grid) {
  AffineGrid(rank, batch, size, align_corners, theta, grid);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
