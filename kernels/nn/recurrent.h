// Gate math of the recurrent ops (RNN, GRU, LSTM): the elementwise work done per batch row and
// time step after the two matrix products (X*W^T and H*R^T, both in kernels/gemm/gemm.h). Every
// vector here is one gate of one batch row: `n` is the hidden size, pointers need no alignment.
// float32 paths are Highway SIMD; float64 paths are scalar loops (the ops' double path).
#pragma once

#include <cstdint>

namespace simplecpp::kernels {

// The activation functions the ONNX recurrent ops accept (names as in the spec):
//   kRelu max(0,x) | kTanh | kSigmoid | kAffine alpha*x + beta | kLeakyRelu x<0 ? alpha*x : x |
//   kThresholdedRelu x>alpha ? x : 0 | kScaledTanh alpha*tanh(beta*x) |
//   kHardSigmoid min(1, max(0, alpha*x + beta)) | kElu x<0 ? alpha*(e^x - 1) : x |
//   kSoftsign x/(1+|x|) | kSoftplus log(1 + e^x)
enum class RnnActivationKind : int {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// y[i] = act(clamp(a[i] + b[i], -clip, clip)). b may be nullptr (then a[i] alone); clip <= 0 or
// +inf means no clipping (NaN passes through the clamp). y may alias a or b.
void RnnGateF32(const RnnActivation& act, float clip, const float* a, const float* b, float* y,
                int64_t n);
void RnnGateF64(const RnnActivation& act, double clip, const double* a, const double* b,
                double* y, int64_t n);

// y[i] += a[i] * b[i] (peephole terms: P * C).
void RnnMulAddF32(const float* a, const float* b, float* y, int64_t n);
void RnnMulAddF64(const double* a, const double* b, double* y, int64_t n);

// y[i] = a[i] * b[i]. y may alias a or b.
void RnnMulF32(const float* a, const float* b, float* y, int64_t n);
void RnnMulF64(const double* a, const double* b, double* y, int64_t n);

// LSTM cell state, in place: c[i] = f[i] * c[i] + in[i] * g[i]. With f == nullptr the forget
// gate is coupled to the input gate (input_forget): f[i] = 1 - in[i].
void LstmCellF32(const float* in, const float* f, const float* g, float* c, int64_t n);
void LstmCellF64(const double* in, const double* f, const double* g, double* c, int64_t n);

// GRU state update, in place: h[i] = (1 - z[i]) * cand[i] + z[i] * h[i].
void GruUpdateF32(const float* z, const float* cand, float* h, int64_t n);
void GruUpdateF64(const double* z, const double* cand, double* h, int64_t n);

}  // namespace simplecpp::kernels
