// Deterministic model inputs and a float-vs-quantized output comparison, for the quantizers'
// default calibration run (QDQ) and accuracy report (weights). Internal to simplecpp/convert.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/ir.h"
#include "simplecpp/simplecpp.h"
#include "simplecpp/tensor.h"

namespace simplecpp::convert::detail {

// Floats uniform in [-1, 1) from a fixed-seed generator (SplitMix64), as float32.
Tensor SeededFloatTensor(const Dims& dims, uint64_t seed);

// One deterministic input set for `model`'s inputs (unknown dims 1): float32 / float16 uniform in
// [-1, 1) (input i gets seed i + 1), int64 / int32 integers in [0, int_limit(name)) from the same
// generator, bool alternating. Throws Error(kInvalidArgument) naming an input of another type or
// of unknown rank.
std::map<std::string, Tensor> SeededInputs(const Model& model,
                                           const std::map<std::string, int64_t>& int_limits);

// The exclusive upper bound for the integer ids fed to each int64 / int32 graph input: 100, or
// less when the input indexes (as Gather indices) a constant table with fewer rows.
std::map<std::string, int64_t> IdLimits(const graph::Graph& g);

struct OutputError {
  double max_abs = 0.0;   // over every element of every float output
  double mean_abs = 0.0;
  double max_ref = 0.0;   // the largest |reference output|, for scale
  int64_t elements = 0;
};

// Runs `reference` and `candidate` (same inputs and outputs) on `inputs` (empty: SeededInputs of
// the reference, ids bounded by IdLimits) and compares their float outputs. Throws when an output
// is missing or differs in shape.
OutputError CompareOutputs(const graph::Model& reference, const graph::Model& candidate,
                           const std::map<std::string, Tensor>& inputs = {});

}  // namespace simplecpp::convert::detail
