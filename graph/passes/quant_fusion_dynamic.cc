// Patterns 1 and 2 of quant_fusion.h: DynamicQuantizeLinear -> MatMulInteger / ConvInteger ->
// Cast -> Mul [-> Add], fused into DynamicQuantizeMatMul, MatMulIntegerToFloat or
// DynamicQuantizeConv.
#include <string>
#include <utility>
#include <vector>

#include "graph/passes/quant_fusion.h"
#include "graph/passes/quant_fusion_internal.h"

namespace simplecpp::graph::passes::quant_fusion {
namespace {

// What patterns 1 and 2 match, node by node.
struct DynamicMatch {
  bool conv = false;  // ConvInteger (pattern 2), else MatMulInteger (pattern 1)
  int mi = -1, dq = -1, cast = -1, mul1 = -1, mul2 = -1, add = -1;
  int last = -1;       // the pattern's last node: mul2, or the Add
  std::string xq, xs;  // DynamicQuantizeLinear's quantized x and its scale
  const Tensor* w = nullptr;
  int64_t cols = 0;  // N (matmul) or M (conv)
  std::string wzp_name, ws_name;
  const Tensor* ws = nullptr;
  std::vector<float> ws_vec;  // conv: the per-channel weight scales
  std::vector<float> bias;    // the Add's bias (empty without one)
  std::string y;              // the pattern's output
};

class DynamicPattern {
 public:
  explicit DynamicPattern(PatternGraph* g) : g_(*g) {}

  bool Match(int mi_idx, Rewrite* rw) {
    DynamicMatch m;
    if (!MatchDynamicQuantize(mi_idx, &m) || !MatchDynamicWeight(&m) || !MatchDynamicRescale(&m)) {
      return false;
    }
    MatchDynamicBias(&m);
    Node f;
    f.name = g_.node(m.last).name.empty() ? m.y + "_fused" : g_.node(m.last).name + "_fused";
    f.outputs = {m.y};
    if (m.conv) {
      BuildDynamicConv(m, rw, &f);
    } else {
      BuildDynamicMatMul(m, rw, &f);
    }
    while (!f.inputs.empty() && f.inputs.back().empty()) f.inputs.pop_back();
    rw->fused = std::move(f);
    rw->nodes = {m.mi, m.cast, m.mul1, m.mul2};
    if (m.add >= 0) rw->nodes.push_back(m.add);
    rw->maybe_dead = {m.dq};
    rw->anchor = m.last;
    return true;
  }

 private:
  // mi_idx is a MatMulInteger / ConvInteger whose x comes from a DynamicQuantizeLinear (its
  // quantized x and zero point).
  bool MatchDynamicQuantize(int mi_idx, DynamicMatch* m) const {
    const Node& mi = g_.node(mi_idx);
    m->mi = mi_idx;
    m->conv = mi.op_type == "ConvInteger";
    if (!IsOp(mi, mi.op_type.c_str(), 3, 4)) return false;
    m->xq = mi.inputs[0];
    m->dq = g_.Producer(m->xq, "DynamicQuantizeLinear", 3);
    if (m->dq < 0) return false;
    const Node& dq = g_.node(m->dq);
    if (dq.inputs.size() != 1 || dq.inputs[0].empty() || dq.outputs[0] != m->xq ||
        dq.outputs[2].empty() || dq.outputs[2] != mi.inputs[2] || dq.outputs[1].empty()) {
      return false;
    }
    m->xs = dq.outputs[1];
    // xq / xs / xzp may have other readers (one DynamicQuantizeLinear shared by the MatMuls of the
    // same x, as ONNX Runtime's quantizer writes it): the fused op quantizes x itself (the same
    // arithmetic, so the same bytes) and the DynamicQuantizeLinear stays while others read it.
    return true;
  }

  // W: a constant int8 / uint8 matrix (matmul) or kernel (conv), its zero point one element or
  // one per output column / channel.
  bool MatchDynamicWeight(DynamicMatch* m) const {
    const Node& mi = g_.node(m->mi);
    m->w = g_.Const(mi.inputs[1]);
    const Tensor* w = m->w;
    if (w == nullptr || !IsQ8(w->dtype())) return false;
    if (m->conv ? w->rank() < 3 : w->rank() != 2) return false;
    m->cols = m->conv ? w->dim(0) : w->dim(1);
    m->wzp_name = Input(mi, 3);
    if (!m->wzp_name.empty()) {
      const Tensor* wzp = g_.ConstOf(m->wzp_name, w->dtype());
      if (wzp == nullptr) return false;
      if (!IsOneElementOfRank(*wzp, 1) && !(wzp->rank() == 1 && wzp->dim(0) == m->cols)) {
        return false;
      }
    }
    return true;
  }

  // The int32 result cast to float, then y = Mul(accf, s) with s = Mul(xs, ws), ws constant.
  bool MatchDynamicRescale(DynamicMatch* m) const {
    const std::string& acc = g_.node(m->mi).outputs[0];
    m->cast = g_.SoleReader(acc);
    if (m->cast < 0 || !IsOp(g_.node(m->cast), "Cast", 1, 1)) return false;
    int64_t to = 0;
    if (!IntAttr(g_.node(m->cast), "to", 0, &to) || to != static_cast<int64_t>(DType::kFloat32))
      return false;
    const std::string& accf = g_.node(m->cast).outputs[0];
    m->mul2 = g_.SoleReader(accf);
    if (m->mul2 < 0 || !IsOp(g_.node(m->mul2), "Mul", 2, 2)) return false;
    const Node& mul2 = g_.node(m->mul2);
    const std::string& s = mul2.inputs[0] == accf ? mul2.inputs[1] : mul2.inputs[0];
    m->mul1 = g_.Producer(s, "Mul");
    if (m->mul1 < 0 || !g_.SingleUse(s) || !IsOp(g_.node(m->mul1), "Mul", 2, 2)) return false;
    const Node& mul1 = g_.node(m->mul1);
    if (mul1.inputs[0] != m->xs && mul1.inputs[1] != m->xs) return false;
    m->ws_name = mul1.inputs[0] == m->xs ? mul1.inputs[1] : mul1.inputs[0];
    m->ws = g_.ConstOf(m->ws_name, DType::kFloat32);
    if (m->ws == nullptr) return false;
    if (m->conv) return ChannelVector(*m->ws, m->cols, m->w->rank(), &m->ws_vec);
    return IsOneElementOfRank(*m->ws, 1) || (m->ws->rank() == 1 && m->ws->dim(0) == m->cols);
  }

  // An optional Add of a constant bias (one element, or one per output column / channel) after
  // the rescale; a one-element bias is expanded to `cols` values.
  void MatchDynamicBias(DynamicMatch* m) const {
    m->y = g_.node(m->mul2).outputs[0];
    m->last = m->mul2;
    const int reader = g_.SoleReader(m->y);
    if (reader >= 0 && IsOp(g_.node(reader), "Add", 2, 2)) {
      const Node& add = g_.node(reader);
      const std::string& b = add.inputs[0] == m->y ? add.inputs[1] : add.inputs[0];
      const Tensor* bt = g_.ConstOf(b, DType::kFloat32);
      bool ok = bt != nullptr;
      if (ok && m->conv) {
        ok = ChannelVector(*bt, m->cols, m->w->rank(), &m->bias);
      } else if (ok) {
        ok = IsOneElementOfRank(*bt, 1) || (bt->rank() == 1 && bt->dim(0) == m->cols);
        if (ok) m->bias = FloatValues(*bt);
      }
      if (ok) {
        m->add = reader;
        m->last = reader;
        m->y = add.outputs[0];
      }
    }
    if (m->add >= 0 && m->bias.size() == 1 && m->cols != 1) m->bias.assign(m->cols, m->bias[0]);
  }

  // Pattern 1's fused node: DynamicQuantizeMatMul, or MatMulIntegerToFloat when several nodes
  // read xq (the Q, K and V projections of one activation): the DynamicQuantizeLinear stays and
  // runs once, and each MatMul reads its result (the same int32 sums and float epilogue).
  void BuildDynamicMatMul(const DynamicMatch& m, Rewrite* rw, Node* f) {
    const Node& mi = g_.node(m.mi);
    const Node& dq = g_.node(m.dq);
    f->domain = "com.microsoft";
    if (!g_.SingleUse(m.xq)) {
      f->op_type = "MatMulIntegerToFloat";
      f->inputs = {m.xq, mi.inputs[1], m.xs, m.ws_name, dq.outputs[2], m.wzp_name, ""};
    } else {
      f->op_type = "DynamicQuantizeMatMul";
      f->inputs = {dq.inputs[0], mi.inputs[1], m.ws_name, m.wzp_name, ""};
    }
    if (m.add >= 0) {
      // DynamicQuantizeMatMul wants bias [N]: a one-element bias is expanded (same values).
      const Node& add = g_.node(m.add);
      const std::string& mul2_out = g_.node(m.mul2).outputs[0];
      const std::string& bname = add.inputs[0] == mul2_out ? add.inputs[1] : add.inputs[0];
      const Tensor* bt = g_.Const(bname);
      f->inputs.back() = (bt->rank() == 1 && bt->dim(0) == m.cols)
                             ? bname
                             : g_.VectorInitializer(rw, m.y + "_bias", m.bias);
    }
    rw->kind = 1;
  }

  // Pattern 2's fused node: DynamicQuantizeConv with per-channel scale and bias vectors.
  void BuildDynamicConv(const DynamicMatch& m, Rewrite* rw, Node* f) {
    const Node& mi = g_.node(m.mi);
    f->domain = kFusedDomain;
    f->op_type = "DynamicQuantizeConv";
    const std::string ws_in = m.ws_vec.size() == 1 && m.ws->rank() <= 1
                                  ? m.ws_name
                                  : g_.VectorInitializer(rw, m.y + "_scale", m.ws_vec);
    f->inputs = {g_.node(m.dq).inputs[0], mi.inputs[1], ws_in, m.wzp_name,
                 m.add >= 0 ? g_.VectorInitializer(rw, m.y + "_bias", m.bias) : ""};
    f->attributes = mi.attributes;  // auto_pad, dilations, group, kernel_shape, pads, strides
    rw->kind = 2;
  }

  PatternGraph& g_;
};

}  // namespace

bool MatchDynamic(PatternGraph* g, int mi_idx, Rewrite* rw) {
  return DynamicPattern(g).Match(mi_idx, rw);
}

}  // namespace simplecpp::graph::passes::quant_fusion
