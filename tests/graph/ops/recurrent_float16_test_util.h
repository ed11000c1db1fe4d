// Test helpers for the float16 / bfloat16 paths of ops that compute in float32
// (graph/ops/recurrent_float16_wrap.h: RNN/GRU/LSTM, ConvTranspose, Resize/Upsample).
//
// Check16: `got` (16-bit) must equal, bit for bit, the float32 result of the same node on the
// 16-bit inputs widened (`exact_f32`) rounded once (round to nearest even), and must be within
//   |got - ref| <= 2 * eps16 * |ref| + atol
// of `ref_f32`, the float32 result on the original, unrounded float32 inputs: 2 * eps16 * |ref|
// covers the output rounding (eps16/2) with margin, atol the effect of rounding the inputs
// (each test derives it from its op's arithmetic). eps16 = 2^-10 (float16), 2^-7 (bfloat16).
#pragma once

#include <cmath>
#include <cstdint>

#include <doctest/doctest.h>

#include "kernels/float16/float16.h"
#include "simplecpp/tensor.h"

namespace simplecpp::testing {

inline kernels::Float16Kind Kind16(DType t) {
  return t == DType::kBFloat16 ? kernels::Float16Kind::kBFloat16 : kernels::Float16Kind::kHalf;
}
inline double Eps16(DType t) { return t == DType::kBFloat16 ? 0x1p-7 : 0x1p-10; }

// float32 -> 16-bit tensor (round to nearest even); undefined and non-float32 tensors unchanged.
inline Tensor To16(const Tensor& t, DType dtype16) {
  if (!t.defined() || t.dtype() != DType::kFloat32) return t;
  Tensor out(dtype16, t.dims());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.data<uint16_t>()[i] = kernels::Narrow16One(Kind16(dtype16), t.data<float>()[i]);
  }
  return out;
}
// 16-bit tensor -> float32 (exact); other tensors unchanged.
inline Tensor From16(const Tensor& t) {
  if (!t.defined() || (t.dtype() != DType::kFloat16 && t.dtype() != DType::kBFloat16)) return t;
  Tensor out(DType::kFloat32, t.dims());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.data<float>()[i] = kernels::Widen16One(Kind16(t.dtype()), t.data<uint16_t>()[i]);
  }
  return out;
}

inline void Check16(const Tensor& got, const Tensor& exact_f32, const Tensor& ref_f32,
                    DType dtype16, double atol) {
  REQUIRE(got.dtype() == dtype16);
  REQUIRE(got.dims() == ref_f32.dims());
  REQUIRE(got.dims() == exact_f32.dims());
  const kernels::Float16Kind kind = Kind16(dtype16);
  const double eps = Eps16(dtype16);
  int bad_exact = 0, bad_tol = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const uint16_t g = got.data<uint16_t>()[i];
    const uint16_t e = kernels::Narrow16One(kind, exact_f32.data<float>()[i]);
    if (g != e && bad_exact++ < 3) {
      CAPTURE(i);
      CHECK(g == e);
    }
    const double gv = kernels::Widen16One(kind, g);
    const double rv = kernels::Widen16One(kind, kernels::Narrow16One(kind, ref_f32.data<float>()[i]));
    if (!(std::fabs(gv - rv) <= 2 * eps * std::fabs(rv) + atol) && bad_tol++ < 3) {
      CAPTURE(i);
      CHECK(gv == doctest::Approx(rv));
    }
  }
  CHECK(bad_exact == 0);
  CHECK(bad_tol == 0);
}

}  // namespace simplecpp::testing
