// ggml's types and block-32 formats (ggml_blocks.h).
//
// Compiled with -ffp-contract=off (quant/CMakeLists.txt): the encoders' x * id + 8.5 (and
// (x - min) * id + 0.5) must round twice, as ggml's reference C does, or a code at a truncation
// boundary could change; GCC would otherwise be free to fuse them where the target has FMA (its
// C++ default is -ffp-contract=fast). The decoders' products are exact (header), so a fused Q4_1
// multiply-add would give the same bits, but they are written as separate statements too.
#include "quant/ggml_blocks.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/bit_cast.h"
#include "core/float16_bits.h"

namespace simplecpp::quant {
namespace {

struct TypeInfo {
  GgmlType type;
  const char* name;
  int64_t block_elements;
  int64_t block_bytes;
};

// Every named type. The sizes of the formats simplecpp does not decode are checked against
// ggml's block definitions (k-quants: 256-element super-blocks). Q8_1 is 2 halves + 32 int8 in
// ggml's C structs (36 bytes); gguf-py's table still says 40 from when d and s were floats. ggml
// itself sizes tensors with the C struct, and Q8_1 is an intermediate format that files do not
// hold in practice, so 36.
constexpr TypeInfo kTypes[] = {
    {GgmlType::kF32, "F32", 1, 4},           {GgmlType::kF16, "F16", 1, 2},
    {GgmlType::kQ4_0, "Q4_0", 32, 18},       {GgmlType::kQ4_1, "Q4_1", 32, 20},
    {GgmlType::kQ5_0, "Q5_0", 32, 22},       {GgmlType::kQ5_1, "Q5_1", 32, 24},
    {GgmlType::kQ8_0, "Q8_0", 32, 34},       {GgmlType::kQ8_1, "Q8_1", 32, 36},
    {GgmlType::kQ2_K, "Q2_K", 256, 84},      {GgmlType::kQ3_K, "Q3_K", 256, 110},
    {GgmlType::kQ4_K, "Q4_K", 256, 144},     {GgmlType::kQ5_K, "Q5_K", 256, 176},
    {GgmlType::kQ6_K, "Q6_K", 256, 210},     {GgmlType::kQ8_K, "Q8_K", 256, 292},
    {GgmlType::kIQ2_XXS, "IQ2_XXS", 256, 66}, {GgmlType::kIQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::kIQ3_XXS, "IQ3_XXS", 256, 98}, {GgmlType::kIQ1_S, "IQ1_S", 256, 50},
    {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18},   {GgmlType::kIQ3_S, "IQ3_S", 256, 110},
    {GgmlType::kIQ2_S, "IQ2_S", 256, 82},    {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::kI8, "I8", 1, 1},             {GgmlType::kI16, "I16", 1, 2},
    {GgmlType::kI32, "I32", 1, 4},           {GgmlType::kI64, "I64", 1, 8},
    {GgmlType::kF64, "F64", 1, 8},           {GgmlType::kIQ1_M, "IQ1_M", 256, 56},
    {GgmlType::kBF16, "BF16", 1, 2},         {GgmlType::kTQ1_0, "TQ1_0", 256, 54},
    {GgmlType::kTQ2_0, "TQ2_0", 256, 66},
};

const TypeInfo* FindType(uint32_t id) {
  for (const TypeInfo& t : kTypes) {
    if (static_cast<uint32_t>(t.type) == id) return &t;
  }
  return nullptr;
}

uint16_t LoadU16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint32_t>(p[1]) << 8));
}
void StoreU16(uint16_t v, uint8_t* p) {
  p[0] = static_cast<uint8_t>(v & 0xFFu);
  p[1] = static_cast<uint8_t>(v >> 8);
}
float LoadHalf(const uint8_t* p) { return HalfBitsToFloat(LoadU16(p)); }

