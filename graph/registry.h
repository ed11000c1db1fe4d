// The op registry: (domain, op_type, since_version) -> factory. For a model importing opset V of a
// domain, the entry with the highest since_version <= V is chosen (ONNX's own versioning rule).
// An op whose semantics change at a version registers each version separately.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "graph/op.h"

namespace simplecpp::graph {

class OpRegistry {
 public:
  // The registry holding every built-in op (built on first use, then immutable).
  static const OpRegistry& Global();

  void Register(const std::string& domain, const std::string& op_type, int since_version,
                OpFactory factory);
  // Nullptr when the op is unknown or registered only for versions newer than `opset`.
  // *since_version (when non-null) receives the version chosen.
  const OpFactory* Find(const std::string& domain, const std::string& op_type, int64_t opset,
                        int* since_version = nullptr) const;
  // Every registered (domain, op_type) with its versions, sorted.
  std::vector<std::tuple<std::string, std::string, std::vector<int>>> List() const;
  // Human-readable reason why Find returned nullptr.
  std::string WhyMissing(const std::string& domain, const std::string& op_type, int64_t opset) const;

 private:
  std::map<std::pair<std::string, std::string>, std::map<int, OpFactory>> entries_;
};

// Registers all built-in ops; graph/ops/all_ops.cc calls one function per op family.
void RegisterAllOps(OpRegistry& registry);

}  // namespace simplecpp::graph
