// An elementwise transform a kernel applies in place to finished runs of its float32 output while
// they are still in cache: a graph-level activation chain fused into a convolution or GEMM
// (graph/passes/conv_post_fusion.h), instead of one more pass over memory per op.
#pragma once

#include <cstdint>

namespace simplecpp::kernels {

// fn(ctx, data, n) transforms data[0..n) in place. It must be elementwise (the result of an
// element depends only on that element), so that any split of the output into runs gives the
// same bits, and safe to call from several threads at once.
struct PostOpF32 {
  void (*fn)(const void* ctx, float* data, int64_t n) = nullptr;
  const void* ctx = nullptr;

  explicit operator bool() const { return fn != nullptr; }
  void operator()(float* data, int64_t n) const {
    if (n > 0) fn(ctx, data, n);
  }
};

// The same on 16-bit float storage (float16 / bfloat16 bits), for kernels with a 16-bit output.
struct PostOp16 {
  void (*fn)(const void* ctx, uint16_t* data, int64_t n) = nullptr;
  const void* ctx = nullptr;

  explicit operator bool() const { return fn != nullptr; }
  void operator()(uint16_t* data, int64_t n) const {
    if (n > 0) fn(ctx, data, n);
  }
};

}  // namespace simplecpp::kernels
