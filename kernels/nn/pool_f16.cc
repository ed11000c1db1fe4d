// Pooling on 16-bit float storage (kernels/nn/pool.h, Pool16): one plane at a time is widened to
// float32 in a per-task buffer, pooled by the float32 kernel and rounded back once per output.
// Tasks are groups of whole planes (sizes depend only on the geometry). Plain C++.
#include <algorithm>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/nn/pool.h"

namespace simplecpp::kernels {

void Pool16(Float16Kind kind, Pool16Op op, const uint16_t* x, uint16_t* y, int64_t* indices,
            const PoolGeometry& g, bool count_include_pad, float p, int spatial_rank,
            bool column_major, const Parallel& parallel) {
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
  if (g.planes <= 0 || out_size <= 0) return;
  const int64_t per_task = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(in_size, 1));
  const int64_t tasks = (g.planes + per_task - 1) / per_task;
  PoolGeometry one = g;
  one.planes = 1;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<float> xin(static_cast<size_t>(in_size)), yout(static_cast<size_t>(out_size));
    for (int64_t pl = t0 * per_task; pl < std::min(g.planes, t1 * per_task); ++pl) {
      Widen16(kind, x + pl * in_size, xin.data(), static_cast<size_t>(in_size));
      switch (op) {
        case Pool16Op::kMax:
          if (indices != nullptr) {
            int64_t* idx = indices + pl * out_size;
            MaxPoolWithIndicesF32(xin.data(), yout.data(), idx, one, spatial_rank, column_major,
                                  SerialParallel());
            for (int64_t i = 0; i < out_size; ++i) idx[i] += pl * in_size;  // plane offset
          } else {
            MaxPoolF32(xin.data(), yout.data(), one, SerialParallel());
          }
          break;
        case Pool16Op::kAverage:
          AveragePoolF32(xin.data(), yout.data(), one, count_include_pad, SerialParallel());
          break;
        case Pool16Op::kLp: LpPoolF32(xin.data(), yout.data(), one, p, SerialParallel()); break;
        case Pool16Op::kGlobalAverage:
          GlobalAveragePoolF32(xin.data(), yout.data(), 1, in_size, SerialParallel());
          break;
        case Pool16Op::kGlobalMax:
          GlobalMaxPoolF32(xin.data(), yout.data(), 1, in_size, SerialParallel());
          break;
      }
      Narrow16(kind, yout.data(), y + pl * out_size, static_cast<size_t>(out_size));
    }
  });
}

}  // namespace simplecpp::kernels
