// Softmax / LogSoftmax / Hardmax kernels (see softmax.h for the [outer, n, inner] view).
//
// Row case (inner == 1): three passes over the row: max, exp(x - max) with a double-precision sum,
// then scale by 1/sum (or subtract log(sum)). Strided case (inner > 1): columns are processed in
// chunks of kChunk; per-column max / sum live in small stack arrays, and every pass walks the
// chunk row by row, so loads are contiguous and vectorized across columns.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/softmax.cc"
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "kernels/nn/widened_sum-inl.h"  // row sums in double, one order on every 128-bit target

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/nn/softmax.h"

#ifndef SIMPLECPP_KERNELS_SOFTMAX_SHARED_
#define SIMPLECPP_KERNELS_SOFTMAX_SHARED_
namespace simplecpp::kernels::softmax_detail {

// Columns per strided task; a multiple of every vector width.
constexpr int64_t kChunk = 256;
// Target work (elements) per row-case task.
constexpr int64_t kRowTaskElements = 1 << 14;

// Scalar strided/row softmax over one [n, w] block with row stride `inner`, computing in double.
// Used for double tensors and for the < lanes leftover columns of the float path.
template <typename T, bool kLog>
void SoftmaxBlockScalar(const T* x, T* y, int64_t n, int64_t inner, int64_t w) {
  double cmax[kChunk];
  double csum[kChunk];
  for (int64_t j0 = 0; j0 < w; j0 += kChunk) {
    const int64_t cw = std::min<int64_t>(kChunk, w - j0);
    for (int64_t j = 0; j < cw; ++j) cmax[j] = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < n; ++k) {
      const T* row = x + k * inner + j0;
      for (int64_t j = 0; j < cw; ++j) cmax[j] = std::max(cmax[j], static_cast<double>(row[j]));
    }
    for (int64_t j = 0; j < cw; ++j) csum[j] = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const T* row = x + k * inner + j0;
      T* out = y + k * inner + j0;
      for (int64_t j = 0; j < cw; ++j) {
        const double e = std::exp(static_cast<double>(row[j]) - cmax[j]);
        if (!kLog) out[j] = static_cast<T>(e);
        csum[j] += e;
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      const T* row = x + k * inner + j0;
      T* out = y + k * inner + j0;
      for (int64_t j = 0; j < cw; ++j) {
        if (kLog) {
          out[j] = static_cast<T>(static_cast<double>(row[j]) - cmax[j] - std::log(csum[j]));
        } else {
          out[j] = static_cast<T>(static_cast<double>(out[j]) / csum[j]);
        }
      }
    }
  }
}

template <typename T>
void HardmaxBlock(const T* x, T* y, int64_t n, int64_t inner) {
  int64_t best[kChunk];
  for (int64_t j0 = 0; j0 < inner; j0 += kChunk) {
    const int64_t cw = std::min<int64_t>(kChunk, inner - j0);
    for (int64_t j = 0; j < cw; ++j) best[j] = 0;
    for (int64_t k = 1; k < n; ++k) {
      const T* row = x + k * inner + j0;
      for (int64_t j = 0; j < cw; ++j) {
        const T b = x[best[j] * inner + j0 + j];
        const T v = row[j];
        // First maximum wins; a NaN beats everything but an earlier NaN (numpy argmax).
        if (!std::isnan(b) && (v > b || std::isnan(v))) best[j] = k;
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      T* out = y + k * inner + j0;
      for (int64_t j = 0; j < cw; ++j) out[j] = best[j] == k ? T(1) : T(0);
    }
  }
}

}  // namespace simplecpp::kernels::softmax_detail
#endif  // SIMPLECPP_KERNELS_SOFTMAX_SHARED_

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using softmax_detail::kChunk;

namespace {  // file-local helpers (internal linkage: other kernel files may reuse the names)

using DF = hn::ScalableTag<float>;
constexpr size_t kMaxFloatLanes = 64;  // >= lanes of any target

// Loads the first `count` (< lanes) floats from p, other lanes = fill; never reads past p+count.
HWY_INLINE hn::Vec<DF> LoadTail(DF d, const float* p, size_t count, float fill) {
  alignas(64) float buf[kMaxFloatLanes];
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < lanes; ++i) buf[i] = i < count ? p[i] : fill;
  return hn::Load(d, buf);
}

// Stores the first `count` lanes of v to p; never writes past p+count.
HWY_INLINE void StoreTail(DF d, hn::Vec<DF> v, float* p, size_t count) {
  alignas(64) float buf[kMaxFloatLanes];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, count * sizeof(float));
}

