// simplecpp::RunOp (simplecpp/builder.h): one node as a one-node Model, cached per thread.
#include <cstring>
#include <map>

#include "simplecpp/builder.h"

namespace simplecpp {
namespace {

struct CachedOp {
  Model model;
  Session session;
};

// Cached plans per thread; a bounded number, dropped all at once when full (a test suite cycles
// through a few hundred signatures at most, so eviction order does not matter).
constexpr size_t kMaxCachedOps = 256;

void AppendBytes(std::string* key, const void* data, size_t size) {
  key->append(std::to_string(size)).push_back(':');
  key->append(static_cast<const char*>(data), size);
}

void AppendString(std::string* key, const std::string& s) { AppendBytes(key, s.data(), s.size()); }

// The cache key: everything the one-node model depends on. False when an attribute (a subgraph)
// cannot be keyed by value.
bool MakeKey(const std::string& domain, const std::string& op_type, int64_t opset,
             const std::vector<Tensor>& inputs, const Attributes& attributes, int num_outputs,
             int threads, std::string* key) {
  AppendString(key, domain);
  AppendString(key, op_type);
  key->append(std::to_string(opset) + "/" + std::to_string(num_outputs) + "/" + std::to_string(threads) + "|");
  for (const Tensor& t : inputs) {
    key->append(t.defined() ? std::to_string(static_cast<int32_t>(t.dtype())) + "r" + std::to_string(t.rank())
                            : std::string("-"));
    key->push_back(',');
  }
  for (const auto& [name, v] : attributes) {
    AppendString(key, name);
    key->append(std::to_string(static_cast<int>(v.kind())));
    switch (v.kind()) {
      case AttributeValue::Kind::kInt: key->append(std::to_string(v.i())); break;
      case AttributeValue::Kind::kFloat: {
        const float f = v.f();
        AppendBytes(key, &f, sizeof(float));
        break;
      }
      case AttributeValue::Kind::kString: AppendString(key, v.s()); break;
      case AttributeValue::Kind::kInts:
        AppendBytes(key, v.ints().data(), v.ints().size() * sizeof(int64_t));
        break;
      case AttributeValue::Kind::kFloats:
        AppendBytes(key, v.floats().data(), v.floats().size() * sizeof(float));
        break;
      case AttributeValue::Kind::kStrings:
        key->append(std::to_string(v.strings().size()));
        for (const std::string& s : v.strings()) AppendString(key, s);
        break;
      case AttributeValue::Kind::kTensor: {
        const Tensor& t = v.tensor();
        if (!t.defined() || t.dtype() == DType::kString) return false;
        key->append(std::to_string(static_cast<int32_t>(t.dtype())) + DimsToString(t.dims()));
        AppendBytes(key, t.raw_data(), t.byte_size());
        break;
      }
      case AttributeValue::Kind::kGraph: return false;
    }
  }
  return true;
}

std::unique_ptr<CachedOp> BuildOp(const std::string& domain, const std::string& op_type, int64_t opset,
                                  const std::vector<Tensor>& inputs, const Attributes& attributes,
                                  int num_outputs, int threads) {
  const bool onnx_domain = domain.empty() || domain == "ai.onnx";
  GraphBuilder b(onnx_domain ? opset : kDefaultOpset, op_type);
  if (!onnx_domain) b.ImportOpset(domain, opset);
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      names.emplace_back();
      continue;
    }
    // Unknown dims of the right rank: one plan serves every shape (the session prepares per shape).
    names.push_back(b.AddInput("input" + std::to_string(i), inputs[i].dtype(), Dims(inputs[i].rank(), -1)));
  }
  NodeOptions node;
  node.domain = onnx_domain ? "" : domain;
  node.name = op_type;
  for (int k = 0; k < num_outputs; ++k) node.output_names.push_back("output" + std::to_string(k));
  for (const std::string& out : b.AddNode(op_type, names, attributes, num_outputs, node)) b.AddOutput(out);
  Model model = b.Build();
  SessionOptions session_options;
  session_options.threads = threads;
  Session session(model, session_options);
  return std::unique_ptr<CachedOp>(new CachedOp{std::move(model), std::move(session)});
}

}  // namespace

std::vector<Tensor> RunOp(const std::string& domain, const std::string& op_type, int64_t opset,
                          const std::vector<Tensor>& inputs, const Attributes& attributes,
                          int num_outputs, int threads) {
  if (threads < 0) {
    throw Error(ErrorCode::kInvalidArgument, "RunOp: threads is " + std::to_string(threads));
  }
  thread_local std::map<std::string, std::unique_ptr<CachedOp>> cache;
  std::string key;
  const bool cacheable = MakeKey(domain, op_type, opset, inputs, attributes, num_outputs, threads, &key);
  std::unique_ptr<CachedOp> uncached;
  CachedOp* op = nullptr;
  if (cacheable) {
    auto it = cache.find(key);
    if (it == cache.end()) {
      std::unique_ptr<CachedOp> built = BuildOp(domain, op_type, opset, inputs, attributes, num_outputs, threads);
      if (cache.size() >= kMaxCachedOps) cache.clear();
      it = cache.emplace(std::move(key), std::move(built)).first;
    }
    op = it->second.get();
  } else {
    uncached = BuildOp(domain, op_type, opset, inputs, attributes, num_outputs, threads);
    op = uncached.get();
  }
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) feeds.emplace("input" + std::to_string(i), inputs[i]);
  }
  std::map<std::string, Tensor> results = op->session.Run(feeds);
  std::vector<Tensor> outputs;
  for (int k = 0; k < num_outputs; ++k) outputs.push_back(results.at("output" + std::to_string(k)));
  return outputs;
}

}  // namespace simplecpp
