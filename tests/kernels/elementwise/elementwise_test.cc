// Tests for kernels/elementwise_{unary,binary}.cc on every compiled Highway target: sizes around
// the vector width, every operand-step pattern, extreme values (inf, NaN, -0, denormals, huge),
// and the defined integer edge cases (division by zero, INT_MIN / -1, shifts past the width).
#include <doctest/doctest.h>

#include <type_traits>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "kernels/targets.h"
#include "reference/elementwise_reference.h"

namespace simplecpp::kernels {
namespace {

const int64_t kSizes[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 1000};
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct UnaryCase {
  UnaryOp op;
  const char* name;
  float lo, hi;  // random input range
  UnaryParams params;
};

std::vector<UnaryCase> UnaryCases() {
  return {
      {UnaryOp::kNeg, "Neg", -10, 10, {}},
      {UnaryOp::kAbs, "Abs", -10, 10, {}},
      {UnaryOp::kSign, "Sign", -10, 10, {}},
      {UnaryOp::kSqrt, "Sqrt", 0, 100, {}},
      {UnaryOp::kReciprocal, "Reciprocal", -10, 10, {}},
      {UnaryOp::kExp, "Exp", -87, 88, {}},
      {UnaryOp::kLog, "Log", 1e-3f, 1e3f, {}},
      {UnaryOp::kErf, "Erf", -5, 5, {}},
      {UnaryOp::kTanh, "Tanh", -10, 10, {}},
      {UnaryOp::kSigmoid, "Sigmoid", -30, 30, {}},
      {UnaryOp::kRelu, "Relu", -10, 10, {}},
      {UnaryOp::kLeakyRelu, "LeakyRelu", -10, 10, {0.1f, 0, 0}},
      {UnaryOp::kElu, "Elu", -10, 10, {1.5f, 0, 0}},
      {UnaryOp::kSelu, "Selu", -10, 10, {1.67326319217681884765625f, 0, 1.05070102214813232421875f}},
      {UnaryOp::kCelu, "Celu", -10, 10, {2.0f, 0, 0}},
      {UnaryOp::kHardSigmoid, "HardSigmoid", -10, 10, {0.2f, 0.5f, 0}},
      {UnaryOp::kHardSwish, "HardSwish", -10, 10, {}},
      {UnaryOp::kSoftplus, "Softplus", -30, 30, {}},
      {UnaryOp::kSoftsign, "Softsign", -10, 10, {}},
      {UnaryOp::kGelu, "Gelu", -8, 8, {}},
      {UnaryOp::kGeluTanh, "GeluTanh", -8, 8, {}},
      {UnaryOp::kMish, "Mish", -20, 20, {}},
      {UnaryOp::kFloor, "Floor", -10, 10, {}},
      {UnaryOp::kCeil, "Ceil", -10, 10, {}},
      {UnaryOp::kRound, "Round", -10, 10, {}},
      {UnaryOp::kSin, "Sin", -10, 10, {}},
      {UnaryOp::kCos, "Cos", -10, 10, {}},
      {UnaryOp::kTan, "Tan", -1.5f, 1.5f, {}},
      {UnaryOp::kAsin, "Asin", -1, 1, {}},
      {UnaryOp::kAcos, "Acos", -1, 1, {}},
      {UnaryOp::kAtan, "Atan", -10, 10, {}},
      {UnaryOp::kSinh, "Sinh", -10, 10, {}},
      {UnaryOp::kCosh, "Cosh", -10, 10, {}},
      {UnaryOp::kAsinh, "Asinh", -10, 10, {}},
      {UnaryOp::kAcosh, "Acosh", 1, 100, {}},
      {UnaryOp::kAtanh, "Atanh", -0.999f, 0.999f, {}},
      {UnaryOp::kThresholdedRelu, "ThresholdedRelu", -10, 10, {1.0f, 0, 0}},
      {UnaryOp::kShrink, "Shrink", -10, 10, {1.5f, 0.5f, 0}},
      {UnaryOp::kSwish, "Swish", -10, 10, {1.5f, 0, 0}},
  };
}

// |got - want| <= rtol |want| + atol, with NaN == NaN and equal infinities.
bool Close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (std::isnan(got) || std::isinf(got)) return false;
  return std::fabs(got - want) <= rtol * std::fabs(want) + atol;
}

std::vector<float> RandomFloats(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The float32 result is a rounding of the exact value: allow a few ulp plus cancellation-prone
// absolute error near 0 for the ops whose formula subtracts (checked against ONNX's atol 1e-7).
constexpr double kRtol = 2e-6;
constexpr double kAtol = 1e-7;

// fn(c) for every unary case on every compiled target (the target and op name captured).
template <typename Fn>
void ForEachTargetAndUnaryCase(const Fn& fn) {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (const UnaryCase& c : UnaryCases()) {
      const std::string op_name = c.name;
      CAPTURE(op_name);
      fn(c);
    }
  }
}

TEST_CASE("UnaryF32 matches the double reference on every target and size") {
  ForEachTargetAndUnaryCase([&](const UnaryCase& c) {
    for (int64_t n : kSizes) {
      CAPTURE(n);
      std::vector<float> x = RandomFloats(n, c.lo, c.hi, static_cast<uint32_t>(n) + 7);
      std::vector<float> y(n, -12345.0f);
      UnaryF32(c.op, c.params, x.data(), y.data(), n);
      int bad = 0;
      for (int64_t i = 0; i < n && bad < 3; ++i) {
        const double want = reference::Unary(c.op, c.params, x[i]);
        if (!Close(y[i], want, kRtol, kAtol)) {
          ++bad;
          FAIL_CHECK("x=" << x[i] << " got " << y[i] << " want " << want);
        }
      }
      // In place gives the same result.
      std::vector<float> z = x;
      UnaryF32(c.op, c.params, z.data(), z.data(), n);
      CHECK((n == 0 || std::memcmp(z.data(), y.data(), n * sizeof(float)) == 0));
    }
  });
}

TEST_CASE("UnaryF32 extreme values") {
  const float denorm = std::numeric_limits<float>::denorm_min();
  const std::vector<float> special = {0.0f,   -0.0f,  denorm, -denorm, 1e-40f, 1e-38f,  -1e-38f,
                                      1e-20f, -1e-20f, 1e-7f, -1e-7f,  kInf,   -kInf,   kNaN,
                                      3e38f,  -3e38f, 88.5f,  -88.5f,  89.5f,  -89.5f,  100.0f,
                                      -100.0f, 1e5f,  -1e5f,  0.5f,    1.5f,   2.5f,    -2.5f,
                                      1.0f,   -1.0f,  0.999f, 1e30f,   -1e30f, 8388609.0f};
  ForEachTargetAndUnaryCase([&](const UnaryCase& c) {
    std::vector<float> y(special.size());
    UnaryF32(c.op, c.params, special.data(), y.data(), static_cast<int64_t>(special.size()));
    for (size_t i = 0; i < special.size(); ++i) {
      const double want = static_cast<float>(reference::Unary(c.op, c.params, special[i]));
      // Tiny inputs must give tiny-but-accurate outputs (tanh(1e-20) == 1e-20, not 0).
      if (!Close(y[i], want, 1e-5, 1e-44)) {
        FAIL_CHECK("x=" << special[i] << " got " << y[i] << " want " << want);
      }
    }
  });
}

TEST_CASE("UnaryF32: a lane's result does not depend on its neighbours") {
  // Values the vector code hands to the scalar reference (NaN, infinities, out of range) mixed
  // with ordinary ones: each element alone (one lane, the others zero) gives the same bits as in
  // the array, so a fused kernel's runs of the op, wherever they start, match the op itself.
  const std::vector<float> odd = {kNaN, kInf, -kInf, 1e30f, -1e30f, 100.0f, -100.0f, 1e-40f};
  std::mt19937 rng(41);
  ForEachTargetAndUnaryCase([&](const UnaryCase& c) {
    std::vector<float> x = RandomFloats(67, c.lo, c.hi, 5);
    for (size_t i = 0; i < x.size(); i += 1 + rng() % 5) x[i] = odd[rng() % odd.size()];
    std::vector<float> y(x.size());
    UnaryF32(c.op, c.params, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      float alone = 0.0f;
      UnaryF32(c.op, c.params, &x[i], &alone, 1);
      const bool same = std::memcmp(&alone, &y[i], sizeof(float)) == 0 ||
                        (std::isnan(alone) && std::isnan(y[i]));
      if (!same) FAIL_CHECK("x=" << x[i] << " in the array " << y[i] << ", alone " << alone);
    }
  });
}

TEST_CASE("Erf is accurate to ~1e-7 over a dense sweep") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    std::vector<float> x;
    for (float v = -6.0f; v <= 6.0f; v += 0.0009765625f) x.push_back(v);
    std::vector<float> y(x.size()), g(x.size());
    UnaryF32(UnaryOp::kErf, {}, x.data(), y.data(), static_cast<int64_t>(x.size()));
    UnaryF32(UnaryOp::kGelu, {}, x.data(), g.data(), static_cast<int64_t>(x.size()));
    double worst = 0, worst_gelu = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::erf(static_cast<double>(x[i]));
      worst = std::max(worst, std::fabs(y[i] - want) / std::max(std::fabs(want), 1e-30));
      const double gw = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
      if (std::fabs(gw) > 1e-30) worst_gelu = std::max(worst_gelu, std::fabs(g[i] - gw) / std::fabs(gw));
    }
    CHECK(worst < 2.5e-7);
    CHECK(worst_gelu < 5e-6);  // erfc path: no cancellation for negative x
  }
}

