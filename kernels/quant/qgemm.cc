// Integer GEMM (kernels/quant/qgemm.h): B packing into k-quad interleaved panels, the
// register-tiled micro-kernels (VNNI vpdpbusd on AVX3_DL, int16 pairwise multiply-add elsewhere),
// the blocked driver with the zero-point correction epilogue, and the 8-bit im2row for ConvInteger.
//
// Micro-kernel: an MR x 32 tile of C (one 32-column panel of packed B) accumulated in int32
// registers over a block of k-quads. Per quad and row, 4 consecutive a' bytes are broadcast to
// every 32-bit lane and multiplied with the quad of each column (the panel stores
// [quad][32 columns][4 k], so a 512-bit load holds 16 columns x 4 k). With VNNI, two adjacent
// panels are usually run together as a 6 x 64 tile (fewer loads per vpdpbusd), and on the last
// K block a tile of full panels applies the zero-point correction in registers and stores
// straight to C; partial panels (and the portable kernels) go through an int32 accumulator
// block and a scalar epilogue.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/qgemm.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/conv/conv_geometry_internal.h"  // ConvGeometry3: the im2row loops in 3-D
#include "kernels/memory/short_copy-inl.h"  // CopyShort / FillShort: short copies as vector moves
#include "kernels/quant/dpbusd512-inl.h"    // Dpbusd512: the tiles' dot products
#include "kernels/quant/qgemm.h"
#include "kernels/quant/quantize.h"  // the requantization of the columns the tiles leave in int32
#include "kernels/quant/round_narrow512-inl.h"  // RoundNarrow512: the tiles' fused requantization

#ifndef SIMPLECPP_KERNELS_QGEMM_SHARED_
#define SIMPLECPP_KERNELS_QGEMM_SHARED_
namespace simplecpp::kernels::qgemm_detail {
// Task and cache blocking (problem-size constants, equal on every target: the task split never
// depends on the thread count or the target).
constexpr int64_t kNR = PackedQB::kNR;  // columns per panel / micro-tile
constexpr int64_t kMB = 64;             // rows of A per task (normalized once per task)
constexpr int64_t kNB = 4 * kNR;        // columns per task (4 panels)
constexpr int64_t kKcQuads = 128;       // K block (512 k): a panel pair block (32 KiB) stays in L1
inline uint32_t U(int32_t v) { return static_cast<uint32_t>(v); }

// The zero-point correction of one full 32-column panel, applied by a tile in registers on the
// last K block and stored straight to C (instead of through the accumulator block):
//   c[i*ldc + j] = acc - zb[j]*rs[i] - za[i]*ct[j]   (uint32, modulo 2^32)
// With rq (the tile's share of QGemmRequant: bias, multipliers and bytes from the tile's first
// row or column on), the corrected sums are requantized in registers and stored as bytes
// instead (c is then unused).
// Where every row has the same za' and every column the same zb' (all convolutions), the two
// products are precomputed per block instead: c = acc - row_term[i] - col_term[j], one
// subtraction each (and with a per-row requantization the row's term joins its bias).
struct TileEpilogue {
  const uint32_t* zb;  // [32] zb' per column
  const uint32_t* ct;  // [32] colsum(b') - K*zb' per column
  const uint32_t* rs;  // [MR] rowsum(a') per row
  const uint32_t* za;  // [MR] za' per row
  int32_t* c;          // row 0, column 0 of the tile in C
  int64_t ldc;
  const QGemmRequant* rq;
  const uint32_t* row_term;  // [MR] zb' * rowsum(a'), or nullptr: the general form
  const uint32_t* col_term;  // [32] za' * ct (with row_term)
};
// A tile's QGemmRequant for the tile `cols` columns to its right.
inline QGemmRequant ShiftColumns(QGemmRequant q, int64_t cols) {
  if (!q.per_row) {
    if (q.bias) q.bias += cols;
    q.mult += cols * q.mult_step;
  }
  q.out = static_cast<uint8_t*>(q.out) + cols;
  return q;
}
}  // namespace simplecpp::kernels::qgemm_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using namespace qgemm_detail;  // NOLINT

using D16 = hn::ScalableTag<int16_t>;
using D32 = hn::Repartition<int32_t, D16>;

// Portable kernel geometry: one int16 vector holds kColsPerVec columns x 4 k (a quad widened
// from bytes); a pass covers kVecsPerPass such vectors per row.
constexpr int kLanes16 = HWY_MAX_BYTES / 2;
constexpr int kColsPerVec = kLanes16 / 4;
// 128-bit without VEX (SSE4): pmaddwd overwrites an operand, so sharing a B vector between rows
// costs a register copy per row; there one row with 8 vectors per pass is faster. WASM's engines
// emit three-operand (VEX) code on x86, so there B vectors are shared by rows like on AVX2.
constexpr bool kShareB = HWY_MAX_BYTES >= 32 || HWY_TARGET == HWY_WASM;
constexpr int kVecsPerPass = kShareB ? 4 : 8;
constexpr int kColsPerPass = kColsPerVec * kVecsPerPass;  // 16 (128-bit, AVX2), 32 (AVX-512)
constexpr int kPasses = static_cast<int>(kNR) / kColsPerPass;
static_assert(kNR % kColsPerPass == 0, "panel width must be a multiple of a pass");
static_assert(kVecsPerPass % 2 == 0, "the tile epilogue takes vectors in pairs");
// Rows per tile: MR x kVecsPerPass accumulators + B vectors + 1 A vector within the registers.
// WASM: 2 rows (its 16 registers hold two rows of accumulators with the B vectors; the row
// counts compared under node are in bench/README.md).
constexpr int kMRPortable =
    HWY_MAX_BYTES >= 64 ? 6 : (HWY_MAX_BYTES >= 32 ? 3 : (HWY_TARGET == HWY_WASM ? 2 : 1));

// acc[i*ldacc + j] (+)= sum_{q < quads} sum_{r < 4} a[i*lda + 4q + r] * b[(q*32 + j)*4 + r]
// for i < MR, j < 32: a is int16 a' rows, b a packed panel (already offset to the first quad).
template <int MR>
HWY_NOINLINE void TilePortable(const int16_t* HWY_RESTRICT a, int64_t lda,
                               const int8_t* HWY_RESTRICT b, int64_t quads,
                               int32_t* HWY_RESTRICT acc, int64_t ldacc, bool first) {
  const D16 d16;
  const D32 d32;
  const hn::Rebind<int8_t, D16> d8;
  const hn::Repartition<uint64_t, D16> d64;
  (void)d64;
  for (int pass = 0; pass < kPasses; ++pass) {
    // With K = 0 (quads == 0) the panel pointer may be null: no offset may be applied to it.
    const int8_t* bp = quads > 0 ? b + pass * kColsPerPass * 4 : b;
    hn::Vec<D32> s0[MR][kVecsPerPass], s1[MR][kVecsPerPass];
    for (int i = 0; i < MR; ++i) {
      for (int v = 0; v < kVecsPerPass; ++v) {
        s0[i][v] = hn::Zero(d32);
        s1[i][v] = hn::Zero(d32);
      }
    }
    for (int64_t q = 0; q < quads; ++q) {
      hn::Vec<D16> vb[kVecsPerPass];
      for (int v = 0; v < kVecsPerPass; ++v) {
        vb[v] = hn::PromoteTo(d16, hn::LoadU(d8, bp + q * kNR * 4 + v * kColsPerVec * 4));
      }
      for (int i = 0; i < MR; ++i) {
        // a'[4q..4q+3] as int16, broadcast to every 64-bit lane.
#if HWY_TARGET == HWY_SSE4
        // movddup: a load-broadcast without a shuffle (SSE4 has no vpbroadcastq).
        const hn::Vec<D16> va{_mm_castpd_si128(
            _mm_loaddup_pd(reinterpret_cast<const double*>(a + i * lda + q * 4)))};
#else
        uint64_t quad;
        std::memcpy(&quad, a + i * lda + q * 4, sizeof(quad));
        const hn::Vec<D16> va = hn::BitCast(d16, hn::Set(d64, quad));
#endif
        for (int v = 0; v < kVecsPerPass; ++v) {
          s0[i][v] = hn::ReorderWidenMulAccumulate(d32, va, vb[v], s0[i][v], s1[i][v]);
        }
      }
    }
    // Lane 2c / 2c+1 of a vector hold the sums of k%4 in {0,1} / {2,3} of its column c: two
    // vectors' even lanes plus their odd lanes are the sums of their columns, in order (int32
    // lanes wrap, as the modulo-2^32 sums must).
    const size_t n32 = hn::Lanes(d32);
    for (int i = 0; i < MR; ++i) {
      int32_t* out = acc + i * ldacc + pass * kColsPerPass;
      for (int v = 0; v < kVecsPerPass; v += 2) {
        const auto lo = hn::RearrangeToOddPlusEven(s0[i][v], s1[i][v]);
        const auto hi = hn::RearrangeToOddPlusEven(s0[i][v + 1], s1[i][v + 1]);
        auto sum = hn::Add(hn::ConcatEven(d32, hi, lo), hn::ConcatOdd(d32, hi, lo));
        int32_t* o = out + (v / 2) * n32;
        if (!first) sum = hn::Add(sum, hn::LoadU(d32, o));
        hn::StoreU(sum, d32, o);
      }
    }
  }
}

#if HWY_TARGET == HWY_AVX3_DL
// The VNNI functions' target: the target's own features named again with VNNI. clang's target
// attribute replaces the features Highway's pragma gives a function instead of adding to them,
// which would drop AVX-512 BW and VL (the byte unpacks, the 256-bit masked loads).
#undef SIMPLECPP_QGEMM_VNNI
#define SIMPLECPP_QGEMM_VNNI __attribute__((target(HWY_TARGET_STR ",avx512vnni")))

// acc += 4-way u8 x s8 dot products per 32-bit lane (Dpbusd512: without the register copies
// GCC puts around the intrinsic).
HWY_INLINE SIMPLECPP_QGEMM_VNNI __m512i Dpbusd(__m512i acc, __m512i a_u8, __m512i b_s8) {
  return Dpbusd512(acc, a_u8, b_s8);
}

// Row i's corrected sums x0 (tile columns col..col+15) and x1 (col+16..col+31), requantized into
// bytes at q.out + i * q.ldo + col: RequantizeF32Vec's AVX-512 steps (bias added in int32
// lanes, float32 product, RoundNarrow512), so the same bytes; a lane too close to a
// half-integer is noted in `undecided`, whose Decide (after the tile's stores) gives it the
// scalar reference's value, as there. kPartial (a partial panel): the first `width` columns
// only, per-column parameters read only there.
template <typename T, bool kPartial, int kGroups>
HWY_INLINE SIMPLECPP_QGEMM_VNNI void RequantStore32(const QGemmRequant& q,
                                                    const RoundNarrow512& narrow,
                                                    UndecidedLanes<kGroups>& undecided, int i,
                                                    int col, __m512i x0, __m512i x1,
                                                    int width = 32) {
  const __mmask16 k0 = kPartial ? static_cast<__mmask16>((1u << std::min(width, 16)) - 1) : 0xFFFF;
  const __mmask16 k1 =
      kPartial ? static_cast<__mmask16>((1u << std::clamp(width - 16, 0, 16)) - 1) : 0xFFFF;
  __m512 m0, m1;
  if (q.per_row) {
    if (q.bias) {
      const __m512i b = _mm512_set1_epi32(q.bias[i]);
      x0 = _mm512_add_epi32(x0, b);
      x1 = _mm512_add_epi32(x1, b);
    }
    m0 = m1 = _mm512_set1_ps(q.mult[i * q.mult_step]);
  } else {
    if (q.bias) {
      x0 = _mm512_add_epi32(x0, _mm512_maskz_loadu_epi32(k0, q.bias + col));
      x1 = _mm512_add_epi32(x1, _mm512_maskz_loadu_epi32(k1, q.bias + col + 16));
    }
    if (q.mult_step) {
      m0 = _mm512_maskz_loadu_ps(k0, q.mult + col);
      m1 = _mm512_maskz_loadu_ps(k1, q.mult + col + 16);
    } else {
      m0 = m1 = _mm512_set1_ps(q.mult[0]);
    }
  }
  const __m512 f0 = _mm512_mul_ps(_mm512_cvtepi32_ps(x0), m0);
  const __m512 f1 = _mm512_mul_ps(_mm512_cvtepi32_ps(x1), m1);
  T* out = reinterpret_cast<T*>(static_cast<uint8_t*>(q.out) + i * q.ldo + col);
  if (kPartial) {
    narrow.StoreFirst(f0, f1, width, out);
  } else {
    narrow.Store(f0, f1, out);
  }
  if (q.per_row) {
    undecided.Note(narrow, f0, f1, x0, x1, out, width, q.mult + i * q.mult_step, 0);
  } else {
    undecided.Note(narrow, f0, f1, x0, x1, out, width, q.mult + col * q.mult_step, q.mult_step);
  }
}

