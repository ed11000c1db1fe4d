// Patterns 3 and 4 of quant_fusion.h: DequantizeLinear x, w -> MatMul / Gemm / Conv /
// ConvTranspose [-> Add] -> QuantizeLinear, fused into QLinearMatMul, QLinearMatMulBias,
// QLinearConv or QLinearConvTranspose.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "graph/passes/quant_fusion.h"
#include "graph/passes/quant_fusion_internal.h"

namespace simplecpp::graph::passes::quant_fusion {
namespace {

// A float32 bias: a constant, or DequantizeLinear(int32 constant, float32 scale constant
// [, zero int32 zero point]) as ONNX Runtime's QDQ format writes it (values computed as that
// DequantizeLinear does: float32(q) * scale). dq_node is the DequantizeLinear (or -1);
// q / q_scale hold its int32 values and per-element scales.
struct Bias {
  const Tensor* tensor = nullptr;  // the float constant, or the int32 one when dequantized
  Dims dims;
  std::vector<float> values;
  std::vector<int32_t> q;
  std::vector<float> q_scale;
  int dq_node = -1;
};

// The pieces of pattern 3/4 (DequantizeLinear x, w -> MatMul / Gemm / Conv [-> Add(bias)] ->
// QuantizeLinear) as MatchQdq finds them, one step at a time.
struct QdqMatch {
  int q_idx = -1, core_idx = -1, add_idx = -1, dx_idx = -1, dw_idx = -1;
  std::string yzp_name, wzp_name;
  const Tensor* xs = nullptr;
  const Tensor* w = nullptr;
  const Tensor* ws = nullptr;
  const Tensor* wzp = nullptr;
  Bias add_bias;
  std::string add_bias_name;
  bool is_matmul = false, is_gemm = false, is_conv = false, is_conv_transpose = false;
  int64_t trans_b = 0, col_axis = 1, cols = 0;
  Bias bias_src;
  std::vector<int32_t> bias_i32;
};

class QdqPattern {
 public:
  explicit QdqPattern(PatternGraph* g) : g_(*g) {}

  bool Match(int q_idx, Rewrite* rw) {
    QdqMatch m;
    m.q_idx = q_idx;
    if (!MatchOutputQuantize(&m) || !MatchCore(&m) || !MatchDequantizedOperands(&m) ||
        !MatchWeightLayout(&m) || !MatchInt32Bias(&m)) {
      return false;
    }
    BuildQdqFused(m, rw);
    return true;
  }

 private:
  // The bias `name` as a constant or a dequantized int32 constant (Bias above).
  bool FloatOrDequantizedBias(const std::string& name, Bias* b) const {
    if (const Tensor* t = g_.ConstOf(name, DType::kFloat32)) {
      b->tensor = t;
      b->dims = t->dims();
      b->values = FloatValues(*t);
      return true;
    }
    const int dq = g_.Producer(name, "DequantizeLinear");
    if (dq < 0 || !PlainDequantize(g_.node(dq))) return false;
    const Node& n = g_.node(dq);
    if (n.inputs.size() < 2 || n.inputs.size() > 3) return false;
    const Tensor* q = g_.ConstOf(n.inputs[0], DType::kInt32);
    const Tensor* sc = g_.ConstOf(n.inputs[1], DType::kFloat32);
    if (q == nullptr || sc == nullptr || q->rank() > 4) return false;
    if (n.inputs.size() == 3 && !n.inputs[2].empty()) {
      const Tensor* zp = g_.ConstOf(n.inputs[2], DType::kInt32);
      if (zp == nullptr) return false;
      for (int64_t i = 0; i < zp->num_elements(); ++i) {
        if (zp->data<int32_t>()[i] != 0) return false;
      }
    }
    const int64_t count = q->num_elements();
    const bool per_tensor = sc->num_elements() == 1 && sc->rank() <= 1;
    if (!per_tensor && !(q->rank() == 1 && sc->rank() == 1 && sc->dim(0) == count)) return false;
    b->tensor = q;
    b->dims = q->dims();
    b->dq_node = dq;
    for (int64_t i = 0; i < count; ++i) {
      const int32_t v = q->data<int32_t>()[i];
      const float scale = sc->data<float>()[per_tensor ? 0 : i];
      b->q.push_back(v);
      b->q_scale.push_back(scale);
      b->values.push_back(static_cast<float>(v) * scale);
    }
    return true;
  }

