// `simplecpp test`: the ONNX backend conformance runner.
//
// A case is a folder holding model.onnx and test_data_set_*/ folders with input_<i>.pb and
// output_<i>.pb (TensorProto; SequenceProto / OptionalProto where the graph value is declared a
// sequence / optional). input_i goes to the i-th non-initializer graph input (by the proto's name
// when it names one), output_i is compared with the i-th graph output: dtype and shape exactly;
// floats within |got - expected| <= atol + rtol * |expected| (NaN equals NaN, infinities must
// match); integers, bools and strings exactly; other dtypes byte for byte. Sequences compare
// length, then element by element; an empty optional must be empty.
// A case is UNSUPPORTED when the library raises ErrorCode::kUnsupported (at load, or during the
// first run for checks that need shapes), FAIL on any other error or mismatch.
//
// Cases run in this process, each guarded against exceptions, with a watchdog that stops the run
// when one case exceeds --timeout; --isolate runs each case in a child process instead, so a
// crash or hang costs only that case.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#if defined(__unix__) && !defined(__EMSCRIPTEN__)
#define SIMPLECPP_CLI_HAVE_FORK 1
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "simplecpp/cli/cli_util.h"
#include "simplecpp/onnx/sequence_proto.h"
#include "simplecpp/onnx/tensor_proto.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::cli {
namespace {

namespace fs = std::filesystem;

enum class Status : char { kPass = 'P', kFail = 'F', kUnsupported = 'U' };

struct CaseResult {
  Status status = Status::kFail;
  std::string message;
};

struct TestOptions {
  double rtol = 1e-3;
  double atol = 1e-7;
  int threads = 1;
  int timeout_s = 120;
  bool isolate = false;
  bool verbose = false;
};

// One line, so that every result stays on its own line.
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// ---- discovery ----

bool IsDataSetDir(const fs::path& p) {
  return p.filename().string().rfind("test_data_set_", 0) == 0;
}

bool IsCaseDir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "model.onnx", ec)) return false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (IsDataSetDir(entry.path()) && fs::is_directory(entry.path(), ec)) return true;
  }
  return false;
}

// Depth-first, following symlinks; a folder reached twice (a symlink loop) is visited once.
void FindCases(const fs::path& dir, std::set<std::string>* visited, std::vector<fs::path>* out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  const fs::path canonical = fs::canonical(dir, ec);
  if (ec || !visited->insert(canonical.string()).second) return;
  if (IsCaseDir(dir)) {
    out->push_back(dir);
    return;
  }
  std::vector<fs::path> children;
  for (const auto& entry : fs::directory_iterator(dir, ec)) children.push_back(entry.path());
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) FindCases(child, visited, out);
}

// Files named <prefix><index>.pb in `dir`, ordered by index; throws when the indices have gaps.
std::vector<fs::path> IndexedFiles(const fs::path& dir, const std::string& prefix) {
  std::map<int64_t, fs::path> by_index;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 4 ||
        name.compare(name.size() - 3, 3, ".pb") != 0) {
      continue;
    }
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    by_index[std::stoll(digits)] = entry.path();
  }
  std::vector<fs::path> files;
  for (const auto& [i, p] : by_index) {
    if (i != static_cast<int64_t>(files.size())) {
      throw Error(ErrorCode::kInvalidArgument,
                  dir.string() + ": " + prefix + std::to_string(files.size()) + ".pb is missing");
    }
    files.push_back(p);
  }
  return files;
}

// ---- comparison ----

bool FloatClose(double expected, double got, double rtol, double atol) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  if (std::isnan(got)) return false;
  return std::fabs(got - expected) <= atol + rtol * std::fabs(expected);
}

