// `simplecpp run`: loads a model (or generates a built-in one and writes it as a real .onnx file
// first), feeds it inputs from files or generated data, runs it, writes and summarizes the
// outputs, and optionally times repeated runs and profiles per node.
// Also `simplecpp export-builtin NAME PATH`.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kernels/targets.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/cli/cli_util.h"
#include "simplecpp/io/npy.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::cli {
namespace {

namespace fs = std::filesystem;

// --target NAME: restricts the kernels' dispatch to that compiled target (for comparing a build's
// targets, e.g. the native portable path against WebAssembly). Case-insensitive.
void SelectTarget(const std::string& name) {
  std::string wanted = name, available;
  std::transform(wanted.begin(), wanted.end(), wanted.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const kernels::Target& t : kernels::CompiledTargets()) {
    if (t.name == wanted) {
      kernels::ForceTarget(t);
      std::printf("target: %s\n", t.name.c_str());
      return;
    }
    available += (available.empty() ? "" : ", ") + t.name;
  }
  throw UsageError("--target " + name + " is not a target of this build on this CPU (available: " +
                   available + ")");
}

// Writes the built-in model `name` into `dir` and returns the file's path.
std::string WriteBuiltinModel(const std::string& name, const fs::path& dir) {
  const graph::Model model = builtin::MakeBuiltinModel(name);
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".onnx");
  onnx::WriteModelFile(path.string(), model);
  return path.string();
}

std::string ShapeOf(const ValueDescription& v) {
  if (!v.has_shape) return "(rank unknown)";
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    if (v.dims[i] >= 0) {
      s += std::to_string(v.dims[i]);
    } else {
      s += i < v.dim_params.size() && !v.dim_params[i].empty() ? v.dim_params[i] : "?";
    }
  }
  return s + "]";
}

// Concrete dims for a generated input: symbolic dims from --dim, unnamed unknown dims 1.
Dims ConcreteDims(const ValueDescription& v, const std::map<std::string, int64_t>& dim_values,
                  std::map<std::string, bool>* used) {
  if (!v.has_shape) {
    throw Error(ErrorCode::kInvalidArgument,
                "input '" + v.name + "' has no declared shape: give its data with --input " +
                    v.name + "=FILE");
  }
  Dims dims;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    int64_t d = v.dims[i];
    if (d < 0) {
      d = 1;
      const std::string param = i < v.dim_params.size() ? v.dim_params[i] : std::string();
      auto it = dim_values.find(param);
      if (!param.empty() && it != dim_values.end()) {
        d = it->second;
        (*used)[param] = true;
      }
    }
    dims.push_back(d);
  }
  return dims;
}

double Milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Per node, the median over profiled runs: one run of a sub-millisecond model is mostly noise.
std::vector<Session::NodeTiming> MedianProfile(Session& session,
                                               const std::map<std::string, Tensor>& inputs,
                                               int64_t runs) {
  std::vector<Session::NodeTiming> profile;
  std::vector<std::vector<double>> times;
  session.set_profiling(true);
  for (int64_t r = 0; r < runs; ++r) {
    session.Run(inputs);
    profile = session.last_profile();
    times.resize(profile.size());
    for (size_t i = 0; i < profile.size(); ++i) times[i].push_back(profile[i].milliseconds);
  }
  session.set_profiling(false);
  for (size_t i = 0; i < profile.size(); ++i) {
    std::vector<double>& t = times[i];
    std::sort(t.begin(), t.end());
    profile[i].milliseconds = MedianOfSorted(t);
  }
  return profile;
}

void PrintProfile(const std::vector<Session::NodeTiming>& profile, int64_t runs) {
  struct OpTotal {
    int nodes = 0;
    double ms = 0;
  };
  std::map<std::string, OpTotal> by_op;
  double total = 0;
  for (const auto& t : profile) {
    by_op[t.op_type].nodes++;
    by_op[t.op_type].ms += t.milliseconds;
    total += t.milliseconds;
  }
  std::vector<std::pair<std::string, OpTotal>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::printf("profile by op type (sum of the per-node medians of %lld runs):\n",
              static_cast<long long>(runs));
  std::printf("  %-28s %6s %12s %7s\n", "op", "nodes", "ms", "%");
  for (const auto& [op, t] : ops) {
    std::printf("  %-28s %6d %12.4f %6.1f%%\n", op.c_str(), t.nodes, t.ms,
                total > 0 ? 100.0 * t.ms / total : 0.0);
  }
  std::printf("  %-28s %6zu %12.4f\n", "total", profile.size(), total);
  std::printf("profile by node:\n");
  std::printf("  %5s  %-32s %-24s %12s  %s\n", "#", "node", "op", "ms", "output shape");
  for (size_t i = 0; i < profile.size(); ++i) {
    const auto& t = profile[i];
    std::string shape = "?";
    if (t.output_shape_known) {
      shape = "[";
      for (size_t d = 0; d < t.output_shape.size(); ++d) {
        shape += (d ? "," : "") + std::to_string(t.output_shape[d]);
      }
      shape += "]";
    }
    std::printf("  %5zu  %-32s %-24s %12.4f  %s\n", i,
                t.node_name.empty() ? "-" : t.node_name.c_str(), t.op_type.c_str(), t.milliseconds,
                shape.c_str());
  }
}

