// Sub-byte packing (quant/int4.h).
#include "quant/int4.h"

namespace simplecpp::quant {

void UnpackSubByte(const uint8_t* data, int64_t first, int64_t n, int bits, bool is_signed,
                   int32_t* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = GetSubByte(data, first + j, bits, is_signed);
}

void PackSubByte(const int32_t* values, int64_t first, int64_t n, int bits, uint8_t* data) {
  const int per_byte = 8 / bits;
  const uint32_t mask = (1u << bits) - 1u;
  int64_t j = 0;
  // Leading elements that share a byte with elements before `first`.
  for (; j < n && (first + j) % per_byte != 0; ++j) SetSubByte(data, first + j, bits, values[j]);
  // Whole bytes (and a final partial byte, whose unused high bits become 0) written at once.
  for (; j < n; j += per_byte) {
    uint32_t byte = 0;
    for (int e = 0; e < per_byte && j + e < n; ++e) {
      byte |= (static_cast<uint32_t>(values[j + e]) & mask) << (e * bits);
    }
    data[(first + j) / per_byte] = static_cast<uint8_t>(byte);
  }
}

}  // namespace simplecpp::quant
