// 2-D float32 convolution, batch 1, for a few CNN layer shapes: simplecpp's Conv op (one node
// through the executor, NCHW, weights constant so they are packed at Prepare; with its
// activation as a second node, which the plan fuses into the Conv; its result an intermediate
// value, as in a model, where oneDNN's and XNNPACK's destinations are reused too) vs oneDNN
// convolution (src/weights/dst in the layouts it prefers, reordered once outside the timed loop:
// its best case, as inside a graph that stays in its blocked layout; the activation as a
// post-op) and XNNPACK (NHWC; the activation as its own operator) when it was found at configure
// time. The shapes: the classic ones, the depthwise 3x3 / 5x5 layers of mobile nets (stride 1
// and 2, with HardSwish) and dilated 3x3 layers of segmentation nets (dilation 2, 4, 8 at 512^2
// and 1024^2). BM_ConvSimplecppF16 runs our Conv on the same shapes with float16 input, weights
// and output.
// Arguments: shape index (kShapes), threads. Counter: GFLOP/s (2 * MACs per iteration).
#include <omp.h>

#include <iterator>
#include <limits>

#include <oneapi/dnnl/dnnl.hpp>

#include "bench/bench_common.h"

#ifdef SIMPLECPP_BENCH_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace simplecpp::bench {
namespace {

enum class Act { kNone, kHardSwish };

struct ConvShape {
  const char* name;
  int64_t c, oc, hw, kernel, stride, pad, group, dilation;
  Act act;
  int64_t Out() const { return (hw + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1; }
  double Flops() const {
    return 2.0 * oc * Out() * Out() * (c / group) * kernel * kernel;
  }
};

constexpr Act kNo = Act::kNone, kHs = Act::kHardSwish;
constexpr ConvShape kShapes[] = {
    {"3x3 s1 64->64 @56", 64, 64, 56, 3, 1, 1, 1, 1, kNo},
    {"1x1 256->64 @56", 256, 64, 56, 1, 1, 0, 1, 1, kNo},
    {"depthwise 3x3 128 @56", 128, 128, 56, 3, 1, 1, 128, 1, kNo},
    {"3x3 s2 64->128 @56", 64, 128, 56, 3, 2, 1, 1, 1, kNo},
    {"3x3 s1 256->256 @14", 256, 256, 14, 3, 1, 1, 1, 1, kNo},
    {"dw 3x3 s1 128 @56 +hswish", 128, 128, 56, 3, 1, 1, 128, 1, kHs},
    {"dw 3x3 s2 128 @56 +hswish", 128, 128, 56, 3, 2, 1, 128, 1, kHs},
    {"dw 5x5 s1 128 @56 +hswish", 128, 128, 56, 5, 1, 2, 128, 1, kHs},
    {"dw 5x5 s2 128 @56 +hswish", 128, 128, 56, 5, 2, 2, 128, 1, kHs},
    {"3x3 d2 64->64 @512", 64, 64, 512, 3, 1, 2, 1, 2, kNo},
    {"3x3 d4 64->64 @512", 64, 64, 512, 3, 1, 4, 1, 4, kNo},
    {"3x3 d8 64->64 @512", 64, 64, 512, 3, 1, 8, 1, 8, kNo},
    {"3x3 d2 64->64 @1024", 64, 64, 1024, 3, 1, 2, 1, 2, kNo},
    {"3x3 d4 64->64 @1024", 64, 64, 1024, 3, 1, 4, 1, 4, kNo},
    {"3x3 d8 64->64 @1024", 64, 64, 1024, 3, 1, 8, 1, 8, kNo},
};

const ConvShape& ShapeOf(const benchmark::State& state) { return kShapes[state.range(0)]; }

// Our Conv (and its activation) on float32 or float16 tensors.
void RunSimplecpp(benchmark::State& state, bool f16) {
  const ConvShape& s = ShapeOf(state);
  state.SetLabel(s.name);
  auto make = [f16](const Dims& dims, uint32_t seed) {
    return f16 ? TensorF16(dims, seed) : TensorF32(dims, seed);
  };
  const Tensor x = make({1, s.c, s.hw, s.hw}, 1);
  const Tensor w = make({s.oc, s.c / s.group, s.kernel, s.kernel}, 2);
  const Tensor b = make({s.oc}, 3);
  std::vector<std::string> then;
  if (s.act == Act::kHardSwish) then.push_back("HardSwish");
  NodeRunner runner(
      "Conv", {x, w, b}, {false, true, true},
      {AttrInts("kernel_shape", {s.kernel, s.kernel}),
       AttrInts("strides", {s.stride, s.stride}),
       AttrInts("dilations", {s.dilation, s.dilation}),
       AttrInts("pads", {s.pad, s.pad, s.pad, s.pad}), AttrInt("group", s.group)},
      static_cast<int>(state.range(1)), 18, then, /*sliced=*/4);
  runner.Run();  // the first run allocates the executor's buffers
  for (auto _ : state) {
    auto out = runner.Run();
    benchmark::DoNotOptimize(out[0].raw_data());
  }
  SetRate(state, s.Flops());
}

void BM_ConvSimplecpp(benchmark::State& state) { RunSimplecpp(state, false); }
void BM_ConvSimplecppF16(benchmark::State& state) { RunSimplecpp(state, true); }

void BM_ConvOneDNN(benchmark::State& state) {
  const ConvShape& s = ShapeOf(state);
  state.SetLabel(s.name);
  omp_set_num_threads(static_cast<int>(state.range(1)));
  using dnnl::memory;
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const int64_t o = s.Out();
  const memory::dims src_dims{1, s.c, s.hw, s.hw}, dst_dims{1, s.oc, o, o}, bias_dims{s.oc};
  const memory::dims wei_dims = s.group == 1
      ? memory::dims{s.oc, s.c, s.kernel, s.kernel}
      : memory::dims{s.group, s.oc / s.group, s.c / s.group, s.kernel, s.kernel};
  const memory::desc src_md(src_dims, f32, any), wei_md(wei_dims, f32, any),
      bias_md(bias_dims, f32, memory::format_tag::a), dst_md(dst_dims, f32, any);
  // oneDNN counts dilation from 0 (dense).
  const memory::dims dil{s.dilation - 1, s.dilation - 1};
  dnnl::post_ops post;
  if (s.act == Act::kHardSwish) post.append_eltwise(1.0f, dnnl::algorithm::eltwise_hardswish, 0, 0);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src_md, wei_md, bias_md,
                                      dst_md, {s.stride, s.stride}, dil, {s.pad, s.pad},
                                      {s.pad, s.pad}),
      attr, eng);
  auto xv = RandomFloats(s.c * s.hw * s.hw, 1);
  auto wv = RandomFloats(s.oc * (s.c / s.group) * s.kernel * s.kernel, 2);
  auto bv = RandomFloats(s.oc, 3);
  memory x_plain({src_dims, f32, memory::format_tag::nchw}, eng, xv.data());
  memory w_plain({wei_dims, f32, s.group == 1 ? memory::format_tag::oihw : memory::format_tag::goihw},
                 eng, wv.data());
  memory src(pd.src_desc(), eng), wei(pd.weights_desc(), eng), dst(pd.dst_desc(), eng);
  memory bias(bias_md, eng, bv.data());
  dnnl::reorder(x_plain, src).execute(strm, x_plain, src);
  dnnl::reorder(w_plain, wei).execute(strm, w_plain, wei);
  dnnl::convolution_forward conv(pd);
  const std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei},
                                             {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}};
  for (auto _ : state) {
    conv.execute(strm, args);
    strm.wait();
    benchmark::ClobberMemory();
  }
  SetRate(state, s.Flops());
}

