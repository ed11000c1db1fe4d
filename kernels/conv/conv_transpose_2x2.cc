// ConvTranspose 2x2 / stride 2 (kernels/conv/conv_transpose_2x2.h). A task is one input row:
// per block of kOut output channels and kVec vectors of input columns, kOut * 4 * kVec
// accumulators run over the input channels (the row of every input channel stays in L1 across
// the output channel blocks), then each (channel, a) pair of tap vectors b = 0, 1 is stored
// interleaved into output row 2i + a. The columns past the last whole block go through a
// zero-padded copy of that part of the row and a small output buffer.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv/conv_transpose_2x2.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/conv/conv_transpose_2x2.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;
constexpr int64_t kL = static_cast<int64_t>(hn::MaxLanes(DF()));
// Register tile: kOut output channels x 4 taps x kVec vectors of accumulators, plus kVec inputs.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kOut = 2, kVec = 3;  // 24 + 3 of 32 registers
#else
constexpr size_t kOut = 1, kVec = 2;  // 8 + 2 of 16 registers
#endif

// Output rows of one input row, for kVec * kL input columns from x (channels x_stride apart),
// output channels o .. o + kRows: dst + r * dst_plane + a * dst_row is output row 2i + a of
// channel o + r at the block's first column. wt: w + o * 4 (input channels cout * 4 apart).
template <size_t kRows>
HWY_INLINE void Block(const float* HWY_RESTRICT x, int64_t x_stride, int64_t channels,
                      const float* HWY_RESTRICT wt, int64_t w_stride, const float* bias,
                      float* dst, int64_t dst_plane, int64_t dst_row) {
  const DF d;
  V acc[kRows][4][kVec];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t t = 0; t < 4; ++t) {
      for (size_t v = 0; v < kVec; ++v) acc[r][t][v] = hn::Zero(d);
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    V xv[kVec];
    for (size_t v = 0; v < kVec; ++v) xv[v] = hn::LoadU(d, x + c * x_stride + v * kL);
    const float* wc = wt + c * w_stride;
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t t = 0; t < 4; ++t) {
        const V wv = hn::Set(d, wc[r * 4 + t]);
        for (size_t v = 0; v < kVec; ++v) acc[r][t][v] = hn::MulAdd(wv, xv[v], acc[r][t][v]);
      }
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    const V b = hn::Set(d, bias != nullptr ? bias[r] : 0.0f);
    for (size_t a = 0; a < 2; ++a) {
      float* row = dst + static_cast<int64_t>(r) * dst_plane + static_cast<int64_t>(a) * dst_row;
      for (size_t v = 0; v < kVec; ++v) {
        hn::StoreInterleaved2(hn::Add(acc[r][2 * a][v], b), hn::Add(acc[r][2 * a + 1][v], b), d,
                              row + 2 * v * kL);
      }
    }
  }
}

void ConvTranspose2x2Impl(int64_t channels, int64_t h, int64_t w, const float* x, int64_t cout,
                          const float* weights, const float* bias, float* y,
                          const Parallel& parallel, const PostOpF32& post) {
  const int64_t block = static_cast<int64_t>(kVec) * kL;
  const int64_t whole = w / block * block;  // columns in whole blocks
  const int64_t tail = w - whole;
  const int64_t plane_in = h * w, ow = 2 * w, plane_out = 2 * h * ow;
  const int64_t w_stride = cout * 4;
  const Parallel& par = ParallelForMacs(parallel, channels * cout * 4 * plane_in);
  par.For(h, [&](int64_t i0, int64_t i1) {
    // The tail: input columns [whole, w) of every channel zero-padded to a block, and the
    // output rows they make for kOut channels.
    static thread_local std::vector<float> tail_in, tail_out;
    if (tail > 0) {
      tail_in.resize(static_cast<size_t>(channels * block));
      tail_out.resize(static_cast<size_t>(kOut * 2 * 2 * block));
    }
    for (int64_t i = i0; i < i1; ++i) {
      const float* xi = x + i * w;
      if (tail > 0) {
        std::fill(tail_in.begin(), tail_in.end(), 0.0f);
        for (int64_t c = 0; c < channels; ++c) {
          std::memcpy(tail_in.data() + c * block, xi + c * plane_in + whole,
                      static_cast<size_t>(tail) * sizeof(float));
        }
      }
      for (int64_t o = 0; o < cout; o += static_cast<int64_t>(kOut)) {
        const bool full = o + static_cast<int64_t>(kOut) <= cout;
        auto run = [&](const float* xs, int64_t x_stride, float* dst, int64_t dst_plane,
                       int64_t dst_row) {
          const float* b = bias != nullptr ? bias + o : nullptr;
          if (full) {
            Block<kOut>(xs, x_stride, channels, weights + o * 4, w_stride, b, dst, dst_plane,
                        dst_row);
          } else {
            Block<1>(xs, x_stride, channels, weights + o * 4, w_stride, b, dst, dst_plane,
                     dst_row);
          }
        };
        float* yo = y + o * plane_out + 2 * i * ow;
        for (int64_t j = 0; j < whole; j += block) {
          run(xi + j, plane_in, yo + 2 * j, plane_out, ow);
        }
        if (tail > 0) {
          run(tail_in.data(), block, tail_out.data(), 2 * 2 * block, 2 * block);
          const int64_t rows = full ? static_cast<int64_t>(kOut) : 1;
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t a = 0; a < 2; ++a) {
              std::memcpy(yo + r * plane_out + a * ow + 2 * whole,
                          tail_out.data() + r * 4 * block + a * 2 * block,
                          static_cast<size_t>(2 * tail) * sizeof(float));
            }
          }
        }
      }
      if (post) {
        for (int64_t o = 0; o < cout; ++o) post(y + o * plane_out + 2 * i * ow, 2 * ow);
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(ConvTranspose2x2Impl);

void ConvTranspose2x2S2F32(int64_t channels, int64_t h, int64_t w, const float* x, int64_t cout,
                           const float* weights, const float* bias, float* y,
                           const Parallel& parallel, const PostOpF32& post) {
  if (h <= 0 || w <= 0 || cout <= 0) return;
  if (channels <= 0) {
    // No input channel (x and the weights may be empty): the bias alone.
    const int64_t plane = 4 * h * w;
    for (int64_t o = 0; o < cout; ++o) {
      std::fill(y + o * plane, y + (o + 1) * plane, bias != nullptr ? bias[o] : 0.0f);
      if (post) post(y + o * plane, plane);
    }
    return;
  }
  HWY_DYNAMIC_DISPATCH(ConvTranspose2x2Impl)(channels, h, w, x, cout, weights, bias, y, parallel,
                                             post);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
