// Winograd F(4x4, 3x3) (kernels/conv/winograd_conv.h), with the interpolation points
// 0, 1, -1, 2, -2 and infinity.
//
// A dilated layer is one undilated problem per phase (Phase). Each problem's tiles are lanes of
// vectors, the rows of tiles laid end to end (Block), and the work goes in blocks of up to kNV
// vectors of tiles. Per block:
//   1. input transform: per input channel, the 6 input rows under each row of tiles are copied
//      into a zero-padded patch and split into 4 column phases (tile t starts at column 4t), then
//      V = B^T d B, stored as V[36][C][lanes] (TransformInput);
//   2. 36 matrix products M[xi] [Cout, lanes] = U[xi] [Cout, C] x V[xi] [C, lanes] (register
//      tiles of the GEMM's shape: kMR output channels x kNV vectors);
//   3. output transform Y = A^T M A + bias into 4 output rows per tile row (StoreInterleaved4),
//      copied into y, then the post-op on the finished runs.
// Every value is the same chain of operations per lane whatever the blocks and tasks, so the
// results do not depend on the thread count.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/conv/winograd_conv.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/conv/winograd_conv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/gemm_tile-inl.h"  // kMR, kNV

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using V = hn::Vec<DF>;
constexpr int64_t kL = static_cast<int64_t>(hn::MaxLanes(DF()));
constexpr int64_t kPositions = 36;  // of a transformed 6x6 tile

// B^T d for one 6-vector d (a row or a column of a patch).
HWY_INLINE void InputRows(const V* d, V* t) {
  const DF df;
  const V four = hn::Set(df, 4.0f), five = hn::Set(df, 5.0f), two = hn::Set(df, 2.0f);
  t[0] = hn::MulAdd(four, d[0], hn::NegMulAdd(five, d[2], d[4]));
  t[1] = hn::NegMulAdd(four, hn::Add(d[1], d[2]), hn::Add(d[3], d[4]));
  t[2] = hn::MulAdd(four, hn::Sub(d[1], d[2]), hn::Sub(d[4], d[3]));
  t[3] = hn::MulAdd(two, hn::Sub(d[3], d[1]), hn::Sub(d[4], d[2]));
  t[4] = hn::NegMulAdd(two, hn::Sub(d[3], d[1]), hn::Sub(d[4], d[2]));
  t[5] = hn::MulAdd(four, d[1], hn::NegMulAdd(five, d[3], d[5]));
}

// A^T m for one 6-vector m.
HWY_INLINE void OutputRows(const V* m, V* o) {
  const DF df;
  const V two = hn::Set(df, 2.0f), four = hn::Set(df, 4.0f), eight = hn::Set(df, 8.0f);
  const V s12 = hn::Add(m[1], m[2]), d12 = hn::Sub(m[1], m[2]);
  const V s34 = hn::Add(m[3], m[4]), d34 = hn::Sub(m[3], m[4]);
  o[0] = hn::Add(hn::Add(m[0], s12), s34);
  o[1] = hn::MulAdd(two, d34, d12);
  o[2] = hn::MulAdd(four, s34, s12);
  o[3] = hn::Add(hn::MulAdd(eight, d34, d12), m[5]);
}

// out[r][lanes] = sum over c of a[c][r] * b[c][lanes] for the kMR rows of a strip, kNV2 vectors.
template <size_t kNV2>
HWY_NOINLINE void StripProduct(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                               int64_t channels, int64_t lanes, float* HWY_RESTRICT out) {
  const DF df;
  V acc[kMR][kNV2];
  for (size_t r = 0; r < kMR; ++r) {
    for (size_t v = 0; v < kNV2; ++v) acc[r][v] = hn::Zero(df);
  }
  for (int64_t c = 0; c < channels; ++c) {
    V bv[kNV2];
    for (size_t v = 0; v < kNV2; ++v) bv[v] = hn::LoadU(df, b + c * lanes + v * kL);
    const float* ac = a + c * static_cast<int64_t>(kMR);
    for (size_t r = 0; r < kMR; ++r) {
      const V ar = hn::Set(df, ac[r]);
      for (size_t v = 0; v < kNV2; ++v) acc[r][v] = hn::MulAdd(ar, bv[v], acc[r][v]);
    }
  }
  for (size_t r = 0; r < kMR; ++r) {
    for (size_t v = 0; v < kNV2; ++v) hn::StoreU(acc[r][v], df, out + r * lanes + v * kL);
  }
}

