// Shared pieces of the command-line tool: argument parsing, tensor formatting and summaries,
// generated input data, and the subcommand entry points (one per *_command.cc file).
#pragma once

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/tensor.h"

namespace simplecpp::cli {

// A bad command line: main prints the message and the usage, and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Options of one subcommand: `--name value`, `--name=value`, or bare flags. Everything that does
// not start with "-" is positional; "--" ends the options.
struct ParsedArgs {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // in command-line order

  bool Has(const std::string& name) const;
  // The last value given for `name`, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  int64_t GetInt(const std::string& name, int64_t fallback, int64_t min_value) const;
  double GetDouble(const std::string& name, double fallback) const;
};

// Throws UsageError for an unknown option or a missing value.
ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::set<std::string>& value_options,
                     const std::set<std::string>& flag_options);

// Splits "NAME=VALUE"; throws UsageError naming `what` when there is no '='.
std::pair<std::string, std::string> SplitAssignment(const std::string& text, const std::string& what);

// Numbers.
int64_t ParseInt(const std::string& text, const std::string& what);
double ParseDouble(const std::string& text, const std::string& what);
// The median of a sorted, non-empty list (the mean of the middle two for an even count).
double MedianOfSorted(const std::vector<double>& sorted);

// Element access for summaries and comparisons.
bool IsFloatLike(DType t);     // float16, bfloat16, float32, float64
bool IsExactNumeric(DType t);  // integers and bool (compared exactly)
// Element i as double for float-like, integer and bool dtypes.
double ElementAsDouble(const Tensor& t, int64_t i);
// Element i printed: shortest round-trip form for floats, integers as integers, strings quoted.
std::string FormatElement(const Tensor& t, int64_t i);
// Shortest "%g" that reads back as the same value of `dtype`'s precision.
std::string FormatNumber(double v, DType dtype);

// "float32 [1,10]"
std::string DescribeTensor(const Tensor& t);
// One-line summary: dtype, shape, the first few values, and min/max/mean for numeric tensors.
std::string SummarizeTensor(const Tensor& t, int max_values = 6);

// A tensor of `dims` with deterministic pseudo-random values suited to the dtype (floats in
// [-1,1), integers in [0,10), bools, short strings). Throws Error(kUnsupported) for dtypes it
// cannot fill.
Tensor MakeRandomTensor(DType dtype, const Dims& dims, uint64_t seed);

// Subcommands. Each returns the process exit status; errors are thrown as Error / UsageError.
int RunCommand(const std::vector<std::string>& args);
int InfoCommand(const std::vector<std::string>& args);
int OpsCommand(const std::vector<std::string>& args);
int TestCommand(const std::vector<std::string>& args);
int ExportBuiltinCommand(const std::vector<std::string>& args);
int QuantizeCommand(const std::vector<std::string>& args);  // convert_command.cc
int ConvertCommand(const std::vector<std::string>& args);   // convert_command.cc
int GenerateCommand(const std::vector<std::string>& args);  // generate_command.cc

// Usage text of every subcommand.
const char* UsageText();

}  // namespace simplecpp::cli
