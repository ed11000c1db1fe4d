// Control flow: If, Loop, Scan (opset 8 and 9+) and SequenceMap. Each compiles its body graphs
// into Plans at load (BindSubgraphs) and runs them with nested Executors. Values of the enclosing
// graph that a body reads arrive as implicit inputs (after the node's own inputs) and are passed
// to the body as its outer scope. If, Loop and SequenceMap pass sequences and optionals through
// (takes_values()).
#include <cstring>
#include <limits>

#include "graph/executor.h"
#include "graph/ops/families.h"
#include "graph/ops/subgraph_body.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

// Outer-scope values for a body. Ops with takes_values() see every value; others only tensors.
std::map<std::string, Value> OuterValues(const RunContext& ctx, int first_implicit,
                                         const std::vector<std::string>& names) {
  std::map<std::string, Value> outer;
  for (size_t i = 0; i < names.size(); ++i) {
    const int k = first_implicit + static_cast<int>(i);
    outer[names[i]] = ctx.value(k) ? *ctx.value(k) : Value(ctx.input(k));
  }
  return outer;
}

DType BodyOutputDType(const SubgraphBody& body, size_t i) {
  return body.plan().values()[body.plan().output_ids()[i]].dtype;
}
ValueType BodyOutputType(const SubgraphBody& body, size_t i) {
  return body.plan().values()[body.plan().output_ids()[i]].type;
}

// The type of a node input as the outer plan knows it (kUndefined dtype when unknown).
ValueType OuterType(const SubgraphContext& ctx, const std::string& name) {
  auto it = ctx.outer_types->find(name);
  return it == ctx.outer_types->end() ? ValueType() : it->second;
}

// The outer types of the named node inputs (one per name).
std::vector<ValueType> OuterTypes(const SubgraphContext& ctx,
                                  const std::vector<std::string>& names) {
  std::vector<ValueType> types;
  for (const std::string& name : names) types.push_back(OuterType(ctx, name));
  return types;
}

// Scan (8 and 9+) runs tensors only: output i is a tensor of body output i's dtype.
void InferScanOutputTypes(TypeContext& ctx, const SubgraphBody& body) {
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (!BodyOutputType(body, i).is_tensor()) {
      ctx.Unsupported("body output " + std::to_string(i) + " is " +
                      BodyOutputType(body, i).ToString() + "; Scan runs tensors only");
    }
    ctx.set_output_dtype(i, BodyOutputDType(body, i));
  }
}

bool ReadCondition(const Tensor& t, const RunContext& ctx) {
  if (t.dtype() != DType::kBool || t.num_elements() != 1) {
    ctx.Fail("condition must be a single bool, got " + DTypeName(t.dtype()) + DimsToString(t.dims()));
  }
  return t.data<uint8_t>()[0] != 0;
}

// ---- If ----

class IfOp final : public Op {
 public:
  explicit IfOp(const OpInit& init) : num_node_inputs_(init.num_inputs()) {
    then_graph_ = init.GetGraph("then_branch");
    else_graph_ = init.GetGraph("else_branch");
    if (!then_graph_ || !else_graph_) init.Fail("needs then_branch and else_branch graphs");
    if (then_graph_->outputs.size() != else_graph_->outputs.size()) {
      init.Fail("then_branch has " + std::to_string(then_graph_->outputs.size()) +
                " outputs, else_branch " + std::to_string(else_graph_->outputs.size()));
    }
    if (static_cast<size_t>(init.num_outputs()) != then_graph_->outputs.size()) {
      init.Fail("the node has " + std::to_string(init.num_outputs()) + " outputs, the branches " +
                std::to_string(then_graph_->outputs.size()));
    }
  }
  void BindSubgraphs(const SubgraphContext& ctx) override {
    implicit_ = ctx.implicit_inputs;
    then_ = CompileSubgraphBody(*then_graph_, ctx, {});
    else_ = CompileSubgraphBody(*else_graph_, ctx, {});
  }
  bool takes_values() const override { return true; }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kBool});
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      const ValueType a = BodyOutputType(*then_, i), b = BodyOutputType(*else_, i);
      // Branches may differ in optionality only (one gives a value, the other none).
      if (a.Element() != b.Element()) {
        ctx.Fail("output " + std::to_string(i) + " is " + a.ToString() + " in then_branch but " +
                 b.ToString() + " in else_branch");
      }
      ctx.set_output_type(i, a.optional ? a : b);
    }
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_dynamic(i, BodyOutputDType(*then_, i));
    auto then_body = then_, else_body = else_;
    const int first = num_node_inputs_;
    const std::vector<std::string> names = implicit_;
    return [then_body, else_body, first, names](RunContext& rc) {
      const SubgraphBody& body = ReadCondition(rc.input(0), rc) ? *then_body : *else_body;
      std::vector<Value> outs = body.Run({}, OuterValues(rc, first, names), rc.parallel());
      for (int i = 0; i < rc.num_outputs() && i < static_cast<int>(outs.size()); ++i) {
        rc.set_value(i, outs[i]);
      }
    };
  }

 private:
  int num_node_inputs_;
  std::shared_ptr<Graph> then_graph_, else_graph_;
  std::shared_ptr<const SubgraphBody> then_, else_;
  std::vector<std::string> implicit_;
};

