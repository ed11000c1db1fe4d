// Tests for simplecpp.fused QLinearConvTranspose (graph/ops/quant/qlinear_conv_transpose.cc)
// against a direct int64 ConvTranspose and a scalar requantization written here (output size and
// pads from the ONNX spec / reference formulas): 1-D/2-D/3-D, disjoint 2x2 stride 2 and general
// geometries, pads, output_padding, dilations, groups with per-channel w, output_shape (also
// larger than the kernel reach), auto_pad, empty tensors, every x / w / y signedness, every w
// zero-point layout, with and without bias, exact .5 ties with odd zero points, constant and
// run-time w, 1 and 3 threads, every compiled target; errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/targets.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

int32_t At8(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}
void Set8(Tensor& t, int64_t i, int32_t v) {
  if (t.dtype() == DType::kInt8) {
    t.data<int8_t>()[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
  } else {
    t.data<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(v, 0, 255));
  }
}
// Values around `center` (within +-spread) in t's range; spread 0: any byte.
Tensor Values8(DType t, const Dims& d, int32_t center, int32_t spread, uint32_t seed) {
  Tensor v(t, d);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < v.num_elements(); ++i) {
    if (spread == 0) {
      static_cast<uint8_t*>(v.raw_data())[i] = static_cast<uint8_t>(rng());
    } else {
      Set8(v, i, center + static_cast<int32_t>(rng() % (2 * spread + 1)) - spread);
    }
  }
  return v;
}
Tensor Scalar8(DType t, int32_t v) {
  Tensor z(t, {});
  Set8(z, 0, v);
  return z;
}

struct CTSpec {
  Dims x, w;  // x [N, C, in...], w [C, M/group, k...]
  int64_t group = 1;
  std::vector<int64_t> strides{}, dilations{}, pads{}, output_padding{}, output_shape{};
  std::string auto_pad = "NOTSET";
};

int64_t FloorDiv2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// ConvTranspose's output size and begin pads per spatial dim, from the spec: out =
// stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads, or, with output_shape or
// auto_pad SAME_* (out = in * stride), pads from total = that full size - out as ONNX's reference
// splits it (Python floor division; SAME_UPPER: total // 2 at the beginning).
void RefGeometry(const CTSpec& s, std::vector<int64_t>* out, std::vector<int64_t>* pb) {
  const size_t rank = s.x.size() - 2;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = s.x[2 + d], k = s.w[2 + d];
    const int64_t st = s.strides.empty() ? 1 : s.strides[d];
    const int64_t dl = s.dilations.empty() ? 1 : s.dilations[d];
    const int64_t op = s.output_padding.empty() ? 0 : s.output_padding[d];
    const int64_t full = st * (in - 1) + op + (k - 1) * dl + 1;
    if (!s.output_shape.empty() || s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER") {
      const int64_t o = !s.output_shape.empty() ? s.output_shape[d] : in * st;
      const int64_t total = full - o;
      out->push_back(o);
      pb->push_back(s.auto_pad == "SAME_UPPER" ? FloorDiv2(total) : total - FloorDiv2(total));
    } else {
      const int64_t b = s.pads.empty() ? 0 : s.pads[d];
      const int64_t e = s.pads.empty() ? 0 : s.pads[d + rank];
      out->push_back(full - b - e);
      pb->push_back(b);
    }
  }
}

