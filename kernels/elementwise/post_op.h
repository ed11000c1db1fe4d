// An elementwise transform a kernel applies in place to finished runs of its float32 output while
// they are still in cache: a graph-level activation chain fused into a convolution or GEMM
// (graph/passes/conv_post_fusion.h), instead of one more pass over memory per op.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/float16/float16.h"

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
// from_f32, when set, is Narrow16 of a float32 run into out and then fn on it, in one pass.
struct PostOp16 {
  void (*fn)(const void* ctx, uint16_t* data, int64_t n) = nullptr;
  const void* ctx = nullptr;
  void (*from_f32)(const void* ctx, const float* in, uint16_t* out, int64_t n) = nullptr;

  explicit operator bool() const { return fn != nullptr; }
  void operator()(uint16_t* data, int64_t n) const {
    if (n > 0) fn(ctx, data, n);
  }
};

// out[0..n) = in rounded to `kind` (Narrow16), then `post` applied to it (if set): one pass
// where the post-op does both.
inline void NarrowThenPost16(Float16Kind kind, const float* in, uint16_t* out, int64_t n,
                             const PostOp16& post) {
  if (n <= 0) return;
  if (post.from_f32 != nullptr) {
    post.from_f32(post.ctx, in, out, n);
    return;
  }
  Narrow16(kind, in, out, static_cast<size_t>(n));
  if (post) post(out, n);
}

}  // namespace simplecpp::kernels
