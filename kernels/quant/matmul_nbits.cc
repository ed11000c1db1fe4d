// Block-quantized 4-/8-bit weight products (see kernels/quant/matmul_nbits.h for the contract).
//
// Unpacking: a step of one weight row reads L bytes (L = float32 lanes) and widens them to L
// u32 lanes. 8-bit: that is L weights. 4-bit: the low nibbles (And 15) are the L even weights of
// 2L consecutive ones and the high nibbles (shift by 4) the L odd ones. Rather than interleave
// the nibbles back (shuffles per weight), A is permuted once per call to the same order:
// ap[2L*s + i] = a[2L*s + 2i], ap[2L*s + L + i] = a[2L*s + 2i + 1], zero past K. So each weight
// costs its share of one widening load, one And or shift, a subtract of an integer zero point
// (on the integer codes), a convert and one multiply-add; 4-bit codes on AVX-512 take a table
// lookup instead of the And, subtract and convert (see kNibbleTable).
//
// 4-bit blocks of 16 weights are 8 bytes, less than one AVX-512 step: those use vectors of at
// most 8 lanes (a block always holds whole steps).
//
// GEMV: rows of W in groups of 4 (independent chains; A loaded once per group and step and
// kept in registers). What bounds it on Zen 5 (AVX-512, block 32, 4-bit; bench/README.md):
// per block and row it issues 8 vector operations (widening load, shift, 2 lookups, 3
// multiply-adds, the table's subtract) and 3.5 vector loads (codes, zero point, scale, A
// shared by 4 rows), against 4 vector pipes of which only 2 shuffle and 2 multiply-add, and 2
// vector loads per cycle; anything more per block (a scalar int-to-float conversion, an
// address spilled through a vector register, a load per use of A) shows directly in the time,
// which is why the zero points are decoded once per task in vectors and A is pinned in
// registers.
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

// The codes of one step of row p as u32 lanes: q0 (and q1 for 4-bit), the nibble table path
// aside (there the codes stay in the high bits, see above).
template <int kBits, class DF>
HWY_INLINE void StepCodes(DF df, const uint8_t* HWY_RESTRICT p,
                          hn::Vec<hn::RebindToUnsigned<DF>>& q0,
                          hn::Vec<hn::RebindToUnsigned<DF>>& q1) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<uint8_t, DF> d8;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, p));
  if constexpr (kBits == 4) {
    q0 = hn::And(bytes, hn::Set(du, 15u));
    q1 = hn::ShiftRight<4>(bytes);
  } else {
    q0 = bytes;
    q1 = bytes;
  }
}

// Weights of one step of row p, float(q) - zp: w0 (and w1 for 4-bit). c is BlockConstant.
template <int kBits, class DF>
HWY_INLINE void UnpackStep(DF df, const uint8_t* HWY_RESTRICT p, hn::Vec<DF> c, hn::Vec<DF>& w0,
                           hn::Vec<DF>& w1) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  if constexpr (kBits == 4 && kNibbleTable<DF>) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    const hn::Rebind<uint8_t, DF> d8;
    const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, p));
    w0 = hn::Vec<DF>{_mm512_permutexvar_ps(bytes.raw, c.raw)};
    w1 = hn::Vec<DF>{_mm512_permutexvar_ps(hn::ShiftRight<4>(bytes).raw, c.raw)};
#endif
  } else {
    hn::Vec<decltype(du)> q0, q1;
    StepCodes<kBits>(df, p, q0, q1);
    w0 = hn::Sub(hn::ConvertTo(df, hn::BitCast(di, q0)), c);
    w1 = kBits == 4 ? hn::Sub(hn::ConvertTo(df, hn::BitCast(di, q1)), c) : w0;
  }
}

