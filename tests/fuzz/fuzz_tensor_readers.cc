// libFuzzer target: the tensor file readers. The first byte picks the reader (even: TensorProto
// via onnx::ParseTensorProto, odd: NumPy .npy via io::ParseNpy), the rest is the file. A parsed
// tensor is serialized again and re-read (round trip must parse).
#include <cstddef>
#include <cstdint>
#include <string>

#include "simplecpp/io/npy.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "simplecpp/simplecpp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool npy = (data[0] & 1) != 0;
  const uint8_t* body = data + 1;
  const size_t n = size - 1;
  simplecpp::Tensor t;
  try {
    if (npy) {
      t = simplecpp::io::ParseNpy(body, n);
    } else {
      std::string name;
      t = simplecpp::onnx::ParseTensorProto(body, n, &name);
    }
  } catch (const simplecpp::Error&) {
    return 0;
  }
  // Round trip: what we write we must read back bit-identically.
  if (t.dtype() != simplecpp::DType::kString && t.byte_size() <= (1u << 20)) {
    try {
      if (npy) {
        const std::string bytes = simplecpp::io::SerializeNpy(t);
        const simplecpp::Tensor back = simplecpp::io::ParseNpy(bytes.data(), bytes.size());
        if (!back.BitwiseEquals(t)) __builtin_trap();
      } else {
        const std::string bytes = simplecpp::onnx::SerializeTensorProto(t, "t");
        const simplecpp::Tensor back = simplecpp::onnx::ParseTensorProto(bytes.data(), bytes.size());
        if (!back.BitwiseEquals(t)) __builtin_trap();
      }
    } catch (const simplecpp::Error&) {
      // SerializeNpy refuses dtypes NumPy has no code for (bfloat16, ...): fine.
    }
  }
  return 0;
}
