// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9), one implementation.
//
// At Prepare every resized axis gets a table, per output coordinate, of source indices and
// weights (computed in double from the spec's coordinate transformation, as the ONNX reference
// does), so the run loop does no coordinate arithmetic:
//   - nearest: one source index per output coordinate; the whole resize is an axis gather
//     (kernels/memory/copy.h), any whole-byte dtype; tf_crop_and_resize's out-of-range coordinates
//     read the extrapolation value;
//   - linear / cubic (float32, float64): `taps` (index, weight) pairs per output coordinate,
//     applied one axis at a time (kernels/nn/resize.h ResizeAxis*), innermost axis first, through
//     ping-pong scratch buffers; antialias widens the filter by 1/scale when downscaling;
//     tf_crop_and_resize then overwrites out-of-range positions (ResizeFillOutside*).
// Axes whose table is the identity (scale 1 with an identity coordinate map) are skipped.
// float16 (every opset) and bfloat16 (Resize opset >= 13) linear / cubic: 16-bit storage, float32
// arithmetic (float16_wrap.h widens X per run and rounds Y once to 16 bits); nearest
// moves the 16-bit elements as bytes.
//
// Coordinates (x = output index, s = scale, in/out = axis lengths, out_f = s * in as a real):
//   half_pixel            (x + 0.5) / s - 0.5
//   half_pixel_symmetric  in/2 * (1 - out/out_f) + (x + 0.5) / s - 0.5
//   pytorch_half_pixel    out_f == 1 ? -0.5 : (x + 0.5) / s - 0.5
//   align_corners         out_f == 1 ? 0 : x * (in - 1) / (out_f - 1)
//   asymmetric            x / s            (opsets 10 and Upsample always)
//   tf_half_pixel_for_nn  (x + 0.5) / s    (opset 11 only)
//   tf_crop_and_resize    roi_start * (in-1) + x * (roi_end - roi_start) * (in-1) / (out_f - 1)
//                         (out_f == 1: the roi's centre); outside [0, in-1] -> extrapolation_value
#include "kernels/nn/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/op.h"
#include "graph/ops/float16_kind.h"
#include "graph/ops/float16_wrap.h"
#include "graph/ops/tensor_ops_internal.h"
#include "graph/registry.h"
#include "kernels/float16/cast.h"
#include "kernels/memory/copy.h"

namespace simplecpp::graph {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class Aspect { kStretch, kNotLarger, kNotSmaller };

// Per-axis tables built at Prepare.
struct AxisTable {
  int axis = 0;
  int64_t in = 0, out = 0, taps = 1;
  std::vector<int64_t> index;    // [out * taps]
  std::vector<double> weight;    // [out * taps] (empty for nearest)
  std::vector<uint8_t> outside;  // [out], tf_crop_and_resize only (else empty)
  bool identity = false;
};

struct ResizeGeometry {
  Dims out;
  std::vector<double> scale, roi_start, roi_end;  // per input axis
};

// Linear / cubic resizing as passes over the axes that change, innermost first: each pass is a
// 1-D resampling of one axis with per-output taps (kernels::ResizeAxisF32 / F64), then the
// extrapolation value fills what tf_crop_and_resize puts outside the input.
struct SeparablePlan {
  struct Pass {
    int64_t outer, in_len, inner, out_len, taps;
    std::vector<int64_t> index;
    std::vector<float> wf;   // float32 input
    std::vector<double> wd;  // float64 input
  };
  std::vector<Pass> passes;
  std::vector<std::vector<uint8_t>> outside;  // per axis; empty when nothing is outside
  bool any_outside = false;
  Dims out;
  double extrapolation = 0;
  bool is_f32 = true;
  size_t element_size = 4;
  int64_t max_elements = 0;  // largest intermediate
  int64_t input_elements = 0;
};

SeparablePlan PlanSeparable(const Dims& xd, const Dims& out, const std::vector<AxisTable>& tables,
                            DType dtype, double extrapolation) {
  SeparablePlan plan;
  const int64_t r = static_cast<int64_t>(xd.size());
  Dims cur = xd;
  for (int64_t k = r - 1; k >= 0; --k) {
    const AxisTable& t = tables[k];
    if (t.identity) continue;
    SeparablePlan::Pass p;
    p.outer = 1;
    for (int64_t j = 0; j < k; ++j) p.outer *= cur[j];
    p.inner = 1;
    for (int64_t j = k + 1; j < r; ++j) p.inner *= cur[j];
    p.in_len = t.in;
    p.out_len = t.out;
    p.taps = t.taps;
    p.index = t.index;
    if (dtype == DType::kFloat32) {
      p.wf.assign(t.weight.begin(), t.weight.end());
    } else {
      p.wd = t.weight;
    }
    cur[k] = t.out;
    plan.max_elements = std::max(plan.max_elements, CheckedNumElements(cur));
    plan.passes.push_back(std::move(p));
  }
  for (const AxisTable& t : tables) {
    bool any = false;
    for (uint8_t m : t.outside) any = any || m;
    plan.outside.push_back(any ? t.outside : std::vector<uint8_t>{});
    plan.any_outside = plan.any_outside || any;
  }
  plan.out = out;
  plan.extrapolation = extrapolation;
  plan.is_f32 = dtype == DType::kFloat32;
  plan.element_size = DTypeSize(dtype);
  plan.input_elements = CheckedNumElements(xd);
  return plan;
}

void RunSeparable(const SeparablePlan& plan, RunContext& rc) {
  const void* src = rc.input(0).raw_data();
  void* dst_final = rc.output(0).raw_data();
  const size_t np = plan.passes.size();
  if (np == 0) {
    std::memcpy(dst_final, src, static_cast<size_t>(plan.input_elements) * plan.element_size);
  } else {
    Tensor bufs[2];
    const DType dt = plan.is_f32 ? DType::kFloat32 : DType::kFloat64;
    if (np > 1) bufs[0] = rc.Scratch(dt, {plan.max_elements});
    if (np > 2) bufs[1] = rc.Scratch(dt, {plan.max_elements});
    for (size_t i = 0; i < np; ++i) {
      const SeparablePlan::Pass& p = plan.passes[i];
      void* dst = i + 1 == np ? dst_final : bufs[i % 2].raw_data();
      if (plan.is_f32) {
        kernels::ResizeAxisF32(p.outer, p.in_len, p.inner, p.out_len, p.taps, p.index.data(),
                               p.wf.data(), static_cast<const float*>(src), static_cast<float*>(dst),
                               rc.parallel());
      } else {
        kernels::ResizeAxisF64(p.outer, p.in_len, p.inner, p.out_len, p.taps, p.index.data(),
                               p.wd.data(), static_cast<const double*>(src),
                               static_cast<double*>(dst), rc.parallel());
      }
      src = dst;
    }
  }
  if (plan.any_outside) {
    std::vector<const uint8_t*> m;
    for (const auto& v : plan.outside) m.push_back(v.empty() ? nullptr : v.data());
    if (plan.is_f32) {
      kernels::ResizeFillOutsideF32(plan.out, m, static_cast<float>(plan.extrapolation),
                                    static_cast<float*>(dst_final));
    } else {
      kernels::ResizeFillOutsideF64(plan.out, m, plan.extrapolation, static_cast<double*>(dst_final));
    }
  }
}

class ResizeOp final : public Op {
 public:
  // upsample: the Upsample op (7: scales attribute, 9: scales input).
  ResizeOp(const OpInit& init, bool upsample)
      : scales_attribute_(upsample && init.opset() < 9),
        bfloat16_allowed_(!upsample && init.opset() >= 13) {
    const int64_t opset = init.opset();
    const std::string mode = init.GetString("mode", "nearest");
    if (mode == "nearest") {
      mode_ = Mode::kNearest;
    } else if (mode == "linear" || (upsample && (mode == "bilinear" || mode == "trilinear"))) {
      mode_ = Mode::kLinear;
    } else if (mode == "cubic" && !upsample && opset >= 11) {
      mode_ = Mode::kCubic;
    } else {
      init.Fail("unsupported mode '" + mode + "'");
    }
    legacy_ = upsample || opset < 11;
    if (legacy_) {
      coord_ = Coord::kAsymmetric;
      nearest_ = Nearest::kSimple;
      if (scales_attribute_) {
        if (!init.Has("scales")) init.Fail("required attribute 'scales' is missing");
        scales_attr_ = init.GetFloats("scales");
        for (float s : scales_attr_) {
          if (!(s >= 1.0f)) init.Fail("Upsample scales must be >= 1");
        }
      }
      return;
    }
    const std::string ct = init.GetString("coordinate_transformation_mode", "half_pixel");
    if (ct == "half_pixel") {
      coord_ = Coord::kHalfPixel;
    } else if (ct == "half_pixel_symmetric" && opset >= 19) {
      coord_ = Coord::kHalfPixelSymmetric;
    } else if (ct == "pytorch_half_pixel") {
      coord_ = Coord::kPytorchHalfPixel;
    } else if (ct == "align_corners") {
      coord_ = Coord::kAlignCorners;
    } else if (ct == "asymmetric") {
      coord_ = Coord::kAsymmetric;
    } else if (ct == "tf_half_pixel_for_nn" && opset < 13) {
      coord_ = Coord::kTfHalfPixelForNn;
    } else if (ct == "tf_crop_and_resize") {
      coord_ = Coord::kTfCropAndResize;
    } else {
      init.Fail("unsupported coordinate_transformation_mode '" + ct + "'");
    }
    const std::string nm = init.GetString("nearest_mode", "round_prefer_floor");
    if (nm == "round_prefer_floor") {
      nearest_ = Nearest::kRoundPreferFloor;
    } else if (nm == "round_prefer_ceil") {
      nearest_ = Nearest::kRoundPreferCeil;
    } else if (nm == "floor") {
      nearest_ = Nearest::kFloor;
    } else if (nm == "ceil") {
      nearest_ = Nearest::kCeil;
    } else {
      init.Fail("unsupported nearest_mode '" + nm + "'");
    }
    cubic_a_ = init.GetFloat("cubic_coeff_a", -0.75f);
    exclude_outside_ = init.GetInt("exclude_outside", 0) != 0;
    extrapolation_ = init.GetFloat("extrapolation_value", 0.0f);
    if (opset >= 18) {
      antialias_ = init.GetInt("antialias", 0) != 0;
      has_axes_ = init.Has("axes");
      axes_ = init.GetInts("axes");
      const std::string kp = init.GetString("keep_aspect_ratio_policy", "stretch");
      if (kp == "stretch") {
        aspect_ = Aspect::kStretch;
      } else if (kp == "not_larger") {
        aspect_ = Aspect::kNotLarger;
      } else if (kp == "not_smaller") {
        aspect_ = Aspect::kNotSmaller;
      } else {
        init.Fail("unsupported keep_aspect_ratio_policy '" + kp + "'");
      }
    }
    if (antialias_ && mode_ == Mode::kNearest) {
      // The spec defines antialias for linear and cubic only; nearest ignores it.
      antialias_ = false;
    }
  }

  void InferTypes(TypeContext& ctx) const override {
    ctx.RequireInput(0);
    const DType t = ctx.input_dtype(0);
    if (mode_ == Mode::kNearest) {
      if (t == DType::kString || DTypeSize(t) == 0) {
        ctx.Unsupported("nearest resize moves whole-byte elements only");
      }
    } else if (bfloat16_allowed_) {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16});
    } else {
      ctx.RequireDType(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16});
    }
    if (legacy_) {
      if (!scales_attribute_) ctx.RequireDType(1, {DType::kFloat32});
    } else {
      if (ctx.has_input(1)) {
        ctx.RequireDType(1, {DType::kFloat32, DType::kFloat64, DType::kFloat16});
      }
      if (ctx.has_input(2)) ctx.RequireDType(2, {DType::kFloat32});
      if (ctx.has_input(3)) ctx.RequireDType(3, {DType::kInt64});
    }
    ctx.set_output_dtype(0, t);
  }

  std::vector<int> ValueInputs() const override {
    if (legacy_) return scales_attribute_ ? std::vector<int>{} : std::vector<int>{1};
    return {1, 2, 3};
  }

  RunFn Prepare(PrepareContext& ctx) const override {
    const DType dt = ctx.input_dtype(0);
    if (mode_ != Mode::kNearest && Is16BitFloat(dt)) {
      return widen16::PrepareWidened16(ctx, dt, {0},
                                       [this](PrepareContext& c) { return PrepareImpl(c); });
    }
    return PrepareImpl(ctx);
  }
  // Nearest: any whole-byte dtype; linear / cubic: float32 or float64.
  RunFn PrepareImpl(PrepareContext& ctx) const;

 private:
  std::vector<double> ReadDoubles(const PrepareContext& ctx, int i) const {
    std::vector<double> v;
    if (!ctx.has_input(i)) return v;
    const Tensor& t = ctx.RequireValue(i);
    for (int64_t k = 0; k < t.num_elements(); ++k) v.push_back(TensorElementAsDouble(t, k));
    return v;
  }
  double SourceCoord(PrepareContext& ctx, int64_t x, double scale, int64_t in, int64_t out,
                     double roi_start, double roi_end) const;
  // The axes the scales / sizes / roi inputs refer to (all of them without `axes`).
  std::vector<int64_t> ResolveAxes(const PrepareContext& ctx, int64_t rank) const;
  // Output dims, per-axis scale and roi from the scales / sizes / roi inputs (or attribute).
  ResizeGeometry ResolveGeometry(const PrepareContext& ctx, const Dims& xd) const;
  RunFn PrepareNearest(PrepareContext& ctx, const Dims& xd, const Dims& out,
                       const std::vector<AxisTable>& tables) const;
  AxisTable BuildTable(PrepareContext& ctx, int axis, int64_t in, int64_t out, double scale,
                       double roi_start, double roi_end) const;

  bool scales_attribute_;  // Upsample before opset 9: scales is the attribute scales_attr_
  bool bfloat16_allowed_;  // linear / cubic take bfloat16 (Resize from opset 13)
  bool legacy_ = false;
  Mode mode_ = Mode::kNearest;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  Aspect aspect_ = Aspect::kStretch;
  float cubic_a_ = -0.75f;
  bool exclude_outside_ = false;
  float extrapolation_ = 0.0f;
  bool antialias_ = false;
  bool has_axes_ = false;
  std::vector<int64_t> axes_;
  std::vector<float> scales_attr_;
};

