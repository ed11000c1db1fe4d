// Scalar IEEE binary16 ("float16", "half") <-> float32 conversion by integer bit manipulation, so
// every bit pattern converts the same way on every target and compiler. It lives in core, the
// bottom layer, because quant (packed formats whose scales are halves, e.g. ggml's blocks) needs
// it as much as kernels does; kernels/float16/float16.h re-exports these two under
// simplecpp::kernels and adds the double, bfloat16 and SIMD bulk conversions.
//
// Rules:
//   - FloatToHalfBits rounds to nearest, ties to even; values at or beyond 65520 (65504 plus half
//     an ulp) become +-Inf; values at or below 2^-25 (half of the smallest subnormal) become +-0;
//     subnormals are produced exactly (no flushing); the sign of zero is kept.
//   - HalfBitsToFloat is exact for every non-NaN pattern (float32 holds every half value).
//   - NaN: the sign and the top payload bits are kept and the quiet bit is set (as x86 F16C and
//     ARM hardware do), so a NaN never turns into Inf. Every non-NaN half pattern h satisfies
//     FloatToHalfBits(HalfBitsToFloat(h)) == h; a NaN h comes back as h | 0x0200.
#pragma once

#include <cstdint>

namespace simplecpp {

uint16_t FloatToHalfBits(float f);
float HalfBitsToFloat(uint16_t h);

}  // namespace simplecpp
