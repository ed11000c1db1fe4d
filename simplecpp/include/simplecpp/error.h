// The one exception type the library throws. Messages name the node, the op and what was wrong,
// e.g. "node 'conv1' (Conv, opset 13): input X has rank 3, expected 4". The C API turns it into a
// status object; nothing else crosses that boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace simplecpp {

enum class ErrorCode : int32_t {
  kInvalidArgument = 1,  // bad input from the caller: wrong name, dtype, shape
  kInvalidModel = 2,     // malformed bytes, broken graph, bad attribute
  kUnsupported = 3,      // valid ONNX this library does not run (op, version, dtype combination)
  kRuntime = 4,          // failure while running: out-of-range index, data-dependent shape error
  kLimitExceeded = 5,    // a resource limit (size, element count, memory) was hit
  kIo = 6,               // a file could not be read or written
  kInternal = 7,         // a bug in this library
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  explicit Error(const std::string& message) : Error(ErrorCode::kRuntime, message) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace simplecpp