// RequantStore32 for q's output type.
template <bool kPartial, int kGroups>
HWY_INLINE SIMPLECPP_QGEMM_VNNI void RequantRow32(const QGemmRequant& q,
                                                  const RoundNarrow512& narrow,
                                                  UndecidedLanes<kGroups>& undecided, int i,
                                                  int col, __m512i x0, __m512i x1, int width = 32) {
  if (q.out_signed) {
    RequantStore32<int8_t, kPartial>(q, narrow, undecided, i, col, x0, x1, width);
  } else {
    RequantStore32<uint8_t, kPartial>(q, narrow, undecided, i, col, x0, x1, width);
  }
}

// The corrected sums of a tile row, acc - zb' * rs - za' * ct, for 16 columns.
HWY_INLINE SIMPLECPP_QGEMM_VNNI __m512i Corrected(__m512i acc, __m512i zb, __m512i ct, __m512i rs,
                                                  __m512i za) {
  // mullo keeps the low 32 bits of the product: the same wrapping arithmetic as the scalar
  // epilogue.
  return _mm512_sub_epi32(_mm512_sub_epi32(acc, _mm512_mullo_epi32(zb, rs)),
                          _mm512_mullo_epi32(za, ct));
}

// The sums of R rows of a 32-column tile (one panel), one row per level as named members (see
// PairRowSums below: an array of vectors is kept in memory where a loop indexes it).
template <int R>
struct PanelRowSums {
  __m512i v0, v1;  // columns 0-15, 16-31
  PanelRowSums<R - 1> rest;

  // Zero (first) or the accumulator block's rows from acc on.
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Start(bool first, const int32_t* acc, int64_t ldacc) {
    v0 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc);
    v1 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc + 16);
    rest.Start(first, acc + ldacc, ldacc);
  }
  // One k-quad: the 4 a' bytes at a (this row) broadcast against the panel's vectors b0, b1.
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Quad(const uint8_t* HWY_RESTRICT a, int64_t lda, __m512i b0,
                                            __m512i b1) {
    int32_t quad;
    std::memcpy(&quad, a, sizeof(quad));
    const __m512i va = _mm512_set1_epi32(quad);
    v0 = Dpbusd(v0, va, b0);
    v1 = Dpbusd(v1, va, b1);
    rest.Quad(a + lda, lda, b0, b1);
  }
  // Quad q of a tile: a' bytes from a + 4q, the panel's vectors of quad q of b.
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void QuadAt(const uint8_t* HWY_RESTRICT a, int64_t lda,
                                              const int8_t* HWY_RESTRICT b, int64_t q) {
    Quad(a + q * 4, lda, _mm512_loadu_si512(b + q * kNR * 4),
         _mm512_loadu_si512(b + q * kNR * 4 + 64));
  }
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Add(const PanelRowSums& o) {
    v0 = _mm512_add_epi32(v0, o.v0);
    v1 = _mm512_add_epi32(v1, o.v1);
    rest.Add(o.rest);
  }
  // Row by row into out[R][2].
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Spill(__m512i* out) const {
    _mm512_store_si512(out, v0);
    _mm512_store_si512(out + 1, v1);
    rest.Spill(out + 2);
  }
};
template <>
struct PanelRowSums<0> {
  HWY_INLINE void Start(bool, const int32_t*, int64_t) {}
  HWY_INLINE void Quad(const uint8_t*, int64_t, __m512i, __m512i) {}
  HWY_INLINE void Add(const PanelRowSums&) {}
  HWY_INLINE void Spill(__m512i*) const {}
};

// Same contract with a as uint8 a' rows: vpdpbusd adds the 4 products u8 x s8 of each 32-bit
// lane to the accumulator without saturation (exact modulo 2^32).
template <int MR>
HWY_NOINLINE SIMPLECPP_QGEMM_VNNI void TileVnni(
    const uint8_t* HWY_RESTRICT a, int64_t lda, const int8_t* HWY_RESTRICT b, int64_t quads,
    int32_t* HWY_RESTRICT acc, int64_t ldacc, bool first, const TileEpilogue* epi) {
  // vpdpbusd accumulates in place, so each accumulator is a dependency chain of its latency
  // (~4-5 cycles); tiles of 1-2 rows rotate kS accumulator sets over consecutive quads so that
  // at least 4 chains are in flight, and add the sets at the end.
  constexpr int kS = MR == 1 ? 4 : (MR == 2 ? 2 : 1);
  PanelRowSums<MR> s0, s1, s2, s3;  // the sets (s1 from kS = 2, s2 and s3 from kS = 4)
  s0.Start(first, acc, ldacc);
  if (kS > 1) s1.Start(true, acc, ldacc);
  if (kS > 2) {
    s2.Start(true, acc, ldacc);
    s3.Start(true, acc, ldacc);
  }
  // (No lambdas here: clang gives a lambda the pragma's target features only, without the VNNI
  // this function adds.)
  int64_t q = 0;
  for (; q + kS <= quads; q += kS) {
    s0.QuadAt(a, lda, b, q);
    if (kS > 1) s1.QuadAt(a, lda, b, q + 1);
    if (kS > 2) {
      s2.QuadAt(a, lda, b, q + 2);
      s3.QuadAt(a, lda, b, q + 3);
    }
  }
  for (; q < quads; ++q) s0.QuadAt(a, lda, b, q);
  if (kS > 1) s0.Add(s1);
  if (kS > 2) {
    s0.Add(s2);
    s0.Add(s3);
  }
  // The row loops below are not unrolled: they read the sums from this copy.
  alignas(64) __m512i c[MR][2];
  s0.Spill(&c[0][0]);
  if (epi != nullptr) {
    const __m512i zb0 = _mm512_loadu_si512(epi->zb), zb1 = _mm512_loadu_si512(epi->zb + 16);
    const __m512i ct0 = _mm512_loadu_si512(epi->ct), ct1 = _mm512_loadu_si512(epi->ct + 16);
    if (epi->rq != nullptr) {
      // A local copy of the parameters (as in TileVnniPair).
      const QGemmRequant q = *epi->rq;
      const RoundNarrow512 narrow(q.zp, q.lo, q.hi);
      UndecidedLanes<MR> undecided(q.zp, q.lo, q.hi);
      for (int i = 0; i < MR; ++i) {
        const __m512i rs = _mm512_set1_epi32(static_cast<int32_t>(epi->rs[i]));
        const __m512i za = _mm512_set1_epi32(static_cast<int32_t>(epi->za[i]));
        RequantRow32<false>(q, narrow, undecided, i, 0, Corrected(c[i][0], zb0, ct0, rs, za),
                            Corrected(c[i][1], zb1, ct1, rs, za));
      }
      undecided.Decide();
      return;
    }
    for (int i = 0; i < MR; ++i) {
      const __m512i rs = _mm512_set1_epi32(static_cast<int32_t>(epi->rs[i]));
      const __m512i za = _mm512_set1_epi32(static_cast<int32_t>(epi->za[i]));
      _mm512_storeu_si512(epi->c + i * epi->ldc, Corrected(c[i][0], zb0, ct0, rs, za));
      _mm512_storeu_si512(epi->c + i * epi->ldc + 16, Corrected(c[i][1], zb1, ct1, rs, za));
    }
    return;
  }
  for (int i = 0; i < MR; ++i) {
    _mm512_storeu_si512(acc + i * ldacc, c[i][0]);
    _mm512_storeu_si512(acc + i * ldacc + 16, c[i][1]);
  }
}

// acc += Dpbusd on 256-bit vectors, EVEX-encoded on purpose: Highway 1.0.3's AVX3_DL target
// string enables AVX-VNNI, whose VEX form compilers pick for 256-bit operands in ymm0-15, and
// CPUs with AVX512-VNNI but without AVX-VNNI (Zen 4) fault on that form.
HWY_INLINE SIMPLECPP_QGEMM_VNNI __m256i Dpbusd256(__m256i acc, __m256i a_u8, __m256i b_s8) {
  __asm__("%{evex%} vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a_u8), "v"(b_s8));
  return acc;
}

// The sums of R rows of a narrow tile (a panel's first 16 or, kHalf, 24 columns), one row per
// level as named members (see PanelRowSums).
template <int R, bool kHalf>
struct NarrowRowSums {
  __m512i v0;  // columns 0-15
  __m256i v1;  // columns 16-23 (kHalf)
  NarrowRowSums<R - 1, kHalf> rest;

  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Start(bool first, const int32_t* acc, int64_t ldacc) {
    v0 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc);
    v1 = first || !kHalf ? _mm256_setzero_si256()
                         : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + 16));
    rest.Start(first, acc + ldacc, ldacc);
  }
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Quad(const uint8_t* HWY_RESTRICT a, int64_t lda, __m512i b0,
                                            __m256i b1) {
    int32_t quad;
    std::memcpy(&quad, a, sizeof(quad));
    const __m512i va = _mm512_set1_epi32(quad);
    v0 = Dpbusd(v0, va, b0);
    if (kHalf) v1 = Dpbusd256(v1, _mm512_castsi512_si256(va), b1);
    rest.Quad(a + lda, lda, b0, b1);
  }
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Spill(__m512i* out0, __m256i* out1) const {
    _mm512_store_si512(out0, v0);
    _mm256_store_si256(out1, v1);
    rest.Spill(out0 + 1, out1 + 1);
  }
};
template <bool kHalf>
struct NarrowRowSums<0, kHalf> {
  HWY_INLINE void Start(bool, const int32_t*, int64_t) {}
  HWY_INLINE void Quad(const uint8_t*, int64_t, __m512i, __m256i) {}
  HWY_INLINE void Spill(__m512i*, __m256i*) const {}
};

