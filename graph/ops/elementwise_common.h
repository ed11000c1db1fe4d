// Helpers shared by the elementwise op files (elementwise.cc, elementwise_unary.cc): dtype
// visiting, dtype lists, chunked parallel loops, registration of an op at several versions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype_visit.h"
#include "graph/op.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::graph::elementwise {

// Calls f(T{}) with T the C++ type of dt (bool as uint8_t: the elementwise kernels see bools as
// the 0/1 bytes they are stored as). InferTypes has rejected every other dtype before Prepare.
template <typename F>
void VisitNumeric(DType dt, F&& f) {
  const bool numeric = VisitNumericType(dt, [&](auto tag) {
    if constexpr (std::is_same_v<decltype(tag), bool>) {
      f(uint8_t{});
    } else {
      f(tag);
    }
  });
  if (!numeric) {
    throw Error(ErrorCode::kInternal, "elementwise: dtype " + DTypeName(dt) + " reached Prepare");
  }
}

// float16 / bfloat16 are stored as 16 bits and computed in float32
// (kernels/elementwise/elementwise.h, "16-bit float storage"); every op taking FloatTypes() handles
// them before VisitNumeric.
inline const std::vector<DType>& FloatTypes() {
  static const std::vector<DType> k = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                       DType::kBFloat16};
  return k;
}
inline const std::vector<DType>& SignedIntTypes() {
  static const std::vector<DType> k = {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64};
  return k;
}
inline const std::vector<DType>& UnsignedIntTypes() {
  static const std::vector<DType> k = {DType::kUInt8, DType::kUInt16, DType::kUInt32,
                                       DType::kUInt64};
  return k;
}
inline std::vector<DType> Concat(std::initializer_list<std::vector<DType>> lists) {
  std::vector<DType> out;
  for (const auto& l : lists) out.insert(out.end(), l.begin(), l.end());
  return out;
}
inline const std::vector<DType>& IntTypes() {
  static const std::vector<DType> k = Concat({SignedIntTypes(), UnsignedIntTypes()});
  return k;
}
inline const std::vector<DType>& NumericTypes() {
  static const std::vector<DType> k = Concat({FloatTypes(), IntTypes()});
  return k;
}

// Throws Unsupported naming the allowed list unless input i is present with one of `allowed`.
inline void RequireOneOf(const TypeContext& ctx, int input, const std::vector<DType>& allowed,
                         const char* what = "input") {
  ctx.RequireInput(input);
  const DType dt = ctx.input_dtype(input);
  if (std::find(allowed.begin(), allowed.end(), dt) != allowed.end()) return;
  std::string list;
  for (DType d : allowed) list += (list.empty() ? "" : ", ") + DTypeName(d);
  ctx.Unsupported(std::string(what) + " " + std::to_string(input) + " has dtype " +
                  DTypeName(dt) + "; supported: " + list);
}

// Elements per parallel task for plain (non-broadcast) loops: a problem-size constant.
constexpr int64_t kChunk = 1 << 15;

// fn(begin, end) over [0, n) in chunks of kChunk elements (deterministic task boundaries).
template <typename Fn>
void ForChunks(const kernels::Parallel& parallel, int64_t n, Fn&& fn) {
  if (n <= 0) return;
  const int64_t tasks = (n + kChunk - 1) / kChunk;
  if (tasks == 1) {
    fn(int64_t{0}, n);
    return;
  }
  // (At least one element read and one written per index.)
  kernels::ParallelForElements(parallel, 2 * n).For(tasks, [&](int64_t t0, int64_t t1) {
    fn(t0 * kChunk, std::min(n, t1 * kChunk));
  });
}

inline void RegisterVersions(OpRegistry& registry, const std::string& op_type,
                             const std::vector<int>& versions, const OpFactory& factory) {
  for (int v : versions) registry.Register("", op_type, v, factory);
}

void RegisterUnaryOps(OpRegistry& registry);   // elementwise_unary.cc
void RegisterBinaryOps(OpRegistry& registry);  // elementwise.cc

}  // namespace simplecpp::graph::elementwise
