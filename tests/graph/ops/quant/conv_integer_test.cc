// Tests for graph/ops/quant/conv_integer.cc (ConvInteger) and QLinearConv (qlinear.cc)
// against a direct int64 convolution written here: 1-D/2-D/3-D, groups incl. depthwise, strides,
// dilations, explicit pads and auto_pad, scalar and per-channel w zero points, padded taps acting
// as x_zero_point, all signedness combinations, constant and run-time weights, errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/targets.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

Tensor Random8(DType t, Dims dims, uint32_t seed) {
  Tensor x(t, std::move(dims));
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(x.raw_data());
  for (int64_t i = 0; i < x.num_elements(); ++i) p[i] = static_cast<uint8_t>(rng());
  return x;
}
int32_t At8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

struct ConvSpec {
  Dims x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad = "NOTSET";
};

// Direct convolution; the padded input value is the x zero point (so it contributes 0).
std::vector<int64_t> RefConv(const ConvSpec& s, const Tensor& x, const Tensor& w, int32_t xzp,
                             const std::vector<int32_t>& wzp, Dims* out_dims) {
  const int rank = static_cast<int>(s.x.size()) - 2;
  int64_t in[3] = {1, 1, 1}, ker[3] = {1, 1, 1}, out[3] = {1, 1, 1}, st[3] = {1, 1, 1},
          dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
  *out_dims = {s.x[0], s.w[0]};
  for (int d = 0; d < rank; ++d) {
    const int o = 3 - rank + d;
    in[o] = s.x[2 + d];
    ker[o] = s.w[2 + d];
    st[o] = s.strides.empty() ? 1 : s.strides[d];
    dl[o] = s.dilations.empty() ? 1 : s.dilations[d];
    const int64_t ext = (ker[o] - 1) * dl[o] + 1;
    if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER") {
      out[o] = (in[o] + st[o] - 1) / st[o];
      const int64_t total = std::max<int64_t>(0, (out[o] - 1) * st[o] + ext - in[o]);
      pb[o] = s.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      const int64_t b = s.pads.empty() ? 0 : s.pads[d], e = s.pads.empty() ? 0 : s.pads[d + rank];
      pb[o] = b;
      out[o] = (in[o] + b + e - ext) / st[o] + 1;
    }
    out_dims->push_back(out[o]);
  }
  const int64_t n = s.x[0], c = s.x[1], m = s.w[0], cg = s.w[1], og = m / s.group;
  std::vector<int64_t> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / og;
      const int64_t wz = wzp.empty() ? 0 : wzp[wzp.size() == 1 ? 0 : oc];
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            int64_t acc = 0;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t k0 = 0; k0 < ker[0]; ++k0)
                for (int64_t k1 = 0; k1 < ker[1]; ++k1)
                  for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
                    const int64_t i0 = o0 * st[0] - pb[0] + k0 * dl[0];
                    const int64_t i1 = o1 * st[1] - pb[1] + k1 * dl[1];
                    const int64_t i2 = o2 * st[2] - pb[2] + k2 * dl[2];
                    const bool inside = i0 >= 0 && i0 < in[0] && i1 >= 0 && i1 < in[1] && i2 >= 0 && i2 < in[2];
                    const int64_t xv =
                        inside ? At8(x, (((b * c + g * cg + ic) * in[0] + i0) * in[1] + i1) * in[2] + i2) : xzp;
                    const int64_t wv = At8(w, (((oc * cg + ic) * ker[0] + k0) * ker[1] + k1) * ker[2] + k2);
                    acc += (xv - xzp) * (wv - wz);
                  }
            y.push_back(acc);
          }
    }
  return y;
}

std::vector<graph::Attribute> Attrs(const ConvSpec& s) {
  std::vector<graph::Attribute> a;
  if (s.group != 1) a.push_back(AttrInt("group", s.group));
  if (!s.strides.empty()) a.push_back(AttrInts("strides", s.strides));
  if (!s.dilations.empty()) a.push_back(AttrInts("dilations", s.dilations));
  if (!s.pads.empty()) a.push_back(AttrInts("pads", s.pads));
  if (s.auto_pad != "NOTSET") a.push_back(AttrString("auto_pad", s.auto_pad));
  return a;
}

