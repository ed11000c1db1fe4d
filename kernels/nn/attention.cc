// Attention, RotaryEmbedding and RMS normalization kernels (see attention.h).
//
// The row primitives (softcap, sum of squares, scale-multiply, half rotation) are Highway code;
// the drivers below them (HWY_ONCE part) are plain C++ that tile the work into tasks whose
// boundaries depend only on the problem size, widen 16-bit rows to float32 buffers, and call the
// GEMM and softmax kernels for the heavy parts of attention.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/nn/attention.cc"
#include "kernels/hwy_policy.h"  // must come before foreach_target / highway
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/nn/attention.h"
#include "kernels/nn/softmax.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;

// s[0, n) = cap * tanh(s / cap).
void SoftcapRowImpl(float* s, int64_t n, float cap) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vcap = hn::Set(d, cap);
  const auto vinv = hn::Set(d, 1.0f / cap);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, s + i);
    hn::StoreU(hn::Mul(hn::Tanh(d, hn::Mul(x, vinv)), vcap), d, s + i);
  }
  if (i < n) {
    // Tail through an aligned local vector: Highway 1.0.3's MaskedLoad on SSE4 is an aligned
    // full-vector Load (SIGSEGV on an unaligned row, reads past the end).
    alignas(HWY_MAX_BYTES) float buf[HWY_MAX_BYTES / sizeof(float)] = {};
    const size_t tail = static_cast<size_t>(n - i);
    std::memcpy(buf, s + i, tail * sizeof(float));
    const auto x = hn::Load(d, buf);
    hn::Store(hn::Mul(hn::Tanh(d, hn::Mul(x, vinv)), vcap), d, buf);
    std::memcpy(s + i, buf, tail * sizeof(float));
  }
}

// Sum of x[i]^2 over [0, n): four float32 vector accumulators, combined in double.
double SumSquaresImpl(const float* x, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const auto x0 = hn::LoadU(d, x + i), x1 = hn::LoadU(d, x + i + N);
    const auto x2 = hn::LoadU(d, x + i + 2 * N), x3 = hn::LoadU(d, x + i + 3 * N);
    a0 = hn::MulAdd(x0, x0, a0);
    a1 = hn::MulAdd(x1, x1, a1);
    a2 = hn::MulAdd(x2, x2, a2);
    a3 = hn::MulAdd(x3, x3, a3);
  }
  for (; i + N <= n; i += N) {
    const auto x0 = hn::LoadU(d, x + i);
    a0 = hn::MulAdd(x0, x0, a0);
  }
  double total = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, a0))) +
                 static_cast<double>(hn::GetLane(hn::SumOfLanes(d, a1))) +
                 static_cast<double>(hn::GetLane(hn::SumOfLanes(d, a2))) +
                 static_cast<double>(hn::GetLane(hn::SumOfLanes(d, a3)));
  for (; i < n; ++i) total += static_cast<double>(x[i]) * x[i];
  return total;
}

// y[i] = (x[i] * r) * scale[i].
void ScaleMulRowImpl(const float* x, const float* scale, float r, float* y, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vr = hn::Set(d, r);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(d, x + i), vr), hn::LoadU(d, scale + i)), d, y + i);
  }
  for (; i < n; ++i) y[i] = (x[i] * r) * scale[i];
}

