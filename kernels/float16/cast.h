// Element type conversion (ONNX Cast / CastLike) between every numeric dtype of ONNX: float32,
// float64, float16, bfloat16, the float8 formats, float8e8m0, float4e2m1, bool, int8..int64,
// uint8..uint64 and the packed int4/uint4/int2/uint2, plus string <-> number.
//
// Conversion rules (each value converts in one rounding step, no double rounding):
//   - float -> float: round to nearest even; float16/bfloat16/float8 rules in
//     kernels/float16/float16.h and kernels/float16/float8.h (saturate applies to float8 targets
//     only).
//   - float -> integer: truncation toward zero; out-of-range values SATURATE to the target's
//     min/max (ONNX leaves this undefined; saturation is what a careful caller expects and is
//     platform independent); NaN -> 0. Negative values -> 0 for unsigned targets.
//   - float -> int4/uint4/int2/uint2: truncate toward zero (saturating to int64), then keep the
//     low 4 / 2 bits (two's complement wrap-around), as ONNX's reference implementation does.
//   - integer -> integer: two's complement wrap-around (C++ / numpy semantics), also for the
//     packed 4-bit and 2-bit types.
//   - integer -> float: correctly rounded (to nearest even).
//   - x -> bool: x != 0 (NaN -> true); bool -> x: 0 or 1.
//   - number -> string: integers in decimal; floats in the shortest form that reads back to the
//     same value ("%.Ng", N = 1..9 for float32, ..17 for float64), "NaN", "INF", "-INF";
//     bool -> "1" / "0".
//   - string -> number: leading/trailing blanks ignored; "NaN", "INF", "+INF", "-INF"
//     (case-insensitive) and decimal / scientific notation; integer targets parse integers
//     exactly and other numerals via double then the float -> integer rule. A string that is not
//     a number makes CastFromStrings return its position (the op reports it).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/float16/float8.h"
#include "simplecpp/dtype.h"

namespace simplecpp::kernels {

struct CastOptions {
  bool saturate = true;                        // float8 (and e8m0) targets only
  E8M0Rounding e8m0_rounding = E8M0Rounding::kUp;  // float8e8m0 target only
};

// Converts n elements. Packed (sub-byte) buffers start at element 0 of their first byte.
using CastFn = void (*)(const void* in, void* out, int64_t n, const CastOptions& options);

// The conversion for (from, to), or nullptr when either dtype is unsupported (string, complex,
// undefined). from == to gives a plain copy.
CastFn FindCastFn(DType from, DType to);
// True when FindCastFn handles `t`.
bool IsCastableDType(DType t);

void CastToStrings(DType from, const void* in, std::string* out, int64_t n);
// Returns -1 on success, else the index of the first string that is not a number.
int64_t CastFromStrings(const std::string* in, DType to, void* out, int64_t n,
                        const CastOptions& options);

// Number formatting used for -> string (exposed for tests).
std::string FormatFloatShortest(float f);
std::string FormatDoubleShortest(double d);

}  // namespace simplecpp::kernels
