// ggml's tensor types (the ids GGUF files store) and the three block-32 formats simplecpp
// converts (Q8_0, Q4_0, Q4_1) as plain data and reference math: names, byte layouts, decoding into
// codes + per-block parameters, dequantization and the encoders that write test files.
// Written from the format description; no graph, no Highway.
//
// The block-32 formats. A row of n elements (n a multiple of 32) is n / 32 blocks stored one after
// another; block b holds elements 32b .. 32b+31 of the row. Every multi-byte field is
// little-endian; "half" is an IEEE binary16 bit pattern, widened exactly to float32.
//
//   Q8_0, 34 bytes:  bytes 0-1   d        half scale
//                    bytes 2-33  qs[32]   int8 (two's complement), element j is qs[j]
//     value j = float(qs[j]) * d
//
//   Q4_0, 18 bytes:  bytes 0-1   d        half scale
//                    bytes 2-17  qs[16]   byte j: bits 0-3 = code of element j,
//                                                 bits 4-7 = code of element j + 16
//     value j = float(code_j - 8) * d, code_j in [0, 15]
//
//   Q4_1, 20 bytes:  bytes 0-1   d        half scale
//                    bytes 2-3   m        half minimum
//                    bytes 4-19  qs[16]   nibbles as in Q4_0
//     value j = float(code_j) * d + m
//
// The nibble order is NOT ONNX's int4 packing (there element 2i is the low nibble of byte i and
// 2i+1 the high one): here byte j pairs element j with element j + 16. Codes therefore have to be
// unpacked (DecodeGgmlRow) and repacked for ONNX, never copied byte for byte.
//
// Each value is computed in float32 with the roundings written above and no others: the product
// is rounded to float32, and Q4_1's "+ m" rounds that rounded product again (never a fused
// multiply-add). The product's rounding is in fact exact: a code of at most 8 bits times a half
// (11 significant bits, subnormals multiples of 2^-24, at most 65504) always fits float32, so
// Q8_0 and Q4_0 values are exact and Q4_1 has the one rounding of the sum. This is why each
// format maps exactly onto an ONNX blocked DequantizeLinear (block_size 32 along the row, float32
// scale), which computes (q - zero_point) * scale in float32 with one rounding:
//   - Q8_0: int8 codes qs, scale d (the half widened exactly), no zero point:
//     (q - 0) * d = q * d, bit for bit.
//   - Q4_0: int4 codes code - 8 in [-8, 7] without zero point, or uint4 codes with zero point 8:
//     (code - 8) * d, the same single rounding (the integer subtraction is exact).
//   - Q4_1: uint4 codes, scale d, zero point 0 gives code * d exactly; the minimum m cannot be a
//     zero point (that would need zp = -m / d, not an integer in general), so it is a separate
//     float32 Add of m per block after the DequantizeLinear: (code * d) + m, the same two roundings.
// ggml's own CPU code may contract Q4_1's multiply-add into an FMA; these functions (and ONNX)
// do not.
#pragma once

#include <cstdint>
#include <vector>

namespace simplecpp::quant {

// ggml's type ids as written in GGUF tensor infos. The numbering is the format's own and
// append-only: ids 4 and 5 (Q4_2, Q4_3) and 31-33 were removed from ggml and are unknown here.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
};

// Elements per block of Q8_0, Q4_0 and Q4_1.
constexpr int64_t kGgmlBlock32 = 32;

// "F32", "Q4_0", ... (ggml's spelling), or nullptr for an id this enum does not name.
const char* GgmlTypeName(uint32_t id);

// A type's storage unit: block_bytes bytes hold block_elements consecutive elements of a row
// (1 for the plain types F32, F16, BF16, I8..I64, F64).
struct GgmlTypeLayout {
  int64_t block_elements;
  int64_t block_bytes;
};

// The layout of every named type (also of those simplecpp cannot convert, so a reader can check
// the byte size of any tensor); false for an unknown id (out untouched).
bool GgmlTypeLayoutOf(uint32_t id, GgmlTypeLayout* out);

// The types the encoders and decoders below handle: F32, F16, Q8_0, Q4_0, Q4_1.
bool GgmlTypeIsSupported(GgmlType type);