// The MR x 32 tile of a panel whose last columns are padding (N not a multiple of 32): only
// the first kW = 16 or 24 columns are multiplied, the 24th through a 256-bit vpdpbusd, which
// costs half a 512-bit one where the core splits 512-bit operations (Zen 4). Same contract as
// TileVnni; acc's columns from kW on are left as they are. With the epilogue only the panel's
// first `width` (<= kW) columns exist in C: the stores are masked to them.
template <int MR, int kW>
HWY_NOINLINE SIMPLECPP_QGEMM_VNNI void TileVnniNarrow(
    const uint8_t* HWY_RESTRICT a, int64_t lda, const int8_t* HWY_RESTRICT b, int64_t quads,
    int32_t* HWY_RESTRICT acc, int64_t ldacc, bool first, const TileEpilogue* epi,
    int64_t width) {
  static_assert(kW == 16 || kW == 24, "a panel's first 16 or 24 columns");
  constexpr bool kHalf = kW == 24;
  NarrowRowSums<MR, kHalf> sums;
  sums.Start(first, acc, ldacc);
  for (int64_t q = 0; q < quads; ++q) {
    const __m512i b0 = _mm512_loadu_si512(b + q * kNR * 4);
    const __m256i b1 =
        kHalf ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * kNR * 4 + 64))
              : _mm256_setzero_si256();
    sums.Quad(a + q * 4, lda, b0, b1);
  }
  // The row loops below are not unrolled: they read the sums from this copy.
  alignas(64) __m512i c0[MR];
  alignas(32) __m256i c1[MR];
  sums.Spill(c0, c1);
  if (epi != nullptr) {
    // Columns [0, 16) in c0, [16, 24) in c1; the masks keep loads and stores within width.
    const __mmask16 m0 = static_cast<__mmask16>((1u << std::min<int64_t>(width, 16)) - 1);
    const __mmask8 m1 = static_cast<__mmask8>((1u << std::clamp<int64_t>(width - 16, 0, 8)) - 1);
    const __m512i zb0 = _mm512_maskz_loadu_epi32(m0, epi->zb);
    const __m512i ct0 = _mm512_maskz_loadu_epi32(m0, epi->ct);
    const __m256i zb1 = _mm256_maskz_loadu_epi32(m1, epi->zb + 16);
    const __m256i ct1 = _mm256_maskz_loadu_epi32(m1, epi->ct + 16);
    // A local copy of the parameters (as in TileVnniPair).
    const QGemmRequant local = epi->rq ? *epi->rq : QGemmRequant();
    const QGemmRequant* q = epi->rq ? &local : nullptr;
    const RoundNarrow512 narrow(local.zp, local.lo, local.hi);
    UndecidedLanes<MR> undecided(local.zp, local.lo, local.hi);
    for (int i = 0; i < MR; ++i) {
      const __m512i rs = _mm512_set1_epi32(static_cast<int32_t>(epi->rs[i]));
      const __m512i za = _mm512_set1_epi32(static_cast<int32_t>(epi->za[i]));
      const __m512i r0 = Corrected(c0[i], zb0, ct0, rs, za);
      __m256i r1 = _mm256_setzero_si256();
      if (kHalf) {
        r1 = _mm256_sub_epi32(c1[i], _mm256_mullo_epi32(zb1, _mm512_castsi512_si256(rs)));
        r1 = _mm256_sub_epi32(r1, _mm256_mullo_epi32(_mm512_castsi512_si256(za), ct1));
      }
      if (q != nullptr) {
        RequantRow32<true>(*q, narrow, undecided, i, 0, r0, _mm512_zextsi256_si512(r1),
                           static_cast<int>(width));
        continue;
      }
      _mm512_mask_storeu_epi32(epi->c + i * epi->ldc, m0, r0);
      if (kHalf) _mm256_mask_storeu_epi32(epi->c + i * epi->ldc + 16, m1, r1);
    }
    undecided.Decide();
    return;
  }
  for (int i = 0; i < MR; ++i) {
    _mm512_storeu_si512(acc + i * ldacc, c0[i]);
    if (kHalf) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i * ldacc + 16), c1[i]);
  }
}

// The sums of R rows of a 64-column tile (two panels), one row per level as named members:
// GCC keeps an array of vectors in memory wherever a loop indexes it by a variable (zeroing
// and reloading it through the stack around the quad loop), while members reached through
// constant paths stay in registers.
template <int R>
struct PairRowSums {
  __m512i v0, v1, v2, v3;
  PairRowSums<R - 1> rest;

  // Zero (first) or the accumulator block's rows from acc on.
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Start(bool first, const int32_t* acc, int64_t ldacc) {
    v0 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc);
    v1 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc + 16);
    v2 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc + 32);
    v3 = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc + 48);
    rest.Start(first, acc + ldacc, ldacc);
  }
  // One k-quad: the 4 a' bytes at a (this row) broadcast against the panels' 4 vectors q.
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Quad(const uint8_t* HWY_RESTRICT a, int64_t lda,
                                            const __m512i (&q)[4]) {
    int32_t quad;
    std::memcpy(&quad, a, sizeof(quad));
    const __m512i va = _mm512_set1_epi32(quad);
    v0 = Dpbusd(v0, va, q[0]);
    v1 = Dpbusd(v1, va, q[1]);
    v2 = Dpbusd(v2, va, q[2]);
    v3 = Dpbusd(v3, va, q[3]);
    rest.Quad(a + lda, lda, q);
  }
  // Row by row into out[R][4].
  HWY_INLINE SIMPLECPP_QGEMM_VNNI void Spill(__m512i* out) const {
    _mm512_store_si512(out, v0);
    _mm512_store_si512(out + 1, v1);
    _mm512_store_si512(out + 2, v2);
    _mm512_store_si512(out + 3, v3);
    rest.Spill(out + 4);
  }
};
template <>
struct PairRowSums<0> {
  HWY_INLINE void Start(bool, const int32_t*, int64_t) {}
  HWY_INLINE void Quad(const uint8_t*, int64_t, const __m512i (&)[4]) {}
  HWY_INLINE void Spill(__m512i*) const {}
};

// An MR x 64 tile over two adjacent panels (b0: columns 0-31, b1: columns 32-63), same contract
// as TileVnni with acc / epi covering 64 columns. Per quad: 4 B vectors and MR broadcasts feed
// 4*MR vpdpbusd (24 for MR = 6: fewer loads per multiply than the 8 x 32 tile's 10 per 16).
template <int MR>
HWY_NOINLINE SIMPLECPP_QGEMM_VNNI void TileVnniPair(
    const uint8_t* HWY_RESTRICT a, int64_t lda, const int8_t* HWY_RESTRICT b0,
    const int8_t* HWY_RESTRICT b1, int64_t quads, int32_t* HWY_RESTRICT acc, int64_t ldacc,
    bool first, const TileEpilogue* epi) {
  PairRowSums<MR> sums;
  sums.Start(first, acc, ldacc);
  for (int64_t q = 0; q < quads; ++q) {
    const __m512i panels[4] = {
        _mm512_loadu_si512(b0 + q * kNR * 4), _mm512_loadu_si512(b0 + q * kNR * 4 + 64),
        _mm512_loadu_si512(b1 + q * kNR * 4), _mm512_loadu_si512(b1 + q * kNR * 4 + 64)};
    sums.Quad(a + q * 4, lda, panels);
  }
  // The row loops below are not unrolled: they read the sums from this copy.
  alignas(64) __m512i c[MR][4];
  sums.Spill(&c[0][0]);
  if (epi != nullptr && epi->rq != nullptr) {
    // Each row's 64 corrected sums requantized to 64 bytes. A local copy of the parameters:
    // the byte stores may alias anything, so fields read through a pointer would be reloaded
    // after each one.
    const QGemmRequant q = *epi->rq;
    const RoundNarrow512 narrow(q.zp, q.lo, q.hi);
    UndecidedLanes<2 * MR> undecided(q.zp, q.lo, q.hi);
    if (epi->row_term != nullptr) {
      // The folded corrections: per row one broadcast (its term, and its bias where the
      // requantization is per row: RequantRow32 then adds none), per column one vector.
      QGemmRequant folded = q;
      if (q.per_row) folded.bias = nullptr;
      __m512i col_term[4];
      for (int v = 0; v < 4; ++v) col_term[v] = _mm512_loadu_si512(epi->col_term + 16 * v);
      for (int i = 0; i < MR; ++i) {
        const uint32_t bias = q.per_row && q.bias ? U(q.bias[i]) : 0u;
        const __m512i row_add = _mm512_set1_epi32(static_cast<int32_t>(bias - epi->row_term[i]));
        __m512i r[4];
        for (int v = 0; v < 4; ++v) {
          r[v] = _mm512_add_epi32(_mm512_sub_epi32(c[i][v], col_term[v]), row_add);
        }
        RequantRow32<false>(folded, narrow, undecided, i, 0, r[0], r[1]);
        RequantRow32<false>(folded, narrow, undecided, i, 32, r[2], r[3]);
      }
      undecided.Decide();
      return;
    }
    for (int i = 0; i < MR; ++i) {
      const __m512i rs = _mm512_set1_epi32(static_cast<int32_t>(epi->rs[i]));
      const __m512i za = _mm512_set1_epi32(static_cast<int32_t>(epi->za[i]));
      __m512i r[4];
      for (int v = 0; v < 4; ++v) {
        r[v] = Corrected(c[i][v], _mm512_loadu_si512(epi->zb + 16 * v),
                         _mm512_loadu_si512(epi->ct + 16 * v), rs, za);
      }
      RequantRow32<false>(q, narrow, undecided, i, 0, r[0], r[1]);
      RequantRow32<false>(q, narrow, undecided, i, 32, r[2], r[3]);
    }
    undecided.Decide();
    return;
  }
  if (epi != nullptr) {
    for (int v = 0; v < 4; ++v) {
      const __m512i zb = _mm512_loadu_si512(epi->zb + 16 * v);
      const __m512i ct = _mm512_loadu_si512(epi->ct + 16 * v);
      for (int i = 0; i < MR; ++i) {
        const __m512i rs = _mm512_set1_epi32(static_cast<int32_t>(epi->rs[i]));
        const __m512i za = _mm512_set1_epi32(static_cast<int32_t>(epi->za[i]));
        _mm512_storeu_si512(epi->c + i * epi->ldc + 16 * v, Corrected(c[i][v], zb, ct, rs, za));
      }
    }
    return;
  }
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < 4; ++v) _mm512_storeu_si512(acc + i * ldacc + 16 * v, c[i][v]);
  }
}
constexpr int kMRVnniPair = 6;  // 24 accumulators + 4 B vectors + 1 broadcast of 32 zmm

inline bool HasVnni() {
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
}
constexpr int kMRVnni = 8;  // 16 accumulators + 2 B vectors + 1 broadcast of 32 zmm
#endif

// One row tile of `rows` <= MR rows.
template <typename TA>
struct Tiler;

template <>
struct Tiler<int16_t> {
  static constexpr int kMR = kMRPortable;
  static constexpr bool kDirect = false;  // always through the accumulator block
  static constexpr int kMRPair = 0;        // no two-panel tile
  static void RunPair(int, const int16_t*, int64_t, const int8_t*, const int8_t*, int64_t,
                      int32_t*, int64_t, bool, const TileEpilogue*) {}
  // A partial panel's tile (width <= 24 of its 32 columns exist): the whole tile here, always
  // through acc.
  static constexpr bool kNarrowDirect = false;
  static void RunNarrow(int rows, int64_t /*width*/, const int16_t* a, int64_t lda,
                        const int8_t* b, int64_t quads, int32_t* acc, int64_t ldacc, bool first,
                        const TileEpilogue*) {
    Run(rows, a, lda, b, quads, acc, ldacc, first, nullptr);
  }
  static void Run(int rows, const int16_t* a, int64_t lda, const int8_t* b, int64_t quads,
                  int32_t* acc, int64_t ldacc, bool first, const TileEpilogue*) {
    switch (rows) {
#if HWY_MAX_BYTES >= 32
      case 1: return TilePortable<1>(a, lda, b, quads, acc, ldacc, first);
      case 2: return TilePortable<2>(a, lda, b, quads, acc, ldacc, first);
#endif
#if HWY_MAX_BYTES >= 64
      case 3: return TilePortable<3>(a, lda, b, quads, acc, ldacc, first);
      case 4: return TilePortable<4>(a, lda, b, quads, acc, ldacc, first);
      case 5: return TilePortable<5>(a, lda, b, quads, acc, ldacc, first);
#endif
      default: return TilePortable<kMR>(a, lda, b, quads, acc, ldacc, first);
    }
  }
};

