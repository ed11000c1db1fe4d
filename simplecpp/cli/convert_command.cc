// `simplecpp quantize` and `simplecpp convert`: read an ONNX model, rewrite it with the model
// converters (simplecpp/convert/quantize.h) and write the result as an ONNX file.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/cli/cli_util.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/convert/seeded_inputs.h"
#include "simplecpp/error.h"
#include "simplecpp/io/gguf.h"
#include "simplecpp/io/mapped_file.h"
#include "simplecpp/io/npy.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/onnx/model_writer.h"

namespace simplecpp::cli {
namespace {

void PrintSummary(const graph::Model& in, const graph::Model& out, const std::string& path) {
  std::map<std::string, int> ops;
  for (const graph::Node& n : out.graph.nodes) ops[n.op_type]++;
  // `in` without nodes: the model was made from another format.
  std::printf("wrote %s: %zu nodes", path.c_str(), out.graph.nodes.size());
  if (!in.graph.nodes.empty()) std::printf(" (was %zu)", in.graph.nodes.size());
  std::printf(", %zu initializers;", out.graph.initializers.size());
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

// The weight quantizer's accuracy report: per-weight SQNR and its spread, what stayed float, the
// output error against the float model on a seeded input.
void PrintWeightReport(const convert::WeightReport& r, const graph::Model& in,
                       const graph::Model& out, const std::map<std::string, Tensor>& inputs) {
  std::vector<double> sqnr;
  for (const convert::QuantizedWeightReport& w : r.weights) {
    std::printf("  %-48s [%lld x %lld] x%d  SQNR %6.2f dB\n", w.name.c_str(),
                static_cast<long long>(w.k), static_cast<long long>(w.n), w.nodes, w.sqnr_db);
    sqnr.push_back(w.sqnr_db);
  }
  std::sort(sqnr.begin(), sqnr.end());
  double mean = 0.0;
  for (double v : sqnr) mean += v;
  mean /= static_cast<double>(sqnr.size());
  const double median = MedianOfSorted(sqnr);
  std::printf("quantized %zu weights (%d nodes): SQNR min %.2f / median %.2f / mean %.2f dB\n",
              sqnr.size(), r.nodes_quantized, sqnr.front(), median, mean);
  std::printf("weights: %lld bytes float -> %lld bytes quantized\n",
              static_cast<long long>(r.float_weight_bytes),
              static_cast<long long>(r.quantized_weight_bytes));
  for (const auto& [why, count] : r.kept_float) {
    std::printf("kept float: %d MatMul/Gemm nodes (%s)\n", count, why.c_str());
  }
  convert::detail::OutputError e;
  try {
    e = convert::detail::CompareOutputs(in, out, inputs);
  } catch (const Error& err) {
    std::printf("output vs float model: not measured (%s)\n", err.what());
    return;
  }
  std::printf("output vs float model (%s input, %lld values): max abs err %.6g, mean abs err "
              "%.6g (max |output| %.6g)\n",
              inputs.empty() ? "seeded" : "given", static_cast<long long>(e.elements), e.max_abs,
              e.mean_abs, e.max_ref);
}

void PrintFileSizes(const std::string& in, const std::string& out) {
  std::error_code ec_in, ec_out;
  const auto a = std::filesystem::file_size(in, ec_in);
  const auto b = std::filesystem::file_size(out, ec_out);
  if (ec_in || ec_out) return;
  std::printf("file size: %llu -> %llu bytes (%.1f%%)\n", static_cast<unsigned long long>(a),
              static_cast<unsigned long long>(b), a ? 100.0 * static_cast<double>(b) / a : 0.0);
}

}  // namespace

int QuantizeCommand(const std::vector<std::string>& args) {
  const ParsedArgs a =
      ParseArgs(args, {"--mode", "--input", "--bits", "--block", "--format", "--accuracy-level"},
                {"--per-channel", "--per-tensor", "--no-gemm", "--no-conv", "--symmetric"});
  if (a.positional.size() != 2) throw UsageError("quantize needs IN.onnx and OUT.onnx");
  const std::string mode = a.Get("--mode", "dynamic");
  const graph::Model model = onnx::ReadModelFile(a.positional[0]);
  graph::Model out;
  convert::QuantizeReport report;
  const bool weights_only = a.Has("--bits") || a.Has("--block") || a.Has("--symmetric") ||
                            a.Has("--format") || a.Has("--accuracy-level");
  if (weights_only && mode != "weights") {
    throw UsageError(
        "--bits, --block, --symmetric, --format and --accuracy-level are for --mode weights");
  }
  if (mode == "weights") {
    if (a.Has("--per-tensor") || a.Has("--per-channel") || a.Has("--no-gemm") || a.Has("--no-conv")) {
      throw UsageError(
          "--mode weights takes --bits, --block, --symmetric, --format, --accuracy-level and "
          "--input only");
    }
    // --input NAME=FILE: the input of the accuracy check (default: seeded).
    std::map<std::string, Tensor> inputs;
    for (const std::string& s : a.GetAll("--input")) {
      auto [name, file] = SplitAssignment(s, "--input");
      inputs[name] = io::ReadTensorFile(file);
    }
    convert::WeightOptions o;
    o.bits = static_cast<int>(a.GetInt("--bits", 4, 1));
    o.block = a.GetInt("--block", 32, 1);
    o.symmetric = a.Has("--symmetric");
    const std::string format = a.Get("--format", "onnx");
    if (format != "onnx" && format != "msft") {
      throw UsageError("--format must be onnx or msft, not '" + format + "'");
    }
    o.format = format == "msft" ? convert::WeightOptions::kMsft : convert::WeightOptions::kOnnx;
    o.accuracy_level = a.GetInt("--accuracy-level", 0, 0);
    if (o.accuracy_level > 4) throw UsageError("--accuracy-level must be 0 to 4");
    if (o.accuracy_level != 0 && o.format != convert::WeightOptions::kMsft) {
      throw UsageError("--accuracy-level is for --format msft (a MatMulNBits attribute)");
    }
    convert::WeightReport wr;
    out = convert::QuantizeWeights(model, o, &wr);
    PrintPreparation(wr.prepare);
    onnx::WriteModelFile(a.positional[1], out);
    PrintSummary(model, out, a.positional[1]);
    PrintWeightReport(wr, model, out, inputs);
    PrintFileSizes(a.positional[0], a.positional[1]);
    return 0;
  }
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
    throw UsageError("--mode must be dynamic, qdq or weights, not '" + mode + "'");
  }
  PrintPreparation(report);
  onnx::WriteModelFile(a.positional[1], out);
  PrintSummary(model, out, a.positional[1]);
  return 0;
}

namespace {

// --type of a GGUF export: f32, f16, q8_0, q4_0 or q4_1 (either case).
quant::GgmlType GgufExportType(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char ch) { return std::toupper(ch); });
  for (quant::GgmlType type : {quant::GgmlType::kF32, quant::GgmlType::kF16, quant::GgmlType::kQ8_0,
                               quant::GgmlType::kQ4_0, quant::GgmlType::kQ4_1}) {
    if (t == quant::GgmlTypeName(static_cast<uint32_t>(type))) return type;
  }
  throw UsageError("--type must be f32, f16, q8_0, q4_0 or q4_1, not '" + text + "'");
}