// Copies `slice` (the per-iteration value) into position t of `out`, which has the slice's dims
// with a sequence axis of length `len` inserted at `axis`.
void StackInto(const Tensor& slice, Tensor& out, int64_t axis, int64_t t, int64_t len) {
  const size_t elem = DTypeSize(slice.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= slice.dim(d);
  for (int64_t d = axis; d < slice.rank(); ++d) inner *= slice.dim(d);
  const auto* src = static_cast<const uint8_t*>(slice.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + ((o * len + t) * inner) * elem, src + (o * inner) * elem, inner * elem);
  }
}

// The inverse: position t of `in` along `axis`, with that axis removed.
Tensor SliceAt(const Tensor& in, int64_t axis, int64_t t) {
  Dims dims = in.dims();
  const int64_t len = dims[axis];
  dims.erase(dims.begin() + axis);
  Tensor out(in.dtype(), dims);
  const size_t elem = DTypeSize(in.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.dim(d);
  for (int64_t d = axis + 1; d < in.rank(); ++d) inner *= in.dim(d);
  const auto* src = static_cast<const uint8_t*>(in.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + (o * inner) * elem, src + ((o * len + t) * inner) * elem, inner * elem);
  }
  return out;
}

// Stacks per-iteration values along `axis` (reversed when `reverse`).
Tensor Stack(const std::vector<Tensor>& slices, int64_t axis, bool reverse, const RunContext& rc,
             DType dtype) {
  if (slices.empty()) return Tensor(dtype, {0});
  const Tensor& first = slices.front();
  if (DTypeSize(dtype) == 0) rc.Fail("scan outputs of dtype " + DTypeName(dtype) + " are not supported");
  const int64_t len = static_cast<int64_t>(slices.size());
  if (axis < 0) axis += first.rank() + 1;
  if (axis < 0 || axis > first.rank()) rc.Fail("scan output axis out of range");
  Dims dims = first.dims();
  dims.insert(dims.begin() + axis, len);
  Tensor out(dtype, dims);
  for (int64_t t = 0; t < len; ++t) {
    const Tensor& s = slices[t];
    if (s.dims() != first.dims() || s.dtype() != dtype) {
      rc.Fail("scan output changes shape between iterations: " + DimsToString(first.dims()) +
              " then " + DimsToString(s.dims()));
    }
    StackInto(s, out, axis, reverse ? len - 1 - t : t, len);
  }
  return out;
}

// ---- Loop ----

