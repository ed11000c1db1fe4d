// The spatial attributes every sliding-window op reads through graph/ops/window_attributes.h:
// the same refusals, with the node and op named, from each op; and the SAME_UPPER / SAME_LOWER
// padding split against a direct computation (the odd padding pixel at the end, then at the
// beginning) through the shapes and values Conv, MaxPool and Col2Im produce.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "simplecpp/builder.h"

namespace simplecpp {
namespace {

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Tensor Ones(const Dims& dims) {
  Tensor t(DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = 1.0f;
  return t;
}

Tensor Ramp(const Dims& dims) {
  Tensor t(DType::kFloat32, dims);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST_CASE("window attributes: every op refuses the same bad values, naming node and op") {
  struct Op {
    const char* type;
    std::vector<int64_t> w_dims;  // empty: no weight input
  };
  const Op ops[] = {{"Conv", {2, 3, 3, 3}}, {"ConvTranspose", {3, 2, 3, 3}}, {"MaxPool", {}},
                    {"AveragePool", {}}};
  for (const Op& op : ops) {
    CAPTURE(op.type);
    GraphBuilder b(17);
    const std::string x = b.AddInput("x", DType::kFloat32, {1, 3, 8, 8});
    std::vector<std::string> inputs = {x};
    if (!op.w_dims.empty()) inputs.push_back(b.AddInitializer("w", Ones(op.w_dims)));
    const std::vector<int64_t> k = {3, 3};
    auto add = [&](std::vector<std::pair<std::string, AttributeValue>> attrs) {
      attrs.emplace_back("kernel_shape", k);
      b.AddNode(op.type, inputs, attrs, NodeOptions{"", "node7", {}});
    };
    std::string msg = ErrorOf([&] { add({{"auto_pad", std::string("SAME")}}); });
    CHECK(msg.find("node7") != std::string::npos);
    CHECK(msg.find(op.type) != std::string::npos);
    CHECK(msg.find("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID") != std::string::npos);
    msg = ErrorOf([&] { add({{"auto_pad", std::string("SAME_UPPER")}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}); });
    CHECK(msg.find("cannot be combined with auto_pad SAME_UPPER") != std::string::npos);
    msg = ErrorOf([&] { add({{"strides", std::vector<int64_t>{1, 0}}}); });
    CHECK(msg.find("strides must be >= 1") != std::string::npos);
    msg = ErrorOf([&] { add({{"pads", std::vector<int64_t>{1, 1, 1}}}); });
    CHECK(msg.find("pads must have 2 values per spatial dim") != std::string::npos);
    msg = ErrorOf([&] { add({{"dilations", std::vector<int64_t>{1, 1, 1}}}); });
    CHECK(msg.find("dilations") != std::string::npos);
  }
}

// Output size and the begin padding of one dim, straight from the operator text.
void SameSplit(int64_t in, int64_t k, int64_t s, bool upper, int64_t* out, int64_t* begin) {
  *out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>(0, (*out - 1) * s + k - in);
  *begin = upper ? total / 2 : total - total / 2;
}

TEST_CASE("window attributes: SAME_UPPER and SAME_LOWER put the odd padding pixel at the end and at the beginning") {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    for (int64_t in : {5, 6, 7}) {
      for (int64_t s : {1, 2, 3}) {
        CAPTURE(mode);
        CAPTURE(in);
        CAPTURE(s);
        const bool upper = std::string(mode) == "SAME_UPPER";
        int64_t out = 0, begin = 0;
        SameSplit(in, 2, s, upper, &out, &begin);
        // A 1-D Conv with kernel [1, 0] picks x[o*s - begin] (0 in the padding).
        GraphBuilder b(17);
        const std::string x = b.AddInput("x", DType::kFloat32, {1, 1, in});
        Tensor w(DType::kFloat32, {1, 1, 2});
        w.data<float>()[0] = 1.0f;
        w.data<float>()[1] = 0.0f;
        b.AddOutput(b.AddNode("Conv", {x, b.AddInitializer("w", w)},
                              {{"auto_pad", std::string(mode)}, {"strides", std::vector<int64_t>{s}}},
                              NodeOptions{"", "conv", {"y"}}));
        const Tensor xt = Ramp({1, 1, in});
        const Tensor y = Session(b.Build()).Run({{"x", Tensor(xt)}}).at("y");
        REQUIRE(y.dims() == Dims{1, 1, out});
        for (int64_t o = 0; o < out; ++o) {
          const int64_t pos = o * s - begin;
          const float want = pos >= 0 && pos < in ? static_cast<float>(pos) : 0.0f;
          CHECK(y.data<float>()[o] == want);
        }
        // MaxPool with the same attributes has the same output size.
        GraphBuilder p(17);
        const std::string px = p.AddInput("x", DType::kFloat32, {1, 1, in});
        p.AddOutput(p.AddNode("MaxPool", {px},
                              {{"auto_pad", std::string(mode)}, {"kernel_shape", std::vector<int64_t>{2}},
                               {"strides", std::vector<int64_t>{s}}},
                              NodeOptions{"", "pool", {"y"}}));
        CHECK(Session(p.Build()).Run({{"x", Tensor(xt)}}).at("y").dims() == Dims{1, 1, out});
      }
    }
  }
}

TEST_CASE("window attributes: QLinearAveragePool refuses dilations, Col2Im checks ranks") {
  GraphBuilder b(17);
  b.ImportOpset("com.microsoft", 1);
  const std::string x = b.AddInput("x", DType::kUInt8, {1, 1, 4, 4});
  const std::string sc = b.AddInitializer("s", Tensor::FromVector<float>(DType::kFloat32, {}, {0.5f}));
  const std::string zp = b.AddInitializer("z", Tensor::FromVector<uint8_t>(DType::kUInt8, {}, {3}));
  const std::string msg = ErrorOf([&] {
    b.AddNode("QLinearAveragePool", {x, sc, zp, sc, zp},
              {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}},
              NodeOptions{"com.microsoft", "qpool", {}});
  });
  CHECK(msg.find("qpool") != std::string::npos);
  CHECK(msg.find("dilations") != std::string::npos);

  GraphBuilder c(18);
  const std::string cx = c.AddInput("x", DType::kFloat32, {1, 4, 9});
  const std::string image = c.AddInitializer("image", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {4, 4}));
  const std::string block = c.AddInitializer("block", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {2, 2}));
  const std::string cmsg = ErrorOf([&] {
    c.AddNode("Col2Im", {cx, image, block}, {{"strides", std::vector<int64_t>{1, 1, 1}}},
              NodeOptions{"", "col2im", {}});
  });
  CHECK(cmsg.find("col2im") != std::string::npos);
  CHECK(cmsg.find("strides") != std::string::npos);
}

}  // namespace
}  // namespace simplecpp