// o1 = c*x1 - s*x2, o2 = s*x1 + c*x2 over [0, n) (outputs must not overlap the inputs).
void RotateRowImpl(const float* x1, const float* x2, const float* c, const float* s, float* o1,
                   float* o2, int64_t n) {
  const DF d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto a = hn::LoadU(d, x1 + i), b = hn::LoadU(d, x2 + i);
    const auto vc = hn::LoadU(d, c + i), vs = hn::LoadU(d, s + i);
    hn::StoreU(hn::Sub(hn::Mul(vc, a), hn::Mul(vs, b)), d, o1 + i);
    hn::StoreU(hn::Add(hn::Mul(vs, a), hn::Mul(vc, b)), d, o2 + i);
  }
  for (; i < n; ++i) {
    o1[i] = c[i] * x1[i] - s[i] * x2[i];
    o2[i] = s[i] * x1[i] + c[i] * x2[i];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(SoftcapRowImpl);
HWY_EXPORT(SumSquaresImpl);
HWY_EXPORT(ScaleMulRowImpl);
HWY_EXPORT(RotateRowImpl);

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Query rows per attention task (a problem-size constant: deterministic task boundaries).
constexpr int64_t kQueryRowBlock = 32;
// Elements per task for the row kernels.
constexpr int64_t kTaskElements = 1 << 14;

size_t ElemSize(FloatStorage t) { return t == FloatStorage::kF32 ? 4 : 2; }

Float16Kind KindOf(FloatStorage t) {
  return t == FloatStorage::kBF16 ? Float16Kind::kBFloat16 : Float16Kind::kHalf;
}

GemmType GemmTypeFor(FloatStorage t) {
  switch (t) {
    case FloatStorage::kF16:
      return GemmType::kF16;
    case FloatStorage::kBF16:
      return GemmType::kBF16;
    default:
      return GemmType::kF32;
  }
}

const void* At(const void* p, int64_t elems, FloatStorage t) {
  return static_cast<const char*>(p) + elems * static_cast<int64_t>(ElemSize(t));
}
void* At(void* p, int64_t elems, FloatStorage t) {
  return static_cast<char*>(p) + elems * static_cast<int64_t>(ElemSize(t));
}

// Reads n elements of storage t into float32 out.
void LoadRow(FloatStorage t, const void* in, float* out, int64_t n) {
  if (n <= 0) return;
  if (t == FloatStorage::kF32) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
  } else {
    Widen16(KindOf(t), static_cast<const uint16_t*>(in), out, static_cast<size_t>(n));
  }
}

// Writes n float32 values as storage t.
void StoreRow(FloatStorage t, const float* in, void* out, int64_t n) {
  if (n <= 0) return;
  if (t == FloatStorage::kF32) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
  } else {
    Narrow16(KindOf(t), in, static_cast<uint16_t*>(out), static_cast<size_t>(n));
  }
}

// s[0, n) += the mask row (bool or float), -inf past mask_len.
void AddMaskRow(const AttentionArgs& a, const void* mask_row, float* s, int64_t n,
                std::vector<float>& tmp) {
  const int64_t m = std::min(a.mask_len, n);
  if (a.mask_type == AttentionMaskType::kBool) {
    const uint8_t* mb = static_cast<const uint8_t*>(mask_row);
    for (int64_t j = 0; j < m; ++j) s[j] += mb[j] ? 0.0f : kNegInf;
  } else {
    const float* mf;
    if (a.type == FloatStorage::kF32) {
      mf = static_cast<const float*>(mask_row);
    } else {
      tmp.resize(static_cast<size_t>(std::max<int64_t>(m, 1)));
      LoadRow(a.type, mask_row, tmp.data(), m);
      mf = tmp.data();
    }
    for (int64_t j = 0; j < m; ++j) s[j] += mf[j];
  }
  for (int64_t j = m; j < n; ++j) s[j] += kNegInf;
}

}  // namespace