  // QuantizeLinear with a per-tensor scale and an 8-bit (or absent) zero point.
  bool MatchOutputQuantize(QdqMatch* m) const {
    const Node& q = g_.node(m->q_idx);
    int64_t out_dtype = 0;
    if (!IsOp(q, "QuantizeLinear", 2, 3) || !PlainQuantize(q, &out_dtype)) return false;
    const Tensor* ys = g_.ConstOf(q.inputs[1], DType::kFloat32);
    if (ys == nullptr || ys->num_elements() != 1 || !AllPositiveFinite(FloatValues(*ys)))
      return false;
    m->yzp_name = Input(q, 2);
    if (!m->yzp_name.empty()) {
      const Tensor* yzp = g_.Const(m->yzp_name);
      if (yzp == nullptr || !IsQ8(yzp->dtype()) || yzp->num_elements() != 1) return false;
      if (out_dtype != 0 && out_dtype != static_cast<int64_t>(yzp->dtype())) return false;
    } else if (out_dtype != 0 && out_dtype != static_cast<int64_t>(DType::kUInt8)) {
      return false;
    }
    return true;
  }

  // [Add(bias)] and the core op (MatMul, Gemm or Conv) feeding the QuantizeLinear alone.
  bool MatchCore(QdqMatch* m) const {
    const std::string& y = g_.node(m->q_idx).inputs[0];
    if (!g_.SingleUse(y)) return false;
    m->core_idx = g_.AnyProducer(y);
    if (m->core_idx < 0) return false;
    if (IsOp(g_.node(m->core_idx), "Add", 2, 2)) {
      m->add_idx = m->core_idx;
      const Node& add = g_.node(m->add_idx);
      std::string z;
      for (int k = 0; k < 2 && m->add_bias.tensor == nullptr; ++k) {
        Bias b;
        if (FloatOrDequantizedBias(add.inputs[k], &b)) {
          m->add_bias = b;
          m->add_bias_name = add.inputs[k];
          z = add.inputs[1 - k];
        }
      }
      if (m->add_bias.tensor == nullptr || !g_.SingleUse(z)) return false;
      m->core_idx = g_.AnyProducer(z);
      if (m->core_idx < 0) return false;
    }
    const Node& core = g_.node(m->core_idx);
    m->is_matmul = IsOp(core, "MatMul", 2, 2);
    m->is_gemm = IsOp(core, "Gemm", 2, 3);
    m->is_conv = IsOp(core, "Conv", 2, 3);
    // ConvTranspose of one group: W [C, M, k...], output channels along axis 1.
    int64_t group = 1;
    m->is_conv_transpose = IsOp(core, "ConvTranspose", 2, 3) && IntAttr(core, "group", 1, &group) &&
                           group == 1;
    return m->is_matmul || m->is_gemm || m->is_conv || m->is_conv_transpose;
  }

  // The core op's operands as DequantizeLinear of a per-tensor activation and a constant 8-bit
  // weight. xf / wf may have other readers (a dequantized activation shared by several MatMuls):
  // the fused node reads the quantized inputs, and the DequantizeLinear stays while others read it.
  bool MatchDequantizedOperands(QdqMatch* m) const {
    const Node& core = g_.node(m->core_idx);
    m->dx_idx = g_.Producer(core.inputs[0], "DequantizeLinear");
    m->dw_idx = g_.Producer(core.inputs[1], "DequantizeLinear");
    if (m->dx_idx < 0 || m->dw_idx < 0 || m->dx_idx == m->dw_idx) return false;
    const Node& dx = g_.node(m->dx_idx);
    const Node& dw = g_.node(m->dw_idx);
    if (dx.inputs.size() != 3 || dw.inputs.size() < 2 || dw.inputs.size() > 3) return false;
    if (!PlainDequantize(dx) || !PlainDequantize(dw)) return false;
    m->xs = g_.ConstOf(dx.inputs[1], DType::kFloat32);
    const Tensor* xzp = g_.Const(dx.inputs[2]);
    if (m->xs == nullptr || m->xs->num_elements() != 1 || !AllPositiveFinite(FloatValues(*m->xs)))
      return false;
    if (xzp == nullptr || !IsQ8(xzp->dtype()) || xzp->num_elements() != 1) return false;
    if (dx.inputs[0].empty()) return false;
    m->w = g_.Const(dw.inputs[0]);
    if (m->w == nullptr || !IsQ8(m->w->dtype())) return false;
    m->ws = g_.ConstOf(dw.inputs[1], DType::kFloat32);
    if (m->ws == nullptr || !AllPositiveFinite(FloatValues(*m->ws))) return false;
    m->wzp_name = Input(dw, 2);
    if (!m->wzp_name.empty()) {
      m->wzp = g_.ConstOf(m->wzp_name, m->w->dtype());
      if (m->wzp == nullptr) return false;
    }
    return true;
  }

