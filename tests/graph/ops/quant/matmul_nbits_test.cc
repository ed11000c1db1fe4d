// Tests for com.microsoft MatMulNBits (graph/ops/quant/matmul_nbits.cc) through the executor: float32
// against a float64 reference written from the operator's definition (4 and 8 bits, zero points
// absent / packed / float, bias, 3-D A, constant and run-time weights, several threads),
// float16 / bfloat16 against the float32 op, accuracy_level 4 (int8 A) against the kernel and
// where it does not apply, and the Prepare errors naming node and op.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "graph/op_test_util.h"
#include "graph/ops/float16_compare.h"
#include "kernels/quant/matmul_nbits_q8.h"
#include "simplecpp/error.h"

namespace simplecpp::testing {
namespace {

RunNodeOptions Ms(std::vector<int> constant_inputs = {}, int threads = 1) {
  RunNodeOptions o;
  o.opset = 1;
  o.domain = "com.microsoft";
  o.constant_inputs = std::move(constant_inputs);
  o.threads = threads;
  return o;
}

Tensor U8(Dims dims, uint32_t seed) {
  Tensor t(DType::kUInt8, std::move(dims));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(rng());
  return t;
}

struct NBits {
  int64_t k, n, bits, block;
  int64_t accuracy = 0;  // accuracy_level: 4 quantizes A to int8 for small M
  int64_t kb() const { return (k + block - 1) / block; }
  int64_t blob() const { return block * bits / 8; }
  std::vector<graph::Attribute> Attrs() const {
    return {AttrInt("K", k), AttrInt("N", n), AttrInt("bits", bits), AttrInt("block_size", block),
            AttrInt("accuracy_level", accuracy)};
  }
};

// Code of weight (r, k) and the zero point of (r, b) as the operator defines them.
int Code(const NBits& p, const Tensor& b, int64_t r, int64_t k) {
  const uint8_t* blob = b.data<uint8_t>() + (r * p.kb() + k / p.block) * p.blob();
  const int64_t j = k % p.block;
  if (p.bits == 8) return blob[j];
  return (blob[j / 2] >> (4 * (j % 2))) & 15;
}
double ZeroPoint(const NBits& p, const Tensor* zp, int64_t r, int64_t b) {
  if (zp == nullptr) return p.bits == 4 ? 8.0 : 128.0;
  if (zp->dtype() == DType::kFloat32) return zp->data<float>()[r * p.kb() + b];
  const int64_t row_bytes = (p.kb() * p.bits + 7) / 8;
  const uint8_t* z = zp->data<uint8_t>() + r * row_bytes;
  if (p.bits == 8) return z[b];
  return (z[b / 2] >> (4 * (b % 2))) & 15;
}

// Y = A * W^T + bias in float64 and the bound of the kernel's summation order.
void CheckAgainstReference(const NBits& p, const Tensor& a, const Tensor& b, const Tensor& scales,
                           const Tensor* zp, const Tensor* bias, const Tensor& y) {
  const int64_t m = a.num_elements() / p.k;
  REQUIRE(y.num_elements() == m * p.n);
  const double per_term = (static_cast<double>(p.block) + p.kb() + 8) * std::ldexp(1.0, -24);
  int bad = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t r = 0; r < p.n; ++r) {
      double s = bias ? bias->data<float>()[r] : 0.0;
      double mag = std::fabs(s);
      for (int64_t k = 0; k < p.k; ++k) {
        const int64_t blk = k / p.block;
        const double w = (Code(p, b, r, k) - ZeroPoint(p, zp, r, blk)) *
                         scales.data<float>()[r * p.kb() + blk];
        s += a.data<float>()[i * p.k + k] * w;
        mag += std::fabs(a.data<float>()[i * p.k + k] * w);
      }
      const double got = y.data<float>()[i * p.n + r];
      if (!(std::fabs(got - s) <= per_term * mag + 1e-30) && bad++ < 3) {
        CHECK_MESSAGE(false, "y[" << i << "," << r << "] = " << got << ", reference " << s);
      }
    }
  }
  CHECK(bad == 0);
}

Tensor Scales(const NBits& p, uint32_t seed) { return RandomF32({p.n, p.kb()}, seed, 0.001f, 0.1f); }

void CheckErrorNames(const std::function<void()>& fn, const std::string& what) {
  try {
    fn();
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("MatMulNBits_under_test") != std::string::npos);
    CHECK(msg.find("MatMulNBits") != std::string::npos);
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
  }
}

