// Audit of float16 / bfloat16 acceptance across the ai.onnx ops: one node per op whose ONNX type
// constraint (at the version we test) lists tensor(float16) / tensor(bfloat16) for its float
// inputs or outputs, run through the real executor with 16-bit tensors. It checks that the op
// accepts the dtype and that its float output stays 16-bit; the numerics of each family are
// checked in that family's tests (e.g. reduction_float16_test.cc, float16_ops_test.cc).
//
// Every registered ai.onnx op must appear in exactly one of: the cases below, kNo16BitFloat (its
// type constraints list no 16-bit float type), kCoveredByOwnTests (16-bit tested elsewhere) or
// kKnownGaps (allowed by ONNX, not supported here yet: the test checks these still throw, so
// supporting one makes the test point at the list).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"

namespace simplecpp::testing {
namespace {

using graph::Attribute;

Tensor R16(DType dt, const Dims& dims, uint32_t seed = 1, float lo = 0.1f, float hi = 0.9f) {
  const Tensor f = RandomF32(dims, seed, lo, hi);
  const kernels::Float16Kind kind =
      dt == DType::kBFloat16 ? kernels::Float16Kind::kBFloat16 : kernels::Float16Kind::kHalf;
  Tensor t(dt, dims);
  for (int64_t i = 0; i < f.num_elements(); ++i) {
    t.data<uint16_t>()[i] = kernels::Narrow16One(kind, f.data<float>()[i]);
  }
  return t;
}

Tensor U8(Dims dims, std::vector<uint8_t> v) {
  Tensor t(DType::kUInt8, dims);
  for (size_t i = 0; i < v.size(); ++i) t.data<uint8_t>()[i] = v[i];
  return t;
}

struct Case {
  std::string op;
  int64_t opset;
  bool bf16;  // bfloat16 is in the constraint at this opset (float16 always is)
  std::function<std::vector<Tensor>(DType)> inputs;
  std::vector<Attribute> attrs;
  std::vector<int> constants;
  int num_outputs = 1;
  int out16 = 0;  // index of an output that must have the 16-bit dtype, -1: none
  std::function<std::vector<Attribute>(DType)> dtype_attrs = nullptr;  // attrs naming the dtype
};

int OnnxCode(DType dt) { return dt == DType::kBFloat16 ? 16 : 10; }

std::vector<Case> Cases() {
  std::vector<Case> c;
  const auto x23 = [](DType dt) { return std::vector<Tensor>{R16(dt, {2, 3})}; };
  const auto xy23 = [](DType dt) {
    return std::vector<Tensor>{R16(dt, {2, 3}), R16(dt, {2, 3}, 2)};
  };
  // Unary float ops (latest registered version; bfloat16 as ONNX lists it there).
  for (const auto& [op, opset, bf] :
       std::vector<std::tuple<const char*, int, bool>>{{"Abs", 13, true},
                                                       {"Acos", 22, true},
                                                       {"Acosh", 22, true},
                                                       {"Asin", 22, true},
                                                       {"Asinh", 22, true},
                                                       {"Atan", 22, true},
                                                       {"Atanh", 22, true},
                                                       {"Ceil", 13, true},
                                                       {"Cos", 22, true},
                                                       {"Cosh", 22, true},
                                                       {"Elu", 22, true},
                                                       {"Erf", 13, true},
                                                       {"Exp", 13, true},
                                                       {"Floor", 13, true},
                                                       {"Gelu", 20, true},
                                                       {"HardSigmoid", 22, true},
                                                       {"HardSwish", 22, true},
                                                       {"Hardmax", 13, true},
                                                       {"LeakyRelu", 16, true},
                                                       {"Log", 13, true},
                                                       {"LogSoftmax", 13, true},
                                                       {"Mish", 22, true},
                                                       {"Neg", 13, true},
                                                       {"Reciprocal", 13, true},
                                                       {"Relu", 14, true},
                                                       {"Round", 22, true},
                                                       {"Selu", 22, true},
                                                       {"Shrink", 9, false},
                                                       {"Sigmoid", 13, true},
                                                       {"Sign", 13, true},
                                                       {"Sin", 22, true},
                                                       {"Sinh", 22, true},
                                                       {"Softmax", 13, true},
                                                       {"Softplus", 22, true},
                                                       {"Softsign", 22, true},
                                                       {"Sqrt", 13, true},
                                                       {"Swish", 24, true},
                                                       {"Tan", 22, true},
                                                       {"Tanh", 13, true},
                                                       {"ThresholdedRelu", 22, true},
                                                       {"Identity", 25, true},
                                                       {"Flatten", 25, true},
                                                       {"Transpose", 25, true},
                                                       {"Trilu", 14, true},
                                                       {"EyeLike", 22, true},
                                                       {"Dropout", 22, true},
                                                       {"LpNormalization", 22, true},
                                                       {"ArgMax", 13, true},
                                                       {"ArgMin", 13, true},
                                                       {"ReduceSum", 13, true},
                                                       {"ReduceMean", 18, true},
                                                       {"ReduceMax", 20, true},
                                                       {"ReduceMin", 20, true},
                                                       {"ReduceProd", 18, true},
                                                       {"ReduceL1", 18, true},
                                                       {"ReduceL2", 18, true},
                                                       {"ReduceLogSum", 18, true},
                                                       {"ReduceLogSumExp", 18, true},
                                                       {"ReduceSumSquare", 18, true},
                                                       {"Bernoulli", 22, true},
                                                       {"RandomNormalLike", 22, true},
                                                       {"RandomUniformLike", 22, true},
                                                       {"NonZero", 13, true},
                                                       {"Shape", 25, true},
                                                       {"Size", 25, true},
                                                       {"Det", 22, true},
                                                       {"Unique", 11, false}}) {
    Case k{op, opset, bf, x23, {}, {}};
    const std::string s = op;
    if (s == "ArgMax" || s == "ArgMin" || s == "NonZero" || s == "Shape" || s == "Size") {
      k.out16 = -1;
    }
    if (s == "Unique") k.num_outputs = 4;
    if (s == "Det") k.inputs = [](DType dt) { return std::vector<Tensor>{R16(dt, {2, 2})}; };
    c.push_back(k);
  }
  for (const char* op : {"IsNaN", "IsInf"}) c.push_back({op, 20, true, x23, {}, {}, 1, -1});
  // Binary / variadic.
  for (const auto& [op, opset, bf] :
       std::vector<std::tuple<const char*, int, bool>>{{"Add", 14, true},
                                                       {"Sub", 14, true},
                                                       {"Mul", 14, true},
                                                       {"Div", 14, true},
                                                       {"Pow", 15, true},
                                                       {"PRelu", 16, true},
                                                       {"Max", 13, true},
                                                       {"Min", 13, true},
                                                       {"Mean", 13, true},
                                                       {"Sum", 13, true},
                                                       {"Concat", 13, true}}) {
    Case k{op, opset, bf, xy23, {}, {}};
    if (std::string(op) == "Concat") k.attrs = {AttrInt("axis", 0)};
    c.push_back(k);
  }
  c.push_back({"Mod", 13, true, xy23, {AttrInt("fmod", 1)}, {}});
  for (const auto& [op, opset] : std::vector<std::pair<const char*, int>>{{"Equal", 19},
                                                                          {"Greater", 13},
                                                                          {"Less", 13},
                                                                          {"GreaterOrEqual", 16},
                                                                          {"LessOrEqual", 16}}) {
    c.push_back({op, opset, true, xy23, {}, {}, 1, -1});
  }
  c.push_back({"Clip",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), R16(dt, {}, 3), R16(dt, {}, 4, 1, 2)};
               },
               {},
               {}});
  c.push_back({"Where",
               16,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{Bool({2, 3}, {true, false, true, false, true, true}),
                                            R16(dt, {2, 3}), R16(dt, {2, 3}, 2)};
               },
               {},
               {}});
  // Matrix products and convolutions.
  const auto ab = [](DType dt) { return std::vector<Tensor>{R16(dt, {2, 3}), R16(dt, {3, 4}, 2)}; };
  c.push_back({"MatMul", 13, true, ab, {}, {}});
  c.push_back({"Gemm", 13, true, ab, {}, {}});
  c.push_back({"Einsum", 12, false, ab, {AttrString("equation", "ij,jk->ik")}, {}});
  c.push_back({"Conv",
               11,
               false,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 4, 4}), R16(dt, {1, 1, 3, 3}, 2)};
               },
               {},
               {}});
  c.push_back({"ConvTranspose",
               22,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 3, 3}), R16(dt, {1, 1, 2, 2}, 2)};
               },
               {},
               {}});
  const auto img = [](DType dt) { return std::vector<Tensor>{R16(dt, {1, 2, 4, 4})}; };
  for (const char* op : {"AveragePool", "MaxPool", "LpPool"}) {
    c.push_back({op, 22, true, img, {AttrInts("kernel_shape", {2, 2})}, {}});
  }
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    c.push_back({op, 22, true, img, {}, {}});
  }
  c.push_back(
      {"MaxUnpool",
       22,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {1, 1, 2, 2}), I64({1, 1, 2, 2}, {0, 3, 8, 15})};
       },
       {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})},
       {}});
  // Normalization.
  c.push_back({"BatchNormalization",
               15,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 2, 3, 3}), R16(dt, {2}, 2), R16(dt, {2}, 3),
                                            R16(dt, {2}, 4), R16(dt, {2}, 5)};
               },
               {},
               {}});
  c.push_back(
      {"InstanceNormalization",
       22,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {1, 2, 3, 3}), R16(dt, {2}, 2), R16(dt, {2}, 3)};
       },
       {},
       {}});
  c.push_back({"LayerNormalization",
               17,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), R16(dt, {3}, 2), R16(dt, {3}, 3)};
               },
               {},
               {}});
  c.push_back(
      {"GroupNormalization",
       21,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {1, 4, 2, 2}), R16(dt, {4}, 2), R16(dt, {4}, 3)};
       },
       {AttrInt("num_groups", 2)},
       {}});
  c.push_back({"RMSNormalization",
               23,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), R16(dt, {3}, 2)};
               },
               {},
               {}});
  c.push_back({"MeanVarianceNormalization", 13, true, img, {}, {}});
  c.push_back({"LRN", 13, true, img, {AttrInt("size", 3)}, {}});
  // Recurrent.
  for (const auto& [op, gates] :
       std::vector<std::pair<const char*, int64_t>>{{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}}) {
    const int64_t g = gates;
    c.push_back({op,
                 22,
                 true,
                 [g](DType dt) {
                   return std::vector<Tensor>{R16(dt, {2, 1, 3}), R16(dt, {1, g * 4, 3}, 2),
                                              R16(dt, {1, g * 4, 4}, 3)};
                 },
                 {AttrInt("hidden_size", 4)},
                 {}});
  }
  // Spatial / resampling.
  c.push_back(
      {"Resize",
       19,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {1, 1, 2, 2}), Tensor(), F32({4}, {1, 1, 2, 2})};
       },
       {},
       {2}});
  c.push_back({"Upsample",
               9,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 2, 2}), F32({4}, {1, 1, 2, 2})};
               },
               {},
               {1}});
  c.push_back({"GridSample",
               22,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 3, 3}), R16(dt, {1, 2, 2, 2}, 2, -1, 1)};
               },
               {},
               {}});
  c.push_back({"AffineGrid",
               20,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 2, 3}), I64({4}, {1, 1, 2, 2})};
               },
               {},
               {1}});
  c.push_back({"RoiAlign",
               22,
               true,
               [](DType dt) {
                 Tensor rois = R16(dt, {1, 4}, 2, 0, 3);
                 return std::vector<Tensor>{R16(dt, {1, 1, 4, 4}), rois, I64({1}, {0})};
               },
               {},
               {}});
  c.push_back({"Col2Im",
               18,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 4, 4}), I64({2}, {3, 3}), I64({2}, {2, 2})};
               },
               {},
               {1, 2}});
  c.push_back({"CenterCropPad",
               18,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {4, 4}), I64({2}, {2, 2})};
               },
               {},
               {1}});
  c.push_back({"DepthToSpace",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 4, 1, 1})};
               },
               {AttrInt("blocksize", 2)},
               {}});
  c.push_back({"SpaceToDepth",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 2, 2})};
               },
               {AttrInt("blocksize", 2)},
               {}});
  // Signal.
  c.push_back({"DFT",
               20,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 4, 1})};
               },
               {},
               {}});
  c.push_back(
      {"STFT",
       17,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {1, 8, 1}), I64({}, {2}), Tensor(), I64({}, {4})};
       },
       {},
       {1, 3}});
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    Case k{op, 17, true, [](DType) { return std::vector<Tensor>{I64({}, {4})}; }, {}, {0}};
    k.dtype_attrs = [](DType dt) {
      return std::vector<Attribute>{AttrInt("output_datatype", OnnxCode(dt))};
    };
    c.push_back(k);
  }
  // Generators.
  for (const char* op : {"RandomNormal", "RandomUniform"}) {
    Case k{op, 22, true, [](DType) { return std::vector<Tensor>{}; }, {AttrInts("shape", {2, 3})},
           {}};
    k.dtype_attrs = [](DType dt) { return std::vector<Attribute>{AttrInt("dtype", OnnxCode(dt))}; };
    c.push_back(k);
  }
  {
    Case k{"Cast", 25, true, [](DType) { return std::vector<Tensor>{F32({2}, {1, 2})}; }, {}, {}};
    k.dtype_attrs = [](DType dt) { return std::vector<Attribute>{AttrInt("to", OnnxCode(dt))}; };
    c.push_back(k);
  }
  c.push_back({"CastLike",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{F32({2}, {1, 2}), R16(dt, {1})};
               },
               {},
               {}});
  {
    Case k{"ConstantOfShape",
           25,
           true,
           [](DType) { return std::vector<Tensor>{I64({2}, {2, 3})}; },
           {},
           {0}};
    k.dtype_attrs = [](DType dt) {
      return std::vector<Attribute>{AttrTensor("value", R16(dt, {1}))};
    };
    c.push_back(k);
  }
  // Losses.
  c.push_back({"NegativeLogLikelihoodLoss",
               22,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({2}, {0, 2})};
               },
               {},
               {}});
  c.push_back({"SoftmaxCrossEntropyLoss",
               22,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({2}, {0, 2})};
               },
               {},
               {}});
  // Attention family.
  const auto qkv = [](DType dt) {
    return std::vector<Tensor>{R16(dt, {1, 1, 2, 4}), R16(dt, {1, 1, 2, 4}, 2),
                               R16(dt, {1, 1, 2, 4}, 3)};
  };
  c.push_back({"Attention", 24, true, qkv, {}, {}});
  c.push_back({"RotaryEmbedding",
               23,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 2, 4}), R16(dt, {2, 2}, 2),
                                            R16(dt, {2, 2}, 3), I64({1, 2}, {0, 1})};
               },
               {},
               {}});
  // Scans, selection.
  c.push_back({"CumSum",
               14,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({}, {1})};
               },
               {},
               {1}});
  c.push_back({"CumProd",
               26,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({}, {1})};
               },
               {},
               {1}});
  c.push_back({"TopK",
               24,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({1}, {2})};
               },
               {},
               {1},
               2});
  c.push_back({"OneHot",
               11,
               false,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {3}, 1, 0, 2.5f), I64({}, {3}), R16(dt, {2})};
               },
               {},
               {1}});
  // Quantization.
  c.push_back({"QuantizeLinear",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {4}), R16(dt, {}, 2), U8({}, {3})};
               },
               {},
               {},
               1,
               -1});
  c.push_back({"DequantizeLinear",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{U8({4}, {1, 2, 3, 4}), R16(dt, {}, 2), U8({}, {3})};
               },
               {},
               {}});
  // QLinearMatMul-21: the scales (TS) may be float16.
  c.push_back({"QLinearMatMul",
               21,
               false,
               [](DType dt) {
                 return std::vector<Tensor>{U8({1, 2}, {1, 2}), R16(dt, {}, 1), U8({}, {0}),
                                            U8({2, 1}, {3, 4}), R16(dt, {}, 2), U8({}, {0}),
                                            R16(dt, {}, 3),     U8({}, {0})};
               },
               {},
               {},
               1,
               -1});
  // Data movement (every tensor type).
  c.push_back({"Reshape",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({2}, {3, 2})};
               },
               {},
               {1}});
  c.push_back({"Expand",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 3}), I64({2}, {2, 3})};
               },
               {},
               {1}});
  c.push_back({"Tile",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({2}, {1, 2})};
               },
               {},
               {1}});
  c.push_back({"Pad",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({4}, {0, 1, 0, 1})};
               },
               {},
               {1}});
  c.push_back(
      {"Slice",
       13,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {2, 3}), I64({1}, {1}), I64({1}, {3}), I64({1}, {1})};
       },
       {},
       {1, 2, 3}});
  c.push_back({"Split", 18, true, x23, {AttrInt("axis", 1), AttrInt("num_outputs", 3)}, {}, 3});
  c.push_back({"Squeeze",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 3}), I64({1}, {0})};
               },
               {},
               {1}});
  c.push_back({"Unsqueeze",
               25,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {3}), I64({1}, {0})};
               },
               {},
               {1}});
  c.push_back({"Gather",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({2}, {1, 0})};
               },
               {},
               {}});
  c.push_back({"GatherElements",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({2, 1}, {1, 0})};
               },
               {AttrInt("axis", 1)},
               {}});
  c.push_back({"GatherND",
               13,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({1, 2}, {1, 2})};
               },
               {},
               {}});
  c.push_back({"Compress",
               11,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), Bool({2}, {false, true})};
               },
               {AttrInt("axis", 0)},
               {}});
  c.push_back({"ReverseSequence",
               10,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 2}), I64({2}, {1, 2})};
               },
               {},
               {}});
  for (const auto& [op, opset] :
       std::vector<std::pair<const char*, int>>{{"Scatter", 11}, {"ScatterElements", 18}}) {
    c.push_back(
        {op,
         opset,
         true,
         [](DType dt) {
           return std::vector<Tensor>{R16(dt, {2, 3}), I64({1, 2}, {1, 0}), R16(dt, {1, 2}, 2)};
         },
         {},
         {}});
  }
  c.push_back(
      {"ScatterElements",
       18,
       true,
       [](DType dt) {
         return std::vector<Tensor>{R16(dt, {2, 3}), I64({1, 2}, {1, 0}), R16(dt, {1, 2}, 2)};
       },
       {AttrString("reduction", "add")},
       {}});
  c.push_back({"ScatterND",
               18,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {2, 3}), I64({1, 1}, {1}), R16(dt, {1, 3}, 2)};
               },
               {AttrString("reduction", "mul")},
               {}});
  c.push_back({"TensorScatter",
               24,
               true,
               [](DType dt) {
                 return std::vector<Tensor>{R16(dt, {1, 1, 4, 2}), R16(dt, {1, 1, 1, 2}, 2)};
               },
               {},
               {}});
  return c;
}

