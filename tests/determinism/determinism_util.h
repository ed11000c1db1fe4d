// Shared by the determinism tests: loads the ONNX node conformance cases
// ($SIMPLECPP_ONNX_TESTS/node/<case>/model.onnx + test_data_set_0/input_*.pb) once, runs them
// through the public API and compares outcomes (outputs, or the error a run raised).
//
// Unseeded random ops: Bernoulli, RandomNormal, RandomUniform, RandomNormalLike,
// RandomUniformLike and Multinomial without a `seed` attribute draw a fresh key on every run
// (graph/ops/indexing_random.cc: std::random_device at op construction, mixed with a process-wide
// run counter), so their outputs legitimately differ between runs; cases containing one
// (anywhere, subgraphs included) are compared on dtype and dims only. With a seed the key is a
// pure function of the seed and the counter-based generator is indexed by element, so seeded
// cases must be byte-identical like every other case. Multinomial is not implemented and
// training-mode Dropout with ratio > 0 is reported kUnsupported (graph/ops/tensor_constant.cc),
// so both are skipped as unsupported cases.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/executor.h"
#include "graph/ir.h"
#include "kernels/float16/float16.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/api/model_impl.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::determinism {

namespace fs = std::filesystem;

// $SIMPLECPP_ONNX_TESTS/node, or "" when the variable is unset or the folder is missing.
inline std::string NodeTestsDir() {
  const char* root = std::getenv("SIMPLECPP_ONNX_TESTS");
  if (root == nullptr || *root == '\0') return "";
  const fs::path node = fs::path(root) / "node";
  std::error_code ec;
  return fs::is_directory(node, ec) ? node.string() : "";
}

struct ConformanceCase {
  std::string name;
  std::string model_path;
  std::optional<Model> model;    // loaded under the default (best) Highway target
  std::map<std::string, Tensor> inputs;
  size_t input_bytes = 0;        // all inputs together
  bool unseeded_random = false;  // outputs may differ between runs (see the file comment)
};

inline bool IsUnseededRandomNode(const graph::Node& node) {
  static const std::set<std::string> kRandomOps = {"Bernoulli",         "RandomNormal",
                                                   "RandomUniform",     "RandomNormalLike",
                                                   "RandomUniformLike", "Multinomial"};
  return graph::CanonicalDomain(node.domain).empty() && kRandomOps.count(node.op_type) != 0 &&
         node.FindAttribute("seed") == nullptr;
}

inline bool HasUnseededRandom(const graph::Graph& g) {
  for (const graph::Node& node : g.nodes) {
    if (IsUnseededRandomNode(node)) return true;
    for (const graph::Attribute& a : node.attributes) {
      if (a.g && HasUnseededRandom(*a.g)) return true;
      for (const auto& sub : a.graphs) {
        if (sub && HasUnseededRandom(*sub)) return true;
      }
    }
  }
  return false;
}

inline bool HasUnseededRandom(const graph::Model& m) {
  if (HasUnseededRandom(m.graph)) return true;
  for (const graph::Function& f : m.functions) {
    for (const graph::Node& node : f.nodes) {
      if (IsUnseededRandomNode(node)) return true;
    }
  }
  return false;
}

// Why a case was left out; empty when it loaded.
struct LoadResult {
  bool ok = false;
  std::string skip_reason;
  ConformanceCase c;
};

