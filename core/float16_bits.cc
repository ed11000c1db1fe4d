// Scalar float16 <-> float32 conversion (see core/float16_bits.h for the rules).
#include "core/float16_bits.h"

#include "core/bit_cast.h"

namespace simplecpp {

uint16_t FloatToHalfBits(float f) {
  const uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) {
    if (ax == 0x7F800000u) return sign | 0x7C00u;  // Inf
    // NaN: quiet bit set, top 9 payload bits kept.
    return static_cast<uint16_t>(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
  }
  // 65520 = 65504 + half an ulp: ties go to the even neighbour, which is 2^16 (Inf).
  if (ax >= 0x477FF000u) return sign | 0x7C00u;
  if (ax >= 0x38800000u) {
    // Normal float16 (>= 2^-14): rebias the exponent (127 -> 15) and round 23 -> 10 bits.
    uint32_t r = ax - (112u << 23);
    r += 0xFFFu + ((r >> 13) & 1u);
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  if (ax <= 0x33000000u) return sign;  // <= 2^-25: half of the smallest subnormal ties to 0
  // Subnormal float16: the value in units of 2^-24 is m * 2^(e - 126) for exponent field e.
  const uint32_t e = ax >> 23;  // 102..112
  const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);  // q == 0x400 encodes the smallest normal
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  if (e == 0x1F) {
    if (m == 0) return FloatFromBits(sign | 0x7F800000u);
    return FloatFromBits(sign | 0x7FC00000u | (m << 13));  // quiet NaN, payload kept
  }
  if (e == 0) {
    if (m == 0) return FloatFromBits(sign);
    // Subnormal m * 2^-24: normalize into a float32 normal.
    uint32_t e32 = 113;
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --e32;
    }
    return FloatFromBits(sign | (e32 << 23) | ((m & 0x3FFu) << 13));
  }
  return FloatFromBits(sign | ((e + 112) << 23) | (m << 13));
}

}  // namespace simplecpp
