// MelWeightMatrix (ai.onnx opset 17): the [dft_length/2 + 1, num_mel_bins] matrix of triangular
// mel filterbanks (peak 1.0) that maps a one-sided linear spectrum to mel bands.
//
// With mel(f) = 2595 * log10(1 + f / 700), the num_mel_bins + 2 band edges are spaced evenly in
// mel from mel(lower_edge_hertz) in steps of (mel(upper) - mel(lower)) / (num_mel_bins + 2) (the
// step ONNX's reference implementation uses), mapped back to hertz and to spectrum bins
// floor((dft_length + 1) * f / sample_rate). Band i rises linearly from bin edge[i] (0) to
// edge[i+1] (1) and falls to edge[i+2] (exclusive); a band whose rising edge is empty gets a single
// 1 at edge[i+1]. The mel edges are computed in float32 and the hertz / bin values in float64,
// the precision of the reference. Band edges outside [0, dft_length/2] (e.g. an upper edge above
// the Nyquist frequency) are an error, as they index outside the matrix.
//
// Inputs are scalars (a one-element tensor is accepted): num_mel_bins, dft_length, sample_rate
// int32/int64; lower/upper_edge_hertz float32/float64/float16/bfloat16. The matrix depends only on
// those values and is built at Prepare. Output dtype: the `output_datatype` attribute (float32,
// float64, float16, bfloat16, int32, int64).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace {

class MelWeightMatrixOp final : public Op {
 public:
  explicit MelWeightMatrixOp(const OpInit& init) {
    if (init.num_inputs() != 5) {
      init.Fail("MelWeightMatrix takes 5 inputs, got " + std::to_string(init.num_inputs()));
    }
    const int64_t dt = init.GetInt("output_datatype", 1);
    if (!IsKnownDType(static_cast<int32_t>(dt))) {
      init.Fail("output_datatype " + std::to_string(dt) + " is not a dtype");
    }
    out_ = static_cast<DType>(dt);
    if (out_ != DType::kFloat32 && out_ != DType::kFloat64 && out_ != DType::kFloat16 &&
        out_ != DType::kBFloat16 && out_ != DType::kInt32 && out_ != DType::kInt64) {
      init.Unsupported("output_datatype " + DTypeName(out_) +
                       " (supported: float32, float64, float16, bfloat16, int32, int64)");
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    for (int i = 0; i < 3; ++i) ctx.RequireDType(i, {DType::kInt32, DType::kInt64});
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    for (int i = 3; i < 5; ++i) {
      ctx.RequireDType(i, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    }
    ctx.RequireSameDType(3, 4);
    ctx.set_output_dtype(0, out_);
  }

  std::vector<int> ValueInputs() const override { return {0, 1, 2, 3, 4}; }

  RunFn Prepare(PrepareContext& ctx) const override {
    static const char* kNames[5] = {"num_mel_bins", "dft_length", "sample_rate",
                                    "lower_edge_hertz", "upper_edge_hertz"};
    for (int i = 0; i < 5; ++i) {
      if (ctx.RequireValue(i).num_elements() != 1) {
        ctx.Fail(std::string(kNames[i]) + " must be a scalar, got shape " +
                 DimsToString(ctx.input_dims(i)));
      }
    }
    const int64_t num_mel_bins = TensorToInt64s(ctx.RequireValue(0))[0];
    const int64_t dft_length = TensorToInt64s(ctx.RequireValue(1))[0];
    const int64_t sample_rate = TensorToInt64s(ctx.RequireValue(2))[0];
    const float lower = static_cast<float>(TensorElementAsDouble(ctx.RequireValue(3), 0));
    const float upper = static_cast<float>(TensorElementAsDouble(ctx.RequireValue(4), 0));
    if (num_mel_bins < 1) ctx.Fail("num_mel_bins must be >= 1, got " + std::to_string(num_mel_bins));
    if (dft_length < 1) ctx.Fail("dft_length must be >= 1, got " + std::to_string(dft_length));
    if (sample_rate < 1) ctx.Fail("sample_rate must be >= 1, got " + std::to_string(sample_rate));
    if (!(lower >= 0.0f) || !(upper >= lower) || !std::isfinite(upper)) {
      ctx.Fail("need 0 <= lower_edge_hertz <= upper_edge_hertz (finite), got " +
               std::to_string(lower) + " and " + std::to_string(upper));
    }
    const int64_t bins = dft_length / 2 + 1;
    // Checks the size limits before anything of that size is allocated.
    ctx.set_output(0, out_, {bins, num_mel_bins});

    const float low_mel = 2595.0f * std::log10(1.0f + lower / 700.0f);
    const float high_mel = 2595.0f * std::log10(1.0f + upper / 700.0f);
    const float step = (high_mel - low_mel) / static_cast<float>(num_mel_bins + 2);
    std::vector<int64_t> edge(static_cast<size_t>(num_mel_bins + 2));
    for (int64_t i = 0; i < num_mel_bins + 2; ++i) {
      const double mel = static_cast<double>(i) * static_cast<double>(step) +
                         static_cast<double>(low_mel);
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      const double b = std::floor(static_cast<double>(dft_length + 1) * hz /
                                  static_cast<double>(sample_rate));
      if (!(b >= 0.0 && b < static_cast<double>(bins))) {
        ctx.Fail("band edge " + std::to_string(i) + " (" + std::to_string(hz) +
                 " Hz) falls outside the " + std::to_string(bins) +
                 " spectrum bins: upper_edge_hertz must not exceed sample_rate / 2");
      }
      edge[i] = static_cast<int64_t>(b);
    }
    auto m = std::make_shared<std::vector<double>>(static_cast<size_t>(bins * num_mel_bins), 0.0);
    double* mat = m->data();
    for (int64_t i = 0; i < num_mel_bins; ++i) {
      const int64_t lo = edge[i], center = edge[i + 1], hi = edge[i + 2];
      const int64_t rise = center - lo;
      if (rise == 0) {
        mat[center * num_mel_bins + i] = 1.0;
      } else {
        // Edges are non-decreasing for lower <= upper, so lo <= j <= center stays in range.
        for (int64_t j = lo; j <= center; ++j) {
          mat[j * num_mel_bins + i] = static_cast<double>(j - lo) / static_cast<double>(rise);
        }
      }
      const int64_t fall = hi - center;
      for (int64_t j = center; fall > 0 && j < hi; ++j) {
        mat[j * num_mel_bins + i] = static_cast<double>(hi - j) / static_cast<double>(fall);
      }
    }
    // The output's bytes, built once here; the RunFn only copies them.
    const int64_t n = bins * num_mel_bins;
    auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n * DTypeSize(out_)));
    for (int64_t i = 0; i < n; ++i) {
      uint8_t* dst = bytes->data() + i * DTypeSize(out_);
      const double v = mat[i];
      switch (out_) {
        case DType::kFloat32: { const float f = static_cast<float>(v); std::memcpy(dst, &f, 4); break; }
        case DType::kFloat64: std::memcpy(dst, &v, 8); break;
        case DType::kFloat16: {
          const uint16_t h = kernels::FloatToHalfBits(static_cast<float>(v));
          std::memcpy(dst, &h, 2);
          break;
        }
        case DType::kBFloat16: {
          const uint16_t h = kernels::FloatToBFloat16Bits(static_cast<float>(v));
          std::memcpy(dst, &h, 2);
          break;
        }
        case DType::kInt32: { const int32_t q = static_cast<int32_t>(v); std::memcpy(dst, &q, 4); break; }
        default: { const int64_t q = static_cast<int64_t>(v); std::memcpy(dst, &q, 8); break; }
      }
    }
    std::shared_ptr<const std::vector<uint8_t>> data = bytes;
    return [data](RunContext& rc) {
      if (!data->empty()) std::memcpy(rc.output(0).raw_data(), data->data(), data->size());
    };
  }

 private:
  DType out_ = DType::kFloat32;
};

}  // namespace

void RegisterMelWeightMatrixOps(OpRegistry& registry) {
  registry.Register("", "MelWeightMatrix", 17, MakeFactory<MelWeightMatrixOp>());
}

}  // namespace simplecpp::graph
