// The program every CMake consumer example builds (find_package/, add_subdirectory/,
// fetchcontent/ differ only in how they obtain simplecpp): loads a one-node ONNX model from bytes,
// runs it and checks the result. Exits 0 only when the output is the expected one.
#include <simplecpp/simplecpp.h>

#include <cstdio>
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
    return 0;
  } catch (const simplecpp::Error& e) {
    std::fprintf(stderr, "simplecpp error: %s\n", e.what());
    return 1;
  }
}