// Direct ConvTranspose in int64: every input element times every tap it reaches. wzp: empty,
// one value or one per output channel of a group.
std::vector<int64_t> RefConvTranspose(const CTSpec& s, const Tensor& x, const Tensor& w,
                                      int32_t xzp, const std::vector<int32_t>& wzp,
                                      Dims* out_dims) {
  const int rank = static_cast<int>(s.x.size()) - 2;
  std::vector<int64_t> out, pb;
  RefGeometry(s, &out, &pb);
  int64_t in[3] = {1, 1, 1}, ker[3] = {1, 1, 1}, os[3] = {1, 1, 1}, st[3] = {1, 1, 1},
          dl[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  const int64_t n = s.x[0], c = s.x[1], cg = c / s.group, og = s.w[1], m = og * s.group;
  *out_dims = {n, m};
  for (int d = 0; d < rank; ++d) {
    const int o = 3 - rank + d;
    in[o] = s.x[2 + d];
    ker[o] = s.w[2 + d];
    os[o] = out[d];
    st[o] = s.strides.empty() ? 1 : s.strides[d];
    dl[o] = s.dilations.empty() ? 1 : s.dilations[d];
    pad[o] = pb[d];
    out_dims->push_back(out[d]);
  }
  const int64_t in_size = in[0] * in[1] * in[2], ksize = ker[0] * ker[1] * ker[2];
  const int64_t out_size = os[0] * os[1] * os[2];
  std::vector<int64_t> y(static_cast<size_t>(std::max<int64_t>(0, n * m * out_size)), 0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ic = 0; ic < c; ++ic) {
      const int64_t g = ic / cg;
      for (int64_t j = 0; j < og; ++j) {
        const int64_t wz = wzp.empty() ? 0 : wzp[wzp.size() == 1 ? 0 : j];
        const int64_t oc = g * og + j;
        for (int64_t i0 = 0; i0 < in[0]; ++i0)
          for (int64_t i1 = 0; i1 < in[1]; ++i1)
            for (int64_t i2 = 0; i2 < in[2]; ++i2) {
              const int64_t xv =
                  At8(x, (b * c + ic) * in_size + (i0 * in[1] + i1) * in[2] + i2) - xzp;
              for (int64_t k0 = 0; k0 < ker[0]; ++k0)
                for (int64_t k1 = 0; k1 < ker[1]; ++k1)
                  for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
                    const int64_t o0 = i0 * st[0] - pad[0] + k0 * dl[0];
                    const int64_t o1 = i1 * st[1] - pad[1] + k1 * dl[1];
                    const int64_t o2 = i2 * st[2] - pad[2] + k2 * dl[2];
                    if (o0 < 0 || o0 >= os[0] || o1 < 0 || o1 >= os[1] || o2 < 0 || o2 >= os[2]) {
                      continue;
                    }
                    const int64_t wv =
                        At8(w, (ic * og + j) * ksize + (k0 * ker[1] + k1) * ker[2] + k2) - wz;
                    y[(b * m + oc) * out_size + (o0 * os[1] + o1) * os[2] + o2] += xv * wv;
                  }
            }
      }
    }
  }
  return y;
}

std::vector<graph::Attribute> Attrs(const CTSpec& s) {
  std::vector<graph::Attribute> a;
  if (s.group != 1) a.push_back(AttrInt("group", s.group));
  if (!s.strides.empty()) a.push_back(AttrInts("strides", s.strides));
  if (!s.dilations.empty()) a.push_back(AttrInts("dilations", s.dilations));
  if (!s.pads.empty()) a.push_back(AttrInts("pads", s.pads));
  if (!s.output_padding.empty()) a.push_back(AttrInts("output_padding", s.output_padding));
  if (!s.output_shape.empty()) a.push_back(AttrInts("output_shape", s.output_shape));
  if (s.auto_pad != "NOTSET") a.push_back(AttrString("auto_pad", s.auto_pad));
  return a;
}

RunNodeOptions Fused(bool constant_w, int threads) {
  RunNodeOptions o;
  o.domain = "simplecpp.fused";
  o.opset = 1;
  if (constant_w) o.constant_inputs = {3};
  o.threads = threads;
  return o;
}

