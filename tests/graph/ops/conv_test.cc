// Tests for graph/ops/conv.cc against the direct convolution reference
// (tests/reference/conv_reference.h) over attribute combinations: 1-D/2-D/3-D, groups,
// depthwise with multipliers, dilations, strides, every auto_pad, asymmetric pads, 1x1, bias or
// not, constant or runtime weights, batches; and the validation errors.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "reference/conv_reference.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

struct ConvCase {
  int64_t batch = 1, channels = 1, out_channels = 1, group = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad = "NOTSET";
  bool bias = false;
  bool const_w = false;
};

std::string Describe(const ConvCase& c) {
  return "N=" + std::to_string(c.batch) + " C=" + std::to_string(c.channels) +
         " Cout=" + std::to_string(c.out_channels) + " group=" + std::to_string(c.group) +
         " in=" + DimsToString(c.in) + " k=" + DimsToString(c.kernel) +
         " s=" + DimsToString(c.strides) + " d=" + DimsToString(c.dilations) +
         " pads=" + DimsToString(c.pads) + " auto_pad=" + c.auto_pad +
         " bias=" + std::to_string(c.bias) + " const_w=" + std::to_string(c.const_w);
}

// Output dims and begin pads per the ONNX spec, for the reference.
ConvRefParams RefParams(const ConvCase& c) {
  ConvRefParams p;
  const size_t rank = c.in.size();
  p.in = c.in;
  p.kernel = c.kernel;
  p.batch = c.batch;
  p.channels = c.channels;
  p.out_channels = c.out_channels;
  p.group = c.group;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t s = c.strides.empty() ? 1 : c.strides[d];
    const int64_t dil = c.dilations.empty() ? 1 : c.dilations[d];
    const int64_t ext = (c.kernel[d] - 1) * dil + 1;
    int64_t pb = 0, pe = 0, out;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out = (c.in[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + ext - c.in[d]);
      pb = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
    } else {
      if (!c.pads.empty()) pb = c.pads[d], pe = c.pads[d + rank];
      out = (c.in[d] + pb + pe - ext) / s + 1;
    }
    p.stride.push_back(s);
    p.dilation.push_back(dil);
    p.pad_begin.push_back(pb);
    p.out.push_back(out);
  }
  return p;
}

void RunCase(const ConvCase& c, uint32_t seed) {
  CAPTURE(Describe(c));
  Dims xd = {c.batch, c.channels};
  xd.insert(xd.end(), c.in.begin(), c.in.end());
  Dims wd = {c.out_channels, c.channels / c.group};
  wd.insert(wd.end(), c.kernel.begin(), c.kernel.end());
  const Tensor x = RandomF32(xd, seed), w = RandomF32(wd, seed + 1);
  const Tensor b = RandomF32({c.out_channels}, seed + 2);
  std::vector<graph::Attribute> attrs = {AttrInt("group", c.group),
                                         AttrString("auto_pad", c.auto_pad)};
  if (!c.strides.empty()) attrs.push_back(AttrInts("strides", c.strides));
  if (!c.dilations.empty()) attrs.push_back(AttrInts("dilations", c.dilations));
  if (!c.pads.empty()) attrs.push_back(AttrInts("pads", c.pads));
  if (seed % 2 == 0) attrs.push_back(AttrInts("kernel_shape", c.kernel));
  std::vector<Tensor> inputs = {x, w};
  if (c.bias) inputs.push_back(b);
  RunNodeOptions opt;
  opt.opset = seed % 3 == 0 ? 1 : 11;
  if (c.const_w) opt.constant_inputs = {1};
  const Tensor y = RunNode("Conv", inputs, attrs, opt)[0];

  const ConvRefParams p = RefParams(c);
  std::vector<float> xv(x.data<float>(), x.data<float>() + x.num_elements());
  std::vector<float> wv(w.data<float>(), w.data<float>() + w.num_elements());
  std::vector<float> bv;
  if (c.bias) bv.assign(b.data<float>(), b.data<float>() + b.num_elements());
  const std::vector<double> ref = ConvReference(p, xv, wv, bv);
  Dims yd = {c.batch, c.out_channels};
  yd.insert(yd.end(), p.out.begin(), p.out.end());
  REQUIRE(y.dims() == yd);
  for (size_t i = 0; i < ref.size(); ++i) {
    CAPTURE(i);
    REQUIRE(std::fabs(y.data<float>()[i] - ref[i]) <= 1e-4 * (1 + std::fabs(ref[i])));
  }
  // Threads do not change the result.
  opt.threads = 3;
  CHECK(RunNode("Conv", inputs, attrs, opt)[0].BitwiseEquals(y));
}