using StripFn = void (*)(const float* HWY_RESTRICT, const float* HWY_RESTRICT, int64_t, int64_t,
                         float* HWY_RESTRICT);
template <size_t kNV2>
StripFn PickStrip(int64_t vectors) {
  if constexpr (kNV2 > 1) {
    if (vectors < static_cast<int64_t>(kNV2)) return PickStrip<kNV2 - 1>(vectors);
  }
  return &StripProduct<kNV2>;
}

// Columns after a block's own in each patch row: at least 2, a whole number of vectors.
constexpr int64_t kRowSlack = kL >= 4 ? kL : 4;

// Tiles as lanes: the rows of tiles laid end to end with one unused lane between rows (tile
// (ty, tx) is lane ty * (tiles_w + 1) + tx), so that each row's patch columns (4 per tile + 2)
// stay its own and the loads contiguous, while a block of lanes may cross rows: no block runs
// vectors mostly empty at the end of a short row. A block is the lanes [lane0, lane0 + Lanes()).
struct Block {
  int64_t lane0 = 0, vectors = 0;
  int64_t tiles_w = 0, tiles_h = 0;
  int64_t Stride() const { return tiles_w + 1; }
  int64_t Lanes() const { return vectors * kL; }
  // Patch row length: the block's 4 * Lanes() columns and the 2 the last tile reads past them,
  // in whole vectors.
  int64_t Width() const { return 4 * Lanes() + kRowSlack; }
  // fn(ty, tx_begin, tx_end, lane): the tiles of row ty in the block, from local lane `lane`.
  template <class Fn>
  void ForEachRow(const Fn& fn) const {
    const int64_t end = lane0 + Lanes();
    for (int64_t ty = lane0 / Stride(); ty < tiles_h && ty * Stride() < end; ++ty) {
      const int64_t begin = std::max<int64_t>(0, lane0 - ty * Stride());
      const int64_t stop = std::min(tiles_w, end - ty * Stride());
      if (begin < stop) fn(ty, begin, stop, ty * Stride() + begin - lane0);
    }
  }
};

// One stride-1, dilation-1 problem: the whole convolution, or one phase of a dilated one (the
// output positions congruent to (py, px) modulo the dilation read only input positions
// congruent to one phase of the input, with the 3x3 kernel then dense: a dilated convolution is
// dilation^2 undilated ones on the sub-images). g holds the sub-image's sizes and padding (which
// may be negative); x element (c, i, j) of the sub-image is x[c * x_plane + x_off + i * x_row +
// j * x_col], output element (k, i, j) is y[k * y_plane + y_off + i * y_row + j * y_col].
struct Phase {
  ConvGeometry g;
  int64_t x_plane = 0, x_off = 0, x_row = 0, x_col = 1;
  int64_t y_plane = 0, y_off = 0, y_row = 0, y_col = 1;
};

// 1. V[36][C][lanes] of the block, per input channel in three stages: (a) its 6 input rows are
// copied into a zero-padded patch; (b) each patch row is split into its four column phases
// (tile t's columns 4t + k), so that the six columns of a vector of tiles are phases 0-3 and
// phases 0-1 one tile on: plain loads, where de-interleaving both would take two 4x4 transposes
// of shuffles per row; (c) the transform. The stages run on three consecutive channels, each
// reading what an earlier iteration stored: a load that straddles stores still in the store
// buffer (the copy is offset by the padding, the phase loads by one lane) cannot be forwarded
// and stalls until they retire.
constexpr int64_t kPatchBuffers = 3, kPhaseBuffers = 2;

// Floats of thread scratch TransformInput needs for blocks of up to `lanes` lanes.
int64_t InputScratchFloats(int64_t lanes) {
  return kPatchBuffers * 6 * (4 * lanes + kRowSlack) + kPhaseBuffers * 24 * (lanes + kL);
}

