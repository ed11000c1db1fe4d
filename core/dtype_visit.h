// From a run-time DType to the C++ type of its elements: the one switch that the dtype-generic
// code of every layer (graph's ops, kernels' Cast) goes through to instantiate its templates.
#pragma once

#include <cstdint>

#include "simplecpp/dtype.h"

namespace simplecpp {

// Calls f(T{}) with T the C++ type that stores one element of a numeric dtype: float, double,
// the 8- to 64-bit integers, bool. Returns false without calling f for every other dtype (16-bit
// and 8-bit floats, packed sub-byte integers, strings, complex), which each caller handles its own
// way (its own element type, an error, or a refusal).
template <typename F>
bool VisitNumericType(DType dt, F&& f) {
  // One line per dtype: it reads as the table it is.
  // clang-format off
  switch (dt) {
    case DType::kFloat32: f(float{}); return true;
    case DType::kFloat64: f(double{}); return true;
    case DType::kInt8: f(int8_t{}); return true;
    case DType::kUInt8: f(uint8_t{}); return true;
    case DType::kInt16: f(int16_t{}); return true;
    case DType::kUInt16: f(uint16_t{}); return true;
    case DType::kInt32: f(int32_t{}); return true;
    case DType::kUInt32: f(uint32_t{}); return true;
    case DType::kInt64: f(int64_t{}); return true;
    case DType::kUInt64: f(uint64_t{}); return true;
    case DType::kBool: f(bool{}); return true;
    default: return false;
  }
  // clang-format on
}

}  // namespace simplecpp
