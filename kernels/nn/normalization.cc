// Normalization kernels (see normalization.h). The float32 row and channel kernels are Highway
// code; statistics are summed in double (promoted lanes) over two passes. The final pass subtracts
// the mean as a float pair (hi + lo) so x - mean keeps its precision when |mean| >> std.
// Double tensors, MeanVarianceNormalization, LpNormalization and LRN are scalar loops in double.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/normalization.cc"
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/nn/widened_sum-inl.h"  // sums in double, the same order on every 128-bit target

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/nn/normalization.h"

#ifndef SIMPLECPP_KERNELS_NORMALIZATION_SHARED_
#define SIMPLECPP_KERNELS_NORMALIZATION_SHARED_
namespace simplecpp::kernels::normalization_detail {

// Target work (elements) per task when rows are short.
constexpr int64_t kTaskElements = 1 << 14;

inline int64_t RowsPerTask(int64_t row_len) {
  return std::max<int64_t>(1, kTaskElements / std::max<int64_t>(1, row_len));
}

}  // namespace simplecpp::kernels::normalization_detail
#endif  // SIMPLECPP_KERNELS_NORMALIZATION_SHARED_

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {  // file-local helpers

using DF = hn::ScalableTag<float>;
constexpr size_t kMaxFloatLanes = 64;  // >= lanes of any target

HWY_INLINE hn::Vec<DF> LoadTail(DF d, const float* p, size_t count) {
  alignas(64) float buf[kMaxFloatLanes] = {};
  std::memcpy(buf, p, count * sizeof(float));
  return hn::Load(d, buf);
}

HWY_INLINE void StoreTail(DF d, hn::Vec<DF> v, float* p, size_t count) {
  alignas(64) float buf[kMaxFloatLanes];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, count * sizeof(float));
}

// Sum of x[0, n) in double.
double RowSum(const float* x, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  widened_sum::WidenedSum acc;
  size_t i = 0;
  for (; i + N <= n; i += N) acc.Add(hn::LoadU(d, x + i));
  double s = acc.Total();
  for (; i < n; ++i) s += x[i];
  return s;
}

// Sum of (x[i] - mean)^2 over [0, n) in double.
double RowSquaredDeviations(const float* x, size_t n, double mean) {
  const DF d;
  const size_t N = hn::Lanes(d);
  widened_sum::WidenedSum acc;
  size_t i = 0;
  for (; i + N <= n; i += N) acc.AddSquaredDeviations(hn::LoadU(d, x + i), mean);
  double s = acc.Total();
  for (; i < n; ++i) {
    const double t = x[i] - mean;
    s += t * t;
  }
  return s;
}

// y[0, n) = ((x - mean_hi) - mean_lo) * a + b for scalar a, b.
void AffineSpan(const float* x, float* y, size_t n, float mean_hi, float mean_lo, float a,
                float b) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const auto vhi = hn::Set(d, mean_hi), vlo = hn::Set(d, mean_lo);
  const auto va = hn::Set(d, a), vb = hn::Set(d, b);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto c = hn::Sub(hn::Sub(hn::LoadU(d, x + i), vhi), vlo);
    hn::StoreU(hn::MulAdd(c, va, vb), d, y + i);
  }
  if (i < n) {
    const auto c = hn::Sub(hn::Sub(LoadTail(d, x + i, n - i), vhi), vlo);
    StoreTail(d, hn::MulAdd(c, va, vb), y + i, n - i);
  }
}

// y[j] = ((x[j] - mean_hi) - mean_lo) * inv_std * scale[j] + bias[j], scale / bias nullable.
void AffineElementwise(const float* x, float* y, size_t n, float mean_hi, float mean_lo,
                       float inv_std, const float* scale, const float* bias) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const auto vhi = hn::Set(d, mean_hi), vlo = hn::Set(d, mean_lo), vinv = hn::Set(d, inv_std);
  size_t i = 0;
  for (; i < n; i += N) {
    const size_t count = std::min(N, n - i);
    const bool full = count == N;
    const auto xv = full ? hn::LoadU(d, x + i) : LoadTail(d, x + i, count);
    const auto c = hn::Sub(hn::Sub(xv, vhi), vlo);
    auto a = vinv;
    if (scale) a = hn::Mul(a, full ? hn::LoadU(d, scale + i) : LoadTail(d, scale + i, count));
    const auto b = bias ? (full ? hn::LoadU(d, bias + i) : LoadTail(d, bias + i, count))
                        : hn::Zero(d);
    const auto r = hn::MulAdd(c, a, b);
    if (full) {
      hn::StoreU(r, d, y + i);
    } else {
      StoreTail(d, r, y + i, count);
    }
  }
}

