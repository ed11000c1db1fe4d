// Which Highway targets this project compiles. Include this before hwy/foreach_target.h and
// hwy/highway.h in every kernel file (it must come first so the macros take effect).
//
// - AVX3_DL (AVX-512 VNNI/VBMI) is compiled only when asked for (HWY_WANT_AVX3_DL).
// - All attainable targets are compiled, so tests can force each one, including the portable
//   fallback (EMU128 with clang; GCC 12.2 falls back to HWY_SCALAR, which cannot narrow lanes and
//   is therefore disabled: there SSE4, made the baseline by -msse4.2, is the lowest target).
// - SSSE3 is skipped: every x86-64 CPU this runs on has SSE4, and it costs compile time.
// - WebAssembly builds compile the single WASM (SIMD128) target.
#pragma once

// Highway reads these macros once, when hwy/detect_targets.h is first seen: included after it,
// this policy silently has no effect (pool.cc, resize.cc and elementwise_binary.cc once lost
// their AVX3_DL code that way when an include reordering moved it down).
#ifdef HIGHWAY_HWY_DETECT_TARGETS_H_
#error "kernels/hwy_policy.h must be included before any Highway header"
#endif

#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif

// WebAssembly: only the WASM target, so HWY_DYNAMIC_DISPATCH is a direct call and no Highway
// library code is needed.
#if !defined(__EMSCRIPTEN__) && !defined(HWY_COMPILE_ALL_ATTAINABLE)
#define HWY_COMPILE_ALL_ATTAINABLE
#endif

#ifndef HWY_DISABLED_TARGETS
#if defined(__GNUC__) && !defined(__clang__)
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SCALAR)
#else
#define HWY_DISABLED_TARGETS (HWY_SSSE3)
#endif
#endif