// As UnpackStep for an integer zero point zpi (Set(di, zp)): the subtraction is done on the
// integer codes, which gives the same float32 values (small integers are exact) and keeps it
// off the pipes the conversion and the float adds share.
template <int kBits, class DF>
HWY_INLINE void UnpackStepInt(DF df, const uint8_t* HWY_RESTRICT p,
                              hn::Vec<hn::RebindToSigned<DF>> zpi, hn::Vec<DF>& w0,
                              hn::Vec<DF>& w1) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  hn::Vec<decltype(du)> q0, q1;
  StepCodes<kBits>(df, p, q0, q1);
  w0 = hn::ConvertTo(df, hn::Sub(hn::BitCast(di, q0), zpi));
  w1 = kBits == 4 ? hn::ConvertTo(df, hn::Sub(hn::BitCast(di, q1), zpi)) : w0;
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
          const int64_t kk = s + 2 * (j % L) + j / L;  // w0: even weights, w1: odd ones
          out[s + j] = kk < k ? a[kk] : 0.0f;
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
  // out[j] = the zero point of block b0 + j of row r, j < count; b0 even. One switch per
  // call, simple loops.
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
  // As Fill, as int32, for the integer kinds (not kFloat32).
  void FillInt(int64_t r, int64_t b0, int64_t count, int32_t* HWY_RESTRICT out) const {
    if (kind == NBitsZeroPoints::kPackedU8 && bits == 4) {
      const uint8_t* z = p8 + r * stride + b0 / 2;
      for (int64_t j = 0; j < count; ++j) out[j] = (z[j / 2] >> (4 * (j & 1))) & 15;
    } else if (kind == NBitsZeroPoints::kPackedU8) {
      const uint8_t* z = p8 + r * stride + b0;
      for (int64_t j = 0; j < count; ++j) out[j] = z[j];
    } else {
      for (int64_t j = 0; j < count; ++j) out[j] = 1 << (bits - 1);
    }
  }
  NBitsZeroPoints kind;
  int bits;
  float def;
  int64_t stride = 0;
  const uint8_t* p8 = nullptr;
  const float* pf = nullptr;
};

// out[j] = the zero point of block j of row r of zps, j < kb, as float32: 4-bit packed zero
// points are unpacked in vectors (a scalar int-to-float conversion per block takes a slot of
// the vector pipes the dot products need).
template <class DF>
void DecodeZeroPoints(DF df, const ZeroPointRows& zps, int64_t r, int64_t kb,
                      float* HWY_RESTRICT out) {
  int64_t j = 0;
  if constexpr (hn::MaxLanes(DF()) >= 4) {
    if (zps.kind == NBitsZeroPoints::kPackedU8 && zps.bits == 4) {
      // L nibbles from L/2 bytes: each byte z as a u16 lane becomes (z & 15) | (z >> 4) << 8,
      // which read as bytes is the low nibble, then the high one.
      const hn::RebindToUnsigned<DF> du;
      const hn::RebindToSigned<DF> di;
      const hn::Rebind<uint8_t, DF> d8;
      const hn::Repartition<uint16_t, decltype(d8)> d16;
      const hn::Rebind<uint8_t, decltype(d16)> d8h;
      const int64_t L = static_cast<int64_t>(hn::Lanes(df));
      const uint8_t* z = zps.p8 + r * zps.stride;
      for (; j + L <= kb; j += L) {
        const auto v = hn::PromoteTo(d16, hn::LoadU(d8h, z + j / 2));
        const auto t =
            hn::Or(hn::And(v, hn::Set(d16, 15)), hn::ShiftLeft<4>(hn::And(v, hn::Set(d16, 0xF0))));
        const auto q = hn::PromoteTo(du, hn::BitCast(d8, t));
        hn::StoreU(hn::ConvertTo(df, hn::BitCast(di, q)), df, out + j);
      }
    }
  }
  zps.Fill(r, j, kb - j, out + j);
}

// Makes the compiler keep v in a register rather than fold its load into each use: A is read
// by the R rows' multiply-adds, and a load per use would cost a slot of the vector loads (two
// per cycle on Zen 4/5), which the codes, zero points and scales need.
template <class V>
HWY_INLINE void KeepInRegister(V& v) {
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__)) && HWY_TARGET != HWY_EMU128 && \
    HWY_TARGET != HWY_SCALAR
  asm("" : "+v"(v.raw));
#else
  (void)v;
#endif
}

// How DotRows takes the zero points: float32 per block (subtracted after the conversion, or in
// the nibble table), int32 per block (subtracted from the integer codes), or the default
// 2^(bits-1) of every block (a constant kept in a register: no load per block).
enum ZpMode : int { kZpFloat, kZpInt, kZpDefault };

// Whether the codes take the subtraction as integers (not on the nibble table path, whose
// table holds float(q) - zp already).
template <int kBits, int kZp, class DF>
constexpr bool kIntCodes = kZp == kZpInt ||
                           (kZp == kZpDefault && !(kBits == 4 && kNibbleTable<DF>));