float LoadF32(const uint8_t* p) {
  const uint32_t u = p[0] | (static_cast<uint32_t>(p[1]) << 8) |
                     (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
  return FloatFromBits(u);
}
void StoreF32(float f, uint8_t* p) {
  const uint32_t u = FloatBits(f);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(u >> (8 * i));
}

// Q8_0 / Q4_0 / Q4_1: the three formats with per-block codes.
bool IsBlock32(GgmlType type) {
  return type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0 || type == GgmlType::kQ4_1;
}
int64_t Block32Bytes(GgmlType type) {
  return type == GgmlType::kQ8_0 ? 34 : type == GgmlType::kQ4_0 ? 18 : 20;
}

// Code j (0..31) of a Q4_0 / Q4_1 block whose nibbles start at qs.
int32_t Nibble(const uint8_t* qs, int j) {
  return j < 16 ? (qs[j] & 0x0F) : (qs[j - 16] >> 4);
}

// Decodes one block into 32 codes, its scale and (Q4_1) its minimum.
void DecodeBlock(GgmlType type, const uint8_t* b, int32_t* codes, float* d, float* m) {
  *d = LoadHalf(b);
  if (type == GgmlType::kQ8_0) {
    // int8 two's complement, written out so it does not depend on the char conversion rules.
    for (int j = 0; j < 32; ++j) codes[j] = b[2 + j] < 128 ? b[2 + j] : b[2 + j] - 256;
    return;
  }
  const uint8_t* qs = b + 2;
  if (type == GgmlType::kQ4_1) {
    *m = LoadHalf(b + 2);
    qs = b + 4;
  }
  for (int j = 0; j < 32; ++j) codes[j] = Nibble(qs, j);
}

// float -> code conversions of the encoders: ggml's arithmetic wherever it is defined, saturated
// to [lo, hi] elsewhere, NaN to nan_code. Truncation toward zero (the int8_t cast of Q4_0/Q4_1).
int32_t TruncToCode(float v, int32_t lo, int32_t hi, int32_t nan_code) {
  if (std::isnan(v)) return nan_code;
  if (v <= static_cast<float>(lo)) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int32_t>(v);
}
// Round half away from zero (roundf), Q8_0.
int32_t RoundToCode(float v, int32_t lo, int32_t hi, int32_t nan_code) {
  if (std::isnan(v)) return nan_code;
  if (v <= static_cast<float>(lo)) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int32_t>(std::roundf(v));
}

// The encoders of one block of 32 finite-or-infinite values (NaN already replaced by 0).
void EncodeQ8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  StoreU16(FloatToHalfBits(d), b);
  for (int j = 0; j < 32; ++j) {
    const float v = x[j] * id;
    // The amax element gives 127 up to rounding; the clamp only makes overflow defined.
    const int32_t q = RoundToCode(v, -127, 127, 0);
    b[2 + j] = static_cast<uint8_t>(q & 0xFF);
  }
}

void EncodeQ4_0(const float* x, uint8_t* b) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    if (amax < std::fabs(x[j])) {  // strict: the first of equal magnitudes wins
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  StoreU16(FloatToHalfBits(d), b);
  int32_t codes[32];
  for (int j = 0; j < 32; ++j) {
    const float scaled = x[j] * id;
    const float shifted = scaled + 8.5f;
    codes[j] = TruncToCode(shifted, 0, 15, 8);
  }
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(codes[j] | (codes[j + 16] << 4));
}

void EncodeQ4_1(const float* x, uint8_t* b) {
  float min = std::numeric_limits<float>::max();
  float max = -std::numeric_limits<float>::max();
  for (int j = 0; j < 32; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
  const float d = (max - min) / 15.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  StoreU16(FloatToHalfBits(d), b);
  StoreU16(FloatToHalfBits(min), b + 2);
  int32_t codes[32];
  for (int j = 0; j < 32; ++j) {
    const float offset = x[j] - min;
    const float scaled = offset * id;
    const float shifted = scaled + 0.5f;
    codes[j] = TruncToCode(shifted, 0, 15, 0);
  }
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(codes[j] | (codes[j + 16] << 4));
}

}  // namespace

const char* GgmlTypeName(uint32_t id) {
  const TypeInfo* t = FindType(id);
  return t != nullptr ? t->name : nullptr;
}

bool GgmlTypeLayoutOf(uint32_t id, GgmlTypeLayout* out) {
  const TypeInfo* t = FindType(id);
  if (t == nullptr) return false;
  out->block_elements = t->block_elements;
  out->block_bytes = t->block_bytes;
  return true;
}

