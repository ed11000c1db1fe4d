// Unary elementwise kernels: float32 math and activations in Highway SIMD, float64 in scalar code
// (the same formulas), float32 Clip. The per-dtype loops (integer unary ops, Clip of other types,
// IsNaN / IsInf): kernels/elementwise/elementwise_unary_typed.cc.
//
// Accuracy strategy for float32: each op has a SIMD formula that is accurate (a few ulp) over a
// "normal" input range, and a mask of lanes outside it (NaN, infinities, overflow/denormal ranges,
// arguments where Highway's contrib math is not valid). A vector with any such lane is recomputed
// in double precision by the scalar formulas (rare inputs, so the cost does not matter). Tails
// shorter than a vector go through a padded vector, so every element gets the same formula
// whatever its position.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise/elementwise_unary.cc"
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "kernels/elementwise/elementwise.h"

#ifndef SIMPLECPP_KERNELS_ELEMENTWISE_UNARY_ONCE
#define SIMPLECPP_KERNELS_ELEMENTWISE_UNARY_ONCE

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace simplecpp::kernels::elementwise_detail {

// The scalar definition of every float op, evaluated in double. NaN in gives NaN out for every op.
inline double ScalarUnary(UnaryOp op, const UnaryParams& p, double x) {
  if (std::isnan(x)) return x;
  const double alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  auto sigmoid = [](double v) {
    if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
    const double e = std::exp(v);
    return e / (1.0 + e);
  };
  auto softplus = [](double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))); };
  switch (op) {
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kSign: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kReciprocal: return 1.0 / x;
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kErf: return std::erf(x);
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kSigmoid: return sigmoid(x);
    case UnaryOp::kRelu: return x < 0 ? 0.0 : x;
    case UnaryOp::kLeakyRelu: return x < 0 ? alpha * x : x;
    case UnaryOp::kElu: return x < 0 ? alpha * std::expm1(x) : x;
    case UnaryOp::kSelu: return x <= 0 ? gamma * alpha * std::expm1(x) : gamma * x;
    case UnaryOp::kCelu: return x > 0 ? x : alpha * std::expm1(x / alpha);
    case UnaryOp::kHardSigmoid: return std::min(1.0, std::max(0.0, alpha * x + beta));
    case UnaryOp::kHardSwish: return x * std::min(1.0, std::max(0.0, x / 6.0 + 0.5));
    case UnaryOp::kSoftplus: return softplus(x);
    case UnaryOp::kSoftsign: return std::isinf(x) ? std::copysign(1.0, x) : x / (1.0 + std::fabs(x));
    case UnaryOp::kGelu:
      if (std::isinf(x)) return x > 0 ? x : 0.0;
      return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
    case UnaryOp::kGeluTanh:
      if (std::isinf(x)) return x > 0 ? x : 0.0;
      return x * sigmoid(2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x));
    case UnaryOp::kMish:
      if (std::isinf(x)) return x > 0 ? x : 0.0;
      return x * std::tanh(softplus(x));
    case UnaryOp::kFloor: return std::floor(x);
    case UnaryOp::kCeil: return std::ceil(x);
    case UnaryOp::kRound: return std::nearbyint(x);  // default rounding mode: half to even
    case UnaryOp::kSin: return std::sin(x);
    case UnaryOp::kCos: return std::cos(x);
    case UnaryOp::kTan: return std::tan(x);
    case UnaryOp::kAsin: return std::asin(x);
    case UnaryOp::kAcos: return std::acos(x);
    case UnaryOp::kAtan: return std::atan(x);
    case UnaryOp::kSinh: return std::sinh(x);
    case UnaryOp::kCosh: return std::cosh(x);
    case UnaryOp::kAsinh: return std::asinh(x);
    case UnaryOp::kAcosh: return std::acosh(x);
    case UnaryOp::kAtanh: return std::atanh(x);
    case UnaryOp::kThresholdedRelu: return x > alpha ? x : 0.0;
    case UnaryOp::kShrink: return x < -alpha ? x + beta : (x > alpha ? x - beta : 0.0);
    case UnaryOp::kSwish: {
      const double ax = alpha * x;
      if (std::isinf(x)) return ax > 0 ? x : (ax < 0 ? 0.0 : x * 0.5);
      return x * sigmoid(ax);
    }
  }
  return x;
}

inline float ScalarUnaryF32(UnaryOp op, const UnaryParams& p, float x) {
  return static_cast<float>(ScalarUnary(op, p, static_cast<double>(x)));
}

