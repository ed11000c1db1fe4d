// float16 / bfloat16 through the ops of the elementwise, matmul, conv and softmax families: each
// 16-bit result equals the float32 op run on the widened inputs, rounded once to 16 bits (the
// kernels compute in float32 and round once per element), and the outputs stay 16-bit tensors.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_test_util.h"
#include "kernels/float16/float16.h"

namespace simplecpp::testing {
namespace {

using kernels::Float16Kind;

Tensor To16(const Tensor& f, DType dt) {
  const Float16Kind kind = dt == DType::kBFloat16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  Tensor t(dt, f.dims());
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<uint16_t>()[i] = kernels::Narrow16One(kind, f.data<float>()[i]);
  }
  return t;
}
Tensor To32(const Tensor& h) {
  const Float16Kind kind =
      h.dtype() == DType::kBFloat16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
  Tensor t(DType::kFloat32, h.dims());
  for (int64_t i = 0; i < h.num_elements(); ++i) {
    t.data<float>()[i] = kernels::Widen16One(kind, h.data<uint16_t>()[i]);
  }
  return t;
}

RunNodeOptions Opts(int64_t opset, std::vector<int> constant_inputs = {}, int num_outputs = 1) {
  RunNodeOptions o;
  o.opset = opset;
  o.constant_inputs = std::move(constant_inputs);
  o.num_outputs = num_outputs;
  return o;
}

// Runs op on 16-bit inputs and on their float32 widening; the 16-bit output must be the float32
// output rounded once.
void Check16(const std::string& op, const std::vector<Tensor>& f32_inputs,
             const std::vector<graph::Attribute>& attrs = {}, RunNodeOptions options = {}) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    CAPTURE(op);
    std::vector<Tensor> in16, in32;
    for (const Tensor& t : f32_inputs) {
      in16.push_back(To16(t, dt));
      in32.push_back(To32(in16.back()));
    }
    const auto out16 = RunNode(op, in16, attrs, options);
    const auto out32 = RunNode(op, in32, attrs, options);
    REQUIRE(out16[0].dtype() == dt);
    CHECK(out16[0].dims() == out32[0].dims());
    CHECK(out16[0].BitwiseEquals(To16(out32[0], dt)));
  }
}

TEST_CASE("float16/bfloat16 elementwise ops (broadcast, variadic, Pow, Clip)") {
  const Tensor a = RandomF32({2, 3, 5}, 1, -2.0f, 2.0f);
  const Tensor b = RandomF32({3, 1}, 2, 0.5f, 2.0f);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu"}) {
    Check16(op, {a, op == std::string("PRelu") ? RandomF32({5}, 3) : b});
  }
  Check16("Mod", {a, b}, {AttrInt("fmod", 1)});
  Check16("Sum", {a, b, RandomF32({5}, 4)});
  Check16("Mean", {a, b});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "Floor"}) {
    Check16(op, {a});
  }
  Check16("Clip", {a, F32({}, {-0.5f}), F32({}, {1.0f})}, {}, Opts(13));
  Check16("Softmax", {a}, {AttrInt("axis", 1)}, Opts(13));
  Check16("LogSoftmax", {a}, {}, Opts(13));
}

TEST_CASE("float16/bfloat16 MatMul and Gemm (runtime and constant weights)") {
  const Tensor a = RandomF32({2, 3, 20}, 5);
  const Tensor b = RandomF32({20, 17}, 6);
  Check16("MatMul", {a, b});
  Check16("MatMul", {a, b}, {}, Opts(18, {1}));
  Check16("MatMul", {a, RandomF32({2, 20, 4}, 7)});
  Check16("Gemm", {RandomF32({20, 4}, 8), RandomF32({17, 20}, 9), RandomF32({17}, 10)},
          {AttrInt("transA", 1), AttrInt("transB", 1)});
  Check16("Gemm", {RandomF32({4, 20}, 8), b, RandomF32({4, 1}, 10)},
          {AttrFloat("alpha", 0.5f), AttrFloat("beta", 2.0f)}, Opts(18, {1}));
}

TEST_CASE("float16/bfloat16 Conv: im2col, pointwise, depthwise, constant weights") {
  const Tensor x = RandomF32({2, 4, 7, 6}, 11);
  Check16("Conv", {x, RandomF32({5, 4, 3, 3}, 12), RandomF32({5}, 13)},
          {AttrInts("pads", {1, 1, 1, 1}), AttrInts("strides", {1, 2})});
  Check16("Conv", {x, RandomF32({5, 4, 3, 3}, 12), RandomF32({5}, 13)}, {},
          Opts(18, {1, 2}));
  Check16("Conv", {x, RandomF32({6, 2, 1, 1}, 14)}, {AttrInt("group", 2)});
  Check16("Conv", {x, RandomF32({8, 1, 3, 3}, 15), RandomF32({8}, 16)},
          {AttrInt("group", 4), AttrInts("pads", {1, 1, 1, 1})});
}

