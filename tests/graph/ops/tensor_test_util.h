// Helpers for the shape / data movement op tests (tests/graph/ops/tensor_*_test.cc): tensors of
// any dtype filled with distinct element patterns, and a scalar reference that builds an expected
// output from "which input element does output index i come from".
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/tensor.h"

namespace simplecpp::tensor_test {

// One dtype per element size, plus strings.
inline const std::vector<DType>& MovableDTypes() {
  static const std::vector<DType> kTypes = {DType::kInt8,  DType::kFloat16, DType::kFloat32,
                                            DType::kInt64, DType::kBool,    DType::kString};
  return kTypes;
}

// Element i gets distinct bytes (strings: "s<i>"). Bool gets i % 2.
inline Tensor Pattern(DType dtype, Dims dims, uint32_t seed = 1) {
  Tensor t(dtype, std::move(dims));
  const int64_t n = t.num_elements();
  if (dtype == DType::kString) {
    for (int64_t i = 0; i < n; ++i) t.strings()[i] = "s" + std::to_string(i * 7 + seed);
    return t;
  }
  const size_t es = DTypeSize(dtype);
  auto* p = static_cast<unsigned char*>(t.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < es; ++b) {
      p[i * es + b] = dtype == DType::kBool ? (b == 0 ? static_cast<unsigned char>((i + seed) % 2) : 0)
                                            : static_cast<unsigned char>((i * 37 + b * 11 + seed) & 0x7F);
    }
  }
  return t;
}

inline std::vector<int64_t> Unravel(int64_t i, const Dims& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    idx[k] = dims[k] == 0 ? 0 : i % dims[k];
    if (dims[k]) i /= dims[k];
  }
  return idx;
}

inline int64_t Ravel(const std::vector<int64_t>& idx, const Dims& dims) {
  int64_t o = 0;
  for (size_t k = 0; k < dims.size(); ++k) o = o * dims[k] + idx[k];
  return o;
}

// expected[o] = in[src(o's index)], or `fill` (bytes of one element / string) when src < 0.
inline Tensor MapRef(const Tensor& in, const Dims& out_dims,
                     const std::function<int64_t(const std::vector<int64_t>&)>& src,
                     const void* fill = nullptr, const std::string& fill_str = "") {
  Tensor out(in.dtype(), out_dims);
  const int64_t n = out.num_elements();
  const size_t es = DTypeSize(in.dtype());
  for (int64_t o = 0; o < n; ++o) {
    const int64_t s = src(Unravel(o, out_dims));
    if (in.dtype() == DType::kString) {
      out.strings()[o] = s < 0 ? fill_str : in.strings()[s];
    } else if (s < 0) {
      if (fill) std::memcpy(static_cast<unsigned char*>(out.raw_data()) + o * es, fill, es);
    } else {
      std::memcpy(static_cast<unsigned char*>(out.raw_data()) + o * es,
                  static_cast<const unsigned char*>(in.raw_data()) + s * es, es);
    }
  }
  return out;
}

inline void CheckSame(const Tensor& got, const Tensor& want) {
  CAPTURE(DTypeName(want.dtype()));
  CAPTURE(DimsToString(got.dims()));
  CAPTURE(DimsToString(want.dims()));
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.dims() == want.dims());
  CHECK(got.BitwiseEquals(want));
}

// The error code thrown by fn, or 0 when it does not throw.
inline int ErrorCodeOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return static_cast<int>(e.code());
  }
  return 0;
}

inline std::string ErrorMessageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace simplecpp::tensor_test
