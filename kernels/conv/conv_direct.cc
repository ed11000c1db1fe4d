// Direct 2-D convolution (any stride, dilation, padding) for images up to a few MB: the GEMM
// micro-kernel of kernels/gemm/gemm.cc with the B operand read straight from a zero-padded copy of
// the input instead of an im2col matrix (kernels/conv/conv.h ConvDirectF32).
//
// Y[Cout, P] = W[Cout, C*kh*kw] x col[C*kh*kw, P]: column p = (oy, ox), row k = (c, ky, kx) of col
// is the padded input at u = (oy*sh + ky*dh, ox*sw + kx*dw). The padded image is stored as
// sh*sw phase planes per channel (phase u % s, position u / s = o + (k*dil) / s), so within a
// plane consecutive output columns read consecutive floats: a vector of kL output positions of
// one output row ("slot") reads its B vector with one LoadU at base_slot + koff[k], where koff
// depends only on the tap. A register tile is mr output channels (rows of the packed W,
// PackedAF32 layout) x up to kNV slots. Every output element is the same FMA chain
// acc = fma(w_k, x_k, acc) over k = 0..K-1 starting from 0, then * 1 + bias: exactly what
// Im2ColF32 + GemmPackedAF32 compute, so the results are bitwise those of the im2col path, for
// any thread count.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv/conv_direct.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/float16/float16-inl.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/gemm_tile-inl.h"  // kMR, kNV: the packed W has kMR rows per strip

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
constexpr size_t kL = hn::MaxLanes(DF());
// Copies of at least this many floats (4 MiB) and planes are interleaved by row (see below).
constexpr int64_t kInterleaveMinFloats = int64_t{1} << 20;
constexpr int64_t kInterleaveMinPlanes = 16;
// Slots per task (boundaries depend only on the problem size).
constexpr int64_t kSlotsPerTask = 24;

// One tile: kRows output channels x kSlots slots. ap: the strip of packed W ([K][kMR]);
// base[v]: slot v's first input float in xp (k = 0); koff[k]: offset of tap k; out[v]: slot v's
// first output (channel 0 of the tile), channels ldy apart; cols[v]: valid positions of slot v.
// x is stored as float32, or as float16 / bfloat16 bits widened (exactly) as each vector loads.
using f16vec::Storage;
using f16vec::StorageType;

template <Storage S, size_t kRows, size_t kSlots>
HWY_NOINLINE void DirectTile(const float* HWY_RESTRICT ap, const StorageType<S>* const* base,
                             const int32_t* HWY_RESTRICT koff, size_t kdim,
                             const float* HWY_RESTRICT bias, float* const* out, size_t ldy,
                             const size_t* cols) {
  using T = StorageType<S>;
  const DF d;
  using V = hn::Vec<DF>;
  V acc[kRows][kSlots];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < kSlots; ++v) acc[r][v] = hn::Zero(d);
  }
  const T* HWY_RESTRICT b0 = base[0];
  const T* HWY_RESTRICT b1 = kSlots > 1 ? base[1] : base[0];
  const T* HWY_RESTRICT b2 = kSlots > 2 ? base[2] : base[0];
  for (size_t kk = 0; kk < kdim; ++kk) {
    const int32_t o = koff[kk];
    V b[kSlots];
    b[0] = f16vec::LoadAs<S>(b0 + o);
    if constexpr (kSlots > 1) b[1] = f16vec::LoadAs<S>(b1 + o);
    if constexpr (kSlots > 2) b[2] = f16vec::LoadAs<S>(b2 + o);
    for (size_t r = 0; r < kRows; ++r) {
      const V a = hn::Set(d, ap[kk * kMR + r]);
      for (size_t v = 0; v < kSlots; ++v) acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]);
    }
  }
  // The GEMM's epilogue with alpha = 1, beta = 0 and a row bias: acc * 1 + bias.
  const V one = hn::Set(d, 1.0f);
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t v = 0; v < kSlots; ++v) {
      V x = hn::Mul(acc[r][v], one);
      if (bias != nullptr) x = hn::Add(x, hn::Set(d, bias[r]));
      float* dst = out[v] + r * ldy;
      if (cols[v] == kL) {
        hn::StoreU(x, d, dst);
      } else {
        // Only the valid lanes: the others belong to the next row, maybe another task's.
        hn::BlendedStore(x, hn::FirstN(d, cols[v]), d, dst);
      }
    }
  }
}

