// libFuzzer target: ONNX ModelProto bytes -> the ONNX importer, the per-node registry report that
// `simplecpp info` prints, then Model::LoadFromBytes (plan build: type inference, folding, static
// shapes) and the input/output descriptions. Every simplecpp::Error is an accepted outcome; any
// other exception, crash, leak or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/registry.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/simplecpp.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace simplecpp;

size_t TypeChars(const graph::TypeInfo& t, int depth) {
  size_t n = DTypeName(t.dtype).size() + t.dims.size();
  for (const graph::Dim& d : t.dims) n += d.param.size() + (d.known() ? 1 : 0);
  if (t.elem && depth < 64) n += TypeChars(*t.elem, depth + 1);
  return n;
}

// The node walk of `simplecpp info`: registry lookup (and the reason when missing) for every node,
// subgraphs included.
size_t ReportNodes(const graph::Model& model, const graph::Graph& g) {
  const graph::OpRegistry& registry = graph::OpRegistry::Global();
  size_t n = 0;
  for (const graph::Node& node : g.nodes) {
    const std::string domain = graph::CanonicalDomain(node.domain);
    const int64_t opset = model.OpsetVersion(domain);
    int since = 0;
    if (registry.Find(domain, node.op_type, opset, &since) == nullptr) {
      n += registry.WhyMissing(domain, node.op_type, opset).size();
    }
    n += node.Describe().size();
    for (const graph::Attribute& a : node.attributes) {
      if (a.g) n += ReportNodes(model, *a.g);
      for (const auto& sub : a.graphs) {
        if (sub) n += ReportNodes(model, *sub);
      }
    }
  }
  return n;
}

void Info(const uint8_t* data, size_t size) {
  onnx::ReadOptions r;
  const Limits limits = fuzz::SmallLimits();
  r.max_model_bytes = limits.max_model_bytes;
  r.max_tensor_bytes = limits.max_tensor_bytes;
  r.max_nodes = limits.max_nodes;
  r.max_graph_depth = limits.max_graph_depth;
  graph::Model model = onnx::ReadModel(data, size, r, nullptr);
  size_t n = 0;
  for (const graph::ValueInfo& v : model.graph.inputs) n += TypeChars(v.type, 0);
  for (const graph::ValueInfo& v : model.graph.outputs) n += TypeChars(v.type, 0);
  for (const auto& [name, t] : model.graph.initializers) n += t.byte_size();
  n += ReportNodes(model, model.graph);
  volatile size_t sink = n;
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    Info(data, size);
  } catch (const simplecpp::Error&) {
  }
  try {
    const simplecpp::Model model =
        simplecpp::Model::LoadFromBytes(data, size, simplecpp::fuzz::SmallLoadOptions());
    simplecpp::fuzz::DescribeLoadedModel(model);
  } catch (const simplecpp::Error&) {
  }
  return 0;
}