TEST_CASE("ClipF32 and Clip<int>") {
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (int64_t n : kSizes) {
      std::vector<float> x = RandomFloats(n, -5, 5, 3);
      if (n > 2) x[1] = kNaN;
      std::vector<float> y(n);
      Clip<float>(x.data(), y.data(), n, -1.0f, 2.0f);
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) {
          CHECK(std::isnan(y[i]));
        } else {
          CHECK(y[i] == std::min(2.0f, std::max(-1.0f, x[i])));
        }
      }
      // min > max: every element becomes max.
      Clip<float>(x.data(), y.data(), n, 3.0f, 1.0f);
      for (int64_t i = 0; i < n; ++i) {
        if (!std::isnan(x[i])) CHECK(y[i] == 1.0f);
      }
    }
  }
  std::vector<int8_t> xi = {-128, -5, 0, 5, 127};
  std::vector<int8_t> yi(5);
  Clip<int8_t>(xi.data(), yi.data(), 5, -3, 4);
  CHECK(yi == std::vector<int8_t>{-3, -3, 0, 4, 4});
}

TEST_CASE("UnaryF64 and IntUnary") {
  std::vector<double> x = {-2.5, -0.5, 0.0, 0.5, 2.5, 1e-300};
  std::vector<double> y(x.size());
  UnaryF64(UnaryOp::kRound, {}, x.data(), y.data(), 6);
  CHECK(y == std::vector<double>{-2, -0, 0, 0, 2, 0});
  UnaryF64(UnaryOp::kTanh, {}, x.data(), y.data(), 6);
  CHECK(y[5] == 1e-300);

  std::vector<int32_t> xi = {std::numeric_limits<int32_t>::min(), -7, 0, 9};
  std::vector<int32_t> yi(4);
  IntUnary<int32_t>(IntUnaryOp::kAbs, xi.data(), yi.data(), 4);
  CHECK(yi == std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 7, 0, 9});
  IntUnary<int32_t>(IntUnaryOp::kNeg, xi.data(), yi.data(), 4);
  CHECK(yi == std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 7, 0, -9});
  IntUnary<int32_t>(IntUnaryOp::kSign, xi.data(), yi.data(), 4);
  CHECK(yi == std::vector<int32_t>{-1, -1, 0, 1});
  IntUnary<int32_t>(IntUnaryOp::kRelu, xi.data(), yi.data(), 4);
  CHECK(yi == std::vector<int32_t>{0, 0, 0, 9});
  std::vector<uint8_t> b = {0, 1, 1, 0}, nb(4);
  IntUnary<uint8_t>(IntUnaryOp::kNot, b.data(), nb.data(), 4);
  CHECK(nb == std::vector<uint8_t>{1, 0, 0, 1});
  IntUnary<uint8_t>(IntUnaryOp::kBitwiseNot, b.data(), nb.data(), 4);
  CHECK(nb == std::vector<uint8_t>{255, 254, 254, 255});
}

