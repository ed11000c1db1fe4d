// Tests for the int32 col2im of kernels/conv/col2im.h (QLinearConvTranspose's scatter-add):
// Col2ImI32 against a direct scatter written here, in chunks of columns, with sums that wrap
// modulo 2^32, negative and positive pads, dilations, 1-D/2-D/3-D; Col2ImDisjointI32 against
// the bias followed by Col2ImI32; the same values with 1 and 3 threads.
#include "kernels/conv/col2im.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "reference/threads_parallel.h"

namespace simplecpp::kernels {
namespace {

ConvGeometry Geometry(std::vector<int64_t> in, std::vector<int64_t> out,
                      std::vector<int64_t> kernel, std::vector<int64_t> stride,
                      std::vector<int64_t> dilation, std::vector<int64_t> pad) {
  ConvGeometry g;
  g.rank = static_cast<int>(in.size());
  for (int d = 0; d < g.rank; ++d) {
    g.in[d] = in[d];
    g.out[d] = out[d];
    g.kernel[d] = kernel[d];
    g.stride[d] = stride[d];
    g.dilation[d] = dilation[d];
    g.pad[d] = pad[d];
  }
  return g;
}

// image[c, i...] += col[(c, k...), q] for i_d = p_d * stride_d - pad_d + k_d * dilation_d inside
// the image, in uint32 (wrapping) arithmetic.
void RefCol2Im(const ConvGeometry& g, const std::vector<int32_t>& col, int64_t channels,
               std::vector<uint32_t>* image) {
  const int64_t ksize = g.KernelSize(), positions = g.OutSize(), in_size = g.InSize();
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t k = 0; k < ksize; ++k) {
      for (int64_t p = 0; p < positions; ++p) {
        int64_t index = 0, kr = k, pr = p;
        bool inside = true;
        int64_t ks[3], ps[3];
        for (int d = g.rank - 1; d >= 0; --d) {
          ks[d] = kr % g.kernel[d];
          kr /= g.kernel[d];
          ps[d] = pr % g.out[d];
          pr /= g.out[d];
        }
        for (int d = 0; d < g.rank; ++d) {
          const int64_t i = ps[d] * g.stride[d] - g.pad[d] + ks[d] * g.dilation[d];
          inside = inside && i >= 0 && i < g.in[d];
          index = index * g.in[d] + i;
        }
        if (inside) {
          (*image)[c * in_size + index] +=
              static_cast<uint32_t>(col[(c * ksize + k) * positions + p]);
        }
      }
    }
  }
}

