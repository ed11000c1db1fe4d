// DeformConv (ai.onnx opsets 19, 22): 2-D deformable convolution with per-position sampling
// offsets, an optional modulation mask, offset groups, groups and an optional bias.
//
// Shapes: X [N, C, H, W]; W [oC, C/group, kH, kW]; offset [N, offset_group*kH*kW*2, oH, oW]
// (channel ((g*kH + i)*kW + j)*2 + {0: dy, 1: dx}); B [oC]; mask [N, offset_group*kH*kW, oH, oW]
// (channel (g*kH + i)*kW + j); Y [N, oC, oH, oW] with
//   oH = (H + pad_top + pad_bottom - ((kH - 1) * dilation_h + 1)) / stride_h + 1 (same for oW).
// Kernel tap (i, j) of output (oh, ow) samples input channel c (offset group c / (C/offset_group))
// at y = oh*stride_h - pad_top + i*dilation_h + dy, x = ow*stride_w - pad_left + j*dilation_w + dx
// by bilinear interpolation in which every corner outside the image reads 0 (ONNX's reference:
// GridSample, align_corners=1, padding zeros), times the mask.
//
// Per image: col [C*kH*kW, oH*oW] holds the masked samples (tasks: one per input channel), then per
// group Y_g [oC/group, P] = W_g [oC/group, C/group*kH*kW] x col_g (kernels::GemmF32, bias as the
// row bias). float16 / bfloat16 tensors are widened to float32 and Y narrowed back; double is
// unsupported. Only 2-D (rank-4 X) is implemented, other ranks raise Unsupported.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"

namespace simplecpp::graph {
namespace {

// Input i of the node as float32: the tensor's own data, or a widened copy in `holder`.
const float* AsF32(RunContext& rc, int i, Tensor* holder) {
  const Tensor& t = rc.input(i);
  if (t.dtype() == DType::kFloat32) return t.data<float>();
  const int64_t n = t.num_elements();
  *holder = rc.Scratch(DType::kFloat32, {n});
  if (t.dtype() == DType::kFloat16) {
    kernels::HalfToFloat(t.data<uint16_t>(), holder->data<float>(), static_cast<size_t>(n));
  } else {
    kernels::BFloat16ToFloat(t.data<uint16_t>(), holder->data<float>(), static_cast<size_t>(n));
  }
  return holder->data<float>();
}

// Bilinear sample of plane [h, w] at (y, x); corners outside the plane read 0, and so does a
// point with y <= -1, y >= h, x <= -1 or x >= w (also NaN coordinates).
float SampleBilinear(const float* plane, int64_t h, int64_t w, float y, float x) {
  if (!(y > -1.0f && y < static_cast<float>(h) && x > -1.0f && x < static_cast<float>(w))) {
    return 0.0f;
  }
  const float yf = std::floor(y), xf = std::floor(x);
  const int64_t y0 = static_cast<int64_t>(yf), x0 = static_cast<int64_t>(xf);
  const float ly = y - yf, lx = x - xf;
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  auto at = [&](int64_t yy, int64_t xx) {
    return (yy >= 0 && yy < h && xx >= 0 && xx < w) ? plane[yy * w + xx] : 0.0f;
  };
  return hy * hx * at(y0, x0) + hy * lx * at(y0, x0 + 1) + ly * hx * at(y0 + 1, x0) +
         ly * lx * at(y0 + 1, x0 + 1);
}

class DeformConvOp final : public Op {
 public:
  explicit DeformConvOp(const OpInit& init) {
    if (init.num_inputs() < 3 || init.num_inputs() > 5) {
      init.Fail("DeformConv takes 3 to 5 inputs, got " + std::to_string(init.num_inputs()));
    }
    attrs_ = ConvAttributes::Read(init);
    offset_group_ = init.GetInt("offset_group", 1);
    if (offset_group_ < 1)
      init.Fail("offset_group must be >= 1, got " + std::to_string(offset_group_));
    bfloat16_allowed_ = init.opset() >= 22;  // T gained bfloat16 in opset 22
  }

