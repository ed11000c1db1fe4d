// Tests for graph/ops/conv_transpose.cc against a direct per-output-element reference:
//   y[n, oc, o...] = b[oc] + sum_{c in group, k...} x[n, c, i...] * w[c, oc % og, k...]
// over the i with i*stride - pad_begin + k*dilation == o. Covers 1-D/2-D/3-D, groups, strides,
// dilations, pads, output_padding, output_shape, every auto_pad, bias, constant or runtime
// weights, threads, and validation errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/recurrent_float16_test_util.h"
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

struct CtCase {
  int64_t batch = 1, channels = 1, og = 1, group = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad = "NOTSET";
  bool bias = false;
};

// Builds a case; members not given stay empty.
CtCase Ct(int64_t batch, int64_t channels, int64_t og, int64_t group, std::vector<int64_t> in,
          std::vector<int64_t> kernel, std::vector<int64_t> strides = {},
          std::vector<int64_t> dilations = {}, std::vector<int64_t> pads = {},
          std::vector<int64_t> output_padding = {}) {
  CtCase c;
  c.batch = batch;
  c.channels = channels;
  c.og = og;
  c.group = group;
  c.in = std::move(in);
  c.kernel = std::move(kernel);
  c.strides = std::move(strides);
  c.dilations = std::move(dilations);
  c.pads = std::move(pads);
  c.output_padding = std::move(output_padding);
  return c;
}

void RunCase(const CtCase& c, uint32_t seed, bool const_w) {
  CAPTURE(seed);
  CAPTURE(const_w);
  const size_t rank = c.in.size();
  Dims xd = {c.batch, c.channels};
  xd.insert(xd.end(), c.in.begin(), c.in.end());
  Dims wd = {c.channels, c.og};
  wd.insert(wd.end(), c.kernel.begin(), c.kernel.end());
  const int64_t oc_total = c.og * c.group;
  const Tensor x = RandomF32(xd, seed), w = RandomF32(wd, seed + 1),
               b = RandomF32({oc_total}, seed + 2);
  std::vector<graph::Attribute> attrs = {AttrInt("group", c.group),
                                         AttrString("auto_pad", c.auto_pad)};
  if (!c.strides.empty()) attrs.push_back(AttrInts("strides", c.strides));
  if (!c.dilations.empty()) attrs.push_back(AttrInts("dilations", c.dilations));
  if (!c.pads.empty()) attrs.push_back(AttrInts("pads", c.pads));
  if (!c.output_padding.empty()) attrs.push_back(AttrInts("output_padding", c.output_padding));
  if (!c.output_shape.empty()) attrs.push_back(AttrInts("output_shape", c.output_shape));
  std::vector<Tensor> inputs = {x, w};
  if (c.bias) inputs.push_back(b);
  RunNodeOptions opt;
  opt.opset = seed % 2 ? 11 : 22;
  if (const_w) opt.constant_inputs = {1};
  const Tensor y = RunNode("ConvTranspose", inputs, attrs, opt)[0];

  // Output size and begin pads from the spec.
  std::vector<int64_t> out(rank), pb(rank), st(rank), dl(rank);
  for (size_t d = 0; d < rank; ++d) {
    st[d] = c.strides.empty() ? 1 : c.strides[d];
    dl[d] = c.dilations.empty() ? 1 : c.dilations[d];
    const int64_t op = c.output_padding.empty() ? 0 : c.output_padding[d];
    const int64_t full = st[d] * (c.in[d] - 1) + op + (c.kernel[d] - 1) * dl[d] + 1;
    if (!c.output_shape.empty() || c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out[d] = c.output_shape.empty() ? c.in[d] * st[d] : c.output_shape[d];
      const int64_t total = full - out[d];
      const int64_t half = static_cast<int64_t>(std::floor(total / 2.0));
      pb[d] = c.auto_pad == "SAME_UPPER" ? half : total - half;
    } else {
      pb[d] = c.pads.empty() ? 0 : c.pads[d];
      const int64_t pe = c.pads.empty() ? 0 : c.pads[d + rank];
      out[d] = full - pb[d] - pe;
    }
  }
  Dims yd = {c.batch, oc_total};
  yd.insert(yd.end(), out.begin(), out.end());
  REQUIRE(y.dims() == yd);
  int64_t out_size = 1, in_size = 1, k_size = 1;
  for (size_t d = 0; d < rank; ++d) {
    out_size *= out[d];
    in_size *= c.in[d];
    k_size *= c.kernel[d];
  }
  const int64_t cg = c.channels / c.group;
  std::vector<int64_t> o(rank), k(rank);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t oc = 0; oc < oc_total; ++oc) {
      const int64_t g = oc / c.og;
      for (int64_t op = 0; op < out_size; ++op) {
        int64_t rem = op;
        for (size_t d = rank; d-- > 0;) {
          o[d] = rem % out[d];
          rem /= out[d];
        }
        double s = c.bias ? b.data<float>()[oc] : 0.0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t ch = g * cg + ci;
          for (int64_t kp = 0; kp < k_size; ++kp) {
            int64_t kr = kp;
            for (size_t d = rank; d-- > 0;) {
              k[d] = kr % c.kernel[d];
              kr /= c.kernel[d];
            }
            int64_t ip = 0;
            bool ok = true;
            for (size_t d = 0; d < rank && ok; ++d) {
              const int64_t t = o[d] + pb[d] - k[d] * dl[d];
              if (t < 0 || t % st[d] != 0 || t / st[d] >= c.in[d]) ok = false;
              ip = ip * c.in[d] + (ok ? t / st[d] : 0);
            }
            if (!ok) continue;
            s += static_cast<double>(x.data<float>()[(n * c.channels + ch) * in_size + ip]) *
                 w.data<float>()[(ch * c.og + oc % c.og) * k_size + kp];
          }
        }
        const float got = y.data<float>()[(n * oc_total + oc) * out_size + op];
        CAPTURE(op);
        REQUIRE(std::fabs(got - s) <= 1e-4 * (1 + std::fabs(s)));
      }
    }
  }
  opt.threads = 3;
  CHECK(RunNode("ConvTranspose", inputs, attrs, opt)[0].BitwiseEquals(y));
}

