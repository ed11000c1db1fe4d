// The LLaMA-style built-in decoder (simplecpp/api/builtin_llama.h, small test config) against
// ONNX Runtime (onnxruntime-node through tests/models/ort_reference.mjs), each of the three
// forms: a prefill of the prompt, then one decode step fed with ORT's own present tensors; the
// logits of both runs compared within 1e-4 * max(1, max |ref|). Skipped with a message when `node`
// or the npm package is missing; set SIMPLECPP_ORT_NODE_DIR to a folder holding
// node_modules/onnxruntime-node (default bench/).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"
#include "tests/models/ort_node.h"

namespace simplecpp {
namespace {

using builtin::LlamaConfig;
using builtin::LlamaForm;

using Feeds = std::vector<std::pair<std::string, Tensor>>;

Tensor Row(const std::vector<int64_t>& v) {
  Tensor t(DType::kInt64, {1, static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

Tensor Floats(const Dims& dims, const std::vector<float>& v) {
  Tensor t(DType::kFloat32, dims);
  REQUIRE(static_cast<size_t>(t.num_elements()) == v.size());
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

// The feeds of one run: tokens, the all-ones mask (kMsft), the cache (empty when `cache` is).
Feeds MakeFeeds(const LlamaConfig& c, LlamaForm form, const std::vector<int64_t>& ids,
                const std::vector<Tensor>& cache) {
  const int64_t hd = c.hidden / c.q_heads;
  const int64_t past = cache.empty() ? 0 : cache[0].dim(2);
  Feeds f;
  f.emplace_back("input_ids", Row(ids));
  if (form == LlamaForm::kMsft) {
    f.emplace_back("attention_mask", Row(std::vector<int64_t>(past + ids.size(), 1)));
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    for (int kv = 0; kv < 2; ++kv) {
      const std::string name = "past_key_values." + std::to_string(i) + (kv ? ".value" : ".key");
      f.emplace_back(name, cache.empty() ? Tensor(DType::kFloat32, {1, c.kv_heads, 0, hd})
                                         : cache[static_cast<size_t>(2 * i + kv)]);
    }
  }
  return f;
}

void CheckClose(const Tensor& ours, const std::vector<float>& ref, const char* what,
                double tolerance) {
  REQUIRE(static_cast<size_t>(ours.num_elements()) == ref.size());
  double scale = 1.0, worst = 0.0;
  for (float r : ref) scale = std::max(scale, std::fabs(static_cast<double>(r)));
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(ours.data<float>()[i]) - ref[i]));
  }
  MESSAGE(std::string(what) << ": max |ours - ORT| = " << worst << " (max |ORT| " << scale << ")");
  CHECK(worst <= tolerance * scale);
}

int64_t ArgmaxLast(const std::vector<float>& logits, int64_t vocab) {
  const float* row = logits.data() + logits.size() - static_cast<size_t>(vocab);
  return std::max_element(row, row + vocab) - row;
}

// tolerance: relative to max(1, max |ORT logit|).
void CompareForm(LlamaForm form, const char* tag, int64_t accuracy_level = 0,
                 double tolerance = 1e-4) {
  std::string why;
  const std::string ort_dir = testing::OrtNodeDir(&why);
  if (ort_dir.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  LlamaConfig c = builtin::SmallLlamaConfig();
  c.nbits_accuracy_level = accuracy_level;
  const std::string bytes = onnx::WriteModel(builtin::MakeLlamaModel(c, form));
  const Model model = Model::LoadFromBytes(bytes.data(), bytes.size());
  SessionOptions one;
  one.threads = 1;
  Session session(model, one);
  const std::vector<int64_t> prompt = {1, 17, 42, 99, 3};
  const int64_t hd = c.hidden / c.q_heads;

  // Prefill.
  const Feeds pre = MakeFeeds(c, form, prompt, {});
  std::vector<std::vector<float>> ref;
  std::string error;
  REQUIRE_MESSAGE(
      testing::RunOrtReference(ort_dir, bytes, pre, std::string("llama-") + tag, &ref, &error),
      error);
  REQUIRE(ref.size() == static_cast<size_t>(1 + 2 * c.layers));
  const auto ours = session.Run(std::map<std::string, Tensor>(pre.begin(), pre.end()));
  CheckClose(ours.at("logits"), ref[0], "prefill logits", tolerance);
  const int64_t next = ArgmaxLast(ref[0], c.vocab);

  // One decode step on ORT's cache, in both.
  std::vector<Tensor> cache;
  for (size_t k = 1; k < ref.size(); ++k) {
    cache.push_back(Floats({1, c.kv_heads, static_cast<int64_t>(prompt.size()), hd}, ref[k]));
  }
  const Feeds step = MakeFeeds(c, form, {next}, cache);
  REQUIRE_MESSAGE(
      testing::RunOrtReference(ort_dir, bytes, step, std::string("llama-") + tag, &ref, &error),
      error);
  const auto ours_step = session.Run(std::map<std::string, Tensor>(step.begin(), step.end()));
  CheckClose(ours_step.at("logits"), ref[0], "decode logits", tolerance);
  CheckClose(ours_step.at("present.1.value"), ref[4], "decode present.1.value", tolerance);
}

TEST_CASE("llama float32 (opset 23 Attention, RotaryEmbedding, RMSNormalization) vs onnxruntime") {
  CompareForm(LlamaForm::kFloat32, "f32");
}

TEST_CASE("llama int4 (DequantizeLinear block 32 -> MatMul) vs onnxruntime") {
  CompareForm(LlamaForm::kOnnxInt4, "int4");
}

TEST_CASE("llama com.microsoft (MatMulNBits, GroupQueryAttention) vs onnxruntime") {
  CompareForm(LlamaForm::kMsft, "msft");
}

// accuracy_level 4: both runtimes quantize A to int8 per block of 32 (scale max|a| / 127, round
// half to even), so the logits agree as closely as in float32 here; an A value computed a few
// ulps differently by the two may still round to the neighbouring int8 step, hence the looser
// bound.
TEST_CASE("llama com.microsoft with MatMulNBits accuracy_level 4 vs onnxruntime") {
  CompareForm(LlamaForm::kMsft, "msft-acc4", 4, 1e-3);
}

}  // namespace
}  // namespace simplecpp
