// Internal to simplecpp/onnx: the pieces the ModelProto and TensorProto readers share. protozero
// decodes the wire format; these helpers add what it leaves to the caller: wire-type checks
// (protozero only asserts them), repeated scalars in packed and unpacked form, error context
// ("graph 'main': node 'conv1' (Conv): attribute 'value': ..."), and the per-parse state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <protozero/pbf_reader.hpp>

#include "graph/ir.h"
#include "simplecpp/error.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/tensor.h"

// raw_data, .npy data and our tensors are all little-endian: bytes are copied, never swapped.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "simplecpp's ONNX reader and writer assume a little-endian host"
#endif

namespace simplecpp::io {
class MappedFile;
}

namespace simplecpp::onnx::internal {

using protozero::pbf_reader;
using protozero::pbf_wire_type;

// Raw tensors of at least this many bytes borrow from the model buffer when they are aligned;
// smaller ones are copied (a few bytes are not worth keeping a whole mapping reachable for).
constexpr size_t kMinBorrowBytes = 256;
// TypeProto nesting (sequence of optional of map of ...) deeper than this is refused.
constexpr int kMaxTypeDepth = 32;

// State of one ReadModel / ParseTensorProto call.
struct ParseContext {
  ReadOptions options;
  // Keeps the input bytes alive; null: never borrow, always copy.
  std::shared_ptr<const void> owner;
  int64_t num_nodes = 0;
  // External-data files opened so far, by resolved path.
  std::map<std::string, std::shared_ptr<const io::MappedFile>> external_files;
};

// --- field access with wire-type checks. `what` names the field in error messages. ---
[[noreturn]] void ThrowInvalid(const std::string& message);
void ExpectWireType(const pbf_reader& r, pbf_wire_type want, const char* what);
std::string ReadString(pbf_reader& r, const char* what);
protozero::data_view ReadBytesView(pbf_reader& r, const char* what);
pbf_reader ReadMessage(pbf_reader& r, const char* what);
int64_t ReadInt64(pbf_reader& r, const char* what);
int32_t ReadInt32(pbf_reader& r, const char* what);
float ReadFloat(pbf_reader& r, const char* what);
// Repeated scalars: accept both the packed (length-delimited) and the unpacked form, and append.
void AppendInt64s(pbf_reader& r, const char* what, std::vector<int64_t>* out);
void AppendInt32s(pbf_reader& r, const char* what, std::vector<int32_t>* out);
void AppendUInt64s(pbf_reader& r, const char* what, std::vector<uint64_t>* out);
void AppendFloats(pbf_reader& r, const char* what, std::vector<float>* out);
void AppendDoubles(pbf_reader& r, const char* what, std::vector<double>* out);

// Best effort, for error messages: the last string field `tag` of a message ("" when absent or
// unreadable). Names often follow the fields that failed, so they are looked up only on error.
std::string PeekStringField(pbf_reader msg, uint32_t tag);
// StringStringEntryProto -> (key, value).
std::pair<std::string, std::string> ReadStringEntry(pbf_reader msg);

// Call inside a catch block: rethrows the active exception as simplecpp::Error with
// `context + ": "` in front (protozero errors become kInvalidModel, bad_alloc kLimitExceeded).
[[noreturn]] void RethrowWithContext(const std::string& context);

// Runs body(); on error rethrows with context() (a callable returning std::string) prepended.
// The context string is only built when something failed.
template <typename ContextFn, typename Body>
auto WithContext(ContextFn&& context, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    RethrowWithContext(context());
  }
}

// --- message readers (tensor_reader.cc, type_reader.cc, attribute_reader.cc, model_reader.cc) ---
// TensorProto -> Tensor. `name` (optional) receives TensorProto.name.
Tensor ReadTensor(pbf_reader msg, ParseContext& ctx, std::string* name);
// SparseTensorProto -> dense Tensor; `name` receives values.name.
Tensor ReadSparseTensor(pbf_reader msg, ParseContext& ctx, std::string* name);
// Best-effort name of a TensorProto / SparseTensorProto for error messages ("" when none).
std::string PeekTensorName(pbf_reader msg, bool sparse);

// Copies element `from` of src into element `to` of dst (same dtype; sub-byte and string too).
void CopyTensorElement(const Tensor& src, int64_t from, Tensor* dst, int64_t to);

graph::TypeInfo ReadType(pbf_reader msg, int depth);
graph::ValueInfo ReadValueInfo(pbf_reader msg);
// Reads a TensorProto.DataType number, refusing unknown ones (0 allowed when allow_undefined).
DType ReadDataType(int32_t number, bool allow_undefined, const char* what);

graph::Attribute ReadAttribute(pbf_reader msg, ParseContext& ctx, int graph_depth);
// GraphProto -> Graph; depth is 1 for the main graph.
std::shared_ptr<graph::Graph> ReadSubgraph(pbf_reader msg, ParseContext& ctx, int depth);
void ReadGraphInto(pbf_reader msg, ParseContext& ctx, int depth, graph::Graph* graph);
graph::Node ReadNode(pbf_reader msg, ParseContext& ctx, int graph_depth);
// Best-effort "node 'name' (Op)" for error messages.
std::string DescribeNodeProto(pbf_reader msg, size_t index);

}  // namespace simplecpp::onnx::internal
