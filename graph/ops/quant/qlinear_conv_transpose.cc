// QLinearConvTranspose (domain "simplecpp.fused", version 1): what the quantized-pattern fusion
// pass writes for DequantizeLinear(x) / DequantizeLinear(W, axis 1) -> ConvTranspose ->
// QuantizeLinear, as QLinearConv stands for the Conv pattern.
//
//   inputs: x (u8/i8 [N, C, spatial...], 1 to 3 spatial dims), x_scale (f32, one value),
//           x_zero_point (x's dtype, one value; omitted: 0), w (u8/i8 [C, M/group, k...]),
//           w_scale (f32, one value or [M/group]), w_zero_point (optional, w's dtype, one value
//           or [M/group]),
//           y_scale (f32, one value), y_zero_point (u8/i8, one value: y's dtype),
//           bias (optional, int32 [M], at scale x_scale * w_scale)
//   attributes: ConvTranspose's (auto_pad, dilations, group, kernel_shape, output_padding,
//           output_shape, pads, strides), with its output size and pads
//           (graph/ops/conv_transpose_geometry.h)
//   acc[n, o, pos] = bias[o] + sum over (c of o's group, taps reaching pos) of
//                    (x[n, c, in_pos] - x_zp) * (w[c, j, k...] - w_zp[j])   (o = gi * M/group + j)
//   y = saturate(round_half_even(double(acc) * double(x_scale * w_scale[j] / y_scale)) + y_zp)
//
// Exact: the sums are int32 modulo 2^32 as the integer ops compute them, and integer addition is
// associative modulo 2^32, so neither the GEMM's blocking, the order of col2im's adds nor the
// thread count can change a bit; the multiplier is QLinearConv's (float32, a * b then / y) and
// the requantization is QLinearConv's own (RequantConv: kernels::RequantizeBiasRows*). Positions
// no tap reaches requantize the bias alone.
//
// How (per image and group, as the float ConvTranspose): col int32 [og * ksize, P_in] =
// (W_g^T - w_zp) x (X_g - x_zp) by the integer GEMM (kernels/quant/qgemm.h) with W_g^T as its A
// (rows (j, k...), w's zero point per row, transposed once at Prepare when W is constant) and a
// chunk of X_g's channels-first rows packed as its B (x's zero point), then col2im (Col2ImI32)
// scatter-adds col into an int32 image of the group's output channels, which is requantized one
// output channel at a time. When the taps tile Y (kernel == stride, e.g. 2x2 stride 2:
// kernels::Col2ImIsDisjoint) each chunk of whole rows of X owns a band of Y: the chunks are the
// parallel tasks, and as each element of Y then receives exactly one element of col, each task
// requantizes its col while it is in cache and places the bytes (Col2ImDisjointBytes).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/ops/conv_transpose_geometry.h"
#include "graph/ops/quant/quant_ops_internal.h"
#include "graph/registry.h"
#include "kernels/conv/col2im.h"
#include "kernels/parallel.h"
#include "kernels/quant/qgemm.h"
#include "quant/quant_params.h"

