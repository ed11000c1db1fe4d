// Byte table lookup (kernels/quant/byte_lookup.h).
//
// AVX-512 VBMI (Highway's AVX3_DL target) holds the 256-entry table in four registers: two
// two-register byte permutes (vpermi2b) look up 64 bytes in each 128-entry half and the index's
// top bit picks between them, about 40 times the plain loop's rate. No other target has a byte
// permute over more than 16 entries (x86 before VBMI, WebAssembly): emulating the table there
// costs more per byte than the plain loop, whose loads from a 256-byte table in L1 run at about
// one element per cycle. Both paths give the same bytes.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant/byte_lookup.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/quant/byte_lookup.h"

#ifndef SIMPLECPP_KERNELS_BYTE_LOOKUP_ONCE
#define SIMPLECPP_KERNELS_BYTE_LOOKUP_ONCE
namespace simplecpp::kernels::byte_lookup {

inline void LookupBytesPlain(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t a = table[x[i]], b = table[x[i + 1]], c = table[x[i + 2]], d = table[x[i + 3]];
    y[i] = a;
    y[i + 1] = b;
    y[i + 2] = c;
    y[i + 3] = d;
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace simplecpp::kernels::byte_lookup
#endif  // SIMPLECPP_KERNELS_BYTE_LOOKUP_ONCE

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

void LookupBytesImpl(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
#if HWY_TARGET == HWY_AVX3_DL
  const __m512i t0 = _mm512_loadu_si512(table);
  const __m512i t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128);
  const __m512i t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i idx = _mm512_loadu_si512(x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);  // entries 0-127 (low 7 bits)
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128-255
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
  }
  byte_lookup::LookupBytesPlain(table, x + i, y + i, n - i);
#else
  byte_lookup::LookupBytesPlain(table, x, y, n);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(LookupBytesImpl);

void LookupBytes(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(LookupBytesImpl)(table, x, y, n);
}

void LookupBytesToF32(const float* table, const uint8_t* x, float* y, int64_t n) {
  // One load per element from a 1 KiB table that stays in L1; compilers keep this a plain loop
  // (a gather would not be faster on most cores).
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
