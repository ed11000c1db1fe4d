// Tests for graph/ops/resize.cc (Resize 10-19, Upsample 7/9) against a direct reference written
// here from the spec: per output element, per axis the source coordinate by the formula of the
// coordinate_transformation_mode, then every input index within the filter's reach with its
// weight (edge-clamped reads), and the n-d sum over all tap combinations. Sweeps modes, every
// coordinate mode and nearest mode, up/down scaling with odd sizes, cubic A / exclude_outside,
// antialias, axes, keep_aspect_ratio_policy, tf_crop_and_resize, uint8 / double, and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/recurrent_float16_test_util.h"
#include "kernels/targets.h"
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

struct RefSpec {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

// Taps (index, weight) of one output coordinate along one axis; sets *outside for
// tf_crop_and_resize coordinates outside the input.
std::vector<std::pair<int64_t, double>> RefTaps(const RefSpec& s, int64_t x, double scale,
                                                int64_t in, int64_t out, double r0, double r1,
                                                bool* outside) {
  const double out_f = scale * in;
  double xo = 0;
  if (s.coord == "half_pixel") {
    xo = (x + 0.5) / scale - 0.5;
  } else if (s.coord == "half_pixel_symmetric") {
    xo = in / 2.0 * (1 - out / out_f) + (x + 0.5) / scale - 0.5;
  } else if (s.coord == "pytorch_half_pixel") {
    xo = out_f == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  } else if (s.coord == "align_corners") {
    xo = out_f == 1 ? 0 : x * (in - 1) / (out_f - 1);
  } else if (s.coord == "asymmetric") {
    xo = x / scale;
  } else if (s.coord == "tf_crop_and_resize") {
    xo = out_f == 1 ? (r1 - r0) * (in - 1) / 2 : x * (r1 - r0) * (in - 1) / (out_f - 1);
    xo += r0 * (in - 1);
  }
  *outside = s.coord == "tf_crop_and_resize" && (xo < 0 || xo > in - 1);
  auto clampi = [in](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), in - 1); };
  std::vector<std::pair<int64_t, double>> taps;
  if (s.mode == "nearest") {
    int64_t i;
    const double f = std::floor(xo), frac = xo - f;
    if (frac == 0) {
      i = static_cast<int64_t>(xo);
    } else if (s.nearest == "round_prefer_floor") {
      i = frac <= 0.5 ? static_cast<int64_t>(f) : static_cast<int64_t>(f) + 1;
    } else if (s.nearest == "round_prefer_ceil") {
      i = frac < 0.5 ? static_cast<int64_t>(f) : static_cast<int64_t>(f) + 1;
    } else if (s.nearest == "floor") {
      i = static_cast<int64_t>(f);
    } else {
      i = static_cast<int64_t>(std::ceil(xo));
    }
    taps.push_back({clampi(i), 1.0});
    return taps;
  }
  const double fs = s.antialias ? std::min(scale, 1.0) : 1.0;
  const double support = (s.mode == "linear" ? 1.0 : 2.0) / fs;
  double sum = 0;
  for (int64_t i = static_cast<int64_t>(std::floor(xo - support)) - 1;
       i <= static_cast<int64_t>(std::ceil(xo + support)) + 1; ++i) {
    const double d = std::abs((i - xo) * fs);
    double w;
    if (s.mode == "linear") {
      w = std::max(0.0, 1 - d);
    } else if (d <= 1) {
      w = (s.a + 2) * d * d * d - (s.a + 3) * d * d + 1;
    } else if (d < 2) {
      w = s.a * d * d * d - 5 * s.a * d * d + 8 * s.a * d - 4 * s.a;
    } else {
      w = 0;
    }
    if (s.exclude_outside && (i < 0 || i >= in)) w = 0;
    if (w == 0) continue;
    taps.push_back({clampi(i), w});
    sum += w;
  }
  if (s.antialias || s.exclude_outside) {
    for (auto& t : taps) t.second /= sum;
  }
  return taps;
}

