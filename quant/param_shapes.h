// The shapes of QuantizeLinear / DequantizeLinear-style parameters: deciding from the scale's
// shape whether a QuantParams is per-tensor, per-axis or blocked (checking it against x's
// shape), and where each element of x finds its scale and zero point. Validation returns the
// message of what is wrong (empty when fine) so that the caller reports it with its own context
// (the graph names the node and op). Plain data and functions: no graph, no Highway.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quant/quant_params.h"
#include "simplecpp/tensor.h"

namespace simplecpp::quant {

// True when every dimension is 1 (a scalar or any one-element shape).
bool IsOneElement(const Dims& dims);

// "" when a zero point of shape `zero_point` may go with a scale of shape `scale`: the same
// shape, or both one element of rank <= 1 ([] with [1]: ONNX's own int4 / int2 test models pair a
// scalar scale with a [1] zero point). Else the message.
std::string CheckZeroPointShape(const Dims& scale, const Dims& zero_point);

// True when a scale of shape `scale` is per-tensor: a scalar, or [1] when block_size is 0.
bool IsPerTensorScale(const Dims& scale, int64_t block_size);

// For a scale that is not per-tensor: sets params' granularity (per-axis when block_size is 0,
// else blocked), axis (axis normalized against x's rank) and block_size, after checking `scale`
// against x: per-axis is 1-D of length x[axis]; blocked has x's shape except
// ceil(x[axis] / block_size) along axis. Returns "" or the message of the first check failed
// (a scalar x, an axis out of range, a scale of the wrong shape).
std::string ResolveAxisGranularity(const Dims& x, const Dims& scale, int64_t axis,
                                   int64_t block_size, QuantParams* params);

// A stretch of x (flattened) whose elements use one scale / zero point (param_step 0) or one
// each (param_step 1), starting at param_offset of the flattened parameter tensors.
struct ParamRun {
  int64_t x_offset;
  int64_t length;
  int64_t param_offset;
  int64_t param_step;
};

// x (shape `x`) cut into ParamRuns for params' granularity, axis and block_size, in x's order;
// no runs when x is empty. Runs are as long as the layout allows: a per-axis scale along the
// last axis gives one run per row with step 1, along an earlier axis one run per slice.
std::vector<ParamRun> SplitIntoParamRuns(const Dims& x, const QuantParams& params);

}  // namespace simplecpp::quant