// One block of W rows n0..n0+R-1: acc[r] += (sum of the block's a * (q - zp) lanes) * scale.
// ab: the block's permuted A; qb, sb, zb: row n0's codes, scale and zero point (see ZpMode) of
// the block; rows follow at row_bytes, kb and kb.
template <int kBits, int R, int kSteps, int kZp, class DF>
HWY_INLINE void DotBlock(DF df, const float* HWY_RESTRICT ab, const uint8_t* HWY_RESTRICT qb,
                         const float* HWY_RESTRICT sb, const float* HWY_RESTRICT zb,
                         int64_t row_bytes, int64_t kb, int64_t steps,
                         hn::Vec<DF>* HWY_RESTRICT acc) {
  using V = hn::Vec<DF>;
  const hn::RebindToSigned<DF> di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t step_weights = kBits == 4 ? 2 * L : L;
  V d[R], c[R];
  hn::Vec<decltype(di)> ci[R];
  for (int r = 0; r < R; ++r) {
    d[r] = hn::Zero(df);
    constexpr int32_t kDefault = 1 << (kBits - 1);
    if constexpr (kZp == kZpDefault && kIntCodes<kBits, kZp, DF>) {
      ci[r] = hn::Set(di, kDefault);
    } else if constexpr (kZp == kZpDefault) {
      c[r] = BlockConstant<kBits>(df, static_cast<float>(kDefault));
    } else if constexpr (kZp == kZpInt) {
      ci[r] = hn::Set(di, reinterpret_cast<const int32_t*>(zb)[r * kb]);
    } else {
      c[r] = BlockConstant<kBits>(df, zb[r * kb]);
    }
  }
  for (int64_t s = 0; s < steps; ++s) {
    V a0 = hn::LoadU(df, ab + s * step_weights);
    V a1 = kBits == 4 ? hn::LoadU(df, ab + s * step_weights + L) : a0;
    KeepInRegister(a0);
    KeepInRegister(a1);
    for (int r = 0; r < R; ++r) {
      V w0, w1;
      if constexpr (kIntCodes<kBits, kZp, DF>) {
        UnpackStepInt<kBits>(df, qb + r * row_bytes + s * L, ci[r], w0, w1);
      } else {
        UnpackStep<kBits>(df, qb + r * row_bytes + s * L, c[r], w0, w1);
      }
      d[r] = hn::MulAdd(a0, w0, d[r]);
      if constexpr (kBits == 4) d[r] = hn::MulAdd(a1, w1, d[r]);
    }
  }
  for (int r = 0; r < R; ++r) acc[r] = hn::MulAdd(d[r], hn::Set(df, sb[r * kb]), acc[r]);
}

// out[r] = y of W rows n0..n0+R-1 against one permuted A row (before the bias); zp: the rows'
// zero points [R][kb] (see DotBlock). kSteps: steps per block when known at compile time (the
// common block sizes: a fully unrolled block keeps the per-block work small next to the
// weights' work), 0 for any.
template <int kBits, int R, int kSteps, int kZp, class DF>
HWY_NOINLINE void DotRows(DF df, const float* HWY_RESTRICT ap, const NBitsWeights& w, int64_t n0,
                          const float* HWY_RESTRICT zp, float* HWY_RESTRICT out) {
  using V = hn::Vec<DF>;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t kb = w.k_blocks(), blob = w.blob_bytes(), row_bytes = kb * blob;
  const int64_t steps =
      kSteps != 0 ? kSteps : (kBits == 4 ? w.block_size / (2 * L) : w.block_size / L);
  const int64_t block_weights = w.block_size;
  const uint8_t* HWY_RESTRICT q = w.packed + n0 * row_bytes;
  const float* HWY_RESTRICT sc = w.scales + n0 * kb;
  V acc[R];
  for (int r = 0; r < R; ++r) acc[r] = hn::Zero(df);
  // Each row stream is prefetched once per cache line: the blocks of one line form a group.
  // R interleaved streams restart every few KiB (one group of rows): asking for each a little
  // ahead keeps DRAM reads in flight where the hardware prefetcher is still ramping up.
  constexpr int64_t kLine = 64;
  constexpr int64_t kGroup =
      kSteps == 0 ? 1 : HWY_MAX(1, kLine / (kSteps * static_cast<int64_t>(hn::MaxLanes(DF()))));
  const int64_t group = kSteps != 0 && kSteps * L == blob ? kGroup : 1;
  int64_t b = 0;
  for (; b + group <= kb; b += group) {
    for (int r = 0; r < R; ++r) hwy::Prefetch(q + r * row_bytes + kPrefetchBytes);
    for (int64_t j = 0; j < group; ++j) {
      DotBlock<kBits, R, kSteps, kZp>(df, ap, q, sc + b + j, zp + b + j, row_bytes, kb, steps, acc);
      ap += block_weights;
      q += blob;
    }
  }
  for (; b < kb; ++b) {
    DotBlock<kBits, R, kSteps, kZp>(df, ap, q, sc + b, zp + b, row_bytes, kb, steps, acc);
    ap += block_weights;
    q += blob;
  }
  for (int r = 0; r < R; ++r) out[r] = hn::GetLane(hn::SumOfLanes(df, acc[r]));
}

using DotRowsFn = void (*)(const float*, const NBitsWeights&, int64_t, const float*, float*);

