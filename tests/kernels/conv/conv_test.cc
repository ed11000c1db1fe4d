// Tests for kernels/conv/conv.h (im2col, checked through im2col + GEMM) and
// kernels/conv/depthwise_conv.h against the direct convolution reference, over 1-D/2-D/3-D
// geometries with strides, dilations and (asymmetric, oversized) pads, on every compiled target.
#include "kernels/conv/conv.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/conv/depthwise_conv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/targets.h"
#include "reference/conv_reference.h"

namespace simplecpp::kernels {
namespace {

using testing::ConvReference;
using testing::ConvRefParams;

// A random geometry of `rank` spatial dims with a valid (>= 1) output size.
ConvRefParams RandomParams(std::mt19937& rng, int rank) {
  ConvRefParams p;
  for (int d = 0; d < rank; ++d) {
    const int64_t in = 1 + rng() % (rank == 3 ? 6 : rank == 2 ? 9 : 13);
    const int64_t k = 1 + rng() % 3;
    const int64_t s = 1 + rng() % 3;
    const int64_t dil = 1 + rng() % 2;
    const int64_t pb = rng() % 3, pe = rng() % 3;
    const int64_t ext = (k - 1) * dil + 1;
    int64_t in_fixed = std::max(in, ext - pb - pe);  // keep the kernel inside the padded input
    p.in.push_back(in_fixed);
    p.kernel.push_back(k);
    p.stride.push_back(s);
    p.dilation.push_back(dil);
    p.pad_begin.push_back(pb);
    p.out.push_back((in_fixed + pb + pe - ext) / s + 1);
  }
  return p;
}

ConvGeometry ToGeometry(const ConvRefParams& p) {
  ConvGeometry g;
  g.rank = static_cast<int>(p.in.size());
  for (int d = 0; d < g.rank; ++d) {
    g.in[d] = p.in[d];
    g.out[d] = p.out[d];
    g.kernel[d] = p.kernel[d];
    g.stride[d] = p.stride[d];
    g.dilation[d] = p.dilation[d];
    g.pad[d] = p.pad_begin[d];
  }
  return g;
}

std::vector<float> RandomVector(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

void ExpectClose(const std::vector<float>& got, const std::vector<double>& ref, double tol) {
  REQUIRE(got.size() == ref.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - ref[i]) <= tol * (1.0 + std::fabs(ref[i]))) && bad++ < 3) {
      CAPTURE(i);
      CHECK(got[i] == doctest::Approx(ref[i]));
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("Im2ColF32 + GemmF32 match direct convolution (1-D, 2-D, 3-D, chunked)") {
  std::mt19937 rng(42);
  for (int rep = 0; rep < 60; ++rep) {
    const int rank = 1 + rep % 3;
    ConvRefParams p = RandomParams(rng, rank);
    p.channels = 1 + rng() % 4;
    p.out_channels = 1 + rng() % 5;
    const ConvGeometry g = ToGeometry(p);
    const int64_t ksize = g.KernelSize(), P = g.OutSize();
    const auto x = RandomVector(rng, p.channels * g.InSize());
    const auto w = RandomVector(rng, p.out_channels * p.channels * ksize);
    const auto bias = RandomVector(rng, p.out_channels);
    const auto ref = ConvReference(p, x, w, bias);
    const int64_t chunk = 1 + rng() % (P + 2);  // output positions per im2col call
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      CAPTURE(rep);
      std::vector<float> y(static_cast<size_t>(p.out_channels * P), -7.0f);
      std::vector<float> col(static_cast<size_t>(p.channels * ksize * chunk));
      GemmEpilogue e;
      e.row_bias = bias.data();
      for (int64_t p0 = 0; p0 < P; p0 += chunk) {
        const int64_t pc = std::min(chunk, P - p0);
        Im2ColF32(g, x.data(), p.channels, p0, pc, col.data(), SerialParallel());
        GemmF32(false, false, p.out_channels, pc, p.channels * ksize, 1.0f, w.data(),
                p.channels * ksize, col.data(), pc, 0.0f, y.data() + p0, P, SerialParallel(), e);
      }
      ExpectClose(y, ref, 1e-5);
    }
  }
}

TEST_CASE("Im2RowF32 is Im2ColF32 transposed (1-D, 2-D, 3-D, any position range)") {
  std::mt19937 rng(17);
  for (int rep = 0; rep < 120; ++rep) {
    ConvRefParams p = RandomParams(rng, 1 + rep % 3);
    if (rep >= 90) {
      // Long kernel rows (a 1-D filter bank): copied as runs, padded at either end.
      const int64_t k = 17 + rep % 7, pb = rep % 3, pe = rep % 4, in = 40 + rep % 5;
      p = ConvRefParams{};
      p.in = {in};
      p.kernel = {k};
      p.stride = {1 + rep % 4};
      p.dilation = {1};
      p.pad_begin = {pb};
      p.out = {(in + pb + pe - k) / p.stride[0] + 1};
      p.channels = 1 + rep % 2;
    }
    const ConvGeometry g = ToGeometry(p);
    CAPTURE(rep);
    const auto x = RandomVector(rng, p.channels * g.InSize());
    const int64_t P = g.OutSize(), K = p.channels * g.KernelSize();
    const int64_t p0 = static_cast<int64_t>(rng() % static_cast<uint32_t>(P));
    const int64_t pc = 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(P - p0));
    std::vector<float> col(static_cast<size_t>(K * pc)), rows(static_cast<size_t>(K * pc), -7.0f);
    Im2ColF32(g, x.data(), p.channels, p0, pc, col.data(), SerialParallel());
    Im2RowF32(g, x.data(), p.channels, p0, pc, rows.data());
    int bad = 0;
    for (int64_t q = 0; q < pc; ++q) {
      for (int64_t k = 0; k < K; ++k) bad += rows[q * K + k] != col[k * pc + q];
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("DepthwiseConvF32 matches direct convolution (1-D, 2-D, multipliers)") {
  std::mt19937 rng(7);
  for (int rep = 0; rep < 60; ++rep) {
    const int rank = 1 + rep % 2;
    ConvRefParams p = RandomParams(rng, rank);
    if (rep % 5 == 0) {
      // Wide rows so the vector loop runs (stride 1 along the row).
      p.in.back() = 37;
      p.stride.back() = 1;
      p.out.back() =
          (37 + 2 * p.pad_begin.back() - ((p.kernel.back() - 1) * p.dilation.back() + 1)) + 1;
    }
    const int64_t multiplier = 1 + rng() % 2;
    p.channels = 1 + rng() % 5;
    p.group = p.channels;
    p.out_channels = p.channels * multiplier;
    const ConvGeometry g = ToGeometry(p);
    const auto x = RandomVector(rng, p.channels * g.InSize());
    const auto w = RandomVector(rng, p.out_channels * g.KernelSize());
    const auto bias = RandomVector(rng, p.out_channels);
    const bool with_bias = rep % 2 == 0;
    const auto ref = ConvReference(p, x, w, with_bias ? bias : std::vector<float>{});
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      CAPTURE(rep);
      std::vector<float> y(static_cast<size_t>(p.out_channels * g.OutSize()), -7.0f);
      DepthwiseConvF32(g, x.data(), p.channels, multiplier, w.data(),
                       with_bias ? bias.data() : nullptr, y.data(), SerialParallel());
      ExpectClose(y, ref, 1e-5);
    }
  }
}

// A 2-D depthwise case (multiplier 1, bias) on random data against the reference, on every
// target. x is exactly the input's size, so a load past a row's end in the last channel is a
// heap overflow under AddressSanitizer.
void CheckDepthwise2D(ConvRefParams p, std::mt19937& rng) {
  p.group = p.channels;
  p.out_channels = p.channels;
  const ConvGeometry g = ToGeometry(p);
  const auto x = RandomVector(rng, p.channels * g.InSize());
  const auto w = RandomVector(rng, p.out_channels * g.KernelSize());
  const auto bias = RandomVector(rng, p.out_channels);
  const auto ref = ConvReference(p, x, w, bias);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<float> y(static_cast<size_t>(p.out_channels * g.OutSize()), -7.0f);
    DepthwiseConvF32(g, x.data(), p.channels, 1, w.data(), bias.data(), y.data(),
                     SerialParallel());
    ExpectClose(y, ref, 1e-5);
  }
}

TEST_CASE("DepthwiseConvF32 stride 1 rows of every width around the vector length") {
  // Runs of 8, 4, 2 and 1 vectors, the overlapping last vector and the scalar edges: 3x3 and
  // 5x5, pad 0..2, heights where some kernel rows fall into the padding.
  std::mt19937 rng(11);
  for (int64_t k : {3, 5}) {
    for (int64_t width : {1, 2, 3, 4, 15, 16, 17, 18, 31, 33, 47, 56, 96, 100, 130, 257, 263}) {
      for (int64_t pad : {0, 1, 2}) {
        for (int64_t height : {1, 2, 3, 5}) {
          CAPTURE(k);
          CAPTURE(width);
          CAPTURE(pad);
          CAPTURE(height);
          ConvRefParams p;
          p.in = {height, width};
          p.kernel = {k, k};
          p.stride = {1, 1};
          p.dilation = {1, 1};
          p.pad_begin = {pad, pad};
          p.out = {height + 2 * pad - (k - 1), width + 2 * pad - (k - 1)};
          if (p.out[0] <= 0 || p.out[1] <= 0) continue;
          p.channels = 3;
          CheckDepthwise2D(p, rng);
        }
      }
    }
  }
}

TEST_CASE("DepthwiseConvF32 stride 2 rows of every width around the vector length") {
  // The stride-2 vector path (two loads per tap, even lanes), its overlapping last vector, the
  // columns it leaves to the scalar loop and the edges: 3x3 and 5x5, pad 0..2, dilation 1 and 2.
  std::mt19937 rng(13);
  for (int64_t k : {3, 5}) {
    for (int64_t dil : {1, 2}) {
      for (int64_t width :
           {1, 2, 5, 16, 17, 31, 32, 33, 34, 35, 47, 64, 65, 66, 67, 97, 200, 263, 530}) {
        for (int64_t pad : {0, 1, 2}) {
          CAPTURE(k);
          CAPTURE(dil);
          CAPTURE(width);
          CAPTURE(pad);
          const int64_t reach = (k - 1) * dil + 1;
          if (5 + 2 * pad < reach || width + 2 * pad < reach) continue;
          ConvRefParams p;
          p.in = {5, width};
          p.kernel = {k, k};
          p.stride = {2, 2};
          p.dilation = {dil, dil};
          p.pad_begin = {pad, pad};
          p.out = {(5 + 2 * pad - reach) / 2 + 1, (width + 2 * pad - reach) / 2 + 1};
          p.channels = 2;
          CheckDepthwise2D(p, rng);
        }
      }
    }
  }
}

// The depthwise kernel's own contract, bit for bit: every output is b, then one fused
// multiply-add per tap inside the image, kernel rows then columns ascending.
std::vector<float> DepthwiseOrdered(const ConvRefParams& p, const std::vector<float>& x,
                                    const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t H = p.in[0], W = p.in[1], OH = p.out[0], OW = p.out[1];
  const int64_t KH = p.kernel[0], KW = p.kernel[1];
  std::vector<float> y(static_cast<size_t>(p.channels * OH * OW));
  for (int64_t c = 0; c < p.channels; ++c) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        float acc = bias[c];
        for (int64_t ky = 0; ky < KH; ++ky) {
          const int64_t iy = oy * p.stride[0] + ky * p.dilation[0] - p.pad_begin[0];
          if (iy < 0 || iy >= H) continue;
          for (int64_t kx = 0; kx < KW; ++kx) {
            const int64_t ix = ox * p.stride[1] + kx * p.dilation[1] - p.pad_begin[1];
            if (ix < 0 || ix >= W) continue;
            acc = std::fma(w[(c * KH + ky) * KW + kx], x[(c * H + iy) * W + ix], acc);
          }
        }
        y[(c * OH + oy) * OW + ox] = acc;
      }
    }
  }
  return y;
}

