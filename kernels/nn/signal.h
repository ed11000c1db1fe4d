// Signal-processing kernels behind DFT and STFT (graph/ops/signal.cc): a discrete Fourier
// transform of one complex signal in double precision.
//
// Plain C++ (no SIMD): the transform is a direct O(length * bins) sum over a precomputed twiddle
// table, indexed with exact integer arithmetic ((k * n) mod length), so every output is a fixed
// sequential sum and results do not depend on threads or targets. Sizes in ONNX models using DFT
// (spectrograms, small frames) keep this cheap; a fast transform can replace it behind the same
// interface.
#pragma once

#include <cstdint>

namespace simplecpp::kernels {

// twiddle is 2 * length doubles: (cos(2 pi j / length), sin(2 pi j / length)) for j in [0, length).
void DftTwiddles(int64_t length, double* twiddle);

// x holds n_in complex values (re, im interleaved); it is zero-padded (or truncated: n_in may
// exceed length, the extra samples are ignored) to `length`. Writes bins <= length complex values
// to y (interleaved):
//   forward  y[k] = sum_n x[n] exp(-2 pi i k n / length)
//   inverse  y[k] = (1 / length) sum_n x[n] exp(+2 pi i k n / length)
// Requires length >= 1; x and y must not overlap.
void DftF64(const double* x, int64_t n_in, int64_t length, int64_t bins, bool inverse,
            const double* twiddle, double* y);

}  // namespace simplecpp::kernels