  void InferTypes(TypeContext& ctx) const override {
    if (bfloat16_allowed_) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16});
    }
    ctx.RequireSameDType(0, 1);
    ctx.RequireSameDType(0, 2);
    if (ctx.has_input(3)) ctx.RequireSameDType(0, 3);
    if (ctx.has_input(4)) ctx.RequireSameDType(0, 4);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const Dims& wd = ctx.input_dims(1);
    const Dims& od = ctx.input_dims(2);
    if (xd.size() < 3) ctx.Fail("X must have rank >= 3, got " + DimsToString(xd));
    if (xd.size() != 4) {
      ctx.Unsupported("DeformConv on rank-" + std::to_string(xd.size()) +
                      " input (only 2-D, X [N, C, H, W], is implemented)");
    }
    if (wd.size() != 4) ctx.Fail("W must be [oC, C/group, kH, kW], got " + DimsToString(wd));
    const int64_t n = xd[0], c = xd[1], h = xd[2], w = xd[3];
    const int64_t oc = wd[0], cg = wd[1], kh = wd[2], kw = wd[3];
    kernels::ConvGeometry g;
    Dims out_dims;
    attrs_.Resolve(ctx, xd, wd, &g, &out_dims);
    if (c % offset_group_ != 0) {
      ctx.Fail("input channels " + std::to_string(c) + " not divisible by offset_group " +
               std::to_string(offset_group_));
    }
    const int64_t sh = g.stride[0], sw = g.stride[1], dh = g.dilation[0], dw = g.dilation[1];
    const int64_t pt = g.pad[0], pl = g.pad[1];
    const int64_t oh = out_dims[2], ow = out_dims[3];
    const int64_t k = kh * kw;
    const Dims want_off = {n, offset_group_ * k * 2, oh, ow};
    if (od != want_off) {
      ctx.Fail("offset must be " + DimsToString(want_off) + ", got " + DimsToString(od));
    }
    const bool has_bias = ctx.has_input(3), has_mask = ctx.has_input(4);
    if (has_bias && ctx.input_dims(3) != Dims{oc}) {
      ctx.Fail("B must be [" + std::to_string(oc) + "], got " + DimsToString(ctx.input_dims(3)));
    }
    const Dims want_mask = {n, offset_group_ * k, oh, ow};
    if (has_mask && ctx.input_dims(4) != want_mask) {
      ctx.Fail("mask must be " + DimsToString(want_mask) + ", got " +
               DimsToString(ctx.input_dims(4)));
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, {n, oc, oh, ow});
    const int64_t p = oh * ow;
    if (n == 0 || oc == 0 || p == 0) return [](RunContext&) {};
    const int64_t group = attrs_.group, og = offset_group_, cpo = c / offset_group_;
    return [=](RunContext& rc) {
      Tensor hx, hw, hoff, hb, hm, hy;
      const float* x = AsF32(rc, 0, &hx);
      const float* wt = AsF32(rc, 1, &hw);
      const float* off = AsF32(rc, 2, &hoff);
      const float* bias = has_bias ? AsF32(rc, 3, &hb) : nullptr;
      const float* mask = has_mask ? AsF32(rc, 4, &hm) : nullptr;
      float* y = rc.output(0).data<float>();
      if (dt != DType::kFloat32) {
        hy = rc.Scratch(DType::kFloat32, {n * oc * p});
        y = hy.data<float>();
      }
      Tensor colt = rc.Scratch(DType::kFloat32, {c * k * p});
      float* col = colt.data<float>();
      const int64_t ocg = oc / group, kdim = cg * k;
      for (int64_t b = 0; b < n; ++b) {
        const float* xb = x + b * c * h * w;
        const float* offb = off + b * og * k * 2 * p;
        const float* maskb = mask ? mask + b * og * k * p : nullptr;
        auto fill = [&](int64_t c0, int64_t c1) {
          for (int64_t ci = c0; ci < c1; ++ci) {
            const int64_t g = ci / cpo;
            const float* plane = xb + ci * h * w;
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t tap = i * kw + j;
                const float* dy = offb + ((g * k + tap) * 2) * p;
                const float* dx = dy + p;
                const float* m = maskb ? maskb + (g * k + tap) * p : nullptr;
                float* row = col + (ci * k + tap) * p;
                for (int64_t yo = 0; yo < oh; ++yo) {
                  const float base_y = static_cast<float>(yo * sh - pt + i * dh);
                  for (int64_t xo = 0; xo < ow; ++xo) {
                    const int64_t q = yo * ow + xo;
                    const float base_x = static_cast<float>(xo * sw - pl + j * dw);
                    float v = SampleBilinear(plane, h, w, base_y + dy[q], base_x + dx[q]);
                    if (m) v *= m[q];
                    row[q] = v;
                  }
                }
              }
            }
          }
        };
        if (c == 1) {
          fill(0, 1);
        } else {
          rc.parallel().For(c, fill);
        }
        for (int64_t g = 0; g < group; ++g) {
          kernels::GemmEpilogue ep;
          if (bias) ep.row_bias = bias + g * ocg;
          kernels::GemmF32(false, false, ocg, p, kdim, 1.0f, wt + g * ocg * kdim, kdim,
                           col + g * kdim * p, p, 0.0f, y + (b * oc + g * ocg) * p, p,
                           rc.parallel(), ep);
        }
      }
      const size_t total = static_cast<size_t>(n * oc * p);
      if (dt == DType::kFloat16) {
        kernels::FloatToHalf(y, rc.output(0).data<uint16_t>(), total);
      } else if (dt == DType::kBFloat16) {
        kernels::FloatToBFloat16(y, rc.output(0).data<uint16_t>(), total);
      }
    };
  }

 private:
  ConvAttributes attrs_;
  int64_t offset_group_ = 1;
  bool bfloat16_allowed_ = false;
};

}  // namespace

void RegisterDeformConvOps(OpRegistry& registry) {
  registry.Register("", "DeformConv", 19, MakeFactory<DeformConvOp>());
  registry.Register("", "DeformConv", 22, MakeFactory<DeformConvOp>());
}

}  // namespace simplecpp::graph
