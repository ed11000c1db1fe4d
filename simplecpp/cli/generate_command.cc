// `simplecpp generate`: greedy decoding with a KV cache on any decoder that follows
// onnxruntime-genai's naming (input_ids, optional attention_mask / position_ids,
// past_key_values.{i}.key|value in, logits and present.{i}.key|value out). One prefill run on the
// prompt, then one run per new token; each run's present tensors are moved into the next run's
// past inputs (the Tensor handles move, the cache data is not copied by this loop).
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

// One past_key_values.{i}.{key|value} input and the present output that refills it.
struct CacheSlot {
  std::string past, present;
  DType dtype = DType::kFloat32;
  int64_t heads = 0, head_dim = 0;
};

// What generate feeds and reads, discovered from the model's inputs and outputs.
struct DecoderInterface {
  std::vector<CacheSlot> cache;
  bool has_attention_mask = false;
  bool has_position_ids = false;
  int64_t vocab = -1;  // logits' last dim when the model states it
};

const ValueDescription* Find(const std::vector<ValueDescription>& values, const std::string& name) {
  for (const ValueDescription& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

void RequireInt64Tensor(const ValueDescription& v) {
  if (v.sequence || v.optional || v.dtype != DType::kInt64) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "input '" + v.name + "' must be an int64 tensor, the model declares " + DTypeName(v.dtype));
  }
}

DecoderInterface Discover(const Model& model) {
  DecoderInterface d;
  const ValueDescription* ids = Find(model.inputs(), "input_ids");
  if (ids == nullptr) {
    throw Error(ErrorCode::kInvalidArgument,
                "the model has no 'input_ids' input (generate needs "
                "onnxruntime-genai's input names)");
  }
  RequireInt64Tensor(*ids);
  if (const ValueDescription* m = Find(model.inputs(), "attention_mask")) {
    RequireInt64Tensor(*m);
    d.has_attention_mask = true;
  }
  if (const ValueDescription* p = Find(model.inputs(), "position_ids")) {
    RequireInt64Tensor(*p);
    d.has_position_ids = true;
  }
  const ValueDescription* logits = Find(model.outputs(), "logits");
  if (logits == nullptr)
    throw Error(ErrorCode::kInvalidArgument, "the model has no 'logits' output");
  if (logits->has_shape && logits->dims.size() == 3) d.vocab = logits->dims[2];
  for (int64_t i = 0;; ++i) {
    const std::string layer = std::to_string(i);
    const ValueDescription* key = Find(model.inputs(), "past_key_values." + layer + ".key");
    const ValueDescription* value = Find(model.inputs(), "past_key_values." + layer + ".value");
    if (key == nullptr && value == nullptr) break;
    for (const auto& [past, kind] : {std::make_pair(key, "key"), std::make_pair(value, "value")}) {
      const std::string past_name = "past_key_values." + layer + "." + kind;
      if (past == nullptr)
        throw Error(ErrorCode::kInvalidArgument, "the model has no '" + past_name + "' input");
      if (past->sequence || past->optional || !past->has_shape || past->dims.size() != 4 ||
          past->dims[1] < 0 || past->dims[3] < 0) {
        throw Error(ErrorCode::kInvalidArgument,
                    "input '" + past_name +
                        "' must be a tensor [batch, kv_heads, past_sequence, head_dim] with "
                        "kv_heads and head_dim stated in the model");
      }
      CacheSlot slot;
      slot.past = past_name;
      slot.present = std::string("present.") + layer + "." + kind;
      if (Find(model.outputs(), slot.present) == nullptr) {
        throw Error(ErrorCode::kInvalidArgument, "the model has no '" + slot.present + "' output");
      }
      slot.dtype = past->dtype;
      slot.heads = past->dims[1];
      slot.head_dim = past->dims[3];
      d.cache.push_back(slot);
    }
  }
  if (d.cache.empty()) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "the model has no 'past_key_values.0.key' input (generate needs a KV-cache decoder)");
  }
  for (const ValueDescription& v : model.inputs()) {
    if (v.name == "input_ids" || v.name == "attention_mask" || v.name == "position_ids" ||
        v.name.rfind("past_key_values.", 0) == 0) {
      continue;
    }
    throw Error(ErrorCode::kInvalidArgument,
                "the model has an input generate does not know how to feed: '" + v.name + "'");
  }
  return d;
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

