// The LLaMA-style built-in decoder (simplecpp/api/builtin_llama.h) at the small test config, in
// its three forms: only registered ops, an ONNX round trip, runs through the public API; a KV-cache
// decode gives the logits of the whole sequence run at once; the int4 DequantizeLinear -> MatMul
// form loads as MatMulNBits and agrees with the com.microsoft form (same dequantized weights),
// greedy tokens included.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/registry.h"
#include "simplecpp/api/builtin_llama.h"
#include "simplecpp/api/builtin_models.h"
#include "simplecpp/onnx/model_reader.h"
#include "simplecpp/onnx/model_writer.h"
#include "simplecpp/simplecpp.h"

namespace simplecpp {
namespace {

using builtin::LlamaConfig;
using builtin::LlamaForm;

const LlamaForm kForms[] = {LlamaForm::kFloat32, LlamaForm::kOnnxInt4, LlamaForm::kMsft};

const char* FormName(LlamaForm f) {
  return f == LlamaForm::kFloat32 ? "float32" : f == LlamaForm::kOnnxInt4 ? "onnx-int4" : "msft";
}

Model LoadSmall(LlamaForm form) {
  const std::string bytes =
      onnx::WriteModel(builtin::MakeLlamaModel(builtin::SmallLlamaConfig(), form));
  return Model::LoadFromBytes(bytes.data(), bytes.size());
}

// Runs the decoder step by step, the KV cache moved from present to past between runs.
class StepDecoder {
 public:
  StepDecoder(const Model& model, LlamaForm form, int threads = 1)
      : session_(model, Options(threads)), msft_(form == LlamaForm::kMsft) {
    const LlamaConfig c = builtin::SmallLlamaConfig();
    layers_ = c.layers;
    for (int64_t i = 0; i < c.layers; ++i) {
      for (const char* kv : {"key", "value"}) {
        feeds_[Past(i, kv)] = Tensor(DType::kFloat32, {1, c.kv_heads, 0, c.hidden / c.q_heads});
      }
    }
  }

  // Logits [1, ids.size(), vocab] of the next run.
  Tensor Step(const std::vector<int64_t>& ids) {
    const int64_t past = feeds_.at(Past(0, "key")).dim(2);
    const int64_t seq = static_cast<int64_t>(ids.size());
    feeds_["input_ids"] = Row(ids);
    if (msft_) feeds_["attention_mask"] = Row(std::vector<int64_t>(past + seq, 1));
    std::map<std::string, Tensor> out = session_.Run(feeds_);
    for (int64_t i = 0; i < layers_; ++i) {
      for (const char* kv : {"key", "value"}) {
        Tensor& present = out.at("present." + std::to_string(i) + "." + kv);
        REQUIRE(present.dim(2) == past + seq);
        feeds_[Past(i, kv)] = std::move(present);
      }
    }
    return out.at("logits");
  }

  Session& session() { return session_; }

