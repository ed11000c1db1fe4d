// Ops that copy parts of their inputs: Concat, Split, Slice, Gather, GatherElements, Expand,
// Tile. Shapes, axes and index tables are worked out in Prepare; the RunFns call the kernels of
// kernels/memory/copy.h (byte-generic, with std::string twins).
#include <algorithm>
#include <memory>

#include "graph/ops/tensor_ops_internal.h"
#include "kernels/memory/copy.h"

namespace simplecpp::graph::tensor_ops {

RunFn AxisGatherRunFn(DType dtype, const Dims& out_dims, std::vector<std::vector<int64_t>> offsets) {
  const size_t es = dtype == DType::kString ? 1 : DTypeSize(dtype);
  auto plan = std::make_shared<const kernels::AxisGatherPlan>(
      kernels::PlanAxisGather(es, out_dims, std::move(offsets)));
  if (dtype == DType::kString) {
    return [plan](RunContext& ctx) {
      kernels::AxisGatherStrings(*plan, ctx.input(0).strings().data(),
                                 ctx.output(0).strings().data(), nullptr, ctx.parallel());
    };
  }
  return [plan](RunContext& ctx) {
    kernels::AxisGatherBytes(*plan, ctx.input(0).raw_data(), ctx.output(0).raw_data(), nullptr,
                             ctx.parallel());
  };
}

namespace {

// Copies rows of `row_len` elements: src rows are src_stride apart, dst rows dst_stride apart.
void CopyRows(const Tensor& src, int64_t src_offset, int64_t src_stride, Tensor& dst,
              int64_t dst_offset, int64_t dst_stride, int64_t rows, int64_t row_len,
              const kernels::Parallel& parallel) {
  if (src.dtype() == DType::kString) {
    kernels::CopyRowsStrings(src.strings().data() + src_offset, src_stride,
                             dst.strings().data() + dst_offset, dst_stride, rows, row_len, parallel);
    return;
  }
  const size_t es = DTypeSize(src.dtype());
  kernels::CopyRowsBytes(static_cast<const unsigned char*>(src.raw_data()) + src_offset * es,
                         src_stride,
                         static_cast<unsigned char*>(dst.raw_data()) + dst_offset * es,
                         dst_stride, rows, row_len, es, parallel);
}

// ---- Concat ----
}  // namespace

ConcatShape ResolveConcatShape(const PrepareContext& ctx, int64_t axis_attr) {
  const Dims& first = ctx.input_dims(0);
  const int64_t r = static_cast<int64_t>(first.size());
  if (r == 0) ctx.Fail("cannot concatenate scalars");
  const int64_t axis = NormalizeAxis(axis_attr, r, [&](const std::string& m) { ctx.Fail(m); });
  ConcatShape shape;
  shape.out = first;
  shape.out[axis] = 0;
  int64_t inner = 1;
  for (int64_t k = 0; k < axis; ++k) shape.outer *= first[k];
  for (int64_t k = axis + 1; k < r; ++k) inner *= first[k];
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Dims& d = ctx.input_dims(i);
    if (static_cast<int64_t>(d.size()) != r) {
      ctx.Fail("input " + std::to_string(i) + " has rank " + std::to_string(d.size()) +
               ", input 0 has rank " + std::to_string(r));
    }
    for (int64_t k = 0; k < r; ++k) {
      if (k != axis && d[k] != first[k]) {
        ctx.Fail("input " + std::to_string(i) + " has shape " + DimsToString(d) +
                 ", which differs from input 0 " + DimsToString(first) + " outside axis " +
                 std::to_string(axis));
      }
    }
    shape.rows.push_back(d[axis] * inner);
    shape.out[axis] += d[axis];
  }
  return shape;
}

namespace {

class ConcatOp : public Op {
 public:
  explicit ConcatOp(const OpInit& init) {
    const int64_t opset = init.opset();
    if (opset >= 4 && !init.Has("axis")) init.Fail("required attribute 'axis' is missing");
    axis_ = init.GetInt("axis", 1);
    if (opset < 11 && axis_ < 0) init.Fail("axis must be >= 0 before opset 11");
  }
  void InferTypes(TypeContext& ctx) const override {
    if (ctx.num_inputs() < 1) ctx.Fail("needs at least one input");
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      RequireMovable(ctx, i);
      if (i > 0) ctx.RequireSameDType(0, i);
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const ConcatShape shape = ResolveConcatShape(ctx, axis_);
    ctx.set_output(0, ctx.input_dtype(0), shape.out);
    int64_t out_row = 0;
    for (int64_t row : shape.rows) out_row += row;
    const std::vector<int64_t> rows = shape.rows;
    const int64_t outer = shape.outer;
    return [rows, outer, out_row](RunContext& ctx) {
      int64_t offset = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        const int64_t row = rows[i];
        CopyRows(ctx.input(static_cast<int>(i)), 0, row, ctx.output(0), offset, out_row, outer, row,
                 ctx.parallel());
        offset += row;
      }
    };
  }