#if HWY_TARGET == HWY_AVX3_DL
template <>
struct Tiler<uint8_t> {
  static constexpr int kMR = kMRVnni;
  static constexpr bool kDirect = true;  // full panels store to C with the correction
  static constexpr int kMRPair = kMRVnniPair;
  // rows in [3, kMRPair] (fewer rows leave too few accumulator chains: use Run per panel).
  static void RunPair(int rows, const uint8_t* a, int64_t lda, const int8_t* b0, const int8_t* b1,
                      int64_t quads, int32_t* acc, int64_t ldacc, bool first,
                      const TileEpilogue* epi) {
    switch (rows) {
      case 3: return TileVnniPair<3>(a, lda, b0, b1, quads, acc, ldacc, first, epi);
      case 4: return TileVnniPair<4>(a, lda, b0, b1, quads, acc, ldacc, first, epi);
      case 5: return TileVnniPair<5>(a, lda, b0, b1, quads, acc, ldacc, first, epi);
      default: return TileVnniPair<6>(a, lda, b0, b1, quads, acc, ldacc, first, epi);
    }
  }
  // A partial panel's tile (width <= 24 of its 32 columns exist); with epi it finishes the
  // panel's `width` columns of C itself.
  static constexpr bool kNarrowDirect = true;
  template <int kW>
  static void RunNarrowW(int rows, const uint8_t* a, int64_t lda, const int8_t* b, int64_t quads,
                         int32_t* acc, int64_t ldacc, bool first, const TileEpilogue* epi,
                         int64_t width) {
    switch (rows) {
      case 1: return TileVnniNarrow<1, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      case 2: return TileVnniNarrow<2, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      case 3: return TileVnniNarrow<3, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      case 4: return TileVnniNarrow<4, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      case 5: return TileVnniNarrow<5, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      case 6: return TileVnniNarrow<6, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      case 7: return TileVnniNarrow<7, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
      default: return TileVnniNarrow<8, kW>(a, lda, b, quads, acc, ldacc, first, epi, width);
    }
  }
  static void RunNarrow(int rows, int64_t width, const uint8_t* a, int64_t lda, const int8_t* b,
                        int64_t quads, int32_t* acc, int64_t ldacc, bool first,
                        const TileEpilogue* epi) {
    if (width <= 16) return RunNarrowW<16>(rows, a, lda, b, quads, acc, ldacc, first, epi, width);
    RunNarrowW<24>(rows, a, lda, b, quads, acc, ldacc, first, epi, width);
  }
  static void Run(int rows, const uint8_t* a, int64_t lda, const int8_t* b, int64_t quads,
                  int32_t* acc, int64_t ldacc, bool first, const TileEpilogue* epi) {
    switch (rows) {
      case 1: return TileVnni<1>(a, lda, b, quads, acc, ldacc, first, epi);
      case 2: return TileVnni<2>(a, lda, b, quads, acc, ldacc, first, epi);
      case 3: return TileVnni<3>(a, lda, b, quads, acc, ldacc, first, epi);
      case 4: return TileVnni<4>(a, lda, b, quads, acc, ldacc, first, epi);
      case 5: return TileVnni<5>(a, lda, b, quads, acc, ldacc, first, epi);
      case 6: return TileVnni<6>(a, lda, b, quads, acc, ldacc, first, epi);
      case 7: return TileVnni<7>(a, lda, b, quads, acc, ldacc, first, epi);
      default: return TileVnni<8>(a, lda, b, quads, acc, ldacc, first, epi);
    }
  }
};
#endif

// The first `rem` (< a vector) bytes at p, zeros in the other lanes, without reading past
// p + rem: a masked load on AVX-512 (masked-off bytes are not touched, and there is no
// store-forwarding stall from a just-written stack copy), else a copy into a zeroed vector.
template <class D8>
HWY_INLINE hn::Vec<D8> LoadTailBytes(D8 d8, const uint8_t* p, int64_t rem) {
#if HWY_TARGET <= HWY_AVX3
  return hn::MaskedLoad(hn::FirstN(d8, static_cast<size_t>(rem)), d8, p);
#else
  HWY_ALIGN uint8_t buf[hn::MaxLanes(d8)] = {};
  std::memcpy(buf, p, static_cast<size_t>(rem));
  return hn::Load(d8, buf);
#endif
}

// Normalizes rows of A to a' (TA: uint8 for VNNI, int16 otherwise), zero-padded to kp, and
// returns their row sums (wrapping uint32, exact modulo 2^32). Vectorized over k: one vector of
// bytes is flipped (int8 -> a + 128), stored (widened for int16) and summed with SumsOf8; the
// tail is loaded by LoadTailBytes and stored whole, so each row may write up to one
// vector past kp (the next row overwrites it; the buffer has kNormalizeSlack spare elements).
constexpr int64_t kNormalizeSlack = HWY_MAX_BYTES;
template <typename TA>
void NormalizeRows(const void* a, bool a_signed, int64_t lda, int64_t m0, int64_t rows, int64_t k,
                   int64_t kp, TA* HWY_RESTRICT wa, uint32_t* HWY_RESTRICT rowsum) {
  using DTA = hn::ScalableTag<TA>;
  const DTA dta;
  const hn::Rebind<uint8_t, DTA> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d8));
  const auto flip = hn::Set(d8, static_cast<uint8_t>(a_signed ? 0x80 : 0));
  auto put = [&](TA* dst, hn::Vec<decltype(d8)> v) {
    if constexpr (sizeof(TA) == 1) {
      hn::StoreU(hn::BitCast(dta, v), dta, dst);
    } else {
      hn::StoreU(hn::BitCast(dta, hn::PromoteTo(hn::Rebind<uint16_t, decltype(d8)>(), v)), dta,
                 dst);
    }
  };
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = static_cast<const uint8_t*>(a) + (m0 + r) * lda;
    TA* dst = wa + r * kp;
    auto sum = hn::Zero(d64);
    int64_t kk = 0;
    for (; kk + N <= k; kk += N) {
      const auto v = hn::Xor(hn::LoadU(d8, src + kk), flip);
      put(dst + kk, v);
      sum = hn::Add(sum, hn::SumsOf8(v));
    }
    if (kk < k) {
      const int64_t rem = k - kk;
      const auto valid = hn::FirstN(d8, static_cast<size_t>(rem));
      const auto v = hn::IfThenElseZero(valid, hn::Xor(LoadTailBytes(d8, src + kk, rem), flip));
      put(dst + kk, v);
      sum = hn::Add(sum, hn::SumsOf8(v));
    }
    for (int64_t j = k; j < kp; ++j) dst[j] = 0;
    rowsum[r] = static_cast<uint32_t>(hn::GetLane(hn::SumOfLanes(d64, sum)));
  }
}

// rowsum[r] = sum of row r's k bytes (uint8 A read in place), with SumsOf8 over whole vectors.
inline void RowSumsU8(const uint8_t* a, int64_t lda, int64_t rows, int64_t k,
                      uint32_t* HWY_RESTRICT rowsum) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d8));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = a + r * lda;
    auto sum = hn::Zero(d64);
    int64_t kk = 0;
    for (; kk + N <= k; kk += N) sum = hn::Add(sum, hn::SumsOf8(hn::LoadU(d8, src + kk)));
    if (kk < k) sum = hn::Add(sum, hn::SumsOf8(LoadTailBytes(d8, src + kk, k - kk)));
    rowsum[r] = static_cast<uint32_t>(hn::GetLane(hn::SumOfLanes(d64, sum)));
  }
}

// The A operand of QGemmBlocked as the caller passed it: int8 or uint8 rows lda apart, with zero
// points a_zp[a_zp_step * row].
struct QGemmA {
  const void* a;
  bool a_signed;
  int64_t lda;
  const int32_t* a_zp;
  int64_t a_zp_step;
};

// Whether the zero points zp[step * i] of i < count are all one value (none given: all 0).
inline bool AllEqual(const int32_t* zp, int64_t step, int64_t count) {
  if (zp == nullptr || step == 0) return true;
  for (int64_t i = 1; i < count; ++i) {
    if (zp[step * i] != zp[0]) return false;
  }
  return true;
}

// The row sums only enter through zb' * rowsum: true when every zb' is zero (int8 B with zero
// points 0, the symmetric weights quantizers write), so that they need not be computed.
inline bool AllShiftedZeroPointsZero(const int32_t* b_zp, int64_t b_zp_step, int64_t n,
                                     int32_t b_shift) {
  bool all_zb_zero = true;
  for (int64_t j = 0; j < n && all_zb_zero; ++j) {
    all_zb_zero = (b_zp ? b_zp[b_zp_step * j] : 0) + b_shift == 0;
    if (b_zp_step == 0) break;
  }
  return all_zb_zero;
}

// The A side of rows m0..m0+rows: rowsum[i] (row sums of a', zero when all_zb_zero makes them
// unused) and zav[i] (za'); unless A is read in place, wa gets the rows as a', padded to kp.
template <typename TA>
HWY_INLINE void PrepareRowBlock(const QGemmA& qa, int64_t m0, int64_t rows, int64_t k, int64_t kp,
                                bool a_in_place, bool all_zb_zero, TA* wa, uint32_t* rowsum,
                                uint32_t* zav) {
  if (a_in_place && all_zb_zero) {
    std::fill(rowsum, rowsum + rows, 0u);
  } else if (a_in_place) {
    RowSumsU8(static_cast<const uint8_t*>(qa.a) + m0 * qa.lda, qa.lda, rows, k, rowsum);
  } else {
    NormalizeRows<TA>(qa.a, qa.a_signed, qa.lda, m0, rows, k, kp, wa, rowsum);
  }
  const uint32_t a_shift = qa.a_signed ? 128 : 0;
  for (int64_t i = 0; i < rows; ++i) {
    zav[i] = U(qa.a_zp ? qa.a_zp[qa.a_zp_step * (m0 + i)] : 0) + a_shift;
  }
}

// Correction terms of columns n0..n0+cols: sum a'b' - zb'*rowsum - za'*(colsum - K*zb'), modulo
// 2^32, takes zbv[j] = zb' and ct[j] = colsum - K*zb'.
HWY_INLINE void ColumnCorrections(const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                                  int64_t n0, int64_t cols, uint32_t* zbv, uint32_t* ct) {
  const int32_t b_shift = b.shift();
  const int32_t* col_sums = b.col_sums();
  const uint32_t uk = static_cast<uint32_t>(b.k());
  // Whole vectors where the zero point is one value or one per column (every caller): a task's
  // block is 128 columns, which a scalar loop takes longer over than the tiles of a GEMM with
  // few rows or a short K.
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  const auto vk = hn::Set(du, uk);
  int64_t j0 = 0;
  if (b_zp == nullptr || b_zp_step == 0 || b_zp_step == 1) {
    const auto one_zb = hn::Set(du, U((b_zp ? b_zp[0] : 0) + b_shift));
    const auto vshift = hn::Set(di, b_shift);
    for (; j0 + N <= cols; j0 += N) {
      const auto zb = b_zp && b_zp_step
                          ? hn::BitCast(du, hn::Add(hn::LoadU(di, b_zp + n0 + j0), vshift))
                          : one_zb;
      hn::StoreU(zb, du, zbv + j0);
      const auto sums = hn::BitCast(du, hn::LoadU(di, col_sums + n0 + j0));
      hn::StoreU(hn::Sub(sums, hn::Mul(vk, zb)), du, ct + j0);
    }
  }
  for (int64_t j = j0; j < cols; ++j) {
    const uint32_t zb = U((b_zp ? b_zp[b_zp_step * (n0 + j)] : 0) + b_shift);
    zbv[j] = zb;
    ct[j] = U(col_sums[n0 + j]) - uk * zb;
  }
}

// The folded corrections of a block whose rows share za and whose columns share zb:
// row_term[i] = zb * rowsum[i], col_term[j] = za * ct[j] (modulo 2^32).
HWY_INLINE void FoldCorrections(uint32_t zb, const uint32_t* rowsum, int64_t rows, uint32_t za,
                                const uint32_t* ct, int64_t cols, uint32_t* row_term,
                                uint32_t* col_term) {
  const hn::ScalableTag<uint32_t> du;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  const auto vza = hn::Set(du, za);
  int64_t j = 0;
  for (; j + N <= cols; j += N) hn::StoreU(hn::Mul(vza, hn::LoadU(du, ct + j)), du, col_term + j);
  for (; j < cols; ++j) col_term[j] = za * ct[j];
  for (int64_t i = 0; i < rows; ++i) row_term[i] = zb * rowsum[i];
}

