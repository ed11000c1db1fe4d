// The fused elementwise chain op (graph/ops/elementwise_fused.h). Not registered: only the
// elementwise fusion pass (graph/passes/elementwise_fusion.cc) creates it, from ops it has
// checked, so its inputs are x and one-element constants of x's dtype.
#include "graph/ops/elementwise_fused.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "graph/ops/broadcast.h"
#include "graph/ops/elementwise_common.h"
#include "graph/ops/float16_kind.h"

namespace simplecpp::graph::elementwise {
namespace {

// Elements per block: the running block stays in L1 between steps (16 KiB of float32).
constexpr int64_t kFusedBlock = 4096;
static_assert(kChunk % kFusedBlock == 0, "blocks must not straddle parallel chunks");

// The kernels of one step on float32 and on 16-bit storage: the ones the unfused ops call.
struct StepKernelsF32 {
  void Unary(const FusedStep& s, const float* x, float* y, int64_t n) const {
    if (s.kind == FusedStep::Kind::kClip) {
      kernels::ClipF32(x, y, n, s.clip_lo, s.clip_hi);
    } else {
      kernels::UnaryF32(s.unary, s.params, x, y, n);
    }
  }
  void Binary(const FusedStep& s, const float* a, int64_t as, const float* b, int64_t bs,
              float* o, int64_t n) const {
    kernels::BinaryF32(s.binary, a, as, b, bs, o, n);
  }
};
struct StepKernels16 {
  kernels::Float16Kind kind;
  void Unary(const FusedStep& s, const uint16_t* x, uint16_t* y, int64_t n) const {
    if (s.kind == FusedStep::Kind::kClip) {
      kernels::Clip16(kind, x, y, n, s.clip_lo, s.clip_hi);
    } else {
      kernels::Unary16(kind, s.unary, s.params, x, y, n);
    }
  }
  void Binary(const FusedStep& s, const uint16_t* a, int64_t as, const uint16_t* b, int64_t bs,
              uint16_t* o, int64_t n) const {
    kernels::Binary16(kind, s.binary, a, as, b, bs, o, n);
  }
};

// Runs the steps over one block of `len` elements: x is the block of the chain input, y the
// block of the output; c[k] is input k's single element (k > 0); slots holds the saved chain
// values, kFusedBlock elements each.
template <typename T, typename Kernels>
void RunBlock(const std::vector<FusedStep>& steps, const T* x, T* y, int64_t len, const T* c,
              T* slots, const Kernels& k) {
  const T* running = x;
  for (const FusedStep& s : steps) {
    if (s.kind != FusedStep::Kind::kBinary) {
      k.Unary(s, running, y, len);  // unary ops and Clip
    } else {
      const T* other = s.operand_slot >= 0 ? slots + s.operand_slot * kFusedBlock
                       : s.operand == 0    ? x
                                           : c + s.operand;
      const int64_t other_step = (s.operand_slot >= 0 || s.operand == 0) ? 1 : 0;
      if (s.running_is_lhs) {
        k.Binary(s, running, int64_t{1}, other, other_step, y, len);
      } else {
        k.Binary(s, other, other_step, running, int64_t{1}, y, len);
      }
    }
    if (s.save_slot >= 0) {
      std::copy(y, y + len, slots + s.save_slot * kFusedBlock);
    }
    running = y;
  }
}

class FusedElementwiseOp final : public Op {
 public:
  FusedElementwiseOp(FusedProgram program, int num_inputs)
      : program_(std::move(program)), num_inputs_(num_inputs) {}

  const FusedProgram* AsFusedProgram() const override { return &program_; }

  void InferTypes(TypeContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    if (dt != DType::kFloat32 && !Is16BitFloat(dt)) {
      ctx.Unsupported("fused elementwise chain on " + DTypeName(dt));
    }
    for (int i = 1; i < ctx.num_inputs(); ++i) ctx.RequireSameDType(0, i);
    ctx.set_output_dtype(0, dt);
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    if (ctx.num_inputs() != num_inputs_) ctx.Fail("fused chain: wrong number of inputs");
    std::vector<Dims> shapes;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (i > 0 && CheckedNumElements(ctx.input_dims(i)) != 1) {
        ctx.Fail("fused chain: operand " + std::to_string(i) + " has shape " +
                 DimsToString(ctx.input_dims(i)) + ", expected one element");
      }
      shapes.push_back(ctx.input_dims(i));
    }
    Dims out;
    std::string why;
    if (!BroadcastShape(shapes, &out, &why)) ctx.Fail(why);
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out);  // same element count and order as x: operands are one element
    const FusedProgram program = program_;
    if (dt == DType::kFloat32) {
      return [program](RunContext& c) {
        if (!RunRegisterChain(c, program)) {
          Run<float>(c, program.steps, program.num_slots, StepKernelsF32{});
        }
      };
    }
    const StepKernels16 k16{Float16KindOf(dt)};
    return [program, k16](RunContext& c) {
      if (!RunRegisterChain16(c, program, k16.kind)) {
        Run<uint16_t>(c, program.steps, program.num_slots, k16);
      }
    };
  }

