// Reduction kernels (see reduce.h): Highway float32 passes over a row-major [outer, n, inner] view
// (also serving 16-bit inputs, widened block by block), and portable templates for the other
// dtypes, ArgMax/ArgMin and CumSum (with their 16-bit versions).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/reduce.cc"
// clang-format off
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include "kernels/nn/reduce.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Work per task: a task's boundaries depend only on the problem size.
constexpr int64_t kTaskElements = 16384;
// Columns per task when reducing over an outer axis (a multiple of every target's lane count).
constexpr int64_t kColumnChunk = 512;

// Policies: Identity, Map (first-pass transform of an element: x, x*x, |x|), Combine (fold an
// element into the accumulator), and their scalar twins for tails. kTrackNaN: Max/Min keep a
// separate NaN mask because Highway's Max/Min do not propagate NaN on every target.
struct SumP {
  static constexpr bool kTrackNaN = false;
  static float Identity() { return 0.0f; }
  static VF Map(VF x) { return x; }
  static VF Combine(VF a, VF b) { return hn::Add(a, b); }
  static float MapS(float x) { return x; }
  static float CombineS(float a, float b) { return a + b; }
};
struct SumSquareP : SumP {
  static VF Map(VF x) { return hn::Mul(x, x); }
  static float MapS(float x) { return x * x; }
};
struct AbsSumP : SumP {
  static VF Map(VF x) { return hn::Abs(x); }
  static float MapS(float x) { return std::fabs(x); }
};
struct ProdP {
  static constexpr bool kTrackNaN = false;
  static float Identity() { return 1.0f; }
  static VF Map(VF x) { return x; }
  static VF Combine(VF a, VF b) { return hn::Mul(a, b); }
  static float MapS(float x) { return x; }
  static float CombineS(float a, float b) { return a * b; }
};
struct MaxP {
  static constexpr bool kTrackNaN = true;
  static float Identity() { return -std::numeric_limits<float>::infinity(); }
  static VF Map(VF x) { return x; }
  static VF Combine(VF a, VF b) { return hn::Max(a, b); }
  static float MapS(float x) { return x; }
  static float CombineS(float a, float b) { return b > a ? b : a; }
};
struct MinP {
  static constexpr bool kTrackNaN = true;
  static float Identity() { return std::numeric_limits<float>::infinity(); }
  static VF Map(VF x) { return x; }
  static VF Combine(VF a, VF b) { return hn::Min(a, b); }
  static float MapS(float x) { return x; }
  static float CombineS(float a, float b) { return b < a ? b : a; }
};

// All bits set in lanes where v is NaN.
// (IsNaN, not Ne(v, v): AVX2/AVX-512 implement Ne as an ordered compare, false for NaN.)
HWY_INLINE VF NaNBits(DF d, VF v) { return hn::VecFromMask(d, hn::IsNaN(v)); }

// Folds the lanes of v in lane order (deterministic for a given target).
template <class P>
HWY_INLINE float FoldLanes(DF d, VF v) {
  HWY_ALIGN float lanes[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(v, d, lanes);
  float r = lanes[0];
  const size_t N = hn::Lanes(d);
  for (size_t l = 1; l < N; ++l) r = P::CombineS(r, lanes[l]);
  return r;
}

// Reduces the contiguous row x[0, n).
template <class P>
HWY_INLINE float ReduceRow(const float* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  VF a0 = hn::Set(d, P::Identity());
  VF a1 = a0, a2 = a0, a3 = a0;
  VF nan = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const VF v0 = hn::LoadU(d, x + i);
    const VF v1 = hn::LoadU(d, x + i + N);
    const VF v2 = hn::LoadU(d, x + i + 2 * N);
    const VF v3 = hn::LoadU(d, x + i + 3 * N);
    a0 = P::Combine(a0, P::Map(v0));
    a1 = P::Combine(a1, P::Map(v1));
    a2 = P::Combine(a2, P::Map(v2));
    a3 = P::Combine(a3, P::Map(v3));
    if (P::kTrackNaN) {
      nan = hn::Or(nan, hn::Or(hn::Or(NaNBits(d, v0), NaNBits(d, v1)),
                               hn::Or(NaNBits(d, v2), NaNBits(d, v3))));
    }
  }
  for (; i + N <= n; i += N) {
    const VF v0 = hn::LoadU(d, x + i);
    a0 = P::Combine(a0, P::Map(v0));
    if (P::kTrackNaN) nan = hn::Or(nan, NaNBits(d, v0));
  }
  a0 = P::Combine(P::Combine(a0, a1), P::Combine(a2, a3));
  float r = FoldLanes<P>(d, a0);
  bool has_nan = P::kTrackNaN && !hn::AllFalse(d, hn::MaskFromVec(nan));
  for (; i < n; ++i) {
    r = P::CombineS(r, P::MapS(x[i]));
    if (P::kTrackNaN && std::isnan(x[i])) has_nan = true;
  }
  return has_nan ? std::numeric_limits<float>::quiet_NaN() : r;
}

