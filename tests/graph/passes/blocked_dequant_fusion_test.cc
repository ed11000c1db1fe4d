// Blocked DequantizeLinear -> MatMul fused into MatMulNBits (graph/passes/blocked_dequant_fusion.h):
// every weight dtype (int4, uint4, int8, uint8), with and without zero points, K a multiple of the
// block size or not, A of rank 1 and 3; the fused and the unfused model both against a double
// reference written here (|y - ref| <= 1e-5 * sum_k |a_k * w_k|), the fused plan running
// MatMulNBits and no float32 weights; the same with a block minimum added between them (ggml's
// Q4_1 spelling); a dequantized weight with a second reader stays unfused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "simplecpp/builder.h"

namespace simplecpp {
namespace {

struct Case {
  DType w_dtype;
  bool zero_point;
  int64_t k, n, block;
  Dims a_dims;  // last dim K
  bool block_min = false;  // Reshape -> Add(min per block) -> Reshape between DQ and MatMul
};

int Bits(DType t) { return t == DType::kInt4 || t == DType::kUInt4 ? 4 : 8; }
bool Signed(DType t) { return t == DType::kInt4 || t == DType::kInt8; }

// Code i of a tensor of 4- or 8-bit integers, as its integer value.
int CodeAt(const Tensor& t, int64_t i) {
  const auto* b = static_cast<const uint8_t*>(t.raw_data());
  if (Bits(t.dtype()) == 8) return Signed(t.dtype()) ? static_cast<int8_t>(b[i]) : b[i];
  const int nibble = (b[i / 2] >> (4 * (i % 2))) & 15;
  return Signed(t.dtype()) && nibble >= 8 ? nibble - 16 : nibble;
}

Tensor RandomCodes(DType dtype, Dims dims, std::mt19937& rng) {
  Tensor t(dtype, std::move(dims));
  auto* b = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.byte_size(); ++i) b[i] = static_cast<uint8_t>(rng());
  return t;
}

std::vector<std::string> OpTypes(Session& session, const std::map<std::string, Tensor>& feeds) {
  session.set_profiling(true);
  session.Run(feeds);
  std::vector<std::string> ops;
  for (const auto& t : session.last_profile()) ops.push_back(t.op_type);
  return ops;
}

bool Has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

void CheckCase(const Case& c, uint32_t seed) {
  CAPTURE(DTypeName(c.w_dtype));
  CAPTURE(c.zero_point);
  CAPTURE(c.k);
  CAPTURE(c.block);
  CAPTURE(c.a_dims.size());
  std::mt19937 rng(seed);
  const int64_t kb = (c.k + c.block - 1) / c.block;
  const Tensor w = RandomCodes(c.w_dtype, {c.k, c.n}, rng);
  const Tensor zp = RandomCodes(c.w_dtype, {kb, c.n}, rng);
  Tensor scale(DType::kFloat32, {kb, c.n});
  std::uniform_real_distribution<float> scale_dist(0.001f, 0.05f), a_dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < scale.num_elements(); ++i) scale.data<float>()[i] = scale_dist(rng);
  Tensor a(DType::kFloat32, c.a_dims);
  for (int64_t i = 0; i < a.num_elements(); ++i) a.data<float>()[i] = a_dist(rng);

  GraphBuilder b(21);
  const std::string ai = b.AddInput("a", DType::kFloat32, c.a_dims);
  std::vector<std::string> dq_inputs = {b.AddInitializer("w", w), b.AddInitializer("scale", scale)};
  if (c.zero_point) dq_inputs.push_back(b.AddInitializer("zp", zp));
  std::string wf = b.AddNode("DequantizeLinear", dq_inputs, {{"axis", 0}, {"block_size", c.block}});
  Tensor min(DType::kFloat32, {kb, 1, c.n});
  for (int64_t i = 0; i < min.num_elements(); ++i) min.data<float>()[i] = 0.25f * a_dist(rng);
  if (c.block_min) {
    auto shape = [&](const std::string& name, std::vector<int64_t> dims) {
      const int64_t rank = static_cast<int64_t>(dims.size());
      return b.AddInitializer(name, Tensor::FromVector<int64_t>(DType::kInt64, {rank}, dims));
    };
    const std::string blocks = b.AddNode("Reshape", {wf, shape("block_shape", {kb, c.block, c.n})});
    const std::string sum = b.AddNode("Add", {blocks, b.AddInitializer("min", min)});
    wf = b.AddNode("Reshape", {sum, shape("shape", {c.k, c.n})});
  }
  const std::string y = b.AddNode("MatMul", {ai, wf}, {}, NodeOptions{"", "mm", {"y"}});
  b.AddOutput(y);