  // The column / output-channel axis of W, and weight scales per tensor or along it.
  bool MatchWeightLayout(QdqMatch* m) const {
    const Node& core = g_.node(m->core_idx);
    const Tensor* w = m->w;
    if (m->is_gemm) {
      int64_t trans_a = 0;
      if (!IntAttr(core, "transA", 0, &trans_a) || trans_a != 0) return false;
      if (!IntAttr(core, "transB", 0, &m->trans_b) || (m->trans_b != 0 && m->trans_b != 1))
        return false;
      if (!FloatAttrIs(core, "alpha", 1.0f)) return false;
      if (core.inputs.size() == 3 && !core.inputs[2].empty() && !FloatAttrIs(core, "beta", 1.0f))
        return false;
      if (w->rank() != 2) return false;
      m->col_axis = m->trans_b ? 0 : 1;
    } else if (m->is_matmul) {
      if (w->rank() != 2) return false;
      m->col_axis = 1;
    } else {
      if (w->rank() < 3) return false;
      m->col_axis = m->is_conv_transpose ? 1 : 0;
    }
    m->cols = w->dim(m->col_axis);
    const Tensor* ws = m->ws;
    const Tensor* wzp = m->wzp;
    if (ws->num_elements() == 1) {
      return ws->rank() <= 1 && (wzp == nullptr || (wzp->num_elements() == 1 && wzp->rank() <= 1));
    }
    int64_t axis = 1;
    if (!IntAttr(g_.node(m->dw_idx), "axis", 1, &axis)) return false;
    if (axis < 0) axis += w->rank();
    if (axis != m->col_axis || ws->rank() != 1 || ws->dim(0) != m->cols) return false;
    return wzp == nullptr || wzp->dims() == ws->dims();
  }

  // The float bias (Gemm's C / Conv's B, or the Add; not both) as int32 at scale xs * ws[n]: the
  // DequantizeLinear's int32 values when its scale is exactly that float32 product, else
  // round_half_even(bias / (xs * ws[n])).
  bool MatchInt32Bias(QdqMatch* m) const {
    const Node& core = g_.node(m->core_idx);
    Bias& bias_src = m->bias_src;
    bool bias_from_add = false;
    if (core.inputs.size() == 3 && !core.inputs[2].empty()) {
      if (!FloatOrDequantizedBias(core.inputs[2], &bias_src) || m->add_bias.tensor != nullptr)
        return false;
    }
    if (m->add_bias.tensor != nullptr) {
      bias_src = m->add_bias;
      bias_from_add = true;
    }
    if (bias_src.tensor == nullptr) return true;
    const Tensor& bt = *bias_src.tensor;
    const int64_t cols = m->cols;
    if (m->is_conv || m->is_conv_transpose) {
      if (bias_from_add) {
        // ChannelVector checks the shape; the values are the (dequantized) floats.
        std::vector<float> unused;
        Tensor shape_probe(DType::kFloat32, bt.dims());
        if (!ChannelVector(shape_probe, cols, m->w->rank(), &unused)) return false;
      } else if (bt.rank() != 1 || bt.dim(0) != cols) {
        return false;
      }
    } else {
      const int64_t max_rank = m->is_gemm ? 2 : 1;  // MatMul's output may be 1-D
      const bool one = IsOneElementOfRank(bt, max_rank);
      const bool row = bt.rank() >= 1 && bt.rank() <= max_rank && bt.dim(bt.rank() - 1) == cols &&
                       bt.num_elements() == cols;
      if (!one && !row) return false;
    }
    std::vector<float> bias = bias_src.values;
    if (bias.size() == 1 && cols != 1) bias.assign(cols, bias[0]);
    const std::vector<float> ws_vec = FloatValues(*m->ws);
    const float xs_v = FloatValues(*m->xs)[0];
    for (size_t j = 0; j < bias.size(); ++j) {
      const float prod = xs_v * ws_vec[ws_vec.size() > 1 ? j : 0];
      if (!(prod > 0.0f) || !std::isfinite(prod) || !std::isfinite(bias[j])) return false;
      if (!bias_src.q.empty()) {
        const size_t bj = bias_src.q.size() > 1 ? j : 0;
        if (bias_src.q_scale[bj] == prod) {
          m->bias_i32.push_back(bias_src.q[bj]);
          continue;
        }
      }
      const double r = std::nearbyint(static_cast<double>(bias[j]) / static_cast<double>(prod));
      if (!(std::fabs(r) <= static_cast<double>(std::numeric_limits<int32_t>::max()))) return false;
      m->bias_i32.push_back(static_cast<int32_t>(r));
    }
    return true;
  }