// Empty when `got` matches `expected`, else what differs.
std::string CompareOutput(const std::string& name, const Tensor& expected, const Tensor& got,
                          const TestOptions& opt) {
  if (expected.dtype() != got.dtype() || expected.dims() != got.dims()) {
    return "output '" + name + "': expected " + DescribeTensor(expected) + ", got " +
           DescribeTensor(got);
  }
  const DType d = expected.dtype();
  const int64_t n = expected.num_elements();
  int64_t first_bad = -1, bad = 0;
  double max_abs_diff = 0;
  if (d == DType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      if (expected.strings()[i] != got.strings()[i] && bad++ == 0) first_bad = i;
    }
  } else if (IsFloatLike(d)) {
    for (int64_t i = 0; i < n; ++i) {
      const double e = ElementAsDouble(expected, i), g = ElementAsDouble(got, i);
      if (!FloatClose(e, g, opt.rtol, opt.atol)) {
        if (bad++ == 0) first_bad = i;
        const double diff = std::fabs(g - e);
        if (!(diff <= max_abs_diff)) max_abs_diff = diff;  // NaN-safe max
      }
    }
  } else if (d == DType::kBool) {
    const uint8_t* e = expected.data<uint8_t>();
    const uint8_t* g = got.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) {
      if ((e[i] != 0) != (g[i] != 0) && bad++ == 0) first_bad = i;
    }
  } else if (IsIntegerDType(d)) {
    const size_t size = DTypeSize(d);
    const char* e = static_cast<const char*>(expected.raw_data());
    const char* g = static_cast<const char*>(got.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      if (std::memcmp(e + i * size, g + i * size, size) != 0 && bad++ == 0) first_bad = i;
    }
  } else {
    // float8, 4-/2-bit and complex types: the bytes must match.
    if (expected.byte_size() != got.byte_size() ||
        (expected.byte_size() &&
         std::memcmp(expected.raw_data(), got.raw_data(), expected.byte_size()) != 0)) {
      return "output '" + name + "': data differs (" + DTypeName(d) + ", compared byte for byte)";
    }
    return "";
  }
  if (bad == 0) return "";
  std::string msg = "output '" + name + "' index " + std::to_string(first_bad) + ": expected " +
                    FormatElement(expected, first_bad) + ", got " + FormatElement(got, first_bad);
  msg += " (" + std::to_string(bad) + " of " + std::to_string(n) + " elements differ";
  if (IsFloatLike(d)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g", max_abs_diff);
    msg += std::string(", max abs diff ") + buf;
  }
  return msg + ")";
}

// Compares any two values: kinds, then tensors (sequences element by element).
std::string CompareValue(const std::string& name, const Value& expected, const Value& got,
                         const TestOptions& opt) {
  if (expected.kind() != got.kind()) {
    return "output '" + name + "': expected " + expected.Describe() + ", got " + got.Describe();
  }
  if (expected.is_tensor()) return CompareOutput(name, expected.tensor(), got.tensor(), opt);
  if (!expected.is_sequence()) return "";
  const std::vector<Tensor>& e = expected.sequence();
  const std::vector<Tensor>& g = got.sequence();
  if (e.size() != g.size()) {
    return "output '" + name + "': expected a sequence of " + std::to_string(e.size()) +
           " elements, got " + std::to_string(g.size());
  }
  for (size_t i = 0; i < e.size(); ++i) {
    std::string diff = CompareOutput(name + "[" + std::to_string(i) + "]", e[i], g[i], opt);
    if (!diff.empty()) return diff;
  }
  return "";
}

