// Optional ops: Optional (wrap a value, or make an empty optional of a given type),
// OptionalHasElement and OptionalGetElement. At run time an optional holding a value is that
// value itself and an empty one is Value::None() (see simplecpp/value.h); the types say which
// values are optional.
#include "graph/ops/families.h"
#include "graph/registry.h"

namespace simplecpp::graph {
namespace {

// ---- Optional (opset 15) ----
class OptionalOp final : public Op {
 public:
  explicit OptionalOp(const OpInit& init) {
    if (const Attribute* a = init.Find("type", AttrKind::kTypeProto)) {
      if (a->types.empty()) init.Fail("attribute 'type' holds no type");
      has_type_ = true;
      type_ = ValueTypeOf(a->types[0], init.Prefix() + "attribute 'type'");
      if (type_.optional) init.Unsupported("optional of optional is not supported");
    }
    if (!init.has_input(0) && !has_type_) init.Fail("needs an input or the 'type' attribute");
  }
  bool takes_values() const override { return true; }
  void InferTypes(TypeContext& ctx) const override {
    if (ctx.has_input(0)) {
      const ValueType in = ctx.input_type(0);
      if (in.optional) ctx.Fail("input is already optional (" + in.ToString() + ")");
      if (has_type_ && type_ != in) {
        ctx.Fail("input is " + in.ToString() + ", attribute 'type' says " + type_.ToString());
      }
      ctx.set_output_type(0, in.AsOptional());
    } else {
      ctx.set_output_type(0, type_.AsOptional());
    }
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.has_input(0) ? ctx.input_dtype(0) : type_.dtype);
    return [](RunContext& rc) { rc.set_value(0, rc.value(0) ? *rc.value(0) : Value::None()); };
  }

 private:
  bool has_type_ = false;
  ValueType type_;
};

// ---- OptionalHasElement (15: optional input; 18: also tensor/sequence, or no input) ----
class OptionalHasElementOp final : public Op {
 public:
  explicit OptionalHasElementOp(const OpInit& init) : optional_input_required_(init.opset() < 18) {
    if (optional_input_required_ && !init.has_input(0)) init.Fail("needs an input before opset 18");
  }
  bool takes_values() const override { return true; }
  void InferTypes(TypeContext& ctx) const override {
    if (ctx.has_input(0) && optional_input_required_ && !ctx.input_type(0).optional) {
      ctx.Fail("input is " + ctx.input_type(0).ToString() + ", expected an optional before opset 18");
    }
    ctx.set_output_dtype(0, DType::kBool);
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, DType::kBool);
    return [](RunContext& rc) {
      Tensor& out = rc.allocate_output(0, DType::kBool, {});
      out.data<uint8_t>()[0] = rc.value(0) && !rc.value(0)->is_none() ? 1 : 0;
    };
  }

 private:
  // Before opset 18 the input must be present and an optional (18: absent, tensor or sequence).
  bool optional_input_required_;
};

// ---- OptionalGetElement (15: optional input; 18: a tensor/sequence passes through) ----
class OptionalGetElementOp final : public Op {
 public:
  explicit OptionalGetElementOp(const OpInit& init) : optional_input_required_(init.opset() < 18) {}
  bool takes_values() const override { return true; }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    const ValueType in = ctx.input_type(0);
    if (optional_input_required_ && !in.optional) {
      ctx.Fail("input is " + in.ToString() + ", expected an optional before opset 18");
    }
    ctx.set_output_type(0, in.Element());
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    ctx.set_output_dynamic(0, ctx.input_dtype(0));
    return [](RunContext& rc) {
      const Value& v = *rc.value(0);
      if (v.is_none()) rc.Fail("the optional input is empty");
      rc.set_value(0, v);
    };
  }

 private:
  // Before opset 18 the input must be an optional (from 18 a plain tensor or sequence is allowed).
  bool optional_input_required_;
};

}  // namespace

void RegisterOptionalOps(OpRegistry& registry) {
  registry.Register("", "Optional", 15, MakeFactory<OptionalOp>());
  for (int v : {15, 18}) {
    registry.Register("", "OptionalHasElement", v, MakeFactory<OptionalHasElementOp>());
    registry.Register("", "OptionalGetElement", v, MakeFactory<OptionalGetElementOp>());
  }
}

}  // namespace simplecpp::graph
