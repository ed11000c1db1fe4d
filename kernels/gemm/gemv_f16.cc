// Small-M products with 16-bit packed weights (see kernels/gemm/gemv_f16.h for the contract).
//
// Per task (one 64-column panel of packed B, [K][64] 16-bit) and per chunk of up to 4 rows of A,
// a register tile of R rows x V vectors of float32 accumulators runs over k = 0..K-1 in order:
// each step loads V vectors of 16-bit weights, widens them in registers and multiply-adds them
// with the broadcast A values of the R rows. A panel wider than V vectors is covered in column
// slices (each reads its part of every 128-byte panel row; the panel stays in cache between
// slices and row chunks). The accumulators of every (row, column) form one fused multiply-add
// chain over k, so the tile shape chosen for a target never changes a result. A single row on
// AVX-512 (a panel is 4 vectors there) runs two adjacent panels at once, for 8 independent
// chains. Weights are prefetched about 3 KiB ahead of each panel stream.
// A GEMV is memory-bound, so half the bytes per weight is most of the speed-up over float32
// weights (bench/bench_f16.cc).
//
// Widening: float16 on AVX2 / AVX3 / AVX3_DL is Highway's PromoteTo (F16C vcvtph2ps, exact);
// elsewhere (SSE4, EMU128, WASM) our own integer-SIMD conversion, the same as
// kernels/float16/float16.cc (Highway 1.0.3's emulated conversion is wrong for Inf/NaN/subnormals);
// bfloat16 is a shift.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/gemv_f16.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "kernels/gemm/gemv_f16.h"

#ifndef SIMPLECPP_KERNELS_GEMV_F16_ONCE
#define SIMPLECPP_KERNELS_GEMV_F16_ONCE
namespace simplecpp::kernels {
namespace gemv16 {

constexpr int64_t kPanel = PackedB16::kPanel;
constexpr int64_t kMaxRowChunk = 4;

// One call as the per-target code sees it. A is float32 row-major [M][K] (lda); C is either
// float32 (c32) or 16-bit (c16, c_kind).
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const uint16_t* pb = nullptr;
  bool b_bf16 = false;
  float* c32 = nullptr;
  uint16_t* c16 = nullptr;
  Float16Kind c_kind = Float16Kind::kHalf;
  int64_t ldc = 0;
  GemmEpilogue epilogue;
};

}  // namespace gemv16
}  // namespace simplecpp::kernels
#endif  // SIMPLECPP_KERNELS_GEMV_F16_ONCE

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DU32 = hn::RebindToUnsigned<DF>;
using DI32 = hn::RebindToSigned<DF>;
using DU16 = hn::Rebind<uint16_t, DF>;  // one 16-bit lane per float lane

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define SIMPLECPP_GEMV16_F16C 1
#else
#define SIMPLECPP_GEMV16_F16C 0
#endif

// Accumulator registers a tile may use: 32 vector registers on AVX-512, 16 elsewhere (the rest
// hold the widened weights and the broadcast A values).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr int kAccBudget = 16;
#else
constexpr int kAccBudget = 8;
#endif

// float16 bits (in u32 lanes) to float32, integer-SIMD path (same as kernels/float16/float16.cc):
// finite values are rescaled by one exact multiply by 2^112, Inf/NaN patched (NaN quieted).
HWY_INLINE hn::Vec<DF> HalfBitsToFloatVec(hn::Vec<DU32> h) {
  const DF df;
  const DU32 du;
  const DI32 di;
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto em = hn::And(h, hn::Set(du, 0x7FFFu));
  const auto shifted = hn::ShiftLeft<13>(em);
  const auto two112 = hn::BitCast(df, hn::Set(du, 0x77800000u));
  const auto finite = hn::BitCast(du, hn::Mul(hn::BitCast(df, shifted), two112));
  const auto is_infnan = hn::Gt(hn::BitCast(di, em), hn::Set(di, 0x7BFF));
  const auto is_nan = hn::Gt(hn::BitCast(di, em), hn::Set(di, 0x7C00));
  auto special = hn::Or(shifted, hn::Set(du, 0x7F800000u));
  special =
      hn::Or(special, hn::IfThenElseZero(hn::RebindMask(du, is_nan), hn::Set(du, 0x00400000u)));
  const auto r = hn::IfThenElse(hn::RebindMask(du, is_infnan), special, finite);
  return hn::BitCast(df, hn::Or(r, sign));
}

// One vector of 16-bit weights widened to float32.
template <bool kBF16>
HWY_INLINE hn::Vec<DF> Load16(const uint16_t* HWY_RESTRICT p) {
  const DF df;
  if constexpr (kBF16) {
    return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(DU32(), hn::LoadU(DU16(), p))));
  } else {
#if SIMPLECPP_GEMV16_F16C
    const hn::Rebind<hwy::float16_t, DF> dh;
    return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
#else
    return HalfBitsToFloatVec(hn::PromoteTo(DU32(), hn::LoadU(DU16(), p)));
#endif
  }
}