// Polynomial fits (least squares on Chebyshev nodes, computed for this project with mpmath),
// highest degree first:
//   erf(x) = x * P(x^2)                                   for |x| < 0.875, |error| < 2.1e-10
//   erfc(z) = exp(-z^2) * Q(1/z - kErfcCenter)            for 0.875 <= z <= 9.1, rel. error < 5e-8
constexpr float kErfSmall[] = {8.69036890739e-5f,  -0.000821457088745f, 0.0052070489106f,
                               -0.0268617058312f,  0.112837352102f,     -0.376126362137f,
                               1.12837916689f};
constexpr float kErfcLarge[] = {
    0.000137517987192f, 0.0203804596837f,  -0.0343961889797f, 0.0188168105859f,
    0.00529188474169f,  -0.0261527954058f, 0.0429249175746f,  -0.0466114607989f,
    0.0230106487816f,   0.0438941215924f,  -0.172214149836f,  0.381810415322f,
    0.30647778215f};
constexpr float kErfcCenter = 0.626373626374f;
constexpr float kErfSplit = 0.875f;
constexpr float kErfcZero = 9.1f;  // erfc(z) < 1.2e-38 beyond: 0

}  // namespace simplecpp::kernels::elementwise_detail

#endif  // SIMPLECPP_KERNELS_ELEMENTWISE_UNARY_ONCE

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
using MF = hn::Mask<DF>;

template <size_t kN>
HWY_INLINE VF Horner(DF d, VF x, const float (&c)[kN]) {
  VF acc = hn::Set(d, c[0]);
  for (size_t i = 1; i < kN; ++i) acc = hn::MulAdd(acc, x, hn::Set(d, c[i]));
  return acc;
}

// erfc(z) for z >= kErfSplit (z is clamped to the fitted range; 0 beyond kErfcZero).
HWY_INLINE VF ErfcLarge(DF d, VF z) {
  namespace ed = elementwise_detail;
  const VF zc = hn::Min(hn::Max(z, hn::Set(d, ed::kErfSplit)), hn::Set(d, ed::kErfcZero));
  const VF u = hn::Sub(hn::Div(hn::Set(d, 1.0f), zc), hn::Set(d, ed::kErfcCenter));
  const VF q = Horner(d, u, ed::kErfcLarge);
  // exp(-z^2) with z^2 = hi + lo split exactly by FMA: exp(-hi) * (1 - lo).
  const VF hi = hn::Mul(zc, zc);
  const VF lo = hn::MulSub(zc, zc, hi);
  const VF e = hn::Mul(hn::Exp(d, hn::Neg(hi)), hn::Sub(hn::Set(d, 1.0f), lo));
  return hn::IfThenZeroElse(hn::Gt(z, hn::Set(d, ed::kErfcZero)), hn::Mul(e, q));
}

HWY_INLINE VF Erf(DF d, VF x) {
  namespace ed = elementwise_detail;
  const VF ax = hn::Abs(x);
  const VF small = hn::Mul(x, Horner(d, hn::Mul(x, x), ed::kErfSmall));
  const auto is_small = hn::Lt(ax, hn::Set(d, ed::kErfSplit));
  if (hn::AllTrue(d, is_small)) return small;  // the tail would be discarded (as in Erfc)
  const VF large = hn::CopySignToAbs(hn::Sub(hn::Set(d, 1.0f), ErfcLarge(d, ax)), x);
  return hn::IfThenElse(is_small, small, large);
}

// erfc(z) for any finite z.
HWY_INLINE VF Erfc(DF d, VF z) {
  namespace ed = elementwise_detail;
  const VF az = hn::Abs(z);
  const VF one = hn::Set(d, 1.0f);
  const VF small = hn::Sub(one, hn::Mul(z, Horner(d, hn::Mul(z, z), ed::kErfSmall)));
  const auto is_small = hn::Lt(az, hn::Set(d, ed::kErfSplit));
  // Every lane in the polynomial's range (most GELU inputs): the tail (a division and an exp)
  // would be discarded. Lane-wise the result is the same either way.
  if (hn::AllTrue(d, is_small)) return small;
  const VF tail = ErfcLarge(d, az);  // erfc(|z|)
  const VF large = hn::IfThenElse(hn::Lt(z, hn::Zero(d)), hn::Sub(hn::Set(d, 2.0f), tail), tail);
  return hn::IfThenElse(is_small, small, large);
}

