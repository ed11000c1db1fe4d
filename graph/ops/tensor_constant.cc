// Ops that make tensors: Constant, ConstantOfShape, Range, and Dropout (inference: the output is
// the input, the mask is all true).
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "graph/ops/tensor_ops_internal.h"
#include "kernels/float16/cast.h"
#include "kernels/float16/float16.h"
#include "kernels/memory/copy.h"

namespace simplecpp::graph::tensor_ops {
namespace {

// ---- Constant (value, sparse_value, value_float(s), value_int(s), value_string(s)) ----
class ConstantOp : public Op {
 public:
  explicit ConstantOp(const OpInit& init) {
    int found = 0;
    for (const Attribute& a : init.node().attributes) {
      if (a.name == "value") {
        value_ = init.Find("value", AttrKind::kTensor)->t;
      } else if (a.name == "sparse_value") {
        // The importer densifies sparse tensors it understands into `t`.
        if (a.kind != AttrKind::kSparseTensor || !a.t.defined()) {
          init.Unsupported("attribute 'sparse_value' (a sparse tensor) is not supported");
        }
        value_ = a.t;
      } else if (a.name == "value_float") {
        value_ = Tensor::FromVector<float>(DType::kFloat32, {}, {init.GetFloat("value_float", 0)});
      } else if (a.name == "value_floats") {
        const std::vector<float> v = init.GetFloats("value_floats");
        value_ = Tensor::FromVector<float>(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
      } else if (a.name == "value_int") {
        value_ = Tensor::FromVector<int64_t>(DType::kInt64, {}, {init.GetInt("value_int", 0)});
      } else if (a.name == "value_ints") {
        const std::vector<int64_t> v = init.GetInts("value_ints");
        value_ = Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
      } else if (a.name == "value_string") {
        value_ = Tensor(DType::kString, {});
        value_.strings() = {init.GetString("value_string", "")};
      } else if (a.name == "value_strings") {
        const std::vector<std::string> v = init.GetStrings("value_strings");
        value_ = Tensor(DType::kString, {static_cast<int64_t>(v.size())});
        value_.strings() = v;
      } else {
        continue;
      }
      ++found;
    }
    if (found != 1) {
      init.Fail("needs exactly one of value, sparse_value, value_float(s), value_int(s), "
                "value_string(s); found " + std::to_string(found));
    }
    if (!value_.defined()) init.Fail("the value tensor is undefined");
  }
  void InferTypes(TypeContext& ctx) const override { ctx.set_output_dtype(0, value_.dtype()); }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output(0, value_.dtype(), value_.dims());
    const Tensor value = value_;
    return [value](RunContext& ctx) { ctx.set_output(0, value); };
  }

 private:
  Tensor value_;
};

// ---- ConstantOfShape ----
class ConstantOfShapeOp : public Op {
 public:
  explicit ConstantOfShapeOp(const OpInit& init) {
    const Tensor* v = init.GetTensor("value");
    if (v == nullptr) {
      value_ = Tensor::FromVector<float>(DType::kFloat32, {1}, {0.0f});
    } else {
      if (v->num_elements() != 1) init.Fail("attribute 'value' must have exactly one element");
      if (!IsMovableDType(v->dtype()) || v->dtype() == DType::kString) {
        init.Unsupported("attribute 'value' has dtype " + DTypeName(v->dtype()));
      }
      value_ = *v;
    }
  }
  void InferTypes(TypeContext& ctx) const override {
    RequireIntegerIndex(ctx, 0, "shape");
    ctx.set_output_dtype(0, value_.dtype());
  }
  std::vector<int> ValueInputs() const override { return {0}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const std::vector<int64_t> shape = ReadInts(ctx, 0);
    for (int64_t d : shape) {
      if (d < 0) ctx.Fail("shape " + IntsToString(shape) + " has a negative dimension");
    }
    ctx.set_output(0, value_.dtype(), shape);
    const Tensor value = value_;
    const size_t es = DTypeSize(value_.dtype());
    return [value, es](RunContext& ctx) {
      Tensor& out = ctx.output(0);
      kernels::FillBytes(out.raw_data(), out.num_elements(), value.raw_data(), es);
    };
  }

 private:
  Tensor value_;
};

// ---- Range ----
template <typename T>
void FillRange(void* out, int64_t n, double start, double delta) {
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<double>(i) * delta);
}
template <typename T>
void FillRangeInt(void* out, int64_t n, int64_t start, int64_t delta) {
  T* o = static_cast<T*>(out);
  // Every element lies between start and limit, but i * delta alone can pass INT64_MAX (start
  // near INT64_MIN): the sum is formed modulo 2^64, where it is exact.
  for (int64_t i = 0; i < n; ++i) {
    o[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(start) +
                                               static_cast<uint64_t>(i) * static_cast<uint64_t>(delta)));
  }
}

