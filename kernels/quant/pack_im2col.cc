// PackedQB::RepackIm2Col (kernels/quant/qgemm.h): the packed panels of a convolution's im2col
// straight from its channels-first input, without the [K, positions] matrix in between.
//
// AVX-512 VBMI + VNNI (Highway's AVX3_DL target): 16 output positions of one output row are one
// vector of the panel's layout (position j's 4 taps of a k-quad in 32-bit lane j). The taps of a
// quad lie on at most 4 input rows (one per tap); per such row, one 64-byte load of the bytes
// the 16 positions read (masked to the image: the pad byte elsewhere) and one byte permute that
// puts each of the row's taps in its lane and byte, merged into the quad's vector. Then the flip
// to b', one store, and one vpdpbusd against bytes of 1 for the column sums. Sixteen positions
// that span two output rows, and every other target, take the byte-exact scalar / two-step path.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/pack_im2col.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/conv/conv_geometry_internal.h"  // WidenTo3
#include "kernels/quant/dpbusd512-inl.h"          // Dpbusd512: the column sums
#include "kernels/quant/qgemm.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL
#define SIMPLECPP_PACK_IM2COL_TARGET __attribute__((target(HWY_TARGET_STR ",avx512vnni")))

// The bytes 16 output positions read from one input row at column stride SW: 15 * SW + KW.
inline int64_t RowSpan(int64_t sw, int64_t kw) { return 15 * sw + kw; }
// Input rows (channel, ky) a call keeps loaded per 16 positions.
constexpr int64_t kMaxRowSlots = 32;
#endif

// Whether this target packs g's im2col directly: 1-D or 2-D, no dilation, column stride 1 or 2,
// 16 positions' taps of an input row within one 64-byte load, at most kMaxRowSlots input rows
// (channels x kernel rows).
bool PackIm2ColAvailableImpl(const ConvGeometry& geometry, int64_t channels) {
#if HWY_TARGET == HWY_AVX3_DL
  static const bool has_vnni = __builtin_cpu_supports("avx512vnni");
  const ConvGeometry3 g = WidenTo3(geometry);
  return has_vnni && geometry.rank <= 2 && g.in[0] == 1 && g.kernel[0] == 1 &&
         g.dilation[1] == 1 && g.dilation[2] == 1 && (g.stride[2] == 1 || g.stride[2] == 2) &&
         RowSpan(g.stride[2], g.kernel[2]) <= 64 && channels * g.kernel[1] <= kMaxRowSlots;
#else
  (void)geometry;
  (void)channels;
  return false;
#endif
}

#if HWY_TARGET == HWY_AVX3_DL
// One input row's share of a k-quad: the taps on row (channel, ky) as lane bytes.
// (Plain bytes, not vectors: std::vector storage need not be 64-byte aligned.)
// A quad whose taps lie on at most two input rows (every quad where KW >= 3) is one two-source
// permute instead: idx bytes of the second row carry bit 6.
struct QuadPair {
  uint8_t idx[64];
  int64_t slot_a, slot_b;
  uint64_t real;  // the lane bytes of real taps (0 past K)
};
struct QuadRow {
  uint8_t idx[64];  // lane j, byte i: the row byte of tap i at position j (j * SW + kx)
  int64_t slot;     // the input row: channel * KH + ky
  uint64_t bytes;   // the lane bytes of this row's taps
};


// Positions [p, p + count) of one output row oy from column ox0 (count <= 16), quad by quad
// into the half panel at `half` (lane j = position p + j), b' = byte ^ flip, the others 0.
SIMPLECPP_PACK_IM2COL_TARGET void PackHalfScalar(const ConvGeometry3& g, const uint8_t* x,
                                                 int64_t k, int64_t quads, int64_t p,
                                                 int64_t count, uint8_t pad, uint8_t flip,
                                                 int8_t* half, int64_t quad_stride,
                                                 uint32_t* sums) {
  const int64_t ksize = g.kernel[1] * g.kernel[2], in_size = g.in[1] * g.in[2];
  for (int64_t j = 0; j < count; ++j) {
    const int64_t oy = (p + j) / g.out[2], ox = (p + j) % g.out[2];
    uint32_t sum = 0;
    for (int64_t q = 0; q < quads; ++q) {
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t t = 4 * q + i;
        uint8_t v = 0;
        if (t < k) {
          const int64_t c = t / ksize, ky = t % ksize / g.kernel[2], kx = t % g.kernel[2];
          const int64_t iy = oy * g.stride[1] + ky - g.pad[1];
          const int64_t ix = ox * g.stride[2] + kx - g.pad[2];
          const bool inside = iy >= 0 && iy < g.in[1] && ix >= 0 && ix < g.in[2];
          v = static_cast<uint8_t>((inside ? x[c * in_size + iy * g.in[2] + ix] : pad) ^ flip);
        }
        half[q * quad_stride + 4 * j + i] = static_cast<int8_t>(v);
        sum += static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(v)));
      }
    }
    sums[j] = sum;
  }
}