// 1 / (1 + exp(-x)) for |x| <= 80 (no overflow, no denormals).
HWY_INLINE VF Sigmoid(DF d, VF x) {
  const VF e = hn::Exp(d, hn::Neg(hn::Abs(x)));  // in (0, 1]
  const VF s = hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(e, s), s);
}

// log(1 + exp(x)) for |x| <= 80.
HWY_INLINE VF Softplus(DF d, VF x) {
  const VF e = hn::Exp(d, hn::Neg(hn::Abs(x)));
  return hn::Add(hn::ZeroIfNegative(x), hn::Log1p(d, e));
}

HWY_INLINE MF OutsideAbs(DF d, VF x, float limit) {
  return hn::Not(hn::Le(hn::Abs(x), hn::Set(d, limit)));  // NaN is outside
}
HWY_INLINE MF OutsideRange(DF d, VF x, float lo, float hi) {
  return hn::Not(hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi))));
}

// Sign, rounding, roots, Exp / Log / Erf.
template <UnaryOp kOp>
HWY_INLINE VF ComputeArithmetic(DF d, VF x, MF* fallback) {
  const VF zero = hn::Zero(d);
  const VF one = hn::Set(d, 1.0f);
  switch (kOp) {
    case UnaryOp::kNeg: return hn::Neg(x);
    case UnaryOp::kAbs: return hn::Abs(x);
    case UnaryOp::kSign:
      return hn::IfThenElse(hn::Gt(x, zero), one,
                            hn::IfThenElse(hn::Lt(x, zero), hn::Neg(one),
                                           hn::IfThenElse(hn::Eq(x, zero), zero, x)));
    case UnaryOp::kSqrt: return hn::Sqrt(x);
    case UnaryOp::kReciprocal: return hn::Div(one, x);
    case UnaryOp::kExp:
      *fallback = OutsideRange(d, x, -87.0f, 88.0f);
      return hn::Exp(d, x);
    case UnaryOp::kLog:
      *fallback = OutsideRange(d, x, std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::max());
      return hn::Log(d, x);
    case UnaryOp::kErf:
      *fallback = hn::IsNaN(x);
      return Erf(d, x);
    case UnaryOp::kFloor: return hn::Floor(x);
    case UnaryOp::kCeil: return hn::Ceil(x);
    case UnaryOp::kRound: return hn::Round(x);
    default: break;
  }
  return x;
}

