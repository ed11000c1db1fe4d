// The float32 register tile of this Highway target, shared by the GEMM (kernels/gemm/gemm.cc) and
// the direct convolution (kernels/conv/conv_direct.cc), which reads the GEMM's packed A strips of
// kMR rows: the two must agree. Included once per target (Highway's toggled include guard).
#if defined(SIMPLECPP_KERNELS_GEMM_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SIMPLECPP_KERNELS_GEMM_TILE_INL_H_
#undef SIMPLECPP_KERNELS_GEMM_TILE_INL_H_
#else
#define SIMPLECPP_KERNELS_GEMM_TILE_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>

// Constants only: no HWY_BEFORE_NAMESPACE (its target attribute would apply to no function).
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {

// Register tile: kMR rows x kNV vectors of accumulators. AVX-512 has 32 registers: 8x3 = 24
// accumulators + 3 B vectors + 1 broadcast. The 16-register targets use 6x2 = 12 + 2 + 1.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kMR = 8;
constexpr size_t kNV = 3;
#else
constexpr size_t kMR = 6;
constexpr size_t kNV = 2;
#endif

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels

#endif  // SIMPLECPP_KERNELS_GEMM_TILE_INL_H_
