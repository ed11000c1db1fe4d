// Small element-wise / row kernels, one thread: simplecpp's Softmax, LayerNorm (NormalizeRows),
// Gelu (erf form) and Add kernels vs the same math written with Eigen 3.4 arrays.
// Counter: items_per_second (elements per second).
#include <Eigen/Core>
#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>

#include "bench/bench_common.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/nn/normalization.h"
#include "kernels/nn/softmax.h"

namespace simplecpp::bench {
namespace {

using RowArray = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Softmax over rows of [rows, n].
void BM_SoftmaxSimplecpp(benchmark::State& state) {
  const int64_t rows = state.range(0), n = state.range(1);
  const auto x = RandomFloats(rows * n, 1, -4.0f, 4.0f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    kernels::SoftmaxF32(x.data(), y.data(), rows, n, 1, kernels::SerialParallel());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}
void BM_SoftmaxEigen(benchmark::State& state) {
  const int64_t rows = state.range(0), n = state.range(1);
  const auto xv = RandomFloats(rows * n, 1, -4.0f, 4.0f);
  Eigen::Map<const RowArray> x(xv.data(), rows, n);
  RowArray y(rows, n);
  for (auto _ : state) {
    y = (x.colwise() - x.rowwise().maxCoeff()).exp();
    y.colwise() /= y.rowwise().sum();
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}

// LayerNormalization over the last axis of [rows, n] with scale and bias.
void BM_LayerNormSimplecpp(benchmark::State& state) {
  const int64_t rows = state.range(0), n = state.range(1);
  const auto x = RandomFloats(rows * n, 1);
  const auto scale = RandomFloats(n, 2), bias = RandomFloats(n, 3);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    kernels::NormalizeRowsF32(x.data(), y.data(), rows, n, 1, 1, scale.data(), bias.data(), 1e-5f,
                              nullptr, nullptr, kernels::SerialParallel());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}
void BM_LayerNormEigen(benchmark::State& state) {
  const int64_t rows = state.range(0), n = state.range(1);
  const auto xv = RandomFloats(rows * n, 1);
  const auto sv = RandomFloats(n, 2), bv = RandomFloats(n, 3);
  Eigen::Map<const RowArray> x(xv.data(), rows, n);
  Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> scale(sv.data(), n), bias(bv.data(), n);
  RowArray y(rows, n);
  for (auto _ : state) {
    const Eigen::ArrayXf mean = x.rowwise().mean();
    y = x.colwise() - mean;
    const Eigen::ArrayXf inv = ((y.square().rowwise().sum() / n) + 1e-5f).rsqrt();
    y.colwise() *= inv;
    y.rowwise() *= scale;
    y.rowwise() += bias;
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}

// Gelu (exact, erf) on n elements.
void BM_GeluSimplecpp(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto x = RandomFloats(n, 1, -4.0f, 4.0f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    kernels::UnaryF32(kernels::UnaryOp::kGelu, {}, x.data(), y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_GeluEigen(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto xv = RandomFloats(n, 1, -4.0f, 4.0f);
  Eigen::Map<const Eigen::ArrayXf> x(xv.data(), n);
  Eigen::ArrayXf y(n);
  for (auto _ : state) {
    y = 0.5f * x * (1.0f + (x * static_cast<float>(M_SQRT1_2)).erf());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// Add of two same-shape tensors of n elements.
void BM_AddSimplecpp(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto a = RandomFloats(n, 1), b = RandomFloats(n, 2);
  std::vector<float> y(a.size());
  for (auto _ : state) {
    kernels::BinaryF32(kernels::BinaryOp::kAdd, a.data(), 1, b.data(), 1, y.data(), n);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_AddEigen(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto av = RandomFloats(n, 1), bv = RandomFloats(n, 2);
  Eigen::Map<const Eigen::ArrayXf> a(av.data(), n), b(bv.data(), n);
  Eigen::ArrayXf y(n);
  for (auto _ : state) {
    y = a + b;
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void Rows(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "n"})->Args({128, 768})->Args({1536, 128});
}
void Flat(benchmark::internal::Benchmark* b) { b->ArgNames({"n"})->Arg(4096)->Arg(1 << 20); }

BENCHMARK(BM_SoftmaxSimplecpp)->Apply(Rows);
BENCHMARK(BM_SoftmaxEigen)->Apply(Rows);
BENCHMARK(BM_LayerNormSimplecpp)->Apply(Rows);
BENCHMARK(BM_LayerNormEigen)->Apply(Rows);
BENCHMARK(BM_GeluSimplecpp)->Apply(Flat);
BENCHMARK(BM_GeluEigen)->Apply(Flat);
BENCHMARK(BM_AddSimplecpp)->Apply(Flat);
BENCHMARK(BM_AddEigen)->Apply(Flat);

}  // namespace
}  // namespace simplecpp::bench

BENCHMARK_MAIN();