bool GgmlTypeIsSupported(GgmlType type) {
  return type == GgmlType::kF32 || type == GgmlType::kF16 || IsBlock32(type);
}

int64_t GgmlRowBytes(uint32_t id, int64_t n) {
  GgmlTypeLayout layout;
  if (!GgmlTypeLayoutOf(id, &layout) || n < 0 || n % layout.block_elements != 0) return -1;
  const int64_t blocks = n / layout.block_elements;
  if (blocks > std::numeric_limits<int64_t>::max() / layout.block_bytes) return -1;
  return blocks * layout.block_bytes;
}

bool DecodeGgmlRow(GgmlType type, const uint8_t* row, int64_t n, int32_t* codes, float* scales,
                   float* mins) {
  if (!IsBlock32(type) || n < 0 || n % kGgmlBlock32 != 0) return false;
  const int64_t bytes = Block32Bytes(type);
  for (int64_t blk = 0; blk < n / kGgmlBlock32; ++blk) {
    float d = 0.0f, m = 0.0f;
    DecodeBlock(type, row + blk * bytes, codes + blk * kGgmlBlock32, &d, &m);
    scales[blk] = d;
    if (mins != nullptr) mins[blk] = m;
  }
  return true;
}

bool DequantizeGgmlRow(GgmlType type, const uint8_t* row, int64_t n, float* out) {
  if (n < 0) return false;
  if (type == GgmlType::kF32) {
    for (int64_t i = 0; i < n; ++i) out[i] = LoadF32(row + 4 * i);
    return true;
  }
  if (type == GgmlType::kF16) {
    for (int64_t i = 0; i < n; ++i) out[i] = LoadHalf(row + 2 * i);
    return true;
  }
  if (!IsBlock32(type) || n % kGgmlBlock32 != 0) return false;
  const int64_t bytes = Block32Bytes(type);
  // Q4_0's zero point: its codes are unsigned nibbles standing for code - 8.
  const int32_t zero_point = type == GgmlType::kQ4_0 ? 8 : 0;
  for (int64_t blk = 0; blk < n / kGgmlBlock32; ++blk) {
    int32_t codes[32];
    float d = 0.0f, m = 0.0f;
    DecodeBlock(type, row + blk * bytes, codes, &d, &m);
    float* y = out + blk * kGgmlBlock32;
    for (int j = 0; j < 32; ++j) {
      // |code - zero_point| <= 128 times a half is exact in float32 (header).
      const float product = static_cast<float>(codes[j] - zero_point) * d;
      if (type == GgmlType::kQ4_1) {
        y[j] = product + m;  // the second rounding, never fused (file comment)
      } else {
        y[j] = product;
      }
    }
  }
  return true;
}

std::vector<uint8_t> QuantizeGgmlRow(GgmlType type, const float* x, int64_t n) {
  const int64_t bytes = GgmlRowBytes(static_cast<uint32_t>(type), n);
  if (!GgmlTypeIsSupported(type) || bytes < 0) return {};
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  if (type == GgmlType::kF32) {
    for (int64_t i = 0; i < n; ++i) StoreF32(x[i], out.data() + 4 * i);
    return out;
  }
  if (type == GgmlType::kF16) {
    for (int64_t i = 0; i < n; ++i) StoreU16(FloatToHalfBits(x[i]), out.data() + 2 * i);
    return out;
  }
  const int64_t block_bytes = Block32Bytes(type);
  for (int64_t blk = 0; blk < n / kGgmlBlock32; ++blk) {
    float v[32];
    for (int j = 0; j < 32; ++j) {
      const float xj = x[blk * kGgmlBlock32 + j];
      v[j] = std::isnan(xj) ? 0.0f : xj;  // NaN is encoded as 0 (header)
    }
    uint8_t* b = out.data() + blk * block_bytes;
    if (type == GgmlType::kQ8_0) {
      EncodeQ8_0(v, b);
    } else if (type == GgmlType::kQ4_0) {
      EncodeQ4_0(v, b);
    } else {
      EncodeQ4_1(v, b);
    }
  }
  return out;
}

}  // namespace simplecpp::quant
