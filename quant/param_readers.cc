// Parameter tensor readers (quant/param_readers.h).
#include "quant/param_readers.h"

#include <cstring>

#include "core/bit_cast.h"
#include "core/float16_bits.h"
#include "quant/int4.h"
#include "simplecpp/error.h"

namespace simplecpp::quant {
namespace {

float BFloat16BitsToF32(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) x |= 0x00400000u;  // quiet NaN
  return FloatFromBits(x);
}

// Element i of an integer (or bool) tensor as int64.
int64_t IntegerElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt64: return t.data<int64_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kUInt64: return static_cast<int64_t>(t.data<uint64_t>()[i]);
    default:
      throw Error(ErrorCode::kInvalidArgument,
                  "expected an integer tensor, got " + DTypeName(t.dtype()));
  }
}

// Element i of a scale tensor as float32 (ScalesAsF32's conversions).
float ScaleElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat16: return HalfBitsToFloat(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return BFloat16BitsToF32(t.data<uint16_t>()[i]);
    case DType::kFloat64: return static_cast<float>(t.data<double>()[i]);
    case DType::kBool: return t.data<uint8_t>()[i] ? 1.0f : 0.0f;
    default: return static_cast<float>(static_cast<double>(IntegerElement(t, i)));
  }
}

// Element i of a zero-point tensor as int32 (ZeroPointsAsI32's conversions).
int32_t ZeroPointElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kUInt4: case DType::kInt4: case DType::kUInt2: case DType::kInt2: {
      int32_t v = 0;
      UnpackSubByte(static_cast<const uint8_t*>(t.raw_data()), i, 1, DTypeBits(t.dtype()),
                    IsSignedDType(t.dtype()), &v);
      return v;
    }
    default: return 0;
  }
}

}  // namespace

std::vector<float> ScalesAsF32(const Tensor& t) {
  const int64_t n = t.num_elements();
  std::vector<float> out(static_cast<size_t>(n));
  if (t.dtype() == DType::kFloat32) {
    if (n > 0) std::memcpy(out.data(), t.data<float>(), static_cast<size_t>(n) * sizeof(float));
    return out;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = ScaleElement(t, i);
  return out;
}

std::vector<int32_t> ZeroPointsAsI32(const Tensor& t) {
  const int64_t n = t.num_elements();
  std::vector<int32_t> out(static_cast<size_t>(n));
  switch (t.dtype()) {
    case DType::kUInt4: case DType::kInt4: case DType::kUInt2: case DType::kInt2:
      UnpackSubByte(static_cast<const uint8_t*>(t.raw_data()), 0, n, DTypeBits(t.dtype()),
                    IsSignedDType(t.dtype()), out.data());
      break;
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = ZeroPointElement(t, i);
      break;
  }
  return out;
}

float FirstScaleAsF32(const Tensor& t) {
  if (t.num_elements() < 1) {
    throw Error(ErrorCode::kInvalidArgument, "a scale tensor without values");
  }
  return ScaleElement(t, 0);
}

int32_t FirstZeroPointAsI32(const Tensor& t) {
  if (t.num_elements() < 1) {
    throw Error(ErrorCode::kInvalidArgument, "a zero-point tensor without values");
  }
  return ZeroPointElement(t, 0);
}

QuantParams ReadQuantParams(const Tensor& scale, const Tensor* zero_point, bool constant) {
  QuantParams p;
  p.scales = ScalesAsF32(scale);
  if (zero_point != nullptr) p.zero_points = ZeroPointsAsI32(*zero_point);
  p.constant = constant;
  return p;
}

}  // namespace simplecpp::quant
