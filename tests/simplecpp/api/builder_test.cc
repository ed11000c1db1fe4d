// simplecpp::GraphBuilder and RunOp (simplecpp/builder.h): inference as nodes are added, named
// errors that leave the builder unchanged, Build() against Model::Load of the exported bytes, and
// results against scalar references written here.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simplecpp/builder.h"

namespace simplecpp {
namespace {

Tensor Ramp(Dims dims, float start, float step) {
  Tensor t(DType::kFloat32, std::move(dims));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 17);
  return t;
}

template <typename T>
Tensor Make(DType dtype, Dims dims, const std::vector<T>& values) {
  return Tensor::FromVector<T>(dtype, std::move(dims), values);
}

std::string ErrorOf(const std::function<void()>& fn, ErrorCode* code = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

// ConvInteger reference: NCHW uint8 x, int8 w with one zero point per output channel, int32 out.
std::vector<int32_t> ConvIntegerRef(const Tensor& x, uint8_t x_zp, const Tensor& w,
                                    const std::vector<int8_t>& w_zp, int64_t pad, int64_t stride,
                                    Dims* out_dims) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t m = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  const int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (wd + 2 * pad - kw) / stride + 1;
  *out_dims = {n, m, oh, ow};
  std::vector<int32_t> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int32_t acc = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t yi = i * stride - pad + a, xj = j * stride - pad + e;
                // Padding holds the zero point: it contributes nothing.
                const int32_t xv = (yi < 0 || yi >= h || xj < 0 || xj >= wd)
                                       ? 0
                                       : x.data<uint8_t>()[((b * c + ci) * h + yi) * wd + xj] - x_zp;
                acc += xv * (w.data<int8_t>()[((o * c + ci) * kh + a) * kw + e] - w_zp[o]);
              }
          y.push_back(acc);
        }
  return y;
}

TEST_CASE("GraphBuilder: dtypes and dims as nodes are added, symbolic dims keep their names") {
  GraphBuilder b(17);
  const std::string x = b.AddInput("x", DType::kFloat32, {-1, 3, 8, 8}, {"batch", "", "", ""});
  const std::string w = b.AddInitializer("w", Ramp({4, 3, 3, 3}, -0.5f, 0.07f));
  const std::string y = b.AddNode("Conv", {x, w}, {{"pads", Ints({1, 1, 1, 1})}});
  ValueDescription d = b.Describe(y);
  CHECK(d.dtype == DType::kFloat32);
  REQUIRE(d.has_shape);
  CHECK(d.dims == Dims{-1, 4, 8, 8});
  CHECK(d.dim_params[0] == "batch");

  const std::string pooled = b.AddNode("MaxPool", {y}, {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}});
  CHECK(b.Describe(pooled).dims == Dims{-1, 4, 4, 4});
  CHECK(b.Describe(pooled).dim_params[0] == "batch");
  const std::string flat = b.AddNode("Flatten", {pooled}, {{"axis", 1}});
  CHECK(b.Describe(flat).dims == Dims{-1, 64});

  // A stride that changes the symbolic dim: the result is unknown, not a wrong number.
  const std::string h = b.AddInput("h", DType::kFloat32, {1, 3, -1, 8}, {"", "", "height", ""});
  const std::string strided = b.AddNode("Conv", {h, w}, {{"strides", Ints({2, 2})}});
  d = b.Describe(strided);
  CHECK(d.dims == Dims{1, 4, -1, 3});
  CHECK(d.dim_params[2].empty());

  // Constants fold as they are added: Shape of an initializer is known with its value.
  const std::string shape = b.AddNode("Shape", {w});
  CHECK(b.Describe(shape).dtype == DType::kInt64);
  CHECK(b.Describe(shape).dims == Dims{4});
  const std::string reshaped = b.AddNode("Reshape", {flat, b.AddInitializer("to", Make<int64_t>(DType::kInt64, {2}, {-1, 16}))});
  CHECK(b.Describe(reshaped).dims == Dims{-1, 16});
}

TEST_CASE("GraphBuilder: Build() runs like Model::Load of the exported bytes") {
  GraphBuilder b(13);
  const std::string x = b.AddInput("x", DType::kFloat32, {2, 3});
  const std::string w = b.AddInitializer("w", Ramp({3, 4}, 0.25f, -0.03f));
  const std::string bias = b.AddInitializer("bias", Ramp({4}, 0.1f, 0.2f));
  const std::string mm = b.AddNode("MatMul", {x, w});
  const std::string sum = b.AddNode("Add", {mm, bias});
  const std::string y = b.AddNode("Relu", {sum}, {}, NodeOptions{"", "relu", {"y"}});
  CHECK(y == "y");
  b.AddOutput(y);
  Model built = b.Build();
  REQUIRE(built.inputs().size() == 1);
  CHECK(built.outputs()[0].dims == Dims{2, 4});

  const std::string bytes = b.ToOnnx();
  Model loaded = Model::LoadFromBytes(bytes.data(), bytes.size());
  const Tensor input = Ramp({2, 3}, -1.0f, 0.3f);
  const Tensor a = Session(built).Run({{"x", input}}).at("y");
  const Tensor c = Session(loaded).Run({{"x", input}}).at("y");
  CHECK(a.BitwiseEquals(c));
  // Scalar reference.
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < 3; ++k) acc += input.data<float>()[i * 3 + k] * Ramp({3, 4}, 0.25f, -0.03f).data<float>()[k * 4 + j];
      acc += Ramp({4}, 0.1f, 0.2f).data<float>()[j];
      CHECK(a.data<float>()[i * 4 + j] == doctest::Approx(acc > 0 ? acc : 0.0f).epsilon(1e-6));
    }
  }
}

