// Float32 GEMM, C[M,N] = A[M,K] * B[K,N] (row-major, B constant: the weights of a MatMul):
// simplecpp (B packed once, as graph/ops/matmul.cc does at Prepare; then GemmPackedBMixed per
// run on the graph thread pool) vs oneDNN matmul (weights reordered once into its preferred
// layout), OpenBLAS cblas_sgemm and Eigen (single thread only).
// Arguments: M, K, N, threads. Counter: GFLOP/s (2*M*N*K per iteration, wall clock).
#include <cblas.h>
#include <omp.h>

#include <Eigen/Core>
#include <oneapi/dnnl/dnnl.hpp>

#include "bench/bench_common.h"
#include "kernels/gemm/gemm.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace simplecpp::bench {
namespace {

struct Shape {
  int64_t m, k, n;
  int threads;
  explicit Shape(const benchmark::State& s)
      : m(s.range(0)), k(s.range(1)), n(s.range(2)), threads(static_cast<int>(s.range(3))) {}
  double Flops() const { return 2.0 * m * n * k; }
};

void BM_GemmSimplecpp(benchmark::State& state) {
  const Shape sh(state);
  const auto a = RandomFloats(sh.m * sh.k, 1);
  const auto b = RandomFloats(sh.k * sh.n, 2);
  std::vector<float> c(static_cast<size_t>(sh.m * sh.n));
  auto pool = graph::MakeThreadPool(sh.threads);
  const auto packed = kernels::PackedBF32::Pack(false, sh.k, sh.n, b.data(), sh.n);
  for (auto _ : state) {
    kernels::GemmPackedBMixed(kernels::GemmType::kF32, kernels::GemmType::kF32, false, sh.m,
                              1.0f, a.data(), sh.k, *packed, 0.0f, c.data(), sh.n, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, sh.Flops());
}

void BM_GemmOneDNN(benchmark::State& state) {
  const Shape sh(state);
  omp_set_num_threads(sh.threads);
  using dnnl::memory;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::desc a_md({sh.m, sh.k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b_any({sh.k, sh.n}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc b_plain({sh.k, sh.n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc c_md({sh.m, sh.n}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng);
  auto a = RandomFloats(sh.m * sh.k, 1);
  auto b = RandomFloats(sh.k * sh.n, 2);
  std::vector<float> c(static_cast<size_t>(sh.m * sh.n));
  memory a_mem(a_md, eng, a.data()), c_mem(c_md, eng, c.data());
  memory b_src(b_plain, eng, b.data());
  memory b_mem(pd.weights_desc(), eng);
  dnnl::reorder(b_src, b_mem).execute(strm, b_src, b_mem);  // once, like packing constant B
  dnnl::matmul mm(pd);
  const std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}};
  for (auto _ : state) {
    mm.execute(strm, args);
    strm.wait();
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, sh.Flops());
}

void BM_GemmOpenBLAS(benchmark::State& state) {
  const Shape sh(state);
  openblas_set_num_threads(sh.threads);
  const auto a = RandomFloats(sh.m * sh.k, 1);
  const auto b = RandomFloats(sh.k * sh.n, 2);
  std::vector<float> c(static_cast<size_t>(sh.m * sh.n));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(sh.m),
                static_cast<int>(sh.n), static_cast<int>(sh.k), 1.0f, a.data(),
                static_cast<int>(sh.k), b.data(), static_cast<int>(sh.n), 0.0f, c.data(),
                static_cast<int>(sh.n));
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, sh.Flops());
}

void BM_GemmEigen(benchmark::State& state) {
  const Shape sh(state);
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto av = RandomFloats(sh.m * sh.k, 1);
  const auto bv = RandomFloats(sh.k * sh.n, 2);
  std::vector<float> cv(static_cast<size_t>(sh.m * sh.n));
  Eigen::Map<const Mat> a(av.data(), sh.m, sh.k);
  Eigen::Map<const Mat> b(bv.data(), sh.k, sh.n);
  Eigen::Map<Mat> c(cv.data(), sh.m, sh.n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(cv.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, sh.Flops());
}

// Square sizes and the transformer shapes (M tokens x [768x768, 768x3072, 3072x768] weights).
void Shapes(benchmark::internal::Benchmark* b, bool multithreaded) {
  b->ArgNames({"M", "K", "N", "threads"})->UseRealTime();
  const std::vector<int> threads = multithreaded ? std::vector<int>{1, 2} : std::vector<int>{1};
  for (int t : threads) {
    for (int64_t s : {64, 128, 256, 512, 1024}) b->Args({s, s, s, t});
    for (int64_t m : {1, 4, 16}) {
      b->Args({m, 768, 768, t});
      b->Args({m, 768, 3072, t});
      b->Args({m, 3072, 768, t});
    }
  }
}

BENCHMARK(BM_GemmSimplecpp)->Apply([](auto* b) { Shapes(b, true); });
BENCHMARK(BM_GemmOneDNN)->Apply([](auto* b) { Shapes(b, true); });
BENCHMARK(BM_GemmOpenBLAS)->Apply([](auto* b) { Shapes(b, true); });
BENCHMARK(BM_GemmEigen)->Apply([](auto* b) { Shapes(b, false); });

}  // namespace
}  // namespace simplecpp::bench

BENCHMARK_MAIN();