// The piecewise activations: Relu and its variants, the hard curves, Shrink.
template <UnaryOp kOp>
HWY_INLINE VF ComputeRectifier(DF d, VF x, const UnaryParams& p, MF* fallback) {
  const VF zero = hn::Zero(d);
  const VF one = hn::Set(d, 1.0f);
  switch (kOp) {
    case UnaryOp::kRelu: return hn::IfThenZeroElse(hn::Lt(x, zero), x);
    case UnaryOp::kLeakyRelu:
      return hn::IfThenElse(hn::Lt(x, zero), hn::Mul(x, hn::Set(d, p.alpha)), x);
    case UnaryOp::kElu: {
      *fallback = hn::Not(hn::Ge(x, hn::Set(d, -80.0f)));
      const VF neg = hn::Mul(hn::Set(d, p.alpha), hn::Expm1(d, hn::Min(x, zero)));
      return hn::IfThenElse(hn::Lt(x, zero), neg, x);
    }
    case UnaryOp::kSelu: {
      *fallback = hn::Not(hn::Ge(x, hn::Set(d, -80.0f)));
      const VF neg = hn::Mul(hn::Set(d, p.gamma * p.alpha), hn::Expm1(d, hn::Min(x, zero)));
      return hn::IfThenElse(hn::Le(x, zero), neg, hn::Mul(x, hn::Set(d, p.gamma)));
    }
    case UnaryOp::kCelu: {
      const VF xs = hn::Div(x, hn::Set(d, p.alpha));
      *fallback = hn::Or(hn::Not(hn::Ge(xs, hn::Set(d, -80.0f))), hn::IsNaN(x));
      const VF neg = hn::Mul(hn::Set(d, p.alpha), hn::Expm1(d, hn::Min(xs, zero)));
      return hn::IfThenElse(hn::Gt(x, zero), x, neg);
    }
    case UnaryOp::kHardSigmoid: {
      *fallback = hn::IsNaN(x);
      const VF v = hn::MulAdd(x, hn::Set(d, p.alpha), hn::Set(d, p.beta));
      return hn::Min(hn::Max(v, zero), one);
    }
    case UnaryOp::kHardSwish: {
      *fallback = hn::IsNaN(x);
      const VF v = hn::MulAdd(x, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
      return hn::Mul(x, hn::Min(hn::Max(v, zero), one));
    }
    case UnaryOp::kThresholdedRelu:
      *fallback = hn::IsNaN(x);
      return hn::IfThenElseZero(hn::Gt(x, hn::Set(d, p.alpha)), x);
    case UnaryOp::kShrink: {
      *fallback = hn::IsNaN(x);
      const VF lambd = hn::Set(d, p.alpha);
      const VF bias = hn::Set(d, p.beta);
      return hn::IfThenElse(hn::Lt(x, hn::Neg(lambd)), hn::Add(x, bias),
                            hn::IfThenElseZero(hn::Gt(x, lambd), hn::Sub(x, bias)));
    }
    default: break;
  }
  return x;
}

// The smooth activations built on Tanh / Sigmoid / Softplus / Erf.
template <UnaryOp kOp>
HWY_INLINE VF ComputeSmoothActivation(DF d, VF x, const UnaryParams& p, MF* fallback) {
  const VF one = hn::Set(d, 1.0f);
  switch (kOp) {
    case UnaryOp::kTanh:
      *fallback = OutsideAbs(d, x, 1e30f);
      return hn::Tanh(d, x);
    case UnaryOp::kSigmoid:
      *fallback = OutsideAbs(d, x, 80.0f);
      return Sigmoid(d, x);
    case UnaryOp::kSoftplus:
      *fallback = OutsideAbs(d, x, 80.0f);
      return Softplus(d, x);
    case UnaryOp::kSoftsign:
      *fallback = hn::Not(hn::IsFinite(x));
      return hn::Div(x, hn::Add(one, hn::Abs(x)));
    case UnaryOp::kGelu:
      *fallback = hn::Not(hn::IsFinite(x));
      return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x),
                     Erfc(d, hn::Mul(x, hn::Set(d, -0.70710678118654752440f))));
    case UnaryOp::kGeluTanh: {
      // 0.5 x (1 + tanh(z)) == x sigmoid(2z): no cancellation for negative x. |2z| is clamped to
      // 80 (sigmoid(-80) ~ 1.8e-35: |x| <= 20 keeps the product negligible); beyond, scalar.
      *fallback = OutsideAbs(d, x, 20.0f);
      const VF x3 = hn::Mul(hn::Mul(x, x), x);
      const VF z2 = hn::Mul(hn::Set(d, 2.0f * 0.79788456080286535588f),
                            hn::MulAdd(x3, hn::Set(d, 0.044715f), x));
      const VF limit = hn::Set(d, 80.0f);
      return hn::Mul(x, Sigmoid(d, hn::Min(hn::Max(z2, hn::Neg(limit)), limit)));
    }
    case UnaryOp::kMish:
      *fallback = OutsideAbs(d, x, 80.0f);
      return hn::Mul(x, hn::Tanh(d, Softplus(d, x)));
    case UnaryOp::kSwish: {
      const VF ax = hn::Mul(x, hn::Set(d, p.alpha));
      *fallback = OutsideAbs(d, ax, 80.0f);
      return hn::Mul(x, Sigmoid(d, ax));
    }
    default: break;
  }
  return x;
}

// The circular and hyperbolic functions and their inverses.
template <UnaryOp kOp>
HWY_INLINE VF ComputeTrigonometric(DF d, VF x, MF* fallback) {
  const VF one = hn::Set(d, 1.0f);
  switch (kOp) {
    case UnaryOp::kSin:
      *fallback = OutsideAbs(d, x, 39000.0f);
      return hn::Sin(d, x);
    case UnaryOp::kCos:
      *fallback = OutsideAbs(d, x, 39000.0f);
      return hn::Cos(d, x);
    case UnaryOp::kTan:
      *fallback = OutsideAbs(d, x, 39000.0f);
      return hn::Div(hn::Sin(d, x), hn::Cos(d, x));
    case UnaryOp::kAsin:
      *fallback = OutsideAbs(d, x, 1.0f);
      return hn::Asin(d, x);
    case UnaryOp::kAcos:
      *fallback = OutsideAbs(d, x, 1.0f);
      return hn::Acos(d, x);
    case UnaryOp::kAtan:
      *fallback = hn::Not(hn::IsFinite(x));
      return hn::Atan(d, x);
    case UnaryOp::kSinh:
      *fallback = OutsideAbs(d, x, 88.0f);
      return hn::Sinh(d, x);
    case UnaryOp::kCosh: {
      *fallback = OutsideAbs(d, x, 88.0f);
      const VF e = hn::Exp(d, hn::Abs(x));
      return hn::Mul(hn::Set(d, 0.5f), hn::Add(e, hn::Div(one, e)));
    }
    case UnaryOp::kAsinh:
      *fallback = hn::Not(hn::IsFinite(x));
      return hn::Asinh(d, x);
    case UnaryOp::kAcosh:
      *fallback = OutsideRange(d, x, 1.0f, std::numeric_limits<float>::max());
      return hn::Acosh(d, x);
    case UnaryOp::kAtanh:
      *fallback = hn::Not(hn::Lt(hn::Abs(x), one));
      return hn::Atanh(d, x);
    default: break;
  }
  return x;
}

