// Tests for graph/ops/spatial.cc: RoiAlign, GridSample, Col2Im, CenterCropPad and AffineGrid
// against direct per-output-element references written here from the spec, plus error cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_test_util.h"
#include "tests/graph/ops/float16_compare.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

// RunNode options for an opset (designated initializers would leave members unnamed).
RunNodeOptions Opset(int64_t v, std::vector<int> constant_inputs = {}) {
  RunNodeOptions o;
  o.opset = v;
  o.constant_inputs = std::move(constant_inputs);
  return o;
}

void CheckClose(const Tensor& y, const std::vector<double>& ref, double tol = 1e-4) {
  REQUIRE(static_cast<size_t>(y.num_elements()) == ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    CAPTURE(i);
    REQUIRE(std::fabs(y.data<float>()[i] - ref[i]) <= tol * (1 + std::fabs(ref[i])));
  }
}

// ---- RoiAlign reference: bilinear sample per the spec (samples beyond [-1, size] are 0). ----
double Bilinear(const float* img, int64_t H, int64_t W, double y, double x, bool max_mode) {
  if (y < -1 || y > H || x < -1 || x > W) return 0;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - y0, lx = x - x0;
  const double v[4] = {(1 - ly) * (1 - lx) * img[y0 * W + x0], (1 - ly) * lx * img[y0 * W + x1],
                       ly * (1 - lx) * img[y1 * W + x0], ly * lx * img[y1 * W + x1]};
  if (max_mode) return std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
  return v[0] + v[1] + v[2] + v[3];
}

TEST_CASE("RoiAlign against the direct reference") {
  const int64_t N = 2, C = 3, H = 7, W = 9;
  const Tensor x = RandomF32({N, C, H, W}, 21);
  const Tensor rois = F32({4, 4}, {0.5f, 1.0f, 6.0f, 5.5f, 2.f, 0.f, 3.f, 2.f, -1.f, -2.f, 12.f,
                                   10.f, 4.f, 3.f, 4.2f, 3.1f});
  const Tensor bi = I64({4}, {0, 1, 1, 0});
  for (const std::string ct : {"half_pixel", "output_half_pixel"}) {
    for (const std::string mode : {"avg", "max"}) {
      for (int64_t sr : {0, 2}) {
        for (float scale : {1.0f, 0.5f}) {
          CAPTURE(ct);
          CAPTURE(mode);
          CAPTURE(sr);
          CAPTURE(scale);
          const int64_t oh = 3, ow = 4;
          const Tensor y =
              RunNode("RoiAlign", {x, rois, bi},
                      {AttrString("coordinate_transformation_mode", ct), AttrString("mode", mode),
                       AttrInt("output_height", oh), AttrInt("output_width", ow),
                       AttrInt("sampling_ratio", sr), AttrFloat("spatial_scale", scale)},
                      Opset(16))[0];
          REQUIRE(y.dims() == Dims{4, C, oh, ow});
          std::vector<double> ref;
          const double off = ct == "half_pixel" ? 0.5 : 0.0;
          for (int64_t r = 0; r < 4; ++r) {
            const float* rr = rois.data<float>() + r * 4;
            const double sw = rr[0] * scale - off, sh = rr[1] * scale - off;
            double rw = rr[2] * scale - off - sw, rh = rr[3] * scale - off - sh;
            if (ct != "half_pixel") {
              rw = std::max(rw, 1.0);
              rh = std::max(rh, 1.0);
            }
            const double bh = rh / oh, bw = rw / ow;
            const int64_t gh = sr > 0 ? sr : static_cast<int64_t>(std::ceil(rh / oh));
            const int64_t gw = sr > 0 ? sr : static_cast<int64_t>(std::ceil(rw / ow));
            for (int64_t c = 0; c < C; ++c) {
              const float* img = x.data<float>() + (bi.data<int64_t>()[r] * C + c) * H * W;
              for (int64_t ph = 0; ph < oh; ++ph) {
                for (int64_t pw = 0; pw < ow; ++pw) {
                  double acc = mode == "max" ? -1e30 : 0;
                  for (int64_t iy = 0; iy < gh; ++iy) {
                    for (int64_t ix = 0; ix < gw; ++ix) {
                      const double yy = sh + ph * bh + (iy + 0.5) * bh / gh;
                      const double xx = sw + pw * bw + (ix + 0.5) * bw / gw;
                      const double v = Bilinear(img, H, W, yy, xx, mode == "max");
                      acc = mode == "max" ? std::max(acc, v) : acc + v;
                    }
                  }
                  ref.push_back(mode == "max" ? acc : acc / std::max<int64_t>(gh * gw, 1));
                }
              }
            }
          }
          CheckClose(y, ref, 1e-4);
        }
      }
    }
  }
  CHECK_THROWS_AS(RunNode("RoiAlign", {x, rois, I64({4}, {0, 2, 0, 0})}), Error);
  CHECK_THROWS_AS(RunNode("RoiAlign", {x, rois, I64({3}, {0, 1, 0})}), Error);
  CHECK_THROWS_AS(RunNode("RoiAlign", {x, rois, bi}, {AttrString("mode", "min")}), Error);
}

