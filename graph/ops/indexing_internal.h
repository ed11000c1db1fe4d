// Shared pieces of the indexing op family (graph/ops/indexing*.cc): the per-file registration
// functions that RegisterIndexingOps calls, element-type dispatch chosen once at Prepare, and
// run-time index checks. Data movement is generic over the element size (uint8/16/32/64, a
// 16-byte struct for complex128) with std::string for string tensors; ops that compute (scatter
// reductions, Unique's ordering, Det, ...) dispatch on the real C++ type.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype_visit.h"
#include "graph/op.h"
#include "graph/ops/tensor_ops_internal.h"
#include "graph/registry.h"

namespace simplecpp::graph::indexing {

using tensor_ops::AxisGatherRunFn;
using tensor_ops::InferMoveByIndexTypes;
using tensor_ops::IntsToString;
using tensor_ops::IsMovableDType;
using tensor_ops::ReadInts;
using tensor_ops::RegisterVersions;
using tensor_ops::RequireIntegerIndex;
using tensor_ops::RequireMovable;
using tensor_ops::Strides;

void RegisterIndexingMoveOps(OpRegistry& registry);    // indexing.cc
void RegisterIndexingScatterOps(OpRegistry& registry); // indexing_scatter.cc
void RegisterIndexingSetOps(OpRegistry& registry);     // indexing_set.cc (NonZero, Compress, Unique)
void RegisterIndexingMathOps(OpRegistry& registry);    // indexing_math.cc
void RegisterIndexingRandomOps(OpRegistry& registry);  // indexing_random.cc

// A 16-byte element (complex128) moved as a unit.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(T{}) with T the storage type that moves one element of dt: an unsigned integer of the
// element's size, Bytes16, or std::string. dt must pass IsMovableDType.
template <typename F>
auto VisitMovable(DType dt, F&& f) {
  if (dt == DType::kString) return f(std::string{});
  switch (DTypeSize(dt)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Bytes16{});
    default: break;
  }
  throw Error(ErrorCode::kInternal, "indexing: dtype " + DTypeName(dt) + " cannot be moved");
}

template <typename T>
const T* DataOf(const Tensor& t) {
  if constexpr (std::is_same_v<T, std::string>) {
    return t.strings().data();
  } else {
    return static_cast<const T*>(t.raw_data());
  }
}
template <typename T>
T* DataOf(Tensor& t) {
  if constexpr (std::is_same_v<T, std::string>) {
    return t.strings().data();
  } else {
    return static_cast<T*>(t.raw_data());
  }
}

// Reads element i of an index tensor as int64 (chosen once at Prepare by IndexReaderFor).
using IndexReader = int64_t (*)(const void* data, int64_t i);
inline int64_t ReadIndexI64(const void* d, int64_t i) { return static_cast<const int64_t*>(d)[i]; }
inline int64_t ReadIndexI32(const void* d, int64_t i) { return static_cast<const int32_t*>(d)[i]; }
inline IndexReader IndexReaderFor(DType dt) {
  return dt == DType::kInt32 ? &ReadIndexI32 : &ReadIndexI64;
}

// Normalizes index v against an axis of size `bound` (accepting [-bound, bound)); fails naming the
// index, where it was found and the valid range.
inline int64_t CheckIndex(const RunContext& ctx, int64_t v, int64_t bound, const std::string& what,
                          int64_t position) {
  if (v < -bound || v >= bound) {
    ctx.Fail(what + " " + std::to_string(v) + " at position " + std::to_string(position) +
             " is out of range for a dimension of size " + std::to_string(bound) + " (valid: [" +
             std::to_string(-bound) + ", " + std::to_string(bound - 1) + "])");
  }
  return v < 0 ? v + bound : v;
}

inline int64_t Product(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end && k < d.size(); ++k) p *= d[k];
  return p;
}

// Element-wise copy of n elements (memcpy for plain types).
template <typename T>
void CopyElements(const T* src, T* dst, int64_t n) {
  if (n <= 0) return;
  if constexpr (std::is_trivially_copyable_v<T>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// Fails at load unless input i has one of the allowed dtypes.
inline void RequireOneOf(const TypeContext& ctx, int input, const std::vector<DType>& allowed) {
  ctx.RequireInput(input);
  const DType dt = ctx.input_dtype(input);
  for (DType d : allowed) {
    if (d == dt) return;
  }
  std::string list;
  for (DType d : allowed) list += (list.empty() ? "" : ", ") + DTypeName(d);
  ctx.Unsupported("input " + std::to_string(input) + " has dtype " + DTypeName(dt) +
                  "; supported: " + list);
}

}  // namespace simplecpp::graph::indexing