// One kMB x kNB block of C as the tiles see it.
template <typename TA>
struct QGemmBlock {
  const TA* a;  // the block's a' rows, a_stride apart
  int64_t a_stride;
  int64_t rows, cols;
  const uint32_t* zbv;     // [cols] zb'
  const uint32_t* ct;      // [cols] colsum - K*zb'
  const uint32_t* rowsum;  // [rows] rowsum(a')
  const uint32_t* zav;     // [rows] za'
  const uint32_t* row_term;  // [rows] zb' * rowsum, or nullptr (TileEpilogue)
  const uint32_t* col_term;  // [cols] za' * ct
  int32_t* acc;            // the accumulators, kNB apart
  int32_t* c;              // element (m0, n0) of the destination, ldc apart
  int64_t ldc;
  // Fused requantization by the tiles of full panels (nullptr: they store int32 to c), and the
  // block's first row and column in C.
  const QGemmRequant* rq;
  int64_t m0, n0;

  // The tile at block row i, block column j's share of rq: its bias, multipliers and bytes.
  QGemmRequant TileRq(int64_t i, int64_t j) const {
    const int64_t row = m0 + i, col = n0 + j, at = rq->per_row ? row : col;
    QGemmRequant t = *rq;
    if (t.bias) t.bias += at;
    t.mult += at * rq->mult_step;
    t.out = static_cast<uint8_t*>(rq->out) + row * rq->ldo + col;
    return t;
  }
};

// Two panels at once (64 columns) on the targets with the wider tile; `finish` has the tile
// write C on this last K block.
template <typename TA>
HWY_INLINE void RunPanelPair(const QGemmBlock<TA>& blk, int64_t p, const int8_t* bp,
                             int64_t quads, int64_t q0, int64_t qn, bool finish) {
  constexpr int kMRP = Tiler<TA>::kMRPair > 0 ? Tiler<TA>::kMRPair : 1;
  // The fewest tiles of at most kMRP rows, their heights as equal as possible: 8 rows are two
  // pair tiles of 4, not one of 6 and a 2-row remainder on the single-panel tile.
  const int64_t tiles = (blk.rows + kMRP - 1) / kMRP;
  for (int64_t t = 0, i = 0; t < tiles; ++t) {
    const int r = static_cast<int>((blk.rows - i + (tiles - t) - 1) / (tiles - t));
    int32_t* const c_tile = blk.c + i * blk.ldc + p * kNR;
    // Both panels are full (a pair never takes a partial one finished direct).
    QGemmRequant trq, trq1;
    if (finish && blk.rq) {
      trq = blk.TileRq(i, p * kNR);
      trq1 = ShiftColumns(trq, kNR);
    }
    TileEpilogue epi{blk.zbv + p * kNR,
                     blk.ct + p * kNR,
                     blk.rowsum + i,
                     blk.zav + i,
                     c_tile,
                     blk.ldc,
                     blk.rq ? &trq : nullptr,
                     blk.row_term ? blk.row_term + i : nullptr,
                     blk.row_term ? blk.col_term + p * kNR : nullptr};
    const TileEpilogue* e = finish ? &epi : nullptr;
    int32_t* ac = blk.acc + i * kNB + p * kNR;
    const TA* ai = blk.a + i * blk.a_stride + q0 * 4;
    if (r >= 3) {
      Tiler<TA>::RunPair(r, ai, blk.a_stride, bp, bp + quads * kNR * 4, qn, ac, kNB, q0 == 0, e);
    } else {
      TileEpilogue epi1 = epi;
      epi1.zb += kNR;
      epi1.ct += kNR;
      epi1.c += kNR;
      if (epi1.col_term) epi1.col_term += kNR;
      epi1.rq = blk.rq ? &trq1 : nullptr;
      Tiler<TA>::Run(r, ai, blk.a_stride, bp, qn, ac, kNB, q0 == 0, e);
      Tiler<TA>::Run(r, ai, blk.a_stride, bp + quads * kNR * 4, qn, ac + kNR, kNB, q0 == 0,
                     e != nullptr ? &epi1 : nullptr);
    }
    i += r;
  }
}

// Widest partial panel that Tiler::RunNarrow multiplies on fewer than 32 columns.
constexpr int64_t kNarrowWidth = 24;

// One panel (32 columns); `finish` as in RunPanelPair.
template <typename TA>
HWY_INLINE void RunPanel(const QGemmBlock<TA>& blk, int64_t p, const int8_t* bp, int64_t q0,
                         int64_t qn, bool finish) {
  constexpr int kMR = Tiler<TA>::kMR;
  // Columns of this panel that exist (a partial panel, the last, is finished by its tile only
  // when it is narrow and the narrow tile stores to C: NarrowPanelDirect).
  const int64_t width = std::min<int64_t>(kNR, blk.cols - p * kNR);
  for (int64_t i = 0; i < blk.rows; i += kMR) {
    int32_t* const c_tile = blk.c + i * blk.ldc + p * kNR;
    // A partial panel wider than the narrow tile stores int32 (requantized after).
    const bool tile_rq = blk.rq && (width == kNR || width <= kNarrowWidth);
    QGemmRequant trq;
    if (finish && tile_rq) trq = blk.TileRq(i, p * kNR);
    TileEpilogue epi{blk.zbv + p * kNR,
                     blk.ct + p * kNR,
                     blk.rowsum + i,
                     blk.zav + i,
                     c_tile,
                     blk.ldc,
                     tile_rq ? &trq : nullptr,
                     blk.row_term ? blk.row_term + i : nullptr,
                     blk.row_term ? blk.col_term + p * kNR : nullptr};
    if (width <= kNarrowWidth) {
      Tiler<TA>::RunNarrow(static_cast<int>(std::min<int64_t>(kMR, blk.rows - i)), width,
                           blk.a + i * blk.a_stride + q0 * 4, blk.a_stride, bp, qn,
                           blk.acc + i * kNB + p * kNR, kNB, q0 == 0, finish ? &epi : nullptr);
      continue;
    }
    Tiler<TA>::Run(static_cast<int>(std::min<int64_t>(kMR, blk.rows - i)),
                   blk.a + i * blk.a_stride + q0 * 4, blk.a_stride, bp, qn,
                   blk.acc + i * kNB + p * kNR, kNB, q0 == 0, finish ? &epi : nullptr);
  }
}

// Whether a block of `cols` columns ends in a partial panel that the narrow tile finishes
// straight to C (on the targets whose narrow tile has the epilogue).
template <typename TA>
constexpr bool NarrowPanelDirect(int64_t cols) {
  return Tiler<TA>::kNarrowDirect && cols % kNR != 0 && cols % kNR <= kNarrowWidth;
}

// The block's products over all of K. The first direct_panels panels (those whose 32 columns
// all exist, and a narrow last one where NarrowPanelDirect) are finished by the tile itself on
// the last K block; the rest stay in acc.
template <typename TA>
HWY_INLINE void MultiplyBlock(const QGemmBlock<TA>& blk, const int8_t* bdata, int64_t panel0,
                              int64_t quads, int64_t direct_panels) {
  const int64_t npanels = (blk.cols + kNR - 1) / kNR;
  const int64_t full_panels = blk.cols / kNR;
  // K blocks (at least one, so K == 0 still zeroes the accumulators).
  for (int64_t q0 = 0; q0 == 0 || q0 < quads; q0 += kKcQuads) {
    const int64_t qn = std::min(kKcQuads, quads - q0);
    const bool last = q0 + kKcQuads >= quads;
    for (int64_t p = 0; p < npanels;) {
      const int8_t* bp = bdata + ((panel0 + p) * quads + q0) * kNR * 4;
      // A pair only where both panels are finished the same way (direct, or both through acc),
      // and never with a partial panel finished direct (the pair tile stores 64 columns).
      const bool pair = Tiler<TA>::kMRPair > 0 && p + 1 < npanels &&
                        ((p + 1 < direct_panels && p + 1 < full_panels) || p >= direct_panels);
      if (pair) {
        RunPanelPair<TA>(blk, p, bp, quads, q0, qn, last && p < direct_panels);
        p += 2;
      } else {
        RunPanel<TA>(blk, p, bp, q0, qn, last && p < direct_panels);
        ++p;
      }
    }
  }
}

// The scalar epilogue of the columns the tiles left in acc: c = acc - zb' rowsum - za' ct.
// In uint32 lanes (wrapping like the scalar form, which runs the last columns).
template <typename TA>
HWY_INLINE void FinishAccumulated(const QGemmBlock<TA>& blk, int64_t direct_panels) {
  if (direct_panels * kNR >= blk.cols) return;
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(du));
  for (int64_t i = 0; i < blk.rows; ++i) {
    const uint32_t za = blk.zav[i];
    const uint32_t rs = blk.rowsum[i];
    const auto vza = hn::Set(du, za), vrs = hn::Set(du, rs);
    const int32_t* HWY_RESTRICT arow = blk.acc + i * kNB;
    int32_t* HWY_RESTRICT crow = blk.c + i * blk.ldc;
    int64_t j = direct_panels * kNR;
    for (; j + N <= blk.cols; j += N) {
      const auto acc = hn::BitCast(du, hn::LoadU(di, arow + j));
      const auto v = hn::Sub(hn::Sub(acc, hn::Mul(hn::LoadU(du, blk.zbv + j), vrs)),
                             hn::Mul(vza, hn::LoadU(du, blk.ct + j)));
      hn::StoreU(hn::BitCast(di, v), di, crow + j);
    }
    for (; j < blk.cols; ++j) {
      crow[j] = static_cast<int32_t>(U(arow[j]) - blk.zbv[j] * rs - za * blk.ct[j]);
    }
  }
}

// Whether the tiles may requantize in float32 lanes (RequantizeF32Vec's AVX-512 conditions):
// 8-bit zero point and range, every multiplier used a normal float of magnitude in [2^-60, 1).
inline bool TileRequantExact(const QGemmRequant& rq, int64_t m, int64_t n) {
  if (rq.zp < -256 || rq.zp > 256 || rq.lo < -256 || rq.hi > 256) return false;
  const int64_t count = rq.mult_step ? (rq.per_row ? m : n) : 1;
  // In whole vectors: every convolution asks once per run, over all its output channels.
  const hn::ScalableTag<float> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  const auto smallest = hn::Set(df, 0x1p-60f), one = hn::Set(df, 1.0f);
  int64_t i = 0;
  for (; i + N <= count; i += N) {
    const auto v = hn::Abs(hn::LoadU(df, rq.mult + i));
    // NaN fails both comparisons.
    if (!hn::AllTrue(df, hn::And(hn::Ge(v, smallest), hn::Lt(v, one)))) return false;
  }
  for (; i < count; ++i) {
    const float v = std::fabs(rq.mult[i]);
    if (!(v >= 0x1p-60f && v < 1.0f)) return false;  // NaN fails too
  }
  return true;
}

// Requantizes the block's columns [j0, cols) left as int32 in cb (row stride kNB) into rq.out.
inline void RequantizeBlockColumns(const QGemmRequant& rq, const int32_t* cb, int64_t m0,
                                   int64_t rows, int64_t n0, int64_t j0, int64_t cols) {
  if (j0 >= cols) return;
  const int64_t col = n0 + j0, n = cols - j0;
  const int32_t* acc = cb + j0;
  if (rq.per_row) {
    const int32_t* bias = rq.bias ? rq.bias + m0 : nullptr;
    const float* mult = rq.mult + m0 * rq.mult_step;
    if (rq.out_signed) {
      RequantizePerRowI32ToI8(acc, kNB, rows, n, bias, mult, rq.mult_step, rq.zp, rq.lo, rq.hi,
                              static_cast<int8_t*>(rq.out) + m0 * rq.ldo + col, rq.ldo);
    } else {
      RequantizePerRowI32ToU8(acc, kNB, rows, n, bias, mult, rq.mult_step, rq.zp, rq.lo, rq.hi,
                              static_cast<uint8_t*>(rq.out) + m0 * rq.ldo + col, rq.ldo);
    }
    return;
  }
  const int32_t* bias = rq.bias ? rq.bias + col : nullptr;
  const float* mult = rq.mult + col * rq.mult_step;
  if (rq.out_signed) {
    RequantizeBiasRowsI32ToI8(acc, kNB, rows, n, bias, 1, mult, rq.mult_step, rq.zp, rq.lo, rq.hi,
                              static_cast<int8_t*>(rq.out) + m0 * rq.ldo + col, rq.ldo);
  } else {
    RequantizeBiasRowsI32ToU8(acc, kNB, rows, n, bias, 1, mult, rq.mult_step, rq.zp, rq.lo, rq.hi,
                              static_cast<uint8_t*>(rq.out) + m0 * rq.ldo + col, rq.ldo);
  }
}

