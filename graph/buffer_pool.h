// A session's memory pool. Tensors allocated from it give their buffer back when the last
// reference dies (the executor drops its reference right after a value's last consumer), so
// buffers are reused by lifetime and a steady-state run allocates no new tensor memory.
// Buffers are not zero-filled: ops write every output element.
// A free buffer that stays unused for a whole run (EndRun to EndRun) goes back to the system:
// shapes that change from run to run (a KV cache growing by a token per run) would otherwise
// keep a buffer of every size they ever had, while runs that repeat their shapes reuse every
// buffer they freed and never lose one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "graph/op.h"

namespace simplecpp::graph {

class BufferPool final : public TensorAllocator,
                         public std::enable_shared_from_this<BufferPool> {
 public:
  BufferPool() = default;
  // `limits` bounds each tensor; `max_total_bytes` bounds the bytes in use at once (size classes,
  // so slightly more than the tensors' exact sizes). Both throw Error(kLimitExceeded).
  BufferPool(const TensorLimits& limits, int64_t max_total_bytes)
      : limits_(limits), max_total_bytes_(max_total_bytes) {}
  ~BufferPool() override;
  Tensor Allocate(DType dtype, const Dims& dims) override;
  // Called by the executor after each run: frees the buffers that were already free when the
  // previous run ended and were not taken since.
  void EndRun();
  // Bytes currently held by the pool (free + in use) and the high-water mark.
  size_t bytes_reserved() const;
  size_t peak_bytes_in_use() const;
  size_t allocations() const;  // buffers obtained from the system so far

 private:
  void Release(void* p, size_t size_class);
  static size_t SizeClass(size_t bytes);

  TensorLimits limits_;
  int64_t max_total_bytes_ = std::numeric_limits<int64_t>::max();
  mutable std::mutex mu_;
  struct FreeBuffer {
    void* p;
    uint64_t released_in_run;  // run_ when it was released
  };
  // Size class -> its free buffers, the last released last (taken first: the most recently
  // touched memory). The vectors keep their capacity, so a steady-state run allocates no node
  // here.
  std::map<size_t, std::vector<FreeBuffer>> free_;
  uint64_t run_ = 0;                        // EndRun calls so far
  size_t reserved_ = 0;
  size_t in_use_ = 0;
  size_t peak_in_use_ = 0;
  size_t allocations_ = 0;
};

}  // namespace simplecpp::graph