void NormalizeRow(const float* x, float* y, size_t channels, size_t spatial, const float* scale,
                  const float* bias, float epsilon, float* mean_out, float* inv_std_out) {
  const size_t len = channels * spatial;
  if (len == 0) return;
  const double mean = RowSum(x, len) / static_cast<double>(len);
  const double var = RowSquaredDeviations(x, len, mean) / static_cast<double>(len);
  const double inv_std = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
  const float mean_hi = static_cast<float>(mean);
  const float mean_lo = static_cast<float>(mean - static_cast<double>(mean_hi));
  if (mean_out) *mean_out = mean_hi;
  if (inv_std_out) *inv_std_out = static_cast<float>(inv_std);
  if (spatial == 1) {
    AffineElementwise(x, y, len, mean_hi, mean_lo, static_cast<float>(inv_std), scale, bias);
    return;
  }
  for (size_t c = 0; c < channels; ++c) {
    const double s = scale ? static_cast<double>(scale[c]) : 1.0;
    AffineSpan(x + c * spatial, y + c * spatial, spatial, mean_hi, mean_lo,
               static_cast<float>(inv_std * s), bias ? bias[c] : 0.0f);
  }
}

}  // namespace

void NormalizeRowsF32Impl(const float* x, float* y, int64_t rows, int64_t channels,
                          int64_t spatial, int64_t period, const float* scale, const float* bias,
                          float epsilon, float* mean_out, float* inv_std_out,
                          const Parallel* parallel) {
  if (rows <= 0) return;
  const int64_t len = channels * spatial;
  const int64_t per = normalization_detail::RowsPerTask(len);
  const int64_t tasks = (rows + per - 1) / per;
  parallel->For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t r1 = std::min(rows, t1 * per);
    for (int64_t r = t0 * per; r < r1; ++r) {
      const int64_t c0 = (r % period) * channels;
      NormalizeRow(x + r * len, y + r * len, static_cast<size_t>(channels),
                   static_cast<size_t>(spatial), scale ? scale + c0 : nullptr,
                   bias ? bias + c0 : nullptr, epsilon, mean_out ? mean_out + r : nullptr,
                   inv_std_out ? inv_std_out + r : nullptr);
    }
  });
}

