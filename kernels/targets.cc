// Target enumeration and forcing, via Highway's runtime dispatch tables.
#include "kernels/targets.h"

#include "kernels/hwy_policy.h"
// Policy first: it decides what highway.h compiles.
#include <hwy/highway.h>
#include <hwy/targets.h>

namespace simplecpp::kernels {

std::vector<Target> CompiledTargets() {
  // Computed once, before any ForceTarget narrows SupportedTargets().
  static const std::vector<Target> targets = [] {
    std::vector<Target> out;
#if HWY_ARCH_WASM
    out.push_back(Target{HWY_STATIC_TARGET, hwy::TargetName(HWY_STATIC_TARGET)});
#else
    for (int64_t bits : hwy::SupportedAndGeneratedTargets()) {
      out.push_back(Target{bits, hwy::TargetName(bits)});
    }
#endif
    return out;
  }();
  return targets;
}

Target CurrentTarget() {
#if HWY_ARCH_WASM
  return Target{HWY_STATIC_TARGET, hwy::TargetName(HWY_STATIC_TARGET)};
#else
  // The chosen target is the best one still enabled in the dispatch mask.
  const std::vector<int64_t> enabled = hwy::SupportedAndGeneratedTargets();
  if (!enabled.empty()) return Target{enabled.front(), hwy::TargetName(enabled.front())};
  return Target{HWY_STATIC_TARGET, hwy::TargetName(HWY_STATIC_TARGET)};
#endif
}

void ForceTarget(const Target& target) {
#if !HWY_ARCH_WASM
  if (target.bits == 0) {
    hwy::SetSupportedTargetsForTest(0);
  } else {
    hwy::SetSupportedTargetsForTest(target.bits);
  }
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
#else
  (void)target;
#endif
}

}  // namespace simplecpp::kernels
