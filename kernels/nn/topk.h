// TopK: the k largest (or smallest) elements along the middle axis of a row-major
// [outer, n, inner] view, with their indices.
//
// Order: by value (descending when largest, ascending otherwise); equal values are ordered by
// their index, lower first, as the ONNX spec requires. NaN is treated as greater than every
// number (numpy's sort order), so it comes first when largest and last otherwise; NaNs among
// themselves are ordered by index. The output is always sorted (ONNX leaves the order unspecified
// when sorted == 0, so sorted output is valid for both).
#pragma once

#include <cstdint>

#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// x is [outer, n, inner]; values is [outer, k, inner] and indices [outer, k, inner] (int64 in
// [0, n)). Requires 0 <= k <= n. Instantiated for float, double, int8, uint8, int16, uint16, int32,
// uint32, int64, uint64.
template <typename T>
void TopK(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest, T* values,
          int64_t* indices, const Parallel& parallel);

// 16-bit floats (float16 / bfloat16 bits): ordered by their exact float32 widening, same rules as
// above; `values` receives the selected input bit patterns unchanged.
void TopK16(Float16Kind kind, const uint16_t* x, int64_t outer, int64_t n, int64_t inner, int64_t k,
            bool largest, uint16_t* values, int64_t* indices, const Parallel& parallel);

}  // namespace simplecpp::kernels
