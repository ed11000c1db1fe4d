// A short float32 elementwise program evaluated in registers: the spelled-out activations a
// graph fuses into a chain (HardSwish as Add, Clip, Mul, Div; Relu after an affine step) run as
// one pass with no per-step call, instead of one kernel call and one pass over memory per step.
// Every step rounds exactly as the kernel of its op (BinaryF32, ClipF32, UnaryF32 kRelu; on
// 16-bit storage Binary16, Clip16, Unary16: float32 arithmetic, then rounded to 16 bits), so the
// result is bit-identical to calling those kernels one after the other.
#pragma once

#include <cstdint>

#include "kernels/float16/float16.h"

namespace simplecpp::kernels {

constexpr int kChainMaxSteps = 16;
constexpr int kChainMaxSlots = 4;

struct ChainStepF32 {
  // kAdd..kDiv: the running value and the operand; kClip: ClipF32's blends (NaN passes, lo > hi
  // gives hi); kRelu: UnaryF32's kRelu (x < 0 ? 0 : x, NaN and -0 pass); kHardSigmoid /
  // kHardSwish: UnaryF32's (alpha = lo, beta = hi; HardSwish's are 1/6 and 0.5).
  enum class Kind : uint8_t { kAdd, kSub, kMul, kDiv, kClip, kRelu, kHardSigmoid, kHardSwish };
  // The binary steps' other operand: a constant, the program's input x, or a value an earlier
  // step saved in a slot.
  enum class Operand : uint8_t { kConstant, kInput, kSlot };
  Kind kind = Kind::kAdd;
  Operand operand = Operand::kConstant;
  bool running_is_lhs = true;  // running value op operand (else operand op running value)
  int8_t operand_slot = -1;    // kSlot: which slot
  int8_t save_slot = -1;       // >= 0: the step's result is also kept in that slot
  float constant = 0.0f;       // kConstant operand
  float lo = 0.0f, hi = 0.0f;  // kClip bounds
};

// y[i] = the steps applied in order to x[i], for i < n; y may equal x. At most kChainMaxSteps
// steps and slots below kChainMaxSlots (callers check; larger programs keep the kernel calls).
void ChainF32(const ChainStepF32* steps, int num_steps, const float* x, float* y, int64_t n);

// The same on float16 / bfloat16 bits: every step's result is rounded to `kind` (the chain input,
// the constants and the clip bounds are the 16-bit values, widened exactly).
void Chain16(Float16Kind kind, const ChainStepF32* steps, int num_steps, const uint16_t* x,
             uint16_t* y, int64_t n);

// Whether Chain16 must round Clip's results as well: Clip bounds that are not 16-bit values
// (Clip-6's float attributes) make its result a value that needs rounding like any other step's.
bool Chain16RoundsAll(Float16Kind kind, const ChainStepF32* steps, int num_steps);
// Chain16 with that answer given (callers that run one chain on many short runs keep it).
void Chain16(Float16Kind kind, const ChainStepF32* steps, int num_steps, bool round_all,
             const uint16_t* x, uint16_t* y, int64_t n);
// Rewrites each step running / c (c a constant) into running * (1 / c) where that gives the same
// 16-bit result for every 16-bit running value (checked once per kind and c over all 65536
// patterns): Chain16's results are unchanged, and a multiplication costs a fraction of a
// division (HardSwish spelled out divides by 6 on every element). Only for Chain16 programs:
// the running value before every step of those is a 16-bit value, and the step's result is
// rounded to 16 bits.
void Chain16UseReciprocals(Float16Kind kind, ChainStepF32* steps, int num_steps);

// Narrow16 of float32 x into y, then Chain16 on y, in one pass: the same bits.
void Chain16FromF32(Float16Kind kind, const ChainStepF32* steps, int num_steps, bool round_all,
                    const float* x, uint16_t* y, int64_t n);

}  // namespace simplecpp::kernels
