// Pooling on 16-bit float storage (kernels/nn/pool.h, Pool16): a task's planes are widened to
// float32 in a per-task buffer, pooled by the float32 kernel and rounded back once per output.
// Tasks are groups of whole planes (sizes depend only on the geometry). Plain C++.
#include <algorithm>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/nn/pool.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

void Pool16(Float16Kind kind, Pool16Op op, const uint16_t* x, uint16_t* y, int64_t* indices,
            const PoolGeometry& g, bool count_include_pad, float p, int spatial_rank,
            bool column_major, const Parallel& parallel) {
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
  if (g.planes <= 0 || out_size <= 0) return;
  const int64_t per_task = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(in_size, 1));
  const int64_t tasks = (g.planes + per_task - 1) / per_task;
  // One widening, one float32 pooling call and one rounding per task of planes (not per plane:
  // a squeeze-excitation block pools 100-400 small planes), on the calling thread when small.
  ParallelForElements(parallel, g.planes * in_size).For(tasks, [&](int64_t t0, int64_t t1) {
    // Kept per thread between calls: a fresh 128 KiB buffer per call comes from mmap, as fresh
    // pages the kernel faults in and zeroes.
    static thread_local std::vector<float> xin, yout;
    xin.resize(std::max(xin.size(), static_cast<size_t>(per_task * in_size)));
    yout.resize(std::max(yout.size(), static_cast<size_t>(per_task * out_size)));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t pl0 = t * per_task;
      const int64_t count = std::min(per_task, g.planes - pl0);
      PoolGeometry group = g;
      group.planes = count;
      Widen16(kind, x + pl0 * in_size, xin.data(), static_cast<size_t>(count * in_size));
      switch (op) {
        case Pool16Op::kMax:
          if (indices != nullptr) {
            int64_t* idx = indices + pl0 * out_size;
            MaxPoolWithIndicesF32(xin.data(), yout.data(), idx, group, spatial_rank, column_major,
                                  SerialParallel());
            // Relative to the task's first plane: offset by the planes before it.
            for (int64_t i = 0; i < count * out_size; ++i) idx[i] += pl0 * in_size;
          } else {
            MaxPoolF32(xin.data(), yout.data(), group, SerialParallel());
          }
          break;
        case Pool16Op::kAverage:
          AveragePoolF32(xin.data(), yout.data(), group, count_include_pad, SerialParallel());
          break;
        case Pool16Op::kLp: LpPoolF32(xin.data(), yout.data(), group, p, SerialParallel()); break;
        case Pool16Op::kGlobalAverage:
          GlobalAveragePoolF32(xin.data(), yout.data(), count, in_size, SerialParallel());
          break;
        case Pool16Op::kGlobalMax:
          GlobalMaxPoolF32(xin.data(), yout.data(), count, in_size, SerialParallel());
          break;
      }
      Narrow16(kind, yout.data(), y + pl0 * out_size, static_cast<size_t>(count * out_size));
    }
  });
}

}  // namespace simplecpp::kernels