class LoopOp final : public Op {
 public:
  explicit LoopOp(const OpInit& init) : num_node_inputs_(init.num_inputs()) {
    graph_ = init.GetGraph("body");
    if (!graph_) init.Fail("needs a body graph");
    if (init.num_inputs() < 2) init.Fail("needs inputs M and cond (either may be empty)");
    num_carried_ = init.num_inputs() - 2;
    if (graph_->inputs.size() != static_cast<size_t>(num_carried_ + 2)) {
      init.Fail("body has " + std::to_string(graph_->inputs.size()) + " inputs, expected " +
                std::to_string(num_carried_ + 2));
    }
    if (graph_->outputs.size() < static_cast<size_t>(num_carried_ + 1)) {
      init.Fail("body has too few outputs for " + std::to_string(num_carried_) + " loop-carried values");
    }
    num_scan_ = static_cast<int>(graph_->outputs.size()) - 1 - num_carried_;
    if (init.num_outputs() > num_carried_ + num_scan_) init.Fail("too many outputs");
    node_inputs_ = init.node().inputs;
  }
  bool takes_values() const override { return true; }
  void BindSubgraphs(const SubgraphContext& ctx) override {
    implicit_ = ctx.implicit_inputs;
    max_iterations_ = ctx.options->max_loop_iterations;
    std::vector<ValueType> types = {ValueType::TensorOf(DType::kInt64),
                                    ValueType::TensorOf(DType::kBool)};
    for (int i = 0; i < num_carried_; ++i) {
      // Loop-carried types come from the node's initial values (known to the outer plan).
      types.push_back(OuterType(ctx, node_inputs_[2 + i]));
    }
    body_ = CompileSubgraphBody(*graph_, ctx, types);
  }
  void InferTypes(TypeContext& ctx) const override {
    if (ctx.has_input(0)) ctx.RequireDType(0, {DType::kInt64});
    if (ctx.has_input(1)) ctx.RequireDType(1, {DType::kBool});
    for (int i = 0; i < num_carried_; ++i) ctx.RequireInput(2 + i);
    for (int i = 0; i < num_carried_ + num_scan_ && i < ctx.num_outputs(); ++i) {
      const ValueType t = BodyOutputType(*body_, 1 + i);
      if (i >= num_carried_ && !t.is_tensor()) {
        ctx.Unsupported("scan output " + std::to_string(i - num_carried_) + " is " + t.ToString() +
                        "; only tensors can be stacked");
      }
      ctx.set_output_type(i, t);
    }
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_dynamic(i, BodyOutputDType(*body_, 1 + i));
    auto body = body_;
    const int first = num_node_inputs_, carried = num_carried_, scans = num_scan_;
    const std::vector<std::string> names = implicit_;
    std::vector<std::string> body_inputs;
    for (const ValueInfo& v : body->plan().inputs()) body_inputs.push_back(v.name);
    std::vector<DType> scan_types;
    for (int k = 0; k < scans; ++k) scan_types.push_back(BodyOutputDType(*body, 1 + carried + k));
    const int64_t max_iterations = max_iterations_;
    return [body, first, carried, scans, names, body_inputs, scan_types,
            max_iterations](RunContext& rc) {
      const bool has_m = rc.has_input(0), has_cond = rc.has_input(1);
      int64_t max_trips = -1;
      if (has_m) {
        if (rc.input(0).num_elements() != 1) rc.Fail("M must have one element");
        max_trips = rc.input(0).data<int64_t>()[0];
      }
      bool cond = has_cond ? ReadCondition(rc.input(1), rc) : true;
      std::vector<Value> carried_values;
      for (int i = 0; i < carried; ++i) carried_values.push_back(*rc.value(2 + i));
      std::vector<std::vector<Tensor>> scan_values(scans);
      const auto outer = OuterValues(rc, first, names);
      Tensor iter(DType::kInt64, {});
      Tensor cond_t(DType::kBool, {});
      for (int64_t i = 0; (max_trips < 0 || i < max_trips) && cond; ++i) {
        if (i >= max_iterations) {
          throw Error(ErrorCode::kLimitExceeded,
                      rc.node().Describe() + ": the loop runs more than " +
                          std::to_string(max_iterations) +
                          " iterations, over the limit max_loop_iterations=" +
                          std::to_string(max_iterations));
        }
        std::map<std::string, Value> feeds;
        Tensor it_value(DType::kInt64, {});
        it_value.data<int64_t>()[0] = i;
        Tensor c_value(DType::kBool, {});
        c_value.data<uint8_t>()[0] = cond ? 1 : 0;
        feeds[body_inputs[0]] = it_value;
        feeds[body_inputs[1]] = c_value;
        for (int k = 0; k < carried; ++k) feeds[body_inputs[2 + k]] = carried_values[k];
        std::vector<Value> outs = body->Run(feeds, outer, rc.parallel());
        if (!outs[0].is_tensor()) rc.Fail("the body's condition output is " + outs[0].Describe());
        cond = ReadCondition(outs[0].tensor(), rc);
        for (int k = 0; k < carried; ++k) carried_values[k] = outs[1 + k];
        for (int k = 0; k < scans; ++k) scan_values[k].push_back(outs[1 + carried + k].tensor());
      }
      for (int k = 0; k < carried && k < rc.num_outputs(); ++k) rc.set_value(k, carried_values[k]);
      for (int k = 0; k < scans && carried + k < rc.num_outputs(); ++k) {
        rc.set_output(carried + k, Stack(scan_values[k], 0, false, rc, scan_types[k]));
      }
    };
  }
 private:
  int num_node_inputs_;
  int num_carried_ = 0, num_scan_ = 0;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<const SubgraphBody> body_;
  std::vector<std::string> implicit_;
  std::vector<std::string> node_inputs_;
  int64_t max_iterations_ = std::numeric_limits<int64_t>::max();
};

// Copies all of `slice` into `out` at element offset `index * slice.num_elements()` (out is
// [..., slice dims] and index counts slices of that size).
void CopySliceInto(const Tensor& slice, Tensor& out, int64_t index) {
  const size_t bytes = static_cast<size_t>(slice.num_elements()) * DTypeSize(slice.dtype());
  if (bytes == 0) return;
  std::memcpy(static_cast<uint8_t*>(out.raw_data()) + static_cast<size_t>(index) * bytes,
              slice.raw_data(), bytes);
}