namespace simplecpp::graph {
namespace quant_fused {
namespace {

using quant_ops::IsOneElement;
using quant_ops::RequireOne;
using quant_ops::QConvRequant;
using quant_ops::RequantConv;
using quant_ops::FirstScaleAsF32;
using quant_ops::FirstZeroPointAsI32;
using quant_ops::ScalesAsF32;
using quant_ops::ZeroPointsAsI32;

constexpr int64_t kColBudget = int64_t{1} << 18;  // int32 sums of col per chunk (about L2)

struct QConvTransposePlan {
  kernels::ConvGeometry g;  // image = Y's spatial dims, grid = X's spatial dims
  int64_t batch = 0, group = 0, channels = 0, cg = 0, og = 0, out_channels = 0;
  int64_t ksize = 0, m = 0;     // kernel size; GEMM M = og * ksize (rows of col)
  int64_t p_in = 0, p_out = 0;  // spatial sizes of X and Y
  int64_t chunk = 0;            // input positions per col chunk
  int64_t lda = 0;              // bytes between rows of W_g^T: cg rounded up to 4 (read in place)
  bool x_signed = false, w_signed = false;
  bool disjoint = false;             // kernels::Col2ImIsDisjoint(g)
  int64_t x_inner = 1, y_inner = 1;  // X's / Y's positions per index of the first spatial dim
  // Constant W transposed: [group][m][lda] bytes, row (j, k...) of group gi holding
  // w[gi * cg + c, j, k...] at column c. Null when W is not constant.
  std::shared_ptr<const std::vector<uint8_t>> wt;
  bool has_xz = false, has_wz = false, has_bias = false;
  int32_t lo = 0, hi = 0;
  bool out_signed = false;
};

// W [C, og, k...] into wt [group][m][lda]: group gi's block of W is [cg, m] row-major.
void TransposeWeights(const QConvTransposePlan& p, const uint8_t* w, uint8_t* wt) {
  for (int64_t gi = 0; gi < p.group; ++gi) {
    const uint8_t* src = w + gi * p.cg * p.m;
    uint8_t* dst = wt + gi * p.m * p.lda;
    for (int64_t r = 0; r < p.m; ++r) {
      uint8_t* row = dst + r * p.lda;
      for (int64_t c = 0; c < p.cg; ++c) row[c] = src[c * p.m + r];
      // The bytes past cg meet the packed B's zero padding (kernels/quant/qgemm.h): any value.
      std::fill(row + p.cg, row + p.lda, uint8_t{0});
    }
  }
}

// What one run reads besides x: A's bytes and zero points, x's zero point, the requantization.
struct RunArgs {
  const uint8_t* wt = nullptr;   // [group][m][lda]
  const int32_t* azp = nullptr;  // per row of A (azp_step 1) or one value (0); nullptr: none
  int64_t azp_step = 0;
  int32_t xzp = 0;
  QConvRequant rq;
};

// col [m, pc] = (W_g^T - w_zp) x (X_g - x_zp) for input positions [p0, p0 + pc).
void ColChunk(const QConvTransposePlan& p, const RunArgs& a, int64_t gi, const uint8_t* xg,
              int64_t p0, int64_t pc, int32_t* col, const kernels::Parallel& par) {
  const auto b = kernels::PackedQB::Pack(p.x_signed, false, p.cg, pc, xg + p0, p.p_in);
  quant_ops::QGemmBytesToI32(p.m, a.wt + gi * p.m * p.lda, p.w_signed, p.lda, a.azp, a.azp_step, *b,
                             &a.xzp, 0, col, pc, par);
}

// Disjoint taps: chunk t of whole rows (planes) of X of image n, group gi writes rows
// [p0 / x_inner * stride[0], ...) of each of the group's output channels and nothing else, so the
// chunks run as parallel tasks, each with its own col and band.
void RunDisjoint(const QConvTransposePlan& p, const RunArgs& a, const uint8_t* x, uint8_t* y,
                 const kernels::Parallel& par) {
  const int64_t chunks = (p.p_in + p.chunk - 1) / p.chunk;
  par.For(p.batch * p.group * chunks, [&](int64_t t0, int64_t t1) {
    static thread_local std::vector<int32_t> col;
    static thread_local std::vector<uint8_t> col8;
    col.resize(std::max(col.size(), static_cast<size_t>(p.m * p.chunk)));
    col8.resize(std::max(col8.size(), static_cast<size_t>(p.m * p.chunk)));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ng = t / chunks, gi = ng % p.group, n = ng / p.group;
      const int64_t p0 = (t % chunks) * p.chunk, pc = std::min(p.chunk, p.p_in - p0);
      ColChunk(p, a, gi, x + ng * p.cg * p.p_in, p0, pc, col.data(), kernels::SerialParallel());
      // Each element of Y gets exactly one element of col (plus the bias), so col's rows
      // (j, k...) are requantized as output channel j before they are placed: a quarter of the
      // bytes to move, and the same results.
      for (int64_t r = 0; r < p.m; ++r) {
        RequantConv(a.rq, col.data() + r * pc, pc, 1, pc, gi * p.og + r / p.ksize, 0,
                    col8.data() + r * pc, pc);
      }
      // The chunk's band as a geometry of its own: pc / x_inner rows of X, stride[0] times as
      // many rows of Y (in == out * stride along every dim of a disjoint geometry).
      kernels::ConvGeometry gb = p.g;
      gb.out[0] = pc / p.x_inner;
      gb.in[0] = gb.out[0] * p.g.stride[0];
      // Placed straight into the band's rows of each of the group's output channels of y.
      const int64_t band0 = p0 / p.x_inner * p.g.stride[0] * p.y_inner;
      kernels::Col2ImDisjointBytes(gb, col8.data(), p.og, 0, pc,
                                   y + (n * p.out_channels + gi * p.og) * p.p_out + band0,
                                   p.p_out, kernels::SerialParallel());
    }
  });
}

// Per image and group: an int32 image of the group's output channels gets col2im of every chunk's
// col, then is requantized one output channel at a time.
void RunGeneral(const QConvTransposePlan& p, const RunArgs& a, const uint8_t* x, uint8_t* y,
                int32_t* acc, int32_t* col, const kernels::Parallel& par) {
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      par.For(p.og, [&](int64_t j0, int64_t j1) {
        std::fill(acc + j0 * p.p_out, acc + j1 * p.p_out, 0);
      });
      // (No input channels: the sums are 0 and y is the requantized bias.)
      const uint8_t* xg = x + (n * p.channels + gi * p.cg) * p.p_in;
      for (int64_t p0 = 0; p0 < p.p_in && p.cg > 0; p0 += p.chunk) {
        const int64_t pc = std::min(p.chunk, p.p_in - p0);
        ColChunk(p, a, gi, xg, p0, pc, col, par);
        kernels::Col2ImI32(p.g, col, p.og, p0, pc, acc, par);
      }
      par.For(p.og, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          const int64_t o = gi * p.og + j;
          RequantConv(a.rq, acc + j * p.p_out, p.p_out, 1, p.p_out, o, 0,
                      y + (n * p.out_channels + o) * p.p_out, p.p_out);
        }
      });
    }
  }
}

