// A float's bits as an unsigned integer and back, through memcpy (the defined way to reinterpret
// before C++20's std::bit_cast): the one copy every layer's scalar format code uses.
#pragma once

#include <cstdint>
#include <cstring>

namespace simplecpp {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float FloatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint64_t DoubleBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof(u));
  return u;
}

}  // namespace simplecpp
