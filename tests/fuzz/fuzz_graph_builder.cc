// libFuzzer target: random call sequences on simplecpp::GraphBuilder. The bytes are a program:
// [opset byte] then commands, one byte each plus operands:
//   input, initializer, node (an op from a table or a made-up name, inputs picked from the values
//   so far or dangling, attributes of random names and kinds), output, describe, subgraph (an If
//   whose branches read outer values), build-and-run (small inputs from the stream), export
//   (ToOnnx, then Model::LoadFromBytes of the bytes).
// Every call may throw simplecpp::Error (that is the point: wrong calls are named errors); any
// other exception, crash or sanitizer report is a finding. Small limits bound what folding and
// running may allocate.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "simplecpp/builder.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace simplecpp;

const char* const kOps[] = {
    "Relu",     "Add",       "Mul",        "Sub",          "Div",        "MatMul",    "Gemm",
    "Conv",     "MaxPool",   "AveragePool", "Reshape",     "Transpose",  "Concat",    "Softmax",
    "Gather",   "Slice",     "Cast",       "ReduceSum",    "ReduceMean", "Split",     "Squeeze",
    "Unsqueeze", "Pad",      "Shape",      "Expand",       "Where",      "Equal",     "Flatten",
    "Identity", "Sigmoid",   "Tanh",       "Clip",         "ConvInteger", "MatMulInteger",
    "QuantizeLinear", "DequantizeLinear", "QLinearMatMul", "Resize", "ConstantOfShape", "Range",
    "Tile",     "Not",       "ArgMax",     "TopK",         "LayerNormalization", "Einsum",
    "BatchNormalization", "GlobalAveragePool", "Constant", "Dropout"};
const char* const kAttributeNames[] = {"axis", "axes", "perm", "pads", "strides", "kernel_shape",
                                       "group", "keepdims", "to", "alpha", "beta", "transA",
                                       "transB", "mode", "equation", "value", "epsilon",
                                       "dilations", "split", "k", "largest", "allowzero",
                                       "auto_pad", "ceil_mode", "saturate"};
const DType kDTypes[] = {DType::kFloat32, DType::kInt64, DType::kUInt8, DType::kInt8,
                         DType::kInt32,   DType::kBool,  DType::kFloat16, DType::kFloat64};

template <typename T, size_t N>
const T& Pick(fuzz::ByteStream& s, const T (&table)[N]) {
  return table[s.Byte() % N];
}

Dims SmallDims(fuzz::ByteStream& s, bool allow_unknown) {
  Dims dims;
  const int rank = s.Byte() % 5;
  for (int i = 0; i < rank; ++i) {
    const uint8_t b = s.Byte();
    dims.push_back(allow_unknown && b % 7 == 0 ? -1 : b % 5);
  }
  return dims;
}

AttributeValue RandomAttribute(fuzz::ByteStream& s) {
  switch (s.Byte() % 6) {
    case 0: return static_cast<int64_t>(static_cast<int8_t>(s.Byte()));
    case 1: return static_cast<float>(static_cast<int8_t>(s.Byte())) / 8.0f;
    case 2: {
      const char* const strings[] = {"constant", "linear", "nearest", "SAME_UPPER", "VALID",
                                     "ij,jk->ik", "reflect", ""};
      return std::string(Pick(s, strings));
    }
    case 3: {
      std::vector<int64_t> v(s.Byte() % 6);
      for (int64_t& x : v) x = static_cast<int8_t>(s.Byte()) % 5;
      return v;
    }
    case 4: {
      std::vector<float> v(s.Byte() % 4);
      for (float& x : v) x = static_cast<float>(s.Byte()) / 16.0f;
      return v;
    }
    default: {
      const DType dtype = Pick(s, kDTypes);
      Dims dims = SmallDims(s, false);
      return fuzz::TensorFromStream(s, dtype, dims);
    }
  }
}

class Program {
 public:
  explicit Program(fuzz::ByteStream* s) : s_(*s), b_(7 + s->Byte() % 15) {
    b_.SetLimits(fuzz::SmallLimits());
  }

