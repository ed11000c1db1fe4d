// Tests for graph/ops/deform_conv.cc: DeformConv against a scalar reference written here (direct
// loops, bilinear sampling with zero outside the image) over odd shapes, strides, dilations,
// asymmetric pads, groups, offset groups, mask and bias; zero offsets equal Conv; float16; shape
// and attribute errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "graph/op_test_options.h"
#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"
#include "kernels/float16/float16.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

using tensor_test::ErrorCodeOf;

struct Cfg {
  int64_t n, c, h, w, oc, kh, kw, group, og, sh, sw, dh, dw, pt, pl, pb, pr;
};

double Pixel(const float* plane, int64_t h, int64_t w, int64_t y, int64_t x) {
  return (y < 0 || y >= h || x < 0 || x >= w) ? 0.0 : plane[y * w + x];
}

double Bilinear(const float* plane, int64_t h, int64_t w, double y, double x) {
  const double y0 = std::floor(y), x0 = std::floor(x);
  const double ly = y - y0, lx = x - x0;
  const int64_t iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
  return (1 - ly) * (1 - lx) * Pixel(plane, h, w, iy, ix) + (1 - ly) * lx * Pixel(plane, h, w, iy, ix + 1) +
         ly * (1 - lx) * Pixel(plane, h, w, iy + 1, ix) + ly * lx * Pixel(plane, h, w, iy + 1, ix + 1);
}

std::vector<double> Reference(const Cfg& g, const Tensor& x, const Tensor& wt, const Tensor& off,
                              const Tensor* bias, const Tensor* mask, int64_t oh, int64_t ow) {
  const int64_t cg = g.c / g.group, ocg = g.oc / g.group, cpo = g.c / g.og;
  std::vector<double> y(static_cast<size_t>(g.n * g.oc * oh * ow), 0.0);
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t o = 0; o < g.oc; ++o)
      for (int64_t yo = 0; yo < oh; ++yo)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = bias ? bias->data<float>()[o] : 0.0;
          const int64_t grp = o / ocg;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t c = grp * cg + ci, ogi = c / cpo;
            const float* plane = x.data<float>() + (b * g.c + c) * g.h * g.w;
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                const int64_t tap = i * g.kw + j;
                auto at = [&](const Tensor& t, int64_t ch) {
                  return static_cast<double>(
                      t.data<float>()[((b * t.dims()[1] + ch) * oh + yo) * ow + xo]);
                };
                const double dy = at(off, (ogi * g.kh * g.kw + tap) * 2);
                const double dx = at(off, (ogi * g.kh * g.kw + tap) * 2 + 1);
                const double py = static_cast<double>(yo * g.sh - g.pt + i * g.dh) + dy;
                const double px = static_cast<double>(xo * g.sw - g.pl + j * g.dw) + dx;
                double v = Bilinear(plane, g.h, g.w, py, px);
                if (mask) v *= at(*mask, ogi * g.kh * g.kw + tap);
                acc += v * wt.data<float>()[((o * cg + ci) * g.kh + i) * g.kw + j];
              }
          }
          y[((b * g.oc + o) * oh + yo) * ow + xo] = acc;
        }
  return y;
}

void RunCase(const Cfg& g, bool with_bias, bool with_mask, uint32_t seed) {
  const int64_t oh = (g.h + g.pt + g.pb - ((g.kh - 1) * g.dh + 1)) / g.sh + 1;
  const int64_t ow = (g.w + g.pl + g.pr - ((g.kw - 1) * g.dw + 1)) / g.sw + 1;
  const Tensor x = RandomF32({g.n, g.c, g.h, g.w}, seed);
  const Tensor wt = RandomF32({g.oc, g.c / g.group, g.kh, g.kw}, seed + 1);
  // Offsets up to +-2.5 pixels: many samples fall partly or wholly outside the image.
  const Tensor off = RandomF32({g.n, g.og * g.kh * g.kw * 2, oh, ow}, seed + 2, -2.5f, 2.5f);
  const Tensor bias = RandomF32({g.oc}, seed + 3);
  const Tensor mask = RandomF32({g.n, g.og * g.kh * g.kw, oh, ow}, seed + 4, 0.0f, 1.0f);
  std::vector<graph::Attribute> attrs = {
      AttrInt("group", g.group), AttrInt("offset_group", g.og), AttrInts("strides", {g.sh, g.sw}),
      AttrInts("dilations", {g.dh, g.dw}), AttrInts("pads", {g.pt, g.pl, g.pb, g.pr}),
      AttrInts("kernel_shape", {g.kh, g.kw})};
  std::vector<Tensor> in = {x, wt, off};
  if (with_bias || with_mask) in.push_back(with_bias ? bias : Tensor());
  if (with_mask) in.push_back(mask);
  for (int threads : {1, 3}) {
    auto out = RunNode("DeformConv", in, attrs, NodeOptions(19, threads));
    REQUIRE(out[0].dims() == Dims{g.n, g.oc, oh, ow});
    const std::vector<double> want = Reference(g, x, wt, off, with_bias ? &bias : nullptr,
                                               with_mask ? &mask : nullptr, oh, ow);
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(out[0].data<float>()[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(1.0));
    }
  }
}

