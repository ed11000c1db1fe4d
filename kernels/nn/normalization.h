// Normalization kernels: row mean/variance normalization (LayerNorm, InstanceNorm, GroupNorm),
// per-channel affine (BatchNorm inference), per-channel statistics (BatchNorm training),
// MeanVarianceNormalization, LpNormalization and LRN.
//
// Statistics are accumulated in double over two passes (mean, then the mean of squared
// deviations), so a LayerNorm over rows of 768 matches a double reference to ~1e-6.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/parallel.h"

namespace simplecpp::kernels {

// x and y are [rows, channels, spatial] row-major; each row is normalized over its
// channels*spatial elements:
//   y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c],
//   c = (row % period) * channels + channel_in_row.
// So LayerNorm is (rows, n, 1, period 1) with per-element scale; InstanceNorm is (N*C, 1, S,
// period C); GroupNorm is (N*G, C/G, S, period G). scale / bias may be null (1 / 0).
// mean_out and inv_std_out (nullable) receive per-row mean and 1/sqrt(var + epsilon).
void NormalizeRowsF32(const float* x, float* y, int64_t rows, int64_t channels, int64_t spatial,
                      int64_t period, const float* scale, const float* bias, float epsilon,
                      float* mean_out, float* inv_std_out, const Parallel& parallel);
void NormalizeRowsF64(const double* x, double* y, int64_t rows, int64_t channels,
                      int64_t spatial, int64_t period, const double* scale, const double* bias,
                      float epsilon, double* mean_out, double* inv_std_out,
                      const Parallel& parallel);

// x and y are [outer, channels, inner]: y = (x - center[c]) * mul[c] + add[c].
void ChannelAffineF32(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner,
                      const float* center, const float* mul, const float* add,
                      const Parallel& parallel);
void ChannelAffineF64(const double* x, double* y, int64_t outer, int64_t channels,
                      int64_t inner, const double* center, const double* mul, const double* add,
                      const Parallel& parallel);

// Population mean and variance of every channel of x [outer, channels, inner] (in double).
void ChannelMeanVarF32(const float* x, int64_t outer, int64_t channels, int64_t inner,
                       double* mean, double* var, const Parallel& parallel);
void ChannelMeanVarF64(const double* x, int64_t outer, int64_t channels, int64_t inner,
                       double* mean, double* var, const Parallel& parallel);

// MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + epsilon), statistics over the dims
// whose reduce[i] is true (x has shape `dims`, row-major).
void MeanVarianceNormalizeF32(const float* x, float* y, const std::vector<int64_t>& dims,
                              const std::vector<bool>& reduce, double epsilon,
                              const Parallel& parallel);
void MeanVarianceNormalizeF64(const double* x, double* y, const std::vector<int64_t>& dims,
                              const std::vector<bool>& reduce, double epsilon,
                              const Parallel& parallel);

// LpNormalization over n of x [outer, n, inner]: y = x / ||x||_p, p in {1, 2} (0 norm -> 0).
void LpNormalizeF32(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, int p,
                    const Parallel& parallel);
void LpNormalizeF64(const double* x, double* y, int64_t outer, int64_t n, int64_t inner, int p,
                    const Parallel& parallel);

// LRN across channels of x [N, C, spatial]:
//   y = x / (bias + alpha / size * sum_{c' in window(c)} x[c']^2) ^ beta,
//   window(c) = [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
void LrnF32(const float* x, float* y, int64_t batch, int64_t channels, int64_t spatial,
            int64_t size, float alpha, float beta, float bias, const Parallel& parallel);
void LrnF64(const double* x, double* y, int64_t batch, int64_t channels, int64_t spatial,
            int64_t size, float alpha, float beta, float bias, const Parallel& parallel);

// 16-bit float storage (float16 / bfloat16 bits, kernels/nn/normalization_f16.cc): the float32
// kernels above on one widened row / block at a time, one rounding per output element. The
// parameters (scale, bias, center, mul, add) and the statistics outputs are float32.
void NormalizeRows16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t rows,
                     int64_t channels, int64_t spatial, int64_t period, const float* scale,
                     const float* bias, float epsilon, float* mean_out, float* inv_std_out,
                     const Parallel& parallel);
void ChannelAffine16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t outer,
                     int64_t channels, int64_t inner, const float* center, const float* mul,
                     const float* add, const Parallel& parallel);
void LpNormalize16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t outer, int64_t n,
                   int64_t inner, int p, const Parallel& parallel);
void Lrn16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t batch, int64_t channels,
           int64_t spatial, int64_t size, float alpha, float beta, float bias,
           const Parallel& parallel);

}  // namespace simplecpp::kernels