// The declared description of a graph value by name (nullptr when none has that name).
const ValueDescription* FindDescription(const std::vector<ValueDescription>& values,
                                        const std::string& name) {
  for (const ValueDescription& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

// Reads an input/output .pb as the proto its declared type calls for.
Value ReadValueFile(const fs::path& path, const ValueDescription* declared, std::string* name) {
  return onnx::ReadValueProtoFile(path.string(), declared && declared->sequence,
                                  declared && declared->optional, name);
}

// Protos name their value: peek at the name with the input's positional guess first, so that a
// file naming another input is read as that input's declared kind.
Value ReadInputFile(const fs::path& path, const std::vector<ValueDescription>& inputs, size_t index,
                    std::string* name) {
  const ValueDescription* positional = index < inputs.size() ? &inputs[index] : nullptr;
  Value v = ReadValueFile(path, positional, name);
  const ValueDescription* named = name->empty() ? nullptr : FindDescription(inputs, *name);
  if (named && named != positional &&
      (named->sequence != (positional && positional->sequence) ||
       named->optional != (positional && positional->optional))) {
    v = ReadValueFile(path, named, name);
  }
  return v;
}

// ---- one case ----

CaseResult RunDataSet(Session& session, const Model& model, const fs::path& set_dir,
                      const TestOptions& opt) {
  const std::vector<ValueDescription>& model_inputs = model.inputs();
  const std::vector<ValueDescription>& model_outputs = model.outputs();
  std::map<std::string, Value> inputs;
  const std::vector<fs::path> input_files = IndexedFiles(set_dir, "input_");
  for (size_t i = 0; i < input_files.size(); ++i) {
    std::string name;
    Value t = ReadInputFile(input_files[i], model_inputs, i, &name);
    bool named_input = false;
    for (const ValueDescription& v : model_inputs) named_input |= !name.empty() && v.name == name;
    if (!named_input) {
      if (i >= model_inputs.size()) {
        return {Status::kFail, input_files[i].filename().string() + " has no matching graph input (" +
                                   std::to_string(model_inputs.size()) + " inputs)"};
      }
      name = model_inputs[i].name;
    }
    inputs[name] = std::move(t);
  }
  const std::vector<fs::path> output_files = IndexedFiles(set_dir, "output_");
  if (output_files.size() != model_outputs.size()) {
    return {Status::kFail, "the model has " + std::to_string(model_outputs.size()) + " outputs, " +
                               set_dir.filename().string() + " has " +
                               std::to_string(output_files.size()) + " expected outputs"};
  }

  const std::map<std::string, Value> got = session.RunValues(inputs);
  for (size_t k = 0; k < output_files.size(); ++k) {
    const std::string& name = model_outputs[k].name;
    std::string file_name;
    const Value expected = ReadValueFile(output_files[k], &model_outputs[k], &file_name);
    auto it = got.find(name);
    if (it == got.end()) return {Status::kFail, "output '" + name + "' was not produced"};
    std::string diff = CompareValue(name, expected, it->second, opt);
    if (!diff.empty()) return {Status::kFail, std::move(diff)};
  }
  return {Status::kPass, ""};
}

CaseResult RunCase(const fs::path& dir, const TestOptions& opt) {
  try {
    const Model model = Model::Load((dir / "model.onnx").string());
    SessionOptions session_options;
    session_options.threads = opt.threads;
    Session session(model, session_options);
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (IsDataSetDir(entry.path()) && fs::is_directory(entry.path())) sets.push_back(entry.path());
    }
    std::sort(sets.begin(), sets.end());
    for (const fs::path& set_dir : sets) {
      CaseResult r = RunDataSet(session, model, set_dir, opt);
      if (r.status != Status::kPass) {
        if (sets.size() > 1) r.message = set_dir.filename().string() + ": " + r.message;
        return r;
      }
    }
    return {Status::kPass, ""};
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kUnsupported) return {Status::kUnsupported, e.what()};
    return {Status::kFail, e.what()};
  } catch (const std::exception& e) {
    return {Status::kFail, std::string("exception: ") + e.what()};
  } catch (...) {
    return {Status::kFail, "unknown exception"};
  }
}

// Stops the whole process when one in-process case runs longer than the limit (a hang would
// otherwise stall CI until its global timeout, without saying which case hung).
class Watchdog {
 public:
  explicit Watchdog(int timeout_s) : timeout_s_(timeout_s), thread_([this] { Loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Start(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    name_ = name;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
    active_ = true;
  }
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = false;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(500));
      if (active_ && std::chrono::steady_clock::now() > deadline_) {
        std::printf("FAIL %s: timed out after %d s; stopping the run (--isolate survives hangs)\n",
                    name_.c_str(), timeout_s_);
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  }

  const int timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string name_;
  std::chrono::steady_clock::time_point deadline_;
  bool active_ = false;
  bool stop_ = false;
  std::thread thread_;
};

#ifdef SIMPLECPP_CLI_HAVE_FORK
// Runs the case in a child process; the result comes back through a pipe as one status byte
// followed by the message.
CaseResult RunCaseIsolated(const fs::path& dir, const TestOptions& opt) {
  int fds[2];
  if (pipe(fds) != 0) return {Status::kFail, "pipe() failed"};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {Status::kFail, "fork() failed"};
  }
  if (pid == 0) {
    close(fds[0]);
    const CaseResult r = RunCase(dir, opt);
    std::string payload(1, static_cast<char>(r.status));
    payload += r.message;
    size_t done = 0;
    while (done < payload.size()) {
      const ssize_t w = write(fds[1], payload.data() + done, payload.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    close(fds[1]);
    std::_Exit(0);
  }
  close(fds[1]);
  std::string payload;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(opt.timeout_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t r = read(fds[0], buf, sizeof(buf));
    if (r <= 0) break;  // EOF: the child is done (or died)
    payload.append(buf, static_cast<size_t>(r));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return {Status::kFail, "timed out after " + std::to_string(opt.timeout_s) + " s"};
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return {Status::kFail, "crashed with signal " + std::to_string(sig) + " (" + strsignal(sig) + ")"};
  }
  if (payload.empty()) {
    return {Status::kFail, "the child process exited (status " +
                               std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
                               ") without a result"};
  }
  return {static_cast<Status>(payload[0]), payload.substr(1)};
}
#endif

std::vector<std::string> ReadCaseList(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::kIo, "cannot read the expected-pass list " + path);
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const size_t e = line.find_last_not_of(" \t\r");
    names.push_back(line.substr(b, e - b + 1));
  }
  return names;
}