template <Storage S>
using DirectTileFn = void (*)(const float* HWY_RESTRICT, const StorageType<S>* const*,
                              const int32_t* HWY_RESTRICT, size_t, const float* HWY_RESTRICT,
                              float* const*, size_t, const size_t*);

template <Storage S, size_t R, size_t kSlots>
DirectTileFn<S> PickDirectTile(size_t rows, size_t slots) {
  if constexpr (kSlots > 1) {
    if (slots < kSlots) return PickDirectTile<S, R, kSlots - 1>(rows, slots);
  }
  if constexpr (R > 1) {
    if (rows < R) return PickDirectTile<S, R - 1, kSlots>(rows, slots);
  }
  return &DirectTile<S, R, kSlots>;
}

// dst[0, n) = src[0, n): rows are short (tens of floats), a libc call per row costs more.
HWY_INLINE void CopyFloats(const float* HWY_RESTRICT src, float* HWY_RESTRICT dst, int64_t n) {
  const DF d;
  const int64_t L = static_cast<int64_t>(kL);
  int64_t i = 0;
  for (; i + L <= n; i += L) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  for (; i < n; ++i) dst[i] = src[i];
}

// Whether x itself is the phase-plane image: a 1x1 kernel, stride 1, no padding, and rows of
// whole vectors (a partial slot's vector would read past the last row of x).
bool InPlaceImage(const ConvGeometry& g) {
  return g.rank == 2 && g.kernel[0] == 1 && g.kernel[1] == 1 && g.stride[0] == 1 &&
         g.stride[1] == 1 && g.pad[0] == 0 && g.pad[1] == 0 && g.out[0] == g.in[0] &&
         g.out[1] == g.in[1] && g.out[1] % static_cast<int64_t>(kL) == 0;
}