 private:
  // The float32 program in registers, when it has that form (false: nothing ran).
  static bool RunRegisterChain(RunContext& c, const FusedProgram& program) {
    std::vector<float> constants(static_cast<size_t>(c.num_inputs()), 0.0f);
    for (int i = 1; i < c.num_inputs(); ++i) constants[i] = c.input(i).data<float>()[0];
    std::vector<kernels::ChainStepF32> chain;
    if (!ToRegisterChain(program, constants.data(), &chain)) return false;
    const float* x = c.input(0).data<float>();
    float* y = c.output(0).data<float>();
    ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
      kernels::ChainF32(chain.data(), static_cast<int>(chain.size()), x + b, y + b, e - b);
    });
    return true;
  }

  // The same on 16-bit storage.
  static bool RunRegisterChain16(RunContext& c, const FusedProgram& program,
                                 kernels::Float16Kind kind) {
    std::vector<float> constants(static_cast<size_t>(c.num_inputs()), 0.0f);
    for (int i = 1; i < c.num_inputs(); ++i) {
      constants[i] = kernels::Widen16One(kind, c.input(i).data<uint16_t>()[0]);
    }
    std::vector<kernels::ChainStepF32> chain;
    if (!ToRegisterChain(program, constants.data(), &chain)) return false;
    const uint16_t* x = c.input(0).data<uint16_t>();
    uint16_t* y = c.output(0).data<uint16_t>();
    const int steps = static_cast<int>(chain.size());
    kernels::Chain16UseReciprocals(kind, chain.data(), steps);
    const bool round_all = kernels::Chain16RoundsAll(kind, chain.data(), steps);
    ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
      kernels::Chain16(kind, chain.data(), steps, round_all, x + b, y + b, e - b);
    });
    return true;
  }

  template <typename T, typename Kernels>
  static void Run(RunContext& c, const std::vector<FusedStep>& steps, int num_slots,
                  const Kernels& k) {
    const T* x = static_cast<const T*>(c.input(0).raw_data());
    T* y = static_cast<T*>(c.output(0).raw_data());
    // The operands' single elements side by side (entry 0 unused), as RunBlock reads them.
    std::vector<T> constants(static_cast<size_t>(c.num_inputs()), T{});
    for (int i = 1; i < c.num_inputs(); ++i) {
      constants[i] = static_cast<const T*>(c.input(i).raw_data())[0];
    }
    ForChunks(c.parallel(), c.input(0).num_elements(), [&](int64_t b, int64_t e) {
      // Per chunk, so that parallel chunks never share a slot.
      std::vector<T> slots(static_cast<size_t>(num_slots) * kFusedBlock);
      for (int64_t i = b; i < e; i += kFusedBlock) {
        const int64_t len = std::min(kFusedBlock, e - i);
        RunBlock<T>(steps, x + i, y + i, len, constants.data(), slots.data(), k);
      }
    });
  }

  FusedProgram program_;
  int num_inputs_;
};

}  // namespace

std::unique_ptr<Op> MakeFusedElementwiseOp(FusedProgram program, int num_inputs) {
  return std::make_unique<FusedElementwiseOp>(std::move(program), num_inputs);
}

bool ToRegisterChain(const FusedProgram& program, const float* c,
                     std::vector<kernels::ChainStepF32>* out) {
  using Chain = kernels::ChainStepF32;
  out->clear();
  if (program.steps.size() > static_cast<size_t>(kernels::kChainMaxSteps) ||
      program.num_slots > kernels::kChainMaxSlots) {
    return false;
  }
  for (const FusedStep& s : program.steps) {
    Chain step;
    step.save_slot = static_cast<int8_t>(s.save_slot);
    if (s.kind == FusedStep::Kind::kClip) {
      step.kind = Chain::Kind::kClip;
      step.lo = s.clip_lo;
      step.hi = s.clip_hi;
    } else if (s.kind == FusedStep::Kind::kUnary) {
      if (s.unary == kernels::UnaryOp::kRelu) {
        step.kind = Chain::Kind::kRelu;
      } else if (s.unary == kernels::UnaryOp::kHardSigmoid) {
        step.kind = Chain::Kind::kHardSigmoid;
        step.lo = s.params.alpha;
        step.hi = s.params.beta;
      } else if (s.unary == kernels::UnaryOp::kHardSwish) {
        step.kind = Chain::Kind::kHardSwish;
        step.lo = 1.0f / 6.0f;
        step.hi = 0.5f;
      } else {
        return false;
      }
    } else {
      switch (s.binary) {
        case kernels::BinaryOp::kAdd: step.kind = Chain::Kind::kAdd; break;
        case kernels::BinaryOp::kSub: step.kind = Chain::Kind::kSub; break;
        case kernels::BinaryOp::kMul: step.kind = Chain::Kind::kMul; break;
        case kernels::BinaryOp::kDiv: step.kind = Chain::Kind::kDiv; break;
        default: return false;
      }
      step.running_is_lhs = s.running_is_lhs;
      if (s.operand_slot >= 0) {
        step.operand = Chain::Operand::kSlot;
        step.operand_slot = static_cast<int8_t>(s.operand_slot);
      } else if (s.operand == 0) {
        step.operand = Chain::Operand::kInput;
      } else {
        step.operand = Chain::Operand::kConstant;
        step.constant = c[s.operand];
      }
    }
    out->push_back(step);
  }
  return true;
}