// y[j] = reduce over i of x[i * inner + j] for j in [j0, j1). x points at [o, 0, 0].
template <class P>
HWY_INLINE void ReduceColumns(const float* HWY_RESTRICT x, int64_t n, int64_t inner, int64_t j0,
                              int64_t j1, float* HWY_RESTRICT y) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (n == 0) {  // empty reduction: x may be null, so no pointer arithmetic on it
    for (int64_t j = j0; j < j1; ++j) y[j] = P::Identity();
    return;
  }
  const VF qnan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  int64_t j = j0;
  for (; j + 4 * N <= j1; j += 4 * N) {
    VF a0 = hn::Set(d, P::Identity());
    VF a1 = a0, a2 = a0, a3 = a0;
    VF n0 = hn::Zero(d), n1 = n0, n2 = n0, n3 = n0;
    const float* p = x + j;
    for (int64_t i = 0; i < n; ++i, p += inner) {
      const VF v0 = hn::LoadU(d, p);
      const VF v1 = hn::LoadU(d, p + N);
      const VF v2 = hn::LoadU(d, p + 2 * N);
      const VF v3 = hn::LoadU(d, p + 3 * N);
      a0 = P::Combine(a0, P::Map(v0));
      a1 = P::Combine(a1, P::Map(v1));
      a2 = P::Combine(a2, P::Map(v2));
      a3 = P::Combine(a3, P::Map(v3));
      if (P::kTrackNaN) {
        n0 = hn::Or(n0, NaNBits(d, v0));
        n1 = hn::Or(n1, NaNBits(d, v1));
        n2 = hn::Or(n2, NaNBits(d, v2));
        n3 = hn::Or(n3, NaNBits(d, v3));
      }
    }
    if (P::kTrackNaN) {
      a0 = hn::IfThenElse(hn::MaskFromVec(n0), qnan, a0);
      a1 = hn::IfThenElse(hn::MaskFromVec(n1), qnan, a1);
      a2 = hn::IfThenElse(hn::MaskFromVec(n2), qnan, a2);
      a3 = hn::IfThenElse(hn::MaskFromVec(n3), qnan, a3);
    }
    hn::StoreU(a0, d, y + j);
    hn::StoreU(a1, d, y + j + N);
    hn::StoreU(a2, d, y + j + 2 * N);
    hn::StoreU(a3, d, y + j + 3 * N);
  }
  for (; j + N <= j1; j += N) {
    VF a0 = hn::Set(d, P::Identity());
    VF n0 = hn::Zero(d);
    const float* p = x + j;
    for (int64_t i = 0; i < n; ++i, p += inner) {
      const VF v0 = hn::LoadU(d, p);
      a0 = P::Combine(a0, P::Map(v0));
      if (P::kTrackNaN) n0 = hn::Or(n0, NaNBits(d, v0));
    }
    if (P::kTrackNaN) a0 = hn::IfThenElse(hn::MaskFromVec(n0), qnan, a0);
    hn::StoreU(a0, d, y + j);
  }
  for (; j < j1; ++j) {  // fewer than one vector of columns left
    float r = P::Identity();
    bool has_nan = false;
    const float* p = x + j;
    for (int64_t i = 0; i < n; ++i, p += inner) {
      r = P::CombineS(r, P::MapS(*p));
      if (P::kTrackNaN && std::isnan(*p)) has_nan = true;
    }
    y[j] = has_nan ? std::numeric_limits<float>::quiet_NaN() : r;
  }
}

// sum of exp(x[i] - m) over the contiguous row x[0, n) (m finite).
HWY_INLINE float SumExpShifted(const float* HWY_RESTRICT x, int64_t n, float m) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF vm = hn::Set(d, m);
  VF s0 = hn::Zero(d), s1 = s0;
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    s0 = hn::Add(s0, hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vm)));
    s1 = hn::Add(s1, hn::Exp(d, hn::Sub(hn::LoadU(d, x + i + N), vm)));
  }
  for (; i + N <= n; i += N) s0 = hn::Add(s0, hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vm)));
  float s = FoldLanes<SumP>(d, hn::Add(s0, s1));
  for (; i < n; ++i) s += std::exp(x[i] - m);
  return s;
}

// log(sum(exp(x))) of a contiguous row, as m + log(sum(exp(x - m))).
HWY_INLINE float LogSumExpRow(const float* HWY_RESTRICT x, int64_t n) {
  const float m = ReduceRow<MaxP>(x, n);
  // NaN, +inf, or -inf (every element -inf, or n == 0): the result is m itself.
  if (!std::isfinite(m)) return m;
  return m + std::log(SumExpShifted(x, n, m));
}

template <class V>
HWY_INLINE V LogSumExpFinish(DF d, V m, V s) {
  return hn::IfThenElse(hn::IsFinite(m), hn::Add(m, hn::Log(d, s)), m);
}

