// The "segmentation" and "segmentation-int8" built-in models (builtin_models.h): an encoder-
// decoder CNN at a real image size, and its twin quantized the way ONNX Runtime's dynamic
// quantizer rewrites Conv (DynamicQuantizeLinear + ConvInteger + Cast + Mul + Add).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "simplecpp/api/builtin_builder.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/error.h"

namespace simplecpp::builtin {

using namespace detail;  // NOLINT: the builder helpers

namespace {

class SegmentationBuilder {
 public:
  SegmentationBuilder(graph::Graph* g, bool int8, bool per_channel)
      : b_(g, 0x5E6ull), int8_(int8), per_channel_(per_channel) {}

  Builder& b() { return b_; }

  // Conv with kernel k (pads k/2), stride s, `group` groups, bias; Relu when `relu`. The float
  // weights are drawn the same way for both twins, so the int8 model quantizes the float one.
  std::string Conv(const std::string& name, const std::string& in, int64_t cin, int64_t cout,
                   int64_t k, int64_t s, int64_t group, bool relu) {
    const Dims wdims{cout, cin / group, k, k};
    const float scale = 1.0f / std::sqrt(static_cast<float>(cin / group * k * k));
    Tensor w = RandomFloatTensor(wdims, b_.rng().Next(), -scale, scale);
    Tensor bias = RandomFloatTensor({cout}, b_.rng().Next(), -0.1f, 0.1f);
    std::vector<graph::Attribute> attrs{AttrInts("kernel_shape", {k, k}), AttrInts("strides", {s, s}),
                                        AttrInts("pads", {k / 2, k / 2, k / 2, k / 2}),
                                        AttrInt("group", group)};
    std::string y;
    if (!int8_) {
      y = b_.Op("Conv", name,
                {in, b_.Initializer(name + ".weight", std::move(w)), b_.Initializer(name + ".bias", std::move(bias))},
                std::move(attrs));
    } else {
      y = QuantizedConv(name, in, w, bias, std::move(attrs));
    }
    return relu ? b_.Op("Relu", name + ".relu", {y}) : y;
  }

  std::string Resize(const std::string& name, const std::string& in, const std::string& mode) {
    return b_.Op("Resize", name, {in, "", "resize.scales"}, {AttrString("mode", mode)});
  }

 private:
  // x -> DynamicQuantizeLinear -> ConvInteger(w_q, zero points) -> Cast float -> * (x_scale *
  // w_scale) -> + bias [M,1,1]. "dec2.fuse" gets uint8 weights with per-channel scales and zero
  // points (asymmetric, over each output channel's range); every other layer int8 weights with one
  // symmetric scale (zero point 0).
  std::string QuantizedConv(const std::string& name, const std::string& in, const Tensor& w,
                            const Tensor& bias, std::vector<graph::Attribute> attrs) {
    const int64_t cout = w.dims()[0];
    const int64_t per = w.num_elements() / cout;
    const float* wp = w.data<float>();
    const auto dq = b_.OpN("DynamicQuantizeLinear", name + ".quantize", {in},
                           {name + ".x_q", name + ".x_scale", name + ".x_zero_point"});
    std::string w_q, w_zp, w_scale;
    if (name == "dec2.fuse") {
      Tensor q(DType::kUInt8, w.dims()), zp(DType::kUInt8, {cout});
      std::vector<float> scales(cout);
      for (int64_t c = 0; c < cout; ++c) {
        float lo = 0.0f, hi = 0.0f;
        // Per tensor (per_channel_ false): every channel gets the whole tensor's range.
        const int64_t c0 = per_channel_ ? c : 0, c1 = per_channel_ ? c + 1 : cout;
        for (int64_t i = c0 * per; i < c1 * per; ++i) {
          lo = std::min(lo, wp[i]);
          hi = std::max(hi, wp[i]);
        }
        const float sc = (hi - lo) / 255.0f;
        const float z = std::clamp(std::nearbyint(-lo / sc), 0.0f, 255.0f);
        scales[c] = sc;
        zp.data<uint8_t>()[c] = static_cast<uint8_t>(z);
        for (int64_t i = 0; i < per; ++i) {
          q.data<uint8_t>()[c * per + i] =
              static_cast<uint8_t>(std::clamp(std::nearbyint(wp[c * per + i] / sc) + z, 0.0f, 255.0f));
        }
      }
      w_q = b_.Initializer(name + ".weight_quantized", std::move(q));
      if (per_channel_) {
        w_zp = b_.Initializer(name + ".weight_zero_point", std::move(zp));
        w_scale = b_.Floats(name + ".weight_scale", {cout, 1, 1}, scales);
      } else {
        w_zp = b_.Initializer(name + ".weight_zero_point",
                              Tensor::FromVector<uint8_t>(DType::kUInt8, {}, {zp.data<uint8_t>()[0]}));
        w_scale = b_.Scalar(name + ".weight_scale", scales[0]);
      }
    } else {
      float amax = 0.0f;
      for (int64_t i = 0; i < w.num_elements(); ++i) amax = std::max(amax, std::fabs(wp[i]));
      const float sc = amax / 127.0f;
      Tensor q(DType::kInt8, w.dims());
      for (int64_t i = 0; i < w.num_elements(); ++i) {
        q.data<int8_t>()[i] = static_cast<int8_t>(std::clamp(std::nearbyint(wp[i] / sc), -127.0f, 127.0f));
      }
      w_q = b_.Initializer(name + ".weight_quantized", std::move(q));
      w_zp = b_.Initializer(name + ".weight_zero_point", Tensor::FromVector<int8_t>(DType::kInt8, {}, {0}));
      w_scale = b_.Scalar(name + ".weight_scale", sc);
    }
    std::string y = b_.Op("ConvInteger", name + ".conv_integer", {dq[0], w_q, dq[2], w_zp}, std::move(attrs));
    y = b_.Op("Cast", name + ".cast", {y}, {AttrInt("to", 1)});
    const std::string scale = b_.Op("Mul", name + ".scale", {dq[1], w_scale});
    y = b_.Op("Mul", name + ".rescaled", {y, scale});
    Tensor b3(DType::kFloat32, {cout, 1, 1});
    std::copy(bias.data<float>(), bias.data<float>() + cout, b3.data<float>());
    return b_.Op("Add", name, {y, b_.Initializer(name + ".bias", std::move(b3))});
  }

