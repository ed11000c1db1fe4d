// core::AllocateBuffer: alignment (64 bytes, 2 MiB for large blocks), every byte usable, sizes
// around the huge-page boundary and zero.
#include "core/aligned_buffer.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace simplecpp::core {
namespace {

TEST_CASE("AllocateBuffer aligns and hands out usable blocks of every size") {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{4097},
                       kHugePageBytes - 1, kHugePageBytes, kHugePageBytes + 1,
                       3 * kHugePageBytes + 12345}) {
    CAPTURE(bytes);
    void* p = AllocateBuffer(bytes);
    REQUIRE(p != nullptr);
    const auto address = reinterpret_cast<uintptr_t>(p);
    CHECK(address % 64 == 0);
    if (bytes >= kHugePageBytes) CHECK(address % kHugePageBytes == 0);
    if (bytes > 0) {
      std::memset(p, 0x5A, bytes);
      CHECK(static_cast<unsigned char*>(p)[bytes - 1] == 0x5A);
    }
    FreeBuffer(p);
  }
  FreeBuffer(nullptr);
}

}  // namespace
}  // namespace simplecpp::core
