// Binary float32 arithmetic on one contiguous run of a broadcast iteration, in Highway SIMD (the
// rarer float32 ops, Pow and Mod, and the tails in the scalar formulas of
// kernels/elementwise/elementwise_scalar.h). Every other dtype:
// kernels/elementwise/elementwise_binary_typed.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise/elementwise_binary.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles (AVX3_DL, the portable fallback).
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_scalar.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

template <BinaryOp kOp>
HWY_INLINE VF Apply(VF a, VF b) {
  switch (kOp) {
    case BinaryOp::kAdd: return hn::Add(a, b);
    case BinaryOp::kSub: return hn::Sub(a, b);
    case BinaryOp::kMul: return hn::Mul(a, b);
    case BinaryOp::kDiv: return hn::Div(a, b);
    case BinaryOp::kMax:
      return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Max(a, b));
    case BinaryOp::kMin:
      return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Min(a, b));
    case BinaryOp::kPRelu: {
      const DF d;
      return hn::IfThenElse(hn::Lt(a, hn::Zero(d)), hn::Mul(a, b), a);
    }
    default: return a;  // not reached: BinaryF32Impl sends other ops to scalar code
  }
}

template <BinaryOp kOp>
HWY_NOINLINE void BinaryLoop(const float* a, int64_t a_step, const float* b, int64_t b_step,
                             float* out, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  if (a_step == 1 && b_step == 1) {
    for (; i + N <= n; i += N) {
      hn::StoreU(Apply<kOp>(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
    }
  } else if (a_step == 0 && b_step == 1) {
    const VF va = hn::Set(d, a[0]);
    for (; i + N <= n; i += N) hn::StoreU(Apply<kOp>(va, hn::LoadU(d, b + i)), d, out + i);
  } else if (a_step == 1 && b_step == 0) {
    const VF vb = hn::Set(d, b[0]);
    for (; i + N <= n; i += N) hn::StoreU(Apply<kOp>(hn::LoadU(d, a + i), vb), d, out + i);
  }
  // Tail (and the all-broadcast case): the scalar formula gives the same IEEE results.
  for (; i < n; ++i) {
    out[i] = elementwise_detail::ScalarBinary<float>(kOp, a[i * a_step], b[i * b_step]);
  }
}

void BinaryF32Impl(BinaryOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                   float* out, size_t n) {
  switch (op) {
    case BinaryOp::kAdd: return BinaryLoop<BinaryOp::kAdd>(a, a_step, b, b_step, out, n);
    case BinaryOp::kSub: return BinaryLoop<BinaryOp::kSub>(a, a_step, b, b_step, out, n);
    case BinaryOp::kMul: return BinaryLoop<BinaryOp::kMul>(a, a_step, b, b_step, out, n);
    case BinaryOp::kDiv: return BinaryLoop<BinaryOp::kDiv>(a, a_step, b, b_step, out, n);
    case BinaryOp::kMax: return BinaryLoop<BinaryOp::kMax>(a, a_step, b, b_step, out, n);
    case BinaryOp::kMin: return BinaryLoop<BinaryOp::kMin>(a, a_step, b, b_step, out, n);
    case BinaryOp::kPRelu: return BinaryLoop<BinaryOp::kPRelu>(a, a_step, b, b_step, out, n);
    default:
      elementwise_detail::RunLoop(a, a_step, b, b_step, out, static_cast<int64_t>(n),
                                  [op](float x, float y) {
                                    return elementwise_detail::ScalarBinary<float>(op, x, y);
                                  });
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(BinaryF32Impl);

void BinaryF32(BinaryOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
               float* out, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(BinaryF32Impl)(op, a, a_step, b, b_step, out, static_cast<size_t>(n));
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
