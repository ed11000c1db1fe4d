// Pooling kernels (see pool.h for the layout and window rules).
//
// Max / average pooling work one output row (plane, o0, o1) at a time: each input row the window
// touches is copied once into a row buffer whose ends hold the padding value (lowest for max, 0
// for average), so the inner loop has no bounds checks; with stride 1 along the last dim it is a
// vector Max / Add over the output row. Averages divide by a per-position count that factors
// into per-dim counts. Indices (MaxPool's second output) and Lp pooling use direct scalar loops.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/pool.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles (AVX3_DL, the portable fallback).
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/memory/short_copy-inl.h"   // CopyShort: an output row as a few vector moves
#include "kernels/nn/pool.h"
#include "kernels/nn/widened_sum-inl.h"  // sums in double, the same order on every 128-bit target

#ifndef SIMPLECPP_KERNELS_POOL_SHARED_
#define SIMPLECPP_KERNELS_POOL_SHARED_
namespace simplecpp::kernels::pool_detail {

// Number of window positions of output o along one dim that fall inside [lo, hi).
inline int64_t WindowCount(int64_t o, int64_t kernel, int64_t stride, int64_t dilation,
                           int64_t pad_begin, int64_t lo, int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t p = o * stride + k * dilation - pad_begin;
    if (p >= lo && p < hi) ++count;
  }
  return count;
}

// Length of the padded row buffer along the last dim.
inline int64_t RowBufferLength(const PoolGeometry& g) {
  return std::max(g.pad_begin[2] + g.in[2],
                  (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1);
}

// Average divisors: cnt[a][o] counts the window positions of output o along dim a that the
// average divides by; an output's divisor is the product of its per-dim counts.
inline void AverageDivisors(const PoolGeometry& g, bool count_include_pad,
                            std::vector<double> cnt[3]) {
  for (int a = 0; a < 3; ++a) {
    cnt[a].resize(static_cast<size_t>(g.out[a]));
    const int64_t lo = count_include_pad ? -g.pad_begin[a] : 0;
    const int64_t hi = count_include_pad ? g.in[a] + g.pad_end[a] : g.in[a];
    for (int64_t o = 0; o < g.out[a]; ++o) {
      cnt[a][o] = static_cast<double>(
          WindowCount(o, g.kernel[a], g.stride[a], g.dilation[a], g.pad_begin[a], lo, hi));
    }
  }
}

// What PoolRows decides once for all its output rows, about the last (width) dim.
struct PoolRowPlan {
  int64_t out_w, s2, d2, k2n;  // outputs, stride, dilation and taps along the width
  bool vector_row;             // width stride 1 or 2 on a target with vectors of T
  int64_t acc_len;             // out_w, rounded up to whole vectors on the vector path
  int64_t buffer_len;          // the padded row buffer, with the vector loop's slack
  bool in_place;               // rows may be read in x itself (see PoolRows)
  int64_t in_place_reach;      // how far past a row's start the vector loop reads
};

}  // namespace simplecpp::kernels::pool_detail
#endif  // SIMPLECPP_KERNELS_POOL_SHARED_

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {  // file-local helpers

// Whether this target has vectors of T. Highway 1.0.3's WASM target has no f64 vectors
// (HWY_HAVE_FLOAT64 is 0): there the scalar loops below do all the work, with the same results.
template <typename T>
constexpr bool kHasVec = HWY_HAVE_FLOAT64 || !std::is_same<T, double>::value;

using pool_detail::PoolRowPlan;

template <typename T>
PoolRowPlan MakePoolRowPlan(const PoolGeometry& g) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  PoolRowPlan rp;
  rp.out_w = g.out[2];
  rp.s2 = g.stride[2];
  rp.d2 = g.dilation[2];
  rp.k2n = g.kernel[2];
  rp.vector_row = kHasVec<T> && (rp.s2 == 1 || rp.s2 == 2);
  rp.acc_len = rp.vector_row ? (rp.out_w + N - 1) / N * N : rp.out_w;
  // Slack: the last vector reads up to s2 * N - 1 elements past the row's last tap.
  rp.buffer_len = pool_detail::RowBufferLength(g) + (rp.vector_row ? rp.s2 * N : 0);
  // Rows whose stored outputs read no padding along the width (no begin padding, the last
  // window inside the row) are read in place, without the copy into the padded buffer, as long
  // as the vector loop's reads past the row (lanes that are never stored) stay inside x.
  rp.in_place = rp.vector_row && g.pad_begin[2] == 0 &&
                (rp.out_w - 1) * rp.s2 + (rp.k2n - 1) * rp.d2 < g.in[2];
  rp.in_place_reach = rp.s2 == 1 ? rp.acc_len + (rp.k2n - 1) * rp.d2
                                 : 2 * rp.acc_len + (rp.k2n - 1) * rp.d2;
  return rp;
}

