// Which Highway targets were compiled and which one the kernels dispatch to. Tests loop over
// CompiledTargets() with ForceTarget() so every target's path is checked; benches print the
// current target with every line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simplecpp::kernels {

struct Target {
  int64_t bits = 0;   // Highway's HWY_* target bit
  std::string name;   // "AVX3_DL", "AVX2", "EMU128", "WASM", ...
};

// Targets compiled into this binary that the CPU supports, best first.
std::vector<Target> CompiledTargets();
// The target kernels dispatch to now.
Target CurrentTarget();
// Restricts dispatch to `target` (must be one of CompiledTargets()); bits == 0 restores the best.
void ForceTarget(const Target& target);

// RAII helper for tests: forces a target for its scope.
class ScopedTarget {
 public:
  explicit ScopedTarget(const Target& target) { ForceTarget(target); }
  ~ScopedTarget() { ForceTarget(Target{}); }
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;
};

}  // namespace simplecpp::kernels
