// Softmax, LogSoftmax and Hardmax along one axis.
//
// Every entry point sees the tensor as x[outer, n, inner] (row-major) and normalizes over n:
// inner == 1 is the contiguous-row case (vectorized along the row); inner > 1 is the strided case
// (vectorized across the inner dimension, so no per-element index math). The op folds whatever
// axis semantics its opset has (coerce-to-2-D before 13, single axis from 13) into these three
// numbers. Softmax subtracts the row maximum before exp (stable for large logits) and sums in
// double. An element equal to -inf gives probability 0; a row of only -inf gives NaN, as the math
// does (-inf - -inf).
#pragma once

#include <cstdint>

#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

void SoftmaxF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel);
void LogSoftmaxF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                   const Parallel& parallel);
// Scalar double paths (ONNX allows double; conformance cases are float32).
void SoftmaxF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel);
void LogSoftmaxF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner,
                   const Parallel& parallel);

// y = 1 at the first maximum along n, 0 elsewhere (NaN counts as the maximum, like numpy's argmax).
void HardmaxF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel);
void HardmaxF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel);

// 16-bit float storage (the bits of float16: ...F16, of bfloat16: ...BF16): slabs widened to
// float32, the float32 kernel, one rounding per element (kernels/nn/softmax_f16.cc). x and y must
// not overlap.
void SoftmaxF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel);
void SoftmaxBF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                 const Parallel& parallel);
void LogSoftmaxF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                   const Parallel& parallel);
void LogSoftmaxBF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                    const Parallel& parallel);
void HardmaxF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                const Parallel& parallel);
void HardmaxBF16(const uint16_t* x, uint16_t* y, int64_t outer, int64_t n, int64_t inner,
                 const Parallel& parallel);

}  // namespace simplecpp::kernels