// acc[0, acc_len) = fill. Short rows (a few dozen outputs): vector stores, not libc calls.
template <typename T>
HWY_INLINE void FillAccumulators(T* acc, const PoolRowPlan& rp, T fill) {
  if constexpr (kHasVec<T>) {
    if (rp.vector_row) {
      const hn::ScalableTag<T> d;
      const int64_t N = static_cast<int64_t>(hn::Lanes(d));
      for (int64_t ow = 0; ow < rp.acc_len; ow += N) hn::StoreU(hn::Set(d, fill), d, acc + ow);
      return;
    }
  }
  std::fill(acc, acc + rp.acc_len, fill);
}

// Adds (average) or maxes (max) one kernel row's taps into every output of acc, reading the
// padded input row `row_buf`. The whole kernel row accumulates in registers before acc is
// touched again.
template <typename T, bool kAvg>
HWY_INLINE void AccumulateKernelRow(const T* row_buf, T* acc, const PoolRowPlan& rp) {
  const int64_t k2n = rp.k2n, d2 = rp.d2;
  if constexpr (kHasVec<T>) {
    const hn::ScalableTag<T> d;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    if (rp.s2 == 1) {
      for (int64_t ow = 0; ow < rp.acc_len; ow += N) {
        auto a = hn::LoadU(d, acc + ow);
        for (int64_t k2 = 0; k2 < k2n; ++k2) {
          const auto v = hn::LoadU(d, row_buf + ow + k2 * d2);
          a = kAvg ? hn::Add(a, v) : hn::Max(a, v);
        }
        hn::StoreU(a, d, acc + ow);
      }
      return;
    }
    if (rp.s2 == 2) {
      for (int64_t ow = 0; ow < rp.acc_len; ow += N) {
        auto a = hn::LoadU(d, acc + ow);
        for (int64_t k2 = 0; k2 < k2n; ++k2) {
          const T* p = row_buf + 2 * ow + k2 * d2;
          const auto v = hn::ConcatEven(d, hn::LoadU(d, p + N), hn::LoadU(d, p));
          a = kAvg ? hn::Add(a, v) : hn::Max(a, v);
        }
        hn::StoreU(a, d, acc + ow);
      }
      return;
    }
  }
  for (int64_t ow = 0; ow < rp.out_w; ++ow) {
    const T* src = row_buf + ow * rp.s2;
    T a = acc[ow];
    for (int64_t k2 = 0; k2 < k2n; ++k2) {
      const T v = src[k2 * d2];
      if (kAvg) {
        a += v;
      } else if (v > a) {
        a = v;
      }
    }
    acc[ow] = a;
  }
}

// Writes output row (o0, o1): the sums divided by their counts (average) or the maxima.
template <typename T, bool kAvg>
HWY_INLINE void StoreOutputRow(const T* acc, int64_t out_w, const std::vector<double> cnt[3],
                               int64_t o0, int64_t o1, T* yr) {
  if (kAvg) {
    const double c01 = cnt[0][o0] * cnt[1][o1];
    for (int64_t ow = 0; ow < out_w; ++ow) {
      yr[ow] = static_cast<T>(static_cast<double>(acc[ow]) / (c01 * cnt[2][ow]));
    }
  } else if constexpr (sizeof(T) == 1) {
    // 8-bit rows are the shortest (e.g. 24 bytes), where a libc memmove per row costs more than
    // the pooling itself.
    CopyShort(reinterpret_cast<uint8_t*>(yr), reinterpret_cast<const uint8_t*>(acc), out_w);
  } else {
    std::copy_n(acc, out_w, yr);
  }
}