// Prefetch distance in panel rows (128 bytes each).
constexpr int64_t kPrefetchRows = 24;

// tile[r*kPanel + v*L ...] = sum over k of a[r*lda + k] * b[k*kPanel + v*L ...], r < R, v < V:
// b points at the first column of this slice inside the panel.
template <bool kBF16, int R, int V>
HWY_NOINLINE void Tile(const float* HWY_RESTRICT a, int64_t lda, int64_t k,
                       const uint16_t* HWY_RESTRICT b, float* HWY_RESTRICT tile) {
  const DF df;
  const size_t L = hn::Lanes(df);
  hn::Vec<DF> acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Zero(df);
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const uint16_t* HWY_RESTRICT bk = b + kk * gemv16::kPanel;
    // The panel is one sequential stream; asking for it a few KiB ahead keeps more DRAM reads
    // in flight than the hardware prefetcher alone.
    if (kk + kPrefetchRows < k) {
      hwy::Prefetch(bk + kPrefetchRows * gemv16::kPanel);
      hwy::Prefetch(bk + kPrefetchRows * gemv16::kPanel + 32);
    }
    hn::Vec<DF> av[R];
    for (int r = 0; r < R; ++r) av[r] = hn::Set(df, a[r * lda + kk]);
    for (int v = 0; v < V; ++v) {
      const auto bv = Load16<kBF16>(bk + v * L);
      for (int r = 0; r < R; ++r) acc[r][v] = hn::MulAdd(av[r], bv, acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) hn::Store(acc[r][v], df, tile + r * gemv16::kPanel + v * L);
  }
}