TEST_CASE("Conv fixed cases: 1x1, depthwise, groups, 3-D, auto_pad, asymmetric pads") {
  uint32_t seed = 1;
  auto run = [&](ConvCase c) {
    for (int cw = 0; cw < 2; ++cw) {
      c.const_w = cw == 1;
      RunCase(c, seed++);
    }
  };
  ConvCase c;
  // 1x1 pointwise (direct GEMM), with groups and bias.
  c = ConvCase{2, 6, 8, 2, {5, 7}, {1, 1}, {}, {}, {}, "NOTSET", true};
  run(c);
  c = ConvCase{1, 4, 20, 1, {9}, {1}, {}, {}, {}, "NOTSET", false};
  run(c);
  // 1x1 with stride 2 (im2col path).
  c = ConvCase{1, 3, 5, 1, {6, 6}, {1, 1}, {2, 2}, {}, {}, "NOTSET", true};
  run(c);
  // Depthwise 2-D, multiplier 1 and 2, stride 1 and 2, padding.
  c = ConvCase{2, 8, 8, 8, {10, 33}, {3, 3}, {}, {}, {1, 1, 1, 1}, "NOTSET", true};
  run(c);
  c = ConvCase{1, 4, 8, 4, {9, 9}, {3, 3}, {2, 2}, {}, {1, 0, 2, 1}, "NOTSET", false};
  run(c);
  c = ConvCase{1, 3, 3, 3, {12}, {5}, {1}, {2}, {}, "SAME_UPPER", true};
  run(c);
  // Depthwise 3-D (general path).
  c = ConvCase{1, 3, 3, 3, {4, 5, 6}, {2, 2, 2}, {}, {}, {1, 0, 1, 0, 1, 1}, "NOTSET", true};
  run(c);
  // Grouped 2-D with dilation and asymmetric pads.
  c = ConvCase{1, 6, 9, 3, {11, 8}, {3, 2}, {1, 2}, {2, 1}, {0, 3, 2, 1}, "NOTSET", true};
  run(c);
  // 3-D with strides.
  c = ConvCase{2,        2,    4, 1, {5, 6, 7}, {3, 2, 3}, {2, 1, 2}, {1, 2, 1}, {1, 1, 0, 0, 1, 1},
               "NOTSET", false};
  run(c);
  // Every auto_pad.
  for (const char* ap : {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}) {
    c = ConvCase{1, 3, 4, 1, {7, 8}, {3, 4}, {2, 3}, {}, {}, ap, true};
    run(c);
    c = ConvCase{1, 2, 3, 1, {10}, {4}, {3}, {2}, {}, ap, false};
    run(c);
  }
  // Large enough for several GEMM tiles and im2col chunks.
  c = ConvCase{1, 16, 40, 1, {30, 30}, {3, 3}, {}, {}, {1, 1, 1, 1}, "NOTSET", true};
  run(c);
  // Kernel exactly the padded input size.
  c = ConvCase{1, 2, 2, 1, {3, 3}, {5, 4}, {}, {}, {1, 0, 1, 1}, "NOTSET", true};
  run(c);
}