 private:
  int64_t axis_;
};

// ---- Split (split attribute before 13, input from 13; num_outputs from 18) ----
class SplitOp : public Op {
 public:
  explicit SplitOp(const OpInit& init)
      : split_input_(init.opset() >= 13 || init.opset() == 1),
        ceil_chunks_(init.opset() >= 18),
        axis_(init.GetInt("axis", 0)),
        num_outputs_(init.num_outputs()) {
    const int64_t opset = init.opset();
    if (opset < 13) {
      has_split_attr_ = init.Has("split");
      split_attr_ = init.GetInts("split");
    }
    if (opset >= 18 && init.Has("num_outputs")) {
      num_outputs_attr_ = init.GetInt("num_outputs", 0);
      if (num_outputs_attr_ < 1) init.Fail("num_outputs must be >= 1");
      if (num_outputs_attr_ != init.num_outputs()) {
        init.Fail("num_outputs is " + std::to_string(num_outputs_attr_) + " but the node has " +
                  std::to_string(init.num_outputs()) + " outputs");
      }
    }
    if (opset < 11 && axis_ < 0) init.Fail("axis must be >= 0 before opset 11");
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    if (split_input_ && ctx.has_input(1)) RequireIntegerIndex(ctx, 1, "split");
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output_dtype(i, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    // A scalar has no axis to split (fuzz finding split_scalar_input: NormalizeAxis accepts axis
    // 0 for rank 0, and in[0] would read past the empty shape).
    if (r == 0) ctx.Fail("the input is a scalar; Split needs rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    const int64_t dim = in[axis];
    const int64_t n = num_outputs_;
    bool given = has_split_attr_;
    std::vector<int64_t> split = split_attr_;
    if (split_input_ && ctx.has_input(1)) split = ReadInts(ctx, 1, &given);
    if (given) {
      if (static_cast<int64_t>(split.size()) != n) {
        ctx.Fail("split " + IntsToString(split) + " has " + std::to_string(split.size()) +
                 " entries for " + std::to_string(n) + " outputs");
      }
      int64_t sum = 0;
      for (int64_t s : split) {
        if (s < 0) ctx.Fail("split " + IntsToString(split) + " has a negative size");
        if (s > dim - sum) {  // also keeps the sum from overflowing
          ctx.Fail("split " + IntsToString(split) + " sums to more than axis " +
                   std::to_string(axis) + "'s size " + std::to_string(dim));
        }
        sum += s;
      }
      if (sum != dim) {
        ctx.Fail("split " + IntsToString(split) + " sums to " + std::to_string(sum) +
                 ", axis " + std::to_string(axis) + " has size " + std::to_string(dim));
      }
    } else if (ceil_chunks_) {
      // Chunks of ceil(dim / n); the last one takes what is left.
      const int64_t chunk = (dim + n - 1) / n;
      int64_t left = dim;
      for (int64_t i = 0; i < n; ++i) {
        split.push_back(std::min(chunk, left));
        left -= split.back();
      }
    } else {
      if (dim % n != 0) {
        ctx.Fail("axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                 " does not split evenly into " + std::to_string(n) + " outputs");
      }
      split.assign(static_cast<size_t>(n), dim / n);
    }
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= in[k];
    for (int64_t k = axis + 1; k < r; ++k) inner *= in[k];
    for (int64_t i = 0; i < n; ++i) {
      Dims d = in;
      d[axis] = split[i];
      ctx.set_output(static_cast<int>(i), ctx.input_dtype(0), d);
    }
    const int64_t in_row = dim * inner;
    return [split, outer, inner, in_row](RunContext& ctx) {
      int64_t offset = 0;
      for (size_t i = 0; i < split.size(); ++i) {
        const int64_t row = split[i] * inner;
        if (ctx.output(static_cast<int>(i)).defined()) {
          CopyRows(ctx.input(0), offset, in_row, ctx.output(static_cast<int>(i)), 0, row, outer,
                   row, ctx.parallel());
        }
        offset += row;
      }
    };
  }

 private:
  bool split_input_;  // split may come as input 1 (opset 1, and 13 on); else the attribute
  bool ceil_chunks_;  // without split: chunks of ceil(dim / n) (opset 18 on); before, equal parts
  int64_t axis_;
  int64_t num_outputs_;
  int64_t num_outputs_attr_ = 0;
  bool has_split_attr_ = false;
  std::vector<int64_t> split_attr_;
};

// ---- Slice (attributes in opset 1; inputs starts/ends/axes/steps from 10) ----
class SliceOp : public Op {
 public:
  explicit SliceOp(const OpInit& init)
      : bounds_inputs_(init.opset() >= 10), negative_axes_allowed_(init.opset() >= 11) {
    if (!bounds_inputs_) {
      if (!init.Has("starts") || !init.Has("ends")) init.Fail("attributes 'starts' and 'ends' are required");
      starts_ = init.GetInts("starts");
      ends_ = init.GetInts("ends");
      has_axes_ = init.Has("axes");
      axes_ = init.GetInts("axes");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    if (bounds_inputs_) {
      RequireIntegerIndex(ctx, 1, "starts");
      RequireIntegerIndex(ctx, 2, "ends");
      if (ctx.has_input(3)) RequireIntegerIndex(ctx, 3, "axes");
      if (ctx.has_input(4)) RequireIntegerIndex(ctx, 4, "steps");
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override {
    return bounds_inputs_ ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{};
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    bool has_axes = has_axes_, has_steps = false;
    if (bounds_inputs_) {
      starts = ReadInts(ctx, 1);
      ends = ReadInts(ctx, 2);
      axes = ReadInts(ctx, 3, &has_axes);
      steps = ReadInts(ctx, 4, &has_steps);
    }
    const size_t n = starts.size();
    if (ends.size() != n) {
      ctx.Fail("starts " + IntsToString(starts) + " and ends " + IntsToString(ends) +
               " differ in length");
    }
    if (!has_axes) {
      axes.resize(n);
      for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
    }
    if (!has_steps) steps.assign(n, 1);
    if (axes.size() != n || steps.size() != n) {
      ctx.Fail("starts, ends, axes " + IntsToString(axes) + " and steps " + IntsToString(steps) +
               " must have the same length");
    }
    if (!negative_axes_allowed_) {
      for (int64_t a : axes) {
        if (a < 0) ctx.Fail("negative axes need opset 11");
      }
    }
    axes = NormalizeAxes(ctx, axes, r);
    std::vector<int64_t> start(static_cast<size_t>(r), 0), step(static_cast<size_t>(r), 1);
    Dims out = in;
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = axes[i], d = in[a], t = steps[i];
      if (t == 0) ctx.Fail("step for axis " + std::to_string(a) + " is 0");
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += d;
      if (e < 0) e += d;
      int64_t count;
      if (d == 0) {
        count = 0;
        s = 0;
      } else if (t > 0) {
        s = std::clamp<int64_t>(s, 0, d);
        e = std::clamp<int64_t>(e, 0, d);
        // 1 + (e - s - 1) / t: no overflow for any t (fuzz finding slice_huge_step).
        count = e > s ? 1 + (e - s - 1) / t : 0;
      } else {
        s = std::clamp<int64_t>(s, 0, d - 1);
        e = std::clamp<int64_t>(e, -1, d - 1);
        // 1 + (s - e - 1) / |t| without negating t (INT64_MIN): x / t == -(x / |t|) for x >= 0.
        count = s > e ? 1 - (s - e - 1) / t : 0;
      }
      start[a] = s;
      step[a] = t;
      out[a] = count;
    }
    ctx.set_output(0, ctx.input_dtype(0), out);
    const std::vector<int64_t> strides = Strides(in);
    std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      offsets[k].resize(static_cast<size_t>(out[k]));
      for (int64_t i = 0; i < out[k]; ++i) offsets[k][i] = (start[k] + i * step[k]) * strides[k];
    }
    return AxisGatherRunFn(ctx.input_dtype(0), out, std::move(offsets));
  }

 private:
  bool bounds_inputs_;          // starts/ends/axes/steps are inputs 1-4 (opset 10 on)
  bool negative_axes_allowed_;  // axes may be negative (opset 11 on)
  std::vector<int64_t> starts_, ends_, axes_;
  bool has_axes_ = false;
};

// Normalizes the indices input into a run-time scratch tensor; fails naming the bad index.
Tensor NormalizedIndices(RunContext& ctx, const Tensor& indices, int64_t bound) {
  Tensor out = ctx.Scratch(DType::kInt64, {indices.num_elements()});
  const int64_t n = indices.num_elements();
  const int64_t bad =
      indices.dtype() == DType::kInt64
          ? kernels::NormalizeIndicesI64(indices.data<int64_t>(), n, bound, out.data<int64_t>())
          : kernels::NormalizeIndicesI32(indices.data<int32_t>(), n, bound, out.data<int64_t>());
  if (bad >= 0) {
    const int64_t v = indices.dtype() == DType::kInt64 ? indices.data<int64_t>()[bad]
                                                       : indices.data<int32_t>()[bad];
    ctx.Fail("index " + std::to_string(v) + " at position " + std::to_string(bad) +
             " is out of range for an axis of size " + std::to_string(bound) + " (valid: [" +
             std::to_string(-bound) + ", " + std::to_string(bound - 1) + "])");
  }
  return out;
}

// Gather and GatherElements: data (input 0) indexed along `axis` by indices (input 1).
class AxisIndexOp : public Op {
 public:
  explicit AxisIndexOp(const OpInit& init) : axis_(init.GetInt("axis", 0)) {}
  void InferTypes(TypeContext& ctx) const override { InferMoveByIndexTypes(ctx, "indices"); }

 protected:
  int64_t axis_;
};

// ---- Gather ----
class GatherOp : public AxisIndexOp {
 public:
  using AxisIndexOp::AxisIndexOp;
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const Dims& idx = ctx.input_dims(1);
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0) ctx.Fail("data must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    Dims out(in.begin(), in.begin() + axis);
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), in.begin() + axis + 1, in.end());
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= in[k];
    for (int64_t k = axis + 1; k < r; ++k) inner *= in[k];
    const int64_t axis_dim = in[axis];
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out);
    if (dtype == DType::kString) {
      return [outer, inner, axis_dim](RunContext& ctx) {
        const Tensor& ind = ctx.input(1);
        Tensor norm = NormalizedIndices(ctx, ind, axis_dim);
        kernels::GatherStrings(ctx.input(0).strings().data(), ctx.output(0).strings().data(),
                               outer, axis_dim, inner, norm.data<int64_t>(), ind.num_elements(),
                               ctx.parallel());
      };
    }
    const size_t es = DTypeSize(dtype);
    return [outer, inner, axis_dim, es](RunContext& ctx) {
      const Tensor& ind = ctx.input(1);
      Tensor norm = NormalizedIndices(ctx, ind, axis_dim);
      kernels::GatherBytes(ctx.input(0).raw_data(), ctx.output(0).raw_data(), es, outer, axis_dim,
                           inner, norm.data<int64_t>(), ind.num_elements(), ctx.parallel());
    };
  }
};

