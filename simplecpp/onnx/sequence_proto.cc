// SequenceProto / OptionalProto parsing (simplecpp/onnx/sequence_proto.h), with protozero and the
// model reader's TensorProto code. Field numbers from onnx.proto:
//   SequenceProto { name = 1; elem_type = 2; tensor_values = 3; sparse_tensor_values = 4;
//                   sequence_values = 5; map_values = 6; optional_values = 7; }
//   OptionalProto { name = 1; elem_type = 2; tensor_value = 3; sparse_tensor_value = 4;
//                   sequence_value = 5; map_value = 6; optional_value = 7; }
//   elem_type: UNDEFINED = 0, TENSOR = 1, SPARSE_TENSOR = 2, SEQUENCE = 3, MAP = 4, OPTIONAL = 5.
#include "simplecpp/onnx/sequence_proto.h"

#include <vector>

#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/proto_reader.h"
#include "simplecpp/onnx/tensor_proto.h"

namespace simplecpp::onnx {
namespace {

using internal::pbf_reader;

constexpr uint32_t kName = 1, kElemType = 2, kTensor = 3, kSparseTensor = 4, kSequence = 5,
                   kMap = 6, kOptional = 7;
constexpr int32_t kElemTensor = 1;

Value ReadSequence(pbf_reader msg, internal::ParseContext& ctx, std::string* name) {
  std::vector<Tensor> elements;
  while (msg.next()) {
    switch (msg.tag()) {
      case kName: {
        std::string n = internal::ReadString(msg, "name");
        if (name) *name = std::move(n);
        break;
      }
      case kElemType: {
        const int32_t t = internal::ReadInt32(msg, "elem_type");
        if (t != kElemTensor && t != 0) {
          throw Error(ErrorCode::kUnsupported,
                      "SequenceProto elem_type " + std::to_string(t) + ": only tensors are supported");
        }
        break;
      }
      case kTensor:
        elements.push_back(internal::ReadTensor(internal::ReadMessage(msg, "tensor_values"), ctx, nullptr));
        break;
      case kSparseTensor:
      case kSequence:
      case kMap:
      case kOptional:
        throw Error(ErrorCode::kUnsupported,
                    "SequenceProto holds sparse tensors, sequences, maps or optionals; only "
                    "sequences of tensors are supported");
      default: msg.skip();
    }
  }
  const DType dtype = elements.empty() ? DType::kUndefined : elements[0].dtype();
  return Value::Sequence(dtype, std::move(elements));
}

Value ReadOptional(pbf_reader msg, internal::ParseContext& ctx, std::string* name) {
  Value value = Value::None();
  while (msg.next()) {
    switch (msg.tag()) {
      case kName: {
        std::string n = internal::ReadString(msg, "name");
        if (name) *name = std::move(n);
        break;
      }
      case kElemType: internal::ReadInt32(msg, "elem_type"); break;
      case kTensor:
        value = internal::ReadTensor(internal::ReadMessage(msg, "tensor_value"), ctx, nullptr);
        break;
      case kSequence:
        value = ReadSequence(internal::ReadMessage(msg, "sequence_value"), ctx, nullptr);
        break;
      case kSparseTensor:
      case kMap:
      case kOptional:
        throw Error(ErrorCode::kUnsupported,
                    "OptionalProto holds a sparse tensor, map or optional; only tensors and "
                    "sequences of tensors are supported");
      default: msg.skip();
    }
  }
  return value;
}

}  // namespace

Value ParseSequenceProto(const void* data, size_t size, std::string* name) {
  internal::ParseContext ctx;  // no owner: tensors are copied
  pbf_reader msg(static_cast<const char*>(data), size);
  return internal::WithContext([] { return std::string("SequenceProto"); },
                               [&] { return ReadSequence(msg, ctx, name); });
}

Value ParseOptionalProto(const void* data, size_t size, std::string* name) {
  internal::ParseContext ctx;
  pbf_reader msg(static_cast<const char*>(data), size);
  return internal::WithContext([] { return std::string("OptionalProto"); },
                               [&] { return ReadOptional(msg, ctx, name); });
}

Value ReadValueProtoFile(const std::string& path, bool sequence, bool optional, std::string* name) {
  std::shared_ptr<const io::MappedFile> file = io::MappedFile::Open(path);
  return internal::WithContext([&] { return path; }, [&]() -> Value {
    if (optional) return ParseOptionalProto(file->data(), file->size(), name);
    if (sequence) return ParseSequenceProto(file->data(), file->size(), name);
    return ParseTensorProto(file->data(), file->size(), name);
  });
}

}  // namespace simplecpp::onnx
