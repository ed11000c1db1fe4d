// Binary elementwise kernels on one contiguous run of a broadcast iteration: float32 arithmetic in
// Highway SIMD, every other dtype (and the rarer float32 ops: Pow, Mod) in scalar loops written so
// the compiler can vectorize them (one loop per operand-step pattern). Also comparisons, mixed-type
// Pow and Where. See kernels/elementwise.h for the defined results of integer edge cases.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise_binary.cc"
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/elementwise.h"

#ifndef SIMPLECPP_KERNELS_ELEMENTWISE_BINARY_ONCE
#define SIMPLECPP_KERNELS_ELEMENTWISE_BINARY_ONCE

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace simplecpp::kernels::elementwise_detail {

// Unsigned type wide enough that arithmetic on it never promotes to (signed) int.
template <typename T>
using WrapT = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
inline T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<WrapT<T>>(a) + static_cast<WrapT<T>>(b));
}
template <typename T>
inline T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<WrapT<T>>(a) - static_cast<WrapT<T>>(b));
}
template <typename T>
inline T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<WrapT<T>>(a) * static_cast<WrapT<T>>(b));
}

// Saturating float -> integer conversion; NaN gives 0.
template <typename T>
inline T SaturateCast(double v) {
  if (std::isnan(v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// base^e for integers, wrapping; negative exponents give 1/base^|e| truncated toward zero.
template <typename T, typename E>
inline T IntPow(T base, E e) {
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (base == 1) return T(1);
      if constexpr (std::is_signed_v<T>) {
        if (base == -1) return (e % 2 == 0) ? T(1) : T(-1);
      }
      return T(0);
    }
  }
  using W = WrapT<T>;
  W result = 1, b = static_cast<W>(base);
  auto u = static_cast<std::make_unsigned_t<E>>(e);
  while (u != 0) {
    if (u & 1) result = static_cast<W>(result * b);
    b = static_cast<W>(b * b);
    u >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T>
inline T ScalarBinary(BinaryOp op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case BinaryOp::kAdd: return a + b;
      case BinaryOp::kSub: return a - b;
      case BinaryOp::kMul: return a * b;
      case BinaryOp::kDiv: return a / b;
      case BinaryOp::kMax: return (std::isnan(a) || std::isnan(b)) ? a + b : (a < b ? b : a);
      case BinaryOp::kMin: return (std::isnan(a) || std::isnan(b)) ? a + b : (b < a ? b : a);
      case BinaryOp::kMod: {
        T r = std::fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        if (r == 0) r = std::copysign(T(0), b);
        return r;
      }
      case BinaryOp::kFmod: return std::fmod(a, b);
      case BinaryOp::kPow: return std::pow(a, b);
      case BinaryOp::kPRelu: return a < 0 ? a * b : a;
      default: return a;  // bit ops are not defined on floats; the ops never ask
    }
  } else {
    switch (op) {
      case BinaryOp::kAdd: return WrapAdd(a, b);
      case BinaryOp::kSub: return WrapSub(a, b);
      case BinaryOp::kMul: return WrapMul(a, b);
      case BinaryOp::kDiv:
        if (b == 0) return T(0);
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return static_cast<T>(WrapSub(T(0), a));
        }
        return static_cast<T>(a / b);
      case BinaryOp::kMod: {
        if (b == 0) return T(0);
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return T(0);
          T r = static_cast<T>(a % b);
          if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
          return r;
        } else {
          return static_cast<T>(a % b);
        }
      }
      case BinaryOp::kFmod:
        if (b == 0) return T(0);
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return T(0);
        }
        return static_cast<T>(a % b);
      case BinaryOp::kMax: return a < b ? b : a;
      case BinaryOp::kMin: return b < a ? b : a;
      case BinaryOp::kPow: return IntPow(a, b);
      case BinaryOp::kPRelu: return a < 0 ? WrapMul(a, b) : a;
      case BinaryOp::kBitShiftLeft: {
        using U = WrapT<T>;
        if (static_cast<std::make_unsigned_t<T>>(b) >= sizeof(T) * 8) return T(0);
        return static_cast<T>(static_cast<U>(static_cast<U>(a) << b));
      }
      case BinaryOp::kBitShiftRight: {
        using U = std::make_unsigned_t<T>;
        if (static_cast<U>(b) >= sizeof(T) * 8) return T(0);
        return static_cast<T>(static_cast<U>(a) >> b);
      }
      case BinaryOp::kBitwiseAnd: return static_cast<T>(a & b);
      case BinaryOp::kBitwiseOr: return static_cast<T>(a | b);
      case BinaryOp::kBitwiseXor: return static_cast<T>(a ^ b);
    }
    return a;
  }
}

// One loop per step pattern so each loop body is simple enough to vectorize.
template <typename T, typename R, typename F>
inline void RunLoop(const T* a, int64_t a_step, const T* b, int64_t b_step, R* out, int64_t n,
                    F f) {
  if (a_step == 1 && b_step == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (a_step == 0 && b_step == 1) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(av, b[i]);
  } else if (a_step == 1 && b_step == 0) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
  } else {
    const R v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  }
}

}  // namespace simplecpp::kernels::elementwise_detail

#endif  // SIMPLECPP_KERNELS_ELEMENTWISE_BINARY_ONCE

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

namespace ed = elementwise_detail;

HWY_EXPORT(BinaryF32Impl);

void BinaryF32(BinaryOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
               float* out, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(BinaryF32Impl)(op, a, a_step, b, b_step, out, static_cast<size_t>(n));
}

