// Test helper for float16 / bfloat16 op support: runs a node on 16-bit inputs and on the same
// values widened to float32, and checks that the 16-bit output is the float32 output rounded to
// 16 bits (the ops compute in float32 and round once per output element).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"

namespace simplecpp::testing::f16 {

inline kernels::Float16Kind KindOf(DType dt) {
  return dt == DType::kBFloat16 ? kernels::Float16Kind::kBFloat16 : kernels::Float16Kind::kHalf;
}

// float32 -> 16-bit (round to nearest even); other dtypes are returned unchanged.
inline Tensor To16(const Tensor& f, DType dt) {
  if (f.dtype() != DType::kFloat32) return f;
  Tensor t(dt, f.dims());
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<uint16_t>()[i] = kernels::Narrow16One(KindOf(dt), f.data<float>()[i]);
  }
  return t;
}

// 16-bit -> float32 (exact); other dtypes are returned unchanged.
inline Tensor To32(const Tensor& h) {
  if (h.dtype() != DType::kFloat16 && h.dtype() != DType::kBFloat16) return h;
  Tensor t(DType::kFloat32, h.dims());
  for (int64_t i = 0; i < h.num_elements(); ++i) {
    t.data<float>()[i] = kernels::Widen16One(KindOf(h.dtype()), h.data<uint16_t>()[i]);
  }
  return t;
}

inline RunNodeOptions Opts(int64_t opset, std::vector<int> constant_inputs = {}) {
  RunNodeOptions o;
  o.opset = opset;
  o.constant_inputs = std::move(constant_inputs);
  return o;
}

// Runs `op` with the float32 inputs of `f32_inputs` rounded to dt, and with those rounded values
// widened back to float32; compares the 16-bit output y16 with ref = round16(float32 output):
//   |y16 - ref| <= eps16 * max(|ref|, min_normal16)
// with eps16 = 2^-10 (float16) or 2^-7 (bfloat16), the format's machine epsilon, and
// min_normal16 = 2^-14 (float16) or 2^-126 (bfloat16): at most one 16-bit ulp apart (a second
// rounding, e.g. double -> float32 -> 16 bits in the reference, can move a tie by one ulp).
// Equal infinities and NaN against NaN match.
inline void Check16(DType dt, const std::string& op, const std::vector<Tensor>& f32_inputs,
                    const std::vector<graph::Attribute>& attrs, const RunNodeOptions& options) {
  CAPTURE(op);
  CAPTURE(DTypeName(dt));
  std::vector<Tensor> in16, in32;
  for (const Tensor& t : f32_inputs) {
    in16.push_back(To16(t, dt));
    in32.push_back(To32(in16.back()));
  }
  const auto out16 = RunNode(op, in16, attrs, options);
  const auto out32 = RunNode(op, in32, attrs, options);
  REQUIRE(out16[0].dtype() == dt);
  REQUIRE(out32[0].dtype() == DType::kFloat32);
  REQUIRE(out16[0].dims() == out32[0].dims());
  const bool bf = dt == DType::kBFloat16;
  const double eps16 = bf ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
  const double min_normal16 = bf ? std::ldexp(1.0, -126) : std::ldexp(1.0, -14);
  const Tensor ref16 = To16(out32[0], dt);
  const Tensor got = To32(out16[0]);
  const Tensor ref = To32(ref16);
  REQUIRE(got.num_elements() > 0);
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double g = got.data<float>()[i], r = ref.data<float>()[i];
    if (std::isnan(r) || std::isnan(g)) {
      CHECK(std::isnan(r) == std::isnan(g));
      continue;
    }
    if (g == r) continue;
    CAPTURE(i);
    CAPTURE(g);
    CAPTURE(r);
    CHECK(std::fabs(g - r) <= eps16 * std::max(std::fabs(r), min_normal16));
  }
}

// Both 16-bit dtypes at one opset.
inline void Check16Both(const std::string& op, const std::vector<Tensor>& f32_inputs,
                        const std::vector<graph::Attribute>& attrs, const RunNodeOptions& options) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) Check16(dt, op, f32_inputs, attrs, options);
}

}  // namespace simplecpp::testing::f16