TEST_CASE("IsNaN / IsInf for f32, f64, f16, bf16") {
  std::vector<float> x = {0.0f, kNaN, kInf, -kInf, 1.0f};
  std::vector<uint8_t> out(5);
  IsNaNF32(x.data(), out.data(), 5);
  CHECK(out == std::vector<uint8_t>{0, 1, 0, 0, 0});
  IsInfF32(x.data(), out.data(), 5, true, true);
  CHECK(out == std::vector<uint8_t>{0, 0, 1, 1, 0});
  IsInfF32(x.data(), out.data(), 5, true, false);
  CHECK(out == std::vector<uint8_t>{0, 0, 1, 0, 0});
  IsInfF32(x.data(), out.data(), 5, false, true);
  CHECK(out == std::vector<uint8_t>{0, 0, 0, 1, 0});
  std::vector<double> xd = {0.0, std::nan(""), -HUGE_VAL};
  IsNaNF64(xd.data(), out.data(), 3);
  CHECK(out[1] == 1);
  IsInfF64(xd.data(), out.data(), 3, false, true);
  CHECK(out[2] == 1);
  // f16: 0x7E00 NaN, 0x7C00 +inf, 0xFC00 -inf, 0x3C00 1.0
  std::vector<uint16_t> h = {0x7E00, 0x7C00, 0xFC00, 0x3C00};
  IsNaNF16(h.data(), out.data(), 4);
  CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{1, 0, 0, 0});
  IsInfF16(h.data(), out.data(), 4, true, false);
  CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{0, 1, 0, 0});
  std::vector<uint16_t> bf = {0x7FC0, 0x7F80, 0xFF80, 0x3F80};
  IsNaNBF16(bf.data(), out.data(), 4);
  CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{1, 0, 0, 0});
  IsInfBF16(bf.data(), out.data(), 4, true, true);
  CHECK(std::vector<uint8_t>(out.begin(), out.begin() + 4) == std::vector<uint8_t>{0, 1, 1, 0});
}