// Whether the current target's depthwise vector path fuses its multiply-adds: one tap of
// (1 + 2^-12)^2 - 1 is 2^-11 + 2^-24 fused and 2^-11 when the product is rounded first.
bool DepthwiseFuses() {
  ConvGeometry g;
  g.rank = 1;
  g.in[0] = g.out[0] = 64;
  const std::vector<float> x(64, 1.0f + 0x1p-12f);
  const float w = 1.0f + 0x1p-12f, b = -1.0f;
  std::vector<float> y(64);
  DepthwiseConvF32(g, x.data(), 1, 1, &w, &b, y.data(), SerialParallel());
  return y[0] != 0x1p-11f;
}

TEST_CASE("DepthwiseConvF32 on short rows (2 or 4 rows at a time) is the ordered sum bitwise") {
  // Rows of 1-4 vectors run several at a time where their kernel rows are inside the image;
  // heights leave groups of 4, 2 and single rows, with padded rows at the top and bottom. Square
  // kernels (AVX-512: rows read from x directly) and kernels two rows shorter (AVX-512: the
  // aligned plane).
  std::mt19937 rng(19);
  for (int64_t stride : {1, 2}) {
    for (int64_t k : {3, 5}) {
      for (const bool square : {true, false}) {
        for (int64_t width : {16, 17, 28, 33, 56, 64, 65, 70}) {
          for (int64_t height : {4, 6, 7, 9, 12, 13}) {
            for (int64_t pad : {0, 1, 2}) {
              const int64_t dil = 1 + (width + height) % 2;
              const int64_t kh = square ? k : k - 2;
              const int64_t reach = (k - 1) * dil + 1, reach_h = (kh - 1) * dil + 1;
              if (height + 2 * pad < reach_h || width + 2 * pad < reach) continue;
              CAPTURE(stride);
              CAPTURE(k);
              CAPTURE(kh);
              CAPTURE(width);
              CAPTURE(height);
              CAPTURE(pad);
              CAPTURE(dil);
              ConvRefParams p;
              p.in = {height, width};
              p.kernel = {kh, k};
              p.stride = {stride, stride};
              p.dilation = {dil, dil};
              p.pad_begin = {pad, pad};
              p.out = {(height + 2 * pad - reach_h) / stride + 1,
                       (width + 2 * pad - reach) / stride + 1};
              p.channels = 2;
              p.group = 2;
              p.out_channels = 2;
              const ConvGeometry g = ToGeometry(p);
              const auto x = RandomVector(rng, p.channels * g.InSize());
              const auto w = RandomVector(rng, p.out_channels * g.KernelSize());
              const auto bias = RandomVector(rng, p.out_channels);
              const auto want = DepthwiseOrdered(p, x, w, bias);
              for (const auto& t : CompiledTargets()) {
                ScopedTarget st(t);
                CAPTURE(t.name);
                std::vector<float> y(want.size(), -7.0f);
                DepthwiseConvF32(g, x.data(), p.channels, 1, w.data(), bias.data(), y.data(),
                                 SerialParallel());
                // Targets without FMA round each vector product first (their scalar columns
                // still fuse): there the sums agree to rounding.
                if (DepthwiseFuses()) {
                  CHECK(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)) == 0);
                } else {
                  ExpectClose(y, std::vector<double>(want.begin(), want.end()), 1e-5);
                }
              }
            }
          }
        }
      }
    }
  }
}

