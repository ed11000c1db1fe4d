// Block-quantized 4-/8-bit weight products (see kernels/quant/matmul_nbits.h for the contract).
//
// Unpacking: a step of one weight row reads L bytes (L = float32 lanes) and widens them to L
// u32 lanes. 8-bit: that is L weights. 4-bit: the low nibbles (And 15) are the L even weights of
// 2L consecutive ones and the high nibbles (shift by 4) the L odd ones. Rather than interleave
// the nibbles back (shuffles per weight), A is permuted once per call to the same order:
// ap[2L*s + i] = a[2L*s + 2i], ap[2L*s + L + i] = a[2L*s + 2i + 1], zero past K. So each weight
// costs its share of one widening load, one And or shift, a convert, a subtract of the zero
// point and one multiply-add.
//
// 4-bit blocks of 16 weights are 8 bytes, less than one AVX-512 step: those use vectors of at
// most 8 lanes (a block always holds whole steps).
//
// GEMV: rows of W in groups of 4 (independent chains; A loaded once per group and step).
// GEMM: for each pair of W rows, (q - zp) for the whole K is written once into a per-task
// float32 buffer in the permuted order, then register tiles of up to 4 rows of A x 2 rows of W
// run over it. Both perform the same operations per output element, so they agree bit for bit.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/matmul_nbits.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/quant/matmul_nbits.h"

#ifndef SIMPLECPP_KERNELS_MATMUL_NBITS_ONCE
#define SIMPLECPP_KERNELS_MATMUL_NBITS_ONCE
namespace simplecpp::kernels {
namespace nbits {

// One call as the per-target code sees it.
struct Problem {
  int64_t m = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  const NBitsWeights* w = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t ldy = 0;
  bool gemm = false;
  bool via_f32_gemm = false;  // GemmNBitsViaF32
};

}  // namespace nbits
}  // namespace simplecpp::kernels
#endif  // SIMPLECPP_KERNELS_MATMUL_NBITS_ONCE

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 4-bit codes on 16-lane AVX-512 vectors: the 16 values float(q) - zp of a block are one
// vector (a table), and vpermps, which reads only the low 4 bits of each index lane, looks the
// weights up: no mask, convert or subtract per weight. The table entries are computed exactly
// as the portable path computes each weight, so both give the same bits.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
template <class DF>
constexpr bool kNibbleTable = hn::MaxLanes(DF()) == 16;
#else
template <class DF>
constexpr bool kNibbleTable = false;
#endif

// What a block's weights need beside their codes: zp broadcast, or the nibble table.
template <int kBits, class DF>
HWY_INLINE hn::Vec<DF> BlockConstant(DF df, float zp) {
  const hn::Vec<DF> zpv = hn::Set(df, zp);
  if constexpr (kBits == 4 && kNibbleTable<DF>) {
    return hn::Sub(hn::ConvertTo(df, hn::Iota(hn::RebindToSigned<DF>(), 0)), zpv);
  } else {
    return zpv;
  }
}

// Weights of one step of row p, float(q) - zp: w0 (and w1 for 4-bit). c is BlockConstant.
template <int kBits, class DF>
HWY_INLINE void UnpackStep(DF df, const uint8_t* HWY_RESTRICT p, hn::Vec<DF> c, hn::Vec<DF>& w0,
                           hn::Vec<DF>& w1) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> d8;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, p));
  if constexpr (kBits == 4 && kNibbleTable<DF>) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    w0 = hn::Vec<DF>{_mm512_permutexvar_ps(bytes.raw, c.raw)};
    w1 = hn::Vec<DF>{_mm512_permutexvar_ps(hn::ShiftRight<4>(bytes).raw, c.raw)};
#endif
  } else if constexpr (kBits == 4) {
    const auto lo = hn::And(bytes, hn::Set(du, 15u));
    const auto hi = hn::ShiftRight<4>(bytes);
    w0 = hn::Sub(hn::ConvertTo(df, hn::BitCast(di, lo)), c);
    w1 = hn::Sub(hn::ConvertTo(df, hn::BitCast(di, hi)), c);
  } else {
    w0 = hn::Sub(hn::ConvertTo(df, hn::BitCast(di, bytes)), c);
    w1 = w0;
  }
}

