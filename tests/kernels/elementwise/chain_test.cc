// Tests for kernels/elementwise/chain.h on every compiled Highway target: the register chain
// against a scalar evaluation of the same steps (each step one float32 rounding, as its op
// defines it, then on 16-bit storage one rounding to 16 bits) and against the step-by-step
// kernels it replaces (BinaryF32, ClipF32, UnaryF32 kRelu / kHardSigmoid / kHardSwish; Binary16,
// Clip16, Unary16), bit for bit, on sizes around the group width, in place and not, with
// infinities, NaN, signed zeros, subnormals and values where the steps tie.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/chain.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/float16/float16.h"
#include "kernels/targets.h"

namespace simplecpp::kernels {
namespace {

using Step = ChainStepF32;

Step Binary(Step::Kind kind, Step::Operand operand, float constant = 0.0f, bool lhs = true,
            int operand_slot = -1, int save_slot = -1) {
  Step s;
  s.kind = kind;
  s.operand = operand;
  s.constant = constant;
  s.running_is_lhs = lhs;
  s.operand_slot = static_cast<int8_t>(operand_slot);
  s.save_slot = static_cast<int8_t>(save_slot);
  return s;
}

Step Clip(float lo, float hi) {
  Step s;
  s.kind = Step::Kind::kClip;
  s.lo = lo;
  s.hi = hi;
  return s;
}

Step Relu() {
  Step s;
  s.kind = Step::Kind::kRelu;
  return s;
}

Step Hard(Step::Kind kind, float alpha, float beta) {
  Step s;
  s.kind = kind;
  s.lo = alpha;
  s.hi = beta;
  return s;
}

UnaryOp ToUnaryOp(Step::Kind kind) {
  return kind == Step::Kind::kHardSwish ? UnaryOp::kHardSwish : UnaryOp::kHardSigmoid;
}

UnaryParams HardParams(const Step& s) {
  UnaryParams p;
  p.alpha = s.lo;
  p.beta = s.hi;
  return p;
}

struct Program {
  std::string name;
  std::vector<Step> steps;
};

std::vector<Program> Programs() {
  using K = Step::Kind;
  using O = Step::Operand;
  return {
      // x * Clip(x + 3, 0, 6) / 6, the Mul's running value on the right (Mul(x, clip)).
      {"hardswish",
       {Binary(K::kAdd, O::kConstant, 3.0f), Clip(0.0f, 6.0f),
        Binary(K::kMul, O::kInput, 0.0f, false), Binary(K::kDiv, O::kConstant, 6.0f)}},
      // v = x * 0.75 + 0.5 kept in slot 0, then v * Clip(v + 3, 0, 6) / 6.
      {"affine hardswish",
       {Binary(K::kMul, O::kConstant, 0.75f), Binary(K::kAdd, O::kConstant, 0.5f, true, -1, 0),
        Binary(K::kAdd, O::kConstant, 3.0f), Clip(0.0f, 6.0f),
        Binary(K::kMul, O::kSlot, 0.0f, true, 0), Binary(K::kDiv, O::kConstant, 6.0f)}},
      // Relu(1.5 - x), then 1 / that, then minus x: the running value on the right.
      {"sub relu div",
       {Binary(K::kSub, O::kConstant, 1.5f, false), Relu(),
        Binary(K::kDiv, O::kConstant, 1.0f, false), Binary(K::kSub, O::kInput)}},
      // Two slots, a clip with lo > hi (gives hi) and a division by the input.
      {"slots",
       {Binary(K::kAdd, O::kInput, 0.0f, true, -1, 1), Clip(2.0f, -1.0f),
        Binary(K::kMul, O::kSlot, 0.0f, false, 1, 0), Binary(K::kDiv, O::kInput),
        Binary(K::kSub, O::kSlot, 0.0f, true, 0)}},
      // NaN through Clip and Relu alone (a Max/Min clip would turn it into a bound).
      {"clip relu", {Clip(-2.0f, 4.0f), Relu(), Binary(K::kAdd, O::kConstant, 1.0f)}},
      // Bounds that no 16-bit format holds (Clip-6's float attributes): Clip's result is rounded.
      {"inexact clip", {Clip(0.1f, 5.3f), Binary(K::kMul, O::kConstant, 1.5f)}},
      // The HardSwish / HardSigmoid ops as steps, between arithmetic ones.
      {"hardswish op",
       {Binary(K::kAdd, O::kConstant, 0.25f), Hard(K::kHardSwish, 1.0f / 6.0f, 0.5f),
        Binary(K::kMul, O::kInput)}},
      {"hardsigmoid op",
       {Binary(K::kMul, O::kConstant, 1.5f), Hard(K::kHardSigmoid, 0.2f, 0.5f),
        Binary(K::kMul, O::kInput, 0.0f, false)}},
  };
}

float Apply(Step::Kind kind, float a, float b) {
  volatile float r;  // one rounding per step, never contracted with the next
  switch (kind) {
    case Step::Kind::kAdd: r = a + b; break;
    case Step::Kind::kSub: r = a - b; break;
    case Step::Kind::kMul: r = a * b; break;
    default: r = a / b; break;
  }
  return r;
}

// The steps on one element, each as its op defines it; `round` is applied to every step's result
// (the identity for float32 storage).
template <typename Round>
float ScalarChain(const std::vector<Step>& steps, float x, Round round) {
  float slots[kChainMaxSlots] = {};
  float v = x;
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kClip) {
      v = v < s.lo ? s.lo : v;
      v = v > s.hi ? s.hi : v;
    } else if (s.kind == Step::Kind::kRelu) {
      v = v < 0.0f ? 0.0f : v;
    } else if (s.kind == Step::Kind::kHardSigmoid || s.kind == Step::Kind::kHardSwish) {
      // As the op computes it on this target (one element alone: a lane does not depend on its
      // neighbours; whether MulAdd fuses depends on the target).
      float r = 0.0f;
      UnaryF32(ToUnaryOp(s.kind), HardParams(s), &v, &r, 1);
      v = r;
    } else {
      const float o = s.operand == Step::Operand::kConstant ? s.constant
                      : s.operand == Step::Operand::kInput  ? x
                                                            : slots[s.operand_slot];
      v = s.running_is_lhs ? Apply(s.kind, v, o) : Apply(s.kind, o, v);
    }
    v = round(v);
    if (s.save_slot >= 0) slots[s.save_slot] = v;
  }
  return v;
}