void ChannelAffineF32Impl(const float* x, float* y, int64_t outer, int64_t channels,
                          int64_t inner, const float* center, const float* mul, const float* add,
                          const Parallel* parallel) {
  if (outer <= 0 || channels <= 0 || inner <= 0) return;
  if (inner == 1) {
    // Parameters vary along the contiguous axis: vectorize over channels.
    const int64_t per = normalization_detail::RowsPerTask(channels);
    const int64_t tasks = (outer + per - 1) / per;
    parallel->For(tasks, [&](int64_t t0, int64_t t1) {
      const DF d;
      const size_t N = hn::Lanes(d);
      const size_t C = static_cast<size_t>(channels);
      const int64_t o1 = std::min(outer, t1 * per);
      for (int64_t o = t0 * per; o < o1; ++o) {
        const float* xr = x + o * channels;
        float* yr = y + o * channels;
        for (size_t c = 0; c < C; c += N) {
          const size_t count = std::min(N, C - c);
          if (count == N) {
            const auto v = hn::Sub(hn::LoadU(d, xr + c), hn::LoadU(d, center + c));
            hn::StoreU(hn::MulAdd(v, hn::LoadU(d, mul + c), hn::LoadU(d, add + c)), d, yr + c);
          } else {
            const auto v = hn::Sub(LoadTail(d, xr + c, count), LoadTail(d, center + c, count));
            StoreTail(d, hn::MulAdd(v, LoadTail(d, mul + c, count), LoadTail(d, add + c, count)),
                      yr + c, count);
          }
        }
      }
    });
    return;
  }
  const int64_t per = normalization_detail::RowsPerTask(inner);
  const int64_t rows = outer * channels;
  const int64_t tasks = (rows + per - 1) / per;
  parallel->For(tasks, [&](int64_t t0, int64_t t1) {
    const DF d;
    const size_t N = hn::Lanes(d);
    const size_t S = static_cast<size_t>(inner);
    const int64_t r1 = std::min(rows, t1 * per);
    for (int64_t r = t0 * per; r < r1; ++r) {
      const int64_t c = r % channels;
      const auto vc = hn::Set(d, center[c]), vm = hn::Set(d, mul[c]), va = hn::Set(d, add[c]);
      const float* xr = x + r * inner;
      float* yr = y + r * inner;
      size_t i = 0;
      for (; i + N <= S; i += N) {
        hn::StoreU(hn::MulAdd(hn::Sub(hn::LoadU(d, xr + i), vc), vm, va), d, yr + i);
      }
      if (i < S) {
        StoreTail(d, hn::MulAdd(hn::Sub(LoadTail(d, xr + i, S - i), vc), vm, va), yr + i, S - i);
      }
    }
  });
}

void ChannelMeanVarF32Impl(const float* x, int64_t outer, int64_t channels, int64_t inner,
                           double* mean, double* var, const Parallel* parallel) {
  if (channels <= 0) return;
  const double count = static_cast<double>(outer) * static_cast<double>(inner);
  parallel->For(channels, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double s = 0.0;
      for (int64_t o = 0; o < outer; ++o) {
        s += RowSum(x + (o * channels + c) * inner, static_cast<size_t>(inner));
      }
      const double m = count > 0 ? s / count : 0.0;
      double q = 0.0;
      for (int64_t o = 0; o < outer; ++o) {
        q += RowSquaredDeviations(x + (o * channels + c) * inner, static_cast<size_t>(inner), m);
      }
      mean[c] = m;
      var[c] = count > 0 ? q / count : 0.0;
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(NormalizeRowsF32Impl);
HWY_EXPORT(ChannelAffineF32Impl);
HWY_EXPORT(ChannelMeanVarF32Impl);

void NormalizeRowsF32(const float* x, float* y, int64_t rows, int64_t channels, int64_t spatial,
                      int64_t period, const float* scale, const float* bias, float epsilon,
                      float* mean_out, float* inv_std_out, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(NormalizeRowsF32Impl)(x, y, rows, channels, spatial, period, scale, bias,
                                             epsilon, mean_out, inv_std_out, &parallel);
}

void ChannelAffineF32(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner,
                      const float* center, const float* mul, const float* add,
                      const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(ChannelAffineF32Impl)(x, y, outer, channels, inner, center, mul, add,
                                             &parallel);
}

void ChannelMeanVarF32(const float* x, int64_t outer, int64_t channels, int64_t inner,
                       double* mean, double* var, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(ChannelMeanVarF32Impl)(x, outer, channels, inner, mean, var, &parallel);
}

// ---- Scalar paths (double tensors and the less common ops) ----

void NormalizeRowsF64(const double* x, double* y, int64_t rows, int64_t channels,
                      int64_t spatial, int64_t period, const double* scale, const double* bias,
                      float epsilon, double* mean_out, double* inv_std_out,
                      const Parallel& parallel) {
  if (rows <= 0) return;
  const int64_t len = channels * spatial;
  const int64_t per = normalization_detail::RowsPerTask(len);
  parallel.For((rows + per - 1) / per, [&](int64_t t0, int64_t t1) {
    const int64_t r1 = std::min(rows, t1 * per);
    for (int64_t r = t0 * per; r < r1; ++r) {
      if (len == 0) continue;
      const double* xr = x + r * len;
      double* yr = y + r * len;
      double s = 0.0;
      for (int64_t i = 0; i < len; ++i) s += xr[i];
      const double mean = s / static_cast<double>(len);
      double q = 0.0;
      for (int64_t i = 0; i < len; ++i) q += (xr[i] - mean) * (xr[i] - mean);
      const double inv_std = 1.0 / std::sqrt(q / static_cast<double>(len) + epsilon);
      if (mean_out) mean_out[r] = mean;
      if (inv_std_out) inv_std_out[r] = inv_std;
      const int64_t c0 = (r % period) * channels;
      for (int64_t c = 0; c < channels; ++c) {
        const double a = inv_std * (scale ? scale[c0 + c] : 1.0);
        const double b = bias ? bias[c0 + c] : 0.0;
        for (int64_t i = c * spatial; i < (c + 1) * spatial; ++i) yr[i] = (xr[i] - mean) * a + b;
      }
    }
  });
}

void ChannelAffineF64(const double* x, double* y, int64_t outer, int64_t channels,
                      int64_t inner, const double* center, const double* mul, const double* add,
                      const Parallel& parallel) {
  const int64_t rows = outer * channels;
  if (rows <= 0 || inner <= 0) return;
  const int64_t per = normalization_detail::RowsPerTask(inner);
  parallel.For((rows + per - 1) / per, [&](int64_t t0, int64_t t1) {
    const int64_t r1 = std::min(rows, t1 * per);
    for (int64_t r = t0 * per; r < r1; ++r) {
      const int64_t c = r % channels;
      for (int64_t i = r * inner; i < (r + 1) * inner; ++i) {
        y[i] = (x[i] - center[c]) * mul[c] + add[c];
      }
    }
  });
}

void ChannelMeanVarF64(const double* x, int64_t outer, int64_t channels, int64_t inner,
                       double* mean, double* var, const Parallel& parallel) {
  const double count = static_cast<double>(outer) * static_cast<double>(inner);
  parallel.For(channels, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double s = 0.0;
      for (int64_t o = 0; o < outer; ++o) {
        const double* xr = x + (o * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) s += xr[i];
      }
      const double m = count > 0 ? s / count : 0.0;
      double q = 0.0;
      for (int64_t o = 0; o < outer; ++o) {
        const double* xr = x + (o * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) q += (xr[i] - m) * (xr[i] - m);
      }
      mean[c] = m;
      var[c] = count > 0 ? q / count : 0.0;
    }
  });
}

