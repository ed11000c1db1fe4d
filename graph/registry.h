// The op registry: (domain, op_type, since_version) -> factory. For a model importing opset V of a
// domain, the entry with the highest since_version <= V is chosen (ONNX's own versioning rule).
// An op whose semantics change at a version registers each version separately.
#pragma once

#include <initializer_list>
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

  // The ~500 registrations are code in every binary (0.04 MB of the WebAssembly package): string
  // literals and a factory reference keep each call site to a few instructions (no std::string
  // or factory copy built inline); the std::string overload is for computed names.
  void Register(const char* domain, const char* op_type, int since_version,
                const OpFactory& factory);
  void Register(const std::string& domain, const std::string& op_type, int since_version,
                const OpFactory& factory);
  // Register(domain, op_type, v, factory) for each v of versions.
  void RegisterVersions(const char* domain, const char* op_type,
                        std::initializer_list<int> versions, const OpFactory& factory);
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