// Output rows [t0, t1) of the flattened (plane, o0) range; each covers all o1, o2.
// Each output row accumulates in `acc` (kernel rows k0, k1 outer, taps k2 inner, the same order
// for every output on every path, so vector and scalar paths give the same bits). Width strides 1
// and 2 run whole vectors over the row, the last one partly past its end (into the buffers' slack;
// those lanes are never stored), so narrow rows (15 outputs, 64 uint8 lanes) stay vectorized;
// stride 2 picks the taps with ConcatEven. Other strides and T without vectors run scalar.
template <typename T, bool kAvg>
void PoolRows(const T* x, T* y, const PoolGeometry& g, bool count_include_pad, int64_t t0,
              int64_t t1) {
  const PoolRowPlan rp = MakePoolRowPlan<T>(g);
  const T fill = kAvg ? T(0) : std::numeric_limits<T>::lowest();
  std::vector<T> row(static_cast<size_t>(rp.buffer_len), fill);
  std::vector<T> acc_row(static_cast<size_t>(std::max<int64_t>(rp.acc_len, 1)));
  T* buf = row.data();
  T* in_row = buf + g.pad_begin[2];
  T* acc = acc_row.data();
  std::vector<double> cnt[3];
  if (kAvg) pool_detail::AverageDivisors(g, count_include_pad, cnt);

  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t x_total = g.planes * in_plane;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t plane = t / g.out[0];
    const int64_t o0 = t % g.out[0];
    const T* xp = x + plane * in_plane;
    for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
      T* yr = y + ((plane * g.out[0] + o0) * g.out[1] + o1) * rp.out_w;
      FillAccumulators<T>(acc, rp, fill);
      for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
        const int64_t i0 = o0 * g.stride[0] + k0 * g.dilation[0] - g.pad_begin[0];
        if (i0 < 0 || i0 >= g.in[0]) continue;
        for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
          const int64_t i1 = o1 * g.stride[1] + k1 * g.dilation[1] - g.pad_begin[1];
          if (i1 < 0 || i1 >= g.in[1]) continue;
          const T* src_row = xp + (i0 * g.in[1] + i1) * g.in[2];
          // The padded row: x's row itself, or its copy in buf.
          const T* row_buf = buf;
          if (rp.in_place && (src_row - x) + rp.in_place_reach <= x_total) {
            row_buf = src_row;
          } else {
            std::copy_n(src_row, g.in[2], in_row);
          }
          AccumulateKernelRow<T, kAvg>(row_buf, acc, rp);
        }
      }
      StoreOutputRow<T, kAvg>(acc, rp.out_w, cnt, o0, o1, yr);
    }
  }
}

template <typename T, bool kAvg>
void Pool(const T* x, T* y, const PoolGeometry& g, bool count_include_pad,
          const Parallel* parallel) {
  if (g.planes <= 0) return;
  // Small pools run on the calling thread (the same tasks): waking another thread costs more.
  const int64_t work = g.planes * g.out[0] * g.out[1] * g.out[2] * g.kernel[0] * g.kernel[1] *
                       g.kernel[2];
  const Parallel& par = ParallelForMacs(*parallel, work);
  par.For(g.planes * g.out[0], [&](int64_t t0, int64_t t1) {
    PoolRows<T, kAvg>(x, y, g, count_include_pad, t0, t1);
  });
}

template <typename T>
void GlobalMax(const T* x, T* y, int64_t planes, int64_t size, const Parallel* parallel) {
  ParallelForElements(*parallel, planes * size).For(planes, [&](int64_t p0, int64_t p1) {
    const hn::ScalableTag<T> d;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * size;
      T m = std::numeric_limits<T>::lowest();
      int64_t i = 0;
      if constexpr (kHasVec<T>) {
        if (size >= N) {
          auto vm = hn::LoadU(d, xp);
          for (i = N; i + N <= size; i += N) vm = hn::Max(vm, hn::LoadU(d, xp + i));
          m = hn::GetLane(hn::MaxOfLanes(d, vm));
        }
      }
      for (; i < size; ++i) m = xp[i] > m ? xp[i] : m;
      y[p] = m;
    }
  });
}

}  // namespace

void MaxPoolF32Impl(const float* x, float* y, const PoolGeometry& g, const Parallel* parallel) {
  Pool<float, false>(x, y, g, false, parallel);
}
void MaxPoolF64Impl(const double* x, double* y, const PoolGeometry& g,
                    const Parallel* parallel) {
  Pool<double, false>(x, y, g, false, parallel);
}
void MaxPoolU8Impl(const uint8_t* x, uint8_t* y, const PoolGeometry& g,
                   const Parallel* parallel) {
  Pool<uint8_t, false>(x, y, g, false, parallel);
}
void MaxPoolI8Impl(const int8_t* x, int8_t* y, const PoolGeometry& g, const Parallel* parallel) {
  Pool<int8_t, false>(x, y, g, false, parallel);
}
void AveragePoolF32Impl(const float* x, float* y, const PoolGeometry& g, bool count_include_pad,
                        const Parallel* parallel) {
  Pool<float, true>(x, y, g, count_include_pad, parallel);
}
void AveragePoolF64Impl(const double* x, double* y, const PoolGeometry& g,
                        bool count_include_pad, const Parallel* parallel) {
  Pool<double, true>(x, y, g, count_include_pad, parallel);
}