void TransformInput(const Phase& ph, const float* x, int64_t channels, const Block& bk,
                    float* scratch, float* vt) {
  const DF df;
  const ConvGeometry& g = ph.g;
  const int64_t in_h = g.in[0], in_w = g.in[1];
  const int64_t lanes = bk.Lanes(), width = bk.Width();
  const V zero = hn::Zero(df);
  const int64_t patch_len = 6 * width;
  // Per row, its 4 phases of lanes + 1 tiles (rounded up to vectors).
  const int64_t phase_len = lanes + kL;
  float* phase_bufs = scratch + kPatchBuffers * patch_len;
  auto copy_rows = [&](int64_t c) {
    const float* xc = x + c * ph.x_plane + ph.x_off;
    float* patch = scratch + (c % kPatchBuffers) * patch_len;
    for (int64_t r = 0; r < 6; ++r) {
      float* row = patch + r * width;
      // Zeros first (width is a whole number of vectors), then each row of tiles' image part.
      for (int64_t j = 0; j < width; j += kL) hn::StoreU(zero, df, row + j);
      bk.ForEachRow([&](int64_t ty, int64_t tx0, int64_t tx1, int64_t lane) {
        const int64_t iy = 4 * ty - g.pad[0] + r;
        if (iy < 0 || iy >= in_h) return;
        // Patch columns [0, seg) of the row's tiles are image columns ix0 + [0, seg).
        const int64_t seg = 4 * (tx1 - tx0) + 2, ix0 = 4 * tx0 - g.pad[1];
        const int64_t j_lo = std::min(std::max<int64_t>(0, -ix0), seg);
        const int64_t j_hi = std::max(std::min(seg, in_w - ix0), j_lo);
        float* dst = row + 4 * lane + j_lo;
        const float* src = xc + iy * ph.x_row + (ix0 + j_lo) * ph.x_col;
        const int64_t n = j_hi - j_lo;
        int64_t j = 0;
        if (ph.x_col == 1) {
          for (; j + kL <= n; j += kL) hn::StoreU(hn::LoadU(df, src + j), df, dst + j);
        }
        // (A masked load may read past x elsewhere.)
        for (; j < n; ++j) dst[j] = src[j * ph.x_col];
      });
    }
  };
  auto split_phases = [&](int64_t c) {
    const float* patch = scratch + (c % kPatchBuffers) * patch_len;
    float* phases = phase_bufs + (c % kPhaseBuffers) * 24 * phase_len;
    for (int64_t r = 0; r < 6; ++r) {
      const float* row = patch + r * width;
      float* pr = phases + r * 4 * phase_len;
      for (int64_t v = 0; v < bk.vectors; ++v) {
        V a0, a1, a2, a3;
        hn::LoadInterleaved4(df, row + 4 * v * kL, a0, a1, a2, a3);
        hn::StoreU(a0, df, pr + v * kL);
        hn::StoreU(a1, df, pr + phase_len + v * kL);
        hn::StoreU(a2, df, pr + 2 * phase_len + v * kL);
        hn::StoreU(a3, df, pr + 3 * phase_len + v * kL);
      }
      pr[lanes] = row[4 * lanes];
      pr[phase_len + lanes] = row[4 * lanes + 1];
    }
  };
  auto transform = [&](int64_t c) {
    const float* phases = phase_bufs + (c % kPhaseBuffers) * 24 * phase_len;
    for (int64_t v = 0; v < bk.vectors; ++v) {
      V t[6][6];  // t[r] = B^T applied along row r
      for (int64_t r = 0; r < 6; ++r) {
        const float* p0 = phases + r * 4 * phase_len + v * kL;
        const float* p1 = p0 + phase_len;
        const V d[6] = {hn::LoadU(df, p0), hn::LoadU(df, p1), hn::LoadU(df, p1 + phase_len),
                        hn::LoadU(df, p1 + 2 * phase_len), hn::LoadU(df, p0 + 1),
                        hn::LoadU(df, p1 + 1)};
        InputRows(d, t[r]);
      }
      for (int64_t j = 0; j < 6; ++j) {
        const V col[6] = {t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j]};
        V out[6];
        InputRows(col, out);
        for (int64_t i = 0; i < 6; ++i) {
          hn::StoreU(out[i], df, vt + ((i * 6 + j) * channels + c) * lanes + v * kL);
        }
      }
    }
  };
  for (int64_t c = -2; c < channels; ++c) {
    if (c + 2 < channels) copy_rows(c + 2);
    if (c + 1 >= 0 && c + 1 < channels) split_phases(c + 1);
    if (c >= 0) transform(c);
  }
}

