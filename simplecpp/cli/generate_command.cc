// `simplecpp generate`: greedy decoding with a KV cache (simplecpp::Decoder, simplecpp.h) on any
// decoder that follows onnxruntime-genai's names, from an ONNX file, a built-in model or a LLaMA
// GGUF converted in memory; prints the tokens, the prefill time and the decode rate.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/api/builtin_models.h"
#include "simplecpp/cli/cli_util.h"
#include "simplecpp/convert/gguf_llama.h"
#include "simplecpp/io/gguf.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp::cli {
namespace {

// Whether the file starts with GGUF's magic.
bool IsGgufFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

Model LoadModel(const ParsedArgs& a) {
  if (a.Has("--builtin")) {
    if (!a.positional.empty()) throw UsageError("give either MODEL or --builtin, not both");
    const std::string bytes = onnx::WriteModel(builtin::MakeBuiltinModel(a.Get("--builtin")));
    return Model::LoadFromBytes(bytes.data(), bytes.size());
  }
  if (a.positional.size() != 1) throw UsageError("generate needs one MODEL (or --builtin NAME)");
  const std::string& path = a.positional[0];
  if (!IsGgufFile(path)) return Model::Load(path);
  // A LLaMA GGUF: converted in memory as `convert --from gguf` would write it.
  const auto start = std::chrono::steady_clock::now();
  const std::string bytes = onnx::WriteModel(convert::ImportLlamaGguf(io::OpenGguf(path)));
  Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  std::printf("converted GGUF %s to ONNX in %.0f ms\n", path.c_str(),
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return model;
}

std::vector<int64_t> ParsePrompt(const std::string& text, int64_t vocab) {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const int64_t id = ParseInt(item, "--prompt token");
    if (id < 0 || (vocab > 0 && id >= vocab)) {
      throw UsageError("--prompt token " + item + " is outside the vocabulary [0, " +
                       (vocab > 0 ? std::to_string(vocab) : std::string("?")) + ")");
    }
    ids.push_back(id);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

}  // namespace

int GenerateCommand(const std::vector<std::string>& args) {
  const ParsedArgs a =
      ParseArgs(args, {"--builtin", "--prompt", "--tokens", "--threads"}, {"--warmup"});
  if (!a.Has("--prompt")) throw UsageError("generate needs --prompt ID,ID,...");
  const int64_t steps = a.GetInt("--tokens", 16, 0);
  SessionOptions options;
  options.threads = static_cast<int>(a.GetInt("--threads", 0, 0));
  const Model model = LoadModel(a);
  Decoder decoder(model, options);
  const std::vector<int64_t> tokens = ParsePrompt(a.Get("--prompt"), decoder.vocab_size());
  GenerateOptions generate;
  generate.max_tokens = steps + 1;  // --tokens counts the decode steps after the prefill's token
  generate.warmup = a.Has("--warmup");
  const GenerateResult r = decoder.Generate(tokens, generate);

  std::printf("prompt: %zu tokens, layers: %lld, threads: %d\n", tokens.size(),
              static_cast<long long>(decoder.num_layers()), options.threads);
  std::printf("generated:");
  for (size_t i = 0; i < r.tokens.size(); ++i)
    std::printf("%s%lld", i ? "," : " ", static_cast<long long>(r.tokens[i]));
  std::printf("\n");
  std::printf(
      "prefill: %.2f ms (%zu tokens%s)\n", r.prefill_ms, tokens.size(),
      generate.warmup ? ", after a warm-up run" : ", first run: includes weight preparation");
  if (steps > 0) {
    std::printf("decode: %lld steps in %.2f ms, %.2f tokens/s\n", static_cast<long long>(steps),
                r.decode_ms, 1000.0 * static_cast<double>(steps) / r.decode_ms);
  }
  return 0;
}

}  // namespace simplecpp::cli
