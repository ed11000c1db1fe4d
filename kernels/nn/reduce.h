// Reduction kernels: Reduce* (sum, sum of squares, sum of |x|, product, max, min, log-sum-exp),
// ArgMax/ArgMin and CumSum.
//
// Every kernel works on one row-major [outer, n, inner] view of its input: the op merges adjacent
// reduced axes and adjacent kept axes, and reduces one group of reduced axes per pass, so a pass is
//   y[o, j] = reduce over i of x[o, i, j]        x is [outer, n, inner], y is [outer, inner].
// inner == 1 reduces contiguous rows (vector accumulators, one horizontal reduction at the end);
// inner > 1 vectorizes across the contiguous inner dimension (y[o, j..j+lanes) accumulates x[o, i,
// j..]). n == 0 writes the identity of the reduction (sum 0, prod 1, max -inf or the lowest value,
// min +inf or the highest value, log-sum-exp -inf).
//
// Accumulation order per output is fixed (it depends only on the sizes and, for float32, on the
// Highway target's lane count), never on the number of threads.
//
// NaN: Max and Min propagate NaN like numpy's max/min (any NaN in the reduced set gives NaN);
// Sum/Prod/LogSumExp propagate it arithmetically. ArgMax/ArgMin treat NaN as the winning value
// (numpy's argmax/argmin return the first NaN), the last one with select_last_index.
//
// float32 uses Highway; the other dtypes use the portable templates below (explicitly
// instantiated in reduce.cc for float32, float64, int8, uint8, int16, uint16, int32, int64, uint32,
// uint64 and, for Max/Min only, bool). Integer sums and products wrap around (two's complement).
#pragma once

#include <cstdint>

#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

enum class ReduceKind {
  kSum,        // sum x
  kSumSquare,  // sum x*x
  kAbsSum,     // sum |x|
  kProd,       // product x
  kMax,        // max x
  kMin,        // min x
  kLogSumExp,  // log(sum(exp(x))), computed as m + log(sum(exp(x - m))) with m = max x
};

// x is [outer, n, inner], y is [outer, inner].
template <typename T>
using ReduceFn = void (*)(const T* x, int64_t outer, int64_t n, int64_t inner, T* y,
                          const Parallel& parallel);

// Float32 (Highway).
void ReduceSumF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                  const Parallel& parallel);
void ReduceSumSquareF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                        const Parallel& parallel);
void ReduceAbsSumF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                     const Parallel& parallel);
void ReduceProdF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                   const Parallel& parallel);
void ReduceMaxF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                  const Parallel& parallel);
void ReduceMinF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                  const Parallel& parallel);
void ReduceLogSumExpF32(const float* x, int64_t outer, int64_t n, int64_t inner, float* y,
                        const Parallel& parallel);

// Element-wise finishing steps of the composite reductions, in place on y[0, count).
void DivideF32(float* y, int64_t count, float divisor);  // ReduceMean
void SqrtF32(float* y, int64_t count);                   // ReduceL2

// The kernel for (T, kind); float32 returns the Highway kernels above. nullptr when the pair is
// not instantiated (bool supports only kMax and kMin).
template <typename T>
ReduceFn<T> GetReduceFn(ReduceKind kind);

// Finishing steps for any T (float32 forwards to the Highway versions). Integer results are
// computed in double and converted back (truncation toward zero, saturating at the type's range,
// NaN -> 0); an integer mean over zero elements gives 0.
template <typename T>
void ReduceDivide(T* y, int64_t count, int64_t divisor);
template <typename T>
void ReduceSqrt(T* y, int64_t count);
template <typename T>
void ReduceLog(T* y, int64_t count);

// ArgMax / ArgMin: y[o, j] = index i in [0, n) of the max / min of x[o, :, j]; first occurrence,
// or the last one when select_last. n must be >= 1. y is [outer, inner].
template <typename T>
void ArgMax(const T* x, int64_t outer, int64_t n, int64_t inner, bool select_last, int64_t* y,
            const Parallel& parallel);
template <typename T>
void ArgMin(const T* x, int64_t outer, int64_t n, int64_t inner, bool select_last, int64_t* y,
            const Parallel& parallel);

// CumSum along the middle axis of [outer, n, inner]: y[o, i, j] = sum of x[o, i', j] for i' <= i
// (i' < i when exclusive; i' >= i / i' > i when reverse). y has x's shape and must not alias x.
template <typename T>
void CumSum(const T* x, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse, T* y,
            const Parallel& parallel);

// ---- 16-bit floats (float16 / bfloat16 bits, `kind` says which). Storage stays 16-bit: the
// kernels widen small blocks (at most a few thousand elements) into a stack buffer, never a
// float32 copy of the whole input, and do the arithmetic in float32.

// One pass of `op` over a 16-bit x [outer, n, inner] into float32 y [outer, inner] (same
// semantics, identities and NaN rules as the float32 kernels above). The op runs the later
// passes and the finishing step (DivideF32 / SqrtF32 / ReduceLog) on the float32 result and
// rounds each final value to 16 bits once.
void Reduce16ToF32(Float16Kind kind, ReduceKind op, const uint16_t* x, int64_t outer, int64_t n,
                   int64_t inner, float* y, const Parallel& parallel);

// ArgMax / ArgMin of 16-bit x, comparing the (exact) float32 widenings; same rules as ArgMax.
void ArgMax16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
              bool select_last, int64_t* y, const Parallel& parallel);
void ArgMin16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
              bool select_last, int64_t* y, const Parallel& parallel);

// CumSum of 16-bit x with a float32 running sum per column; each output element is the running
// sum rounded once to 16 bits (round to nearest even). y must not alias x.
void CumSum16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner,
              bool exclusive, bool reverse, uint16_t* y, const Parallel& parallel);

}  // namespace simplecpp::kernels
