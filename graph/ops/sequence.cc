// Sequence ops: SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength, SplitToSequence, ConcatFromSequence, and Identity for non-tensor values.
// They take and give simplecpp::Value (takes_values()); a sequence's contents are known only
// while running, so positions and element shapes are checked in the RunFns. Sequences share their
// element tensors (no copies), except SplitToSequence / ConcatFromSequence, which move data.
// SequenceMap lives in control_flow.cc (it runs a body graph).
#include <cstring>

#include "graph/ops/families.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

// Position input `i` (int32/int64 scalar) normalized against [-n, n + extra): extra is 1 for
// SequenceInsert (which may insert at the end), 0 for SequenceAt / SequenceErase.
int64_t ReadPosition(const RunContext& rc, int i, int64_t n, int64_t extra) {
  const Tensor& t = rc.input(i);
  if (t.num_elements() != 1 || (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32)) {
    rc.Fail("position must be one int32/int64 value, got " + DTypeName(t.dtype()) +
            DimsToString(t.dims()));
  }
  const int64_t p = TensorToInt64s(t)[0];
  if (p < -n || p >= n + extra) {
    rc.Fail("position " + std::to_string(p) + " is out of range for a sequence of " +
            std::to_string(n) + " elements");
  }
  return p < 0 ? p + n : p;
}

// Checks at load that input i is a (non-optional) sequence.
void RequireSequence(const TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  const ValueType t = ctx.input_type(i);
  if (!t.sequence || t.optional) ctx.Fail("input " + std::to_string(i) + " is " + t.ToString() + ", expected a sequence");
}

void RequireTensor(const TypeContext& ctx, int i) {
  ctx.RequireInput(i);
  if (!ctx.input_type(i).is_tensor()) {
    ctx.Fail("input " + std::to_string(i) + " is " + ctx.input_type(i).ToString() + ", expected a tensor");
  }
}

void RequirePosition(const TypeContext& ctx, int i) {
  RequireTensor(ctx, i);
  ctx.RequireDType(i, {DType::kInt32, DType::kInt64});
}

// Base of the ops here: takes_values(), and Prepare only declares the outputs as dynamic.
class ValueOp : public Op {
 public:
  bool takes_values() const override { return true; }
};

// ---- SequenceEmpty ----
class SequenceEmptyOp final : public ValueOp {
 public:
  explicit SequenceEmptyOp(const OpInit& init)
      : dtype_(static_cast<DType>(init.GetInt("dtype", static_cast<int64_t>(DType::kFloat32)))) {
    if (!IsKnownDType(static_cast<int32_t>(dtype_)) || dtype_ == DType::kUndefined) {
      init.Fail("dtype " + std::to_string(static_cast<int>(dtype_)) + " is not a tensor element type");
    }
  }
  void InferTypes(TypeContext& ctx) const override { ctx.set_output_type(0, ValueType::SequenceOf(dtype_)); }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, dtype_);
    const DType d = dtype_;
    return [d](RunContext& rc) { rc.set_value(0, Value::Sequence(d, {})); };
  }

 private:
  DType dtype_;
};

// ---- SequenceConstruct ----
class SequenceConstructOp final : public ValueOp {
 public:
  explicit SequenceConstructOp(const OpInit& init) {
    if (init.num_inputs() < 1) init.Fail("needs at least one input");
  }
  void InferTypes(TypeContext& ctx) const override {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      RequireTensor(ctx, i);
      ctx.RequireSameDType(0, i);
    }
    ctx.set_output_type(0, ValueType::SequenceOf(ctx.input_dtype(0)));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    const DType d = ctx.input_dtype(0);
    return [d](RunContext& rc) {
      std::vector<Tensor> elems;
      for (int i = 0; i < rc.num_inputs(); ++i) elems.push_back(rc.input(i));
      rc.set_value(0, Value::Sequence(d, std::move(elems)));
    };
  }
};

// ---- SequenceAt ----
class SequenceAtOp final : public ValueOp {
 public:
  explicit SequenceAtOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireSequence(ctx, 0);
    RequirePosition(ctx, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    return [](RunContext& rc) {
      const std::vector<Tensor>& seq = rc.value(0)->sequence();
      const int64_t n = static_cast<int64_t>(seq.size());
      rc.set_output(0, seq[static_cast<size_t>(ReadPosition(rc, 1, n, 0))]);
    };
  }
};

