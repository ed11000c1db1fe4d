// Deterministic model inputs and output comparison (seeded_inputs.h).
#include "simplecpp/convert/seeded_inputs.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/float16/float16.h"
#include "simplecpp/convert/convert_util.h"
#include "simplecpp/error.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp::convert::detail {

namespace {

// SplitMix64: the i-th value of the stream seeded with `seed`, as 24 uniform bits in [0, 2^24).
class SeededStream {
 public:
  explicit SeededStream(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull) {}
  uint64_t Next24() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z >> 40;
  }

 private:
  uint64_t state_;
};

Model LoadGraphModel(const graph::Model& m) {
  const std::string bytes = onnx::WriteModel(m);
  return Model::LoadFromBytes(bytes.data(), bytes.size());
}

}  // namespace

Tensor SeededFloatTensor(const Dims& dims, uint64_t seed) {
  Tensor t(DType::kFloat32, dims);
  SeededStream s(seed);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    p[i] = -1.0f + 2.0f * static_cast<float>(s.Next24()) * (1.0f / 16777216.0f);
  }
  return t;
}

std::map<std::string, Tensor> SeededInputs(const Model& model,
                                           const std::map<std::string, int64_t>& int_limits) {
  std::map<std::string, Tensor> set;
  uint64_t seed = 1;
  for (const ValueDescription& v : model.inputs()) {
    if (v.sequence || !v.has_shape) {
      throw Error(ErrorCode::kInvalidArgument,
                  "input '" + v.name + "' is not a tensor of known rank; no default input for it");
    }
    Dims dims;
    for (int64_t d : v.dims) dims.push_back(d < 0 ? 1 : d);
    const uint64_t input_seed = seed++;
    if (v.dtype == DType::kFloat32) {
      set[v.name] = SeededFloatTensor(dims, input_seed);
    } else if (v.dtype == DType::kFloat16) {
      const Tensor f = SeededFloatTensor(dims, input_seed);
      Tensor h(DType::kFloat16, dims);
      kernels::FloatToHalf(f.data<float>(), h.data<uint16_t>(), static_cast<size_t>(f.num_elements()));
      set[v.name] = h;
    } else if (v.dtype == DType::kInt64 || v.dtype == DType::kInt32) {
      auto it = int_limits.find(v.name);
      const int64_t limit = std::max<int64_t>(1, it != int_limits.end() ? it->second : 100);
      Tensor t(v.dtype, dims);
      SeededStream s(input_seed);
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        const int64_t id = static_cast<int64_t>(s.Next24() % static_cast<uint64_t>(limit));
        if (v.dtype == DType::kInt64) {
          t.data<int64_t>()[i] = id;
        } else {
          t.data<int32_t>()[i] = static_cast<int32_t>(id);
        }
      }
      set[v.name] = t;
    } else if (v.dtype == DType::kBool) {
      Tensor t(DType::kBool, dims);
      for (int64_t i = 0; i < t.num_elements(); ++i) t.data<uint8_t>()[i] = i % 2 == 0;
      set[v.name] = t;
    } else {
      throw Error(ErrorCode::kInvalidArgument, "input '" + v.name + "' has type " +
                                                   DTypeName(v.dtype) +
                                                   "; no default input for it");
    }
  }
  return set;
}

std::map<std::string, int64_t> IdLimits(const graph::Graph& g) {
  std::map<std::string, int64_t> limits;
  for (const graph::ValueInfo& in : g.inputs) limits[in.name] = 100;
  for (const graph::Node& n : g.nodes) {
    if (n.op_type != "Gather" || !IsDefaultDomain(n.domain) || n.inputs.size() < 2) continue;
    auto it = limits.find(n.inputs[1]);
    const Tensor* table = g.FindInitializer(n.inputs[0]);
    if (it == limits.end() || !table || table->rank() < 1) continue;
    const int64_t axis = IntAttrOr(n, "axis", 0);
    const int64_t a = axis < 0 ? axis + table->rank() : axis;
    if (a >= 0 && a < table->rank()) it->second = std::min(it->second, table->dim(a));
  }
  return limits;
}

OutputError CompareOutputs(const graph::Model& reference, const graph::Model& candidate,
                           const std::map<std::string, Tensor>& given) {
  const Model ref_model = LoadGraphModel(reference);
  const Model cand_model = LoadGraphModel(candidate);
  const std::map<std::string, Tensor> inputs =
      given.empty() ? SeededInputs(ref_model, IdLimits(reference.graph)) : given;
  SessionOptions so;
  so.threads = 1;
  const std::map<std::string, Tensor> ref_out = Session(ref_model, so).Run(inputs);
  const std::map<std::string, Tensor> cand_out = Session(cand_model, so).Run(inputs);
  OutputError e;
  double sum = 0.0;
  for (const auto& [name, r] : ref_out) {
    if (r.dtype() != DType::kFloat32 && r.dtype() != DType::kFloat16) continue;
    auto it = cand_out.find(name);
    if (it == cand_out.end() || it->second.dims() != r.dims() || it->second.dtype() != r.dtype()) {
      throw Error(ErrorCode::kInternal, "output '" + name + "' differs in type or shape");
    }
    const int64_t count = r.num_elements();
    std::vector<float> a(static_cast<size_t>(count)), b(static_cast<size_t>(count));
    if (r.dtype() == DType::kFloat32) {
      std::copy(r.data<float>(), r.data<float>() + count, a.begin());
      std::copy(it->second.data<float>(), it->second.data<float>() + count, b.begin());
    } else {
      kernels::HalfToFloat(r.data<uint16_t>(), a.data(), a.size());
      kernels::HalfToFloat(it->second.data<uint16_t>(), b.data(), b.size());
    }
    for (size_t i = 0; i < a.size(); ++i) {
      const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
      e.max_abs = std::max(e.max_abs, d);
      e.max_ref = std::max(e.max_ref, std::fabs(static_cast<double>(a[i])));
      sum += d;
    }
    e.elements += count;
  }
  e.mean_abs = e.elements > 0 ? sum / static_cast<double>(e.elements) : 0.0;
  return e;
}

}  // namespace simplecpp::convert::detail