namespace {

bool ReadsXLater(const FusedProgram& program) {
  for (const FusedStep& s : program.steps) {
    if (s.kind == FusedStep::Kind::kBinary && s.operand_slot < 0 && s.operand == 0) return true;
  }
  return false;
}

}  // namespace

FusedChain::FusedChain(FusedProgram program, std::vector<float> constants)
    : program_(std::move(program)), constants_f32_(std::move(constants)) {
  reads_x_later_ = ReadsXLater(program_);
  if (!ToRegisterChain(program_, constants_f32_.data(), &register_chain_)) {
    register_chain_.clear();
  }
}

FusedChain::FusedChain(FusedProgram program, kernels::Float16Kind kind,
                       std::vector<uint16_t> constants)
    : program_(std::move(program)),
      is_16bit_(true),
      kind_(kind),
      constants_16_(std::move(constants)) {
  reads_x_later_ = ReadsXLater(program_);
  std::vector<float> widened(constants_16_.size());
  for (size_t i = 0; i < widened.size(); ++i) {
    widened[i] = kernels::Widen16One(kind_, constants_16_[i]);
  }
  if (!ToRegisterChain(program_, widened.data(), &register_chain_)) register_chain_.clear();
  kernels::Chain16UseReciprocals(kind_, register_chain_.data(),
                                 static_cast<int>(register_chain_.size()));
  register_round_all_ = kernels::Chain16RoundsAll(
      kind_, register_chain_.data(), static_cast<int>(register_chain_.size()));
}

template <typename T, typename Kernels>
void FusedChain::Run(T* data, int64_t n, const std::vector<T>& constants,
                     const Kernels& k) const {
  // The steps write each block in place, so a chain that reads x again (x * sigmoid(x)) reads a
  // copy of the block taken before the first step. One scratch per thread: the producer calls
  // this from its worker threads.
  static thread_local std::vector<T> scratch;
  const size_t per_block = static_cast<size_t>(kFusedBlock);
  const size_t need =
      per_block * (static_cast<size_t>(program_.num_slots) + (reads_x_later_ ? 1 : 0));
  if (scratch.size() < need) scratch.resize(need);
  T* slots = scratch.data();
  T* x_copy = slots + per_block * static_cast<size_t>(program_.num_slots);
  for (int64_t i = 0; i < n; i += kFusedBlock) {
    const int64_t len = std::min(kFusedBlock, n - i);
    const T* x = data + i;
    if (reads_x_later_) {
      std::copy(data + i, data + i + len, x_copy);
      x = x_copy;
    }
    RunBlock<T>(program_.steps, x, data + i, len, constants.data(), slots, k);
  }
}

void FusedChain::RunInPlaceF32(float* data, int64_t n) const {
  if (!register_chain_.empty()) {
    kernels::ChainF32(register_chain_.data(), static_cast<int>(register_chain_.size()), data,
                      data, n);
    return;
  }
  Run<float>(data, n, constants_f32_, StepKernelsF32{});
}

void FusedChain::RunInPlace16(uint16_t* data, int64_t n) const {
  if (!register_chain_.empty()) {
    kernels::Chain16(kind_, register_chain_.data(), static_cast<int>(register_chain_.size()),
                     register_round_all_, data, data, n);
    return;
  }
  Run<uint16_t>(data, n, constants_16_, StepKernels16{kind_});
}

void FusedChain::RunFromF32To16(const float* in, uint16_t* out, int64_t n) const {
  if (!register_chain_.empty()) {
    kernels::Chain16FromF32(kind_, register_chain_.data(),
                            static_cast<int>(register_chain_.size()), register_round_all_, in,
                            out, n);
    return;
  }
  kernels::Narrow16(kind_, in, out, static_cast<size_t>(n));
  RunInPlace16(out, n);
}

kernels::PostOpF32 FusedChain::AsPostOpF32() const {
  kernels::PostOpF32 post;
  post.ctx = this;
  post.fn = [](const void* ctx, float* data, int64_t n) {
    static_cast<const FusedChain*>(ctx)->RunInPlaceF32(data, n);
  };
  return post;
}

kernels::PostOp16 FusedChain::AsPostOp16() const {
  kernels::PostOp16 post;
  post.ctx = this;
  post.fn = [](const void* ctx, uint16_t* data, int64_t n) {
    static_cast<const FusedChain*>(ctx)->RunInPlace16(data, n);
  };
  post.from_f32 = [](const void* ctx, const float* in, uint16_t* out, int64_t n) {
    static_cast<const FusedChain*>(ctx)->RunFromF32To16(in, out, n);
  };
  return post;
}

}  // namespace simplecpp::graph::elementwise
