// MatMulNBits with int8-quantized A (kernels/quant/matmul_nbits_q8.h has the contract).
//
// A is quantized once per call, on the calling thread, by scalar code shared by every target.
// The weights are then streamed once per row of A by tasks of kNBitsRowsPerTask outputs.
//
// AVX3_DL (with VNNI), blocks of 32, one weight row at a time (one sequential stream): 64 code
// bytes per step, 4-bit: 4 blocks, whose low nibbles are the 64 even weights and high nibbles
// the 64 odd ones, so A is permuted per 128 weights to [64 even | 64 odd] and two vpdpbusd
// multiply the unsigned codes by the int8 A after a mask and a shift; 8-bit: 2 blocks, one
// vpdpbusd. Each 128-bit lane of a result holds a quarter or half block's 4 partial sums; the
// steps of 16 blocks are folded into one vector of 16 block sums by an unpack tree, and the
// epilogue (zero point, scale, sum) runs on that vector.
// Everywhere else (other targets, other block sizes): 16-bit multiply-adds per block, the lanes
// of 4 blocks folded together, then the same epilogue in vectors.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/matmul_nbits_q8.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/gemm/gemm_internal.h"
#include "kernels/quant/matmul_nbits_q8.h"

#ifndef SIMPLECPP_KERNELS_MATMUL_NBITS_Q8_ONCE
#define SIMPLECPP_KERNELS_MATMUL_NBITS_Q8_ONCE
namespace simplecpp::kernels {
namespace nbits_q8 {

// Blocks per epilogue group: the 16 accumulators of the contract.
constexpr int64_t kGroup = 16;

// One call as the per-target code sees it: A already quantized.
struct Problem {
  int64_t m = 0;
  int64_t k_pad = 0;   // kb_pad * block_size
  int64_t kb_pad = 0;  // k_blocks rounded up to kGroup
  const int8_t* qa = nullptr;   // [m][k_pad], zero past K
  const float* sa = nullptr;    // [m][kb_pad], zero past the last block
  const float* asum = nullptr;  // [m][kb_pad], the blocks' sums of qa (exact integers)
  const NBitsWeights* w = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t ldy = 0;
};

// The contract's fixed tree over the 16 accumulators.
inline float ReduceLanes16(float* t) {
  for (int h = 8; h >= 1; h /= 2) {
    for (int i = 0; i < h; ++i) t[i] = t[i] + t[i + h];
  }
  return t[0];
}

}  // namespace nbits_q8
}  // namespace simplecpp::kernels
#endif  // SIMPLECPP_KERNELS_MATMUL_NBITS_Q8_ONCE

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

using nbits_q8::kGroup;

namespace hn = hwy::HWY_NAMESPACE;

// The portable path reads A as int16 in the order of the codes: steps of S code bytes (S = the
// lanes of D16); 4-bit: [S even | S odd] weights of 2S consecutive ones, 8-bit: k order.
template <class D16>
void WidenA(D16 d16, const nbits_q8::Problem& p, int16_t* HWY_RESTRICT out) {
  const int64_t S = static_cast<int64_t>(hn::Lanes(d16));
  for (int64_t i = 0; i < p.m; ++i) {
    const int8_t* src = p.qa + i * p.k_pad;
    int16_t* dst = out + i * p.k_pad;
    if (p.w->bits == 8) {
      for (int64_t k = 0; k < p.k_pad; ++k) dst[k] = src[k];
      continue;
    }
    for (int64_t s = 0; s < p.k_pad; s += 2 * S) {
      for (int64_t j = 0; j < S; ++j) {
        dst[s + j] = src[s + 2 * j];
        dst[s + S + j] = src[s + 2 * j + 1];
      }
    }
  }
}

// sum + the pairwise products of a and b (vpmaddwd, then an add).
template <class D32, class V16>
HWY_INLINE hn::Vec<D32> AddPairProducts(D32 d32, V16 a, V16 b, hn::Vec<D32> sum,
                                        hn::Vec<D32>& sum1) {
#if HWY_TARGET == HWY_AVX3_DL && defined(__clang__)
  // Highway 1.0.3's AVX3_DL target string enables "avxvnni" (the VEX encoding) rather than
  // "avx512vnni", and clang then fuses vpmaddwd + vpaddd on 128- and 256-bit vectors into a VEX
  // vpdpwssd, which CPUs with AVX512-VNNI but without AVX-VNNI (Zen 4, Ice Lake) fault on. An
  // empty asm between the two keeps them two instructions: the same values.
  auto products = hn::ReorderWidenMulAccumulate(d32, a, b, hn::Zero(d32), sum1);
  asm("" : "+v"(products.raw));
  return hn::Add(sum, products);
#else
  return hn::ReorderWidenMulAccumulate(d32, a, b, sum, sum1);
#endif
}

