// libFuzzer target: load a model and run it on inputs made from fuzzer bytes.
// Input layout: [u16 little-endian n][n bytes: ONNX model][rest: input stream]. For each graph
// input in order, the stream gives one byte per unknown dim (dim = byte % 4; rank = byte % 4 when
// the rank is unknown) and then the tensor's raw bytes (zeros when the stream runs out). Inputs
// over 4096 elements, string inputs and unsupported dtypes end the case early. Loads with the
// small limits of fuzz_util.cc, so any allocation the model asks for is bounded.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "simplecpp/simplecpp.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace simplecpp;

constexpr int64_t kMaxInputElements = 4096;

void RunCase(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const size_t model_size = data[0] | (static_cast<size_t>(data[1]) << 8);
  if (model_size > size - 2) return;
  const Model model = Model::LoadFromBytes(data + 2, model_size, fuzz::SmallLoadOptions());
  fuzz::ByteStream stream(data + 2 + model_size, size - 2 - model_size);
  std::map<std::string, Tensor> inputs;
  for (const ValueDescription& in : model.inputs()) {
    if (in.dtype == DType::kString || in.dtype == DType::kUndefined || DTypeSize(in.dtype) == 0) {
      return;
    }
    Dims dims;
    if (in.has_shape) {
      for (int64_t d : in.dims) dims.push_back(d >= 0 ? d : stream.Byte() % 4);
    } else {
      const int rank = stream.Byte() % 4;
      for (int i = 0; i < rank; ++i) dims.push_back(stream.Byte() % 4);
    }
    int64_t elements = 1;
    for (int64_t d : dims) {
      if (d > kMaxInputElements) return;
      elements *= d;
      if (elements > kMaxInputElements) return;
    }
    inputs[in.name] = fuzz::TensorFromStream(stream, in.dtype, dims);
  }
  SessionOptions so;
  so.threads = 1;
  Session session(model, so);
  const auto outputs = session.Run(inputs);
  volatile size_t sink = outputs.size();
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    RunCase(data, size);
  } catch (const simplecpp::Error&) {
  }
  return 0;
}