namespace {

template <typename T>
void MeanVarianceNormalize(const T* x, T* y, const std::vector<int64_t>& dims,
                           const std::vector<bool>& reduce, double epsilon) {
  // Merge neighbouring dims of the same kind; each element's statistics slot is its index over
  // the kept dims (row-major), tracked with an odometer instead of per-element division.
  std::vector<int64_t> size;
  std::vector<bool> red;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!size.empty() && red.back() == static_cast<bool>(reduce[i])) {
      size.back() *= dims[i];
    } else {
      size.push_back(dims[i]);
      red.push_back(reduce[i]);
    }
  }
  int64_t total = 1, kept = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    total *= size[i];
    if (!red[i]) kept *= size[i];
  }
  if (total == 0) return;
  const int64_t per_slot = total / kept;
  const size_t m = size.size();
  std::vector<int64_t> kept_stride(m, 0);
  for (int64_t i = static_cast<int64_t>(m) - 1, s = 1; i >= 0; --i) {
    if (!red[i]) {
      kept_stride[i] = s;
      s *= size[i];
    }
  }
  std::vector<double> mean(kept, 0.0), var(kept, 0.0);
  auto for_each = [&](const auto& fn) {
    std::vector<int64_t> coord(m, 0);
    int64_t slot = 0;
    for (int64_t i = 0; i < total; ++i) {
      fn(i, slot);
      for (int64_t a = static_cast<int64_t>(m) - 1; a >= 0; --a) {
        slot += kept_stride[a];
        if (++coord[a] < size[a]) break;
        slot -= kept_stride[a] * size[a];
        coord[a] = 0;
      }
    }
  };
  for_each([&](int64_t i, int64_t s) { mean[s] += static_cast<double>(x[i]); });
  for (auto& v : mean) v /= static_cast<double>(per_slot);
  for_each([&](int64_t i, int64_t s) {
    const double t = static_cast<double>(x[i]) - mean[s];
    var[s] += t * t;
  });
  for (auto& v : var) v = std::sqrt(v / static_cast<double>(per_slot)) + epsilon;
  for_each([&](int64_t i, int64_t s) {
    y[i] = static_cast<T>((static_cast<double>(x[i]) - mean[s]) / var[s]);
  });
}