// Highway's Exp maps NaN to 0 (its range check is false for NaN); softmax must propagate it.
HWY_INLINE hn::Vec<DF> ExpKeepNaN(DF d, hn::Vec<DF> v) {
  return hn::IfThenElse(hn::Eq(v, v), hn::Exp(d, v), v);
}

#if HWY_HAVE_FLOAT64
using DD = hn::Repartition<double, DF>;
#endif

// One contiguous row of n floats.
template <bool kLog>
void SoftmaxRow(const float* x, float* y, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const float kNegInf = -std::numeric_limits<float>::infinity();
  auto vmax = hn::Set(d, kNegInf);
  size_t i = 0;
  for (; i + N <= n; i += N) vmax = hn::Max(vmax, hn::LoadU(d, x + i));
  if (i < n) vmax = hn::Max(vmax, LoadTail(d, x + i, n - i, kNegInf));
  const auto vm = hn::Set(d, hn::GetLane(hn::MaxOfLanes(d, vmax)));

  widened_sum::WidenedSum sum_acc;
  i = 0;
  for (; i + N <= n; i += N) {
    const auto e = ExpKeepNaN(d, hn::Sub(hn::LoadU(d, x + i), vm));
    if (!kLog) hn::StoreU(e, d, y + i);
    sum_acc.Add(e);
  }
  if (i < n) {
    // Padding lanes hold -inf: exp gives 0 (or NaN when the max is -inf, and then the row is
    // NaN anyway).
    const auto e = ExpKeepNaN(d, hn::Sub(LoadTail(d, x + i, n - i, kNegInf), vm));
    if (!kLog) StoreTail(d, e, y + i, n - i);
    sum_acc.Add(e);
  }
  const double sum = sum_acc.Total();

  i = 0;
  if (kLog) {
    const auto vls = hn::Set(d, static_cast<float>(std::log(sum)));
    for (; i + N <= n; i += N) {
      hn::StoreU(hn::Sub(hn::Sub(hn::LoadU(d, x + i), vm), vls), d, y + i);
    }
    if (i < n) {
      StoreTail(d, hn::Sub(hn::Sub(LoadTail(d, x + i, n - i, 0.0f), vm), vls), y + i, n - i);
    }
  } else {
    const auto vinv = hn::Set(d, static_cast<float>(1.0 / sum));
    for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), vinv), d, y + i);
    if (i < n) StoreTail(d, hn::Mul(LoadTail(d, y + i, n - i, 0.0f), vinv), y + i, n - i);
  }
}

// Columns [0, w) of an [n, inner] block (row stride `inner`), w <= kChunk and a multiple of lanes.
template <bool kLog>
void SoftmaxColumns(const float* x, float* y, size_t n, size_t inner,
                    size_t w) {
  const DF d;
  const size_t N = hn::Lanes(d);
  alignas(64) float cmax[kChunk];
  alignas(64) float cfin[kChunk];  // 1/sum (softmax) or log(sum) (log-softmax)
  alignas(64) double csum[kChunk];
  const auto neg_inf = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (size_t j = 0; j < w; j += N) hn::Store(neg_inf, d, cmax + j);
  for (size_t k = 0; k < n; ++k) {
    const float* row = x + k * inner;
    for (size_t j = 0; j < w; j += N) {
      hn::Store(hn::Max(hn::Load(d, cmax + j), hn::LoadU(d, row + j)), d, cmax + j);
    }
  }
#if HWY_HAVE_FLOAT64
  const DD dd;
  const size_t NH = hn::Lanes(dd);
  for (size_t j = 0; j < w; j += NH) hn::Store(hn::Zero(dd), dd, csum + j);
  for (size_t k = 0; k < n; ++k) {
    const float* row = x + k * inner;
    float* out = y + k * inner;
    for (size_t j = 0; j < w; j += N) {
      const auto e = ExpKeepNaN(d, hn::Sub(hn::LoadU(d, row + j), hn::Load(d, cmax + j)));
      if (!kLog) hn::StoreU(e, d, out + j);
      auto lo = hn::Load(dd, csum + j);
      auto hi = hn::Load(dd, csum + j + NH);
      widened_sum::AddWidened(e, lo, hi);
      hn::Store(lo, dd, csum + j);
      hn::Store(hi, dd, csum + j + NH);
    }
  }
#else
  for (size_t j = 0; j < w; ++j) csum[j] = 0.0;
  for (size_t k = 0; k < n; ++k) {
    const float* row = x + k * inner;
    float* out = y + k * inner;
    for (size_t j = 0; j < w; j += N) {
      const auto e = ExpKeepNaN(d, hn::Sub(hn::LoadU(d, row + j), hn::Load(d, cmax + j)));
      if (!kLog) hn::StoreU(e, d, out + j);
      alignas(64) float buf[kMaxFloatLanes];
      hn::Store(e, d, buf);
      for (size_t l = 0; l < N; ++l) csum[j + l] += buf[l];
    }
  }
#endif
  // csum lanes follow the column order (lower half of each float vector first).
  for (size_t j = 0; j < w; ++j) {
    cfin[j] = kLog ? static_cast<float>(std::log(csum[j])) : static_cast<float>(1.0 / csum[j]);
  }
  for (size_t k = 0; k < n; ++k) {
    const float* row = x + k * inner;
    float* out = y + k * inner;
    for (size_t j = 0; j < w; j += N) {
      if (kLog) {
        const auto v = hn::Sub(hn::Sub(hn::LoadU(d, row + j), hn::Load(d, cmax + j)),
                               hn::Load(d, cfin + j));
        hn::StoreU(v, d, out + j);
      } else {
        hn::StoreU(hn::Mul(hn::LoadU(d, out + j), hn::Load(d, cfin + j)), d, out + j);
      }
    }
  }
}

