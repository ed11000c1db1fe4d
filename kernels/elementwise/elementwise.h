// Elementwise kernels: unary math and activations, binary arithmetic, comparisons, logic, Where,
// IsNaN/IsInf. Plain C++ interface (no Highway types); float32 paths are Highway SIMD, float64 and
// integer paths are scalar loops the compiler may vectorize.
//
// Binary kernels work on one contiguous run of a (possibly broadcast) iteration: element i reads
// a[i * a_step] and b[i * b_step] with steps 0 (the operand is one broadcast value) or 1 (the
// operand is contiguous); graph/ops/broadcast.h produces such runs. `out` may alias an operand
// whose step is 1 (in-place folding of variadic ops).
//
// Defined results where C++ would have undefined behaviour (documented for the ops too):
// - integer Div/Mod by zero gives 0; INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 gives 0;
// - signed Add/Sub/Mul/Neg/Abs wrap around (two's complement), like numpy;
// - BitShift by >= the bit width gives 0;
// - integer Pow with a negative exponent gives 1 / base^e truncated (0 unless |base| == 1; 0 for
//   base 0); float->integer results (Pow of an integer base with a float exponent) saturate to the
//   integer range and NaN gives 0.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/float16/float16.h"

namespace simplecpp::kernels {

// ---------------------------------------------------------------------------------------------
// Unary float ops. UnaryParams fields by op (names as in the ONNX spec):
//   kLeakyRelu alpha | kElu alpha | kSelu alpha, gamma | kCelu alpha | kHardSigmoid alpha, beta |
//   kThresholdedRelu alpha | kShrink alpha = lambd, beta = bias | kSwish alpha.
enum class UnaryOp : int {
  kNeg,
  kAbs,
  kSign,
  kSqrt,
  kReciprocal,
  kExp,
  kLog,
  kErf,
  kTanh,
  kSigmoid,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kHardSigmoid,
  kHardSwish,
  kSoftplus,
  kSoftsign,
  kGelu,      // 0.5 x (1 + erf(x / sqrt 2))
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kMish,
  kFloor,
  kCeil,
  kRound,  // half to even
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kThresholdedRelu,
  kShrink,
  kSwish,  // x * sigmoid(alpha x)
};

struct UnaryParams {
  float alpha = 0.0f;
  float beta = 0.0f;
  float gamma = 0.0f;
};

// y[i] = op(x[i]) for i < n. y may equal x.
void UnaryF32(UnaryOp op, const UnaryParams& params, const float* x, float* y, int64_t n);
void UnaryF64(UnaryOp op, const UnaryParams& params, const double* x, double* y, int64_t n);

// Unary integer / bool ops.
enum class IntUnaryOp : int {
  kNeg,         // wraps
  kAbs,         // wraps (abs(INT_MIN) == INT_MIN); identity for unsigned
  kSign,        // -1, 0, 1
  kRelu,        // max(x, 0)
  kBitwiseNot,  // ~x
  kNot,         // bool (0/1 bytes): !x
};
// T: int8_t ... uint64_t (kNot: uint8_t holding bools).
template <typename T>
void IntUnary(IntUnaryOp op, const T* x, T* y, int64_t n);

// y[i] = min(max(x[i], lo), hi); when lo > hi every element becomes hi (ONNX Clip). NaN stays NaN.
// T: float, double, int8_t ... uint64_t.
template <typename T>
void Clip(const T* x, T* y, int64_t n, T lo, T hi);
void ClipF32(const float* x, float* y, int64_t n, float lo, float hi);  // SIMD; Clip<float> uses it

// out[i] = 1 when x[i] is NaN (IsNaN) / an infinity of an enabled sign (IsInf), else 0.
// F16/BF16 take the raw 16-bit patterns.
void IsNaNF32(const float* x, uint8_t* out, int64_t n);
void IsNaNF64(const double* x, uint8_t* out, int64_t n);
void IsNaNF16(const uint16_t* x, uint8_t* out, int64_t n);
void IsNaNBF16(const uint16_t* x, uint8_t* out, int64_t n);
void IsInfF32(const float* x, uint8_t* out, int64_t n, bool positive, bool negative);
void IsInfF64(const double* x, uint8_t* out, int64_t n, bool positive, bool negative);
void IsInfF16(const uint16_t* x, uint8_t* out, int64_t n, bool positive, bool negative);
void IsInfBF16(const uint16_t* x, uint8_t* out, int64_t n, bool positive, bool negative);

// ---------------------------------------------------------------------------------------------
// Binary ops on one run (see the top of the file for steps and aliasing).
enum class BinaryOp : int {
  kAdd,
  kSub,
  kMul,
  kDiv,    // integers: truncating
  kMax,    // floats: NaN propagates
  kMin,    // floats: NaN propagates
  kMod,    // result has the sign of the divisor (Python / numpy.mod)
  kFmod,   // result has the sign of the dividend (C fmod)
  kPow,    // same-type power; mixed types use Pow<T, E>
  kPRelu,  // a < 0 ? a * b : a   (b is the slope)
  kBitShiftLeft,
  kBitShiftRight,
  kBitwiseAnd,  // also logical And / Or / Xor on bools stored as 0/1 bytes
  kBitwiseOr,
  kBitwiseXor,
};

// T: float, double, int8_t ... uint64_t. Float types support kAdd..kPRelu; integers all but kPRelu
// (bit ops and shifts are for integers only).
template <typename T>
void Binary(BinaryOp op, const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
            int64_t n);
// The SIMD float32 path (Binary<float> calls it).
void BinaryF32(BinaryOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
               float* out, int64_t n);

// out[i] = pow(a[i], b[i]) with the base type T kept (ONNX Pow-12+ mixed types).
// T: int32_t, int64_t, float, double. E: int8_t ... uint64_t, float, double.
template <typename T, typename E>
void Pow(const T* a, int64_t a_step, const E* b, int64_t b_step, T* out, int64_t n);

enum class CompareOp : int { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual };
// out[i] = a[i] cmp b[i] as a 0/1 byte. T: float, double, int8_t ... uint64_t (bool as uint8_t).
template <typename T>
void Compare(CompareOp op, const T* a, int64_t a_step, const T* b, int64_t b_step, uint8_t* out,
             int64_t n);

// out[i] = cond[i] ? x[i] : y[i]. Works on raw bits, so T is an unsigned integer of the element
// size (uint8_t, uint16_t, uint32_t, uint64_t) whatever the dtype.
template <typename T>
void Where(const uint8_t* cond, int64_t c_step, const T* x, int64_t x_step, const T* y,
           int64_t y_step, T* out, int64_t n);

// ---------------------------------------------------------------------------------------------
// 16-bit float storage (float16 / bfloat16 bit patterns, `kind` says which): the float32 kernels
// above applied block by block (kBlock16 elements widened on the stack, computed in float32,
// rounded back once per element to nearest even). Steps and aliasing as for the float32 versions.
// (kernels/elementwise/elementwise_f16.cc)
constexpr int64_t kBlock16 = 256;
void Unary16(Float16Kind kind, UnaryOp op, const UnaryParams& params, const uint16_t* x,
             uint16_t* y, int64_t n);
void Clip16(Float16Kind kind, const uint16_t* x, uint16_t* y, int64_t n, float lo, float hi);
void Binary16(Float16Kind kind, BinaryOp op, const uint16_t* a, int64_t a_step, const uint16_t* b,
              int64_t b_step, uint16_t* out, int64_t n);
void Compare16(Float16Kind kind, CompareOp op, const uint16_t* a, int64_t a_step,
               const uint16_t* b, int64_t b_step, uint8_t* out, int64_t n);
// Pow with a 16-bit base and an exponent of type E (int8_t ... uint64_t, float, double).
template <typename E>
void Pow16(Float16Kind kind, const uint16_t* a, int64_t a_step, const E* b, int64_t b_step,
           uint16_t* out, int64_t n);
// Pow with a 16-bit base and a 16-bit exponent (kinds may differ).
void Pow16Exp16(Float16Kind kind, const uint16_t* a, int64_t a_step, Float16Kind b_kind,
                const uint16_t* b, int64_t b_step, uint16_t* out, int64_t n);
// Pow with a base of type T (int32_t, int64_t, float, double) and a 16-bit exponent.
template <typename T>
void PowExp16(const T* a, int64_t a_step, Float16Kind b_kind, const uint16_t* b, int64_t b_step,
              T* out, int64_t n);

}  // namespace simplecpp::kernels