HWY_INLINE void LogSumExpColumns(const float* HWY_RESTRICT x, int64_t n, int64_t inner, int64_t j0,
                                 int64_t j1, float* HWY_RESTRICT y) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Column maxima (NaN propagating) first, written to y, then the sums of exp(x - m).
  ReduceColumns<MaxP>(x, n, inner, j0, j1, y);
  if (n == 0) return;  // log(0) = -inf, the max's identity already in y; x may be null
  int64_t j = j0;
  for (; j + N <= j1; j += N) {
    const VF m = hn::LoadU(d, y + j);
    // Lanes whose max is not finite keep m; clamp their offset so Exp sees a valid argument.
    const VF mf = hn::IfThenElseZero(hn::IsFinite(m), m);
    VF s = hn::Zero(d);
    const float* p = x + j;
    for (int64_t i = 0; i < n; ++i, p += inner) {
      s = hn::Add(s, hn::Exp(d, hn::Sub(hn::LoadU(d, p), mf)));
    }
    hn::StoreU(LogSumExpFinish(d, m, s), d, y + j);
  }
  for (; j < j1; ++j) {
    const float m = y[j];
    if (!std::isfinite(m)) continue;
    float s = 0.0f;
    const float* p = x + j;
    for (int64_t i = 0; i < n; ++i, p += inner) s += std::exp(*p - m);
    y[j] = m + std::log(s);
  }
}

// One pass y[o, j] = reduce_i x[o, i, j], split into tasks that depend only on the sizes.
template <class RowFn, class ColFn>
HWY_INLINE void RunPass(int64_t outer, int64_t n, int64_t inner, const Parallel& parallel,
                        const RowFn& row, const ColFn& cols) {
  if (outer <= 0 || inner <= 0) return;
  if (inner == 1) {
    const int64_t rows_per_task = std::max<int64_t>(1, kTaskElements / std::max<int64_t>(n, 1));
    const int64_t tasks = (outer + rows_per_task - 1) / rows_per_task;
    parallel.For(tasks, [&](int64_t t0, int64_t t1) {
      const int64_t end = std::min(outer, t1 * rows_per_task);
      for (int64_t o = t0 * rows_per_task; o < end; ++o) row(o);
    });
    return;
  }
  const int64_t chunks = (inner + kColumnChunk - 1) / kColumnChunk;
  parallel.For(outer * chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / chunks;
      const int64_t j0 = (t % chunks) * kColumnChunk;
      cols(o, j0, std::min(inner, j0 + kColumnChunk));
    }
  });
}

template <class P>
void ReduceImpl(const float* HWY_RESTRICT x, int64_t outer, int64_t n, int64_t inner,
                float* HWY_RESTRICT y, const Parallel& parallel) {
  RunPass(
      outer, n, inner, parallel, [&](int64_t o) { y[o] = ReduceRow<P>(x + o * n, n); },
      [&](int64_t o, int64_t j0, int64_t j1) {
        ReduceColumns<P>(x + o * n * inner, n, inner, j0, j1, y + o * inner);
      });
}

// Reduce<Name>F32Impl (Sum, SumSquare, AbsSum, Prod, Max, Min): ReduceImpl of policy P, as a
// plain function for HWY_EXPORT.
#define SIMPLECPP_REDUCE_F32_IMPL(Name, P)                                                      \
  void Reduce##Name##F32Impl(const float* x, int64_t outer, int64_t n, int64_t inner, float* y, \
                             const Parallel& parallel) {                                       \
    ReduceImpl<P>(x, outer, n, inner, y, parallel);                                            \
  }
SIMPLECPP_REDUCE_F32_IMPL(Sum, SumP)
SIMPLECPP_REDUCE_F32_IMPL(SumSquare, SumSquareP)
SIMPLECPP_REDUCE_F32_IMPL(AbsSum, AbsSumP)
SIMPLECPP_REDUCE_F32_IMPL(Prod, ProdP)
SIMPLECPP_REDUCE_F32_IMPL(Max, MaxP)
SIMPLECPP_REDUCE_F32_IMPL(Min, MinP)
#undef SIMPLECPP_REDUCE_F32_IMPL

void ReduceLogSumExpF32Impl(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                            const Parallel& parallel) {
  RunPass(
      outer, n, inner, parallel, [&](int64_t o) { y[o] = LogSumExpRow(x + o * n, n); },
      [&](int64_t o, int64_t j0, int64_t j1) {
        LogSumExpColumns(x + o * n * inner, n, inner, j0, j1, y + o * inner);
      });
}

// ---- 16-bit input (float16 / bfloat16 bits): blocks of at most kWiden16 elements are widened
// (exactly) into a stack buffer and reduced with the float32 code above; the partial results of
// the blocks are combined in float32.
constexpr int64_t kWiden16 = 2048;

// P's combine of two partial results; Max/Min propagate NaN.
template <class P>
HWY_INLINE float CombinePartial(float a, float b) {
  if (P::kTrackNaN && (std::isnan(a) || std::isnan(b))) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return P::CombineS(a, b);
}

// acc[j] = combine(acc[j], part[j]) for j in [0, len).
template <class P>
HWY_INLINE void CombineInto(float* HWY_RESTRICT acc, const float* HWY_RESTRICT part, int64_t len) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF qnan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  int64_t j = 0;
  for (; j + N <= len; j += N) {
    const VF a = hn::LoadU(d, acc + j);
    const VF p = hn::LoadU(d, part + j);
    VF r = P::Combine(a, p);
    if (P::kTrackNaN) {
      r = hn::IfThenElse(hn::MaskFromVec(hn::Or(NaNBits(d, a), NaNBits(d, p))), qnan, r);
    }
    hn::StoreU(r, d, acc + j);
  }
  for (; j < len; ++j) acc[j] = CombinePartial<P>(acc[j], part[j]);
}

