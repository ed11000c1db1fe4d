// Depthwise convolution sums on 8-bit data (kernels/quant/depthwise_q8.h).
//
// AVX-512 VBMI + VNNI (Highway's AVX3_DL target): 16 outputs of a row are one vector of int32
// lanes. Per input row and group of 4 taps, one 64-byte load of the input row, one byte permute
// (vpermb) that gives lane j the 4 bytes it needs (columns j * SW + 0..3 of the window), and one
// vpdpbusd that multiplies them by the 4 int8 weights (zero past the kernel's width) and adds
// the products to the lane: a 3x3 kernel takes 3 dot products per 16 outputs where the float32
// kernel takes 9 multiply-adds, and 2 permutes at stride 1 (two output rows share the permuted
// windows of the input rows they both read). Integer arithmetic throughout, so exact. No
// other target has a byte permute across the vector and a 4-way byte dot product: there the
// callers keep their portable path.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/depthwise_q8.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/quant/depthwise_q8.h"
#include "kernels/quant/dpbusd512-inl.h"        // Dpbusd512: the window dot products
#include "kernels/quant/round_narrow512-inl.h"  // RoundNarrow512: the fused requantization

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL
// Highway's AVX3_DL target enables VBMI but not the 512-bit VNNI instructions, which this CPU
// check and the functions' own target attribute add (as kernels/quant/qgemm.cc does).
inline bool HasVnni512() {
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
}
#endif

bool DepthwiseQ8AvailableImpl(const DepthwiseQ8Shape& s) {
#if HWY_TARGET == HWY_AVX3_DL
  return HasVnni512() && s.KW >= 1 && s.KW <= 8 && s.KH >= 1 && s.KH * s.KW <= 64 &&
         (s.SW == 1 || s.SW == 2) && s.SH >= 1 && s.OH >= 0 && s.OW >= 0;
#else
  (void)s;
  return false;
#endif
}

#if HWY_TARGET == HWY_AVX3_DL
// The target's own features are named again with VNNI: clang's target attribute replaces the
// ones Highway's pragma gives the function (VBMI's vpermb would be missing) instead of adding.
#define SIMPLECPP_DEPTHWISE_Q8_TARGET __attribute__((target(HWY_TARGET_STR ",avx512vnni")))

// What one block of output rows oy, oy + 1 (the second when rows_here > 1) and kV vectors of 16
// columns from ox0 reads: input rows [r_lo, r_hi) of the padded plane, the kernel's weight
// dwords wd [KH][groups] and the lane permute.
struct RowPairBlock {
  const uint8_t* plane;
  const int32_t* wd;
  __m512i vidx;
  int64_t W, SW, SH, KH, groups, oy, rows_here, r_lo, r_hi;
  int64_t oy0;  // the first output row of the sums buffer
};

// One channel's requantization in registers (RequantizeF32Vec's AVX-512 steps, whose bytes they
// are): the channel's bias is in the accumulators' start, its multiplier broadcast here.
struct ChannelRequant {
  RoundNarrow512 narrow;
  __m512 mult;
  float m;
  int32_t zp, lo, hi;
};

// The sums of one block, output rows oy (row0) and oy + 1 (row1) over kV vectors of 16 columns,
// two vectors (32 outputs, one RoundNarrow512 step) per level as named members: GCC keeps an
// array of vectors this size on the stack (storing and reloading it around the row loop), while
// members reached through constant paths stay in registers.
template <int kV>
struct BlockSums {
  static constexpr bool kPair = kV >= 2;  // this level's second vector
  __m512i row0a, row0b, row1a, row1b;
  BlockSums<(kV > 2 ? kV - 2 : 0)> rest;

  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void Start(__m512i start0, __m512i start1) {
    row0a = row0b = start0;
    row1a = row1b = start1;
    rest.Start(start0, start1);
  }