// 3. The block's outputs of channels [k0, k1) from M[36][cout_padded][lanes]: per channel, Y = A^T M A + bias
// of every lane into a patch of 4 rows, then each row of tiles' columns into y.
// With a column stride (a phase of a dilated convolution) the runs are not contiguous in y and
// `post` is left to the caller.
void TransformOutput(const Phase& ph, const float* mt, int64_t k0, int64_t k1,
                     int64_t cout_padded, const Block& bk, const float* bias, float* y,
                     float* opatch, const PostOpF32& post) {
  const DF df;
  const int64_t out_h = ph.g.out[0], out_w = ph.g.out[1];
  const int64_t lanes = bk.Lanes(), width = 4 * lanes;
  for (int64_t k = k0; k < k1; ++k) {
    const V b = hn::Set(df, bias != nullptr ? bias[k] : 0.0f);
    for (int64_t v = 0; v < bk.vectors; ++v) {
      V s[4][6];  // s[i][j] = A^T applied along column j
      for (int64_t j = 0; j < 6; ++j) {
        V m[6];
        for (int64_t i = 0; i < 6; ++i) {
          m[i] = hn::LoadU(df, mt + ((i * 6 + j) * cout_padded + k) * lanes + v * kL);
        }
        V o[4];
        OutputRows(m, o);
        for (int64_t i = 0; i < 4; ++i) s[i][j] = o[i];
      }
      for (int64_t i = 0; i < 4; ++i) {
        V o[4];
        OutputRows(s[i], o);
        for (int64_t q = 0; q < 4; ++q) o[q] = hn::Add(o[q], b);
        hn::StoreInterleaved4(o[0], o[1], o[2], o[3], df, opatch + i * width + 4 * v * kL);
      }
    }
    bk.ForEachRow([&](int64_t ty, int64_t tx0, int64_t tx1, int64_t lane) {
      const int64_t x_begin = 4 * tx0, x_end = std::min(out_w, 4 * tx1);
      for (int64_t i = 0; i < 4 && 4 * ty + i < out_h; ++i) {
        float* dst = y + k * ph.y_plane + ph.y_off + (4 * ty + i) * ph.y_row + x_begin * ph.y_col;
        const float* src = opatch + i * width + 4 * lane;
        if (ph.y_col == 1) {
          std::memcpy(dst, src, static_cast<size_t>(x_end - x_begin) * sizeof(float));
          if (post) post(dst, x_end - x_begin);
        } else {
          for (int64_t j = 0; j < x_end - x_begin; ++j) dst[j * ph.y_col] = src[j];
        }
      }
    });
  }
}

// The phase p (of d) of one dimension: output positions p, p + d, ...; input positions
// congruent to (p - pad) mod d. Sets the sub-problem's in / out / pad and the input offset.
void PhaseDim(int64_t in, int64_t out, int64_t pad, int64_t d, int64_t p, int64_t* sub_in,
              int64_t* sub_out, int64_t* sub_pad, int64_t* in_off) {
  *sub_out = p < out ? (out - p + d - 1) / d : 0;
  const int64_t q = p - pad;
  const int64_t r = ((q % d) + d) % d;
  *sub_pad = -((q - r) / d);  // output o reads sub-image rows o - sub_pad + k
  *sub_in = r < in ? (in - r + d - 1) / d : 0;
  *in_off = r;
}

