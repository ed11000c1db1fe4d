// Blocked DequantizeLinear -> MatMul into MatMulNBits (graph/passes/blocked_dequant_fusion.h).
#include "graph/passes/blocked_dequant_fusion.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "graph/node_typing.h"

namespace simplecpp::graph::passes {
namespace {

const Attribute* FindAttr(const Node& node, const char* name) { return node.FindAttribute(name); }

int64_t IntAttr(const Node& node, const char* name, int64_t fallback) {
  const Attribute* a = FindAttr(node, name);
  return a != nullptr && a->kind == AttrKind::kInt ? a->i : fallback;
}

// Code of element i of a 4- or 8-bit integer tensor, as the unsigned code MatMulNBits reads:
// signed codes are offset by 2^(bits-1).
uint8_t UnsignedCode(const Tensor& t, int64_t i) {
  const auto* bytes = static_cast<const uint8_t*>(t.raw_data());
  switch (t.dtype()) {
    case DType::kUInt8: return bytes[i];
    case DType::kInt8: return static_cast<uint8_t>(static_cast<int8_t>(bytes[i]) + 128);
    case DType::kUInt4: return (bytes[i / 2] >> (4 * (i & 1))) & 15;
    case DType::kInt4: {
      const int nibble = (bytes[i / 2] >> (4 * (i & 1))) & 15;
      return static_cast<uint8_t>((nibble >= 8 ? nibble - 16 : nibble) + 8);
    }
    default: return 0;
  }
}

struct Match {
  size_t dq = 0, matmul = 0;
  const Tensor* w = nullptr;
  const Tensor* scale = nullptr;
  const Tensor* zero_point = nullptr;
  int64_t block_size = 0;
  const Tensor* block_min = nullptr;  // [k_blocks, 1, N] float32 (the block-minimum chain)
  std::vector<size_t> chain;          // the chain's Reshape, Add, Reshape
};

class Fuser {
 public:
  Fuser(const Graph& graph, const std::map<std::string, int64_t>& opsets) : g_(graph), opsets_(opsets) {
    for (const auto& [name, t] : g_.initializers) initializers_[name] = &t;
    for (const ValueInfo& o : g_.outputs) readers_[o.name] += 2;  // a graph output is never fused
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      for (const std::string& in : n.inputs) {
        if (!in.empty()) ++readers_[in];
      }
      std::vector<std::string> outer;
      CollectSubgraphReads(n, &outer);
      for (const std::string& name : outer) readers_[name] += 2;
      for (const std::string& out : n.outputs) {
        if (!out.empty()) producer_[out] = i;
      }
    }
  }

  std::vector<Match> FindMatches() const {
    std::vector<Match> matches;
    auto it = opsets_.find("");
    if (it == opsets_.end() || it->second < 21) return matches;  // block_size arrived in opset 21
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& mm = g_.nodes[i];
      if (!mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 || mm.outputs.size() != 1) continue;
      auto p = producer_.find(mm.inputs[1]);
      if (p == producer_.end()) continue;
      Match m;
      m.dq = p->second;
      m.matmul = i;
      if (Matches(&m) || MatchesMinChain(&m)) matches.push_back(m);
    }
    return matches;
  }

 private:
  const Tensor* Constant(const std::string& name) const {
    auto it = initializers_.find(name);
    return it == initializers_.end() ? nullptr : it->second;
  }