  // One input row's windows: per group g of 4 taps, one load and one lane permute per vector
  // (vector v's windows start at row + v * vstep + 4 * g), each window multiplied by the weight
  // dword w0[g] into row 0 (kUse0) and w1[g] into row 1 (kUse1).
  template <int kG, bool kUse0, bool kUse1>
  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void AddRow(const uint8_t* row, int64_t vstep,
                                                       __m512i vidx, const __m512i (&w0)[kG],
                                                       const __m512i (&w1)[kG]) {
    for (int g = 0; g < kG; ++g) {
      const __m512i wa = _mm512_permutexvar_epi8(vidx, _mm512_loadu_si512(row + 4 * g));
      if (kUse0) row0a = Dpbusd512(row0a, wa, w0[g]);
      if (kUse1) row1a = Dpbusd512(row1a, wa, w1[g]);
      if constexpr (kPair) {
        const __m512i wb = _mm512_permutexvar_epi8(vidx, _mm512_loadu_si512(row + vstep + 4 * g));
        if (kUse0) row0b = Dpbusd512(row0b, wb, w0[g]);
        if (kUse1) row1b = Dpbusd512(row1b, wb, w1[g]);
      }
    }
    rest.template AddRow<kG, kUse0, kUse1>(row + 2 * vstep, vstep, vidx, w0, w1);
  }

  // The sums from column `at` on into out0 (row 0) and out1 (row 1, when not null), rows of OW
  // outputs: int32 sums (T = int32_t), or requantized bytes, 32 per RoundNarrow512 step, the
  // last step masked to the row's end.
  template <typename T>
  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void Store(T* out0, T* out1, int64_t at, int64_t OW,
                                                      const ChannelRequant& r,
                                                      UndecidedLanes<4>& undecided) const {
    const int64_t n = std::min<int64_t>(kPair ? 32 : 16, OW - at);
    StoreRow(row0a, row0b, out0 + at, n, r, undecided);
    if (out1 != nullptr) StoreRow(row1a, row1b, out1 + at, n, r, undecided);
    rest.Store(out0, out1, at + 32, OW, r, undecided);
  }

 private:
  template <typename T>
  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE static void StoreRow(__m512i a, __m512i b, T* out,
                                                                int64_t n, const ChannelRequant& r,
                                                                UndecidedLanes<4>& undecided) {
    if constexpr (std::is_same_v<T, int32_t>) {
      (void)r;
      (void)undecided;
      const int64_t na = std::min<int64_t>(16, n), nb = n - na;
      _mm512_mask_storeu_epi32(out, static_cast<__mmask16>((uint32_t{1} << na) - 1), a);
      if (kPair && nb > 0) {
        _mm512_mask_storeu_epi32(out + 16, static_cast<__mmask16>((uint32_t{1} << nb) - 1), b);
      }
    } else {
      const __m512i second = kPair ? b : _mm512_setzero_si512();
      const __m512 f0 = _mm512_mul_ps(_mm512_cvtepi32_ps(a), r.mult);
      const __m512 f1 = _mm512_mul_ps(_mm512_cvtepi32_ps(second), r.mult);
      if (n == 32) {
        r.narrow.Store(f0, f1, out);
      } else {
        r.narrow.StoreFirst(f0, f1, static_cast<int>(n), out);
      }
      undecided.Note(r.narrow, f0, f1, a, second, out, static_cast<int>(n), &r.m, 0);
    }
  }
};
template <>
struct BlockSums<0> {
  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void Start(__m512i, __m512i) {}
  template <int kG, bool kUse0, bool kUse1>
  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void AddRow(const uint8_t*, int64_t, __m512i,
                                                       const __m512i (&)[kG],
                                                       const __m512i (&)[kG]) {}
  template <typename T>
  SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void Store(T*, T*, int64_t, int64_t,
                                                      const ChannelRequant&,
                                                      UndecidedLanes<4>&) const {}
};

