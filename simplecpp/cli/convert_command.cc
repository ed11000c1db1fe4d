// `simplecpp quantize` and `simplecpp convert`: read an ONNX model, rewrite it with the model
// converters (simplecpp/convert/quantize.h) and write the result as an ONNX file.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "simplecpp/cli/cli_util.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/io/npy.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp::cli {
namespace {

void PrintSummary(const graph::Model& in, const graph::Model& out, const std::string& path) {
  std::map<std::string, int> ops;
  for (const graph::Node& n : out.graph.nodes) ops[n.op_type]++;
  std::printf("wrote %s: %zu nodes (was %zu), %zu initializers;", path.c_str(), out.graph.nodes.size(),
              in.graph.nodes.size(), out.graph.initializers.size());
  for (const auto& [op, count] : ops) std::printf(" %s x%d", op.c_str(), count);
  std::printf("\n");
}

// What the quantizer did before quantizing: the opset upgrade, Constant weights made initializers.
void PrintPreparation(const convert::QuantizeReport& r) {
  if (r.upgrade.to != r.upgrade.from) {
    std::printf("upgraded opset %lld -> %lld: %d nodes rewritten\n",
                static_cast<long long>(r.upgrade.from), static_cast<long long>(r.upgrade.to),
                r.upgrade.rewritten);
  }
  if (!r.note.empty()) std::printf("note: %s\n", r.note.c_str());
  if (r.constants_to_initializers > 0) {
    std::printf("%d Constant nodes read as initializers\n", r.constants_to_initializers);
  }
}

}  // namespace

int QuantizeCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args, {"--mode", "--input"},
                                 {"--per-channel", "--per-tensor", "--no-gemm", "--no-conv"});
  if (a.positional.size() != 2) throw UsageError("quantize needs IN.onnx and OUT.onnx");
  const std::string mode = a.Get("--mode", "dynamic");
  const graph::Model model = onnx::ReadModelFile(a.positional[0]);
  graph::Model out;
  convert::QuantizeReport report;
  if (mode == "dynamic") {
    if (a.Has("--input")) throw UsageError("--input (calibration data) is only for --mode qdq");
    convert::DynamicOptions o;
    o.per_channel = !a.Has("--per-tensor");
    o.quantize_gemm = !a.Has("--no-gemm");
    o.quantize_conv = !a.Has("--no-conv");
    out = convert::QuantizeDynamic(model, o, &report);
  } else if (mode == "qdq") {
    convert::QdqOptions o;
    o.per_channel = !a.Has("--per-tensor");
    // --input NAME=FILE: one calibration set per repetition of the first name given.
    std::vector<std::map<std::string, Tensor>> sets;
    for (const std::string& s : a.GetAll("--input")) {
      auto [name, file] = SplitAssignment(s, "--input");
      if (sets.empty() || sets.back().count(name)) sets.emplace_back();
      sets.back()[name] = io::ReadTensorFile(file);
    }
    o.calibration = std::move(sets);
    out = convert::QuantizeQdq(model, o, &report);
  } else {
    throw UsageError("--mode must be dynamic or qdq, not '" + mode + "'");
  }
  PrintPreparation(report);
  onnx::WriteModelFile(a.positional[1], out);
  PrintSummary(model, out, a.positional[1]);
  return 0;
}

int ConvertCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args, {"--to"}, {});
  if (a.positional.size() != 2) throw UsageError("convert needs IN.onnx and OUT.onnx");
  const std::string to = a.Get("--to", "");
  if (to != "float16") throw UsageError("convert: --to float16 is the only conversion (got '" + to + "')");
  const graph::Model model = onnx::ReadModelFile(a.positional[0]);
  const graph::Model out = convert::ConvertToFloat16(model);
  onnx::WriteModelFile(a.positional[1], out);
  PrintSummary(model, out, a.positional[1]);
  return 0;
}

}  // namespace simplecpp::cli
