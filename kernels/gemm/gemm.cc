// Float32 GEMM: the register-tiled Highway micro-kernel, the cache-blocked driver and the public
// entry points of kernels/gemm/gemm.h. Packing of B and of prepacked operands lives in
// kernels/gemm/gemm_pack.cc.
//
// Structure (GotoBLAS-style):
//   - op(B) is packed into panels of nr columns ([K][nr] each), once per call or once at Prepare.
//   - op(A) is packed once per call into strips of mr rows ([K][mr] each; AVX-512 uses in-register
//     8x8 transposes), unless it is prepacked (PackedAF32) or too large, in which case each task
//     packs its A block per K block.
//   - The output is split into tasks of kMC rows x kNC columns (sizes depend only on the target,
//     never on the thread count). A task walks K in blocks of about kKC and runs the micro-kernel
//     over every (strip, panel) pair, panels outer so a B micro-panel (kc x nr) stays close (in
//     L1 on the 16-register targets, L2 on AVX-512) while the strips stream past. Products below
//     the size kernels/parallel.h ParallelForMacs sets run on the calling thread (same tasks).
//   - The micro-kernel keeps an mr x nr tile of accumulators in registers (mr rows x kNV vectors)
//     and does one FMA per (row, vector) per k. Between K blocks the tile is parked in a per-task
//     buffer and reloaded, so every element is one sequential FMA chain over k = 0..K-1 no matter
//     how K, M or N are blocked. A short last strip (M < mr, e.g. M = 1..4 in transformer
//     decoding) runs tiles spanning 2 or 4 panels, which keeps enough independent FMA chains and
//     B streams in flight. Edge tiles use instantiations with fewer rows/vectors; partial
//     vectors go through a small stack buffer, with exactly the same arithmetic.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/gemm.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/float16/float16-inl.h"
#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/gemm_tile-inl.h"  // kMR, kNV

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
constexpr size_t kL = hn::MaxLanes(DF());
constexpr size_t kNR = kNV * kL;
// Accumulator registers of the full tile; tiles of few rows span several panels instead
// (kPanels > 1) so that short M keeps as many independent FMA chains and B streams in flight.
constexpr size_t kMaxAcc = kMR * kNV;
// Cache blocking: a task covers kMC x kNC of C; K is walked in blocks of at most kKC.
// 16-register targets: one B micro-panel (256 x 16 or 256 x 8 floats) stays in L1 while A
// streams by. AVX-512: 512 x 48 floats = 96 KiB, streamed from L2 (192 bytes per 24 FMAs, well
// within L2 bandwidth); fewer K blocks mean fewer parked accumulator tiles and tile calls.
// AVX-512 takes the longer K block because its B panel streams from L2 anyway; fewer K blocks
// then mean fewer parked accumulator tiles (bench/bench_gemm.cc compares block sizes).
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr int64_t kKC = 512;
#else
constexpr int64_t kKC = 256;
#endif
constexpr int64_t kMC = static_cast<int64_t>(kMR) * 16;
constexpr int64_t kNC = 192;  // a multiple of every target's nr (8, 16, 48)
static_assert(kNC % kNR == 0, "kNC must be a multiple of nr");
// Largest op(A) (in floats, padded to whole strips) packed once per call; larger ones are packed
// per task and K block. The buffer is thread-local and kept between calls, so this also bounds
// what each calling thread holds on to (8 MiB; a 1024 x 1024 A needs 4 MiB).
constexpr int64_t kMaxWholeAPack = int64_t{2} << 20;

// The epilogue of one tile; pointers are already offset to the tile's first row / column.
struct TileEpilogue {
  float alpha;
  float beta;
  bool use_beta;
  const float* row_bias;
  const float* col_bias;
  bool clamp;
  float lo, hi;
};

// A tile reads packed A strips (element (r, k) at ap[k*kMR + r]); panel q of its B starts at
// bp + q*b_ps, element (k, j) at k*kNR + j. acc_buf: panel q's partial sums at
// acc_buf + q*kMR*kNR, [kRows][kNR].
using TileFn = void (*)(const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp, size_t b_ps,
                        size_t kc, float* HWY_RESTRICT acc_buf, bool first, bool last,
                        const TileEpilogue& e, float* HWY_RESTRICT c, size_t ldc, size_t cols);

// alpha*acc + beta*c + (row bias + col bias), clamped: the same operations for full and partial
// vectors, so an element's value does not depend on where its tile falls.
HWY_INLINE hn::Vec<DF> Finish(DF d, hn::Vec<DF> acc, const float* c, const float* col_bias,
                              float row_bias, const TileEpilogue& e) {
  auto x = hn::Mul(acc, hn::Set(d, e.alpha));
  if (e.use_beta) x = hn::MulAdd(hn::Set(d, e.beta), hn::LoadU(d, c), x);
  // Both biases are summed first, so the result is symmetric in rows and columns (GemmF32 may
  // solve C^T = B^T A^T with the biases swapped).
  if (e.row_bias != nullptr && e.col_bias != nullptr) {
    x = hn::Add(x, hn::Add(hn::Set(d, row_bias), hn::LoadU(d, col_bias)));
  } else if (e.row_bias != nullptr) {
    x = hn::Add(x, hn::Set(d, row_bias));
  } else if (e.col_bias != nullptr) {
    x = hn::Add(x, hn::LoadU(d, col_bias));
  }
  if (e.clamp) x = hn::Min(hn::Max(x, hn::Set(d, e.lo)), hn::Set(d, e.hi));
  return x;
}

