// The quantizers' common pre-pass (quantize_prepare.h).
#include "simplecpp/convert/quantize_prepare.h"

#include "simplecpp/convert/constant_initializers.h"
#include "simplecpp/convert/opset_upgrade.h"

namespace simplecpp::convert::detail {

graph::Model PrepareForQuantization(const graph::Model& model, int64_t min_opset, int64_t target,
                                    QuantizeReport* report) {
  graph::Model out = model;
  QuantizeReport r;
  r.upgrade.from = r.upgrade.to = out.OpsetVersion("");
  if (r.upgrade.from < min_opset) r.upgrade = UpgradeOpset(&out, target);
  r.constants_to_initializers = ConstantsToInitializers(&out.graph, out.ir_version < 4);
  if (report) *report = r;
  return out;
}

}  // namespace simplecpp::convert::detail