// ap [m][k_pad] = the rows of a in step order (see the file comment), zero past K.
template <int kBits, class DF>
void PermuteA(DF df, const nbits::Problem& p, int64_t k_pad, float* HWY_RESTRICT ap) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t k = p.w->k;
  for (int64_t i = 0; i < p.m; ++i) {
    const float* a = p.a + i * p.lda;
    float* out = ap + i * k_pad;
    if constexpr (kBits == 8) {
      std::copy(a, a + k, out);
      std::fill(out + k, out + k_pad, 0.0f);
    } else {
      for (int64_t s = 0; s < k_pad; s += 2 * L) {
        for (int64_t j = 0; j < 2 * L; ++j) {
          const int64_t kk = s + j;
          const int64_t dst = s + (j % 2) * L + j / 2;
          out[dst] = kk < k ? a[kk] : 0.0f;
        }
      }
    }
  }
}

// How far ahead of each weight row stream DotRows prefetches.
constexpr int64_t kPrefetchBytes = 768;

// Zero points of the rows from n0 on, with the per-row addressing computed once.
struct ZeroPointRows {
  ZeroPointRows(const NBitsWeights& w, int64_t n0)
      : kind(w.zp_kind), bits(w.bits), def(static_cast<float>(1 << (w.bits - 1))) {
    if (kind == NBitsZeroPoints::kPackedU8) {
      stride = w.zp_row_bytes();
      p8 = w.zp_packed + n0 * stride;
    } else if (kind == NBitsZeroPoints::kFloat32) {
      stride = w.k_blocks();
      pf = w.zp_f32 + n0 * stride;
    }
  }
  HWY_INLINE float At(int64_t r, int64_t b) const {
    if (kind == NBitsZeroPoints::kPackedU8) {
      if (bits == 8) return static_cast<float>(p8[r * stride + b]);
      return static_cast<float>((p8[r * stride + b / 2] >> (4 * (b & 1))) & 15);
    }
    if (kind == NBitsZeroPoints::kFloat32) return pf[r * stride + b];
    return def;
  }
  // out[j] = At(r, b0 + j), j < count; b0 even. One switch per call, simple loops.
  void Fill(int64_t r, int64_t b0, int64_t count, float* HWY_RESTRICT out) const {
    if (kind == NBitsZeroPoints::kPackedU8 && bits == 4) {
      const uint8_t* z = p8 + r * stride + b0 / 2;
      for (int64_t j = 0; j < count; ++j) {
        out[j] = static_cast<float>((z[j / 2] >> (4 * (j & 1))) & 15);
      }
    } else if (kind == NBitsZeroPoints::kPackedU8) {
      const uint8_t* z = p8 + r * stride + b0;
      for (int64_t j = 0; j < count; ++j) out[j] = static_cast<float>(z[j]);
    } else if (kind == NBitsZeroPoints::kFloat32) {
      const float* z = pf + r * stride + b0;
      for (int64_t j = 0; j < count; ++j) out[j] = z[j];
    } else {
      for (int64_t j = 0; j < count; ++j) out[j] = def;
    }
  }
  NBitsZeroPoints kind;
  int bits;
  float def;
  int64_t stride = 0;
  const uint8_t* p8 = nullptr;
  const float* pf = nullptr;
};