// The exact integer sum of one block's codes times A, as lanes to be summed (any order: exact).
template <bool kFour, class D16>
HWY_INLINE hn::Vec<hn::Repartition<int32_t, D16>> BlockLanes(D16 d16, int64_t blob,
                                                             const uint8_t* HWY_RESTRICT codes,
                                                             const int16_t* HWY_RESTRICT qb) {
  const hn::Repartition<int32_t, D16> d32;
  const hn::Rebind<uint8_t, D16> d8;
  const int64_t S = static_cast<int64_t>(hn::Lanes(d16));
  auto s0 = hn::Zero(d32), s1 = hn::Zero(d32);
  for (int64_t t = 0; t < blob; t += S) {
    const auto v = hn::PromoteTo(d16, hn::LoadU(d8, codes + t));
    if constexpr (kFour) {
      s0 = AddPairProducts(d32, hn::And(v, hn::Set(d16, 15)), hn::LoadU(d16, qb + 2 * t), s0,
                           s1);
      s0 = AddPairProducts(d32, hn::ShiftRight<4>(v), hn::LoadU(d16, qb + 2 * t + S), s0, s1);
    } else {
      s0 = AddPairProducts(d32, v, hn::LoadU(d16, qb + t), s0, s1);
    }
  }
  return hn::Add(s0, s1);
}

// Lane m of each 128-bit block of the result: the sum of that block's 4 lanes of v[m].
template <class D, class V>
HWY_INLINE V Fold4(D d, const V* v) {
  const hn::Repartition<int64_t, D> d64;
  const V s01 = hn::Add(hn::InterleaveLower(d, v[0], v[1]), hn::InterleaveUpper(d, v[0], v[1]));
  const V s23 = hn::Add(hn::InterleaveLower(d, v[2], v[3]), hn::InterleaveUpper(d, v[2], v[3]));
  const auto a = hn::BitCast(d64, s01), b = hn::BitCast(d64, s23);
  return hn::Add(hn::BitCast(d, hn::InterleaveLower(d64, a, b)),
                 hn::BitCast(d, hn::InterleaveUpper(d64, a, b)));
}

