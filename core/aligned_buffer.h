// Aligned heap blocks for tensors, the session's buffer pool and kernel scratch.
#pragma once

#include <cstddef>

namespace simplecpp::core {

// At least 64-byte aligned, never nullptr for bytes > 0 unless out of memory (then nullptr);
// free with FreeBuffer. Blocks of kHugePageBytes or more are aligned to it and their whole huge
// pages are offered to the kernel's transparent huge pages (Linux madvise; nothing elsewhere):
// the first touch of such a block then faults once per 2 MiB instead of once per 4 KiB, and a
// fault is dear on a virtual machine (bench/README.md: a model's first run). The block's tail
// past its last whole huge page keeps small pages, so resident memory does not grow.
void* AllocateBuffer(size_t bytes);
void FreeBuffer(void* p);

constexpr size_t kHugePageBytes = size_t{2} << 20;

}  // namespace simplecpp::core