std::vector<double> RefResize(const RefSpec& s, const Dims& xd, const std::vector<double>& x,
                              const std::vector<double>& scale, const Dims& out,
                              const std::vector<double>& roi /* starts then ends, all axes */) {
  const size_t r = xd.size();
  std::vector<double> y;
  std::vector<int64_t> o(r, 0);
  int64_t total = 1;
  for (int64_t v : out) total *= v;
  for (int64_t e = 0; e < total; ++e) {
    int64_t rem = e;
    for (size_t k = r; k-- > 0;) {
      o[k] = rem % out[k];
      rem /= out[k];
    }
    std::vector<std::vector<std::pair<int64_t, double>>> taps(r);
    bool outside = false;
    for (size_t k = 0; k < r; ++k) {
      bool ok = false;
      taps[k] = RefTaps(s, o[k], scale[k], xd[k], out[k], roi.empty() ? 0 : roi[k],
                        roi.empty() ? 1 : roi[r + k], &ok);
      outside = outside || ok;
    }
    if (outside) {
      y.push_back(s.extrapolation);
      continue;
    }
    // Sum over the cartesian product of taps.
    double acc = 0;
    std::vector<size_t> t(r, 0);
    while (true) {
      int64_t idx = 0;
      double w = 1;
      for (size_t k = 0; k < r; ++k) {
        idx = idx * xd[k] + taps[k][t[k]].first;
        w *= taps[k][t[k]].second;
      }
      acc += w * x[idx];
      size_t k = r;
      while (k-- > 0) {
        if (++t[k] < taps[k].size()) break;
        t[k] = 0;
      }
      if (k == static_cast<size_t>(-1)) break;
    }
    y.push_back(acc);
  }
  return y;
}

void CheckClose(const Tensor& y, const std::vector<double>& ref, double tol = 1e-4) {
  REQUIRE(static_cast<size_t>(y.num_elements()) == ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    CAPTURE(i);
    const double v = y.dtype() == DType::kFloat64 ? y.data<double>()[i] : y.data<float>()[i];
    REQUIRE(std::fabs(v - ref[i]) <= tol * (1 + std::fabs(ref[i])));
  }
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.data<float>()[i]);
  return v;
}

std::vector<graph::Attribute> Attrs(const RefSpec& s) {
  std::vector<graph::Attribute> a = {
      AttrString("mode", s.mode),
      AttrString("coordinate_transformation_mode", s.coord),
      AttrString("nearest_mode", s.nearest),
      AttrFloat("cubic_coeff_a", static_cast<float>(s.a)),
      AttrInt("exclude_outside", s.exclude_outside ? 1 : 0),
      AttrInt("antialias", s.antialias ? 1 : 0),
      AttrFloat("extrapolation_value", static_cast<float>(s.extrapolation))};
  return a;
}

