// Tests for graph/ops/signal.cc and kernels/nn/signal.cc: DFT (17 attribute axis, 20 input axis),
// STFT and the window ops against straightforward std::complex references written here.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"
#include "kernels/nn/signal.h"

namespace simplecpp {
namespace {

using cd = std::complex<double>;
using tensor_test::ErrorCodeOf;
using testing::AttrInt;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RandomF32;
using testing::RunNode;
using testing::RunNodeOptions;

RunNodeOptions Opts(int64_t opset, int threads = 1) {
  RunNodeOptions o;
  o.opset = opset;
  o.threads = threads;
  return o;
}

// Naive transform of one signal zero-padded / truncated to `length`, first `bins` outputs.
std::vector<cd> NaiveDft(const std::vector<cd>& x, int64_t length, int64_t bins, bool inverse) {
  std::vector<cd> y(static_cast<size_t>(bins));
  for (int64_t k = 0; k < bins; ++k) {
    cd acc = 0;
    for (int64_t n = 0; n < std::min<int64_t>(length, x.size()); ++n) {
      const double ang = (inverse ? 2 : -2) * M_PI * double(k) * double(n) / double(length);
      acc += x[n] * std::polar(1.0, ang);
    }
    y[k] = inverse ? acc / double(length) : acc;
  }
  return y;
}

// x dims [..., comp]; transform along axis (normalized) -> y [..., 2] (float32 values).
std::vector<float> DftReference(const Tensor& x, int64_t axis, int64_t length, bool onesided,
                                bool inverse) {
  const Dims& d = x.dims();
  const int64_t r = x.rank(), comp = d[r - 1];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= d[i];
  for (int64_t i = axis + 1; i < r - 1; ++i) inner *= d[i];
  const int64_t n = d[axis];
  const int64_t bins = onesided ? length / 2 + 1 : length;
  std::vector<float> y(static_cast<size_t>(outer * bins * inner * 2));
  const float* xv = x.data<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<cd> sig(static_cast<size_t>(n));
      for (int64_t t = 0; t < n; ++t) {
        const int64_t e = ((o * n + t) * inner + i) * comp;
        sig[t] = cd(xv[e], comp == 2 ? xv[e + 1] : 0.0);
      }
      const std::vector<cd> f = NaiveDft(sig, length, bins, inverse);
      for (int64_t k = 0; k < bins; ++k) {
        y[((o * bins + k) * inner + i) * 2] = float(f[k].real());
        y[((o * bins + k) * inner + i) * 2 + 1] = float(f[k].imag());
      }
    }
  }
  return y;
}

void CheckNear(const Tensor& got, const std::vector<float>& want, double atol = 1e-4) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(got.data<float>()[i] - want[i]) <= atol + 1e-5 * std::abs(want[i]));
  }
}

TEST_CASE("DftF64 kernel: matches the naive sum, padding and truncation") {
  for (const int64_t length : {1, 2, 3, 7, 8, 16, 25}) {
    std::vector<double> tw(2 * length);
    kernels::DftTwiddles(length, tw.data());
    for (const int64_t n_in : {int64_t{1}, length, length + 3}) {
      std::vector<double> x(2 * n_in);
      std::vector<cd> xc(n_in);
      for (int64_t i = 0; i < n_in; ++i) {
        x[2 * i] = std::sin(1.3 * i + 0.2);
        x[2 * i + 1] = std::cos(0.7 * i);
        xc[i] = cd(x[2 * i], x[2 * i + 1]);
      }
      for (const bool inverse : {false, true}) {
        std::vector<double> y(2 * length);
        kernels::DftF64(x.data(), n_in, length, length, inverse, tw.data(), y.data());
        const std::vector<cd> ref = NaiveDft(xc, length, length, inverse);
        for (int64_t k = 0; k < length; ++k) {
          CHECK(y[2 * k] == doctest::Approx(ref[k].real()).epsilon(1e-9).scale(1.0));
          CHECK(y[2 * k + 1] == doctest::Approx(ref[k].imag()).epsilon(1e-9).scale(1.0));
        }
      }
    }
  }
}