// ---- GridSample reference ----
double Reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (rng <= 0) return lo;
  while (x < lo || x > hi) x = x < lo ? 2 * lo - x : 2 * hi - x;
  return x;
}

double Cubic(double d) {
  const double a = -0.75;
  d = std::abs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

TEST_CASE("GridSample against the direct reference (2-D and 3-D)") {
  for (int rank : {2, 3}) {
    const Dims in = rank == 2 ? Dims{4, 5} : Dims{3, 4, 5};
    const Dims outsp = rank == 2 ? Dims{3, 6} : Dims{2, 3, 4};
    Dims xd = {2, 2}, gd = {2};
    xd.insert(xd.end(), in.begin(), in.end());
    gd.insert(gd.end(), outsp.begin(), outsp.end());
    gd.push_back(rank);
    const Tensor x = RandomF32(xd, 31);
    const Tensor grid = RandomF32(gd, 32, -1.4f, 1.4f);
    for (const std::string mode : {"linear", "nearest", "cubic"}) {
      if (mode == "cubic" && rank == 3) continue;
      for (const std::string pad : {"zeros", "border", "reflection"}) {
        for (int ac : {0, 1}) {
          CAPTURE(rank);
          CAPTURE(mode);
          CAPTURE(pad);
          CAPTURE(ac);
          const Tensor y = RunNode("GridSample", {x, grid},
                                   {AttrString("mode", mode), AttrString("padding_mode", pad),
                                    AttrInt("align_corners", ac)},
                                   Opset(20))[0];
          int64_t in_size = 1, out_size = 1;
          for (int s = 0; s < rank; ++s) {
            in_size *= in[s];
            out_size *= outsp[s];
          }
          std::vector<double> ref;
          for (int64_t n = 0; n < 2; ++n) {
            for (int64_t c = 0; c < 2; ++c) {
              const float* img = x.data<float>() + (n * 2 + c) * in_size;
              for (int64_t p = 0; p < out_size; ++p) {
                const float* g = grid.data<float>() + (n * out_size + p) * rank;
                std::vector<std::vector<std::pair<int64_t, double>>> taps(rank);
                for (int s = 0; s < rank; ++s) {
                  const int64_t len = in[s];
                  const double gv = g[rank - 1 - s];
                  double cc = ac ? (gv + 1) / 2 * (len - 1) : ((gv + 1) * len - 1) / 2;
                  const double lo = ac ? 0 : -0.5, hi = ac ? len - 1 : len - 0.5;
                  if (mode == "nearest") cc = std::nearbyint(cc);  // half to even
                  if (cc < lo || cc > hi) {
                    if (pad == "border") cc = std::min(std::max(cc, 0.0), len - 1.0);
                    if (pad == "reflection") cc = Reflect(cc, lo, hi);
                  }
                  auto fix = [&](int64_t i) -> int64_t {
                    if (i >= 0 && i < len) return i;
                    if (pad == "zeros") return -1;
                    if (pad == "border") return std::min<int64_t>(std::max<int64_t>(i, 0), len - 1);
                    return static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi));
                  };
                  if (mode == "nearest") {
                    taps[s].push_back({fix(static_cast<int64_t>(cc)), 1.0});
                  } else {
                    const double f = std::floor(cc);
                    if (mode == "linear") {
                      taps[s].push_back({fix(static_cast<int64_t>(f)), 1 - (cc - f)});
                      taps[s].push_back({fix(static_cast<int64_t>(f) + 1), cc - f});
                    } else {
                      for (int k = -1; k <= 2; ++k) {
                        taps[s].push_back({fix(static_cast<int64_t>(f) + k), Cubic(f + k - cc)});
                      }
                    }
                  }
                }
                double acc = 0;
                const size_t nt = taps[0].size();
                size_t combos = 1;
                for (int s = 0; s < rank; ++s) combos *= nt;
                for (size_t t = 0; t < combos; ++t) {
                  size_t rem = t;
                  int64_t idx = 0;
                  double w = 1;
                  bool zero = false;
                  for (int s = rank - 1; s >= 0; --s) {
                    const auto& tp = taps[s][rem % nt];
                    rem /= nt;
                    w *= tp.second;
                    if (tp.first < 0) zero = true;
                  }
                  if (zero) continue;
                  rem = t;
                  std::vector<int64_t> ii(rank);
                  for (int s = rank - 1; s >= 0; --s) {
                    ii[s] = taps[s][rem % nt].first;
                    rem /= nt;
                  }
                  for (int s = 0; s < rank; ++s) idx = idx * in[s] + ii[s];
                  acc += w * img[idx];
                }
                ref.push_back(acc);
              }
            }
          }
          CheckClose(y, ref, 1e-4);
        }
      }
    }
  }
  // Opset 16 names; errors.
  const Tensor x = RandomF32({1, 1, 3, 3}, 1), grid = RandomF32({1, 2, 2, 2}, 2);
  CHECK(RunNode("GridSample", {x, grid}, {AttrString("mode", "bicubic")}, Opset(16))[0].dims() ==
        Dims{1, 1, 2, 2});
  CHECK_THROWS_AS(RunNode("GridSample", {x, grid}, {AttrString("mode", "cubic")}, Opset(16)),
                  Error);
  CHECK_THROWS_AS(RunNode("GridSample", {x, RandomF32({1, 2, 2, 3}, 2)}, {}, Opset(20)), Error);
  CHECK_THROWS_AS(RunNode("GridSample", {x, grid}, {AttrString("padding_mode", "wrap")}), Error);
}

