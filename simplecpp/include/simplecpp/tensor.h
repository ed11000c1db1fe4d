// A dense tensor: dtype, int64 dims (row-major) and a shared, 64-byte-aligned buffer.
// Copies are shallow (they share the buffer); Clone() copies the data. The buffer may belong to
// someone else (a memory-mapped model file, a session's memory pool): the owner keeps it alive.
// Sub-byte dtypes (int4, uint4, ...) are stored packed, two elements per byte, low nibble first.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "simplecpp/dtype.h"

namespace simplecpp {

using Dims = std::vector<int64_t>;

// Element count of dims; throws Error(kLimitExceeded/kInvalidArgument) on negative dims or overflow.
int64_t CheckedNumElements(const Dims& dims);
// Bytes needed for n elements of t (packed for sub-byte types); throws on overflow.
size_t CheckedByteSize(DType t, int64_t num_elements);
// "[2,3,4]"
std::string DimsToString(const Dims& dims);

class Tensor {
 public:
  Tensor() = default;
  // Allocates a zero-filled buffer. Throws on bad dims or overflow.
  Tensor(DType dtype, Dims dims);
  // Wraps memory owned by `owner` (no copy). `data` must stay valid while `owner` lives.
  static Tensor Borrow(DType dtype, Dims dims, std::shared_ptr<const void> owner, const void* data);
  // Uses a buffer of at least ByteSize() bytes from an allocator (a session's pool).
  static Tensor FromBuffer(DType dtype, Dims dims, std::shared_ptr<void> buffer);
  // A scalar / 1-D tensor built from values (convenience for tests and constants).
  template <typename T>
  static Tensor FromVector(DType dtype, Dims dims, const std::vector<T>& values);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const { return byte_size_; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() { return static_cast<T*>(data_); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(data_); }

  // String tensors keep std::string elements (data only: no op computes on them yet).
  std::vector<std::string>& strings();
  const std::vector<std::string>& strings() const;

  // Same buffer, new dims with the same element count (Reshape without a copy).
  Tensor Reshaped(Dims dims) const;
  // Deep copy into a fresh buffer.
  Tensor Clone() const;
  // True when both have the same dtype, dims and bytes (NaN payloads compared bitwise).
  bool BitwiseEquals(const Tensor& other) const;

 private:
  DType dtype_ = DType::kUndefined;
  Dims dims_;
  int64_t num_elements_ = 0;
  size_t byte_size_ = 0;
  std::shared_ptr<const void> owner_;  // keeps data_ alive
  void* data_ = nullptr;
  std::shared_ptr<std::vector<std::string>> strings_;
};

template <typename T>
Tensor Tensor::FromVector(DType dtype, Dims dims, const std::vector<T>& values) {
  Tensor t(dtype, std::move(dims));
  if (static_cast<size_t>(t.num_elements()) != values.size() || DTypeSize(dtype) != sizeof(T)) {
    throw std::invalid_argument("Tensor::FromVector: size or element type mismatch");
  }
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

}  // namespace simplecpp
