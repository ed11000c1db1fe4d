// Winograd F(4x4, 3x3) convolution for 2-D float32 3x3 layers with stride 1
// (kernels/conv/winograd_conv.cc). A dilated layer is dilation^2 undilated ones, one per phase:
// the outputs congruent to (py, px) modulo the dilation read the input positions of one phase,
// through the dense 3x3 kernel. Each 4x4 block of output positions ("tile") of an output
// channel is A^T [sum over input channels of (G w G^T) .* (B^T d B)] A, with d the 6x6 input
// patch under the tile. The elementwise products over input channels are 36 matrix products
// (one per position of the 6x6 transformed tile), 36 multiply-adds per tile where the direct
// convolution spends 144: about four times less arithmetic, plus the two transforms.
//
// Results are not the direct convolution's bits (another algorithm, other roundings): the error
// against a double-precision reference stays within tens of float32 ulps of the sum of |w * x|
// over the taps (tests/kernels/conv/conv_winograd_test.cc states the bound), where the direct
// sum's is a few. They are the same for any
// thread count, and the same on every SIMD target with FMA (each output is the same sequence of
// operations per lane).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/conv/conv.h"
#include "kernels/elementwise/post_op.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// The transformed weights U = G w G^T of a [Cout, C, 3, 3] float32 W, in the layout of the
// current SIMD target's tiles (36 positions x strips of mr output channels x C x mr).
class WinogradWeightsF32 {
 public:
  static std::shared_ptr<const WinogradWeightsF32> Transform(int64_t cout, int64_t channels,
                                                             const float* w);
  int64_t cout() const { return cout_; }
  int64_t channels() const { return channels_; }
  int64_t mr() const { return mr_; }
  const float* data() const { return data_.get(); }

  WinogradWeightsF32(int64_t cout, int64_t channels, int64_t mr);  // zero-filled; use Transform
 private:
  int64_t cout_, channels_, mr_;
  std::unique_ptr<float[]> data_;
};

// Whether the Winograd form applies to g with `channels` input and `cout` output channels, and
// pays off: 2-D, 3x3, stride 1, dilation up to 16, enough channels each way that the transforms
// cost less than the multiply-adds they save, and output rows of at least one tile per phase.
bool ConvWinogradApplies(const ConvGeometry& g, int64_t channels, int64_t cout);

// y [cout, out_h * out_w] = conv(x [channels, in_h, in_w], W) + bias (bias [cout] or nullptr),
// then `post` on each finished run of an output row (dilated: on each output channel once y is
// complete). Returns false, doing nothing, where
// ConvWinogradApplies is false or u was transformed for another SIMD target's tiles.
bool ConvWinogradF32(const ConvGeometry& g, const float* x, int64_t channels,
                     const WinogradWeightsF32& u, const float* bias, float* y,
                     const Parallel& parallel, const PostOpF32& post = {});

}  // namespace simplecpp::kernels