  void Run() {
    for (int step = 0; step < 48 && s_.remaining() > 0; ++step) {
      try {
        Step(s_.Byte() % 9);
      } catch (const Error&) {
        // A named error: the builder stays usable, the program goes on.
      }
    }
  }

 private:
  std::string AnyValue() {
    const uint8_t b = s_.Byte();
    if (values_.empty() || b % 11 == 0) return b % 2 ? "" : "dangling";
    return values_[b % values_.size()];
  }

  void Step(int command) {
    const std::string name = "v" + std::to_string(counter_++);
    switch (command) {
      case 0: {
        const DType dtype = Pick(s_, kDTypes);
        Dims dims = SmallDims(s_, true);
        std::vector<std::string> params;
        if (s_.Byte() % 2) {
          for (size_t i = 0; i < dims.size(); ++i) params.push_back(s_.Byte() % 3 ? "" : "n");
        }
        values_.push_back(b_.AddInput(name, dtype, dims, params));
        break;
      }
      case 1:
      case 2: {
        const DType dtype = Pick(s_, kDTypes);
        Dims dims = SmallDims(s_, false);
        values_.push_back(b_.AddInitializer(name, fuzz::TensorFromStream(s_, dtype, dims)));
        break;
      }
      case 3:
      case 4: {
        std::string op = s_.Byte() % 16 ? Pick(s_, kOps) : "NotAnOp";
        std::vector<std::string> inputs(s_.Byte() % 5);
        for (std::string& in : inputs) in = AnyValue();
        Attributes attributes;
        const int n_attributes = s_.Byte() % 4;
        for (int i = 0; i < n_attributes; ++i) attributes.emplace_back(Pick(s_, kAttributeNames), RandomAttribute(s_));
        NodeOptions options;
        if (s_.Byte() % 8 == 0) options.domain = "com.microsoft";
        const int n_outputs = 1 + s_.Byte() % 3;
        for (const std::string& out : b_.AddNode(op, inputs, attributes, n_outputs, options)) {
          if (!out.empty()) values_.push_back(out);
        }
        break;
      }
      case 5:
        b_.AddOutput(AnyValue());
        break;
      case 6: {
        const ValueDescription d = b_.Describe(AnyValue());
        volatile size_t sink = d.dims.size();
        (void)sink;
        break;
      }
      case 7: {
        // If on a bool input with branches that read outer values.
        GraphBuilder then_b = b_.NewSubgraph("then");
        GraphBuilder else_b = b_.NewSubgraph("else");
        then_b.AddOutput(then_b.AddNode(Pick(s_, kOps), {AnyValue()}));
        else_b.AddOutput(else_b.AddNode(Pick(s_, kOps), {AnyValue()}));
        values_.push_back(b_.AddNode("If", {AnyValue()},
                                     {{"then_branch", then_b.BuildSubgraph()}, {"else_branch", else_b.BuildSubgraph()}}));
        break;
      }
      default:
        if (s_.Byte() % 2) {
          BuildAndRun();
        } else {
          const std::string bytes = b_.ToOnnx();
          const Model m = Model::LoadFromBytes(bytes.data(), bytes.size(), fuzz::SmallLoadOptions());
          volatile size_t sink = m.outputs().size();
          (void)sink;
        }
        break;
    }
  }

  void BuildAndRun() {
    const Model model = b_.Build(fuzz::SmallLoadOptions());
    std::map<std::string, Tensor> feeds;
    for (const ValueDescription& in : model.inputs()) {
      if (in.sequence || in.optional || in.dtype == DType::kString || DTypeSize(in.dtype) == 0) return;
      Dims dims;
      for (int64_t d : in.dims) dims.push_back(d >= 0 ? d : s_.Byte() % 4);
      feeds[in.name] = fuzz::TensorFromStream(s_, in.dtype, dims);
    }
    SessionOptions so;
    so.threads = 1;
    Session session(model, so);
    const auto outputs = session.Run(feeds);
    volatile size_t sink = outputs.size();
    (void)sink;
  }

  fuzz::ByteStream& s_;
  GraphBuilder b_;
  std::vector<std::string> values_;
  int counter_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::ByteStream stream(data, size);
  try {
    Program(&stream).Run();
  } catch (const simplecpp::Error&) {
  }
  return 0;
}