  bool Matches(Match* m) const {
    const Node& dq = g_.nodes[m->dq];
    if (!dq.domain.empty() || dq.op_type != "DequantizeLinear" || dq.outputs.size() != 1) return false;
    if (dq.inputs.size() < 2 || dq.inputs.size() > 3) return false;
    auto readers = readers_.find(dq.outputs[0]);
    if (readers == readers_.end() || readers->second != 1) return false;
    m->w = Constant(dq.inputs[0]);
    m->scale = Constant(dq.inputs[1]);
    m->zero_point = dq.inputs.size() == 3 && !dq.inputs[2].empty() ? Constant(dq.inputs[2]) : nullptr;
    if (m->w == nullptr || m->scale == nullptr) return false;
    if (dq.inputs.size() == 3 && !dq.inputs[2].empty() && m->zero_point == nullptr) return false;
    const DType wt = m->w->dtype();
    if (wt != DType::kInt4 && wt != DType::kUInt4 && wt != DType::kInt8 && wt != DType::kUInt8) return false;
    if (m->w->rank() != 2) return false;
    const int64_t k = m->w->dim(0), n = m->w->dim(1);
    if (k <= 0 || n <= 0) return false;
    const int64_t axis = IntAttr(dq, "axis", 1);
    if (axis != 0 && axis != -2) return false;
    m->block_size = IntAttr(dq, "block_size", 0);
    const int64_t bs = m->block_size;
    if (bs < 16 || bs > 4096 || (bs & (bs - 1)) != 0) return false;
    if (const Attribute* out = FindAttr(dq, "output_dtype"); out != nullptr && out->i != 0 &&
                                                             out->i != static_cast<int64_t>(m->scale->dtype())) {
      return false;
    }
    if (m->scale->dtype() != DType::kFloat32 && m->scale->dtype() != DType::kFloat16) return false;
    const Dims blocks = {(k + bs - 1) / bs, n};
    if (m->scale->dims() != blocks) return false;
    if (m->zero_point != nullptr && (m->zero_point->dtype() != wt || m->zero_point->dims() != blocks)) return false;
    return true;
  }

  // A node of `op_type` (default domain) producing `value`, whose output has one reader.
  const Node* SoleProducer(const std::string& value, const char* op_type, size_t* index) const {
    auto p = producer_.find(value);
    if (p == producer_.end()) return nullptr;
    const Node& n = g_.nodes[p->second];
    if (!n.domain.empty() || n.op_type != op_type || n.outputs.size() != 1) return nullptr;
    auto r = readers_.find(n.outputs[0]);
    if (r == readers_.end() || r->second != 1) return nullptr;
    *index = p->second;
    return &n;
  }

  // A Reshape's constant target shape equals `dims`.
  bool ReshapesTo(const Node& reshape, const Dims& dims) const {
    if (reshape.inputs.size() != 2) return false;
    const Tensor* shape = Constant(reshape.inputs[1]);
    if (shape == nullptr || shape->dtype() != DType::kInt64 || shape->num_elements() != static_cast<int64_t>(dims.size())) return false;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (shape->data<int64_t>()[i] != dims[i]) return false;
    }
    return true;
  }

  // The block-minimum spelling (ggml's Q4_1 as simplecpp's GGUF import writes it):
  //   wf = Reshape(Add(Reshape(DequantizeLinear(W, scale[, zp]), [kb, B, N]), min [kb, 1, N]),
  //                [K, N])  ->  MatMul(a, wf)
  // with B dividing K and every intermediate read once. m->dq holds the last Reshape on entry.
  bool MatchesMinChain(Match* m) const {
    size_t r2 = 0, add = 0, r1 = 0, dq = 0;
    const Node* back = SoleProducer(g_.nodes[m->matmul].inputs[1], "Reshape", &r2);
    if (back == nullptr || back->inputs.empty()) return false;
    const Node* sum = SoleProducer(back->inputs[0], "Add", &add);
    if (sum == nullptr || sum->inputs.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
      const Node* blocks = SoleProducer(sum->inputs[side], "Reshape", &r1);
      const Tensor* min = Constant(sum->inputs[1 - side]);
      if (blocks == nullptr || min == nullptr || blocks->inputs.empty()) continue;
      auto p = producer_.find(blocks->inputs[0]);
      if (p == producer_.end()) return false;
      dq = p->second;
      Match c = *m;
      c.dq = dq;
      if (!Matches(&c) || c.scale->dtype() != DType::kFloat32) return false;
      const int64_t k = c.w->dim(0), n = c.w->dim(1), bs = c.block_size;
      if (k % bs != 0) return false;
      if (!ReshapesTo(*blocks, {k / bs, bs, n}) || !ReshapesTo(*back, {k, n})) return false;
      if (min->dtype() != DType::kFloat32 || min->dims() != Dims{k / bs, 1, n}) return false;
      c.block_min = min;
      c.chain = {r1, add, r2};
      *m = c;
      return true;
    }
    return false;
  }

  const Graph& g_;
  const std::map<std::string, int64_t>& opsets_;
  std::map<std::string, const Tensor*> initializers_;
  std::map<std::string, int> readers_;
  std::map<std::string, size_t> producer_;
};

// The MatMulNBits inputs for one match, appended to `initializers`; returns the node.
Node Rewrite(const Match& m, const Node& matmul, std::set<std::string>* taken,
             std::vector<std::pair<std::string, Tensor>>* initializers,
             const std::function<void(const void*, size_t)>& repacked) {
  const Tensor& w = *m.w;
  const int64_t k = w.dim(0), n = w.dim(1), bs = m.block_size;
  const int64_t k_blocks = (k + bs - 1) / bs;
  const bool four = w.dtype() == DType::kInt4 || w.dtype() == DType::kUInt4;
  const int bits = four ? 4 : 8;
  const bool is_signed = w.dtype() == DType::kInt4 || w.dtype() == DType::kInt8;
  const int64_t blob = bs * bits / 8;
  const std::string base = matmul.name.empty() ? matmul.outputs[0] : matmul.name;
  // A name no value of the graph has yet.
  auto fresh = [&](const std::string& suffix) {
    std::string name = base + suffix;
    for (int i = 1; taken->count(name); ++i) name = base + suffix + "_" + std::to_string(i);
    taken->insert(name);
    return name;
  };

  // Zero point of block b of column c as an unsigned code (also what pads a partial last block,
  // so that padding dequantizes to 0).
  auto zp_code = [&](int64_t b, int64_t c) -> uint8_t {
    if (m.zero_point != nullptr) return UnsignedCode(*m.zero_point, b * n + c);
    return is_signed ? static_cast<uint8_t>(1 << (bits - 1)) : 0;
  };

  // Codes and scales go from [K, N] / [k_blocks, N] (rows of blocks) to [N][k_blocks], about
  // 1 MiB of W's rows at a time: each range of W and of its scales is read for the last time when
  // its blocks are done, and handed to `repacked`, so that a mapped weight's pages can go while
  // the rest is repacked (a 16 MiB output layer would otherwise be resident twice at the peak).
  Tensor packed(DType::kUInt8, {n, k_blocks, blob});
  auto* pb = packed.data<uint8_t>();
  Tensor scales(m.scale->dtype(), {n * k_blocks});
  const size_t elem = DTypeSize(m.scale->dtype());
  const auto* w_bytes = static_cast<const uint8_t*>(w.raw_data());
  const auto* scale_bytes = static_cast<const uint8_t*>(m.scale->raw_data());
  const int64_t row_bits = n * bits;
  const int64_t block_row_bits = std::max<int64_t>(1, bs * row_bits);
  const int64_t chunk_blocks = std::max<int64_t>(1, (int64_t{8} << 20) / block_row_bits);
  for (int64_t b0 = 0; b0 < k_blocks; b0 += chunk_blocks) {
    const int64_t b1 = std::min(k_blocks, b0 + chunk_blocks);
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t b = b0; b < b1; ++b) {
        uint8_t* block = pb + (c * k_blocks + b) * blob;
        for (int64_t j = 0; j < bs; ++j) {
          const int64_t row = b * bs + j;
          const uint8_t code = row < k ? UnsignedCode(w, row * n + c) : zp_code(b, c);
          if (four) {
            block[j / 2] = static_cast<uint8_t>(block[j / 2] | (code << (4 * (j & 1))));
          } else {
            block[j] = code;
          }
        }
        std::memcpy(static_cast<uint8_t*>(scales.raw_data()) + (c * k_blocks + b) * elem,
                    scale_bytes + (b * n + c) * elem, elem);
      }
    }
    if (repacked) {
      // Whole bytes of rows [b0 * bs, b1 * bs) of W (a byte shared with the next row stays).
      const int64_t r0 = b0 * bs, r1 = std::min(k, b1 * bs);
      const int64_t byte0 = (r0 * row_bits + 7) / 8, byte1 = r1 * row_bits / 8;
      if (byte1 > byte0) repacked(w_bytes + byte0, static_cast<size_t>(byte1 - byte0));
      repacked(scale_bytes + b0 * n * static_cast<int64_t>(elem),
               static_cast<size_t>((b1 - b0) * n) * elem);
    }
  }
  Node node;
  node.name = matmul.name;
  node.op_type = "MatMulNBits";
  node.domain = "com.microsoft";
  node.outputs = matmul.outputs;
  node.inputs = {matmul.inputs[0], fresh("/nbits_weights"), fresh("/nbits_scales")};
  initializers->emplace_back(node.inputs[1], std::move(packed));
  initializers->emplace_back(node.inputs[2], std::move(scales));
  // MatMulNBits's default zero point is 2^(bits-1): explicit ones only when they differ.
  if (m.zero_point != nullptr || !is_signed) {
    const int64_t row_bytes = (k_blocks * bits + 7) / 8;
    Tensor zp(DType::kUInt8, {n * row_bytes});
    auto* pz = zp.data<uint8_t>();
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t b = 0; b < k_blocks; ++b) {
        const uint8_t code = zp_code(b, c);
        if (four) {
          pz[c * row_bytes + b / 2] = static_cast<uint8_t>(pz[c * row_bytes + b / 2] | (code << (4 * (b & 1))));
        } else {
          pz[c * row_bytes + b] = code;
        }
      }
    }
    node.inputs.push_back(fresh("/nbits_zero_points"));
    initializers->emplace_back(node.inputs.back(), std::move(zp));
  }
  if (m.block_min != nullptr) {
    // simplecpp's block_min input (index 6), [N][k_blocks] like the scales.
    while (node.inputs.size() < 6) node.inputs.push_back("");
    Tensor min(DType::kFloat32, {n * k_blocks});
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t b = 0; b < k_blocks; ++b) min.data<float>()[c * k_blocks + b] = m.block_min->data<float>()[b * n + c];
    }
    node.inputs.push_back(fresh("/nbits_block_min"));
    initializers->emplace_back(node.inputs.back(), std::move(min));
  }
  auto attr = [](const char* name, int64_t v) {
    Attribute a;
    a.name = name;
    a.kind = AttrKind::kInt;
    a.i = v;
    return a;
  };
  node.attributes = {attr("K", k), attr("N", n), attr("bits", bits), attr("block_size", bs)};
  return node;
}

}  // namespace

bool FuseBlockedDequantMatMul(const Graph& graph, const std::map<std::string, int64_t>& opsets,
                              Graph* out, std::map<std::string, int64_t>* out_opsets, int* fused,
                              const std::function<void(const void*, size_t)>& repacked) {
  const std::vector<Match> matches = Fuser(graph, opsets).FindMatches();
  if (fused != nullptr) *fused = static_cast<int>(matches.size());
  if (matches.empty()) return false;
  std::set<size_t> drop;
  std::map<size_t, Node> replace;
  std::vector<std::pair<std::string, Tensor>> added;
  std::set<std::string> taken;
  for (const ValueInfo& v : graph.inputs) taken.insert(v.name);
  for (const auto& [name, t] : graph.initializers) taken.insert(name);
  for (const Node& n : graph.nodes) taken.insert(n.outputs.begin(), n.outputs.end());
  for (const Match& m : matches) {
    drop.insert(m.dq);
    drop.insert(m.chain.begin(), m.chain.end());
    replace[m.matmul] = Rewrite(m, graph.nodes[m.matmul], &taken, &added, repacked);
    if (repacked) repacked(m.w->raw_data(), m.w->byte_size());
  }
  *out = Graph();
  out->name = graph.name;
  out->doc = graph.doc;
  out->inputs = graph.inputs;
  out->outputs = graph.outputs;
  out->value_info = graph.value_info;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (drop.count(i)) continue;
    auto r = replace.find(i);
    out->nodes.push_back(r != replace.end() ? r->second : graph.nodes[i]);
  }
  // Initializers nothing reads any more (the unpacked weights) are left out: no second copy.
  std::set<std::string> read;
  for (const Node& n : out->nodes) {
    read.insert(n.inputs.begin(), n.inputs.end());
    std::vector<std::string> outer;
    CollectSubgraphReads(n, &outer);
    read.insert(outer.begin(), outer.end());
  }
  for (const ValueInfo& o : graph.outputs) read.insert(o.name);
  for (const ValueInfo& in : graph.inputs) read.insert(in.name);  // IR < 4: inputs with defaults
  for (const auto& [name, t] : graph.initializers) {
    if (read.count(name)) out->initializers.emplace_back(name, t);
  }
  for (auto& init : added) out->initializers.push_back(std::move(init));
  *out_opsets = opsets;
  out_opsets->emplace("com.microsoft", 1);
  return true;
}

}  // namespace simplecpp::graph::passes