Tensor Int64Row(const std::vector<int64_t>& values) {
  Tensor t(DType::kInt64, {1, static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

// Argmax over the last row of logits [1, seq, vocab] (the first index wins ties).
int64_t LastRowArgmax(const Tensor& logits) {
  if (logits.rank() != 3 || logits.dim(0) != 1 || logits.dim(1) < 1 || logits.dim(2) < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "logits must be [1, sequence, vocab], got " + DimsToString(logits.dims()));
  }
  const int64_t vocab = logits.dim(2), base = (logits.dim(1) - 1) * vocab;
  int64_t best = 0;
  double best_value = ElementAsDouble(logits, base);
  for (int64_t j = 1; j < vocab; ++j) {
    const double v = ElementAsDouble(logits, base + j);
    if (v > best_value) {
      best_value = v;
      best = j;
    }
  }
  return best;
}

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

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
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
  const DecoderInterface d = Discover(model);
  std::vector<int64_t> tokens = ParsePrompt(a.Get("--prompt"), d.vocab);
  Session session(model, options);

  std::map<std::string, Tensor> feeds;
  for (const CacheSlot& slot : d.cache)
    feeds[slot.past] = Tensor(slot.dtype, {1, slot.heads, 0, slot.head_dim});
  if (a.Has("--warmup")) {
    // One untimed prefill: the weights are prepared (packed) on a session's first run, which
    // onnxruntime does at session creation instead.
    std::map<std::string, Tensor> warm = feeds;
    warm["input_ids"] = Int64Row(tokens);
    if (d.has_attention_mask)
      warm["attention_mask"] = Int64Row(std::vector<int64_t>(tokens.size(), 1));
    if (d.has_position_ids) {
      std::vector<int64_t> pos(tokens.size());
      for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int64_t>(i);
      warm["position_ids"] = Int64Row(pos);
    }
    session.Run(warm);
  }
  std::vector<int64_t> step_ids = tokens;  // what this run feeds
  std::vector<int64_t> generated;
  double prefill_ms = 0, decode_ms = 0;
  for (int64_t step = 0; step <= steps; ++step) {
    const int64_t past = feeds.at(d.cache[0].past).dim(2);
    const int64_t seq = static_cast<int64_t>(step_ids.size());
    feeds["input_ids"] = Int64Row(step_ids);
    if (d.has_attention_mask)
      feeds["attention_mask"] = Int64Row(std::vector<int64_t>(past + seq, 1));
    if (d.has_position_ids) {
      std::vector<int64_t> pos(static_cast<size_t>(seq));
      for (int64_t i = 0; i < seq; ++i) pos[i] = past + i;
      feeds["position_ids"] = Int64Row(pos);
    }
    const auto start = std::chrono::steady_clock::now();
    std::map<std::string, Tensor> out = session.Run(feeds);
    const int64_t next = LastRowArgmax(out.at("logits"));
    (step == 0 ? prefill_ms : decode_ms) += MillisecondsSince(start);
    for (const CacheSlot& slot : d.cache) {
      Tensor& present = out.at(slot.present);
      if (present.rank() != 4 || present.dim(2) != past + seq) {
        throw Error(ErrorCode::kInvalidArgument,
                    "output '" + slot.present + "' is " + DimsToString(present.dims()) +
                        ", expected [1, kv_heads, " + std::to_string(past + seq) + ", head_dim]");
      }
      feeds[slot.past] = std::move(present);  // the cache moves, no copy
    }
    generated.push_back(next);
    step_ids = {next};
  }

  std::printf("prompt: %zu tokens, layers: %zu, threads: %d\n", tokens.size(), d.cache.size() / 2,
              options.threads);
  std::printf("generated:");
  for (size_t i = 0; i < generated.size(); ++i)
    std::printf("%s%lld", i ? "," : " ", static_cast<long long>(generated[i]));
  std::printf("\n");
  std::printf(
      "prefill: %.2f ms (%zu tokens%s)\n", prefill_ms, tokens.size(),
      a.Has("--warmup") ? ", after a warm-up run" : ", first run: includes weight preparation");
  if (steps > 0) {
    std::printf("decode: %lld steps in %.2f ms, %.2f tokens/s\n", static_cast<long long>(steps),
                decode_ms, 1000.0 * static_cast<double>(steps) / decode_ms);
  }
  return 0;
}

}  // namespace simplecpp::cli