// The model file to run: MODEL, or a built-in written out first (--builtin NAME, "default").
std::string ResolveModelPath(const ParsedArgs& a, const std::string& output_dir) {
  std::string builtin_name;
  std::string model_path;
  if (a.Has("--builtin")) {
    if (!a.positional.empty() && a.positional[0] != "default") {
      throw UsageError("give either MODEL or --builtin, not both");
    }
    builtin_name = a.Get("--builtin");
  } else if (a.positional.size() == 1 && a.positional[0] == "default") {
    builtin_name = builtin::BuiltinModelNames().front();
  } else if (a.positional.size() == 1) {
    model_path = a.positional[0];
  }
  if (a.positional.size() > 1) throw UsageError("run takes one MODEL");
  if (builtin_name.empty() && model_path.empty()) throw UsageError("run needs a MODEL");
  if (!builtin_name.empty()) {
    const fs::path dir = a.Has("--output-dir") ? fs::path(output_dir)
                                               : fs::temp_directory_path() / "simplecpp-builtin";
    model_path = WriteBuiltinModel(builtin_name, dir);
    std::printf("built-in model '%s' written to %s\n", builtin_name.c_str(), model_path.c_str());
  }
  return model_path;
}

// Every model input: read from its --input file, else generated (unknown dims from --dim).
std::map<std::string, Tensor> RunInputs(const Model& model, const ParsedArgs& a) {
  std::map<std::string, std::string> input_files;
  for (const std::string& s : a.GetAll("--input")) {
    auto [name, file] = SplitAssignment(s, "--input");
    input_files[name] = file;
  }
  std::map<std::string, int64_t> dim_values;
  std::map<std::string, bool> dim_used;
  for (const std::string& s : a.GetAll("--dim")) {
    auto [name, value] = SplitAssignment(s, "--dim");
    const int64_t v = ParseInt(value, "--dim " + name);
    if (v < 0) throw UsageError("--dim " + name + " must not be negative");
    dim_values[name] = v;
    dim_used[name] = false;
  }
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 1;
  for (const ValueDescription& v : model.inputs()) {
    auto it = input_files.find(v.name);
    Tensor t;
    std::string source;
    if (it != input_files.end()) {
      t = io::ReadTensorFile(it->second);
      source = it->second;
      input_files.erase(it);
    } else {
      t = MakeRandomTensor(v.dtype, ConcreteDims(v, dim_values, &dim_used), seed);
      source = "generated";
    }
    ++seed;
    std::printf("input  %-20s %-24s <- %s (declared %s %s)\n", v.name.c_str(),
                DescribeTensor(t).c_str(), source.c_str(), DTypeName(v.dtype).c_str(),
                ShapeOf(v).c_str());
    inputs.emplace(v.name, std::move(t));
  }
  if (!input_files.empty()) {
    std::string known;
    for (const ValueDescription& v : model.inputs()) known += (known.empty() ? "" : ", ") + v.name;
    throw Error(ErrorCode::kInvalidArgument, "--input names '" + input_files.begin()->first +
                                                 "', which is not a model input (inputs: " + known +
                                                 ")");
  }
  for (const auto& [name, used] : dim_used) {
    if (!used) std::fprintf(stderr, "warning: --dim %s matched no symbolic dimension\n", name.c_str());
  }
  return inputs;
}

