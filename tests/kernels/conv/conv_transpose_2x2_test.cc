// Tests for kernels/conv/conv_transpose_2x2.h against a double-precision scalar evaluation of
// the ConvTranspose definition (each output pixel (2i + a, 2j + b) is the bias plus the sum over
// input channels of x[c, i, j] * w[c, o, a, b]): widths around the block size (the zero-padded
// tail), odd output channel counts (the last block of one channel), one output channel, no
// input channels (the bias alone); on every compiled target; the same bits for any thread count;
// the post-op once per output.
#include "kernels/conv/conv_transpose_2x2.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/targets.h"
#include "reference/threads_parallel.h"

namespace simplecpp::kernels {
namespace {

struct Case {
  int64_t channels, cout, h, w;
};

std::vector<float> Random(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

// y and the sum of |terms| per output, in double.
void Reference(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& bias, std::vector<double>* y,
               std::vector<double>* abs_sum) {
  const int64_t oh = 2 * c.h, ow = 2 * c.w;
  y->assign(static_cast<size_t>(c.cout * oh * ow), 0.0);
  abs_sum->assign(y->size(), 0.0);
  for (int64_t o = 0; o < c.cout; ++o) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t i = oy / 2, a = oy % 2, j = ox / 2, b = ox % 2;
        double s = bias[o], abs = std::fabs(bias[o]);
        for (int64_t ch = 0; ch < c.channels; ++ch) {
          const double t = static_cast<double>(x[(ch * c.h + i) * c.w + j]) *
                           w[((ch * c.cout + o) * 2 + a) * 2 + b];
          s += t;
          abs += std::fabs(t);
        }
        const size_t at = static_cast<size_t>((o * oh + oy) * ow + ox);
        (*y)[at] = s;
        (*abs_sum)[at] = abs;
      }
    }
  }
}

std::vector<float> Run(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& bias, const Parallel& par,
                       const PostOpF32& post = {}) {
  std::vector<float> y(static_cast<size_t>(c.cout * 4 * c.h * c.w), -7.0f);
  ConvTranspose2x2S2F32(c.channels, c.h, c.w, x.data(), c.cout, w.data(), bias.data(), y.data(),
                        par, post);
  return y;
}

TEST_CASE("ConvTranspose2x2S2F32 matches the double-precision definition") {
  std::mt19937 rng(3);
  const Case cases[] = {{24, 24, 5, 160}, {7, 5, 3, 17}, {3, 1, 4, 47}, {16, 3, 2, 48},
                        {1, 2, 1, 1},    {0, 3, 2, 9},  {33, 9, 3, 100}};
  for (const Case& c : cases) {
    CAPTURE(c.channels);
    CAPTURE(c.cout);
    CAPTURE(c.w);
    const auto x = Random(rng, c.channels * c.h * c.w);
    const auto w = Random(rng, c.channels * c.cout * 4);
    const auto bias = Random(rng, c.cout);
    std::vector<double> ref, abs_sum;
    Reference(c, x, w, bias, &ref, &abs_sum);
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      const auto y = Run(c, x, w, bias, SerialParallel());
      int bad = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        // An ordered float32 sum of channels + 1 terms: within (channels + 1) ulps of the
        // absolute sum.
        const double bound = (c.channels + 1) * std::ldexp(1.0, -23) * abs_sum[i];
        if (!(std::fabs(y[i] - ref[i]) <= bound) && bad++ < 3) {
          CAPTURE(i);
          CHECK(y[i] == doctest::Approx(ref[i]));
        }
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("ConvTranspose2x2S2F32: the same bits for any thread count; the post-op once") {
  std::mt19937 rng(4);
  const Case c{24, 7, 37, 53};
  const auto x = Random(rng, c.channels * c.h * c.w);
  const auto w = Random(rng, c.channels * c.cout * 4);
  const auto bias = Random(rng, c.cout);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    const auto one = Run(c, x, w, bias, SerialParallel());
    const auto three = Run(c, x, w, bias, test_util::ThreadsParallel(3));
    CHECK(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)) == 0);
    auto add_one = [](const void*, float* data, int64_t n) {
      for (int64_t i = 0; i < n; ++i) data[i] += 1.0f;
    };
    const auto posted = Run(c, x, w, bias, test_util::ThreadsParallel(2),
                            PostOpF32{add_one, nullptr});
    int bad = 0;
    for (size_t i = 0; i < one.size(); ++i) bad += posted[i] != one[i] + 1.0f;
    CHECK(bad == 0);
  }
}

}  // namespace
}  // namespace simplecpp::kernels
