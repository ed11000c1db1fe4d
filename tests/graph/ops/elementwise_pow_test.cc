// Pow (graph/ops/elementwise.cc) with every base dtype and every exponent dtype (opset 15 mixed
// types): the op widens most exponent types before the kernel runs (to double, or int64 for an
// integer base), which must not change a single result. Each case is checked element by element
// against a scalar reference that works on the exponent's own type: integer powers wrap, a
// negative integer exponent gives 1 / base^|e| truncated, a float result for an integer base
// saturates (NaN -> 0), float ^ float is powf and every other float case pow() on doubles.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"
#include "simplecpp/dtype.h"
#include "simplecpp/tensor.h"

namespace simplecpp {
namespace {

using testing::RunNode;
using testing::RunNodeOptions;

// Integer base ^ integer exponent, wrapping in the base's width.
template <typename T, typename E>
T RefIntPow(T base, E e) {
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (base == 1) return T(1);
      if (std::is_signed_v<T> && base == T(-1)) return (e % 2 == 0) ? T(1) : T(-1);
      return T(0);
    }
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  uint64_t u = static_cast<uint64_t>(e);
  while (u != 0) {
    if (u & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    u >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T, typename E>
T RefPow(T x, E e) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) return std::pow(x, e);
    return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
  } else if constexpr (std::is_integral_v<E>) {
    return RefIntPow(x, e);
  } else {
    const double v = std::pow(static_cast<double>(x), static_cast<double>(e));
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Exponents of type E (8 values), including negatives, zero and, for 64-bit types, huge ones.
template <typename E>
std::vector<E> Exponents() {
  if constexpr (std::is_floating_point_v<E>) {
    return {E(-1.5), E(-1), E(0), E(0.5), E(1), E(2), E(3.25), E(7)};
  } else if constexpr (std::is_same_v<E, uint64_t>) {
    return {0, 1, 2, 3, 7, 13, (uint64_t{1} << 63) + 1, std::numeric_limits<uint64_t>::max()};
  } else if constexpr (std::is_same_v<E, int64_t>) {
    return {-3, -1, 0, 1, 2, 7, (int64_t{1} << 62) + 1, std::numeric_limits<int64_t>::min()};
  } else if constexpr (std::is_signed_v<E>) {
    return {E(-3), E(-1), E(0), E(1), E(2), E(3), E(5), E(7)};
  } else {
    return {E(0), E(1), E(2), E(3), E(5), E(7), E(10), E(13)};
  }
}

template <typename T>
std::vector<T> Bases() {
  if constexpr (std::is_floating_point_v<T>) {
    return {T(0.5), T(2), T(-2), T(1.5), T(3), T(0), T(-1), T(10)};
  } else {
    return {T(0), T(1), T(-1), T(2), T(-3), T(7), T(100), T(-2)};
  }
}

template <typename F>
void ForEachExponentType(F&& f) {
  f(DType::kFloat32, float{});
  f(DType::kFloat64, double{});
  f(DType::kInt8, int8_t{});
  f(DType::kUInt8, uint8_t{});
  f(DType::kInt16, int16_t{});
  f(DType::kUInt16, uint16_t{});
  f(DType::kInt32, int32_t{});
  f(DType::kUInt32, uint32_t{});
  f(DType::kInt64, int64_t{});
  f(DType::kUInt64, uint64_t{});
}

RunNodeOptions Opset15() {
  RunNodeOptions o;
  o.opset = 15;
  return o;
}

// base [2, 8] (the 8 bases, then their negations) ^ exponent [8] (broadcast), and ^ a scalar.
template <typename T>
void CheckBase(DType base_dtype) {
  std::vector<T> bases = Bases<T>();
  for (T b : Bases<T>()) bases.push_back(static_cast<T>(T(0) - b));
  const Tensor base = Tensor::FromVector<T>(base_dtype, {2, 8}, bases);
  ForEachExponentType([&](DType exp_dtype, auto exp_tag) {
    using E = decltype(exp_tag);
    const std::vector<E> exps = Exponents<E>();
    CAPTURE(DTypeName(base_dtype));
    CAPTURE(DTypeName(exp_dtype));
    const Tensor exponent = Tensor::FromVector<E>(exp_dtype, {8}, exps);
    std::vector<Tensor> out = RunNode("Pow", {base, exponent}, {}, Opset15());
    REQUIRE(out[0].dtype() == base_dtype);
    REQUIRE(out[0].num_elements() == 16);
    for (int i = 0; i < 16; ++i) {
      const T expected = RefPow<T, E>(bases[i], exps[i % 8]);
      const T got = out[0].data<T>()[i];
      CAPTURE(i);
      CHECK(std::memcmp(&expected, &got, sizeof(T)) == 0);  // bitwise (NaN payloads too)
    }
    const Tensor scalar = Tensor::FromVector<E>(exp_dtype, {}, {exps[5]});
    out = RunNode("Pow", {base, scalar}, {}, Opset15());
    for (int i = 0; i < 16; ++i) {
      const T expected = RefPow<T, E>(bases[i], exps[5]);
      const T got = out[0].data<T>()[i];
      CAPTURE(i);
      CHECK(std::memcmp(&expected, &got, sizeof(T)) == 0);
    }
  });
}

TEST_CASE("Pow: every base dtype with every exponent dtype matches the scalar reference") {
  CheckBase<float>(DType::kFloat32);
  CheckBase<double>(DType::kFloat64);
  CheckBase<int32_t>(DType::kInt32);
  CheckBase<int64_t>(DType::kInt64);
}

TEST_CASE("Pow: float16 / bfloat16 base with every exponent dtype") {
  for (DType base_dtype : {DType::kFloat16, DType::kBFloat16}) {
    const kernels::Float16Kind kind = base_dtype == DType::kBFloat16
                                          ? kernels::Float16Kind::kBFloat16
                                          : kernels::Float16Kind::kHalf;
    std::vector<uint16_t> bits;
    for (float b : Bases<float>()) bits.push_back(kernels::Narrow16One(kind, b));
    const Tensor base = Tensor::FromVector<uint16_t>(base_dtype, {8}, bits);
    ForEachExponentType([&](DType exp_dtype, auto exp_tag) {
      using E = decltype(exp_tag);
      const std::vector<E> exps = Exponents<E>();
      CAPTURE(DTypeName(base_dtype));
      CAPTURE(DTypeName(exp_dtype));
      const Tensor exponent = Tensor::FromVector<E>(exp_dtype, {8}, exps);
      const std::vector<Tensor> out = RunNode("Pow", {base, exponent}, {}, Opset15());
      REQUIRE(out[0].dtype() == base_dtype);
      for (int i = 0; i < 8; ++i) {
        const uint16_t expected =
            kernels::Narrow16One(kind, RefPow<float, E>(kernels::Widen16One(kind, bits[i]), exps[i]));
        CAPTURE(i);
        CHECK(out[0].data<uint16_t>()[i] == expected);
      }
    });
  }
}

}  // namespace
}  // namespace simplecpp