// The direct convolution on x stored as S. 16-bit x is only read in place (pointwise).
// x_stride / y_stride: the distance between x's input channels and y's output channels (a band
// of rows of larger images: ConvDirectBands).
template <Storage S>
bool ConvDirectStored(const ConvGeometry& g, const StorageType<S>* x, int64_t x_stride,
                      int64_t channels, const float* wpack, int64_t mr, int64_t cout,
                      const float* bias, float* y, int64_t y_stride, const Parallel& parallel,
                      const PostOpF32& post, bool in_place_only) {
  using T = StorageType<S>;
  if (mr != static_cast<int64_t>(kMR)) return false;
  const bool in_place = InPlaceImage(g);
  if (in_place_only && !in_place) return false;
  if (S != Storage::kF32 && !in_place) return false;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t in_h = g.in[0], in_w = g.in[1];
  const int64_t out_h = g.out[0], out_w = g.out[1];
  const int64_t pad_t = g.pad[0], pad_l = g.pad[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const int64_t dh = g.dilation[0], dw = g.dilation[1];
  // Padded coordinates u = o*s + k*dil (input index + pad) are split into phase u % s and
  // position u / s = o + (k*dil) / s: each phase plane is [hq][wq] and a tap reads a slot's kL
  // consecutive positions of one plane (stride 1 there), at an offset that depends only on the tap.
  const int64_t hq = out_h + (kh - 1) * dh / sh, wq = out_w + (kw - 1) * dw / sw;
  const int64_t kdim = channels * kh * kw;
  const int64_t plane = hq * wq;
  const int64_t phases = sh * sw;
  // The phase planes with kL floats of slack: a partial slot's vector reads past its row.
  static thread_local ThreadScratch tls_image;
  const int64_t image = channels * phases * plane;
  // Where row qy of (channel, phase) cp starts: qy * qy_stride + cp * cp_stride. A large copy
  // with many planes is laid out row-major by qy with every (channel, phase)'s row of that qy
  // side by side, so the input rows a band of output rows reads (all channels) are one
  // contiguous stretch for the prefetchers instead of one stream per plane. Small images and
  // few planes stay faster as planes (bench/README.md, "Fewer passes over memory").
  const bool interleave = !in_place && channels * phases >= kInterleaveMinPlanes &&
                          image >= kInterleaveMinFloats;
  const int64_t qy_stride = interleave ? channels * phases * wq : wq;
  // (In place, x's own channel stride.)
  const int64_t cp_stride = interleave ? wq : in_place ? x_stride : plane;
  // In place, x is read as it is (DirectTile only reads through xp).
  const T* xp = x;
  if constexpr (S == Storage::kF32) {
    if (!in_place) {
      float* copy = tls_image.Get(image + static_cast<int64_t>(kL));
      // The copy is split over channels (a large image's copy is a serial pass otherwise).
      ParallelForElements(parallel, 2 * image).For(channels, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          const float* src = x + c * x_stride;
          for (int64_t phy = 0; phy < sh; ++phy) {
            for (int64_t phx = 0; phx < sw; ++phx) {
              float* dst = copy + ((c * sh + phy) * sw + phx) * cp_stride;
              for (int64_t qy = 0; qy < hq; ++qy) {
                float* row = dst + qy * qy_stride;
                const int64_t iy = qy * sh + phy - pad_t;
                if (iy < 0 || iy >= in_h) {
                  std::fill(row, row + wq, 0.0f);
                  continue;
                }
                const float* srow = src + iy * in_w;
                if (sw == 1) {
                  // qx in [lo, hi) maps to input columns [lo - pad_l, hi - pad_l).
                  const int64_t lo = std::min(std::max<int64_t>(pad_l, 0), wq);
                  const int64_t hi = std::max(std::min(in_w + pad_l, wq), lo);
                  for (int64_t i = 0; i < lo; ++i) row[i] = 0.0f;
                  CopyFloats(srow + (lo - pad_l), row + lo, hi - lo);
                  for (int64_t i = hi; i < wq; ++i) row[i] = 0.0f;
                } else if (sw == 2) {
                  // Every other column: whole vectors de-interleaved where their 2 * kL input
                  // columns are inside the row, the edges one at a time.
                  const DF d;
                  const int64_t L = static_cast<int64_t>(kL);
                  int64_t qx = 0;
                  for (; qx < wq && 2 * qx - pad_l < 0; ++qx) {
                    const int64_t ix = 2 * qx + phx - pad_l;
                    row[qx] = ix >= 0 && ix < in_w ? srow[ix] : 0.0f;
                  }
                  for (; qx + L <= wq && 2 * (qx + L) - pad_l <= in_w; qx += L) {
                    hn::Vec<DF> even, odd;
                    hn::LoadInterleaved2(d, srow + 2 * qx - pad_l, even, odd);
                    hn::StoreU(phx == 0 ? even : odd, d, row + qx);
                  }
                  for (; qx < wq; ++qx) {
                    const int64_t ix = 2 * qx + phx - pad_l;
                    row[qx] = ix >= 0 && ix < in_w ? srow[ix] : 0.0f;
                  }
                } else {
                  for (int64_t qx = 0; qx < wq; ++qx) {
                    const int64_t ix = qx * sw + phx - pad_l;
                    row[qx] = ix >= 0 && ix < in_w ? srow[ix] : 0.0f;
                  }
                }
              }
            }
          }
        }
      });
      std::fill(copy + image, copy + image + kL, 0.0f);
      xp = copy;
    }
  }
  std::vector<int32_t> koff(static_cast<size_t>(kdim));
  for (int64_t c = 0, k = 0; c < channels; ++c) {
    for (int64_t ky = 0; ky < kh; ++ky) {
      const int64_t ty = ky * dh;
      for (int64_t kx = 0; kx < kw; ++kx) {
        const int64_t tx = kx * dw;
        const int64_t ph = (c * sh + ty % sh) * sw + tx % sw;
        koff[k++] = static_cast<int32_t>(ph * cp_stride + (ty / sh) * qy_stride + tx / sw);
      }
    }
  }
  const int64_t L = static_cast<int64_t>(kL);
  const int64_t per_row = (out_w + L - 1) / L;
  const int64_t slots = out_h * per_row;
  const int64_t strips = (cout + mr - 1) / mr;
  const int64_t slot_tasks = (slots + kSlotsPerTask - 1) / kSlotsPerTask;
  const int64_t p_count = out_h * out_w;
  const Parallel& par = ParallelForMacs(parallel, cout * p_count * kdim);
  par.For(strips * slot_tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      // Strips inner: consecutive tasks read the same band of input rows (kept in cache)
      // with every strip of output channels.
      const int64_t s = t % strips;
      const int64_t q0 = (t / strips) * kSlotsPerTask;
      const int64_t q1 = std::min(slots, q0 + kSlotsPerTask);
      const int64_t r0 = s * mr;
      const size_t rows = static_cast<size_t>(std::min(mr, cout - r0));
      const float* ap = wpack + s * kdim * mr;
      const float* bs = bias != nullptr ? bias + r0 : nullptr;
      for (int64_t q = q0; q < q1; q += static_cast<int64_t>(kNV)) {
        const size_t n = static_cast<size_t>(std::min<int64_t>(kNV, q1 - q));
        const T* base[kNV];
        float* out[kNV];
        size_t cols[kNV];
        for (size_t v = 0; v < n; ++v) {
          const int64_t slot = q + static_cast<int64_t>(v);
          const int64_t oy = slot / per_row;
          const int64_t ox = (slot % per_row) * L;
          base[v] = xp + oy * qy_stride + ox;
          out[v] = y + r0 * y_stride + oy * out_w + ox;
          cols[v] = static_cast<size_t>(std::min(L, out_w - ox));
        }
        PickDirectTile<S, kMR, kNV>(rows, n)(ap, base, koff.data(), static_cast<size_t>(kdim),
                                             bs, out, static_cast<size_t>(y_stride), cols);
      }
      if (post) {
        // Slots q0..q1 cover one contiguous run of output positions per channel.
        const int64_t begin = (q0 / per_row) * out_w + (q0 % per_row) * L;
        const int64_t last = q1 - 1;
        const int64_t end =
            (last / per_row) * out_w + std::min(out_w, (last % per_row) * L + L);
        for (size_t r = 0; r < rows; ++r) {
          post(y + (r0 + static_cast<int64_t>(r)) * y_stride + begin, end - begin);
        }
      }
    }
  });
  return true;
}

