// Direct (scalar, double-precision) convolution reference for the Conv tests: the definition
// from the ONNX spec, one loop per output element, nothing shared with the kernels.
#pragma once

#include <cstdint>
#include <vector>

namespace simplecpp::testing {

struct ConvRefParams {
  std::vector<int64_t> in;      // spatial input dims
  std::vector<int64_t> kernel;  // spatial kernel dims
  std::vector<int64_t> stride;
  std::vector<int64_t> dilation;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> out;  // spatial output dims
  int64_t batch = 1, channels = 1, out_channels = 1, group = 1;
};

// x: [batch, channels, in...], w: [out_channels, channels/group, kernel...], bias: empty or
// [out_channels]. Returns y: [batch, out_channels, out...].
inline std::vector<double> ConvReference(const ConvRefParams& p, const std::vector<float>& x,
                                         const std::vector<float>& w,
                                         const std::vector<float>& bias) {
  const size_t rank = p.in.size();
  int64_t in_size = 1, out_size = 1, k_size = 1;
  for (size_t d = 0; d < rank; ++d) {
    in_size *= p.in[d];
    out_size *= p.out[d];
    k_size *= p.kernel[d];
  }
  const int64_t cg = p.channels / p.group;
  const int64_t og = p.out_channels / p.group;
  std::vector<double> y(static_cast<size_t>(p.batch * p.out_channels * out_size), 0.0);
  std::vector<int64_t> o(rank), k(rank);
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t g = oc / og;
      for (int64_t op = 0; op < out_size; ++op) {
        int64_t rem = op;
        for (size_t d = rank; d-- > 0;) {
          o[d] = rem % p.out[d];
          rem /= p.out[d];
        }
        double s = bias.empty() ? 0.0 : bias[oc];
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t c = g * cg + ci;
          for (int64_t kp = 0; kp < k_size; ++kp) {
            int64_t kr = kp;
            for (size_t d = rank; d-- > 0;) {
              k[d] = kr % p.kernel[d];
              kr /= p.kernel[d];
            }
            int64_t idx = 0;
            bool inside = true;
            for (size_t d = 0; d < rank; ++d) {
              const int64_t i = o[d] * p.stride[d] + k[d] * p.dilation[d] - p.pad_begin[d];
              if (i < 0 || i >= p.in[d]) inside = false;
              idx = idx * p.in[d] + i;
            }
            if (!inside) continue;
            s += static_cast<double>(x[(n * p.channels + c) * in_size + idx]) *
                 w[(oc * cg + ci) * k_size + kp];
          }
        }
        y[(n * p.out_channels + oc) * out_size + op] = s;
      }
    }
  }
  return y;
}

}  // namespace simplecpp::testing