// Widens rows [0, rows) of the column block x[i * inner + j], j in [0, len), into buf [rows, len].
HWY_INLINE void WidenRows(Float16Kind kind, const uint16_t* x, int64_t rows, int64_t len,
                          int64_t inner, float* HWY_RESTRICT buf) {
  if (len == inner) {  // the rows are contiguous
    Widen16(kind, x, buf, static_cast<size_t>(rows * len));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    Widen16(kind, x + r * inner, buf + r * len, static_cast<size_t>(len));
  }
}

// Rows of the column block [j0, j1) (at most kColumnChunk columns) per widened block.
HWY_INLINE int64_t RowsPerBlock16(int64_t len) {
  return std::max<int64_t>(1, kWiden16 / std::max<int64_t>(len, 1));
}

template <class P>
HWY_INLINE float ReduceRow16(Float16Kind kind, const uint16_t* x, int64_t n) {
  HWY_ALIGN float buf[kWiden16];
  float r = P::Identity();
  for (int64_t b = 0; b < n; b += kWiden16) {
    const int64_t len = std::min(kWiden16, n - b);
    Widen16(kind, x + b, buf, static_cast<size_t>(len));
    r = CombinePartial<P>(r, ReduceRow<P>(buf, len));
  }
  return r;
}

// y[j] = reduce over i of x[i * inner + j] for j in [j0, j1), j1 - j0 <= kColumnChunk.
template <class P>
HWY_INLINE void ReduceColumns16(Float16Kind kind, const uint16_t* x, int64_t n, int64_t inner,
                                int64_t j0, int64_t j1, float* HWY_RESTRICT y) {
  HWY_ALIGN float buf[kWiden16];
  HWY_ALIGN float part[kColumnChunk];
  const int64_t len = j1 - j0;
  const int64_t rows = RowsPerBlock16(len);
  float* acc = y + j0;
  for (int64_t j = 0; j < len; ++j) acc[j] = P::Identity();
  for (int64_t i0 = 0; i0 < n; i0 += rows) {
    const int64_t r = std::min(rows, n - i0);
    WidenRows(kind, x + i0 * inner + j0, r, len, inner, buf);
    ReduceColumns<P>(buf, r, len, 0, len, part);
    CombineInto<P>(acc, part, len);
  }
}

HWY_INLINE float LogSumExpRow16(Float16Kind kind, const uint16_t* x, int64_t n) {
  const float m = ReduceRow16<MaxP>(kind, x, n);
  if (!std::isfinite(m)) return m;
  HWY_ALIGN float buf[kWiden16];
  float s = 0.0f;
  for (int64_t b = 0; b < n; b += kWiden16) {
    const int64_t len = std::min(kWiden16, n - b);
    Widen16(kind, x + b, buf, static_cast<size_t>(len));
    s += SumExpShifted(buf, len, m);
  }
  return m + std::log(s);
}

HWY_INLINE void LogSumExpColumns16(Float16Kind kind, const uint16_t* x, int64_t n, int64_t inner,
                                   int64_t j0, int64_t j1, float* HWY_RESTRICT y) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Column maxima (NaN propagating) into y[j0, j1) first, then the sums of exp(x - m).
  ReduceColumns16<MaxP>(kind, x, n, inner, j0, j1, y);
  HWY_ALIGN float buf[kWiden16];
  HWY_ALIGN float mf[kColumnChunk];  // the max where finite, else 0 (keeps Exp's argument valid)
  HWY_ALIGN float s[kColumnChunk];
  const int64_t len = j1 - j0;
  for (int64_t j = 0; j < len; ++j) {
    mf[j] = std::isfinite(y[j0 + j]) ? y[j0 + j] : 0.0f;
    s[j] = 0.0f;
  }
  const int64_t rows = RowsPerBlock16(len);
  for (int64_t i0 = 0; i0 < n; i0 += rows) {
    const int64_t r = std::min(rows, n - i0);
    WidenRows(kind, x + i0 * inner + j0, r, len, inner, buf);
    for (int64_t rr = 0; rr < r; ++rr) {
      const float* row = buf + rr * len;
      int64_t j = 0;
      for (; j + N <= len; j += N) {
        const VF e = hn::Exp(d, hn::Sub(hn::LoadU(d, row + j), hn::LoadU(d, mf + j)));
        hn::StoreU(hn::Add(hn::LoadU(d, s + j), e), d, s + j);
      }
      for (; j < len; ++j) s[j] += std::exp(row[j] - mf[j]);
    }
  }
  for (int64_t j = 0; j < len; ++j) {
    const float m = y[j0 + j];
    if (std::isfinite(m)) y[j0 + j] = m + std::log(s[j]);
  }
}

template <class P>
void Reduce16Impl(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
                  float* y, const Parallel& parallel) {
  RunPass(
      outer, n, inner, parallel, [&](int64_t o) { y[o] = ReduceRow16<P>(kind, x + o * n, n); },
      [&](int64_t o, int64_t j0, int64_t j1) {
        ReduceColumns16<P>(kind, x + o * n * inner, n, inner, j0, j1, y + o * inner);
      });
}

