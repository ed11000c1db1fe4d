// simplecpp::Decoder (greedy decoding with a KV cache) and its C API, on the small built-in LLaMA
// decoder in its three forms. The reference decodes without any cache: every step runs the whole
// sequence so far from an empty past and takes the argmax of the last row, so a cache that is
// moved wrongly, a position or mask off by one, or a wrong stop rule gives other tokens.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/builder.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"
#include "simplecpp/simplecpp_c.h"

namespace simplecpp {
namespace {

using builtin::LlamaForm;

std::string SmallLlamaBytes(LlamaForm form) {
  return onnx::WriteModel(builtin::MakeLlamaModel(builtin::SmallLlamaConfig(), form));
}

Model LoadSmall(LlamaForm form) {
  const std::string bytes = SmallLlamaBytes(form);
  return Model::LoadFromBytes(bytes.data(), bytes.size());
}

bool HasInput(const Model& model, const std::string& name) {
  for (const ValueDescription& v : model.inputs()) {
    if (v.name == name) return true;
  }
  return false;
}

Tensor Row(const std::vector<int64_t>& v) {
  Tensor t(DType::kInt64, {1, static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

// Greedy tokens with no cache: each step reruns the whole sequence from an empty past.
std::vector<int64_t> NoCacheGreedy(const Model& model, std::vector<int64_t> sequence,
                                   int64_t count) {
  const builtin::LlamaConfig c = builtin::SmallLlamaConfig();
  Session session(model);
  std::vector<int64_t> generated;
  for (int64_t step = 0; step < count; ++step) {
    std::map<std::string, Tensor> feeds;
    for (int64_t i = 0; i < c.layers; ++i) {
      for (const char* kv : {"key", "value"}) {
        feeds["past_key_values." + std::to_string(i) + "." + kv] =
            Tensor(DType::kFloat32, {1, c.kv_heads, 0, c.hidden / c.q_heads});
      }
    }
    feeds["input_ids"] = Row(sequence);
    if (HasInput(model, "attention_mask"))
      feeds["attention_mask"] = Row(std::vector<int64_t>(sequence.size(), 1));
    const Tensor logits = session.Run(feeds).at("logits");
    const int64_t vocab = logits.dim(2);
    const float* last = logits.data<float>() + (logits.dim(1) - 1) * vocab;
    const int64_t next = std::max_element(last, last + vocab) - last;
    generated.push_back(next);
    sequence.push_back(next);
  }
  return generated;
}

const std::vector<int64_t> kPrompt = {5, 17, 3, 42, 9};

TEST_CASE("Decoder: greedy tokens equal a decode without cache, every form and thread count") {
  for (LlamaForm form : {LlamaForm::kFloat32, LlamaForm::kOnnxInt4, LlamaForm::kMsft}) {
    const Model model = LoadSmall(form);
    const std::vector<int64_t> expected = NoCacheGreedy(model, kPrompt, 7);
    for (int threads : {1, 3}) {
      CAPTURE(threads);
      SessionOptions options;
      options.threads = threads;
      Decoder decoder(model, options);
      CHECK(decoder.num_layers() == builtin::SmallLlamaConfig().layers);
      CHECK(decoder.vocab_size() == builtin::SmallLlamaConfig().vocab);
      GenerateOptions g;
      g.max_tokens = 7;
      const GenerateResult r = decoder.Generate(kPrompt, g);
      CHECK(r.tokens == expected);
      CHECK(r.prefill_ms > 0);
      CHECK(r.decode_ms > 0);
      // A second call starts from an empty cache again; a warm-up run changes nothing.
      g.warmup = true;
      CHECK(decoder.Generate(kPrompt, g).tokens == expected);
    }
  }
}

TEST_CASE("Decoder: max_tokens, stop_token and on_token end generation") {
  const Model model = LoadSmall(LlamaForm::kOnnxInt4);
  Decoder decoder(model);
  GenerateOptions g;
  g.max_tokens = 6;
  const std::vector<int64_t> all = decoder.Generate(kPrompt, g).tokens;
  REQUIRE(all.size() == 6);

  g.max_tokens = 1;  // the prefill's token only
  const GenerateResult one = decoder.Generate(kPrompt, g);
  CHECK(one.tokens == std::vector<int64_t>{all[0]});
  CHECK(one.decode_ms == 0);

  g.max_tokens = 0;
  CHECK(decoder.Generate(kPrompt, g).tokens.empty());

  // The stop token ends generation after its first occurrence (it is returned).
  g.max_tokens = 6;
  g.stop_token = all[2];
  const size_t first = static_cast<size_t>(std::find(all.begin(), all.end(), all[2]) - all.begin());
  CHECK(decoder.Generate(kPrompt, g).tokens == std::vector<int64_t>(all.begin(), all.begin() + first + 1));

  // on_token sees every token in order and may stop after one.
  g.stop_token = -1;
  std::vector<int64_t> seen;
  const GenerateResult stopped = decoder.Generate(kPrompt, g, [&](int64_t t) {
    seen.push_back(t);
    return seen.size() < 4;
  });
  CHECK(seen == std::vector<int64_t>(all.begin(), all.begin() + 4));
  CHECK(stopped.tokens == seen);
}

TEST_CASE("Decoder: what it refuses, by name") {
  const Model model = LoadSmall(LlamaForm::kFloat32);
  Decoder decoder(model);
  const int64_t vocab = builtin::SmallLlamaConfig().vocab;
  CHECK_THROWS_WITH_AS(decoder.Generate({}), doctest::Contains("no tokens"), Error);
  CHECK_THROWS_WITH_AS(decoder.Generate({1, vocab}), doctest::Contains("outside the vocabulary"),
                       Error);
  CHECK_THROWS_WITH_AS(decoder.Generate({-1}), doctest::Contains("outside the vocabulary"), Error);
  GenerateOptions g;
  g.max_tokens = -1;
  CHECK_THROWS_WITH_AS(decoder.Generate({1}, g), doctest::Contains("max_tokens"), Error);

  // A model that is not a KV-cache decoder.
  GraphBuilder b(17);
  const std::string x = b.AddInput("x", DType::kFloat32, {1, 4});
  b.AddOutput(b.AddNode("Relu", {x}));
  const Model relu = b.Build();
  CHECK_THROWS_WITH_AS(Decoder{relu}, doctest::Contains("no 'input_ids' input"), Error);
}

TEST_CASE("Decoder C API: the same tokens, and its errors as statuses") {
  const std::string bytes = SmallLlamaBytes(LlamaForm::kMsft);
  sc_model* model = nullptr;
  REQUIRE(sc_model_load_bytes(bytes.data(), bytes.size(), &model) == nullptr);
  sc_decoder* decoder = nullptr;
  REQUIRE(sc_decoder_create(model, 1, &decoder) == nullptr);
  int64_t vocab = 0;
  REQUIRE(sc_decoder_vocab_size(decoder, &vocab) == nullptr);
  CHECK(vocab == builtin::SmallLlamaConfig().vocab);

  const std::vector<int64_t> expected =
      NoCacheGreedy(Model::LoadFromBytes(bytes.data(), bytes.size()), kPrompt, 5);
  std::vector<int64_t> tokens(5, -7);
  int64_t count = -1;
  double prefill_ms = -1, decode_ms = -1;
  REQUIRE(sc_decoder_generate(decoder, kPrompt.data(), static_cast<int64_t>(kPrompt.size()), 5,
                              -1, 0, tokens.data(), &count, &prefill_ms, &decode_ms) == nullptr);
  CHECK(count == 5);
  CHECK(tokens == expected);
  CHECK(prefill_ms > 0);
  CHECK(decode_ms > 0);

  const auto expect_error = [](sc_status* s, int32_t code, const char* text) {
    REQUIRE(s != nullptr);
    CHECK(sc_status_code(s) == code);
    CHECK(std::string(sc_status_message(s)).find(text) != std::string::npos);
    sc_status_free(s);
  };
  expect_error(sc_decoder_generate(decoder, kPrompt.data(), 0, 5, -1, 0, tokens.data(), &count,
                                   nullptr, nullptr),
               SC_ERR_INVALID_ARGUMENT, "at least one token");
  CHECK(count == 0);
  const int64_t bad = vocab;
  expect_error(sc_decoder_generate(decoder, &bad, 1, 5, -1, 0, tokens.data(), &count, nullptr,
                                   nullptr),
               SC_ERR_INVALID_ARGUMENT, "outside the vocabulary");
  expect_error(sc_decoder_generate(decoder, kPrompt.data(), 1, 5, -1, 0, nullptr, &count, nullptr,
                                   nullptr),
               SC_ERR_INVALID_ARGUMENT, "out_tokens");
  expect_error(sc_decoder_create(nullptr, 1, &decoder), SC_ERR_INVALID_ARGUMENT, "model");
  sc_decoder_free(decoder);
  sc_decoder_free(nullptr);
  sc_model_free(model);
}

}  // namespace
}  // namespace simplecpp
