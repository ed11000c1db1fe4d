// Ops that change only the shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity: the output
// shares the input's buffer, no copy), that read the shape (Shape, Size), and Transpose.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "graph/ops/tensor_ops_internal.h"
#include "kernels/memory/copy.h"
#include "kernels/memory/transpose.h"

namespace simplecpp::graph::tensor_ops {
namespace {

// The RunFn of every zero-copy op: the output is the input with new dims.
RunFn ShareInput(Dims dims) {
  return [dims](RunContext& ctx) { ctx.set_output(0, ctx.input(0).Reshaped(dims)); };
}

// ---- Reshape (1: `shape` attribute; 5+: shape input; 14+: allowzero) ----
class ReshapeOp : public Op {
 public:
  explicit ReshapeOp(const OpInit& init)
      : shape_input_(init.opset() >= 5), allowzero_(init.GetInt("allowzero", 0) != 0) {
    if (!shape_input_) {
      if (!init.Has("shape")) init.Fail("required attribute 'shape' is missing");
      shape_attr_ = init.GetInts("shape");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    if (shape_input_) RequireIntegerIndex(ctx, 1, "shape");
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override {
    return shape_input_ ? std::vector<int>{1} : std::vector<int>{};
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const std::vector<int64_t> shape = shape_input_ ? ReadInts(ctx, 1) : shape_attr_;
    const Dims& in = ctx.input_dims(0);
    Dims out(shape.size());
    int infer = -1;
    bool has_zero = false;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = shape[i];
      if (d == -1) {
        if (infer >= 0) ctx.Fail("shape " + IntsToString(shape) + " has more than one -1");
        infer = static_cast<int>(i);
        continue;
      }
      if (d < -1) ctx.Fail("shape " + IntsToString(shape) + " has a negative dimension");
      if (d == 0) {
        has_zero = true;
        if (!allowzero_) {
          if (i >= in.size()) {
            ctx.Fail("shape " + IntsToString(shape) + ": 0 at position " + std::to_string(i) +
                     " copies an input dimension that does not exist");
          }
          d = in[i];
        }
      }
      out[i] = d;
      known = d == 0 ? 0 : (known > INT64_MAX / d ? INT64_MAX : known * d);
    }
    if (allowzero_ && has_zero && infer >= 0) {
      ctx.Fail("shape " + IntsToString(shape) + " has both 0 and -1 with allowzero=1");
    }
    const int64_t total = CheckedNumElements(in);
    if (infer >= 0) {
      if (known == 0 || total % known != 0) {
        ctx.Fail("cannot infer the -1 in shape " + IntsToString(shape) + " for " +
                 std::to_string(total) + " elements");
      }
      out[infer] = total / known;
    } else if (known != total) {
      ctx.Fail("shape " + IntsToString(shape) + " (" + DimsToString(out) + ") has " +
               std::to_string(known) + " elements, the input has " + std::to_string(total));
    }
    ctx.set_output(0, ctx.input_dtype(0), out);
    return ShareInput(out);
  }

 private:
  bool shape_input_;  // shape is input 1 (opset 5 on); before, the attribute shape_attr_
  bool allowzero_;
  std::vector<int64_t> shape_attr_;
};

// ---- Flatten ----
class FlattenOp : public Op {
 public:
  explicit FlattenOp(const OpInit& init) : axis_(init.GetInt("axis", 1)) {
    if (init.opset() < 11 && axis_ < 0) init.Fail("axis must be >= 0 before opset 11");
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    if (axis_ < -r || axis_ > r) {
      ctx.Fail("axis " + std::to_string(axis_) + " is out of range [" + std::to_string(-r) + ", " +
               std::to_string(r) + "]");
    }
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    int64_t a = 1, b = 1;
    for (int64_t k = 0; k < r; ++k) (k < axis ? a : b) *= in[k];
    Dims out{a, b};
    ctx.set_output(0, ctx.input_dtype(0), out);
    return ShareInput(out);
  }

 private:
  int64_t axis_;
};

// ---- Squeeze (axes attribute before 13, optional input from 13) ----
class SqueezeOp : public Op {
 public:
  explicit SqueezeOp(const OpInit& init) : axes_input_(init.opset() >= 13) {
    if (!axes_input_) {
      has_axes_attr_ = init.Has("axes");
      axes_attr_ = init.GetInts("axes");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    if (axes_input_ && ctx.has_input(1)) RequireIntegerIndex(ctx, 1, "axes");
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    bool given = has_axes_attr_;
    std::vector<int64_t> axes = axes_attr_;
    if (axes_input_) axes = ReadInts(ctx, 1, &given);
    std::vector<bool> drop(static_cast<size_t>(r), false);
    if (given) {
      for (int64_t a : NormalizeAxes(ctx, axes, r)) {
        if (in[a] != 1) {
          ctx.Fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[a]));
        }
        drop[a] = true;
      }
    } else {
      for (int64_t k = 0; k < r; ++k) drop[k] = in[k] == 1;
    }
    Dims out;
    for (int64_t k = 0; k < r; ++k) {
      if (!drop[k]) out.push_back(in[k]);
    }
    ctx.set_output(0, ctx.input_dtype(0), out);
    return ShareInput(out);
  }