TEST_CASE("ConvTranspose against the direct reference") {
  std::vector<CtCase> cases;
  CtCase c;
  c = Ct(1, 1, 2, 1, {3, 3}, {3, 3});
  cases.push_back(c);
  c = Ct(2, 3, 2, 1, {5, 4}, {3, 2}, {2, 3}, {}, {1, 0, 2, 1}, {1, 2});
  c.bias = true;
  cases.push_back(c);
  c = Ct(1, 4, 3, 2, {7}, {4}, {3}, {2}, {1, 2});
  c.bias = true;
  cases.push_back(c);
  c = Ct(1, 2, 2, 1, {3, 4, 2}, {2, 3, 2}, {2, 1, 2}, {1, 2, 1}, {}, {1, 0, 1});
  cases.push_back(c);
  c = Ct(1, 6, 1, 6, {5, 5}, {3, 3}, {2, 2});  // depthwise-like groups
  c.bias = true;
  cases.push_back(c);
  for (const std::string ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    c = Ct(1, 2, 3, 1, {4, 5}, {3, 4}, {2, 2});
    c.auto_pad = ap;
    cases.push_back(c);
  }
  // output_shape (spatial only, and larger than the kernel reach: negative total padding).
  c = Ct(1, 2, 2, 1, {3, 3}, {3, 3}, {3, 2});
  c.output_shape = {10, 8};
  cases.push_back(c);
  c = Ct(1, 2, 2, 1, {3, 3}, {3, 3}, {3, 2});
  c.output_shape = {12, 9};
  c.bias = true;
  cases.push_back(c);
  c = Ct(1, 2, 2, 1, {3, 3}, {3, 3}, {3, 2});
  c.output_shape = {9, 7};
  c.auto_pad = "SAME_UPPER";
  cases.push_back(c);
  // Many input positions (several col chunks) and 1x1 kernel.
  c = Ct(1, 3, 70, 1, {40, 41}, {2, 2}, {2, 2});
  cases.push_back(c);
  c = Ct(1, 5, 4, 1, {6, 7}, {1, 1});
  cases.push_back(c);
  // Kernel == stride, no padding: the taps tile the output (the disjoint col2im), with bias,
  // groups, 1-D / 3-D, inner kernel widths 1, 2, 3 and 4, and chunks that end mid-row.
  c = Ct(2, 4, 3, 2, {9, 11}, {2, 2}, {2, 2});
  c.bias = true;
  cases.push_back(c);
  c = Ct(1, 3, 2, 1, {13}, {3}, {3});
  c.bias = true;
  cases.push_back(c);
  c = Ct(1, 2, 2, 1, {3, 4, 5}, {2, 1, 2}, {2, 1, 2});
  c.bias = true;
  cases.push_back(c);
  c = Ct(1, 2, 1, 1, {5, 6}, {4, 4}, {4, 4});
  cases.push_back(c);
  c = Ct(1, 24, 1, 1, {120, 160}, {2, 2}, {2, 2});  // PP-OCR's last upsampling, 1 channel out
  c.bias = true;
  cases.push_back(c);
  uint32_t seed = 100;
  for (const CtCase& cc : cases) {
    for (bool cw : {false, true}) RunCase(cc, seed++, cw);
  }
}