float ScalarChain(const std::vector<Step>& steps, float x) {
  return ScalarChain(steps, x, [](float v) { return v; });
}

BinaryOp ToBinaryOp(Step::Kind kind) {
  switch (kind) {
    case Step::Kind::kAdd: return BinaryOp::kAdd;
    case Step::Kind::kSub: return BinaryOp::kSub;
    case Step::Kind::kMul: return BinaryOp::kMul;
    default: return BinaryOp::kDiv;
  }
}

// The same steps through the kernels the unfused ops call, one pass each.
std::vector<float> StepByStep(const std::vector<Step>& steps, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> v = x;
  std::vector<std::vector<float>> slots(kChainMaxSlots, std::vector<float>(x.size()));
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kClip) {
      ClipF32(v.data(), v.data(), n, s.lo, s.hi);
    } else if (s.kind == Step::Kind::kRelu) {
      UnaryF32(UnaryOp::kRelu, UnaryParams{}, v.data(), v.data(), n);
    } else if (s.kind == Step::Kind::kHardSigmoid || s.kind == Step::Kind::kHardSwish) {
      UnaryF32(ToUnaryOp(s.kind), HardParams(s), v.data(), v.data(), n);
    } else {
      const float* o = s.operand == Step::Operand::kConstant ? &s.constant
                       : s.operand == Step::Operand::kInput  ? x.data()
                                                             : slots[s.operand_slot].data();
      const int64_t step = s.operand == Step::Operand::kConstant ? 0 : 1;
      if (s.running_is_lhs) {
        BinaryF32(ToBinaryOp(s.kind), v.data(), 1, o, step, v.data(), n);
      } else {
        BinaryF32(ToBinaryOp(s.kind), o, step, v.data(), 1, v.data(), n);
      }
    }
    if (s.save_slot >= 0) slots[s.save_slot] = v;
  }
  return v;
}