// out[r] = y of W rows n0..n0+R-1 against one permuted A row (before the bias). kSteps: steps
// per block when known at compile time (the common block sizes: a fully unrolled block keeps the
// per-block work small next to the weights' work), 0 for any.
template <int kBits, int R, int kSteps, class DF>
HWY_NOINLINE void DotRows(DF df, const float* HWY_RESTRICT ap, const NBitsWeights& w, int64_t n0,
                          float* HWY_RESTRICT out) {
  using V = hn::Vec<DF>;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t kb = w.k_blocks(), blob = w.blob_bytes(), row_bytes = kb * blob;
  const int64_t steps = kSteps != 0 ? kSteps : (kBits == 4 ? w.block_size / (2 * L) : w.block_size / L);
  const int64_t step_weights = kBits == 4 ? 2 * L : L;
  const ZeroPointRows zps(w, n0);
  const uint8_t* HWY_RESTRICT q0 = w.packed + n0 * row_bytes;
  const float* HWY_RESTRICT s0 = w.scales + n0 * kb;
  V acc[R];
  for (int r = 0; r < R; ++r) acc[r] = hn::Zero(df);
  // Zero points are decoded a chunk of blocks at a time (per-block scalar decoding was a large
  // share of the work at block size 32).
  constexpr int64_t kZpChunk = 16;
  HWY_ALIGN float zpf[R][kZpChunk];
  for (int64_t b = 0; b < kb; ++b) {
    const int64_t j = b % kZpChunk;
    if (j == 0) {
      for (int r = 0; r < R; ++r) zps.Fill(r, b, std::min(kZpChunk, kb - b), zpf[r]);
    }
    V d[R], zp[R];
    for (int r = 0; r < R; ++r) {
      d[r] = hn::Zero(df);
      zp[r] = BlockConstant<kBits>(df, zpf[r][j]);
    }
    const float* HWY_RESTRICT ab = ap + b * w.block_size;
    const uint8_t* HWY_RESTRICT qb = q0 + b * blob;
    // R interleaved streams restart every few KiB (one group of rows): asking for each a
    // little ahead keeps DRAM reads in flight where the hardware prefetcher is still ramping up.
    for (int r = 0; r < R; ++r) hwy::Prefetch(qb + r * row_bytes + kPrefetchBytes);
    for (int64_t s = 0; s < steps; ++s) {
      const V a0 = hn::LoadU(df, ab + s * step_weights);
      if constexpr (kBits == 4) {
        const V a1 = hn::LoadU(df, ab + s * step_weights + L);
        for (int r = 0; r < R; ++r) {
          V w0, w1;
          UnpackStep<4>(df, qb + r * row_bytes + s * L, zp[r], w0, w1);
          d[r] = hn::MulAdd(a0, w0, d[r]);
          d[r] = hn::MulAdd(a1, w1, d[r]);
        }
      } else {
        for (int r = 0; r < R; ++r) {
          V w0, w1;
          UnpackStep<8>(df, qb + r * row_bytes + s * L, zp[r], w0, w1);
          d[r] = hn::MulAdd(a0, w0, d[r]);
        }
      }
    }
    for (int r = 0; r < R; ++r) acc[r] = hn::MulAdd(d[r], hn::Set(df, s0[r * kb + b]), acc[r]);
  }
  for (int r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(df, acc[r]));
}

using DotRowsFn = void (*)(const float*, const NBitsWeights&, int64_t, float*);

template <int kBits, int R, int kSteps, class DF>
void DotRowsCall(const float* ap, const NBitsWeights& w, int64_t n0, float* out) {
  DotRows<kBits, R, kSteps>(DF(), ap, w, n0, out);
}

template <int kBits, int R, class DF>
DotRowsFn PickDotRows(int64_t steps) {
  switch (steps) {
    case 1:
      return &DotRowsCall<kBits, R, 1, DF>;
    case 2:
      return &DotRowsCall<kBits, R, 2, DF>;
    case 4:
      return &DotRowsCall<kBits, R, 4, DF>;
    default:
      return &DotRowsCall<kBits, R, 0, DF>;
  }
}

// panel [R][k_pad] = float(q) - zp of W rows n0..n0+R-1, in step order (w0 then w1 per step).
template <int kBits, class DF>
void DequantPanel(DF df, const NBitsWeights& w, int64_t n0, int rows, int64_t k_pad,
                  float* HWY_RESTRICT panel) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t kb = w.k_blocks(), blob = w.blob_bytes(), row_bytes = kb * blob;
  const int64_t steps = kBits == 4 ? w.block_size / (2 * L) : w.block_size / L;
  const int64_t step_weights = kBits == 4 ? 2 * L : L;
  const int64_t zp_row = w.zp_row_bytes();
  for (int r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < kb; ++b) {
      const auto zp = BlockConstant<kBits>(df, w.ZeroPointIn(n0 + r, b, kb, zp_row));
      const uint8_t* q = w.packed + (n0 + r) * row_bytes + b * blob;
      float* out = panel + r * k_pad + b * w.block_size;
      for (int64_t s = 0; s < steps; ++s) {
        hn::Vec<DF> w0, w1;
        UnpackStep<kBits>(df, q + s * L, zp, w0, w1);
        hn::StoreU(w0, df, out + s * step_weights);
        if constexpr (kBits == 4) hn::StoreU(w1, df, out + s * step_weights + L);
      }
    }
  }
}