  // QLinearConv, QLinearMatMul or the fused QLinearMatMulBias in place of the matched nodes.
  void BuildQdqFused(const QdqMatch& m, Rewrite* rw) {
    const Node& q = g_.node(m.q_idx);
    const Node& core = g_.node(m.core_idx);
    const Node& dx = g_.node(m.dx_idx);
    const Node& dw = g_.node(m.dw_idx);
    const std::string& out = q.outputs[0];
    Node f;
    f.name = q.name.empty() ? out + "_fused" : q.name + "_fused";
    f.outputs = {out};
    std::string yzp_in = m.yzp_name;
    if (yzp_in.empty()) {
      yzp_in = g_.FreshName(out + "_zero_point");
      rw->initializers.emplace_back(yzp_in, Tensor(DType::kUInt8, {}));
    }
    std::string bias_in;
    if (!m.bias_i32.empty()) {
      bias_in = g_.FreshName(out + "_bias_i32");
      rw->initializers.emplace_back(bias_in,
                                    Tensor::FromVector(DType::kInt32, {m.cols}, m.bias_i32));
    }
    std::string w_in = dw.inputs[0];
    if (m.trans_b) {
      // W [N,K] -> [K,N] bytes.
      const Tensor* w = m.w;
      const int64_t n = w->dim(0), k = w->dim(1);
      Tensor t(w->dtype(), {k, n});
      const auto* src = static_cast<const uint8_t*>(w->raw_data());
      auto* dst = static_cast<uint8_t*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
      w_in = g_.FreshName(dw.inputs[0] + "_t");
      rw->initializers.emplace_back(w_in, t);
    }
    f.inputs = {dx.inputs[0], dx.inputs[1], dx.inputs[2], w_in, dw.inputs[1], m.wzp_name,
                q.inputs[1], yzp_in};
    if (m.is_conv) {
      f.op_type = "QLinearConv";
      f.attributes = core.attributes;  // auto_pad, dilations, group, kernel_shape, pads, strides
      if (!bias_in.empty()) f.inputs.push_back(bias_in);
      rw->kind = 4;
    } else if (m.is_conv_transpose) {
      f.domain = kFusedDomain;
      f.op_type = "QLinearConvTranspose";
      f.attributes = core.attributes;  // ConvTranspose's, output_padding / output_shape included
      if (!bias_in.empty()) f.inputs.push_back(bias_in);
      rw->kind = 4;
    } else if (m.is_matmul && bias_in.empty()) {
      f.op_type = "QLinearMatMul";
      rw->kind = 3;
    } else {
      f.domain = kFusedDomain;
      f.op_type = "QLinearMatMulBias";
      f.inputs.push_back(bias_in);
      Attribute a;
      a.name = "gemm";
      a.kind = AttrKind::kInt;
      a.i = m.is_gemm ? 1 : 0;
      f.attributes.push_back(a);
      while (f.inputs.size() > 8 && f.inputs.back().empty()) f.inputs.pop_back();
      rw->kind = 3;
    }
    rw->fused = std::move(f);
    rw->nodes = {m.core_idx, m.q_idx};
    if (m.add_idx >= 0) rw->nodes.push_back(m.add_idx);
    rw->maybe_dead = {m.dx_idx, m.dw_idx};
    if (m.bias_src.dq_node >= 0) rw->maybe_dead.push_back(m.bias_src.dq_node);
    rw->anchor = m.q_idx;
  }

  PatternGraph& g_;
};

}  // namespace

bool MatchQdq(PatternGraph* g, int q_idx, Rewrite* rw) { return QdqPattern(g).Match(q_idx, rw); }

}  // namespace simplecpp::graph::passes::quant_fusion