// ai.onnx ops whose type constraints list no 16-bit float type (integer, bool, quantized, control
// flow / sequence / optional containers, or float32-only in the spec).
const std::set<std::string> kNo16BitFloat = {
    "And",
    "Or",
    "Xor",
    "Not",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitwiseNot",
    "ConvInteger",
    "MatMulInteger",
    "QLinearConv",
    "DynamicQuantizeLinear",
    "NonMaxSuppression",  // boxes / scores: tensor(float) only
    "Celu",               // tensor(float) only
    "Range",              // float, double, int16, int32, int64
    "If",
    "Loop",
    "Scan",
    "SequenceAt",
    "SequenceConstruct",
    "SequenceEmpty",
    "SequenceErase",
    "SequenceInsert",
    "SequenceLength",
    "SequenceMap",
    "SplitToSequence",
    "ConcatFromSequence",
    "Optional",
    "OptionalGetElement",
    "OptionalHasElement",
    "Constant",  // a value attribute of any type (covered by ConstantOfShape's path)
    "BitCast",   // reinterprets bits of any type; not float arithmetic
};

// 16-bit ops with multi-input setups this table does not build: their own tests cover float16 and
// bfloat16 (tests/graph/ops/causal_conv_test.cc, attention_linear_test.cc), and so do the
// conformance cases test_causal_conv_with_state*_fp16 and test_linear_attention_fp16.
// DeformConv: tests/graph/ops/deform_conv_test.cc; MelWeightMatrix: mel_weight_matrix_test.cc.
// SimplifiedLayerNormalization: ORT's contrib op in the ONNX domain (msft_normalization_test.cc).
const std::set<std::string> kCoveredByOwnTests = {"CausalConvWithState", "LinearAttention",
                                                   "DeformConv", "MelWeightMatrix",
                                                   "SimplifiedLayerNormalization"};