// Runs single tasks in reverse order, alternating between the calling thread and a second
// thread, so a result that depended on the task-to-thread assignment would show.
class ReverseParallel final : public Parallel {
 public:
  int num_threads() const override { return 2; }
  void For(int64_t num_tasks, kernels::TaskFn fn) const override {
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
    std::thread other([&] {
      for (int64_t i = num_tasks - 2; i >= 0; i -= 2) fn(i, i + 1);
    });
    for (int64_t i = num_tasks - 1; i >= 0; i -= 2) fn(i, i + 1);
    other.join();
#else
    for (int64_t i = num_tasks - 1; i >= 0; --i) fn(i, i + 1);
#endif
  }
};

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_CASE("ConvDirectF32 on images beyond one copy (bands of output rows) equals im2col + GEMM") {
  // Images whose phase planes exceed kConvDirectMaxImage go in bands of output rows; the rows on
  // both sides of every band boundary (and the first and last rows: top and bottom padding) are
  // checked bit for bit against im2col + GEMM on those positions. Dilated 3x3 (the segmentation
  // nets' layers), stride 2, and a pointwise one read in place.
  std::mt19937 rng(31);
  struct Case {
    int64_t channels, h, w, k, stride, dil, pad;
  };
  for (const Case c : {Case{130, 250, 260, 3, 1, 2, 2}, Case{130, 250, 260, 3, 1, 8, 8},
                       Case{33, 510, 520, 3, 2, 1, 1}, Case{64, 400, 336, 1, 1, 1, 0}}) {
    CAPTURE(c.h);
    CAPTURE(c.dil);
    CAPTURE(c.stride);
    ConvRefParams p;
    p.in = {c.h, c.w};
    p.kernel = {c.k, c.k};
    p.stride = {c.stride, c.stride};
    p.dilation = {c.dil, c.dil};
    p.pad_begin = {c.pad, c.pad};
    for (int d = 0; d < 2; ++d) {
      p.out.push_back((p.in[d] + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1);
    }
    p.channels = c.channels;
    p.out_channels = 3;
    const ConvGeometry g = ToGeometry(p);
    REQUIRE(ConvDirectApplies(g, p.channels));
    const int64_t band = ConvDirectBandRows(g, p.channels);
    REQUIRE(band < g.out[0]);  // several bands
    const int64_t kdim = p.channels * g.KernelSize(), P = g.OutSize(), OW = g.out[1];
    const auto x = RandomVector(rng, p.channels * g.InSize());
    const auto w = RandomVector(rng, p.out_channels * kdim);
    const auto bias = RandomVector(rng, p.out_channels);
    std::vector<int64_t> rows = {0, g.out[0] - 1};
    for (int64_t r = band; r < g.out[0]; r += band) {
      rows.push_back(r - 1);
      rows.push_back(r);
    }
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      const auto pa = PackedAF32::Pack(false, p.out_channels, kdim, w.data(), kdim);
      std::vector<float> got(static_cast<size_t>(p.out_channels * P), -7.0f);
      ReverseParallel reverse;
      REQUIRE(ConvDirectF32(g, x.data(), p.channels, *pa, bias.data(), got.data(), reverse));
      GemmEpilogue e;
      e.row_bias = bias.data();
      std::vector<float> col(static_cast<size_t>(kdim * OW));
      std::vector<float> want(static_cast<size_t>(p.out_channels * OW));
      for (int64_t r : rows) {
        CAPTURE(r);
        Im2ColF32(g, x.data(), p.channels, r * OW, OW, col.data(), SerialParallel());
        GemmPackedAF32(*pa, false, OW, 1.0f, col.data(), OW, 0.0f, want.data(), OW,
                       SerialParallel(), e);
        for (int64_t m = 0; m < p.out_channels; ++m) {
          CHECK(std::memcmp(got.data() + m * P + r * OW, want.data() + m * OW,
                            static_cast<size_t>(OW) * sizeof(float)) == 0);
        }
      }
      // Every output was written.
      CHECK(std::find(got.begin(), got.end(), -7.0f) == got.end());
    }
  }
}