// Reads one case folder: its inputs (matched to graph inputs by TensorProto name, else by
// position, as `simplecpp test` does). Skips cases the library cannot load as kUnsupported and
// cases whose graph inputs are not plain tensors (sequences, optionals, maps).
inline LoadResult LoadCase(const fs::path& dir) {
  LoadResult r;
  r.c.name = dir.filename().string();
  r.c.model_path = (dir / "model.onnx").string();
  const fs::path set0 = dir / "test_data_set_0";
  std::error_code ec;
  if (!fs::is_regular_file(r.c.model_path, ec) || !fs::is_directory(set0, ec)) {
    r.skip_reason = "no model.onnx / test_data_set_0";
    return r;
  }
  try {
    const Model model = Model::Load(r.c.model_path);
    const auto& plan_inputs = model.impl()->plan->inputs();
    for (const graph::ValueInfo& v : plan_inputs) {
      if (v.type.kind != graph::TypeInfo::Kind::kTensor) {
        r.skip_reason = "input '" + v.name + "' is not a plain tensor";
        return r;
      }
    }
    r.c.unseeded_random = HasUnseededRandom(model.impl()->model);
    r.c.model = model;
    std::map<int64_t, fs::path> files;
    for (const auto& entry : fs::directory_iterator(set0)) {
      const std::string f = entry.path().filename().string();
      if (f.rfind("input_", 0) != 0 || f.size() < 10 || f.compare(f.size() - 3, 3, ".pb") != 0) {
        continue;
      }
      files[std::stoll(f.substr(6, f.size() - 9))] = entry.path();
    }
    const std::vector<ValueDescription>& model_inputs = model.inputs();
    size_t position = 0;
    for (const auto& [index, path] : files) {
      std::string name;
      Tensor t = onnx::ReadTensorProtoFile(path.string(), &name);
      bool named = false;
      for (const ValueDescription& v : model_inputs) named |= !name.empty() && v.name == name;
      if (!named) {
        if (position >= model_inputs.size()) {
          r.skip_reason = path.filename().string() + " has no matching graph input";
          return r;
        }
        name = model_inputs[position].name;
      }
      ++position;
      r.c.input_bytes += t.byte_size();
      r.c.inputs[name] = std::move(t);
    }
  } catch (const Error& e) {
    r.skip_reason = std::string(e.code() == ErrorCode::kUnsupported ? "unsupported: " : "error: ") +
                    e.what();
    return r;
  }
  r.ok = true;
  return r;
}

// Every case folder under `node_dir`, sorted by name. Prints how many were skipped.
inline std::vector<ConformanceCase> LoadAllCases(const std::string& node_dir) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(node_dir)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  std::vector<ConformanceCase> cases;
  int skipped = 0;
  for (const fs::path& d : dirs) {
    LoadResult r = LoadCase(d);
    if (r.ok) {
      cases.push_back(std::move(r.c));
    } else {
      ++skipped;
    }
  }
  MESSAGE(cases.size() << " conformance cases loaded, " << skipped
                       << " skipped (unsupported, non-tensor inputs or no data set)");
  return cases;
}

// What one run produced: the outputs, or the error it raised.
struct Outcome {
  bool unsupported = false;  // kUnsupported raised (during the first run, for shape checks)
  std::string error;         // any other error: "code N: message"
  std::map<std::string, Tensor> outputs;
};

inline Outcome RunOnce(Session& session, const std::map<std::string, Tensor>& inputs) {
  Outcome o;
  try {
    o.outputs = session.Run(inputs);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kUnsupported) {
      o.unsupported = true;
    } else {
      o.error = "code " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
    }
  } catch (const std::exception& e) {
    o.error = std::string("exception: ") + e.what();
  }
  return o;
}

// Empty when a and b have the same dtype and dims (and, unless `shape_only`, the same bytes;
// strings element by element), else what differs.
inline std::string CompareBytes(const Tensor& a, const Tensor& b, bool shape_only) {
  if (a.dtype() != b.dtype() || a.dims() != b.dims()) {
    return DTypeName(a.dtype()) + DimsToString(a.dims()) + " vs " + DTypeName(b.dtype()) +
           DimsToString(b.dims());
  }
  if (shape_only) return "";
  if (a.dtype() == DType::kString) return a.strings() == b.strings() ? "" : "strings differ";
  if (a.byte_size() != b.byte_size()) return "byte sizes differ";
  const auto* pa = static_cast<const unsigned char*>(a.raw_data());
  const auto* pb = static_cast<const unsigned char*>(b.raw_data());
  for (size_t i = 0; i < a.byte_size(); ++i) {
    if (pa[i] != pb[i]) {
      const size_t elem = std::max<size_t>(1, DTypeSize(a.dtype()));
      return DTypeName(a.dtype()) + DimsToString(a.dims()) + ": first differing byte " +
             std::to_string(i) + " (element " + std::to_string(i / elem) + ")";
    }
  }
  return "";
}

// Element i of a float tensor (float16, bfloat16, float32, float64) as double.
inline double FloatElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return kernels::HalfBitsToDouble(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return kernels::BFloat16BitsToFloat(t.data<uint16_t>()[i]);
    default: return 0;
  }
}