void AttentionForward(const AttentionArgs& a, const Parallel& parallel) {
  if (a.batch <= 0 || a.q_heads <= 0 || a.q_len <= 0 || a.kv_heads <= 0) return;
  const int64_t group = a.q_heads / a.kv_heads;
  const int64_t blocks = (a.q_len + kQueryRowBlock - 1) / kQueryRowBlock;
  const int64_t tasks = a.batch * a.q_heads * blocks;
  const int64_t T = a.kv_len;
  const GemmType gt = GemmTypeFor(a.type);
  const bool any_bias = a.mask_type != AttentionMaskType::kNone || a.causal ||
                        a.nonpad_kv_seqlen != nullptr;
  // K^T [D, T] and V [T, Dv] of every (batch, kv head) are packed once and shared by the query
  // heads of the group and all query-row blocks. Degenerate sizes use the unpacked GEMM.
  const int64_t kv_units = a.batch * a.kv_heads;
  const bool packed = T > 0 && a.head_size > 0 && a.v_head_size > 0;
  std::vector<std::shared_ptr<const PackedBF32>> pk, pv;
  if (packed) {
    pk.resize(static_cast<size_t>(kv_units));
    pv.resize(static_cast<size_t>(kv_units));
    parallel.For(kv_units, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t b = u / a.kv_heads, g = u % a.kv_heads;
        const void* k = At(a.k, b * a.k_stride[0] + g * a.k_stride[1], a.type);
        const void* v = At(a.v, b * a.v_stride[0] + g * a.v_stride[1], a.type);
        if (a.type == FloatStorage::kF32) {
          pk[u] = PackedBF32::Pack(true, a.head_size, T, static_cast<const float*>(k), a.k_stride[2]);
          pv[u] = PackedBF32::Pack(false, T, a.v_head_size, static_cast<const float*>(v),
                                   a.v_stride[2]);
        } else {
          pk[u] = PackedBF32::Pack16(KindOf(a.type), true, a.head_size, T,
                                     static_cast<const uint16_t*>(k), a.k_stride[2]);
          pv[u] = PackedBF32::Pack16(KindOf(a.type), false, T, a.v_head_size,
                                     static_cast<const uint16_t*>(v), a.v_stride[2]);
        }
      }
    });
  }
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<float> scores, tmp;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / (a.q_heads * blocks);
      const int64_t h = (t / blocks) % a.q_heads;
      const int64_t i0 = (t % blocks) * kQueryRowBlock;
      const int64_t rows = std::min(kQueryRowBlock, a.q_len - i0);
      const int64_t g = h / group;
      scores.assign(static_cast<size_t>(std::max<int64_t>(rows * T, 1)), 0.0f);
      const void* q = At(a.q, b * a.q_stride[0] + h * a.q_stride[1] + i0 * a.q_stride[2], a.type);
      void* y = At(a.y, b * a.y_stride[0] + h * a.y_stride[1] + i0 * a.y_stride[2], a.type);
      // scores [rows, T] = scale * Q_block [rows, D] * K^T (K stored [T, D]).
      if (packed) {
        GemmPackedBMixed(gt, GemmType::kF32, false, rows, a.scale, q, a.q_stride[2],
                         *pk[static_cast<size_t>(b * a.kv_heads + g)], 0.0f, scores.data(), T,
                         SerialParallel());
      } else if (T > 0) {
        const void* k = At(a.k, b * a.k_stride[0] + g * a.k_stride[1], a.type);
        GemmMixed(gt, gt, GemmType::kF32, false, true, rows, T, a.head_size, a.scale, q,
                  a.q_stride[2], k, a.k_stride[2], 0.0f, scores.data(), T, SerialParallel());
      }
      void* qk_base =
          a.qk_out ? At(a.qk_out, ((b * a.q_heads + h) * a.q_len + i0) * T, a.type) : nullptr;
      auto emit = [&](AttentionQkStage stage, int64_t r) {
        if (qk_base && a.qk_stage == stage) {
          StoreRow(a.type, scores.data() + r * T, At(qk_base, r * T, a.type), T);
        }
      };
      int64_t offset = a.causal_offset;
      if (a.causal && a.causal_offset_from_nonpad) offset = a.nonpad_kv_seqlen[b] - a.q_len;
      const int64_t valid_keys = a.nonpad_kv_seqlen ? a.nonpad_kv_seqlen[b] : T;
      for (int64_t r = 0; r < rows; ++r) {
        float* s = scores.data() + r * T;
        const int64_t i = i0 + r;
        emit(AttentionQkStage::kScaled, r);
        if (a.softcap > 0.0f && T > 0) HWY_DYNAMIC_DISPATCH(SoftcapRowImpl)(s, T, a.softcap);
        emit(AttentionQkStage::kSoftcapped, r);
        if (any_bias) {
          if (a.mask_type != AttentionMaskType::kNone) {
            const int64_t me = b * a.mask_stride[0] + h * a.mask_stride[1] + i * a.mask_stride[2];
            const void* mrow = a.mask_type == AttentionMaskType::kBool
                                   ? static_cast<const void*>(static_cast<const uint8_t*>(a.mask) + me)
                                   : At(a.mask, me, a.type);
            AddMaskRow(a, mrow, s, T, tmp);
          }
          if (a.causal) {
            for (int64_t j = std::max<int64_t>(0, i + offset + 1); j < T; ++j) s[j] += kNegInf;
          }
          for (int64_t j = std::max<int64_t>(0, valid_keys); j < T; ++j) s[j] += kNegInf;
        }
        emit(AttentionQkStage::kBiased, r);
      }
      if (T > 0) SoftmaxF32(scores.data(), scores.data(), rows, T, 1, SerialParallel());
      for (int64_t r = 0; r < rows; ++r) emit(AttentionQkStage::kSoftmax, r);
      // Y_block [rows, Dv] = P [rows, T] * V [T, Dv].
      if (packed) {
        GemmPackedBMixed(GemmType::kF32, gt, false, rows, 1.0f, scores.data(), T,
                         *pv[static_cast<size_t>(b * a.kv_heads + g)], 0.0f, y, a.y_stride[2],
                         SerialParallel());
      } else {
        const void* v = At(a.v, b * a.v_stride[0] + g * a.v_stride[1], a.type);
        GemmMixed(GemmType::kF32, gt, gt, false, false, rows, a.v_head_size, T, 1.0f,
                  scores.data(), T, v, a.v_stride[2], 0.0f, y, a.y_stride[2], SerialParallel());
      }
    }
  });
}