TEST_CASE("Im2ColPackedF32 + GemmPackedABF32 and ConvDirectF32 equal im2col + GEMM bitwise") {
  std::mt19937 rng(11);
  for (int rep = 0; rep < 48; ++rep) {
    const int rank = rep < 36 ? 2 : 1 + rep % 3;
    ConvRefParams p = RandomParams(rng, rank);
    if (rep % 3 != 2 && rank == 2) {
      // Stride 1, dilation 1 (the direct path), wider images: several slots and vectors per row.
      for (int d = 0; d < 2; ++d) {
        p.in[d] = 1 + rng() % (d == 1 ? 40 : 12);
        p.stride[d] = 1;
        p.dilation[d] = 1;
        p.in[d] = std::max(p.in[d], p.kernel[d] - 2 * p.pad_begin[d]);
        p.out[d] = p.in[d] + 2 * p.pad_begin[d] - p.kernel[d] + 1;
      }
    }
    p.channels = 1 + rng() % 9;
    p.out_channels = 1 + rng() % 19;
    if (rep == 0) {
      // Large enough for the parallel paths (above the serial thresholds).
      p.in = {40, 44};
      p.kernel = {3, 3};
      p.stride = {1, 1};
      p.dilation = {1, 1};
      p.pad_begin = {1, 1};
      p.out = {40, 44};
      p.channels = 12;
      p.out_channels = 20;
    }
    const ConvGeometry g = ToGeometry(p);
    const int64_t ksize = g.KernelSize(), P = g.OutSize(), kdim = p.channels * ksize;
    const auto x = RandomVector(rng, p.channels * g.InSize());
    const auto w = RandomVector(rng, p.out_channels * kdim);
    const auto bias = RandomVector(rng, p.out_channels);
    const bool with_bias = rep % 4 != 3;
    const auto ref = ConvReference(p, x, w, with_bias ? bias : std::vector<float>{});
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      CAPTURE(rep);
      const auto pa = PackedAF32::Pack(false, p.out_channels, kdim, w.data(), kdim);
      GemmEpilogue e;
      e.row_bias = with_bias ? bias.data() : nullptr;
      // The existing path: whole im2col matrix + GEMM with packed A.
      std::vector<float> col(static_cast<size_t>(kdim * P));
      Im2ColF32(g, x.data(), p.channels, 0, P, col.data(), SerialParallel());
      std::vector<float> want(static_cast<size_t>(p.out_channels * P), -7.0f);
      GemmPackedAF32(*pa, false, P, 1.0f, col.data(), P, 0.0f, want.data(), P, SerialParallel(), e);
      ExpectClose(want, ref, 1e-5);
      // im2col straight into the packed-B layout, in chunks of output positions.
      const int64_t nr = CurrentGemmTileShape().nr;
      const int64_t chunk = rep % 2 == 0 ? P : 1 + rng() % P;
      for (int serial = 0; serial < 2; ++serial) {
        ReverseParallel reverse;
        const Parallel& par = serial ? SerialParallel() : static_cast<const Parallel&>(reverse);
        std::vector<float> got(static_cast<size_t>(p.out_channels * P), -7.0f);
        std::vector<float> pb(static_cast<size_t>(kdim * ((chunk + nr - 1) / nr * nr)), 5.0f);
        for (int64_t p0 = 0; p0 < P; p0 += chunk) {
          const int64_t pc = std::min(chunk, P - p0);
          Im2ColPackedF32(g, x.data(), p.channels, p0, pc, nr, pb.data(), par);
          // Padding columns of the last panel are zero.
          const int64_t panels = (pc + nr - 1) / nr;
          for (int64_t r = 0; r < kdim; ++r) {
            for (int64_t q = pc; q < panels * nr; ++q) {
              REQUIRE(pb[(panels - 1) * kdim * nr + r * nr + (q - (panels - 1) * nr)] == 0.0f);
            }
          }
          GemmPackedABF32(*pa, pb.data(), nr, pc, 1.0f, 0.0f, got.data() + p0, P, par, e);
        }
        CHECK(SameBits(got, want));
        if (ConvDirectApplies(g, p.channels)) {
          std::vector<float> direct(static_cast<size_t>(p.out_channels * P), -7.0f);
          REQUIRE(ConvDirectF32(g, x.data(), p.channels, *pa, e.row_bias, direct.data(), par));
          CHECK(SameBits(direct, want));
        }
      }
      // Packed B for another nr is repacked (same results).
      if (rep % 8 == 1) {
        const int64_t other = nr == 48 ? 16 : 48;
        std::vector<float> pb(static_cast<size_t>(kdim * ((P + other - 1) / other * other)));
        Im2ColPackedF32(g, x.data(), p.channels, 0, P, other, pb.data(), SerialParallel());
        std::vector<float> got(static_cast<size_t>(p.out_channels * P), -7.0f);
        GemmPackedABF32(*pa, pb.data(), other, P, 1.0f, 0.0f, got.data(), P, SerialParallel(), e);
        CHECK(SameBits(got, want));
      }
    }
  }
}

