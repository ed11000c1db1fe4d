// Integer GEMM, C[M,N] (int32) = A[M,K] (uint8) * B[K,N] (int8), B constant (weights):
// simplecpp QGemmU8ToI32 (B packed once with PackedQB::Pack, as MatMulInteger does at Prepare;
// zero points 0) vs oneDNN u8s8s32 matmul (weights reordered once into its preferred layout).
// Arguments: M, K, N, threads. Counter: GOP/s (2*M*N*K per iteration: one MAC = 2 ops).
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "bench/bench_common.h"
#include "kernels/quant/qgemm.h"

namespace simplecpp::bench {
namespace {

struct Data {
  std::vector<uint8_t> a;
  std::vector<int8_t> b;
  std::vector<int32_t> c;
  Data(int64_t m, int64_t k, int64_t n)
      : a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n)) {
    const auto fa = RandomFloats(m * k, 1, 0.0f, 256.0f);
    const auto fb = RandomFloats(k * n, 2, -128.0f, 128.0f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(fa[i]);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(fb[i]);
  }
};

void BM_QGemmSimplecpp(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  Data d(m, k, n);
  auto pool = graph::MakeThreadPool(static_cast<int>(state.range(3)));
  const auto packed = kernels::PackedQB::Pack(/*b_signed=*/true, false, k, n, d.b.data(), n);
  for (auto _ : state) {
    kernels::QGemmU8ToI32(m, d.a.data(), k, nullptr, 0, *packed, nullptr, 0, d.c.data(), n, *pool);
    benchmark::DoNotOptimize(d.c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * m * n * k, "GOP/s");
}

void BM_QGemmOneDNN(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  omp_set_num_threads(static_cast<int>(state.range(3)));
  Data d(m, k, n);
  using dnnl::memory;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::desc a_md({m, k}, memory::data_type::u8, memory::format_tag::ab);
  const memory::desc b_any({k, n}, memory::data_type::s8, memory::format_tag::any);
  const memory::desc b_plain({k, n}, memory::data_type::s8, memory::format_tag::ab);
  const memory::desc c_md({m, n}, memory::data_type::s32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng);
  memory a_mem(a_md, eng, d.a.data()), c_mem(c_md, eng, d.c.data());
  memory b_src(b_plain, eng, d.b.data());
  memory b_mem(pd.weights_desc(), eng);
  dnnl::reorder(b_src, b_mem).execute(strm, b_src, b_mem);
  dnnl::matmul mm(pd);
  const std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}};
  for (auto _ : state) {
    mm.execute(strm, args);
    strm.wait();
    benchmark::DoNotOptimize(d.c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * m * n * k, "GOP/s");
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "threads"})->UseRealTime();
  for (int t : {1, 2}) {
    for (int64_t s : {512, 1024}) b->Args({s, s, s, t});
    for (int64_t m : {1, 4, 16}) {
      b->Args({m, 768, 768, t});
      b->Args({m, 768, 3072, t});
      b->Args({m, 3072, 768, t});
    }
  }
}

BENCHMARK(BM_QGemmSimplecpp)->Apply(Shapes);
BENCHMARK(BM_QGemmOneDNN)->Apply(Shapes);

}  // namespace
}  // namespace simplecpp::bench

BENCHMARK_MAIN();
