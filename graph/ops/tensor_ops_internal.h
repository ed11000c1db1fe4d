// Shared pieces of the shape / data movement op family (graph/ops/tensor_*.cc): the per-file
// registration functions that RegisterTensorOps calls, and small helpers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/op.h"
#include "graph/registry.h"

namespace simplecpp::graph::tensor_ops {

void RegisterShapeOps(OpRegistry& registry);     // tensor_shape.cc
void RegisterGatherOps(OpRegistry& registry);    // tensor_gather.cc
void RegisterPadOps(OpRegistry& registry);       // tensor_pad.cc
void RegisterConstantOps(OpRegistry& registry);  // tensor_constant.cc

// Concat's output shape from its inputs' (all of the node's inputs) along axis_attr (negative
// counts from the end), checked as Concat checks them (ctx.Fail names what is wrong): the output
// dims, the product of the dims before the axis (outer), and each input's elements per outer
// index (rows).
struct ConcatShape {
  Dims out;
  int64_t outer = 1;
  std::vector<int64_t> rows;
};
ConcatShape ResolveConcatShape(const PrepareContext& ctx, int64_t axis_attr);  // tensor_gather.cc

// Registers one factory for several since_versions.
template <typename OpT>
void RegisterVersions(OpRegistry& registry, const char* op_type,
                      std::initializer_list<int> versions) {
  registry.RegisterVersions("", op_type, versions, MakeFactory<OpT>());
}

// True for the dtypes the data movement kernels handle: whole-byte elements and strings.
// (Packed 4-bit / 2-bit dtypes only pass through the zero-copy ops.)
inline bool IsMovableDType(DType t) { return t == DType::kString || DTypeSize(t) > 0; }

inline void RequireMovable(const TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  const DType t = ctx.input_dtype(i);
  if (!IsMovableDType(t)) {
    ctx.Unsupported("input " + std::to_string(i) + " has dtype " + DTypeName(t) +
                    "; this op moves whole-byte elements and strings only");
  }
}

inline void RequireIntegerIndex(const TypeContext& ctx, int i, const char* what) {
  ctx.RequireInput(i);
  const DType t = ctx.input_dtype(i);
  if (t != DType::kInt64 && t != DType::kInt32) {
    ctx.Unsupported(std::string(what) + " (input " + std::to_string(i) + ") has dtype " +
                    DTypeName(t) + "; expected int32 or int64");
  }
}

// InferTypes of the ops that move elements of input 0 (any movable dtype) as directed by the
// int32 / int64 input 1 (`what`: indices, shape, ...): the output has input 0's dtype.
inline void InferMoveByIndexTypes(TypeContext& ctx, const char* what) {
  RequireMovable(ctx, 0);
  RequireIntegerIndex(ctx, 1, what);
  ctx.set_output_dtype(0, ctx.input_dtype(0));
}

// Reads an optional int32/int64 value input as int64s; `present` tells whether it was given.
inline std::vector<int64_t> ReadInts(const PrepareContext& ctx, int i, bool* present = nullptr) {
  if (present) *present = ctx.has_input(i);
  if (!ctx.has_input(i)) return {};
  const Tensor& t = ctx.RequireValue(i);
  if (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) {
    ctx.Fail("input " + std::to_string(i) + " must be int32 or int64, got " + DTypeName(t.dtype()));
  }
  return TensorToInt64s(t);
}

// Normalizes axes against rank, rejecting out-of-range values and duplicates.
inline std::vector<int64_t> NormalizeAxes(const PrepareContext& ctx, const std::vector<int64_t>& axes,
                                          int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      ctx.Fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    }
    const int64_t n = a < 0 ? a + rank : a;
    if (seen[n]) ctx.Fail("axis " + std::to_string(a) + " is repeated");
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

// RunFn for "output 0 element = input 0 element at sum_k offsets[k][i_k]", i the output index
// (see kernels/memory/copy.h AxisGatherBytes); defined in tensor_gather.cc.
RunFn AxisGatherRunFn(DType dtype, const Dims& out_dims, std::vector<std::vector<int64_t>> offsets);

inline std::string IntsToString(const std::vector<int64_t>& v) { return DimsToString(v); }

// Row-major strides in elements.
inline std::vector<int64_t> Strides(const Dims& dims) {
  std::vector<int64_t> s(dims.size());
  int64_t acc = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    s[k] = acc;
    acc *= dims[k];
  }
  return s;
}

}  // namespace simplecpp::graph::tensor_ops