// Compares two outcomes. `float_tol`: false = every output byte-identical; true = float outputs
// (float16/bfloat16/float32/float64) within |b - a| <= atol + rtol * |a| (NaN equals NaN,
// infinities must match), everything else byte-identical. Empty when they agree.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
inline std::string CompareOutcomes(const Outcome& a, const Outcome& b, bool shape_only,
                                   const Tolerance* tol = nullptr) {
  if (a.unsupported != b.unsupported || a.error != b.error) {
    return "outcome differs: [" + (a.unsupported ? std::string("unsupported") : a.error) +
           "] vs [" + (b.unsupported ? std::string("unsupported") : b.error) + "]";
  }
  if (a.outputs.size() != b.outputs.size()) return "output count differs";
  for (const auto& [name, ta] : a.outputs) {
    auto it = b.outputs.find(name);
    if (it == b.outputs.end()) return "output '" + name + "' missing";
    const Tensor& tb = it->second;
    if (tol != nullptr && IsFloatDType(ta.dtype()) && ta.dtype() == tb.dtype() &&
        ta.dims() == tb.dims() && !shape_only) {
      // bfloat16 keeps 8 significant bits: one rounding step is 2^-8 relative.
      const double rtol = ta.dtype() == DType::kBFloat16 ? std::max(tol->rtol, 0x1.0p-7) : tol->rtol;
      for (int64_t i = 0; i < ta.num_elements(); ++i) {
        const double x = FloatElement(ta, i), y = FloatElement(tb, i);
        bool ok;
        if (std::isnan(x)) {
          ok = std::isnan(y);
        } else if (std::isinf(x)) {
          ok = y == x;
        } else {
          ok = !std::isnan(y) && std::fabs(y - x) <= tol->atol + rtol * std::fabs(x);
        }
        if (!ok) {
          return "output '" + name + "' " + DTypeName(ta.dtype()) + DimsToString(ta.dims()) +
                 " element " + std::to_string(i) + ": " + std::to_string(x) + " vs " +
                 std::to_string(y);
        }
      }
      continue;
    }
    std::string diff = CompareBytes(ta, tb, shape_only);
    if (!diff.empty()) return "output '" + name + "': " + diff;
  }
  return "";
}

// Deterministic inputs for every graph input of `model`: floats uniform in [-1, 1), integers in
// [0, 10), bools 0/1; unknown dims become 2.
inline std::map<std::string, Tensor> RandomInputs(const Model& model, uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  builtin::Random rng(seed);
  for (const ValueDescription& v : model.inputs()) {
    Dims dims = v.dims;
    for (int64_t& d : dims) d = d < 0 ? 2 : d;
    Tensor t(v.dtype, dims);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const float f = rng.Uniform(-1.0f, 1.0f);
      const int64_t k = static_cast<int64_t>(rng.Next() % 10);
      switch (v.dtype) {
        case DType::kFloat32: t.data<float>()[i] = f; break;
        case DType::kFloat64: t.data<double>()[i] = f; break;
        case DType::kFloat16: t.data<uint16_t>()[i] = kernels::FloatToHalfBits(f); break;
        case DType::kBFloat16: t.data<uint16_t>()[i] = kernels::FloatToBFloat16Bits(f); break;
        case DType::kBool: t.data<uint8_t>()[i] = static_cast<uint8_t>(k & 1); break;
        case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(k); break;
        case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(k); break;
        case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(k); break;
        case DType::kInt64: t.data<int64_t>()[i] = k; break;
        default: FAIL("no input generator for " << DTypeName(v.dtype));
      }
    }
    inputs[v.name] = std::move(t);
  }
  return inputs;
}

// Every built-in model by name; the two 1024x1024 segmentation models are built at 64x64 (the
// same graph and weights layout) to keep the tests fast, under the sanitizers too.
inline std::vector<std::pair<std::string, graph::Model>> BuiltinModelsForTests() {
  std::vector<std::pair<std::string, graph::Model>> models;
  for (const std::string& name : builtin::BuiltinModelNames()) {
    // The benchmark-sized models have the same layers as "cnn" and "transformer" at a size
    // where float sums of 1536 terms differ between FMA and non-FMA targets by more than the
    // 1e-7 absolute tolerance near zero (and they would multiply the sanitizer stages' time).
    if (name == "cnn-base" || name == "transformer-base") continue;
    // The llama decoders need consistent cache, mask and token inputs that RandomInputs does not
    // make (tests/simplecpp/api/llama_test.cc checks them, thread counts included).
    if (name.rfind("llama", 0) == 0) continue;
    if (name == "segmentation" || name == "segmentation-int8") {
      models.emplace_back(name + "@64", builtin::MakeSegmentationModel(64, name != "segmentation"));
    } else {
      models.emplace_back(name, builtin::MakeBuiltinModel(name));
    }
  }
  return models;
}

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace simplecpp::determinism