// ---- Scan (opset 9+) ----

class ScanOp final : public Op {
 public:
  explicit ScanOp(const OpInit& init) : num_node_inputs_(init.num_inputs()) {
    graph_ = init.GetGraph("body");
    if (!graph_) init.Fail("needs a body graph");
    num_scan_inputs_ = init.RequireInt("num_scan_inputs");
    num_state_ = init.num_inputs() - num_scan_inputs_;
    if (num_scan_inputs_ < 1 || num_state_ < 0) init.Fail("bad num_scan_inputs");
    num_scan_outputs_ = static_cast<int64_t>(graph_->outputs.size()) - num_state_;
    if (num_scan_outputs_ < 0 || graph_->inputs.size() != static_cast<size_t>(init.num_inputs())) {
      init.Fail("body inputs/outputs do not match the node's state and scan values");
    }
    input_axes_ = init.GetInts("scan_input_axes", std::vector<int64_t>(num_scan_inputs_, 0));
    input_dirs_ = init.GetInts("scan_input_directions", std::vector<int64_t>(num_scan_inputs_, 0));
    output_axes_ = init.GetInts("scan_output_axes", std::vector<int64_t>(num_scan_outputs_, 0));
    output_dirs_ = init.GetInts("scan_output_directions", std::vector<int64_t>(num_scan_outputs_, 0));
    if (static_cast<int64_t>(input_axes_.size()) != num_scan_inputs_ ||
        static_cast<int64_t>(input_dirs_.size()) != num_scan_inputs_ ||
        static_cast<int64_t>(output_axes_.size()) != num_scan_outputs_ ||
        static_cast<int64_t>(output_dirs_.size()) != num_scan_outputs_) {
      init.Fail("scan axes/directions attributes have the wrong length");
    }
    for (int i = 0; i < init.num_inputs(); ++i) node_inputs_.push_back(init.node().inputs[i]);
  }
  void BindSubgraphs(const SubgraphContext& ctx) override {
    implicit_ = ctx.implicit_inputs;
    body_ = CompileSubgraphBody(*graph_, ctx, OuterTypes(ctx, node_inputs_));
  }
  void InferTypes(TypeContext& ctx) const override {
    InferScanOutputTypes(ctx, *body_);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_dynamic(i, BodyOutputDType(*body_, i));
    const int64_t state = num_state_, nin = num_scan_inputs_, nout = num_scan_outputs_;
    std::vector<int64_t> in_axes = input_axes_, in_dirs = input_dirs_;
    for (int64_t j = 0; j < nin; ++j) {
      const int64_t rank = ctx.input_rank(static_cast<int>(state + j));
      const int64_t a = in_axes[j] < 0 ? in_axes[j] + rank : in_axes[j];
      if (a < 0 || a >= rank) ctx.Fail("scan_input_axes[" + std::to_string(j) + "] out of range");
      in_axes[j] = a;
    }
    int64_t seq = -1;
    for (int64_t j = 0; j < nin; ++j) {
      const int64_t len = ctx.input_dims(static_cast<int>(state + j))[in_axes[j]];
      if (seq >= 0 && len != seq) ctx.Fail("scan inputs have different sequence lengths");
      seq = len;
    }
    auto body = body_;
    const int first = num_node_inputs_;
    const std::vector<std::string> names = implicit_;
    std::vector<std::string> body_inputs;
    for (const ValueInfo& v : body->plan().inputs()) body_inputs.push_back(v.name);
    std::vector<int64_t> out_axes = output_axes_, out_dirs = output_dirs_;
    std::vector<DType> out_types;
    for (int64_t k = 0; k < nout; ++k) out_types.push_back(BodyOutputDType(*body, state + k));
    return [=](RunContext& rc) {
      std::vector<Tensor> states;
      for (int64_t i = 0; i < state; ++i) states.push_back(rc.input(static_cast<int>(i)));
      auto tensor_of = [&rc](const Value& v) -> const Tensor& {
        if (!v.is_tensor()) rc.Fail("the body gave " + v.Describe() + ", expected a tensor");
        return v.tensor();
      };
      std::vector<std::vector<Tensor>> scans(nout);
      const auto outer = OuterValues(rc, first, names);
      for (int64_t t = 0; t < seq; ++t) {
        std::map<std::string, Value> feeds;
        for (int64_t i = 0; i < state; ++i) feeds[body_inputs[i]] = states[i];
        for (int64_t j = 0; j < nin; ++j) {
          const Tensor& x = rc.input(static_cast<int>(state + j));
          if (DTypeSize(x.dtype()) == 0) rc.Fail("scan inputs of dtype " + DTypeName(x.dtype()) + " are not supported");
          feeds[body_inputs[state + j]] = SliceAt(x, in_axes[j], in_dirs[j] ? seq - 1 - t : t);
        }
        std::vector<Value> outs = body->Run(feeds, outer, rc.parallel());
        for (int64_t i = 0; i < state; ++i) states[i] = tensor_of(outs[i]);
        for (int64_t k = 0; k < nout; ++k) scans[k].push_back(tensor_of(outs[state + k]));
      }
      for (int64_t i = 0; i < state && i < rc.num_outputs(); ++i) rc.set_output(static_cast<int>(i), states[i]);
      for (int64_t k = 0; k < nout && state + k < rc.num_outputs(); ++k) {
        rc.set_output(static_cast<int>(state + k),
                      Stack(scans[k], out_axes[k], out_dirs[k] != 0, rc, out_types[k]));
      }
    };
  }

