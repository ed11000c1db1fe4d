// MatMul (opsets 1, 9, 13) and Gemm (opsets 1, 6, 7, 9, 11, 13).
//
// float32 runs on the packed GEMM (kernels/gemm/gemm.h); a constant B (weights) is packed once at
// Prepare and shared by every run, and by later Prepares for other A shapes while a run holds
// it. float16 / bfloat16 run the same GEMM on 16-bit storage (a constant 16-bit B is widened
// once while packing at Prepare, A per packed block, the output is rounded once per element),
// except products of a constant 16-bit B with few rows of A
// (M <= kernels::kGemv16MaxRows, e.g. one token): those are bound by streaming B from memory,
// so B is packed 16-bit and widened in registers (kernels/gemm/gemv_f16.h, same results bit for
// bit). double and the 32/64-bit integer types (where the opset allows them) run a plain scalar
// loop; integer products wrap around like two's complement.
// (Einsum lives in einsum.cc with its own registration function.)
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/batched_matmul.h"
#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/registry.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemv_f16.h"

namespace simplecpp::graph {
namespace {

// Prepacking a B with very few columns wastes most of each packed panel; those go through
// GemmF32, which solves narrow products as C^T = B^T A^T.
constexpr int64_t kMinPackedColumns = 16;
// Batched products below this many multiply-adds each run in parallel over the batch instead of
// inside the GEMM.
constexpr int64_t kSmallGemmMacs = int64_t{1} << 18;
// Products up to this many multiply-adds also run one task per batch when there are at least as
// many batches as threads: attention's per-head products (128 x 128 x 64 = 1 M) split into too
// few GEMM tasks to keep two threads busy (transformer-base at 2 threads ran them all on one).
constexpr int64_t kBatchTaskMacs = int64_t{1} << 22;

// Integer arithmetic that wraps (unsigned), floating point as is.
template <typename T, bool = std::is_integral_v<T>>
struct Wrap {
  using type = T;
};
template <typename T>
struct Wrap<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using WrapT = typename Wrap<T>::type;

// c[M,N] = a[M,K] * b[K,N], all row-major (scalar loop for the non-float32 types).
template <typename T>
void ScalarMatMul(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  using W = WrapT<T>;
  std::vector<W> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), W{0});
    for (int64_t kk = 0; kk < k; ++kk) {
      const W av = static_cast<W>(a[i * k + kk]);
      const T* brow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<W>(brow[j]);
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<T>(row[j]);
  }
}

std::vector<DType> MatMulDTypes(int64_t opset) {
  // float16 at every version; bfloat16 from opset 13.
  if (opset >= 13) {
    return {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32,
            DType::kInt64,   DType::kUInt32,  DType::kUInt64};
  }
  if (opset >= 9) {
    return {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
            DType::kInt64,   DType::kUInt32,  DType::kUInt64};
  }
  return {DType::kFloat32, DType::kFloat64, DType::kFloat16};
}

void RequireOneOf(TypeContext& ctx, int i, const std::vector<DType>& allowed) {
  ctx.RequireInput(i);
  const DType t = ctx.input_dtype(i);
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return;
  std::string list;
  for (DType a : allowed) list += (list.empty() ? "" : ", ") + DTypeName(a);
  ctx.Unsupported("input " + std::to_string(i) + " has dtype " + DTypeName(t) +
                  "; supported here: " + list);
}

// ---------------------------------------------------------------------------------------------
// MatMul: numpy matmul. A 1-D A is [1,K] (that dim is dropped from the output), a 1-D B is
// [K,1] (likewise); the leading (batch) dims broadcast.

class MatMulOp final : public Op {
 public:
  explicit MatMulOp(const OpInit& init) : allowed_dtypes_(MatMulDTypes(init.opset())) {
    if (init.num_inputs() != 2)
      init.Fail("MatMul takes 2 inputs, got " + std::to_string(init.num_inputs()));
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, allowed_dtypes_);
    RequireOneOf(ctx, 1, allowed_dtypes_);
    ctx.RequireSameDType(0, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& da = ctx.input_dims(0);
    const Dims& db = ctx.input_dims(1);
    const BatchedMatMulShape shape = ResolveBatchedMatMul(ctx, da, db);
    const int64_t m = shape.m, n = shape.n, k = shape.k;
    const int64_t num_batches = shape.num_batches, b_batches = shape.b_batches;
    const auto& offsets = shape.offsets;
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, shape.out_dims);
    if (num_batches == 0 || m == 0 || n == 0) return [](RunContext&) {};