// One register tile: kRows rows x kVecs vectors; kPanels > 1 only with kVecs == kPanels*kNV
// (whole panels). c: the tile's top-left element in C (`cols` <= kVecs*kL valid columns).
// acc_buf carries the partial sums between K blocks (read unless `first`, written unless
// `last`); every element is one FMA chain over k in order whatever the blocking.
template <size_t kRows, size_t kVecs, size_t kPanels>
HWY_NOINLINE void Tile(const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                       size_t b_ps, size_t kc, float* HWY_RESTRICT acc_buf, bool first, bool last,
                       const TileEpilogue& e, float* HWY_RESTRICT c, size_t ldc, size_t cols) {
  static_assert(kPanels == 1 || kVecs == kPanels * kNV, "multi-panel tiles are whole panels");
  const DF d;
  using V = hn::Vec<DF>;
  auto acc_at = [&](size_t r, size_t v) {
    return acc_buf + (v / kNV) * (kMR * kNR) + r * kNR + (v % kNV) * kL;
  };
  V acc[kRows][kVecs];
  if (first) {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::Zero(d);
    }
  } else {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::Load(d, acc_at(r, v));
    }
  }
  const float* HWY_RESTRICT bq[kPanels];
  for (size_t q = 0; q < kPanels; ++q) bq[q] = bp + q * b_ps;
  for (size_t kk = 0; kk < kc; ++kk) {
    V b[kVecs];
    for (size_t v = 0; v < kVecs; ++v) {
      b[v] = hn::LoadU(d, bq[v / kNV] + kk * kNR + (v % kNV) * kL);
    }
    for (size_t r = 0; r < kRows; ++r) {
      const V a = hn::Set(d, ap[kk * kMR + r]);
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]);
    }
  }
  if (!last) {
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t v = 0; v < kVecs; ++v) hn::Store(acc[r][v], d, acc_at(r, v));
    }
    return;
  }
  for (size_t r = 0; r < kRows; ++r) {
    float* crow = c + r * ldc;
    const float rb = e.row_bias != nullptr ? e.row_bias[r] : 0.0f;
    for (size_t v = 0; v < kVecs; ++v) {
      const size_t j = v * kL;
      if (j + kL <= cols) {
        const float* cb = e.col_bias != nullptr ? e.col_bias + j : nullptr;
        hn::StoreU(Finish(d, acc[r][v], crow + j, cb, rb, e), d, crow + j);
      } else if (j < cols) {
        // Partial vector: stage C and the column bias in full-width buffers.
        const size_t n = cols - j;
        HWY_ALIGN float tc[kL];
        HWY_ALIGN float tb[kL];
        for (size_t i = 0; i < kL; ++i) {
          tc[i] = (e.use_beta && i < n) ? crow[j + i] : 0.0f;
          tb[i] = (e.col_bias != nullptr && i < n) ? e.col_bias[j + i] : 0.0f;
        }
        hn::Store(Finish(d, acc[r][v], tc, tb, rb, e), d, tc);
        std::memcpy(crow + j, tc, n * sizeof(float));
      }
    }
  }
}

// The single-panel instantiation for a tile of `rows` x `vecs` (1 <= rows <= kMR,
// 1 <= vecs <= kNV).
template <size_t R, size_t V>
TileFn PickTile(size_t rows, size_t vecs) {
  if constexpr (V > 1) {
    if (vecs < V) return PickTile<R, V - 1>(rows, vecs);
  }
  if constexpr (R > 1) {
    if (rows < R) return PickTile<R - 1, V>(rows, vecs);
  }
  return &Tile<R, V, 1>;
}

// How many whole panels a tile of `rows` (< kMR) rows covers: as many as keep at most kMaxAcc
// accumulators (1, 2 or 4).
constexpr size_t PanelsForRows(size_t rows) {
  return kMaxAcc / (rows * kNV) >= 4 ? 4 : kMaxAcc / (rows * kNV) >= 2 ? 2 : 1;
}

template <size_t R>
TileFn PickMultiTile(size_t rows) {
  if constexpr (R > 1) {
    if (rows < R) return PickMultiTile<R - 1>(rows);
  }
  constexpr size_t P = PanelsForRows(R);
  return &Tile<R, P * kNV, P>;
}

GemmTileShape GemmTileShapeImpl() {
  return GemmTileShape{static_cast<int64_t>(kMR), static_cast<int64_t>(kNR)};
}