TEST_CASE("Col2ImI32 equals a direct scatter in wrapping int32, in chunks, any thread count") {
  const std::vector<ConvGeometry> geometries = {
      Geometry({15}, {7}, {3}, {2}, {1}, {1}),
      Geometry({9, 11}, {4, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
      Geometry({10, 9}, {4, 4}, {3, 2}, {2, 3}, {2, 1}, {0, 1}),
      Geometry({7, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {-1, -2}),  // image beyond the reach
      Geometry({5, 6, 7}, {3, 4, 3}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 0}),
      // Innermost taps in tuples of the stride (2, 3, 4, a partial one; edges that only some
      // taps of a tuple reach, pads beyond the image on both sides).
      Geometry({6, 20}, {3, 9}, {4, 5}, {2, 2}, {1, 1}, {1, 2}),
      Geometry({4, 23}, {2, 8}, {2, 6}, {2, 3}, {1, 1}, {0, 2}),
      Geometry({33}, {9}, {4}, {4}, {1}, {1}),
      Geometry({12}, {8}, {3}, {2}, {1}, {-2}),
      Geometry({30}, {7}, {7}, {5}, {1}, {3}),
  };
  std::mt19937 rng(5);
  const test_util::ThreadsParallel three(3);
  for (const ConvGeometry& g : geometries) {
    CAPTURE(g.rank);
    const int64_t channels = 3, ksize = g.KernelSize(), positions = g.OutSize();
    std::vector<int32_t> col(static_cast<size_t>(channels * ksize * positions));
    for (auto& v : col) v = static_cast<int32_t>(rng());  // sums wrap
    std::vector<uint32_t> want(static_cast<size_t>(channels * g.InSize()), 7u);
    RefCol2Im(g, col, channels, &want);
    for (int64_t chunk : {positions, int64_t{5}, int64_t{1}}) {
      for (const Parallel* par : {&SerialParallel(), static_cast<const Parallel*>(&three)}) {
        CAPTURE(chunk);
        std::vector<int32_t> image(want.size(), 7);
        for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
          const int64_t pc = std::min(chunk, positions - p0);
          std::vector<int32_t> part(static_cast<size_t>(channels * ksize * pc));
          for (int64_t r = 0; r < channels * ksize; ++r) {
            for (int64_t q = 0; q < pc; ++q) part[r * pc + q] = col[r * positions + p0 + q];
          }
          Col2ImI32(g, part.data(), channels, p0, pc, image.data(), *par);
        }
        int64_t bad = 0;
        for (size_t i = 0; i < want.size(); ++i) bad += static_cast<uint32_t>(image[i]) != want[i];
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("Col2ImDisjointI32 equals the bias plus Col2ImI32 (wrapping)") {
  const std::vector<ConvGeometry> geometries = {
      Geometry({14}, {7}, {2}, {2}, {1}, {0}),
      Geometry({6, 10}, {3, 5}, {2, 2}, {2, 2}, {1, 1}, {0, 0}),
      Geometry({9, 4}, {3, 2}, {3, 2}, {3, 2}, {1, 1}, {0, 0}),
      Geometry({4, 4, 6}, {2, 2, 3}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}),
  };
  std::mt19937 rng(9);
  const test_util::ThreadsParallel three(3);
  for (const ConvGeometry& g : geometries) {
    CAPTURE(g.rank);
    REQUIRE(Col2ImIsDisjoint(g));
    const int64_t channels = 5, ksize = g.KernelSize(), positions = g.OutSize();
    std::vector<int32_t> col(static_cast<size_t>(channels * ksize * positions)), bias(channels);
    for (auto& v : col) v = static_cast<int32_t>(rng());
    for (auto& v : bias) v = static_cast<int32_t>(rng());
    std::vector<int32_t> want(static_cast<size_t>(channels * g.InSize()));
    for (int64_t c = 0; c < channels; ++c) {
      std::fill(want.begin() + c * g.InSize(), want.begin() + (c + 1) * g.InSize(), bias[c]);
    }
    Col2ImI32(g, col.data(), channels, 0, positions, want.data(), SerialParallel());
    for (const Parallel* par : {&SerialParallel(), static_cast<const Parallel*>(&three)}) {
      for (const bool with_bias : {false, true}) {
        std::vector<int32_t> image(want.size(), 0);
        Col2ImDisjointI32(g, col.data(), channels, 0, positions, with_bias ? bias.data() : nullptr,
                          image.data(), *par);
        int64_t bad = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          const int64_t c = static_cast<int64_t>(i) / g.InSize();
          const uint32_t expect =
              static_cast<uint32_t>(want[i]) - (with_bias ? 0u : static_cast<uint32_t>(bias[c]));
          bad += static_cast<uint32_t>(image[i]) != expect;
        }
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("Col2ImDisjointBytes places each byte where Col2ImDisjointI32 places its sum") {
  const std::vector<ConvGeometry> geometries = {
      Geometry({14}, {7}, {2}, {2}, {1}, {0}),
      Geometry({6, 10}, {3, 5}, {2, 2}, {2, 2}, {1, 1}, {0, 0}),
      Geometry({9, 4}, {3, 2}, {3, 2}, {3, 2}, {1, 1}, {0, 0}),
      Geometry({4, 4, 6}, {2, 2, 3}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}),
  };
  std::mt19937 rng(10);
  const test_util::ThreadsParallel three(3);
  for (const ConvGeometry& g : geometries) {
    CAPTURE(g.rank);
    const int64_t channels = 5, ksize = g.KernelSize(), positions = g.OutSize();
    std::vector<int32_t> col(static_cast<size_t>(channels * ksize * positions));
    for (auto& v : col) v = static_cast<int32_t>(rng() % 256);
    std::vector<int32_t> want(static_cast<size_t>(channels * g.InSize()));
    Col2ImDisjointI32(g, col.data(), channels, 0, positions, nullptr, want.data(),
                      SerialParallel());
    const std::vector<uint8_t> col8(col.begin(), col.end());
    // Channels 3 bytes further apart than the image (a band inside a larger tensor): the gaps
    // keep their bytes.
    const int64_t stride = g.InSize() + 3;
    for (const Parallel* par : {&SerialParallel(), static_cast<const Parallel*>(&three)}) {
      std::vector<uint8_t> image(static_cast<size_t>(channels * stride), 0xEE);
      Col2ImDisjointBytes(g, col8.data(), channels, 0, positions, image.data(), stride, *par);
      int64_t bad = 0;
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < stride; ++i) {
          const uint8_t got = image[c * stride + i];
          bad += i < g.InSize() ? got != want[c * g.InSize() + i] : got != 0xEE;
        }
      }
      CHECK(bad == 0);
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
