// Tensor and dtype basics: checked sizes, packed sub-byte types, views and copies.
#include "simplecpp/tensor.h"

#include <doctest/doctest.h>

#include "simplecpp/error.h"

namespace simplecpp {
namespace {

TEST_CASE("Element counts and byte sizes are overflow-checked") {
  CHECK(CheckedNumElements({}) == 1);
  CHECK(CheckedNumElements({2, 0, 5}) == 0);
  CHECK(CheckedNumElements({3, 5, 7}) == 105);
  CHECK_THROWS_AS(CheckedNumElements({-1, 2}), Error);
  CHECK_THROWS_AS(CheckedNumElements({int64_t{1} << 40, int64_t{1} << 40}), Error);
  // Around the fast path's bound (both factors below 2^31) and past it.
  CHECK(CheckedNumElements({(int64_t{1} << 31) - 1, (int64_t{1} << 31) - 1}) ==
        ((int64_t{1} << 31) - 1) * ((int64_t{1} << 31) - 1));
  CHECK(CheckedNumElements({int64_t{1} << 31, int64_t{1} << 31}) == int64_t{1} << 62);
  CHECK_THROWS_AS(CheckedNumElements({int64_t{1} << 31, int64_t{1} << 31, 2}), Error);
  CHECK_THROWS_AS(CheckedNumElements({3, int64_t{1} << 30, int64_t{1} << 30, 4}), Error);
  CHECK(CheckedNumElements({3, int64_t{1} << 30, int64_t{1} << 30, 0}) == 0);
  CHECK(CheckedByteSize(DType::kFloat32, 3) == 12);
  CHECK(CheckedByteSize(DType::kInt4, 3) == 2);
  CHECK(CheckedByteSize(DType::kUInt2, 5) == 2);
  CHECK_THROWS_AS(CheckedByteSize(DType::kFloat64, int64_t{1} << 62), Error);
  CHECK_THROWS_AS(Tensor(DType::kFloat32, {int64_t{1} << 62, 4}), Error);
}

TEST_CASE("DType numbering follows ONNX") {
  CHECK(static_cast<int>(DType::kFloat32) == 1);
  CHECK(static_cast<int>(DType::kBFloat16) == 16);
  CHECK(static_cast<int>(DType::kInt4) == 22);
  CHECK(DTypeName(DType::kFloat16) == "float16");
  CHECK(DTypeSize(DType::kInt64) == 8);
  CHECK(DTypeBits(DType::kUInt4) == 4);
  CHECK(IsFloatDType(DType::kBFloat16));
  CHECK(!IsFloatDType(DType::kInt8));
}

TEST_CASE("Tensors share buffers on copy, Clone copies, Reshaped keeps the data") {
  Tensor a = Tensor::FromVector<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  Tensor b = a;
  b.data<float>()[0] = 9;
  CHECK(a.data<float>()[0] == 9);
  Tensor c = a.Clone();
  c.data<float>()[0] = 1;
  CHECK(a.data<float>()[0] == 9);
  Tensor r = a.Reshaped({4});
  CHECK(r.raw_data() == a.raw_data());
  CHECK_THROWS_AS(a.Reshaped({3}), Error);
  CHECK(reinterpret_cast<uintptr_t>(a.raw_data()) % 64 == 0);
  CHECK(a.BitwiseEquals(b));
  CHECK(!a.BitwiseEquals(c));
  Tensor scalar(DType::kInt64, {});
  CHECK(scalar.num_elements() == 1);
  Tensor empty(DType::kFloat32, {0, 3});
  CHECK(empty.num_elements() == 0);
  CHECK(empty.byte_size() == 0);
}

}  // namespace
}  // namespace simplecpp
