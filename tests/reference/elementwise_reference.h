// Scalar oracles for the elementwise family, written from the ONNX operator definitions and
// evaluated in double precision (std:: math). Shared by the kernel and op tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/elementwise/elementwise.h"

namespace simplecpp::reference {

inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double Softplus(double x) {
  return x > 30 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// The ONNX formula of each unary op (attributes as kernels::UnaryParams documents them).
inline double Unary(kernels::UnaryOp op, const kernels::UnaryParams& p, double x) {
  using kernels::UnaryOp;
  const double alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(x)) return nan;
  switch (op) {
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kSign: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kReciprocal: return 1.0 / x;
    case UnaryOp::kExp: return std::exp(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kErf: return std::erf(x);
    case UnaryOp::kTanh: return std::tanh(x);
    case UnaryOp::kSigmoid: return x < -700 ? 0.0 : Sigmoid(x);
    case UnaryOp::kRelu: return std::max(x, 0.0);
    case UnaryOp::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case UnaryOp::kElu: return x >= 0 ? x : alpha * std::expm1(x);
    case UnaryOp::kSelu: return x > 0 ? gamma * x : gamma * alpha * std::expm1(x);
    case UnaryOp::kCelu: return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
    case UnaryOp::kHardSigmoid: return std::max(0.0, std::min(1.0, alpha * x + beta));
    case UnaryOp::kHardSwish: return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
    case UnaryOp::kSoftplus: return std::isinf(x) ? (x > 0 ? x : 0.0) : Softplus(x);
    case UnaryOp::kSoftsign: return std::isinf(x) ? std::copysign(1.0, x) : x / (1.0 + std::fabs(x));
    case UnaryOp::kGelu: return std::isinf(x) ? std::max(x, 0.0) : 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case UnaryOp::kGeluTanh:
      if (std::isinf(x)) return std::max(x, 0.0);
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * std::pow(x, 3.0))));
    case UnaryOp::kMish:
      return std::isinf(x) ? std::max(x, 0.0) : x * std::tanh(Softplus(x));
    case UnaryOp::kFloor: return std::floor(x);
    case UnaryOp::kCeil: return std::ceil(x);
    case UnaryOp::kRound: {
      const double f = std::floor(x);
      const double diff = x - f;
      if (diff > 0.5) return f + 1;
      if (diff < 0.5) return f;
      return std::fmod(f, 2.0) == 0 ? f : f + 1;
    }
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
    case UnaryOp::kThresholdedRelu: return x > alpha ? x : 0;
    case UnaryOp::kShrink: return x < -alpha ? x + beta : (x > alpha ? x - beta : 0);
    case UnaryOp::kSwish: {
      if (std::isinf(x)) return alpha * x > 0 ? x : 0.0;
      return x * (alpha * x < -700 ? 0.0 : Sigmoid(alpha * x));
    }
  }
  return nan;
}

// Python-style modulo (sign of the divisor) on integers; 0 for a zero divisor (our definition).
template <typename T>
T PyMod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

}  // namespace simplecpp::reference