// The direct convolution over bands of output rows, each band's phase planes within
// kConvDirectBandImage floats (the whole image in one band when it fits): band [r0, r1) is the
// convolution of the input rows it reads, with the padding it has on top, into y's rows r0.. .
// Every output is the same FMA chain as in one band, so the bands change no bit.
template <Storage S>
bool ConvDirectBands(const ConvGeometry& g, const StorageType<S>* x, int64_t channels,
                     const float* wpack, int64_t mr, int64_t cout, const float* bias, float* y,
                     const Parallel& parallel, const PostOpF32& post, bool in_place_only) {
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t x_stride = in_h * in_w, y_stride = out_h * out_w;
  const int64_t rows = ConvDirectBandRows(g, channels);
  if (rows >= out_h) {
    return ConvDirectStored<S>(g, x, x_stride, channels, wpack, mr, cout, bias, y, y_stride,
                               parallel, post, in_place_only);
  }
  for (int64_t r0 = 0; r0 < out_h; r0 += rows) {
    int64_t lo = 0;
    const ConvGeometry band = ConvRowBand(g, r0, std::min(out_h, r0 + rows), &lo);
    if (!ConvDirectStored<S>(band, x + lo * in_w, x_stride, channels, wpack, mr, cout, bias,
                             y + r0 * out_w, y_stride, parallel, post, in_place_only)) {
      return false;
    }
  }
  return true;
}

bool ConvDirectImpl(const ConvGeometry& g, const float* x, int64_t channels, const float* wpack,
                    int64_t mr, int64_t cout, const float* bias, float* y,
                    const Parallel& parallel, const PostOpF32& post, bool in_place_only) {
  return ConvDirectBands<Storage::kF32>(g, x, channels, wpack, mr, cout, bias, y, parallel, post,
                                        in_place_only);
}

bool ConvPointwiseInPlaceAppliesImpl(const ConvGeometry& g) { return InPlaceImage(g); }

