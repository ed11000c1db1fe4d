// Einsum (opset 12): parses the equation (explicit "->" output or numpy's implicit output,
// "..." broadcasting, repeated labels for diagonals) and turns the whole computation into a fixed
// list of steps at Prepare:
//   1. per operand: size-1 axes of labels that are broadcast elsewhere are dropped (a free view),
//      a repeated label takes the diagonal (an axis gather), and labels used by no other operand
//      and not in the output are summed out (the reduction kernels);
//   2. operands are contracted left to right: each pair is permuted (only when its layout does not
//      already fit, using GEMM's transpose flags first) to A [batch, M, K] and B [batch, K, N] and
//      multiplied with the batched GEMM (kernels/gemm/einsum.h -> GemmF32 for float32);
//   3. the result is permuted into the output's label order.
// Labels are case-sensitive letters; implicit output = the ellipsis dims, then every letter that
// occurs exactly once in the equation, in ASCII order (numpy's rule). Dims of the same label must
// match, except that size 1 broadcasts (for letters and ellipsis dims alike).
// float16 (in Einsum-12's type constraint; bfloat16 is not): the operands are widened to float32,
// the float32 steps run, and each output element is rounded once (graph/ops/float16_wrap.h).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_wrap.h"
#include "graph/ops/reduction_plan.h"
#include "graph/registry.h"
#include "kernels/gemm/einsum.h"
#include "kernels/memory/copy.h"
#include "kernels/memory/transpose.h"
#include "kernels/nn/reduce.h"

namespace simplecpp::graph {
namespace {

constexpr int kEllipsis = -1;       // in a parsed term
constexpr int kEllipsisBase = 256;  // label of ellipsis dim t (right-aligned): kEllipsisBase + t

// One step of the prepared computation. Buffers: 0..num_inputs-1 are the inputs, then
// temporaries; kOutput is the op's output.
constexpr int kOutput = -1;

struct Step {
  enum Kind { kGather, kTranspose, kReduce, kMatMul, kCopy } kind;
  int src = 0;
  int src2 = 0;
  int dst = 0;
  Dims dst_dims;
  kernels::AxisGatherPlan gather;
  kernels::TransposePlan transpose;
  std::vector<ReducePass> passes;
  bool trans_a = false, trans_b = false;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  size_t bytes = 0;  // kCopy
};

// An operand while planning: which buffer holds it, and its labels and dims (row-major).
struct Value {
  int buf = 0;
  std::vector<int> labels;
  Dims dims;
};

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Builds the step list: each helper appends the steps that turn one planning Value into another.
class EinsumPlanner {
 public:
  EinsumPlanner(size_t elem, int num_inputs, const std::map<int, int64_t>& size_of)
      : elem_(elem), num_buffers_(num_inputs), size_of_(size_of) {}

  // Sums out the labels of v for which keep(label) is false.
  void SumOut(Value& v, const std::function<bool(int)>& keep) {
    std::vector<bool> reduced(v.labels.size());
    bool any = false;
    Value r;
    for (size_t a = 0; a < v.labels.size(); ++a) {
      reduced[a] = !keep(v.labels[a]);
      any = any || reduced[a];
      if (!reduced[a]) {
        r.labels.push_back(v.labels[a]);
        r.dims.push_back(v.dims[a]);
      }
    }
    if (!any) return;
    Step s;
    s.kind = Step::kReduce;
    s.passes = PlanReducePasses(v.dims, reduced);
    Append(std::move(s), v, std::move(r));
  }

  // Permutes v into the label order `order` (a permutation of v.labels).
  void Permute(Value& v, const std::vector<int>& order) {
    if (order == v.labels) return;
    std::vector<int64_t> perm;
    Value r;
    for (int l : order) {
      const int64_t a = std::find(v.labels.begin(), v.labels.end(), l) - v.labels.begin();
      perm.push_back(a);
      r.labels.push_back(l);
      r.dims.push_back(v.dims[a]);
    }
    Step s;
    s.kind = Step::kTranspose;
    s.transpose = kernels::PlanTranspose(elem_, v.dims, perm);
    Append(std::move(s), v, std::move(r));
  }