// One block: the sums from the border sums (and with T an 8-bit type the channel's bias), the
// input rows [r_lo, r_hi) each permuted once for both output rows whose kernel covers it, then
// the stores. kG: the kernel's weight dwords per row (KW <= 8: 1 or 2).
template <int kV, int kG, typename T>
SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void RunRowPair(const RowPairBlock& b, int64_t ox0,
                                                         const int32_t (&border)[2], int64_t OW,
                                                         T* out, const ChannelRequant& r,
                                                         UndecidedLanes<4>& undecided) {
  BlockSums<kV> sums;
  sums.Start(_mm512_set1_epi32(border[0]), _mm512_set1_epi32(border[1]));
  const int64_t vstep = 16 * b.SW;
  const uint8_t* row = b.plane + b.r_lo * b.W + ox0 * b.SW;
  const bool two_rows = b.rows_here > 1;
  for (int64_t y = b.r_lo; y < b.r_hi; ++y, row += b.W) {
    // Kernel row of input row y for each output row (y >= oy * SH: ky0 >= 0).
    const int64_t ky0 = y - b.oy * b.SH, ky1 = ky0 - b.SH;
    const bool use0 = ky0 < b.KH;
    const bool use1 = two_rows && ky1 >= 0;
    __m512i w0[kG], w1[kG];
    for (int g = 0; g < kG; ++g) {
      w0[g] = use0 ? _mm512_set1_epi32(b.wd[ky0 * kG + g]) : _mm512_setzero_si512();
      w1[g] = use1 ? _mm512_set1_epi32(b.wd[ky1 * kG + g]) : _mm512_setzero_si512();
    }
    if (use0 && use1) {
      sums.template AddRow<kG, true, true>(row, vstep, b.vidx, w0, w1);
    } else if (use0) {
      sums.template AddRow<kG, true, false>(row, vstep, b.vidx, w0, w1);
    } else {
      sums.template AddRow<kG, false, true>(row, vstep, b.vidx, w0, w1);
    }
  }
  T* out0 = out + (b.oy - b.oy0) * OW;
  sums.Store(out0, two_rows ? out0 + OW : nullptr, ox0, OW, r, undecided);
}

// RunRowPair for the block's vectors (up to 4) and the kernel's dwords per row.
template <int kG, typename T>
SIMPLECPP_DEPTHWISE_Q8_TARGET HWY_INLINE void RunRowPairG(const RowPairBlock& b, int64_t ox0,
                                                          int64_t vectors,
                                                          const int32_t (&border)[2], int64_t OW,
                                                          T* out, const ChannelRequant& r,
                                                          UndecidedLanes<4>& undecided) {
  switch (vectors) {
    case 4:
      return RunRowPair<4, kG>(b, ox0, border, OW, out, r, undecided);
    case 3:
      return RunRowPair<3, kG>(b, ox0, border, OW, out, r, undecided);
    case 2:
      return RunRowPair<2, kG>(b, ox0, border, OW, out, r, undecided);
    default:
      return RunRowPair<1, kG>(b, ox0, border, OW, out, r, undecided);
  }
}