// w_scale / w_zero_point: one value or one per output channel of a group ([M/group], W's axis 1).
void RequireOneOrPerChannel(const PrepareContext& ctx, int i, int64_t og, const char* name) {
  if (!ctx.has_input(i)) return;
  const Dims& d = ctx.input_dims(i);
  if (IsOneElement(d)) return;
  if (d.size() == 1 && d[0] == og) return;
  ctx.Fail(std::string(name) + " has shape " + DimsToString(d) +
           " but must be a scalar or [M/group] = [" + std::to_string(og) +
           "] (one per output channel of a group, w's axis 1)");
}

class QLinearConvTransposeOp final : public Op {
 public:
  explicit QLinearConvTransposeOp(const OpInit& init) {
    attrs_ = ConvTransposeAttributes::Read(init);
    if (init.num_inputs() < 8 || init.num_inputs() > 9) {
      init.Fail("QLinearConvTranspose takes 8 or 9 inputs, got " +
                std::to_string(init.num_inputs()));
    }
  }

  void InferTypes(TypeContext& ctx) const override { quant_ops::InferQLinearConvTypes(ctx); }

  RunFn Prepare(PrepareContext& ctx) const override {
    RequireOne(ctx, 1, "x_scale");
    RequireOne(ctx, 2, "x_zero_point");
    RequireOne(ctx, 6, "y_scale");
    RequireOne(ctx, 7, "y_zero_point");
    const Dims& xd = ctx.input_dims(0);
    const Dims& wd = ctx.input_dims(3);
    const ConvTransposeShape s = attrs_.CheckShapes(ctx, xd, wd);
    RequireOneOrPerChannel(ctx, 4, s.og, "w_scale");
    RequireOneOrPerChannel(ctx, 5, s.og, "w_zero_point");
    if (ctx.has_input(8) && ctx.input_dims(8) != Dims{s.out_channels}) {
      ctx.Fail("bias " + DimsToString(ctx.input_dims(8)) + " must be [M] = [" +
               std::to_string(s.out_channels) + "]");
    }
    auto plan = std::make_shared<QConvTransposePlan>();
    QConvTransposePlan& p = *plan;
    const Dims out_dims = attrs_.ResolveGeometry(ctx, s, xd, wd, &p.g);
    const DType out = ctx.input_dtype(7);
    ctx.set_output(0, out, out_dims);
    if (CheckedNumElements(out_dims) == 0) return [](RunContext&) {};

    p.batch = s.batch;
    p.group = s.group;
    p.channels = s.channels;
    p.cg = s.cg;
    p.og = s.og;
    p.out_channels = s.out_channels;
    p.ksize = p.g.KernelSize();
    p.m = p.og * p.ksize;
    p.p_in = p.g.OutSize();
    p.p_out = p.g.InSize();
    p.lda = (p.cg + 3) / 4 * 4;
    p.x_signed = ctx.input_dtype(0) == DType::kInt8;
    p.w_signed = ctx.input_dtype(3) == DType::kInt8;
    p.disjoint = kernels::Col2ImIsDisjoint(p.g) && p.cg > 0;
    p.has_xz = ctx.has_input(2);
    p.has_wz = ctx.has_input(5);
    p.has_bias = ctx.has_input(8);
    quant::QuantizedRange(out, &p.lo, &p.hi);
    p.out_signed = out == DType::kInt8;
    for (int d = 1; d < p.g.rank; ++d) {
      p.x_inner *= p.g.out[d];
      p.y_inner *= p.g.in[d];
    }
    // Chunks of whole GEMM panels (kernels::PackedQB::kNR positions) within the col budget.
    constexpr int64_t kNR = kernels::PackedQB::kNR;
    p.chunk = std::max<int64_t>(kColBudget / std::max<int64_t>(p.m, 1) / kNR * kNR, kNR);
    // Disjoint taps run the chunks as parallel tasks: at least 8 of them where the input allows,
    // each whole rows (planes) of X.
    if (p.disjoint) {
      p.chunk = std::min(p.chunk, std::max<int64_t>(64, (p.p_in + 7) / 8));
      p.chunk = std::max<int64_t>(1, p.chunk / p.x_inner) * p.x_inner;
    }
    p.chunk = std::max<int64_t>(std::min(p.chunk, p.p_in), 1);
    if (const Tensor* wc = ctx.input_value(3); wc != nullptr) {
      auto wt = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(p.group * p.m * p.lda));
      TransposeWeights(p, static_cast<const uint8_t*>(wc->raw_data()), wt->data());
      p.wt = std::move(wt);
    }
    return [plan](RunContext& rc) { Run(*plan, rc); };
  }

 private:
  static void Run(const QConvTransposePlan& p, RunContext& rc) {
    RunArgs a;
    a.xzp = p.has_xz ? FirstZeroPointAsI32(rc.input(2)) : 0;
    // w's zero point per row (j, k...) of A: w_zp[j] repeated over the kernel taps.
    const std::vector<int32_t> wz =
        p.has_wz ? ZeroPointsAsI32(rc.input(5)) : std::vector<int32_t>();
    std::vector<int32_t> azp;
    if (wz.size() > 1) {
      azp.resize(static_cast<size_t>(p.m));
      for (int64_t r = 0; r < p.m; ++r) azp[r] = wz[r / p.ksize];
      a.azp = azp.data();
      a.azp_step = 1;
    } else if (wz.size() == 1) {
      a.azp = wz.data();
    }
    // QLinearConv's multiplier (float32: x_scale * w_scale then / y_scale), one per output
    // channel o = gi * og + j from w_scale[j] when w_scale is per channel.
    const float x_scale = FirstScaleAsF32(rc.input(1));
    const float y_scale = FirstScaleAsF32(rc.input(6));
    const std::vector<float> w_scale = ScalesAsF32(rc.input(4));
    std::vector<float> mult;
    if (w_scale.size() > 1) {
      mult.resize(static_cast<size_t>(p.out_channels));
      for (int64_t o = 0; o < p.out_channels; ++o) mult[o] = x_scale * w_scale[o % p.og] / y_scale;
    } else {
      mult.push_back(x_scale * w_scale[0] / y_scale);
    }
    a.rq.bias = p.has_bias ? rc.input(8).data<int32_t>() : nullptr;
    a.rq.mult = mult.data();
    a.rq.mult_step = mult.size() > 1 ? 1 : 0;
    a.rq.zp = FirstZeroPointAsI32(rc.input(7));
    a.rq.lo = p.lo;
    a.rq.hi = p.hi;
    a.rq.out_signed = p.out_signed;
    a.rq.y = rc.output(0).raw_data();
    Tensor wt_run;
    a.wt = p.wt ? p.wt->data() : nullptr;
    if (a.wt == nullptr) {
      wt_run = rc.Scratch(DType::kUInt8, {std::max<int64_t>(1, p.group * p.m * p.lda)});
      TransposeWeights(p, static_cast<const uint8_t*>(rc.input(3).raw_data()),
                       wt_run.data<uint8_t>());
      a.wt = wt_run.data<uint8_t>();
    }
    const auto* x = static_cast<const uint8_t*>(rc.input(0).raw_data());
    auto* y = static_cast<uint8_t*>(rc.output(0).raw_data());
    const kernels::Parallel& par = kernels::ParallelForMacs(
        rc.parallel(), std::max<int64_t>(p.batch * p.group * p.m * p.p_in * p.cg,
                                         p.batch * p.out_channels * p.p_out));
    if (p.disjoint) {
      RunDisjoint(p, a, x, y, par);
      return;
    }
    Tensor acc = rc.Scratch(DType::kInt32, {std::max<int64_t>(1, p.og * p.p_out)});
    Tensor col = rc.Scratch(DType::kInt32, {std::max<int64_t>(1, p.m * p.chunk)});
    RunGeneral(p, a, x, y, acc.data<int32_t>(), col.data<int32_t>(), par);
  }

  ConvTransposeAttributes attrs_;
};

}  // namespace

void RegisterQLinearConvTransposeOp(OpRegistry& registry) {
  registry.Register("simplecpp.fused", "QLinearConvTranspose", 1,
                    MakeFactory<QLinearConvTransposeOp>());
}

}  // namespace quant_fused
}  // namespace simplecpp::graph
