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

#include "kernels/elementwise/chain.h"
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
constexpr size_t kGroup = 4;  // vectors per pass through the steps

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

enum class Storage { kF32, kHalf, kBF16 };

template <Storage S, typename T>
HWY_INLINE VF LoadAs(const T* p) {
  if constexpr (S == Storage::kF32) {
    return hn::LoadU(DF(), p);
  } else if constexpr (S == Storage::kHalf) {
    return f16vec::LoadHalf(p);
  } else {
    return f16vec::LoadBF16(p);
  }
}

template <Storage S, typename T>
HWY_INLINE void StoreAs(VF v, T* p) {
  if constexpr (S == Storage::kF32) {
    hn::StoreU(v, DF(), p);
  } else if constexpr (S == Storage::kHalf) {
    f16vec::StoreHalf(v, p);
  } else {
    f16vec::StoreBF16(v, p);
  }
}

// What the step's 16-bit output holds: its float32 result rounded to the storage format.
template <Storage S>
HWY_INLINE VF Round(VF v) {
  if constexpr (S == Storage::kF32) {
    return v;
  } else if constexpr (S == Storage::kHalf) {
    return f16vec::RoundToHalf(v);
  } else {
    return f16vec::RoundToBF16(v);
  }
}

// One group of kGroup vectors at in / out (out may equal in). slots: kChainMaxSlots * kGroup
// vectors.
template <Storage S, bool kRoundAll, typename T>
HWY_INLINE void RunGroup(const Step* steps, int num_steps, const T* in, T* out,
                         float* HWY_RESTRICT slots) {
  const DF d;
  const size_t N = hn::Lanes(d);
  const VF x0 = LoadAs<S>(in), x1 = LoadAs<S>(in + N);
  const VF x2 = LoadAs<S>(in + 2 * N), x3 = LoadAs<S>(in + 3 * N);
  VF r0 = x0, r1 = x1, r2 = x2, r3 = x3;
  for (int k = 0; k < num_steps; ++k) {
    const Step& s = steps[k];
    if (s.kind == Step::Kind::kClip) {
      // ClipF32's blends, in its order.
      const VF lo = hn::Set(d, s.lo), hi = hn::Set(d, s.hi);
      auto clip = [&](VF v) {
        v = hn::IfThenElse(hn::Lt(v, lo), lo, v);
        return hn::IfThenElse(hn::Gt(v, hi), hi, v);
      };
      r0 = clip(r0);
      r1 = clip(r1);
      r2 = clip(r2);
      r3 = clip(r3);
    } else if (s.kind == Step::Kind::kRelu) {
      const VF zero = hn::Zero(d);
      r0 = hn::IfThenZeroElse(hn::Lt(r0, zero), r0);
      r1 = hn::IfThenZeroElse(hn::Lt(r1, zero), r1);
      r2 = hn::IfThenZeroElse(hn::Lt(r2, zero), r2);
      r3 = hn::IfThenZeroElse(hn::Lt(r3, zero), r3);
    } else {
      VF o0, o1, o2, o3;
      if (s.operand == Step::Operand::kConstant) {
        o0 = o1 = o2 = o3 = hn::Set(d, s.constant);
      } else if (s.operand == Step::Operand::kInput) {
        o0 = x0;
        o1 = x1;
        o2 = x2;
        o3 = x3;
      } else {
        const float* p = slots + static_cast<size_t>(s.operand_slot) * kGroup * N;
        o0 = hn::Load(d, p);
        o1 = hn::Load(d, p + N);
        o2 = hn::Load(d, p + 2 * N);
        o3 = hn::Load(d, p + 3 * N);
      }
      if (s.running_is_lhs) {
        r0 = Arith(s.kind, r0, o0);
        r1 = Arith(s.kind, r1, o1);
        r2 = Arith(s.kind, r2, o2);
        r3 = Arith(s.kind, r3, o3);
      } else {
        r0 = Arith(s.kind, o0, r0);
        r1 = Arith(s.kind, o1, r1);
        r2 = Arith(s.kind, o2, r2);
        r3 = Arith(s.kind, o3, r3);
      }
    }
    // Rounded to 16 bits after an arithmetic step. Not after Clip / Relu when their bounds are
    // 16-bit values (kRoundAll false): they return their 16-bit input or such a bound, which
    // rounding keeps. Not after the last step: the store rounds it the same way.
    const bool arithmetic = s.kind != Step::Kind::kClip && s.kind != Step::Kind::kRelu;
    if (S != Storage::kF32 && (arithmetic || kRoundAll) && k + 1 < num_steps) {
      r0 = Round<S>(r0);
      r1 = Round<S>(r1);
      r2 = Round<S>(r2);
      r3 = Round<S>(r3);
    }
    if (s.save_slot >= 0) {
      float* p = slots + static_cast<size_t>(s.save_slot) * kGroup * N;
      hn::Store(r0, d, p);
      hn::Store(r1, d, p + N);
      hn::Store(r2, d, p + 2 * N);
      hn::Store(r3, d, p + 3 * N);
    }
  }
  StoreAs<S>(r0, out);
  StoreAs<S>(r1, out + N);
  StoreAs<S>(r2, out + 2 * N);
  StoreAs<S>(r3, out + 3 * N);
}