// The channels' sums into out (channel j at out + j * out_stride): int32 sums, or with rq
// (T an 8-bit type) requantized bytes.
template <typename T>
SIMPLECPP_DEPTHWISE_Q8_TARGET void SumsVnniChannels(const DepthwiseQ8Shape& s,
                                                    const DepthwiseQ8Channels& ch,
                                                    const uint8_t* planes,
                                                    const DepthwiseQ8Weights& w, T* out,
                                                    int64_t out_stride, const QGemmRequant* rq) {
  const int64_t groups = w.groups;
  const int64_t rows_end = s.rows_end < 0 ? s.H : s.rows_end;
  // Lane j (output column ox0 + j) takes window bytes j * SW + t, t < 4.
  alignas(64) uint8_t idx[64];
  for (int j = 0; j < 16; ++j) {
    for (int t = 0; t < 4; ++t) idx[4 * j + t] = static_cast<uint8_t>(j * s.SW + t);
  }
  RowPairBlock b;
  b.vidx = _mm512_load_si512(idx);
  b.W = s.W;
  b.SW = s.SW;
  b.SH = s.SH;
  b.KH = s.KH;
  b.groups = groups;
  // Two output rows of up to four vectors of 16 outputs at a time: eight independent vpdpbusd
  // chains hide its latency even on narrow images, and where the rows' windows overlap (stride 1
  // or a kernel taller than the stride) one permuted window of an input row feeds both.
  constexpr int64_t kVecs = 4;
  const int64_t oy_end = s.oy_end < 0 ? s.OH : std::min(s.oy_end, s.OH);
  b.oy0 = s.oy_begin;
  // Kept in locals (the byte stores could alias whatever is read through a pointer).
  ChannelRequant r{RoundNarrow512(rq ? rq->zp : 0, rq ? rq->lo : 0, rq ? rq->hi : 255),
                   _mm512_setzero_ps(),
                   0.0f,
                   rq ? rq->zp : 0,
                   rq ? rq->lo : 0,
                   rq ? rq->hi : 255};
  const int32_t* bias = rq ? rq->bias : nullptr;
  // Per output row, the kernel rows [lo, hi) that fall on image rows (the same for every
  // channel): computed once per call for up to kRangeRows rows, per channel beyond.
  constexpr int64_t kRangeRows = 256;
  uint8_t row_range[2 * kRangeRows];
  auto kernel_rows = [&](int64_t oy, int64_t* lo, int64_t* hi) {
    const int64_t top = oy * s.SH;
    *lo = std::clamp<int64_t>(s.rows_begin - top, 0, s.KH);
    *hi = std::clamp<int64_t>(rows_end - top, *lo, s.KH);
  };
  for (int64_t oy = s.oy_begin; oy < std::min(oy_end, s.oy_begin + kRangeRows); ++oy) {
    int64_t lo, hi;
    kernel_rows(oy, &lo, &hi);  // KH <= 64
    row_range[2 * (oy - s.oy_begin)] = static_cast<uint8_t>(lo);
    row_range[2 * (oy - s.oy_begin) + 1] = static_cast<uint8_t>(hi);
  }
  // A block notes at most 2 rows of 2 steps of 32 lanes.
  UndecidedLanes<4> undecided(r.zp, r.lo, r.hi);
  for (int64_t j = 0; j < ch.count; ++j) {
    const int64_t c = ch.first + j;
    b.wd = w.dwords.data() + c * s.KH * groups;
    const int32_t* prefix = w.row_prefix.data() + c * (s.KH + 1);
    b.plane = planes + (j / ch.mult) * ch.plane_stride;
    T* channel_out = out + j * out_stride;
    // The bias joins the sums in wrapping int32 (as RequantizeF32Vec adds it).
    const uint32_t start = bias ? static_cast<uint32_t>(bias[j]) : 0u;
    if (rq) {
      r.m = rq->mult[j * rq->mult_step];
      r.mult = _mm512_set1_ps(r.m);
    }
    for (int64_t oy = s.oy_begin; oy < oy_end; oy += 2) {
      b.oy = oy;
      b.rows_here = std::min<int64_t>(2, oy_end - oy);
      // Per output row: the pad byte times the sum of its kernel rows that fall on border rows
      // (known: exact integers), i.e. all kernel rows but the range [lo, hi) on image rows;
      // the image rows the pair reads.
      int32_t border[2] = {0, 0};
      for (int64_t i = 0; i < b.rows_here; ++i) {
        const int64_t at = oy + i - s.oy_begin;
        int64_t lo, hi;
        if (at < kRangeRows) {
          lo = row_range[2 * at];
          hi = row_range[2 * at + 1];
        } else {
          kernel_rows(oy + i, &lo, &hi);
        }
        const int32_t pad =
            static_cast<int32_t>(s.pad) * (prefix[s.KH] - (prefix[hi] - prefix[lo]));
        border[i] = static_cast<int32_t>(static_cast<uint32_t>(pad) + start);
      }
      b.r_lo = std::max<int64_t>(s.rows_begin, oy * s.SH);
      b.r_hi = std::min<int64_t>(rows_end, (oy + b.rows_here - 1) * s.SH + s.KH);
      for (int64_t ox0 = 0; ox0 < s.OW; ox0 += 16 * kVecs) {
        const int64_t vectors = std::min<int64_t>(kVecs, (s.OW - ox0 + 15) / 16);
        if (groups == 1) {
          RunRowPairG<1>(b, ox0, vectors, border, s.OW, channel_out, r, undecided);
        } else {
          RunRowPairG<2>(b, ox0, vectors, border, s.OW, channel_out, r, undecided);
        }
        undecided.Decide();
      }
    }
  }
}
#undef SIMPLECPP_DEPTHWISE_Q8_TARGET
#endif

