// Writes the blocked-int4 MatMul model of bench/README.md ("Blocked int4 weights"): a [m, 4096]
// float32 input times DequantizeLinear(int4 W [4096, 4096], float32 scales, block 32) -> MatMul,
// opset 21, built with simplecpp::GraphBuilder from seeded codes. ONNX Runtime fuses the same
// pattern into its MatMulNBits kernel, so ours / ORT compares the two low-bit kernels on one file.
// Not part of the CMake build (bench/ needs the peer libraries); build against a Release tree:
//   g++ -O2 -std=c++17 -Isimplecpp/include bench/make_blocked_int4_model.cc build/lib/libsimplecpp.a \
//     build/lib/libsimplecpp_graph.a build/lib/libsimplecpp_kernels.a build/lib/libsimplecpp_quant.a \
//     build/lib/libsimplecpp_core.a -lhwy -lpthread -o /tmp/make_blocked && /tmp/make_blocked OUT.onnx
#include <cstdio>
#include <random>
#include <string>

#include "simplecpp/builder.h"

int main(int argc, char** argv) {
  using simplecpp::DType;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_blocked_int4_model OUT.onnx\n");
    return 2;
  }
  const int64_t k = 4096, n = 4096, block = 32, blocks = k / block;
  std::mt19937 rng(1);
  simplecpp::Tensor w(DType::kInt4, {k, n});
  for (size_t i = 0; i < w.byte_size(); ++i) static_cast<uint8_t*>(w.raw_data())[i] = static_cast<uint8_t>(rng());
  simplecpp::Tensor scale(DType::kFloat32, {blocks, n});
  for (int64_t i = 0; i < scale.num_elements(); ++i) scale.data<float>()[i] = 0.001f + (rng() % 1000) * 1e-5f;
  simplecpp::GraphBuilder b(21);
  const std::string a = b.AddInput("a", DType::kFloat32, {-1, k}, {"m", ""});
  const std::string wf = b.AddNode("DequantizeLinear", {b.AddInitializer("w", w), b.AddInitializer("scale", scale)},
                                   {{"axis", 0}, {"block_size", block}});
  b.AddOutput(b.AddNode("MatMul", {a, wf}, {}, simplecpp::NodeOptions{"", "mm", {"y"}}));
  b.SaveOnnx(argv[1]);
  return 0;
}