TEST_CASE("DFT: axes, dft_length, onesided, inverse, real and complex input, opset 17 and 20") {
  struct Case {
    Dims x;
    int64_t axis;    // as given (may be negative)
    int64_t length;  // -1: no dft_length input
    bool onesided, inverse;
  };
  const std::vector<Case> cases = {
      {{1, 10, 10, 1}, 1, -1, false, false}, {{1, 10, 10, 1}, 2, -1, false, false},
      {{2, 6, 2}, 1, -1, false, true},       {{2, 6, 2}, -2, 9, false, false},
      {{3, 8, 1}, 1, -1, true, false},       {{3, 7, 1}, 1, 4, true, false},
      {{2, 5, 3, 2}, 1, 8, false, true},     {{2, 5, 3, 1}, -3, 5, true, false},
      {{4, 1}, 0, -1, false, false},         {{2, 3, 4, 2}, 2, 2, false, false},
  };
  for (const Case& c : cases) {
    for (const int64_t opset : {17, 20}) {
      CAPTURE(DimsToString(c.x));
      CAPTURE(c.axis);
      CAPTURE(opset);
      const int64_t r = static_cast<int64_t>(c.x.size());
      const int64_t axis = c.axis < 0 ? c.axis + r : c.axis;
      const Tensor x = RandomF32(c.x, 5);
      std::vector<Tensor> inputs = {x, c.length > 0 ? I64({}, {c.length}) : Tensor()};
      std::vector<graph::Attribute> attrs = {AttrInt("onesided", c.onesided),
                                             AttrInt("inverse", c.inverse)};
      if (opset == 20) {
        inputs.push_back(I64({}, {c.axis}));
      } else {
        attrs.push_back(AttrInt("axis", c.axis));
      }
      const int64_t length = c.length > 0 ? c.length : c.x[axis];
      for (const int threads : {1, 3}) {
        const Tensor y = RunNode("DFT", inputs, attrs, Opts(opset, threads))[0];
        Dims yd = c.x;
        yd[axis] = c.onesided ? length / 2 + 1 : length;
        yd[r - 1] = 2;
        CHECK(y.dims() == yd);
        CheckNear(y, DftReference(x, axis, length, c.onesided, c.inverse), 2e-4 * length);
      }
    }
  }
  // Opset 20 default axis is -2; int32 dft_length.
  const Tensor x = RandomF32({2, 3, 6, 1}, 9);
  const Tensor y = RunNode("DFT", {x, I32({}, {6})}, {}, Opts(20))[0];
  CheckNear(y, DftReference(x, 2, 6, false, false), 1e-3);
}

TEST_CASE("DFT: inverse + onesided is irfft (round trip of a real signal)") {
  for (const int64_t length : {6, 7, 10}) {
    CAPTURE(length);
    const Tensor x = RandomF32({2, length, 3, 1}, 8);
    const Tensor half = RunNode("DFT", {x, Tensor(), I64({}, {1})}, {AttrInt("onesided", 1)}, Opts(20))[0];
    REQUIRE(half.dims() == Dims{2, length / 2 + 1, 3, 2});
    const Tensor back = RunNode("DFT", {half, I64({}, {length}), I64({}, {1})},
                                {AttrInt("onesided", 1), AttrInt("inverse", 1)}, Opts(20))[0];
    REQUIRE(back.dims() == x.dims());
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      CHECK(back.data<float>()[i] == doctest::Approx(x.data<float>()[i]).epsilon(1e-4).scale(1.0));
    }
  }
}