TEST_CASE("ConvTranspose errors") {
  const Tensor x = RandomF32({1, 2, 3, 3}, 1);
  auto fails = [&](const std::vector<Tensor>& in, std::vector<graph::Attribute> attrs) {
    CHECK_THROWS_AS(RunNode("ConvTranspose", in, attrs, Opset(22)), Error);
  };
  fails({x, RandomF32({3, 2, 3, 3}, 2)}, {});                     // channel mismatch
  fails({x, RandomF32({2, 2, 3}, 2)}, {});                        // rank mismatch
  fails({x, RandomF32({2, 2, 3, 3}, 2), RandomF32({3}, 3)}, {});  // bias size
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrInts("strides", {0, 1})});
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrInts("pads", {1, 1})});
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrInts("output_padding", {2, 2})});
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrInts("kernel_shape", {2, 2})});
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrString("auto_pad", "BOGUS")});
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrInt("group", 3)});
  fails({x, RandomF32({2, 2, 3, 3}, 2)}, {AttrInts("pads", {3, 3, 3, 3})});
}

TEST_CASE("ConvTranspose float16 and bfloat16 against float32") {
  // Storage 16-bit, arithmetic float32, one rounding per output (Check16). X, W, B are in [-1, 1)
  // and off by <= eps16/2 after rounding, so each product x*w is off by <= eps16; an output sums at
  // most cg * kernel = 2 * 9 products plus the bias: atol = (2 * 9 + 1) * eps16.
  const Tensor x = RandomF32({2, 4, 5, 4}, 21);
  const Tensor w = RandomF32({4, 3, 3, 3}, 22);  // group 2: cg = 2, og = 3
  const Tensor b = RandomF32({6}, 23);
  const std::vector<graph::Attribute> attrs = {AttrInt("group", 2), AttrInts("strides", {2, 2}),
                                               AttrInts("pads", {1, 0, 0, 1})};
  for (bool const_w : {false, true}) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(const_w);
      CAPTURE(DTypeName(dt));
      const RunNodeOptions o = Opset(22, const_w ? std::vector<int>{1, 2} : std::vector<int>{});
      const std::vector<Tensor> in16 = {To16(x, dt), To16(w, dt), To16(b, dt)};
      const Tensor got = RunNode("ConvTranspose", in16, attrs, o)[0];
      const Tensor exact =
          RunNode("ConvTranspose", {From16(in16[0]), From16(in16[1]), From16(in16[2])}, attrs, o)[0];
      const Tensor ref = RunNode("ConvTranspose", {x, w, b}, attrs, o)[0];
      Check16(got, exact, ref, dt, 19 * Eps16(dt));
    }
  }
  // bfloat16 needs opset 22; mixed dtypes and integer inputs are errors.
  CHECK_THROWS_AS(RunNode("ConvTranspose", {To16(x, DType::kBFloat16), To16(w, DType::kBFloat16)},
                          {AttrInt("group", 2)}, Opset(11)),
                  Error);
  CHECK_THROWS_AS(RunNode("ConvTranspose", {To16(x, DType::kFloat16), w}, {AttrInt("group", 2)},
                          Opset(22)),
                  Error);
  CHECK_THROWS_AS(RunNode("ConvTranspose", {I32({1, 1, 1}, {1}), I32({1, 1, 1}, {1})}, {},
                          Opset(22)),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing
