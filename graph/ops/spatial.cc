// Spatial ops for detection / OCR / segmentation models: RoiAlign (10, 16, 22), GridSample
// (16, 20, 22), Col2Im (18), CenterCropPad (18), AffineGrid (20). RegisterSpatialOps also
// registers ConvTranspose (conv_transpose.cc) and Resize / Upsample (resize.cc).
// The sampling math lives in kernels/nn/resize.h, col2im in kernels/conv/col2im.h; CenterCropPad is
// an axis gather (kernels/memory/copy.h) whose out-of-range positions are zero.
// float16 / bfloat16 (RoiAlign, GridSample, Col2Im, AffineGrid): 16-bit storage, float32
// arithmetic: 16-bit inputs are widened to float32 (constant ones once, at Prepare), the float32
// kernel runs, and each output element is rounded once back to 16 bits (nearest-even).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/families.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/tensor_ops_internal.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/conv/col2im.h"
#include "kernels/float16/float16.h"
#include "kernels/memory/copy.h"
#include "kernels/nn/resize.h"

namespace simplecpp::graph {

void RegisterResizeOps(OpRegistry& registry);         // resize.cc
void RegisterConvTransposeOps(OpRegistry& registry);  // conv_transpose.cc

namespace {

std::vector<int64_t> ReadInt64s(const PrepareContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.RequireValue(i);
  if (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) {
    ctx.Fail(std::string(what) + " must be int64, got " + DTypeName(t.dtype()));
  }
  return TensorToInt64s(t);
}

// ---- 16-bit float helpers ----

// Input `i` must be one of `allowed`, or bfloat16 when `bf16_allowed` (the op resolves it from
// its opset; `bf16_since`, the version whose type constraint added bfloat16, names it in the error).
void RequireFloatDType(TypeContext& ctx, int i, std::initializer_list<DType> allowed,
                       bool bf16_allowed, int64_t bf16_since) {
  ctx.RequireInput(i);
  const DType dt = ctx.input_dtype(i);
  if (dt == DType::kBFloat16) {
    if (bf16_allowed) return;
    ctx.Unsupported("bfloat16 is allowed for this op from opset " + std::to_string(bf16_since) +
                    " only (this node has opset " + std::to_string(ctx.opset()) + ")");
  }
  ctx.RequireDType(i, allowed);
}

// A 16-bit input read as float32: widened once at Prepare when its value is known then
// (a constant), else widened per run into a scratch tensor.
struct Input16 {
  int index = 0;
  kernels::Float16Kind kind = kernels::Float16Kind::kHalf;
  std::shared_ptr<const std::vector<float>> constant;

  const float* Widen(RunContext& rc, Tensor* scratch) const {
    if (constant) return constant->data();
    const Tensor& t = rc.input(index);
    *scratch = rc.Scratch(DType::kFloat32, t.dims());
    kernels::Widen16(kind, t.data<uint16_t>(), scratch->data<float>(),
                     static_cast<size_t>(t.num_elements()));
    return scratch->data<float>();
  }
};

Input16 MakeInput16(const PrepareContext& ctx, int i, kernels::Float16Kind kind) {
  Input16 in;
  in.index = i;
  in.kind = kind;
  if (const Tensor* v = ctx.input_value(i)) {
    auto w = std::make_shared<std::vector<float>>(static_cast<size_t>(v->num_elements()));
    kernels::Widen16(kind, v->data<uint16_t>(), w->data(), w->size());
    in.constant = std::move(w);
  }
  return in;
}

// Rounds a float32 result once into the 16-bit output 0.
void NarrowOutput(RunContext& rc, kernels::Float16Kind kind, const Tensor& y32) {
  kernels::Narrow16(kind, y32.data<float>(), rc.output(0).data<uint16_t>(),
                    static_cast<size_t>(y32.num_elements()));
}

// ---- RoiAlign ----
class RoiAlignOp final : public Op {
 public:
  explicit RoiAlignOp(const OpInit& init) : bfloat16_allowed_(init.opset() >= 22) {
    const std::string mode = init.GetString("mode", "avg");
    if (mode != "avg" && mode != "max") init.Fail("mode must be avg or max, got '" + mode + "'");
    p_.max_mode = mode == "max";
    if (init.opset() >= 16) {
      const std::string ct = init.GetString("coordinate_transformation_mode", "half_pixel");
      if (ct != "half_pixel" && ct != "output_half_pixel") {
        init.Fail("coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" +
                  ct + "'");
      }
      p_.half_pixel = ct == "half_pixel";
    } else {
      p_.half_pixel = false;  // opset 10 behaves as output_half_pixel
    }
    p_.out_h = init.GetInt("output_height", 1);
    p_.out_w = init.GetInt("output_width", 1);
    p_.sampling_ratio = init.GetInt("sampling_ratio", 0);
    p_.spatial_scale = init.GetFloat("spatial_scale", 1.0f);
    if (p_.out_h < 1 || p_.out_w < 1) init.Fail("output_height and output_width must be >= 1");
    if (p_.sampling_ratio < 0) init.Fail("sampling_ratio must be >= 0");
  }
  void InferTypes(TypeContext& ctx) const override {
    // T1: float16, float, double; bfloat16 from opset 22.
    RequireFloatDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16},
                      bfloat16_allowed_, 22);
    ctx.RequireSameDType(0, 1);
    ctx.RequireDType(2, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const Dims& rd = ctx.input_dims(1);
    const Dims& bd = ctx.input_dims(2);
    if (xd.size() != 4) ctx.Fail("X must be 4-D [N, C, H, W]");
    if (rd.size() != 2 || rd[1] != 4) ctx.Fail("rois must be [num_rois, 4]");
    if (bd.size() != 1 || bd[0] != rd[0]) ctx.Fail("batch_indices must be [num_rois]");
    kernels::RoiAlignParams p = p_;
    p.batch = xd[0];
    p.channels = xd[1];
    p.height = xd[2];
    p.width = xd[3];
    const int64_t num_rois = rd[0];
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, {num_rois, xd[1], p.out_h, p.out_w});
    if (num_rois == 0 || xd[1] == 0) return [](RunContext&) {};
    if (p.height == 0 || p.width == 0) ctx.Fail("X has an empty spatial dim");
    const bool f32 = dt == DType::kFloat32;
    const bool is16 = Is16BitFloat(dt);
    Input16 x16, rois16;
    if (is16) {
      x16 = MakeInput16(ctx, 0, Float16KindOf(dt));
      rois16 = MakeInput16(ctx, 1, Float16KindOf(dt));
    }
    const Dims out_dims = {num_rois, xd[1], p.out_h, p.out_w};
    return [p, num_rois, f32, is16, x16, rois16, out_dims](RunContext& rc) {
      const int64_t* bi = rc.input(2).data<int64_t>();
      for (int64_t r = 0; r < num_rois; ++r) {
        if (bi[r] < 0 || bi[r] >= p.batch) {
          rc.Fail("batch_indices[" + std::to_string(r) + "] = " + std::to_string(bi[r]) +
                  " is out of range [0, " + std::to_string(p.batch) + ")");
        }
      }
      if (is16) {
        Tensor xs, rs;
        const float* x = x16.Widen(rc, &xs);
        const float* rois = rois16.Widen(rc, &rs);
        Tensor y32 = rc.Scratch(DType::kFloat32, out_dims);
        kernels::RoiAlignF32(p, x, rois, bi, num_rois, y32.data<float>(), rc.parallel());
        NarrowOutput(rc, x16.kind, y32);
      } else if (f32) {
        kernels::RoiAlignF32(p, rc.input(0).data<float>(), rc.input(1).data<float>(), bi, num_rois,
                             rc.output(0).data<float>(), rc.parallel());
      } else {
        kernels::RoiAlignF64(p, rc.input(0).data<double>(), rc.input(1).data<double>(), bi,
                             num_rois, rc.output(0).data<double>(), rc.parallel());
      }
    };
  }

 private:
  bool bfloat16_allowed_;
  kernels::RoiAlignParams p_;
};

// ---- GridSample ----
class GridSampleOp final : public Op {
 public:
  explicit GridSampleOp(const OpInit& init)
      : only_4d_(init.opset() < 20), bfloat16_allowed_(init.opset() >= 22) {
    const bool v20 = !only_4d_;
    const std::string mode = init.GetString("mode", v20 ? "linear" : "bilinear");
    if (mode == (v20 ? "linear" : "bilinear")) {
      mode_ = kernels::GridSampleMode::kLinear;
    } else if (mode == "nearest") {
      mode_ = kernels::GridSampleMode::kNearest;
    } else if (mode == (v20 ? "cubic" : "bicubic")) {
      mode_ = kernels::GridSampleMode::kCubic;
    } else {
      init.Fail("unsupported mode '" + mode + "'");
    }
    const std::string pad = init.GetString("padding_mode", "zeros");
    if (pad == "zeros") {
      padding_ = kernels::GridSamplePadding::kZeros;
    } else if (pad == "border") {
      padding_ = kernels::GridSamplePadding::kBorder;
    } else if (pad == "reflection") {
      padding_ = kernels::GridSamplePadding::kReflection;
    } else {
      init.Fail("unsupported padding_mode '" + pad + "'");
    }
    align_corners_ = init.GetInt("align_corners", 0) != 0;
  }
  void InferTypes(TypeContext& ctx) const override {
    // X and grid share one dtype here; grid (T2) is float16, float, double; bfloat16 from 22.
    RequireFloatDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16},
                      bfloat16_allowed_, 22);
    ctx.RequireSameDType(0, 1);
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const Dims& gd = ctx.input_dims(1);
    const int64_t rank = static_cast<int64_t>(xd.size()) - 2;
    if (only_4d_ && xd.size() != 4) ctx.Fail("X must be 4-D [N, C, H, W] before opset 20");
    if (rank < 1 || rank > 3) ctx.Unsupported("GridSample supports 1 to 3 spatial dims");
    if (mode_ == kernels::GridSampleMode::kCubic && rank != 2) {
      ctx.Fail("cubic mode supports 4-D input only");
    }
    if (static_cast<int64_t>(gd.size()) != rank + 2 || gd[0] != xd[0] || gd[rank + 1] != rank) {
      ctx.Fail("grid must be [N, out..., " + std::to_string(rank) + "] for X " + DimsToString(xd));
    }
    kernels::GridSampleParams p;
    p.rank = static_cast<int>(rank);
    p.batch = xd[0];
    p.channels = xd[1];
    Dims out = {xd[0], xd[1]};
    for (int64_t s = 0; s < rank; ++s) {
      p.in[s] = xd[2 + s];
      p.out[s] = gd[1 + s];
      out.push_back(gd[1 + s]);
    }
    p.mode = mode_;
    p.padding = padding_;
    p.align_corners = align_corners_;
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out);
    if (CheckedNumElements(out) == 0) return [](RunContext&) {};
    for (int64_t s = 0; s < rank; ++s) {
      if (p.in[s] == 0) ctx.Fail("X has an empty spatial dim");
    }
    if (Is16BitFloat(dt)) {
      const Input16 x16 = MakeInput16(ctx, 0, Float16KindOf(dt));
      const Input16 g16 = MakeInput16(ctx, 1, Float16KindOf(dt));
      return [p, x16, g16, out](RunContext& rc) {
        Tensor xs, gs;
        const float* x = x16.Widen(rc, &xs);
        const float* grid = g16.Widen(rc, &gs);
        Tensor y32 = rc.Scratch(DType::kFloat32, out);
        kernels::GridSampleF32(p, x, grid, y32.data<float>(), rc.parallel());
        NarrowOutput(rc, x16.kind, y32);
      };
    }
    if (dt == DType::kFloat32) {
      return [p](RunContext& rc) {
        kernels::GridSampleF32(p, rc.input(0).data<float>(), rc.input(1).data<float>(),
                               rc.output(0).data<float>(), rc.parallel());
      };
    }
    return [p](RunContext& rc) {
      kernels::GridSampleF64(p, rc.input(0).data<double>(), rc.input(1).data<double>(),
                             rc.output(0).data<double>(), rc.parallel());
    };
  }

 private:
  bool only_4d_;  // before opset 20 GridSample is 2-D only: X is [N, C, H, W]
  bool bfloat16_allowed_;
  kernels::GridSampleMode mode_ = kernels::GridSampleMode::kLinear;
  kernels::GridSamplePadding padding_ = kernels::GridSamplePadding::kZeros;
  bool align_corners_ = false;
};