template <Storage S, bool kRoundAll = false, typename T>
void RunChain(const Step* steps, int num_steps, const T* x, T* y, size_t n) {
  const DF d;
  const size_t per_group = kGroup * hn::Lanes(d);
  HWY_ALIGN float slots[kChainMaxSlots * kGroup * kMaxLanes];
  size_t i = 0;
  for (; i + per_group <= n; i += per_group) {
    RunGroup<S, kRoundAll>(steps, num_steps, x + i, y + i, slots);
  }
  if (i < n) {
    // Lanes past n hold zeros: whatever the steps make of them is dropped.
    HWY_ALIGN T tail[kGroup * kMaxLanes] = {};
    std::memcpy(tail, x + i, (n - i) * sizeof(T));
    RunGroup<S, kRoundAll>(steps, num_steps, tail, tail, slots);
    std::memcpy(y + i, tail, (n - i) * sizeof(T));
  }
}

void ChainF32Impl(const Step* steps, int num_steps, const float* x, float* y, size_t n) {
  RunChain<Storage::kF32>(steps, num_steps, x, y, n);
}

void Chain16Impl(Float16Kind kind, const Step* steps, int num_steps, const uint16_t* x,
                 uint16_t* y, size_t n, bool round_all) {
  if (kind == Float16Kind::kBFloat16) {
    if (round_all) return RunChain<Storage::kBF16, true>(steps, num_steps, x, y, n);
    return RunChain<Storage::kBF16>(steps, num_steps, x, y, n);
  }
  if (round_all) return RunChain<Storage::kHalf, true>(steps, num_steps, x, y, n);
  RunChain<Storage::kHalf>(steps, num_steps, x, y, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace simplecpp::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace simplecpp::kernels {

HWY_EXPORT(ChainF32Impl);
HWY_EXPORT(Chain16Impl);

void ChainF32(const ChainStepF32* steps, int num_steps, const float* x, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ChainF32Impl)(steps, num_steps, x, y, static_cast<size_t>(n));
}

void Chain16(Float16Kind kind, const ChainStepF32* steps, int num_steps, const uint16_t* x,
             uint16_t* y, int64_t n) {
  if (n <= 0) return;
  // Clip bounds that are not 16-bit values (Clip-6's float attributes) make Clip's result a
  // value that must be rounded like any other step's.
  bool round_all = false;
  for (int k = 0; k < num_steps; ++k) {
    const ChainStepF32& s = steps[k];
    if (s.kind != ChainStepF32::Kind::kClip) continue;
    for (const float bound : {s.lo, s.hi}) {
      const float rounded = Widen16One(kind, Narrow16One(kind, bound));
      round_all |= !(rounded == bound || (std::isnan(rounded) && std::isnan(bound)));
    }
  }
  HWY_DYNAMIC_DISPATCH(Chain16Impl)(kind, steps, num_steps, x, y, static_cast<size_t>(n),
                                    round_all);
}

}  // namespace simplecpp::kernels
#endif  // HWY_ONCE