 private:
  int num_node_inputs_;
  int64_t num_scan_inputs_ = 0, num_state_ = 0, num_scan_outputs_ = 0;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<const SubgraphBody> body_;
  std::vector<std::string> implicit_, node_inputs_;
  std::vector<int64_t> input_axes_, input_dirs_, output_axes_, output_dirs_;
};

// What a Scan-8 node's run needs, fixed by Prepare.
struct Scan8Plan {
  int64_t state = 0, nin = 0, nout = 0;  // initial states, scan inputs, scan outputs
  int64_t batch = -1, seq = -1;
  int first = 0;                          // the first implicit input
  std::vector<std::string> names;         // the implicit inputs' names
  std::vector<std::string> body_inputs;   // the body's input names
  std::vector<int64_t> dirs;              // per scan input: 1 reads it backward
  std::vector<DType> out_types;           // per output: the body output's dtype
  std::shared_ptr<const SubgraphBody> body;
};

// Checks the shapes: every state/scan input has the batch axis first, scan inputs the sequence
// axis next, and sequence_lens is [batch]. Sets plan->batch and plan->seq.
void CheckScan8Shapes(PrepareContext& ctx, Scan8Plan* plan) {
  const int64_t state = plan->state, nin = plan->nin;
  int64_t batch = -1, seq = -1;
  for (int64_t i = 0; i < state + nin; ++i) {
    const int k = static_cast<int>(1 + i);
    const bool is_scan = i >= state;
    const std::string what = is_scan ? "scan input " + std::to_string(i - state)
                                     : "initial state " + std::to_string(i);
    const Dims& dims = ctx.input_dims(k);
    if (static_cast<int64_t>(dims.size()) < (is_scan ? 2 : 1)) {
      ctx.Fail(what + " has shape " + DimsToString(dims) + "; Scan-8 needs [batch" +
               (is_scan ? ", seq" : "") + ", ...]");
    }
    if (DTypeSize(ctx.input_dtype(k)) == 0) {
      ctx.Unsupported(what + " has dtype " + DTypeName(ctx.input_dtype(k)) + "; not supported");
    }
    if (batch >= 0 && dims[0] != batch) {
      ctx.Fail(what + " has batch size " + std::to_string(dims[0]) + ", earlier inputs " +
               std::to_string(batch));
    }
    batch = dims[0];
    if (is_scan) {
      if (seq >= 0 && dims[1] != seq) {
        ctx.Fail(what + " has sequence length " + std::to_string(dims[1]) + ", earlier scan inputs " +
                 std::to_string(seq));
      }
      seq = dims[1];
    }
  }
  if (ctx.has_input(0)) {
    const Dims& d = ctx.input_dims(0);
    if (d.size() != 1 || d[0] != batch) {
      ctx.Fail("sequence_lens has shape " + DimsToString(d) + ", expected [" + std::to_string(batch) + "]");
    }
  }
  plan->batch = batch;
  plan->seq = seq;
}

// Each batch item's sequence length: sequence_lens, or seq for every item without it.
std::vector<int64_t> ReadScan8Lengths(RunContext& rc, const Scan8Plan& p) {
  const int64_t batch = p.batch, seq = p.seq;
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (rc.has_input(0)) {
    const Tensor& sl = rc.input(0);
    if (sl.num_elements() != batch) {
      rc.Fail("sequence_lens has " + std::to_string(sl.num_elements()) + " entries, batch size is " +
              std::to_string(batch));
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t v = sl.dtype() == DType::kInt64 ? sl.data<int64_t>()[b] : sl.data<int32_t>()[b];
      if (v < 0 || v > seq) {
        rc.Fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(v) +
                " is out of range [0, " + std::to_string(seq) + "]");
      }
      lens[b] = v;
    }
  }
  return lens;
}

