// com.microsoft (opset 1) quantized pooling contrib ops: QLinearGlobalAveragePool and
// QLinearAveragePool (auto_pad, ceil_mode, count_include_pad, kernel_shape, pads, strides), both
// with the channels_last attribute (X is [N, C, spatial...], or [N, spatial..., C] when set).
//
// Inputs: X, x_scale, [x_zero_point], y_scale, [y_zero_point] (uint8 or int8, per-tensor). Each
// output is the mean of the dequantized window, requantized; in double:
//   mean = double(sum (x - x_zp)) * double(x_scale) / count
//   y = saturate(round_half_even(mean / double(y_scale)) + y_zp)
// count is the window's element count inside the input (count_include_pad = 0), or inside the
// padded input (count_include_pad = 1; a ceil_mode window running past the end padding is cut
// there).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/ops/window_attributes.h"
#include "graph/registry.h"
#include "kernels/parallel.h"
#include "kernels/quant/quantize.h"

namespace simplecpp::graph {
namespace quant_contrib {

void RegisterQuantContribPoolOps(OpRegistry& registry);

namespace {

using quant_ops::FirstScaleAsF32;
using quant_ops::FirstZeroPointAsI32;
using quant_ops::IsOneElement;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

struct PoolShape {
  int64_t batch = 0, channels = 0;
  Dims in, out, kernel, strides, pad_begin, pad_end;
  bool channels_last = false;
  bool count_include_pad = false;
  bool global = false;  // QLinearGlobalAveragePool: one window over each whole plane
};

template <typename T>
T QuantizeMean(double v, double y_scale, int32_t y_zp) {
  constexpr double lo = std::is_signed<T>::value ? -128.0 : 0.0;
  constexpr double hi = std::is_signed<T>::value ? 127.0 : 255.0;
  double q = v / y_scale;
  if (std::isnan(q)) q = 0.0;
  q = std::nearbyint(q) + y_zp;
  q = q < lo ? lo : (q > hi ? hi : q);
  return static_cast<T>(q);
}

template <typename T>
void PoolRun(const PoolShape& s, RunContext& rc) {
  const double x_scale = FirstScaleAsF32(rc.input(1));
  const int32_t x_zp = rc.has_input(2) ? FirstZeroPointAsI32(rc.input(2)) : 0;
  const double y_scale = FirstScaleAsF32(rc.input(3));
  const int32_t y_zp = rc.has_input(4) ? FirstZeroPointAsI32(rc.input(4)) : 0;
  const T* x = rc.input(0).data<T>();
  T* y = rc.output(0).data<T>();
  const size_t rank = s.in.size();
  if (s.global && !s.channels_last) {
    // The window is the whole plane, which is contiguous: a plain sum (the same integer as the
    // general loop below gives; a vector kernel), then the same requantization.
    const int64_t size = CheckedNumElements(s.in);
    // Small inputs on the calling thread (the same tasks): a wake-up costs more than it saves.
    const kernels::Parallel& par =
        kernels::ParallelForElements(rc.parallel(), s.batch * s.channels * size);
    par.For(s.batch * s.channels, [&](int64_t p0, int64_t p1) {
      // The task's plane sums in one kernel call, kept per thread between runs.
      static thread_local std::vector<int64_t> sums;
      sums.resize(static_cast<size_t>(p1 - p0));
      if constexpr (std::is_same_v<T, uint8_t>) {
        kernels::SumU8Rows(x + p0 * size, p1 - p0, size, size, sums.data());
      } else {
        kernels::SumI8Rows(x + p0 * size, p1 - p0, size, size, sums.data());
      }
      if constexpr (std::is_same_v<T, uint8_t>) {
        kernels::RequantizeMeansToU8(sums.data(), p1 - p0, size, x_zp, x_scale, y_scale, y_zp,
                                     y + p0);
      } else {
        kernels::RequantizeMeansToI8(sums.data(), p1 - p0, size, x_zp, x_scale, y_scale, y_zp,
                                     y + p0);
      }
    });
    return;
  }
  const int64_t in_size = CheckedNumElements(s.in), out_size = CheckedNumElements(s.out);
  // Element strides of the spatial dims within one image, and of the channel.
  std::vector<int64_t> in_stride(rank), out_stride(rank);
  {
    int64_t a = s.channels_last ? s.channels : 1, b = a;
    for (size_t d = rank; d-- > 0;) {
      in_stride[d] = a;
      out_stride[d] = b;
      a *= s.in[d];
      b *= s.out[d];
    }
  }
  const int64_t in_c_stride = s.channels_last ? 1 : in_size;
  const int64_t out_c_stride = s.channels_last ? 1 : out_size;
  // One task per (image, channel) plane: each output element has one writer, and the split
  // depends only on the shape.
  auto plane = [&](int64_t p0, int64_t p1) {
    std::vector<int64_t> pos(rank), lo(rank), hi(rank), w(rank);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n = p / s.channels, c = p % s.channels;
      const T* xc = x + n * s.channels * in_size + c * in_c_stride;
      T* yc = y + n * s.channels * out_size + c * out_c_stride;
      std::fill(pos.begin(), pos.end(), 0);
      for (int64_t o = 0; o < out_size; ++o) {
        int64_t count = 1, padded_count = 1;
        bool empty = false;
        for (size_t d = 0; d < rank; ++d) {
          const int64_t start = pos[d] * s.strides[d] - s.pad_begin[d];
          const int64_t end = start + s.kernel[d];
          lo[d] = std::max<int64_t>(start, 0);
          hi[d] = std::min<int64_t>(end, s.in[d]);
          if (hi[d] <= lo[d]) empty = true;
          count *= std::max<int64_t>(hi[d] - lo[d], 0);
          padded_count *= std::min<int64_t>(end, s.in[d] + s.pad_end[d]) - start;
        }
        int64_t sum = 0;
        if (!empty) {
          for (size_t d = 0; d < rank; ++d) w[d] = lo[d];
          while (true) {
            int64_t off = 0;
            for (size_t d = 0; d < rank; ++d) off += w[d] * in_stride[d];
            sum += static_cast<int32_t>(xc[off]) - x_zp;
            size_t d = rank;
            while (d-- > 0) {
              if (++w[d] < hi[d]) break;
              w[d] = lo[d];
            }
            if (d == static_cast<size_t>(-1)) break;
          }
        }
        const int64_t div = s.count_include_pad ? padded_count : count;
        const double mean =
            div > 0 ? static_cast<double>(sum) * x_scale / static_cast<double>(div) : 0.0;
        int64_t out_off = 0;
        for (size_t d = 0; d < rank; ++d) out_off += pos[d] * out_stride[d];
        yc[out_off] = QuantizeMean<T>(mean, y_scale, y_zp);
        for (size_t d = rank; d-- > 0;) {
          if (++pos[d] < s.out[d]) break;
          pos[d] = 0;
        }
      }
    }
  };
  const int64_t planes = s.batch * s.channels;
  if (planes == 1) {
    plane(0, 1);
  } else if (planes > 1) {
    rc.parallel().For(planes, plane);
  }
}

void CheckParams(const PrepareContext& ctx) {
  const char* names[] = {"X", "x_scale", "x_zero_point", "y_scale", "y_zero_point"};
  for (int i : {1, 2, 3, 4}) {
    if (ctx.has_input(i) && !IsOneElement(ctx.input_dims(i))) {
      ctx.Fail(std::string(names[i]) + " must be a scalar (per-tensor), got shape " +
               DimsToString(ctx.input_dims(i)));
    }
  }
}

void InferQ8(TypeContext& ctx) {
  ctx.RequireInput(0);
  ctx.RequireDType(0, {DType::kUInt8, DType::kInt8});
  ctx.RequireDType(1, {DType::kFloat32});
  if (ctx.has_input(2)) ctx.RequireSameDType(0, 2);
  ctx.RequireDType(3, {DType::kFloat32});
  if (ctx.has_input(4)) ctx.RequireSameDType(0, 4);
  ctx.set_output_dtype(0, ctx.input_dtype(0));
}

// Splits x's dims into batch, channels and spatial dims.
void SplitDims(const PrepareContext& ctx, bool channels_last, PoolShape* s) {
  const Dims& xd = ctx.input_dims(0);
  if (xd.size() < 3)
    ctx.Fail("X must have rank >= 3 ([N, C, spatial...]), got " + DimsToString(xd));
  s->channels_last = channels_last;
  s->batch = xd[0];
  s->channels = channels_last ? xd.back() : xd[1];
  s->in = channels_last ? Dims(xd.begin() + 1, xd.end() - 1) : Dims(xd.begin() + 2, xd.end());
}

Dims JoinDims(const PoolShape& s) {
  Dims out{s.batch};
  if (!s.channels_last) out.push_back(s.channels);
  out.insert(out.end(), s.out.begin(), s.out.end());
  if (s.channels_last) out.push_back(s.channels);
  return out;
}

RunFn MakeRun(PrepareContext& ctx, const PoolShape& s) {
  const DType t = ctx.input_dtype(0);
  ctx.set_output(0, t, JoinDims(s));
  auto fn = t == DType::kInt8 ? &PoolRun<int8_t> : &PoolRun<uint8_t>;
  return [fn, s](RunContext& rc) { fn(s, rc); };
}

class QLinearGlobalAveragePoolOp final : public Op {
 public:
  explicit QLinearGlobalAveragePoolOp(const OpInit& init) {
    if (init.num_inputs() < 4 || init.num_inputs() > 5)
      init.Fail("QLinearGlobalAveragePool takes 4 or 5 inputs, got " +
                std::to_string(init.num_inputs()));
    channels_last_ = init.GetInt("channels_last", 0) != 0;
  }
  void InferTypes(TypeContext& ctx) const override { InferQ8(ctx); }
  RunFn Prepare(PrepareContext& ctx) const override {
    CheckParams(ctx);
    PoolShape s;
    SplitDims(ctx, channels_last_, &s);
    s.kernel = s.in;
    s.strides.assign(s.in.size(), 1);
    s.pad_begin.assign(s.in.size(), 0);
    s.pad_end.assign(s.in.size(), 0);
    s.out.assign(s.in.size(), 1);
    s.global = true;
    for (int64_t d : s.in) {
      if (d == 0) ctx.Fail("spatial dimensions must not be 0 (the average of nothing)");
    }
    return MakeRun(ctx, s);
  }