double ResizeOp::SourceCoord(PrepareContext& ctx, int64_t x, double scale, int64_t in, int64_t out,
                             double roi_start, double roi_end) const {
  (void)ctx;
  const double xf = static_cast<double>(x);
  const double out_f = scale * static_cast<double>(in);
  switch (coord_) {
    case Coord::kHalfPixel:
      return (xf + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out) / out_f;
      const double center = static_cast<double>(in) / 2;
      return center * (1 - adjustment) + (xf + 0.5) / scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return out_f == 1.0 ? -0.5 : (xf + 0.5) / scale - 0.5;
    case Coord::kAlignCorners:
      return out_f == 1.0 ? 0.0 : xf * static_cast<double>(in - 1) / (out_f - 1);
    case Coord::kAsymmetric:
      return xf / scale;
    case Coord::kTfHalfPixelForNn:
      return (xf + 0.5) / scale;
    case Coord::kTfCropAndResize: {
      const double len = static_cast<double>(in - 1);
      const double v = out_f == 1.0 ? (roi_end - roi_start) * len / 2
                                    : xf * (roi_end - roi_start) * len / (out_f - 1);
      return v + roi_start * len;
    }
  }
  return 0.0;
}

AxisTable ResizeOp::BuildTable(PrepareContext& ctx, int axis, int64_t in, int64_t out, double scale,
                               double roi_start, double roi_end) const {
  AxisTable t;
  t.axis = axis;
  t.in = in;
  t.out = out;
  const bool crop = coord_ == Coord::kTfCropAndResize;
  if (crop) t.outside.assign(static_cast<size_t>(out), 0);
  auto clamp = [in](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  if (mode_ == Mode::kNearest) {
    t.taps = 1;
    t.index.resize(static_cast<size_t>(out));
    for (int64_t x = 0; x < out; ++x) {
      const double xo = SourceCoord(ctx, x, scale, in, out, roi_start, roi_end);
      if (crop && (xo < 0 || xo > static_cast<double>(in - 1))) t.outside[x] = 1;
      int64_t i;
      const double fl = std::floor(xo);
      if (xo == fl) {
        i = static_cast<int64_t>(fl);
      } else {
        const double ratio = xo - fl;
        switch (nearest_) {
          case Nearest::kRoundPreferFloor:
            i = static_cast<int64_t>(fl) + (ratio > 0.5 ? 1 : 0);
            break;
          case Nearest::kRoundPreferCeil:
            i = static_cast<int64_t>(fl) + (ratio >= 0.5 ? 1 : 0);
            break;
          case Nearest::kFloor:
            i = static_cast<int64_t>(fl);
            break;
          case Nearest::kCeil:
            i = static_cast<int64_t>(fl) + 1;
            break;
          case Nearest::kSimple:
          default:
            i = static_cast<int64_t>(fl) + (scale < 1.0 ? 1 : 0);
            break;
        }
      }
      t.index[x] = clamp(i);
    }
  } else {
    // Taps i in [start, 2 - start) around x_int (ratio in (0, 1]); the filter is stretched by
    // 1/scale when antialiasing a downscale.
    const double fs = antialias_ ? std::min(scale, 1.0) : 1.0;
    const double support = mode_ == Mode::kLinear ? 1.0 : 2.0;
    const int64_t start = static_cast<int64_t>(std::floor(-support / fs)) + 1;
    t.taps = 2 - 2 * start;
    t.index.resize(static_cast<size_t>(out * t.taps));
    t.weight.resize(static_cast<size_t>(out * t.taps));
    const double a = cubic_a_;
    auto kernel = [&](double d) {
      d = std::abs(d);
      if (mode_ == Mode::kLinear) return std::max(0.0, 1.0 - d);
      if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
      if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
      return 0.0;
    };
    for (int64_t x = 0; x < out; ++x) {
      const double xo = SourceCoord(ctx, x, scale, in, out, roi_start, roi_end);
      if (crop && (xo < 0 || xo > static_cast<double>(in - 1))) t.outside[x] = 1;
      double fl = std::floor(xo);
      double ratio = xo - fl;
      if (ratio == 0.0) {
        fl -= 1;
        ratio = 1.0;
      }
      const int64_t xi = static_cast<int64_t>(fl);
      int64_t* idx = t.index.data() + x * t.taps;
      double* w = t.weight.data() + x * t.taps;
      double sum = 0;
      for (int64_t k = 0; k < t.taps; ++k) {
        const int64_t i = start + k;
        double wk = kernel((static_cast<double>(i) - ratio) * fs);
        const int64_t src = xi + i;
        if (exclude_outside_ && (src < 0 || src >= in)) wk = 0;
        idx[k] = clamp(src);
        w[k] = wk;
        sum += wk;
      }
      if ((antialias_ || exclude_outside_) && sum != 0) {
        for (int64_t k = 0; k < t.taps; ++k) w[k] /= sum;
      }
    }
  }
  // Identity: every output x reads only source x, with total weight 1.
  bool identity = in == out;
  for (int64_t x = 0; identity && x < out; ++x) {
    if (crop && t.outside[x]) identity = false;
    double wx = 0;
    for (int64_t k = 0; identity && k < t.taps; ++k) {
      const double w = t.weight.empty() ? 1.0 : t.weight[x * t.taps + k];
      if (w == 0) continue;
      if (t.index[x * t.taps + k] != x) identity = false;
      wx += w;
    }
    if (wx != 1.0) identity = false;
  }
  t.identity = identity;
  return t;
}

std::vector<int64_t> ResizeOp::ResolveAxes(const PrepareContext& ctx, int64_t r) const {
  std::vector<int64_t> axes;
  if (!has_axes_) {
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
    return axes;
  }
  return tensor_ops::NormalizeAxes(ctx, axes_, r);
}

ResizeGeometry ResizeOp::ResolveGeometry(const PrepareContext& ctx, const Dims& xd) const {
  const int64_t r = static_cast<int64_t>(xd.size());
  const std::vector<int64_t> axes = ResolveAxes(ctx, r);
  const size_t na = axes.size();
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  if (legacy_) {
    if (scales_attribute_) {
      scales.assign(scales_attr_.begin(), scales_attr_.end());
    } else {
      scales = ReadDoubles(ctx, 1);
    }
    if (scales.empty()) ctx.Fail("scales must not be empty");
  } else {
    if (coord_ == Coord::kTfCropAndResize) roi = ReadDoubles(ctx, 1);
    scales = ReadDoubles(ctx, 2);
    if (ctx.has_input(3)) sizes = TensorToInt64s(ctx.RequireValue(3));
    const bool has_sizes = ctx.has_input(3) && ctx.RequireValue(3).num_elements() > 0;
    if (!scales.empty() && has_sizes) ctx.Fail("only one of scales and sizes may be given");
    if (scales.empty() && !has_sizes) ctx.Fail("one of scales and sizes must be given");
    if (!has_sizes) sizes.clear();
  }
  ResizeGeometry g;
  g.scale.assign(static_cast<size_t>(r), 1.0);
  g.out = xd;
  if (!scales.empty()) {
    if (scales.size() != na) {
      ctx.Fail("scales has " + std::to_string(scales.size()) + " values, expected " +
               std::to_string(na));
    }
    for (size_t i = 0; i < na; ++i) {
      if (!(scales[i] > 0)) ctx.Fail("scales must be > 0, got " + std::to_string(scales[i]));
      g.scale[axes[i]] = scales[i];
      // Checked before the conversion: a huge or infinite scale must not make it UB.
      const double dim = scales[i] * static_cast<double>(xd[axes[i]]);
      if (!(dim < 0x1p62)) {
        ctx.Fail("scales[" + std::to_string(i) + "] = " + std::to_string(scales[i]) +
                 " makes the output dim too large");
      }
      g.out[axes[i]] = static_cast<int64_t>(dim);
    }
  } else {
    if (sizes.size() != na) {
      ctx.Fail("sizes has " + std::to_string(sizes.size()) + " values, expected " +
               std::to_string(na));
    }
    for (size_t i = 0; i < na; ++i) {
      if (sizes[i] < 0) ctx.Fail("sizes must be >= 0");
      if (xd[axes[i]] == 0 && sizes[i] != 0) {
        ctx.Fail("cannot resize the empty axis " + std::to_string(axes[i]));
      }
      g.scale[axes[i]] =
          xd[axes[i]] == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(xd[axes[i]]);
      g.out[axes[i]] = sizes[i];
    }
    if (aspect_ != Aspect::kStretch && na > 0) {
      double s = g.scale[axes[0]];
      for (size_t i = 1; i < na; ++i) {
        s = aspect_ == Aspect::kNotLarger ? std::min(s, g.scale[axes[i]])
                                          : std::max(s, g.scale[axes[i]]);
      }
      for (size_t i = 0; i < na; ++i) {
        g.scale[axes[i]] = s;
        g.out[axes[i]] = static_cast<int64_t>(s * static_cast<double>(xd[axes[i]]) + 0.5);
      }
    }
  }
  if (legacy_ && scales.size() != static_cast<size_t>(r)) {
    ctx.Fail("scales must have one value per input dim");
  }
  g.roi_start.assign(static_cast<size_t>(r), 0.0);
  g.roi_end.assign(static_cast<size_t>(r), 1.0);
  if (coord_ == Coord::kTfCropAndResize) {
    if (roi.size() != 2 * na) {
      ctx.Fail("roi has " + std::to_string(roi.size()) + " values, expected " +
               std::to_string(2 * na));
    }
    for (size_t i = 0; i < na; ++i) {
      g.roi_start[axes[i]] = roi[i];
      g.roi_end[axes[i]] = roi[na + i];
    }
  }
  return g;
}

RunFn ResizeOp::PrepareNearest(PrepareContext& ctx, const Dims& xd, const Dims& out,
                               const std::vector<AxisTable>& tables) const {
  // An axis gather: offsets = source index * stride, -1 where the extrapolation value goes.
  const int64_t r = static_cast<int64_t>(xd.size());
  const DType dtype = ctx.input_dtype(0);
  std::vector<int64_t> strides(static_cast<size_t>(r), 1);
  for (int64_t k = r - 2; k >= 0; --k) strides[k] = strides[k + 1] * xd[k + 1];
  std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(r));
  bool fill_needed = false;
  for (int64_t k = 0; k < r; ++k) {
    const AxisTable& t = tables[k];
    offsets[k].resize(static_cast<size_t>(out[k]));
    for (int64_t x = 0; x < out[k]; ++x) {
      const bool outside = !t.outside.empty() && t.outside[x];
      fill_needed = fill_needed || outside;
      offsets[k][x] = outside ? -1 : t.index[x] * strides[k];
    }
  }
  std::vector<unsigned char> fill(DTypeSize(dtype), 0);
  if (fill_needed) {
    kernels::CastFn cast = kernels::FindCastFn(DType::kFloat32, dtype);
    if (cast == nullptr) ctx.Unsupported("cannot convert extrapolation_value to this dtype");
    cast(&extrapolation_, fill.data(), 1, {});
  }
  auto plan = std::make_shared<const kernels::AxisGatherPlan>(
      kernels::PlanAxisGather(DTypeSize(dtype), out, std::move(offsets)));
  return [plan, fill](RunContext& rc) {
    kernels::AxisGatherBytes(*plan, rc.input(0).raw_data(), rc.output(0).raw_data(), fill.data(),
                             rc.parallel());
  };
}