const Tensor& BodyTensor(RunContext& rc, const Value& v) {
  if (!v.is_tensor()) rc.Fail("the body gave " + v.Describe() + ", expected a tensor");
  return v.tensor();
}

// Scan-8's outputs, allocated once the first batch item tells their per-item shape.
struct Scan8Results {
  std::vector<Tensor> results;
  std::vector<Dims> item_dims;

  explicit Scan8Results(size_t n) : results(n), item_dims(n) {}

  // Copies `slice` to position `index` of output k ([batch, ...] or [batch, seq, ...]).
  void Store(RunContext& rc, const Scan8Plan& p, int64_t k, const Tensor& slice, int64_t index,
             bool is_scan) {
    if (slice.dtype() != p.out_types[k]) {
      rc.Fail("body output " + std::to_string(k) + " is " + DTypeName(slice.dtype()) + ", expected " +
              DTypeName(p.out_types[k]));
    }
    if (!results[k].defined()) {
      Dims dims = slice.dims();
      if (is_scan) dims.insert(dims.begin(), p.seq);
      dims.insert(dims.begin(), p.batch);
      results[k] = Tensor(p.out_types[k], dims);  // zero-filled: padding past short sequences
      item_dims[k] = slice.dims();
    } else if (slice.dims() != item_dims[k]) {
      rc.Fail(std::string(is_scan ? "scan output " : "final state ") + std::to_string(k) +
              " has shape " + DimsToString(slice.dims()) + " for one batch item or iteration but " +
              DimsToString(item_dims[k]) + " for another");
    }
    CopySliceInto(slice, results[k], index);
  }
};

// Runs the body len times on batch item b's slices and stores its scan outputs and final states.
void RunScan8Item(RunContext& rc, const Scan8Plan& p, int64_t b, int64_t len,
                  const std::map<std::string, Value>& outer, Scan8Results* out) {
  const int64_t state = p.state, nin = p.nin;
  std::vector<Tensor> states, inputs;
  for (int64_t i = 0; i < state; ++i) states.push_back(SliceAt(rc.input(static_cast<int>(1 + i)), 0, b));
  for (int64_t j = 0; j < nin; ++j) inputs.push_back(SliceAt(rc.input(static_cast<int>(1 + state + j)), 0, b));
  for (int64_t t = 0; t < len; ++t) {
    std::map<std::string, Value> feeds;
    for (int64_t i = 0; i < state; ++i) feeds[p.body_inputs[i]] = states[i];
    for (int64_t j = 0; j < nin; ++j) {
      feeds[p.body_inputs[state + j]] = SliceAt(inputs[j], 0, p.dirs[j] ? len - 1 - t : t);
    }
    std::vector<Value> outs = p.body->Run(feeds, outer, rc.parallel());
    for (int64_t i = 0; i < state; ++i) states[i] = BodyTensor(rc, outs[i]);
    for (int64_t k = 0; k < p.nout; ++k) {
      if (state + k < rc.num_outputs()) {
        out->Store(rc, p, state + k, BodyTensor(rc, outs[state + k]), b * p.seq + t, true);
      }
    }
  }
  for (int64_t i = 0; i < state; ++i) out->Store(rc, p, i, states[i], b, false);
}

void RunScan8(RunContext& rc, const Scan8Plan& p) {
  const std::vector<int64_t> lens = ReadScan8Lengths(rc, p);
  const auto outer = OuterValues(rc, p.first, p.names);
  const int64_t state = p.state;
  Scan8Results out(static_cast<size_t>(state + p.nout));
  for (int64_t b = 0; b < p.batch; ++b) RunScan8Item(rc, p, b, lens[b], outer, &out);
  for (int64_t k = 0; k < state + p.nout && k < rc.num_outputs(); ++k) {
    if (!out.results[k].defined()) {
      if (k < state) {  // batch 0: nothing ran, the final states are the (empty) initial ones
        out.results[k] = rc.input(static_cast<int>(1 + k));
      } else {
        rc.Fail("cannot give scan output " + std::to_string(k - state) +
                " a shape: no iteration ran (batch " + std::to_string(p.batch) +
                ", all sequence lengths 0)");
      }
    }
    rc.set_output(static_cast<int>(k), std::move(out.results[k]));
  }
}

// ---- Scan (opset 8) ----
// Batch-major form. Inputs: optional sequence_lens [batch] (int64 per the spec; int32 accepted),
// then N initial states [batch, ...] and M scan inputs [batch, seq, ...]. Each batch item b runs
// the body sequence_lens[b] times on its own slices (scan input j read forward, or backward over
// positions len-1..0 when directions[j] == 1). Outputs: N final states [batch, ...] and K scan
// outputs [batch, seq, ...]; positions at or beyond an item's length are zero.
class Scan8Op final : public Op {
 public:
  explicit Scan8Op(const OpInit& init) : num_node_inputs_(init.num_inputs()) {
    graph_ = init.GetGraph("body");
    if (!graph_) init.Fail("needs a body graph");
    if (init.num_inputs() < 1) init.Fail("needs the (possibly empty) sequence_lens input");
    num_scan_inputs_ = init.RequireInt("num_scan_inputs");
    num_state_ = init.num_inputs() - 1 - num_scan_inputs_;
    if (num_scan_inputs_ < 1 || num_state_ < 0) {
      init.Fail("num_scan_inputs = " + std::to_string(num_scan_inputs_) + " does not fit " +
                std::to_string(init.num_inputs() - 1) + " state and scan inputs");
    }
    num_scan_outputs_ = static_cast<int64_t>(graph_->outputs.size()) - num_state_;
    if (num_scan_outputs_ < 0 || graph_->inputs.size() != static_cast<size_t>(init.num_inputs() - 1)) {
      init.Fail("body has " + std::to_string(graph_->inputs.size()) + " inputs and " +
                std::to_string(graph_->outputs.size()) + " outputs; the node has " +
                std::to_string(num_state_) + " states and " + std::to_string(num_scan_inputs_) +
                " scan inputs");
    }
    if (init.num_outputs() > num_state_ + num_scan_outputs_) init.Fail("too many outputs");
    dirs_ = init.GetInts("directions", std::vector<int64_t>(num_scan_inputs_, 0));
    if (static_cast<int64_t>(dirs_.size()) != num_scan_inputs_) {
      init.Fail("directions has " + std::to_string(dirs_.size()) + " entries, expected " +
                std::to_string(num_scan_inputs_));
    }
    for (int64_t d : dirs_) {
      if (d != 0 && d != 1) init.Fail("directions entries must be 0 or 1, got " + std::to_string(d));
    }
    for (int i = 1; i < init.num_inputs(); ++i) node_inputs_.push_back(init.node().inputs[i]);
  }
  void BindSubgraphs(const SubgraphContext& ctx) override {
    implicit_ = ctx.implicit_inputs;
    // Body inputs: the node's inputs minus batch (and seq) axes.
    body_ = CompileSubgraphBody(*graph_, ctx, OuterTypes(ctx, node_inputs_));
  }
  void InferTypes(TypeContext& ctx) const override {
    if (ctx.has_input(0)) ctx.RequireDType(0, {DType::kInt64, DType::kInt32});
    for (int i = 1; i < num_node_inputs_; ++i) ctx.RequireInput(i);
    InferScanOutputTypes(ctx, *body_);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_dynamic(i, BodyOutputDType(*body_, i));
    Scan8Plan plan;
    plan.state = num_state_;
    plan.nin = num_scan_inputs_;
    plan.nout = num_scan_outputs_;
    CheckScan8Shapes(ctx, &plan);
    plan.body = body_;
    plan.first = num_node_inputs_;
    plan.names = implicit_;
    for (const ValueInfo& v : body_->plan().inputs()) plan.body_inputs.push_back(v.name);
    plan.dirs = dirs_;
    for (int64_t k = 0; k < plan.state + plan.nout; ++k) {
      plan.out_types.push_back(BodyOutputDType(*body_, k));
    }
    return [plan](RunContext& rc) { RunScan8(rc, plan); };
  }

 private:
  int num_node_inputs_;
  int64_t num_scan_inputs_ = 0, num_state_ = 0, num_scan_outputs_ = 0;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<const SubgraphBody> body_;
  std::vector<std::string> implicit_, node_inputs_;
  std::vector<int64_t> dirs_;
};