bool ConvWinogradImpl(const ConvGeometry& g, const float* x, int64_t channels, const float* u,
                      int64_t mr, int64_t cout, const float* bias, float* y,
                      const Parallel& parallel, const PostOpF32& post) {
  if (mr != static_cast<int64_t>(kMR)) return false;
  const int64_t dh = g.dilation[0], dw = g.dilation[1];
  const bool dilated = dh > 1 || dw > 1;
  const int64_t x_plane = g.in[0] * g.in[1], y_plane = g.out[0] * g.out[1];
  // The phases, and their blocks of tiles.
  std::vector<Phase> phases;
  std::vector<int64_t> blocks;
  const int64_t block = static_cast<int64_t>(kNV) * kL;  // lanes per block at most
  for (int64_t py = 0; py < dh; ++py) {
    for (int64_t px = 0; px < dw; ++px) {
      Phase ph;
      ph.g = g;
      ph.g.dilation[0] = ph.g.dilation[1] = 1;
      int64_t oy = 0, ox = 0;
      PhaseDim(g.in[0], g.out[0], g.pad[0], dh, py, &ph.g.in[0], &ph.g.out[0], &ph.g.pad[0],
               &oy);
      PhaseDim(g.in[1], g.out[1], g.pad[1], dw, px, &ph.g.in[1], &ph.g.out[1], &ph.g.pad[1],
               &ox);
      if (ph.g.out[0] == 0 || ph.g.out[1] == 0) continue;
      ph.x_plane = x_plane;
      ph.x_off = oy * g.in[1] + ox;
      ph.x_row = dh * g.in[1];
      ph.x_col = dw;
      ph.y_plane = y_plane;
      ph.y_off = py * g.out[1] + px;
      ph.y_row = dh * g.out[1];
      ph.y_col = dw;
      const int64_t tiles_h = (ph.g.out[0] + 3) / 4, tiles_w = (ph.g.out[1] + 3) / 4;
      const int64_t lanes = tiles_h * (tiles_w + 1) - 1;
      phases.push_back(ph);
      blocks.push_back((lanes + block - 1) / block);
    }
  }
  // Task t is block t / phases of phase t % phases (none where that phase has fewer blocks): the
  // phases' blocks at the same place run together and share the input and output rows in cache,
  // which the phases read and write a column in `dilation` each.
  const int64_t num_phases = static_cast<int64_t>(phases.size());
  if (num_phases == 0) return true;  // (not for an applicable g: phase 0 has outputs)
  const int64_t max_blocks = *std::max_element(blocks.begin(), blocks.end());
  const int64_t strips = (cout + mr - 1) / mr, cout_padded = strips * mr;
  const Parallel& par = ParallelForMacs(parallel, cout * y_plane * channels * 9);
  // Small images have fewer blocks than threads: each block's output channels are then split
  // between tasks, which repeat its input transform. (Each output is computed the same way
  // whatever the split, so it may follow the thread count.)
  int64_t all_blocks = 0;
  for (int64_t n : blocks) all_blocks += n;
  const int64_t threads = par.num_threads();
  const int64_t want = 2 * threads;
  const int64_t splits = threads < 2 || all_blocks >= want
                             ? 1
                             : std::min(strips, (want + all_blocks - 1) / all_blocks);
  par.For(max_blocks * num_phases * splits, [&](int64_t t0, int64_t t1) {
    // Declared here, where each worker thread passes: that constructs its own and registers
    // their destruction at the thread's exit.
    static thread_local ThreadScratch tls_patch, tls_v, tls_m;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t split = t % splits;
      const size_t pi = static_cast<size_t>(t / splits % num_phases);
      const int64_t b = t / splits / num_phases;
      if (b >= blocks[pi]) continue;
      const Phase& ph = phases[pi];
      Block bk;
      bk.tiles_h = (ph.g.out[0] + 3) / 4;
      bk.tiles_w = (ph.g.out[1] + 3) / 4;
      const int64_t total = bk.tiles_h * (bk.tiles_w + 1) - 1;  // lanes of all tiles
      bk.lane0 = b * block;
      bk.vectors = (std::min(block, total - bk.lane0) + kL - 1) / kL;
      const int64_t lanes = bk.Lanes();
      const int64_t s0 = split * strips / splits, s1 = (split + 1) * strips / splits;
      float* patch = tls_patch.Get(InputScratchFloats(block));
      float* vt = tls_v.Get(kPositions * channels * block);
      float* mt = tls_m.Get(kPositions * cout_padded * block);
      TransformInput(ph, x, channels, bk, patch, vt);
      const StripFn strip = PickStrip<kNV>(bk.vectors);
      for (int64_t xi = 0; xi < kPositions; ++xi) {
        for (int64_t s = s0; s < s1; ++s) {
          strip(u + (xi * strips + s) * channels * mr, vt + xi * channels * lanes, channels,
                lanes, mt + (xi * cout_padded + s * mr) * lanes);
        }
      }
      // The input patch is free again: it holds the 4 output rows (4 * lanes floats each).
      TransformOutput(ph, mt, s0 * mr, std::min(cout, s1 * mr), cout_padded, bk, bias, y, patch,
                      post);
    }
  });
  if (dilated && post) {
    // The phases interleave within each row: the chain runs once y is complete.
    ParallelForElements(parallel, 2 * cout * y_plane).For(cout, [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) post(y + k * y_plane, y_plane);
    });
  }
  return true;
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(ConvWinogradImpl);