const std::vector<CTSpec>& Specs() {
  static const std::vector<CTSpec> specs = {
      {{2, 3, 7}, {3, 2, 3}, 1, {2}, {}, {1, 0}},                                // 1-D
      {{1, 3, 70}, {3, 5, 2}, 1, {2}},                                           // 1-D disjoint
      {{1, 4, 5, 6}, {4, 3, 2, 2}, 1, {2, 2}},                                   // 2x2 stride 2
      {{2, 5, 6, 7}, {5, 4, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}},         // output_padding
      {{1, 3, 5, 4}, {3, 2, 3, 2}, 1, {1, 2}, {2, 3}, {0, 1, 2, 0}},             // dilation
      {{1, 6, 4, 5}, {6, 3, 3, 3}, 2, {2, 1}, {}, {1, 0, 0, 1}},                 // group 2
      {{1, 4, 6, 5}, {4, 2, 2, 2}, 2, {2, 2}},                                   // group, disjoint
      {{1, 3, 4, 4}, {3, 2, 3, 3}, 1, {2, 2}, {}, {}, {}, {10, 9}},              // output_shape
      {{1, 2, 3, 3}, {2, 2, 2, 2}, 1, {}, {}, {}, {}, {6, 7}},                   // beyond reach
      {{1, 3, 5, 3}, {3, 4, 3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER"},     // SAME_UPPER
      {{1, 3, 4, 3}, {3, 3, 2, 3}, 1, {2, 3}, {}, {}, {}, {}, "SAME_LOWER"},     // SAME_LOWER
      {{1, 3, 3, 4, 3}, {3, 2, 2, 3, 2}, 1, {2, 1, 2}, {}, {0, 1, 0, 1, 0, 0}},  // 3-D
      {{2, 2, 2, 3, 4}, {2, 3, 2, 2, 2}, 1, {2, 2, 2}},                          // 3-D disjoint
      {{1, 5, 1, 1}, {5, 3, 3, 3}, 1, {1, 1}},                                   // one pixel
      {{1, 16, 33, 35}, {16, 8, 2, 2}, 1, {2, 2}},  // disjoint, several chunks and panels
      {{1, 9, 17, 19}, {9, 7, 4, 4}, 1, {2, 2}, {}, {1, 1, 1, 1}},  // 4x4 stride 2 (upsampler)
      {{1, 0, 3, 3}, {0, 2, 2, 2}, 1, {1, 1}},                  // no input channels: y is the bias
      {{0, 3, 4, 4}, {3, 2, 3, 3}, 1, {2, 2}},                  // empty batch
      {{1, 2, 0, 3}, {2, 2, 1, 1}, 1, {}, {}, {}, {}, {2, 3}},  // empty input, output_shape
  };
  return specs;
}

struct Expected {
  Dims dims;
  std::vector<int32_t> y;
  int64_t ties = 0;
};

// The scalar reference of the op: acc + bias wrapped to int32, then
// saturate(round_half_even(double(acc) * double(x_scale * w_scale[j] / y_scale)) + y_zp).
Expected Reference(const CTSpec& s, const std::vector<Tensor>& in) {
  Expected e;
  const Tensor& w = in[3];
  std::vector<int32_t> wzp;
  if (in[5].defined()) {
    for (int64_t i = 0; i < in[5].num_elements(); ++i) wzp.push_back(At8(in[5], i));
  }
  const int32_t xzp = in[2].defined() ? At8(in[2], 0) : 0;
  const auto acc = RefConvTranspose(s, in[0], w, xzp, wzp, &e.dims);
  const int64_t og = s.w[1], m = og * s.group;
  const int64_t positions =
      e.dims[0] * m == 0 ? 0 : static_cast<int64_t>(acc.size()) / (e.dims[0] * m);
  const DType ty = in[7].dtype();
  const int32_t lo = ty == DType::kInt8 ? -128 : 0, hi = ty == DType::kInt8 ? 127 : 255;
  const float xs = in[1].data<float>()[0], ys = in[6].data<float>()[0];
  const bool with_bias = in.size() > 8 && in[8].defined();
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t oc = (static_cast<int64_t>(i) / positions) % m, j = oc % og;
    const float ws = in[4].data<float>()[in[4].num_elements() == 1 ? 0 : j];
    const float mult = xs * ws / ys;
    const int64_t sum = acc[i] + (with_bias ? in[8].data<int32_t>()[oc] : 0);
    const auto acc32 = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
    const double prod = static_cast<double>(acc32) * static_cast<double>(mult);
    if (prod - std::floor(prod) == 0.5) ++e.ties;
    const double v = std::nearbyint(prod) + At8(in[7], 0);
    e.y.push_back(static_cast<int32_t>(std::min<double>(std::max<double>(v, lo), hi)));
  }
  return e;
}

// Runs every variant (run-time and constant w, 1 and 3 threads) on every compiled target and
// counts the elements that differ from the reference.
int64_t Mismatches(const CTSpec& s, const std::vector<Tensor>& in, const Expected& e,
                   int64_t* runs) {
  int64_t bad = 0;
  for (const auto& t : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    for (int variant = 0; variant < 4; ++variant) {
      CAPTURE(variant);
      const auto out =
          RunNode("QLinearConvTranspose", in, Attrs(s), Fused(variant & 1, variant & 2 ? 3 : 1));
      REQUIRE(out[0].dims() == e.dims);
      REQUIRE(out[0].dtype() == in[7].dtype());
      for (size_t i = 0; i < e.y.size(); ++i) {
        if (At8(out[0], static_cast<int64_t>(i)) != e.y[i]) ++bad;
      }
      ++*runs;
    }
  }
  return bad;
}

// Every geometry x every x / w / y signedness x w zero point absent / scalar / per channel x
// bias or not, in two regimes: any bytes with generic scales (large sums, saturation), and values
// near odd zero points with power-of-two scales (x 0.5, w 2^0 / 2^-1 / 2^-2 per channel, y 1.0:
// many products at exact .5, where rounding before adding the odd zero point shows).
TEST_CASE("QLinearConvTranspose: geometry x signedness x zero points x bias, bit-exact") {
  uint32_t seed = 7;
  int64_t runs = 0, ties = 0, elements = 0;
  for (const CTSpec& s : Specs()) {
    const int64_t og = s.w[1], m = og * s.group;
    for (int combo = 0; combo < 8; ++combo) {
      const DType tx = combo & 1 ? DType::kInt8 : DType::kUInt8;
      const DType tw = combo & 2 ? DType::kInt8 : DType::kUInt8;
      const DType ty = combo & 4 ? DType::kInt8 : DType::kUInt8;
      for (int layout = 0; layout < 6; ++layout) {
        const int zl = layout % 3;  // w zero point: 0 absent, 1 scalar, 2 per channel
        const bool with_bias = layout >= 3;
        for (int regime = 0; regime < 2; ++regime) {
          const bool tie = regime == 1;
          CAPTURE(DimsToString(s.x));
          CAPTURE(DimsToString(s.w));
          CAPTURE(DTypeName(tx));
          CAPTURE(DTypeName(tw));
          CAPTURE(DTypeName(ty));
          CAPTURE(zl);
          CAPTURE(with_bias);
          CAPTURE(tie);
          const int32_t x_off = tx == DType::kInt8 ? 0 : 128, w_off = tw == DType::kInt8 ? 0 : 128;
          const int32_t y_off = ty == DType::kInt8 ? 0 : 128;
          const Tensor xz = Scalar8(tx, x_off - 5 + 2 * static_cast<int32_t>(seed % 5));  // odd
          const Tensor x = Values8(tx, s.x, At8(xz, 0), tie ? 3 : 0, seed++);
          Tensor wz;
          if (zl > 0) {
            wz = Tensor(tw, zl == 1 ? Dims{} : Dims{og});
            for (int64_t i = 0; i < wz.num_elements(); ++i) {
              Set8(wz, i, w_off + 2 * static_cast<int32_t>((i + seed) % 5) - 3);  // odd
            }
          }
          const Tensor w = Values8(tw, s.w, zl > 0 ? At8(wz, 0) : w_off, tie ? 3 : 0, seed++);
          std::vector<float> ws(zl == 2 || (seed % 2) ? og : 1);
          for (size_t i = 0; i < ws.size(); ++i) {
            ws[i] = tie ? std::ldexp(1.0f, -static_cast<int>(i % 3))
                        : 0.0003f * static_cast<float>(i + 1);
          }
          const float xs = tie ? 0.5f : 0.05f, ys = tie ? 1.0f : 0.11f;
          const Dims ws_dims = {static_cast<int64_t>(ws.size())};
          std::vector<Tensor> in = {
              x, F32({}, {xs}), xz, w, F32(ws_dims, ws), wz, F32({}, {ys}), Scalar8(ty, y_off + 3)};
          if (with_bias) {
            std::vector<int32_t> bias(m);
            for (int64_t i = 0; i < m; ++i) {
              bias[i] =
                  tie ? static_cast<int32_t>(i % 7) * 3 - 9 : static_cast<int32_t>(i * 997) - 1500;
            }
            in.push_back(I32({m}, bias));
          }
          ++seed;
          const Expected e = Reference(s, in);
          ties += e.ties;
          elements += static_cast<int64_t>(e.y.size());
          CHECK(Mismatches(s, in, e, &runs) == 0);
        }
      }
    }
  }
  MESSAGE("QLinearConvTranspose grid: " << runs << " runs, " << elements << " reference elements, "
                                        << ties << " exact ties");
  CHECK(ties > 1000);
}

TEST_CASE("QLinearConvTranspose: x_zero_point omitted is zero; bias alone where no tap reaches") {
  const CTSpec s{{1, 2, 3, 3}, {2, 3, 2, 2}, 1, {}, {}, {}, {}, {7, 6}};  // beyond the reach
  const Tensor x = Values8(DType::kInt8, s.x, 0, 0, 3);
  const Tensor w = Values8(DType::kInt8, s.w, 0, 0, 4);
  const std::vector<Tensor> in = {x,
                                  F32({}, {0.02f}),
                                  Tensor(),
                                  w,
                                  F32({3}, {0.01f, 0.02f, 0.03f}),
                                  Tensor(),
                                  F32({}, {0.3f}),
                                  Scalar8(DType::kUInt8, 17),
                                  I32({3}, {-1000, 7, 12345})};
  const Expected e = Reference(s, in);
  int64_t runs = 0;
  CHECK(Mismatches(s, in, e, &runs) == 0);
  // Row 0 of channel 2 lies beyond every tap (pads -1 at the beginning): requantized bias.
  const auto out = RunNode("QLinearConvTranspose", in, Attrs(s), Fused(true, 1));
  const int32_t want = std::min(
      255,
      static_cast<int32_t>(std::nearbyint(12345.0 * static_cast<double>(0.02f * 0.03f / 0.3f))) +
          17);
  CHECK(At8(out[0], 2 * 7 * 6) == want);
}

// A geometry big enough for several col chunks of the general (non-disjoint) path and
// multi-threaded GEMMs, checked against the reference once per signedness of w.
TEST_CASE("QLinearConvTranspose: several chunks of a large general geometry") {
  const CTSpec s{{1, 32, 20, 19}, {32, 64, 4, 4}, 1, {2, 2}, {}, {1, 1, 1, 1}};
  for (DType tw : {DType::kUInt8, DType::kInt8}) {
    CAPTURE(DTypeName(tw));
    std::vector<float> ws(64);
    for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.0001f * static_cast<float>(i % 9 + 1);
    std::vector<int32_t> bias(64);
    for (int i = 0; i < 64; ++i) bias[i] = i * 311 - 9000;
    Tensor wz(tw, {64});
    for (int64_t i = 0; i < 64; ++i) Set8(wz, i, (tw == DType::kInt8 ? 0 : 128) + (i % 11) - 5);
    const std::vector<Tensor> in = {Values8(DType::kUInt8, s.x, 0, 0, 11),
                                    F32({}, {0.04f}),
                                    Scalar8(DType::kUInt8, 131),
                                    Values8(tw, s.w, 0, 0, 12),
                                    F32({64}, ws),
                                    wz,
                                    F32({}, {0.07f}),
                                    Scalar8(DType::kInt8, -3),
                                    I32({64}, bias)};
    const Expected e = Reference(s, in);
    int64_t runs = 0;
    CHECK(Mismatches(s, in, e, &runs) == 0);
  }
}

TEST_CASE("QLinearConvTranspose: errors") {
  const Tensor x = Values8(DType::kUInt8, {1, 4, 3, 3}, 0, 0, 1);
  const Tensor w = Values8(DType::kInt8, {4, 3, 3, 3}, 0, 0, 2);  // og = 3, M = 3
  const Tensor xz = Scalar8(DType::kUInt8, 128), wz = Scalar8(DType::kInt8, 0);
  const Tensor yz = Scalar8(DType::kUInt8, 128);
  const Tensor xs = F32({}, {0.1f}), ys = F32({}, {0.2f});
  auto run = [&](std::vector<Tensor> in, std::vector<graph::Attribute> attrs = {}) {
    return RunNode("QLinearConvTranspose", in, attrs, Fused(false, 1));
  };
  // The valid call runs.
  CHECK(run({x, xs, xz, w, F32({3}, {1, 2, 3}), wz, ys, yz})[0].dims() == Dims{1, 3, 5, 5});
  // w_scale neither one value nor [M/group].
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({4}, {1, 2, 3, 4}), wz, ys, yz}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({1, 3}, {1, 2, 3}), wz, ys, yz}), Error);
  // w_zero_point of the wrong length.
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), Values8(DType::kInt8, {2}, 0, 0, 3), ys, yz}),
                  Error);
  // Wrong input counts.
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, yz, I32({3}, {0, 0, 0}), x}), Error);
  // Per-tensor parameters that are not.
  CHECK_THROWS_AS(run({x, F32({2}, {0.1f, 0.2f}), xz, w, F32({}, {1}), wz, ys, yz}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, F32({2}, {1, 2}), yz}), Error);
  // Bias of the wrong shape or dtype.
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, yz, I32({4}, {0, 0, 0, 0})}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, yz, F32({3}, {0, 0, 0})}), Error);
  // Dtypes: float x, mismatched zero point, int32 y_zero_point, float16-free scales only.
  CHECK_THROWS_AS(run({RandomF32({1, 4, 3, 3}, 1), xs, xz, w, F32({}, {1}), wz, ys, yz}), Error);
  CHECK_THROWS_AS(run({x, xs, Scalar8(DType::kInt8, 0), w, F32({}, {1}), wz, ys, yz}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, I32({}, {0})}), Error);
  CHECK_THROWS_AS(run({x, I32({}, {1}), xz, w, F32({}, {1}), wz, ys, yz}), Error);
  // Shapes: channel mismatch, rank mismatch, group not dividing C, bad attributes.
  CHECK_THROWS_AS(
      run({x, xs, xz, Values8(DType::kInt8, {3, 3, 3, 3}, 0, 0, 4), F32({}, {1}), wz, ys, yz}),
      Error);
  CHECK_THROWS_AS(
      run({x, xs, xz, Values8(DType::kInt8, {4, 3, 3}, 0, 0, 4), F32({}, {1}), wz, ys, yz}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, yz}, {AttrInt("group", 3)}), Error);
  CHECK_THROWS_AS(
      run({x, xs, xz, w, F32({}, {1}), wz, ys, yz}, {AttrInts("output_padding", {2, 2})}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, yz}, {AttrInts("strides", {2})}), Error);
  CHECK_THROWS_AS(run({x, xs, xz, w, F32({}, {1}), wz, ys, yz}, {AttrInts("pads", {3, 3, 3, 3})}),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing
