// `simplecpp info MODEL`: what a model file contains and what of it this build can run. Reads the
// file with the ONNX importer (not Model::Load), so it reports on models that fail to load too:
// per node, the op registry says whether the op/version is implemented and why not; a final
// Model::Load attempt reports dtype- and graph-level problems. Never crashes on a bad model; exits
// 1 when the model does not load (after the report), so scripts can test a model with it.
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "graph/registry.h"
#include "simplecpp/cli/cli_util.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::cli {
namespace {

std::string DomainName(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

std::string TypeToString(const graph::TypeInfo& t) {
  using Kind = graph::TypeInfo::Kind;
  auto elem = [&]() { return t.elem ? TypeToString(*t.elem) : std::string("?"); };
  switch (t.kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      std::string s = (t.kind == Kind::kSparseTensor ? "sparse " : "") + DTypeName(t.dtype);
      if (!t.has_shape) return s + " (rank unknown)";
      s += " [";
      for (size_t i = 0; i < t.dims.size(); ++i) {
        if (i) s += ",";
        const graph::Dim& d = t.dims[i];
        s += d.known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
      }
      return s + "]";
    }
    case Kind::kSequence: return "sequence(" + elem() + ")";
    case Kind::kOptional: return "optional(" + elem() + ")";
    case Kind::kMap: return "map(" + DTypeName(t.dtype) + ", " + elem() + ")";
    case Kind::kUnknown: break;
  }
  return "(type unknown)";
}

struct Counts {
  std::map<std::string, int> histogram;  // "domain:Op" or "Op" -> nodes
  int nodes = 0;
  int unsupported = 0;
};

const graph::Function* FindFunction(const graph::Model& model, const graph::Node& node) {
  for (const graph::Function& f : model.functions) {
    if (f.name == node.op_type && graph::CanonicalDomain(f.domain) == graph::CanonicalDomain(node.domain)) {
      return &f;
    }
  }
  return nullptr;
}

// Prints one line per node of `g` (and, indented, of its subgraphs).
void ReportNodes(const graph::Model& model, const graph::Graph& g, int depth, Counts* counts) {
  const graph::OpRegistry& registry = graph::OpRegistry::Global();
  const std::string indent(2 + 2 * depth, ' ');
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    const std::string domain = graph::CanonicalDomain(n.domain);
    const std::string op = domain.empty() ? n.op_type : domain + ":" + n.op_type;
    counts->histogram[op]++;
    counts->nodes++;
    const int64_t opset = model.OpsetVersion(domain);
    int since = 0;
    std::string status;
    if (registry.Find(domain, n.op_type, opset, &since) != nullptr) {
      status = "ok (" + DomainName(domain) + " opset " + std::to_string(opset) + " -> version " +
               std::to_string(since) + ")";
    } else {
      counts->unsupported++;
      if (FindFunction(model, n) != nullptr) {
        status = "model-local function: " + registry.WhyMissing(domain, n.op_type, opset);
      } else {
        status = "NOT SUPPORTED: " + registry.WhyMissing(domain, n.op_type, opset);
      }
    }
    std::printf("%s#%-4zu %-28s %-24s %s\n", indent.c_str(), i,
                n.name.empty() ? "-" : n.name.c_str(), op.c_str(), status.c_str());
    for (const graph::Attribute& attr : n.attributes) {
      if (attr.g) {
        std::printf("%s  subgraph '%s' (attribute %s): %zu nodes\n", indent.c_str(),
                    attr.g->name.c_str(), attr.name.c_str(), attr.g->nodes.size());
        ReportNodes(model, *attr.g, depth + 2, counts);
      }
      for (size_t j = 0; j < attr.graphs.size(); ++j) {
        if (!attr.graphs[j]) continue;
        std::printf("%s  subgraph %zu of attribute %s: %zu nodes\n", indent.c_str(), j,
                    attr.name.c_str(), attr.graphs[j]->nodes.size());
        ReportNodes(model, *attr.graphs[j], depth + 2, counts);
      }
    }
  }
}

}  // namespace

int InfoCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args, {}, {});
  if (a.positional.size() != 1) throw UsageError("info needs one MODEL");
  const std::string path = a.positional[0];

  graph::Model model;
  try {
    model = onnx::ReadModelFile(path);
  } catch (const std::exception& e) {
    std::printf("model: %s\ncannot read the model: %s\n", path.c_str(), e.what());
    return 1;
  }

  std::printf("model: %s\n", path.c_str());
  std::printf("ir_version: %lld\n", static_cast<long long>(model.ir_version));
  std::printf("opsets:");
  for (const graph::OpsetImport& o : model.opsets) {
    std::printf(" %s %lld;", DomainName(graph::CanonicalDomain(o.domain)).c_str(),
                static_cast<long long>(o.version));
  }
  std::printf("\nproducer: %s %s\n", model.producer_name.empty() ? "(none)" : model.producer_name.c_str(),
              model.producer_version.c_str());
  if (!model.domain.empty()) std::printf("domain: %s\n", model.domain.c_str());
  if (model.model_version) std::printf("model_version: %lld\n", static_cast<long long>(model.model_version));
  for (const auto& [k, v] : model.metadata) std::printf("metadata: %s = %s\n", k.c_str(), v.c_str());

  const graph::Graph& g = model.graph;
  size_t initializer_bytes = 0;
  for (const auto& [name, t] : g.initializers) initializer_bytes += t.byte_size();
  std::printf("graph '%s': %zu nodes, %zu initializers (%zu bytes), %zu model-local functions\n",
              g.name.c_str(), g.nodes.size(), g.initializers.size(), initializer_bytes,
              model.functions.size());

  std::printf("inputs:\n");
  for (const graph::ValueInfo& v : g.inputs) {
    const bool is_initializer = g.FindInitializer(v.name) != nullptr;
    std::printf("  %-24s %s%s\n", v.name.c_str(), TypeToString(v.type).c_str(),
                is_initializer ? " (initializer)" : "");
  }
  std::printf("outputs:\n");
  for (const graph::ValueInfo& v : g.outputs) {
    std::printf("  %-24s %s\n", v.name.c_str(), TypeToString(v.type).c_str());
  }

  std::printf("nodes:\n");
  Counts counts;
  ReportNodes(model, g, 0, &counts);

  std::printf("op histogram (%d nodes, subgraphs included):\n", counts.nodes);
  for (const auto& [op, n] : counts.histogram) std::printf("  %-32s %d\n", op.c_str(), n);
  std::printf("nodes without an implementation: %d\n", counts.unsupported);

  // The whole-model check: dtypes, graph structure, limits.
  try {
    Model::Load(path);
    std::printf("load: ok\n");
  } catch (const Error& e) {
    const char* kind = e.code() == ErrorCode::kUnsupported ? "unsupported" : "failed";
    std::printf("load: %s: %s\n", kind, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::printf("load: failed: %s\n", e.what());
    return 1;
  }
  return 0;
}

int OpsCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args, {}, {});
  if (!a.positional.empty()) throw UsageError("ops takes no arguments");
  const auto ops = graph::OpRegistry::Global().List();
  for (const auto& [domain, op_type, versions] : ops) {
    std::string v;
    for (int version : versions) v += (v.empty() ? "" : ", ") + std::to_string(version);
    std::printf("%-10s %-32s versions %s\n", DomainName(domain).c_str(), op_type.c_str(), v.c_str());
  }
  std::printf("%zu ops\n", ops.size());
  return 0;
}

}  // namespace simplecpp::cli