    switch (dtype) {
      case DType::kFloat32:
        return PrepareFloat(ctx, kernels::GemmType::kF32, m, n, k, num_batches, b_batches, offsets);
      case DType::kFloat16:
        return PrepareFloat(ctx, kernels::GemmType::kF16, m, n, k, num_batches, b_batches, offsets);
      case DType::kBFloat16:
        return PrepareFloat(ctx, kernels::GemmType::kBF16, m, n, k, num_batches, b_batches, offsets);
      case DType::kFloat64:
        return PrepareScalar<double>(m, n, k, offsets);
      case DType::kInt32:
        return PrepareScalar<int32_t>(m, n, k, offsets);
      case DType::kInt64:
        return PrepareScalar<int64_t>(m, n, k, offsets);
      case DType::kUInt32:
        return PrepareScalar<uint32_t>(m, n, k, offsets);
      case DType::kUInt64:
        return PrepareScalar<uint64_t>(m, n, k, offsets);
      default:
        ctx.Unsupported("MatMul does not support dtype " + DTypeName(dtype));
    }
  }

 private:
  using Offsets = std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>>;

  // float32, float16 and bfloat16 (16-bit storage, float32 arithmetic; see kernels/gemm/gemm.h
  // "Mixed storage": a 16-bit B is widened when packed, A per packed block, C rounded once).
  RunFn PrepareFloat(PrepareContext& ctx, kernels::GemmType type, int64_t m, int64_t n,
                     int64_t k, int64_t num_batches, int64_t b_batches, Offsets offsets) const {
    const Tensor* bconst = ctx.input_value(1);
    const int64_t es = type == kernels::GemmType::kF32 ? 4 : 2;  // bytes per element
    auto pack = [type, k, n](const void* b) {
      if (type == kernels::GemmType::kF32) {
        return kernels::PackedBF32::Pack(false, k, n, static_cast<const float*>(b), n);
      }
      const auto kind = type == kernels::GemmType::kBF16 ? kernels::Float16Kind::kBFloat16
                                                         : kernels::Float16Kind::kHalf;
      return kernels::PackedBF32::Pack16(kind, false, k, n, static_cast<const uint16_t*>(b), n);
    };
    if (b_batches == 1) {
      // B is one matrix: every batch of A stacks into one [batches*M, K] product.
      const int64_t rows = num_batches * m;
      if (bconst != nullptr && n >= kMinPackedColumns && type != kernels::GemmType::kF32 &&
          rows <= kernels::kGemv16MaxRows) {
        // Few rows: memory-bound, keep the weights 16-bit.
        const auto kind = type == kernels::GemmType::kBF16 ? kernels::Float16Kind::kBFloat16
                                                           : kernels::Float16Kind::kHalf;
        std::shared_ptr<const kernels::PackedB16> packed16 =
            kernels::PackedB16::Pack(kind, false, k, n, bconst->data<uint16_t>(), n);
        return [packed16, rows, type](RunContext& rc) {
          kernels::GemvPackedB16(type, type, false, rows, 1.0f, rc.input(0).raw_data(),
                                 packed16->k(), *packed16, 0.0f, rc.output(0).raw_data(),
                                 packed16->n(), rc.parallel());
        };
      }
      if (bconst != nullptr && n >= kMinPackedColumns) {
        std::shared_ptr<const kernels::PackedBF32> packed = SharedPack(*bconst, type, k, n, pack);
        return [packed, rows, type](RunContext& rc) {
          kernels::GemmPackedBMixed(type, type, false, rows, 1.0f, rc.input(0).raw_data(),
                                    packed->k(), *packed, 0.0f, rc.output(0).raw_data(),
                                    packed->n(), rc.parallel());
        };
      }
      return [rows, k, n, type](RunContext& rc) {
        kernels::GemmMixed(type, type, type, false, false, rows, n, k, 1.0f, rc.input(0).raw_data(),
                           k, rc.input(1).raw_data(), n, 0.0f, rc.output(0).raw_data(), n,
                           rc.parallel());
      };
    }
    // Batched B (broadcast against A's batch dims).
    std::shared_ptr<std::vector<std::shared_ptr<const kernels::PackedBF32>>> packed;
    if (bconst != nullptr && n >= kMinPackedColumns) {
      packed = std::make_shared<std::vector<std::shared_ptr<const kernels::PackedBF32>>>();
      for (int64_t i = 0; i < b_batches; ++i) {
        packed->push_back(pack(static_cast<const char*>(bconst->raw_data()) + i * k * n * es));
      }
    }
    const int64_t macs = m * n * k;
    return [packed, offsets, m, n, k, num_batches, macs, type, es](RunContext& rc) {
      const char* a = static_cast<const char*>(rc.input(0).raw_data());
      const char* b = static_cast<const char*>(rc.input(1).raw_data());
      char* c = static_cast<char*>(rc.output(0).raw_data());
      auto one = [&](int64_t t, const kernels::Parallel& par) {
        const auto& off = (*offsets)[t];
        if (packed) {
          kernels::GemmPackedBMixed(type, type, false, m, 1.0f, a + off.first * m * k * es, k,
                                    *(*packed)[off.second], 0.0f, c + t * m * n * es, n, par);
        } else {
          kernels::GemmMixed(type, type, type, false, false, m, n, k, 1.0f,
                             a + off.first * m * k * es, k, b + off.second * k * n * es, n, 0.0f,
                             c + t * m * n * es, n, par);
        }
      };
      const bool outer_parallel =
          macs < kSmallGemmMacs ||
          (macs <= kBatchTaskMacs && num_batches >= rc.parallel().num_threads());
      if (outer_parallel) {
        // One task per batch; each GEMM runs serially inside its task.
        rc.parallel().For(num_batches, [&](int64_t t0, int64_t t1) {
          for (int64_t t = t0; t < t1; ++t) one(t, kernels::SerialParallel());
        });
      } else {
        for (int64_t t = 0; t < num_batches; ++t) one(t, rc.parallel());
      }
    };
  }

  // The packed constant B of this node, reused by every Prepare while a prepared run still holds
  // it: a decoder alternates A shapes (prefill rows, then one row per token), and each new shape
  // would otherwise repack all the weights. Prepare may run in several sessions at once, hence
  // the lock; the memo never changes what a run computes.
  template <typename PackFn>
  std::shared_ptr<const kernels::PackedBF32> SharedPack(const Tensor& b, kernels::GemmType type,
                                                        int64_t k, int64_t n, PackFn pack) const {
    std::lock_guard<std::mutex> lock(pack_mu_);
    if (pack_src_ == b.raw_data() && pack_type_ == type && pack_k_ == k && pack_n_ == n) {
      if (auto p = pack_memo_.lock()) return p;
    }
    std::shared_ptr<const kernels::PackedBF32> p = pack(b.raw_data());
    pack_memo_ = p;
    pack_src_ = b.raw_data();
    pack_type_ = type;
    pack_k_ = k;
    pack_n_ = n;
    return p;
  }

  mutable std::mutex pack_mu_;
  mutable std::weak_ptr<const kernels::PackedBF32> pack_memo_;
  mutable const void* pack_src_ = nullptr;
  mutable kernels::GemmType pack_type_ = kernels::GemmType::kF32;
  mutable int64_t pack_k_ = -1, pack_n_ = -1;
  std::vector<DType> allowed_dtypes_;  // T, which grew with the opset (MatMulDTypes)

  template <typename T>
  static RunFn PrepareScalar(int64_t m, int64_t n, int64_t k, Offsets offsets) {
    return [offsets, m, n, k](RunContext& rc) {
      const T* a = rc.input(0).data<T>();
      const T* b = rc.input(1).data<T>();
      T* c = rc.output(0).data<T>();
      const int64_t batches = static_cast<int64_t>(offsets->size());
      rc.parallel().For(batches, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const auto& off = (*offsets)[t];
          ScalarMatMul<T>(a + off.first * m * k, b + off.second * k * n, c + t * m * n, m, n, k);
        }
      });
    };
  }
};

