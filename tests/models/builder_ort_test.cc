// Graphs built in code (simplecpp::GraphBuilder), exported with ToOnnx() and run by ONNX Runtime
// (onnxruntime-node), bit for bit against ours:
// - ConvInteger with one weight zero point per output channel. ORT 1.30's ConvInteger refuses
//   that layout at run time ("Non per-tensor quantization is not supported now"), so ORT runs
//   the same convolution built per output channel (one ConvInteger with that channel's scalar
//   zero point each, then Concat), which is what the per-channel node means in the ONNX text;
// - MatMulInteger with one b zero point per column, which ORT runs as is.
// Skipped with the reason when `node` or onnxruntime-node is missing (tests/models/ort_node.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "simplecpp/builder.h"
#include "tests/models/ort_node.h"

namespace simplecpp {
namespace {

// Elements where our int32 output and ORT's (as float32: exact below 2^24) differ.
int64_t Mismatches(const Tensor& ours, const std::vector<float>& ort) {
  REQUIRE(static_cast<int64_t>(ort.size()) == ours.num_elements());
  int64_t mismatches = 0;
  for (int64_t i = 0; i < ours.num_elements(); ++i) {
    mismatches += static_cast<float>(ours.data<int32_t>()[i]) != ort[static_cast<size_t>(i)];
  }
  return mismatches;
}

TEST_CASE("GraphBuilder ConvInteger with per-channel w_zero_point: ours and onnxruntime-node agree") {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipping: " << why);
    return;
  }
  for (const DType w_dtype : {DType::kUInt8, DType::kInt8}) {
    CAPTURE(DTypeName(w_dtype));
    Tensor x(DType::kUInt8, {2, 3, 7, 9});
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 97 + 5) % 256);
    Tensor w(w_dtype, {4, 3, 3, 3});
    for (int64_t i = 0; i < w.num_elements(); ++i) w.data<uint8_t>()[i] = static_cast<uint8_t>((i * 61 + 17) % 256);
    // Odd and even zero points, different per output channel.
    Tensor w_zp(w_dtype, {4});
    const uint8_t zps[4] = {0, 3, 250, 127};
    for (int k = 0; k < 4; ++k) w_zp.data<uint8_t>()[k] = zps[k];

    const Tensor x_zp = Tensor::FromVector<uint8_t>(DType::kUInt8, {}, {129});
    const Attributes conv_attributes = {
        {"pads", Ints({1, 0, 1, 2})}, {"strides", Ints({1, 2})}, {"dilations", Ints({2, 1})}};
    GraphBuilder b(13);
    const std::string xi = b.AddInput("x", DType::kUInt8, {-1, 3, 7, 9}, {"batch", "", "", ""});
    const std::string y = b.AddNode(
        "ConvInteger", {xi, b.AddInitializer("w", w), b.AddInitializer("x_zp", x_zp), b.AddInitializer("w_zp", w_zp)},
        conv_attributes, NodeOptions{"", "conv", {"y"}});
    b.AddOutput(y);
    CHECK(b.Describe(y).dims == Dims{-1, 4, 5, 5});
    const Tensor ours = Session(b.Build()).Run({{"x", x}}).at("y");
    REQUIRE(ours.dims() == Dims{2, 4, 5, 5});
    const std::string exported = b.ToOnnx();
    const Tensor reloaded =
        Session(Model::LoadFromBytes(exported.data(), exported.size())).Run({{"x", x}}).at("y");
    CHECK(reloaded.BitwiseEquals(ours));

    // The per-channel form that ORT runs: channel k's weights and scalar zero point.
    GraphBuilder per_channel(13);
    const std::string xc = per_channel.AddInput("x", DType::kUInt8, {-1, 3, 7, 9});
    const std::string xz = per_channel.AddInitializer("x_zp", x_zp);
    std::vector<std::string> parts;
    const int64_t per_filter = w.num_elements() / 4;
    for (int k = 0; k < 4; ++k) {
      Tensor wk(w_dtype, {1, 3, 3, 3});
      std::memcpy(wk.raw_data(), w.data<uint8_t>() + k * per_filter, static_cast<size_t>(per_filter));
      Tensor zk(w_dtype, {});
      zk.data<uint8_t>()[0] = zps[k];
      const std::string tag = std::to_string(k);
      parts.push_back(per_channel.AddNode(
          "ConvInteger", {xc, per_channel.AddInitializer("w" + tag, wk), xz, per_channel.AddInitializer("zp" + tag, zk)},
          conv_attributes));
    }
    const std::string yc = per_channel.AddNode("Concat", parts, {{"axis", 1}}, NodeOptions{"", "concat", {"y"}});
    per_channel.AddOutput(yc);
    CHECK(per_channel.Describe(yc).dims == Dims{-1, 4, 5, 5});

    std::vector<std::vector<float>> ort;
    std::string error;
    REQUIRE_MESSAGE(testing::RunOrtReference(ort_dir, per_channel.ToOnnx(), {{"x", x}}, "builder_conv_integer", &ort, &error),
                    error);
    REQUIRE(ort.size() == 1);
    CHECK(Mismatches(ours, ort[0]) == 0);
  }
}

TEST_CASE("GraphBuilder MatMulInteger with per-column b_zero_point: ours and onnxruntime-node agree") {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipping: " << why);
    return;
  }
  for (const DType b_dtype : {DType::kUInt8, DType::kInt8}) {
    CAPTURE(DTypeName(b_dtype));
    Tensor a(DType::kUInt8, {2, 5, 17});
    for (int64_t i = 0; i < a.num_elements(); ++i) a.data<uint8_t>()[i] = static_cast<uint8_t>((i * 89 + 3) % 256);
    Tensor bm(b_dtype, {17, 6});
    for (int64_t i = 0; i < bm.num_elements(); ++i) bm.data<uint8_t>()[i] = static_cast<uint8_t>((i * 71 + 29) % 256);
    Tensor b_zp(b_dtype, {6});
    const uint8_t zps[6] = {0, 1, 255, 128, 127, 7};
    for (int k = 0; k < 6; ++k) b_zp.data<uint8_t>()[k] = zps[k];

    GraphBuilder g(13);
    const std::string ai = g.AddInput("a", DType::kUInt8, {-1, 5, 17}, {"batch", "", ""});
    const std::string y = g.AddNode(
        "MatMulInteger",
        {ai, g.AddInitializer("b", bm), g.AddInitializer("a_zp", Tensor::FromVector<uint8_t>(DType::kUInt8, {}, {131})),
         g.AddInitializer("b_zp", b_zp)},
        {}, NodeOptions{"", "mmi", {"y"}});
    g.AddOutput(y);
    CHECK(g.Describe(y).dims == Dims{-1, 5, 6});
    const Tensor ours = Session(g.Build()).Run({{"a", a}}).at("y");
    std::vector<std::vector<float>> ort;
    std::string error;
    REQUIRE_MESSAGE(testing::RunOrtReference(ort_dir, g.ToOnnx(), {{"a", a}}, "builder_matmul_integer", &ort, &error),
                    error);
    REQUIRE(ort.size() == 1);
    CHECK(Mismatches(ours, ort[0]) == 0);
  }
}

}  // namespace
}  // namespace simplecpp
