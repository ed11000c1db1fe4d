// The pages a blocked-weight repack may give back (graph/passes/blocked_dequant_fusion.h,
// `repacked`): W and its scales are reported a range of block rows at a time, in order, while
// the repack runs, every range inside them, together covering both, then W once whole; so that
// a mapped weight's pages can go before its copy is complete.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph_builder_util.h"
#include "graph/passes/blocked_dequant_fusion.h"

namespace simplecpp::graph {
namespace {

using test_graph::In;
using test_graph::IntAttr;
using test_graph::N;
using test_graph::Out;

TEST_CASE("a blocked weight's bytes are handed back a range of rows at a time while repacked") {
  // 4096 x 1024 int4 (2 MiB) and 8-bit (4 MiB) weights: several ranges each.
  for (const DType dtype : {DType::kInt4, DType::kUInt8}) {
    CAPTURE(DTypeName(dtype));
    const int64_t k = 4096, n = 1024, block = 32;
    Graph g;
    g.inputs.push_back(In("a", DType::kFloat32, {1, k}));
    Tensor w(dtype, {k, n});
    std::mt19937 rng(3);
    auto* wb = static_cast<uint8_t*>(w.raw_data());
    for (size_t i = 0; i < w.byte_size(); ++i) wb[i] = static_cast<uint8_t>(rng());
    Tensor scale(DType::kFloat32, {k / block, n});
    for (int64_t i = 0; i < scale.num_elements(); ++i) scale.data<float>()[i] = 0.01f;
    g.initializers.emplace_back("w", w);
    g.initializers.emplace_back("scale", scale);
    g.nodes.push_back(N("DequantizeLinear", {"w", "scale"}, {"wf"},
                        {IntAttr("axis", 0), IntAttr("block_size", block)}));
    g.nodes.push_back(N("MatMul", {"a", "wf"}, {"y"}));
    g.outputs.push_back(Out("y"));
    // The initializers as the pass sees them (the graph's copies share their bytes).
    const auto* w_begin = static_cast<const uint8_t*>(g.initializers[0].second.raw_data());
    const auto* s_begin = static_cast<const uint8_t*>(g.initializers[1].second.raw_data());
    const size_t w_size = w.byte_size(), s_size = scale.byte_size();

    std::vector<std::pair<const uint8_t*, size_t>> w_ranges, s_ranges;
    int outside = 0;
    auto repacked = [&](const void* data, size_t bytes) {
      const auto* p = static_cast<const uint8_t*>(data);
      if (p >= w_begin && p + bytes <= w_begin + w_size) {
        w_ranges.emplace_back(p, bytes);
      } else if (p >= s_begin && p + bytes <= s_begin + s_size) {
        s_ranges.emplace_back(p, bytes);
      } else {
        ++outside;
      }
    };
    Graph out;
    std::map<std::string, int64_t> out_opsets;
    int fused = 0;
    REQUIRE(passes::FuseBlockedDequantMatMul(g, {{"", 21}}, &out, &out_opsets, &fused, repacked));
    CHECK(fused == 1);
    CHECK(outside == 0);
    // W: consecutive ranges from its start to its end, then W whole.
    REQUIRE(w_ranges.size() >= 3);
    CHECK(w_ranges.back() == std::make_pair(w_begin, w_size));
    w_ranges.pop_back();
    const uint8_t* at = w_begin;
    for (const auto& [p, bytes] : w_ranges) {
      CHECK(p == at);
      CHECK(bytes < w_size);
      at = p + bytes;
    }
    CHECK(at == w_begin + w_size);
    // The scales: the same, range by range, one per range of W.
    CHECK(s_ranges.size() == w_ranges.size());
    at = s_begin;
    for (const auto& [p, bytes] : s_ranges) {
      CHECK(p == at);
      at = p + bytes;
    }
    CHECK(at == s_begin + s_size);
  }
}

}  // namespace
}  // namespace simplecpp::graph