// DepthwiseQ8Planes: per channel the rows from rows_begin on, each one after the other; a row
// may write up to 63 bytes past its end (the next row overwrites them; after the last one they
// fall in the slack).
void DepthwiseQ8PlanesImpl(const DepthwiseQ8Shape& s, const uint8_t* x, int64_t x_stride, int64_t w,
                           int64_t pad_left, uint8_t flip, int64_t count, uint8_t* planes,
                           int64_t plane_stride) {
  const int64_t rows_end = s.rows_end < 0 ? s.H : s.rows_end;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const __m512i vpad = _mm512_set1_epi8(static_cast<char>(s.pad));
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
  // Byte j of chunk c0 is x column c0 + j - pad_left where that lies in [0, w).
  auto inside = [&](int64_t c0) -> __mmask64 {
    const int64_t lo = std::clamp<int64_t>(pad_left - c0, 0, 64);
    const int64_t hi = std::clamp<int64_t>(pad_left + w - c0, 0, 64);
    const uint64_t below_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    const uint64_t below_lo = lo >= 64 ? ~uint64_t{0} : (uint64_t{1} << lo) - 1;
    return static_cast<__mmask64>(below_hi & ~below_lo);
  };
  // Every row of every channel takes the same chunks: their masks, where x's bytes go, and the
  // source offset (0 where no byte is read: masked lanes are not accessed), once per call for
  // rows up to kChunks * 64 bytes.
  constexpr int64_t kChunks = 16;
  const int64_t chunks = (s.W + 63) / 64;
  __mmask64 mask[kChunks];
  __m512i flips[kChunks];
  int64_t from[kChunks];
  for (int64_t k = 0; k < std::min(chunks, kChunks); ++k) {
    mask[k] = inside(64 * k);
    flips[k] = _mm512_maskz_mov_epi8(mask[k], vflip);
    from[k] = mask[k] == 0 ? 0 : 64 * k - pad_left;
  }
  for (int64_t c = 0; c < count; ++c) {
    uint8_t* row = planes + c * plane_stride + s.rows_begin * s.W;
    for (int64_t r = s.rows_begin; r < rows_end; ++r, row += s.W) {
      const uint8_t* src = x + c * x_stride + (r - s.rows_begin) * w;
      int64_t k = 0;
      for (; k < std::min(chunks, kChunks); ++k) {
        const __m512i v = _mm512_mask_loadu_epi8(vpad, mask[k], src + from[k]);
        _mm512_storeu_si512(row + 64 * k, _mm512_xor_si512(v, flips[k]));
      }
      for (; k < chunks; ++k) {
        const __mmask64 m = inside(64 * k);
        const uint8_t* at = m == 0 ? src : src + (64 * k - pad_left);
        const __m512i v = _mm512_mask_loadu_epi8(vpad, m, at);
        _mm512_storeu_si512(row + 64 * k, _mm512_xor_si512(v, _mm512_maskz_mov_epi8(m, vflip)));
      }
    }
  }
#else
  for (int64_t c = 0; c < count; ++c) {
    uint8_t* row = planes + c * plane_stride + s.rows_begin * s.W;
    for (int64_t r = s.rows_begin; r < rows_end; ++r, row += s.W) {
      const uint8_t* src = x + c * x_stride + (r - s.rows_begin) * w;
      for (int64_t col = 0; col < s.W; ++col) {
        const int64_t at = col - pad_left;
        row[col] = at >= 0 && at < w ? static_cast<uint8_t>(src[at] ^ flip) : s.pad;
      }
    }
  }
#endif
}

