// Shared pieces of the libFuzzer targets (tests/fuzz): the small resource limits every target
// loads with, a byte stream that hands out fuzzer bytes (zeros once exhausted), and tensors filled
// from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "simplecpp/simplecpp.h"

namespace simplecpp::fuzz {

// Small limits: the fuzzer must hit "over the limit" errors, never the machine's memory.
Limits SmallLimits();
LoadOptions SmallLoadOptions();

// What `simplecpp info` prints about a loaded model (descriptions, opsets), computed and dropped.
void DescribeLoadedModel(const Model& model);

class ByteStream {
 public:
  ByteStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Copies up to n bytes to out; zero-fills what the stream does not have.
  void Fill(void* out, size_t n) {
    const size_t take = pos_ < size_ ? (size_ - pos_ < n ? size_ - pos_ : n) : 0;
    if (take) std::memcpy(out, data_ + pos_, take);
    if (n > take) std::memset(static_cast<uint8_t*>(out) + take, 0, n - take);
    pos_ += take;
  }
  size_t remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A tensor of `dims` whose bytes come from the stream; bool elements are masked to 0/1 (other
// byte values are not valid bools: reading one as bool is undefined behaviour).
Tensor TensorFromStream(ByteStream& stream, DType dtype, const Dims& dims);

}  // namespace simplecpp::fuzz