TEST_CASE("Conv random attribute combinations") {
  std::mt19937 rng(2024);
  for (int rep = 0; rep < 60; ++rep) {
    ConvCase c;
    const int rank = 1 + rep % 3;
    c.batch = 1 + rng() % 2;
    c.group = 1 + rng() % 3;
    c.channels = c.group * (1 + rng() % 3);
    c.out_channels = c.group * (1 + rng() % 3);
    c.bias = rng() & 1;
    c.const_w = rng() & 1;
    const char* aps[] = {"NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    c.auto_pad = aps[rng() % 5];
    const bool explicit_pads = c.auto_pad == "NOTSET" && (rng() & 1);
    std::vector<int64_t> pb(rank), pe(rank);
    for (int d = 0; d < rank; ++d) {
      c.kernel.push_back(1 + rng() % 3);
      c.strides.push_back(1 + rng() % 3);
      c.dilations.push_back(1 + rng() % 2);
      pb[d] = explicit_pads ? rng() % 3 : 0;
      pe[d] = explicit_pads ? rng() % 3 : 0;
      const int64_t ext = (c.kernel[d] - 1) * c.dilations[d] + 1;
      c.in.push_back(std::max<int64_t>(ext, 1 + rng() % (rank == 3 ? 6 : 10)));
    }
    if (explicit_pads) {
      c.pads = pb;
      c.pads.insert(c.pads.end(), pe.begin(), pe.end());
    }
    RunCase(c, 1000 + rep);
  }
}

// A few output positions with constant W (a speech encoder's 1-D convs: 1 to 3 positions, up to
// 258 channels) take the transposed GEMM: the reference bound, and the bits of the runtime-W
// path (the same FMA chain per element).
TEST_CASE("Conv with few output positions: transposed GEMM, same bits as runtime weights") {
  struct FewCase {
    std::vector<int64_t> in, kernel, strides;
    int64_t channels, out_channels, batch;
  };
  const FewCase cases[] = {
      {{576}, {256}, {128}, 1, 258, 1}, {{3}, {3}, {1}, 129, 128, 2}, {{3}, {3}, {2}, 64, 64, 1},
      {{1}, {1}, {1}, 64, 200, 1},      {{4, 6}, {3, 3}, {1, 2}, 5, 17, 2},
      {{9}, {2}, {1}, 3, 40, 1},  // 8 positions: the largest count that takes it
      {{10}, {2}, {1}, 3, 40, 1},  // 9: the usual path
  };
  uint32_t seed = 5000;
  for (const FewCase& f : cases) {
    ConvCase c;
    c.in = f.in;
    c.kernel = f.kernel;
    c.strides = f.strides;
    c.channels = f.channels;
    c.out_channels = f.out_channels;
    c.batch = f.batch;
    c.bias = true;
    c.const_w = true;
    RunCase(c, seed);
    Dims xd = {c.batch, c.channels};
    xd.insert(xd.end(), c.in.begin(), c.in.end());
    Dims wd = {c.out_channels, c.channels};
    wd.insert(wd.end(), c.kernel.begin(), c.kernel.end());
    const std::vector<Tensor> inputs = {RandomF32(xd, seed), RandomF32(wd, seed + 1),
                                        RandomF32({c.out_channels}, seed + 2)};
    const std::vector<graph::Attribute> attrs = {AttrInts("strides", c.strides)};
    RunNodeOptions constant;
    constant.constant_inputs = {1, 2};
    const Tensor y_const = RunNode("Conv", inputs, attrs, constant)[0];
    const Tensor y_runtime = RunNode("Conv", inputs, attrs, RunNodeOptions{})[0];
    CAPTURE(Describe(c));
    CHECK(y_const.BitwiseEquals(y_runtime));
    ++seed;
  }
}

TEST_CASE("Conv validation errors") {
  const Tensor x = RandomF32({1, 4, 6, 6}, 1);
  const Tensor w = RandomF32({6, 2, 3, 3}, 2);
  auto expect_fail = [&](const std::vector<Tensor>& in,
                         const std::vector<graph::Attribute>& attrs) {
    CHECK_THROWS_AS(RunNode("Conv", in, attrs), Error);
  };
  expect_fail({x, w}, {});                                              // channels 4 vs 2*group 1
  expect_fail({x, w}, {AttrInt("group", 3)});                           // 4 != 2*3
  expect_fail({x, RandomF32({5, 2, 3, 3}, 3)}, {AttrInt("group", 2)});  // Cout 5 % 2
  expect_fail({x, RandomF32({6, 4, 7, 3}, 3)}, {});                     // kernel larger than input
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3)}, {AttrInts("pads", {-1, 0, 0, 0})});
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3)}, {AttrInts("strides", {0, 1})});
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3)}, {AttrInts("dilations", {1, 0})});
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3)}, {AttrInts("strides", {1, 1, 1})});
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3)}, {AttrInts("kernel_shape", {3, 2})});
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3)}, {AttrString("auto_pad", "SAME")});
  expect_fail({x, RandomF32({6, 4, 3, 3}, 3), RandomF32({5}, 4)}, {});  // bias size
  expect_fail({x, RandomF32({6, 4, 3}, 3)}, {});                        // rank mismatch
  expect_fail({RandomF32({4, 6}, 1), RandomF32({6, 4}, 3)}, {});        // rank < 3
  expect_fail({x, RandomF32({6, 4, 7, 3}, 3)}, {AttrString("auto_pad", "VALID")});
  // Padding can make a large kernel fit.
  CHECK(RunNode("Conv", {x, RandomF32({6, 4, 7, 3}, 3)}, {AttrInts("pads", {1, 0, 0, 0})})[0]
            .dims() == Dims{1, 6, 1, 4});
}

}  // namespace
}  // namespace simplecpp::testing