// ---- SequenceInsert ----
class SequenceInsertOp final : public ValueOp {
 public:
  explicit SequenceInsertOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireSequence(ctx, 0);
    RequireTensor(ctx, 1);
    if (ctx.input_dtype(1) != ctx.input_dtype(0)) {
      ctx.Fail("tensor has dtype " + DTypeName(ctx.input_dtype(1)) + ", the sequence holds " +
               DTypeName(ctx.input_dtype(0)));
    }
    if (ctx.has_input(2)) RequirePosition(ctx, 2);
    ctx.set_output_type(0, ctx.input_type(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    return [](RunContext& rc) {
      const Value& in = *rc.value(0);
      std::vector<Tensor> elems = in.sequence();
      const int64_t n = static_cast<int64_t>(elems.size());
      const int64_t p = rc.has_input(2) ? ReadPosition(rc, 2, n, 1) : n;
      elems.insert(elems.begin() + p, rc.input(1));
      rc.set_value(0, Value::Sequence(in.dtype(), std::move(elems)));
    };
  }
};

// ---- SequenceErase ----
class SequenceEraseOp final : public ValueOp {
 public:
  explicit SequenceEraseOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireSequence(ctx, 0);
    if (ctx.has_input(1)) RequirePosition(ctx, 1);
    ctx.set_output_type(0, ctx.input_type(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    return [](RunContext& rc) {
      const Value& in = *rc.value(0);
      std::vector<Tensor> elems = in.sequence();
      const int64_t n = static_cast<int64_t>(elems.size());
      if (n == 0) rc.Fail("cannot erase from an empty sequence");
      const int64_t p = rc.has_input(1) ? ReadPosition(rc, 1, n, 0) : n - 1;
      elems.erase(elems.begin() + p);
      rc.set_value(0, Value::Sequence(in.dtype(), std::move(elems)));
    };
  }
};

// ---- SequenceLength ----
class SequenceLengthOp final : public ValueOp {
 public:
  explicit SequenceLengthOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireSequence(ctx, 0);
    ctx.set_output_dtype(0, DType::kInt64);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, DType::kInt64);
    return [](RunContext& rc) {
      Tensor& out = rc.allocate_output(0, DType::kInt64, {});
      out.data<int64_t>()[0] = static_cast<int64_t>(rc.value(0)->sequence().size());
    };
  }
};

// [outer, axis_len, inner] view of dims around `axis`.
void SplitDims(const Dims& dims, int64_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t d = 0; d < axis; ++d) *outer *= dims[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(dims.size()); ++d) *inner *= dims[d];
}

// Byte-sized dtypes only (strings and packed sub-byte types are refused).
void RequireByteSized(const TypeContext& ctx, int i) {
  if (DTypeSize(ctx.input_dtype(i)) == 0) {
    ctx.Unsupported("element dtype " + DTypeName(ctx.input_dtype(i)) + " is not supported");
  }
}