// One row of A against two adjacent panels at once (b1 = the next panel): twice the independent
// multiply-add chains of Tile<kBF16, 1, V>, for the memory-bound single-row case on targets
// whose panel is only a few vectors wide. Same chains, same results.
template <bool kBF16, int V>
HWY_NOINLINE void Tile1x2(const float* HWY_RESTRICT a, int64_t k, const uint16_t* HWY_RESTRICT b0,
                          const uint16_t* HWY_RESTRICT b1, float* HWY_RESTRICT tile0,
                          float* HWY_RESTRICT tile1) {
  const DF df;
  const size_t L = hn::Lanes(df);
  hn::Vec<DF> acc0[V], acc1[V];
  for (int v = 0; v < V; ++v) acc0[v] = acc1[v] = hn::Zero(df);
  for (int64_t kk = 0; kk < k; ++kk) {
    const uint16_t* HWY_RESTRICT bk0 = b0 + kk * gemv16::kPanel;
    const uint16_t* HWY_RESTRICT bk1 = b1 + kk * gemv16::kPanel;
    if (kk + kPrefetchRows < k) {
      hwy::Prefetch(bk0 + kPrefetchRows * gemv16::kPanel);
      hwy::Prefetch(bk0 + kPrefetchRows * gemv16::kPanel + 32);
      hwy::Prefetch(bk1 + kPrefetchRows * gemv16::kPanel);
      hwy::Prefetch(bk1 + kPrefetchRows * gemv16::kPanel + 32);
    }
    const auto av = hn::Set(df, a[kk]);
    for (int v = 0; v < V; ++v) {
      acc0[v] = hn::MulAdd(av, Load16<kBF16>(bk0 + v * L), acc0[v]);
      acc1[v] = hn::MulAdd(av, Load16<kBF16>(bk1 + v * L), acc1[v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    hn::Store(acc0[v], df, tile0 + v * L);
    hn::Store(acc1[v], df, tile1 + v * L);
  }
}

using TileFn = void (*)(const float*, int64_t, int64_t, const uint16_t*, float*);

template <bool kBF16, int V>
TileFn PickRows(int rows) {
  switch (rows) {
    case 1:
      return &Tile<kBF16, 1, V>;
    case 2:
      return &Tile<kBF16, 2, V>;
    case 3:
      return &Tile<kBF16, 3, V>;
    default:
      return &Tile<kBF16, 4, V>;
  }
}

template <bool kBF16>
TileFn PickTile(int rows, int vecs) {
  switch (vecs) {
    case 2:
      return PickRows<kBF16, 2>(rows);
    case 4:
      return PickRows<kBF16, 4>(rows);
    default:
      return PickRows<kBF16, 8>(rows);
  }
}

// Columns [0, ncols) of tile rows: c = clamp((alpha*acc + beta*c_old) + (row_bias + col_bias))
// with the same vector operations as the float32 GEMM's epilogue, then stored to C.
void FinishRow(const gemv16::Problem& p, int64_t i, int64_t j0, int64_t ncols,
               float* HWY_RESTRICT t) {
  const DF df;
  const size_t L = hn::Lanes(df);
  const GemmEpilogue& e = p.epilogue;
  const bool use_beta = p.beta != 0.0f;
  HWY_ALIGN float cold[gemv16::kPanel] = {};
  HWY_ALIGN float cbias[gemv16::kPanel] = {};
  if (use_beta) {
    if (p.c32 != nullptr) {
      std::memcpy(cold, p.c32 + i * p.ldc + j0, static_cast<size_t>(ncols) * sizeof(float));
    } else {
      Widen16(p.c_kind, p.c16 + i * p.ldc + j0, cold, static_cast<size_t>(ncols));
    }
  }
  if (e.col_bias != nullptr) {
    std::memcpy(cbias, e.col_bias + j0, static_cast<size_t>(ncols) * sizeof(float));
  }
  const float rb = e.row_bias != nullptr ? e.row_bias[i] : 0.0f;
  for (int64_t j = 0; j < ncols; j += static_cast<int64_t>(L)) {
    auto x = hn::Mul(hn::Load(df, t + j), hn::Set(df, p.alpha));
    if (use_beta) x = hn::MulAdd(hn::Set(df, p.beta), hn::Load(df, cold + j), x);
    if (e.row_bias != nullptr && e.col_bias != nullptr) {
      x = hn::Add(x, hn::Add(hn::Set(df, rb), hn::Load(df, cbias + j)));
    } else if (e.row_bias != nullptr) {
      x = hn::Add(x, hn::Set(df, rb));
    } else if (e.col_bias != nullptr) {
      x = hn::Add(x, hn::Load(df, cbias + j));
    }
    if (e.clamp) x = hn::Min(hn::Max(x, hn::Set(df, e.clamp_lo)), hn::Set(df, e.clamp_hi));
    hn::Store(x, df, t + j);
  }
  if (p.c32 != nullptr) {
    std::memcpy(p.c32 + i * p.ldc + j0, t, static_cast<size_t>(ncols) * sizeof(float));
  } else {
    Narrow16(p.c_kind, t, p.c16 + i * p.ldc + j0, static_cast<size_t>(ncols));
  }
}

// Computes panels [panel_begin, panel_end) of C (all rows).
void GemvPanelsImpl(const gemv16::Problem& p, int64_t panel_begin, int64_t panel_end) {
  const DF df;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t panel_vecs = gemv16::kPanel / L;
  HWY_ALIGN float tile[gemv16::kMaxRowChunk * gemv16::kPanel];
  if (p.m == 1 && panel_vecs == 4 && 2 * panel_vecs <= kAccBudget) {
    // Single row: pairs of panels (the last one of an odd count goes below).
    HWY_ALIGN float tile1[gemv16::kPanel];
    for (; panel_begin + 1 < panel_end && (panel_begin + 2) * gemv16::kPanel <= p.n;
         panel_begin += 2) {
      const uint16_t* pp = p.pb + panel_begin * p.k * gemv16::kPanel;
      const auto fn = p.b_bf16 ? &Tile1x2<true, 4> : &Tile1x2<false, 4>;
      fn(p.a, p.k, pp, pp + p.k * gemv16::kPanel, tile, tile1);
      FinishRow(p, 0, panel_begin * gemv16::kPanel, gemv16::kPanel, tile);
      FinishRow(p, 0, (panel_begin + 1) * gemv16::kPanel, gemv16::kPanel, tile1);
    }
  }
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const int64_t j0 = panel * gemv16::kPanel;
    const int64_t ncols = std::min(gemv16::kPanel, p.n - j0);
    const int64_t nvecs = (ncols + L - 1) / L;
    const uint16_t* pp = p.pb + panel * p.k * gemv16::kPanel;
    for (int64_t i0 = 0; i0 < p.m; i0 += gemv16::kMaxRowChunk) {
      const int rows = static_cast<int>(std::min(gemv16::kMaxRowChunk, p.m - i0));
      // Widest power-of-two slice (2..8 vectors, at most the panel) within the budget.
      int64_t vecs = 8;
      while (vecs > 2 && (vecs > panel_vecs || vecs * rows > kAccBudget)) vecs /= 2;
      const TileFn fn = p.b_bf16 ? PickTile<true>(rows, static_cast<int>(vecs))
                                 : PickTile<false>(rows, static_cast<int>(vecs));
      for (int64_t v0 = 0; v0 < nvecs; v0 += vecs) {
        fn(p.a + i0 * p.lda, p.lda, p.k, pp + v0 * L, tile + v0 * L);
      }
      for (int r = 0; r < rows; ++r) FinishRow(p, i0 + r, j0, ncols, tile + r * gemv16::kPanel);
    }
  }
}

#undef SIMPLECPP_GEMV16_F16C

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(GemvPanelsImpl);

namespace {
void FreeAligned(uint16_t* p) { ::operator delete[](p, std::align_val_t{64}); }
}  // namespace

PackedB16::PackedB16(Float16Kind kind, int64_t k, int64_t n)
    : kind_(kind), k_(k), n_(n), data_(nullptr, &FreeAligned) {
  const int64_t panels = (n + kPanel - 1) / kPanel;
  const size_t count = static_cast<size_t>(std::max<int64_t>(1, panels * k * kPanel));
  data_.reset(
      static_cast<uint16_t*>(::operator new[](count * sizeof(uint16_t), std::align_val_t{64})));
  std::memset(data_.get(), 0, count * sizeof(uint16_t));
}

uint16_t PackedB16::At(int64_t kk, int64_t j) const {
  return data_[static_cast<size_t>((j / kPanel) * k_ * kPanel + kk * kPanel + j % kPanel)];
}

std::shared_ptr<const PackedB16> PackedB16::Pack(Float16Kind kind, bool trans_b, int64_t k,
                                                 int64_t n, const uint16_t* b, int64_t ldb) {
  auto packed = std::make_shared<PackedB16>(kind, k, n);
  uint16_t* out = packed->data_.get();
  const int64_t panels = (n + kPanel - 1) / kPanel;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t j0 = p * kPanel;
    const int64_t cols = std::min(kPanel, n - j0);
    uint16_t* po = out + p * k * kPanel;
    if (!trans_b) {
      for (int64_t kk = 0; kk < k; ++kk) {
        std::memcpy(po + kk * kPanel, b + kk * ldb + j0, static_cast<size_t>(cols) * 2);
      }
    } else {
      // B is [N,K]: read each row of B contiguously in blocks of K that stay in cache.
      constexpr int64_t kBlock = 256;
      for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
        const int64_t k1 = std::min(k, k0 + kBlock);
        for (int64_t jj = 0; jj < cols; ++jj) {
          const uint16_t* brow = b + (j0 + jj) * ldb;
          for (int64_t kk = k0; kk < k1; ++kk) po[kk * kPanel + jj] = brow[kk];
        }
      }
    }
  }
  return packed;
}