TEST_CASE("DeformConv matches the scalar reference (odd shapes, groups, offset groups)") {
  RunCase({1, 1, 5, 4, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, false, false, 1);
  RunCase({2, 4, 7, 5, 6, 3, 2, 2, 2, 2, 1, 1, 2, 1, 0, 2, 1}, true, true, 11);
  RunCase({1, 6, 6, 9, 3, 2, 3, 3, 3, 1, 2, 2, 1, 0, 1, 1, 0}, true, false, 21);
  RunCase({3, 2, 3, 3, 5, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1}, false, true, 31);
}

TEST_CASE("DeformConv with zero offsets and no mask equals Conv") {
  const Tensor x = RandomF32({2, 4, 6, 7}, 5);
  const Tensor w = RandomF32({6, 2, 3, 3}, 6);
  const Tensor b = RandomF32({6}, 7);
  const std::vector<graph::Attribute> attrs = {AttrInt("group", 2), AttrInts("pads", {1, 1, 1, 1}),
                                               AttrInts("strides", {2, 1})};
  auto conv = RunNode("Conv", {x, w, b}, attrs);
  Tensor off(DType::kFloat32, {2, 18, 3, 7});
  for (int64_t i = 0; i < off.num_elements(); ++i) off.data<float>()[i] = 0.0f;
  auto deform = RunNode("DeformConv", {x, w, off, b}, attrs, NodeOptions(22));
  REQUIRE(deform[0].dims() == conv[0].dims());
  for (int64_t i = 0; i < conv[0].num_elements(); ++i) {
    CHECK(deform[0].data<float>()[i] == doctest::Approx(conv[0].data<float>()[i]).epsilon(1e-5));
  }
}

TEST_CASE("DeformConv float16") {
  const Tensor x = RandomF32({1, 2, 4, 4}, 1);
  const Tensor w = RandomF32({2, 2, 2, 2}, 2);
  const Tensor off = RandomF32({1, 8, 3, 3}, 3, -1.0f, 1.0f);
  auto to16 = [](const Tensor& t) {
    Tensor h(DType::kFloat16, t.dims());
    for (int64_t i = 0; i < t.num_elements(); ++i)
      h.data<uint16_t>()[i] = kernels::FloatToHalfBits(t.data<float>()[i]);
    return h;
  };
  auto back = [](const Tensor& h) {
    Tensor t(DType::kFloat32, h.dims());
    for (int64_t i = 0; i < h.num_elements(); ++i)
      t.data<float>()[i] = kernels::HalfBitsToFloat(h.data<uint16_t>()[i]);
    return t;
  };
  const Tensor x16 = to16(x), w16 = to16(w), off16 = to16(off);
  auto ref = RunNode("DeformConv", {back(x16), back(w16), back(off16)}, {}, NodeOptions(19));
  auto out = RunNode("DeformConv", {x16, w16, off16}, {}, NodeOptions(19));
  REQUIRE(out[0].dtype() == DType::kFloat16);
  for (int64_t i = 0; i < ref[0].num_elements(); ++i) {
    CHECK(kernels::HalfBitsToFloat(out[0].data<uint16_t>()[i]) ==
          doctest::Approx(ref[0].data<float>()[i]).epsilon(2e-3).scale(1.0));
  }
}

TEST_CASE("DeformConv errors") {
  const Tensor x = RandomF32({1, 4, 5, 5}, 1);
  const Tensor w = RandomF32({2, 4, 3, 3}, 2);
  const Tensor off = RandomF32({1, 18, 3, 3}, 3);
  const int invalid_arg = static_cast<int>(ErrorCode::kInvalidArgument);
  CHECK(ErrorCodeOf([&] { RunNode("DeformConv", {x, w, off}, {}, NodeOptions(19)); }) == 0);
  // Offset with the wrong channel count / spatial size.
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, RandomF32({1, 16, 3, 3}, 3)}, {}, NodeOptions(19));
        }) == invalid_arg);
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, RandomF32({1, 18, 4, 3}, 3)}, {}, NodeOptions(19));
        }) == invalid_arg);
  // Channels vs group, offset_group not dividing C, bias and mask shapes, kernel_shape mismatch.
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, off}, {AttrInt("group", 2)}, NodeOptions(19));
        }) == invalid_arg);
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, RandomF32({1, 54, 3, 3}, 3)}, {AttrInt("offset_group", 3)},
                  NodeOptions(19));
        }) == invalid_arg);
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, off, RandomF32({3}, 4)}, {}, NodeOptions(19));
        }) == invalid_arg);
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, off, Tensor(), RandomF32({1, 9, 3, 2}, 4)}, {},
                  NodeOptions(19));
        }) == invalid_arg);
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, off}, {AttrInts("kernel_shape", {2, 2})}, NodeOptions(19));
        }) == invalid_arg);
  // Kernel larger than the padded input; bad attributes; 1-D input (not implemented).
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {RandomF32({1, 4, 2, 5}, 1), w, off}, {}, NodeOptions(19));
        }) == invalid_arg);
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, off}, {AttrInt("group", 0)}, NodeOptions(19));
        }) == static_cast<int>(ErrorCode::kInvalidModel));
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv", {x, w, off}, {AttrInts("strides", {0, 1})}, NodeOptions(19));
        }) == static_cast<int>(ErrorCode::kInvalidModel));
  CHECK(ErrorCodeOf([&] {
          RunNode("DeformConv",
                  {RandomF32({1, 4, 5}, 1), RandomF32({2, 4, 3}, 2), RandomF32({1, 6, 3}, 3)}, {},
                  NodeOptions(19));
        }) == static_cast<int>(ErrorCode::kUnsupported));
}

}  // namespace
}  // namespace simplecpp::testing
