// A chain of float elementwise ops run as one op (graph/passes/elementwise_fusion.h builds it).
//
// The chain reads one running value through a list of steps: unary ops, and binary ops whose
// other operand is a one-element constant, the chain's input itself (x * sigmoid(x), the erf
// Gelu spelled out as Div/Erf/Add/Mul/Mul) or an earlier value of the chain kept in a scratch
// slot (HardSwish spelled v * Clip(v + 3, 0, 6) / 6 after an affine v = a * conv + b). It is evaluated block by block, each step calling
// the same kernel the unfused op calls on the same elements, in place in the output block while
// it sits in L1: results are bit-identical to the unfused graph, one pass over memory instead of
// one per op, and no intermediate tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/op.h"
#include "kernels/elementwise/chain.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/post_op.h"
#include "kernels/float16/float16.h"

namespace simplecpp::graph::elementwise {

struct FusedStep {
  // kClip: Clip with one-element constant bounds (inputs from opset 11, attributes before).
  enum class Kind { kUnary, kBinary, kClip };
  Kind kind = Kind::kUnary;
  kernels::UnaryOp unary = kernels::UnaryOp::kNeg;
  kernels::UnaryParams params;
  kernels::BinaryOp binary = kernels::BinaryOp::kAdd;
  int operand = 0;             // kBinary: input of the fused op (0: the chain input x, k > 0: a
                               // one-element constant); unused when operand_slot >= 0
  int operand_slot = -1;       // kBinary: >= 0 when the other operand is an earlier chain value,
                               // read from that scratch slot
  int save_slot = -1;          // >= 0: this step's result is also kept in that scratch slot
  float clip_lo = 0.0f;        // kClip bounds (16-bit bounds widened: exact)
  float clip_hi = 0.0f;
  bool running_is_lhs = true;  // kBinary: the running value is the left operand
  std::string op_type;         // for messages
};

// What one planned op computes per element, when it can join a chain (Op::AsFusibleUnary /
// AsFusibleBinary): float Unary math ops (with their attributes) and Add/Sub/Mul/Div from opset 7
// on (without the legacy broadcast attributes).
struct FusibleUnary {
  kernels::UnaryOp op = kernels::UnaryOp::kNeg;
  kernels::UnaryParams params;
};
struct FusibleBinary {
  kernels::BinaryOp op = kernels::BinaryOp::kAdd;
};

inline bool AsFusibleUnary(const Op& op, kernels::UnaryOp* unary, kernels::UnaryParams* params) {
  const FusibleUnary* f = op.AsFusibleUnary();
  if (f == nullptr) return false;
  *unary = f->op;
  *params = f->params;
  return true;
}
inline bool AsFusibleBinary(const Op& op, kernels::BinaryOp* binary) {
  const FusibleBinary* f = op.AsFusibleBinary();
  if (f == nullptr) return false;
  *binary = f->op;
  return true;
}

// A chain's steps and the scratch slots their save_slot / operand_slot use.
struct FusedProgram {
  std::vector<FusedStep> steps;
  int num_slots = 0;
};

// Inputs: x, then the constants the steps name. float32, float16 or bfloat16 (all the same).
// Op::AsFusedProgram returns the program.
std::unique_ptr<Op> MakeFusedElementwiseOp(FusedProgram program, int num_inputs);

// The program as a register chain (kernels/elementwise/chain.h), constant k being c[k]
// (k > 0): false when a step has no register form (unary ops other than Relu) or the program is
// longer, or uses more slots, than ChainF32 takes. ChainF32 then gives the same bits as the
// step-by-step kernels.
bool ToRegisterChain(const FusedProgram& program, const float* c,
                     std::vector<kernels::ChainStepF32>* out);

// A chain run in place on its input (a producer's output, graph/passes/conv_post_fusion.h), with
// its one-element constant operands captured: constant k is the value of the chain's input k
// (k > 0; entry 0 is unused). float32, or float16 / bfloat16 with every step rounding to 16 bits
// as the unfused ops do. Bit-identical to the FusedElementwise op on the same elements.
class FusedChain {
 public:
  FusedChain(FusedProgram program, std::vector<float> constants);  // float32
  FusedChain(FusedProgram program, kernels::Float16Kind kind,
             std::vector<uint16_t> constants);  // float16 / bfloat16 bits
  bool is_16bit() const { return is_16bit_; }
  void RunInPlaceF32(float* data, int64_t n) const;
  void RunInPlace16(uint16_t* data, int64_t n) const;
  // out = in rounded to 16 bits (Narrow16), then RunInPlace16 on it: one pass for a register
  // chain.
  void RunFromF32To16(const float* in, uint16_t* out, int64_t n) const;
  // Post-ops calling RunInPlaceF32 / RunInPlace16; valid while this object lives.
  kernels::PostOpF32 AsPostOpF32() const;
  kernels::PostOp16 AsPostOp16() const;
  const FusedProgram& program() const { return program_; }

 private:
  template <typename T, typename Kernels>
  void Run(T* data, int64_t n, const std::vector<T>& constants, const Kernels& k) const;

  FusedProgram program_;
  bool is_16bit_ = false;
  kernels::Float16Kind kind_ = kernels::Float16Kind::kHalf;
  std::vector<float> constants_f32_;
  std::vector<uint16_t> constants_16_;
  bool reads_x_later_ = false;  // some step reads the chain input after the first one ran
  std::vector<kernels::ChainStepF32> register_chain_;  // when ToRegisterChain takes the program
  bool register_round_all_ = false;                     // 16-bit: kernels::Chain16RoundsAll
};

}  // namespace simplecpp::graph::elementwise
