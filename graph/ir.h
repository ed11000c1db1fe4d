// The graph IR: what a model is once the ONNX importer has read it. Plain data, no protobuf types:
// only simplecpp/onnx knows what a NodeProto is. Subgraphs (If/Loop/Scan bodies) stay attached to
// their attributes so control-flow ops can run them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simplecpp/dtype.h"
#include "simplecpp/tensor.h"

namespace simplecpp::graph {

struct Graph;

// Numbered as AttributeProto.AttributeType.
enum class AttrKind : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};
const char* AttrKindName(AttrKind k);

// A type description from a TypeProto (ValueInfo or TYPE_PROTO attributes). Only tensor types
// carry dtype/shape; sequence/optional/map keep their element type in `elem`.
struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string param;   // symbolic name ("batch"), empty when unnamed
  bool known() const { return value >= 0; }
};

struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional, kMap, kSparseTensor };
  Kind kind = Kind::kUnknown;
  DType dtype = DType::kUndefined;  // tensor element type (or map key type)
  bool has_shape = false;           // false: rank unknown
  std::vector<Dim> dims;
  std::shared_ptr<TypeInfo> elem;   // sequence / optional / map value element
};

// The type of a value while a plan runs: a tensor, a sequence of tensors, or an optional of
// either (simplecpp::Value is the matching run-time value). `dtype` is the tensor / element dtype.
struct ValueType {
  DType dtype = DType::kUndefined;
  bool sequence = false;
  bool optional = false;

  static ValueType TensorOf(DType d) { return ValueType{d, false, false}; }
  static ValueType SequenceOf(DType d) { return ValueType{d, true, false}; }
  bool is_tensor() const { return !sequence && !optional; }
  // Without the optional wrapper (what OptionalGetElement returns).
  ValueType Element() const { return ValueType{dtype, sequence, false}; }
  ValueType AsOptional() const { return ValueType{dtype, sequence, true}; }
  bool operator==(const ValueType& o) const {
    return dtype == o.dtype && sequence == o.sequence && optional == o.optional;
  }
  bool operator!=(const ValueType& o) const { return !(*this == o); }
  // "float32", "seq(float32)", "opt(seq(float32))"
  std::string ToString() const;
};

// The ValueType of a declared type; throws Error(kUnsupported) for maps, sparse tensors and
// nestings other than optional(sequence(tensor)). An unknown kind reads as a tensor.
ValueType ValueTypeOf(const TypeInfo& type, const std::string& what);
// The TypeInfo describing a ValueType (no shape).
TypeInfo TypeInfoOf(const ValueType& type);

struct ValueInfo {
  std::string name;
  TypeInfo type;
  std::string doc;
};

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::kUndefined;
  std::string ref_attr_name;  // set inside function bodies
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<TypeInfo> types;  // kTypeProto (one element) / kTypeProtos
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;                // "" means ai.onnx
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::vector<Attribute> attributes;
  std::string doc;

  const Attribute* FindAttribute(const std::string& attr_name) const;
  // "node 'conv1' (Conv)" or "node #3 (Conv)" when unnamed; used to start error messages.
  std::string Describe() const;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
  // Initializers in file order. Names are unique (the importer checks).
  std::vector<std::pair<std::string, Tensor>> initializers;
  // Sparse initializers are densified by the importer and appear in `initializers`.
  std::string doc;

  const Tensor* FindInitializer(const std::string& value_name) const;
};

struct OpsetImport {
  std::string domain;  // "" for ai.onnx
  int64_t version = 0;
};

// A model-local function (FunctionProto); kept so that later versions can inline them.
struct Function {
  std::string name;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attribute_names;
  std::vector<Attribute> attribute_defaults;
  std::vector<Node> nodes;
  std::vector<OpsetImport> opsets;
};

struct Model {
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc;
  std::map<std::string, std::string> metadata;
  std::vector<Function> functions;
  Graph graph;

  // The opset version imported for a domain ("" and "ai.onnx" are the same); 0 when not imported.
  int64_t OpsetVersion(const std::string& op_domain) const;
};

// Appends to *out the names `g` (and the subgraphs of its nodes) reads without defining them:
// the outer-scope values a subgraph body uses.
void CollectFreeNames(const Graph& g, std::vector<std::string>* out);

// "" and "ai.onnx" are the default domain; everything else is returned unchanged.
std::string CanonicalDomain(const std::string& domain);

}  // namespace simplecpp::graph
