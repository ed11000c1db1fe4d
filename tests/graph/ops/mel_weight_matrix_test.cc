// Tests for graph/ops/mel_weight_matrix.cc: MelWeightMatrix against a scalar reference written
// here (band edges evenly spaced in mel, triangles rising to 1 and falling), odd sizes, int64
// inputs, float64 / float16 outputs, triangle peaks, and the errors (non-scalar inputs, bad
// values, an upper edge above the Nyquist frequency).
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

// [dft/2 + 1, bins] row-major.
std::vector<double> RefMel(int64_t bins, int64_t dft, int64_t rate, float lo_hz, float hi_hz) {
  const int64_t rows = dft / 2 + 1;
  const float lo_mel = 2595.0f * std::log10(1.0f + lo_hz / 700.0f);
  const float hi_mel = 2595.0f * std::log10(1.0f + hi_hz / 700.0f);
  const float step = (hi_mel - lo_mel) / static_cast<float>(bins + 2);
  std::vector<int64_t> e(bins + 2);
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (i * static_cast<double>(step) + lo_mel) / 2595.0) - 1.0);
    e[i] = static_cast<int64_t>(std::floor((dft + 1) * hz / rate));
  }
  std::vector<double> m(rows * bins, 0.0);
  for (int64_t b = 0; b < bins; ++b) {
    for (int64_t j = e[b]; j <= e[b + 1]; ++j)
      m[j * bins + b] = e[b + 1] == e[b] ? 1.0 : double(j - e[b]) / double(e[b + 1] - e[b]);
    for (int64_t j = e[b + 1]; j < e[b + 2]; ++j)
      m[j * bins + b] = double(e[b + 2] - j) / double(e[b + 2] - e[b + 1]);
  }
  return m;
}

TEST_CASE("MelWeightMatrix matches the scalar reference") {
  struct P { int64_t bins, dft, rate; float lo, hi; };
  for (const P& p : {P{8, 16, 8192, 0.0f, 4096.0f}, P{5, 63, 16000, 100.0f, 7000.0f},
                     P{13, 257, 22050, 20.0f, 11000.0f}, P{1, 3, 100, 0.0f, 10.0f}}) {
    CAPTURE(p.bins);
    CAPTURE(p.dft);
    auto out =
        RunNode("MelWeightMatrix",
                {I32({}, {static_cast<int32_t>(p.bins)}), I32({}, {static_cast<int32_t>(p.dft)}),
                 I32({}, {static_cast<int32_t>(p.rate)}), F32({}, {p.lo}), F32({}, {p.hi})},
                {}, NodeOptions(17));
    REQUIRE(out[0].dtype() == DType::kFloat32);
    REQUIRE(out[0].dims() == Dims{p.dft / 2 + 1, p.bins});
    const std::vector<double> want = RefMel(p.bins, p.dft, p.rate, p.lo, p.hi);
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(out[0].data<float>()[i] == static_cast<float>(want[i]));
    }
    // Every triangle peaks at exactly 1.
    for (int64_t b = 0; b < p.bins; ++b) {
      float peak = 0.0f;
      for (int64_t r = 0; r < p.dft / 2 + 1; ++r) peak = std::max(peak, out[0].data<float>()[r * p.bins + b]);
      CHECK(peak == 1.0f);
    }
  }
}

TEST_CASE("MelWeightMatrix int64 inputs, float64 and float16 outputs") {
  const std::vector<double> want = RefMel(6, 32, 16000, 50.0f, 8000.0f);
  auto d = RunNode(
      "MelWeightMatrix",
      {I64({1}, {6}), I64({}, {32}), I64({}, {16000}), F32({}, {50.0f}), F32({}, {8000.0f})},
      {AttrInt("output_datatype", 11)}, NodeOptions(17));
  REQUIRE(d[0].dtype() == DType::kFloat64);
  for (size_t i = 0; i < want.size(); ++i) CHECK(d[0].data<double>()[i] == want[i]);
  auto h =
      RunNode("MelWeightMatrix",
              {I64({}, {6}), I64({}, {32}), I64({}, {16000}), F32({}, {50.0f}), F32({}, {8000.0f})},
              {AttrInt("output_datatype", 10)}, NodeOptions(17));
  REQUIRE(h[0].dtype() == DType::kFloat16);
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(h[0].data<uint16_t>()[i] == kernels::FloatToHalfBits(static_cast<float>(want[i])));
  }
  // float16 / bfloat16 edge frequencies (50 and 8000 are exact in both).
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    Tensor lo(t, {}), hi(t, {});
    const bool half = t == DType::kFloat16;
    lo.data<uint16_t>()[0] = half ? kernels::FloatToHalfBits(50.0f) : kernels::FloatToBFloat16Bits(50.0f);
    hi.data<uint16_t>()[0] = half ? kernels::FloatToHalfBits(8000.0f) : kernels::FloatToBFloat16Bits(8000.0f);
    auto f = RunNode("MelWeightMatrix", {I64({}, {6}), I64({}, {32}), I64({}, {16000}), lo, hi}, {},
                     NodeOptions(17));
    for (size_t i = 0; i < want.size(); ++i) CHECK(f[0].data<float>()[i] == static_cast<float>(want[i]));
  }
}

TEST_CASE("MelWeightMatrix errors") {
  auto run = [](Tensor bins, Tensor dft, Tensor rate, float lo, float hi, int64_t dt = 1) {
    RunNode("MelWeightMatrix", {bins, dft, rate, F32({}, {lo}), F32({}, {hi})},
            {AttrInt("output_datatype", dt)}, NodeOptions(17));
  };
  const int bad = static_cast<int>(ErrorCode::kInvalidArgument);
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {16}), I32({}, {8000}), 0.0f, 4000.0f); }) ==
        0);
  CHECK(ErrorCodeOf([&] {
          run(I32({2}, {4, 4}), I32({}, {16}), I32({}, {8000}), 0.0f, 4000.0f);
        }) == bad);
  CHECK(ErrorCodeOf([&] { run(I32({}, {0}), I32({}, {16}), I32({}, {8000}), 0.0f, 4000.0f); }) ==
        bad);
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {0}), I32({}, {8000}), 0.0f, 4000.0f); }) ==
        bad);
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {16}), I32({}, {-1}), 0.0f, 4000.0f); }) ==
        bad);
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {16}), I32({}, {8000}), 500.0f, 100.0f); }) ==
        bad);
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {16}), I32({}, {8000}), -5.0f, 100.0f); }) ==
        bad);
  // Upper edge above Nyquist: band edges index past the last spectrum bin.
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {16}), I32({}, {8000}), 0.0f, 7900.0f); }) ==
        bad);
  // Mixed index dtypes; unsupported output dtype; not a dtype.
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I64({}, {16}), I32({}, {8000}), 0.0f, 4000.0f); }) !=
        0);
  CHECK(ErrorCodeOf([&] { run(I32({}, {4}), I32({}, {16}), I32({}, {8000}), 0.0f, 4000.0f, 8); }) ==
        static_cast<int>(ErrorCode::kUnsupported));
  CHECK(ErrorCodeOf([&] {
          run(I32({}, {4}), I32({}, {16}), I32({}, {8000}), 0.0f, 4000.0f, 999);
        }) == static_cast<int>(ErrorCode::kInvalidModel));
}

}  // namespace
}  // namespace simplecpp::testing