// C, or each block to the sink, or (rq) each block requantized to bytes.
template <typename TA>
void QGemmBlocked(int64_t m, const void* a, bool a_signed, int64_t lda, const int32_t* a_zp,
                  int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                  int32_t* c, int64_t ldc, const QGemmSink* sink, const QGemmRequant* rq,
                  const Parallel& parallel) {
  const QGemmA qa{a, a_signed, lda, a_zp, a_zp_step};
  const int64_t n = b.n(), k = b.k(), kp = b.kp(), quads = kp / 4;
  const int64_t row_blocks = (m + kMB - 1) / kMB;
  const int64_t col_blocks = (n + kNB - 1) / kNB;
  // uint8 A whose K needs no padding already is a' (the VNNI core's operand): the tiles read it
  // in place, and only its row sums are computed.
  const bool a_in_place = sizeof(TA) == 1 && !a_signed && lda >= kp;
  const bool all_zb_zero = AllShiftedZeroPointsZero(b_zp, b_zp_step, n, b.shift());
  // The blocks go through the per-task buffer with a sink or a requantization; the tiles of full
  // panels requantize themselves where they can.
  const bool blocked = sink != nullptr || rq != nullptr;
  const QGemmRequant* tile_rq =
      rq != nullptr && Tiler<TA>::kDirect && TileRequantExact(*rq, m, n) ? rq : nullptr;
  // One za' for all rows and one zb' for all columns (per-channel zero points that are all
  // equal included): the tiles take the folded corrections.
  const bool folded =
      Tiler<TA>::kDirect && AllEqual(a_zp, a_zp_step, m) && AllEqual(b_zp, b_zp_step, n);
  auto task = [&](int64_t t0, int64_t t1) {
    // Per-thread buffers kept between calls (a task runs to its end on its thread, and every
    // element is written before it is read): no allocation per call of a small GEMM.
    static thread_local std::vector<TA> wa_buf;
    static thread_local std::vector<int32_t> acc_buf, block_buf;
    if (!a_in_place) {
      wa_buf.resize(std::max(wa_buf.size(), static_cast<size_t>(kMB * kp + kNormalizeSlack)));
    }
    acc_buf.resize(static_cast<size_t>(kMB * kNB));
    if (blocked) block_buf.resize(static_cast<size_t>(kMB * kNB));
    TA* const wa = a_in_place ? nullptr : wa_buf.data();
    int32_t* const acc = acc_buf.data();
    int32_t* const block = blocked ? block_buf.data() : nullptr;
    uint32_t rowsum[kMB], zav[kMB], zbv[kNB], ct[kNB], row_term[kMB], col_term[kNB];
    int64_t packed_rb = -1;
    for (int64_t t = t0; t < t1; ++t) {
      // Row-major task order: consecutive tasks share the normalized A block.
      const int64_t rb = t / col_blocks, cblk = t % col_blocks;
      const int64_t m0 = rb * kMB, rows = std::min(m, m0 + kMB) - m0;
      const int64_t n0 = cblk * kNB, cols = std::min(n, n0 + kNB) - n0;
      int32_t* cb = blocked ? block : c + m0 * ldc + n0;  // element (m0, n0) of C
      const int64_t ldcb = blocked ? kNB : ldc;
      if (rb != packed_rb) {
        PrepareRowBlock<TA>(qa, m0, rows, k, kp, a_in_place, all_zb_zero, wa, rowsum, zav);
        packed_rb = rb;
      }
      ColumnCorrections(b, b_zp, b_zp_step, n0, cols, zbv, ct);
      const TA* a_block =
          a_in_place ? static_cast<const TA*>(a) + m0 * lda : static_cast<const TA*>(wa);
      const int64_t a_stride = a_in_place ? lda : kp;
      if (folded) FoldCorrections(zbv[0], rowsum, rows, zav[0], ct, cols, row_term, col_term);
      const QGemmBlock<TA> blk{a_block,
                               a_stride,
                               rows,
                               cols,
                               zbv,
                               ct,
                               rowsum,
                               zav,
                               folded ? row_term : nullptr,
                               folded ? col_term : nullptr,
                               acc,
                               cb,
                               ldcb,
                               tile_rq,
                               m0,
                               n0};
      const int64_t direct_panels =
          Tiler<TA>::kDirect ? cols / kNR + (NarrowPanelDirect<TA>(cols) ? 1 : 0) : 0;
      MultiplyBlock<TA>(blk, b.data(), n0 / kNR, quads, direct_panels);
      FinishAccumulated<TA>(blk, direct_panels);
      if (sink) sink->Block(m0, rows, n0, cols, cb, ldcb);
      // The columns the tiles did not requantize (all of them without tile_rq): those of a
      // partial panel wider than the narrow tile.
      if (rq) {
        RequantizeBlockColumns(*rq, cb, m0, rows, n0,
                               tile_rq ? std::min(cols, direct_panels * kNR) : 0, cols);
      }
    }
  };
  const int64_t tasks = row_blocks * col_blocks;
  if (tasks == 1) {
    task(0, 1);
  } else {
    parallel.For(tasks, task);
  }
}

bool QGemmFusesRequantImpl(const QGemmRequant& rq, int64_t m, int64_t n) {
#if HWY_TARGET == HWY_AVX3_DL
  return HasVnni() && TileRequantExact(rq, m, n);
#else
  (void)rq;
  (void)m;
  (void)n;
  return false;
#endif
}

void QGemmToI32Impl(int64_t m, const void* a, bool a_signed, int64_t lda, const int32_t* a_zp,
                    int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                    int32_t* c, int64_t ldc, const QGemmSink* sink, const QGemmRequant* rq,
                    const Parallel& parallel) {
#if HWY_TARGET == HWY_AVX3_DL
  if (HasVnni()) {
    QGemmBlocked<uint8_t>(m, a, a_signed, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, sink,
                          rq, parallel);
    return;
  }
#endif
  QGemmBlocked<int16_t>(m, a, a_signed, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, sink, rq,
                        parallel);
}

// PackedQB::Pack of a transposed B (column j's K bytes adjacent at b + j * ldb) into zeroed
// panels: b' = b ^ flip, whole k-quads moved as 32-bit lanes. Four columns x four quads at a
// time are one 4 x 4 transpose of 32-bit lanes in 128-bit vectors (every target has them), so a
// quad of 4 columns is one 16-byte store into the panel. A column's last K % 16 bytes are one
// vector (zero past K: the K padding of b'), stored quad by quad. sums[j] = sum_k int8(b'[k, j])
// modulo 2^32, from the same vectors with SumsOf8: b' + 128 = b ^ flip ^ 0x80 as uint8, so the
// sum is sum_u8(b ^ flip ^ 0x80) - 128 K.
void PackTransposedImpl(const uint8_t* HWY_RESTRICT b, int64_t ldb, int64_t k, int64_t n,
                        uint8_t flip, int8_t* HWY_RESTRICT dst, uint32_t* HWY_RESTRICT sums) {
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint32_t> d32;
  const hn::Full128<uint64_t> d64;
  using V64 = hn::Vec<decltype(d64)>;
  const int64_t quads = (k + 3) / 4;
  const int64_t body = k / 16 * 16;  // bytes moved as 4-quad blocks
  const auto vflip = hn::Set(d8, flip);
  const auto to_biased = hn::Set(d8, static_cast<uint8_t>(0x80));  // applied after the flip
  auto quad_at = [&](int64_t j, int64_t q) {
    return reinterpret_cast<uint8_t*>(dst + ((j / kNR * quads + q) * kNR + j % kNR) * 4);
  };
  // The tail of column j (bytes body..k, fewer than 16): its quads and its sum (added to *sum).
  // With K >= 16 it is the end of the column's last 16 bytes moved to the front by a byte
  // shuffle (no read past the column); a shorter K goes through a buffer.
  const int64_t rem = k - body;
  const auto valid = hn::FirstN(d8, static_cast<size_t>(rem));
  HWY_ALIGN uint8_t front[16];
  for (int64_t i = 0; i < 16; ++i) front[i] = static_cast<uint8_t>(i < rem ? i + 16 - rem : 0);
  const auto to_front = hn::Load(d8, front);
  auto tail = [&](int64_t j, V64* sum) {
    if (rem == 0) return;
    hn::Vec<decltype(d8)> raw;
    if (k >= 16) {
      raw = hn::TableLookupBytes(hn::LoadU(d8, b + j * ldb + k - 16), to_front);
    } else {
      raw = LoadTailBytes(d8, b + j * ldb + body, rem);
    }
    const auto v = hn::IfThenElseZero(valid, hn::Xor(raw, vflip));  // b', 0 past K
    HWY_ALIGN uint8_t packed[16];
    hn::Store(v, d8, packed);
    for (int64_t q = 0; q < (rem + 3) / 4; ++q) {
      std::memcpy(quad_at(j, body / 4 + q), packed + 4 * q, 4);
    }
    *sum = hn::Add(*sum, hn::SumsOf8(hn::IfThenElseZero(valid, hn::Xor(v, to_biased))));
  };
  auto finish = [&](int64_t j, V64 sum) {
    const uint64_t total = hn::GetLane(hn::SumOfLanes(d64, sum));
    sums[j] = static_cast<uint32_t>(total) - 128u * static_cast<uint32_t>(k);
  };
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    V64 sum[4] = {hn::Zero(d64), hn::Zero(d64), hn::Zero(d64), hn::Zero(d64)};
    for (int64_t q = 0; 4 * q < body; q += 4) {
      hn::Vec<decltype(d8)> v[4];
      hn::Vec<decltype(d32)> r[4];
      for (int i = 0; i < 4; ++i) {
        v[i] = hn::Xor(hn::LoadU(d8, b + (j + i) * ldb + 4 * q), vflip);
        r[i] = hn::BitCast(d32, v[i]);
        sum[i] = hn::Add(sum[i], hn::SumsOf8(hn::Xor(v[i], to_biased)));
      }
      const auto a = hn::BitCast(d64, hn::InterleaveLower(d32, r[0], r[1]));
      const auto c = hn::BitCast(d64, hn::InterleaveLower(d32, r[2], r[3]));
      const auto e = hn::BitCast(d64, hn::InterleaveUpper(d32, r[0], r[1]));
      const auto f = hn::BitCast(d64, hn::InterleaveUpper(d32, r[2], r[3]));
      hn::StoreU(hn::BitCast(d8, hn::InterleaveLower(d64, a, c)), d8, quad_at(j, q));
      hn::StoreU(hn::BitCast(d8, hn::InterleaveUpper(d64, a, c)), d8, quad_at(j, q + 1));
      hn::StoreU(hn::BitCast(d8, hn::InterleaveLower(d64, e, f)), d8, quad_at(j, q + 2));
      hn::StoreU(hn::BitCast(d8, hn::InterleaveUpper(d64, e, f)), d8, quad_at(j, q + 3));
    }
    for (int i = 0; i < 4; ++i) {
      tail(j + i, &sum[i]);
      finish(j + i, sum[i]);
    }
  }
  for (; j < n; ++j) {
    V64 sum = hn::Zero(d64);
    for (int64_t q = 0; 4 * q < body; q += 4) {
      const auto v = hn::Xor(hn::LoadU(d8, b + j * ldb + 4 * q), vflip);
      HWY_ALIGN uint8_t packed[16];
      hn::Store(v, d8, packed);
      for (int64_t t = 0; t < 4; ++t) std::memcpy(quad_at(j, q + t), packed + 4 * t, 4);
      sum = hn::Add(sum, hn::SumsOf8(hn::Xor(v, to_biased)));
    }
    tail(j, &sum);
    finish(j, sum);
  }
}

