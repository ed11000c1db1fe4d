// The op registry (graph/registry.h).
#include "graph/registry.h"

namespace simplecpp::graph {

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterAllOps(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Register(const std::string& domain, const std::string& op_type, int since_version,
                          const OpFactory& factory) {
  entries_[{CanonicalDomain(domain), op_type}][since_version] = factory;
}

void OpRegistry::Register(const char* domain, const char* op_type, int since_version,
                          const OpFactory& factory) {
  Register(std::string(domain), std::string(op_type), since_version, factory);
}

void OpRegistry::RegisterVersions(const char* domain, const char* op_type,
                                  std::initializer_list<int> versions, const OpFactory& factory) {
  for (int v : versions) Register(domain, op_type, v, factory);
}

const OpFactory* OpRegistry::Find(const std::string& domain, const std::string& op_type,
                                  int64_t opset, int* since_version) const {
  auto it = entries_.find({CanonicalDomain(domain), op_type});
  if (it == entries_.end()) return nullptr;
  auto v = it->second.upper_bound(static_cast<int>(opset > 1 << 30 ? 1 << 30 : opset));
  if (v == it->second.begin()) return nullptr;
  --v;
  if (since_version) *since_version = v->first;
  return &v->second;
}

std::vector<std::tuple<std::string, std::string, std::vector<int>>> OpRegistry::List() const {
  std::vector<std::tuple<std::string, std::string, std::vector<int>>> out;
  for (const auto& [key, versions] : entries_) {
    std::vector<int> vs;
    for (const auto& [v, f] : versions) vs.push_back(v);
    out.emplace_back(key.first, key.second, vs);
  }
  return out;
}

std::string OpRegistry::WhyMissing(const std::string& domain, const std::string& op_type,
                                   int64_t opset) const {
  const std::string d = CanonicalDomain(domain);
  const std::string label = d.empty() ? op_type : d + ":" + op_type;
  auto it = entries_.find({d, op_type});
  if (it == entries_.end()) return "op " + label + " is not supported";
  return "op " + label + " is supported from opset " + std::to_string(it->second.begin()->first) +
         ", the model imports opset " + std::to_string(opset);
}

}  // namespace simplecpp::graph