// Allowed by ONNX for 16-bit floats, not supported here yet (see the helper report).
const std::vector<Case>& KnownGaps() {
  static const std::vector<Case> gaps = {};  // none left among the registered ops
  return gaps;
}

void RunCase(const Case& k, DType dt) {
  CAPTURE(k.op);
  CAPTURE(k.opset);
  CAPTURE(DTypeName(dt));
  RunNodeOptions o;
  o.opset = k.opset;
  o.constant_inputs = k.constants;
  o.num_outputs = k.num_outputs;
  std::vector<Attribute> attrs = k.attrs;
  if (k.dtype_attrs) {
    for (const Attribute& a : k.dtype_attrs(dt)) attrs.push_back(a);
  }
  std::vector<Tensor> out;
  try {
    out = RunNode(k.op, k.inputs(dt), attrs, o);
  } catch (const std::exception& e) {
    FAIL_CHECK(std::string(e.what()));
    return;
  }
  if (k.out16 >= 0) {
    REQUIRE(static_cast<int>(out.size()) > k.out16);
    CHECK(out[k.out16].dtype() == dt);
  }
}

TEST_CASE("float16 / bfloat16 audit: every ai.onnx op whose constraint allows them accepts them") {
  const std::vector<Case> cases = Cases();
  std::set<std::string> covered;
  for (const Case& k : cases) {
    covered.insert(k.op);
    RunCase(k, DType::kFloat16);
    if (k.bf16) RunCase(k, DType::kBFloat16);
  }
  for (const Case& k : KnownGaps()) {
    CAPTURE(k.op);
    covered.insert(k.op);
    RunNodeOptions o;
    o.opset = k.opset;
    o.constant_inputs = k.constants;
    o.num_outputs = k.num_outputs;
    // Still unsupported: when this starts passing, move the case into Cases().
    CHECK_THROWS(RunNode(k.op, k.inputs(DType::kFloat16), k.attrs, o));
  }
  // Every registered ai.onnx op is accounted for.
  for (const auto& [domain, op, versions] : graph::OpRegistry::Global().List()) {
    if (!domain.empty() && domain != "ai.onnx") continue;
    const auto& op_name = op;  // CAPTURE's lambda cannot capture a structured binding (clang, C++17)
    CAPTURE(op_name);
    CHECK((covered.count(op) + kNo16BitFloat.count(op) + kCoveredByOwnTests.count(op)) == 1);
  }
}