// The 128-bit blocks of v added into one (4 int32 lanes), stored to out.
template <class D, class V>
HWY_INLINE void StoreBlockSum(D d, V v, int32_t* HWY_RESTRICT out) {
  if constexpr (hn::MaxLanes(D()) > 4) {
    const hn::Half<D> dh;
    StoreBlockSum(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)), out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// Output n for row i of A, any shape NBitsQ8Applies accepts: each block's exact integer sum from
// 16-bit multiply-adds (pairwise into 32 bits), 4 blocks' lanes folded together, then the
// contract's epilogue 16 blocks at a time.
template <bool kFour, class D16>
float RowPortable(D16 d16, const nbits_q8::Problem& p, const int16_t* HWY_RESTRICT qa16,
                  int64_t i, int64_t n) {
  const hn::Repartition<int32_t, D16> d32;
  const hn::CappedTag<float, kGroup> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(df)> d8f;
  using VF = decltype(hn::Zero(df));
  using VI = decltype(hn::Zero(d32));
  constexpr size_t L = hn::MaxLanes(decltype(df)());
  constexpr size_t kVecs = kGroup / L;
  const NBitsWeights& w = *p.w;
  const int64_t kb = w.k_blocks(), blob = w.blob_bytes();
  const int64_t bs = w.block_size;
  const float* sa = p.sa + i * p.kb_pad;
  const float* asum = p.asum + i * p.kb_pad;
  const uint8_t* row = w.packed + n * kb * blob;
  const float* scales = w.scales + n * kb;
  const uint8_t* zrow =
      w.zp_kind == NBitsZeroPoints::kPackedU8 ? w.zp_packed + n * w.zp_row_bytes() : nullptr;
  const VF default_zp = hn::Set(df, static_cast<float>(1 << (w.bits - 1)));
  VF acc[kVecs];
  for (size_t v = 0; v < kVecs; ++v) acc[v] = hn::Zero(df);
  for (int64_t g = 0; g < kb; g += kGroup) {
    const int64_t rem = std::min(kGroup, kb - g);
    HWY_ALIGN int32_t sums[kGroup];
    HWY_ALIGN float sc[kGroup];
    HWY_ALIGN uint8_t zb[kGroup];
    for (int64_t c = 0; c < kGroup; c += 4) {
      VI v[4];
      for (int64_t q = 0; q < 4; ++q) {
        const int64_t b = g + c + q;
        v[q] = b < kb ? BlockLanes<kFour>(d16, blob, row + b * blob, qa16 + b * bs) : hn::Zero(d32);
      }
      if constexpr (hn::MaxLanes(decltype(d32)()) >= 4) {
        StoreBlockSum(d32, Fold4(d32, v), sums + c);
      } else {
        for (int64_t q = 0; q < 4; ++q) sums[c + q] = hn::GetLane(hn::SumOfLanes(d32, v[q]));
      }
    }
    // Zero points as bytes (padding blocks: 0) and scales (padding: 0) of the group.
    if (zrow != nullptr) {
      for (int64_t j = 0; j < kGroup; ++j) {
        const int64_t b = g + j;
        zb[j] = j >= rem ? 0 : kFour ? (zrow[b / 2] >> (4 * (b & 1))) & 15 : zrow[b];
      }
    }
    const float* sg = scales + g;
    if (rem < kGroup) {
      for (int64_t j = 0; j < kGroup; ++j) sc[j] = j < rem ? scales[g + j] : 0.0f;
      sg = sc;
    }
    for (size_t v = 0; v < kVecs; ++v) {
      const size_t j = v * L;
      const VF zp = zrow != nullptr ? hn::ConvertTo(df, hn::BitCast(di, hn::PromoteTo(
                                                            hn::RebindToUnsigned<decltype(df)>(),
                                                            hn::Load(d8f, zb + j))))
                                    : default_zp;
      // Exact: integers below 2^24 (see the header).
      const VF f = hn::Sub(hn::ConvertTo(df, hn::Load(di, sums + j)),
                           hn::Mul(zp, hn::LoadU(df, asum + g + j)));
      const VF scale = hn::Mul(hn::LoadU(df, sg + j), hn::LoadU(df, sa + g + j));
      acc[v] = hn::Add(acc[v], hn::Mul(f, scale));
    }
  }
  HWY_ALIGN float t[kGroup];
  for (size_t v = 0; v < kVecs; ++v) hn::Store(acc[v], df, t + v * L);
  return nbits_q8::ReduceLanes16(t);
}

// The portable path over the tasks, with D16 steps of at most half a 4-bit block.
template <class D16>
void RunPortable(D16 d16, const nbits_q8::Problem& p, const Parallel& parallel) {
  const NBitsWeights& w = *p.w;
  static thread_local ThreadScratch tls_qa16;
  int16_t* const qa16 = reinterpret_cast<int16_t*>(tls_qa16.Get((p.m * p.k_pad + 1) / 2));
  WidenA(d16, p, qa16);
  const int64_t tasks = (w.n + kNBitsRowsPerTask - 1) / kNBitsRowsPerTask;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    const int64_t n_end = std::min(w.n, t1 * kNBitsRowsPerTask);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t n = t0 * kNBitsRowsPerTask; n < n_end; ++n) {
        const int16_t* qi = qa16 + i * p.k_pad;
        const float v = w.bits == 4 ? RowPortable<true>(d16, p, qi, i, n)
                                    : RowPortable<false>(d16, p, qi, i, n);
        p.y[i * p.ldy + n] = p.bias != nullptr ? v + p.bias[n] : v;
      }
    }
  });
}

#if HWY_TARGET == HWY_AVX3_DL
// Highway's AVX3_DL target enables VBMI but not the 512-bit VNNI instructions, which this CPU
// check and the functions' own target attribute add (as kernels/quant/qgemm.cc does).
inline bool HasVnni512() {
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
}

// Short rows (at most kPairRowBytes of codes) go two at a time, sharing A's loads and the
// per-group setup. Longer rows go one at a time: two streams a row apart were slower
// (bench/README.md).
constexpr int64_t kPairRowBytes = 512;

// How far ahead of each weight row stream the kernel prefetches: 8-bit rows, which bring twice
// the bytes per step, gain from a longer distance; for 4-bit ones it made no difference
// (bench/README.md).
template <int kBits>
constexpr int64_t kPrefetchBytes = kBits == 8 ? 8192 : 768;

// Mask of the first `count` (0..64) bytes.
inline __mmask64 FirstBytes(int64_t count) {
  return count >= 64 ? ~__mmask64{0} : ((__mmask64{1} << count) - 1);
}

