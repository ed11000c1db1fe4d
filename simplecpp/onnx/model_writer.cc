// graph::Model -> ModelProto bytes with protozero (simplecpp/onnx/model_writer.h), and the
// ProtoWriter (simplecpp/onnx/proto_writer.h) it shares with SerializeTensorProto. Reading the
// bytes back gives an equal graph::Model: every IR field is written, fields in field-number order.
#include "simplecpp/onnx/model_writer.h"

#include <cstring>

#include "simplecpp/error.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/proto_fields.h"
#include "simplecpp/onnx/proto_reader.h"
#include "simplecpp/onnx/proto_writer.h"

namespace simplecpp::onnx {
namespace internal {
namespace {

using protozero::pbf_writer;

void WriteOpset(pbf_writer& pw, const graph::OpsetImport& o) {
  if (!o.domain.empty()) pw.add_string(fields::opset::kDomain, o.domain);
  pw.add_int64(fields::opset::kVersion, o.version);
}

bool IsZeroElement(const simplecpp::Tensor& t, int64_t k) {
  if (t.dtype() == DType::kString) return t.strings()[static_cast<size_t>(k)].empty();
  const int bits = DTypeBits(t.dtype());
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  if (bits >= 8) {
    const size_t w = static_cast<size_t>(bits / 8);
    for (size_t b = 0; b < w; ++b) {
      if (p[static_cast<size_t>(k) * w + b] != 0) return false;
    }
    return true;
  }
  const int per_byte = 8 / bits;
  return ((p[k / per_byte] >> ((k % per_byte) * bits)) & ((1 << bits) - 1)) == 0;
}

}  // namespace

void ProtoWriter::WriteTensor(pbf_writer& pw, const simplecpp::Tensor& t, const std::string& name) {
  namespace tf = fields::tensor;
  if (!t.defined()) {
    throw Error(ErrorCode::kInvalidArgument,
                "cannot serialize an undefined tensor" + (name.empty() ? "" : " '" + name + "'"));
  }
  pw.add_packed_int64(tf::kDims, t.dims().begin(), t.dims().end());
  pw.add_int32(tf::kDataType, static_cast<int32_t>(t.dtype()));
  if (t.dtype() == DType::kString) {
    for (const std::string& s : t.strings()) pw.add_bytes(tf::kStringData, s);
  }
  if (!name.empty()) pw.add_string(tf::kName, name);
  if (t.dtype() != DType::kString) {
    if (t.byte_size() == 0) {
      pw.add_bytes(tf::kRawData, "", 0);
    } else {
      pw.add_bytes(tf::kRawData, static_cast<const char*>(t.raw_data()), t.byte_size());
    }
  }
}

void ProtoWriter::WriteSparseTensor(pbf_writer& pw, const simplecpp::Tensor& dense) {
  namespace sf = fields::sparse_tensor;
  if (!dense.defined()) throw Error(ErrorCode::kInvalidArgument, "cannot serialize an undefined tensor");
  std::vector<int64_t> nonzero;
  for (int64_t k = 0; k < dense.num_elements(); ++k) {
    if (!IsZeroElement(dense, k)) nonzero.push_back(k);
  }
  const int64_t nnz = static_cast<int64_t>(nonzero.size());
  simplecpp::Tensor values(dense.dtype(), {nnz});
  for (int64_t k = 0; k < nnz; ++k) CopyTensorElement(dense, nonzero[static_cast<size_t>(k)], &values, k);
  simplecpp::Tensor indices = simplecpp::Tensor::FromVector<int64_t>(DType::kInt64, {nnz}, nonzero);
  Message(pw, sf::kValues, [&](pbf_writer& m) { WriteTensor(m, values, ""); });
  Message(pw, sf::kIndices, [&](pbf_writer& m) { WriteTensor(m, indices, ""); });
  pw.add_packed_int64(sf::kDims, dense.dims().begin(), dense.dims().end());
}

void ProtoWriter::WriteType(pbf_writer& pw, const graph::TypeInfo& t) {
  namespace yf = fields::type;
  using Kind = graph::TypeInfo::Kind;
  auto tensor_like = [&](pbf_writer& m) {
    if (t.dtype != DType::kUndefined) {
      m.add_int32(fields::tensor_type::kElemType, static_cast<int32_t>(t.dtype));
    }
    if (t.has_shape) {
      Message(m, fields::tensor_type::kShape, [&](pbf_writer& shape) {
        for (const graph::Dim& d : t.dims) {
          Message(shape, fields::shape::kDim, [&](pbf_writer& dim) {
            if (d.value >= 0) dim.add_int64(fields::dimension::kDimValue, d.value);
            if (!d.param.empty()) dim.add_string(fields::dimension::kDimParam, d.param);
          });
        }
      });
    }
  };
  auto elem = [&](pbf_writer& m) {
    if (t.elem) Message(m, fields::elem_type::kElemType, [&](pbf_writer& e) { WriteType(e, *t.elem); });
  };
  switch (t.kind) {
    case Kind::kUnknown: break;
    case Kind::kTensor: Message(pw, yf::kTensorType, tensor_like); break;
    case Kind::kSparseTensor: Message(pw, yf::kSparseTensorType, tensor_like); break;
    case Kind::kSequence: Message(pw, yf::kSequenceType, elem); break;
    case Kind::kOptional: Message(pw, yf::kOptionalType, elem); break;
    case Kind::kMap:
      Message(pw, yf::kMapType, [&](pbf_writer& m) {
        if (t.dtype != DType::kUndefined) {
          m.add_int32(fields::map_type::kKeyType, static_cast<int32_t>(t.dtype));
        }
        if (t.elem) {
          Message(m, fields::map_type::kValueType, [&](pbf_writer& e) { WriteType(e, *t.elem); });
        }
      });
      break;
  }
}

void ProtoWriter::WriteValueInfo(pbf_writer& pw, const graph::ValueInfo& v) {
  namespace vf = fields::value_info;
  pw.add_string(vf::kName, v.name);
  if (v.type.kind != graph::TypeInfo::Kind::kUnknown) {
    Message(pw, vf::kType, [&](pbf_writer& m) { WriteType(m, v.type); });
  }
  if (!v.doc.empty()) pw.add_string(vf::kDocString, v.doc);
}

void ProtoWriter::WriteAttribute(pbf_writer& pw, const graph::Attribute& a) {
  namespace af = fields::attribute;
  using graph::AttrKind;
  pw.add_string(af::kName, a.name);
  auto graph_msg = [&](uint32_t tag, const std::shared_ptr<graph::Graph>& g) {
    Message(pw, tag, [&](pbf_writer& m) {
      if (g) WriteGraph(m, *g);
    });
  };
  switch (a.kind) {
    case AttrKind::kUndefined:
      throw Error(ErrorCode::kInvalidArgument, "attribute '" + a.name + "' has kind UNDEFINED");
    case AttrKind::kFloat: pw.add_float(af::kF, a.f); break;
    case AttrKind::kInt: pw.add_int64(af::kI, a.i); break;
    case AttrKind::kString: pw.add_bytes(af::kS, a.s); break;
    case AttrKind::kTensor:
      if (a.t.defined()) Message(pw, af::kT, [&](pbf_writer& m) { WriteTensor(m, a.t, ""); });
      break;
    case AttrKind::kGraph:
      if (a.g) graph_msg(af::kG, a.g);
      break;
    case AttrKind::kFloats: pw.add_packed_float(af::kFloats, a.floats.begin(), a.floats.end()); break;
    case AttrKind::kInts: pw.add_packed_int64(af::kInts, a.ints.begin(), a.ints.end()); break;
    case AttrKind::kStrings:
      for (const std::string& s : a.strings) pw.add_bytes(af::kStrings, s);
      break;
    case AttrKind::kTensors:
      for (const simplecpp::Tensor& t : a.tensors) {
        Message(pw, af::kTensors, [&](pbf_writer& m) { WriteTensor(m, t, ""); });
      }
      break;
    case AttrKind::kGraphs:
      for (const auto& g : a.graphs) graph_msg(af::kGraphs, g);
      break;
    case AttrKind::kTypeProto:
      if (!a.types.empty()) Message(pw, af::kTp, [&](pbf_writer& m) { WriteType(m, a.types[0]); });
      break;
    case AttrKind::kTypeProtos:
      for (const graph::TypeInfo& t : a.types) {
        Message(pw, af::kTypeProtos, [&](pbf_writer& m) { WriteType(m, t); });
      }
      break;
    case AttrKind::kSparseTensor:
      if (a.t.defined()) Message(pw, af::kSparseTensor, [&](pbf_writer& m) { WriteSparseTensor(m, a.t); });
      break;
    case AttrKind::kSparseTensors:
      for (const simplecpp::Tensor& t : a.tensors) {
        Message(pw, af::kSparseTensors, [&](pbf_writer& m) { WriteSparseTensor(m, t); });
      }
      break;
  }
  pw.add_int32(af::kType, static_cast<int32_t>(a.kind));
  if (!a.ref_attr_name.empty()) pw.add_string(af::kRefAttrName, a.ref_attr_name);
}

void ProtoWriter::WriteNode(pbf_writer& pw, const graph::Node& node) {
  namespace nf = fields::node;
  for (const std::string& s : node.inputs) pw.add_string(nf::kInput, s);
  for (const std::string& s : node.outputs) pw.add_string(nf::kOutput, s);
  if (!node.name.empty()) pw.add_string(nf::kName, node.name);
  pw.add_string(nf::kOpType, node.op_type);
  for (const graph::Attribute& a : node.attributes) {
    Message(pw, nf::kAttribute, [&](pbf_writer& m) { WriteAttribute(m, a); });
  }
  if (!node.doc.empty()) pw.add_string(nf::kDocString, node.doc);
  if (!node.domain.empty()) pw.add_string(nf::kDomain, node.domain);
}

void ProtoWriter::WriteGraph(pbf_writer& pw, const graph::Graph& g) {
  namespace gf = fields::graph;
  for (const graph::Node& n : g.nodes) Message(pw, gf::kNode, [&](pbf_writer& m) { WriteNode(m, n); });
  if (!g.name.empty()) pw.add_string(gf::kName, g.name);
  // No structured bindings here: clang 14 (emscripten) cannot capture them in a lambda.
  for (const auto& entry : g.initializers) {
    Message(pw, gf::kInitializer,
            [&](pbf_writer& m) { WriteTensor(m, entry.second, entry.first); });
  }
  if (!g.doc.empty()) pw.add_string(gf::kDocString, g.doc);
  for (const auto& v : g.inputs) Message(pw, gf::kInput, [&](pbf_writer& m) { WriteValueInfo(m, v); });
  for (const auto& v : g.outputs) Message(pw, gf::kOutput, [&](pbf_writer& m) { WriteValueInfo(m, v); });
  for (const auto& v : g.value_info) {
    Message(pw, gf::kValueInfo, [&](pbf_writer& m) { WriteValueInfo(m, v); });
  }
}

void ProtoWriter::WriteFunction(pbf_writer& pw, const graph::Function& fn) {
  namespace ff = fields::function;
  pw.add_string(ff::kName, fn.name);
  for (const std::string& s : fn.inputs) pw.add_string(ff::kInput, s);
  for (const std::string& s : fn.outputs) pw.add_string(ff::kOutput, s);
  for (const std::string& s : fn.attribute_names) pw.add_string(ff::kAttribute, s);
  for (const graph::Node& n : fn.nodes) Message(pw, ff::kNode, [&](pbf_writer& m) { WriteNode(m, n); });
  for (const auto& o : fn.opsets) {
    Message(pw, ff::kOpsetImport, [&](pbf_writer& m) { WriteOpset(m, o); });
  }
  if (!fn.domain.empty()) pw.add_string(ff::kDomain, fn.domain);
  for (const graph::Attribute& a : fn.attribute_defaults) {
    Message(pw, ff::kAttributeProto, [&](pbf_writer& m) { WriteAttribute(m, a); });
  }
}

void ProtoWriter::WriteModel(pbf_writer& pw, const graph::Model& model) {
  namespace mf = fields::model;
  pw.add_int64(mf::kIrVersion, model.ir_version);
  if (!model.producer_name.empty()) pw.add_string(mf::kProducerName, model.producer_name);
  if (!model.producer_version.empty()) pw.add_string(mf::kProducerVersion, model.producer_version);
  if (!model.domain.empty()) pw.add_string(mf::kDomain, model.domain);
  if (model.model_version != 0) pw.add_int64(mf::kModelVersion, model.model_version);
  if (!model.doc.empty()) pw.add_string(mf::kDocString, model.doc);
  Message(pw, mf::kGraph, [&](pbf_writer& m) { WriteGraph(m, model.graph); });
  for (const auto& o : model.opsets) {
    Message(pw, mf::kOpsetImport, [&](pbf_writer& m) { WriteOpset(m, o); });
  }
  for (const auto& entry : model.metadata) {
    Message(pw, mf::kMetadataProps, [&](pbf_writer& m) {
      m.add_string(fields::entry::kKey, entry.first);
      m.add_string(fields::entry::kValue, entry.second);
    });
  }
  for (const graph::Function& fn : model.functions) {
    Message(pw, mf::kFunctions, [&](pbf_writer& m) { WriteFunction(m, fn); });
  }
}

}  // namespace internal

std::string WriteModel(const graph::Model& model) {
  std::string buffer;
  {
    protozero::pbf_writer pw(buffer);
    internal::ProtoWriter(&buffer).WriteModel(pw, model);
  }
  return buffer;
}

void WriteModelFile(const std::string& path, const graph::Model& model) {
  io::WriteStringToFile(path, WriteModel(model));
}

}  // namespace simplecpp::onnx
