// Block quantization of weight matrices (block_quant.h).
#include "quant/block_quant.h"

#include <algorithm>
#include <cmath>

#include "quant/int4.h"
#include "quant/quant_params.h"

namespace simplecpp::quant {

void BlockCodeRange(int bits, bool symmetric, int32_t* lo, int32_t* hi) {
  if (symmetric) {
    *hi = (1 << (bits - 1)) - 1;
    *lo = -*hi;
  } else {
    *lo = 0;
    *hi = (1 << bits) - 1;
  }
}

float BlockScale(float w_min, float w_max, int bits, bool symmetric) {
  int32_t lo = 0, hi = 0;
  BlockCodeRange(bits, symmetric, &lo, &hi);
  float scale = 0.0f;
  if (symmetric) {
    scale = std::max(std::fabs(w_min), std::fabs(w_max)) / static_cast<float>(hi);
  } else {
    scale = (std::max(0.0f, w_max) - std::min(0.0f, w_min)) / static_cast<float>(hi - lo);
  }
  // All zeros, or values so small that the division underflows to 0: with scale 1 every code
  // is the zero point and every value is within half a step of 0.
  return scale > 0.0f ? scale : 1.0f;
}

int32_t BlockZeroPoint(float w_min, float scale, int bits, bool symmetric) {
  if (symmetric) return 0;
  const int32_t hi = (1 << bits) - 1;
  return SaturateToRange(RoundHalfToEven(-std::min(0.0f, w_min) / scale), 0, hi);
}

BlockQuantized QuantizeBlocked(const float* w, int64_t k, int64_t n, int64_t block, int bits,
                               bool symmetric, float (*round_scale)(float)) {
  BlockQuantized q;
  q.k = k;
  q.n = n;
  q.block = block;
  q.bits = bits;
  q.symmetric = symmetric;
  const int64_t blocks = q.blocks();
  q.codes.assign(static_cast<size_t>(k * n), 0);
  q.scales.assign(static_cast<size_t>(blocks * n), 1.0f);
  q.zero_points.assign(static_cast<size_t>(blocks * n), 0);
  int32_t lo = 0, hi = 0;
  BlockCodeRange(bits, symmetric, &lo, &hi);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t k0 = b * block, k1 = std::min(k, k0 + block);
    for (int64_t c = 0; c < n; ++c) {
      float w_min = w[k0 * n + c], w_max = w_min;
      for (int64_t r = k0 + 1; r < k1; ++r) {
        w_min = std::min(w_min, w[r * n + c]);
        w_max = std::max(w_max, w[r * n + c]);
      }
      float scale = BlockScale(w_min, w_max, bits, symmetric);
      if (round_scale) scale = round_scale(scale);
      const int32_t zp = BlockZeroPoint(w_min, scale, bits, symmetric);
      q.scales[static_cast<size_t>(b * n + c)] = scale;
      q.zero_points[static_cast<size_t>(b * n + c)] = zp;
      for (int64_t r = k0; r < k1; ++r) {
        q.codes[static_cast<size_t>(r * n + c)] = QuantizeValue(w[r * n + c], scale, zp, lo, hi);
      }
    }
  }
  return q;
}

std::vector<uint8_t> PackNBitsWeights(const BlockQuantized& q) {
  const int64_t blocks = q.blocks();
  const int64_t blob = q.block * q.bits / 8;
  const int32_t offset = q.symmetric ? (1 << (q.bits - 1)) : 0;
  std::vector<uint8_t> out(static_cast<size_t>(q.n * blocks * blob), 0);
  for (int64_t c = 0; c < q.n; ++c) {
    uint8_t* row = out.data() + c * blocks * blob;
    for (int64_t b = 0; b < blocks; ++b) {
      const int32_t pad = q.zero_points[static_cast<size_t>(b * q.n + c)] + offset;
      for (int64_t i = 0; i < q.block; ++i) {
        const int64_t r = b * q.block + i;
        const int32_t code = r < q.k ? q.codes[static_cast<size_t>(r * q.n + c)] + offset : pad;
        if (q.bits == 8) {
          row[b * blob + i] = static_cast<uint8_t>(code);
        } else {
          SetSubByte(row + b * blob, i, q.bits, code);
        }
      }
    }
  }
  return out;
}

std::vector<float> NBitsScales(const BlockQuantized& q) {
  const int64_t blocks = q.blocks();
  std::vector<float> out(static_cast<size_t>(q.n * blocks));
  for (int64_t c = 0; c < q.n; ++c) {
    for (int64_t b = 0; b < blocks; ++b) {
      out[static_cast<size_t>(c * blocks + b)] = q.scales[static_cast<size_t>(b * q.n + c)];
    }
  }
  return out;
}

std::vector<uint8_t> PackNBitsZeroPoints(const BlockQuantized& q) {
  const int64_t blocks = q.blocks();
  const int64_t row_bytes = (blocks * q.bits + 7) / 8;
  std::vector<uint8_t> out(static_cast<size_t>(q.n * row_bytes), 0);
  for (int64_t c = 0; c < q.n; ++c) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int32_t zp = q.zero_points[static_cast<size_t>(b * q.n + c)];
      if (q.bits == 8) {
        out[static_cast<size_t>(c * row_bytes + b)] = static_cast<uint8_t>(zp);
      } else {
        SetSubByte(out.data() + c * row_bytes, b, q.bits, zp);
      }
    }
  }
  return out;
}

}  // namespace simplecpp::quant
