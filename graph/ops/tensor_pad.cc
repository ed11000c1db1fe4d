// Pad: constant / reflect / edge / wrap padding, negative pads crop.
//   opset 1: attribute `paddings`, opset 2: attribute `pads`, both with `value` (float) and `mode`;
//   opset 11+: inputs pads (int64), constant_value (optional scalar of the data type);
//   opset 18+: axes input; opset 19+: mode "wrap".
// pads lists all begins then all ends: [x1_begin, x2_begin, ..., x1_end, x2_end, ...].
// Every mode is one axis-gather table per axis (kernels/memory/copy.h): output index i on an axis
// reads input index i - begin, mapped back into range by the mode (or -1 = fill for constant).
#include <cstring>
#include <memory>

#include "graph/ops/tensor_ops_internal.h"
#include "kernels/float16/cast.h"
#include "kernels/memory/copy.h"

namespace simplecpp::graph::tensor_ops {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class PadOp : public Op {
 public:
  explicit PadOp(const OpInit& init)
      : pads_input_(init.opset() >= 11), axes_input_(init.opset() >= 18) {
    const int64_t opset = init.opset();
    const std::string mode = init.GetString("mode", "constant");
    if (mode == "constant") {
      mode_ = PadMode::kConstant;
    } else if (mode == "reflect") {
      mode_ = PadMode::kReflect;
    } else if (mode == "edge") {
      mode_ = PadMode::kEdge;
    } else if (mode == "wrap" && opset >= 19) {
      mode_ = PadMode::kWrap;
    } else {
      init.Fail("unknown mode '" + mode + "'");
    }
    if (!pads_input_) {
      const char* name = opset < 2 ? "paddings" : "pads";
      if (!init.Has(name)) init.Fail(std::string("required attribute '") + name + "' is missing");
      pads_attr_ = init.GetInts(name);
      value_attr_ = init.GetFloat("value", 0.0f);
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireMovable(ctx, 0);
    if (pads_input_) {
      RequireIntegerIndex(ctx, 1, "pads");
      if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
      if (ctx.has_input(3)) RequireIntegerIndex(ctx, 3, "axes");
    } else if (ctx.input_dtype(0) == DType::kString ||
               kernels::FindCastFn(DType::kFloat32, ctx.input_dtype(0)) == nullptr) {
      ctx.Unsupported("the float 'value' attribute cannot fill a tensor of this dtype");
    }
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override {
    return pads_input_ ? std::vector<int>{1, 3} : std::vector<int>{};
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& in = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(in.size());
    std::vector<int64_t> pads = pads_attr_;
    std::vector<int64_t> axes;
    bool has_axes = false;
    if (pads_input_) {
      pads = ReadInts(ctx, 1);
      if (axes_input_) axes = ReadInts(ctx, 3, &has_axes);
    }
    if (!has_axes) {
      for (int64_t k = 0; k < r; ++k) axes.push_back(k);
    }
    axes = NormalizeAxes(ctx, axes, r);
    const size_t na = axes.size();
    if (pads.size() != 2 * na) {
      ctx.Fail("pads " + IntsToString(pads) + " has " + std::to_string(pads.size()) +
               " entries, expected " + std::to_string(2 * na));
    }
    std::vector<int64_t> begin(static_cast<size_t>(r), 0), end(static_cast<size_t>(r), 0);
    for (size_t i = 0; i < na; ++i) {
      begin[axes[i]] = pads[i];
      end[axes[i]] = pads[i + na];
    }
    const std::vector<int64_t> strides = Strides(in);
    // Output dims first (overflow-checked) and registered with set_output, which enforces the
    // tensor-size limits, before any per-axis table is sized from them: a hostile `pads` must
    // give an Error, not a huge allocation.
    Dims out(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      const int64_t d = in[k];
      int64_t padded = 0;
      if (__builtin_add_overflow(d, begin[k], &padded) ||
          __builtin_add_overflow(padded, end[k], &padded)) {
        ctx.Fail("pads " + IntsToString(pads) + " overflow axis " + std::to_string(k) +
                 " of size " + std::to_string(d));
      }
      out[k] = padded;
      if (out[k] < 0) {
        ctx.Fail("pads " + IntsToString(pads) + " crop axis " + std::to_string(k) + " of size " +
                 std::to_string(d) + " below zero");
      }
      if (d == 0 && out[k] > 0 && mode_ != PadMode::kConstant) {
        ctx.Fail("cannot pad the empty axis " + std::to_string(k) + " in a non-constant mode");
      }
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, out);
    // One table entry per output index of each axis: with another axis empty the output is
    // within limits however long this axis is, so bound each axis on its own too.
    const int64_t max_axis = CurrentTensorLimits().max_tensor_elements;
    for (int64_t k = 0; k < r; ++k) {
      if (out[k] > max_axis) {
        ctx.Fail("padded axis " + std::to_string(k) + " would have " + std::to_string(out[k]) +
                 " elements, over the limit max_tensor_elements=" + std::to_string(max_axis));
      }
    }
    bool needs_fill = false;
    std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      const int64_t d = in[k];
      offsets[k].resize(static_cast<size_t>(out[k]));
      for (int64_t i = 0; i < out[k]; ++i) {
        int64_t src = i - begin[k];
        if (src < 0 || src >= d) {
          switch (mode_) {
            case PadMode::kConstant: src = -1; break;
            case PadMode::kEdge: src = src < 0 ? 0 : d - 1; break;
            case PadMode::kWrap: src = ((src % d) + d) % d; break;
            case PadMode::kReflect: {
              // Reflection without repeating the edge has period 2 * (d - 1).
              if (d == 1) {
                src = 0;
              } else {
                const int64_t p = 2 * (d - 1);
                const int64_t m = ((src % p) + p) % p;
                src = m < d ? m : p - m;
              }
              break;
            }
          }
        }
        if (src < 0) needs_fill = true;
        offsets[k][i] = src < 0 ? -1 : src * strides[k];
      }
    }
    const bool is_string = dtype == DType::kString;
    auto plan = std::make_shared<const kernels::AxisGatherPlan>(
        kernels::PlanAxisGather(is_string ? 1 : DTypeSize(dtype), out, std::move(offsets)));
    // The fill value: from the attribute (opset < 11), else from input 2 at run time (or zero).
    std::vector<unsigned char> attr_fill(is_string ? 0 : DTypeSize(dtype), 0);
    if (!pads_input_ && !is_string) {
      kernels::FindCastFn(DType::kFloat32, dtype)(&value_attr_, attr_fill.data(), 1, {});
    }
    const bool from_input = pads_input_ && needs_fill && ctx.has_input(2);
    if (is_string) {
      return [plan, from_input](RunContext& ctx) {
        const std::string* fill = nullptr;
        if (from_input && ctx.input(2).num_elements() > 0) fill = &ctx.input(2).strings()[0];
        kernels::AxisGatherStrings(*plan, ctx.input(0).strings().data(),
                                   ctx.output(0).strings().data(), fill, ctx.parallel());
      };
    }
    return [plan, from_input, attr_fill](RunContext& ctx) {
      const void* fill = attr_fill.data();
      if (from_input && ctx.input(2).num_elements() > 0) fill = ctx.input(2).raw_data();
      kernels::AxisGatherBytes(*plan, ctx.input(0).raw_data(), ctx.output(0).raw_data(), fill,
                               ctx.parallel());
    };
  }

 private:
  // pads and the fill value are inputs 1 and 2 (opset 11 on); before, the attributes pads_attr_
  // and value_attr_.
  bool pads_input_;
  bool axes_input_;  // input 3, axes (opset 18 on)
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_attr_;
  float value_attr_ = 0.0f;
};

}  // namespace

void RegisterPadOps(OpRegistry& registry) {
  RegisterVersions<PadOp>(registry, "Pad", {1, 2, 11, 13, 18, 19, 21, 23, 24, 25});
}

}  // namespace simplecpp::graph::tensor_ops
