// Quantized-pattern fusion (see quant_fusion.h for the patterns and the exactness bounds): the
// pass driver.
//
// The pass is a pure function of the graph: it reads the graph once to find, for every value,
// its producer, its readers (including reads from nested subgraphs) and its constant value
// (PatternGraph, quant_fusion_internal.h), then matches each pattern from its integer / quantize
// node outwards (one file per pattern: quant_fusion_dynamic.cc, quant_fusion_qdq.cc,
// quant_fusion_qdq_around.cc, quant_fusion_qdq_binary.cc). A match claims its nodes; the rewrite copies the graph, drops the
// claimed nodes and puts the fused node where the pattern's last node was (Plan::Build orders
// nodes topologically anyway).
#include "graph/passes/quant_fusion.h"

#include <set>
#include <utility>
#include <vector>

#include "graph/passes/quant_fusion_internal.h"

namespace simplecpp::graph::passes {
namespace {

using quant_fusion::PatternGraph;
using quant_fusion::Rewrite;

// Every match in node order, each from its first node: MatchDynamic from a MatMulInteger /
// ConvInteger, MatchQdq, MatchQdqAround and then MatchQdqBinary from a QuantizeLinear. A match that overlaps an
// earlier one is skipped. The order fixes which of two overlapping matches wins and the fresh
// names the rewrites get.
std::vector<Rewrite> FindRewrites(PatternGraph* pg) {
  const Graph& g = pg->graph();
  std::vector<Rewrite> found;
  std::set<int> claimed;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!CanonicalDomain(n.domain).empty()) continue;
    Rewrite rw;
    bool ok = false;
    if (n.op_type == "MatMulInteger" || n.op_type == "ConvInteger") {
      ok = quant_fusion::MatchDynamic(pg, static_cast<int>(i), &rw);
    } else if (n.op_type == "QuantizeLinear") {
      ok = quant_fusion::MatchQdq(pg, static_cast<int>(i), &rw) ||
           quant_fusion::MatchQdqAround(*pg, static_cast<int>(i), &rw) ||
           quant_fusion::MatchQdqBinary(*pg, static_cast<int>(i), &rw);
    }
    if (!ok) continue;
    bool overlap = false;
    for (int c : rw.nodes) overlap = overlap || claimed.count(c) > 0;
    if (overlap) continue;
    claimed.insert(rw.nodes.begin(), rw.nodes.end());
    found.push_back(std::move(rw));
  }
  return found;
}

}  // namespace

bool FuseQuantized(const Graph& graph, const std::map<std::string, int64_t>& opsets, Graph* out,
                   std::map<std::string, int64_t>* out_opsets, QuantFusionStats* stats) {
  // The patterns need the default domain's quantization ops (opset >= 10).
  auto ai = opsets.find("");
  if (ai == opsets.end() || ai->second < 10) return false;
  PatternGraph pattern_graph(graph, ai->second);
  std::vector<Rewrite> rewrites = FindRewrites(&pattern_graph);
  if (rewrites.empty()) return false;

  std::map<int, const Node*> at_anchor;
  std::set<int> removed, maybe_dead;
  bool microsoft = false, fused = false;
  QuantFusionStats s;
  for (const Rewrite& rw : rewrites) {
    at_anchor[rw.anchor] = &rw.fused;
    removed.insert(rw.nodes.begin(), rw.nodes.end());
    maybe_dead.insert(rw.maybe_dead.begin(), rw.maybe_dead.end());
    microsoft = microsoft || rw.fused.domain == "com.microsoft";
    fused = fused || rw.fused.domain == kFusedDomain;
    if (rw.kind == 1) ++s.dynamic_matmul;
    if (rw.kind == 2) ++s.dynamic_conv;
    if (rw.kind == 3) ++s.qdq_matmul;
    if (rw.kind == 4) ++s.qdq_conv;
    if (rw.kind == 5) ++s.qdq_data_op;
    if (rw.kind == 6) ++s.qdq_global_average;
    if (rw.kind == 7) ++s.qdq_binary;
  }
  Graph g;
  g.name = graph.name;
  g.inputs = graph.inputs;
  g.outputs = graph.outputs;
  g.value_info = graph.value_info;
  g.initializers = graph.initializers;
  g.doc = graph.doc;
  g.nodes.reserve(graph.nodes.size());
  std::vector<int> origin;  // index in graph.nodes, -1 for a fused node
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    auto a = at_anchor.find(static_cast<int>(i));
    if (a != at_anchor.end()) {
      g.nodes.push_back(*a->second);
      origin.push_back(-1);
    } else if (!removed.count(static_cast<int>(i))) {
      g.nodes.push_back(graph.nodes[i]);
      origin.push_back(static_cast<int>(i));
    }
  }
  // Drop the (Dynamic)DequantizeLinear nodes nothing reads any more (reads in subgraphs count).
  std::set<std::string> read;
  {
    std::vector<std::string> names;
    // g's own nodes, their subgraphs and g's outputs
    quant_fusion::CollectSubgraphReads(g, &names);
    read.insert(names.begin(), names.end());
  }
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (origin[i] >= 0 && maybe_dead.count(origin[i])) {
      bool used = false;
      for (const std::string& o : g.nodes[i].outputs) used = used || (!o.empty() && read.count(o));
      if (!used) continue;
    }
    kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  for (const Rewrite& rw : rewrites) {
    for (const auto& init : rw.initializers) g.initializers.push_back(init);
  }
  *out = std::move(g);
  *out_opsets = opsets;
  if (microsoft && !out_opsets->count("com.microsoft")) (*out_opsets)["com.microsoft"] = 1;
  if (fused && !out_opsets->count(kFusedDomain)) (*out_opsets)[kFusedDomain] = 1;
  if (stats != nullptr) *stats = s;
  return true;
}

}  // namespace simplecpp::graph::passes