TEST_CASE("Col2Im against a direct reference") {
  // image 2-D [5, 6], block [2, 3], dilations [1, 2], strides [2, 1], pads [1, 0, 0, 1].
  const std::vector<int64_t> image = {5, 6}, block = {2, 3}, dil = {1, 2}, st = {2, 1},
                             pads = {1, 0, 0, 1};
  std::vector<int64_t> grid(2);
  for (int d = 0; d < 2; ++d) {
    grid[d] = (image[d] + pads[d] + pads[d + 2] - ((block[d] - 1) * dil[d] + 1)) / st[d] + 1;
  }
  const int64_t C = 2, L = grid[0] * grid[1], K = block[0] * block[1];
  const Tensor x = RandomF32({1, C * K, L}, 41);
  const Tensor y =
      RunNode("Col2Im", {x, I64({2}, image), I64({2}, block)},
              {AttrInts("dilations", dil), AttrInts("strides", st), AttrInts("pads", pads)})[0];
  REQUIRE(y.dims() == Dims{1, C, 5, 6});
  std::vector<double> ref(static_cast<size_t>(C * 30), 0.0);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t k0 = 0; k0 < block[0]; ++k0) {
      for (int64_t k1 = 0; k1 < block[1]; ++k1) {
        for (int64_t l = 0; l < L; ++l) {
          const int64_t i0 = (l / grid[1]) * st[0] - pads[0] + k0 * dil[0];
          const int64_t i1 = (l % grid[1]) * st[1] - pads[1] + k1 * dil[1];
          if (i0 < 0 || i0 >= image[0] || i1 < 0 || i1 >= image[1]) continue;
          ref[(c * 5 + i0) * 6 + i1] += x.data<float>()[((c * K) + k0 * block[1] + k1) * L + l];
        }
      }
    }
  }
  CheckClose(y, ref);
  CHECK_THROWS_AS(RunNode("Col2Im", {x, I64({2}, image), I64({2}, {2, 2})}), Error);
  CHECK_THROWS_AS(RunNode("Col2Im", {x, I64({2}, image), I64({1}, {2})}), Error);
}