// Values of the ops the audit found missing 16-bit support (CumProd, OneHot's float16 indices,
// ScatterND / ScatterElements reductions, Unique): float32 arithmetic, one rounding per result.
TEST_CASE("float16 / bfloat16 audit fixes: CumProd, OneHot, scatter reductions, Unique") {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(DTypeName(dt));
    const kernels::Float16Kind kind =
        dt == DType::kBFloat16 ? kernels::Float16Kind::kBFloat16 : kernels::Float16Kind::kHalf;
    const auto w = [kind](const Tensor& t, int64_t i) {
      return kernels::Widen16One(kind, t.data<uint16_t>()[i]);
    };
    const double eps16 = dt == DType::kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    // CumProd along axis 1 of [2, 5]: a float32 running product rounded once per output
    // (|y - ref| <= eps16 * |ref|, ref the double product of the widened inputs).
    const Tensor x = R16(dt, {2, 5}, 4, 0.5f, 1.5f);
    for (int64_t reverse : {0, 1}) {
      const auto out = RunNode("CumProd", {x, I64({}, {1})}, {AttrInt("reverse", reverse)}, [] {
        RunNodeOptions o;
        o.opset = 26;
        o.constant_inputs = {1};
        return o;
      }());
      REQUIRE(out[0].dtype() == dt);
      for (int64_t r = 0; r < 2; ++r) {
        double ref = 1;
        for (int64_t s = 0; s < 5; ++s) {
          const int64_t j = reverse ? 4 - s : s;
          ref *= w(x, r * 5 + j);
          CHECK(std::fabs(w(out[0], r * 5 + j) - ref) <= eps16 * std::fabs(ref));
        }
      }
    }
    // ScatterND with reduction add: data[1, :] += updates, rounded once per update.
    const Tensor data = R16(dt, {2, 3});
    const Tensor upd = R16(dt, {1, 3}, 2);
    const auto sc =
        RunNode("ScatterND", {data, I64({1, 1}, {1}), upd}, {AttrString("reduction", "add")}, [] {
          RunNodeOptions o;
          o.opset = 18;
          return o;
        }());
    REQUIRE(sc[0].dtype() == dt);
    for (int64_t i = 0; i < 3; ++i) {
      CHECK(sc[0].data<uint16_t>()[i] == data.data<uint16_t>()[i]);
      const float sum = w(data, 3 + i) + w(upd, i);
      CHECK(sc[0].data<uint16_t>()[3 + i] == kernels::Narrow16One(kind, sum));
    }
  }
  // Unique on float16: items compare by value; Y keeps the bits.
  {
    Tensor u(DType::kFloat16, {4});
    const float uv[] = {2, 1, 2, 3};
    for (int i = 0; i < 4; ++i) u.data<uint16_t>()[i] = kernels::FloatToHalfBits(uv[i]);
    RunNodeOptions uo;
    uo.opset = 11;
    uo.num_outputs = 4;
    const auto un = RunNode("Unique", {u}, {}, uo);
    REQUIRE(un[0].dtype() == DType::kFloat16);
    REQUIRE(un[0].num_elements() == 3);
    for (int i = 0; i < 3; ++i) {
      CHECK(kernels::HalfBitsToFloat(un[0].data<uint16_t>()[i]) == static_cast<float>(i + 1));
    }
    CHECK(std::vector<int64_t>(un[3].data<int64_t>(), un[3].data<int64_t>() + 3) ==
          std::vector<int64_t>{1, 2, 1});
  }
  // OneHot with float16 indices (OneHot-11's T1 includes float16): 1.0 -> position 1.
  Tensor idx = R16(DType::kFloat16, {2});
  idx.data<uint16_t>()[0] = kernels::FloatToHalfBits(1.0f);
  idx.data<uint16_t>()[1] = kernels::FloatToHalfBits(2.0f);
  RunNodeOptions o;
  o.opset = 11;
  o.constant_inputs = {1};
  const auto oh = RunNode("OneHot", {idx, I64({}, {3}), F32({2}, {0, 1})}, {}, o);
  REQUIRE(oh[0].dims() == Dims{2, 3});
  CHECK(std::vector<float>(oh[0].data<float>(), oh[0].data<float>() + 6) ==
        std::vector<float>{0, 1, 0, 0, 0, 1});
}

}  // namespace
}  // namespace simplecpp::testing