// out[i*NR + j] = y of A rows (ap rows 0..MR-1, stride k_pad) x panel rows 0..NR-1 (before the
// bias); scales[j*kb + b] is the scale of panel row j. Same operations as DotRows.
template <int MR, int NR, class DF>
HWY_NOINLINE void Tile(DF df, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT panel,
                       const float* HWY_RESTRICT scales, int64_t kb, int64_t block, int64_t k_pad,
                       float* HWY_RESTRICT out) {
  using V = hn::Vec<DF>;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  V acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) acc[i][j] = hn::Zero(df);
  }
  for (int64_t b = 0; b < kb; ++b) {
    V d[MR][NR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) d[i][j] = hn::Zero(df);
    }
    for (int64_t kk = b * block; kk < (b + 1) * block; kk += L) {
      V av[MR];
      for (int i = 0; i < MR; ++i) av[i] = hn::LoadU(df, ap + i * k_pad + kk);
      for (int j = 0; j < NR; ++j) {
        const V wv = hn::LoadU(df, panel + j * k_pad + kk);
        for (int i = 0; i < MR; ++i) d[i][j] = hn::MulAdd(av[i], wv, d[i][j]);
      }
    }
    for (int j = 0; j < NR; ++j) {
      const V s = hn::Set(df, scales[j * kb + b]);
      for (int i = 0; i < MR; ++i) acc[i][j] = hn::MulAdd(d[i][j], s, acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) out[i * NR + j] = hn::GetLane(hn::SumOfLanes(df, acc[i][j]));
  }
}

using TileFn = void (*)(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                        float*);

// Rows of A per register tile: 4 x 2 tiles keep 16 accumulators, which fit AVX-512's 32
// registers beside the loaded values; 16-register targets take 2 x 2.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr int kMaxTileRows = 4;
#else
constexpr int kMaxTileRows = 2;
#endif
constexpr int kPanelRows = 2;
// W rows per dequantized panel of GemmNBitsViaF32: 64 rows of K floats stay within L2 for K up
// to a few thousand, and give the float GEMM whole column panels.
constexpr int64_t kF32GemmPanelRows = 64;

template <class DF, int NR>
TileFn PickTile(int rows) {
  // The function pointers bind the tag (a stateless type), so each instantiation is distinct.
  switch (rows) {
    case 1:
      return [](const float* ap, const float* pn, const float* sc, int64_t kb, int64_t bs,
                int64_t kp, float* o) { Tile<1, NR>(DF(), ap, pn, sc, kb, bs, kp, o); };
    case 2:
      return [](const float* ap, const float* pn, const float* sc, int64_t kb, int64_t bs,
                int64_t kp, float* o) { Tile<2, NR>(DF(), ap, pn, sc, kb, bs, kp, o); };
    case 3:
      return [](const float* ap, const float* pn, const float* sc, int64_t kb, int64_t bs,
                int64_t kp, float* o) { Tile<3, NR>(DF(), ap, pn, sc, kb, bs, kp, o); };
    default:
      return [](const float* ap, const float* pn, const float* sc, int64_t kb, int64_t bs,
                int64_t kp, float* o) { Tile<4, NR>(DF(), ap, pn, sc, kb, bs, kp, o); };
  }
}

// asum[i * kb + b] = sum of a[i][k] over block b's k < K, in k order.
inline void BlockSumsOfA(const nbits::Problem& p, int64_t kb, float* HWY_RESTRICT asum) {
  const int64_t k = p.w->k, bs = p.w->block_size;
  for (int64_t i = 0; i < p.m; ++i) {
    const float* a = p.a + i * p.lda;
    for (int64_t b = 0; b < kb; ++b) {
      float s = 0.0f;
      for (int64_t kk = b * bs; kk < std::min(k, (b + 1) * bs); ++kk) s += a[kk];
      asum[i * kb + b] = s;
    }
  }
}