TEST_CASE("DFT: errors") {
  const Tensor x = RandomF32({2, 4, 1}, 1);
  CHECK(ErrorCodeOf([&] { RunNode("DFT", {x, Tensor(), I64({}, {2})}, {}, Opts(20)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("DFT", {x, I64({}, {0})}, {}, Opts(20)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("DFT", {RandomF32({2, 4, 3}, 1)}, {}, Opts(17)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("DFT", {x}, {AttrInt("axis", 5)}, Opts(17)); }) != 0);
  CHECK(ErrorCodeOf([&] {
          RunNode("DFT", {RandomF32({2, 4, 2}, 1)}, {AttrInt("onesided", 1)}, Opts(17));
        }) != 0);
}

TEST_CASE("STFT: frames, window, onesided, complex signal") {
  struct Case {
    int64_t batch, len, comp, step, frame;
    bool window, onesided, give_length;
  };
  const std::vector<Case> cases = {
      {1, 128, 1, 8, 16, false, true, true}, {2, 40, 1, 5, 9, true, true, false},
      {1, 30, 2, 4, 8, true, false, true},   {3, 17, 1, 17, 17, false, false, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.len);
    const Tensor sig = RandomF32({c.batch, c.len, c.comp}, 3);
    const Tensor win = RandomF32({c.frame}, 4, 0.0f, 1.0f);
    std::vector<Tensor> inputs = {sig, I64({}, {c.step}), c.window ? win : Tensor(),
                                  c.give_length ? I64({}, {c.frame}) : Tensor()};
    const Tensor y = RunNode("STFT", inputs, {AttrInt("onesided", c.onesided)}, Opts(17))[0];
    const int64_t frames = (c.len - c.frame) / c.step + 1;
    const int64_t bins = c.onesided ? c.frame / 2 + 1 : c.frame;
    REQUIRE(y.dims() == Dims{c.batch, frames, bins, 2});
    std::vector<float> want;
    for (int64_t b = 0; b < c.batch; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        std::vector<cd> fr(c.frame);
        for (int64_t n = 0; n < c.frame; ++n) {
          const int64_t e = (b * c.len + f * c.step + n) * c.comp;
          const double w = c.window ? win.data<float>()[n] : 1.0;
          fr[n] = cd(sig.data<float>()[e], c.comp == 2 ? sig.data<float>()[e + 1] : 0.0) * w;
        }
        for (const cd& v : NaiveDft(fr, c.frame, bins, false)) {
          want.push_back(float(v.real()));
          want.push_back(float(v.imag()));
        }
      }
    }
    CheckNear(y, want, 1e-4 * c.frame);
  }
  const Tensor sig = RandomF32({1, 20, 1}, 3);
  // Window length and frame_length disagree; frame longer than the signal; step 0.
  CHECK(ErrorCodeOf([&] {
          RunNode("STFT", {sig, I64({}, {2}), RandomF32({4}, 1), I64({}, {5})}, {}, Opts(17));
        }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("STFT", {sig, I64({}, {2}), Tensor(), I64({}, {21})}, {}, Opts(17)); }) != 0);
  // Neither window nor frame_length: one frame over the whole signal.
  CHECK(RunNode("STFT", {sig, I64({}, {2})}, {}, Opts(17))[0].dims() == Dims{1, 1, 11, 2});
  CHECK(ErrorCodeOf([&] { RunNode("STFT", {sig, I64({}, {0}), Tensor(), I64({}, {4})}, {}, Opts(17)); }) != 0);
}

TEST_CASE("Window ops: periodic and symmetric, output_datatype") {
  for (const std::string op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    for (const int periodic : {0, 1}) {
      for (const int64_t size : {1, 2, 5, 10}) {
        CAPTURE(op);
        CAPTURE(periodic);
        CAPTURE(size);
        const Tensor y =
            RunNode(op, {I32({}, {static_cast<int32_t>(size)})}, {AttrInt("periodic", periodic)}, Opts(17))[0];
        REQUIRE(y.dims() == Dims{size});
        REQUIRE(y.dtype() == DType::kFloat32);
        const double den = periodic ? size : size - 1;
        for (int64_t n = 0; n < size; ++n) {
          double want = 1.0;
          if (den > 0) {
            const double a = 2 * M_PI * n / den;
            if (op == "HannWindow") want = std::sin(M_PI * n / den) * std::sin(M_PI * n / den);
            if (op == "HammingWindow") want = 0.54347826 - 0.45652174 * std::cos(a);
            if (op == "BlackmanWindow") want = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
          }
          CHECK(y.data<float>()[n] == doctest::Approx(want).epsilon(1e-6).scale(1.0));
        }
      }
    }
  }
  const Tensor d = RunNode("HannWindow", {I64({}, {4})}, {AttrInt("output_datatype", 11)}, Opts(17))[0];
  REQUIRE(d.dtype() == DType::kFloat64);
  CHECK(d.data<double>()[2] == doctest::Approx(1.0));
  const Tensor i = RunNode("HannWindow", {I64({}, {4})}, {AttrInt("output_datatype", 7)}, Opts(17))[0];
  CHECK(i.data<int64_t>()[2] == 1);
  CHECK(RunNode("BlackmanWindow", {I64({}, {0})}, {}, Opts(17))[0].dims() == Dims{0});
  CHECK(ErrorCodeOf([&] { RunNode("HannWindow", {I64({}, {-1})}, {}, Opts(17)); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("HannWindow", {I64({}, {4})}, {AttrInt("output_datatype", 8)}, Opts(17)); }) != 0);
}

}  // namespace
}  // namespace simplecpp
