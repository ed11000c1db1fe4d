// A 256-entry byte table applied to a byte array: how an elementwise function of an 8-bit
// quantized tensor (dequantize, float chain, quantize) runs once its 256 possible results are
// known (graph/passes/quant_lookup_fusion.h).
#pragma once

#include <cstdint>

namespace simplecpp::kernels {

// y[i] = table[x[i]] for i < n. y may equal x.
void LookupBytes(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n);

// y[i] = table[x[i]] for i < n: a float32 function of a byte (a dequantized activation).
void LookupBytesToF32(const float* table, const uint8_t* x, float* y, int64_t n);

}  // namespace simplecpp::kernels
