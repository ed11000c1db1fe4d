// simplecpp::Decoder: greedy decoding with a KV cache on any decoder that follows
// onnxruntime-genai's names (simplecpp.h). The interface is discovered once from the model's
// inputs and outputs; Generate feeds the prompt, then each new token, moving every present.*
// output into the matching past_key_values.* input of the next run.
#include <chrono>
#include <string>
#include <utility>

#include "graph/op.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp {
namespace {

// One past_key_values.{i}.{key|value} input and the present output that refills it.
struct CacheSlot {
  std::string past, present;
  DType dtype = DType::kFloat32;
  int64_t heads = 0, head_dim = 0;
};

// What Generate feeds and reads.
struct DecoderInterface {
  std::vector<CacheSlot> cache;
  bool has_attention_mask = false;
  bool has_position_ids = false;
  int64_t vocab = -1;  // logits' last dim when the model states it
};

Error InvalidModel(const std::string& what) { return Error(ErrorCode::kInvalidArgument, what); }

const ValueDescription* Find(const std::vector<ValueDescription>& values, const std::string& name) {
  for (const ValueDescription& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

void RequireInt64Tensor(const ValueDescription& v) {
  if (v.sequence || v.optional || v.dtype != DType::kInt64) {
    throw InvalidModel("input '" + v.name + "' must be an int64 tensor, the model declares " +
                       DTypeName(v.dtype));
  }
}

// The cache slots of layer `layer`, or none when the model has no past input for it.
std::vector<CacheSlot> LayerCache(const Model& model, const std::string& layer) {
  const ValueDescription* key = Find(model.inputs(), "past_key_values." + layer + ".key");
  const ValueDescription* value = Find(model.inputs(), "past_key_values." + layer + ".value");
  if (key == nullptr && value == nullptr) return {};
  std::vector<CacheSlot> slots;
  for (const auto& [past, kind] : {std::make_pair(key, "key"), std::make_pair(value, "value")}) {
    const std::string past_name = "past_key_values." + layer + "." + kind;
    if (past == nullptr) throw InvalidModel("the model has no '" + past_name + "' input");
    if (past->sequence || past->optional || !past->has_shape || past->dims.size() != 4 ||
        past->dims[1] < 0 || past->dims[3] < 0) {
      throw InvalidModel("input '" + past_name +
                         "' must be a tensor [batch, kv_heads, past_sequence, head_dim] with "
                         "kv_heads and head_dim stated in the model");
    }
    CacheSlot slot;
    slot.past = past_name;
    slot.present = std::string("present.") + layer + "." + kind;
    if (Find(model.outputs(), slot.present) == nullptr) {
      throw InvalidModel("the model has no '" + slot.present + "' output");
    }
    slot.dtype = past->dtype;
    slot.heads = past->dims[1];
    slot.head_dim = past->dims[3];
    slots.push_back(slot);
  }
  return slots;
}

DecoderInterface Discover(const Model& model) {
  DecoderInterface d;
  const ValueDescription* ids = Find(model.inputs(), "input_ids");
  if (ids == nullptr) {
    throw InvalidModel(
        "the model has no 'input_ids' input (a Decoder needs onnxruntime-genai's input names)");
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
  if (logits == nullptr) throw InvalidModel("the model has no 'logits' output");
  if (logits->has_shape && logits->dims.size() == 3) d.vocab = logits->dims[2];
  for (int64_t i = 0;; ++i) {
    std::vector<CacheSlot> slots = LayerCache(model, std::to_string(i));
    if (slots.empty()) break;
    d.cache.insert(d.cache.end(), slots.begin(), slots.end());
  }
  if (d.cache.empty()) {
    throw InvalidModel(
        "the model has no 'past_key_values.0.key' input (a Decoder needs a KV-cache decoder)");
  }
  for (const ValueDescription& v : model.inputs()) {
    if (v.name == "input_ids" || v.name == "attention_mask" || v.name == "position_ids" ||
        v.name.rfind("past_key_values.", 0) == 0) {
      continue;
    }
    throw InvalidModel("the model has an input a Decoder does not know how to feed: '" + v.name +
                       "'");
  }
  return d;
}

Tensor Int64Row(const std::vector<int64_t>& values) {
  Tensor t(DType::kInt64, {1, static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

// 0, 1, ..., n-1 shifted by `first`.
std::vector<int64_t> Positions(int64_t first, int64_t n) {
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pos[static_cast<size_t>(i)] = first + i;
  return pos;
}

// Argmax over the last row of logits [1, seq, vocab] (the first index wins ties).
int64_t LastRowArgmax(const Tensor& logits) {
  if (logits.rank() != 3 || logits.dim(0) != 1 || logits.dim(1) < 1 || logits.dim(2) < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "logits must be [1, sequence, vocab], got " + DimsToString(logits.dims()));
  }
  const int64_t vocab = logits.dim(2), base = (logits.dim(1) - 1) * vocab;
  int64_t best = 0;
  double best_value = graph::TensorElementAsDouble(logits, base);
  for (int64_t j = 1; j < vocab; ++j) {
    const double v = graph::TensorElementAsDouble(logits, base + j);
    if (v > best_value) {
      best_value = v;
      best = j;
    }
  }
  return best;
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

struct Decoder::Impl {
  DecoderInterface d;
  Session session;

  std::map<std::string, Tensor> EmptyCache() const {
    std::map<std::string, Tensor> feeds;
    for (const CacheSlot& slot : d.cache)
      feeds[slot.past] = Tensor(slot.dtype, {1, slot.heads, 0, slot.head_dim});
    return feeds;
  }

  // Sets input_ids (and the mask and positions) for a run on `ids` after `past` cached tokens.
  void SetTokens(const std::vector<int64_t>& ids, int64_t past,
                 std::map<std::string, Tensor>* feeds) const {
    const int64_t seq = static_cast<int64_t>(ids.size());
    (*feeds)["input_ids"] = Int64Row(ids);
    if (d.has_attention_mask)
      (*feeds)["attention_mask"] = Int64Row(std::vector<int64_t>(static_cast<size_t>(past + seq), 1));
    if (d.has_position_ids) (*feeds)["position_ids"] = Int64Row(Positions(past, seq));
  }

  // Moves each present output into its past input, checking that it grew by `seq` tokens.
  void AdvanceCache(std::map<std::string, Tensor>& out, int64_t length,
                    std::map<std::string, Tensor>* feeds) const {
    for (const CacheSlot& slot : d.cache) {
      Tensor& present = out.at(slot.present);
      if (present.rank() != 4 || present.dim(2) != length) {
        throw Error(ErrorCode::kInvalidArgument,
                    "output '" + slot.present + "' is " + DimsToString(present.dims()) +
                        ", expected [1, kv_heads, " + std::to_string(length) + ", head_dim]");
      }
      (*feeds)[slot.past] = std::move(present);  // the cache moves, no copy
    }
  }

  void CheckPrompt(const std::vector<int64_t>& prompt) const {
    if (prompt.empty()) throw Error(ErrorCode::kInvalidArgument, "the prompt has no tokens");
    for (int64_t id : prompt) {
      if (id < 0 || (d.vocab > 0 && id >= d.vocab)) {
        throw Error(ErrorCode::kInvalidArgument,
                    "prompt token " + std::to_string(id) + " is outside the vocabulary [0, " +
                        (d.vocab > 0 ? std::to_string(d.vocab) : std::string("?")) + ")");
      }
    }
  }
};

Decoder::Decoder(const Model& model, const SessionOptions& options)
    : impl_(new Impl{Discover(model), Session(model, options)}) {}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

int64_t Decoder::vocab_size() const { return impl_->d.vocab; }
int64_t Decoder::num_layers() const { return static_cast<int64_t>(impl_->d.cache.size() / 2); }

GenerateResult Decoder::Generate(const std::vector<int64_t>& prompt, const GenerateOptions& options,
                                 const std::function<bool(int64_t)>& on_token) {
  const Impl& m = *impl_;
  m.CheckPrompt(prompt);
  if (options.max_tokens < 0)
    throw Error(ErrorCode::kInvalidArgument, "max_tokens must be >= 0");
  GenerateResult result;
  if (options.max_tokens == 0) return result;
  std::map<std::string, Tensor> feeds = m.EmptyCache();
  if (options.warmup) {
    std::map<std::string, Tensor> warm = feeds;
    m.SetTokens(prompt, 0, &warm);
    impl_->session.Run(warm);
  }
  std::vector<int64_t> step_ids = prompt;  // what this run feeds
  int64_t past = 0;
  while (static_cast<int64_t>(result.tokens.size()) < options.max_tokens) {
    const int64_t seq = static_cast<int64_t>(step_ids.size());
    m.SetTokens(step_ids, past, &feeds);
    const auto start = std::chrono::steady_clock::now();
    std::map<std::string, Tensor> out = impl_->session.Run(feeds);
    const int64_t next = LastRowArgmax(out.at("logits"));
    (result.tokens.empty() ? result.prefill_ms : result.decode_ms) += MillisecondsSince(start);
    past += seq;
    m.AdvanceCache(out, past, &feeds);
    result.tokens.push_back(next);
    const bool go_on = !on_token || on_token(next);
    if (!go_on || next == options.stop_token) break;
    step_ids = {next};
  }
  return result;
}

}  // namespace simplecpp