// ---------------------------------------------------------------------------------------------
// Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (2-D), C unidirectionally
// broadcast to [M,N] (opsets 1 and 6: only with broadcast=1, else C must be [M,N]); C optional
// from opset 11.

class GemmOp final : public Op {
 public:
  explicit GemmOp(const OpInit& init) : allowed_dtypes_(MatMulDTypes(init.opset())) {
    const int64_t opset = init.opset();
    alpha_ = init.GetFloat("alpha", 1.0f);
    beta_ = init.GetFloat("beta", 1.0f);
    const int64_t ta = init.GetInt("transA", 0), tb = init.GetInt("transB", 0);
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1)) init.Fail("transA and transB must be 0 or 1");
    trans_a_ = ta == 1;
    trans_b_ = tb == 1;
    if (opset < 7) {
      const int64_t bc = init.GetInt("broadcast", 0);
      if (bc != 0 && bc != 1) init.Fail("broadcast must be 0 or 1");
      broadcast_ = bc == 1;
    } else if (init.Has("broadcast")) {
      init.Fail("attribute 'broadcast' was removed in opset 7");
    }
    if (init.num_inputs() < 2 || init.num_inputs() > 3) {
      init.Fail("Gemm takes 2 or 3 inputs, got " + std::to_string(init.num_inputs()));
    }
    if (opset < 11 && !init.has_input(2)) init.Fail("input C is required before opset 11");
    // Before opset 7 C broadcasts only with broadcast=1; without it C must be exactly [M, N].
    c_exact_shape_ = opset < 7 && !broadcast_;
  }

  void InferTypes(TypeContext& ctx) const override {
    RequireOneOf(ctx, 0, allowed_dtypes_);
    RequireOneOf(ctx, 1, allowed_dtypes_);
    ctx.RequireSameDType(0, 1);
    if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& da = ctx.input_dims(0);
    const Dims& db = ctx.input_dims(1);
    if (da.size() != 2 || db.size() != 2) {
      ctx.Fail("A and B must be 2-D, got A " + DimsToString(da) + " and B " + DimsToString(db));
    }
    const int64_t m = trans_a_ ? da[1] : da[0];
    const int64_t k = trans_a_ ? da[0] : da[1];
    const int64_t kb = trans_b_ ? db[1] : db[0];
    const int64_t n = trans_b_ ? db[0] : db[1];
    if (k != kb) {
      ctx.Fail("inner dimensions differ: op(A) is [" + std::to_string(m) + "," + std::to_string(k) +
               "], op(B) is [" + std::to_string(kb) + "," + std::to_string(n) + "]");
    }
    const bool has_c = ctx.has_input(2);
    Dims dc;
    if (has_c) {
      dc = ctx.input_dims(2);
      bool ok = dc.size() <= 2;
      if (c_exact_shape_) {
        ok = dc == Dims{m, n};
      } else if (ok) {
        const int64_t target[2] = {m, n};
        for (size_t i = 0; i < dc.size(); ++i) {
          const int64_t t = target[2 - dc.size() + i];
          ok = ok && (dc[i] == 1 || dc[i] == t);
        }
      }
      if (!ok) {
        ctx.Fail("C " + DimsToString(dc) + " cannot be broadcast to [" + std::to_string(m) + "," +
                 std::to_string(n) + "]" +
                 (c_exact_shape_ ? " (broadcast=0 requires C to be [M,N])" : ""));
      }
    }
    const DType dtype = ctx.input_dtype(0);
    ctx.set_output(0, dtype, {m, n});
    if (m == 0 || n == 0) return [](RunContext&) {};
    // How C maps onto [M,N]: element (i,j) of C is c[i*cs_i + j*cs_j].
    int64_t cs_i = 0, cs_j = 0;
    if (has_c) {
      const int64_t rows = dc.size() == 2 ? dc[0] : 1;
      const int64_t cols = dc.empty() ? 1 : dc.back();
      cs_i = rows == 1 ? 0 : cols;
      cs_j = cols == 1 ? 0 : 1;
    }
    const bool use_c = has_c && beta_ != 0.0f;
    switch (dtype) {
      case DType::kFloat32:
        return PrepareF32(ctx, m, n, k, use_c, cs_i, cs_j);
      case DType::kFloat16:
      case DType::kBFloat16:
        return Prepare16(ctx, Float16KindOf(dtype),
                         m, n, k, use_c, cs_i, cs_j);
      case DType::kFloat64:
        return PrepareScalar<double>(m, n, k, use_c, cs_i, cs_j);
      case DType::kInt32:
        return PrepareScalar<int32_t>(m, n, k, use_c, cs_i, cs_j);
      case DType::kInt64:
        return PrepareScalar<int64_t>(m, n, k, use_c, cs_i, cs_j);
      case DType::kUInt32:
        return PrepareScalar<uint32_t>(m, n, k, use_c, cs_i, cs_j);
      case DType::kUInt64:
        return PrepareScalar<uint64_t>(m, n, k, use_c, cs_i, cs_j);
      default:
        ctx.Unsupported("Gemm does not support dtype " + DTypeName(dtype));
    }
  }

 private:
  RunFn PrepareF32(PrepareContext& ctx, int64_t m, int64_t n, int64_t k, bool use_c, int64_t cs_i,
                   int64_t cs_j) const {
    const bool ta = trans_a_, tb = trans_b_;
    const float alpha = alpha_, beta = beta_;
    const int64_t lda = ta ? m : k, ldb = tb ? k : n;
    std::shared_ptr<const kernels::PackedBF32> packed;
    if (const Tensor* bconst = ctx.input_value(1); bconst != nullptr && n >= kMinPackedColumns) {
      packed = kernels::PackedBF32::Pack(tb, k, n, bconst->data<float>(), ldb);
    }
    // C as a bias vector when beta == 1 and it broadcasts along one axis; otherwise C is copied
    // (broadcast) into Y and the GEMM accumulates onto it with beta.
    enum class CMode { kNone, kColBias, kRowBias, kFill };
    CMode mode = CMode::kNone;
    if (use_c) {
      if (beta == 1.0f && cs_i == 0 && cs_j == 1) {
        mode = CMode::kColBias;
      } else if (beta == 1.0f && cs_i != 0 && cs_j == 0) {
        mode = CMode::kRowBias;
      } else {
        mode = CMode::kFill;
      }
    }
    return [=](RunContext& rc) {
      const float* a = rc.input(0).data<float>();
      float* y = rc.output(0).data<float>();
      kernels::GemmEpilogue epi;
      float gemm_beta = 0.0f;
      if (mode == CMode::kColBias) epi.col_bias = rc.input(2).data<float>();
      if (mode == CMode::kRowBias) epi.row_bias = rc.input(2).data<float>();
      if (mode == CMode::kFill) {
        const float* c = rc.input(2).data<float>();
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) y[i * n + j] = c[i * cs_i + j * cs_j];
        }
        gemm_beta = beta;
      }
      if (packed) {
        kernels::GemmPackedBF32(ta, m, alpha, a, lda, *packed, gemm_beta, y, n, rc.parallel(), epi);
      } else {
        kernels::GemmF32(ta, tb, m, n, k, alpha, a, lda, rc.input(1).data<float>(), ldb, gemm_beta,
                         y, n, rc.parallel(), epi);
      }
    };
  }

  // float16 / bfloat16: the float32 GEMM on 16-bit storage (kernels/gemm/gemm.h "Mixed storage").
  // A C that is a row / column bias is widened into a small float32 scratch vector; any other C
  // is broadcast into Y (16-bit values, exact) and accumulated with beta.
  RunFn Prepare16(PrepareContext& ctx, kernels::Float16Kind kind, int64_t m, int64_t n, int64_t k,
                  bool use_c, int64_t cs_i, int64_t cs_j) const {
    const bool ta = trans_a_, tb = trans_b_;
    const float alpha = alpha_, beta = beta_;
    const int64_t lda = ta ? m : k, ldb = tb ? k : n;
    const kernels::GemmType type = kernels::GemmTypeOf(kind);
    std::shared_ptr<const kernels::PackedBF32> packed;
    // Few rows (M <= kGemv16MaxRows): memory-bound, the weights stay 16-bit (same results).
    std::shared_ptr<const kernels::PackedB16> packed16;
    if (const Tensor* bconst = ctx.input_value(1); bconst != nullptr && n >= kMinPackedColumns) {
      if (m <= kernels::kGemv16MaxRows) {
        packed16 = kernels::PackedB16::Pack(kind, tb, k, n, bconst->data<uint16_t>(), ldb);
      } else {
        packed = kernels::PackedBF32::Pack16(kind, tb, k, n, bconst->data<uint16_t>(), ldb);
      }
    }
    enum class CMode { kNone, kColBias, kRowBias, kFill };
    CMode mode = CMode::kNone;
    if (use_c) {
      if (beta == 1.0f && cs_i == 0 && cs_j == 1) {
        mode = CMode::kColBias;
      } else if (beta == 1.0f && cs_i != 0 && cs_j == 0) {
        mode = CMode::kRowBias;
      } else {
        mode = CMode::kFill;
      }
    }
    return [=](RunContext& rc) {
      const void* a = rc.input(0).raw_data();
      uint16_t* y = rc.output(0).data<uint16_t>();
      kernels::GemmEpilogue epi;
      float gemm_beta = 0.0f;
      Tensor bias;
      if (mode == CMode::kColBias || mode == CMode::kRowBias) {
        const int64_t len = mode == CMode::kColBias ? n : m;
        bias = rc.Scratch(DType::kFloat32, {len});
        kernels::Widen16(kind, rc.input(2).data<uint16_t>(), bias.data<float>(),
                         static_cast<size_t>(len));
        (mode == CMode::kColBias ? epi.col_bias : epi.row_bias) = bias.data<float>();
      }
      if (mode == CMode::kFill) {
        const uint16_t* c = rc.input(2).data<uint16_t>();
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) y[i * n + j] = c[i * cs_i + j * cs_j];
        }
        gemm_beta = beta;
      }
      if (packed16) {
        kernels::GemvPackedB16(type, type, ta, m, alpha, a, lda, *packed16, gemm_beta, y, n,
                               rc.parallel(), epi);
      } else if (packed) {
        kernels::GemmPackedBMixed(type, type, ta, m, alpha, a, lda, *packed, gemm_beta, y, n,
                                  rc.parallel(), epi);
      } else {
        kernels::GemmMixed(type, type, type, ta, tb, m, n, k, alpha, a, lda, rc.input(1).raw_data(),
                           ldb, gemm_beta, y, n, rc.parallel(), epi);
      }
    };
  }

  template <typename T>
  RunFn PrepareScalar(int64_t m, int64_t n, int64_t k, bool use_c, int64_t cs_i,
                      int64_t cs_j) const {
    const bool ta = trans_a_, tb = trans_b_;
    const double alpha = alpha_, beta = beta_;
    // Integers with alpha == beta == 1 stay exact (wrapping); otherwise scale in double.
    const bool exact = alpha == 1.0 && (beta == 1.0 || !use_c);
    return [=](RunContext& rc) {
      using W = WrapT<T>;
      const T* a = rc.input(0).data<T>();
      const T* b = rc.input(1).data<T>();
      const T* c = use_c ? rc.input(2).data<T>() : nullptr;
      T* y = rc.output(0).data<T>();
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          W s{0};
          for (int64_t kk = 0; kk < k; ++kk) {
            const T av = ta ? a[kk * m + i] : a[i * k + kk];
            const T bv = tb ? b[j * k + kk] : b[kk * n + j];
            s += static_cast<W>(av) * static_cast<W>(bv);
          }
          const T cv = use_c ? c[i * cs_i + j * cs_j] : T{0};
          if (exact) {
            y[i * n + j] = static_cast<T>(s + static_cast<W>(cv));
          } else {
            y[i * n + j] = static_cast<T>(alpha * static_cast<double>(static_cast<T>(s)) +
                                          beta * static_cast<double>(cv));
          }
        }
      }
    };
  }

  std::vector<DType> allowed_dtypes_;  // T, which grew with the opset (MatMulDTypes)
  float alpha_ = 1.0f, beta_ = 1.0f;
  bool trans_a_ = false, trans_b_ = false;
  bool broadcast_ = false;
  bool c_exact_shape_ = false;
};

}  // namespace

void RegisterMatMulOps(OpRegistry& registry) {
  for (int v : {1, 9, 13}) registry.Register("", "MatMul", v, MakeFactory<MatMulOp>());
  for (int v : {1, 6, 7, 9, 11, 13}) registry.Register("", "Gemm", v, MakeFactory<GemmOp>());
}

}  // namespace simplecpp::graph