TEST_CASE("ConvDirectF32 on large images (row-interleaved copy) equals im2col + GEMM bitwise") {
  std::mt19937 rng(19);
  struct Case {
    int64_t channels, in_h, in_w, stride, out_channels;
  };
  // 16 channels x 1 phase and 8 channels x 4 stride phases, both above the interleaving size.
  for (const Case c : {Case{16, 256, 258, 1, 9}, Case{8, 520, 523, 2, 5}}) {
    CAPTURE(c.channels);
    CAPTURE(c.stride);
    ConvGeometry g;
    g.rank = 2;
    for (int d = 0; d < 2; ++d) {
      g.in[d] = d == 0 ? c.in_h : c.in_w;
      g.kernel[d] = 3;
      g.stride[d] = c.stride;
      g.pad[d] = 1;
      g.out[d] = (g.in[d] + 2 - 3) / c.stride + 1;
    }
    REQUIRE(ConvDirectApplies(g, c.channels));
    const int64_t kdim = c.channels * 9, P = g.OutSize();
    const auto x = RandomVector(rng, c.channels * g.InSize());
    const auto w = RandomVector(rng, c.out_channels * kdim);
    const auto bias = RandomVector(rng, c.out_channels);
    const auto pa = PackedAF32::Pack(false, c.out_channels, kdim, w.data(), kdim);
    GemmEpilogue e;
    e.row_bias = bias.data();
    std::vector<float> col(static_cast<size_t>(kdim * P));
    Im2ColF32(g, x.data(), c.channels, 0, P, col.data(), SerialParallel());
    std::vector<float> want(static_cast<size_t>(c.out_channels * P));
    GemmPackedAF32(*pa, false, P, 1.0f, col.data(), P, 0.0f, want.data(), P, SerialParallel(), e);
    ReverseParallel reverse;
    std::vector<float> got(static_cast<size_t>(c.out_channels * P), -7.0f);
    REQUIRE(ConvDirectF32(g, x.data(), c.channels, *pa, bias.data(), got.data(), reverse));
    CHECK(SameBits(got, want));
  }
}