TEST_CASE("CenterCropPad crops and pads around the centre") {
  const Tensor x = RandomF32({5, 4, 3}, 51);
  const Tensor y = RunNode("CenterCropPad", {x, I64({3}, {2, 7, 3})})[0];
  REQUIRE(y.dims() == Dims{2, 7, 3});
  // Axis 0: crop 5 -> 2 starts at 1. Axis 1: pad 4 -> 7 puts 1 before.
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 7; ++j) {
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t sj = j - 1;
        const float want = sj < 0 || sj >= 4 ? 0.0f : x.data<float>()[((i + 1) * 4 + sj) * 3 + k];
        CHECK(y.data<float>()[(i * 7 + j) * 3 + k] == want);
      }
    }
  }
  const Tensor y2 = RunNode("CenterCropPad", {x, I64({2}, {3, 1})}, {AttrInts("axes", {-1, 0})})[0];
  REQUIRE(y2.dims() == Dims{1, 4, 3});
  for (int64_t j = 0; j < 4; ++j) {
    for (int64_t k = 0; k < 3; ++k) {
      CHECK(y2.data<float>()[j * 3 + k] == x.data<float>()[(2 * 4 + j) * 3 + k]);
    }
  }
  CHECK_THROWS_AS(RunNode("CenterCropPad", {x, I64({2}, {1, 2})}), Error);
}

TEST_CASE("AffineGrid 2-D and 3-D") {
  for (int ac : {0, 1}) {
    const Tensor theta = RandomF32({2, 2, 3}, 61);
    const Tensor g = RunNode("AffineGrid", {theta, I64({4}, {2, 3, 4, 5})},
                             {AttrInt("align_corners", ac)}, Opset(20))[0];
    REQUIRE(g.dims() == Dims{2, 4, 5, 2});
    auto base = [ac](int64_t i, int64_t n) {
      return ac ? (n == 1 ? -1.0 : -1.0 + 2.0 * i / (n - 1)) : (2.0 * i + 1) / n - 1;
    };
    std::vector<double> ref;
    for (int64_t n = 0; n < 2; ++n) {
      const float* t = theta.data<float>() + n * 6;
      for (int64_t h = 0; h < 4; ++h) {
        for (int64_t w = 0; w < 5; ++w) {
          const double xv = base(w, 5), yv = base(h, 4);
          ref.push_back(t[0] * xv + t[1] * yv + t[2]);
          ref.push_back(t[3] * xv + t[4] * yv + t[5]);
        }
      }
    }
    CheckClose(g, ref, 1e-5);
    const Tensor theta3 = RandomF32({1, 3, 4}, 62);
    const Tensor g3 = RunNode("AffineGrid", {theta3, I64({5}, {1, 1, 2, 3, 4})},
                              {AttrInt("align_corners", ac)}, Opset(20))[0];
    REQUIRE(g3.dims() == Dims{1, 2, 3, 4, 3});
    std::vector<double> ref3;
    const float* t = theta3.data<float>();
    for (int64_t d = 0; d < 2; ++d) {
      for (int64_t h = 0; h < 3; ++h) {
        for (int64_t w = 0; w < 4; ++w) {
          const double v[3] = {base(w, 4), base(h, 3), base(d, 2)};
          for (int r = 0; r < 3; ++r) {
            ref3.push_back(t[r * 4] * v[0] + t[r * 4 + 1] * v[1] + t[r * 4 + 2] * v[2] +
                           t[r * 4 + 3]);
          }
        }
      }
    }
    CheckClose(g3, ref3, 1e-5);
  }
  CHECK_THROWS_AS(
      RunNode("AffineGrid", {RandomF32({2, 2, 3}, 1), I64({4}, {1, 3, 4, 5})}, {}, Opset(20)),
      Error);
}

// ---- float16 / bfloat16: each output is the float32 result on the widened inputs rounded once
// (tolerance formula in tests/graph/ops/float16_compare.h: |y16 - ref| <= eps16 * max(|ref|,
// min_normal16), eps16 = 2^-10 for float16, 2^-7 for bfloat16).