// The 16 integer zero points of blocks b0 .. b0 + 15 of one row as float32 (4-bit packed).
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) inline __m512 ZeroPoints4(
    const uint8_t* z, int64_t bytes) {
  const __m128i x = _mm_maskz_loadu_epi8(static_cast<__mmask16>(FirstBytes(bytes)), z);
  const __m128i v = _mm_cvtepu8_epi16(x);
  // Each byte z as a u16 lane becomes (z & 15) | (z >> 4) << 8: as bytes, the low nibble (the
  // even block) then the high one.
  const __m128i t = _mm_or_si128(_mm_and_si128(v, _mm_set1_epi16(15)),
                                 _mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0xF0)), 4));
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(t));
}

// Sums of 4 vectors' 128-bit lanes: lane 4 * L + m of the result is the sum of the 4 int32
// lanes of 128-bit lane L of v[m].
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) inline __m512i FoldLanes(const __m512i* v) {
  const __m512i s01 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
  const __m512i s23 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
}

// The integer sums of blocks b0 .. b0 + 15 of one row (lane j: block b0 + j; zero past the
// row's last block, rem blocks are real). 4-bit: 4 steps of 64 code bytes (4 blocks each), qp
// permuted; 8-bit: 8 steps of 64 bytes (2 blocks each), qp in k order.
template <int kBits>
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) inline __m512i BlockSums(
    const uint8_t* HWY_RESTRICT src, const __m512i* HWY_RESTRICT qv, int64_t rem) {
  constexpr int kSteps = kBits == 4 ? 4 : 8;
  constexpr int64_t kBytesPerBlock = 32 * kBits / 8;
  __m512i v[kSteps];
  for (int c = 0; c < kSteps; ++c) {
    const uint8_t* p = src + c * 64;
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes<kBits>), _MM_HINT_T0);
    const int64_t bytes = (rem - c * (64 / kBytesPerBlock)) * kBytesPerBlock;
    const __m512i codes = rem == kGroup ? _mm512_loadu_si512(p)
                                        : _mm512_maskz_loadu_epi8(
                                              FirstBytes(std::max<int64_t>(0, bytes)), p);
    if constexpr (kBits == 4) {
      const __m512i nib = _mm512_set1_epi8(0x0F);
      const __m512i lo = _mm512_and_si512(codes, nib);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(codes, 4), nib);
      v[c] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, qv[2 * c]), hi,
                                 qv[2 * c + 1]);
    } else {
      v[c] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, qv[c]);
    }
  }
  if constexpr (kBits == 4) {
    // Lane 4 * L + m holds block 4 * m + L.
    const __m512i natural =
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_epi32(natural, FoldLanes(v));
  } else {
    // Each block is two 128-bit lanes: lane 4 * L + m of a fold holds half L % 2 of block
    // 2 * m + L / 2 (of its 4 steps). Adding the 128-bit lanes pairwise leaves whole blocks in
    // lanes 0 and 2 of each fold; gathering those four gives lane 4 * L + m = block 2 * m +
    // (L & 1) + 8 * (L >> 1).
    const __m512i lo = FoldLanes(v), hi = FoldLanes(v + 4);
    const __m512i lo2 = _mm512_add_epi32(lo, _mm512_shuffle_i32x4(lo, lo, 0xB1));
    const __m512i hi2 = _mm512_add_epi32(hi, _mm512_shuffle_i32x4(hi, hi, 0xB1));
    const __m512i sums = _mm512_shuffle_i32x4(lo2, hi2, 0x88);
    const __m512i natural =
        _mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
    return _mm512_permutexvar_epi32(natural, sums);
  }
}

// nbits_q8::ReduceLanes16 in registers: each step adds the same two lanes as the scalar tree
// (lane i += lane i + h), so the bits are the same.
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) inline float ReduceLanes16(__m512 t) {
  t = _mm512_add_ps(t, _mm512_shuffle_f32x4(t, t, 0x4E));  // h = 8: 256-bit halves swapped
  t = _mm512_add_ps(t, _mm512_shuffle_f32x4(t, t, 0xB1));  // h = 4: 128-bit lanes swapped
  t = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4E));        // h = 2: 64-bit pairs swapped
  t = _mm512_add_ps(t, _mm512_permute_ps(t, 0xB1));        // h = 1: neighbours swapped
  return _mm512_cvtss_f32(t);
}

