// C[M,1] = alpha * A * b + beta * C with A prepacked (GemmPackedAF32 with one column: a 1x1
// convolution on a 1x1 image, the squeeze-excitation convs of mobile nets). The GEMM's tiles
// would compute a whole vector of columns per row for one valid column; here the rows of a
// packed strip ([K][mr]) are the vector lanes, in chunks of at most 8 (2 lanes for mr = 6).
// Every row is the GEMM's own FMA chain over k in order from zero, then its epilogue with the
// same operations (alpha, beta, biases, clamp, post-op): the same bits as the tiles.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/gemv_packed_a.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>

#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/gemm_tile-inl.h"  // kMR

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes per chunk of a strip's rows: a power of two that divides kMR.
constexpr size_t kChunk = kMR % 8 == 0 ? 8 : 2;
static_assert(kMR % kChunk == 0, "a strip is whole chunks");

// The tiles' Finish on one chunk of L rows from row i (n of them inside C), the same
// operations lane by lane, then the store into C's column.
template <class D>
HWY_INLINE void FinishChunk(D d, hn::Vec<D> acc, int64_t i, int64_t n, float alpha, float beta,
                            float* c, int64_t ldc, const GemmEpilogue& e) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  // A whole chunk of a contiguous column reads and writes C in place; otherwise through a
  // staging buffer (the lanes past n get zeros and are not stored).
  const bool direct = n == L && ldc == 1;
  HWY_ALIGN float staged[kChunk];
  auto load_rows = [&](const float* v, int64_t step) {
    if (direct) return hn::LoadU(d, v + i);
    for (int64_t r = 0; r < L; ++r) staged[r] = r < n ? v[(i + r) * step] : 0.0f;
    return hn::Load(d, staged);
  };
  auto x = hn::Mul(acc, hn::Set(d, alpha));
  if (beta != 0.0f) x = hn::MulAdd(hn::Set(d, beta), load_rows(c, ldc), x);
  if (e.row_bias != nullptr && e.col_bias != nullptr) {
    x = hn::Add(x, hn::Add(load_rows(e.row_bias, 1), hn::Set(d, e.col_bias[0])));
  } else if (e.row_bias != nullptr) {
    x = hn::Add(x, load_rows(e.row_bias, 1));
  } else if (e.col_bias != nullptr) {
    x = hn::Add(x, hn::Set(d, e.col_bias[0]));
  }
  if (e.clamp) x = hn::Min(hn::Max(x, hn::Set(d, e.clamp_lo)), hn::Set(d, e.clamp_hi));
  if (direct) {
    hn::StoreU(x, d, c + i);
    return;
  }
  hn::Store(x, d, staged);
  for (int64_t r = 0; r < n; ++r) c[(i + r) * ldc] = staged[r];
}

// Rows [i0, i0 + rows) of C; i0 a multiple of kMR. Four chunks at a time: four independent
// FMA chains (one chain over k runs at the multiply-add's latency).
void GemvStrips(const float* HWY_RESTRICT pa, int64_t m, int64_t k, const float* b,
                int64_t b_step, float alpha, float beta, float* c, int64_t ldc,
                const GemmEpilogue& e, int64_t i0, int64_t rows) {
  const hn::CappedTag<float, kChunk> d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t MR = static_cast<int64_t>(kMR);
  auto chunk = [&](int64_t i) { return pa + (i / MR) * k * MR + (i % MR); };
  const int64_t end = i0 + rows;
  for (int64_t i = i0; i < end; i += 4 * L) {
    // Chunks past the end repeat the first one's loads; their sums are dropped.
    const int64_t chunks = std::min<int64_t>(4, (end - i + L - 1) / L);
    const float* p0 = chunk(i);
    const float* p1 = chunks > 1 ? chunk(i + L) : p0;
    const float* p2 = chunks > 2 ? chunk(i + 2 * L) : p0;
    const float* p3 = chunks > 3 ? chunk(i + 3 * L) : p0;
    auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const auto bv = hn::Set(d, b[kk * b_step]);
      a0 = hn::MulAdd(bv, hn::LoadU(d, p0 + kk * MR), a0);
      a1 = hn::MulAdd(bv, hn::LoadU(d, p1 + kk * MR), a1);
      a2 = hn::MulAdd(bv, hn::LoadU(d, p2 + kk * MR), a2);
      a3 = hn::MulAdd(bv, hn::LoadU(d, p3 + kk * MR), a3);
    }
    const auto rows_from = [&](int64_t r) { return std::min(L, m - r); };
    FinishChunk(d, a0, i, rows_from(i), alpha, beta, c, ldc, e);
    if (chunks > 1) FinishChunk(d, a1, i + L, rows_from(i + L), alpha, beta, c, ldc, e);
    if (chunks > 2) FinishChunk(d, a2, i + 2 * L, rows_from(i + 2 * L), alpha, beta, c, ldc, e);
    if (chunks > 3) FinishChunk(d, a3, i + 3 * L, rows_from(i + 3 * L), alpha, beta, c, ldc, e);
  }
  if (e.post) {
    if (ldc == 1) {
      e.post(c + i0, rows);
    } else {
      for (int64_t r = i0; r < end; ++r) e.post(c + r * ldc, 1);
    }
  }
}

void GemvPackedAImpl(const float* pa, int64_t m, int64_t k, const float* b, int64_t b_step,
                     float alpha, float beta, float* c, int64_t ldc, const GemmEpilogue& e,
                     const Parallel& parallel) {
  const int64_t MR = static_cast<int64_t>(kMR);
  const int64_t strips = (m + MR - 1) / MR;
  // Tasks of whole strips, about 16 K multiply-adds each (from the shape only).
  const int64_t per_task = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, k * MR));
  const int64_t tasks = (strips + per_task - 1) / per_task;
  ParallelForMacs(parallel, m * k).For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t i0 = t0 * per_task * MR;
    const int64_t i1 = std::min(m, t1 * per_task * MR);
    GemvStrips(pa, m, k, b, b_step, alpha, beta, c, ldc, e, i0, i1 - i0);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(GemvPackedAImpl);

void GemvPackedAF32(const float* pa, int64_t m, int64_t k, const float* b, int64_t b_step,
                    float alpha, float beta, float* c, int64_t ldc, const GemmEpilogue& e,
                    const Parallel& parallel) {
  if (m <= 0) return;
  HWY_DYNAMIC_DISPATCH(GemvPackedAImpl)(pa, m, k, b, b_step, alpha, beta, c, ldc, e, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