SIMPLECPP_PACK_IM2COL_TARGET void PackIm2ColVnni(const ConvGeometry3& g, const uint8_t* x,
                                                 int64_t channels, int64_t p_begin, int64_t n,
                                                 uint8_t pad, uint8_t flip, int8_t* dst,
                                                 uint32_t* sums) {
  const int64_t KW = g.kernel[2], ksize = g.kernel[1] * KW;
  const int64_t k = channels * ksize, quads = (k + 3) / 4;
  const int64_t H = g.in[1], W = g.in[2], OW = g.out[2], SW = g.stride[2];
  const int64_t in_size = H * W;
  // Per quad, its input rows (consecutive taps on one row share it): at most 4.
  static thread_local std::vector<QuadRow> rows;
  static thread_local std::vector<int64_t> first_row;  // [quads + 1]
  rows.clear();
  first_row.assign(static_cast<size_t>(quads + 1), 0);
  static thread_local std::vector<uint8_t> quad_flip;  // [quads][64]: flip on real taps
  quad_flip.resize(static_cast<size_t>(quads * 64));
  for (int64_t q = 0; q < quads; ++q) {
    first_row[q] = static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 16; ++j) quad_flip[q * 64 + 4 * j + i] = 4 * q + i < k ? flip : 0;
    }
    for (int64_t i = 0; i < 4 && 4 * q + i < k;) {
      const int64_t t = 4 * q + i, c = t / ksize, ky = t % ksize / KW;
      QuadRow r;
      r.slot = c * g.kernel[1] + ky;
      std::memset(r.idx, 0, sizeof(r.idx));
      r.bytes = 0;
      // The following taps of the quad on the same row.
      for (; i < 4 && 4 * q + i < k; ++i) {
        const int64_t ti = 4 * q + i;
        if (ti / ksize != c || ti % ksize / KW != ky) break;
        const int64_t kx = ti % KW;
        for (int64_t j = 0; j < 16; ++j) {
          r.idx[4 * j + i] = static_cast<uint8_t>(j * SW + kx);
          r.bytes |= uint64_t{1} << (4 * j + i);
        }
      }
      rows.push_back(r);
    }
  }
  first_row[quads] = static_cast<int64_t>(rows.size());
  static thread_local std::vector<QuadPair> pairs;
  pairs.resize(static_cast<size_t>(quads));
  bool two_rows = true;
  for (int64_t q = 0; q < quads && two_rows; ++q) {
    const int64_t count = first_row[q + 1] - first_row[q];
    two_rows = count <= 2;
    if (!two_rows || count == 0) continue;
    QuadPair& qp = pairs[q];
    const QuadRow& a = rows[first_row[q]];
    const QuadRow& b = rows[first_row[q + 1] - 1];
    qp.slot_a = a.slot;
    qp.slot_b = b.slot;
    qp.real = a.bytes | b.bytes;
    for (int64_t i = 0; i < 64; ++i) {
      const bool second = count == 2 && ((b.bytes >> i) & 1) != 0;
      qp.idx[i] = static_cast<uint8_t>(second ? b.idx[i] | 64 : a.idx[i]);
    }
  }
  const QuadPair* const quad_pairs = pairs.data();
  // Plain pointers for the loops (a thread_local may be reached through a call per access).
  const QuadRow* const quad_rows = rows.data();
  const int64_t* const quad_first = first_row.data();
  const uint8_t* const flips = quad_flip.data();
  const __m512i vpad = _mm512_set1_epi8(static_cast<char>(pad));
  const __m512i ones = _mm512_set1_epi8(1);
  const int64_t quad_stride = PackedQB::kNR * 4;  // bytes from one quad of a panel to the next
  const int64_t span = RowSpan(SW, KW);
  // Per output row, each input row slot's start in x (nullptr: a padding row).
  const int64_t slots = channels * g.kernel[1];
  const uint8_t* slot_row[kMaxRowSlots];
  int64_t slot_oy = -1;
  alignas(64) __m512i row_vec[kMaxRowSlots];
  for (int64_t h = 0; h * 16 < n; ++h) {
    const int64_t p = p_begin + 16 * h, count = std::min<int64_t>(16, n - 16 * h);
    // The half panel of positions 16h.. : panel 16h / 32, columns (16h % 32)...
    int8_t* half = dst + (16 * h / PackedQB::kNR) * quads * quad_stride + (16 * h % 32) * 4;
    const int64_t oy = p / OW, ox0 = p % OW;
    if (count < 16 || ox0 + 16 > OW) {
      PackHalfScalar(g, x, k, quads, p, count, pad, flip, half, quad_stride, sums + 16 * h);
      continue;
    }
    // Row bytes [col0, col0 + span) of the image, the pad byte outside it.
    const int64_t col0 = ox0 * SW - g.pad[2];
    const int64_t lo = std::clamp<int64_t>(-col0, 0, span);
    const int64_t hi = std::clamp<int64_t>(W - col0, lo, span);
    const __mmask64 load = static_cast<__mmask64>(
        (hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1) & ~((uint64_t{1} << lo) - 1));
    if (oy != slot_oy) {
      for (int64_t sl = 0; sl < slots; ++sl) {
        const int64_t iy = oy * g.stride[1] + sl % g.kernel[1] - g.pad[1];
        slot_row[sl] = iy >= 0 && iy < H ? x + sl / g.kernel[1] * in_size + iy * W : nullptr;
      }
      slot_oy = oy;
    }
    // Only the loads' unmasked bytes are accessed (col0 + lo >= 0).
    for (int64_t sl = 0; sl < slots; ++sl) {
      row_vec[sl] = slot_row[sl] ? _mm512_mask_loadu_epi8(vpad, load, slot_row[sl] + col0) : vpad;
    }
    __m512i acc = _mm512_setzero_si512();
    if (two_rows) {
      // Two column-sum chains (even and odd quads): one vpdpbusd chain would wait out its
      // latency at every quad.
      __m512i acc_odd = _mm512_setzero_si512();
      auto quad = [&](int64_t q) {
        const QuadPair& qp = quad_pairs[q];
        const __m512i v = _mm512_xor_si512(
            _mm512_maskz_permutex2var_epi8(static_cast<__mmask64>(qp.real), row_vec[qp.slot_a],
                                           _mm512_loadu_si512(qp.idx), row_vec[qp.slot_b]),
            _mm512_loadu_si512(flips + q * 64));
        _mm512_storeu_si512(half + q * quad_stride, v);
        return v;
      };
      int64_t q = 0;
      for (; q + 2 <= quads; q += 2) {
        acc = Dpbusd512(acc, ones, quad(q));
        acc_odd = Dpbusd512(acc_odd, ones, quad(q + 1));
      }
      if (q < quads) acc = Dpbusd512(acc, ones, quad(q));
      _mm512_storeu_si512(sums + 16 * h, _mm512_add_epi32(acc, acc_odd));
      continue;
    }
    for (int64_t q = 0; q < quads; ++q) {
      __m512i v = _mm512_setzero_si512();
      for (int64_t r = quad_first[q]; r < quad_first[q + 1]; ++r) {
        const QuadRow& qr = quad_rows[r];
        v = _mm512_mask_permutexvar_epi8(v, static_cast<__mmask64>(qr.bytes),
                                         _mm512_loadu_si512(qr.idx), row_vec[qr.slot]);
      }
      v = _mm512_xor_si512(v, _mm512_loadu_si512(flips + q * 64));
      _mm512_storeu_si512(half + q * quad_stride, v);
      acc = Dpbusd512(acc, ones, v);
    }
    _mm512_storeu_si512(sums + 16 * h, acc);
  }
}
#undef SIMPLECPP_PACK_IM2COL_TARGET
#endif