  // Double reference on the dequantized weights.
  const int64_t m = a.num_elements() / c.k;
  std::vector<double> ref(static_cast<size_t>(m * c.n)), magnitude(ref.size());
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < c.n; ++j) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const int64_t blk = k / c.block;
        const int z = c.zero_point ? CodeAt(zp, blk * c.n + j) : 0;
        float wf32 = static_cast<float>(CodeAt(w, k * c.n + j) - z) * scale.data<float>()[blk * c.n + j];
        if (c.block_min) wf32 += min.data<float>()[blk * c.n + j];
        const double wv = static_cast<double>(wf32);
        acc += static_cast<double>(a.data<float>()[r * c.k + k]) * wv;
        mag += std::fabs(static_cast<double>(a.data<float>()[r * c.k + k]) * wv);
      }
      ref[static_cast<size_t>(r * c.n + j)] = acc;
      magnitude[static_cast<size_t>(r * c.n + j)] = mag;
    }
  }
  for (bool fuse : {true, false}) {
    CAPTURE(fuse);
    LoadOptions options;
    options.fuse_quantized = fuse;
    Session session(b.Build(options));
    const Tensor got = session.Run({{"a", a}}).at("y");
    Dims want_dims = c.a_dims;
    want_dims.back() = c.n;
    REQUIRE(got.dims() == want_dims);
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double err = std::fabs(got.data<float>()[i] - ref[i]);
      CHECK(err <= 1e-5 * magnitude[i] + 1e-30);
      worst = std::max(worst, err / (magnitude[i] + 1e-30));
    }
    const std::vector<std::string> ops = OpTypes(session, {{"a", a}});
    CHECK(Has(ops, "MatMulNBits") == fuse);
    CHECK_FALSE(Has(ops, "DequantizeLinear"));  // folded at load when not fused
    CHECK_FALSE(Has(ops, "Add"));
  }
}

TEST_CASE("blocked DequantizeLinear -> MatMul runs as MatMulNBits, within float32 rounding") {
  uint32_t seed = 11;
  for (DType dtype : {DType::kInt4, DType::kUInt4, DType::kInt8, DType::kUInt8}) {
    for (bool zero_point : {false, true}) {
      CheckCase({dtype, zero_point, 40, 7, 16, {2, 3, 40}}, seed++);   // a partial last block
      CheckCase({dtype, zero_point, 64, 5, 32, {64}}, seed++);         // A of rank 1
      CheckCase({dtype, zero_point, 96, 9, 32, {1, 96}}, seed++);      // one row: the GEMV path
    }
  }
}

TEST_CASE("blocked DequantizeLinear plus a block minimum (ggml's Q4_1 spelling) runs as MatMulNBits") {
  uint32_t seed = 41;
  for (DType dtype : {DType::kUInt4, DType::kInt4, DType::kUInt8}) {
    for (bool zero_point : {false, true}) {
      CheckCase({dtype, zero_point, 64, 7, 16, {2, 3, 64}, true}, seed++);
      CheckCase({dtype, zero_point, 96, 9, 32, {1, 96}, true}, seed++);   // the GEMV path
      CheckCase({dtype, zero_point, 64, 70, 32, {20, 64}, true}, seed++); // via the float GEMM
    }
  }
}

TEST_CASE("blocked DequantizeLinear with a second reader is not fused") {
  std::mt19937 rng(5);
  GraphBuilder b(21);
  const std::string a = b.AddInput("a", DType::kFloat32, {2, 32});
  Tensor scale(DType::kFloat32, {1, 3});
  for (int i = 0; i < 3; ++i) scale.data<float>()[i] = 0.01f * static_cast<float>(i + 1);
  const std::string wf = b.AddNode("DequantizeLinear", {b.AddInitializer("w", RandomCodes(DType::kInt4, {32, 3}, rng)),
                                                        b.AddInitializer("scale", scale)},
                                   {{"axis", 0}, {"block_size", 32}});
  b.AddOutput(b.AddNode("MatMul", {a, wf}));
  b.AddOutput(wf);  // the dequantized weights are also an output
  Tensor x(DType::kFloat32, {2, 32});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = static_cast<float>(i % 5) - 2.0f;
  Session fused(b.Build());
  LoadOptions plain;
  plain.fuse_quantized = false;
  Session unfused(b.Build(plain));
  const auto f = fused.Run({{"a", x}});
  const auto u = unfused.Run({{"a", x}});
  for (const auto& [name, t] : u) CHECK(t.BitwiseEquals(f.at(name)));
  CHECK_FALSE(Has(OpTypes(fused, {{"a", x}}), "MatMulNBits"));
}

}  // namespace
}  // namespace simplecpp
