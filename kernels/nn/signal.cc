// Direct DFT over a twiddle table (see kernels/nn/signal.h).
#include "kernels/nn/signal.h"

#include <cmath>

namespace simplecpp::kernels {

void DftTwiddles(int64_t length, double* twiddle) {
  const double step = 2.0 * M_PI / static_cast<double>(length);
  for (int64_t j = 0; j < length; ++j) {
    // Symmetric evaluation keeps cos/sin of 1/4, 1/2 turns exact (0, +-1).
    const double a = step * static_cast<double>(j);
    twiddle[2 * j] = std::cos(a);
    twiddle[2 * j + 1] = std::sin(a);
    if (4 * j == length || 4 * j == 3 * length) twiddle[2 * j] = 0.0;
    if (2 * j == length) twiddle[2 * j + 1] = 0.0;
  }
}

void DftF64(const double* x, int64_t n_in, int64_t length, int64_t bins, bool inverse,
            const double* twiddle, double* y) {
  const int64_t n = n_in < length ? n_in : length;
  const double sign = inverse ? 1.0 : -1.0;
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0.0, im = 0.0;
    int64_t j = 0;  // (k * t) mod length, advanced by k each step
    for (int64_t t = 0; t < n; ++t) {
      const double c = twiddle[2 * j], s = sign * twiddle[2 * j + 1];
      const double xr = x[2 * t], xi = x[2 * t + 1];
      // (xr + i xi) (c + i s)
      re += xr * c - xi * s;
      im += xr * s + xi * c;
      j += k;
      if (j >= length) j %= length;
    }
    y[2 * k] = re * scale;
    y[2 * k + 1] = im * scale;
  }
}

}  // namespace simplecpp::kernels
