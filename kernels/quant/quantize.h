// Elementwise quantization kernels: QuantizeLinear (float32 -> integer), DequantizeLinear
// (integer -> float32) and requantization of int32 accumulators (QLinearMatMul / QLinearConv).
//
// Every function works on a run of n elements whose scale / zero point is either one value
// (step 0) or one per element (step 1), so per-tensor, per-axis and blocked quantization are all
// a sequence of runs chosen by the op. Zero points are widened to int32 by the caller.
//
// Numerics (ONNX, spec-exact):
//   Quantize:   q = clamp(round_half_even(x / scale) + zp, lo, hi), the division in float32.
//               Infinities saturate; a NaN quotient (NaN x, 0/0) gives zp (then clamped).
//   Dequantize: y = float32(q - zp) * scale (float32 multiply). int32 input: float32(q) * scale
//               when zp is null, else float32((double(float32(q)) - zp) * scale) (as ONNX's
//               numpy reference computes it).
//   Requantize: q = clamp(round_half_even(double(acc) * double(multiplier)) + zp, lo, hi): the
//               product in double (numpy int32 x float32 -> float64), rounded, then the zero
//               point added, as QuantizeLinear's formula and ONNX Runtime do (ONNX's Python
//               reference adds the zero point before rounding; the two differ only at exact .5
//               ties with an odd zero point).
#pragma once

#include <cstdint>

namespace simplecpp::kernels {

// out[i] = clamp(round(x[i] / scale[i*scale_step]) + zp[i*zp_step], lo, hi); zp may be nullptr.
void QuantizeF32ToI32(const float* x, int64_t n, const float* scale, int64_t scale_step,
                      const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, int32_t* out);
void QuantizeF32ToU8(const float* x, int64_t n, const float* scale, int64_t scale_step,
                     const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, uint8_t* out);
void QuantizeF32ToI8(const float* x, int64_t n, const float* scale, int64_t scale_step,
                     const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, int8_t* out);
void QuantizeF32ToU16(const float* x, int64_t n, const float* scale, int64_t scale_step,
                      const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, uint16_t* out);
void QuantizeF32ToI16(const float* x, int64_t n, const float* scale, int64_t scale_step,
                      const int32_t* zp, int64_t zp_step, int32_t lo, int32_t hi, int16_t* out);

// QuantizeLinear(op(DequantizeLinear(a), DequantizeLinear(b))) on 8-bit data with per-tensor
// parameters, in one pass: for each i < n, exactly the float32 steps of DequantizeU8ToF32 /
// I8ToF32 on a[i * a_step] and b[i * b_step] (step 1, or 0 for one repeated element), the IEEE
// add / subtract / multiply / divide, and QuantizeF32ToU8 / I8 with one scale and zero point, so
// the bytes equal those three calls'. Whole vectors only (and nothing when y's scale or its
// reciprocal is not a normal float): returns the elements done; the caller finishes the rest.
enum class QdqBinaryOp { kAdd, kSub, kMul, kDiv };
struct QdqBinaryParams {
  float a_scale = 1.0f, b_scale = 1.0f, y_scale = 1.0f;
  int32_t a_zp = 0, b_zp = 0, y_zp = 0, lo = 0, hi = 255;  // lo / hi: y's 8-bit range
};
int64_t QdqBinary8(QdqBinaryOp op, bool a_signed, const void* a, int64_t a_step, bool b_signed,
                   const void* b, int64_t b_step, const QdqBinaryParams& p, bool y_signed,
                   void* out, int64_t n);
// The same over runs.count runs of n elements each: run r reads a from a + r * runs.a_run and b
// from b + r * runs.b_run (elements; steps inside a run as above) and writes out + r *
// runs.out_run (a per-channel operand over a channel's pixels, one call for many channels).
// Returns the elements done in every run (its whole vectors).
struct QdqBinaryRuns {
  int64_t count = 1, a_run = 0, b_run = 0, out_run = 0;
};
int64_t QdqBinary8Runs(QdqBinaryOp op, bool a_signed, const void* a, int64_t a_step, bool b_signed,
                       const void* b, int64_t b_step, const QdqBinaryParams& p, bool y_signed,
                       void* out, int64_t n, const QdqBinaryRuns& runs);

// out[i] = (q[i] - zp[i*zp_step]) * scale[i*scale_step]; zp may be nullptr.
void DequantizeU8ToF32(const uint8_t* q, int64_t n, const float* scale, int64_t scale_step,
                       const int32_t* zp, int64_t zp_step, float* out);
void DequantizeI8ToF32(const int8_t* q, int64_t n, const float* scale, int64_t scale_step,
                       const int32_t* zp, int64_t zp_step, float* out);
void DequantizeU16ToF32(const uint16_t* q, int64_t n, const float* scale, int64_t scale_step,
                        const int32_t* zp, int64_t zp_step, float* out);
void DequantizeI16ToF32(const int16_t* q, int64_t n, const float* scale, int64_t scale_step,
                        const int32_t* zp, int64_t zp_step, float* out);
void DequantizeI32ToF32(const int32_t* q, int64_t n, const float* scale, int64_t scale_step,
                        const int32_t* zp, int64_t zp_step, float* out);

// The float epilogue of an integer GEMM (MatMulIntegerToFloat, DynamicQuantizeMatMul,
// DynamicQuantizeConv): y[r * ldy + j] = float32(acc[r * lda + j]) * mult[j * mult_step] +
// bias[j * bias_step] for r < rows, j < n; bias may be nullptr. Product then sum, two float32
// roundings (never an FMA), on every target.
void ScaleI32RowsToF32(const int32_t* acc, int64_t lda, int64_t rows, int64_t n, const float* mult,
                       int64_t mult_step, const float* bias, float* y, int64_t ldy,
                       int64_t bias_step = 1);

// out[i] = clamp(round(double(acc[i]) * double(multiplier[i*mult_step])) + zp, lo, hi).
void RequantizeI32ToU8(const int32_t* acc, int64_t n, const float* multiplier, int64_t mult_step,
                       int32_t zp, int32_t lo, int32_t hi, uint8_t* out);
void RequantizeI32ToI8(const int32_t* acc, int64_t n, const float* multiplier, int64_t mult_step,
                       int32_t zp, int32_t lo, int32_t hi, int8_t* out);

// The same with an int32 bias added first (wrapping, as int32 addition in the reference), over a
// matrix of runs: out[r * ldo + c] = requant(acc[r * lda + c] + bias[c * bias_step],
// multiplier[c * mult_step]) for r < rows, c < cols (every row has the same bias / multiplier
// runs, e.g. one per output channel along a row). bias may be nullptr.
void RequantizeBiasRowsI32ToU8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                               const int32_t* bias, int64_t bias_step, const float* multiplier,
                               int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, uint8_t* out,
                               int64_t ldo);
