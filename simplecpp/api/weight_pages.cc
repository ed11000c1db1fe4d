// Releasing the mapped pages of a model file that the plan does not read at run time
// (model_impl.h).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "simplecpp/api/model_impl.h"
#include "simplecpp/io/mapped_file.h"

namespace simplecpp::detail {

void ReleaseUnreadWeightPages(const ModelImpl& impl, const io::MappedFile& file) {
  if (!file.mapped() || file.size() == 0) return;
  const graph::Plan& plan = *impl.plan;
  const auto base = reinterpret_cast<uintptr_t>(file.data());
  // The byte ranges of the file that running reads: every constant a step reads (explicit or
  // through a subgraph; ops may keep pointers into them from Prepare on) and the constant graph
  // outputs, where they borrow from the mapping.
  std::vector<std::pair<uintptr_t, uintptr_t>> kept;
  auto keep = [&](int id) {
    if (id < 0) return;
    const graph::ValueState& v = plan.values()[id];
    if (!v.is_constant || !v.constant.defined()) return;
    const auto p = reinterpret_cast<uintptr_t>(v.constant.raw_data());
    if (p < base || p - base >= file.size()) return;
    kept.emplace_back(p, p + v.constant.byte_size());
  };
  for (const graph::PlanStep& step : plan.steps()) {
    for (int id : step.inputs) keep(id);
  }
  for (int id : plan.output_ids()) keep(id);
  std::sort(kept.begin(), kept.end());
  // Everything else was read at most once at load: the protobuf framing, tensors copied out
  // (misaligned or converted), weights folded or repacked. ReleasePages keeps the pages a kept
  // range shares with a gap.
  uintptr_t from = base;
  for (const auto& [begin, end] : kept) {
    if (begin > from) file.ReleasePages(reinterpret_cast<const void*>(from), begin - from);
    from = std::max(from, end);
  }
  const uintptr_t file_end = base + file.size();
  if (file_end > from) file.ReleasePages(reinterpret_cast<const void*>(from), file_end - from);
}

}  // namespace simplecpp::detail
