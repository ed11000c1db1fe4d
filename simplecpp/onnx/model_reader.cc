// ModelProto bytes -> graph::Model (simplecpp/onnx/model_reader.h): the model, its graphs (main
// and nested), nodes and model-local functions. Tensors, types and attributes are read by the
// other *_reader.cc files of this folder. Errors say where they happened:
//   "graph 'main': node 'conv1' (Conv): attribute 'value': t: raw_data has 10 bytes, expected 12".
#include "simplecpp/onnx/model_reader.h"

#include <unordered_set>
#include <utility>

#include <protozero/exception.hpp>

#include "simplecpp/io/mapped_file.h"
#include "simplecpp/onnx/proto_fields.h"
#include "simplecpp/onnx/proto_reader.h"

namespace simplecpp::onnx {
namespace internal {
namespace {

graph::OpsetImport ReadOpset(pbf_reader msg) {
  graph::OpsetImport o;
  while (msg.next()) {
    switch (msg.tag()) {
      case fields::opset::kDomain: o.domain = ReadString(msg, "domain"); break;
      case fields::opset::kVersion: o.version = ReadInt64(msg, "version"); break;
      default: msg.skip();
    }
  }
  return o;
}

std::string DescribeGraphProto(const pbf_reader& msg) {
  return "graph '" + PeekStringField(msg, fields::graph::kName) + "'";
}

void CheckDepth(int depth, const ParseContext& ctx) {
  if (depth > ctx.options.max_graph_depth) {
    throw Error(ErrorCode::kLimitExceeded, "subgraphs nested " + std::to_string(depth) +
                                               " levels deep, over the limit max_graph_depth=" +
                                               std::to_string(ctx.options.max_graph_depth));
  }
}

// Reads a NodeProto with "node '...' (Op)" in front of any error.
graph::Node ReadNodeWithContext(pbf_reader m, size_t index, ParseContext& ctx, int depth) {
  return WithContext([&] { return DescribeNodeProto(m, index); },
                     [&] { return ReadNode(m, ctx, depth); });
}

graph::Attribute ReadAttributeWithContext(pbf_reader m, ParseContext& ctx, int depth) {
  return WithContext(
      [&] { return "attribute '" + PeekStringField(m, fields::attribute::kName) + "'"; },
      [&] { return ReadAttribute(m, ctx, depth); });
}

graph::Function ReadFunction(pbf_reader msg, ParseContext& ctx) {
  namespace ff = fields::function;
  graph::Function fn;
  while (msg.next()) {
    switch (msg.tag()) {
      case ff::kName: fn.name = ReadString(msg, "name"); break;
      case ff::kDomain: fn.domain = ReadString(msg, "domain"); break;
      case ff::kInput: fn.inputs.push_back(ReadString(msg, "input")); break;
      case ff::kOutput: fn.outputs.push_back(ReadString(msg, "output")); break;
      case ff::kAttribute: fn.attribute_names.push_back(ReadString(msg, "attribute")); break;
      case ff::kAttributeProto:
        fn.attribute_defaults.push_back(
            ReadAttributeWithContext(ReadMessage(msg, "attribute_proto"), ctx, 1));
        break;
      case ff::kNode:
        fn.nodes.push_back(ReadNodeWithContext(ReadMessage(msg, "node"), fn.nodes.size(), ctx, 1));
        break;
      case ff::kOpsetImport: fn.opsets.push_back(ReadOpset(ReadMessage(msg, "opset_import"))); break;
      default: msg.skip();
    }
  }
  return fn;
}

}  // namespace

std::string DescribeNodeProto(pbf_reader msg, size_t index) {
  const std::string name = PeekStringField(msg, fields::node::kName);
  const std::string op = PeekStringField(msg, fields::node::kOpType);
  const std::string domain = PeekStringField(msg, fields::node::kDomain);
  const std::string full_op = domain.empty() || domain == "ai.onnx" ? op : domain + ":" + op;
  if (!name.empty()) return "node '" + name + "' (" + full_op + ")";
  return "node #" + std::to_string(index) + " (" + full_op + ")";
}

graph::Node ReadNode(pbf_reader msg, ParseContext& ctx, int graph_depth) {
  if (++ctx.num_nodes > ctx.options.max_nodes) {
    throw Error(ErrorCode::kLimitExceeded,
                "the model has more than " + std::to_string(ctx.options.max_nodes) +
                    " nodes (subgraphs included), over the limit max_nodes=" +
                    std::to_string(ctx.options.max_nodes));
  }
  namespace nf = fields::node;
  graph::Node node;
  while (msg.next()) {
    switch (msg.tag()) {
      case nf::kInput: node.inputs.push_back(ReadString(msg, "input")); break;
      case nf::kOutput: node.outputs.push_back(ReadString(msg, "output")); break;
      case nf::kName: node.name = ReadString(msg, "name"); break;
      case nf::kOpType: node.op_type = ReadString(msg, "op_type"); break;
      case nf::kDomain: node.domain = ReadString(msg, "domain"); break;
      case nf::kDocString: node.doc = ReadString(msg, "doc_string"); break;
      case nf::kAttribute:
        node.attributes.push_back(
            ReadAttributeWithContext(ReadMessage(msg, "attribute"), ctx, graph_depth));
        break;
      default: msg.skip();
    }
  }
  if (node.op_type.empty()) ThrowInvalid("node has no op_type");
  return node;
}

void ReadGraphInto(pbf_reader msg, ParseContext& ctx, int depth, graph::Graph* g) {
  CheckDepth(depth, ctx);
  namespace gf = fields::graph;
  std::unordered_set<std::string> names;
  auto add_initializer = [&](std::string name, Tensor t) {
    if (name.empty()) ThrowInvalid("initializer without a name");
    if (!names.insert(name).second) ThrowInvalid("duplicate initializer '" + name + "'");
    g->initializers.emplace_back(std::move(name), std::move(t));
  };
  while (msg.next()) {
    switch (msg.tag()) {
      case gf::kNode:
        g->nodes.push_back(ReadNodeWithContext(ReadMessage(msg, "node"), g->nodes.size(), ctx, depth));
        break;
      case gf::kName: g->name = ReadString(msg, "name"); break;
      case gf::kDocString: g->doc = ReadString(msg, "doc_string"); break;
      case gf::kInitializer: {
        pbf_reader m = ReadMessage(msg, "initializer");
        std::string name;
        Tensor t = WithContext([&] { return "initializer '" + PeekTensorName(m, false) + "'"; },
                               [&] { return ReadTensor(m, ctx, &name); });
        add_initializer(std::move(name), std::move(t));
        break;
      }
      case gf::kSparseInitializer: {
        pbf_reader m = ReadMessage(msg, "sparse_initializer");
        std::string name;
        Tensor t = WithContext([&] { return "sparse_initializer '" + PeekTensorName(m, true) + "'"; },
                               [&] { return ReadSparseTensor(m, ctx, &name); });
        add_initializer(std::move(name), std::move(t));
        break;
      }
      case gf::kInput: g->inputs.push_back(ReadValueInfo(ReadMessage(msg, "input"))); break;
      case gf::kOutput: g->outputs.push_back(ReadValueInfo(ReadMessage(msg, "output"))); break;
      case gf::kValueInfo:
        g->value_info.push_back(ReadValueInfo(ReadMessage(msg, "value_info")));
        break;
      default: msg.skip();
    }
  }
}

std::shared_ptr<graph::Graph> ReadSubgraph(pbf_reader msg, ParseContext& ctx, int depth) {
  auto g = std::make_shared<graph::Graph>();
  WithContext([&] { return DescribeGraphProto(msg); },
              [&] { ReadGraphInto(msg, ctx, depth, g.get()); });
  return g;
}

}  // namespace internal

graph::Model ReadModel(const void* data, size_t size, const ReadOptions& options,
                       std::shared_ptr<const void> owner) {
  using namespace internal;
  namespace mf = fields::model;
  if (size > static_cast<uint64_t>(options.max_model_bytes)) {
    throw Error(ErrorCode::kLimitExceeded, "model has " + std::to_string(size) +
                                               " bytes, over the limit max_model_bytes=" +
                                               std::to_string(options.max_model_bytes));
  }
  ParseContext ctx;
  ctx.options = options;
  ctx.owner = std::move(owner);
  graph::Model model;
  bool has_graph = false, has_ir_version = false;
  try {
    pbf_reader msg(static_cast<const char*>(data), size);
    while (msg.next()) {
      switch (msg.tag()) {
        case mf::kIrVersion:
          model.ir_version = ReadInt64(msg, "ir_version");
          has_ir_version = true;
          break;
        case mf::kOpsetImport:
          model.opsets.push_back(ReadOpset(ReadMessage(msg, "opset_import")));
          break;
        case mf::kProducerName: model.producer_name = ReadString(msg, "producer_name"); break;
        case mf::kProducerVersion:
          model.producer_version = ReadString(msg, "producer_version");
          break;
        case mf::kDomain: model.domain = ReadString(msg, "domain"); break;
        case mf::kModelVersion: model.model_version = ReadInt64(msg, "model_version"); break;
        case mf::kDocString: model.doc = ReadString(msg, "doc_string"); break;
        case mf::kGraph: {
          pbf_reader m = ReadMessage(msg, "graph");
          model.graph = graph::Graph();  // a repeated singular field: the last one wins
          WithContext([&] { return DescribeGraphProto(m); },
                      [&] { ReadGraphInto(m, ctx, 0, &model.graph); });
          has_graph = true;
          break;
        }
        case mf::kMetadataProps: {
          auto kv = ReadStringEntry(ReadMessage(msg, "metadata_props"));
          model.metadata[kv.first] = std::move(kv.second);
          break;
        }
        case mf::kFunctions: {
          pbf_reader m = ReadMessage(msg, "functions");
          model.functions.push_back(WithContext(
              [&] { return "function '" + PeekStringField(m, fields::function::kName) + "'"; },
              [&] { return ReadFunction(m, ctx); }));
          break;
        }
        default: msg.skip();  // training_info, configuration, unknown fields
      }
    }
  } catch (const protozero::exception& e) {
    throw Error(ErrorCode::kInvalidModel, std::string("model: malformed protobuf (") + e.what() + ")");
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kLimitExceeded, "model: out of memory");
  }
  if (!has_ir_version) ThrowInvalid("model has no ir_version");
  if (model.ir_version >= 3 && model.opsets.empty()) ThrowInvalid("model has no opset_import");
  if (!has_graph) ThrowInvalid("model has no graph");
  return model;
}

graph::Model ReadModelFile(const std::string& path, ReadOptions options) {
  return ReadModelFile(path, std::move(options), nullptr);
}

graph::Model ReadModelFile(const std::string& path, ReadOptions options,
                           std::shared_ptr<const io::MappedFile>* file_out) {
  std::shared_ptr<const io::MappedFile> file = io::MappedFile::Open(path, options.max_model_bytes);
  if (file_out != nullptr) *file_out = file;
  if (options.external_data_dir.empty()) {
    const size_t slash = path.find_last_of('/');
    options.external_data_dir =
        slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : path.substr(0, slash);
  }
  // Tensors that borrow from the mapping keep it alive through this aliasing pointer.
  std::shared_ptr<const void> owner(file, file->data());
  options.mapping = file.get();
  return internal::WithContext([&] { return path; },
                               [&] { return ReadModel(file->data(), file->size(), options, owner); });
}

}  // namespace simplecpp::onnx