// ---- GatherElements ----
class GatherElementsOp : public AxisIndexOp {
 public:
  using AxisIndexOp::AxisIndexOp;
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const Dims& idx = ctx.input_dims(1);
    const int64_t r = static_cast<int64_t>(in.size());
    if (r == 0) ctx.Fail("data must have rank >= 1");
    if (static_cast<int64_t>(idx.size()) != r) {
      ctx.Fail("indices have rank " + std::to_string(idx.size()) + ", data has rank " +
               std::to_string(r));
    }
    const int64_t axis = NormalizeAxis(axis_, r, [&](const std::string& m) { ctx.Fail(m); });
    for (int64_t k = 0; k < r; ++k) {
      if (k != axis && idx[k] > in[k]) {
        ctx.Fail("indices shape " + DimsToString(idx) + " exceeds data shape " + DimsToString(in) +
                 " on axis " + std::to_string(k));
      }
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, idx);
    const Dims data_dims = in, index_dims = idx;
    const int ax = static_cast<int>(axis);
    const int64_t bound = in[axis];
    if (dtype == DType::kString) {
      return [data_dims, index_dims, ax, bound](RunContext& ctx) {
        Tensor norm = NormalizedIndices(ctx, ctx.input(1), bound);
        kernels::GatherElementsStrings(ctx.input(0).strings().data(), data_dims,
                                       ctx.output(0).strings().data(), index_dims,
                                       norm.data<int64_t>(), ax, ctx.parallel());
      };
    }
    const size_t es = DTypeSize(dtype);
    return [data_dims, index_dims, ax, bound, es](RunContext& ctx) {
      Tensor norm = NormalizedIndices(ctx, ctx.input(1), bound);
      kernels::GatherElementsBytes(ctx.input(0).raw_data(), data_dims, ctx.output(0).raw_data(),
                                   index_dims, norm.data<int64_t>(), ax, es, ctx.parallel());
    };
  }
};