void GlobalAveragePoolF32Impl(const float* x, float* y, int64_t planes, int64_t size,
                              const Parallel* parallel) {
  ParallelForElements(*parallel, planes * size).For(planes, [&](int64_t p0, int64_t p1) {
    const hn::ScalableTag<float> d;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    for (int64_t p = p0; p < p1; ++p) {
      const float* xp = x + p * size;
      int64_t i = 0;
      widened_sum::WidenedSum acc;
      for (; i + N <= size; i += N) acc.Add(hn::LoadU(d, xp + i));
      double s = acc.Total();
      for (; i < size; ++i) s += xp[i];
      y[p] = static_cast<float>(s / static_cast<double>(size));
    }
  });
}

void GlobalMaxPoolF32Impl(const float* x, float* y, int64_t planes, int64_t size,
                          const Parallel* parallel) {
  GlobalMax(x, y, planes, size, parallel);
}
void GlobalMaxPoolF64Impl(const double* x, double* y, int64_t planes, int64_t size,
                          const Parallel* parallel) {
  GlobalMax(x, y, planes, size, parallel);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(MaxPoolF32Impl);
HWY_EXPORT(MaxPoolF64Impl);
HWY_EXPORT(MaxPoolU8Impl);
HWY_EXPORT(MaxPoolI8Impl);
HWY_EXPORT(AveragePoolF32Impl);
HWY_EXPORT(AveragePoolF64Impl);
HWY_EXPORT(GlobalAveragePoolF32Impl);
HWY_EXPORT(GlobalMaxPoolF32Impl);
HWY_EXPORT(GlobalMaxPoolF64Impl);

void MaxPoolF32(const float* x, float* y, const PoolGeometry& g, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(MaxPoolF32Impl)(x, y, g, &parallel);
}
void MaxPoolF64(const double* x, double* y, const PoolGeometry& g, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(MaxPoolF64Impl)(x, y, g, &parallel);
}
void MaxPoolU8(const uint8_t* x, uint8_t* y, const PoolGeometry& g, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(MaxPoolU8Impl)(x, y, g, &parallel);
}
void MaxPoolI8(const int8_t* x, int8_t* y, const PoolGeometry& g, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(MaxPoolI8Impl)(x, y, g, &parallel);
}
void AveragePoolF32(const float* x, float* y, const PoolGeometry& g, bool count_include_pad,
                    const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(AveragePoolF32Impl)(x, y, g, count_include_pad, &parallel);
}
void AveragePoolF64(const double* x, double* y, const PoolGeometry& g, bool count_include_pad,
                    const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(AveragePoolF64Impl)(x, y, g, count_include_pad, &parallel);
}
void GlobalAveragePoolF32(const float* x, float* y, int64_t planes, int64_t size,
                          const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(GlobalAveragePoolF32Impl)(x, y, planes, size, &parallel);
}
void GlobalMaxPoolF32(const float* x, float* y, int64_t planes, int64_t size,
                      const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(GlobalMaxPoolF32Impl)(x, y, planes, size, &parallel);
}
void GlobalMaxPoolF64(const double* x, double* y, int64_t planes, int64_t size,
                      const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(GlobalMaxPoolF64Impl)(x, y, planes, size, &parallel);
}

void GlobalAveragePoolF64(const double* x, double* y, int64_t planes, int64_t size,
                          const Parallel& parallel) {
  ParallelForElements(parallel, planes * size).For(planes, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      double s = 0.0;
      for (int64_t i = 0; i < size; ++i) s += x[p * size + i];
      y[p] = s / static_cast<double>(size);
    }
  });
}