// Packs rows [i0, i0+rows) of row-major float32 A ([M,K], all K columns) into strips of [K][kMR]
// at out + s*K*kMR (rows past `rows` zero). AVX-512 (kMR = 8): 8x8 in-register transposes of
// 256-bit vectors; elsewhere (and for the K tail / a short strip) a plain loop.
void PackAStrips(const float* HWY_RESTRICT a, int64_t lda, int64_t i0, int64_t rows, int64_t k,
                 float* HWY_RESTRICT out) {
  constexpr int64_t MR = static_cast<int64_t>(kMR);
  const int64_t strips = (rows + MR - 1) / MR;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t r0 = i0 + s * MR;
    const int64_t h = std::min(MR, i0 + rows - r0);
    float* HWY_RESTRICT dst = out + s * k * MR;
    const float* src[kMR];
    for (int64_t r = 0; r < MR; ++r) src[r] = a + (r0 + std::min(r, h - 1)) * lda;
    int64_t kk = 0;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if (h == MR) {
      const hn::FixedTag<float, 8> d8;
      const hn::Repartition<double, decltype(d8)> dd;
      for (; kk + 8 <= k; kk += 8) {
        const auto r0v = hn::LoadU(d8, src[0] + kk), r1v = hn::LoadU(d8, src[1] + kk);
        const auto r2v = hn::LoadU(d8, src[2] + kk), r3v = hn::LoadU(d8, src[3] + kk);
        const auto r4v = hn::LoadU(d8, src[4] + kk), r5v = hn::LoadU(d8, src[5] + kk);
        const auto r6v = hn::LoadU(d8, src[6] + kk), r7v = hn::LoadU(d8, src[7] + kk);
        // Pairs of rows interleaved (within 128-bit blocks): t0 = a0 b0 a1 b1 | a4 b4 a5 b5 ...
        const auto t0 = hn::BitCast(dd, hn::InterleaveLower(d8, r0v, r1v));
        const auto t1 = hn::BitCast(dd, hn::InterleaveUpper(d8, r0v, r1v));
        const auto t2 = hn::BitCast(dd, hn::InterleaveLower(d8, r2v, r3v));
        const auto t3 = hn::BitCast(dd, hn::InterleaveUpper(d8, r2v, r3v));
        const auto t4 = hn::BitCast(dd, hn::InterleaveLower(d8, r4v, r5v));
        const auto t5 = hn::BitCast(dd, hn::InterleaveUpper(d8, r4v, r5v));
        const auto t6 = hn::BitCast(dd, hn::InterleaveLower(d8, r6v, r7v));
        const auto t7 = hn::BitCast(dd, hn::InterleaveUpper(d8, r6v, r7v));
        // Quads of rows: u0 = a0 b0 c0 d0 | a4 b4 c4 d4, u1 = column 1 | 5, ...
        const auto u0 = hn::BitCast(d8, hn::InterleaveLower(dd, t0, t2));
        const auto u1 = hn::BitCast(d8, hn::InterleaveUpper(dd, t0, t2));
        const auto u2 = hn::BitCast(d8, hn::InterleaveLower(dd, t1, t3));
        const auto u3 = hn::BitCast(d8, hn::InterleaveUpper(dd, t1, t3));
        const auto u4 = hn::BitCast(d8, hn::InterleaveLower(dd, t4, t6));
        const auto u5 = hn::BitCast(d8, hn::InterleaveUpper(dd, t4, t6));
        const auto u6 = hn::BitCast(d8, hn::InterleaveLower(dd, t5, t7));
        const auto u7 = hn::BitCast(d8, hn::InterleaveUpper(dd, t5, t7));
        float* HWY_RESTRICT o = dst + kk * MR;
        hn::StoreU(hn::ConcatLowerLower(d8, u4, u0), d8, o + 0 * MR);
        hn::StoreU(hn::ConcatLowerLower(d8, u5, u1), d8, o + 1 * MR);
        hn::StoreU(hn::ConcatLowerLower(d8, u6, u2), d8, o + 2 * MR);
        hn::StoreU(hn::ConcatLowerLower(d8, u7, u3), d8, o + 3 * MR);
        hn::StoreU(hn::ConcatUpperUpper(d8, u4, u0), d8, o + 4 * MR);
        hn::StoreU(hn::ConcatUpperUpper(d8, u5, u1), d8, o + 5 * MR);
        hn::StoreU(hn::ConcatUpperUpper(d8, u6, u2), d8, o + 6 * MR);
        hn::StoreU(hn::ConcatUpperUpper(d8, u7, u3), d8, o + 7 * MR);
      }
    }
#endif
    for (; kk < k; ++kk) {
      for (int64_t r = 0; r < MR; ++r) dst[kk * MR + r] = r < h ? src[r][kk] : 0.0f;
    }
  }
}

// Packs rows [k0, k0+kc) x columns [j0, j0+cols) of a 16-bit B ([K,N], ld = ldb) into panels of
// [kc][kNR] at out + pn*kc*kNR, widened to float32 (exact) in registers; columns past `cols` are
// zero, as in a whole packed B.
template <f16vec::Storage S>
void PackBBlock16As(const uint16_t* HWY_RESTRICT b, int64_t ldb, int64_t k0, int64_t kc,
                    int64_t j0, int64_t cols, float* HWY_RESTRICT out) {
  const DF df;
  constexpr int64_t NR = static_cast<int64_t>(kNR);
  auto load = [](const uint16_t* src) { return f16vec::LoadAs<S>(src); };
  for (int64_t pn = 0; pn * NR < cols; ++pn) {
    const int64_t w = std::min(NR, cols - pn * NR);
    float* HWY_RESTRICT dst = out + pn * kc * NR;
    const uint16_t* src = b + k0 * ldb + j0 + pn * NR;
    if (w == NR) {
      for (int64_t kk = 0; kk < kc; ++kk) {
        for (size_t v = 0; v < kNV; ++v) {
          hn::Store(load(src + kk * ldb + v * kL), df, dst + kk * NR + v * kL);
        }
      }
      continue;
    }
    // A partial panel: through a zero-padded copy of each row (16-bit zero bits are +0.0).
    HWY_ALIGN uint16_t row[kNR] = {};
    for (int64_t kk = 0; kk < kc; ++kk) {
      std::memcpy(row, src + kk * ldb, static_cast<size_t>(w) * sizeof(uint16_t));
      for (size_t v = 0; v < kNV; ++v) {
        hn::Store(load(row + v * kL), df, dst + kk * NR + v * kL);
      }
    }
  }
}