const std::vector<ConvSpec>& Specs() {
  static const std::vector<ConvSpec> specs = {
      {{1, 3, 5, 5}, {4, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {{2, 4, 7, 6}, {6, 2, 3, 2}, 2, {2, 1}, {1, 2}, {0, 1, 2, 0}},
      {{1, 4, 6, 6}, {8, 1, 3, 3}, 4, {1, 1}, {}, {}, "SAME_UPPER"},  // depthwise x2
      {{1, 3, 6, 5}, {3, 1, 2, 2}, 3, {2, 2}, {}, {}, "SAME_LOWER"},  // depthwise
      {{2, 2, 9}, {3, 2, 4}, 1, {2}, {2}, {3, 1}},                    // 1-D
      {{1, 2, 4, 4, 3}, {2, 2, 2, 3, 2}, 1, {1, 2, 1}, {1, 1, 2}, {1, 0, 0, 0, 1, 1}},  // 3-D
      {{1, 1, 3, 3}, {1, 1, 1, 1}, 1, {}, {}, {}, "VALID"},                             // 1x1
      {{1, 2, 20, 20}, {5, 2, 3, 3}, 1, {1, 1}, {}, {1, 1, 1, 1}},  // several chunks' worth
      {{2, 4, 5, 3}, {6, 2, 1, 1}, 2, {}, {}, {}},                  // pointwise, grouped
      {{1, 3, 5, 5}, {4, 3, 1, 1}, 1, {2, 2}, {}, {}},              // 1x1 strided
      {{1, 5, 4, 4}, {3, 5, 1, 1}, 1, {}, {}, {1, 0, 0, 1}},        // 1x1 padded
      // Few output channels, many positions: the swapped GEMM (weights as A); 4 chunks of
      // positions (K = 576), and 2 groups.
      {{1, 64, 40, 40}, {8, 32, 3, 3}, 2, {}, {}, {1, 1, 1, 1}},
      {{1, 3, 33, 31}, {16, 3, 3, 3}, 1, {2, 1}, {1, 2}, {}},  // og = 16, strided
      {{1, 5, 33, 31}, {20, 5, 3, 3}, 1, {2, 1}, {1, 2}, {}},  // og = 20: a partial panel
      // Few input and output channels (a first layer): swapped, B from x's channels-first
      // im2col; stride 2 over rows long enough for vectors, several chunks, 2 images, groups.
      {{2, 3, 21, 150}, {8, 3, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}},
      {{1, 4, 13, 70}, {6, 2, 3, 3}, 2, {2, 2}, {}, {0, 1, 1, 0}},
      {{1, 1, 17, 40}, {4, 1, 5, 5}, 1, {1, 3}, {2, 1}, {2, 2, 2, 2}},
      // The benchmark CNN's shapes: 32 output channels from 3 input channels (K = 27, im2row
      // rows padded to 28 and read in place), 64 from 32 (two-panel VNNI tiles).
      {{1, 3, 18, 18}, {32, 3, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}},
      {{1, 32, 12, 12}, {64, 32, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      // Depthwise through the float32 kernel: 225 taps (float sums near the 2^24 bound), 1-D
      // dilated with a multiplier, a batch of 5x5 stride 2 with several tasks; 289 taps go
      // past the bound and take the GEMM.
      {{1, 6, 20, 21}, {6, 1, 15, 15}, 6, {}, {}, {7, 7, 7, 7}},
      {{1, 2, 30}, {4, 1, 5}, 2, {2}, {2}, {2, 2}},
      {{2, 16, 23, 19}, {16, 1, 5, 5}, 16, {2, 2}, {}, {2, 2, 2, 2}},
      {{1, 3, 20, 20}, {3, 1, 17, 17}, 3, {}, {}, {8, 8, 8, 8}},
      // Pointwise with up to 48 output channels per group: swapped, B packed straight from
      // x's channels-first rows (odd K, positions no multiple of 16, grouped).
      {{1, 37, 15, 17}, {24, 37, 1, 1}, 1, {}, {}, {}},
      {{2, 26, 9, 13}, {48, 13, 1, 1}, 2, {}, {}, {}},
      {{1, 20, 11, 11}, {40, 20, 1, 1}, 1, {}, {}, {}},
      // Output channels no multiple of 32: the last panel's tile multiplies 16 or 24 columns
      // (24, 40 = 32 + 8, 50 = 32 + 18, 56 = 32 + 24).
      {{1, 16, 12, 12}, {24, 16, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {{1, 8, 10, 10}, {40, 8, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {{1, 12, 8, 8}, {50, 12, 3, 3}, 1, {}, {}, {0, 1, 1, 0}},
      {{1, 8, 10, 10}, {56, 8, 1, 1}, 1, {}, {}, {}},
      // Pointwise with more than 48 output channels per group: swapped where the positions
      // fill their panels (2 x 96; 4 x 40, grouped), not where the last panel is mostly
      // padding (10 x 10 above, 14 x 14).
      {{1, 20, 2, 96}, {88, 20, 1, 1}, 1, {}, {}, {}},
      {{2, 18, 4, 40}, {104, 9, 1, 1}, 2, {}, {}, {}},
      {{1, 12, 14, 14}, {72, 12, 1, 1}, 1, {}, {}, {}},
  };
  return specs;
}

TEST_CASE("ConvInteger depthwise: the largest sums the float32 kernel takes stay exact") {
  // 256 taps of (x - x_zp) * (w - w_zp) = -255 * 255 each: -16646400, just under 2^24.
  for (DType t : {DType::kUInt8, DType::kInt8}) {
    CAPTURE(DTypeName(t));
    const bool s8 = t == DType::kInt8;
    const ConvSpec s{{1, 2, 16, 16}, {2, 1, 16, 16}, 2, {}, {}, {}};
    Tensor x(t, s.x), w(t, s.w), xz(t, {}), wz(t, {});
    std::fill_n(static_cast<uint8_t*>(x.raw_data()), x.num_elements(), s8 ? 0x80 : 0);  // -128 / 0
    std::fill_n(static_cast<uint8_t*>(w.raw_data()), w.num_elements(), s8 ? 0x7f : 0);  // 127 / 0
    *static_cast<uint8_t*>(xz.raw_data()) = s8 ? 0x7f : 255;                            // 127 / 255
    *static_cast<uint8_t*>(wz.raw_data()) = s8 ? 0x80 : 255;                            // -128 / 255
    RunNodeOptions opt;
    opt.opset = 10;
    for (const auto& target : kernels::CompiledTargets()) {
      kernels::ScopedTarget st(target);
      CAPTURE(target.name);
      auto out = RunNode("ConvInteger", {x, w, xz, wz}, Attrs(s), opt);
      REQUIRE(out[0].num_elements() == 2);
      CHECK(out[0].data<int32_t>()[0] == (s8 ? -16646400 : 16646400));
      CHECK(out[0].data<int32_t>()[1] == (s8 ? -16646400 : 16646400));
    }
  }
}

TEST_CASE("ConvInteger: geometry x signedness x zero points x constant weights") {
  uint32_t seed = 1;
  for (const ConvSpec& s : Specs()) {
    for (DType tx : {DType::kUInt8, DType::kInt8}) {
      for (DType tw : {DType::kUInt8, DType::kInt8}) {
        for (int zl = 0; zl < 3; ++zl) {
          CAPTURE(DimsToString(s.x)); CAPTURE(DimsToString(s.w)); CAPTURE(DTypeName(tx));
          CAPTURE(DTypeName(tw)); CAPTURE(zl);
          const Tensor x = Random8(tx, s.x, seed++);
          const Tensor w = Random8(tw, s.w, seed++);
          std::vector<Tensor> in = {x, w};
          int32_t xzp = 0;
          std::vector<int32_t> wzp;
          if (zl > 0) {
            const Tensor xz = Random8(tx, {}, seed++);
            const Tensor wz = Random8(tw, zl == 1 ? Dims{} : Dims{s.w[0]}, seed++);
            xzp = At8(xz, 0);
            for (int64_t i = 0; i < wz.num_elements(); ++i) wzp.push_back(At8(wz, i));
            in.push_back(xz);
            in.push_back(wz);
          }
          Dims dims;
          const auto want = RefConv(s, x, w, xzp, wzp, &dims);
          RunNodeOptions opt;
          opt.opset = 10;
          if (seed % 2) opt.constant_inputs = {1};
          opt.threads = 1 + static_cast<int>(seed % 3);  // blocks of positions as parallel tasks
          for (const auto& t : kernels::CompiledTargets()) {
            kernels::ScopedTarget st(t);
            CAPTURE(t.name);
            auto out = RunNode("ConvInteger", in, Attrs(s), opt);
            REQUIRE(out[0].dtype() == DType::kInt32);
            REQUIRE(out[0].dims() == dims);
            for (size_t i = 0; i < want.size(); ++i) {
              CAPTURE(i);
              REQUIRE(out[0].data<int32_t>()[i] == static_cast<int32_t>(want[i]));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("ConvInteger: errors") {
  const Tensor x = Random8(DType::kUInt8, {1, 2, 4, 4}, 1);
  const Tensor w = Random8(DType::kUInt8, {3, 2, 3, 3}, 2);
  // w zero point neither scalar nor [M].
  CHECK_THROWS_AS(RunNode("ConvInteger", {x, w, Tensor(), Random8(DType::kUInt8, {2}, 3)}, {}, {.opset = 10}), Error);
  // x zero point must be a scalar.
  CHECK_THROWS_AS(RunNode("ConvInteger", {x, w, Random8(DType::kUInt8, {2}, 3)}, {}, {.opset = 10}), Error);
  // Channel mismatch.
  CHECK_THROWS_AS(RunNode("ConvInteger", {x, Random8(DType::kUInt8, {3, 3, 3, 3}, 2)}, {}, {.opset = 10}), Error);
  // Bad auto_pad.
  CHECK_THROWS_AS(RunNode("ConvInteger", {x, w}, {AttrString("auto_pad", "FOO")}, {.opset = 10}), Error);
}

TEST_CASE("QLinearConv: per-tensor and per-channel w, bias, int8 and uint8") {
  uint32_t seed = 50;
  // Every geometry above, plus 40 output channels (not a multiple of the 16-byte transpose
  // blocks) over two chunks of 455 and 445 positions: the requantized chunk's edges.
  std::vector<ConvSpec> specs = Specs();
  specs.push_back({{1, 64, 30, 30}, {40, 64, 3, 3}, 1, {}, {}, {1, 1, 1, 1}});
  for (const ConvSpec& s : specs) {
    CAPTURE(DimsToString(s.x));
    CAPTURE(DimsToString(s.w));
    for (DType tx : {DType::kUInt8, DType::kInt8}) {
      for (int per_ch = 0; per_ch < 2; ++per_ch) {
        const DType tw = DType::kInt8, ty = tx;
        const int64_t m = s.w[0];
        const Tensor x = Random8(tx, s.x, seed++);
        const Tensor w = Random8(tw, s.w, seed++);
        const Tensor xz = Random8(tx, {}, seed++);
        const Tensor wz = Random8(tw, per_ch ? Dims{m} : Dims{}, seed++);
        const Tensor yz = Random8(ty, {}, seed++);
        std::vector<float> ws(per_ch ? m : 1);
        for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.002f * static_cast<float>(i + 1);
        std::vector<int32_t> bias(m);
        for (int64_t i = 0; i < m; ++i) bias[i] = static_cast<int32_t>(i * 997) - 1500;
        const float xs = 0.05f, ys = 0.11f;
        const std::vector<Tensor> inputs = {
            x,  F32({}, {xs}), xz, w, F32(per_ch ? Dims{m} : Dims{}, ws), wz, F32({}, {ys}),
            yz, I32({m}, bias)};
        auto out = RunNode("QLinearConv", inputs, Attrs(s), {.opset = 10});
        // Three threads (the blocks of positions run as parallel tasks) and every compiled
        // target: the same bytes.
        const auto out3 = RunNode("QLinearConv", inputs, Attrs(s), {.opset = 10, .threads = 3});
        REQUIRE(out3[0].dims() == out[0].dims());
        CHECK(std::memcmp(out3[0].raw_data(), out[0].raw_data(), out[0].num_elements()) == 0);
        for (const auto& t : kernels::CompiledTargets()) {
          kernels::ScopedTarget st(t);
          CAPTURE(t.name);
          const auto on_target = RunNode("QLinearConv", inputs, Attrs(s), {.opset = 10});
          CHECK(std::memcmp(on_target[0].raw_data(), out[0].raw_data(), out[0].num_elements()) ==
                0);
        }
        std::vector<int32_t> wzp;
        for (int64_t i = 0; i < wz.num_elements(); ++i) wzp.push_back(At8(wz, i));
        Dims dims;
        const auto acc = RefConv(s, x, w, At8(xz, 0), wzp, &dims);
        REQUIRE(out[0].dims() == dims);
        REQUIRE(out[0].dtype() == ty);
        const int64_t positions = static_cast<int64_t>(acc.size()) / (dims[0] * m);
        const int32_t lo = ty == DType::kInt8 ? -128 : 0, hi = ty == DType::kInt8 ? 127 : 255;
        for (size_t i = 0; i < acc.size(); ++i) {
          const int64_t ch = (static_cast<int64_t>(i) / positions) % m;
          const float mult = xs * ws[per_ch ? ch : 0] / ys;
          const double v = std::nearbyint(static_cast<double>(acc[i] + bias[ch]) * static_cast<double>(mult)) + At8(yz, 0);
          const int32_t want = static_cast<int32_t>(std::min<double>(std::max<double>(v, lo), hi));
          CAPTURE(i);
          CHECK(At8(out[0], static_cast<int64_t>(i)) == want);
        }
      }
    }
  }
}

// Tie-laden requantization: power-of-two scales make acc * multiplier land on .5 often, and odd
// zero points make the order of rounding and adding the zero point visible (round(2.5) + 1 = 3,
// round(2.5 + 1) = 4). Every x / w / y signedness, w per tensor and per output channel (with
// different power-of-two scales per channel), with and without bias, constant and run-time
// weights, 1 and 3 threads, every compiled target, against the scalar reference.
TEST_CASE("QLinearConv: exact .5 ties with odd zero points, every layout, signedness and target") {
  const std::vector<ConvSpec> specs = {
      {{1, 3, 6, 6}, {5, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {{1, 4, 7, 5}, {4, 1, 3, 3}, 4, {2, 1}, {}, {}, "SAME_UPPER"},  // depthwise
      {{1, 3, 5, 6}, {6, 1, 3, 3}, 3, {}, {}, {1, 1, 1, 1}},          // depthwise x2
      // Depthwise with more channels than one band of sums takes (bands of whole channels).
      {{1, 40, 10, 12}, {40, 1, 3, 3}, 40, {}, {}, {1, 1, 1, 1}},
      {{2, 4, 5, 5}, {6, 2, 1, 1}, 2, {}, {}, {}},   // pointwise, grouped
      {{1, 8, 9, 9}, {24, 8, 1, 1}, 1, {}, {}, {}},  // a full GEMM panel
      // Pointwise, 88 output channels over 2 x 96 positions: swapped, one output channel per
      // row of the GEMM's tiles.
      {{1, 12, 2, 96}, {88, 12, 1, 1}, 1, {}, {}, {}},
      // One position (squeeze-and-excitation on a pooled image): bytes written in place, per
      // image and per group.
      {{2, 40, 1, 1}, {50, 40, 1, 1}, 1, {}, {}, {}},
      {{2, 8, 1, 1}, {6, 4, 1, 1}, 2, {}, {}, {}},
  };
  uint32_t seed = 900;
  int64_t cases = 0, ties_seen = 0;
  for (const ConvSpec& s : specs) {
    const int64_t m = s.w[0];
    for (int combo = 0; combo < 8; ++combo) {
      const DType tx = combo & 1 ? DType::kInt8 : DType::kUInt8;
      const DType tw = combo & 2 ? DType::kInt8 : DType::kUInt8;
      const DType ty = combo & 4 ? DType::kInt8 : DType::kUInt8;
      for (int layout = 0; layout < 4; ++layout) {
        const bool per_ch = layout & 1, with_bias = layout & 2;
        CAPTURE(DimsToString(s.x)); CAPTURE(DimsToString(s.w)); CAPTURE(DTypeName(tx));
        CAPTURE(DTypeName(tw)); CAPTURE(DTypeName(ty)); CAPTURE(per_ch); CAPTURE(with_bias);
        // Small values keep sums near the output range, where ties are not clamped away.
        auto small = [&](DType t, const Dims& d, int32_t zp) {
          Tensor v(t, d);
          std::mt19937 rng(seed++);
          for (int64_t i = 0; i < v.num_elements(); ++i) {
            const int32_t q = zp + static_cast<int32_t>(rng() % 7) - 3;
            if (t == DType::kInt8) {
              v.data<int8_t>()[i] = static_cast<int8_t>(std::clamp(q, -128, 127));
            } else {
              v.data<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(q, 0, 255));
            }
          }
          return v;
        };
        auto odd_zp = [&](DType t, int32_t v) {
          Tensor z(t, {});
          if (t == DType::kInt8) {
            z.data<int8_t>()[0] = static_cast<int8_t>(v);
          } else {
            z.data<uint8_t>()[0] = static_cast<uint8_t>(v + 128);
          }
          return z;
        };
        const Tensor xz = odd_zp(tx, -5), yz = odd_zp(ty, 3);
        const Tensor x = small(tx, s.x, At8(xz, 0));
        Tensor wz(tw, per_ch ? Dims{m} : Dims{});
        for (int64_t i = 0; i < wz.num_elements(); ++i) {
          const int32_t v = 2 * static_cast<int32_t>(i % 5) - 3;  // odd: -3, -1, 1, 3, 5
          if (tw == DType::kInt8) {
            wz.data<int8_t>()[i] = static_cast<int8_t>(v);
          } else {
            wz.data<uint8_t>()[i] = static_cast<uint8_t>(v + 129);
          }
        }
        const Tensor w = small(tw, s.w, At8(wz, 0));
        std::vector<float> ws(per_ch ? m : 1);
        for (size_t i = 0; i < ws.size(); ++i) ws[i] = std::ldexp(1.0f, -static_cast<int>(i % 3));
        const float xs = 0.25f, ys = 2.0f;  // multipliers 2^-3, 2^-4, 2^-5
        std::vector<int32_t> bias(m);
        for (int64_t i = 0; i < m; ++i) bias[i] = static_cast<int32_t>(i % 7) * 3 - 9;
        std::vector<Tensor> inputs = {x, F32({}, {xs}), xz, w, F32(per_ch ? Dims{m} : Dims{}, ws),
                                      wz, F32({}, {ys}), yz};
        if (with_bias) inputs.push_back(I32({m}, bias));
        std::vector<int32_t> wzp;
        for (int64_t i = 0; i < wz.num_elements(); ++i) wzp.push_back(At8(wz, i));
        Dims dims;
        const auto acc = RefConv(s, x, w, At8(xz, 0), wzp, &dims);
        const int64_t positions = static_cast<int64_t>(acc.size()) / (dims[0] * m);
        const int32_t lo = ty == DType::kInt8 ? -128 : 0, hi = ty == DType::kInt8 ? 127 : 255;
        std::vector<int32_t> want(acc.size());
        for (size_t i = 0; i < acc.size(); ++i) {
          const int64_t ch = (static_cast<int64_t>(i) / positions) % m;
          const float mult = xs * ws[per_ch ? ch : 0] / ys;
          const double prod =
              static_cast<double>(acc[i] + (with_bias ? bias[ch] : 0)) * static_cast<double>(mult);
          if (prod - std::floor(prod) == 0.5) ++ties_seen;
          const double v = std::nearbyint(prod) + At8(yz, 0);
          want[i] = static_cast<int32_t>(std::min<double>(std::max<double>(v, lo), hi));
        }
        RunNodeOptions opt;
        opt.opset = 10;
        for (int variant = 0; variant < 2; ++variant) {
          opt.constant_inputs = variant ? std::vector<int>{3} : std::vector<int>{};
          opt.threads = variant ? 3 : 1;
          for (const auto& t : kernels::CompiledTargets()) {
            kernels::ScopedTarget st(t);
            CAPTURE(t.name);
            CAPTURE(variant);
            const auto out = RunNode("QLinearConv", inputs, Attrs(s), opt);
            REQUIRE(out[0].dims() == dims);
            REQUIRE(out[0].dtype() == ty);
            int64_t bad = 0;
            for (size_t i = 0; i < want.size(); ++i) {
              if (At8(out[0], static_cast<int64_t>(i)) != want[i]) ++bad;
            }
            CHECK(bad == 0);
            ++cases;
          }
        }
      }
    }
  }
  MESSAGE("QLinearConv tie grid: " << cases << " runs, " << ties_seen << " exact ties");
  CHECK(ties_seen > 1000);
}

}  // namespace
}  // namespace simplecpp::testing