void Reduce16ToF32Impl(Float16Kind kind, ReduceKind op, const uint16_t* x, int64_t outer, int64_t n,
                       int64_t inner, float* y, const Parallel& parallel) {
  switch (op) {
    case ReduceKind::kSum:
      return Reduce16Impl<SumP>(kind, x, outer, n, inner, y, parallel);
    case ReduceKind::kSumSquare:
      return Reduce16Impl<SumSquareP>(kind, x, outer, n, inner, y, parallel);
    case ReduceKind::kAbsSum:
      return Reduce16Impl<AbsSumP>(kind, x, outer, n, inner, y, parallel);
    case ReduceKind::kProd:
      return Reduce16Impl<ProdP>(kind, x, outer, n, inner, y, parallel);
    case ReduceKind::kMax:
      return Reduce16Impl<MaxP>(kind, x, outer, n, inner, y, parallel);
    case ReduceKind::kMin:
      return Reduce16Impl<MinP>(kind, x, outer, n, inner, y, parallel);
    case ReduceKind::kLogSumExp:
      return RunPass(
          outer, n, inner, parallel, [&](int64_t o) { y[o] = LogSumExpRow16(kind, x + o * n, n); },
          [&](int64_t o, int64_t j0, int64_t j1) {
            LogSumExpColumns16(kind, x + o * n * inner, n, inner, j0, j1, y + o * inner);
          });
  }
}

void DivideF32Impl(float* HWY_RESTRICT y, int64_t count, float divisor) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const VF vd = hn::Set(d, divisor);
  int64_t i = 0;
  for (; i + N <= count; i += N) hn::StoreU(hn::Div(hn::LoadU(d, y + i), vd), d, y + i);
  for (; i < count; ++i) y[i] = y[i] / divisor;
}

void SqrtF32Impl(float* HWY_RESTRICT y, int64_t count) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= count; i += N) hn::StoreU(hn::Sqrt(hn::LoadU(d, y + i)), d, y + i);
  for (; i < count; ++i) y[i] = std::sqrt(y[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(DivideF32Impl);
HWY_EXPORT(SqrtF32Impl);
HWY_EXPORT(Reduce16ToF32Impl);

// Reduce<Name>F32 of kernels/nn/reduce.h, dispatching to Reduce<Name>F32Impl.
#define SIMPLECPP_REDUCE_F32_ENTRY(Name)                                                     \
  HWY_EXPORT(Reduce##Name##F32Impl);                                                        \
  void Reduce##Name##F32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,  \
                         const Parallel& parallel) {                                        \
    HWY_DYNAMIC_DISPATCH(Reduce##Name##F32Impl)(x, outer, n, inner, y, parallel);           \
  }
SIMPLECPP_REDUCE_F32_ENTRY(Sum)
SIMPLECPP_REDUCE_F32_ENTRY(SumSquare)
SIMPLECPP_REDUCE_F32_ENTRY(AbsSum)
SIMPLECPP_REDUCE_F32_ENTRY(Prod)
SIMPLECPP_REDUCE_F32_ENTRY(Max)
SIMPLECPP_REDUCE_F32_ENTRY(Min)
SIMPLECPP_REDUCE_F32_ENTRY(LogSumExp)
#undef SIMPLECPP_REDUCE_F32_ENTRY

void DivideF32(float* y, int64_t count, float divisor) {
  HWY_DYNAMIC_DISPATCH(DivideF32Impl)(y, count, divisor);
}
void SqrtF32(float* y, int64_t count) { HWY_DYNAMIC_DISPATCH(SqrtF32Impl)(y, count); }
void Reduce16ToF32(Float16Kind kind, ReduceKind op, const uint16_t* x, int64_t outer, int64_t n,
                   int64_t inner, float* y, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(Reduce16ToF32Impl)(kind, op, x, outer, n, inner, y, parallel);
}

// ---------------------------------------------------------------------------------------------
// Portable templates for the other dtypes.
namespace {

// Columns handled together when inner > 1 (accumulators live on the stack).
constexpr int64_t kBlock = 256;
constexpr int64_t kGenericTaskElements = 16384;

// Integers accumulate in 64-bit unsigned arithmetic (wrap-around, no UB), floats in their type.
template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, bool>, T, uint64_t>;

template <typename T>
Acc<T> ToAcc(T v) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, bool>) {
    return v;
  } else {
    return static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
  }
}

// double -> T: integers truncate toward zero, saturate, NaN -> 0.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
      return std::numeric_limits<T>::lowest();
    }
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

template <typename T>
bool IsNaN(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

template <typename T>
T LowestValue() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}
template <typename T>
T HighestValue() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

// Calls fn(o, j0, j1) over tasks of rows / column blocks whose boundaries depend only on sizes.
template <class Fn>
void ForBlocks(int64_t outer, int64_t n, int64_t inner, const Parallel& parallel, const Fn& fn) {
  if (outer <= 0 || inner <= 0) return;
  if (inner == 1) {
    const int64_t rows_per_task =
        std::max<int64_t>(1, kGenericTaskElements / std::max<int64_t>(n, 1));
    const int64_t tasks = (outer + rows_per_task - 1) / rows_per_task;
    parallel.For(tasks, [&](int64_t t0, int64_t t1) {
      const int64_t end = std::min(outer, t1 * rows_per_task);
      for (int64_t o = t0 * rows_per_task; o < end; ++o) fn(o, 0, 1);
    });
    return;
  }
  const int64_t chunks = (inner + kBlock - 1) / kBlock;
  parallel.For(outer * chunks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / chunks;
      const int64_t j0 = (t % chunks) * kBlock;
      fn(o, j0, std::min(inner, j0 + kBlock));
    }
  });
}