void WritePassingList(const std::string& path, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::ofstream out(path);
  if (!out) throw Error(ErrorCode::kIo, "cannot write " + path);
  out << "# ONNX backend conformance cases (../shared/onnx-tests/node) that simplecpp passes.\n"
         "# The ctest 'onnx_conformance' fails when a case listed here does not pass.\n"
         "# Regenerate from the repository root after a Release build:\n"
         "#   build/bin/simplecpp test ../shared/onnx-tests/node "
         "--write-passing tests/conformance/expected_pass.txt\n";
  out << "# " << names.size() << " cases\n";
  for (const std::string& n : names) out << n << "\n";
  if (!out) throw Error(ErrorCode::kIo, "cannot write " + path);
}

// The options that tune how each case runs and is judged.
TestOptions ReadTestOptions(const ParsedArgs& a) {
  TestOptions opt;
  opt.rtol = a.GetDouble("--rtol", opt.rtol);
  opt.atol = a.GetDouble("--atol", opt.atol);
  opt.threads = static_cast<int>(a.GetInt("--threads", 1, 0));
  opt.timeout_s = static_cast<int>(a.GetInt("--timeout", opt.timeout_s, 1));
  opt.verbose = a.Has("-v") || a.Has("--verbose");
  opt.isolate = a.Has("--isolate");
#ifndef SIMPLECPP_CLI_HAVE_FORK
  if (opt.isolate) throw UsageError("--isolate needs fork(), which this platform lacks");
#endif
  return opt;
}

// The folders to search: the positional DIRs plus $VAR/node for --from-env VAR. False (after
// saying so) when --from-env names no conformance data, which is a skip rather than an error.
bool CollectRoots(const ParsedArgs& a, std::vector<std::string>* roots) {
  *roots = a.positional;
  if (a.Has("--from-env")) {
    const std::string var = a.Get("--from-env");
    const char* value = std::getenv(var.c_str());
    std::error_code ec;
    if (value == nullptr || *value == '\0' || !fs::is_directory(fs::path(value) / "node", ec)) {
      std::printf("conformance data not found (set %s); skipping\n", var.c_str());
      return false;
    }
    roots->push_back((fs::path(value) / "node").string());
  }
  if (roots->empty()) throw UsageError("test needs at least one DIR (or --from-env VAR)");
  return true;
}