void PackIm2ColImpl(const ConvGeometry& geometry, const uint8_t* x, int64_t channels,
                    int64_t p_begin, int64_t n, uint8_t pad, uint8_t flip, int8_t* dst,
                    uint32_t* sums) {
#if HWY_TARGET == HWY_AVX3_DL
  PackIm2ColVnni(WidenTo3(geometry), x, channels, p_begin, n, pad, flip, dst, sums);
#else
  (void)geometry;
  (void)x;
  (void)channels;
  (void)p_begin;
  (void)n;
  (void)pad;
  (void)flip;
  (void)dst;
  (void)sums;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(PackIm2ColAvailableImpl);
HWY_EXPORT(PackIm2ColImpl);

void PackedQB::RepackIm2Col(bool b_signed, const ConvGeometry& g, const uint8_t* x,
                            int64_t channels, int64_t p_begin, int64_t p_count,
                            uint8_t pad_value) {
  const int64_t k = channels * g.KernelSize();
  if (!HWY_DYNAMIC_DISPATCH(PackIm2ColAvailableImpl)(g, channels) || k <= 0 || p_count <= 0) {
    // The two steps: the [K, p_count] matrix, then Repack (kept per thread between calls).
    static thread_local std::vector<uint8_t> cols;
    cols.resize(static_cast<size_t>(std::max<int64_t>(1, k * p_count)));
    Im2ColBytes(g, x, channels, p_begin, p_count, pad_value, cols.data(), p_count);
    Repack(b_signed, false, k, p_count, cols.data(), p_count);
    return;
  }
  Reshape(b_signed, k, p_count);
  const uint8_t flip = b_signed ? 0 : 0x80;  // as Repack: uint8 b - 128 is b ^ 0x80
  HWY_DYNAMIC_DISPATCH(PackIm2ColImpl)
  (g, x, channels, p_begin, p_count, pad_value, flip, data_.data(),
   reinterpret_cast<uint32_t*>(col_sums_.data()));
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