TEST_CASE("GraphBuilder: ConvInteger with per-channel weight zero points, built, run and exported") {
  const Tensor x = [] {
    Tensor t(DType::kUInt8, {1, 2, 5, 6});
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    return t;
  }();
  Tensor w(DType::kInt8, {3, 2, 3, 3});
  for (int64_t i = 0; i < w.num_elements(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 255 - 127);
  const std::vector<int8_t> w_zp = {-3, 0, 5};
  GraphBuilder b(13);
  const std::string xi = b.AddInput("x", DType::kUInt8, {1, 2, 5, 6});
  const std::string wi = b.AddInitializerBorrowed("w", DType::kInt8, w.dims(), w.raw_data());
  const std::string xz = b.AddInitializer("x_zp", Make<uint8_t>(DType::kUInt8, {}, {131}));
  const std::string wz = b.AddInitializer("w_zp", Make<int8_t>(DType::kInt8, {3}, w_zp));
  const std::string y = b.AddNode("ConvInteger", {xi, wi, xz, wz}, {{"pads", Ints({1, 1, 1, 1})}, {"strides", Ints({2, 2})}});
  CHECK(b.Describe(y).dtype == DType::kInt32);
  CHECK(b.Describe(y).dims == Dims{1, 3, 3, 3});
  b.AddOutput(y);
  Dims ref_dims;
  const std::vector<int32_t> ref = ConvIntegerRef(x, 131, w, w_zp, 1, 2, &ref_dims);
  const Tensor got = Session(b.Build()).Run({{"x", x}}).at(y);
  REQUIRE(got.dims() == ref_dims);
  CHECK(std::vector<int32_t>(got.data<int32_t>(), got.data<int32_t>() + got.num_elements()) == ref);
  const std::string bytes = b.ToOnnx();
  const Tensor again = Session(Model::LoadFromBytes(bytes.data(), bytes.size())).Run({{"x", x}}).at(y);
  CHECK(again.BitwiseEquals(got));
  // The eager form of the same node.
  const std::vector<Tensor> eager = RunOp("", "ConvInteger", 13, {x, w, Make<uint8_t>(DType::kUInt8, {}, {131}), Make<int8_t>(DType::kInt8, {3}, w_zp)},
                                          {{"pads", Ints({1, 1, 1, 1})}, {"strides", Ints({2, 2})}});
  REQUIRE(eager.size() == 1);
  CHECK(eager[0].BitwiseEquals(got));
}

TEST_CASE("GraphBuilder: wrong calls are named errors and change nothing") {
  GraphBuilder b(17);
  const std::string x = b.AddInput("x", DType::kFloat32, {2, 3});
  const std::string i = b.AddInput("i", DType::kInt64, {2, 3});
  ErrorCode code{};
  std::string msg = ErrorOf([&] { b.AddNode("Frobnicate", {x}, {}, NodeOptions{"", "f1", {}}); }, &code);
  CHECK(code == ErrorCode::kUnsupported);
  CHECK(msg.find("Frobnicate") != std::string::npos);
  CHECK(msg.find("f1") != std::string::npos);

  msg = ErrorOf([&] { b.AddNode("Softmax", {x}, {{"axis", 1.5f}}, NodeOptions{"", "soft", {}}); }, &code);
  CHECK(msg.find("soft") != std::string::npos);
  CHECK(msg.find("axis") != std::string::npos);

  msg = ErrorOf([&] { b.AddNode("Relu", {"nowhere"}, {}, NodeOptions{"", "r", {}}); }, &code);
  CHECK(code == ErrorCode::kInvalidModel);
  CHECK(msg.find("nowhere") != std::string::npos);

  msg = ErrorOf([&] { b.AddNode("Add", {x, i}, {}, NodeOptions{"", "mixed", {}}); }, &code);
  CHECK(msg.find("mixed") != std::string::npos);
  CHECK(msg.find("int64") != std::string::npos);

  const std::string w = b.AddInitializer("w", Ramp({4, 5}, 0.0f, 1.0f));
  msg = ErrorOf([&] { b.AddNode("MatMul", {x, w}, {}, NodeOptions{"", "mm", {"mm_out"}}); }, &code);
  CHECK(msg.find("mm") != std::string::npos);
  CHECK_FALSE(b.HasValue("mm_out"));
  // The same names are free again after the failed call.
  const std::string ok = b.AddNode("Relu", {x}, {}, NodeOptions{"", "mm", {"mm_out"}});
  CHECK(ok == "mm_out");

  CHECK_FALSE(ErrorOf([&] { b.AddInput("x", DType::kFloat32, {1}); }).empty());
  CHECK_FALSE(ErrorOf([&] { b.AddOutput("missing"); }).empty());
  CHECK_FALSE(ErrorOf([&] { (void)b.Build(); }).empty());  // no outputs yet
  CHECK_FALSE(ErrorOf([&] { b.AddNode("Relu", {x}, {}, 0); }).empty());
  CHECK_FALSE(ErrorOf([&] { b.AddNode("Relu", {x}, {{"a", 1}, {"a", 2}}); }).empty());
}

TEST_CASE("GraphBuilder: an If whose branches read an outer value") {
  GraphBuilder b(17);
  const std::string cond = b.AddInput("cond", DType::kBool, {});
  const std::string x = b.AddInput("x", DType::kFloat32, {3});
  GraphBuilder then_b = b.NewSubgraph("then");
  then_b.AddOutput(then_b.AddNode("Neg", {x}));
  GraphBuilder else_b = b.NewSubgraph("else");
  else_b.AddOutput(else_b.AddNode("Abs", {x}));
  const std::string y = b.AddNode("If", {cond}, {{"then_branch", then_b.BuildSubgraph()}, {"else_branch", else_b.BuildSubgraph()}});
  CHECK(b.Describe(y).dtype == DType::kFloat32);
  b.AddOutput(y);
  Session s(b.Build());
  const Tensor input = Make<float>(DType::kFloat32, {3}, {-1.0f, 2.0f, -3.0f});
  const Tensor t = s.Run({{"cond", Make<bool>(DType::kBool, {}, {true})}, {"x", input}}).at(y);
  const Tensor f = s.Run({{"cond", Make<bool>(DType::kBool, {}, {false})}, {"x", input}}).at(y);
  CHECK(t.data<float>()[0] == 1.0f);
  CHECK(t.data<float>()[1] == -2.0f);
  CHECK(f.data<float>()[2] == 3.0f);
  const std::string bytes = b.ToOnnx();
  CHECK_NOTHROW(Model::LoadFromBytes(bytes.data(), bytes.size()));
}

TEST_CASE("RunOp: results, several outputs, omitted inputs, shapes that change, errors") {
  const Tensor x = Make<float>(DType::kFloat32, {2, 3}, {-1, 2, -3, 4, -5, 6});
  std::vector<Tensor> r = RunOp("", "Relu", 14, {x});
  REQUIRE(r.size() == 1);
  CHECK(r[0].data<float>()[0] == 0.0f);
  CHECK(r[0].data<float>()[1] == 2.0f);
  // Same signature, another shape: the cached plan prepares the new shape.
  r = RunOp("", "Relu", 14, {Make<float>(DType::kFloat32, {4}, {-1, 1, -2, 2})});
  CHECK(r[0].dims() == Dims{4});
  CHECK(r[0].data<float>()[3] == 2.0f);

  r = RunOp("", "Split", 13, {x}, {{"axis", 1}}, 3);
  REQUIRE(r.size() == 3);
  CHECK(r[2].dims() == Dims{2, 1});
  CHECK(r[2].data<float>()[1] == 6.0f);

  // Clip with min omitted and max given.
  r = RunOp("", "Clip", 13, {x, Tensor(), Make<float>(DType::kFloat32, {}, {1.5f})});
  CHECK(r[0].data<float>()[1] == 1.5f);
  CHECK(r[0].data<float>()[2] == -3.0f);

  // MatMulInteger with per-column b zero points against the scalar reference.
  const Tensor a = Make<uint8_t>(DType::kUInt8, {2, 3}, {200, 3, 77, 0, 255, 128});
  const Tensor bm = Make<int8_t>(DType::kInt8, {3, 2}, {-128, 127, 5, -7, 64, 0});
  const std::vector<int8_t> bz = {3, -1};
  r = RunOp("", "MatMulInteger", 10, {a, bm, Make<uint8_t>(DType::kUInt8, {}, {129}), Make<int8_t>(DType::kInt8, {2}, bz)});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      int32_t acc = 0;
      for (int64_t k = 0; k < 3; ++k) acc += (a.data<uint8_t>()[i * 3 + k] - 129) * (bm.data<int8_t>()[k * 2 + j] - bz[j]);
      CHECK(r[0].data<int32_t>()[i * 2 + j] == acc);
    }
  }

  ErrorCode code{};
  const std::string msg = ErrorOf([&] { RunOp("", "NoSuchOp", 13, {x}); }, &code);
  CHECK(code == ErrorCode::kUnsupported);
  CHECK(msg.find("NoSuchOp") != std::string::npos);
  CHECK_FALSE(ErrorOf([&] { RunOp("", "MatMul", 13, {x, x}); }).empty());
}

}  // namespace
}  // namespace simplecpp
