// Normalization kernels on 16-bit float storage (kernels/nn/normalization.h): rows (LayerNorm,
// InstanceNorm, GroupNorm) are widened to float32 one row at a time, normalized by the float32
// kernel and rounded once per element; the per-channel affine (BatchNorm inference) streams
// blocks of kBlock elements; LpNormalization and LRN work on [n, <=64 columns] slabs. No tensor-sized float32 copy. Plain C++.
#include <algorithm>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/nn/normalization.h"

namespace simplecpp::kernels {
namespace {
constexpr int64_t kBlock = 256;
constexpr int64_t kTaskElements = 1 << 15;  // problem-size constant: deterministic tasks
constexpr int64_t kInnerBlock = 64;         // columns per slab

// x, y are [outer, n, inner]. Each unit is one [n, w <= kInnerBlock] slab of columns, widened
// into buf ([n][w] row-major), transformed in place by fn(buf, w), rounded back.
template <typename Fn>
void Slabs16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t outer, int64_t n,
             int64_t inner, const Parallel& parallel, const Fn& fn) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  const int64_t cols = std::min(inner, kInnerBlock);
  const int64_t col_blocks = (inner + cols - 1) / cols;
  const int64_t units = outer * col_blocks;
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / (n * cols));
  const int64_t tasks = (units + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<float> buf(static_cast<size_t>(n * cols));
    for (int64_t u = t0 * per_task; u < std::min(units, t1 * per_task); ++u) {
      const int64_t o = u / col_blocks;
      const int64_t j0 = (u % col_blocks) * cols;
      const int64_t w = std::min(cols, inner - j0);
      const int64_t base = o * n * inner + j0;
      for (int64_t i = 0; i < n; ++i) {
        Widen16(kind, x + base + i * inner, buf.data() + i * w, static_cast<size_t>(w));
      }
      fn(buf.data(), w);
      for (int64_t i = 0; i < n; ++i) {
        Narrow16(kind, buf.data() + i * w, y + base + i * inner, static_cast<size_t>(w));
      }
    }
  });
}

}  // namespace

void LpNormalize16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t outer, int64_t n,
                   int64_t inner, int p, const Parallel& parallel) {
  Slabs16(kind, x, y, outer, n, inner, parallel, [&](float* buf, int64_t w) {
    LpNormalizeF32(buf, buf, 1, n, w, p, SerialParallel());
  });
}

void Lrn16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t batch, int64_t channels,
           int64_t spatial, int64_t size, float alpha, float beta, float bias,
           const Parallel& parallel) {
  Slabs16(kind, x, y, batch, channels, spatial, parallel, [&](float* buf, int64_t w) {
    LrnF32(buf, buf, 1, channels, w, size, alpha, beta, bias, SerialParallel());
  });
}

void NormalizeRows16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t rows,
                     int64_t channels, int64_t spatial, int64_t period, const float* scale,
                     const float* bias, float epsilon, float* mean_out, float* inv_std_out,
                     const Parallel& parallel) {
  const int64_t len = channels * spatial;
  if (rows <= 0 || len <= 0) return;
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / len);
  const int64_t tasks = (rows + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<float> buf(static_cast<size_t>(len));
    for (int64_t r = t0 * per_task; r < std::min(rows, t1 * per_task); ++r) {
      Widen16(kind, x + r * len, buf.data(), static_cast<size_t>(len));
      const int64_t c0 = (r % period) * channels;  // this row's first scale / bias entry
      NormalizeRowsF32(buf.data(), buf.data(), 1, channels, spatial, 1,
                       scale != nullptr ? scale + c0 : nullptr, bias != nullptr ? bias + c0 : nullptr,
                       epsilon, mean_out != nullptr ? mean_out + r : nullptr,
                       inv_std_out != nullptr ? inv_std_out + r : nullptr, SerialParallel());
      Narrow16(kind, buf.data(), y + r * len, static_cast<size_t>(len));
    }
  });
}

void ChannelAffine16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t outer,
                     int64_t channels, int64_t inner, const float* center, const float* mul,
                     const float* add, const Parallel& parallel) {
  const int64_t planes = outer * channels;
  if (planes <= 0 || inner <= 0) return;
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / inner);
  const int64_t tasks = (planes + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    float buf[kBlock];
    for (int64_t pl = t0 * per_task; pl < std::min(planes, t1 * per_task); ++pl) {
      const int64_t c = pl % channels;
      for (int64_t i = 0; i < inner; i += kBlock) {
        const int64_t n = std::min(kBlock, inner - i);
        Widen16(kind, x + pl * inner + i, buf, static_cast<size_t>(n));
        ChannelAffineF32(buf, buf, 1, 1, n, center + c, mul + c, add + c, SerialParallel());
        Narrow16(kind, buf, y + pl * inner + i, static_cast<size_t>(n));
      }
    }
  });
}

}  // namespace simplecpp::kernels