double RefBinaryF(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMax: return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
    case BinaryOp::kMin: return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
    case BinaryOp::kPRelu: return a < 0 ? a * b : a;
    case BinaryOp::kPow: return std::pow(a, b);
    case BinaryOp::kFmod: return std::fmod(a, b);
    case BinaryOp::kMod: {
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    default: return NAN;
  }
}

TEST_CASE("BinaryF32 every op, step pattern and size") {
  const BinaryOp ops[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
                          BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kPRelu, BinaryOp::kPow,
                          BinaryOp::kFmod, BinaryOp::kMod};
  const int64_t steps[][2] = {{1, 1}, {0, 1}, {1, 0}, {0, 0}};
  for (const auto& t : CompiledTargets()) {
    ScopedTarget st(t);
    CAPTURE(t.name);
    for (BinaryOp op : ops) {
      CAPTURE(static_cast<int>(op));
      for (const auto& s : steps) {
        CAPTURE(s[0]);
        CAPTURE(s[1]);
        for (int64_t n : kSizes) {
          CAPTURE(n);
          std::vector<float> a = RandomFloats(std::max<int64_t>(n, 1), -4, 4, 11);
          std::vector<float> b = RandomFloats(std::max<int64_t>(n, 1), 0.5f, 3, 12);
          if (n > 5) {
            a[2] = kNaN;
            b[3] = kNaN;
            a[4] = kInf;
            a[5] = -0.0f;
          }
          std::vector<float> out(n);
          Binary<float>(op, a.data(), s[0], b.data(), s[1], out.data(), n);
          for (int64_t i = 0; i < n; ++i) {
            const float av = a[i * s[0]], bv = b[i * s[1]];
            const double want = static_cast<float>(RefBinaryF(op, av, bv));
            if (!Close(out[i], want, 1e-6, 1e-30)) {
              FAIL_CHECK("a=" << av << " b=" << bv << " got " << out[i] << " want " << want);
              break;
            }
          }
        }
      }
    }
  }
}