void RequantizeBiasRowsI32ToI8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                               const int32_t* bias, int64_t bias_step, const float* multiplier,
                               int64_t mult_step, int32_t zp, int32_t lo, int32_t hi, int8_t* out,
                               int64_t ldo);

// The same with one output channel per row (a channels-first convolution's block of channels):
// out[r * ldo + c] = requant(acc[r * lda + c] + bias[r], multiplier[r * mult_row]) for r < rows,
// c < cols; mult_row 0 (one multiplier) or 1 (one per row); bias [rows] or nullptr.
void RequantizePerRowI32ToU8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                             const int32_t* bias, const float* multiplier, int64_t mult_row,
                             int32_t zp, int32_t lo, int32_t hi, uint8_t* out, int64_t ldo);
void RequantizePerRowI32ToI8(const int32_t* acc, int64_t lda, int64_t rows, int64_t cols,
                             const int32_t* bias, const float* multiplier, int64_t mult_row,
                             int32_t zp, int32_t lo, int32_t hi, int8_t* out, int64_t ldo);

// Exact sums of n 8-bit values (QLinearGlobalAveragePool's plane sums); the Rows forms sum each
// of `rows` rows of n values, `stride` apart, in one call.
int64_t SumU8(const uint8_t* x, int64_t n);
int64_t SumI8(const int8_t* x, int64_t n);
void SumU8Rows(const uint8_t* x, int64_t rows, int64_t n, int64_t stride, int64_t* sums);
void SumI8Rows(const int8_t* x, int64_t rows, int64_t n, int64_t stride, int64_t* sums);

// QLinearGlobalAveragePool's requantization of n plane sums of `count` values each, in double
// as the op defines it: mean = double(sums[i] - x_zp * count) * x_scale / count, then
// out[i] = clamp(round_half_even(mean / y_scale) + y_zp) to the output type's range (a NaN
// quotient counts as 0). Whole vectors of doubles where the target has them.
void RequantizeMeansToU8(const int64_t* sums, int64_t n, int64_t count, int32_t x_zp,
                         double x_scale, double y_scale, int32_t y_zp, uint8_t* out);
void RequantizeMeansToI8(const int64_t* sums, int64_t n, int64_t count, int32_t x_zp,
                         double x_scale, double y_scale, int32_t y_zp, int8_t* out);

// Min and max of x[0..n) (NaNs skipped); both 0 when n == 0 or all are NaN.
void MinMaxF32(const float* x, int64_t n, float* min_out, float* max_out);

}  // namespace simplecpp::kernels
