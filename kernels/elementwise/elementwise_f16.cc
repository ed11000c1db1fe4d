// 16-bit float storage (float16 / bfloat16) for the elementwise kernels
// (kernels/elementwise/elementwise.h). Each call streams its operands in blocks of kBlock16
// elements: a block is widened to float32 in stack buffers with the SIMD conversions of
// kernels/float16/float16.h, computed by the float32 SIMD kernel, and rounded back to 16 bits once
// per element. No tensor-sized float32 copy is made; a broadcast operand (step 0) is widened once
// per call. Plain C++ (the SIMD lives in the kernels it calls).
#include <algorithm>
#include <cstdint>

#include "kernels/elementwise/elementwise.h"
#include "kernels/float16/float16.h"

namespace simplecpp::kernels {
namespace {

// One block of one operand as float32: widened into buf when contiguous, or the single broadcast
// value when the step is 0.
inline const float* Operand(Float16Kind kind, const uint16_t* p, int64_t step, int64_t i,
                            int64_t len, float* buf, const float* broadcast) {
  if (step == 0) return broadcast;
  Widen16(kind, p + i, buf, static_cast<size_t>(len));
  return buf;
}

}  // namespace

void Unary16(Float16Kind kind, UnaryOp op, const UnaryParams& params, const uint16_t* x,
             uint16_t* y, int64_t n) {
  float buf[kBlock16];
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    Widen16(kind, x + i, buf, static_cast<size_t>(len));
    UnaryF32(op, params, buf, buf, len);
    Narrow16(kind, buf, y + i, static_cast<size_t>(len));
  }
}

void Clip16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t n, float lo, float hi) {
  float buf[kBlock16];
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    Widen16(kind, x + i, buf, static_cast<size_t>(len));
    ClipF32(buf, buf, len, lo, hi);
    Narrow16(kind, buf, y + i, static_cast<size_t>(len));
  }
}

void Binary16(Float16Kind kind, BinaryOp op, const uint16_t* a, int64_t a_step, const uint16_t* b,
              int64_t b_step, uint16_t* out, int64_t n) {
  if (n <= 0) return;
  float fa[kBlock16], fb[kBlock16], fo[kBlock16];
  const float sa = a_step == 0 ? Widen16One(kind, a[0]) : 0.0f;
  const float sb = b_step == 0 ? Widen16One(kind, b[0]) : 0.0f;
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    const float* pa = Operand(kind, a, a_step, i, len, fa, &sa);
    const float* pb = Operand(kind, b, b_step, i, len, fb, &sb);
    Binary<float>(op, pa, a_step, pb, b_step, fo, len);
    Narrow16(kind, fo, out + i, static_cast<size_t>(len));  // out may alias a or b: block read first
  }
}

void Compare16(Float16Kind kind, CompareOp op, const uint16_t* a, int64_t a_step,
               const uint16_t* b, int64_t b_step, uint8_t* out, int64_t n) {
  if (n <= 0) return;
  float fa[kBlock16], fb[kBlock16];
  const float sa = a_step == 0 ? Widen16One(kind, a[0]) : 0.0f;
  const float sb = b_step == 0 ? Widen16One(kind, b[0]) : 0.0f;
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    const float* pa = Operand(kind, a, a_step, i, len, fa, &sa);
    const float* pb = Operand(kind, b, b_step, i, len, fb, &sb);
    Compare<float>(op, pa, a_step, pb, b_step, out + i, len);
  }
}

template <typename E>
void Pow16(Float16Kind kind, const uint16_t* a, int64_t a_step, const E* b, int64_t b_step,
           uint16_t* out, int64_t n) {
  if (n <= 0) return;
  float fa[kBlock16], fo[kBlock16];
  const float sa = a_step == 0 ? Widen16One(kind, a[0]) : 0.0f;
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    const float* pa = Operand(kind, a, a_step, i, len, fa, &sa);
    Pow<float, E>(pa, a_step, b + i * b_step, b_step, fo, len);
    Narrow16(kind, fo, out + i, static_cast<size_t>(len));
  }
}

void Pow16Exp16(Float16Kind kind, const uint16_t* a, int64_t a_step, Float16Kind b_kind,
                const uint16_t* b, int64_t b_step, uint16_t* out, int64_t n) {
  if (n <= 0) return;
  float fa[kBlock16], fb[kBlock16], fo[kBlock16];
  const float sa = a_step == 0 ? Widen16One(kind, a[0]) : 0.0f;
  const float sb = b_step == 0 ? Widen16One(b_kind, b[0]) : 0.0f;
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    const float* pa = Operand(kind, a, a_step, i, len, fa, &sa);
    const float* pb = Operand(b_kind, b, b_step, i, len, fb, &sb);
    Pow<float, float>(pa, a_step, pb, b_step, fo, len);
    Narrow16(kind, fo, out + i, static_cast<size_t>(len));
  }
}

template <typename T>
void PowExp16(const T* a, int64_t a_step, Float16Kind b_kind, const uint16_t* b, int64_t b_step,
              T* out, int64_t n) {
  if (n <= 0) return;
  float fb[kBlock16];
  const float sb = b_step == 0 ? Widen16One(b_kind, b[0]) : 0.0f;
  for (int64_t i = 0; i < n; i += kBlock16) {
    const int64_t len = std::min(kBlock16, n - i);
    const float* pb = Operand(b_kind, b, b_step, i, len, fb, &sb);
    Pow<T, float>(a + i * a_step, a_step, pb, b_step, out + i, len);
  }
}

#define SIMPLECPP_INSTANTIATE_POW16(E)                                                   \
  template void Pow16<E>(Float16Kind, const uint16_t*, int64_t, const E*, int64_t, uint16_t*, \
                         int64_t);
SIMPLECPP_INSTANTIATE_POW16(int8_t)
SIMPLECPP_INSTANTIATE_POW16(uint8_t)
SIMPLECPP_INSTANTIATE_POW16(int16_t)
SIMPLECPP_INSTANTIATE_POW16(uint16_t)
SIMPLECPP_INSTANTIATE_POW16(int32_t)
SIMPLECPP_INSTANTIATE_POW16(uint32_t)
SIMPLECPP_INSTANTIATE_POW16(int64_t)
SIMPLECPP_INSTANTIATE_POW16(uint64_t)
SIMPLECPP_INSTANTIATE_POW16(float)
SIMPLECPP_INSTANTIATE_POW16(double)
#undef SIMPLECPP_INSTANTIATE_POW16
template void PowExp16<int32_t>(const int32_t*, int64_t, Float16Kind, const uint16_t*, int64_t,
                                int32_t*, int64_t);
template void PowExp16<int64_t>(const int64_t*, int64_t, Float16Kind, const uint16_t*, int64_t,
                                int64_t*, int64_t);
template void PowExp16<float>(const float*, int64_t, Float16Kind, const uint16_t*, int64_t, float*,
                              int64_t);
template void PowExp16<double>(const double*, int64_t, Float16Kind, const uint16_t*, int64_t,
                               double*, int64_t);

}  // namespace simplecpp::kernels
