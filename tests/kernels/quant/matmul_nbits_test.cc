// Tests for kernels/quant/matmul_nbits.h: GemvNBitsF32 / GemmNBitsF32 (block-quantized 4-/8-bit
// weights in ONNX Runtime's MatMulNBits layout) against a float64 reference written here from
// the operator's definition, on every compiled target: bits 4 and 8, block sizes 16..256, zero
// points absent / packed uint8 / float, K not a multiple of the block (with garbage in the
// padding), odd N, M = 0, 1, 3, 17, row strides. GEMV and GEMM must agree bit for bit, and so must
// any thread count; GemmNBitsViaF32 (dequantize, then the float GEMM) within its own bound and
// the same at any thread count.
#include "kernels/quant/matmul_nbits.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "reference/threads_parallel.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using ThreadsParallel = test_util::ThreadsParallel;

// Quantized weights with everything they point at.
struct Weights {
  std::vector<uint8_t> packed, zp_packed;
  std::vector<float> scales, zp_f32, block_min;
  NBitsWeights view;
};

Weights MakeWeights(int bits, int64_t n, int64_t k, int64_t block, NBitsZeroPoints zp_kind,
                    uint32_t seed) {
  std::mt19937 rng(seed);
  Weights w;
  w.view.bits = bits;
  w.view.n = n;
  w.view.k = k;
  w.view.block_size = block;
  w.view.zp_kind = zp_kind;
  const int64_t kb = w.view.k_blocks();
  // Every byte random, the padding of the last block included (it must not matter).
  w.packed.resize(static_cast<size_t>(n * kb * w.view.blob_bytes()));
  for (auto& b : w.packed) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  w.scales.resize(static_cast<size_t>(n * kb));
  for (auto& s : w.scales) s = scale(rng);
  if (zp_kind == NBitsZeroPoints::kPackedU8) {
    w.zp_packed.resize(static_cast<size_t>(n * w.view.zp_row_bytes()));
    for (auto& z : w.zp_packed) z = static_cast<uint8_t>(rng());
  } else if (zp_kind == NBitsZeroPoints::kFloat32) {
    std::uniform_real_distribution<float> zp(0.0f, static_cast<float>(1 << bits));
    w.zp_f32.resize(static_cast<size_t>(n * kb));
    for (auto& z : w.zp_f32) z = zp(rng);
  }
  w.view.packed = w.packed.data();
  w.view.scales = w.scales.data();
  w.view.zp_packed = w.zp_packed.data();
  w.view.zp_f32 = w.zp_f32.data();
  return w;
}

// The code of weight (r, k), read the way the operator defines it.
int Code(const NBitsWeights& w, int64_t r, int64_t k) {
  const int64_t b = k / w.block_size, j = k % w.block_size;
  const uint8_t* blob = w.packed + (r * w.k_blocks() + b) * w.blob_bytes();
  if (w.bits == 8) return blob[j];
  return (blob[j / 2] >> (4 * (j % 2))) & 15;
}

// The zero point of block b of row r, read from the raw arrays (not through NBitsWeights).
double ZeroPointRef(const Weights& w, int64_t r, int64_t b) {
  const int bits = w.view.bits;
  const int64_t kb = w.view.k_blocks();
  switch (w.view.zp_kind) {
    case NBitsZeroPoints::kDefault:
      return bits == 4 ? 8.0 : 128.0;
    case NBitsZeroPoints::kFloat32:
      return w.zp_f32[r * kb + b];
    case NBitsZeroPoints::kPackedU8: {
      const int64_t row_bytes = (kb * bits + 7) / 8;
      if (bits == 8) return w.zp_packed[r * row_bytes + b];
      return (w.zp_packed[r * row_bytes + b / 2] >> (4 * (b % 2))) & 15;
    }
  }
  return 0.0;
}

struct Case {
  int bits;
  int64_t block, k, n, m;
  NBitsZeroPoints zp;
  bool bias;
  bool min = false;  // block minimums (ggml's Q4_1 form)
};

std::string Describe(const Case& c) {
  static const char* kZp[] = {"default", "packed u8", "float"};
  return "bits " + std::to_string(c.bits) + " block " + std::to_string(c.block) + " K " +
         std::to_string(c.k) + " N " + std::to_string(c.n) + " M " + std::to_string(c.m) +
         " zp " + kZp[static_cast<int>(c.zp)] + (c.bias ? " bias" : "") + (c.min ? " block_min" : "");
}

