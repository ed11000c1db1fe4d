// Softmax / LogSoftmax / Hardmax on 16-bit float storage (kernels/nn/softmax.h): blocks of the
// tensor are widened to float32 (one row [n] when inner == 1, else an [n, kInnerBlock] slab of
// columns), normalized by the float32 SIMD kernel and rounded back once per element. Plain C++.
#include <algorithm>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/nn/softmax.h"

namespace simplecpp::kernels {
namespace {

constexpr int64_t kInnerBlock = 64;  // columns per slab when inner > 1
// Tasks cover about this many elements (a problem-size constant: deterministic boundaries).
constexpr int64_t kTaskElements = 1 << 15;

using RowFn = void (*)(const float*, float*, int64_t, int64_t, int64_t, const Parallel&);

void Run16(RowFn fn, Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t outer, int64_t n,
           int64_t inner, const Parallel& parallel) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  const int64_t cols = std::min(inner, kInnerBlock);
  const int64_t col_blocks = (inner + cols - 1) / cols;
  const int64_t units = outer * col_blocks;  // one unit: an [n, <=cols] slab
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / (n * cols));
  const int64_t tasks = (units + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<float> buf(static_cast<size_t>(n * cols));
    for (int64_t u = t0 * per_task; u < std::min(units, t1 * per_task); ++u) {
      const int64_t o = u / col_blocks;
      const int64_t j0 = (u % col_blocks) * cols;
      const int64_t w = std::min(cols, inner - j0);
      const int64_t base = o * n * inner + j0;
      if (inner == 1) {
        Widen16(kind, x + base, buf.data(), static_cast<size_t>(n));
        fn(buf.data(), buf.data(), 1, n, 1, SerialParallel());
        Narrow16(kind, buf.data(), y + base, static_cast<size_t>(n));
        continue;
      }
      for (int64_t i = 0; i < n; ++i) Widen16(kind, x + base + i * inner, buf.data() + i * w, w);
      fn(buf.data(), buf.data(), 1, n, w, SerialParallel());
      for (int64_t i = 0; i < n; ++i) Narrow16(kind, buf.data() + i * w, y + base + i * inner, w);
    }
  });
}

}  // namespace

void SoftmaxF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel) {
  Run16(&SoftmaxF32, Float16Kind::kHalf, x, y, outer, n, inner, parallel);
}
void SoftmaxBF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                 const Parallel& parallel) {
  Run16(&SoftmaxF32, Float16Kind::kBFloat16, x, y, outer, n, inner, parallel);
}
void LogSoftmaxF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                   const Parallel& parallel) {
  Run16(&LogSoftmaxF32, Float16Kind::kHalf, x, y, outer, n, inner, parallel);
}
void LogSoftmaxBF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                    const Parallel& parallel) {
  Run16(&LogSoftmaxF32, Float16Kind::kBFloat16, x, y, outer, n, inner, parallel);
}
void HardmaxF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel) {
  Run16(&HardmaxF32, Float16Kind::kHalf, x, y, outer, n, inner, parallel);
}
void HardmaxBF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                 const Parallel& parallel) {
  Run16(&HardmaxF32, Float16Kind::kBFloat16, x, y, outer, n, inner, parallel);
}

}  // namespace simplecpp::kernels