TEST_CASE("float16/bfloat16 Conv on an image past the float32 scratch limit (bands of rows)") {
  // 36 output channels x 500^2 positions exceed kConvDirectMaxImage floats of float32 output:
  // the constant-weight Conv runs the direct convolution in bands of output rows.
  const Tensor x = RandomF32({1, 2, 500, 500}, 21);
  Check16("Conv", {x, RandomF32({36, 2, 3, 3}, 22), RandomF32({36}, 23)},
          {AttrInts("pads", {2, 2, 2, 2}), AttrInts("dilations", {2, 2})}, Opts(18, {1, 2}));
  Check16("Conv", {x, RandomF32({70, 2, 3, 3}, 22)}, {AttrInts("strides", {1, 2})},
          Opts(18, {1}));
}

TEST_CASE("float16/bfloat16 Conv through Winograd: whole images and bands of rows, dilated") {
  // 3x3 stride-1 layers with 8+ channels each way take the Winograd form in float32 and on the
  // widened 16-bit input. Bands of rows start at whole tiles of every dilation phase, so the
  // banded 16-bit output is the float32 one rounded once, bit for bit. 40 x 460^2 outputs exceed
  // the float32 scratch limit (bands); 12 x 60^2 do not.
  Check16("Conv", {RandomF32({1, 9, 60, 61}, 24), RandomF32({12, 9, 3, 3}, 25)},
          {AttrInts("pads", {1, 1, 1, 1})}, Opts(18, {1}));
  const Tensor x = RandomF32({1, 8, 460, 460}, 26);
  for (int64_t d : {1, 4}) {
    CAPTURE(d);
    Check16("Conv", {x, RandomF32({40, 8, 3, 3}, 27), RandomF32({40}, 28)},
            {AttrInts("pads", {d, d, d, d}), AttrInts("dilations", {d, d})}, Opts(18, {1, 2}));
  }
}

TEST_CASE("float16/bfloat16 pools and normalizations") {
  const Tensor x = RandomF32({2, 3, 6, 5}, 21, -2.0f, 2.0f);
  Check16("MaxPool", {x}, {AttrInts("kernel_shape", {3, 2}), AttrInts("pads", {1, 0, 1, 1})});
  Check16("AveragePool", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  Check16("LpPool", {x}, {AttrInts("kernel_shape", {2, 3})});
  Check16("GlobalAveragePool", {x});
  Check16("GlobalMaxPool", {x});
  Check16("LayerNormalization", {x, RandomF32({5}, 22), RandomF32({5}, 23)}, {}, Opts(17));
  Check16("LayerNormalization", {x, RandomF32({6, 5}, 22)}, {AttrInt("axis", 2)},
          Opts(17, {1}));
  Check16("InstanceNormalization", {x, RandomF32({3}, 24), RandomF32({3}, 25)});
  Check16("BatchNormalization",
          {x, RandomF32({3}, 26), RandomF32({3}, 27), RandomF32({3}, 28),
           RandomF32({3}, 29, 0.5f, 2.0f)},
          {}, Opts(15));
  Check16("LpNormalization", {x}, {AttrInt("axis", 1)});
  Check16("LpNormalization", {x}, {AttrInt("p", 1)});
  Check16("LRN", {x}, {AttrInt("size", 3)});
  // MaxPool's Indices output with a 16-bit input.
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const auto o16 = RunNode("MaxPool", {To16(x, dt)}, {AttrInts("kernel_shape", {2, 2})},
                             Opts(18, {}, 2));
    const auto o32 = RunNode("MaxPool", {To32(To16(x, dt))}, {AttrInts("kernel_shape", {2, 2})},
                             Opts(18, {}, 2));
    CHECK(o16[1].BitwiseEquals(o32[1]));
  }
  // Enough planes for several tasks of planes (the later tasks' indices are offset by the
  // planes before them).
  const Tensor big = RandomF32({2, 40, 30, 31}, 31, -2.0f, 2.0f);
  Check16("MaxPool", {big}, {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2})});
  Check16("GlobalAveragePool", {big});
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const auto o16 = RunNode("MaxPool", {To16(big, dt)}, {AttrInts("kernel_shape", {2, 2})},
                             Opts(18, {}, 2));
    const auto o32 = RunNode("MaxPool", {To32(To16(big, dt))}, {AttrInts("kernel_shape", {2, 2})},
                             Opts(18, {}, 2));
    CHECK(o16[1].BitwiseEquals(o32[1]));
  }
}

}  // namespace
}  // namespace simplecpp::testing