TEST_CASE("NBits op: float32 matches a float64 reference") {
  uint32_t seed = 1;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {16, 32, 128}) {
      const NBits p{block * 2 + 9, 19, bits, block};  // K not a multiple of the block
      const Tensor a = RandomF32({2, 3, p.k}, seed++);
      const Tensor b = U8({p.n, p.kb(), p.blob()}, seed++);
      const Tensor scales = Scales(p, seed++);
      const Tensor zp_packed = U8({p.n * ((p.kb() * bits + 7) / 8)}, seed++);
      const Tensor zp_float = RandomF32({p.n, p.kb()}, seed++, 0.0f, bits == 4 ? 15.0f : 255.0f);
      const Tensor bias = RandomF32({p.n}, seed++);
      INFO("bits " << bits << " block " << block);
      {
        const auto y = RunNode("MatMulNBits", {a, b, scales}, p.Attrs(), Ms({1, 2}));
        CHECK(y[0].dims() == Dims{2, 3, p.n});
        CheckAgainstReference(p, a, b, scales, nullptr, nullptr, y[0]);
      }
      {
        const auto y = RunNode("MatMulNBits", {a, b, scales, zp_packed, Tensor(), bias},
                               p.Attrs(), Ms({1, 2, 3}, 2));
        CheckAgainstReference(p, a, b, scales, &zp_packed, &bias, y[0]);
      }
      {
        // Weights as run-time inputs, float zero points.
        const auto y = RunNode("MatMulNBits", {a, b, scales, zp_float}, p.Attrs(), Ms());
        CheckAgainstReference(p, a, b, scales, &zp_float, nullptr, y[0]);
      }
      {
        // One row (the GEMV path), thread counts agree bit for bit.
        const Tensor a1 = RandomF32({1, p.k}, seed++);
        const auto y1 = RunNode("MatMulNBits", {a1, b, scales, zp_packed}, p.Attrs(), Ms({1, 2}));
        const auto y2 =
            RunNode("MatMulNBits", {a1, b, scales, zp_packed}, p.Attrs(), Ms({1, 2}, 3));
        CheckAgainstReference(p, a1, b, scales, &zp_packed, nullptr, y1[0]);
        CHECK(std::memcmp(y1[0].raw_data(), y2[0].raw_data(), p.n * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("NBits op: trivial g_idx is accepted, empty A gives an empty Y") {
  const NBits p{40, 5, 4, 16};
  const Tensor b = U8({p.n, p.kb(), p.blob()}, 3);
  const Tensor scales = Scales(p, 4);
  std::vector<int32_t> g(static_cast<size_t>(p.k));
  for (int64_t i = 0; i < p.k; ++i) g[i] = static_cast<int32_t>(i / p.block);
  const Tensor a = RandomF32({3, p.k}, 5);
  const auto y = RunNode("MatMulNBits", {a, b, scales, Tensor(), I32({p.k}, g)}, p.Attrs(),
                         Ms({1, 2, 4}));
  CheckAgainstReference(p, a, b, scales, nullptr, nullptr, y[0]);
  const auto e = RunNode("MatMulNBits", {RandomF32({0, p.k}, 6), b, scales}, p.Attrs(), Ms({1, 2}));
  CHECK(e[0].dims() == Dims{0, p.n});
}

TEST_CASE("NBits op: float16 and bfloat16 round the float32 result once") {
  for (int64_t bits : {4, 8}) {
    const NBits p{70, 9, bits, 32};
    const Tensor a = RandomF32({4, p.k}, 10);
    const Tensor b = U8({p.n, p.kb(), p.blob()}, 11);
    const Tensor scales = Scales(p, 12);
    const Tensor zp_float = RandomF32({p.n, p.kb()}, 13, 0.0f, 8.0f);
    const Tensor bias = RandomF32({p.n}, 14);
    f16::Check16Both("MatMulNBits", {a, b, scales, zp_float, Tensor(), bias}, p.Attrs(),
                     Ms({1, 2, 3, 5}));
    f16::Check16Both("MatMulNBits", {a, b, scales}, p.Attrs(), Ms());
  }
}

// The kernel's view of constant-input test tensors.
kernels::NBitsWeights View(const NBits& p, const Tensor& b, const Tensor& scales,
                           const Tensor* zp) {
  kernels::NBitsWeights w;
  w.bits = static_cast<int>(p.bits);
  w.n = p.n;
  w.k = p.k;
  w.block_size = p.block;
  w.packed = b.data<uint8_t>();
  w.scales = scales.data<float>();
  if (zp != nullptr) {
    w.zp_kind = kernels::NBitsZeroPoints::kPackedU8;
    w.zp_packed = zp->data<uint8_t>();
  }
  return w;
}

TEST_CASE("NBits op: accuracy_level 4 quantizes A to int8 for small M, only there") {
  uint32_t seed = 100;
  for (int64_t bits : {4, 8}) {
    for (int64_t block : {32, 64}) {
      const NBits exact{block * 5 + 3, 21, bits, block};
      NBits q8 = exact;
      q8.accuracy = 4;
      INFO("bits " << bits << " block " << block);
      const Tensor b = U8({q8.n, q8.kb(), q8.blob()}, seed++);
      const Tensor scales = Scales(q8, seed++);
      const Tensor zp = U8({q8.n * ((q8.kb() * bits + 7) / 8)}, seed++);
      const Tensor bias = RandomF32({q8.n}, seed++);
      for (int64_t m : {1, 3}) {
        const Tensor a = RandomF32({m, q8.k}, seed++);
        const auto y = RunNode("MatMulNBits", {a, b, scales, zp, Tensor(), bias}, q8.Attrs(),
                               Ms({1, 2, 3}, 2));
        std::vector<float> want(static_cast<size_t>(m * q8.n));
        kernels::GemvNBitsQ8(m, a.data<float>(), q8.k, View(q8, b, scales, &zp),
                             bias.data<float>(), want.data(), q8.n, kernels::SerialParallel());
        CHECK(std::memcmp(y[0].raw_data(), want.data(), want.size() * sizeof(float)) == 0);
        // Not the float32 result: A's rounding shows.
        const auto y_exact = RunNode("MatMulNBits", {a, b, scales, zp, Tensor(), bias},
                                     exact.Attrs(), Ms({1, 2, 3}));
        CHECK(std::memcmp(y[0].raw_data(), y_exact[0].raw_data(), want.size() * 4) != 0);
      }
      // 16 rows and more, and float zero points: the float32 kernels, as at level 0.
      const Tensor a16 = RandomF32({16, q8.k}, seed++);
      const auto y16 = RunNode("MatMulNBits", {a16, b, scales, zp}, q8.Attrs(), Ms({1, 2, 3}));
      const auto e16 = RunNode("MatMulNBits", {a16, b, scales, zp}, exact.Attrs(), Ms({1, 2, 3}));
      CHECK(std::memcmp(y16[0].raw_data(), e16[0].raw_data(), 16 * q8.n * sizeof(float)) == 0);
      const Tensor a1 = RandomF32({1, q8.k}, seed++);
      const Tensor zpf = RandomF32({q8.n, q8.kb()}, seed++, 0.0f, 8.0f);
      const auto yf = RunNode("MatMulNBits", {a1, b, scales, zpf}, q8.Attrs(), Ms({1, 2, 3}));
      const auto ef = RunNode("MatMulNBits", {a1, b, scales, zpf}, exact.Attrs(), Ms({1, 2, 3}));
      CHECK(std::memcmp(yf[0].raw_data(), ef[0].raw_data(), q8.n * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("NBits op: errors name node, op and what is wrong") {
  const NBits p{64, 8, 4, 32};
  const Tensor a = RandomF32({2, p.k}, 1);
  const Tensor b = U8({p.n, p.kb(), p.blob()}, 2);
  const Tensor scales = Scales(p, 3);
  auto with = [&](const NBits& q) { return q.Attrs(); };
  CheckErrorNames([&] { RunNode("MatMulNBits", {a, b, scales}, with({p.k, p.n, 3, 32}), Ms()); },
                  "bits = 3");
  CheckErrorNames([&] { RunNode("MatMulNBits", {a, b, scales}, with({p.k, p.n, 4, 24}), Ms()); },
                  "block_size");
  CheckErrorNames([&] { RunNode("MatMulNBits", {a, b, scales}, with({p.k, p.n, 4, 8}), Ms()); },
                  "block_size");
  CheckErrorNames(
      [&] { RunNode("MatMulNBits", {RandomF32({2, 63}, 4), b, scales}, p.Attrs(), Ms()); },
      "last dimension K");
  CheckErrorNames(
      [&] { RunNode("MatMulNBits", {a, U8({p.n, p.kb(), 8}, 5), scales}, p.Attrs(), Ms()); },
      "B has shape");
  CheckErrorNames([&] { RunNode("MatMulNBits", {a, b, scales}, with({p.k, p.n, 8, 32}), Ms()); },
                  "B has shape");
  CheckErrorNames(
      [&] { RunNode("MatMulNBits", {a, b, RandomF32({p.n}, 6)}, p.Attrs(), Ms()); }, "scales");
  CheckErrorNames(
      [&] { RunNode("MatMulNBits", {a, b, scales, U8({p.n * 2}, 7)}, p.Attrs(), Ms()); },
      "zero_points");
  CheckErrorNames(
      [&] {
        RunNode("MatMulNBits", {a, b, scales, RandomF32({p.n}, 8)}, p.Attrs(), Ms());
      },
      "zero_points");
  CheckErrorNames(
      [&] {
        RunNode("MatMulNBits", {a, b, scales, Tensor(), Tensor(), RandomF32({p.n + 1}, 9)},
                p.Attrs(), Ms());
      },
      "bias");
  std::vector<int32_t> g(static_cast<size_t>(p.k));
  for (int64_t i = 0; i < p.k; ++i) g[i] = static_cast<int32_t>((p.k - 1 - i) / p.block);
  CheckErrorNames(
      [&] {
        RunNode("MatMulNBits", {a, b, scales, Tensor(), I32({p.k}, g)}, p.Attrs(), Ms({4}));
      },
      "g_idx");
}

}  // namespace
}  // namespace simplecpp::testing