// ---- Col2Im ----
class Col2ImOp final : public Op {
 public:
  // Col2Im has dilations, pads and strides; the block shape is an input.
  explicit Col2ImOp(const OpInit& init) : window_(WindowAttributes::Read(init)) {}
  void InferTypes(TypeContext& ctx) const override {
    // T is every tensor type in the spec; this implementation computes float32, float16 and
    // bfloat16.
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
    ctx.RequireDType(1, {DType::kInt64});
    ctx.RequireDType(2, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1, 2}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const std::vector<int64_t> image = ReadInt64s(ctx, 1, "image_shape");
    const std::vector<int64_t> block = ReadInt64s(ctx, 2, "block_shape");
    const size_t rank = image.size();
    if (xd.size() != 3) ctx.Fail("input must be [N, C * prod(block_shape), L]");
    if (block.size() != rank || rank == 0) {
      ctx.Fail("image_shape and block_shape must have the same nonzero length");
    }
    if (rank > 3) ctx.Unsupported("Col2Im supports 1 to 3 spatial dims");
    window_.CheckRank(ctx, static_cast<int>(rank));
    kernels::ConvGeometry g;
    g.rank = static_cast<int>(rank);
    int64_t ksize = 1, blocks = 1;
    for (size_t d = 0; d < rank; ++d) {
      if (block[d] < 1) ctx.Fail("block_shape must be >= 1");
      if (image[d] < 0) ctx.Fail("image_shape must be >= 0");
      const int64_t dil = window_.dilation(static_cast<int>(d));
      const int64_t s = window_.stride(static_cast<int>(d));
      const int64_t ext = (block[d] - 1) * dil + 1;
      const WindowAttributes::Axis axis =
          window_.ResolveAxis(static_cast<int>(d), static_cast<int>(rank), image[d], ext);
      const int64_t pb = axis.pad_begin, pe = axis.pad_end;
      if (image[d] + pb + pe < ext) ctx.Fail("block is larger than the padded image");
      g.in[d] = image[d];
      g.out[d] = (image[d] + pb + pe - ext) / s + 1;
      g.kernel[d] = block[d];
      g.stride[d] = s;
      g.dilation[d] = dil;
      g.pad[d] = pb;
      ksize *= block[d];
      blocks *= g.out[d];
    }
    if (xd[1] % ksize != 0) {
      ctx.Fail("input dim 1 (" + std::to_string(xd[1]) +
               ") is not a multiple of prod(block_shape)");
    }
    if (xd[2] != blocks) {
      ctx.Fail("input dim 2 (" + std::to_string(xd[2]) + ") must be the number of blocks " +
               std::to_string(blocks));
    }
    const int64_t batch = xd[0], channels = xd[1] / ksize;
    Dims out = {batch, channels};
    for (int64_t v : image) out.push_back(v);
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out);
    const int64_t img = g.InSize();
    const bool is16 = Is16BitFloat(dt);
    Input16 x16;
    if (is16) x16 = MakeInput16(ctx, 0, Float16KindOf(dt));
    return [g, batch, channels, img, ksize, blocks, is16, x16, out](RunContext& rc) {
      Tensor xs, y32;
      const float* x = is16 ? x16.Widen(rc, &xs) : rc.input(0).data<float>();
      if (is16) y32 = rc.Scratch(DType::kFloat32, out);
      float* y = is16 ? y32.data<float>() : rc.output(0).data<float>();
      for (int64_t n = 0; n < batch; ++n) {
        float* yn = y + n * channels * img;
        kernels::Col2ImInitF32(channels, img, nullptr, yn, rc.parallel());
        kernels::Col2ImF32(g, x + n * channels * ksize * blocks, channels, 0, blocks, yn,
                           rc.parallel());
      }
      if (is16) NarrowOutput(rc, x16.kind, y32);
    };
  }

 private:
  WindowAttributes window_;
};

// ---- CenterCropPad ----
class CenterCropPadOp final : public Op {
 public:
  explicit CenterCropPadOp(const OpInit& init) {
    has_axes_ = init.Has("axes");
    axes_ = init.GetInts("axes");
  }
  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    if (ctx.input_dtype(0) == DType::kString || DTypeSize(ctx.input_dtype(0)) == 0) {
      ctx.Unsupported("CenterCropPad moves whole-byte elements only");
    }
    ctx.RequireDType(1, {DType::kInt64, DType::kInt32});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& xd = ctx.input_dims(0);
    const int64_t r = static_cast<int64_t>(xd.size());
    const std::vector<int64_t> shape = ReadInt64s(ctx, 1, "shape");
    std::vector<int64_t> axes;
    if (has_axes_) {
      axes = tensor_ops::NormalizeAxes(ctx, axes_, r);
    } else {
      for (int64_t k = 0; k < r; ++k) axes.push_back(k);
    }
    if (shape.size() != axes.size()) {
      ctx.Fail("shape has " + std::to_string(shape.size()) + " values, expected " +
               std::to_string(axes.size()));
    }
    Dims out = xd;
    std::vector<int64_t> shift(static_cast<size_t>(r), 0);  // source = i + shift
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t k = axes[i], in = xd[k], want = shape[i];
      if (want < 0) ctx.Fail("shape must be >= 0");
      out[k] = want;
      shift[k] = want <= in ? (in - want) / 2 : -((want - in) / 2);
    }
    std::vector<int64_t> strides(static_cast<size_t>(r), 1);
    for (int64_t k = r - 2; k >= 0; --k) strides[k] = strides[k + 1] * xd[k + 1];
    std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) {
      for (int64_t i = 0; i < out[k]; ++i) {
        const int64_t src = i + shift[k];
        offsets[k].push_back(src < 0 || src >= xd[k] ? -1 : src * strides[k]);
      }
    }
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out);
    if (CheckedNumElements(out) == 0) return [](RunContext&) {};
    auto plan = std::make_shared<const kernels::AxisGatherPlan>(
        kernels::PlanAxisGather(DTypeSize(dt), out, std::move(offsets)));
    const std::vector<unsigned char> zero(DTypeSize(dt), 0);
    return [plan, zero](RunContext& rc) {
      kernels::AxisGatherBytes(*plan, rc.input(0).raw_data(), rc.output(0).raw_data(), zero.data(),
                               rc.parallel());
    };
  }

 private:
  bool has_axes_ = false;
  std::vector<int64_t> axes_;
};