void CheckCase(const Case& c, uint32_t seed) {
  INFO(Describe(c));
  Weights w = MakeWeights(c.bits, c.n, c.k, c.block, c.zp, seed);
  const int64_t lda = c.k + 3, ldy = c.n + 2;
  std::mt19937 rng(seed + 7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  if (c.min) {
    w.block_min.resize(static_cast<size_t>(c.n * w.view.k_blocks()));
    for (auto& v : w.block_min) v = 0.5f * dist(rng);
    w.view.block_min = w.block_min.data();
  }
  std::vector<float> a(static_cast<size_t>(std::max<int64_t>(1, c.m * lda)));
  for (auto& v : a) v = dist(rng);
  std::vector<float> bias(static_cast<size_t>(c.n));
  for (auto& v : bias) v = dist(rng);
  const float* bp = c.bias ? bias.data() : nullptr;

  // float64 reference and the error bound of the stated summation order.
  const int64_t kb = w.view.k_blocks();
  std::vector<double> ref(static_cast<size_t>(c.m * c.n)), mag(ref.size());
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t r = 0; r < c.n; ++r) {
      double s = c.bias ? bias[r] : 0.0, sa = c.bias ? std::fabs(bias[r]) : 0.0;
      for (int64_t k = 0; k < c.k; ++k) {
        const int64_t b = k / c.block;
        double wv = (Code(w.view, r, k) - ZeroPointRef(w, r, b)) * w.scales[r * kb + b];
        if (c.min) wv += w.block_min[r * kb + b];
        s += a[i * lda + k] * wv;
        sa += std::fabs(a[i * lda + k] * wv);
      }
      ref[i * c.n + r] = s;
      mag[i * c.n + r] = sa;
    }
  }
  // Block minimums add one more sum over the blocks (their min * sum of a terms).
  const double per_term = (static_cast<double>(c.block) + (c.min ? 2 : 1) * kb + 8) * std::ldexp(1.0, -24);

  const std::vector<float> init(static_cast<size_t>(std::max<int64_t>(1, c.m * ldy)), -7.0f);
  for (const Target& t : CompiledTargets()) {
    INFO("target " << t.name);
    ScopedTarget scoped(t);
    std::vector<float> gemv = init, gemm = init, gemm3 = init, gemv2 = init;
    GemvNBitsF32(c.m, a.data(), lda, w.view, bp, gemv.data(), ldy, SerialParallel());
    GemmNBitsF32(c.m, a.data(), lda, w.view, bp, gemm.data(), ldy, SerialParallel());
    GemmNBitsF32(c.m, a.data(), lda, w.view, bp, gemm3.data(), ldy, ThreadsParallel(3));
    GemvNBitsF32(c.m, a.data(), lda, w.view, bp, gemv2.data(), ldy, ThreadsParallel(2));
    CHECK(std::memcmp(gemv.data(), gemm.data(), gemv.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(gemm.data(), gemm3.data(), gemm.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(gemv.data(), gemv2.data(), gemv.size() * sizeof(float)) == 0);
    int bad = 0;
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t r = 0; r < c.n; ++r) {
        const double got = gemv[i * ldy + r];
        const double tol = per_term * mag[i * c.n + r] + 1e-30;
        if (!(std::fabs(got - ref[i * c.n + r]) <= tol) && bad++ < 3) {
          CHECK_MESSAGE(false, "y[" << i << "," << r << "] = " << got << ", reference "
                                    << ref[i * c.n + r] << ", tolerance " << tol);
        }
      }
      // The padding between rows of y is untouched.
      for (int64_t r = c.n; r < ldy && i * ldy + r < static_cast<int64_t>(gemv.size()); ++r) {
        CHECK(gemv[i * ldy + r] == -7.0f);
      }
    }
    CHECK(bad == 0);
    // The dequantize-then-float-GEMM path: its own summation order (k_pad terms, each weight
    // rounded once more by the per-weight scale), the same bits at any thread count.
    std::vector<float> via = init, via3 = init;
    GemmNBitsViaF32(c.m, a.data(), lda, w.view, bp, via.data(), ldy, SerialParallel());
    GemmNBitsViaF32(c.m, a.data(), lda, w.view, bp, via3.data(), ldy, ThreadsParallel(3));
    CHECK(std::memcmp(via.data(), via3.data(), via.size() * sizeof(float)) == 0);
    const double via_per_term = (static_cast<double>(kb * c.block) + 8) * std::ldexp(1.0, -24);
    bad = 0;
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t r = 0; r < c.n; ++r) {
        const double got = via[i * ldy + r];
        const double tol = via_per_term * mag[i * c.n + r] + 1e-30;
        if (!(std::fabs(got - ref[i * c.n + r]) <= tol) && bad++ < 3) {
          CHECK_MESSAGE(false, "via f32 GEMM: y[" << i << "," << r << "] = " << got << ", reference "
                                                  << ref[i * c.n + r] << ", tolerance " << tol);
        }
      }
      for (int64_t r = c.n; r < ldy && i * ldy + r < static_cast<int64_t>(via.size()); ++r) {
        CHECK(via[i * ldy + r] == -7.0f);
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("NBits: GEMV and GEMM match a float64 reference, bits 4/8, all block sizes") {
  uint32_t seed = 1;
  for (int bits : {4, 8}) {
    for (int64_t block : {16, 32, 64, 128, 256}) {
      for (NBitsZeroPoints zp :
           {NBitsZeroPoints::kDefault, NBitsZeroPoints::kPackedU8, NBitsZeroPoints::kFloat32}) {
        for (int64_t k : {2 * block, 3 * block - 5}) {
          for (int64_t m : {1, 3, 17}) {
            const int64_t n = m == 3 ? 33 : 7;
            CheckCase({bits, block, k, n, m, zp, (m + block) % 2 == 1}, seed++);
          }
        }
      }
    }
  }
}

TEST_CASE("NBits: block minimums (w = (q - zp) * scale + min) match a float64 reference") {
  uint32_t seed = 500;
  for (int bits : {4, 8}) {
    for (int64_t block : {16, 32, 64}) {
      for (NBitsZeroPoints zp :
           {NBitsZeroPoints::kDefault, NBitsZeroPoints::kPackedU8, NBitsZeroPoints::kFloat32}) {
        for (int64_t k : {2 * block, 3 * block - 5}) {
          for (int64_t m : {1, 3, 17}) {
            CheckCase({bits, block, k, m == 3 ? 33 : 7, m, zp, m == 3, /*min=*/true}, seed++);
          }
        }
      }
    }
  }
}

TEST_CASE("NBits: small and odd shapes") {
  uint32_t seed = 100;
  for (int bits : {4, 8}) {
    // K below one block, a single weight row, N not a multiple of the task or tile sizes.
    CheckCase({bits, 16, 1, 1, 1, NBitsZeroPoints::kPackedU8, true}, seed++);
    CheckCase({bits, 32, 5, 3, 2, NBitsZeroPoints::kDefault, false}, seed++);
    CheckCase({bits, 64, 100, 35, 5, NBitsZeroPoints::kFloat32, true}, seed++);
    CheckCase({bits, 16, 48, 17, 4, NBitsZeroPoints::kPackedU8, false}, seed++);
  }
}

TEST_CASE("NBits: M = 0 writes nothing") {
  const Weights w = MakeWeights(4, 5, 32, 32, NBitsZeroPoints::kDefault, 3);
  float y = 1.0f;
  const float a = 0.0f;
  GemvNBitsF32(0, &a, 32, w.view, nullptr, &y, 5, SerialParallel());
  GemmNBitsF32(0, &a, 32, w.view, nullptr, &y, 5, SerialParallel());
  MatMulNBitsF32(0, &a, 32, w.view, nullptr, &y, 5, SerialParallel());
  CHECK(y == 1.0f);
}

TEST_CASE("NBits: exact on integer-valued data") {
  // Small integers times power-of-two scales: every product and partial sum is exact, so
  // every target and path must give the exact value.
  for (int bits : {4, 8}) {
    Weights w = MakeWeights(bits, 9, 70, 32, NBitsZeroPoints::kPackedU8, 11);
    for (size_t i = 0; i < w.scales.size(); ++i) w.scales[i] = (i % 3 == 0) ? 0.5f : 2.0f;
    std::vector<float> a(3 * 70);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    for (const Target& t : CompiledTargets()) {
      INFO("target " << t.name << " bits " << bits);
      ScopedTarget scoped(t);
      std::vector<float> y(3 * 9);
      MatMulNBitsF32(3, a.data(), 70, w.view, nullptr, y.data(), 9, SerialParallel());
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t r = 0; r < 9; ++r) {
          double s = 0.0;
          for (int64_t k = 0; k < 70; ++k) {
            s += a[i * 70 + k] * (Code(w.view, r, k) - ZeroPointRef(w, r, k / 32)) *
                 w.scales[r * 3 + k / 32];
          }
          CHECK(y[i * 9 + r] == s);
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
