// AttributeProto -> graph::Attribute, every kind: scalars, lists, tensors (sparse ones densified),
// subgraphs (read recursively, depth-limited), type protos and function references
// (ref_attr_name). IR version 1 models have no `type` field: the kind is inferred from the value
// field that is present.
#include <utility>

#include "simplecpp/onnx/proto_fields.h"
#include "simplecpp/onnx/proto_reader.h"

namespace simplecpp::onnx::internal {
namespace {

namespace af = fields::attribute;
using graph::AttrKind;

// Everything an AttributeProto may hold, before its kind is settled.
struct AttributeFields {
  graph::Attribute attr;  // name, ref_attr_name, f, i, s, floats, ints, strings
  int32_t type = 0;
  bool has_f = false, has_i = false, has_s = false;
  bool has_t = false, has_g = false, has_sparse = false, has_tp = false;
  Tensor t, sparse;
  std::shared_ptr<graph::Graph> g;
  graph::TypeInfo tp;
  std::vector<Tensor> tensors, sparse_tensors;
  std::vector<std::shared_ptr<graph::Graph>> graphs;
  std::vector<graph::TypeInfo> type_protos;
};

template <typename Fn>
auto ReadNth(const char* what, size_t index, Fn&& read) {
  return WithContext([&] { return std::string(what) + "[" + std::to_string(index) + "]"; }, read);
}

// Which kind the value fields describe, for models without the `type` field.
AttrKind InferKind(const AttributeFields& a) {
  if (a.has_f) return AttrKind::kFloat;
  if (a.has_i) return AttrKind::kInt;
  if (a.has_s) return AttrKind::kString;
  if (a.has_t) return AttrKind::kTensor;
  if (a.has_g) return AttrKind::kGraph;
  if (a.has_sparse) return AttrKind::kSparseTensor;
  if (a.has_tp) return AttrKind::kTypeProto;
  if (!a.attr.floats.empty()) return AttrKind::kFloats;
  if (!a.attr.ints.empty()) return AttrKind::kInts;
  if (!a.attr.strings.empty()) return AttrKind::kStrings;
  if (!a.tensors.empty()) return AttrKind::kTensors;
  if (!a.graphs.empty()) return AttrKind::kGraphs;
  if (!a.sparse_tensors.empty()) return AttrKind::kSparseTensors;
  if (!a.type_protos.empty()) return AttrKind::kTypeProtos;
  ThrowInvalid("attribute has no type and no value");
}

// Reads one field of the AttributeProto into `a`.
void ReadAttributeField(pbf_reader& msg, ParseContext& ctx, int graph_depth,
                        AttributeFields& a) {
  switch (msg.tag()) {
    case af::kName: a.attr.name = ReadString(msg, "name"); break;
    case af::kRefAttrName: a.attr.ref_attr_name = ReadString(msg, "ref_attr_name"); break;
    case af::kType: a.type = ReadInt32(msg, "type"); break;
    case af::kF:
      a.attr.f = ReadFloat(msg, "f");
      a.has_f = true;
      break;
    case af::kI:
      a.attr.i = ReadInt64(msg, "i");
      a.has_i = true;
      break;
    case af::kS:
      a.attr.s = ReadString(msg, "s");
      a.has_s = true;
      break;
    case af::kT: {
      pbf_reader m = ReadMessage(msg, "t");
      a.t = WithContext([] { return std::string("t"); }, [&] { return ReadTensor(m, ctx, nullptr); });
      a.has_t = true;
      break;
    }
    case af::kG: {
      pbf_reader m = ReadMessage(msg, "g");
      a.g = ReadSubgraph(m, ctx, graph_depth + 1);
      a.has_g = true;
      break;
    }
    case af::kSparseTensor: {
      pbf_reader m = ReadMessage(msg, "sparse_tensor");
      a.sparse = WithContext([] { return std::string("sparse_tensor"); },
                             [&] { return ReadSparseTensor(m, ctx, nullptr); });
      a.has_sparse = true;
      break;
    }
    case af::kTp: {
      pbf_reader m = ReadMessage(msg, "tp");
      a.tp = WithContext([] { return std::string("tp"); }, [&] { return ReadType(m, 1); });
      a.has_tp = true;
      break;
    }
    case af::kFloats: AppendFloats(msg, "floats", &a.attr.floats); break;
    case af::kInts: AppendInt64s(msg, "ints", &a.attr.ints); break;
    case af::kStrings: a.attr.strings.push_back(ReadString(msg, "strings")); break;
    case af::kTensors: {
      pbf_reader m = ReadMessage(msg, "tensors");
      a.tensors.push_back(ReadNth("tensors", a.tensors.size(),
                                          [&] { return ReadTensor(m, ctx, nullptr); }));
      break;
    }
    case af::kSparseTensors: {
      pbf_reader m = ReadMessage(msg, "sparse_tensors");
      a.sparse_tensors.push_back(ReadNth(
          "sparse_tensors", a.sparse_tensors.size(), [&] { return ReadSparseTensor(m, ctx, nullptr); }));
      break;
    }
    case af::kGraphs: {
      pbf_reader m = ReadMessage(msg, "graphs");
      a.graphs.push_back(ReadSubgraph(m, ctx, graph_depth + 1));
      break;
    }
    case af::kTypeProtos: {
      pbf_reader m = ReadMessage(msg, "type_protos");
      a.type_protos.push_back(ReadNth("type_protos", a.type_protos.size(),
                                                       [&] { return ReadType(m, 1); }));
      break;
    }
    default: msg.skip();  // doc_string and unknown fields
  }
}

// The kind the `type` field names, or for models without one, the kind the value fields imply.
AttrKind ResolveKind(const AttributeFields& a) {
  if (a.type == 0) return InferKind(a);
  if (a.type < 0 || a.type > static_cast<int32_t>(AttrKind::kTypeProtos)) {
    ThrowInvalid("unknown attribute type " + std::to_string(a.type));
  }
  return static_cast<AttrKind>(a.type);
}

// Keeps only the field of the attribute's kind, so that equal attributes compare equal.
graph::Attribute KeepKindField(AttributeFields& a, AttrKind kind) {
  // A reference to an attribute of the calling function carries no value of its own.
  const bool is_ref = !a.attr.ref_attr_name.empty();
  auto require = [&](bool present, const char* field) {
    if (!present && !is_ref) {
      ThrowInvalid(std::string("attribute of type ") + graph::AttrKindName(kind) + " has no '" +
                   field + "' value");
    }
  };

  graph::Attribute out;
  out.name = std::move(a.attr.name);
  out.ref_attr_name = std::move(a.attr.ref_attr_name);
  out.kind = kind;
  switch (kind) {
    case AttrKind::kUndefined: ThrowInvalid("attribute type is UNDEFINED");
    case AttrKind::kFloat: out.f = a.attr.f; break;
    case AttrKind::kInt: out.i = a.attr.i; break;
    case AttrKind::kString: out.s = std::move(a.attr.s); break;
    case AttrKind::kTensor:
      require(a.has_t, "t");
      out.t = std::move(a.t);
      break;
    case AttrKind::kGraph:
      require(a.has_g, "g");
      out.g = std::move(a.g);
      break;
    case AttrKind::kSparseTensor:
      require(a.has_sparse, "sparse_tensor");
      out.t = std::move(a.sparse);  // densified
      break;
    case AttrKind::kTypeProto:
      require(a.has_tp, "tp");
      if (a.has_tp) out.types.push_back(std::move(a.tp));
      break;
    case AttrKind::kFloats: out.floats = std::move(a.attr.floats); break;
    case AttrKind::kInts: out.ints = std::move(a.attr.ints); break;
    case AttrKind::kStrings: out.strings = std::move(a.attr.strings); break;
    case AttrKind::kTensors: out.tensors = std::move(a.tensors); break;
    case AttrKind::kGraphs: out.graphs = std::move(a.graphs); break;
    case AttrKind::kSparseTensors: out.tensors = std::move(a.sparse_tensors); break;  // densified
    case AttrKind::kTypeProtos: out.types = std::move(a.type_protos); break;
  }
  return out;
}

}  // namespace

graph::Attribute ReadAttribute(pbf_reader msg, ParseContext& ctx, int graph_depth) {
  AttributeFields a;
  while (msg.next()) ReadAttributeField(msg, ctx, graph_depth, a);
  return KeepKindField(a, ResolveKind(a));
}

}  // namespace simplecpp::onnx::internal