TEST_CASE("RoiAlign float16 / bfloat16") {
  const Tensor x = RandomF32({2, 3, 7, 9}, 121, -2.0f, 2.0f);
  const Tensor rois = F32({3, 4}, {0.5f, 1.0f, 6.0f, 5.5f, 2.f, 0.f, 3.f, 2.f, -1.f, -2.f, 12.f, 10.f});
  const Tensor bi = I64({3}, {0, 1, 1});
  for (const std::string mode : {"avg", "max"}) {
    const std::vector<graph::Attribute> attrs = {AttrString("mode", mode),
                                                 AttrInt("output_height", 3),
                                                 AttrInt("output_width", 4),
                                                 AttrFloat("spatial_scale", 0.75f)};
    f16::Check16Both("RoiAlign", {x, rois, bi}, attrs, f16::Opts(22));
    f16::Check16Both("RoiAlign", {x, rois, bi}, attrs, f16::Opts(22, {1}));  // constant rois
    f16::Check16(DType::kFloat16, "RoiAlign", {x, rois, bi}, attrs, f16::Opts(16));
  }
  // bfloat16 entered RoiAlign's type constraint in opset 22.
  CHECK_THROWS_AS(RunNode("RoiAlign", {f16::To16(x, DType::kBFloat16),
                                       f16::To16(rois, DType::kBFloat16), bi},
                          {}, Opset(16)),
                  Error);
}

TEST_CASE("GridSample float16 / bfloat16") {
  const Tensor x = RandomF32({2, 3, 4, 5}, 131, -2.0f, 2.0f);
  const Tensor grid = RandomF32({2, 3, 6, 2}, 132, -1.2f, 1.2f);
  for (const std::string mode : {"linear", "nearest", "cubic"}) {
    for (const std::string pad : {"zeros", "border", "reflection"}) {
      CAPTURE(mode);
      CAPTURE(pad);
      const std::vector<graph::Attribute> attrs = {AttrString("mode", mode),
                                                   AttrString("padding_mode", pad),
                                                   AttrInt("align_corners", pad == "border")};
      f16::Check16Both("GridSample", {x, grid}, attrs, f16::Opts(22));
    }
  }
  f16::Check16Both("GridSample", {x, grid}, {}, f16::Opts(22, {1}));  // constant grid
  f16::Check16(DType::kFloat16, "GridSample", {x, grid}, {AttrString("mode", "bilinear")},
               f16::Opts(16));
  // 3-D (opset 20+).
  f16::Check16Both("GridSample",
                   {RandomF32({1, 2, 3, 4, 5}, 133), RandomF32({1, 2, 3, 2, 3}, 134, -1.1f, 1.1f)},
                   {}, f16::Opts(22));
  CHECK_THROWS_AS(RunNode("GridSample", {f16::To16(x, DType::kBFloat16),
                                         f16::To16(grid, DType::kBFloat16)},
                          {}, Opset(20)),
                  Error);
}

TEST_CASE("Col2Im float16 / bfloat16") {
  // Same geometry as the float32 test: image [5, 6], block [2, 3], overlapping blocks (sums).
  const std::vector<int64_t> image = {5, 6}, block = {2, 3}, dil = {1, 2}, st = {2, 1},
                             pads = {1, 0, 0, 1};
  const int64_t L = 3 * 3, C = 2, K = 6;
  const Tensor x = RandomF32({2, C * K, L}, 141, -2.0f, 2.0f);
  const std::vector<graph::Attribute> attrs = {AttrInts("dilations", dil), AttrInts("strides", st),
                                               AttrInts("pads", pads)};
  f16::Check16Both("Col2Im", {x, I64({2}, image), I64({2}, block)}, attrs, f16::Opts(18, {1, 2}));
  f16::Check16Both("Col2Im", {x, I64({2}, image), I64({2}, block)}, attrs,
                   f16::Opts(18, {0, 1, 2}));  // constant input
}

TEST_CASE("AffineGrid float16 / bfloat16") {
  for (int ac : {0, 1}) {
    CAPTURE(ac);
    f16::Check16Both("AffineGrid", {RandomF32({2, 2, 3}, 151), I64({4}, {2, 3, 4, 5})},
                     {AttrInt("align_corners", ac)}, f16::Opts(20, {1}));
    f16::Check16Both("AffineGrid", {RandomF32({1, 3, 4}, 152), I64({5}, {1, 2, 3, 4, 5})},
                     {AttrInt("align_corners", ac)}, f16::Opts(20, {0, 1}));  // constant theta
  }
}

}  // namespace
}  // namespace simplecpp::testing