template <typename T, ReduceKind K>
void GenericReduce(const T* x, int64_t outer, int64_t n, int64_t inner, T* y,
                   const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t len = j1 - j0;
    const T* base = x + o * n * inner + j0;
    T* out = y + o * inner + j0;
    if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin) {
      T acc[kBlock];
      for (int64_t j = 0; j < len; ++j)
        acc[j] = K == ReduceKind::kMax ? LowestValue<T>() : HighestValue<T>();
      for (int64_t i = 0; i < n; ++i) {
        const T* row = base + i * inner;
        for (int64_t j = 0; j < len; ++j) {
          const T v = row[j];
          // NaN is sticky: once acc is NaN no comparison replaces it.
          const bool take = K == ReduceKind::kMax ? (v > acc[j]) : (v < acc[j]);
          if (take || (IsNaN(v) && !IsNaN(acc[j]))) acc[j] = v;
        }
      }
      for (int64_t j = 0; j < len; ++j) out[j] = acc[j];
    } else if constexpr (K == ReduceKind::kLogSumExp) {
      double m[kBlock];
      double s[kBlock];
      for (int64_t j = 0; j < len; ++j) {
        m[j] = -std::numeric_limits<double>::infinity();
        s[j] = 0.0;
      }
      for (int64_t i = 0; i < n; ++i) {
        const T* row = base + i * inner;
        for (int64_t j = 0; j < len; ++j) {
          const double v = static_cast<double>(row[j]);
          if (v > m[j] || (std::isnan(v) && !std::isnan(m[j]))) m[j] = v;
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        const T* row = base + i * inner;
        for (int64_t j = 0; j < len; ++j) {
          if (std::isfinite(m[j])) s[j] += std::exp(static_cast<double>(row[j]) - m[j]);
        }
      }
      for (int64_t j = 0; j < len; ++j) {
        out[j] = FromDouble<T>(std::isfinite(m[j]) ? m[j] + std::log(s[j]) : m[j]);
      }
    } else {
      using A = Acc<T>;
      A acc[kBlock];
      for (int64_t j = 0; j < len; ++j) acc[j] = K == ReduceKind::kProd ? A(1) : A(0);
      for (int64_t i = 0; i < n; ++i) {
        const T* row = base + i * inner;
        for (int64_t j = 0; j < len; ++j) {
          const A v = ToAcc(row[j]);
          if constexpr (K == ReduceKind::kSum) {
            acc[j] += v;
          } else if constexpr (K == ReduceKind::kSumSquare) {
            acc[j] += v * v;
          } else if constexpr (K == ReduceKind::kAbsSum) {
            if constexpr (std::is_floating_point_v<T>) {
              acc[j] += std::fabs(v);
            } else if constexpr (std::is_signed_v<T>) {
              acc[j] += row[j] < 0 ? A(0) - v : v;
            } else {
              acc[j] += v;
            }
          } else {
            acc[j] *= v;
          }
        }
      }
      for (int64_t j = 0; j < len; ++j) out[j] = static_cast<T>(acc[j]);
    }
  });
}

template <typename T>
ReduceFn<T> GenericReduceFn(ReduceKind kind) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (kind) {
      case ReduceKind::kMax:
        return &GenericReduce<T, ReduceKind::kMax>;
      case ReduceKind::kMin:
        return &GenericReduce<T, ReduceKind::kMin>;
      default:
        return nullptr;
    }
  } else {
    switch (kind) {
      case ReduceKind::kSum:
        return &GenericReduce<T, ReduceKind::kSum>;
      case ReduceKind::kSumSquare:
        return &GenericReduce<T, ReduceKind::kSumSquare>;
      case ReduceKind::kAbsSum:
        return &GenericReduce<T, ReduceKind::kAbsSum>;
      case ReduceKind::kProd:
        return &GenericReduce<T, ReduceKind::kProd>;
      case ReduceKind::kMax:
        return &GenericReduce<T, ReduceKind::kMax>;
      case ReduceKind::kMin:
        return &GenericReduce<T, ReduceKind::kMin>;
      case ReduceKind::kLogSumExp:
        return &GenericReduce<T, ReduceKind::kLogSumExp>;
    }
    return nullptr;
  }
}