  Builder b_;
  bool int8_;
  bool per_channel_;
};

}  // namespace

graph::Model MakeSegmentationModel(int64_t size, bool int8, bool per_channel_zero_point) {
  if (size < 16 || size % 16 != 0) {
    throw Error(ErrorCode::kInvalidArgument, "segmentation model size must be a positive multiple of 16");
  }
  graph::Model m = NewModel(int8 ? "segmentation_int8" : "segmentation",
                            int8 ? "simplecpp built-in segmentation CNN, dynamically quantized (random weights)"
                                 : "simplecpp built-in segmentation CNN (random weights)",
                            13);
  graph::Graph& g = m.graph;
  SegmentationBuilder sb(&g, int8, per_channel_zero_point);
  Builder& b = sb.b();
  g.inputs.push_back(TensorValue("image", {1, 3, size, size}));
  b.Floats("resize.scales", {4}, {1, 1, 2, 2});

  // Encoder: [3,S] -> [16,S/2] -> [32,S/4] -> [64,S/8] -> [128,S/16]
  const std::string e1 = sb.Conv("enc1", "image", 3, 16, 3, 2, 1, true);
  std::string e2 = sb.Conv("enc2.dw", e1, 16, 16, 3, 2, 16, true);
  e2 = sb.Conv("enc2.pw", e2, 16, 32, 1, 1, 1, true);
  std::string e3 = sb.Conv("enc3.dw", e2, 32, 32, 3, 2, 32, true);
  e3 = sb.Conv("enc3.pw", e3, 32, 64, 1, 1, 1, true);
  std::string e4 = sb.Conv("enc4.dw", e3, 64, 64, 3, 2, 64, true);
  e4 = sb.Conv("enc4.pw", e4, 64, 128, 1, 1, 1, true);
  // Bottleneck: depthwise-separable residual block at S/16.
  std::string x = sb.Conv("bott.dw", e4, 128, 128, 3, 1, 128, true);
  x = sb.Conv("bott.pw", x, 128, 128, 1, 1, 1, false);
  x = b.Op("Add", "bott.residual", {x, e4});
  x = b.Op("Relu", "bott.relu", {x});
  // Decoder: 1x1 projections, Resize x2, skips by Add (S/8, S/2) and Concat (S/4).
  x = sb.Conv("dec3.proj", x, 128, 64, 1, 1, 1, false);
  x = sb.Resize("dec3.up", x, "nearest");  // [64,S/8]
  x = b.Op("Add", "dec3.skip", {x, e3});
  x = b.Op("Relu", "dec3.relu", {x});
  x = sb.Resize("dec2.up", x, "linear");  // [64,S/4]
  x = b.Op("Concat", "dec2.skip", {x, e2}, {AttrInt("axis", 1)});  // [96,S/4]
  x = sb.Conv("dec2.fuse", x, 96, 32, 1, 1, 1, true);
  x = sb.Conv("dec2.dw", x, 32, 32, 3, 1, 32, true);
  x = sb.Conv("dec1.proj", x, 32, 16, 1, 1, 1, false);
  x = sb.Resize("dec1.up", x, "linear");  // [16,S/2]
  x = b.Op("Add", "dec1.skip", {x, e1});
  x = b.Op("Relu", "dec1.relu", {x});
  x = sb.Conv("head", x, 16, 4, 1, 1, 1, false);  // [4,S/2]
  x = sb.Resize("head.up", x, "linear");          // [4,S]
  b.Op("Softmax", "mask", {x}, {AttrInt("axis", 1)});
  g.outputs.push_back(TensorValue("mask", {1, 4, size, size}));
  return m;
}

}  // namespace simplecpp::builtin