void DepthwiseQ8SumsImpl(const DepthwiseQ8Shape& s, const DepthwiseQ8Channels& ch,
                         const uint8_t* planes, const DepthwiseQ8Weights& w, int32_t* sums,
                         const QGemmRequant* rq) {
#if HWY_TARGET == HWY_AVX3_DL
  if (rq == nullptr) {
    SumsVnniChannels(s, ch, planes, w, sums, ch.sums_stride, nullptr);
  } else if (rq->out_signed) {
    SumsVnniChannels(s, ch, planes, w, static_cast<int8_t*>(rq->out), rq->ldo, rq);
  } else {
    SumsVnniChannels(s, ch, planes, w, static_cast<uint8_t*>(rq->out), rq->ldo, rq);
  }
#else
  (void)s;
  (void)ch;
  (void)planes;
  (void)w;
  (void)sums;
  (void)rq;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(DepthwiseQ8AvailableImpl);
HWY_EXPORT(DepthwiseQ8PlanesImpl);
HWY_EXPORT(DepthwiseQ8SumsImpl);

void DepthwiseQ8Plane(const DepthwiseQ8Shape& s, const uint8_t* x, int64_t w, int64_t pad_left,
                      uint8_t flip, uint8_t* plane) {
  HWY_DYNAMIC_DISPATCH(DepthwiseQ8PlanesImpl)(s, x, 0, w, pad_left, flip, 1, plane, 0);
}

void DepthwiseQ8Planes(const DepthwiseQ8Shape& s, const uint8_t* x, int64_t x_stride, int64_t w,
                       int64_t pad_left, uint8_t flip, int64_t count, uint8_t* planes,
                       int64_t plane_stride) {
  HWY_DYNAMIC_DISPATCH(DepthwiseQ8PlanesImpl)
  (s, x, x_stride, w, pad_left, flip, count, planes, plane_stride);
}

bool DepthwiseQ8Available(const DepthwiseQ8Shape& s) {
  return HWY_DYNAMIC_DISPATCH(DepthwiseQ8AvailableImpl)(s);
}

DepthwiseQ8Weights PrepareDepthwiseQ8Weights(int64_t kh, int64_t kw, const int8_t* w,
                                             int64_t channels) {
  DepthwiseQ8Weights p;
  p.KH = kh;
  p.KW = kw;
  p.groups = (kw + 3) / 4;
  p.dwords.assign(static_cast<size_t>(channels * kh * p.groups), 0);
  p.row_prefix.assign(static_cast<size_t>(channels * (kh + 1)), 0);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t ky = 0; ky < kh; ++ky) {
      const int8_t* row = w + (c * kh + ky) * kw;
      for (int64_t g = 0; g < p.groups; ++g) {
        int8_t b[4] = {0, 0, 0, 0};
        for (int64_t t = 0; t < 4 && 4 * g + t < kw; ++t) b[t] = row[4 * g + t];
        std::memcpy(&p.dwords[(c * kh + ky) * p.groups + g], b, 4);
      }
      int32_t sum = 0;
      for (int64_t t = 0; t < kw; ++t) sum += row[t];
      int32_t* prefix = p.row_prefix.data() + c * (kh + 1);
      prefix[ky + 1] = prefix[ky] + sum;
    }
  }
  return p;
}

void DepthwiseQ8Sums(const DepthwiseQ8Shape& s, const uint8_t* plane, const int8_t* w,
                     int32_t* sums) {
  const DepthwiseQ8Weights prepared = PrepareDepthwiseQ8Weights(s.KH, s.KW, w, 1);
  HWY_DYNAMIC_DISPATCH(DepthwiseQ8SumsImpl)
  (s, DepthwiseQ8Channels{}, plane, prepared, sums, nullptr);
}

void DepthwiseQ8SumsChannels(const DepthwiseQ8Shape& s, const DepthwiseQ8Channels& ch,
                             const uint8_t* planes, const DepthwiseQ8Weights& w, int32_t* sums) {
  HWY_DYNAMIC_DISPATCH(DepthwiseQ8SumsImpl)(s, ch, planes, w, sums, nullptr);
}

bool DepthwiseQ8FusesRequant(const DepthwiseQ8Shape& s, const QGemmRequant& rq, int64_t channels) {
  // The GEMM's tiles and this kernel requantize with the same steps under the same conditions.
  return rq.per_row && DepthwiseQ8Available(s) && QGemmFusesRequant(rq, channels, 1);
}

void DepthwiseQ8RequantChannels(const DepthwiseQ8Shape& s, const DepthwiseQ8Channels& ch,
                                const uint8_t* planes, const DepthwiseQ8Weights& w,
                                const QGemmRequant& rq) {
  HWY_DYNAMIC_DISPATCH(DepthwiseQ8SumsImpl)(s, ch, planes, w, nullptr, &rq);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
