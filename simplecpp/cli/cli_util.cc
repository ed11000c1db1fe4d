// Argument parsing, tensor formatting and generated inputs for the command-line tool.
#include "simplecpp/cli/cli_util.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kernels/float16/float16.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/error.h"

namespace simplecpp::cli {

bool ParsedArgs::Has(const std::string& name) const {
  for (const auto& [n, v] : options) {
    if (n == name) return true;
  }
  return false;
}

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  std::string value = fallback;
  for (const auto& [n, v] : options) {
    if (n == name) value = v;
  }
  return value;
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& name) const {
  std::vector<std::string> values;
  for (const auto& [n, v] : options) {
    if (n == name) values.push_back(v);
  }
  return values;
}

int64_t ParsedArgs::GetInt(const std::string& name, int64_t fallback, int64_t min_value) const {
  if (!Has(name)) return fallback;
  const int64_t v = ParseInt(Get(name), name);
  if (v < min_value) {
    throw UsageError(name + " must be at least " + std::to_string(min_value) + ", got " +
                     std::to_string(v));
  }
  return v;
}

double ParsedArgs::GetDouble(const std::string& name, double fallback) const {
  return Has(name) ? ParseDouble(Get(name), name) : fallback;
}

ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::set<std::string>& value_options,
                     const std::set<std::string>& flag_options) {
  ParsedArgs out;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string name = a, value;
    bool has_inline_value = false;
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_inline_value = true;
    }
    if (flag_options.count(name)) {
      if (has_inline_value) throw UsageError("option " + name + " takes no value");
      out.options.emplace_back(name, "");
    } else if (value_options.count(name)) {
      if (!has_inline_value) {
        if (i + 1 >= args.size()) throw UsageError("option " + name + " needs a value");
        value = args[++i];
      }
      out.options.emplace_back(name, value);
    } else {
      throw UsageError("unknown option '" + a + "'");
    }
  }
  return out;
}

std::pair<std::string, std::string> SplitAssignment(const std::string& text, const std::string& what) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(what + " expects NAME=VALUE, got '" + text + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int64_t ParseInt(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw UsageError(what + ": '" + text + "' is not an integer");
  }
  return static_cast<int64_t>(v);
}

double ParseDouble(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    throw UsageError(what + ": '" + text + "' is not a number");
  }
  return v;
}