void GemvPackedB16(GemmType type_a, GemmType type_c, bool trans_a, int64_t m, float alpha,
                   const void* a, int64_t lda, const PackedB16& b, float beta, void* c, int64_t ldc,
                   const Parallel& parallel, const GemmEpilogue& epilogue) {
  const int64_t n = b.n(), k = b.k();
  if (m <= 0 || n <= 0) return;
  gemv16::Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.pb = b.data();
  p.b_bf16 = b.kind() == Float16Kind::kBFloat16;
  p.ldc = ldc;
  p.epilogue = epilogue;
  if (type_c == GemmType::kF32) {
    p.c32 = static_cast<float*>(c);
  } else {
    p.c16 = static_cast<uint16_t*>(c);
    p.c_kind = type_c == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  }
  // A as float32 row-major [M][K]: used in place when it already is, else widened / transposed
  // once (M*K values, small next to B).
  std::vector<float> a32;
  if (type_a == GemmType::kF32 && !trans_a) {
    p.a = static_cast<const float*>(a);
    p.lda = lda;
  } else {
    a32.resize(static_cast<size_t>(m * k));
    if (type_a == GemmType::kF32) {
      const float* af = static_cast<const float*>(a);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t kk = 0; kk < k; ++kk) a32[i * k + kk] = af[kk * lda + i];
      }
    } else {
      const Float16Kind ka =
          type_a == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
      const uint16_t* ah = static_cast<const uint16_t*>(a);
      if (!trans_a) {
        for (int64_t i = 0; i < m; ++i) {
          Widen16(ka, ah + i * lda, a32.data() + i * k, static_cast<size_t>(k));
        }
      } else {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t kk = 0; kk < k; ++kk) a32[i * k + kk] = Widen16One(ka, ah[kk * lda + i]);
        }
      }
    }
    p.a = a32.data();
    p.lda = k;
  }
  // Tasks of two panels (128 columns).
  const int64_t panels = (n + PackedB16::kPanel - 1) / PackedB16::kPanel;
  parallel.For((panels + 1) / 2, [&p, panels](int64_t t0, int64_t t1) {
    HWY_DYNAMIC_DISPATCH(GemvPanelsImpl)(p, 2 * t0, std::min(panels, 2 * t1));
  });
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
