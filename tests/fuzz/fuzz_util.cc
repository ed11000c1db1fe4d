// Shared pieces of the fuzz targets (fuzz_util.h).
#include "tests/fuzz/fuzz_util.h"

namespace simplecpp::fuzz {

Limits SmallLimits() {
  Limits l;
  l.max_model_bytes = 1 << 20;
  l.max_tensor_elements = 1 << 16;
  l.max_tensor_bytes = 1 << 19;
  l.max_nodes = 512;
  l.max_graph_depth = 8;
  l.max_total_bytes = 16 << 20;
  l.max_loop_iterations = 10000;  // a cheap body repeated 2^40 times is a hang, not a finding
  return l;
}

LoadOptions SmallLoadOptions() {
  LoadOptions o;
  o.limits = SmallLimits();
  return o;
}

void DescribeLoadedModel(const Model& model) {
  size_t chars = 0;
  auto describe = [&](const std::vector<ValueDescription>& values) {
    for (const ValueDescription& v : values) {
      std::string s = v.name + ":" + DTypeName(v.dtype);
      if (v.has_shape) {
        for (size_t i = 0; i < v.dims.size(); ++i) {
          s += v.dims[i] >= 0 ? std::to_string(v.dims[i]) : v.dim_params.at(i);
        }
      }
      chars += s.size();
    }
  };
  describe(model.inputs());
  describe(model.outputs());
  for (const auto& [domain, version] : model.opsets()) chars += domain.size() + (version & 1);
  chars += static_cast<size_t>(model.ir_version() & 1);
  // Keep the work observable so it is not optimized away.
  volatile size_t sink = chars;
  (void)sink;
}

Tensor TensorFromStream(ByteStream& stream, DType dtype, const Dims& dims) {
  Tensor t(dtype, dims);
  stream.Fill(t.raw_data(), t.byte_size());
  if (dtype == DType::kBool) {
    auto* p = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.byte_size(); ++i) p[i] &= 1;
  }
  return t;
}

}  // namespace simplecpp::fuzz