template <bool kLog>
void SoftmaxImpl(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                 const Parallel* parallel) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  if (inner == 1) {
    const int64_t rows_per_task = std::max<int64_t>(1, softmax_detail::kRowTaskElements / n);
    const int64_t tasks = (outer + rows_per_task - 1) / rows_per_task;
    parallel->For(tasks, [&](int64_t t0, int64_t t1) {
      const int64_t r1 = std::min(outer, t1 * rows_per_task);
      for (int64_t r = t0 * rows_per_task; r < r1; ++r) {
        SoftmaxRow<kLog>(x + r * n, y + r * n, static_cast<size_t>(n));
      }
    });
    return;
  }
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
  const int64_t N = static_cast<int64_t>(hn::Lanes(DF()));
  parallel->For(outer * chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / chunks;
      const int64_t j0 = (t % chunks) * kChunk;
      const int64_t w = std::min<int64_t>(kChunk, inner - j0);
      const int64_t wv = w - w % N;
      const float* xb = x + o * n * inner + j0;
      float* yb = y + o * n * inner + j0;
      if (wv > 0) {
        SoftmaxColumns<kLog>(xb, yb, static_cast<size_t>(n), static_cast<size_t>(inner),
                             static_cast<size_t>(wv));
      }
      if (wv < w) {
        softmax_detail::SoftmaxBlockScalar<float, kLog>(xb + wv, yb + wv, n, inner, w - wv);
      }
    }
  });
}

}  // namespace

void SoftmaxF32Impl(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                    const Parallel* parallel) {
  SoftmaxImpl<false>(x, y, outer, n, inner, parallel);
}
void LogSoftmaxF32Impl(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                       const Parallel* parallel) {
  SoftmaxImpl<true>(x, y, outer, n, inner, parallel);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(SoftmaxF32Impl);
HWY_EXPORT(LogSoftmaxF32Impl);

void SoftmaxF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(SoftmaxF32Impl)(x, y, outer, n, inner, &parallel);
}
void LogSoftmaxF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                   const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(LogSoftmaxF32Impl)(x, y, outer, n, inner, &parallel);
}

namespace {

// Tasks: one per (outer block, column chunk); boundaries depend only on the sizes.
template <typename Fn>
void ForBlocks(int64_t outer, int64_t n, int64_t inner, const Parallel& parallel, const Fn& fn) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  const int64_t chunk = softmax_detail::kChunk;
  const int64_t chunks = (inner + chunk - 1) / chunk;
  parallel.For(outer * chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / chunks;
      const int64_t j0 = (t % chunks) * chunk;
      fn(o * n * inner + j0, std::min(chunk, inner - j0));
    }
  });
}

}  // namespace

void SoftmaxF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t off, int64_t w) {
    softmax_detail::SoftmaxBlockScalar<double, false>(x + off, y + off, n, inner, w);
  });
}
void LogSoftmaxF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner,
                   const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t off, int64_t w) {
    softmax_detail::SoftmaxBlockScalar<double, true>(x + off, y + off, n, inner, w);
  });
}

template <typename T>
static void Hardmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner,
                    const Parallel& parallel) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  parallel.For(outer, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      softmax_detail::HardmaxBlock<T>(x + o * n * inner, y + o * n * inner, n, inner);
    }
  });
}

void HardmaxF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel) {
  Hardmax(x, y, outer, n, inner, parallel);
}
void HardmaxF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel) {
  Hardmax(x, y, outer, n, inner, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
