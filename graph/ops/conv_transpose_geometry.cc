// ConvTranspose's attributes and output geometry (see conv_transpose_geometry.h).
#include "graph/ops/conv_transpose_geometry.h"

#include <algorithm>
#include <string>

namespace simplecpp::graph {

ConvTransposeAttributes ConvTransposeAttributes::Read(const OpInit& init) {
  ConvTransposeAttributes a;
  a.conv = ConvAttributes::Read(init);
  a.output_padding = init.GetInts("output_padding");
  a.output_shape = init.GetInts("output_shape");
  for (int64_t p : a.output_padding) {
    if (p < 0) init.Fail("output_padding must be >= 0, got " + DimsToString(a.output_padding));
  }
  return a;
}

void ConvTransposePadsForOutputSize(int64_t full, int64_t out, AutoPad auto_pad, int64_t* pb,
                                    int64_t* pe) {
  const int64_t total = full - out;
  const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
  if (auto_pad == AutoPad::kSameUpper) {
    *pb = half;
    *pe = total - *pb;
  } else {
    *pe = half;
    *pb = total - *pe;
  }
}

ConvTransposeShape ConvTransposeAttributes::CheckShapes(const PrepareContext& ctx, const Dims& xd,
                                                        const Dims& wd) const {
  if (xd.size() < 3 || xd.size() > 5) {
    ctx.Unsupported("X must have 1 to 3 spatial dims, got shape " + DimsToString(xd));
  }
  if (wd.size() != xd.size()) {
    ctx.Fail("W " + DimsToString(wd) + " must have the rank of X " + DimsToString(xd));
  }
  ConvTransposeShape s;
  s.rank = static_cast<int>(xd.size()) - 2;
  s.batch = xd[0];
  s.channels = xd[1];
  s.og = wd[1];
  if (wd[0] != s.channels) {
    ctx.Fail("W has " + std::to_string(wd[0]) + " input channels, X has " +
             std::to_string(s.channels));
  }
  s.group = conv.group;
  if (s.channels % s.group != 0) {
    ctx.Fail("X channels " + std::to_string(s.channels) + " not divisible by group " +
             std::to_string(s.group));
  }
  s.cg = s.channels / s.group;
  s.out_channels = s.og * s.group;
  const int rank = s.rank;
  const std::vector<int64_t>& ks = conv.window.kernel_shape;
  if (!ks.empty() &&
      (static_cast<int>(ks.size()) != rank || !std::equal(ks.begin(), ks.end(), wd.begin() + 2))) {
    ctx.Fail("kernel_shape " + DimsToString(ks) + " does not match W " + DimsToString(wd));
  }
  auto check_size = [&](const std::vector<int64_t>& v, size_t want, const char* name) {
    if (!v.empty() && v.size() != want) {
      ctx.Fail(std::string(name) + " " + DimsToString(v) + " must have " + std::to_string(want) +
               " values");
    }
  };
  conv.window.CheckRank(ctx, rank);
  check_size(output_padding, rank, "output_padding");
  s.oshape = output_shape;
  if (s.oshape.size() == static_cast<size_t>(rank) + 2)
    s.oshape.erase(s.oshape.begin(), s.oshape.begin() + 2);
  check_size(s.oshape, rank, "output_shape");
  return s;
}

Dims ConvTransposeAttributes::ResolveGeometry(const PrepareContext& ctx,
                                              const ConvTransposeShape& s, const Dims& xd,
                                              const Dims& wd, kernels::ConvGeometry* g) const {
  const WindowAttributes& window = conv.window;
  const int rank = s.rank;
  g->rank = rank;
  Dims out_dims = {s.batch, s.out_channels};
  for (int d = 0; d < rank; ++d) {
    const int64_t in = xd[2 + d], k = wd[2 + d];
    const int64_t stride = window.stride(d), dil = window.dilation(d);
    const int64_t op = output_padding.empty() ? 0 : output_padding[d];
    if (op >= stride && op >= dil) {
      ctx.Fail("output_padding " + DimsToString(output_padding) +
               " must be smaller than the stride or the dilation");
    }
    if (k < 1) ctx.Fail("W " + DimsToString(wd) + " has an empty kernel dim");
    const int64_t full = stride * (in - 1) + op + (k - 1) * dil + 1;
    int64_t pb = 0, pe = 0, out = 0;
    if (!s.oshape.empty() || window.same()) {
      out = !s.oshape.empty() ? s.oshape[d] : in * stride;
      ConvTransposePadsForOutputSize(full, out, window.auto_pad, &pb, &pe);
    } else {
      const WindowAttributes::Axis a = window.ResolveAxis(d, rank, in, (k - 1) * dil + 1);
      pb = a.pad_begin;
      pe = a.pad_end;
      out = full - pb - pe;
    }
    if (out < 0) ctx.Fail("pads " + DimsToString(window.pads) + " make the output size negative");
    g->in[d] = out;
    g->out[d] = in;
    g->kernel[d] = k;
    g->stride[d] = stride;
    g->dilation[d] = dil;
    g->pad[d] = pb;
    out_dims.push_back(out);
  }
  return out_dims;
}

}  // namespace simplecpp::graph
