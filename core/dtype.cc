// DType names and sizes (declared in simplecpp/dtype.h).
#include "simplecpp/dtype.h"

namespace simplecpp {

std::string DTypeName(DType t) {
  switch (t) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kFloat64: return "float64";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUInt4: return "uint4";
    case DType::kInt4: return "int4";
    case DType::kFloat4E2M1: return "float4e2m1";
    case DType::kFloat8E8M0: return "float8e8m0";
    case DType::kUInt2: return "uint2";
    case DType::kInt2: return "int2";
  }
  return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
}

bool IsKnownDType(int32_t n) { return n >= 1 && n <= 26; }

int DTypeBits(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      return 8;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 16;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32:
      return 32;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64:
    case DType::kComplex64:
      return 64;
    case DType::kComplex128:
      return 128;
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kUInt2:
    case DType::kInt2:
      return 2;
    case DType::kString:
    case DType::kUndefined:
      return 0;
  }
  return 0;
}

size_t DTypeSize(DType t) {
  const int bits = DTypeBits(t);
  return bits >= 8 ? static_cast<size_t>(bits / 8) : 0;
}

bool IsFloatDType(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat64;
}

bool IsIntegerDType(DType t) {
  switch (t) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

bool IsSignedDType(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         t == DType::kInt4 || t == DType::kInt2 || IsFloatDType(t);
}

}  // namespace simplecpp