// The op families Compute dispatches to, so that each helper's switch stays readable.
enum class UnaryFamily { kArithmetic, kRectifier, kSmoothActivation, kTrigonometric };

constexpr UnaryFamily FamilyOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
    case UnaryOp::kSign:
    case UnaryOp::kSqrt:
    case UnaryOp::kReciprocal:
    case UnaryOp::kExp:
    case UnaryOp::kLog:
    case UnaryOp::kErf:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
      return UnaryFamily::kArithmetic;
    case UnaryOp::kRelu:
    case UnaryOp::kLeakyRelu:
    case UnaryOp::kElu:
    case UnaryOp::kSelu:
    case UnaryOp::kCelu:
    case UnaryOp::kHardSigmoid:
    case UnaryOp::kHardSwish:
    case UnaryOp::kThresholdedRelu:
    case UnaryOp::kShrink:
      return UnaryFamily::kRectifier;
    case UnaryOp::kTanh:
    case UnaryOp::kSigmoid:
    case UnaryOp::kSoftplus:
    case UnaryOp::kSoftsign:
    case UnaryOp::kGelu:
    case UnaryOp::kGeluTanh:
    case UnaryOp::kMish:
    case UnaryOp::kSwish:
      return UnaryFamily::kSmoothActivation;
    case UnaryOp::kSin:
    case UnaryOp::kCos:
    case UnaryOp::kTan:
    case UnaryOp::kAsin:
    case UnaryOp::kAcos:
    case UnaryOp::kAtan:
    case UnaryOp::kSinh:
    case UnaryOp::kCosh:
    case UnaryOp::kAsinh:
    case UnaryOp::kAcosh:
    case UnaryOp::kAtanh:
      return UnaryFamily::kTrigonometric;
  }
  return UnaryFamily::kArithmetic;
}

// Computes one vector of `op`; *fallback gets the lanes that need the scalar formula.
template <UnaryOp kOp>
HWY_INLINE VF Compute(DF d, VF x, const UnaryParams& p, MF* fallback) {
  const VF zero = hn::Zero(d);
  *fallback = hn::Lt(zero, zero);  // no lane falls back unless the op's helper says so
  if constexpr (FamilyOf(kOp) == UnaryFamily::kArithmetic) {
    return ComputeArithmetic<kOp>(d, x, fallback);
  } else if constexpr (FamilyOf(kOp) == UnaryFamily::kRectifier) {
    return ComputeRectifier<kOp>(d, x, p, fallback);
  } else if constexpr (FamilyOf(kOp) == UnaryFamily::kSmoothActivation) {
    return ComputeSmoothActivation<kOp>(d, x, p, fallback);
  } else {
    static_assert(FamilyOf(kOp) == UnaryFamily::kTrigonometric);
    return ComputeTrigonometric<kOp>(d, x, fallback);
  }
}

template <UnaryOp kOp>
HWY_NOINLINE void UnaryLoop(const UnaryParams& p, const float* x, float* y,
                            size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)];
  auto one_vector = [&](const float* in, float* out) {
    const VF v = hn::LoadU(d, in);
    MF fallback;
    VF r = Compute<kOp>(d, v, p, &fallback);
    if (HWY_UNLIKELY(!hn::AllFalse(d, fallback))) {
      // Only the lanes outside the vector code's range take the scalar reference: a lane's
      // result never depends on its neighbours (nor, through them, on the vector length, or on
      // where a fused kernel's runs of this op start).
      hn::Store(v, d, buf);
      for (size_t j = 0; j < N; ++j) buf[j] = elementwise_detail::ScalarUnaryF32(kOp, p, buf[j]);
      r = hn::IfThenElse(fallback, hn::Load(d, buf), r);
    }
    hn::StoreU(r, d, out);
  };
  size_t i = 0;
  for (; i + N <= n; i += N) one_vector(x + i, y + i);
  if (i < n) {
    HWY_ALIGN float tail[HWY_MAX_BYTES / sizeof(float)] = {};
    std::memcpy(tail, x + i, (n - i) * sizeof(float));
    one_vector(tail, tail);
    std::memcpy(y + i, tail, (n - i) * sizeof(float));
  }
}

