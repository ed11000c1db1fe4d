// Chain programs in registers (kernels/elementwise/chain.h): four vectors at a time go through
// every step (one branch per step and four vectors, not per element), the saved values in a
// small aligned buffer; the tail runs the same code on a zero-padded copy. 16-bit storage is
// widened on load, rounded to 16 bits after every step in registers with the conversions of
// kernels/float16/float16-inl.h (the bulk Narrow16 / Widen16 rounding), and stored narrowed.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise/chain.cc"
#include "kernels/hwy_policy.h"
// Policy first: it decides what foreach_target compiles.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

#include "kernels/elementwise/chain.h"
#include "kernels/elementwise/elementwise.h"
// Per target, before this file's own HWY_BEFORE_NAMESPACE.
#include "kernels/float16/float16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace simplecpp::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
using Step = ChainStepF32;

constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);
// Vectors per pass through the steps: as many as the registers hold with the inputs kept; the
// rest of a run goes in passes of kTailGroup.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kGroup = 8;
#else
constexpr size_t kGroup = 4;
#endif
constexpr size_t kTailGroup = 4;

// The binary steps as BinaryF32's vector loop computes them (kernels/elementwise/
// elementwise_binary.cc), whose scalar tail gives the same IEEE results.
HWY_INLINE VF Arith(Step::Kind kind, VF a, VF b) {
  switch (kind) {
    case Step::Kind::kAdd: return hn::Add(a, b);
    case Step::Kind::kSub: return hn::Sub(a, b);
    case Step::Kind::kMul: return hn::Mul(a, b);
    default: return hn::Div(a, b);
  }
}

using f16vec::LoadAs;
using f16vec::RoundAs;
using f16vec::Storage;
using f16vec::StoreAs;

// One group of G vectors at in / out (out may equal in). slots: kChainMaxSlots * G vectors. The
// vectors of a group are independent chains, so they hide each step's latency (Div's above all)
// from one another.
// A float32 input with 16-bit S is rounded to S first (as Narrow16 would store it).
template <size_t kGroup, Storage S, bool kRoundAll, typename TIn, typename T>
HWY_INLINE void RunGroup(const Step* steps, int num_steps, const TIn* in, T* out,
                         float* HWY_RESTRICT slots) {
  const DF d;
  const size_t N = hn::Lanes(d);
  VF x[kGroup], r[kGroup];
  if constexpr (S != Storage::kF32 && std::is_same_v<TIn, float>) {
    for (size_t v = 0; v < kGroup; ++v) r[v] = x[v] = RoundAs<S>(hn::LoadU(d, in + v * N));
  } else {
    for (size_t v = 0; v < kGroup; ++v) r[v] = x[v] = LoadAs<S>(in + v * N);
  }
  for (int k = 0; k < num_steps; ++k) {
    const Step& s = steps[k];
    if (s.kind == Step::Kind::kClip) {
      // ClipF32's blends, in its order.
      const VF lo = hn::Set(d, s.lo), hi = hn::Set(d, s.hi);
      for (size_t v = 0; v < kGroup; ++v) {
        r[v] = hn::IfThenElse(hn::Lt(r[v], lo), lo, r[v]);
        r[v] = hn::IfThenElse(hn::Gt(r[v], hi), hi, r[v]);
      }
    } else if (s.kind == Step::Kind::kRelu) {
      const VF zero = hn::Zero(d);
      for (size_t v = 0; v < kGroup; ++v) r[v] = hn::IfThenZeroElse(hn::Lt(r[v], zero), r[v]);
    } else if (s.kind == Step::Kind::kHardSigmoid || s.kind == Step::Kind::kHardSwish) {
      // UnaryF32's vector code; a vector with a NaN lane goes through UnaryF32 itself (its
      // scalar reference for those lanes; a lane's result does not depend on its neighbours).
      const VF alpha = hn::Set(d, s.lo), beta = hn::Set(d, s.hi);
      const VF zero = hn::Zero(d), one = hn::Set(d, 1.0f);
      const bool swish = s.kind == Step::Kind::kHardSwish;
      for (size_t v = 0; v < kGroup; ++v) {
        const VF h = hn::Min(hn::Max(hn::MulAdd(r[v], alpha, beta), zero), one);
        const VF out = swish ? hn::Mul(r[v], h) : h;
        if (HWY_UNLIKELY(!hn::AllFalse(d, hn::IsNaN(r[v])))) {
          HWY_ALIGN float lanes[kMaxLanes];
          hn::Store(r[v], d, lanes);
          UnaryParams params;
          params.alpha = s.lo;
          params.beta = s.hi;
          UnaryF32(swish ? UnaryOp::kHardSwish : UnaryOp::kHardSigmoid, params, lanes, lanes,
                   static_cast<int64_t>(N));
          r[v] = hn::Load(d, lanes);
        } else {
          r[v] = out;
        }
      }
    } else {
      VF o[kGroup];
      if (s.operand == Step::Operand::kConstant) {
        const VF c = hn::Set(d, s.constant);
        for (size_t v = 0; v < kGroup; ++v) o[v] = c;
      } else if (s.operand == Step::Operand::kInput) {
        for (size_t v = 0; v < kGroup; ++v) o[v] = x[v];
      } else {
        const float* p = slots + static_cast<size_t>(s.operand_slot) * kGroup * N;
        for (size_t v = 0; v < kGroup; ++v) o[v] = hn::Load(d, p + v * N);
      }
      if (s.running_is_lhs) {
        for (size_t v = 0; v < kGroup; ++v) r[v] = Arith(s.kind, r[v], o[v]);
      } else {
        for (size_t v = 0; v < kGroup; ++v) r[v] = Arith(s.kind, o[v], r[v]);
      }
    }
    // Rounded to 16 bits after an arithmetic step. Not after Clip / Relu when their bounds are
    // 16-bit values (kRoundAll false): they return their 16-bit input or such a bound, which
    // rounding keeps. Not after the last step: the store rounds it the same way.
    const bool arithmetic = s.kind != Step::Kind::kClip && s.kind != Step::Kind::kRelu;
    if (S != Storage::kF32 && (arithmetic || kRoundAll) && k + 1 < num_steps) {
      for (size_t v = 0; v < kGroup; ++v) r[v] = RoundAs<S>(r[v]);
    }
    if (s.save_slot >= 0) {
      float* p = slots + static_cast<size_t>(s.save_slot) * kGroup * N;
      for (size_t v = 0; v < kGroup; ++v) hn::Store(r[v], d, p + v * N);
    }
  }
  for (size_t v = 0; v < kGroup; ++v) StoreAs<S>(r[v], out + v * N);
}

