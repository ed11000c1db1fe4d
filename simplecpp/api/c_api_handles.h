// The C API's opaque handle types (declared in simplecpp/simplecpp_c.h), defined once for every
// translation unit that implements C entry points: simplecpp/api/c_api.cc and the JavaScript
// module's extras (simplecpp/js/src/js_extras.cc). Internal: not installed, not for users.
#pragma once

#include <cstdint>
#include <string>

#include "simplecpp/simplecpp.h"
#include "simplecpp/simplecpp_c.h"

struct sc_status {
  int32_t code;
  std::string message;
};
struct sc_model {
  simplecpp::Model model;
};
struct sc_session {
  simplecpp::Session session;
};
struct sc_tensor {
  simplecpp::Tensor tensor;
};
struct sc_load_options {
  simplecpp::LoadOptions options;
};