TEST_CASE("ConvPointwiseInPlaceF32 reads x in place and equals the packed GEMM bitwise") {
  std::mt19937 rng(17);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    // Widths that are whole vectors on every target (16, 32, 64) and ones that are not.
    for (int64_t width : {16, 32, 64, 20, 7}) {
      for (int64_t channels : {1, 5, 24}) {
        CAPTURE(width);
        CAPTURE(channels);
        ConvGeometry g;
        g.rank = 2;
        g.in[0] = g.out[0] = 3;
        g.in[1] = g.out[1] = width;
        const int64_t P = g.OutSize(), cout = 11;
        const auto x = RandomVector(rng, channels * P);
        const auto w = RandomVector(rng, cout * channels);
        const auto bias = RandomVector(rng, cout);
        const auto pa = PackedAF32::Pack(false, cout, channels, w.data(), channels);
        GemmEpilogue e;
        e.row_bias = bias.data();
        std::vector<float> want(static_cast<size_t>(cout * P), -7.0f);
        GemmPackedAF32(*pa, false, P, 1.0f, x.data(), P, 0.0f, want.data(), P, SerialParallel(),
                       e);
        ReverseParallel reverse;
        std::vector<float> got(static_cast<size_t>(cout * P), -7.0f);
        const bool ran =
            ConvPointwiseInPlaceF32(g, x.data(), channels, *pa, bias.data(), got.data(), reverse);
        if (width % 16 == 0) CHECK(ran);   // whole vectors on every target
        if (width % 4 != 0) CHECK(!ran);   // a partial vector on every target
        if (ran) CHECK(SameBits(got, want));
        if (!ran) CHECK(got == std::vector<float>(got.size(), -7.0f));  // nothing written
      }
    }
  }
}