#if HWY_TARGET == HWY_AVX3_DL
// PackRowsImpl with VNNI: the four rows of a k-quad are interleaved in registers into one
// 512-bit vector (16 columns x 4 k, the panel's own layout), stored whole, and the column sums
// come from one vpdpbusd of that vector against bytes of 1 per quad (each 32-bit lane is one
// column's 4 values of b': their sum, exact in the lane's wrapping int32) instead of widening
// every row.
SIMPLECPP_QGEMM_VNNI void PackRowsVnni(
    const uint8_t* HWY_RESTRICT b, int64_t ldb, int64_t k, int64_t n, uint8_t flip,
    int8_t* HWY_RESTRICT dst, uint32_t* HWY_RESTRICT sums) {
  constexpr int64_t kCols = 16;
  const int64_t quads = (k + 3) / 4;
  const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip));
  const __m512i ones = _mm512_set1_epi8(1);
  int64_t j0 = 0;
  // 64 columns (two panels) at a time: each row's 64 bytes are one load, the quad's four rows
  // interleave within 128-bit blocks and a 4 x 4 transpose of the blocks puts 16 columns in
  // each of four vectors.
  const __m512i zflip = _mm512_set1_epi8(static_cast<char>(flip));
  for (; j0 + 64 <= n; j0 += 64) {
    uint8_t* out0 = reinterpret_cast<uint8_t*>(dst + (j0 / kNR * quads) * kNR * 4);
    uint8_t* out1 = out0 + quads * kNR * 4;  // the next panel
    auto row = [&](int64_t kk) -> __m512i {
      if (kk >= k) return _mm512_setzero_si512();
      return _mm512_xor_si512(_mm512_loadu_si512(b + kk * ldb + j0), zflip);
    };
    __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512()};
    for (int64_t q = 0; q < quads; ++q) {
      const __m512i r0 = row(4 * q), r1 = row(4 * q + 1), r2 = row(4 * q + 2),
                    r3 = row(4 * q + 3);
      const __m512i lo01 = _mm512_unpacklo_epi8(r0, r1), hi01 = _mm512_unpackhi_epi8(r0, r1);
      const __m512i lo23 = _mm512_unpacklo_epi8(r2, r3), hi23 = _mm512_unpackhi_epi8(r2, r3);
      // Block L of qi holds columns 16 L + 4 i .. 16 L + 4 i + 3.
      const __m512i q0 = _mm512_unpacklo_epi16(lo01, lo23), q1 = _mm512_unpackhi_epi16(lo01, lo23);
      const __m512i q2 = _mm512_unpacklo_epi16(hi01, hi23), q3 = _mm512_unpackhi_epi16(hi01, hi23);
      const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44);  // blocks q0.0 q0.1 q1.0 q1.1
      const __m512i t1 = _mm512_shuffle_i64x2(q0, q1, 0xEE);  // q0.2 q0.3 q1.2 q1.3
      const __m512i t2 = _mm512_shuffle_i64x2(q2, q3, 0x44);
      const __m512i t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
      const __m512i o[4] = {_mm512_shuffle_i64x2(t0, t2, 0x88), _mm512_shuffle_i64x2(t0, t2, 0xDD),
                            _mm512_shuffle_i64x2(t1, t3, 0x88), _mm512_shuffle_i64x2(t1, t3, 0xDD)};
      _mm512_storeu_si512(out0 + q * kNR * 4, o[0]);
      _mm512_storeu_si512(out0 + q * kNR * 4 + 64, o[1]);
      _mm512_storeu_si512(out1 + q * kNR * 4, o[2]);
      _mm512_storeu_si512(out1 + q * kNR * 4 + 64, o[3]);
      for (int v = 0; v < 4; ++v) acc[v] = Dpbusd(acc[v], ones, o[v]);
    }
    for (int v = 0; v < 4; ++v) _mm512_storeu_si512(sums + j0 + 16 * v, acc[v]);
  }
  for (; j0 < n; j0 += kCols) {
    const int64_t w = std::min(kCols, n - j0);
    const __mmask16 valid = static_cast<__mmask16>((1u << w) - 1);
    uint8_t* out = reinterpret_cast<uint8_t*>(dst + ((j0 / kNR * quads) * kNR + j0 % kNR) * 4);
    // Row kk's bytes j0.. as b', zero past K and past N (masked lanes are not read).
    auto row = [&](int64_t kk) -> __m128i {
      if (kk >= k) return _mm_setzero_si128();
      return _mm_xor_si128(_mm_maskz_loadu_epi8(valid, b + kk * ldb + j0),
                           _mm_maskz_mov_epi8(valid, vflip));
    };
    __m512i acc = _mm512_setzero_si512();
    for (int64_t q = 0; q < quads; ++q) {
      const __m128i r0 = row(4 * q), r1 = row(4 * q + 1), r2 = row(4 * q + 2),
                    r3 = row(4 * q + 3);
      const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
      const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
      __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(lo01, lo23));  // columns 0-3
      v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(lo01, lo23), 1);       // 4-7
      v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(hi01, hi23), 2);       // 8-11
      v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(hi01, hi23), 3);       // 12-15
      _mm512_storeu_si512(out + q * kNR * 4, v);
      acc = Dpbusd(acc, ones, v);
    }
    alignas(64) uint32_t total[kCols];
    _mm512_store_si512(total, acc);
    for (int64_t c = 0; c < w; ++c) sums[j0 + c] = total[c];
  }
}
#endif

// PackedQB::Pack of a row-major B (row k's N bytes adjacent at b + k * ldb, e.g. a pointwise
// convolution's channels-first input, channels x positions) into zeroed panels: b' = b ^ flip.
// Sixteen columns of four rows (one k-quad) are four 128-bit loads and one interleaving store,
// which is exactly the panel's [16 columns][4] bytes. Rows past K are zero vectors, columns past
// N are zeroed lanes (the panels' padding stays 0). sums[j] = sum_k int8(b'[k, j]) modulo 2^32
// from the same vectors: b' + 128 (= b ^ flip ^ 0x80) widened to 16-bit lanes, which hold up to
// 256 rows of it before they are added into 32-bit sums. With VNNI, PackRowsVnni above.
void PackRowsImpl(const uint8_t* HWY_RESTRICT b, int64_t ldb, int64_t k, int64_t n, uint8_t flip,
                  int8_t* HWY_RESTRICT dst, uint32_t* HWY_RESTRICT sums) {
#if HWY_TARGET == HWY_AVX3_DL
  if (HasVnni()) {
    PackRowsVnni(b, ldb, k, n, flip, dst, sums);
    return;
  }
#endif
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint16_t> d16;
  using V8 = hn::Vec<decltype(d8)>;
  using V16 = hn::Vec<decltype(d16)>;
  constexpr int64_t kCols = 16;
  constexpr int64_t kSpillRows = 256;  // 256 * 255 < 2^16
  const int64_t quads = (k + 3) / 4;
  const auto vflip = hn::Set(d8, flip);
  const auto to_biased = hn::Set(d8, static_cast<uint8_t>(0x80));
  const auto zero8 = hn::Zero(d8);
  for (int64_t j0 = 0; j0 < n; j0 += kCols) {
    const int64_t w = std::min(kCols, n - j0);
    const auto valid = hn::FirstN(d8, static_cast<size_t>(w));
    uint8_t* out = reinterpret_cast<uint8_t*>(dst + ((j0 / kNR * quads) * kNR + j0 % kNR) * 4);
    uint32_t total[kCols] = {};
    V16 lo = hn::Zero(d16), hi = hn::Zero(d16);
    auto spill = [&]() {
      HWY_ALIGN uint16_t part[kCols];
      hn::Store(lo, d16, part);
      hn::Store(hi, d16, part + kCols / 2);
      for (int64_t c = 0; c < kCols; ++c) total[c] += part[c];
      lo = hn::Zero(d16);
      hi = hn::Zero(d16);
    };
    // Row kk's bytes j0.. as b', zero past K and past N.
    auto row = [&](int64_t kk) -> V8 {
      if (kk >= k) return zero8;
      const uint8_t* src = b + kk * ldb + j0;
      const V8 raw = w == kCols ? hn::LoadU(d8, src) : LoadTailBytes(d8, src, w);
      return hn::IfThenElseZero(valid, hn::Xor(raw, vflip));
    };
    for (int64_t q = 0; q < quads; ++q) {
      const V8 r0 = row(4 * q), r1 = row(4 * q + 1), r2 = row(4 * q + 2), r3 = row(4 * q + 3);
      hn::StoreInterleaved4(r0, r1, r2, r3, d8, out + q * kNR * 4);
      // Rows past K add 0x80 each to every column; the sums subtract 128 per row of K only,
      // so those lanes are masked out.
      const int64_t real = std::min<int64_t>(4, k - 4 * q);
      const V8 rows[4] = {r0, r1, r2, r3};
      for (int64_t i = 0; i < real; ++i) {
        const V8 u = hn::Xor(rows[i], to_biased);
        lo = hn::Add(lo, hn::ZipLower(d16, u, zero8));
        hi = hn::Add(hi, hn::ZipUpper(d16, u, zero8));
      }
      if ((q + 1) * 4 % kSpillRows == 0) spill();
    }
    spill();
    for (int64_t c = 0; c < w; ++c) sums[j0 + c] = total[c] - 128u * static_cast<uint32_t>(k);
  }
}

// count copies of n bytes: d + i * dstep <- s + i * sstep. The size test sits outside the loop.
inline void CopyRowsShort(uint8_t* HWY_RESTRICT d, int64_t dstep, const uint8_t* HWY_RESTRICT s,
                          int64_t sstep, int64_t n, int64_t count) {
  if (n >= 8 && n <= 16) {
    for (int64_t i = 0; i < count; ++i, d += dstep, s += sstep) CopyTwoWords<uint64_t>(d, s, n);
  } else if (n >= 4 && n < 8) {
    for (int64_t i = 0; i < count; ++i, d += dstep, s += sstep) CopyTwoWords<uint32_t>(d, s, n);
  } else {
    for (int64_t i = 0; i < count; ++i, d += dstep, s += sstep) CopyShort(d, s, n);
  }
}