 private:
  static SessionOptions Options(int threads) {
    SessionOptions o;
    o.threads = threads;
    return o;
  }
  static std::string Past(int64_t i, const char* kv) {
    return "past_key_values." + std::to_string(i) + "." + kv;
  }
  static Tensor Row(const std::vector<int64_t>& v) {
    Tensor t(DType::kInt64, {1, static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  }

  Session session_;
  bool msft_;
  int64_t layers_ = 0;
  std::map<std::string, Tensor> feeds_;
};

int64_t ArgmaxLastRow(const Tensor& logits) {
  const int64_t vocab = logits.dim(2);
  const float* row = logits.data<float>() + (logits.dim(1) - 1) * vocab;
  return std::max_element(row, row + vocab) - row;
}

// max |a - b| over row `ra` of a and row `rb` of b (logits [1, rows, vocab]).
double RowDiff(const Tensor& a, int64_t ra, const Tensor& b, int64_t rb) {
  const int64_t vocab = a.dim(2);
  REQUIRE(b.dim(2) == vocab);
  double d = 0;
  for (int64_t j = 0; j < vocab; ++j) {
    d = std::max(d, std::fabs(static_cast<double>(a.data<float>()[ra * vocab + j]) -
                              b.data<float>()[rb * vocab + j]));
  }
  return d;
}

double MaxAbs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i)
    m = std::max(m, std::fabs(static_cast<double>(t.data<float>()[i])));
  return m;
}

const std::vector<int64_t> kPrompt = {1, 17, 42, 99, 3, 250, 7};

TEST_CASE("llama builtin: registered ops, ONNX round trip, deterministic") {
  for (LlamaForm form : kForms) {
    CAPTURE(FormName(form));
    const graph::Model m = builtin::MakeLlamaModel(builtin::SmallLlamaConfig(), form);
    for (const graph::Node& n : m.graph.nodes) {
      CAPTURE(n.op_type);
      CHECK(graph::OpRegistry::Global().Find(n.domain, n.op_type, m.OpsetVersion(n.domain)) !=
            nullptr);
    }
    const std::string bytes = onnx::WriteModel(m);
    CHECK(bytes == onnx::WriteModel(builtin::MakeLlamaModel(builtin::SmallLlamaConfig(), form)));
    const graph::Model back =
        onnx::ReadModel(bytes.data(), bytes.size(), onnx::ReadOptions{}, nullptr);
    CHECK(back.graph.nodes.size() == m.graph.nodes.size());
    CHECK(back.graph.initializers.size() == m.graph.initializers.size());
  }
  for (const char* name : {"llama-tiny", "llama-tiny-int4", "llama-tiny-msft"}) {
    CHECK(builtin::MakeBuiltinModel(name).graph.nodes.size() > 0);
  }
  LlamaConfig bad = builtin::SmallLlamaConfig();
  bad.kv_heads = 3;
  CHECK_THROWS_AS(builtin::MakeLlamaModel(bad, LlamaForm::kFloat32), Error);
  bad = builtin::SmallLlamaConfig();
  bad.ffn = 100;
  CHECK_NOTHROW(builtin::MakeLlamaModel(bad, LlamaForm::kFloat32));
  CHECK_THROWS_AS(builtin::MakeLlamaModel(bad, LlamaForm::kMsft), Error);
}

TEST_CASE("llama builtin: the interface follows onnxruntime-genai's names") {
  for (LlamaForm form : kForms) {
    CAPTURE(FormName(form));
    const Model model = LoadSmall(form);
    const size_t extra = form == LlamaForm::kMsft ? 1 : 0;
    REQUIRE(model.inputs().size() == 1 + extra + 4);
    CHECK(model.inputs()[0].name == "input_ids");
    if (extra) CHECK(model.inputs()[1].name == "attention_mask");
    CHECK(model.inputs()[1 + extra].name == "past_key_values.0.key");
    CHECK(model.inputs()[1 + extra].dims == std::vector<int64_t>{-1, 2, -1, 32});
    REQUIRE(model.outputs().size() == 5);
    CHECK(model.outputs()[0].name == "logits");
    CHECK(model.outputs()[0].dims == std::vector<int64_t>{-1, -1, 256});
    CHECK(model.outputs()[4].name == "present.1.value");
  }
}

TEST_CASE("llama builtin: KV-cache decode gives the logits of the full sequence, every form") {
  for (LlamaForm form : kForms) {
    CAPTURE(FormName(form));
    const Model model = LoadSmall(form);
    StepDecoder full(model, form);
    const Tensor all = full.Step(kPrompt);
    const int64_t n = static_cast<int64_t>(kPrompt.size());
    REQUIRE(all.dims() == Dims{1, n, 256});
    for (int64_t i = 0; i < all.num_elements(); ++i) REQUIRE(std::isfinite(all.data<float>()[i]));
    const double scale = std::max(1.0, MaxAbs(all));
    // Prefill of the first 4 tokens, then one token per run.
    StepDecoder step(model, form);
    const Tensor pre = step.Step({kPrompt.begin(), kPrompt.begin() + 4});
    double worst = 0;
    for (int64_t r = 0; r < 4; ++r) worst = std::max(worst, RowDiff(pre, r, all, r));
    for (int64_t r = 4; r < n; ++r) {
      const Tensor one = step.Step({kPrompt[r]});
      REQUIRE(one.dims() == Dims{1, 1, 256});
      worst = std::max(worst, RowDiff(one, 0, all, r));
    }
    MESSAGE(std::string(FormName(form))
            << ": max |cached - full| = " << worst << " (max |logit| " << scale << ")");
    CHECK(worst <= 1e-5 * scale);
  }
}

TEST_CASE("llama builtin: int4 DequantizeLinear -> MatMul runs as MatMulNBits") {
  const Model model = LoadSmall(LlamaForm::kOnnxInt4);
  StepDecoder d(model, LlamaForm::kOnnxInt4);
  d.session().set_profiling(true);
  d.Step(kPrompt);
  int nbits = 0, dq = 0, matmul = 0;
  for (const auto& t : d.session().last_profile()) {
    nbits += t.op_type == "MatMulNBits";
    dq += t.op_type == "DequantizeLinear";
    matmul += t.op_type == "MatMul";
  }
  CHECK(nbits == 2 * 7 + 1);  // q, k, v, o, gate, up, down per layer, and the lm_head
  CHECK(dq == 0);
  CHECK(matmul == 0);
}

TEST_CASE("llama builtin: the int4 and com.microsoft forms agree, greedy tokens included") {
  const Model int4 = LoadSmall(LlamaForm::kOnnxInt4);
  const Model msft = LoadSmall(LlamaForm::kMsft);
  StepDecoder a(int4, LlamaForm::kOnnxInt4), b(msft, LlamaForm::kMsft);
  Tensor la = a.Step(kPrompt), lb = b.Step(kPrompt);
  const double scale = std::max(1.0, MaxAbs(la));
  double worst = 0;
  for (int64_t r = 0; r < la.dim(1); ++r) worst = std::max(worst, RowDiff(la, r, lb, r));
  std::vector<int64_t> ta, tb;
  for (int step = 0; step < 6; ++step) {
    ta.push_back(ArgmaxLastRow(la));
    tb.push_back(ArgmaxLastRow(lb));
    la = a.Step({ta.back()});
    lb = b.Step({tb.back()});
    worst = std::max(worst, RowDiff(la, 0, lb, 0));
  }
  MESSAGE("max |int4 - msft| = " << worst << " (max |logit| " << scale << ")");
  CHECK(worst <= 1e-4 * scale);
  CHECK(ta == tb);
  // Quantization moves the float32 model's logits, but not far.
  StepDecoder f(LoadSmall(LlamaForm::kFloat32), LlamaForm::kFloat32);
  const Tensor lf = f.Step(kPrompt);
  StepDecoder a2(int4, LlamaForm::kOnnxInt4);
  const Tensor la2 = a2.Step(kPrompt);
  MESSAGE("max |float32 - int4| (first row) = " << RowDiff(lf, 0, la2, 0));
  CHECK(RowDiff(lf, 0, la2, 0) > 0.0);
  CHECK(RowDiff(lf, 0, la2, 0) < 0.5 * scale);
}

TEST_CASE("llama builtin: thread count does not change the logits") {
  for (LlamaForm form : kForms) {
    CAPTURE(FormName(form));
    const Model model = LoadSmall(form);
    StepDecoder one(model, form, 1), two(model, form, 2);
    const Tensor a = one.Step(kPrompt), b = two.Step(kPrompt);
    CHECK(RowDiff(a, a.dim(1) - 1, b, b.dim(1) - 1) <= 1e-5 * std::max(1.0, MaxAbs(a)));
  }
}

}  // namespace
}  // namespace simplecpp