void PackBBlock16(Float16Kind kind, const uint16_t* HWY_RESTRICT b, int64_t ldb, int64_t k0,
                  int64_t kc, int64_t j0, int64_t cols, float* HWY_RESTRICT out) {
  if (kind == Float16Kind::kBFloat16) {
    PackBBlock16As<f16vec::Storage::kBF16>(b, ldb, k0, kc, j0, cols, out);
  } else {
    PackBBlock16As<f16vec::Storage::kHalf>(b, ldb, k0, kc, j0, cols, out);
  }
}

// One task: rows [bm*kMC, +kMC) x columns [bn*kNC, +kNC) of C. whole_a: all of op(A) packed
// (strips of [K][kMR]), or nullptr when the task packs its own A block per K block.
void GemmBlock(const GemmProblem& p, const float* whole_a, int64_t bm, int64_t bn, int64_t num_kb,
               int64_t kcs) {
  static thread_local ThreadScratch tls_apack;
  static thread_local ThreadScratch tls_acc;
  constexpr int64_t MR = static_cast<int64_t>(kMR);
  constexpr int64_t NR = static_cast<int64_t>(kNR);
  const int64_t i0 = bm * kMC;
  const int64_t rows = std::min(kMC, p.m - i0);
  const int64_t j0 = bn * kNC;
  const int64_t cols = std::min(kNC, p.n - j0);
  const int64_t strips = (rows + MR - 1) / MR;
  const int64_t full_strips = rows / MR;
  const int64_t edge_rows = rows - full_strips * MR;
  const int64_t panels = (cols + NR - 1) / NR;
  const int64_t whole_panels = cols / NR;
  float* acc = tls_acc.Get(num_kb > 1 ? strips * panels * MR * NR : MR * NR * 4);
  // A 16-bit B: this task's panels, packed per K block ([kc][kNR] each).
  static thread_local ThreadScratch tls_bpack;
  float* bpack =
      p.b16 != nullptr ? tls_bpack.Get(panels * NR * std::max<int64_t>(kcs, 1)) : nullptr;
  float* apack =
      whole_a != nullptr ? nullptr : tls_apack.Get(strips * MR * std::max<int64_t>(kcs, 1));
  // 16-bit C: the task's block of C in float32 ([rows][kNC]), widened first when beta reads it,
  // rounded once into c16 at the end.
  static thread_local ThreadScratch tls_ctile;
  float* ctile = nullptr;
  const int64_t ldc = p.c16 != nullptr ? kNC : p.ldc;
  if (p.c16 != nullptr) {
    ctile = tls_ctile.Get(rows * kNC);
    if (p.beta != 0.0f) {
      for (int64_t r = 0; r < rows; ++r) {
        Widen16(p.c_kind, p.c16 + (i0 + r) * p.ldc + j0, ctile + r * kNC, static_cast<size_t>(cols));
      }
    }
  }
  // Where C element (i, j) of this task is computed: C itself, or the task's float32 tile.
  auto c_at = [&](int64_t i, int64_t j) {
    return ctile != nullptr ? ctile + (i - i0) * kNC + (j - j0) : p.c + i * p.ldc + j;
  };

  TileEpilogue e;
  e.alpha = p.alpha;
  e.beta = p.beta;
  e.use_beta = p.beta != 0.0f;
  e.clamp = p.epilogue.clamp;
  e.lo = p.epilogue.clamp_lo;
  e.hi = p.epilogue.clamp_hi;

  for (int64_t kb = 0; kb < num_kb; ++kb) {
    const int64_t k0 = kb * kcs;
    const int64_t kc = std::min(kcs, p.k - k0);
    const bool first = kb == 0;
    const bool last = kb == num_kb - 1;
    if (bpack != nullptr) PackBBlock16(p.b_kind, p.b16, p.ldb, k0, kc, j0, cols, bpack);
    if (apack != nullptr) {
      if (p.a16 != nullptr) {
        PackABlock16(p.a_kind, p.trans_a, p.a16, p.lda, i0, rows, k0, kc, MR, apack);
      } else {
        PackABlock(p.trans_a, p.a, p.lda, i0, rows, k0, kc, MR, apack);
      }
    }
    // Runs the tile `fn` on strip s and `npanels` panels from panel pn on (this K block).
    auto run = [&](TileFn fn, int64_t s, int64_t pn, int64_t npanels) {
      const int64_t ii = i0 + s * MR;
      const int64_t jj = j0 + pn * NR;
      const int64_t cw = std::min(npanels * NR, p.n - jj);
      e.col_bias = p.epilogue.col_bias != nullptr ? p.epilogue.col_bias + jj : nullptr;
      e.row_bias = p.epilogue.row_bias != nullptr ? p.epilogue.row_bias + ii : nullptr;
      const float* aptr =
          whole_a != nullptr ? whole_a + (ii / MR) * p.k * MR + k0 * MR : apack + s * kc * MR;
      // Panel pn's B block and the distance between panels (tiles spanning several panels).
      const float* bptr =
          bpack != nullptr ? bpack + pn * kc * NR : p.pb + (jj / NR) * p.k * NR + k0 * NR;
      const int64_t panel_stride = bpack != nullptr ? kc * NR : p.k * NR;
      float* accp = num_kb > 1 ? acc + (s * panels + pn) * MR * NR : acc;
      fn(aptr, bptr, static_cast<size_t>(panel_stride), static_cast<size_t>(kc), accp, first,
         last, e, c_at(ii, jj), static_cast<size_t>(ldc), static_cast<size_t>(cw));
    };
    auto vecs_of = [&](int64_t pn) {
      const int64_t cw = std::min(NR, p.n - (j0 + pn * NR));
      return static_cast<size_t>((cw + static_cast<int64_t>(kL) - 1) / static_cast<int64_t>(kL));
    };
    // Full-height strips: panels outer, so a B micro-panel (kc x nr) stays in L1 while the A
    // strips of the block stream past.
    for (int64_t pn = 0; pn < panels; ++pn) {
      const TileFn fn = PickTile<kMR, kNV>(kMR, vecs_of(pn));
      for (int64_t s = 0; s < full_strips; ++s) run(fn, s, pn, 1);
    }
    // The short last strip: several whole panels per tile (more FMA chains and B streams).
    if (edge_rows > 0) {
      const size_t er = static_cast<size_t>(edge_rows);
      const int64_t group = static_cast<int64_t>(PanelsForRows(er));
      int64_t pn = 0;
      if (group > 1) {
        const TileFn multi = PickMultiTile<kMR - 1>(er);
        for (; pn + group <= whole_panels; pn += group) run(multi, full_strips, pn, group);
      }
      for (; pn < panels; ++pn) run(PickTile<kMR, kNV>(er, vecs_of(pn)), full_strips, pn, 1);
    }
  }
  if (p.c16 != nullptr) {
    for (int64_t r = 0; r < rows; ++r) {
      uint16_t* c_row = p.c16 + (i0 + r) * p.ldc + j0;
      NarrowThenPost16(p.c_kind, ctile + r * kNC, c_row, cols, p.epilogue.post16);
    }
  } else if (p.epilogue.post) {
    for (int64_t r = 0; r < rows; ++r) p.epilogue.post(p.c + (i0 + r) * p.ldc + j0, cols);
  }
}