TEST_CASE("ConvPointwiseInPlace16 widens x as it loads: bitwise the float32 kernel on widened x") {
  // (WebAssembly: no AVX target, so float16 never runs in place there.)
  std::mt19937 rng(23);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
      CAPTURE(static_cast<int>(kind));
      for (int64_t width : {16, 32, 64, 20, 7}) {
        for (int64_t channels : {1, 5, 24}) {
          CAPTURE(width);
          CAPTURE(channels);
          ConvGeometry g;
          g.rank = 2;
          g.in[0] = g.out[0] = 3;
          g.in[1] = g.out[1] = width;
          const int64_t P = g.OutSize(), cout = 11;
          const auto xf = RandomVector(rng, channels * P);
          std::vector<uint16_t> x16(xf.size());
          Narrow16(kind, xf.data(), x16.data(), xf.size());
          std::vector<float> widened(xf.size());
          Widen16(kind, x16.data(), widened.data(), xf.size());
          const auto w = RandomVector(rng, cout * channels);
          const auto bias = RandomVector(rng, cout);
          const auto pa = PackedAF32::Pack(false, cout, channels, w.data(), channels);
          ReverseParallel reverse;
          std::vector<float> want(static_cast<size_t>(cout * P), -7.0f);
          const bool ran_f32 = ConvPointwiseInPlaceF32(g, widened.data(), channels, *pa,
                                                       bias.data(), want.data(), reverse);
          std::vector<float> got(static_cast<size_t>(cout * P), -7.0f);
          const bool ran = ConvPointwiseInPlace16(kind, g, x16.data(), channels, *pa,
                                                  bias.data(), got.data(), reverse);
          // The same rule (rows of whole vectors), except float16 where the target converts
          // in software (the caller's GEMM then widens x once).
          const bool hardware_half = t.name.rfind("AVX", 0) == 0;
          CHECK(ran == (ran_f32 && (kind == Float16Kind::kBFloat16 || hardware_half)));
          if (ran) CHECK(SameBits(got, want));
        }
      }
    }
  }
}

