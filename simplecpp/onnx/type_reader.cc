// TypeProto and ValueInfoProto -> graph::TypeInfo / graph::ValueInfo: tensor element types and
// shapes (dim_value / dim_param), and the sequence, optional, map and sparse-tensor wrappers,
// read recursively with a depth limit.
#include <utility>

#include "simplecpp/onnx/proto_fields.h"
#include "simplecpp/onnx/proto_reader.h"

namespace simplecpp::onnx::internal {
namespace {

graph::Dim ReadDim(pbf_reader msg) {
  graph::Dim dim;
  while (msg.next()) {
    switch (msg.tag()) {
      case fields::dimension::kDimValue: {
        const int64_t v = ReadInt64(msg, "dim_value");
        // A negative dim_value carries no information: keep the dimension unknown.
        dim.value = v >= 0 ? v : -1;
        break;
      }
      case fields::dimension::kDimParam: dim.param = ReadString(msg, "dim_param"); break;
      default: msg.skip();
    }
  }
  return dim;
}

// TypeProto.Tensor and TypeProto.SparseTensor share their layout.
void ReadTensorType(pbf_reader msg, graph::TypeInfo* type) {
  while (msg.next()) {
    switch (msg.tag()) {
      case fields::tensor_type::kElemType:
        type->dtype = ReadDataType(ReadInt32(msg, "elem_type"), true, "elem_type");
        break;
      case fields::tensor_type::kShape: {
        pbf_reader shape = ReadMessage(msg, "shape");
        type->has_shape = true;
        type->dims.clear();
        while (shape.next()) {
          if (shape.tag() == fields::shape::kDim) {
            type->dims.push_back(ReadDim(ReadMessage(shape, "dim")));
          } else {
            shape.skip();
          }
        }
        break;
      }
      default: msg.skip();
    }
  }
}

// TypeProto.Sequence / TypeProto.Optional: one nested TypeProto.
void ReadElemType(pbf_reader msg, int depth, graph::TypeInfo* type) {
  while (msg.next()) {
    if (msg.tag() == fields::elem_type::kElemType) {
      type->elem = std::make_shared<graph::TypeInfo>(ReadType(ReadMessage(msg, "elem_type"), depth + 1));
    } else {
      msg.skip();
    }
  }
}

void ReadMapType(pbf_reader msg, int depth, graph::TypeInfo* type) {
  while (msg.next()) {
    switch (msg.tag()) {
      case fields::map_type::kKeyType:
        type->dtype = ReadDataType(ReadInt32(msg, "key_type"), true, "key_type");
        break;
      case fields::map_type::kValueType:
        type->elem =
            std::make_shared<graph::TypeInfo>(ReadType(ReadMessage(msg, "value_type"), depth + 1));
        break;
      default: msg.skip();
    }
  }
}

}  // namespace

graph::TypeInfo ReadType(pbf_reader msg, int depth) {
  if (depth > kMaxTypeDepth) {
    throw Error(ErrorCode::kLimitExceeded,
                "type nesting deeper than " + std::to_string(kMaxTypeDepth) + " levels");
  }
  using Kind = graph::TypeInfo::Kind;
  graph::TypeInfo type;
  while (msg.next()) {
    // The value is a oneof: when several are present the last one wins, as in protobuf.
    switch (msg.tag()) {
      case fields::type::kTensorType:
        type = graph::TypeInfo();
        type.kind = Kind::kTensor;
        ReadTensorType(ReadMessage(msg, "tensor_type"), &type);
        break;
      case fields::type::kSparseTensorType:
        type = graph::TypeInfo();
        type.kind = Kind::kSparseTensor;
        ReadTensorType(ReadMessage(msg, "sparse_tensor_type"), &type);
        break;
      case fields::type::kSequenceType:
        type = graph::TypeInfo();
        type.kind = Kind::kSequence;
        ReadElemType(ReadMessage(msg, "sequence_type"), depth, &type);
        break;
      case fields::type::kOptionalType:
        type = graph::TypeInfo();
        type.kind = Kind::kOptional;
        ReadElemType(ReadMessage(msg, "optional_type"), depth, &type);
        break;
      case fields::type::kMapType:
        type = graph::TypeInfo();
        type.kind = Kind::kMap;
        ReadMapType(ReadMessage(msg, "map_type"), depth, &type);
        break;
      case fields::type::kOpaqueType:
        ReadMessage(msg, "opaque_type");
        type = graph::TypeInfo();  // opaque types carry nothing this library uses
        break;
      default: msg.skip();
    }
  }
  return type;
}

graph::ValueInfo ReadValueInfo(pbf_reader msg) {
  graph::ValueInfo info;
  const pbf_reader start = msg;
  WithContext(
      [&] {
        return "value '" + PeekStringField(start, fields::value_info::kName) + "'";
      },
      [&] {
        while (msg.next()) {
          switch (msg.tag()) {
            case fields::value_info::kName: info.name = ReadString(msg, "name"); break;
            case fields::value_info::kType: info.type = ReadType(ReadMessage(msg, "type"), 1); break;
            case fields::value_info::kDocString: info.doc = ReadString(msg, "doc_string"); break;
            default: msg.skip();
          }
        }
      });
  return info;
}

}  // namespace simplecpp::onnx::internal
