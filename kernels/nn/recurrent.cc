// Gate math of the recurrent ops (see recurrent.h). float32 in Highway SIMD with scalar tails;
// the transcendental activations (tanh, sigmoid, elu, softplus) reuse UnaryF32 from
// elementwise.h, which already handles accuracy and extreme inputs; float64 is scalar.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/recurrent.cc"
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/elementwise/elementwise.h"
#include "kernels/nn/recurrent.h"

#ifndef SIMPLECPP_KERNELS_RECURRENT_ONCE
#define SIMPLECPP_KERNELS_RECURRENT_ONCE

#include <algorithm>
#include <cmath>
#include <limits>

namespace simplecpp::kernels::recurrent_detail {

// True when `clip` asks for clipping.
template <typename T>
inline bool ClipActive(T clip) {
  return clip > 0 && clip < std::numeric_limits<T>::infinity();
}

// The elementwise op for activations that UnaryF32/UnaryF64 implement; false for Affine and
// ScaledTanh.
inline bool AsUnary(const RnnActivation& act, UnaryOp* op, UnaryParams* params) {
  params->alpha = act.alpha;
  params->beta = act.beta;
  switch (act.kind) {
    case RnnActivationKind::kRelu: *op = UnaryOp::kRelu; return true;
    case RnnActivationKind::kTanh: *op = UnaryOp::kTanh; return true;
    case RnnActivationKind::kSigmoid: *op = UnaryOp::kSigmoid; return true;
    case RnnActivationKind::kLeakyRelu: *op = UnaryOp::kLeakyRelu; return true;
    case RnnActivationKind::kThresholdedRelu: *op = UnaryOp::kThresholdedRelu; return true;
    case RnnActivationKind::kHardSigmoid: *op = UnaryOp::kHardSigmoid; return true;
    case RnnActivationKind::kElu: *op = UnaryOp::kElu; return true;
    case RnnActivationKind::kSoftsign: *op = UnaryOp::kSoftsign; return true;
    case RnnActivationKind::kSoftplus: *op = UnaryOp::kSoftplus; return true;
    case RnnActivationKind::kAffine:
    case RnnActivationKind::kScaledTanh: return false;
  }
  return false;
}

}  // namespace simplecpp::kernels::recurrent_detail

#endif  // SIMPLECPP_KERNELS_RECURRENT_ONCE

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// y = clamp(a + b, -clip, clip) (b may be null; clip inactive when do_clip is false). Blends, not
// Min/Max, so NaN passes through.
void SumClipF32(const float* a, const float* b, bool do_clip, float clip, float* y, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF lo = hn::Set(d, -clip), hi = hn::Set(d, clip);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    VF v = hn::LoadU(d, a + i);
    if (b != nullptr) v = hn::Add(v, hn::LoadU(d, b + i));
    if (do_clip) {
      v = hn::IfThenElse(hn::Lt(v, lo), lo, v);
      v = hn::IfThenElse(hn::Gt(v, hi), hi, v);
    }
    hn::StoreU(v, d, y + i);
  }
  for (; i < n; ++i) {
    float v = a[i];
    if (b != nullptr) v += b[i];
    if (do_clip) {
      v = v < -clip ? -clip : v;
      v = v > clip ? clip : v;
    }
    y[i] = v;
  }
}

// y = alpha * x + beta, in place.
void AffineF32(float alpha, float beta, float* y, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF va = hn::Set(d, alpha), vb = hn::Set(d, beta);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::MulAdd(va, hn::LoadU(d, y + i), vb), d, y + i);
  for (; i < n; ++i) y[i] = alpha * y[i] + beta;
}

void RnnGateF32Impl(const RnnActivation& act, float clip, const float* a, const float* b,
                    float* y, size_t n) {
  SumClipF32(a, b, recurrent_detail::ClipActive(clip), clip, y, n);
  UnaryOp op;
  UnaryParams params;
  if (recurrent_detail::AsUnary(act, &op, &params)) {
    UnaryF32(op, params, y, y, static_cast<int64_t>(n));
  } else if (act.kind == RnnActivationKind::kAffine) {
    AffineF32(act.alpha, act.beta, y, n);
  } else {  // kScaledTanh: alpha * tanh(beta * x)
    AffineF32(act.beta, 0.0f, y, n);
    UnaryF32(UnaryOp::kTanh, params, y, y, static_cast<int64_t>(n));
    AffineF32(act.alpha, 0.0f, y, n);
  }
}