TEST_CASE("DepthwiseConvFrom16 widens x as it reads it: bitwise DepthwiseConvF32 on widened x") {
  // Geometries of the AVX-512 paths that widen as they load (square 3x3 / 5x5 at stride 1 / 2
  // read from x directly; 3 or 5 columns under another kernel height through the aligned plane)
  // and others (widened per channel first), rows narrower than a vector and wider than several,
  // pads 0-2, multipliers 1-2; some inputs are arbitrary 16-bit patterns (NaN, Inf, subnormals).
  std::mt19937 rng(29);
  struct Shape {
    int64_t k, kh, stride, dil;
  };
  const Shape shapes[] = {{3, 3, 1, 1}, {3, 3, 2, 1}, {5, 5, 1, 1}, {5, 5, 2, 1},
                          {3, 1, 1, 1}, {5, 3, 2, 1}, {3, 3, 1, 2}, {2, 2, 3, 1}};
  for (const Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
    for (const Shape& sh : shapes) {
      for (int64_t width : {5, 16, 28, 47, 70}) {
        for (int64_t pad : {0, 1, 2}) {
          const int64_t height = 3 + width % 7, reach = (sh.k - 1) * sh.dil + 1;
          const int64_t reach_h = (sh.kh - 1) * sh.dil + 1;
          if (height + 2 * pad < reach_h || width + 2 * pad < reach) continue;
          const int64_t mult = 1 + width % 2;
          CAPTURE(static_cast<int>(kind));
          CAPTURE(sh.k);
          CAPTURE(sh.kh);
          CAPTURE(sh.stride);
          CAPTURE(sh.dil);
          CAPTURE(width);
          CAPTURE(pad);
          ConvRefParams p;
          p.in = {height, width};
          p.kernel = {sh.kh, sh.k};
          p.stride = {sh.stride, sh.stride};
          p.dilation = {sh.dil, sh.dil};
          p.pad_begin = {pad, pad};
          p.out = {(height + 2 * pad - reach_h) / sh.stride + 1,
                   (width + 2 * pad - reach) / sh.stride + 1};
          const ConvGeometry g = ToGeometry(p);
          const int64_t channels = 3;
          const auto xf = RandomVector(rng, channels * g.InSize());
          std::vector<uint16_t> x16(xf.size());
          Narrow16(kind, xf.data(), x16.data(), xf.size());
          for (auto& bits : x16) {
            if (rng() % 16 == 0) bits = static_cast<uint16_t>(rng());
          }
          std::vector<float> widened(xf.size());
          Widen16(kind, x16.data(), widened.data(), xf.size());
          const auto w = RandomVector(rng, channels * mult * g.KernelSize());
          const auto bias = RandomVector(rng, channels * mult);
          const size_t out = static_cast<size_t>(channels * mult * g.OutSize());
          for (const auto& t : CompiledTargets()) {
            ScopedTarget st(t);
            CAPTURE(t.name);
            std::vector<float> want(out, -7.0f), got(out, -7.0f);
            DepthwiseConvF32(g, widened.data(), channels, mult, w.data(), bias.data(),
                             want.data(), SerialParallel());
            DepthwiseConvFrom16(g, kind, x16.data(), channels, mult, w.data(), bias.data(),
                                got.data(), SerialParallel());
            CHECK(SameBits(got, want));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