void GemmDriverImpl(const GemmProblem& p, const Parallel& pool) {
  if (p.m <= 0 || p.n <= 0) return;
  const Parallel& parallel = ParallelForMacs(pool, p.m * p.n * std::max<int64_t>(p.k, 1));
  constexpr int64_t MR = static_cast<int64_t>(kMR);
  // K blocks of equal size (no tiny tail block); one empty block when K == 0. With at most two
  // strips of rows (M <= 2*mr, transformer decoding) a B micro-panel is used at most twice, so
  // blocking K gains little reuse: the whole K runs in one pass (long sequential B streams, no
  // parked partial sums). The blocking depends only on the
  // problem size, never on the thread count, and the FMA chains are the same either way.
  const int64_t num_kb = p.k <= 0 || p.m <= 2 * MR ? 1 : (p.k + kKC - 1) / kKC;
  const int64_t kcs = p.k > 0 ? (p.k + num_kb - 1) / num_kb : 0;
  const int64_t mb = (p.m + kMC - 1) / kMC;
  const int64_t nb = (p.n + kNC - 1) / kNC;
  // op(A) is packed once for the whole call (not once per N block in every task) unless it is
  // prepacked or too large; then each task packs its A block per K block.
  const float* whole_a = p.pa;
  static thread_local ThreadScratch tls_whole_a;
  const int64_t strips = (p.m + MR - 1) / MR;
  if (whole_a == nullptr && p.k > 0 && strips * MR * p.k <= kMaxWholeAPack) {
    float* packed = tls_whole_a.Get(strips * MR * p.k);
    auto pack = [&](int64_t s0, int64_t s1) {
      const int64_t r0 = s0 * MR;
      const int64_t nrows = std::min(p.m, s1 * MR) - r0;
      float* out = packed + s0 * MR * p.k;
      if (p.a16 != nullptr) {
        PackABlock16(p.a_kind, p.trans_a, p.a16, p.lda, r0, nrows, 0, p.k, MR, out);
      } else if (p.trans_a) {
        PackABlock(true, p.a, p.lda, r0, nrows, 0, p.k, MR, out);
      } else {
        PackAStrips(p.a, p.lda, r0, nrows, p.k, out);
      }
    };
    // Groups of strips of about 64 K floats (boundaries from the problem size only).
    const int64_t per_task = std::max<int64_t>(1, 65536 / (MR * p.k));
    const int64_t tasks = (strips + per_task - 1) / per_task;
    if (tasks == 1) {
      pack(0, strips);
    } else {
      parallel.For(tasks, [&](int64_t t0, int64_t t1) {
        pack(t0 * per_task, std::min(strips, t1 * per_task));
      });
    }
    whole_a = packed;
  }
  parallel.For(mb * nb, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) GemmBlock(p, whole_a, t / nb, t % nb, num_kb, kcs);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(GemmTileShapeImpl);
HWY_EXPORT(GemmDriverImpl);

GemmTileShape CurrentGemmTileShape() { return HWY_DYNAMIC_DISPATCH(GemmTileShapeImpl)(); }

namespace {

// The largest packed-B block a thread keeps between calls (floats; 64 MiB).
constexpr int64_t kKeptPackFloats = int64_t{16} << 20;

// The calling thread's packed-B block, kept between calls: a fresh multi-megabyte block per call
// comes back from the allocator as fresh pages, which the kernel faults in and zeroes on first
// touch (as costly as the packing itself for a GEMM with few rows, e.g. ConvTranspose's).
struct KeptPackBlock {
  ~KeptPackBlock() { FreeFloats(data); }
  float* data = nullptr;
  int64_t capacity = 0;
  bool busy = false;
};

// One call's packed-B buffer: the thread's kept block when it is free and the size is at most
// kKeptPackFloats, else a block of its own. The buffer's contents are undefined (packing writes
// every float the driver reads).
class FloatBuffer {
 public:
  explicit FloatBuffer(int64_t count) {
    static thread_local KeptPackBlock kept;
    if (!kept.busy && count <= kKeptPackFloats) {
      if (kept.capacity < count) {
        FreeFloats(kept.data);
        kept.data = nullptr;
        kept.capacity = 0;
        kept.data = AllocateFloats(count);
        kept.capacity = count;
      }
      kept.busy = true;
      kept_ = &kept;
      p = kept.data;
    } else {
      p = AllocateFloats(count);
    }
  }
  ~FloatBuffer() {
    if (kept_ != nullptr) {
      kept_->busy = false;
    } else {
      FreeFloats(p);
    }
  }
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  float* p = nullptr;

 private:
  KeptPackBlock* kept_ = nullptr;
};

// Packs op(B) for the current target into `out` (ceil(n/nr)*nr*k floats), in parallel over
// groups of panels (group size depends only on k and nr).
void PackBForCall(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, int64_t nr,
                  float* out, const Parallel& parallel) {
  const int64_t panels = (n + nr - 1) / nr;
  if (panels == 0 || k == 0) return;
  const int64_t per_task = std::max<int64_t>(1, 32768 / (k * nr));
  const int64_t tasks = (panels + per_task - 1) / per_task;
  // Small operands are packed on the calling thread (same tasks; see ParallelForMacs).
  const Parallel& par = k * n < (int64_t{1} << 16) ? SerialParallel() : parallel;
  par.For(tasks, [&](int64_t t0, int64_t t1) {
    PackBPanels(trans_b, k, n, b, ldb, nr, t0 * per_task, std::min(panels, t1 * per_task), out);
  });
}

// Puts the A and C of a mixed call into the problem.
void SetA(GemmProblem* p, GemmType type_a, const void* a) {
  if (type_a == GemmType::kF32) {
    p->a = static_cast<const float*>(a);
  } else {
    p->a16 = static_cast<const uint16_t*>(a);
    p->a_kind = type_a == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  }
}
void SetC(GemmProblem* p, GemmType type_c, void* c) {
  if (type_c == GemmType::kF32) {
    p->c = static_cast<float*>(c);
  } else {
    p->c16 = static_cast<uint16_t*>(c);
    p->c_kind = type_c == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  }
}
// Packs op(B) of any storage type for the current target (see PackBForCall).
void PackBAnyForCall(GemmType type_b, bool trans_b, int64_t k, int64_t n, const void* b,
                     int64_t ldb, int64_t nr, float* out, const Parallel& parallel) {
  if (type_b == GemmType::kF32) {
    PackBForCall(trans_b, k, n, static_cast<const float*>(b), ldb, nr, out, parallel);
    return;
  }
  const Float16Kind kind = type_b == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  const int64_t panels = (n + nr - 1) / nr;
  if (panels == 0 || k == 0) return;
  const int64_t per_task = std::max<int64_t>(1, 32768 / (k * nr));
  const int64_t tasks = (panels + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    PackBPanels16(kind, trans_b, k, n, static_cast<const uint16_t*>(b), ldb, nr, t0 * per_task,
                  std::min(panels, t1 * per_task), out);
  });
}

// Puts B into the problem: a 16-bit op(B) that is not transposed goes to the driver as it is
// (each task packs its own panels, GemmProblem::b16); any other B is packed for the whole call
// into the returned buffer.
std::unique_ptr<FloatBuffer> SetB(GemmProblem* p, GemmType type_b, bool trans_b, int64_t k,
                                  int64_t n, const void* b, int64_t ldb,
                                  const Parallel& parallel) {
  if (type_b != GemmType::kF32 && !trans_b) {
    p->b16 = static_cast<const uint16_t*>(b);
    p->b_kind = type_b == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
    p->ldb = ldb;
    return nullptr;
  }
  const int64_t nr = CurrentGemmTileShape().nr;
  auto pb = std::make_unique<FloatBuffer>((n + nr - 1) / nr * nr * k);
  PackBAnyForCall(type_b, trans_b, k, n, b, ldb, nr, pb->p, parallel);
  p->pb = pb->p;
  return pb;
}

}  // namespace

