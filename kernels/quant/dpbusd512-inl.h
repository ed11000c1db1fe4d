// Dpbusd512: vpdpbusd on 512-bit vectors for the AVX3_DL target's VNNI kernels (the integer
// GEMM's tiles in kernels/quant/qgemm.cc, the depthwise kernel in kernels/quant/depthwise_q8.cc).
// Included once per target (Highway's toggled include guard); defined on AVX3_DL only.
#if defined(SIMPLECPP_KERNELS_DPBUSD512_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SIMPLECPP_KERNELS_DPBUSD512_INL_H_
#undef SIMPLECPP_KERNELS_DPBUSD512_INL_H_
#else
#define SIMPLECPP_KERNELS_DPBUSD512_INL_H_
#endif

#include <hwy/highway.h>

// Only the AVX3_DL pass opens the namespace (an empty target region is a clang warning).
#if HWY_TARGET == HWY_AVX3_DL
HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

// acc += 4-way u8 x s8 dot products per 32-bit lane (exact modulo 2^32). Inline asm instead of
// _mm512_dpbusd_epi32: GCC 12 copies the tied accumulator register around the intrinsic (a
// register move per instruction, and spills in tiles with many accumulators). The function's
// target names VNNI on top of Highway's (clang's target attribute replaces the pragma's
// features instead of adding to them).
HWY_INLINE __attribute__((target(HWY_TARGET_STR ",avx512vnni"))) __m512i Dpbusd512(
    __m512i acc, __m512i a_u8, __m512i b_s8) {
#if defined(__GNUC__)
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a_u8), "v"(b_s8));
  return acc;
#else
  return _mm512_dpbusd_epi32(acc, a_u8, b_s8);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();
#endif

#endif  // SIMPLECPP_KERNELS_DPBUSD512_INL_H_ toggle