// ---- SplitToSequence ----
class SplitToSequenceOp final : public ValueOp {
 public:
  explicit SplitToSequenceOp(const OpInit& init)
      : axis_(init.GetInt("axis", 0)), keepdims_(init.GetInt("keepdims", 1) != 0) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireTensor(ctx, 0);
    RequireByteSized(ctx, 0);
    if (ctx.has_input(1)) RequirePosition(ctx, 1);
    ctx.set_output_type(0, ValueType::SequenceOf(ctx.input_dtype(0)));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    const int64_t axis_attr = axis_;
    const bool keepdims = keepdims_;
    return [axis_attr, keepdims](RunContext& rc) {
      const Tensor& x = rc.input(0);
      if (x.rank() == 0) rc.Fail("cannot split a scalar");
      const int64_t axis =
          NormalizeAxis(axis_attr, x.rank(), [&rc](const std::string& m) { rc.Fail(m); });
      const int64_t len = x.dim(axis);
      std::vector<int64_t> sizes;
      bool squeeze = false;
      if (!rc.has_input(1)) {
        sizes.assign(static_cast<size_t>(len), 1);
        squeeze = !keepdims;
      } else {
        const Tensor& split = rc.input(1);
        const std::vector<int64_t> v = TensorToInt64s(split);
        if (split.rank() == 0) {
          if (v[0] <= 0) rc.Fail("split must be positive, got " + std::to_string(v[0]));
          for (int64_t at = 0; at < len; at += v[0]) sizes.push_back(std::min(v[0], len - at));
        } else if (split.rank() == 1) {
          int64_t sum = 0;
          for (int64_t s : v) {
            if (s < 0) rc.Fail("split has a negative length " + std::to_string(s));
            sum += s;
          }
          if (sum != len) {
            rc.Fail("split lengths add up to " + std::to_string(sum) + ", the axis has " +
                    std::to_string(len));
          }
          sizes = v;
        } else {
          rc.Fail("split must be a scalar or 1-D, got shape " + DimsToString(split.dims()));
        }
      }
      int64_t outer = 1, inner = 1;
      SplitDims(x.dims(), axis, &outer, &inner);
      const size_t elem = DTypeSize(x.dtype());
      const auto* src = static_cast<const uint8_t*>(x.raw_data());
      std::vector<Tensor> parts;
      int64_t start = 0;
      for (int64_t size : sizes) {
        Dims dims = x.dims();
        dims[axis] = size;
        Tensor part = rc.Scratch(x.dtype(), dims);
        auto* dst = static_cast<uint8_t*>(part.raw_data());
        const size_t block = static_cast<size_t>(size * inner) * elem;
        for (int64_t o = 0; o < outer; ++o) {
          if (block) std::memcpy(dst + o * block, src + ((o * len + start) * inner) * elem, block);
        }
        if (squeeze) {
          dims.erase(dims.begin() + axis);
          part = part.Reshaped(dims);
        }
        parts.push_back(std::move(part));
        start += size;
      }
      rc.set_value(0, Value::Sequence(x.dtype(), std::move(parts)));
    };
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

// ---- ConcatFromSequence ----
class ConcatFromSequenceOp final : public ValueOp {
 public:
  explicit ConcatFromSequenceOp(const OpInit& init)
      : axis_(init.RequireInt("axis")), new_axis_(init.GetInt("new_axis", 0) != 0) {}
  void InferTypes(TypeContext& ctx) const override {
    RequireSequence(ctx, 0);
    RequireByteSized(ctx, 0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    const int64_t axis_attr = axis_;
    const bool new_axis = new_axis_;
    return [axis_attr, new_axis](RunContext& rc) {
      const std::vector<Tensor>& seq = rc.value(0)->sequence();
      if (seq.empty()) rc.Fail("cannot concatenate an empty sequence");
      const Tensor& first = seq[0];
      // With new_axis the elements are stacked: the axis ranges over rank + 1 positions.
      const int64_t out_rank = first.rank() + (new_axis ? 1 : 0);
      const int64_t axis = NormalizeAxis(axis_attr, out_rank, [&rc](const std::string& m) {
        rc.Fail(m);
      });
      Dims out_dims = first.dims();
      if (new_axis) out_dims.insert(out_dims.begin() + axis, 0);
      int64_t total = 0;
      for (size_t i = 0; i < seq.size(); ++i) {
        const Tensor& t = seq[i];
        bool ok = t.rank() == first.rank();
        for (int64_t d = 0; ok && d < t.rank(); ++d) {
          ok = t.dim(d) == first.dim(d) || (!new_axis && d == axis);
        }
        if (!ok) {
          rc.Fail("element " + std::to_string(i) + " has shape " + DimsToString(t.dims()) +
                  ", element 0 " + DimsToString(first.dims()));
        }
        total += new_axis ? 1 : t.dim(axis);
      }
      out_dims[axis] = total;
      Tensor& out = rc.allocate_output(0, first.dtype(), out_dims);
      int64_t outer = 1, inner = 1;
      SplitDims(out_dims, axis, &outer, &inner);
      const size_t elem = DTypeSize(first.dtype());
      auto* dst = static_cast<uint8_t*>(out.raw_data());
      int64_t start = 0;
      for (const Tensor& t : seq) {
        const int64_t size = new_axis ? 1 : t.dim(axis);
        const auto* src = static_cast<const uint8_t*>(t.raw_data());
        const size_t block = static_cast<size_t>(size * inner) * elem;
        for (int64_t o = 0; o < outer; ++o) {
          if (block) std::memcpy(dst + ((o * total + start) * inner) * elem, src + o * block, block);
        }
        start += size;
      }
    };
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

// ---- Identity of sequences and optionals ----
class ValueIdentityOp final : public ValueOp {
 public:
  explicit ValueIdentityOp(const OpInit& init) {
    if (init.num_inputs() != 1) init.Fail("needs one input");
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.set_output_type(0, ctx.input_type(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    return [](RunContext& rc) { rc.set_value(0, *rc.value(0)); };
  }
};

}  // namespace

std::unique_ptr<Op> MakeValueIdentityOp(const OpInit& init) {
  return std::make_unique<ValueIdentityOp>(init);
}

void RegisterSequenceOps(OpRegistry& registry) {
  registry.Register("", "SequenceEmpty", 11, MakeFactory<SequenceEmptyOp>());
  registry.Register("", "SequenceConstruct", 11, MakeFactory<SequenceConstructOp>());
  registry.Register("", "SequenceAt", 11, MakeFactory<SequenceAtOp>());
  registry.Register("", "SequenceInsert", 11, MakeFactory<SequenceInsertOp>());
  registry.Register("", "SequenceErase", 11, MakeFactory<SequenceEraseOp>());
  registry.Register("", "SequenceLength", 11, MakeFactory<SequenceLengthOp>());
  registry.Register("", "SplitToSequence", 11, MakeFactory<SplitToSequenceOp>());
  registry.Register("", "ConcatFromSequence", 11, MakeFactory<ConcatFromSequenceOp>());
}

}  // namespace simplecpp::graph