TEST_CASE("Resize: every mode x coordinate mode x scale, scales and sizes inputs") {
  const Dims xd = {1, 2, 5, 7};
  const Tensor x = RandomF32(xd, 11, -2.0f, 2.0f);
  const std::vector<double> xv = ToDoubles(x);
  const std::vector<std::string> coords = {"half_pixel", "half_pixel_symmetric",
                                           "pytorch_half_pixel", "align_corners", "asymmetric"};
  const std::vector<std::vector<float>> scale_sets = {{1, 1, 2.0f, 3.0f},
                                                      {1, 1, 0.6f, 0.5f},
                                                      {1, 1, 1.7f, 0.3f},
                                                      {1, 1, 0.2f, 1.0f},
                                                      {1, 1, 1.0f, 1.0f}};
  for (const std::string mode : {"nearest", "linear", "cubic"}) {
    for (const std::string& coord : coords) {
      for (const auto& sc : scale_sets) {
        RefSpec s;
        s.mode = mode;
        s.coord = coord;
        CAPTURE(mode);
        CAPTURE(coord);
        CAPTURE(sc[2]);
        CAPTURE(sc[3]);
        Dims out = xd;
        std::vector<double> scale(4);
        for (int k = 0; k < 4; ++k) {
          scale[k] = sc[k];
          out[k] = static_cast<int64_t>(static_cast<double>(sc[k]) * xd[k]);
        }
        const Tensor y = RunNode("Resize", {x, Tensor(), F32({4}, sc)}, Attrs(s), Opset(19))[0];
        REQUIRE(y.dims() == out);
        CheckClose(y, RefResize(s, xd, xv, scale, out, {}));
        // Sizes input: scale = out / in.
        Dims sizes = {1, 2, std::max<int64_t>(out[2], 1), out[3] + 1};
        std::vector<double> sscale(4);
        for (int k = 0; k < 4; ++k) sscale[k] = static_cast<double>(sizes[k]) / xd[k];
        const Tensor y2 = RunNode("Resize", {x, Tensor(), Tensor(), I64({4}, sizes)}, Attrs(s),
                                  Opset(coord == "half_pixel_symmetric" ? 19 : 13, {3}))[0];
        REQUIRE(y2.dims() == sizes);
        CheckClose(y2, RefResize(s, xd, xv, sscale, sizes, {}));
      }
    }
  }
}

TEST_CASE("Resize nearest modes, cubic variants and antialias") {
  const Dims xd = {1, 1, 9, 6};
  const Tensor x = RandomF32(xd, 5);
  const std::vector<double> xv = ToDoubles(x);
  auto run = [&](const RefSpec& s, std::vector<float> sc, int64_t opset = 19) {
    std::vector<double> scale(sc.begin(), sc.end());
    Dims out = xd;
    for (int k = 0; k < 4; ++k) out[k] = static_cast<int64_t>(scale[k] * xd[k]);
    const Tensor y = RunNode("Resize", {x, Tensor(), F32({4}, sc)}, Attrs(s), Opset(opset))[0];
    REQUIRE(y.dims() == out);
    CheckClose(y, RefResize(s, xd, xv, scale, out, {}));
  };
  for (const std::string nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    for (const std::string coord : {"half_pixel", "asymmetric", "align_corners"}) {
      RefSpec s;
      s.nearest = nm;
      s.coord = coord;
      CAPTURE(nm);
      CAPTURE(coord);
      run(s, {1, 1, 2.5f, 1.5f});
      run(s, {1, 1, 0.5f, 0.7f});
    }
  }
  for (double a : {-0.75, -0.5}) {
    for (bool excl : {false, true}) {
      RefSpec s;
      s.mode = "cubic";
      s.a = a;
      s.exclude_outside = excl;
      CAPTURE(a);
      CAPTURE(excl);
      run(s, {1, 1, 1.4f, 2.0f});
      run(s, {1, 1, 0.6f, 0.5f});
    }
  }
  for (const std::string mode : {"linear", "cubic"}) {
    for (bool excl : {false, true}) {
      RefSpec s;
      s.mode = mode;
      s.antialias = true;
      s.exclude_outside = excl;
      CAPTURE(mode);
      CAPTURE(excl);
      run(s, {1, 1, 0.45f, 0.34f});
      run(s, {1, 1, 0.7f, 1.5f});
    }
  }
}

