// Pooling kernels: max / average / Lp pooling over 1-3 spatial dims, and the global variants.
//
// Layout: x is [planes, in[0], in[1], in[2]] and y is [planes, out[0], out[1], out[2]], row-major,
// planes = N * C. Pools over fewer than three spatial dims put size-1 dims first (kernel 1,
// stride 1, dilation 1, no padding). The op computes the geometry (auto_pad, ceil_mode) and
// validates it; kernels assume it is consistent: out >= 1, kernel/stride/dilation >= 1,
// pads >= 0.
//
// Window of output o along dim a: positions p = o*stride + k*dilation - pad_begin for
// k in [0, kernel). Positions outside [0, in) are padding: ignored by max pooling, zero for
// average / Lp pooling. Average pooling divides by the number of positions inside the input
// (count_include_pad = 0) or inside [-pad_begin, in + pad_end) (count_include_pad = 1; positions
// past the end padding, which ceil_mode can create, never count).
#pragma once

#include <cstdint>

#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

struct PoolGeometry {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};
};

void MaxPoolF32(const float* x, float* y, const PoolGeometry& g, const Parallel& parallel);
void MaxPoolF64(const double* x, double* y, const PoolGeometry& g, const Parallel& parallel);
void MaxPoolU8(const uint8_t* x, uint8_t* y, const PoolGeometry& g, const Parallel& parallel);
void MaxPoolI8(const int8_t* x, int8_t* y, const PoolGeometry& g, const Parallel& parallel);

// Max pooling with ONNX's Indices output: the flat index of the chosen element in the whole input
// tensor (plane offset included, padding never chosen; ties keep the first in window order).
// column_major (storage_order = 1) flattens the `spatial_rank` real spatial dims first-fastest.
void MaxPoolWithIndicesF32(const float* x, float* y, int64_t* indices, const PoolGeometry& g,
                           int spatial_rank, bool column_major, const Parallel& parallel);
void MaxPoolWithIndicesF64(const double* x, double* y, int64_t* indices, const PoolGeometry& g,
                           int spatial_rank, bool column_major, const Parallel& parallel);
void MaxPoolWithIndicesU8(const uint8_t* x, uint8_t* y, int64_t* indices, const PoolGeometry& g,
                          int spatial_rank, bool column_major, const Parallel& parallel);
void MaxPoolWithIndicesI8(const int8_t* x, int8_t* y, int64_t* indices, const PoolGeometry& g,
                          int spatial_rank, bool column_major, const Parallel& parallel);

void AveragePoolF32(const float* x, float* y, const PoolGeometry& g, bool count_include_pad,
                    const Parallel& parallel);
void AveragePoolF64(const double* x, double* y, const PoolGeometry& g, bool count_include_pad,
                    const Parallel& parallel);

// y = (sum over the window of |x|^p)^(1/p); padding contributes 0.
void LpPoolF32(const float* x, float* y, const PoolGeometry& g, float p, const Parallel& parallel);
void LpPoolF64(const double* x, double* y, const PoolGeometry& g, float p,
               const Parallel& parallel);

// x is [planes, size]; y is [planes].
void GlobalAveragePoolF32(const float* x, float* y, int64_t planes, int64_t size,
                          const Parallel& parallel);
void GlobalAveragePoolF64(const double* x, double* y, int64_t planes, int64_t size,
                          const Parallel& parallel);
void GlobalMaxPoolF32(const float* x, float* y, int64_t planes, int64_t size,
                      const Parallel& parallel);
void GlobalMaxPoolF64(const double* x, double* y, int64_t planes, int64_t size,
                      const Parallel& parallel);

// 16-bit float storage (float16 / bfloat16 bits, kernels/nn/pool_f16.cc): each plane is widened to
// float32, pooled by the float32 kernel above and rounded once per output element. indices
// (kMax only, nullable) as MaxPoolWithIndicesF32; count_include_pad for kAverage; p for kLp.
// kGlobalAverage / kGlobalMax pool the whole plane (g.in is the plane, g.out must be 1x1x1).
enum class Pool16Op : int { kMax, kAverage, kLp, kGlobalAverage, kGlobalMax };
void Pool16(Float16Kind kind, Pool16Op op, const uint16_t* x, uint16_t* y, int64_t* indices,
            const PoolGeometry& g, bool count_include_pad, float p, int spatial_rank,
            bool column_major, const Parallel& parallel);

}  // namespace simplecpp::kernels
