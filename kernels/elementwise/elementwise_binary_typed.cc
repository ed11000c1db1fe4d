// Binary elementwise kernels for every dtype but the float32 SIMD path: integer and float64
// arithmetic, comparisons, mixed-type Pow and Where, in scalar loops written so the compiler can
// vectorize them (one loop per operand-step pattern). Binary<float> forwards to BinaryF32
// (kernels/elementwise/elementwise_binary.cc). Kept apart from the SIMD file because these loops
// are rarely hot: a WebAssembly build compiled for size (SIMPLECPP_WASM_OPT) compiles this file
// with -Oz. See kernels/elementwise/elementwise.h for the defined results of integer edge cases.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_scalar.h"

namespace simplecpp::kernels {

namespace ed = elementwise_detail;

// Ops whose results have the same bits for a signed integer type and its unsigned twin (wrapping
// add/sub/mul, the bit ops): the signed type runs the unsigned loops, one instantiation for both
// (signed and unsigned variants of a type may alias each other).
constexpr bool SignAgnostic(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul ||
         op == BinaryOp::kBitwiseAnd || op == BinaryOp::kBitwiseOr || op == BinaryOp::kBitwiseXor;
}

template <typename T>
constexpr bool kSignedInteger = std::is_integral_v<T>&& std::is_signed_v<T>;

template <typename T>
void Binary(BinaryOp op, const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
            int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return BinaryF32(op, a, a_step, b, b_step, out, n);
  } else {
    if constexpr (kSignedInteger<T>) {
      if (SignAgnostic(op)) {
        using U = std::make_unsigned_t<T>;
        return Binary<U>(op, reinterpret_cast<const U*>(a), a_step, reinterpret_cast<const U*>(b),
                         b_step, reinterpret_cast<U*>(out), n);
      }
    }
    // The op switch sits outside the loops: each case is its own (vectorizable) loop; a signed
    // type compiles no loop for the sign-agnostic ops.
    switch (op) {
#define SIMPLECPP_BINARY_CASE(name)                                                    \
  case BinaryOp::name:                                                                 \
    if constexpr (!(kSignedInteger<T> && SignAgnostic(BinaryOp::name))) {              \
      ed::RunLoop(a, a_step, b, b_step, out, n,                                        \
                  [](T x, T y) { return ed::ScalarBinary<T>(BinaryOp::name, x, y); }); \
    }                                                                                  \
    return;
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
      if constexpr (kSignedInteger<T>) {  // equality of bits: the unsigned twin's loop serves
        using U = std::make_unsigned_t<T>;
        return Compare<U>(op, reinterpret_cast<const U*>(a), a_step, reinterpret_cast<const U*>(b),
                          b_step, out, n);
      } else {
        return ed::RunLoop(a, a_step, b, b_step, out, n, [](T x, T y) { return uint8_t(x == y); });
      }
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

#define SIMPLECPP_INSTANTIATE_BINARY(T)                                                         \
  template void Binary<T>(BinaryOp, const T*, int64_t, const T*, int64_t, T*, int64_t);         \
  template void Compare<T>(CompareOp, const T*, int64_t, const T*, int64_t, uint8_t*, int64_t); \
  template void Pow<int32_t, T>(const int32_t*, int64_t, const T*, int64_t, int32_t*, int64_t); \
  template void Pow<int64_t, T>(const int64_t*, int64_t, const T*, int64_t, int64_t*, int64_t); \
  template void Pow<float, T>(const float*, int64_t, const T*, int64_t, float*, int64_t);       \
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