// "better" for ArgMax (kMax) / ArgMin: NaN wins; ties keep the first index unless select_last.
// Whether v replaces the current best.
template <typename T, bool kMax>
bool ArgTakes(T best, T v, bool select_last) {
  if (IsNaN(best)) return select_last && IsNaN(v);
  if (IsNaN(v)) return true;
  if (select_last) return kMax ? !(v < best) : !(best < v);
  return kMax ? (best < v) : (v < best);
}

template <typename T, bool kMax>
void GenericArg(const T* x, int64_t outer, int64_t n, int64_t inner, bool select_last, int64_t* y,
                const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t len = j1 - j0;
    const T* base = x + o * n * inner + j0;
    int64_t* out = y + o * inner + j0;
    T best[kBlock];
    for (int64_t j = 0; j < len; ++j) {
      best[j] = base[j];
      out[j] = 0;
    }
    for (int64_t i = 1; i < n; ++i) {
      const T* row = base + i * inner;
      for (int64_t j = 0; j < len; ++j) {
        const T v = row[j];
        if (ArgTakes<T, kMax>(best[j], v, select_last)) {
          best[j] = v;
          out[j] = i;
        }
      }
    }
  });
}

// ArgMax / ArgMin of 16-bit x on the exact float32 widenings, widened kBlock elements at a time.
template <bool kMax>
void Arg16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
           bool select_last, int64_t* y, const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t o, int64_t j0, int64_t j1) {
    float buf[kBlock];
    if (inner == 1) {  // one contiguous row x[o, 0, n)
      const uint16_t* row = x + o * n;
      float best = 0.0f;
      int64_t best_i = 0;
      for (int64_t b = 0; b < n; b += kBlock) {
        const int64_t len = std::min(kBlock, n - b);
        Widen16(kind, row + b, buf, static_cast<size_t>(len));
        int64_t r = 0;
        if (b == 0) best = buf[r++];
        for (; r < len; ++r) {
          if (ArgTakes<float, kMax>(best, buf[r], select_last)) {
            best = buf[r];
            best_i = b + r;
          }
        }
      }
      y[o] = best_i;
      return;
    }
    const int64_t len = j1 - j0;
    const uint16_t* base = x + o * n * inner + j0;
    int64_t* out = y + o * inner + j0;
    float best[kBlock];
    Widen16(kind, base, best, static_cast<size_t>(len));
    for (int64_t j = 0; j < len; ++j) out[j] = 0;
    for (int64_t i = 1; i < n; ++i) {
      Widen16(kind, base + i * inner, buf, static_cast<size_t>(len));
      for (int64_t j = 0; j < len; ++j) {
        if (ArgTakes<float, kMax>(best[j], buf[j], select_last)) {
          best[j] = buf[j];
          out[j] = i;
        }
      }
    }
  });
}

template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

}  // namespace

template <>
ReduceFn<float> GetReduceFn<float>(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return &ReduceSumF32;
    case ReduceKind::kSumSquare:
      return &ReduceSumSquareF32;
    case ReduceKind::kAbsSum:
      return &ReduceAbsSumF32;
    case ReduceKind::kProd:
      return &ReduceProdF32;
    case ReduceKind::kMax:
      return &ReduceMaxF32;
    case ReduceKind::kMin:
      return &ReduceMinF32;
    case ReduceKind::kLogSumExp:
      return &ReduceLogSumExpF32;
  }
  return nullptr;
}

template <typename T>
ReduceFn<T> GetReduceFn(ReduceKind kind) {
  return GenericReduceFn<T>(kind);
}

template <>
void ReduceDivide<float>(float* y, int64_t count, int64_t divisor) {
  DivideF32(y, count, static_cast<float>(divisor));
}
template <typename T>
void ReduceDivide(T* y, int64_t count, int64_t divisor) {
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      y[i] = y[i] / static_cast<T>(divisor);
    } else if (divisor == 0) {
      y[i] = T(0);
    } else if constexpr (std::is_signed_v<T>) {
      y[i] = static_cast<T>(static_cast<int64_t>(y[i]) / divisor);
    } else {
      y[i] = static_cast<T>(static_cast<uint64_t>(y[i]) / static_cast<uint64_t>(divisor));
    }
  }
}

template <>
void ReduceSqrt<float>(float* y, int64_t count) {
  SqrtF32(y, count);
}
template <typename T>
void ReduceSqrt(T* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = FromDouble<T>(std::sqrt(static_cast<double>(y[i])));
}

template <typename T>
void ReduceLog(T* y, int64_t count) {
  if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < count; ++i) y[i] = std::log(y[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) y[i] = FromDouble<T>(std::log(static_cast<double>(y[i])));
  }
}

template <typename T>
void ArgMax(const T* x, int64_t outer, int64_t n, int64_t inner, bool select_last, int64_t* y,
            const Parallel& parallel) {
  GenericArg<T, true>(x, outer, n, inner, select_last, y, parallel);
}
template <typename T>
void ArgMin(const T* x, int64_t outer, int64_t n, int64_t inner, bool select_last, int64_t* y,
            const Parallel& parallel) {
  GenericArg<T, false>(x, outer, n, inner, select_last, y, parallel);
}

