// Sub-byte integer storage (int4/uint4 two per byte, int2/uint2 four per byte), the layout ONNX
// and simplecpp::Tensor use: element i lives in byte i / (8/bits), lowest bits first (for 4-bit:
// even elements in the low nibble, odd elements in the high nibble). A trailing partial byte has
// its unused high bits zero. Signed values are two's complement within their bits.
// Plain functions, no graph, no Highway.
#pragma once

#include <cstdint>

namespace simplecpp::quant {

// Element i of a packed buffer of `bits`-wide integers (bits = 2 or 4), sign-extended if signed.
inline int32_t GetSubByte(const uint8_t* data, int64_t i, int bits, bool is_signed) {
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  const uint32_t mask = (1u << bits) - 1u;
  const uint32_t raw = (static_cast<uint32_t>(data[i / per_byte]) >> shift) & mask;
  if (is_signed && (raw & (1u << (bits - 1))) != 0) {
    return static_cast<int32_t>(raw) - (1 << bits);
  }
  return static_cast<int32_t>(raw);
}

// Writes element i (only its low `bits` bits are stored); the other elements of the byte keep
// their value.
inline void SetSubByte(uint8_t* data, int64_t i, int bits, int32_t value) {
  const int per_byte = 8 / bits;
  const int shift = static_cast<int>(i % per_byte) * bits;
  const uint32_t mask = (1u << bits) - 1u;
  uint8_t& byte = data[i / per_byte];
  byte = static_cast<uint8_t>((byte & ~(mask << shift)) |
                              ((static_cast<uint32_t>(value) & mask) << shift));
}

// Bytes holding n packed elements.
inline int64_t SubByteBytes(int64_t n, int bits) {
  const int per_byte = 8 / bits;
  return (n + per_byte - 1) / per_byte;
}

// out[j] = element (first + j), j < n, widened to int32.
void UnpackSubByte(const uint8_t* data, int64_t first, int64_t n, int bits, bool is_signed,
                   int32_t* out);
// Packs n int32 values (already in range) into elements first..first+n-1 of `data`.
void PackSubByte(const int32_t* values, int64_t first, int64_t n, int bits, uint8_t* data);

}  // namespace simplecpp::quant