class RangeOp : public Op {
 public:
  explicit RangeOp(const OpInit&) {}
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32,
                         DType::kInt64, DType::kFloat16, DType::kBFloat16});
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {0, 1, 2}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dtype = ctx.input_dtype(0);
    for (int i = 0; i < 3; ++i) {
      if (ctx.RequireValue(i).num_elements() != 1) {
        ctx.Fail("input " + std::to_string(i) + " must be a scalar");
      }
    }
    if (IsIntegerDType(dtype)) {
      const int64_t start = TensorToInt64s(ctx.RequireValue(0))[0];
      const int64_t limit = TensorToInt64s(ctx.RequireValue(1))[0];
      const int64_t delta = TensorToInt64s(ctx.RequireValue(2))[0];
      if (delta == 0) ctx.Fail("delta is 0");
      // ceil((limit - start) / delta) in 128-bit-free form: limit - start cannot overflow for
      // the int16/int32 dtypes; for int64 use long double range.
      const long double diff = static_cast<long double>(limit) - static_cast<long double>(start);
      const long double q = std::ceil(diff / static_cast<long double>(delta));
      // Up to 2^64 (INT64_MIN to INT64_MAX by 1): refuse before the conversion (fuzz finding
      // range_int64_huge_count).
      if (q > 0x1p62L) ctx.Fail("the range has too many elements");
      const int64_t n = q > 0 ? static_cast<int64_t>(q) : 0;
      ctx.set_output(0, dtype, {n});
      void (*fill)(void*, int64_t, int64_t, int64_t) =
          dtype == DType::kInt16 ? &FillRangeInt<int16_t>
          : dtype == DType::kInt32 ? &FillRangeInt<int32_t> : &FillRangeInt<int64_t>;
      return [fill, n, start, delta](RunContext& ctx) {
        fill(ctx.output(0).raw_data(), n, start, delta);
      };
    }
    const double start = TensorElementAsDouble(ctx.RequireValue(0), 0);
    const double limit = TensorElementAsDouble(ctx.RequireValue(1), 0);
    const double delta = TensorElementAsDouble(ctx.RequireValue(2), 0);
    if (delta == 0 || !std::isfinite(delta) || !std::isfinite(start) || !std::isfinite(limit)) {
      ctx.Fail("start, limit and delta must be finite and delta nonzero");
    }
    const double q = std::ceil((limit - start) / delta);
    if (q > static_cast<double>(int64_t{1} << 52)) ctx.Fail("the range has too many elements");
    const int64_t n = q > 0 ? static_cast<int64_t>(q) : 0;
    ctx.set_output(0, dtype, {n});
    if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {
      const bool half = dtype == DType::kFloat16;
      return [n, start, delta, half](RunContext& ctx) {
        uint16_t* o = ctx.output(0).data<uint16_t>();
        for (int64_t i = 0; i < n; ++i) {
          const float v = static_cast<float>(start + static_cast<double>(i) * delta);
          o[i] = half ? kernels::FloatToHalfBits(v) : kernels::FloatToBFloat16Bits(v);
        }
      };
    }
    void (*fill)(void*, int64_t, double, double) =
        dtype == DType::kFloat32 ? &FillRange<float> : &FillRange<double>;
    return [fill, n, start, delta](RunContext& ctx) {
      fill(ctx.output(0).raw_data(), n, start, delta);
    };
  }
};

// ---- Dropout (inference only) ----
// opset < 12: ratio attribute (and is_test < 7): always run as inference, as every runtime does.
// opset >= 12: optional inputs ratio and training_mode; training_mode true with ratio > 0 needs
// random numbers and is Unsupported (ratio 0 is the identity either way).
class DropoutOp : public Op {
 public:
  explicit DropoutOp(const OpInit& init)
      : bool_mask_(init.opset() >= 10), training_inputs_(init.opset() >= 12) {}
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
    ctx.set_output_dtype(1, bool_mask_ ? DType::kBool : ctx.input_dtype(0));
    if (training_inputs_ && ctx.has_input(2) && ctx.input_dtype(2) != DType::kBool) {
      ctx.Fail("training_mode must be bool");
    }
  }
  std::vector<int> ValueInputs() const override {
    return training_inputs_ ? std::vector<int>{1, 2} : std::vector<int>{};
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    if (training_inputs_ && ctx.has_input(2)) {
      const Tensor& tm = ctx.RequireValue(2);
      const bool training = tm.num_elements() > 0 && tm.data<uint8_t>()[0] != 0;
      double ratio = 0.5;
      if (ctx.has_input(1)) ratio = TensorElementAsDouble(ctx.RequireValue(1), 0);
      if (training && ratio != 0.0) {
        ctx.Unsupported("training_mode=true with ratio " + std::to_string(ratio) +
                        " (random dropout) is not supported; this runtime does inference");
      }
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, ctx.input_dims(0));
    const bool want_mask = ctx.has_output(1);
    std::vector<unsigned char> one;
    if (want_mask) {
      const DType mask_dtype = bool_mask_ ? DType::kBool : dtype;
      ctx.set_output(1, mask_dtype, ctx.input_dims(0));
      kernels::CastFn to_mask = kernels::FindCastFn(DType::kFloat32, mask_dtype);
      if (to_mask == nullptr || DTypeSize(mask_dtype) == 0) {
        ctx.Unsupported("mask of dtype " + DTypeName(mask_dtype));
      }
      one.resize(DTypeSize(mask_dtype));
      const float f = 1.0f;
      to_mask(&f, one.data(), 1, {});
    }
    return [want_mask, one](RunContext& ctx) {
      ctx.set_output(0, ctx.input(0));
      if (want_mask) {
        Tensor& m = ctx.output(1);
        kernels::FillBytes(m.raw_data(), m.num_elements(), one.data(), one.size());
      }
    };
  }

 private:
  bool bool_mask_;        // the mask is bool (opset 10 on); before, it has X's dtype
  bool training_inputs_;  // ratio and training_mode are inputs (opset 12 on)
};

}  // namespace

void RegisterConstantOps(OpRegistry& registry) {
  RegisterVersions<ConstantOp>(registry, "Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25});
  RegisterVersions<ConstantOfShapeOp>(registry, "ConstantOfShape", {9, 20, 21, 23, 24, 25});
  RegisterVersions<RangeOp>(registry, "Range", {11});
  RegisterVersions<DropoutOp>(registry, "Dropout", {1, 6, 7, 10, 12, 13, 22});
}

}  // namespace simplecpp::graph::tensor_ops