// ---- Expand (bidirectional broadcast to a shape input) ----
class ExpandOp : public Op {
 public:
  explicit ExpandOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override { InferMoveByIndexTypes(ctx, "shape"); }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const std::vector<int64_t> shape = ReadInts(ctx, 1);
    const int64_t r = static_cast<int64_t>(std::max(in.size(), shape.size()));
    const int64_t in_pad = r - static_cast<int64_t>(in.size());
    const int64_t sh_pad = r - static_cast<int64_t>(shape.size());
    const std::vector<int64_t> strides = Strides(in);
    Dims out(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      const int64_t a = k >= in_pad ? in[k - in_pad] : 1;
      const int64_t b = k >= sh_pad ? shape[k - sh_pad] : 1;
      if (b < 0) ctx.Fail("shape " + IntsToString(shape) + " has a negative dimension");
      if (a != b && a != 1 && b != 1) {
        ctx.Fail("input shape " + DimsToString(in) + " cannot be broadcast to " + IntsToString(shape));
      }
      out[k] = a == 1 ? b : a;
    }
    // Declare (and so size-check) the output before the per-axis tables, which are as long as
    // the output's dims: a huge shape must be a limit error, not a huge allocation.
    ctx.set_output(0, ctx.input_dtype(0), out);
    std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      const int64_t a = k >= in_pad ? in[k - in_pad] : 1;
      const int64_t stride = (k >= in_pad && a != 1) ? strides[k - in_pad] : 0;
      offsets[k].resize(static_cast<size_t>(out[k]));
      for (int64_t i = 0; i < out[k]; ++i) offsets[k][i] = i * stride;
    }
    return AxisGatherRunFn(ctx.input_dtype(0), out, std::move(offsets));
  }
};