void RnnMulAddF32Impl(const float* a, const float* b, float* y, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::MulAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, y + i)), d,
               y + i);
  }
  for (; i < n; ++i) y[i] += a[i] * b[i];
}

void RnnMulF32Impl(const float* a, const float* b, float* y, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, y + i);
  for (; i < n; ++i) y[i] = a[i] * b[i];
}

void LstmCellF32Impl(const float* in, const float* f, const float* g, float* c, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF one = hn::Set(d, 1.0f);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const VF vi = hn::LoadU(d, in + i);
    const VF vf = f != nullptr ? hn::LoadU(d, f + i) : hn::Sub(one, vi);
    hn::StoreU(hn::MulAdd(vf, hn::LoadU(d, c + i), hn::Mul(vi, hn::LoadU(d, g + i))), d, c + i);
  }
  for (; i < n; ++i) {
    const float fv = f != nullptr ? f[i] : 1.0f - in[i];
    c[i] = fv * c[i] + in[i] * g[i];
  }
}

void GruUpdateF32Impl(const float* z, const float* cand, float* h, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF one = hn::Set(d, 1.0f);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const VF vz = hn::LoadU(d, z + i);
    const VF keep = hn::Mul(vz, hn::LoadU(d, h + i));
    hn::StoreU(hn::MulAdd(hn::Sub(one, vz), hn::LoadU(d, cand + i), keep), d, h + i);
  }
  for (; i < n; ++i) h[i] = (1.0f - z[i]) * cand[i] + z[i] * h[i];
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(RnnGateF32Impl);
HWY_EXPORT(RnnMulAddF32Impl);
HWY_EXPORT(RnnMulF32Impl);
HWY_EXPORT(LstmCellF32Impl);
HWY_EXPORT(GruUpdateF32Impl);

void RnnGateF32(const RnnActivation& act, float clip, const float* a, const float* b, float* y,
                int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(RnnGateF32Impl)(act, clip, a, b, y, static_cast<size_t>(n));
}

void RnnMulAddF32(const float* a, const float* b, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(RnnMulAddF32Impl)(a, b, y, static_cast<size_t>(n));
}

void RnnMulF32(const float* a, const float* b, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(RnnMulF32Impl)(a, b, y, static_cast<size_t>(n));
}

void LstmCellF32(const float* in, const float* f, const float* g, float* c, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(LstmCellF32Impl)(in, f, g, c, static_cast<size_t>(n));
}

void GruUpdateF32(const float* z, const float* cand, float* h, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(GruUpdateF32Impl)(z, cand, h, static_cast<size_t>(n));
}

// ---- float64: scalar loops.

void RnnGateF64(const RnnActivation& act, double clip, const double* a, const double* b,
                double* y, int64_t n) {
  const bool do_clip = recurrent_detail::ClipActive(clip);
  for (int64_t i = 0; i < n; ++i) {
    double v = a[i];
    if (b != nullptr) v += b[i];
    if (do_clip) {
      v = v < -clip ? -clip : v;
      v = v > clip ? clip : v;
    }
    y[i] = v;
  }
  UnaryOp op;
  UnaryParams params;
  if (recurrent_detail::AsUnary(act, &op, &params)) {
    UnaryF64(op, params, y, y, n);
  } else if (act.kind == RnnActivationKind::kAffine) {
    for (int64_t i = 0; i < n; ++i) y[i] = double{act.alpha} * y[i] + double{act.beta};
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = double{act.alpha} * std::tanh(double{act.beta} * y[i]);
  }
}

void RnnMulAddF64(const double* a, const double* b, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a[i] * b[i];
}

void RnnMulF64(const double* a, const double* b, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void LstmCellF64(const double* in, const double* f, const double* g, double* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double fv = f != nullptr ? f[i] : 1.0 - in[i];
    c[i] = fv * c[i] + in[i] * g[i];
  }
}

void GruUpdateF64(const double* z, const double* cand, double* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i) h[i] = (1.0 - z[i]) * cand[i] + z[i] * h[i];
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
