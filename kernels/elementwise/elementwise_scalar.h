// Scalar elementwise helpers shared by the float32 SIMD binary kernel (its tails and rarer ops,
// kernels/elementwise/elementwise_binary.cc) and the per-dtype loops
// (kernels/elementwise/elementwise_binary_typed.cc): the defined integer results of
// kernels/elementwise/elementwise.h (wrapping arithmetic, division by zero, shifts past the width),
// IEEE float formulas, and one loop per operand-step pattern.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/elementwise.h"

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
      case BinaryOp::kAdd:
        return a + b;
      case BinaryOp::kSub:
        return a - b;
      case BinaryOp::kMul:
        return a * b;
      case BinaryOp::kDiv:
        return a / b;
      case BinaryOp::kMax:
        return (std::isnan(a) || std::isnan(b)) ? a + b : (a < b ? b : a);
      case BinaryOp::kMin:
        return (std::isnan(a) || std::isnan(b)) ? a + b : (b < a ? b : a);
      case BinaryOp::kMod: {
        T r = std::fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        if (r == 0) r = std::copysign(T(0), b);
        return r;
      }
      case BinaryOp::kFmod:
        return std::fmod(a, b);
      case BinaryOp::kPow:
        return std::pow(a, b);
      case BinaryOp::kPRelu:
        return a < 0 ? a * b : a;
      default:
        return a;  // bit ops are not defined on floats; the ops never ask
    }
  } else {
    switch (op) {
      case BinaryOp::kAdd:
        return WrapAdd(a, b);
      case BinaryOp::kSub:
        return WrapSub(a, b);
      case BinaryOp::kMul:
        return WrapMul(a, b);
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
      case BinaryOp::kMax:
        return a < b ? b : a;
      case BinaryOp::kMin:
        return b < a ? b : a;
      case BinaryOp::kPow:
        return IntPow(a, b);
      case BinaryOp::kPRelu:
        return a < 0 ? WrapMul(a, b) : a;
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
      case BinaryOp::kBitwiseAnd:
        return static_cast<T>(a & b);
      case BinaryOp::kBitwiseOr:
        return static_cast<T>(a | b);
      case BinaryOp::kBitwiseXor:
        return static_cast<T>(a ^ b);
    }
    return a;
  }
}

// One loop per step pattern so each loop body is simple enough to vectorize. A build optimized
// for size (SIMPLECPP_OPTIMIZE_FOR_SIZE: the WebAssembly package with SIMPLECPP_WASM_OPT=size)
// runs one strided loop for every pattern instead: the same results in a third of the code.
template <typename T, typename R, typename F>
inline void RunLoop(const T* a, int64_t a_step, const T* b, int64_t b_step, R* out, int64_t n,
                    F f) {
#if SIMPLECPP_OPTIMIZE_FOR_SIZE
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i * a_step], b[i * b_step]);
  return;
#endif
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