void Im2RowBytesChannelsLastImpl(const ConvGeometry& g, const uint8_t* xt, int64_t channels,
                                 int64_t p_begin, int64_t p_count, uint8_t pad_value, uint8_t* rows,
                                 int64_t row_stride, const Parallel& parallel) {
  const int64_t row_len = channels * g.KernelSize();
  const ConvGeometry3 g3 = WidenTo3(g);  // the im2row loops are always 3-D
  const auto &in = g3.in, &out = g3.out, &ker = g3.kernel, &str = g3.stride, &dil = g3.dilation,
             &pad = g3.pad;
  const int64_t c = channels;
  const int64_t krow = ker[2] * c;  // bytes of one kernel row of taps
  constexpr int64_t kPositionsPerTask = 64;
  const int64_t tasks = (p_count + kPositionsPerTask - 1) / kPositionsPerTask;
  // Positions are taken in runs along the innermost output dim (same o0, o1): per kernel row
  // (k0, k1) the image row is checked once, and the run's copies are a tight loop.
  auto body = [&](int64_t t0, int64_t t1) {
    const int64_t q_begin = t0 * kPositionsPerTask;
    const int64_t q_end = std::min(p_count, t1 * kPositionsPerTask);
    int64_t q = q_begin;
    while (q < q_end) {
      const int64_t p = p_begin + q;
      const int64_t o2_first = p % out[2];
      const int64_t o1 = (p / out[2]) % out[1];
      const int64_t o0 = p / (out[2] * out[1]);
      const int64_t run = std::min(out[2] - o2_first, q_end - q);
      const int64_t b0 = o0 * str[0] - pad[0], b1 = o1 * str[1] - pad[1];
      uint8_t* run_rows = rows + q * row_stride;
      for (int64_t k0 = 0; k0 < ker[0]; ++k0) {
        const int64_t i0 = b0 + k0 * dil[0];
        const bool in0 = i0 >= 0 && i0 < in[0];
        for (int64_t k1 = 0; k1 < ker[1]; ++k1) {
          const int64_t i1 = b1 + k1 * dil[1];
          uint8_t* r = run_rows + (k0 * ker[1] + k1) * krow;
          if (!in0 || i1 < 0 || i1 >= in[1]) {
            for (int64_t j = 0; j < run; ++j) FillShort(r + j * row_stride, pad_value, krow);
            continue;
          }
          const uint8_t* src = xt + (i0 * in[1] + i1) * in[2] * c;
          // Tap by tap, for positions whose kernel row crosses the image border or is dilated.
          auto copy_taps = [&](int64_t j) {
            const int64_t b2 = (o2_first + j) * str[2] - pad[2];
            uint8_t* rj = r + j * row_stride;
            for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
              const int64_t i2 = b2 + k2 * dil[2];
              if (i2 >= 0 && i2 < in[2]) {
                CopyShort(rj + k2 * c, src + i2 * c, c);
              } else {
                FillShort(rj + k2 * c, pad_value, c);
              }
            }
          };
          // Positions [j_lo, j_hi) have all taps of the kernel row inside the image and adjacent
          // (no dilation): one contiguous copy each, in a loop without per-position tests.
          int64_t j_lo = run, j_hi = run;
          if (dil[2] == 1) {
            auto inside = [&](int64_t j) {
              const int64_t b2 = (o2_first + j) * str[2] - pad[2];
              return b2 >= 0 && b2 + ker[2] <= in[2];
            };
            j_lo = 0;
            while (j_lo < run && !inside(j_lo)) ++j_lo;
            j_hi = run;
            while (j_hi > j_lo && !inside(j_hi - 1)) --j_hi;
          }
          for (int64_t j = 0; j < j_lo; ++j) copy_taps(j);
          if (j_hi > j_lo) {
            CopyRowsShort(r + j_lo * row_stride, row_stride,
                          src + ((o2_first + j_lo) * str[2] - pad[2]) * c, str[2] * c, krow,
                          j_hi - j_lo);
          }
          for (int64_t j = j_hi; j < run; ++j) copy_taps(j);
        }
      }
      if (row_stride > row_len) {
        for (int64_t j = 0; j < run; ++j) {
          FillShort(run_rows + j * row_stride + row_len, pad_value, row_stride - row_len);
        }
      }
      q += run;
    }
  };
  if (tasks <= 1) {
    body(0, tasks);
  } else {
    parallel.For(tasks, body);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(QGemmToI32Impl);
HWY_EXPORT(QGemmFusesRequantImpl);
HWY_EXPORT(PackTransposedImpl);
HWY_EXPORT(PackRowsImpl);
HWY_EXPORT(Im2RowBytesChannelsLastImpl);

PackedQB::PackedQB(bool b_signed, int64_t k, int64_t n)
    : b_signed_(b_signed),
      k_(k),
      n_(n),
      kp_((k + kKAlign - 1) / kKAlign * kKAlign),
      data_(static_cast<size_t>((n + kNR - 1) / kNR * kNR * kp_), 0),
      col_sums_(static_cast<size_t>(n), 0) {}

std::shared_ptr<const PackedQB> PackedQB::Pack(bool b_signed, bool trans_b, int64_t k, int64_t n,
                                               const void* b, int64_t ldb) {
  auto p = std::make_shared<PackedQB>(b_signed, 0, 0);
  p->Repack(b_signed, trans_b, k, n, b, ldb);
  return p;
}

void PackedQB::Reshape(bool b_signed, int64_t k, int64_t n) {
  b_signed_ = b_signed;
  k_ = k;
  n_ = n;
  kp_ = (k + kKAlign - 1) / kKAlign * kKAlign;
  // The vectors keep their capacity, so a PackedQB packed again per call allocates nothing once
  // it is large enough. The packers write every quad of every column below N, zero past K; the
  // columns past N in the last panel are not written: that panel is zeroed here.
  const size_t bytes = static_cast<size_t>((n + kNR - 1) / kNR * kNR * kp_);
  data_.resize(bytes);
  const size_t panel = static_cast<size_t>(kNR * kp_);
  if (n % kNR != 0 && panel > 0) std::memset(data_.data() + bytes - panel, 0, panel);
  col_sums_.assign(static_cast<size_t>(n), 0);
}

void PackedQB::Repack(bool b_signed, bool trans_b, int64_t k, int64_t n, const void* b,
                      int64_t ldb) {
  Reshape(b_signed, k, n);
  const uint8_t* src = static_cast<const uint8_t*>(b);
  const uint8_t flip = b_signed ? 0 : 0x80;  // uint8 b - 128 == its bits with the top one flipped
  // Sums wrap: exact modulo 2^32, in the int32 storage as uint32.
  uint32_t* sums = reinterpret_cast<uint32_t*>(col_sums_.data());
  if (trans_b) {
    // Column j's K bytes are adjacent in b: whole k-quads move as vectors (this runs per call
    // when B is an activation, e.g. the im2row rows of a convolution with few output channels).
    HWY_DYNAMIC_DISPATCH(PackTransposedImpl)(src, ldb, k, n, flip, data_.data(), sums);
  } else {
    // Row k's N bytes are adjacent: sixteen columns of a k-quad are one interleaving store.
    HWY_DYNAMIC_DISPATCH(PackRowsImpl)(src, ldb, k, n, flip, data_.data(), sums);
  }
}

namespace {

// The one driver behind the typed entry points: A's signedness is a flag from here down (the
// micro-kernels see a' = a + 128 either way), and either C or a sink takes the blocks.
void QGemmDispatch(int64_t m, const void* a, bool a_signed, int64_t lda, const int32_t* a_zp,
                   int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                   int32_t* c, int64_t ldc, const QGemmSink* sink, const QGemmRequant* rq,
                   const Parallel& parallel) {
  if (m <= 0 || b.n() <= 0) return;
  const Parallel& par =
      m * b.n() * std::max<int64_t>(b.k(), 1) < kQGemmSerialMacs ? SerialParallel() : parallel;
  HWY_DYNAMIC_DISPATCH(QGemmToI32Impl)
  (m, a, a_signed, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, sink, rq, par);
}

}  // namespace

void QGemmU8ToI32(int64_t m, const uint8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                  const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, int32_t* c,
                  int64_t ldc, const Parallel& parallel) {
  QGemmDispatch(m, a, false, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, nullptr, nullptr,
                parallel);
}
void QGemmS8ToI32(int64_t m, const int8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                  const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, int32_t* c,
                  int64_t ldc, const Parallel& parallel) {
  QGemmDispatch(m, a, true, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, c, ldc, nullptr, nullptr,
                parallel);
}
void QGemmU8ToSink(int64_t m, const uint8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                   const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, const QGemmSink& sink,
                   const Parallel& parallel) {
  QGemmDispatch(m, a, false, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, nullptr, 0, &sink, nullptr,
                parallel);
}
void QGemmS8ToSink(int64_t m, const int8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                   const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step, const QGemmSink& sink,
                   const Parallel& parallel) {
  QGemmDispatch(m, a, true, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, nullptr, 0, &sink, nullptr,
                parallel);
}

bool QGemmFusesRequant(const QGemmRequant& rq, int64_t m, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(QGemmFusesRequantImpl)(rq, m, n);
}
void QGemmU8ToBytes(int64_t m, const uint8_t* a, int64_t lda, const int32_t* a_zp,
                    int64_t a_zp_step, const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                    const QGemmRequant& rq, const Parallel& parallel) {
  QGemmDispatch(m, a, false, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, nullptr, 0, nullptr, &rq,
                parallel);
}
void QGemmS8ToBytes(int64_t m, const int8_t* a, int64_t lda, const int32_t* a_zp, int64_t a_zp_step,
                    const PackedQB& b, const int32_t* b_zp, int64_t b_zp_step,
                    const QGemmRequant& rq, const Parallel& parallel) {
  QGemmDispatch(m, a, true, lda, a_zp, a_zp_step, b, b_zp, b_zp_step, nullptr, 0, nullptr, &rq,
                parallel);
}

void Im2RowBytes(const ConvGeometry& g, const uint8_t* x, int64_t channels, int64_t p_begin,
                 int64_t p_count, uint8_t pad_value, uint8_t* rows, const Parallel& parallel) {
  const int64_t ksize = g.KernelSize();
  const int64_t in_size = g.InSize();
  const int64_t row_len = channels * ksize;
  const ConvGeometry3 g3 = WidenTo3(g);  // the im2row loops are always 3-D
  const auto &in = g3.in, &out = g3.out, &ker = g3.kernel, &str = g3.stride, &dil = g3.dilation,
             &pad = g3.pad;
  constexpr int64_t kPositionsPerTask = 64;
  const int64_t tasks = (p_count + kPositionsPerTask - 1) / kPositionsPerTask;
  auto body = [&](int64_t t0, int64_t t1) {
    const int64_t q_begin = t0 * kPositionsPerTask;
    const int64_t q_end = std::min(p_count, t1 * kPositionsPerTask);
    // Output coordinates of the first position, then advanced without divisions.
    int64_t o2 = (p_begin + q_begin) % out[2];
    int64_t o1 = ((p_begin + q_begin) / out[2]) % out[1];
    int64_t o0 = (p_begin + q_begin) / (out[2] * out[1]);
    for (int64_t q = q_begin; q < q_end; ++q) {
      if (q != q_begin && ++o2 == out[2]) {
        o2 = 0;
        if (++o1 == out[1]) {
          o1 = 0;
          ++o0;
        }
      }
      uint8_t* row = rows + q * row_len;
      // Per position: which kernel rows / columns land inside the image is the same for every
      // channel; the innermost taps are a contiguous copy when they all do (stride along the
      // row does not matter for one position; dilation 1 makes the taps adjacent).
      const int64_t b0 = o0 * str[0] - pad[0], b1 = o1 * str[1] - pad[1];
      const int64_t b2 = o2 * str[2] - pad[2];
      const bool row_inside = b2 >= 0 && b2 + (ker[2] - 1) * dil[2] < in[2];
      for (int64_t ch = 0; ch < channels; ++ch) {
        const uint8_t* xc = x + ch * in_size;
        uint8_t* r = row + ch * ksize;
        for (int64_t k0 = 0; k0 < ker[0]; ++k0) {
          const int64_t i0 = b0 + k0 * dil[0];
          if (i0 < 0 || i0 >= in[0]) {
            std::memset(r, pad_value, static_cast<size_t>(ker[1] * ker[2]));
            r += ker[1] * ker[2];
            continue;
          }
          for (int64_t k1 = 0; k1 < ker[1]; ++k1) {
            const int64_t i1 = b1 + k1 * dil[1];
            if (i1 < 0 || i1 >= in[1]) {
              std::memset(r, pad_value, static_cast<size_t>(ker[2]));
              r += ker[2];
              continue;
            }
            const uint8_t* src = xc + (i0 * in[1] + i1) * in[2];
            if (row_inside) {
              for (int64_t k2 = 0; k2 < ker[2]; ++k2) r[k2] = src[b2 + k2 * dil[2]];
            } else {
              for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
                const int64_t i2 = b2 + k2 * dil[2];
                r[k2] = (i2 >= 0 && i2 < in[2]) ? src[i2] : pad_value;
              }
            }
            r += ker[2];
          }
        }
      }
    }
  };
  if (tasks <= 1) {
    body(0, tasks);
  } else {
    parallel.For(tasks, body);
  }
}

void Im2RowBytesChannelsLast(const ConvGeometry& g, const uint8_t* xt, int64_t channels,
                             int64_t p_begin, int64_t p_count, uint8_t pad_value, uint8_t* rows,
                             int64_t row_stride, const Parallel& parallel) {
  HWY_DYNAMIC_DISPATCH(Im2RowBytesChannelsLastImpl)
  (g, xt, channels, p_begin, p_count, pad_value, rows, row_stride, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