TEST_CASE("Resize axes, keep_aspect_ratio_policy, tf_crop_and_resize") {
  const Dims xd = {2, 3, 4, 5};
  const Tensor x = RandomF32(xd, 9);
  const std::vector<double> xv = ToDoubles(x);
  RefSpec s;
  s.mode = "linear";
  // axes [3, 2] with scales.
  {
    auto attrs = Attrs(s);
    attrs.push_back(AttrInts("axes", {3, -2}));
    const Tensor y = RunNode("Resize", {x, Tensor(), F32({2}, {1.5f, 2.0f})}, attrs, Opset(18))[0];
    const Dims out = {2, 3, 8, 7};
    REQUIRE(y.dims() == out);
    CheckClose(y, RefResize(s, xd, xv, {1, 1, 2.0, 1.5}, out, {}));
  }
  // keep_aspect_ratio_policy on sizes.
  for (const std::string policy : {"not_larger", "not_smaller"}) {
    CAPTURE(policy);
    auto attrs = Attrs(s);
    attrs.push_back(AttrString("keep_aspect_ratio_policy", policy));
    attrs.push_back(AttrInts("axes", {2, 3}));
    const Tensor y =
        RunNode("Resize", {x, Tensor(), Tensor(), I64({2}, {7, 8})}, attrs, Opset(18))[0];
    const double sc =
        policy == "not_larger" ? std::min(7.0 / 4, 8.0 / 5) : std::max(7.0 / 4, 8.0 / 5);
    const Dims out = {2, 3, static_cast<int64_t>(sc * 4 + 0.5), static_cast<int64_t>(sc * 5 + 0.5)};
    REQUIRE(y.dims() == out);
    CheckClose(y, RefResize(s, xd, xv, {1, 1, sc, sc}, out, {}));
  }
  // tf_crop_and_resize with roi and extrapolation, linear and nearest.
  for (const std::string mode : {"linear", "nearest", "cubic"}) {
    RefSpec t;
    t.mode = mode;
    t.coord = "tf_crop_and_resize";
    t.extrapolation = 7.5;
    CAPTURE(mode);
    const std::vector<double> roi = {0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4};
    const Tensor y = RunNode(
        "Resize",
        {x, F32({8}, std::vector<float>(roi.begin(), roi.end())), Tensor(), I64({4}, {2, 3, 6, 3})},
        Attrs(t), Opset(13))[0];
    const Dims out = {2, 3, 6, 3};
    REQUIRE(y.dims() == out);
    CheckClose(y, RefResize(t, xd, xv, {1, 1, 6.0 / 4, 3.0 / 5}, out,
                            std::vector<double>(roi.begin(), roi.end())));
  }
}

TEST_CASE("Resize uint8 nearest, double linear, opset 10 and Upsample") {
  // uint8 nearest: a pure gather.
  Tensor xu(DType::kUInt8, {1, 1, 3, 4});
  for (int i = 0; i < 12; ++i) xu.data<uint8_t>()[i] = static_cast<uint8_t>(i * 20);
  RefSpec s;
  const Tensor yu = RunNode("Resize", {xu, Tensor(), F32({4}, {1, 1, 2, 0.5f})}, Attrs(s))[0];
  REQUIRE(yu.dtype() == DType::kUInt8);
  REQUIRE(yu.dims() == Dims{1, 1, 6, 2});
  std::vector<double> xv(12);
  for (int i = 0; i < 12; ++i) xv[i] = i * 20;
  const auto ref = RefResize(s, {1, 1, 3, 4}, xv, {1, 1, 2, 0.5}, {1, 1, 6, 2}, {});
  for (size_t i = 0; i < ref.size(); ++i) CHECK(yu.data<uint8_t>()[i] == ref[i]);

  // double linear.
  Tensor xd(DType::kFloat64, {1, 2, 3});
  for (int i = 0; i < 6; ++i) xd.data<double>()[i] = std::sin(i * 1.3);
  std::vector<double> dv(xd.data<double>(), xd.data<double>() + 6);
  RefSpec l;
  l.mode = "linear";
  const Tensor yd = RunNode("Resize", {xd, Tensor(), F32({3}, {1, 2.5f, 1.5f})}, Attrs(l))[0];
  REQUIRE(yd.dtype() == DType::kFloat64);
  CheckClose(yd, RefResize(l, {1, 2, 3}, dv, {1, 2.5, 1.5}, {1, 5, 4}, {}), 1e-12);

  // Opset 10 / Upsample: asymmetric; nearest is floor when upsampling.
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  const std::vector<float> want = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                   3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  const Tensor y10 = RunNode("Resize", {x, F32({4}, {1, 1, 2, 3})}, {}, Opset(10))[0];
  REQUIRE(y10.dims() == Dims{1, 1, 4, 6});
  for (size_t i = 0; i < want.size(); ++i) CHECK(y10.data<float>()[i] == want[i]);
  const Tensor y9 = RunNode("Upsample", {x, F32({4}, {1, 1, 2, 3})}, {}, Opset(9))[0];
  CHECK(y9.BitwiseEquals(y10));
  const Tensor y7 = RunNode("Upsample", {x}, {AttrFloats("scales", {1, 1, 2, 3})}, Opset(7))[0];
  CHECK(y7.BitwiseEquals(y10));
  RefSpec la;
  la.mode = "linear";
  la.coord = "asymmetric";
  const Tensor yl =
      RunNode("Upsample", {x, F32({4}, {1, 1, 2, 2})}, {AttrString("mode", "linear")}, Opset(9))[0];
  CheckClose(yl, RefResize(la, {1, 1, 2, 2}, {1, 2, 3, 4}, {1, 1, 2, 2}, {1, 1, 4, 4}, {}));
}