// sum over b of min[b] * asum[b], in b order.
inline float BlockMinTerm(const float* HWY_RESTRICT min, const float* HWY_RESTRICT asum, int64_t kb) {
  float s = 0.0f;
  for (int64_t b = 0; b < kb; ++b) s += min[b] * asum[b];
  return s;
}

template <int kBits, class DF>
void Run(DF df, const nbits::Problem& p, const Parallel& parallel) {
  const NBitsWeights& w = *p.w;
  const int64_t kb = w.k_blocks();
  const int64_t k_pad = kb * w.block_size;
  // Scratch is per thread and reused across calls: decode runs this once per weight per token.
  static thread_local ThreadScratch tls_ap;
  float* const ap = tls_ap.Get(p.m * k_pad);
  PermuteA<kBits>(df, p, k_pad, ap);
  const int64_t tasks = (w.n + kNBitsRowsPerTask - 1) / kNBitsRowsPerTask;
  // Block minimums: the sums of each A row's blocks, once per call (see the header).
  static thread_local ThreadScratch tls_asum;
  float* const asum = w.block_min != nullptr ? tls_asum.Get(p.m * kb) : nullptr;
  if (asum != nullptr) BlockSumsOfA(p, kb, asum);
  auto finish = [&p, &w, asum, kb](int64_t i, int64_t n, float v) {
    if (asum != nullptr) v += BlockMinTerm(w.block_min + n * kb, asum + i * kb, kb);
    p.y[i * p.ldy + n] = p.bias != nullptr ? v + p.bias[n] : v;
  };
  if (p.via_f32_gemm) {
    // Panels of W rows dequantized to float32 (scale applied) in the step order of ap, so the
    // float GEMM pairs each weight with its A value; the padding past K meets zero A values.
    const int64_t panels = (w.n + kF32GemmPanelRows - 1) / kF32GemmPanelRows;
    // A is the packed B operand (packed once per call): each panel of W rows is the A operand,
    // C^T = W_panel * A^T, and the panel rows need no transposing copy of their own.
    const std::shared_ptr<const PackedBF32> packed_a = PackedBF32::Pack(true, k_pad, p.m, ap, k_pad);
    parallel.For(panels, [&](int64_t t0, int64_t t1) {
      static thread_local ThreadScratch tls_panel;
      static thread_local ThreadScratch tls_ct;
      float* const panel = tls_panel.Get(kF32GemmPanelRows * k_pad);
      float* const ct = tls_ct.Get(kF32GemmPanelRows * p.m);
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t * kF32GemmPanelRows;
        const int rows = static_cast<int>(std::min<int64_t>(kF32GemmPanelRows, w.n - n));
        DequantPanel<kBits>(df, w, n, rows, k_pad, panel);
        const int64_t L = static_cast<int64_t>(hn::Lanes(df));
        for (int r = 0; r < rows; ++r) {
          for (int64_t b = 0; b < kb; ++b) {
            const auto scale = hn::Set(df, w.scales[(n + r) * kb + b]);
            float* block = panel + r * k_pad + b * w.block_size;
            if (w.block_min == nullptr) {
              for (int64_t j = 0; j < w.block_size; j += L) {
                hn::StoreU(hn::Mul(hn::LoadU(df, block + j), scale), df, block + j);
              }
              continue;
            }
            // (q - zp) * scale, then + min: two roundings, as the graph's dequantized weight.
            const auto min = hn::Set(df, w.block_min[(n + r) * kb + b]);
            for (int64_t j = 0; j < w.block_size; j += L) {
              hn::StoreU(hn::Add(hn::Mul(hn::LoadU(df, block + j), scale), min), df, block + j);
            }
          }
        }
        GemmPackedBF32(false, rows, 1.0f, panel, k_pad, *packed_a, 0.0f, ct, p.m,
                       SerialParallel());
        for (int64_t i = 0; i < p.m; ++i) {
          float* y = p.y + i * p.ldy + n;
          for (int r = 0; r < rows; ++r) {
            const float v = ct[r * p.m + i];
            y[r] = p.bias != nullptr ? v + p.bias[n + r] : v;
          }
        }
      }
    });
    return;
  }
  if (!p.gemm) {
    const int64_t L = static_cast<int64_t>(hn::Lanes(df));
    const int64_t steps = kBits == 4 ? w.block_size / (2 * L) : w.block_size / L;
    const DotRowsFn dot4 = PickDotRows<kBits, 4, DF>(steps);
    const DotRowsFn dot1 = PickDotRows<kBits, 1, DF>(steps);
    parallel.For(tasks, [&](int64_t t0, int64_t t1) {
      const int64_t n_end = std::min(w.n, t1 * kNBitsRowsPerTask);
      for (int64_t i = 0; i < p.m; ++i) {
        const float* a = ap + i * k_pad;
        int64_t n = t0 * kNBitsRowsPerTask;
        float out[4];
        for (; n + 4 <= n_end; n += 4) {
          dot4(a, w, n, out);
          for (int r = 0; r < 4; ++r) finish(i, n + r, out[r]);
        }
        for (; n < n_end; ++n) {
          dot1(a, w, n, out);
          finish(i, n, out[0]);
        }
      }
    });
    return;
  }
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t n_end = std::min(w.n, t1 * kNBitsRowsPerTask);
    static thread_local ThreadScratch tls_pair;
    float* const panel = tls_pair.Get(kPanelRows * k_pad);
    for (int64_t n = t0 * kNBitsRowsPerTask; n < n_end; n += kPanelRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kPanelRows, n_end - n));
      DequantPanel<kBits>(df, w, n, rows, k_pad, panel);
      float out[kMaxTileRows * kPanelRows];
      for (int64_t i = 0; i < p.m; i += kMaxTileRows) {
        const int mr = static_cast<int>(std::min<int64_t>(kMaxTileRows, p.m - i));
        const TileFn fn = rows == kPanelRows ? PickTile<DF, kPanelRows>(mr) : PickTile<DF, 1>(mr);
        fn(ap + i * k_pad, panel, w.scales + n * kb, kb, w.block_size, k_pad, out);
        for (int ii = 0; ii < mr; ++ii) {
          for (int j = 0; j < rows; ++j) finish(i + ii, n + j, out[ii * rows + j]);
        }
      }
    }
  });
}

