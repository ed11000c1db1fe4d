// Small helpers of the IR (graph/ir.h).
#include "graph/ir.h"

#include <set>

#include "simplecpp/error.h"

namespace simplecpp::graph {

const char* AttrKindName(AttrKind k) {
  switch (k) {
    case AttrKind::kUndefined: return "UNDEFINED";
    case AttrKind::kFloat: return "FLOAT";
    case AttrKind::kInt: return "INT";
    case AttrKind::kString: return "STRING";
    case AttrKind::kTensor: return "TENSOR";
    case AttrKind::kGraph: return "GRAPH";
    case AttrKind::kFloats: return "FLOATS";
    case AttrKind::kInts: return "INTS";
    case AttrKind::kStrings: return "STRINGS";
    case AttrKind::kTensors: return "TENSORS";
    case AttrKind::kGraphs: return "GRAPHS";
    case AttrKind::kSparseTensor: return "SPARSE_TENSOR";
    case AttrKind::kSparseTensors: return "SPARSE_TENSORS";
    case AttrKind::kTypeProto: return "TYPE_PROTO";
    case AttrKind::kTypeProtos: return "TYPE_PROTOS";
  }
  return "UNKNOWN";
}

const Attribute* Node::FindAttribute(const std::string& attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

std::string Node::Describe() const {
  std::string op = domain.empty() || domain == "ai.onnx" ? op_type : domain + ":" + op_type;
  if (!name.empty()) return "node '" + name + "' (" + op + ")";
  if (!outputs.empty() && !outputs[0].empty()) return "node producing '" + outputs[0] + "' (" + op + ")";
  return "unnamed node (" + op + ")";
}

const Tensor* Graph::FindInitializer(const std::string& value_name) const {
  for (const auto& [n, t] : initializers) {
    if (n == value_name) return &t;
  }
  return nullptr;
}

std::string ValueType::ToString() const {
  std::string s = DTypeName(dtype);
  if (sequence) s = "seq(" + s + ")";
  if (optional) s = "opt(" + s + ")";
  return s;
}

ValueType ValueTypeOf(const TypeInfo& type, const std::string& what) {
  using Kind = TypeInfo::Kind;
  auto unsupported = [&]() -> ValueType {
    throw Error(ErrorCode::kUnsupported,
                what + " has a type this library does not run (maps, sparse tensors and sequences "
                       "of sequences are not supported)");
  };
  switch (type.kind) {
    case Kind::kUnknown:
    case Kind::kTensor: return ValueType::TensorOf(type.dtype);
    case Kind::kSequence:
      if (!type.elem || (type.elem->kind != Kind::kTensor && type.elem->kind != Kind::kUnknown)) {
        return unsupported();
      }
      return ValueType::SequenceOf(type.elem->dtype);
    case Kind::kOptional: {
      if (!type.elem) return unsupported();
      const ValueType inner = ValueTypeOf(*type.elem, what);
      if (inner.optional) return unsupported();
      return inner.AsOptional();
    }
    default: return unsupported();
  }
}

TypeInfo TypeInfoOf(const ValueType& type) {
  TypeInfo t;
  t.kind = TypeInfo::Kind::kTensor;
  t.dtype = type.dtype;
  if (type.sequence) {
    TypeInfo seq;
    seq.kind = TypeInfo::Kind::kSequence;
    seq.elem = std::make_shared<TypeInfo>(t);
    t = seq;
  }
  if (type.optional) {
    TypeInfo opt;
    opt.kind = TypeInfo::Kind::kOptional;
    opt.elem = std::make_shared<TypeInfo>(t);
    t = opt;
  }
  return t;
}

std::string CanonicalDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

int64_t Model::OpsetVersion(const std::string& op_domain) const {
  const std::string d = CanonicalDomain(op_domain);
  for (const OpsetImport& o : opsets) {
    if (CanonicalDomain(o.domain) == d) return o.version;
  }
  return 0;
}

void CollectFreeNames(const Graph& g, std::vector<std::string>* out) {
  std::set<std::string> defined;
  for (const ValueInfo& v : g.inputs) defined.insert(v.name);
  for (const auto& [name, t] : g.initializers) defined.insert(name);
  for (const Node& n : g.nodes) {
    for (const std::string& o : n.outputs) defined.insert(o);
  }
  for (const Node& n : g.nodes) {
    for (const std::string& i : n.inputs) {
      if (!i.empty() && !defined.count(i)) out->push_back(i);
    }
    for (const Attribute& a : n.attributes) {
      std::vector<std::string> inner;
      if (a.kind == AttrKind::kGraph && a.g) CollectFreeNames(*a.g, &inner);
      for (const auto& sub : a.graphs) {
        if (sub) CollectFreeNames(*sub, &inner);
      }
      for (const std::string& i : inner) {
        if (!defined.count(i)) out->push_back(i);
      }
    }
  }
}

}  // namespace simplecpp::graph