double MedianOfSorted(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

bool IsFloatLike(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

bool IsExactNumeric(DType t) { return IsIntegerDType(t) || t == DType::kBool; }

double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return kernels::HalfBitsToDouble(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return kernels::BFloat16BitsToFloat(t.data<uint16_t>()[i]);
    case DType::kBool: return t.data<uint8_t>()[i] ? 1.0 : 0.0;
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kUInt64: return static_cast<double>(t.data<uint64_t>()[i]);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

std::string FormatNumber(double v, DType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const int max_precision = dtype == DType::kFloat64 ? 17 : 9;
  for (int p = 1; p <= max_precision; ++p) {
    std::snprintf(buf, sizeof(buf), "%.*g", p, v);
    const double back = std::strtod(buf, nullptr);
    const bool same = dtype == DType::kFloat64 ? back == v
                                               : static_cast<float>(back) == static_cast<float>(v);
    if (same) break;
  }
  return buf;
}

std::string FormatElement(const Tensor& t, int64_t i) {
  const DType d = t.dtype();
  if (d == DType::kString) return "\"" + t.strings()[i] + "\"";
  if (d == DType::kBool) return t.data<uint8_t>()[i] ? "true" : "false";
  if (d == DType::kInt64) return std::to_string(t.data<int64_t>()[i]);
  if (d == DType::kUInt64) return std::to_string(t.data<uint64_t>()[i]);
  if (IsIntegerDType(d)) return std::to_string(static_cast<int64_t>(ElementAsDouble(t, i)));
  if (IsFloatLike(d)) return FormatNumber(ElementAsDouble(t, i), d);
  return "?";
}

std::string DescribeTensor(const Tensor& t) { return DTypeName(t.dtype()) + " " + DimsToString(t.dims()); }

std::string SummarizeTensor(const Tensor& t, int max_values) {
  std::string s = DescribeTensor(t);
  const int64_t n = t.num_elements();
  const DType d = t.dtype();
  const bool printable = d == DType::kString || IsFloatLike(d) || IsExactNumeric(d);
  if (!printable) return s + " (values not shown for " + DTypeName(d) + ")";
  s += " [";
  for (int64_t i = 0; i < n && i < max_values; ++i) s += (i ? ", " : "") + FormatElement(t, i);
  if (n > max_values) s += ", ...";
  s += "]";
  if (n == 0 || d == DType::kString) return s;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t nan_count = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = ElementAsDouble(t, i);
    if (std::isnan(v)) {
      ++nan_count;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  const DType fmt = d == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  if (nan_count < n) {
    s += " min " + FormatNumber(lo, fmt) + " max " + FormatNumber(hi, fmt) + " mean " +
         FormatNumber(sum / static_cast<double>(n - nan_count), fmt);
  }
  if (nan_count) s += " (" + std::to_string(nan_count) + " NaN)";
  return s;
}

Tensor MakeRandomTensor(DType dtype, const Dims& dims, uint64_t seed) {
  Tensor t(dtype, dims);
  builtin::Random rng(seed);
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const float f = rng.Uniform(-1.0f, 1.0f);
    const int64_t k = static_cast<int64_t>(rng.Next() % 10);
    switch (dtype) {
      case DType::kFloat32: t.data<float>()[i] = f; break;
      case DType::kFloat64: t.data<double>()[i] = f; break;
      case DType::kFloat16: t.data<uint16_t>()[i] = kernels::FloatToHalfBits(f); break;
      case DType::kBFloat16: t.data<uint16_t>()[i] = kernels::FloatToBFloat16Bits(f); break;
      case DType::kBool: t.data<uint8_t>()[i] = static_cast<uint8_t>(k & 1); break;
      case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(k); break;
      case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(k); break;
      case DType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(k); break;
      case DType::kUInt16: t.data<uint16_t>()[i] = static_cast<uint16_t>(k); break;
      case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(k); break;
      case DType::kUInt32: t.data<uint32_t>()[i] = static_cast<uint32_t>(k); break;
      case DType::kInt64: t.data<int64_t>()[i] = k; break;
      case DType::kUInt64: t.data<uint64_t>()[i] = static_cast<uint64_t>(k); break;
      case DType::kString: t.strings()[i] = "s" + std::to_string(k); break;
      default:
        throw Error(ErrorCode::kUnsupported,
                    "cannot generate random data of dtype " + DTypeName(dtype) + "; give it with --input");
    }
  }
  return t;
}

const char* UsageText() {
  return R"(usage: simplecpp <command> [options]

commands:
  run MODEL|default [--builtin NAME] [--input NAME=FILE]... [--dim NAME=VALUE]...
      [--output-dir DIR] [--threads N] [--repeat N] [--profile] [--target NAME]
      Runs a model. Inputs come from TensorProto .pb or .npy files; inputs not given get
      deterministic pseudo-random data (symbolic dims from --dim, else 1). Writes output_K.pb and
      output_K.npy to --output-dir (default: the current folder) and prints a summary of each
      output. --repeat N: one warm-up run, then N timed runs ("median <ms> ms"). --profile: time
      per node (the median over as many profiled runs as --repeat gives, at least one) and
      per op type. --target NAME: run the kernels' code for that SIMD target
      (one this binary compiled and this CPU has, e.g. SSE4 for the portable 128-bit path;
      default the best). MODEL 'default' (or --builtin NAME) generates a built-in model,
      writes it as an .onnx file (to --output-dir, else a temporary folder) and runs that file.
  info MODEL
      IR and opset versions, producer, inputs and outputs, an op histogram, and for every node
      whether this build supports it (and why not).
  test DIR... [--from-env VAR] [--expected FILE] [--filter SUBSTR] [--rtol R] [--atol A]
      [--threads N] [--timeout SECONDS] [--isolate] [--write-passing FILE] [-v]
      ONNX backend conformance: runs every case folder (model.onnx + test_data_set_*/) under the
      given folders and prints PASS/FAIL/UNSUPPORTED per case and "N passed, N failed, N skipped".
      --from-env VAR: the root is $VAR/node (skipped, exit 0, when unset or missing).
      --expected FILE: exit status 1 iff a case listed in FILE did not pass. Without it the exit
      status is 0 whenever the run completed. --isolate: each case in a child process (survives
      crashes; the timeout kills the child). --write-passing FILE: writes the passing case names.
  ops
      Every op this build implements, with the ONNX versions each implementation starts at.
  export-builtin NAME PATH
      Writes the built-in model NAME (cnn, transformer, mlp, vad, crnn, segmentation,
      segmentation-int8, bert, cnn-base, transformer-base, llama, llama-int4, llama-msft) as an
      ONNX file; also llama-msft-acc4 (llama-msft with MatMulNBits accuracy_level 4: int8 A).
  generate MODEL|--builtin NAME --prompt ID,ID,... [--tokens N] [--threads N] [--warmup]
      Greedy decoding with a KV cache on a decoder with onnxruntime-genai's names (input_ids,
      optional attention_mask / position_ids, past_key_values.{i}.key|value -> logits,
      present.{i}.key|value), batch 1: one prefill run on the prompt, then N decode runs
      (default 16), each feeding the previous token and the moved present tensors. Prints the
      N + 1 generated token ids (one per run), the prefill time and decode tokens/s.
      --warmup: one untimed prefill first (the first run of a session prepares the weights).
      MODEL may be a LLaMA GGUF file: it is converted in memory as `convert --from gguf` does.
  quantize [--mode dynamic|qdq] [--input NAME=FILE]... [--per-channel|--per-tensor] [--no-gemm]
      [--no-conv] IN.onnx OUT.onnx
      int8 quantization in ONNX Runtime's patterns; int8 symmetric weights per output channel
      (--per-tensor: one scale per weight). dynamic (default): MatMul/Gemm/Conv with constant
      float32 weights -> DynamicQuantizeLinear, MatMulInteger/ConvInteger, Cast, Mul by x_scale *
      w_scale (--no-gemm: no Gemm; --no-conv: no Conv). qdq: static QuantizeLinear/
      DequantizeLinear pairs (uint8 activations from min/max calibration), int8 weights and int32
      biases, with BatchNormalization folded into Conv and Relu after Conv/Gemm removed.
      Calibration data: --input NAME=FILE (.pb or .npy; repeating the first NAME starts another
      input set), default one set of pseudo-random floats in [-1, 1). Weights in Constant nodes
      count as weights. A model below the opset the emitted ops need is upgraded first: dynamic to
      11, qdq to 13 (per-channel DequantizeLinear; 11 and per-tensor weights when an op cannot be
      upgraded to 13).
  quantize --mode weights [--bits 4|8] [--block B] [--symmetric] [--format onnx|msft]
      [--accuracy-level 0-4] [--input NAME=FILE]... IN.onnx OUT.onnx
      Weight-only block quantization (activations stay float): every MatMul/Gemm with a constant
      float32/float16 rank-2 weight [K, N] (K >= B; Gemm's transB applied, alpha folded in) gets
      --bits codes (default 4) in blocks of B along K (default 32), asymmetric (unsigned codes,
      zero point from each block's min/max) or --symmetric (signed codes, scale
      max|w| / (2^(bits-1) - 1)).
      --format onnx (default): DequantizeLinear(block_size B, axis 0) -> MatMul, opset raised to 21.
      msft: com.microsoft MatMulNBits (B a power of two >= 16), with --accuracy-level as its
      accuracy_level (4: int8 A allowed, decode steps run integer kernels). Prints per-weight
      SQNR, the output error of float vs quantized on a seeded input (or the --input files) and
      the file sizes.
  convert --to float16 IN.onnx OUT.onnx
      float32 -> float16: initializers, graph inputs/outputs, value types, Constant values and
      Cast targets; quantization ops keep float32 behind Casts, and inputs ONNX types as float32
      only (Resize/Upsample scales and roi) stay float32.
  convert --from gguf IN.gguf OUT.onnx
      A LLaMA model in ggml's GGUF format (tensors F32, F16, Q8_0, Q4_0, Q4_1) -> the decoder
      graph `generate` runs (opset 23; blocked DequantizeLinear -> MatMul, exact). Other
      architectures, K-quants and rope scaling are refused by name.
  convert --builtin llama|llama-tiny --to gguf [--type f32|f16|q8_0|q4_0|q4_1] OUT.gguf
      Writes a built-in decoder as a LLaMA GGUF (default q4_0).
  help
      This text.

Exit status: 0 success, 1 error (message on stderr), 2 bad command line.
)";
}

}  // namespace simplecpp::cli