// ---- SequenceMap (opset 17) ----
// Runs the body once per position i of the first input sequence. Body input 0 is element i of
// input_sequence; each additional input is element i of a sequence (of the same length) or the
// same tensor every time. Body output k, collected over i, is output sequence k.
class SequenceMapOp final : public Op {
 public:
  explicit SequenceMapOp(const OpInit& init) : num_node_inputs_(init.num_inputs()) {
    graph_ = init.GetGraph("body");
    if (!graph_) init.Fail("needs a body graph");
    if (init.num_inputs() < 1) init.Fail("needs input_sequence");
    if (graph_->inputs.size() != static_cast<size_t>(init.num_inputs())) {
      init.Fail("body has " + std::to_string(graph_->inputs.size()) + " inputs, the node " +
                std::to_string(init.num_inputs()));
    }
    if (graph_->outputs.size() != static_cast<size_t>(init.num_outputs())) {
      init.Fail("body has " + std::to_string(graph_->outputs.size()) + " outputs, the node " +
                std::to_string(init.num_outputs()));
    }
    node_inputs_ = init.node().inputs;
  }
  bool takes_values() const override { return true; }
  void BindSubgraphs(const SubgraphContext& ctx) override {
    implicit_ = ctx.implicit_inputs;
    std::vector<ValueType> types;
    for (size_t i = 0; i < node_inputs_.size(); ++i) {
      const ValueType t = OuterType(ctx, node_inputs_[i]);
      if (t.optional) {
        throw Error(ErrorCode::kUnsupported,
                    "SequenceMap input '" + node_inputs_[i] + "' is " + t.ToString() +
                        "; expected a sequence or a tensor");
      }
      types.push_back(ValueType::TensorOf(t.dtype));  // the body sees one element
    }
    body_ = CompileSubgraphBody(*graph_, ctx, types);
  }
  void InferTypes(TypeContext& ctx) const override {
    for (int i = 0; i < num_node_inputs_; ++i) ctx.RequireInput(i);
    if (!ctx.input_type(0).sequence || ctx.input_type(0).optional) {
      ctx.Fail("input_sequence is " + ctx.input_type(0).ToString() + ", expected a sequence");
    }
    for (int k = 0; k < ctx.num_outputs(); ++k) {
      const ValueType t = BodyOutputType(*body_, k);
      if (!t.is_tensor()) ctx.Unsupported("body output " + std::to_string(k) + " is " + t.ToString());
      ctx.set_output_type(k, ValueType::SequenceOf(t.dtype));
    }
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output_dynamic(k, BodyOutputDType(*body_, k));
    auto body = body_;
    const int first = num_node_inputs_;
    const std::vector<std::string> names = implicit_;
    std::vector<std::string> body_inputs;
    for (const ValueInfo& v : body->plan().inputs()) body_inputs.push_back(v.name);
    std::vector<DType> out_types;
    for (int k = 0; k < ctx.num_outputs(); ++k) out_types.push_back(BodyOutputDType(*body, k));
    return [body, first, names, body_inputs, out_types](RunContext& rc) {
      const std::vector<Tensor>& seq = rc.value(0)->sequence();
      const size_t n = seq.size();
      for (int j = 1; j < first; ++j) {
        const Value& v = *rc.value(j);
        if (v.is_sequence() && v.sequence().size() != n) {
          rc.Fail("additional input " + std::to_string(j) + " has " +
                  std::to_string(v.sequence().size()) + " elements, input_sequence " +
                  std::to_string(n));
        }
      }
      const auto outer = OuterValues(rc, first, names);
      std::vector<std::vector<Tensor>> results(out_types.size());
      for (size_t i = 0; i < n; ++i) {
        std::map<std::string, Value> feeds;
        feeds[body_inputs[0]] = seq[i];
        for (int j = 1; j < first; ++j) {
          const Value& v = *rc.value(j);
          feeds[body_inputs[j]] = v.is_sequence() ? Value(v.sequence()[i]) : v;
        }
        std::vector<Value> outs = body->Run(feeds, outer, rc.parallel());
        for (size_t k = 0; k < results.size(); ++k) {
          if (!outs[k].is_tensor()) rc.Fail("the body gave " + outs[k].Describe());
          results[k].push_back(outs[k].tensor());
        }
      }
      for (size_t k = 0; k < results.size(); ++k) {
        rc.set_value(static_cast<int>(k), Value::Sequence(out_types[k], std::move(results[k])));
      }
    };
  }

 private:
  int num_node_inputs_;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<const SubgraphBody> body_;
  std::vector<std::string> implicit_, node_inputs_;
};

}  // namespace

void RegisterControlFlowOps(OpRegistry& registry) {
  registry.Register("", "SequenceMap", 17, MakeFactory<SequenceMapOp>());
  for (int v : {1, 11, 13, 16, 19, 21, 23, 24}) registry.Register("", "If", v, MakeFactory<IfOp>());
  for (int v : {1, 11, 13, 16, 19, 21, 23, 24}) registry.Register("", "Loop", v, MakeFactory<LoopOp>());
  registry.Register("", "Scan", 8, MakeFactory<Scan8Op>());
  for (int v : {9, 11, 16, 19, 21, 23, 24}) registry.Register("", "Scan", v, MakeFactory<ScanOp>());
}

}  // namespace simplecpp::graph