RunFn ResizeOp::PrepareImpl(PrepareContext& ctx) const {
  const Dims& xd = ctx.input_dims(0);
  const int64_t r = static_cast<int64_t>(xd.size());
  const DType dtype = ctx.input_dtype(0);
  const ResizeGeometry g = ResolveGeometry(ctx, xd);
  ctx.set_output(0, dtype, g.out);
  if (CheckedNumElements(g.out) == 0) return [](RunContext&) {};
  for (int64_t k = 0; k < r; ++k) {
    if (xd[k] == 0) ctx.Fail("cannot resize the empty axis " + std::to_string(k));
  }
  std::vector<AxisTable> tables;
  for (int64_t k = 0; k < r; ++k) {
    tables.push_back(BuildTable(ctx, static_cast<int>(k), xd[k], g.out[k], g.scale[k],
                                g.roi_start[k], g.roi_end[k]));
  }
  if (mode_ == Mode::kNearest) return PrepareNearest(ctx, xd, g.out, tables);
  auto plan = std::make_shared<const SeparablePlan>(PlanSeparable(xd, g.out, tables, dtype, extrapolation_));
  return [plan](RunContext& rc) { RunSeparable(*plan, rc); };
}

class UpsampleOp final : public Op {
 public:
  explicit UpsampleOp(const OpInit& init) : impl_(init, true) {}
  void InferTypes(TypeContext& ctx) const override { impl_.InferTypes(ctx); }
  std::vector<int> ValueInputs() const override { return impl_.ValueInputs(); }
  RunFn Prepare(PrepareContext& ctx) const override { return impl_.Prepare(ctx); }

 private:
  ResizeOp impl_;
};

}  // namespace

void RegisterResizeOps(OpRegistry& registry) {
  auto resize = [](const OpInit& init) -> std::unique_ptr<Op> {
    return std::make_unique<ResizeOp>(init, false);
  };
  for (int v : {10, 11, 13, 18, 19}) registry.Register("", "Resize", v, resize);
  registry.Register("", "Upsample", 7, MakeFactory<UpsampleOp>());
  registry.Register("", "Upsample", 9, MakeFactory<UpsampleOp>());
}

}  // namespace simplecpp::graph