template <typename T>
void Binary(BinaryOp op, const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
            int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    BinaryF32(op, a, a_step, b, b_step, out, n);
  } else {
    // The op switch sits outside the loops: each case is its own (vectorizable) loop.
    switch (op) {
#define SIMPLECPP_BINARY_CASE(name)                                                           \
  case BinaryOp::name:                                                                        \
    return ed::RunLoop(a, a_step, b, b_step, out, n,                                          \
                       [](T x, T y) { return ed::ScalarBinary<T>(BinaryOp::name, x, y); });
      SIMPLECPP_BINARY_CASE(kAdd)
      SIMPLECPP_BINARY_CASE(kSub)
      SIMPLECPP_BINARY_CASE(kMul)
      SIMPLECPP_BINARY_CASE(kDiv)
      SIMPLECPP_BINARY_CASE(kMax)
      SIMPLECPP_BINARY_CASE(kMin)
      SIMPLECPP_BINARY_CASE(kMod)
      SIMPLECPP_BINARY_CASE(kFmod)
      SIMPLECPP_BINARY_CASE(kPow)
      SIMPLECPP_BINARY_CASE(kPRelu)
      SIMPLECPP_BINARY_CASE(kBitShiftLeft)
      SIMPLECPP_BINARY_CASE(kBitShiftRight)
      SIMPLECPP_BINARY_CASE(kBitwiseAnd)
      SIMPLECPP_BINARY_CASE(kBitwiseOr)
      SIMPLECPP_BINARY_CASE(kBitwiseXor)
#undef SIMPLECPP_BINARY_CASE
    }
  }
}

template <typename T, typename E>
void Pow(const T* a, int64_t a_step, const E* b, int64_t b_step, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = a[i * a_step];
    const E e = b[i * b_step];
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
        out[i] = std::pow(x, e);
      } else {
        out[i] = static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
      }
    } else if constexpr (std::is_integral_v<E>) {
      out[i] = ed::IntPow(x, e);
    } else {
      out[i] = ed::SaturateCast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
    }
  }
}

template <typename T>
void Compare(CompareOp op, const T* a, int64_t a_step, const T* b, int64_t b_step, uint8_t* out,
             int64_t n) {
  switch (op) {
    case CompareOp::kEqual:
      return ed::RunLoop(a, a_step, b, b_step, out, n, [](T x, T y) { return uint8_t(x == y); });
    case CompareOp::kLess:
      return ed::RunLoop(a, a_step, b, b_step, out, n, [](T x, T y) { return uint8_t(x < y); });
    case CompareOp::kLessOrEqual:
      return ed::RunLoop(a, a_step, b, b_step, out, n, [](T x, T y) { return uint8_t(x <= y); });
    case CompareOp::kGreater:
      return ed::RunLoop(a, a_step, b, b_step, out, n, [](T x, T y) { return uint8_t(x > y); });
    case CompareOp::kGreaterOrEqual:
      return ed::RunLoop(a, a_step, b, b_step, out, n, [](T x, T y) { return uint8_t(x >= y); });
  }
}

template <typename T>
void Where(const uint8_t* cond, int64_t c_step, const T* x, int64_t x_step, const T* y,
           int64_t y_step, T* out, int64_t n) {
  if (c_step == 1 && x_step == 1 && y_step == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = cond[i] ? x[i] : y[i];
  } else if (c_step == 0) {
    const T* src = cond[0] ? x : y;
    const int64_t step = cond[0] ? x_step : y_step;
    if (step == 0) {
      std::fill(out, out + n, src[0]);
    } else {
      std::copy(src, src + n, out);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = cond[i] ? x[i * x_step] : y[i * y_step];
  }
}

#define SIMPLECPP_INSTANTIATE_BINARY(T)                                                     \
  template void Binary<T>(BinaryOp, const T*, int64_t, const T*, int64_t, T*, int64_t);     \
  template void Compare<T>(CompareOp, const T*, int64_t, const T*, int64_t, uint8_t*,       \
                           int64_t);                                                        \
  template void Pow<int32_t, T>(const int32_t*, int64_t, const T*, int64_t, int32_t*,       \
                                int64_t);                                                   \
  template void Pow<int64_t, T>(const int64_t*, int64_t, const T*, int64_t, int64_t*,       \
                                int64_t);                                                   \
  template void Pow<float, T>(const float*, int64_t, const T*, int64_t, float*, int64_t);   \
  template void Pow<double, T>(const double*, int64_t, const T*, int64_t, double*, int64_t);
SIMPLECPP_INSTANTIATE_BINARY(int8_t)
SIMPLECPP_INSTANTIATE_BINARY(uint8_t)
SIMPLECPP_INSTANTIATE_BINARY(int16_t)
SIMPLECPP_INSTANTIATE_BINARY(uint16_t)
SIMPLECPP_INSTANTIATE_BINARY(int32_t)
SIMPLECPP_INSTANTIATE_BINARY(uint32_t)
SIMPLECPP_INSTANTIATE_BINARY(int64_t)
SIMPLECPP_INSTANTIATE_BINARY(uint64_t)
SIMPLECPP_INSTANTIATE_BINARY(float)
SIMPLECPP_INSTANTIATE_BINARY(double)
#undef SIMPLECPP_INSTANTIATE_BINARY

template void Where<uint8_t>(const uint8_t*, int64_t, const uint8_t*, int64_t, const uint8_t*,
                             int64_t, uint8_t*, int64_t);
template void Where<uint16_t>(const uint8_t*, int64_t, const uint16_t*, int64_t, const uint16_t*,
                              int64_t, uint16_t*, int64_t);
template void Where<uint32_t>(const uint8_t*, int64_t, const uint32_t*, int64_t, const uint32_t*,
                              int64_t, uint32_t*, int64_t);
template void Where<uint64_t>(const uint8_t*, int64_t, const uint64_t*, int64_t, const uint64_t*,
                              int64_t, uint64_t*, int64_t);

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