#ifdef SIMPLECPP_BENCH_XNNPACK
void BM_ConvXNNPACK(benchmark::State& state) {
  const ConvShape& s = ShapeOf(state);
  state.SetLabel(s.name);
  if (xnn_initialize(nullptr) != xnn_status_success) {
    state.SkipWithError("xnn_initialize failed");
    return;
  }
  const int threads = static_cast<int>(state.range(1));
  pthreadpool_t pool = threads > 1 ? pthreadpool_create(static_cast<size_t>(threads)) : nullptr;
  const int64_t o = s.Out();
  // NHWC input/output; weights [groups][oc/g][kh][kw][c/g].
  auto x = RandomFloats(s.hw * s.hw * s.c, 1);
  auto w = RandomFloats(s.oc * (s.c / s.group) * s.kernel * s.kernel, 2);
  auto b = RandomFloats(s.oc, 3);
  std::vector<float> y(static_cast<size_t>(o * o * s.oc));
  xnn_operator_t op = nullptr;
  const uint32_t p = static_cast<uint32_t>(s.pad), k = static_cast<uint32_t>(s.kernel),
                 st = static_cast<uint32_t>(s.stride);
  const uint32_t dl = static_cast<uint32_t>(s.dilation);
  xnn_status status = xnn_create_convolution2d_nhwc_f32(
      p, p, p, p, k, k, st, st, dl, dl, static_cast<uint32_t>(s.group),
      static_cast<size_t>(s.c / s.group), static_cast<size_t>(s.oc / s.group),
      static_cast<size_t>(s.c), static_cast<size_t>(s.oc), w.data(), b.data(),
      -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), 0, &op);
  if (status == xnn_status_success) {
    status = xnn_setup_convolution2d_nhwc_f32(op, 1, static_cast<size_t>(s.hw),
                                              static_cast<size_t>(s.hw), x.data(), y.data(), pool);
  }
  // HardSwish: XNNPACK's convolution fuses only a clamp, so its own operator follows.
  xnn_operator_t act = nullptr;
  std::vector<float> z;
  if (status == xnn_status_success && s.act == Act::kHardSwish) {
    z.resize(y.size());
    const size_t ch = static_cast<size_t>(s.oc);
    status = xnn_create_hardswish_nc_f32(ch, ch, ch, 0, &act);
    if (status == xnn_status_success) {
      status = xnn_setup_hardswish_nc_f32(act, static_cast<size_t>(o * o), y.data(), z.data(),
                                          pool);
    }
  }
  if (status != xnn_status_success) {
    state.SkipWithError("XNNPACK convolution create/setup failed");
  } else {
    for (auto _ : state) {
      xnn_run_operator(op, pool);
      if (act != nullptr) xnn_run_operator(act, pool);
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    }
    SetRate(state, s.Flops());
  }
  if (act != nullptr) xnn_delete_operator(act);
  if (op != nullptr) xnn_delete_operator(op);
  if (pool != nullptr) pthreadpool_destroy(pool);
}
#endif

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "threads"})->UseRealTime();
  for (int t : {1, 2}) {
    for (int64_t i = 0; i < static_cast<int64_t>(std::size(kShapes)); ++i) b->Args({i, t});
  }
}

BENCHMARK(BM_ConvSimplecpp)->Apply(Shapes);
BENCHMARK(BM_ConvSimplecppF16)->Apply(Shapes);
BENCHMARK(BM_ConvOneDNN)->Apply(Shapes);
#ifdef SIMPLECPP_BENCH_XNNPACK
BENCHMARK(BM_ConvXNNPACK)->Apply(Shapes);
#endif

}  // namespace
}  // namespace simplecpp::bench

BENCHMARK_MAIN();