// ---- AffineGrid ----
class AffineGridOp final : public Op {
 public:
  explicit AffineGridOp(const OpInit& init) {
    align_corners_ = init.GetInt("align_corners", 0) != 0;
  }
  void InferTypes(TypeContext& ctx) const override {
    // T1: bfloat16, float16, float, double (since opset 20).
    ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    ctx.RequireDType(1, {DType::kInt64});
    ctx.set_output_dtype(0, ctx.input_dtype(0));
  }
  std::vector<int> ValueInputs() const override { return {1}; }
  RunFn Prepare(PrepareContext& ctx) const override {
    const Dims& td = ctx.input_dims(0);
    const std::vector<int64_t> size = ReadInt64s(ctx, 1, "size");
    if (size.size() != 4 && size.size() != 5)
      ctx.Fail("size must be [N, C, H, W] or [N, C, D, H, W]");
    const int rank = static_cast<int>(size.size()) - 2;
    if (td != Dims{size[0], rank, rank + 1}) {
      ctx.Fail("theta must be [" + std::to_string(size[0]) + ", " + std::to_string(rank) + ", " +
               std::to_string(rank + 1) + "]");
    }
    Dims out = {size[0]};
    std::vector<int64_t> spatial;
    for (int d = 0; d < rank; ++d) {
      if (size[2 + d] < 0) ctx.Fail("size must be >= 0");
      out.push_back(size[2 + d]);
      spatial.push_back(size[2 + d]);
    }
    out.push_back(rank);
    const DType dt = ctx.input_dtype(0);
    ctx.set_output(0, dt, out);
    const int64_t batch = size[0];
    const bool ac = align_corners_;
    if (CheckedNumElements(out) == 0) return [](RunContext&) {};
    if (Is16BitFloat(dt)) {
      const Input16 t16 = MakeInput16(ctx, 0, Float16KindOf(dt));
      return [rank, batch, spatial, ac, t16, out](RunContext& rc) {
        Tensor ts;
        const float* theta = t16.Widen(rc, &ts);
        Tensor y32 = rc.Scratch(DType::kFloat32, out);
        kernels::AffineGridF32(rank, batch, spatial.data(), ac, theta, y32.data<float>());
        NarrowOutput(rc, t16.kind, y32);
      };
    }
    if (dt == DType::kFloat32) {
      return [rank, batch, spatial, ac](RunContext& rc) {
        kernels::AffineGridF32(rank, batch, spatial.data(), ac, rc.input(0).data<float>(),
                               rc.output(0).data<float>());
      };
    }
    return [rank, batch, spatial, ac](RunContext& rc) {
      kernels::AffineGridF64(rank, batch, spatial.data(), ac, rc.input(0).data<double>(),
                             rc.output(0).data<double>());
    };
  }

 private:
  bool align_corners_ = false;
};

}  // namespace

void RegisterSpatialOps(OpRegistry& registry) {
  RegisterConvTransposeOps(registry);
  RegisterResizeOps(registry);
  for (int v : {10, 16, 22}) registry.Register("", "RoiAlign", v, MakeFactory<RoiAlignOp>());
  for (int v : {16, 20, 22}) registry.Register("", "GridSample", v, MakeFactory<GridSampleOp>());
  registry.Register("", "Col2Im", 18, MakeFactory<Col2ImOp>());
  registry.Register("", "CenterCropPad", 18, MakeFactory<CenterCropPadOp>());
  registry.Register("", "AffineGrid", 20, MakeFactory<AffineGridOp>());
}

}  // namespace simplecpp::graph
