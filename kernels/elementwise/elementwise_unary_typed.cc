// Unary elementwise kernels for the dtypes and ops that are rarely hot: integer/bool unary ops,
// Clip of every type (float32 forwards to the SIMD ClipF32 of
// kernels/elementwise/elementwise_unary.cc), IsNaN / IsInf. Plain loops the compiler can vectorize;
// kept apart from the SIMD file so that a WebAssembly build compiled for size (SIMPLECPP_WASM_OPT)
// compiles them with -Oz.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/elementwise.h"

namespace simplecpp::kernels {

template <typename T>
void Clip(const T* x, T* y, int64_t n, T lo, T hi) {
  if constexpr (std::is_same_v<T, float>) {
    ClipF32(x, y, n, lo, hi);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T v = x[i] < lo ? lo : x[i];
      y[i] = v > hi ? hi : v;
    }
  }
}

template <typename T>
void IntUnary(IntUnaryOp op, const T* x, T* y, int64_t n) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case IntUnaryOp::kNeg:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(U(0) - static_cast<U>(x[i]));
      return;
    case IntUnaryOp::kAbs:
      for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i] < 0 ? static_cast<T>(U(0) - static_cast<U>(x[i])) : x[i];
      }
      return;
    case IntUnaryOp::kSign:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((x[i] > 0) - (x[i] < 0));
      return;
    case IntUnaryOp::kRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? T(0) : x[i];
      return;
    case IntUnaryOp::kBitwiseNot:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(~x[i]);
      return;
    case IntUnaryOp::kNot:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] ? T(0) : T(1);
      return;
  }
}

#define SIMPLECPP_INSTANTIATE_INT(T)                            \
  template void IntUnary<T>(IntUnaryOp, const T*, T*, int64_t); \
  template void Clip<T>(const T*, T*, int64_t, T, T);
SIMPLECPP_INSTANTIATE_INT(int8_t)
SIMPLECPP_INSTANTIATE_INT(uint8_t)
SIMPLECPP_INSTANTIATE_INT(int16_t)
SIMPLECPP_INSTANTIATE_INT(uint16_t)
SIMPLECPP_INSTANTIATE_INT(int32_t)
SIMPLECPP_INSTANTIATE_INT(uint32_t)
SIMPLECPP_INSTANTIATE_INT(int64_t)
SIMPLECPP_INSTANTIATE_INT(uint64_t)
#undef SIMPLECPP_INSTANTIATE_INT
template void Clip<float>(const float*, float*, int64_t, float, float);
template void Clip<double>(const double*, double*, int64_t, double, double);

// ---- IsNaN / IsInf ----
void IsNaNF32(const float* x, uint8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::isnan(x[i]) ? 1 : 0;
}
void IsNaNF64(const double* x, uint8_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::isnan(x[i]) ? 1 : 0;
}
namespace {
template <typename F>
void IsInfFloat(const F* x, uint8_t* out, int64_t n, bool positive, bool negative) {
  for (int64_t i = 0; i < n; ++i) {
    const F v = x[i];
    out[i] = ((positive && v == std::numeric_limits<F>::infinity()) ||
              (negative && v == -std::numeric_limits<F>::infinity()))
                 ? 1
                 : 0;
  }
}
}  // namespace

void IsInfF32(const float* x, uint8_t* out, int64_t n, bool positive, bool negative) {
  IsInfFloat(x, out, n, positive, negative);
}
void IsInfF64(const double* x, uint8_t* out, int64_t n, bool positive, bool negative) {
  IsInfFloat(x, out, n, positive, negative);
}

namespace {
// 16-bit floats by bit pattern: exponent mask and mantissa mask (sign is bit 15).
void IsNaN16(const uint16_t* x, uint8_t* out, int64_t n, uint16_t exp_mask, uint16_t man_mask) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = ((x[i] & exp_mask) == exp_mask && (x[i] & man_mask) != 0) ? 1 : 0;
  }
}
void IsInf16(const uint16_t* x, uint8_t* out, int64_t n, uint16_t exp_mask, bool positive,
             bool negative) {
  for (int64_t i = 0; i < n; ++i) {
    const bool inf = (x[i] & 0x7FFF) == exp_mask;
    const bool neg = (x[i] & 0x8000) != 0;
    out[i] = (inf && (neg ? negative : positive)) ? 1 : 0;
  }
}
}  // namespace

void IsNaNF16(const uint16_t* x, uint8_t* out, int64_t n) { IsNaN16(x, out, n, 0x7C00, 0x03FF); }
void IsNaNBF16(const uint16_t* x, uint8_t* out, int64_t n) { IsNaN16(x, out, n, 0x7F80, 0x007F); }
void IsInfF16(const uint16_t* x, uint8_t* out, int64_t n, bool positive, bool negative) {
  IsInf16(x, out, n, 0x7C00, positive, negative);
}
void IsInfBF16(const uint16_t* x, uint8_t* out, int64_t n, bool positive, bool negative) {
  IsInf16(x, out, n, 0x7F80, positive, negative);
}

}  // namespace simplecpp::kernels