template <typename T>
void CumSum(const T* x, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse, T* y,
            const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t len = j1 - j0;
    const T* xb = x + o * n * inner + j0;
    T* yb = y + o * n * inner + j0;
    for (int64_t s = 0; s < n; ++s) {
      const int64_t i = reverse ? n - 1 - s : s;
      const int64_t prev = reverse ? i + 1 : i - 1;  // valid when s > 0
      T* yr = yb + i * inner;
      if (s == 0) {
        for (int64_t j = 0; j < len; ++j) yr[j] = exclusive ? T(0) : xb[i * inner + j];
        continue;
      }
      const T* yp = yb + prev * inner;
      const T* xr = xb + (exclusive ? prev : i) * inner;
      for (int64_t j = 0; j < len; ++j) yr[j] = WrapAdd(yp[j], xr[j]);
    }
  });
}

void ArgMax16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
              bool select_last, int64_t* y, const Parallel& parallel) {
  Arg16<true>(kind, x, outer, n, inner, select_last, y, parallel);
}
void ArgMin16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
              bool select_last, int64_t* y, const Parallel& parallel) {
  Arg16<false>(kind, x, outer, n, inner, select_last, y, parallel);
}

void CumSum16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
              bool exclusive, bool reverse, uint16_t* y, const Parallel& parallel) {
  ForBlocks(outer, n, inner, parallel, [&](int64_t o, int64_t j0, int64_t j1) {
    float buf[kBlock];
    float sums[kBlock];
    if (inner == 1) {  // one contiguous row, kBlock elements at a time in scan order
      const uint16_t* xr = x + o * n;
      uint16_t* yr = y + o * n;
      float acc = 0.0f;
      for (int64_t s0 = 0; s0 < n; s0 += kBlock) {
        const int64_t len = std::min(kBlock, n - s0);
        const int64_t start = reverse ? n - s0 - len : s0;
        Widen16(kind, xr + start, buf, static_cast<size_t>(len));
        for (int64_t t = 0; t < len; ++t) {
          const int64_t r = reverse ? len - 1 - t : t;
          if (exclusive) {
            sums[r] = acc;
            acc += buf[r];
          } else {
            acc += buf[r];
            sums[r] = acc;
          }
        }
        Narrow16(kind, sums, yr + start, static_cast<size_t>(len));
      }
      return;
    }
    const int64_t len = j1 - j0;
    const uint16_t* xb = x + o * n * inner + j0;
    uint16_t* yb = y + o * n * inner + j0;
    float acc[kBlock];
    for (int64_t j = 0; j < len; ++j) acc[j] = 0.0f;
    for (int64_t s = 0; s < n; ++s) {
      const int64_t i = reverse ? n - 1 - s : s;
      Widen16(kind, xb + i * inner, buf, static_cast<size_t>(len));
      for (int64_t j = 0; j < len; ++j) {
        if (exclusive) {
          sums[j] = acc[j];
          acc[j] += buf[j];
        } else {
          acc[j] += buf[j];
          sums[j] = acc[j];
        }
      }
      Narrow16(kind, sums, yb + i * inner, static_cast<size_t>(len));
    }
  });
}

#define SIMPLECPP_REDUCE_INSTANTIATE_ARITH(T)          \
  template void ReduceDivide<T>(T*, int64_t, int64_t); \
  template void ReduceSqrt<T>(T*, int64_t);            \
  template void ReduceLog<T>(T*, int64_t);             \
  template void CumSum<T>(const T*, int64_t, int64_t, int64_t, bool, bool, T*, const Parallel&);
#define SIMPLECPP_REDUCE_INSTANTIATE_ARG(T)                                                      \
  template void ArgMax<T>(const T*, int64_t, int64_t, int64_t, bool, int64_t*, const Parallel&); \
  template void ArgMin<T>(const T*, int64_t, int64_t, int64_t, bool, int64_t*, const Parallel&);
#define SIMPLECPP_REDUCE_INSTANTIATE_GENERIC(T) template ReduceFn<T> GetReduceFn<T>(ReduceKind);

// float: ReduceDivide and ReduceSqrt are explicit specializations above.
template void ReduceLog<float>(float*, int64_t);
template void CumSum<float>(const float*, int64_t, int64_t, int64_t, bool, bool, float*,
                            const Parallel&);
#define SIMPLECPP_REDUCE_ALL(T)         \
  SIMPLECPP_REDUCE_INSTANTIATE_ARITH(T) \
  SIMPLECPP_REDUCE_INSTANTIATE_ARG(T)   \
  SIMPLECPP_REDUCE_INSTANTIATE_GENERIC(T)
SIMPLECPP_REDUCE_INSTANTIATE_ARG(float)
SIMPLECPP_REDUCE_ALL(double)
SIMPLECPP_REDUCE_ALL(int8_t)
SIMPLECPP_REDUCE_ALL(uint8_t)
SIMPLECPP_REDUCE_ALL(int16_t)
SIMPLECPP_REDUCE_ALL(uint16_t)
SIMPLECPP_REDUCE_ALL(int32_t)
SIMPLECPP_REDUCE_ALL(uint32_t)
SIMPLECPP_REDUCE_ALL(int64_t)
SIMPLECPP_REDUCE_ALL(uint64_t)
SIMPLECPP_REDUCE_INSTANTIATE_GENERIC(bool)

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