TEST_CASE("Resize opset 11: empty scales tensor with sizes") {
  const Tensor x = RandomF32({1, 1, 3, 4}, 7);
  RefSpec s;
  s.mode = "linear";
  s.coord = "align_corners";
  const Tensor y = RunNode("Resize", {x, F32({0}, {}), F32({0}, {}), I64({4}, {1, 1, 5, 2})},
                           Attrs(s), Opset(11))[0];
  REQUIRE(y.dims() == Dims{1, 1, 5, 2});
  CheckClose(y, RefResize(s, {1, 1, 3, 4}, ToDoubles(x), {1, 1, 5.0 / 3, 0.5}, {1, 1, 5, 2}, {}));
}

TEST_CASE("Resize linear on every compiled SIMD target (row widths around the lane count)") {
  for (const auto& t : kernels::CompiledTargets()) {
    kernels::ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t w : {1, 3, 7, 8, 9, 15, 16, 17, 33}) {
      CAPTURE(w);
      const Dims xd = {1, 5, w};
      const Tensor x = RandomF32(xd, static_cast<uint32_t>(w));
      RefSpec s;
      s.mode = "linear";
      const Tensor y = RunNode("Resize", {x, Tensor(), F32({3}, {1, 1.6f, 1})}, Attrs(s))[0];
      CheckClose(y,
                 RefResize(s, xd, ToDoubles(x), {1, static_cast<double>(1.6f), 1}, {1, 8, w}, {}));
    }
  }
}

TEST_CASE("Resize threads do not change results") {
  const Tensor x = RandomF32({2, 3, 17, 19}, 3);
  RefSpec s;
  s.mode = "cubic";
  RunNodeOptions o;
  o.opset = 19;
  const Tensor y1 = RunNode("Resize", {x, Tensor(), F32({4}, {1, 1, 1.7f, 0.6f})}, Attrs(s), o)[0];
  o.threads = 3;
  const Tensor y3 = RunNode("Resize", {x, Tensor(), F32({4}, {1, 1, 1.7f, 0.6f})}, Attrs(s), o)[0];
  CHECK(y1.BitwiseEquals(y3));
}