  // Drops the size-1 axes of labels broadcast to more elsewhere (a free view), then takes the
  // diagonal of every repeated label (an axis gather).
  void DropBroadcastAxesAndTakeDiagonals(Value& v) {
    Value kept;
    kept.buf = v.buf;
    for (size_t a = 0; a < v.labels.size(); ++a) {
      if (v.dims[a] == 1 && size_of_.at(v.labels[a]) != 1) continue;
      kept.labels.push_back(v.labels[a]);
      kept.dims.push_back(v.dims[a]);
    }
    v = std::move(kept);
    std::vector<int> unique;
    for (int l : v.labels) {
      if (!Contains(unique, l)) unique.push_back(l);
    }
    if (unique.size() == v.labels.size()) return;
    Dims strides(v.dims.size(), 1);
    for (int64_t a = static_cast<int64_t>(v.dims.size()) - 2; a >= 0; --a) {
      strides[a] = strides[a + 1] * v.dims[a + 1];
    }
    Value r;
    std::vector<std::vector<int64_t>> offsets;
    for (int l : unique) {
      int64_t stride = 0, dim = 0;
      for (size_t a = 0; a < v.labels.size(); ++a) {
        if (v.labels[a] == l) {
          stride += strides[a];
          dim = v.dims[a];
        }
      }
      std::vector<int64_t> table(static_cast<size_t>(dim));
      for (int64_t x = 0; x < dim; ++x) table[x] = x * stride;
      offsets.push_back(std::move(table));
      r.labels.push_back(l);
      r.dims.push_back(dim);
    }
    Step s;
    s.kind = Step::kGather;
    s.gather = kernels::PlanAxisGather(elem_, r.dims, std::move(offsets));
    Append(std::move(s), v, std::move(r));
  }

  // cur * b over their shared labels: shared labels still needed later stay as batch dims, the
  // others are contracted; each side is permuted only when GEMM's transpose flags cannot take its
  // layout as it is.
  Value Contract(Value cur, Value b, const std::function<bool(int)>& needed) {
    SumOut(cur, [&](int l) { return Contains(b.labels, l) || needed(l); });
    SumOut(b, [&](int l) { return Contains(cur.labels, l) || needed(l); });
    std::vector<int> batch, left, contract, right;
    for (int l : cur.labels) {
      if (!Contains(b.labels, l)) {
        left.push_back(l);
      } else if (needed(l)) {
        batch.push_back(l);
      } else {
        contract.push_back(l);
      }
    }
    for (int l : b.labels) {
      if (!Contains(cur.labels, l)) right.push_back(l);
    }
    const auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
      x.insert(x.end(), y.begin(), y.end());
      x.insert(x.end(), z.begin(), z.end());
      return x;
    };
    const std::vector<int> a_plain = concat(batch, left, contract);
    const std::vector<int> b_plain = concat(batch, contract, right);
    Step s;
    s.kind = Step::kMatMul;
    s.trans_a = cur.labels == concat(batch, contract, left) && cur.labels != a_plain;
    s.trans_b = b.labels == concat(batch, right, contract) && b.labels != b_plain;
    if (!s.trans_a) Permute(cur, a_plain);
    if (!s.trans_b) Permute(b, b_plain);
    s.src = cur.buf;
    s.src2 = b.buf;
    s.dst = num_buffers_++;
    s.batch = Product(batch);
    s.m = Product(left);
    s.k = Product(contract);
    s.n = Product(right);
    Value r;
    r.labels = concat(batch, left, right);
    for (int l : r.labels) r.dims.push_back(size_of_.at(l));
    s.dst_dims = r.dims;
    steps_.push_back(std::move(s));
    r.buf = steps_.back().dst;
    return r;
  }

  // Sums out and permutes cur into the output's labels, and makes the last step write the output
  // (a copy when cur is still an input).
  void Finish(Value cur, const std::vector<int>& out_labels, int num_inputs, int64_t out_elements) {
    SumOut(cur, [&](int l) { return Contains(out_labels, l); });
    Permute(cur, out_labels);
    if (cur.buf < num_inputs) {
      Step s;
      s.kind = Step::kCopy;
      s.src = cur.buf;
      s.dst = num_buffers_++;
      s.bytes = static_cast<size_t>(out_elements) * elem_;
      steps_.push_back(std::move(s));
    }
    steps_.back().dst = kOutput;
  }