namespace {

// For each output element (plane, o0, o1, o2), in parallel over planes, calls
// out(plane, oi, window) with oi the flat output index; window(visit) calls visit(i0, i1, i2, v)
// for each in-bounds input element (i0, i1, i2) of the element's window, kernel order, v its value
// in plane `plane` of x. All templated, so the loops inline into one nest per caller.
template <typename T, typename OutFn>
void ForEachPoolWindow(const T* x, const PoolGeometry& g, const Parallel& parallel, OutFn out) {
  if (g.planes <= 0) return;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const Parallel& par = ParallelForMacs(parallel, g.planes * out_plane * taps);
  par.For(g.planes, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      const T* xp = x + plane * in_plane;
      int64_t oi = plane * out_plane;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2, ++oi) {
            const auto window = [&](auto&& visit) {
              for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
                const int64_t i0 = o0 * g.stride[0] + k0 * g.dilation[0] - g.pad_begin[0];
                if (i0 < 0 || i0 >= g.in[0]) continue;
                for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
                  const int64_t i1 = o1 * g.stride[1] + k1 * g.dilation[1] - g.pad_begin[1];
                  if (i1 < 0 || i1 >= g.in[1]) continue;
                  for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                    const int64_t i2 = o2 * g.stride[2] + k2 * g.dilation[2] - g.pad_begin[2];
                    if (i2 < 0 || i2 >= g.in[2]) continue;
                    visit(i0, i1, i2, xp[(i0 * g.in[1] + i1) * g.in[2] + i2]);
                  }
                }
              }
            };
            out(plane, oi, window);
          }
        }
      }
    }
  });
}

template <typename T>
void MaxPoolWithIndices(const T* x, T* y, int64_t* indices, const PoolGeometry& g,
                        int spatial_rank, bool column_major, const Parallel& parallel) {
  if (g.planes <= 0) return;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  // Multipliers of (i0, i1, i2) in the flat index within a plane.
  int64_t mul[3];
  if (column_major) {
    // The real spatial dims are the last `spatial_rank` of the three; the first of them varies
    // fastest.
    int64_t m = 1;
    for (int a = 3 - spatial_rank; a < 3; ++a) {
      mul[a] = m;
      m *= g.in[a];
    }
    for (int a = 0; a < 3 - spatial_rank; ++a) mul[a] = 0;
  } else {
    mul[0] = g.in[1] * g.in[2];
    mul[1] = g.in[2];
    mul[2] = 1;
  }
  ForEachPoolWindow(x, g, parallel, [&](int64_t plane, int64_t oi, const auto& window) {
    bool found = false;
    T best = std::numeric_limits<T>::lowest();
    int64_t best_index = -1;
    window([&](int64_t i0, int64_t i1, int64_t i2, T v) {
      if (!found || v > best) {
        found = true;
        best = v;
        best_index = i0 * mul[0] + i1 * mul[1] + i2 * mul[2];
      }
    });
    y[oi] = best;
    indices[oi] = found ? plane * in_plane + best_index : -1;
  });
}

template <typename T>
void LpPool(const T* x, T* y, const PoolGeometry& g, float p, const Parallel& parallel) {
  const double pd = static_cast<double>(p);
  ForEachPoolWindow(x, g, parallel, [&](int64_t, int64_t oi, const auto& window) {
    double s = 0.0;
    window([&](int64_t, int64_t, int64_t, T xv) {
      const double v = std::fabs(static_cast<double>(xv));
      s += pd == 2.0 ? v * v : (pd == 1.0 ? v : std::pow(v, pd));
    });
    y[oi] = static_cast<T>(pd == 2.0 ? std::sqrt(s) : (pd == 1.0 ? s : std::pow(s, 1.0 / pd)));
  });
}

}  // namespace

void MaxPoolWithIndicesF32(const float* x, float* y, int64_t* indices, const PoolGeometry& g,
                           int spatial_rank, bool column_major, const Parallel& parallel) {
  MaxPoolWithIndices(x, y, indices, g, spatial_rank, column_major, parallel);
}
void MaxPoolWithIndicesF64(const double* x, double* y, int64_t* indices, const PoolGeometry& g,
                           int spatial_rank, bool column_major, const Parallel& parallel) {
  MaxPoolWithIndices(x, y, indices, g, spatial_rank, column_major, parallel);
}
void MaxPoolWithIndicesU8(const uint8_t* x, uint8_t* y, int64_t* indices, const PoolGeometry& g,
                          int spatial_rank, bool column_major, const Parallel& parallel) {
  MaxPoolWithIndices(x, y, indices, g, spatial_rank, column_major, parallel);
}
void MaxPoolWithIndicesI8(const int8_t* x, int8_t* y, int64_t* indices, const PoolGeometry& g,
                          int spatial_rank, bool column_major, const Parallel& parallel) {
  MaxPoolWithIndices(x, y, indices, g, spatial_rank, column_major, parallel);
}

void LpPoolF32(const float* x, float* y, const PoolGeometry& g, float p,
               const Parallel& parallel) {
  LpPool(x, y, g, p, parallel);
}
void LpPoolF64(const double* x, double* y, const PoolGeometry& g, float p,
               const Parallel& parallel) {
  LpPool(x, y, g, p, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
