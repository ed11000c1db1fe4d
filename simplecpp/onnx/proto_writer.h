// Internal to simplecpp/onnx: the ModelProto / TensorProto writer (protozero), shared by
// model_writer.cc and tensor_proto.cc. Writes every field the readers read: tensors as raw_data
// (little-endian; strings as string_data), sparse-tensor attributes as linear-index COO.
#pragma once

#include <string>

#include <protozero/pbf_writer.hpp>

#include "graph/ir.h"
#include "simplecpp/tensor.h"

namespace simplecpp::onnx::internal {

// All messages go into one buffer; the writer needs it to tell whether a nested message came
// out empty (protozero drops empty nested messages, but an empty message can still mean
// something: a scalar shape, an empty graph, an element of a repeated field).
class ProtoWriter {
 public:
  explicit ProtoWriter(std::string* buffer) : buffer_(buffer) {}

  void WriteModel(protozero::pbf_writer& pw, const graph::Model& model);
  void WriteGraph(protozero::pbf_writer& pw, const graph::Graph& g);
  void WriteNode(protozero::pbf_writer& pw, const graph::Node& node);
  void WriteAttribute(protozero::pbf_writer& pw, const graph::Attribute& a);
  void WriteFunction(protozero::pbf_writer& pw, const graph::Function& fn);
  void WriteValueInfo(protozero::pbf_writer& pw, const graph::ValueInfo& v);
  void WriteType(protozero::pbf_writer& pw, const graph::TypeInfo& t);
  // TensorProto fields of `t` (dims, data_type, name, raw_data or string_data).
  void WriteTensor(protozero::pbf_writer& pw, const simplecpp::Tensor& t, const std::string& name);
  // SparseTensorProto of a dense tensor: its non-zero elements with linear indices.
  void WriteSparseTensor(protozero::pbf_writer& pw, const simplecpp::Tensor& dense);

  // Writes the nested message `tag` filled by fill(pbf_writer&), even when it is empty.
  template <typename Fill>
  void Message(protozero::pbf_writer& parent, uint32_t tag, Fill&& fill) {
    const size_t before = buffer_->size();
    {
      protozero::pbf_writer sub(parent, tag);
      fill(sub);
    }
    if (buffer_->size() == before) parent.add_message(tag, "", 0);
  }

 private:
  std::string* buffer_;
};

}  // namespace simplecpp::onnx::internal