// The same through the 16-bit kernels.
std::vector<uint16_t> StepByStep16(Float16Kind kind, const std::vector<Step>& steps,
                                   const std::vector<uint16_t>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> v = x;
  std::vector<std::vector<uint16_t>> slots(kChainMaxSlots, std::vector<uint16_t>(x.size()));
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kClip) {
      Clip16(kind, v.data(), v.data(), n, s.lo, s.hi);
    } else if (s.kind == Step::Kind::kRelu) {
      Unary16(kind, UnaryOp::kRelu, UnaryParams{}, v.data(), v.data(), n);
    } else if (s.kind == Step::Kind::kHardSigmoid || s.kind == Step::Kind::kHardSwish) {
      Unary16(kind, ToUnaryOp(s.kind), HardParams(s), v.data(), v.data(), n);
    } else {
      const uint16_t constant = Narrow16One(kind, s.constant);
      const uint16_t* o = s.operand == Step::Operand::kConstant ? &constant
                          : s.operand == Step::Operand::kInput  ? x.data()
                                                                : slots[s.operand_slot].data();
      const int64_t step = s.operand == Step::Operand::kConstant ? 0 : 1;
      if (s.running_is_lhs) {
        Binary16(kind, ToBinaryOp(s.kind), v.data(), 1, o, step, v.data(), n);
      } else {
        Binary16(kind, ToBinaryOp(s.kind), o, step, v.data(), 1, v.data(), n);
      }
    }
    if (s.save_slot >= 0) slots[s.save_slot] = v;
  }
  return v;
}

bool SameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(float)) == 0;  // -0 and +0 differ
}

std::vector<float> Inputs(int64_t n, uint32_t seed) {
  const float specials[] = {0.0f,
                            -0.0f,
                            -3.0f,
                            3.0f,
                            1.5f,
                            -1.5f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            1e-30f,
                            -6.0f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-9.0f, 9.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[i] = rng() % 4 == 0 ? specials[rng() % (sizeof(specials) / sizeof(float))] : dist(rng);
  }
  return x;
}