TEST_CASE("Binary in place (out aliases a)") {
  std::vector<float> a = RandomFloats(100, -1, 1, 5), b = RandomFloats(100, -1, 1, 6);
  std::vector<float> want(100);
  Binary<float>(BinaryOp::kAdd, a.data(), 1, b.data(), 1, want.data(), 100);
  Binary<float>(BinaryOp::kAdd, a.data(), 1, b.data(), 1, a.data(), 100);
  CHECK(a == want);
}

template <typename T>
void CheckIntBinary() {
  using L = std::numeric_limits<T>;
  std::vector<T> a, b;
  const std::vector<T> vals = {T(0), T(1), T(2), T(7), L::max(), L::min(), T(L::max() / 3)};
  std::vector<T> all = vals;
  if constexpr (std::is_signed_v<T>) {
    // Wrapping negation (min stays min) without signed-overflow UB.
    using U = std::make_unsigned_t<T>;
    for (T v : vals) all.push_back(static_cast<T>(static_cast<U>(U(0) - static_cast<U>(v))));
    all.push_back(T(-1));
    all.push_back(T(-7));
  }
  for (T x : all)
    for (T y : all) {
      a.push_back(x);
      b.push_back(y);
    }
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<T> out(n);
  using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  Binary<T>(BinaryOp::kAdd, a.data(), 1, b.data(), 1, out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    CHECK(out[i] == static_cast<T>(static_cast<uint64_t>(a[i]) + static_cast<uint64_t>(b[i])));
  }
  Binary<T>(BinaryOp::kMul, a.data(), 1, b.data(), 1, out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    CHECK(out[i] == static_cast<T>(static_cast<uint64_t>(a[i]) * static_cast<uint64_t>(b[i])));
  }
  Binary<T>(BinaryOp::kDiv, a.data(), 1, b.data(), 1, out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    T want;
    if (b[i] == 0) {
      want = 0;
    } else if (std::is_signed_v<T> && a[i] == L::min() && b[i] == T(-1)) {
      want = L::min();
    } else {
      want = static_cast<T>(static_cast<W>(a[i]) / static_cast<W>(b[i]));
    }
    CHECK(out[i] == want);
  }
  Binary<T>(BinaryOp::kMod, a.data(), 1, b.data(), 1, out.data(), n);
  for (int64_t i = 0; i < n; ++i) CHECK(out[i] == reference::PyMod(a[i], b[i]));
  Binary<T>(BinaryOp::kMax, a.data(), 1, b.data(), 1, out.data(), n);
  for (int64_t i = 0; i < n; ++i) CHECK(out[i] == std::max(a[i], b[i]));
  std::vector<uint8_t> cmp(n);
  Compare<T>(CompareOp::kLessOrEqual, a.data(), 1, b.data(), 1, cmp.data(), n);
  for (int64_t i = 0; i < n; ++i) CHECK(cmp[i] == (a[i] <= b[i] ? 1 : 0));

  // The ops a signed type runs through its unsigned twin's loops (wrapping add/sub/mul, bit ops,
  // equality), the sign-specific ones beside them, on every operand-step pattern.
  const uint64_t mask = sizeof(T) == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * sizeof(T))) - 1;
  auto bits = [&](T v) { return static_cast<uint64_t>(v) & mask; };
  const int64_t steps[][2] = {{1, 1}, {0, 1}, {1, 0}, {0, 0}};
  for (const auto& st : steps) {
    CAPTURE(st[0]);
    CAPTURE(st[1]);
    auto x = [&](int64_t i) { return a[i * st[0]]; };
    auto y = [&](int64_t i) { return b[i * st[1]]; };
    Binary<T>(BinaryOp::kSub, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(bits(out[i]) == ((bits(x(i)) - bits(y(i))) & mask));
    Binary<T>(BinaryOp::kAdd, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(bits(out[i]) == ((bits(x(i)) + bits(y(i))) & mask));
    Binary<T>(BinaryOp::kMul, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(bits(out[i]) == ((bits(x(i)) * bits(y(i))) & mask));
    Binary<T>(BinaryOp::kBitwiseAnd, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(bits(out[i]) == (bits(x(i)) & bits(y(i))));
    Binary<T>(BinaryOp::kBitwiseOr, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(bits(out[i]) == (bits(x(i)) | bits(y(i))));
    Binary<T>(BinaryOp::kBitwiseXor, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(bits(out[i]) == (bits(x(i)) ^ bits(y(i))));
    Binary<T>(BinaryOp::kMin, a.data(), st[0], b.data(), st[1], out.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(out[i] == std::min(x(i), y(i)));
    Compare<T>(CompareOp::kEqual, a.data(), st[0], b.data(), st[1], cmp.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(cmp[i] == (x(i) == y(i) ? 1 : 0));
    Compare<T>(CompareOp::kLess, a.data(), st[0], b.data(), st[1], cmp.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(cmp[i] == (x(i) < y(i) ? 1 : 0));
    Compare<T>(CompareOp::kGreater, a.data(), st[0], b.data(), st[1], cmp.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(cmp[i] == (x(i) > y(i) ? 1 : 0));
    Compare<T>(CompareOp::kGreaterOrEqual, a.data(), st[0], b.data(), st[1], cmp.data(), n);
    for (int64_t i = 0; i < n; ++i) CHECK(cmp[i] == (x(i) >= y(i) ? 1 : 0));
  }
}

TEST_CASE("Binary integer ops with edge cases") {
  CheckIntBinary<int8_t>();
  CheckIntBinary<uint8_t>();
  CheckIntBinary<int16_t>();
  CheckIntBinary<uint16_t>();
  CheckIntBinary<int32_t>();
  CheckIntBinary<uint32_t>();
  CheckIntBinary<int64_t>();
  CheckIntBinary<uint64_t>();
}

TEST_CASE("Integer mod, fmod, shifts, bitwise") {
  std::vector<int32_t> a = {-4, 7, -3, 5, 2, -7}, b = {3, -3, 4, -4, 0, -3};
  std::vector<int32_t> out(6);
  Binary<int32_t>(BinaryOp::kMod, a.data(), 1, b.data(), 1, out.data(), 6);
  CHECK(out == std::vector<int32_t>{2, -2, 1, -3, 0, -1});
  Binary<int32_t>(BinaryOp::kFmod, a.data(), 1, b.data(), 1, out.data(), 6);
  CHECK(out == std::vector<int32_t>{-1, 1, -3, 1, 0, -1});
  std::vector<uint8_t> x = {16, 4, 1, 255}, s = {1, 2, 8, 9}, r(4);
  Binary<uint8_t>(BinaryOp::kBitShiftLeft, x.data(), 1, s.data(), 1, r.data(), 4);
  CHECK(r == std::vector<uint8_t>{32, 16, 0, 0});
  Binary<uint8_t>(BinaryOp::kBitShiftRight, x.data(), 1, s.data(), 1, r.data(), 4);
  CHECK(r == std::vector<uint8_t>{8, 1, 0, 0});
  std::vector<uint64_t> y = {1ull << 63, 1}, sy = {1, 63}, ry(2);
  Binary<uint64_t>(BinaryOp::kBitShiftLeft, y.data(), 1, sy.data(), 1, ry.data(), 2);
  CHECK(ry == std::vector<uint64_t>{0, 1ull << 63});
  std::vector<uint8_t> p = {0, 0, 1, 1}, q = {0, 1, 0, 1};
  Binary<uint8_t>(BinaryOp::kBitwiseXor, p.data(), 1, q.data(), 1, r.data(), 4);
  CHECK(r == std::vector<uint8_t>{0, 1, 1, 0});
  Binary<uint8_t>(BinaryOp::kBitwiseAnd, p.data(), 0, q.data(), 1, r.data(), 4);
  CHECK(r == std::vector<uint8_t>{0, 0, 0, 0});
}

TEST_CASE("Float mod follows the divisor's sign; fmod the dividend's") {
  std::vector<float> a = {-4.3f, 7.5f, -3.0f, 5.0f}, b = {2.1f, -3.0f, 3.0f, -4.0f}, out(4);
  Binary<float>(BinaryOp::kMod, a.data(), 1, b.data(), 1, out.data(), 4);
  CHECK(out[0] == doctest::Approx(2.0f).epsilon(1e-5));
  CHECK(out[1] == doctest::Approx(-1.5f));
  CHECK(out[2] == 0.0f);
  CHECK(out[3] == doctest::Approx(-3.0f));
  Binary<float>(BinaryOp::kFmod, a.data(), 1, b.data(), 1, out.data(), 4);
  CHECK(out[0] == doctest::Approx(-0.1f).epsilon(1e-4));
  CHECK(out[1] == doctest::Approx(1.5f));
}

TEST_CASE("Pow with mixed types") {
  std::vector<int32_t> base = {2, -3, 0, 1, -1, 5};
  std::vector<int64_t> e = {10, 3, 0, -5, -3, -1};
  std::vector<int32_t> out(6);
  Pow<int32_t, int64_t>(base.data(), 1, e.data(), 1, out.data(), 6);
  CHECK(out == std::vector<int32_t>{1024, -27, 1, 1, -1, 0});
  std::vector<float> ef = {0.5f, 2.0f, 1.0f, 1e10f, NAN, 2.0f};
  Pow<int32_t, float>(base.data(), 1, ef.data(), 1, out.data(), 6);
  CHECK(out[0] == 1);  // trunc(sqrt 2)
  CHECK(out[1] == 9);
  CHECK(out[4] == 0);  // NaN -> 0
  std::vector<float> fb = {2.0f, -2.0f, 0.5f};
  std::vector<int64_t> ie = {3, 3, -2};
  std::vector<float> fo(3);
  Pow<float, int64_t>(fb.data(), 1, ie.data(), 1, fo.data(), 3);
  CHECK(fo == std::vector<float>{8.0f, -8.0f, 4.0f});
}

TEST_CASE("Where by element size and step pattern") {
  std::vector<uint8_t> c = {1, 0, 1, 0, 0};
  std::vector<uint32_t> x = {1, 2, 3, 4, 5}, y = {10, 20, 30, 40, 50}, out(5);
  Where<uint32_t>(c.data(), 1, x.data(), 1, y.data(), 1, out.data(), 5);
  CHECK(out == std::vector<uint32_t>{1, 20, 3, 40, 50});
  Where<uint32_t>(c.data(), 1, x.data(), 0, y.data(), 1, out.data(), 5);
  CHECK(out == std::vector<uint32_t>{1, 20, 1, 40, 50});
  Where<uint32_t>(c.data(), 0, x.data(), 1, y.data(), 0, out.data(), 5);
  CHECK(out == std::vector<uint32_t>{1, 2, 3, 4, 5});
  Where<uint32_t>(c.data() + 1, 0, x.data(), 1, y.data(), 0, out.data(), 5);
  CHECK(out == std::vector<uint32_t>{10, 10, 10, 10, 10});
}

}  // namespace
}  // namespace simplecpp::kernels