// ---- Tile (opset 1: inputs tiles and axis; 6+: repeats) ----
class TileOp : public Op {
 public:
  explicit TileOp(const OpInit& init) : repeats_input_(init.opset() >= 6) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    RequireIntegerIndex(ctx, 1, repeats_input_ ? "repeats" : "tiles");
    if (!repeats_input_) RequireIntegerIndex(ctx, 2, "axis");
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1, 2}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    std::vector<int64_t> repeats;
    if (repeats_input_) {
      repeats = ReadInts(ctx, 1);
    } else {
      const std::vector<int64_t> tiles = ReadInts(ctx, 1), axis = ReadInts(ctx, 2);
      if (tiles.size() != 1 || axis.size() != 1) ctx.Fail("tiles and axis must be scalars");
      const int64_t a = NormalizeAxis(axis[0], r, [&](const std::string& m) { ctx.Fail(m); });
      repeats.assign(static_cast<size_t>(r), 1);
      repeats[a] = tiles[0];
    }
    if (static_cast<int64_t>(repeats.size()) != r) {
      ctx.Fail("repeats " + IntsToString(repeats) + " has " + std::to_string(repeats.size()) +
               " entries for an input of rank " + std::to_string(r));
    }
    const std::vector<int64_t> strides = Strides(in);
    Dims out(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      if (repeats[k] < 0) ctx.Fail("repeats " + IntsToString(repeats) + " has a negative entry");
      if (in[k] != 0 && repeats[k] > INT64_MAX / in[k]) ctx.Fail("output size overflows");
      out[k] = in[k] * repeats[k];
    }
    // Size-check the output before building tables as long as its dims (see Expand).
    ctx.set_output(0, ctx.input_dtype(0), out);
    std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      offsets[k].resize(static_cast<size_t>(out[k]));
      for (int64_t i = 0; i < out[k]; ++i) offsets[k][i] = (i % in[k]) * strides[k];
    }
    return AxisGatherRunFn(ctx.input_dtype(0), out, std::move(offsets));
  }

 private:
  // Input 1 is repeats, one per axis (opset 6 on); before, inputs tiles and axis name one axis.
  bool repeats_input_;
};

}  // namespace

void RegisterGatherOps(OpRegistry& registry) {
  RegisterVersions<ConcatOp>(registry, "Concat", {1, 4, 11, 13});
  RegisterVersions<SplitOp>(registry, "Split", {1, 2, 11, 13, 18});
  RegisterVersions<SliceOp>(registry, "Slice", {1, 10, 11, 13});
  RegisterVersions<GatherOp>(registry, "Gather", {1, 11, 13});
  RegisterVersions<GatherElementsOp>(registry, "GatherElements", {11, 13});
  RegisterVersions<ExpandOp>(registry, "Expand", {8, 13});
  RegisterVersions<TileOp>(registry, "Tile", {1, 6, 13});
}

}  // namespace simplecpp::graph::tensor_ops
