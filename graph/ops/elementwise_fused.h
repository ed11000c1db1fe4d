// A chain of float elementwise ops run as one op (graph/passes/elementwise_fusion.h builds it).
//
// The chain reads one running value through a list of steps: unary ops, and binary ops whose
// other operand is a one-element constant or the chain's input itself (x * sigmoid(x), the erf
// Gelu spelled out as Div/Erf/Add/Mul/Mul). It is evaluated block by block, each step calling
// the same kernel the unfused op calls on the same elements, in place in the output block while
// it sits in L1: results are bit-identical to the unfused graph, one pass over memory instead of
// one per op, and no intermediate tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/op.h"
#include "kernels/elementwise.h"

namespace simplecpp::graph::elementwise {

struct FusedStep {
  enum class Kind { kUnary, kBinary };
  Kind kind = Kind::kUnary;
  kernels::UnaryOp unary = kernels::UnaryOp::kNeg;
  kernels::UnaryParams params;
  kernels::BinaryOp binary = kernels::BinaryOp::kAdd;
  int operand = 0;             // kBinary: input of the fused op (0: the chain input x, k > 0: a
                               // one-element constant)
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

// Inputs: x, then the constants the steps name. float32, float16 or bfloat16 (all the same).
std::unique_ptr<Op> MakeFusedElementwiseOp(std::vector<FusedStep> steps, int num_inputs);

}  // namespace simplecpp::graph::elementwise