void UnaryF32Impl(UnaryOp op, const UnaryParams& p, const float* x, float* y, size_t n) {
  switch (op) {
#define SIMPLECPP_UNARY_CASE(name) \
  case UnaryOp::name:              \
    return UnaryLoop<UnaryOp::name>(p, x, y, n);
    SIMPLECPP_UNARY_CASE(kNeg)
    SIMPLECPP_UNARY_CASE(kAbs)
    SIMPLECPP_UNARY_CASE(kSign)
    SIMPLECPP_UNARY_CASE(kSqrt)
    SIMPLECPP_UNARY_CASE(kReciprocal)
    SIMPLECPP_UNARY_CASE(kExp)
    SIMPLECPP_UNARY_CASE(kLog)
    SIMPLECPP_UNARY_CASE(kErf)
    SIMPLECPP_UNARY_CASE(kTanh)
    SIMPLECPP_UNARY_CASE(kSigmoid)
    SIMPLECPP_UNARY_CASE(kRelu)
    SIMPLECPP_UNARY_CASE(kLeakyRelu)
    SIMPLECPP_UNARY_CASE(kElu)
    SIMPLECPP_UNARY_CASE(kSelu)
    SIMPLECPP_UNARY_CASE(kCelu)
    SIMPLECPP_UNARY_CASE(kHardSigmoid)
    SIMPLECPP_UNARY_CASE(kHardSwish)
    SIMPLECPP_UNARY_CASE(kSoftplus)
    SIMPLECPP_UNARY_CASE(kSoftsign)
    SIMPLECPP_UNARY_CASE(kGelu)
    SIMPLECPP_UNARY_CASE(kGeluTanh)
    SIMPLECPP_UNARY_CASE(kMish)
    SIMPLECPP_UNARY_CASE(kFloor)
    SIMPLECPP_UNARY_CASE(kCeil)
    SIMPLECPP_UNARY_CASE(kRound)
    SIMPLECPP_UNARY_CASE(kSin)
    SIMPLECPP_UNARY_CASE(kCos)
    SIMPLECPP_UNARY_CASE(kTan)
    SIMPLECPP_UNARY_CASE(kAsin)
    SIMPLECPP_UNARY_CASE(kAcos)
    SIMPLECPP_UNARY_CASE(kAtan)
    SIMPLECPP_UNARY_CASE(kSinh)
    SIMPLECPP_UNARY_CASE(kCosh)
    SIMPLECPP_UNARY_CASE(kAsinh)
    SIMPLECPP_UNARY_CASE(kAcosh)
    SIMPLECPP_UNARY_CASE(kAtanh)
    SIMPLECPP_UNARY_CASE(kThresholdedRelu)
    SIMPLECPP_UNARY_CASE(kShrink)
    SIMPLECPP_UNARY_CASE(kSwish)
#undef SIMPLECPP_UNARY_CASE
  }
}

void ClipF32Impl(const float* x, float* y, size_t n, float lo, float hi) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF vlo = hn::Set(d, lo);
  const VF vhi = hn::Set(d, hi);
  // Blends (not Min/Max) so that NaN passes through and lo > hi gives hi.
  auto clip = [&](VF v) {
    v = hn::IfThenElse(hn::Lt(v, vlo), vlo, v);
    return hn::IfThenElse(hn::Gt(v, vhi), vhi, v);
  };
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(clip(hn::LoadU(d, x + i)), d, y + i);
  for (; i < n; ++i) {
    float v = x[i] < lo ? lo : x[i];
    y[i] = v > hi ? hi : v;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(UnaryF32Impl);
HWY_EXPORT(ClipF32Impl);

void UnaryF32(UnaryOp op, const UnaryParams& params, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(UnaryF32Impl)(op, params, x, y, static_cast<size_t>(n));
}

void UnaryF64(UnaryOp op, const UnaryParams& params, const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = elementwise_detail::ScalarUnary(op, params, x[i]);
}

void ClipF32(const float* x, float* y, int64_t n, float lo, float hi) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ClipF32Impl)(x, y, static_cast<size_t>(n), lo, hi);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