TEST_CASE("ChainF32 equals the scalar steps and the step-by-step kernels on every target") {
  std::vector<int64_t> sizes;
  for (int64_t n = 0; n <= 70; ++n) sizes.push_back(n);
  // Around the AVX-512 group (8 vectors) and the 4-vector passes after it.
  for (int64_t n : {127, 128, 129, 191, 192, 193, 255, 1000}) sizes.push_back(n);
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const Program& p : Programs()) {
      CAPTURE(p.name);
      for (int64_t n : sizes) {
        CAPTURE(n);
        const std::vector<float> x = Inputs(n, static_cast<uint32_t>(n) * 31 + 5);
        std::vector<float> y(static_cast<size_t>(n), -7.0f);
        ChainF32(p.steps.data(), static_cast<int>(p.steps.size()), x.data(), y.data(), n);
        std::vector<float> in_place = x;
        ChainF32(p.steps.data(), static_cast<int>(p.steps.size()), in_place.data(),
                 in_place.data(), n);
        const std::vector<float> kernels = StepByStep(p.steps, x);
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 3; ++i) {
          const float want = ScalarChain(p.steps, x[i]);
          const bool ok = SameFloat(y[i], want) && SameFloat(in_place[i], want) &&
                          SameFloat(kernels[i], want);
          if (!ok) {
            ++bad;
            FAIL_CHECK("x[" << i << "] = " << x[i] << ": chain " << y[i] << ", in place "
                            << in_place[i] << ", kernels " << kernels[i] << ", scalar " << want);
          }
        }
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("Chain16 equals the scalar steps and the 16-bit kernels on every target") {
  std::vector<int64_t> sizes;
  for (int64_t n = 0; n <= 70; ++n) sizes.push_back(n);
  // Around the AVX-512 group (8 vectors) and the 4-vector passes after it.
  for (int64_t n : {127, 128, 129, 191, 192, 193, 255, 1000}) sizes.push_back(n);
  for (const Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
    CAPTURE(static_cast<int>(kind));
    auto round = [kind](float v) { return Widen16One(kind, Narrow16One(kind, v)); };
    for (const auto& t : CompiledTargets()) {
      ScopedTarget st(t);
      CAPTURE(t.name);
      for (const Program& p : Programs()) {
        CAPTURE(p.name);
        for (int64_t n : sizes) {
          CAPTURE(n);
          const std::vector<float> xf = Inputs(n, static_cast<uint32_t>(n) * 17 + 3);
          std::vector<uint16_t> x(xf.size());
          for (size_t i = 0; i < x.size(); ++i) x[i] = Narrow16One(kind, xf[i]);
          std::vector<uint16_t> y(x.size(), 0x7E7Eu);
          Chain16(kind, p.steps.data(), static_cast<int>(p.steps.size()), x.data(), y.data(), n);
          std::vector<uint16_t> in_place = x;
          Chain16(kind, p.steps.data(), static_cast<int>(p.steps.size()), in_place.data(),
                  in_place.data(), n);
          const std::vector<uint16_t> kernels = StepByStep16(kind, p.steps, x);
          // From float32 (rounded first, in the same pass): the bits of Chain16 on the rounded x.
          std::vector<uint16_t> from_f32(x.size(), 0x7E7Eu);
          Chain16FromF32(kind, p.steps.data(), static_cast<int>(p.steps.size()),
                         Chain16RoundsAll(kind, p.steps.data(), static_cast<int>(p.steps.size())),
                         xf.data(), from_f32.data(), n);
          CHECK(from_f32 == y);
          int bad = 0;
          for (int64_t i = 0; i < n && bad < 3; ++i) {
            const float want = ScalarChain(p.steps, Widen16One(kind, x[i]), round);
            const bool ok = SameFloat(Widen16One(kind, y[i]), want) &&
                            SameFloat(Widen16One(kind, in_place[i]), want) &&
                            SameFloat(Widen16One(kind, kernels[i]), want);
            if (!ok) {
              ++bad;
              FAIL_CHECK("x[" << i << "] = " << Widen16One(kind, x[i]) << ": chain "
                              << Widen16One(kind, y[i]) << ", in place "
                              << Widen16One(kind, in_place[i]) << ", kernels "
                              << Widen16One(kind, kernels[i]) << ", scalar " << want);
            }
          }
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEST_CASE("Chain16UseReciprocals keeps every 16-bit result and divides where it must") {
  // Every 16-bit pattern through HardSwish spelled out (x * clip(x + 3, 0, 6) / 6) and through a
  // division by a constant alone, as written and as rewritten; 6 (exact as a product for both
  // kinds) becomes a multiplication, 1.2 (not exact for float16) stays a division for float16.
  std::vector<uint16_t> x(65536);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(i);
  using K = Step::Kind;
  using O = Step::Operand;
  for (const Float16Kind kind : {Float16Kind::kHalf, Float16Kind::kBFloat16}) {
    CAPTURE(static_cast<int>(kind));
    for (const float c : {6.0f, 1.2f, 3.0f}) {
      CAPTURE(c);
      Step clip;
      clip.kind = K::kClip;
      clip.lo = 0.0f;
      clip.hi = 6.0f;
      const std::vector<std::vector<Step>> programs = {
          {Binary(K::kAdd, O::kConstant, 3.0f), clip, Binary(K::kMul, O::kInput, 0.0f, false),
           Binary(K::kDiv, O::kConstant, c)},
          {Binary(K::kDiv, O::kConstant, c)}};
      for (const auto& written : programs) {
        std::vector<Step> rewritten = written;
        const int n = static_cast<int>(written.size());
        Chain16UseReciprocals(kind, rewritten.data(), n);
        const Step& last = rewritten.back();
        const bool divides = last.kind == K::kDiv;
        if (c == 6.0f || c == 3.0f) CHECK_FALSE(divides);
        if (c == 1.2f && kind == Float16Kind::kHalf) CHECK(divides);
        if (!divides) CHECK(last.constant == 1.0f / c);
        for (const auto& t : CompiledTargets()) {
          ScopedTarget st(t);
          CAPTURE(t.name);
          std::vector<uint16_t> want(x.size()), got(x.size());
          Chain16(kind, written.data(), n, x.data(), want.data(), 65536);
          Chain16(kind, rewritten.data(), n, x.data(), got.data(), 65536);
          int bad = 0;
          for (size_t i = 0; i < x.size() && bad < 3; ++i) {
            const float w = Widen16One(kind, want[i]), g = Widen16One(kind, got[i]);
            if (want[i] != got[i] && !(std::isnan(w) && std::isnan(g))) {
              ++bad;
              FAIL_CHECK("x = " << Widen16One(kind, x[i]) << ": written " << w << ", rewritten "
                                << g);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace simplecpp::kernels
