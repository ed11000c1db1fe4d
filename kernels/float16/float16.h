// Correct, portable scalar conversions between float32/float64 and the 16-bit float formats
// (IEEE binary16 "float16" and bfloat16), written with integer bit manipulation so every bit
// pattern converts the same way on every target (Highway 1.0.3's emulated f16 conversion is wrong
// for Inf/NaN/overflow on SSE4/EMU128/WASM, see ../shared/TOOLCHAIN.md).
//
// Rules (all conversions):
//   - narrowing rounds to nearest, ties to even; values beyond the largest finite value after
//     rounding become +-Inf; values below half the smallest subnormal become +-0; subnormals are
//     produced and read exactly (no flushing); the sign of zero is kept.
//   - NaN: the sign and the top payload bits are kept and the quiet bit is set (as x86 F16C and
//     ARM hardware do), so a NaN never turns into Inf. For float16 -> float32 -> float16 this means
//     every non-NaN pattern round-trips bit-exactly and a NaN h comes back as h | 0x0200.
//   - widening (float16/bfloat16 -> float32/float64) is exact, NaNs are quieted the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/float16_bits.h"

namespace simplecpp::kernels {

// The scalar float16 <-> float32 pair is core's (quant needs it too); the same functions here.
using ::simplecpp::FloatToHalfBits;
using ::simplecpp::HalfBitsToFloat;
uint16_t DoubleToHalfBits(double d);  // rounds once, directly from double (no double rounding)
double HalfBitsToDouble(uint16_t h);

uint16_t FloatToBFloat16Bits(float f);
float BFloat16BitsToFloat(uint16_t b);
uint16_t DoubleToBFloat16Bits(double d);  // rounds once, directly from double

// Bulk versions over n elements (in and out must not overlap). Highway SIMD, dispatched to the
// current target; bit-identical to the scalar functions above on every target (F16C where the
// target has it, else our own integer-SIMD code: never Highway's emulated f16 conversion).
void FloatToHalf(const float* in, uint16_t* out, size_t n);
void HalfToFloat(const uint16_t* in, float* out, size_t n);
void FloatToBFloat16(const float* in, uint16_t* out, size_t n);
void BFloat16ToFloat(const uint16_t* in, float* out, size_t n);

// The two 16-bit float storage formats, for kernels that serve both (chosen once at Prepare).
enum class Float16Kind : int { kHalf, kBFloat16 };
// Bulk conversions of either kind (SIMD, as above).
void Widen16(Float16Kind kind, const uint16_t* in, float* out, size_t n);
void Narrow16(Float16Kind kind, const float* in, uint16_t* out, size_t n);
// One element of either kind (scalar reference).
float Widen16One(Float16Kind kind, uint16_t v);
uint16_t Narrow16One(Float16Kind kind, float v);

// Rounds a finite, nonzero magnitude to a binary format with `frac_bits` fraction bits and the
// given exponent bias (smallest normal exponent 1 - bias), round-to-nearest-even, subnormals
// included. The magnitude is sig * 2^(exp - sig_frac_bits) with sig in [2^sig_frac_bits,
// 2^(sig_frac_bits+1)) (a normalized significand with its implicit bit). Returns the encoded
// magnitude (exponent field << frac_bits | fraction), which may exceed the format's largest code:
// the caller decides what overflow means (Inf, NaN or saturation). Shared by the float16,
// bfloat16 and float8 conversions.
uint32_t RoundMagnitudeToFormat(uint64_t sig, int sig_frac_bits, int exp, int frac_bits, int bias);

// Splits a finite nonzero float/double into (sig, exp) as RoundMagnitudeToFormat expects.
void DecomposeFloat(float f, uint64_t* sig, int* exp);   // sig_frac_bits = 23
void DecomposeDouble(double d, uint64_t* sig, int* exp);  // sig_frac_bits = 52

}  // namespace simplecpp::kernels