// Bytes of a row of n elements: n / block_elements * block_bytes. -1 when the id has no layout,
// n is negative or not a multiple of the block, or the size does not fit in int64_t.
int64_t GgmlRowBytes(uint32_t id, int64_t n);

// The stored integers and block parameters of a Q8_0, Q4_0 or Q4_1 row of n elements (n a
// multiple of 32; row holds GgmlRowBytes(type, n) bytes, validated by the caller):
//   codes[n]        per element, in element order: Q8_0 the int8 qs (-128..127); Q4_0 and Q4_1 the
//                   unsigned nibble (0..15; Q4_0's "- 8" is a zero point, not part of the code);
//   scales[n / 32]  per block, d widened exactly to float32;
//   mins[n / 32]    per block, Q4_1's m widened exactly (may be nullptr for Q8_0 / Q4_0).
// Returns false, writing nothing, for any other type: F32 / F16 hold values, not codes (use
// DequantizeGgmlRow), and the other formats are not decoded by simplecpp. Never throws.
bool DecodeGgmlRow(GgmlType type, const uint8_t* row, int64_t n, int32_t* codes, float* scales,
                   float* mins);

// The float32 values of a row of n elements of type F32, F16 (exact widening), Q8_0, Q4_0 or
// Q4_1 (the formulas at the top of this file, n a multiple of 32). Returns false, writing
// nothing, for any other type or an n that is not a multiple of the block. Never throws.
bool DequantizeGgmlRow(GgmlType type, const uint8_t* row, int64_t n, float* out);

// Encodes n float32 values as a row of `type` (F32, F16 or a block-32 format; n a multiple of
// the block), following ggml's reference quantizers, so the files they write are the files ggml
// would write. Returns an empty vector for any other type or a bad n. Per block of 32:
//   - F32: the bits as they are. F16: each value rounded to nearest even (core/float16_bits.h).
//   - Q8_0: amax = max |x|; d = amax / 127; id = d != 0 ? 1 / d : 0; stored d = half(d);
//     qs[j] = round half away from zero (C roundf) of x[j] * id.
//   - Q4_0: max = the element with the largest |x|, sign kept (the first one on ties);
//     d = max / -8; id = d != 0 ? 1 / d : 0; stored d = half(d);
//     code = min(15, trunc(x[j] * id + 8.5)) (truncation toward zero, as ggml's int8_t cast).
//   - Q4_1: min, max of the block; d = (max - min) / 15; id = d != 0 ? 1 / d : 0;
//     stored d = half(d), m = half(min); code = min(15, trunc((x[j] - min) * id + 0.5)).
// The codes come from the float32 d, not from the stored half (as in ggml), and Q4_1's m is
// rounded to half without compensation, so the decoded values are NOT the nearest representable
// ones. With d_h = half(d), m_h = half(min), each decoded value x' of a finite block satisfies,
// up to float32 rounding of the arithmetic:
//   Q8_0: |x - x'| <= |d| / 2 + 127 |d - d_h|
//   Q4_0: |x - x'| <= |d| + 8 |d - d_h|   (a full step for values near -max: code 16 clips to 15)
//   Q4_1: |x - x'| <= |d| / 2 + 15 |d - d_h| + |min - m_h|
// (|d - d_h| <= 2^-11 |d| while d is a normal half, so Q8_0 and Q4_0 stay within about one step;
// Q4_1's last term grows with |min| relative to the block's range.) A block beyond the half range
// (|d| or |min| above 65504) stores an infinite half.
// Non-finite input (F32 keeps every bit; F16 follows core/float16_bits.h). The block formats have
// defined behaviour where ggml's own C code has undefined casts:
//   - NaN is encoded as 0 would be (it is replaced by 0 before the block is looked at);
//   - +-Inf takes part in the arithmetic as IEEE defines it: it makes the block's half scale (or
//     Q4_1's minimum) infinite, so the whole block decodes to non-finite values;
//   - every float -> code conversion saturates to the code range (Q8_0: -127..127) and sends NaN
//     (e.g. Inf * 0) to code 0 (Q8_0, Q4_1) or 8 (Q4_0), so no input gives undefined behaviour.
std::vector<uint8_t> QuantizeGgmlRow(GgmlType type, const float* x, int64_t n);

}  // namespace simplecpp::quant