WinogradWeightsF32::WinogradWeightsF32(int64_t cout, int64_t channels, int64_t mr)
    : cout_(cout), channels_(channels), mr_(mr) {
  const int64_t strips = (cout + mr - 1) / mr;
  const size_t n = static_cast<size_t>(36 * strips * channels * mr);
  data_.reset(new float[n]());
}

std::shared_ptr<const WinogradWeightsF32> WinogradWeightsF32::Transform(int64_t cout,
                                                                        int64_t channels,
                                                                        const float* w) {
  const int64_t mr = CurrentGemmTileShape().mr;
  auto u = std::make_shared<WinogradWeightsF32>(cout, channels, mr);
  // G of F(4x4, 3x3) for the points 0, 1, -1, 2, -2, infinity; U = G w G^T in double, rounded
  // once to float32.
  static constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  const int64_t strips = (cout + mr - 1) / mr;
  float* out = u->data_.get();
  for (int64_t k = 0; k < cout; ++k) {
    for (int64_t c = 0; c < channels; ++c) {
      const float* wk = w + (k * channels + c) * 9;
      double gw[6][3];  // G w
      for (int i = 0; i < 6; ++i) {
        for (int b = 0; b < 3; ++b) {
          gw[i][b] = kG[i][0] * wk[b] + kG[i][1] * wk[3 + b] + kG[i][2] * wk[6 + b];
        }
      }
      for (int i = 0; i < 6; ++i) {
        for (int j = 0; j < 6; ++j) {
          const double v = gw[i][0] * kG[j][0] + gw[i][1] * kG[j][1] + gw[i][2] * kG[j][2];
          const int64_t xi = i * 6 + j, s = k / mr, r = k % mr;
          out[((xi * strips + s) * channels + c) * mr + r] = static_cast<float>(v);
        }
      }
    }
  }
  return u;
}

bool ConvWinogradApplies(const ConvGeometry& g, int64_t channels, int64_t cout) {
  if (g.rank != 2) return false;
  for (int d = 0; d < 2; ++d) {
    if (g.kernel[d] != 3 || g.stride[d] != 1 || g.pad[d] < 0) return false;
    // Dilated: one undilated problem per phase (dilation^2 of them).
    if (g.dilation[d] < 1 || g.dilation[d] > 16) return false;
  }
  // Few channels: the transforms (per input and per output channel) outweigh the saved
  // multiply-adds; many input channels: a block's V outgrows the caches. Rows of at least one
  // tile per phase.
  return channels >= 8 && channels <= 1024 && cout >= 8 && g.out[0] >= 1 &&
         g.out[1] >= 4 * g.dilation[1];
}

bool ConvWinogradF32(const ConvGeometry& g, const float* x, int64_t channels,
                     const WinogradWeightsF32& u, const float* bias, float* y,
                     const Parallel& parallel, const PostOpF32& post) {
  if (!ConvWinogradApplies(g, channels, u.cout()) || u.channels() != channels) return false;
  return HWY_DYNAMIC_DISPATCH(ConvWinogradImpl)(g, x, channels, u.data(), u.mr(), u.cout(), bias,
                                                y, parallel, post);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
