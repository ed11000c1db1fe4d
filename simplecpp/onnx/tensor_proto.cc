// TensorProto <-> Tensor for .pb files (simplecpp/onnx/tensor_proto.h). Parsing and writing share
// the model reader's and writer's TensorProto code (tensor_reader.cc, ProtoWriter).
#include "simplecpp/onnx/tensor_proto.h"

#include <protozero/exception.hpp>

#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/proto_reader.h"
#include "simplecpp/onnx/proto_writer.h"

namespace simplecpp::onnx {

Tensor ParseTensorProto(const void* data, size_t size, std::string* name) {
  internal::ParseContext ctx;  // no owner: copy; no external_data_dir: external data refused
  internal::pbf_reader msg(static_cast<const char*>(data), size);
  return internal::WithContext([] { return std::string("TensorProto"); },
                               [&] { return internal::ReadTensor(msg, ctx, name); });
}

std::string SerializeTensorProto(const Tensor& tensor, const std::string& name) {
  std::string buffer;
  {
    protozero::pbf_writer pw(buffer);
    internal::ProtoWriter(&buffer).WriteTensor(pw, tensor, name);
  }
  return buffer;
}

Tensor ReadTensorProtoFile(const std::string& path, std::string* name) {
  std::shared_ptr<const io::MappedFile> file = io::MappedFile::Open(path);
  return internal::WithContext([&] { return path; },
                               [&] { return ParseTensorProto(file->data(), file->size(), name); });
}

void WriteTensorProtoFile(const std::string& path, const Tensor& tensor, const std::string& name) {
  io::WriteStringToFile(path, SerializeTensorProto(tensor, name));
}

}  // namespace simplecpp::onnx
