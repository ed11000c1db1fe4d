// core/aligned_buffer.h
#include "core/aligned_buffer.h"

#include <cstdlib>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace simplecpp::core {

void* AllocateBuffer(size_t bytes) {
  constexpr size_t kAlign = 64;
  // Whole alignment units (aligned_alloc wants a multiple of the alignment), never 0 bytes.
  const size_t rounded = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded < kHugePageBytes) return std::aligned_alloc(kAlign, rounded);
  // posix_memalign: aligned_alloc would want the size to be a multiple of 2 MiB as well.
  void* p = nullptr;
  if (::posix_memalign(&p, kHugePageBytes, rounded) != 0) p = nullptr;
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  // Advice only: where transparent huge pages are off, this fails and nothing changes.
  if (p != nullptr) (void)::madvise(p, rounded / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeBuffer(void* p) { std::free(p); }

}  // namespace simplecpp::core