template <Storage S, bool kRoundAll = false, typename TIn, typename T>
void RunChain(const Step* steps, int num_steps, const TIn* x, T* y, size_t n) {
  const DF d;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN float slots[kChainMaxSlots * kGroup * kMaxLanes];
  size_t i = 0;
  for (; i + kGroup * N <= n; i += kGroup * N) {
    RunGroup<kGroup, S, kRoundAll>(steps, num_steps, x + i, y + i, slots);
  }
  for (; i + kTailGroup * N <= n; i += kTailGroup * N) {
    RunGroup<kTailGroup, S, kRoundAll>(steps, num_steps, x + i, y + i, slots);
  }
  if (i < n) {
    // Lanes past n hold zeros: whatever the steps make of them is dropped.
    HWY_ALIGN TIn tail_in[kTailGroup * kMaxLanes] = {};
    HWY_ALIGN T tail_out[kTailGroup * kMaxLanes];
    std::memcpy(tail_in, x + i, (n - i) * sizeof(TIn));
    RunGroup<kTailGroup, S, kRoundAll>(steps, num_steps, tail_in, tail_out, slots);
    std::memcpy(y + i, tail_out, (n - i) * sizeof(T));
  }
}

void ChainF32Impl(const Step* steps, int num_steps, const float* x, float* y, size_t n) {
  RunChain<Storage::kF32>(steps, num_steps, x, y, n);
}

// x: 16-bit values of `kind`, or float32 rounded to them first.
template <typename TIn>
void RunChain16(Float16Kind kind, const Step* steps, int num_steps, const TIn* x, uint16_t* y,
                size_t n, bool round_all) {
  if (kind == Float16Kind::kBFloat16) {
    if (round_all) return RunChain<Storage::kBF16, true>(steps, num_steps, x, y, n);
    return RunChain<Storage::kBF16>(steps, num_steps, x, y, n);
  }
  if (round_all) return RunChain<Storage::kHalf, true>(steps, num_steps, x, y, n);
  RunChain<Storage::kHalf>(steps, num_steps, x, y, n);
}

