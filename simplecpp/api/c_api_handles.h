// The C API's opaque handle types (declared in simplecpp/simplecpp_c.h), defined once for every
// translation unit that implements C entry points: simplecpp/api/c_api.cc and the JavaScript
// module's extras (simplecpp/js/src/js_extras.cc), with the status helpers they share. Internal: not
// installed, not for users.
#pragma once

#include <cstdint>
#include <new>
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
struct sc_decoder {
  simplecpp::Decoder decoder;
};
struct sc_load_options {
  simplecpp::LoadOptions options;
};

namespace simplecpp::capi {

// Returned when even the status object cannot be allocated; sc_status_free ignores it.
inline sc_status kOutOfMemoryStatus{SC_ERR_LIMIT_EXCEEDED, "out of memory"};

inline sc_status* MakeStatus(int32_t code, const std::string& message) {
  try {
    return new sc_status{code, message};
  } catch (...) {
    return &kOutOfMemoryStatus;
  }
}

// Runs fn, turning every exception into a status object.
template <typename Fn>
sc_status* Guard(Fn&& fn) {
  try {
    fn();
    return nullptr;
  } catch (const simplecpp::Error& e) {
    return MakeStatus(static_cast<int32_t>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return MakeStatus(SC_ERR_LIMIT_EXCEEDED, "out of memory");
  } catch (const std::exception& e) {
    return MakeStatus(SC_ERR_INTERNAL, e.what());
  } catch (...) {
    return MakeStatus(SC_ERR_INTERNAL, "unknown error");
  }
}

inline sc_status* NullArgument(const char* what) {
  return MakeStatus(SC_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}

}  // namespace simplecpp::capi
