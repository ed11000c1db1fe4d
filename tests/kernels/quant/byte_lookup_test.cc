// LookupBytes against the plain y[i] = table[x[i]] on every compiled target: lengths around the
// 64-byte vector step (and 0), every index value, and the in-place form.
#include "kernels/quant/byte_lookup.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

TEST_CASE("LookupBytes matches the plain table loop on every target") {
  std::mt19937 rng(11);
  std::vector<uint8_t> table(256);
  for (auto& v : table) v = static_cast<uint8_t>(rng());
  for (const Target& target : CompiledTargets()) {
    ScopedTarget scoped(target);
    CAPTURE(target.name);
    for (int64_t n : {0, 1, 3, 63, 64, 65, 127, 128, 129, 256, 1000, 4099}) {
      CAPTURE(n);
      std::vector<uint8_t> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        // Every index value appears (both table halves, the top bit set and clear).
        x[static_cast<size_t>(i)] = static_cast<uint8_t>(i < 256 ? (i * 37) & 255 : rng());
      }
      std::vector<uint8_t> y(static_cast<size_t>(n) + 1, 0xA5);  // one guard byte
      LookupBytes(table.data(), x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        REQUIRE(y[static_cast<size_t>(i)] == table[x[static_cast<size_t>(i)]]);
      }
      CHECK(y[static_cast<size_t>(n)] == 0xA5);
      std::vector<uint8_t> in_place = x;
      LookupBytes(table.data(), in_place.data(), in_place.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        REQUIRE(in_place[static_cast<size_t>(i)] == table[x[static_cast<size_t>(i)]]);
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