// Outputs n .. n + R - 1 for row i of A; blocks of 32; qp: A in the order BlockSums reads. One
// row at a time (R = 1) is a single sequential stream of codes, which the hardware prefetchers
// follow better than the interleaved streams of several rows (bench/README.md); R = 2 for short
// rows (kPairRowBytes).
template <int kBits, int R>
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) inline void RowsVnni(
    const nbits_q8::Problem& p, const int8_t* HWY_RESTRICT qp, int64_t i, int64_t n,
    float* HWY_RESTRICT out) {
  constexpr int64_t kBytesPerBlock = 32 * kBits / 8;
  const NBitsWeights& w = *p.w;
  const int64_t kb = w.k_blocks(), zp_row = w.zp_row_bytes();
  const float* sa = p.sa + i * p.kb_pad;
  const float* asum = p.asum + i * p.kb_pad;
  const uint8_t* row = w.packed + n * kb * kBytesPerBlock;
  const float* scales = w.scales + n * kb;
  const uint8_t* zps =
      w.zp_kind == NBitsZeroPoints::kPackedU8 ? w.zp_packed + n * zp_row : nullptr;
  const __m512 default_zp = _mm512_set1_ps(static_cast<float>(1 << (kBits - 1)));
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b0 = 0; b0 < kb; b0 += kGroup) {
    const int64_t rem = std::min(kGroup, kb - b0);
    // 8 vectors of A per group of 16 blocks (512 weights), in the order of the codes.
    __m512i qv[8];
    for (int c = 0; c < 8; ++c) qv[c] = _mm512_loadu_si512(qp + b0 * 32 + c * 64);
    const __mmask16 valid = static_cast<__mmask16>((1u << rem) - 1);
    const __m512 asum16 = _mm512_loadu_ps(asum + b0), sa16 = _mm512_loadu_ps(sa + b0);
    for (int r = 0; r < R; ++r) {
      const __m512i sums =
          BlockSums<kBits>(row + (r * kb + b0) * kBytesPerBlock, qv, rem);
      __m512 zp = default_zp;
      if (zps != nullptr) {
        const uint8_t* z = zps + r * zp_row;
        zp = kBits == 4 ? ZeroPoints4(z + b0 / 2, (rem + 1) / 2)
                        : _mm512_cvtepi32_ps(
                              _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(valid, z + b0)));
      }
      const __m512 f = _mm512_sub_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(zp, asum16));
      const __m512 scale =
          _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, scales + r * kb + b0), sa16);
      acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(f, scale));
    }
  }
  for (int r = 0; r < R; ++r) out[r] = ReduceLanes16(acc[r]);
}

// qp [m][k_pad] = qa with each 128 weights reordered to [64 even | 64 odd] (4-bit codes).
void PermuteForVnni(const nbits_q8::Problem& p, int8_t* HWY_RESTRICT qp) {
  for (int64_t i = 0; i < p.m; ++i) {
    const int8_t* src = p.qa + i * p.k_pad;
    int8_t* dst = qp + i * p.k_pad;
    for (int64_t c = 0; c < p.k_pad; c += 128) {
      for (int64_t t = 0; t < 64; ++t) {
        dst[c + t] = src[c + 2 * t];
        dst[c + 64 + t] = src[c + 2 * t + 1];
      }
    }
  }
}
#endif  // HWY_TARGET == HWY_AVX3_DL

