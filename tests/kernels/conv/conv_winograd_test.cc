// Tests for kernels/conv/winograd_conv.h: the Winograd F(4x4, 3x3) convolution against the
// double-precision direct convolution (tests/reference/conv_reference.h), with an error bound
// scaled by the sum of |w * x| over each output's taps; on every compiled target, on images whose
// sides are not multiples of the tile, with asymmetric padding, narrow images (several rows of
// tiles per block) and wide ones (rows split into blocks), dilations 2-8 (one problem per
// phase); the same bits for any thread count
// and on every target with FMA; the post-op applied once to every output.
#include "kernels/conv/winograd_conv.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/targets.h"
#include "reference/conv_reference.h"
#include "reference/threads_parallel.h"

namespace simplecpp::kernels {
namespace {

using testing::ConvReference;
using testing::ConvRefParams;

struct Case {
  int64_t channels, cout, h, w, pad_top, pad_left, pad_bottom, pad_right;
  int64_t dil_h = 1, dil_w = 1;
};

ConvRefParams ParamsOf(const Case& c) {
  ConvRefParams p;
  p.in = {c.h, c.w};
  p.kernel = {3, 3};
  p.stride = {1, 1};
  p.dilation = {c.dil_h, c.dil_w};
  p.pad_begin = {c.pad_top, c.pad_left};
  p.out = {c.h + c.pad_top + c.pad_bottom - 2 * c.dil_h,
           c.w + c.pad_left + c.pad_right - 2 * c.dil_w};
  p.channels = c.channels;
  p.out_channels = c.cout;
  return p;
}

ConvGeometry GeometryOf(const ConvRefParams& p) {
  ConvGeometry g;
  g.rank = 2;
  for (int d = 0; d < 2; ++d) {
    g.in[d] = p.in[d];
    g.out[d] = p.out[d];
    g.kernel[d] = 3;
    g.dilation[d] = p.dilation[d];
    g.pad[d] = p.pad_begin[d];
  }
  return g;
}

std::vector<float> Random(std::mt19937& rng, int64_t n, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

std::vector<float> Abs(std::vector<float> v) {
  for (auto& x : v) x = std::fabs(x);
  return v;
}

// The transforms' constants (up to 8 in A, 5 in B, 1/24 in G) grow the rounding errors beyond a
// direct sum's: here F(4x4, 3x3) stays within 48 float32 ulps of the sum of |w * x| + |bias| over
// an output's taps (the worst seen on these cases is about 19, on every target).
constexpr double kUlpsOfAbsSum = 48.0;

std::vector<float> RunWinograd(const ConvGeometry& g, const std::vector<float>& x,
                               int64_t channels, const std::vector<float>& w,
                               const std::vector<float>& bias, int64_t cout,
                               const Parallel& par, const PostOpF32& post = {}) {
  const auto u = WinogradWeightsF32::Transform(cout, channels, w.data());
  std::vector<float> y(static_cast<size_t>(cout * g.OutSize()), -7.0f);
  REQUIRE(ConvWinogradF32(g, x.data(), channels, *u, bias.data(), y.data(), par, post));
  return y;
}

TEST_CASE("ConvWinogradF32 matches the double direct convolution within its stated bound") {
  std::mt19937 rng(5);
  const Case cases[] = {
      {8, 8, 4, 4, 1, 1, 1, 1},        // one tile
      {13, 11, 9, 7, 1, 1, 1, 1},      // partial tiles both ways, odd channel counts
      {16, 24, 15, 20, 1, 1, 1, 1},    // the detector's smallest 3x3 layer (narrow: rows of tiles)
      {24, 9, 6, 30, 0, 2, 1, 0},      // asymmetric padding, no padding on one side
      {8, 17, 3, 200, 1, 1, 1, 1},     // a wide row: several blocks along it
      {9, 8, 22, 6, 2, 0, 0, 2},       // padding of 2, a width of one tile + 2
      {40, 33, 17, 65, 1, 1, 1, 1},    // odd width past a block, several strips of channels
      // Dilated: one undilated problem per phase; padding equal to the dilation, smaller,
      // larger, and different dilations per dimension.
      {16, 9, 23, 37, 2, 2, 2, 2, 2, 2},
      {8, 8, 30, 41, 4, 3, 1, 4, 4, 4},
      {12, 10, 19, 50, 1, 8, 3, 8, 3, 8},
      {9, 16, 40, 21, 8, 2, 8, 2, 8, 2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.channels);
    CAPTURE(c.h);
    CAPTURE(c.w);
    const ConvRefParams p = ParamsOf(c);
    const ConvGeometry g = GeometryOf(p);
    REQUIRE(ConvWinogradApplies(g, c.channels, c.cout));
    const auto x = Random(rng, c.channels * c.h * c.w, 2.0f);
    const auto w = Random(rng, c.cout * c.channels * 9, 0.5f);
    const auto bias = Random(rng, c.cout, 1.0f);
    const auto ref = ConvReference(p, x, w, bias);
    const auto abs_sum = ConvReference(p, Abs(x), Abs(w), Abs(bias));
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      const auto y = RunWinograd(g, x, c.channels, w, bias, c.cout, SerialParallel());
      int bad = 0;
      double worst = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        const double ulp = std::ldexp(1.0, -23) * abs_sum[i];
        const double err = std::fabs(y[i] - ref[i]);
        worst = std::max(worst, err / ulp);
        if (!(err <= kUlpsOfAbsSum * ulp) && bad++ < 3) {
          CAPTURE(i);
          CHECK(y[i] == doctest::Approx(ref[i]));
        }
      }
      CAPTURE(worst);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("ConvWinogradF32: the same bits for any thread count and on every target with FMA") {
  std::mt19937 rng(9);
  for (const Case& c : {Case{40, 33, 37, 70, 1, 1, 1, 1}, Case{24, 24, 30, 22, 1, 1, 1, 1},
                        Case{16, 12, 33, 45, 2, 2, 2, 2, 2, 2}}) {
    const ConvRefParams p = ParamsOf(c);
    const ConvGeometry g = GeometryOf(p);
    const auto x = Random(rng, c.channels * c.h * c.w, 1.0f);
    const auto w = Random(rng, c.cout * c.channels * 9, 1.0f);
    const auto bias = Random(rng, c.cout, 1.0f);
    std::vector<float> fma_result;
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      const auto one = RunWinograd(g, x, c.channels, w, bias, c.cout, SerialParallel());
      const auto three = RunWinograd(g, x, c.channels, w, bias, c.cout,
                                     test_util::ThreadsParallel(3));
      CHECK(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)) == 0);
      // SSE4 and WebAssembly have no FMA: their products and sums round separately.
      if (t.name.rfind("AVX", 0) == 0) {
        if (fma_result.empty()) fma_result = one;
        CHECK(std::memcmp(one.data(), fma_result.data(), one.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("ConvWinogradF32 applies the post-op once to every output, and only where it applies") {
  std::mt19937 rng(13);
  for (const Case& c :
       {Case{16, 12, 10, 23, 1, 1, 1, 1}, Case{16, 12, 18, 27, 4, 4, 4, 4, 4, 4}}) {
    const ConvRefParams p = ParamsOf(c);
    const ConvGeometry g = GeometryOf(p);
    const auto x = Random(rng, c.channels * c.h * c.w, 1.0f);
    const auto w = Random(rng, c.cout * c.channels * 9, 1.0f);
    const auto bias = Random(rng, c.cout, 1.0f);
    const auto plain = RunWinograd(g, x, c.channels, w, bias, c.cout, SerialParallel());
    auto add_one = [](const void*, float* data, int64_t n) {
      for (int64_t i = 0; i < n; ++i) data[i] += 1.0f;
    };
    const auto posted = RunWinograd(g, x, c.channels, w, bias, c.cout, SerialParallel(),
                                    PostOpF32{add_one, nullptr});
    int bad = 0;
    for (size_t i = 0; i < plain.size(); ++i) bad += posted[i] != plain[i] + 1.0f;
    CHECK(bad == 0);
  }
  const Case c{16, 12, 10, 23, 1, 1, 1, 1};
  const ConvGeometry g = GeometryOf(ParamsOf(c));
  // Not for other kernels, strides, dilations or too few channels.
  ConvGeometry other = g;
  other.stride[0] = 2;
  CHECK_FALSE(ConvWinogradApplies(other, 16, 12));
  other = g;
  other.kernel[1] = 5;
  CHECK_FALSE(ConvWinogradApplies(other, 16, 12));
  other = g;
  other.dilation[1] = 17;
  CHECK_FALSE(ConvWinogradApplies(other, 16, 12));
  other.dilation[1] = 6;  // rows narrower than a tile per phase
  CHECK_FALSE(ConvWinogradApplies(other, 16, 12));
  CHECK_FALSE(ConvWinogradApplies(g, 4, 12));
  other = g;
  other.rank = 1;
  CHECK_FALSE(ConvWinogradApplies(other, 16, 12));
}

}  // namespace
}  // namespace simplecpp::kernels
