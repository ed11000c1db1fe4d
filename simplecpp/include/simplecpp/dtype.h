// Element types, numbered exactly as ONNX's TensorProto.DataType numbers them, so a dtype read
// from a model or written to a .pb file needs no translation table. Shared by every layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace simplecpp {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// ONNX-style lower-case name ("float32", "int64", "bfloat16", ...); "dtype(N)" for unknown numbers.
std::string DTypeName(DType t);
// True for the dtypes this library stores as tensors (data may still be unsupported by an op).
bool IsKnownDType(int32_t onnx_number);
// Bits per element: 4 for int4/uint4/float4, 2 for int2/uint2, 0 for string and undefined.
int DTypeBits(DType t);
// Bytes per element for byte-sized dtypes, 0 for sub-byte, string and undefined.
size_t DTypeSize(DType t);
bool IsFloatDType(DType t);    // float16, bfloat16, float32, float64 (not float8/4)
bool IsIntegerDType(DType t);  // signed and unsigned integers of 8..64 bits (not 4/2-bit)
bool IsSignedDType(DType t);

}  // namespace simplecpp