// Writes output_K.pb (and .npy where NumPy has the dtype) in the model's output order.
void WriteOutputs(const Model& model, const std::map<std::string, Tensor>& outputs,
                  const std::string& output_dir) {
  fs::create_directories(output_dir);
  int k = 0;
  for (const ValueDescription& v : model.outputs()) {
    auto it = outputs.find(v.name);
    if (it == outputs.end()) {
      throw Error(ErrorCode::kInternal, "the session returned no value for output '" + v.name + "'");
    }
    const Tensor& t = it->second;
    const fs::path base = fs::path(output_dir) / ("output_" + std::to_string(k));
    onnx::WriteTensorProtoFile(base.string() + ".pb", t, v.name);
    std::string written = base.string() + ".pb";
    try {
      io::WriteNpyFile(base.string() + ".npy", t);
      written += ", " + base.filename().string() + ".npy";
    } catch (const Error& e) {
      // NumPy has no format for some dtypes (string, bfloat16, float8, 4-bit): .pb only.
      if (e.code() != ErrorCode::kUnsupported) throw;
      written += " (no .npy: " + std::string(e.what()) + ")";
    }
    std::printf("output %-20s %s\n", v.name.c_str(), SummarizeTensor(t).c_str());
    std::printf("       -> %s\n", written.c_str());
    ++k;
  }
}

void PrintTimes(double first_ms, std::vector<double> times) {
  if (times.empty()) {
    std::printf("run time %.4f ms (first run; use --repeat N for a median)\n", first_ms);
    return;
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median = MedianOfSorted(times);
  std::printf("first run %.4f ms; %zu timed runs: min %.4f ms, max %.4f ms\n", first_ms, n,
              times.front(), times.back());
  std::printf("median %.4f ms\n", median);
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(
      args, {"--input", "--dim", "--output-dir", "--threads", "--repeat", "--builtin", "--target"},
      {"--profile"});
  const std::string output_dir = a.Get("--output-dir", ".");
  const int64_t threads = a.GetInt("--threads", 0, 0);
  const int64_t repeat = a.GetInt("--repeat", 0, 0);
  if (a.Has("--target")) SelectTarget(a.Get("--target"));
  const std::string model_path = ResolveModelPath(a, output_dir);
  const Model model = Model::Load(model_path);
  std::printf("model: %s\n", model_path.c_str());
  const std::map<std::string, Tensor> inputs = RunInputs(model, a);

  SessionOptions session_options;
  session_options.threads = static_cast<int>(threads);
  Session session(model, session_options);
  std::map<std::string, Tensor> outputs;
  const auto t0 = std::chrono::steady_clock::now();
  outputs = session.Run(inputs);  // also the warm-up run when --repeat is given
  const double first_ms = Milliseconds(std::chrono::steady_clock::now() - t0);
  const int64_t first_allocations = session.memory_stats().buffer_allocations;
  std::vector<double> times;
  for (int64_t r = 0; r < repeat; ++r) {
    // Hand the previous outputs back to the session's pool first (outside the timing), as a
    // caller that is done with them would: steady-state runs then need no new buffers.
    outputs.clear();
    const auto start = std::chrono::steady_clock::now();
    outputs = session.Run(inputs);
    times.push_back(Milliseconds(std::chrono::steady_clock::now() - start));
  }
  WriteOutputs(model, outputs, output_dir);
  PrintTimes(first_ms, times);

  if (a.Has("--profile")) {
    // Separate, profiled runs (as many as timed, at least one), so the timings above carry no
    // profiling overhead.
    const Session::MemoryStats memory = session.memory_stats();
    const int64_t profile_runs = std::max<int64_t>(1, repeat);
    PrintProfile(MedianProfile(session, inputs, profile_runs), profile_runs);
    std::printf("memory: initializers %.3f MiB; working memory peak %.3f MiB (intermediate tensors,"
                " scratch, outputs); %lld buffers from the system after the first run, %lld after"
                " %lld more runs\n",
                static_cast<double>(model.initializer_bytes()) / (1 << 20),
                static_cast<double>(memory.peak_bytes_in_use) / (1 << 20),
                static_cast<long long>(first_allocations),
                static_cast<long long>(memory.buffer_allocations), static_cast<long long>(repeat));
  }
  return 0;
}

int ExportBuiltinCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args, {}, {});
  if (a.positional.size() != 2) throw UsageError("export-builtin needs NAME and PATH");
  const graph::Model model = builtin::MakeBuiltinModel(a.positional[0]);
  onnx::WriteModelFile(a.positional[1], model);
  std::printf("wrote built-in model '%s' to %s\n", a.positional[0].c_str(), a.positional[1].c_str());
  return 0;
}

}  // namespace simplecpp::cli