bool ConvPointwiseInPlace16Impl(Float16Kind kind, const ConvGeometry& g, const uint16_t* x,
                                int64_t channels, const float* wpack, int64_t mr, int64_t cout,
                                const float* bias, float* y, const Parallel& parallel,
                                const PostOpF32& post) {
  if (kind == Float16Kind::kBFloat16) {
    return ConvDirectBands<Storage::kBF16>(g, x, channels, wpack, mr, cout, bias, y, parallel,
                                           post, true);
  }
  // Without hardware float16 conversion each strip of output channels would widen every vector
  // of x again: the GEMM's packing (the caller's fallback) widens each element once, the same
  // bits.
  if (!f16vec::kHardwareHalf) return false;
  return ConvDirectBands<Storage::kHalf>(g, x, channels, wpack, mr, cout, bias, y, parallel, post,
                                         true);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(ConvDirectImpl);
HWY_EXPORT(ConvPointwiseInPlace16Impl);
HWY_EXPORT(ConvPointwiseInPlaceAppliesImpl);

bool ConvPointwiseInPlaceApplies(const ConvGeometry& g) {
  return HWY_DYNAMIC_DISPATCH(ConvPointwiseInPlaceAppliesImpl)(g);
}

ConvGeometry ConvRowBand(const ConvGeometry& g, int64_t r0, int64_t r1, int64_t* first_input_row) {
  const int64_t in_h = g.in[0], sh = g.stride[0], reach = (g.kernel[0] - 1) * g.dilation[0];
  // Input rows [lo, hi) that the band's taps can reach.
  const int64_t top = r0 * sh - g.pad[0];
  const int64_t lo = std::min(std::max<int64_t>(top, 0), in_h);
  const int64_t hi = std::max(std::min(in_h, (r1 - 1) * sh - g.pad[0] + reach + 1), lo);
  ConvGeometry band = g;
  band.in[0] = hi - lo;
  band.out[0] = r1 - r0;
  band.pad[0] = lo - top;  // >= 0: rows above the image (first band only)
  *first_input_row = lo;
  return band;
}

int64_t ConvDirectBandRows(const ConvGeometry& g, int64_t channels) {
  // Phase-plane floats per output row of a band, and the rows of taps a band adds on top.
  const int64_t wq = g.out[1] + (g.kernel[1] - 1) * g.dilation[1] / g.stride[1];
  const int64_t per_row = std::max<int64_t>(1, channels * g.stride[0] * g.stride[1] * wq);
  const int64_t halo = (g.kernel[0] - 1) * g.dilation[0] / g.stride[0];
  if (channels * g.stride[0] * g.stride[1] * (g.out[0] + halo) * wq <= kConvDirectMaxImage) {
    return g.out[0];  // one band
  }
  return kConvDirectBandImage / per_row - halo;
}

bool ConvDirectApplies(const ConvGeometry& g, int64_t channels) {
  if (g.rank != 2) return false;
  for (int d = 0; d < 2; ++d) {
    if (g.stride[d] < 1 || g.dilation[d] < 1 || g.pad[d] < 0 || g.out[d] < 1) return false;
  }
  // Offsets are int32; the phase planes must stay small (they are copied per band): bands of at
  // least kConvDirectMinBandRows output rows (fewer would copy mostly halo rows).
  if (channels <= 0) return false;
  const int64_t rows = ConvDirectBandRows(g, channels);
  return rows >= g.out[0] || rows >= kConvDirectMinBandRows;
}

bool ConvDirectF32(const ConvGeometry& g, const float* x, int64_t channels, const PackedAF32& w,
                   const float* bias, float* y, const Parallel& parallel,
                   const PostOpF32& post) {
  if (!ConvDirectApplies(g, channels) || w.k() != channels * g.KernelSize()) return false;
  if (w.m() <= 0) return true;
  return HWY_DYNAMIC_DISPATCH(ConvDirectImpl)(g, x, channels, w.data(), w.mr(), w.m(), bias, y,
                                              parallel, post, false);
}

bool ConvPointwiseInPlaceF32(const ConvGeometry& g, const float* x, int64_t channels,
                             const PackedAF32& w, const float* bias, float* y,
                             const Parallel& parallel, const PostOpF32& post) {
  if (!ConvDirectApplies(g, channels) || w.k() != channels * g.KernelSize()) return false;
  if (w.m() <= 0) return true;
  return HWY_DYNAMIC_DISPATCH(ConvDirectImpl)(g, x, channels, w.data(), w.mr(), w.m(), bias, y,
                                              parallel, post, true);
}

bool ConvPointwiseInPlace16(Float16Kind kind, const ConvGeometry& g, const uint16_t* x,
                            int64_t channels, const PackedAF32& w, const float* bias, float* y,
                            const Parallel& parallel, const PostOpF32& post) {
  if (!ConvDirectApplies(g, channels) || w.k() != channels * g.KernelSize()) return false;
  if (w.m() <= 0) return true;
  return HWY_DYNAMIC_DISPATCH(ConvPointwiseInPlace16Impl)(kind, g, x, channels, w.data(), w.mr(),
                                                          w.m(), bias, y, parallel, post);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