void MatMulNBitsImpl(const nbits::Problem& p, const Parallel& parallel) {
  const hn::ScalableTag<float> df;
  // A 4-bit block of 16 weights is 8 bytes: steps of at most 8 lanes.
  const bool narrow = p.w->bits == 4 && p.w->block_size / 2 < static_cast<int64_t>(hn::Lanes(df));
  if (p.w->bits == 4) {
    if (narrow) {
      Run<4>(hn::CappedTag<float, 8>(), p, parallel);
    } else {
      Run<4>(df, p, parallel);
    }
  } else {
    Run<8>(df, p, parallel);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(MatMulNBitsImpl);

namespace {
void Call(bool gemm, bool via_f32_gemm, int64_t m, const float* a, int64_t lda, const NBitsWeights& w,
          const float* bias, float* y, int64_t ldy, const Parallel& parallel) {
  if (m <= 0 || w.n <= 0) return;
  nbits::Problem p;
  p.m = m;
  p.a = a;
  p.lda = lda;
  p.w = &w;
  p.bias = bias;
  p.y = y;
  p.ldy = ldy;
  p.gemm = gemm;
  p.via_f32_gemm = via_f32_gemm;
  HWY_DYNAMIC_DISPATCH(MatMulNBitsImpl)(p, parallel);
}
}  // namespace

void GemvNBitsF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w, const float* bias,
                  float* y, int64_t ldy, const Parallel& parallel) {
  Call(false, false, m, a, lda, w, bias, y, ldy, parallel);
}

void GemmNBitsF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w, const float* bias,
                  float* y, int64_t ldy, const Parallel& parallel) {
  Call(true, false, m, a, lda, w, bias, y, ldy, parallel);
}

void GemmNBitsViaF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w,
                     const float* bias, float* y, int64_t ldy, const Parallel& parallel) {
  Call(true, true, m, a, lda, w, bias, y, ldy, parallel);
}

void MatMulNBitsF32(int64_t m, const float* a, int64_t lda, const NBitsWeights& w,
                    const float* bias, float* y, int64_t ldy, const Parallel& parallel) {
  Call(m > 1, m >= kNBitsViaF32MinRows, m, a, lda, w, bias, y, ldy, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