// convert --builtin llama|llama-tiny --to gguf [--type T] OUT.gguf
int ExportGguf(const ParsedArgs& a) {
  if (a.positional.size() != 1) throw UsageError("convert --builtin NAME --to gguf needs OUT.gguf");
  const std::string name = a.Get("--builtin");
  builtin::LlamaConfig config;
  if (name == "llama-tiny") {
    config = builtin::SmallLlamaConfig();
  } else if (name != "llama") {
    throw UsageError("--to gguf exports the built-in decoders llama and llama-tiny, not '" + name + "'");
  }
  const quant::GgmlType type = GgufExportType(a.Get("--type", "q4_0"));
  const std::string bytes = convert::ExportLlamaGguf(config, type, "simplecpp " + name);
  io::WriteStringToFile(a.positional[0], bytes);
  std::printf("wrote %s: built-in %s as a LLaMA GGUF, weights %s, %zu bytes\n",
              a.positional[0].c_str(), name.c_str(), quant::GgmlTypeName(static_cast<uint32_t>(type)),
              bytes.size());
  return 0;
}

// convert --from gguf IN.gguf OUT.onnx
int ImportGguf(const ParsedArgs& a) {
  if (a.positional.size() != 2) throw UsageError("convert --from gguf needs IN.gguf and OUT.onnx");
  const io::GgufFile file = io::OpenGguf(a.positional[0]);
  convert::GgufImportReport report;
  const graph::Model out = convert::ImportLlamaGguf(file, &report);
  onnx::WriteModelFile(a.positional[1], out);
  const builtin::LlamaConfig& c = report.config;
  std::printf("read %s: GGUF v%u, LLaMA%s%s: %lld layers, hidden %lld, heads %lld / %lld kv, ffn "
              "%lld, vocab %lld, rope theta %g, rms eps %g\n",
              a.positional[0].c_str(), file.version, report.name.empty() ? "" : " ",
              report.name.c_str(), static_cast<long long>(c.layers), static_cast<long long>(c.hidden),
              static_cast<long long>(c.q_heads), static_cast<long long>(c.kv_heads),
              static_cast<long long>(c.ffn), static_cast<long long>(c.vocab), c.rope_theta, c.rms_eps);
  std::printf("tensors:");
  for (const auto& [type, count] : report.tensor_types) std::printf(" %s x%d", type.c_str(), count);
  std::printf("%s\n", report.tied_output ? " (output tied to token_embd)" : "");
  PrintSummary(graph::Model{}, out, a.positional[1]);
  return 0;
}

}  // namespace

int ConvertCommand(const std::vector<std::string>& args) {
  const ParsedArgs a = ParseArgs(args, {"--to", "--from", "--builtin", "--type"}, {});
  const std::string to = a.Get("--to", "");
  const std::string from = a.Get("--from", "");
  if (a.Has("--builtin")) {
    if (to != "gguf" || a.Has("--from")) throw UsageError("--builtin goes with --to gguf");
    return ExportGguf(a);
  }
  if (a.Has("--type")) throw UsageError("--type is for --to gguf");
  if (a.Has("--from")) {
    if (from != "gguf") throw UsageError("convert: --from gguf is the only import (got '" + from + "')");
    if (a.Has("--to")) throw UsageError("--from gguf writes ONNX; leave --to out");
    return ImportGguf(a);
  }
  if (a.positional.size() != 2) throw UsageError("convert needs IN.onnx and OUT.onnx");
  if (to != "float16") {
    throw UsageError("convert: --to float16, --from gguf or --builtin NAME --to gguf (got --to '" + to + "')");
  }
  const graph::Model model = onnx::ReadModelFile(a.positional[0]);
  const graph::Model out = convert::ConvertToFloat16(model);
  onnx::WriteModelFile(a.positional[1], out);
  PrintSummary(model, out, a.positional[1]);
  return 0;
}

}  // namespace simplecpp::cli