template <int kBits, int R, int kSteps, int kZp, class DF>
void DotRowsCall(const float* ap, const NBitsWeights& w, int64_t n0, const float* zpf, float* out) {
  DotRows<kBits, R, kSteps, kZp>(DF(), ap, w, n0, zpf, out);
}

template <int kBits, int R, int kZp, class DF>
DotRowsFn PickDotRows(int64_t steps) {
  switch (steps) {
    case 1:
      return &DotRowsCall<kBits, R, 1, kZp, DF>;
    case 2:
      return &DotRowsCall<kBits, R, 2, kZp, DF>;
    case 4:
      return &DotRowsCall<kBits, R, 4, kZp, DF>;
    default:
      return &DotRowsCall<kBits, R, 0, kZp, DF>;
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
inline float BlockMinTerm(const float* HWY_RESTRICT min, const float* HWY_RESTRICT asum,
                          int64_t kb) {
  float s = 0.0f;
  for (int64_t b = 0; b < kb; ++b) s += min[b] * asum[b];
  return s;
}

// The GEMV path of Run (ap: the permuted rows of A, finish(i, n, v) stores y[i, n]).
template <int kBits, class DF, class Finish>
void RunGemv(DF df, const nbits::Problem& p, const float* ap, int64_t k_pad,
             const Parallel& parallel, const Finish& finish) {
  const NBitsWeights& w = *p.w;
  const int64_t kb = w.k_blocks();
  const int64_t tasks = (w.n + kNBitsRowsPerTask - 1) / kNBitsRowsPerTask;
  const int64_t L = static_cast<int64_t>(hn::Lanes(df));
  const int64_t steps = kBits == 4 ? w.block_size / (2 * L) : w.block_size / L;
  // Integer zero points are subtracted from the integer codes (not on the nibble table path,
  // whose table holds float(q) - zp already); absent ones are a constant.
  const bool table = kBits == 4 && kNibbleTable<DF>;
  const ZpMode mode = w.zp_kind == NBitsZeroPoints::kDefault            ? kZpDefault
                      : w.zp_kind == NBitsZeroPoints::kFloat32 || table ? kZpFloat
                                                                        : kZpInt;
  const bool int_zp = mode == kZpInt;
  const DotRowsFn dot4 = mode == kZpDefault ? PickDotRows<kBits, 4, kZpDefault, DF>(steps)
                         : int_zp           ? PickDotRows<kBits, 4, kZpInt, DF>(steps)
                                            : PickDotRows<kBits, 4, kZpFloat, DF>(steps);
  const DotRowsFn dot1 = mode == kZpDefault ? PickDotRows<kBits, 1, kZpDefault, DF>(steps)
                         : int_zp           ? PickDotRows<kBits, 1, kZpInt, DF>(steps)
                                            : PickDotRows<kBits, 1, kZpFloat, DF>(steps);
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t n_end = std::min(w.n, t1 * kNBitsRowsPerTask);
    const int64_t n_begin = t0 * kNBitsRowsPerTask;
    // The task's zero points [rows][kb], decoded once per call (not per row of A), as
    // float32 or, for the integer path, int32.
    static thread_local ThreadScratch tls_zp;
    float* const zpf = tls_zp.Get((n_end - n_begin) * kb);
    const ZeroPointRows zps(w, n_begin);
    for (int64_t r = 0; r < n_end - n_begin && mode != kZpDefault; ++r) {
      if (int_zp) {
        zps.FillInt(r, 0, kb, reinterpret_cast<int32_t*>(zpf + r * kb));
      } else {
        DecodeZeroPoints(df, zps, r, kb, zpf + r * kb);
      }
    }
    int64_t n = n_begin;
    for (int64_t i = 0; i < p.m; ++i) {
      const float* a = ap + i * k_pad;
      float out[4];
      for (n = n_begin; n + 4 <= n_end; n += 4) {
        dot4(a, w, n, zpf + (n - n_begin) * kb, out);
        for (int r = 0; r < 4; ++r) finish(i, n + r, out[r]);
      }
      for (; n < n_end; ++n) {
        dot1(a, w, n, zpf + (n - n_begin) * kb, out);
        finish(i, n, out[0]);
      }
    }
  });
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
    const std::shared_ptr<const PackedBF32> packed_a =
        PackedBF32::Pack(true, k_pad, p.m, ap, k_pad);
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
        GemmPackedBF32(false, rows, 1.0f, panel, k_pad, *packed_a, 0.0f, ct, p.m, SerialParallel());
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
    RunGemv<kBits>(df, p, ap, k_pad, parallel, finish);
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
void Call(bool gemm, bool via_f32_gemm, int64_t m, const float* a, int64_t lda,
          const NBitsWeights& w, const float* bias, float* y, int64_t ldy,
          const Parallel& parallel) {
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