TEST_CASE("Resize errors") {
  const Tensor x = RandomF32({1, 1, 4, 4}, 1);
  auto fails = [&](const std::vector<Tensor>& in, std::vector<graph::Attribute> attrs,
                   int64_t opset = 19) {
    CHECK_THROWS_AS(RunNode("Resize", in, attrs, Opset(opset)), Error);
  };
  fails({x, Tensor(), F32({4}, {1, 1, 2, 2}), I64({4}, {1, 1, 8, 8})}, {});  // both
  fails({x, Tensor(), Tensor(), Tensor()}, {});                              // neither
  fails({x, Tensor(), F32({3}, {1, 2, 2})}, {});                             // wrong length
  fails({x, Tensor(), F32({4}, {1, 1, 0, 2})}, {});                          // scale 0
  fails({x, Tensor(), F32({4}, {1, 1, 2, 2})}, {AttrString("mode", "bogus")});
  fails({x, Tensor(), F32({4}, {1, 1, 2, 2})},
        {AttrString("coordinate_transformation_mode", "bogus")});
  fails({x, Tensor(), F32({4}, {1, 1, 2, 2})}, {AttrString("nearest_mode", "bogus")});
  fails({x, Tensor(), F32({2}, {2, 2})}, {AttrInts("axes", {2, 2})});
  fails({x, Tensor(), F32({2}, {2, 2})}, {AttrInts("axes", {2, 4})});
  fails({x, Tensor(), Tensor(), I64({4}, {1, 1, 2, 2})},
        {AttrString("coordinate_transformation_mode", "tf_crop_and_resize")});  // no roi
  fails({x, Tensor(), F32({4}, {1, 1, 2, 2})},
        {AttrString("coordinate_transformation_mode", "half_pixel_symmetric")}, 18);
  // Integer data needs nearest.
  fails({I32({1, 2}, {1, 2}), Tensor(), F32({2}, {1, 2})}, {AttrString("mode", "linear")});
}

TEST_CASE("Resize and Upsample float16 and bfloat16 against float32") {
  // Storage 16-bit, arithmetic float32, one rounding per output (Check16). X is in [-1, 1) and off
  // by <= eps16/2 after rounding; an output is a weighted sum whose weights' magnitudes add up to
  // at most 1 (linear) or about 1.5 per axis (cubic, two axes): atol = 2.5 * eps16 covers both.
  const Tensor x = RandomF32({1, 2, 5, 6}, 31);
  const Tensor scales = F32({4}, {1, 1, 1.7f, 0.5f});
  for (const std::string mode : {"linear", "cubic", "nearest"}) {
    for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
      CAPTURE(mode);
      CAPTURE(DTypeName(dt));
      const std::vector<graph::Attribute> attrs = {AttrString("mode", mode)};
      const Tensor x16 = To16(x, dt);
      const Tensor got = RunNode("Resize", {x16, Tensor(), scales}, attrs, Opset(19))[0];
      const Tensor exact = RunNode("Resize", {From16(x16), Tensor(), scales}, attrs, Opset(19))[0];
      const Tensor ref = RunNode("Resize", {x, Tensor(), scales}, attrs, Opset(19))[0];
      Check16(got, exact, ref, dt, 2.5 * Eps16(dt));
    }
  }
  // Upsample (opset 9, scales input): float16 linear; bfloat16 is not in Upsample's T.
  const Tensor up_scales = F32({4}, {1, 1, 2, 1.5f});
  const std::vector<graph::Attribute> lin = {AttrString("mode", "linear")};
  const Tensor x16 = To16(x, DType::kFloat16);
  const Tensor got = RunNode("Upsample", {x16, up_scales}, lin, Opset(9))[0];
  const Tensor exact = RunNode("Upsample", {From16(x16), up_scales}, lin, Opset(9))[0];
  const Tensor ref = RunNode("Upsample", {x, up_scales}, lin, Opset(9))[0];
  Check16(got, exact, ref, DType::kFloat16, 2.5 * Eps16(DType::kFloat16));
  CHECK_THROWS_AS(RunNode("Upsample", {To16(x, DType::kBFloat16), up_scales}, lin, Opset(9)), Error);
  CHECK_THROWS_AS(RunNode("Resize", {To16(x, DType::kBFloat16), Tensor(), scales}, lin, Opset(11)),
                  Error);
  CHECK_THROWS_AS(RunNode("Resize", {I32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), scales}, lin,
                          Opset(19)),
                  Error);
}

}  // namespace
}  // namespace simplecpp::testing