int64_t RotaryEmbedding(FloatStorage type, const void* x, void* y, const void* cos_cache,
                        const void* sin_cache, const int64_t* position_ids, int64_t cache_rows,
                        int64_t batch, int64_t seq, int64_t heads, int64_t head_size,
                        int64_t rotary_dim, bool interleaved, const int64_t stride[3],
                        const Parallel& parallel) {
  const int64_t units = batch * seq;
  if (position_ids) {
    for (int64_t u = 0; u < units; ++u) {
      if (position_ids[u] < 0 || position_ids[u] >= cache_rows) return u;
    }
  }
  if (units <= 0 || heads <= 0 || head_size <= 0) return -1;
  const int64_t half = rotary_dim / 2;
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / std::max<int64_t>(1, heads * head_size));
  const int64_t tasks = (units + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    // cos, sin [half]; in, out [head_size]; interleaved de-interleaved halves [2 * half].
    std::vector<float> buf(static_cast<size_t>(2 * half + 2 * head_size + 4 * half + 1));
    float* c = buf.data();
    float* s = c + half;
    float* in = s + half;
    float* out = in + head_size;
    float* x1 = out + head_size;
    float* x2 = x1 + half;
    float* o1 = x2 + half;
    float* o2 = o1 + half;
    for (int64_t u = t0 * per_task; u < std::min(units, t1 * per_task); ++u) {
      const int64_t b = u / seq, sq = u % seq;
      const int64_t row = position_ids ? position_ids[u] : u;
      LoadRow(type, At(cos_cache, row * half, type), c, half);
      LoadRow(type, At(sin_cache, row * half, type), s, half);
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t off = b * stride[0] + sq * stride[1] + h * stride[2];
        LoadRow(type, At(x, off, type), in, head_size);
        if (interleaved) {
          for (int64_t t = 0; t < half; ++t) {
            x1[t] = in[2 * t];
            x2[t] = in[2 * t + 1];
          }
          HWY_DYNAMIC_DISPATCH(RotateRowImpl)(x1, x2, c, s, o1, o2, half);
          for (int64_t t = 0; t < half; ++t) {
            out[2 * t] = o1[t];
            out[2 * t + 1] = o2[t];
          }
        } else {
          HWY_DYNAMIC_DISPATCH(RotateRowImpl)(in, in + half, c, s, out, out + half, half);
        }
        for (int64_t d = rotary_dim; d < head_size; ++d) out[d] = in[d];
        StoreRow(type, out, At(y, off, type), head_size);
      }
    }
  });
  return -1;
}

void RmsNormalizeRows(FloatStorage x_type, const void* x, FloatStorage y_type, void* y,
                      int64_t rows, int64_t n, const float* scale, float epsilon,
                      const Parallel& parallel) {
  if (rows <= 0 || n <= 0) return;
  const int64_t per_task = std::max<int64_t>(1, kTaskElements / n);
  const int64_t tasks = (rows + per_task - 1) / per_task;
  parallel.For(tasks, [&](int64_t t0, int64_t t1) {
    std::vector<float> in_buf, out_buf;
    if (x_type != FloatStorage::kF32) in_buf.resize(static_cast<size_t>(n));
    if (y_type != FloatStorage::kF32) out_buf.resize(static_cast<size_t>(n));
    for (int64_t r = t0 * per_task; r < std::min(rows, t1 * per_task); ++r) {
      const float* xr;
      if (x_type == FloatStorage::kF32) {
        xr = static_cast<const float*>(x) + r * n;
      } else {
        LoadRow(x_type, At(x, r * n, x_type), in_buf.data(), n);
        xr = in_buf.data();
      }
      const double mean_sq = HWY_DYNAMIC_DISPATCH(SumSquaresImpl)(xr, n) / static_cast<double>(n);
      const float inv = static_cast<float>(1.0 / std::sqrt(mean_sq + static_cast<double>(epsilon)));
      if (y_type == FloatStorage::kF32) {
        HWY_DYNAMIC_DISPATCH(ScaleMulRowImpl)(xr, scale, inv, static_cast<float*>(y) + r * n, n);
      } else {
        HWY_DYNAMIC_DISPATCH(ScaleMulRowImpl)(xr, scale, inv, out_buf.data(), n);
        StoreRow(y_type, out_buf.data(), At(y, r * n, y_type), n);
      }
    }
  });
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