void GemmMixed(GemmType type_a, GemmType type_b, GemmType type_c, bool trans_a, bool trans_b,
               int64_t m, int64_t n, int64_t k, float alpha, const void* a, int64_t lda,
               const void* b, int64_t ldb, float beta, void* c, int64_t ldc,
               const Parallel& parallel, const GemmEpilogue& epilogue) {
  if (m <= 0 || n <= 0) return;
  if (n == 1 && m > 1 && ldc == 1) {
    // Matrix-vector product: solved as C^T = op(B)^T op(A)^T, as GemmF32 does.
    GemmEpilogue swapped = epilogue;
    std::swap(swapped.row_bias, swapped.col_bias);
    GemmMixed(type_b, type_a, type_c, !trans_b, !trans_a, 1, m, k, alpha, b, ldb, a, lda, beta, c,
              m, parallel, swapped);
    return;
  }
  GemmProblem p;
  const std::unique_ptr<FloatBuffer> pb = SetB(&p, type_b, trans_b, k, n, b, ldb, parallel);
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  SetA(&p, type_a, a);
  p.lda = lda;
  p.trans_a = trans_a;
  SetC(&p, type_c, c);
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

namespace {

// b packed for the current target (repacked when it was packed for another one).
const PackedBF32* CurrentPackedB(const PackedBF32& b, std::shared_ptr<const PackedBF32>* keep) {
  if (b.nr() == CurrentGemmTileShape().nr) return &b;
  std::vector<float> plain(static_cast<size_t>(b.k() * b.n()));
  for (int64_t kk = 0; kk < b.k(); ++kk) {
    for (int64_t j = 0; j < b.n(); ++j) plain[kk * b.n() + j] = b.At(kk, j);
  }
  *keep = PackedBF32::Pack(false, b.k(), b.n(), plain.data(), b.n());
  return keep->get();
}

const PackedAF32* CurrentPackedA(const PackedAF32& a, std::shared_ptr<const PackedAF32>* keep) {
  if (a.mr() == CurrentGemmTileShape().mr) return &a;
  std::vector<float> plain(static_cast<size_t>(a.m() * a.k()));
  for (int64_t i = 0; i < a.m(); ++i) {
    for (int64_t kk = 0; kk < a.k(); ++kk) plain[i * a.k() + kk] = a.At(i, kk);
  }
  *keep = PackedAF32::Pack(false, a.m(), a.k(), plain.data(), a.k());
  return keep->get();
}

}  // namespace

void GemmPackedBMixed(GemmType type_a, GemmType type_c, bool trans_a, int64_t m, float alpha,
                      const void* a, int64_t lda, const PackedBF32& b, float beta, void* c,
                      int64_t ldc, const Parallel& parallel, const GemmEpilogue& epilogue) {
  if (m <= 0 || b.n() <= 0) return;
  std::shared_ptr<const PackedBF32> keep;
  const PackedBF32* pb = CurrentPackedB(b, &keep);
  GemmProblem p;
  p.m = m;
  p.n = pb->n();
  p.k = pb->k();
  p.alpha = alpha;
  p.beta = beta;
  SetA(&p, type_a, a);
  p.lda = lda;
  p.trans_a = trans_a;
  p.pb = pb->data();
  SetC(&p, type_c, c);
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

namespace {

// One column of GemmPackedAMixed: b widened to float32, GemvPackedAF32 into C, or into a
// float32 column rounded once into a 16-bit C (as the tiles' float32 block is; then post16, not
// the float32 post-op, as there).
void GemvPackedAMixed(const PackedAF32& pa, GemmType type_b, GemmType type_c, bool trans_b,
                      float alpha, const void* b, int64_t ldb, float beta, void* c, int64_t ldc,
                      const Parallel& parallel, const GemmEpilogue& epilogue) {
  const int64_t m = pa.m(), k = pa.k();
  const int64_t b_step = trans_b ? 1 : ldb;
  std::vector<float> bf;
  const float* bp = static_cast<const float*>(b);
  if (type_b != GemmType::kF32) {
    const Float16Kind kind =
        type_b == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
    bf.resize(static_cast<size_t>(k));
    const uint16_t* b16 = static_cast<const uint16_t*>(b);
    for (int64_t kk = 0; kk < k; ++kk) bf[kk] = Widen16One(kind, b16[kk * b_step]);
    bp = bf.data();
  }
  const int64_t step = type_b != GemmType::kF32 ? 1 : b_step;
  if (type_c == GemmType::kF32) {
    GemvPackedAF32(pa.data(), m, k, bp, step, alpha, beta, static_cast<float*>(c), ldc, epilogue,
                   parallel);
    return;
  }
  const Float16Kind kind = type_c == GemmType::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  uint16_t* c16 = static_cast<uint16_t*>(c);
  std::vector<float> cf(static_cast<size_t>(m), 0.0f);
  if (beta != 0.0f) {
    for (int64_t i = 0; i < m; ++i) cf[i] = Widen16One(kind, c16[i * ldc]);
  }
  GemmEpilogue e = epilogue;
  e.post = PostOpF32{};
  GemvPackedAF32(pa.data(), m, k, bp, step, alpha, beta, cf.data(), 1, e, parallel);
  for (int64_t i = 0; i < m; ++i) c16[i * ldc] = Narrow16One(kind, cf[i]);
  if (!epilogue.post16) return;
  if (ldc == 1) {
    epilogue.post16(c16, m);
  } else {
    for (int64_t i = 0; i < m; ++i) epilogue.post16(c16 + i * ldc, 1);
  }
}

}  // namespace

void GemmPackedAMixed(const PackedAF32& a, GemmType type_b, GemmType type_c, bool trans_b,
                      int64_t n, float alpha, const void* b, int64_t ldb, float beta, void* c,
                      int64_t ldc, const Parallel& parallel, const GemmEpilogue& epilogue) {
  if (a.m() <= 0 || n <= 0) return;
  std::shared_ptr<const PackedAF32> keep;
  const PackedAF32* pa = CurrentPackedA(a, &keep);
  const int64_t k = pa->k();
  if (n == 1) {
    GemvPackedAMixed(*pa, type_b, type_c, trans_b, alpha, b, ldb, beta, c, ldc, parallel,
                     epilogue);
    return;
  }
  GemmProblem p;
  const std::unique_ptr<FloatBuffer> pb = SetB(&p, type_b, trans_b, k, n, b, ldb, parallel);
  p.m = pa->m();
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.pa = pa->data();
  SetC(&p, type_c, c);
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

void GemmPackedABF32(const PackedAF32& a, const float* packed_b, int64_t nr, int64_t n,
                     float alpha, float beta, float* c, int64_t ldc, const Parallel& parallel,
                     const GemmEpilogue& epilogue) {
  if (a.m() <= 0 || n <= 0) return;
  std::shared_ptr<const PackedAF32> keep_a;
  const PackedAF32* pa = CurrentPackedA(a, &keep_a);
  const int64_t k = pa->k();
  const int64_t cur_nr = CurrentGemmTileShape().nr;
  std::unique_ptr<FloatBuffer> repacked;
  if (nr != cur_nr && k > 0) {
    // Packed for another target's nr: read it back as a plain [K,N] matrix and repack.
    std::vector<float> plain(static_cast<size_t>(k * n));
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t pn = j / nr;
        plain[kk * n + j] = packed_b[pn * k * nr + kk * nr + (j - pn * nr)];
      }
    }
    repacked = std::make_unique<FloatBuffer>((n + cur_nr - 1) / cur_nr * cur_nr * k);
    PackBForCall(false, k, n, plain.data(), n, cur_nr, repacked->p, SerialParallel());
    packed_b = repacked->p;
  }
  GemmProblem p;
  p.m = pa->m();
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.pa = pa->data();
  p.pb = packed_b;
  p.c = c;
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

void GemmF32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
             int64_t ldc, const Parallel& parallel, const GemmEpilogue& epilogue) {
  if (m <= 0 || n <= 0) return;
  if (n == 1 && m > 1 && ldc == 1) {
    // A matrix-vector product: C^T [1,M] = op(B)^T op(A)^T puts M on the vectorized axis. Each
    // element is the same FMA chain, so the result is bitwise what the direct form gives.
    GemmEpilogue swapped = epilogue;
    std::swap(swapped.row_bias, swapped.col_bias);
    GemmF32(!trans_b, !trans_a, 1, m, k, alpha, b, ldb, a, lda, beta, c, m, parallel, swapped);
    return;
  }
  const int64_t nr = CurrentGemmTileShape().nr;
  FloatBuffer pb((n + nr - 1) / nr * nr * k);
  PackBForCall(trans_b, k, n, b, ldb, nr, pb.p, parallel);
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.a = a;
  p.lda = lda;
  p.trans_a = trans_a;
  p.pb = pb.p;
  p.c = c;
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

void GemmPackedBF32(bool trans_a, int64_t m, float alpha, const float* a, int64_t lda,
                    const PackedBF32& b, float beta, float* c, int64_t ldc,
                    const Parallel& parallel, const GemmEpilogue& epilogue) {
  if (m <= 0 || b.n() <= 0) return;
  const PackedBF32* pb = &b;
  std::shared_ptr<const PackedBF32> repacked;
  if (b.nr() != CurrentGemmTileShape().nr) {
    // Packed for another target (the dispatch target was changed since): repack.
    std::vector<float> plain(static_cast<size_t>(b.k() * b.n()));
    for (int64_t kk = 0; kk < b.k(); ++kk) {
      for (int64_t j = 0; j < b.n(); ++j) plain[kk * b.n() + j] = b.At(kk, j);
    }
    repacked = PackedBF32::Pack(false, b.k(), b.n(), plain.data(), b.n());
    pb = repacked.get();
  }
  GemmProblem p;
  p.m = m;
  p.n = pb->n();
  p.k = pb->k();
  p.alpha = alpha;
  p.beta = beta;
  p.a = a;
  p.lda = lda;
  p.trans_a = trans_a;
  p.pb = pb->data();
  p.c = c;
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

void GemmPackedAF32(const PackedAF32& a, bool trans_b, int64_t n, float alpha, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc, const Parallel& parallel,
                    const GemmEpilogue& epilogue) {
  if (a.m() <= 0 || n <= 0) return;
  const GemmTileShape shape = CurrentGemmTileShape();
  const PackedAF32* pa = &a;
  std::shared_ptr<const PackedAF32> repacked;
  if (a.mr() != shape.mr) {
    std::vector<float> plain(static_cast<size_t>(a.m() * a.k()));
    for (int64_t i = 0; i < a.m(); ++i) {
      for (int64_t kk = 0; kk < a.k(); ++kk) plain[i * a.k() + kk] = a.At(i, kk);
    }
    repacked = PackedAF32::Pack(false, a.m(), a.k(), plain.data(), a.k());
    pa = repacked.get();
  }
  const int64_t k = pa->k();
  if (n == 1) {
    // One column: the rows are the vector lanes (the tiles would waste all but one column).
    GemvPackedAF32(pa->data(), pa->m(), k, b, trans_b ? 1 : ldb, alpha, beta, c, ldc, epilogue,
                   parallel);
    return;
  }
  FloatBuffer pb((n + shape.nr - 1) / shape.nr * shape.nr * k);
  PackBForCall(trans_b, k, n, b, ldb, shape.nr, pb.p, parallel);
  GemmProblem p;
  p.m = pa->m();
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.pa = pa->data();
  p.pb = pb.p;
  p.c = c;
  p.ldc = ldc;
  p.epilogue = epilogue;
  HWY_DYNAMIC_DISPATCH(GemmDriverImpl)(p, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