 private:
  bool axes_input_;  // axes is optional input 1 (opset 13 on); before, the attribute axes_attr_
  bool has_axes_attr_ = false;
  std::vector<int64_t> axes_attr_;
};

// ---- Unsqueeze (axes attribute before 13, required input from 13) ----
class UnsqueezeOp : public Op {
 public:
  explicit UnsqueezeOp(const OpInit& init) : axes_input_(init.opset() >= 13) {
    if (!axes_input_) {
      if (!init.Has("axes")) init.Fail("required attribute 'axes' is missing");
      axes_attr_ = init.GetInts("axes");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    if (axes_input_) RequireIntegerIndex(ctx, 1, "axes");
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const std::vector<int64_t> axes = axes_input_ ? ReadInts(ctx, 1) : axes_attr_;
    const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : NormalizeAxes(ctx, axes, out_rank)) inserted[a] = true;
    Dims out;
    size_t next = 0;
    for (int64_t k = 0; k < out_rank; ++k) out.push_back(inserted[k] ? 1 : in[next++]);
    ctx.set_output(0, ctx.input_dtype(0), out);
    return ShareInput(out);
  }

 private:
  bool axes_input_;  // axes is input 1 (opset 13 on); before, the attribute axes_attr_
  std::vector<int64_t> axes_attr_;
};

// ---- Identity ----
class IdentityOp : public Op {
 public:
  explicit IdentityOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output(0, ctx.input_dtype(0), ctx.input_dims(0));
    return [](RunContext& ctx) { ctx.set_output(0, ctx.input(0)); };
  }
};

// ---- Shape (start / end from 15) ----
class ShapeOp : public Op {
 public:
  explicit ShapeOp(const OpInit& init)
      : start_(init.GetInt("start", 0)), end_(init.Has("end") ? init.GetInt("end", 0) : INT64_MAX) {
    if (init.opset() < 15 && (init.Has("start") || init.Has("end"))) {
      init.Fail("attributes 'start'/'end' exist from opset 15");
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.set_output_dtype(0, DType::kInt64);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    auto clamp = [r](int64_t v) {
      if (v < 0) v += r;
      return std::min(std::max<int64_t>(v, 0), r);
    };
    const int64_t s = clamp(start_), e = clamp(end_);
    std::vector<int64_t> values;
    for (int64_t k = s; k < e; ++k) values.push_back(in[k]);
    ctx.set_output(0, DType::kInt64, {static_cast<int64_t>(values.size())});
    return [values](RunContext& ctx) {
      if (!values.empty()) {
        std::memcpy(ctx.output(0).raw_data(), values.data(), values.size() * sizeof(int64_t));
      }
    };
  }

 private:
  int64_t start_, end_;
};

// ---- Size ----
class SizeOp : public Op {
 public:
  explicit SizeOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.set_output_dtype(0, DType::kInt64);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const int64_t n = CheckedNumElements(ctx.input_dims(0));
    ctx.set_output(0, DType::kInt64, {});
    return [n](RunContext& ctx) { *ctx.output(0).data<int64_t>() = n; };
  }
};

// ---- Transpose ----
class TransposeOp : public Op {
 public:
  explicit TransposeOp(const OpInit& init)
      : has_perm_(init.Has("perm")), perm_(init.GetInts("perm")) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(static_cast<size_t>(r));
      for (int64_t k = 0; k < r; ++k) perm[k] = r - 1 - k;
    }
    if (static_cast<int64_t>(perm.size()) != r) {
      ctx.Fail("perm " + IntsToString(perm) + " has " + std::to_string(perm.size()) +
               " entries for an input of rank " + std::to_string(r));
    }
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= r || seen[p]) {
        ctx.Fail("perm " + IntsToString(perm) + " is not a permutation of [0, " +
                 std::to_string(r) + ")");
      }
      seen[p] = true;
    }
    Dims out(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) out[k] = in[perm[k]];
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out);
    if (dtype == DType::kString) {
      // Strings: an axis gather with the permuted strides.
      const std::vector<int64_t> strides = Strides(in);
      std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
      for (int64_t k = 0; k < r; ++k) {
        for (int64_t i = 0; i < out[k]; ++i) offsets[k].push_back(i * strides[perm[k]]);
      }
      auto plan = std::make_shared<const kernels::AxisGatherPlan>(
          kernels::PlanAxisGather(1, out, std::move(offsets)));
      return [plan](RunContext& ctx) {
        kernels::AxisGatherStrings(*plan, ctx.input(0).strings().data(),
                                   ctx.output(0).strings().data(), nullptr, ctx.parallel());
      };
    }
    auto plan = std::make_shared<const kernels::TransposePlan>(
        kernels::PlanTranspose(DTypeSize(dtype), in, perm));
    return [plan](RunContext& ctx) {
      kernels::TransposeBytes(*plan, ctx.input(0).raw_data(), ctx.output(0).raw_data(),
                              ctx.parallel());
    };
  }

 private:
  bool has_perm_;
  std::vector<int64_t> perm_;
};

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  RegisterVersions<ReshapeOp>(registry, "Reshape", {1, 5, 13, 14, 19, 21, 23, 24, 25});
  RegisterVersions<FlattenOp>(registry, "Flatten", {1, 9, 11, 13, 21, 23, 24, 25});
  RegisterVersions<SqueezeOp>(registry, "Squeeze", {1, 11, 13, 21, 23, 24, 25});
  RegisterVersions<UnsqueezeOp>(registry, "Unsqueeze", {1, 11, 13, 21, 23, 24, 25});
  RegisterVersions<IdentityOp>(registry, "Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25});
  RegisterVersions<ShapeOp>(registry, "Shape", {1, 13, 15, 19, 21, 23, 24, 25});
  RegisterVersions<SizeOp>(registry, "Size", {1, 13, 19, 21, 23, 24, 25});
  RegisterVersions<TransposeOp>(registry, "Transpose", {1, 13, 21, 23, 24, 25});
}

}  // namespace simplecpp::graph::tensor_ops