template <typename T>
void LpNormalize(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, int p,
                 const Parallel& parallel) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  parallel.For(outer, [&](int64_t o0, int64_t o1) {
    std::vector<double> acc(static_cast<size_t>(inner));
    for (int64_t o = o0; o < o1; ++o) {
      const T* xb = x + o * n * inner;
      T* yb = y + o * n * inner;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          const double v = static_cast<double>(xb[k * inner + j]);
          acc[j] += p == 1 ? std::fabs(v) : v * v;
        }
      }
      for (int64_t j = 0; j < inner; ++j) {
        const double norm = p == 1 ? acc[j] : std::sqrt(acc[j]);
        acc[j] = norm == 0.0 ? 0.0 : 1.0 / norm;
      }
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t j = 0; j < inner; ++j) {
          yb[k * inner + j] = static_cast<T>(static_cast<double>(xb[k * inner + j]) * acc[j]);
        }
      }
    }
  });
}

template <typename T>
void Lrn(const T* x, T* y, int64_t batch, int64_t channels, int64_t spatial, int64_t size,
         float alpha, float beta, float bias, const Parallel& parallel) {
  if (batch <= 0 || channels <= 0 || spatial <= 0) return;
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;  // ceil((size - 1) / 2)
  const double scale = static_cast<double>(alpha) / static_cast<double>(size);
  parallel.For(batch * channels, [&](int64_t r0, int64_t r1) {
    std::vector<double> acc(static_cast<size_t>(spatial));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / channels, c = r % channels;
      std::fill(acc.begin(), acc.end(), 0.0);
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min<int64_t>(channels - 1, c + after);
      for (int64_t i = lo; i <= hi; ++i) {
        const T* xc = x + (b * channels + i) * spatial;
        for (int64_t s = 0; s < spatial; ++s) {
          const double v = static_cast<double>(xc[s]);
          acc[s] += v * v;
        }
      }
      const T* xr = x + r * spatial;
      T* yr = y + r * spatial;
      for (int64_t s = 0; s < spatial; ++s) {
        yr[s] = static_cast<T>(static_cast<double>(xr[s]) /
                               std::pow(static_cast<double>(bias) + scale * acc[s],
                                        static_cast<double>(beta)));
      }
    }
  });
}

}  // namespace

void MeanVarianceNormalizeF32(const float* x, float* y, const std::vector<int64_t>& dims,
                              const std::vector<bool>& reduce, double epsilon,
                              const Parallel& parallel) {
  MeanVarianceNormalize(x, y, dims, reduce, epsilon);
}
void MeanVarianceNormalizeF64(const double* x, double* y, const std::vector<int64_t>& dims,
                              const std::vector<bool>& reduce, double epsilon,
                              const Parallel& parallel) {
  MeanVarianceNormalize(x, y, dims, reduce, epsilon);
}

void LpNormalizeF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, int p,
                    const Parallel& parallel) {
  LpNormalize(x, y, outer, n, inner, p, parallel);
}
void LpNormalizeF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner, int p,
                    const Parallel& parallel) {
  LpNormalize(x, y, outer, n, inner, p, parallel);
}

void LrnF32(const float* x, float* y, int64_t batch, int64_t channels, int64_t spatial,
            int64_t size, float alpha, float beta, float bias, const Parallel& parallel) {
  Lrn(x, y, batch, channels, spatial, size, alpha, beta, bias, parallel);
}
void LrnF64(const double* x, double* y, int64_t batch, int64_t channels, int64_t spatial,
            int64_t size, float alpha, float beta, float bias, const Parallel& parallel) {
  Lrn(x, y, batch, channels, spatial, size, alpha, beta, bias, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
