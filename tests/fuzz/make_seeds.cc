// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) from tiny models and
// tensors built in code with the project's own ONNX writer, so no third-party file is copied:
//   fuzz_make_seeds OUT_DIR
// Each model is one or a few nodes of one op family with small shapes (some dims symbolic, so
// fuzz_model_run picks them from its input bytes); the run seeds append a u16 length prefix and a
// few input bytes. Deterministic: rerunning rewrites identical files.
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graph/ir.h"
#include "quant/ggml_blocks.h"
#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/io/npy.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "simplecpp/simplecpp.h"

namespace {

using namespace simplecpp;
using graph::AttrKind;
using graph::Attribute;

Attribute AInt(const std::string& n, int64_t v) {
  Attribute a;
  a.name = n;
  a.kind = AttrKind::kInt;
  a.i = v;
  return a;
}
Attribute AFloat(const std::string& n, float v) {
  Attribute a;
  a.name = n;
  a.kind = AttrKind::kFloat;
  a.f = v;
  return a;
}
Attribute AInts(const std::string& n, std::vector<int64_t> v) {
  Attribute a;
  a.name = n;
  a.kind = AttrKind::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute AStr(const std::string& n, const std::string& v) {
  Attribute a;
  a.name = n;
  a.kind = AttrKind::kString;
  a.s = v;
  return a;
}
Attribute AGraph(const std::string& n, graph::Graph g) {
  Attribute a;
  a.name = n;
  a.kind = AttrKind::kGraph;
  a.g = std::make_shared<graph::Graph>(std::move(g));
  return a;
}

graph::Node N(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
              std::vector<Attribute> attrs = {}) {
  graph::Node n;
  n.name = op + "_0";
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attributes = std::move(attrs);
  return n;
}

// dims: >= 0 known, -1 symbolic "N".
graph::ValueInfo V(const std::string& name, DType dtype, std::vector<int64_t> dims) {
  graph::ValueInfo v;
  v.name = name;
  v.type.kind = graph::TypeInfo::Kind::kTensor;
  v.type.dtype = dtype;
  v.type.has_shape = true;
  for (int64_t d : dims) {
    graph::Dim dim;
    dim.value = d;
    if (d < 0) dim.param = "N";
    v.type.dims.push_back(dim);
  }
  return v;
}
graph::ValueInfo Out(const std::string& name) {
  graph::ValueInfo v;
  v.name = name;
  return v;
}

Tensor F32(Dims dims, float start = 0.5f) {
  Tensor t(DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = start + 0.25f * static_cast<float>(i % 7);
  return t;
}
Tensor I64(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}
Tensor I64Scalar(int64_t v) { return Tensor::FromVector<int64_t>(DType::kInt64, {}, {v}); }

struct Seed {
  std::string name;
  graph::Graph graph;
};

graph::Graph G(std::vector<graph::Node> nodes, std::vector<graph::ValueInfo> inputs,
               std::vector<std::string> outputs,
               std::vector<std::pair<std::string, Tensor>> inits = {}) {
  graph::Graph g;
  g.name = "g";
  g.nodes = std::move(nodes);
  g.inputs = std::move(inputs);
  for (const std::string& o : outputs) g.outputs.push_back(Out(o));
  g.initializers = std::move(inits);
  return g;
}

std::vector<Seed> Seeds() {
  const DType f = DType::kFloat32;
  std::vector<Seed> s;
  s.push_back({"add_broadcast", G({N("Add", {"x", "b"}, {"y"})}, {V("x", f, {-1, 3})}, {"y"},
                                  {{"b", F32({3})}})});
  s.push_back({"unary_chain", G({N("Relu", {"x"}, {"a"}), N("Sigmoid", {"a"}, {"b"}),
                                 N("Tanh", {"b"}, {"c"}), N("Exp", {"c"}, {"d"}),
                                 N("Sqrt", {"d"}, {"y"})},
                                {V("x", f, {2, -1})}, {"y"})});
  s.push_back({"matmul", G({N("MatMul", {"x", "w"}, {"y"})}, {V("x", f, {-1, 3})}, {"y"},
                           {{"w", F32({3, 2})}})});
  s.push_back({"gemm", G({N("Gemm", {"x", "w", "c"}, {"y"}, {AInt("transB", 1), AFloat("alpha", 0.5f)})},
                         {V("x", f, {2, 3})}, {"y"}, {{"w", F32({4, 3})}, {"c", F32({4})}})});
  s.push_back({"conv", G({N("Conv", {"x", "w", "b"}, {"y"}, {AInts("pads", {1, 1, 1, 1}), AInts("strides", {1, 2})})},
                         {V("x", f, {1, 1, -1, 4})}, {"y"}, {{"w", F32({2, 1, 3, 3})}, {"b", F32({2})}})});
  s.push_back({"conv_transpose", G({N("ConvTranspose", {"x", "w"}, {"y"}, {AInts("strides", {2, 2})})},
                                   {V("x", f, {1, 1, 2, 2})}, {"y"}, {{"w", F32({1, 2, 2, 2})}})});
  s.push_back({"maxpool", G({N("MaxPool", {"x"}, {"y"}, {AInts("kernel_shape", {2, 2}), AInts("strides", {2, 2})})},
                            {V("x", f, {1, 1, 4, -1})}, {"y"})});
  s.push_back({"avgpool", G({N("AveragePool", {"x"}, {"y"}, {AInts("kernel_shape", {3}), AInts("pads", {1, 1})})},
                            {V("x", f, {1, 2, -1})}, {"y"})});
  s.push_back({"global_pool", G({N("GlobalAveragePool", {"x"}, {"y"})}, {V("x", f, {1, 2, 2, 2})}, {"y"})});
  s.push_back({"softmax", G({N("Softmax", {"x"}, {"y"}, {AInt("axis", -1)})}, {V("x", f, {2, -1})}, {"y"})});
  s.push_back({"transpose", G({N("Transpose", {"x"}, {"y"}, {AInts("perm", {2, 0, 1})})},
                              {V("x", f, {2, -1, 3})}, {"y"})});
  s.push_back({"reshape", G({N("Reshape", {"x", "s"}, {"y"})}, {V("x", f, {2, 3})}, {"y"},
                            {{"s", I64({3, -1})}})});
  s.push_back({"reshape_dynamic", G({N("Reshape", {"x", "s"}, {"y"})},
                                    {V("x", f, {2, 3}), V("s", DType::kInt64, {2})}, {"y"})});
  s.push_back({"concat", G({N("Concat", {"x", "c"}, {"y"}, {AInt("axis", 0)})}, {V("x", f, {-1, 2})}, {"y"},
                           {{"c", F32({1, 2})}})});
  s.push_back({"slice", G({N("Slice", {"x", "st", "en", "ax", "sp"}, {"y"})}, {V("x", f, {4, 4})}, {"y"},
                          {{"st", I64({1, -1})}, {"en", I64({4, -5})}, {"ax", I64({0, 1})}, {"sp", I64({2, -1})}})});
  s.push_back({"gather", G({N("Gather", {"x", "i"}, {"y"}, {AInt("axis", 1)})},
                           {V("x", f, {2, 3}), V("i", DType::kInt64, {-1})}, {"y"})});
  s.push_back({"gather_elements", G({N("GatherElements", {"x", "i"}, {"y"}, {AInt("axis", 0)})},
                                    {V("x", f, {2, 2}), V("i", DType::kInt64, {2, 2})}, {"y"})});
  s.push_back({"scatter_nd", G({N("ScatterND", {"x", "i", "u"}, {"y"})},
                               {V("x", f, {4}), V("i", DType::kInt64, {1, 1}), V("u", f, {1})}, {"y"})});
  s.push_back({"cast", G({N("Cast", {"x"}, {"y"}, {AInt("to", 7)}), N("Cast", {"y"}, {"z"}, {AInt("to", 10)})},
                         {V("x", f, {-1})}, {"z"})});
  s.push_back({"reduce", G({N("ReduceMean", {"x"}, {"y"}, {AInts("axes", {1}), AInt("keepdims", 0)}),
                            N("ReduceSum", {"x", "ax"}, {"z"})},
                           {V("x", f, {2, -1})}, {"y", "z"}, {{"ax", I64({0})}})});
  s.push_back({"argmax_topk", G({N("ArgMax", {"x"}, {"a"}, {AInt("axis", 1)}), N("TopK", {"x", "k"}, {"v", "i"})},
                                {V("x", f, {2, 4})}, {"a", "v", "i"}, {{"k", I64({2})}})});
  s.push_back({"where_compare", G({N("Less", {"x", "z"}, {"c"}), N("Where", {"c", "x", "z"}, {"y"})},
                                  {V("x", f, {-1}), V("z", f, {-1})}, {"y"})});
  s.push_back({"expand_tile", G({N("Expand", {"x", "s"}, {"e"}), N("Tile", {"e", "r"}, {"y"})},
                                {V("x", f, {1, 2}), V("s", DType::kInt64, {2})}, {"y"}, {{"r", I64({1, 2})}})});
  s.push_back({"pad", G({N("Pad", {"x", "p"}, {"y"}, {AStr("mode", "reflect")})}, {V("x", f, {3, 3})}, {"y"},
                        {{"p", I64({1, 1, 1, 1})}})});
  s.push_back({"nonzero_unique", G({N("NonZero", {"x"}, {"n"}), N("Unique", {"x"}, {"u"})},
                                   {V("x", f, {-1})}, {"n", "u"})});
  s.push_back({"split_squeeze", G({N("Split", {"x"}, {"a", "b"}, {AInt("axis", 0)}), N("Squeeze", {"a", "ax"}, {"y"}),
                                   N("Unsqueeze", {"b", "ax"}, {"z"})},
                                  {V("x", f, {2, 3})}, {"y", "z"}, {{"ax", I64({0})}})});
  s.push_back({"layernorm", G({N("LayerNormalization", {"x", "sc", "bi"}, {"y"}, {AInt("axis", -1)})},
                              {V("x", f, {-1, 4})}, {"y"}, {{"sc", F32({4})}, {"bi", F32({4})}})});
  s.push_back({"batchnorm", G({N("BatchNormalization", {"x", "sc", "bi", "m", "v"}, {"y"})}, {V("x", f, {1, 2, 2})},
                              {"y"}, {{"sc", F32({2})}, {"bi", F32({2})}, {"m", F32({2})}, {"v", F32({2})}})});
  s.push_back({"shape_ops", G({N("Shape", {"x"}, {"s"}), N("ConstantOfShape", {"s"}, {"c"}), N("Size", {"x"}, {"n"}),
                               N("Range", {"zero", "n", "one"}, {"r"})},
                              {V("x", f, {-1, 2})}, {"c", "r"}, {{"zero", I64Scalar(0)}, {"one", I64Scalar(1)}})});
  s.push_back({"einsum_cumsum", G({N("Einsum", {"x", "x"}, {"e"}, {AStr("equation", "ij,kj->ik")}),
                                   N("CumSum", {"e", "ax"}, {"y"})},
                                  {V("x", f, {2, 3})}, {"y"}, {{"ax", I64Scalar(1)}})});
  s.push_back({"resize", G({N("Resize", {"x", "", "sc"}, {"y"}, {AStr("mode", "linear")})}, {V("x", f, {1, 1, 2, 2})},
                           {"y"}, {{"sc", Tensor::FromVector<float>(f, {4}, {1, 1, 2, 1.5f})}})});
  s.push_back({"clip_pow", G({N("Clip", {"x", "lo", "hi"}, {"c"}), N("Pow", {"c", "x"}, {"y"})},
                             {V("x", f, {-1})}, {"y"},
                             {{"lo", Tensor::FromVector<float>(f, {}, {-1})}, {"hi", Tensor::FromVector<float>(f, {}, {1})}})});
  {
    graph::Graph then_g = G({N("Relu", {"x"}, {"t"})}, {}, {"t"});
    graph::Graph else_g = G({N("Neg", {"x"}, {"e"})}, {}, {"e"});
    s.push_back({"if", G({N("If", {"c"}, {"y"}, {AGraph("then_branch", then_g), AGraph("else_branch", else_g)})},
                         {V("c", DType::kBool, {}), V("x", f, {-1})}, {"y"})});
  }
  {
    graph::Graph body = G({N("Add", {"acc", "x"}, {"acc_out"}), N("Identity", {"cond"}, {"cond_out"})},
                          {V("i", DType::kInt64, {}), V("cond", DType::kBool, {}), V("acc", f, {-1})},
                          {"cond_out", "acc_out"});
    s.push_back({"loop", G({N("Loop", {"m", "", "a0"}, {"y"}, {AGraph("body", body)})},
                           {V("x", f, {2}), V("a0", f, {2})}, {"y"}, {{"m", I64Scalar(3)}})});
  }
  s.push_back({"int_ops", G({N("Mul", {"x", "x"}, {"m"}), N("Div", {"m", "d"}, {"q"}), N("Mod", {"q", "d"}, {"y"})},
                            {V("x", DType::kInt32, {-1})}, {"y"},
                            {{"d", Tensor::FromVector<int32_t>(DType::kInt32, {1}, {3})}})});
  s.push_back({"depth_space", G({N("DepthToSpace", {"x"}, {"d"}, {AInt("blocksize", 2)}),
                                 N("SpaceToDepth", {"d"}, {"y"}, {AInt("blocksize", 2)})},
                                {V("x", f, {1, 4, 1, 1})}, {"y"})});
  s.push_back({"matmul_fp16", G({N("Cast", {"x"}, {"h"}, {AInt("to", 10)}), N("MatMul", {"h", "h"}, {"y"})},
                                {V("x", f, {2, 2})}, {"y"})});
  return s;
}

bool WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds OUT_DIR (e.g. tests/fuzz/corpus)\n");
    return 2;
  }
  const std::string root = argv[1];
  for (const char* sub : {"", "/fuzz_model_load", "/fuzz_model_run", "/fuzz_tensor_readers", "/fuzz_gguf"}) {
    ::mkdir((root + sub).c_str(), 0755);
  }
  int written = 0;
  for (Seed& seed : Seeds()) {
    graph::Model m;
    m.ir_version = 8;
    m.opsets.push_back({"", 17});
    m.producer_name = "simplecpp-seeds";
    m.graph = std::move(seed.graph);
    const std::string bytes = onnx::WriteModel(m);
    // Every seed must load with the fuzzers' limits; a seed that does not is a generator bug.
    try {
      Model::LoadFromBytes(bytes.data(), bytes.size());
    } catch (const Error& e) {
      std::fprintf(stderr, "seed %s does not load: %s\n", seed.name.c_str(), e.what());
      return 1;
    }
    WriteFile(root + "/fuzz_model_load/" + seed.name + ".onnx", bytes);
    std::string run;
    run.push_back(static_cast<char>(bytes.size() & 0xFF));
    run.push_back(static_cast<char>((bytes.size() >> 8) & 0xFF));
    run += bytes;
    // Input stream: unknown dims 2, then a little data (1.0f, 2.0f, -3.0f, ...).
    const unsigned char tail[] = {2, 2, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0xc0, 1, 0, 0, 0};
    run.append(reinterpret_cast<const char*>(tail), sizeof(tail));
    WriteFile(root + "/fuzz_model_run/" + seed.name, run);
    written += 2;
  }
  // Tensor readers: selector byte (even: TensorProto, odd: .npy) + file bytes.
  std::vector<std::pair<std::string, Tensor>> tensors;
  tensors.push_back({"f32", F32({2, 3})});
  tensors.push_back({"i64", I64({1, -2, 3})});
  tensors.push_back({"scalar", Tensor::FromVector<double>(DType::kFloat64, {}, {2.5})});
  tensors.push_back({"empty", Tensor(DType::kFloat32, {0, 3})});
  tensors.push_back({"bool", Tensor::FromVector<uint8_t>(DType::kBool, {4}, {1, 0, 1, 1})});
  tensors.push_back({"f16", Tensor::FromVector<uint16_t>(DType::kFloat16, {2}, {0x3c00, 0xc000})});
  tensors.push_back({"i8", Tensor::FromVector<int8_t>(DType::kInt8, {1, 2, 1}, {-1, 7})});
  {
    Tensor str(DType::kString, {2});
    str.strings() = {"ab", ""};
    tensors.push_back({"string", str});
  }
  for (const auto& [name, t] : tensors) {
    WriteFile(root + "/fuzz_tensor_readers/pb_" + name, std::string(1, '\0') + onnx::SerializeTensorProto(t, name));
    ++written;
    try {
      WriteFile(root + "/fuzz_tensor_readers/npy_" + name, std::string(1, '\1') + io::SerializeNpy(t));
      ++written;
    } catch (const Error&) {
      // no .npy spelling for this dtype
    }
  }
  // GGUF: a one-layer LLaMA small enough for the fuzzers' input limit, in each supported type
  // but F32 (too large for it; F16 covers the float path).
  builtin::LlamaConfig micro;
  micro.layers = 1;
  micro.hidden = 32;
  micro.q_heads = 2;
  micro.kv_heads = 1;
  micro.ffn = 32;
  micro.vocab = 4;
  micro.max_positions = 8;
  for (quant::GgmlType type : {quant::GgmlType::kF16, quant::GgmlType::kQ8_0,
                               quant::GgmlType::kQ4_0, quant::GgmlType::kQ4_1}) {
    std::string name = quant::GgmlTypeName(static_cast<uint32_t>(type));
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    WriteFile(root + "/fuzz_gguf/llama_" + name + ".gguf", convert::ExportLlamaGguf(micro, type, "micro"));
    ++written;
  }
  std::printf("wrote %d seed files under %s\n", written, root.c_str());
  return 0;
}