void Chain16Impl(Float16Kind kind, const Step* steps, int num_steps, const uint16_t* x,
                 uint16_t* y, size_t n, bool round_all) {
  RunChain16(kind, steps, num_steps, x, y, n, round_all);
}

void Chain16FromF32Impl(Float16Kind kind, const Step* steps, int num_steps, const float* x,
                        uint16_t* y, size_t n, bool round_all) {
  RunChain16(kind, steps, num_steps, x, y, n, round_all);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(ChainF32Impl);
HWY_EXPORT(Chain16Impl);
HWY_EXPORT(Chain16FromF32Impl);

void ChainF32(const ChainStepF32* steps, int num_steps, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ChainF32Impl)(steps, num_steps, x, y, static_cast<size_t>(n));
}

namespace {

// Whether round16(v * (1 / c)) == round16(v / c) for every 16-bit value v of `kind` (both NaN
// counts as equal: the chain's NaNs are not bit-exact across targets anyway).
bool ReciprocalExact16(Float16Kind kind, float c) {
  const float r = 1.0f / c;
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float v = Widen16One(kind, static_cast<uint16_t>(bits));
    if (std::isnan(v)) continue;
    const uint16_t by_div = Narrow16One(kind, v / c);
    const uint16_t by_mul = Narrow16One(kind, v * r);
    if (by_div != by_mul &&
        !(std::isnan(Widen16One(kind, by_div)) && std::isnan(Widen16One(kind, by_mul)))) {
      return false;
    }
  }
  return true;
}

}  // namespace

void Chain16UseReciprocals(Float16Kind kind, ChainStepF32* steps, int num_steps) {
  // The answers by kind and c's bits: a model's chains share a few constants (6 for HardSwish).
  static std::mutex mutex;
  static std::map<uint64_t, bool> exact;
  for (int k = 0; k < num_steps; ++k) {
    ChainStepF32& s = steps[k];
    if (s.kind != ChainStepF32::Kind::kDiv || s.operand != ChainStepF32::Operand::kConstant ||
        !s.running_is_lhs) {
      continue;
    }
    uint32_t c_bits;
    std::memcpy(&c_bits, &s.constant, sizeof(c_bits));
    const uint64_t key = (static_cast<uint64_t>(kind) << 32) | c_bits;
    bool use;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = exact.find(key);
      if (it == exact.end()) it = exact.emplace(key, ReciprocalExact16(kind, s.constant)).first;
      use = it->second;
    }
    if (use) {
      s.kind = ChainStepF32::Kind::kMul;
      s.constant = 1.0f / s.constant;
    }
  }
}

bool Chain16RoundsAll(Float16Kind kind, const ChainStepF32* steps, int num_steps) {
  bool round_all = false;
  for (int k = 0; k < num_steps; ++k) {
    const ChainStepF32& s = steps[k];
    if (s.kind != ChainStepF32::Kind::kClip) continue;
    for (const float bound : {s.lo, s.hi}) {
      const float rounded = Widen16One(kind, Narrow16One(kind, bound));
      round_all |= !(rounded == bound || (std::isnan(rounded) && std::isnan(bound)));
    }
  }
  return round_all;
}

void Chain16(Float16Kind kind, const ChainStepF32* steps, int num_steps, bool round_all,
             const uint16_t* x, uint16_t* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(Chain16Impl)(kind, steps, num_steps, x, y, static_cast<size_t>(n),
                                    round_all);
}

void Chain16(Float16Kind kind, const ChainStepF32* steps, int num_steps, const uint16_t* x,
             uint16_t* y, int64_t n) {
  if (n <= 0) return;
  Chain16(kind, steps, num_steps, Chain16RoundsAll(kind, steps, num_steps), x, y, n);
}

void Chain16FromF32(Float16Kind kind, const ChainStepF32* steps, int num_steps, bool round_all,
                    const float* x, uint16_t* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(Chain16FromF32Impl)(kind, steps, num_steps, x, y, static_cast<size_t>(n),
                                           round_all);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