void GemvNBitsQ8Impl(const nbits_q8::Problem& p, const Parallel& parallel) {
  const NBitsWeights& w = *p.w;
#if HWY_TARGET == HWY_AVX3_DL
  if (HasVnni512() && w.block_size == 32) {
    auto finish = [&p](int64_t i, int64_t n, float v) {
      p.y[i * p.ldy + n] = p.bias != nullptr ? v + p.bias[n] : v;
    };
    const int64_t tasks = (w.n + kNBitsRowsPerTask - 1) / kNBitsRowsPerTask;
    const int8_t* qp = p.qa;  // 8-bit codes are in k order, as qa
    if (w.bits == 4) {
      static thread_local ThreadScratch tls_qp;
      int8_t* const permuted = reinterpret_cast<int8_t*>(tls_qp.Get((p.m * p.k_pad + 3) / 4));
      PermuteForVnni(p, permuted);
      qp = permuted;
    }
    const bool four = w.bits == 4;
    const bool pairs = w.k_blocks() * 32 * w.bits / 8 <= kPairRowBytes;
    parallel.For(tasks, [&](int64_t t0, int64_t t1) {
      const int64_t n_end = std::min(w.n, t1 * kNBitsRowsPerTask);
      for (int64_t i = 0; i < p.m; ++i) {
        const int8_t* qpi = qp + i * p.k_pad;
        int64_t n = t0 * kNBitsRowsPerTask;
        float out[2];
        for (; pairs && n + 2 <= n_end; n += 2) {
          if (four) {
            RowsVnni<4, 2>(p, qpi, i, n, out);
          } else {
            RowsVnni<8, 2>(p, qpi, i, n, out);
          }
          finish(i, n, out[0]);
          finish(i, n + 1, out[1]);
        }
        for (; n < n_end; ++n) {
          if (four) {
            RowsVnni<4, 1>(p, qpi, i, n, out);
          } else {
            RowsVnni<8, 1>(p, qpi, i, n, out);
          }
          finish(i, n, out[0]);
        }
      }
    });
    return;
  }
#endif
  // Steps of S code bytes, S <= a 4-bit block's bytes (8 for blocks of 16).
  if (w.blob_bytes() < 16) {
    RunPortable(hn::CappedTag<int16_t, 8>(), p, parallel);
  } else {
    RunPortable(hn::CappedTag<int16_t, 16>(), p, parallel);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(GemvNBitsQ8Impl);

namespace {

// One row of A, per block: the contract's sa, qa and the sum of qa (zero past K and past the
// last block up to kb_pad).
void QuantizeRow(const float* a, int64_t k, int64_t block_size, int64_t kb_pad, int8_t* qa,
                 float* sa, float* asum) {
  for (int64_t b = 0; b < kb_pad; ++b) {
    const int64_t k0 = b * block_size, k1 = std::min(k, k0 + block_size);
    int8_t* q = qa + k0;
    std::fill(q, q + block_size, int8_t{0});
    sa[b] = 0.0f;
    asum[b] = 0.0f;
    if (k0 >= k) continue;
    float amax = 0.0f;
    bool finite = true;
    for (int64_t j = k0; j < k1; ++j) {
      finite = finite && std::isfinite(a[j]);
      amax = std::max(amax, std::fabs(a[j]));
    }
    if (!finite) {
      sa[b] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    if (amax == 0.0f) continue;
    sa[b] = amax / 127.0f;
    const float inv = 127.0f / amax;
    int32_t sum = 0;
    for (int64_t j = k0; j < k1; ++j) {
      // A subnormal amax overflows 127 / amax: the quotient then takes the scaling instead.
      const float x = std::isfinite(inv) ? a[j] * inv : a[j] / amax * 127.0f;
      const float r = std::min(127.0f, std::max(-127.0f, std::nearbyint(x)));
      q[j - k0] = static_cast<int8_t>(r);
      sum += q[j - k0];
    }
    asum[b] = static_cast<float>(sum);
  }
}

}  // namespace

bool NBitsQ8Applies(const NBitsWeights& w) {
  return (w.bits == 4 || w.bits == 8) && w.block_size >= 16 && w.block_size <= 256 &&
         w.zp_kind != NBitsZeroPoints::kFloat32 && w.block_min == nullptr;
}

void GemvNBitsQ8(int64_t m, const float* a, int64_t lda, const NBitsWeights& w, const float* bias,
                 float* y, int64_t ldy, const Parallel& parallel) {
  if (m <= 0 || w.n <= 0) return;
  nbits_q8::Problem p;
  p.m = m;
  p.kb_pad = (w.k_blocks() + nbits_q8::kGroup - 1) / nbits_q8::kGroup * nbits_q8::kGroup;
  p.k_pad = p.kb_pad * w.block_size;
  // Per-thread scratch reused across calls: decode quantizes A once per weight matrix per token.
  static thread_local ThreadScratch tls_qa, tls_sa, tls_asum;
  int8_t* const qa = reinterpret_cast<int8_t*>(tls_qa.Get((m * p.k_pad + 3) / 4));
  float* const sa = tls_sa.Get(m * p.kb_pad);
  float* const asum = tls_asum.Get(m * p.kb_pad);
  for (int64_t i = 0; i < m; ++i) {
    QuantizeRow(a + i * lda, w.k, w.block_size, p.kb_pad, qa + i * p.k_pad, sa + i * p.kb_pad,
                asum + i * p.kb_pad);
  }
  p.qa = qa;
  p.sa = sa;
  p.asum = asum;
  p.w = &w;
  p.bias = bias;
  p.y = y;
  p.ldy = ldy;
  HWY_DYNAMIC_DISPATCH(GemvNBitsQ8Impl)(p, parallel);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
