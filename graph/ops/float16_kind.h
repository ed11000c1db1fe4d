// The 16-bit float dtypes and the kernels' name for each, for ops that store float16 or bfloat16.
#pragma once

#include "kernels/float16/float16.h"
#include "simplecpp/dtype.h"

namespace simplecpp::graph {

inline bool Is16BitFloat(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// kHalf for float16, kBFloat16 for bfloat16 (callers check Is16BitFloat first).
inline kernels::Float16Kind Float16KindOf(DType t) {
  return t == DType::kBFloat16 ? kernels::Float16Kind::kBFloat16 : kernels::Float16Kind::kHalf;
}

}  // namespace simplecpp::graph
