// Spatial attributes of the sliding-window ops (graph/ops/window_attributes.h).
#include "graph/ops/window_attributes.h"

#include <algorithm>

namespace simplecpp::graph {

WindowAttributes WindowAttributes::Read(const OpInit& init, bool kernel_shape_required) {
  WindowAttributes w;
  const std::string auto_pad = init.GetString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    w.auto_pad = AutoPad::kNotSet;
  } else if (auto_pad == "SAME_UPPER") {
    w.auto_pad = AutoPad::kSameUpper;
  } else if (auto_pad == "SAME_LOWER") {
    w.auto_pad = AutoPad::kSameLower;
  } else if (auto_pad == "VALID") {
    w.auto_pad = AutoPad::kValid;
  } else {
    init.Fail("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + auto_pad + "'");
  }
  w.kernel_shape = init.GetInts("kernel_shape");
  w.strides = init.GetInts("strides");
  w.dilations = init.GetInts("dilations");
  w.pads = init.GetInts("pads");
  if (kernel_shape_required && w.kernel_shape.empty()) init.Fail("attribute 'kernel_shape' is required");
  for (int64_t k : w.kernel_shape) {
    if (k < 1) init.Fail("kernel_shape must be >= 1, got " + DimsToString(w.kernel_shape));
  }
  for (int64_t s : w.strides) {
    if (s < 1) init.Fail("strides must be >= 1, got " + DimsToString(w.strides));
  }
  for (int64_t d : w.dilations) {
    if (d < 1) init.Fail("dilations must be >= 1, got " + DimsToString(w.dilations));
  }
  for (int64_t p : w.pads) {
    if (p < 0) init.Fail("pads must be >= 0, got " + DimsToString(w.pads));
  }
  if (w.pads.size() % 2 != 0) {
    init.Fail("pads must have 2 values per spatial dim, got " + DimsToString(w.pads));
  }
  if (w.auto_pad != AutoPad::kNotSet) {
    for (int64_t p : w.pads) {
      if (p != 0) {
        init.Fail("pads " + DimsToString(w.pads) + " cannot be combined with auto_pad " + auto_pad);
      }
    }
  }
  return w;
}

const char* WindowAttributes::auto_pad_name() const {
  switch (auto_pad) {
    case AutoPad::kSameUpper: return "SAME_UPPER";
    case AutoPad::kSameLower: return "SAME_LOWER";
    case AutoPad::kValid: return "VALID";
    case AutoPad::kNotSet: break;
  }
  return "NOTSET";
}

WindowAttributes::Axis WindowAttributes::ResolveAxis(int d, int rank, int64_t in,
                                                     int64_t extent) const {
  Axis a;
  if (same()) {
    const int64_t s = stride(d);
    a.out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (a.out - 1) * s + extent - in);
    a.pad_begin = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    a.pad_end = total - a.pad_begin;
  } else if (!pads.empty()) {
    a.pad_begin = pads[d];
    a.pad_end = pads[d + rank];
  }
  return a;
}

ConvAttributes ConvAttributes::Read(const OpInit& init) {
  ConvAttributes c;
  c.window = WindowAttributes::Read(init);
  c.group = init.GetInt("group", 1);
  if (c.group < 1) init.Fail("group must be >= 1, got " + std::to_string(c.group));
  return c;
}

void ConvAttributes::Resolve(const PrepareContext& ctx, const Dims& xd, const Dims& wd,
                             kernels::ConvGeometry* g, Dims* out_dims) const {
  if (xd.size() < 3) ctx.Fail("X must be [N, C, spatial...] (rank >= 3), got " + DimsToString(xd));
  if (xd.size() > 5) ctx.Unsupported("convolution with more than 3 spatial dims: X " + DimsToString(xd));
  if (wd.size() != xd.size()) {
    ctx.Fail("W " + DimsToString(wd) + " must have the rank of X " + DimsToString(xd));
  }
  const int rank = static_cast<int>(xd.size()) - 2;
  const int64_t channels = xd[1], out_channels = wd[0], cg = wd[1];
  if (channels != cg * group) {
    ctx.Fail("X has " + std::to_string(channels) + " channels but W " + DimsToString(wd) +
             " with group " + std::to_string(group) + " expects " + std::to_string(cg * group));
  }
  if (out_channels % group != 0) {
    ctx.Fail("W has " + std::to_string(out_channels) + " output channels, not divisible by group " +
             std::to_string(group));
  }
  if (cg == 0) ctx.Fail("W " + DimsToString(wd) + " has no input channels");
  const std::vector<int64_t>& ks = window.kernel_shape;
  if (!ks.empty() && (static_cast<int>(ks.size()) != rank || !std::equal(ks.begin(), ks.end(), wd.begin() + 2))) {
    ctx.Fail("kernel_shape " + DimsToString(ks) + " does not match W " + DimsToString(wd));
  }
  window.CheckRank(ctx, rank);
  g->rank = rank;
  *out_dims = {xd[0], out_channels};
  for (int d = 0; d < rank; ++d) {
    const int64_t in = xd[2 + d], k = wd[2 + d];
    const int64_t s = window.stride(d), dil = window.dilation(d);
    if (k < 1) ctx.Fail("W " + DimsToString(wd) + " has an empty kernel dim");
    const int64_t ext = (k - 1) * dil + 1;  // dilated kernel extent
    const WindowAttributes::Axis a = window.ResolveAxis(d, rank, in, ext);
    if (in + a.pad_begin + a.pad_end < ext) {
      ctx.Fail("kernel extent " + std::to_string(ext) + " (kernel " + std::to_string(k) +
               ", dilation " + std::to_string(dil) + ") is larger than the padded input " +
               std::to_string(in + a.pad_begin + a.pad_end) + " in spatial dim " + std::to_string(d));
    }
    const int64_t out = a.out >= 0 ? a.out : (in + a.pad_begin + a.pad_end - ext) / s + 1;
    g->in[d] = in;
    g->out[d] = out;
    g->kernel[d] = k;
    g->stride[d] = s;
    g->dilation[d] = dil;
    g->pad[d] = a.pad_begin;
    out_dims->push_back(out);
  }
}

}  // namespace simplecpp::graph
