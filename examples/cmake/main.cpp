// The program every CMake consumer example builds (find_package/, add_subdirectory/,
// fetchcontent/ differ only in how they obtain simplecpp): loads a one-node ONNX model from bytes,
// runs it and checks the result; then builds a MatMulInteger graph in code (per-column zero points)
// and runs it, its exported bytes and the same node eagerly. Exits 0 only when every output is the
// expected one.
#include <simplecpp/builder.h>
#include <simplecpp/simplecpp.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// ModelProto { ir_version: 8, opset_import { domain: "", version: 17 },
//   graph { name: "relu", node { input: "x", output: "y", op_type: "Relu" },
//           input { x: float32 [4] }, output { y: float32 [4] } } }
const unsigned char kReluModel[] = {
    0x08, 0x08, 0x3a, 0x36, 0x0a, 0x0c, 0x0a, 0x01, 0x78, 0x12, 0x01, 0x79, 0x22, 0x04, 0x52, 0x65,
    0x6c, 0x75, 0x12, 0x04, 0x72, 0x65, 0x6c, 0x75, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a,
    0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a,
    0x0a, 0x08, 0x08, 0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x11,
};

// A = [[10, 20], [30, 40]] (uint8, zero point 10), B = [[1, -2], [3, 4]] (int8, column zero
// points 1 and -2): (A - 10) x (B - zp) = [[0, 10], [20, 30]] x [[0, 0], [2, 6]].
bool CheckBuilder() {
  using simplecpp::DType;
  using simplecpp::Tensor;
  const Tensor a = Tensor::FromVector<uint8_t>(DType::kUInt8, {2, 2}, {10, 20, 30, 40});
  const Tensor b = Tensor::FromVector<int8_t>(DType::kInt8, {2, 2}, {1, -2, 3, 4});
  const Tensor a_zp = Tensor::FromVector<uint8_t>(DType::kUInt8, {}, {10});
  const Tensor b_zp = Tensor::FromVector<int8_t>(DType::kInt8, {2}, {1, -2});
  const std::vector<int32_t> expected = {20, 60, 60, 180};
  simplecpp::GraphBuilder g(13);
  const std::string y = g.AddNode("MatMulInteger", {g.AddInput("a", DType::kUInt8, {-1, 2}, {"rows", ""}),
                                                    g.AddInitializer("b", b), g.AddInitializer("a_zp", a_zp),
                                                    g.AddInitializer("b_zp", b_zp)});
  g.AddOutput(y);
  const std::string onnx = g.ToOnnx();
  const Tensor built = simplecpp::Session(g.Build()).Run({{"a", a}}).at(y);
  const Tensor loaded =
      simplecpp::Session(simplecpp::Model::LoadFromBytes(onnx.data(), onnx.size())).Run({{"a", a}}).at(y);
  const Tensor eager = simplecpp::RunOp("", "MatMulInteger", 13, {a, b, a_zp, b_zp})[0];
  for (const Tensor* t : {&built, &loaded, &eager}) {
    if (t->dtype() != DType::kInt32 || t->num_elements() != 4) return false;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (t->data<int32_t>()[i] != expected[i]) return false;
    }
  }
  std::printf("builder MatMulInteger = (%d, %d, %d, %d)\n", built.data<int32_t>()[0], built.data<int32_t>()[1],
              built.data<int32_t>()[2], built.data<int32_t>()[3]);
  return true;
}

}  // namespace

int main() {
  try {
    const simplecpp::Model model = simplecpp::Model::LoadFromBytes(kReluModel, sizeof(kReluModel));
    simplecpp::Session session(model);
    const std::vector<float> x = {-1.5f, 2.0f, -3.0f, 4.25f};
    const std::vector<float> expected = {0.0f, 2.0f, 0.0f, 4.25f};
    const auto outputs =
        session.Run({{"x", simplecpp::Tensor::FromVector(simplecpp::DType::kFloat32, {4}, x)}});
    const simplecpp::Tensor& y = outputs.at("y");
    std::printf("relu(-1.5, 2, -3, 4.25) = (%g, %g, %g, %g)\n", y.data<float>()[0],
                y.data<float>()[1], y.data<float>()[2], y.data<float>()[3]);
    if (y.dtype() != simplecpp::DType::kFloat32 || y.num_elements() != 4) return 1;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (y.data<float>()[i] != expected[i]) return 1;
    }
    return CheckBuilder() ? 0 : 1;
  } catch (const simplecpp::Error& e) {
    std::fprintf(stderr, "simplecpp error: %s\n", e.what());
    return 1;
  }
}
