// simplecpp::Tensor (declared in simplecpp/tensor.h): checked sizes and aligned buffers.
#include "simplecpp/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/aligned_buffer.h"
#include "simplecpp/error.h"

namespace simplecpp {
namespace {

constexpr size_t kAlignment = 64;

std::shared_ptr<void> AllocateAligned(size_t bytes) {
  // Round up to whole alignment units; never request 0 bytes.
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = core::AllocateBuffer(rounded == 0 ? kAlignment : rounded);
  if (p == nullptr) {
    throw Error(ErrorCode::kLimitExceeded,
                "out of memory allocating a tensor of " + std::to_string(bytes) + " bytes");
  }
  std::memset(p, 0, rounded == 0 ? kAlignment : rounded);
  return std::shared_ptr<void>(p, [](void* q) { core::FreeBuffer(q); });
}

}  // namespace

int64_t CheckedNumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      throw Error(ErrorCode::kInvalidArgument, "negative dimension in shape " + DimsToString(dims));
    }
    // Both below 2^31: the product fits, no division needed (the common case, checked per
    // tensor a run allocates).
    if (((n | d) >> 31) == 0) {
      n *= d;
      continue;
    }
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      throw Error(ErrorCode::kLimitExceeded,
                  "element count of shape " + DimsToString(dims) + " overflows int64");
    }
    n *= d;
  }
  return n;
}

size_t CheckedByteSize(DType t, int64_t num_elements) {
  if (num_elements < 0) throw Error(ErrorCode::kInvalidArgument, "negative element count");
  const int bits = DTypeBits(t);
  if (t == DType::kString) return 0;
  if (bits == 0) throw Error(ErrorCode::kUnsupported, "tensor of dtype " + DTypeName(t));
  const uint64_t n = static_cast<uint64_t>(num_elements);
  const uint64_t max_bytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 16;
  if (n > max_bytes) {
    throw Error(ErrorCode::kLimitExceeded, "byte size of " + std::to_string(num_elements) +
                                               " elements of " + DTypeName(t) + " overflows");
  }
  const uint64_t bytes = (n * static_cast<uint64_t>(bits) + 7) / 8;
  // 32-bit size_t (wasm32): a byte size that fits int64 may still not fit; never truncate it.
  if (bytes > static_cast<uint64_t>(std::numeric_limits<size_t>::max())) {
    throw Error(ErrorCode::kLimitExceeded, "byte size of " + std::to_string(num_elements) +
                                               " elements of " + DTypeName(t) +
                                               " does not fit in size_t");
  }
  return static_cast<size_t>(bytes);
}

std::string DimsToString(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Tensor::Tensor(DType dtype, Dims dims) : dtype_(dtype), dims_(std::move(dims)) {
  num_elements_ = CheckedNumElements(dims_);
  if (dtype_ == DType::kString) {
    strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(num_elements_));
    return;
  }
  byte_size_ = CheckedByteSize(dtype_, num_elements_);
  std::shared_ptr<void> buffer = AllocateAligned(byte_size_);
  data_ = buffer.get();
  owner_ = std::move(buffer);
}

Tensor Tensor::Borrow(DType dtype, Dims dims, std::shared_ptr<const void> owner, const void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.num_elements_ = CheckedNumElements(t.dims_);
  t.byte_size_ = CheckedByteSize(dtype, t.num_elements_);
  t.owner_ = std::move(owner);
  // Borrowed data is read-only by contract; ops never write to their inputs.
  t.data_ = const_cast<void*>(data);
  return t;
}

Tensor Tensor::FromBuffer(DType dtype, Dims dims, std::shared_ptr<void> buffer) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.num_elements_ = CheckedNumElements(t.dims_);
  t.byte_size_ = CheckedByteSize(dtype, t.num_elements_);
  t.data_ = buffer.get();
  t.owner_ = std::move(buffer);
  return t;
}

std::vector<std::string>& Tensor::strings() {
  if (!strings_) strings_ = std::make_shared<std::vector<std::string>>();
  return *strings_;
}

const std::vector<std::string>& Tensor::strings() const {
  static const std::vector<std::string> kEmpty;
  return strings_ ? *strings_ : kEmpty;
}

Tensor Tensor::Reshaped(Dims dims) const {
  const int64_t n = CheckedNumElements(dims);
  if (n != num_elements_) {
    throw Error(ErrorCode::kInvalidArgument, "cannot reshape " + DimsToString(dims_) + " to " +
                                                 DimsToString(dims));
  }
  Tensor t = *this;
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t(dtype_, dims_);
  if (dtype_ == DType::kString) {
    t.strings() = strings();
  } else if (byte_size_ > 0) {
    std::memcpy(t.data_, data_, byte_size_);
  }
  return t;
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || dims_ != other.dims_) return false;
  if (dtype_ == DType::kString) return strings() == other.strings();
  return byte_size_ == other.byte_size_ &&
         (byte_size_ == 0 || std::memcmp(data_, other.data_, byte_size_) == 0);
}

}  // namespace simplecpp
