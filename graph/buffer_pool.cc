// BufferPool (graph/buffer_pool.h).
#include "graph/buffer_pool.h"

#include <cstdlib>
#include <iterator>

#include "core/aligned_buffer.h"

namespace simplecpp::graph {

BufferPool::~BufferPool() {
  for (auto& [size, buffers] : free_) {
    for (const FreeBuffer& b : buffers) core::FreeBuffer(b.p);
  }
}

size_t BufferPool::SizeClass(size_t bytes) {
  // 64-byte granularity up to 4 KiB, then steps of 1/8 of the power of two: bounded waste
  // (< 12.5%) while similar shapes share buffers.
  if (bytes <= 4096) return (bytes + 63) / 64 * 64 + (bytes == 0 ? 64 : 0);
  // Past half of size_t's range the power-of-two steps would overflow: no size class there
  // (such a size could never be allocated anyway).
  if (bytes > std::numeric_limits<size_t>::max() / 4) {
    throw Error(ErrorCode::kLimitExceeded, "cannot allocate " + std::to_string(bytes) + " bytes");
  }
  size_t pow2 = 4096;
  while (pow2 * 2 < bytes) pow2 *= 2;
  const size_t step = pow2 / 8;
  return (bytes + step - 1) / step * step;
}

Tensor BufferPool::Allocate(DType dtype, const Dims& dims) {
  CheckTensorLimits(limits_, dtype, dims, "a tensor");
  if (dtype == DType::kString) return Tensor(dtype, dims);
  const size_t bytes = CheckedByteSize(dtype, CheckedNumElements(dims));
  const size_t size_class = SizeClass(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (size_class > static_cast<uint64_t>(max_total_bytes_) ||
        in_use_ > static_cast<uint64_t>(max_total_bytes_) - size_class) {
      throw Error(ErrorCode::kLimitExceeded,
                  "working memory would reach " + std::to_string(in_use_) + " + " +
                      std::to_string(size_class) + " bytes (allocating " + DTypeName(dtype) +
                      DimsToString(dims) + "), over the limit max_total_bytes=" +
                      std::to_string(max_total_bytes_));
    }
    auto it = free_.find(size_class);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back().p;
      it->second.pop_back();
    }
    in_use_ += size_class;
    if (in_use_ > peak_in_use_) peak_in_use_ = in_use_;
  }
  if (p == nullptr) {
    p = core::AllocateBuffer(size_class);
    if (p == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      in_use_ -= size_class;
      throw Error(ErrorCode::kLimitExceeded,
                  "out of memory allocating " + std::to_string(bytes) + " bytes");
    }
    std::lock_guard<std::mutex> lock(mu_);
    reserved_ += size_class;
    ++allocations_;
  }
  std::weak_ptr<BufferPool> weak = weak_from_this();
  std::shared_ptr<void> buffer(p, [weak, size_class](void* q) {
    if (auto pool = weak.lock()) {
      pool->Release(q, size_class);
    } else {
      core::FreeBuffer(q);
    }
  });
  return Tensor::FromBuffer(dtype, dims, std::move(buffer));
}

void BufferPool::Release(void* p, size_t size_class) {
  std::lock_guard<std::mutex> lock(mu_);
  in_use_ -= size_class;
  free_[size_class].push_back(FreeBuffer{p, run_});
}

void BufferPool::EndRun() {
  std::vector<void*> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end();) {
      std::vector<FreeBuffer>& buffers = it->second;
      size_t kept = 0;
      for (const FreeBuffer& b : buffers) {
        if (b.released_in_run < run_) {
          idle.push_back(b.p);
          reserved_ -= it->first;
        } else {
          buffers[kept++] = b;
        }
      }
      buffers.resize(kept);
      // A size class with no free buffer left goes (shapes that change every run would otherwise
      // leave one empty entry per size they ever had).
      it = buffers.empty() ? free_.erase(it) : std::next(it);
    }
    ++run_;
  }
  for (void* p : idle) core::FreeBuffer(p);
}

size_t BufferPool::bytes_reserved() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}
size_t BufferPool::peak_bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_in_use_;
}
size_t BufferPool::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}

}  // namespace simplecpp::graph
