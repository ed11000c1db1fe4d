// The spatial attributes of the sliding-window ops (Conv, ConvInteger, QLinearConv and the fused
// quantized convolutions, ConvTranspose, the pools, QLinearAveragePool, Col2Im), read and checked
// once where a node's attributes are read, and resolved per spatial dim at Prepare. Every such op
// reads them here, so they accept the same attribute values and say the same thing about bad ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/op.h"
#include "kernels/conv/conv.h"

namespace simplecpp::graph {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

struct WindowAttributes {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;  // empty when not given

  // Reads auto_pad, kernel_shape, strides, dilations and pads (absent ones stay empty) and checks
  // what needs no shapes: auto_pad one of the four, kernel_shape, strides and dilations >= 1, pads
  // >= 0 and two per dim, no nonzero pads beside an auto_pad, kernel_shape present when required.
  static WindowAttributes Read(const OpInit& init, bool kernel_shape_required = false);

  const char* auto_pad_name() const;
  bool same() const { return auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower; }
  int64_t stride(int d) const { return strides.empty() ? 1 : strides[d]; }
  int64_t dilation(int d) const { return dilations.empty() ? 1 : dilations[d]; }
  // Fails (through ctx: an OpInit or a PrepareContext) unless the given strides and dilations
  // have `rank` values and pads 2 * rank.
  template <class Context>
  void CheckRank(const Context& ctx, int rank) const {
    auto check_size = [&](const std::vector<int64_t>& v, size_t want, const char* name) {
      if (!v.empty() && v.size() != want) {
        ctx.Fail(std::string(name) + " " + DimsToString(v) + " must have " + std::to_string(want) +
                 " values for " + std::to_string(rank) + " spatial dims");
      }
    };
    check_size(strides, rank, "strides");
    check_size(dilations, rank, "dilations");
    check_size(pads, 2 * rank, "pads");
  }

  // One spatial dim of a forward window op. SAME_UPPER / SAME_LOWER: out = ceil(in / stride) and
  // the padding that makes the windows cover the input, the odd pixel at the end for SAME_UPPER
  // and at the beginning for SAME_LOWER. Otherwise the given pads (none for VALID) and out = -1:
  // the caller applies its rounding (floor, or ceil_mode's).
  struct Axis {
    int64_t pad_begin = 0, pad_end = 0, out = -1;
  };
  Axis ResolveAxis(int d, int rank, int64_t in, int64_t extent) const;
};

// Conv, ConvInteger, QLinearConv and the fused quantized convolutions.
struct ConvAttributes {
  WindowAttributes window;
  int64_t group = 1;

  static ConvAttributes Read(const OpInit& init);
  // Validates x [N, C, spatial...] and w [M, C / group, kernel...] against the attributes; fills
  // g and the output dims [N, M, out...].
  void Resolve(const PrepareContext& ctx, const Dims& xd, const Dims& wd, kernels::ConvGeometry* g,
               Dims* out_dims) const;
};

}  // namespace simplecpp::graph
