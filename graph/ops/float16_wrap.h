// float16 / bfloat16 for ops that compute in float32 (RNN/GRU/LSTM, ConvTranspose, Resize):
// storage is 16-bit, arithmetic is float32, and each output element is rounded once.
//
// PrepareWidened16 runs the op's float32 Prepare on a float32 view of the node: the inputs listed
// in `widen` are seen as float32 (constant / value inputs among them are widened here, once, so
// the float32 Prepare can prepack them); every float32 output it declares becomes an output of
// the 16-bit dtype. The returned RunFn widens the non-constant listed inputs into scratch, runs the
// float32 RunFn on a float32 RunContext (scratch from the same session pool) and narrows each
// output once, round to nearest even (kernels/float16/float16.h Widen16 / Narrow16).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/op.h"
#include "graph/ops/float16_kind.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph {
namespace widen16 {

// Hands the float32 RunFn scratch from the outer RunContext's pool.
class ScratchAllocator final : public TensorAllocator {
 public:
  explicit ScratchAllocator(RunContext& rc) : rc_(rc) {}
  Tensor Allocate(DType dtype, const Dims& dims) override { return rc_.Scratch(dtype, dims); }

 private:
  RunContext& rc_;
};

// `prepare_f32` is the op's float32 Prepare (PrepareContext& -> RunFn). Inputs of `widen` that
// are present must have dtype `dtype16` (InferTypes checked it).
template <typename PrepareF32>
RunFn PrepareWidened16(PrepareContext& ctx, DType dtype16, const std::vector<int>& widen,
                       PrepareF32&& prepare_f32) {
  const kernels::Float16Kind kind = Float16KindOf(dtype16);
  const int num_inputs = ctx.num_inputs();
  const int num_outputs = ctx.num_outputs();
  std::vector<bool> widened(static_cast<size_t>(num_inputs), false);
  // Float32 copies of the listed inputs whose value is known now (null: widen at run time).
  auto consts = std::make_shared<std::vector<std::shared_ptr<const Tensor>>>(
      static_cast<size_t>(num_inputs));
  std::vector<InputInfo> inputs(static_cast<size_t>(num_inputs));
  for (int i = 0; i < num_inputs; ++i) {
    InputInfo& info = inputs[i];
    info.present = ctx.has_input(i);
    if (!info.present) continue;
    info.dtype = ctx.input_dtype(i);
    info.dims = ctx.input_dims(i);
    info.value = ctx.input_value(i);
  }
  for (int i : widen) {
    if (i < 0 || i >= num_inputs || !inputs[i].present) continue;
    if (inputs[i].dtype != dtype16) {
      ctx.Fail("input " + std::to_string(i) + " has dtype " + DTypeName(inputs[i].dtype) +
               ", expected " + DTypeName(dtype16));
    }
    widened[i] = true;
    inputs[i].dtype = DType::kFloat32;
    if (const Tensor* v = inputs[i].value; v != nullptr) {
      auto f = std::make_shared<Tensor>(DType::kFloat32, v->dims());
      kernels::Widen16(kind, v->data<uint16_t>(), f->data<float>(),
                       static_cast<size_t>(v->num_elements()));
      (*consts)[i] = f;
      inputs[i].value = f.get();
    }
  }

  PrepareContext inner(ctx.node(), ctx.opset(), std::move(inputs), num_outputs, &ctx.parallel());
  RunFn run_f32 = prepare_f32(inner);

  std::vector<Dims> out_dims(static_cast<size_t>(num_outputs));
  std::vector<bool> out_live(static_cast<size_t>(num_outputs), false);
  for (int i = 0; i < num_outputs; ++i) {
    const PrepareContext::OutputSpec& spec = inner.outputs()[i];
    if (!spec.declared) continue;
    if (spec.dynamic || spec.dtype != DType::kFloat32) {
      ctx.Unsupported("output " + std::to_string(i) + " of the float32 computation is not a "
                      "float32 tensor of static shape");
    }
    ctx.set_output(i, dtype16, spec.dims);
    out_dims[i] = spec.dims;
    out_live[i] = ctx.has_output(i);
  }

  return [run_f32, consts, widened, out_dims, out_live, kind](RunContext& rc) {
    const size_t ni = widened.size(), no = out_dims.size();
    std::vector<Tensor> holders(ni);
    std::vector<const Tensor*> ins(ni, nullptr);
    for (size_t i = 0; i < ni; ++i) {
      if (!rc.has_input(static_cast<int>(i))) continue;
      const Tensor& in = rc.input(static_cast<int>(i));
      if (!widened[i]) {
        ins[i] = &in;
      } else if ((*consts)[i] != nullptr) {
        ins[i] = (*consts)[i].get();
      } else {
        holders[i] = rc.Scratch(DType::kFloat32, in.dims());
        kernels::Widen16(kind, in.data<uint16_t>(), holders[i].data<float>(),
                         static_cast<size_t>(in.num_elements()));
        ins[i] = &holders[i];
      }
    }
    std::vector<Tensor> outs(no);
    for (size_t i = 0; i < no; ++i) {
      if (out_live[i]) outs[i] = rc.Scratch(DType::kFloat32, out_dims[i]);
    }
    ScratchAllocator allocator(rc);
    RunContext inner(rc.node(), std::move(ins), &outs, &allocator, &rc.parallel());
    run_f32(inner);
    for (size_t i = 0; i < no; ++i) {
      if (!out_live[i]) continue;
      kernels::Narrow16(kind, outs[i].data<float>(), rc.output(static_cast<int>(i)).data<uint16_t>(),
                        static_cast<size_t>(outs[i].num_elements()));
    }
  };
}

}  // namespace widen16
}  // namespace simplecpp::graph
