// RunNodeOptions in one call, for op tests (beside op_test_util.h).
#pragma once

#include <cstdint>
#include <string>

#include "graph/op_test_util.h"

namespace simplecpp::testing {

// RunNodeOptions for `opset` of `domain` ("" is ai.onnx) with `threads` threads and
// `num_outputs` node outputs.
inline RunNodeOptions NodeOptions(int64_t opset, int threads = 1, int num_outputs = 1,
                                  const std::string& domain = "") {
  RunNodeOptions o;
  o.opset = opset;
  o.num_outputs = num_outputs;
  o.domain = domain;
  o.threads = threads;
  return o;
}

}  // namespace simplecpp::testing