// Every case folder under `roots`, sorted so that the run order does not depend on the file system.
std::vector<fs::path> FindAllCases(const std::vector<std::string>& roots) {
  std::vector<fs::path> cases;
  std::set<std::string> visited;
  for (const std::string& r : roots) {
    std::error_code ec;
    if (!fs::exists(r, ec)) throw Error(ErrorCode::kIo, "no such folder: " + r);
    FindCases(r, &visited, &cases);
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

// --filter keeps the cases whose name contains the filter text.
bool Selected(const std::string& filter, const std::string& name) {
  return filter.empty() || name.find(filter) != std::string::npos;
}

// What the run found, case by case and in total.
struct TestTally {
  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, Status> results;
  std::vector<std::string> passing;
};

// Runs one case in a child process (--isolate) or in this one under the watchdog.
CaseResult RunOneCase(const fs::path& dir, const std::string& name, const TestOptions& opt,
                      Watchdog* watchdog) {
#ifdef SIMPLECPP_CLI_HAVE_FORK
  if (opt.isolate) return RunCaseIsolated(dir, opt);
#endif
  if (watchdog) watchdog->Start(name);
  CaseResult r = RunCase(dir, opt);
  if (watchdog) watchdog->Stop();
  return r;
}

// Prints one case's line and counts it.
void RecordCase(const std::string& name, const CaseResult& r, double ms, const TestOptions& opt,
                TestTally* tally) {
  std::string time_note;
  if (opt.verbose) {
    char buf[48];
    std::snprintf(buf, sizeof(buf), " [%.1f ms]", ms);
    time_note = buf;
  }
  switch (r.status) {
    case Status::kPass:
      ++tally->passed;
      tally->passing.push_back(name);
      std::printf("PASS %s%s\n", name.c_str(), time_note.c_str());
      break;
    case Status::kUnsupported:
      ++tally->skipped;
      std::printf("UNSUPPORTED %s: %s%s\n", name.c_str(), OneLine(r.message).c_str(),
                  time_note.c_str());
      break;
    case Status::kFail:
      ++tally->failed;
      std::printf("FAIL %s: %s%s\n", name.c_str(), OneLine(r.message).c_str(), time_note.c_str());
      break;
  }
  std::fflush(stdout);
  tally->results[name] = r.status;
}

// Runs the selected cases in order.
TestTally RunCases(const std::vector<fs::path>& cases, const std::string& filter,
                   const TestOptions& opt) {
  TestTally tally;
  std::unique_ptr<Watchdog> watchdog;
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
  if (!opt.isolate) watchdog = std::make_unique<Watchdog>(opt.timeout_s);
#endif  // WebAssembly without pthreads has no watchdog thread: a hung case hangs the run.
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    if (!Selected(filter, name)) continue;
    const auto start = std::chrono::steady_clock::now();
    const CaseResult r = RunOneCase(dir, name, opt, watchdog.get());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    RecordCase(name, r, ms, opt, &tally);
  }
  return tally;
}

// Compares the run with the --expected list: every listed (and selected) case must pass; newly
// passing cases are reported so that the list can be extended. Returns the exit status.
int CheckExpected(const std::string& list_path, const std::string& filter,
                  const TestTally& tally) {
  const std::vector<std::string> expected = ReadCaseList(list_path);
  const std::set<std::string> expected_set(expected.begin(), expected.end());
  int regressions = 0;
  for (const std::string& name : expected) {
    if (!Selected(filter, name)) continue;
    auto it = tally.results.find(name);
    const char* what = it == tally.results.end()           ? "missing"
                       : it->second == Status::kFail        ? "failed"
                       : it->second == Status::kUnsupported ? "unsupported"
                                                            : nullptr;
    if (what != nullptr) {
      std::printf("EXPECTED TO PASS: %s (%s)\n", name.c_str(), what);
      ++regressions;
    }
  }
  int newly = 0;
  for (const std::string& name : tally.passing) {
    if (!expected_set.count(name)) {
      std::printf("NEWLY PASSING: %s\n", name.c_str());
      ++newly;
    }
  }
  std::printf("%d newly passing (not in %s); %d listed cases did not pass\n", newly,
              list_path.c_str(), regressions);
  return regressions > 0 ? 1 : 0;
}

}  // namespace

int TestCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args,
                                 {"--rtol", "--atol", "--expected", "--from-env", "--filter",
                                  "--threads", "--timeout", "--write-passing"},
                                 {"-v", "--verbose", "--isolate"});
  const TestOptions opt = ReadTestOptions(a);
  std::vector<std::string> roots;
  if (!CollectRoots(a, &roots)) return 0;
  const std::vector<fs::path> cases = FindAllCases(roots);
  const std::string filter = a.Get("--filter");
  const TestTally tally = RunCases(cases, filter, opt);

  if (a.Has("--write-passing")) {
    WritePassingList(a.Get("--write-passing"), tally.passing);
    std::printf("wrote %zu passing cases to %s\n", tally.passing.size(),
                a.Get("--write-passing").c_str());
  }
  int exit_status = 0;
  if (a.Has("--expected")) exit_status = CheckExpected(a.Get("--expected"), filter, tally);
  std::printf("%d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  return exit_status;
}

}  // namespace simplecpp::cli