 private:
  bool channels_last_ = false;
};

class QLinearAveragePoolOp final : public Op {
 public:
  explicit QLinearAveragePoolOp(const OpInit& init) {
    if (init.num_inputs() < 4 || init.num_inputs() > 5)
      init.Fail("QLinearAveragePool takes 4 or 5 inputs, got " + std::to_string(init.num_inputs()));
    channels_last_ = init.GetInt("channels_last", 0) != 0;
    count_include_pad_ = init.GetInt("count_include_pad", 0) != 0;
    ceil_mode_ = init.GetInt("ceil_mode", 0) != 0;
    window_ = WindowAttributes::Read(init, /*kernel_shape_required=*/true);
    if (!window_.dilations.empty()) init.Unsupported("QLinearAveragePool with dilations");
  }
  void InferTypes(TypeContext& ctx) const override { InferQ8(ctx); }
  RunFn Prepare(PrepareContext& ctx) const override {
    CheckParams(ctx);
    PoolShape s;
    SplitDims(ctx, channels_last_, &s);
    const size_t r = s.in.size();
    if (window_.kernel_shape.size() != r)
      ctx.Fail("kernel_shape has " + std::to_string(window_.kernel_shape.size()) + " values for " +
               std::to_string(r) + " spatial dims");
    window_.CheckRank(ctx, static_cast<int>(r));
    s.kernel = window_.kernel_shape;
    s.strides = window_.strides.empty() ? Dims(r, 1) : window_.strides;
    s.pad_begin.assign(r, 0);
    s.pad_end.assign(r, 0);
    s.out.assign(r, 0);
    s.count_include_pad = count_include_pad_;
    for (size_t d = 0; d < r; ++d) {
      const int64_t in = s.in[d], k = s.kernel[d], st = s.strides[d];
      const WindowAttributes::Axis axis =
          window_.ResolveAxis(static_cast<int>(d), static_cast<int>(r), in, k);
      s.pad_begin[d] = axis.pad_begin;
      s.pad_end[d] = axis.pad_end;
      if (window_.same()) {
        s.out[d] = axis.out;
        continue;
      }
      const int64_t span = in + s.pad_begin[d] + s.pad_end[d] - k;
      if (span < 0) {
        ctx.Fail("kernel " + std::to_string(k) + " is larger than the padded input " +
                 std::to_string(in + s.pad_begin[d] + s.pad_end[d]) + " in spatial dim " +
                 std::to_string(d));
      }
      int64_t out = (ceil_mode_ ? (span + st - 1) / st : span / st) + 1;
      // A ceil_mode window must start inside the input or its begin padding.
      if (ceil_mode_ && (out - 1) * st >= in + s.pad_begin[d]) --out;
      s.out[d] = out;
    }
    return MakeRun(ctx, s);
  }

 private:
  bool channels_last_ = false, count_include_pad_ = false, ceil_mode_ = false;
  WindowAttributes window_;
};

}  // namespace

void RegisterQuantContribPoolOps(OpRegistry& registry) {
  registry.Register("com.microsoft", "QLinearGlobalAveragePool", 1,
                    MakeFactory<QLinearGlobalAveragePoolOp>());
  registry.Register("com.microsoft", "QLinearAveragePool", 1, MakeFactory<QLinearAveragePoolOp>());
}

}  // namespace quant_contrib
}  // namespace simplecpp::graph