  std::vector<Step>& steps() { return steps_; }
  int num_buffers() const { return num_buffers_; }

 private:
  // Appends s reading v into a new buffer, and makes v the result r.
  void Append(Step s, Value& v, Value r) {
    s.src = v.buf;
    s.dst = num_buffers_++;
    s.dst_dims = r.dims;
    steps_.push_back(std::move(s));
    r.buf = steps_.back().dst;
    v = std::move(r);
  }
  int64_t Product(const std::vector<int>& labels) const {
    int64_t p = 1;
    for (int l : labels) p *= size_of_.at(l);
    return p;
  }

  size_t elem_;
  int num_buffers_;
  const std::map<int, int64_t>& size_of_;
  std::vector<Step> steps_;
};

class EinsumOp final : public Op {
 public:
  explicit EinsumOp(const OpInit& init) {
    const std::string raw = init.GetString("equation", "");
    if (!init.Has("equation")) init.Fail("required attribute 'equation' is missing");
    std::string eq;
    for (char c : raw) {
      if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
    }
    const size_t arrow = eq.find("->");
    explicit_output_ = arrow != std::string::npos;
    const std::string lhs = explicit_output_ ? eq.substr(0, arrow) : eq;
    if (explicit_output_) {
      const std::string rhs = eq.substr(arrow + 2);
      if (rhs.find("->") != std::string::npos) init.Fail("equation '" + raw + "' has two '->'");
      output_term_ = ParseTerm(init, raw, rhs);
      std::set<int> seen;
      for (int l : output_term_) {
        if (!seen.insert(l).second) {
          init.Fail("equation '" + raw + "': output label repeated");
        }
      }
    }
    size_t start = 0;
    for (;;) {
      const size_t comma = lhs.find(',', start);
      terms_.push_back(ParseTerm(init, raw, lhs.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (static_cast<int>(terms_.size()) != init.num_inputs()) {
      init.Fail("equation '" + raw + "' has " + std::to_string(terms_.size()) +
                " operand terms but the node has " + std::to_string(init.num_inputs()) + " inputs");
    }
    for (int l : output_term_) {
      if (l == kEllipsis) continue;
      bool found = false;
      for (const auto& t : terms_) found = found || Contains(t, l);
      if (!found) {
        init.Fail("equation '" + raw + "': output label '" + std::string(1, static_cast<char>(l)) +
                  "' does not appear in any input");
      }
    }
    equation_ = raw;
  }

  void InferTypes(TypeContext& ctx) const override {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      ctx.RequireDType(i, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                           DType::kUInt32, DType::kUInt64, DType::kFloat16});
      ctx.RequireSameDType(0, i);
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    if (ctx.input_dtype(0) == DType::kFloat16) {
      std::vector<int> all(static_cast<size_t>(ctx.num_inputs()));
      for (int i = 0; i < ctx.num_inputs(); ++i) all[i] = i;
      return widen16::PrepareWidened16(ctx, DType::kFloat16, all,
                                       [this](PrepareContext& c) { return PrepareTyped(c); });
    }
    return PrepareTyped(ctx);
  }

 private:
  // Prepare for a dtype with kernels (every allowed dtype except float16).
  RunFn PrepareTyped(PrepareContext& ctx) const;
  // The operands with ellipses expanded into right-aligned ellipsis labels, the broadcast size of
  // every label, and the number of ellipsis dims (checks ranks and label dims).
  std::vector<Value> LabelOperands(PrepareContext& ctx, std::map<int, int64_t>* size_of,
                                   int* max_ell) const;
  std::vector<int> OutputLabels(int max_ell) const;

  static std::vector<int> ParseTerm(const OpInit& init, const std::string& raw,
                                    const std::string& term) {
    std::vector<int> labels;
    bool has_ellipsis = false;
    for (size_t i = 0; i < term.size(); ++i) {
      const char c = term[i];
      if (std::isalpha(static_cast<unsigned char>(c))) {
        labels.push_back(static_cast<unsigned char>(c));
      } else if (c == '.' && term.compare(i, 3, "...") == 0 && !has_ellipsis) {
        labels.push_back(kEllipsis);
        has_ellipsis = true;
        i += 2;
      } else {
        init.Fail("cannot parse equation '" + raw + "' at '" + term.substr(i) + "'");
      }
    }
    return labels;
  }

  template <typename T>
  static RunFn MakeRun(std::vector<Step> steps, int num_inputs, int num_buffers, DType dtype);

  std::string equation_;
  std::vector<std::vector<int>> terms_;
  bool explicit_output_ = false;
  std::vector<int> output_term_;
};

std::vector<Value> EinsumOp::LabelOperands(PrepareContext& ctx, std::map<int, int64_t>* size_of,
                                           int* max_ell) const {
  const int num_inputs = ctx.num_inputs();
  const auto fail = [&](const std::string& m) { ctx.Fail("equation '" + equation_ + "': " + m); };
  *max_ell = 0;
  std::vector<int> ell_rank(num_inputs, 0);
  for (int i = 0; i < num_inputs; ++i) {
    const int letters = static_cast<int>(
        std::count_if(terms_[i].begin(), terms_[i].end(), [](int l) { return l != kEllipsis; }));
    const int rank = static_cast<int>(ctx.input_rank(i));
    if (Contains(terms_[i], kEllipsis) ? rank < letters : rank != letters) {
      fail("operand " + std::to_string(i) + " has rank " + std::to_string(rank) + " but " +
           std::to_string(letters) + " labels");
    }
    if (Contains(terms_[i], kEllipsis)) ell_rank[i] = rank - letters;
    *max_ell = std::max(*max_ell, ell_rank[i]);
  }
  std::vector<Value> values(num_inputs);
  for (int i = 0; i < num_inputs; ++i) {
    Value& v = values[i];
    v.buf = i;
    v.dims = ctx.input_dims(i);
    for (int l : terms_[i]) {
      if (l != kEllipsis) {
        v.labels.push_back(l);
        continue;
      }
      for (int t = 0; t < ell_rank[i]; ++t) v.labels.push_back(kEllipsisBase + *max_ell - ell_rank[i] + t);
    }
    for (size_t a = 0; a < v.labels.size(); ++a) {
      const int l = v.labels[a];
      const int64_t d = v.dims[a];
      for (size_t b = 0; b < a; ++b) {
        if (v.labels[b] == l && v.dims[b] != d) {
          fail("operand " + std::to_string(i) + " repeats a label over dims " +
               std::to_string(v.dims[b]) + " and " + std::to_string(d));
        }
      }
      auto it = size_of->find(l);
      if (it == size_of->end() || it->second == 1) {
        (*size_of)[l] = d;
      } else if (d != 1 && d != it->second) {
        fail("label dims " + std::to_string(it->second) + " and " + std::to_string(d) +
             " do not match (operand " + std::to_string(i) + ")");
      }
    }
  }
  return values;
}

std::vector<int> EinsumOp::OutputLabels(int max_ell) const {
  std::vector<int> out_labels;
  if (explicit_output_) {
    for (int l : output_term_) {
      if (l != kEllipsis) {
        out_labels.push_back(l);
      } else {
        for (int t = 0; t < max_ell; ++t) out_labels.push_back(kEllipsisBase + t);
      }
    }
    return out_labels;
  }
  for (int t = 0; t < max_ell; ++t) out_labels.push_back(kEllipsisBase + t);
  std::map<int, int> count;
  for (const auto& term : terms_) {
    for (int l : term) {
      if (l != kEllipsis) ++count[l];
    }
  }
  for (const auto& [l, c] : count) {  // std::map: ASCII order
    if (c == 1) out_labels.push_back(l);
  }
  return out_labels;
}

RunFn EinsumOp::PrepareTyped(PrepareContext& ctx) const {
  const int num_inputs = ctx.num_inputs();
  const DType dtype = ctx.input_dtype(0);
  std::map<int, int64_t> size_of;  // label -> broadcast size
  int max_ell = 0;
  std::vector<Value> values = LabelOperands(ctx, &size_of, &max_ell);
  const std::vector<int> out_labels = OutputLabels(max_ell);
  Dims out_dims;
  for (int l : out_labels) out_dims.push_back(size_of.at(l));
  ctx.set_output(0, dtype, out_dims);
  if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};

  EinsumPlanner plan(DTypeSize(dtype), num_inputs, size_of);
  // 1. Per operand: broadcast axes and diagonals, then the labels no one else needs summed out.
  for (int i = 0; i < num_inputs; ++i) {
    plan.DropBroadcastAxesAndTakeDiagonals(values[i]);
    plan.SumOut(values[i], [&](int l) {
      if (Contains(out_labels, l)) return true;
      for (int j = 0; j < num_inputs; ++j) {
        if (j != i && Contains(values[j].labels, l)) return true;
      }
      return false;
    });
  }
  // 2. Contract left to right.
  Value cur = values[0];
  for (int i = 1; i < num_inputs; ++i) {
    cur = plan.Contract(std::move(cur), values[i], [&](int l) {
      if (Contains(out_labels, l)) return true;
      for (int j = i + 1; j < num_inputs; ++j) {
        if (Contains(values[j].labels, l)) return true;
      }
      return false;
    });
  }
  // 3. Into the output's label order.
  plan.Finish(std::move(cur), out_labels, num_inputs, CheckedNumElements(out_dims));
  std::vector<Step> steps = std::move(plan.steps());
  const int num_buffers = plan.num_buffers();

  switch (dtype) {
    case DType::kFloat32:
      return MakeRun<float>(std::move(steps), num_inputs, num_buffers, dtype);
    case DType::kFloat64:
      return MakeRun<double>(std::move(steps), num_inputs, num_buffers, dtype);
    case DType::kInt32:
      return MakeRun<int32_t>(std::move(steps), num_inputs, num_buffers, dtype);
    case DType::kInt64:
      return MakeRun<int64_t>(std::move(steps), num_inputs, num_buffers, dtype);
    case DType::kUInt32:
      return MakeRun<uint32_t>(std::move(steps), num_inputs, num_buffers, dtype);
    case DType::kUInt64:
      return MakeRun<uint64_t>(std::move(steps), num_inputs, num_buffers, dtype);
    default:
      break;
  }
  ctx.Unsupported("dtype " + DTypeName(dtype));
}

template <typename T>
RunFn EinsumOp::MakeRun(std::vector<Step> steps, int num_inputs, int num_buffers, DType dtype) {
  const kernels::ReduceFn<T> sum = kernels::GetReduceFn<T>(kernels::ReduceKind::kSum);
  auto shared = std::make_shared<const std::vector<Step>>(std::move(steps));
  return [shared, sum, num_inputs, num_buffers, dtype](RunContext& rc) {
    std::vector<Tensor> bufs(static_cast<size_t>(num_buffers));
    for (int i = 0; i < num_inputs; ++i) bufs[i] = rc.input(i);
    for (const Step& s : *shared) {
      Tensor& dst = s.dst == kOutput ? rc.output(0) : bufs[s.dst];
      if (s.dst != kOutput) dst = rc.Scratch(dtype, s.dst_dims);
      const Tensor& src = bufs[s.src];
      switch (s.kind) {
        case Step::kGather:
          kernels::AxisGatherBytes(s.gather, src.raw_data(), dst.raw_data(), nullptr,
                                   rc.parallel());
          break;
        case Step::kTranspose:
          kernels::TransposeBytes(s.transpose, src.raw_data(), dst.raw_data(), rc.parallel());
          break;
        case Step::kReduce:
          RunReducePasses<T>(s.passes, sum, sum, dtype, src.template data<T>(),
                             dst.template data<T>(), rc);
          break;
        case Step::kMatMul:
          kernels::BatchedMatMul<T>(s.trans_a, s.trans_b, s.batch, s.m, s.n, s.k,
                                    src.template data<T>(), bufs[s.src2].template data<T>(),
                                    dst.template data<T>(), rc.parallel());
          break;
        case Step::kCopy:
          if (s.bytes > 0) std::memcpy(dst.raw_data(), src.raw_data(), s.bytes);
          break;
      }
    }
  };
}

}  // namespace

void RegisterEinsumOps(OpRegistry& registry) {
  registry.Register("", "Einsum", 12, MakeFactory<EinsumOp>());
}

}  // namespace simplecpp::graph
