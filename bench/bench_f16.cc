// 16-bit weights vs float32 weights through the entry points graph/ops/matmul.cc uses for a
// constant B (weights packed once, as at Prepare), single thread, in the same run:
//   GEMV 1x4096x4096 (one token): float32 weights (PackedBF32 + GemmPackedBMixed) vs float16 /
//     bfloat16 weights kept 16-bit (PackedB16 + GemvPackedB16, the M <= 8 path), plus float16
//     weights widened to float32 at packing (the path MatMul took before, for reference).
//   GEMM 1024^3: float32 vs float16 (PackedBF32::Pack16 + GemmPackedBMixed, the large-M path).
// After the runs it prints the speed ratios from the medians and the minima of the repetitions,
// of wall-clock and of CPU time (on a loaded machine the CPU time and the minima are steadier).
// Suggested: bench_f16 --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true
//            --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "kernels/float16/float16.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemv_f16.h"
#include "kernels/targets.h"

namespace simplecpp::bench {
namespace {

constexpr int64_t kGemvN = 4096, kGemvK = 4096, kGemmSize = 1024;

std::vector<uint16_t> To16(kernels::Float16Kind kind, const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  kernels::Narrow16(kind, v.data(), out.data(), v.size());
  return out;
}

void BM_GemvF32(benchmark::State& state) {
  const auto a = RandomFloats(kGemvK, 1);
  const auto b = RandomFloats(kGemvK * kGemvN, 2);
  std::vector<float> c(kGemvN);
  auto pool = graph::MakeThreadPool(1);
  const auto packed = kernels::PackedBF32::Pack(false, kGemvK, kGemvN, b.data(), kGemvN);
  for (auto _ : state) {
    kernels::GemmPackedBMixed(kernels::GemmType::kF32, kernels::GemmType::kF32, false, 1, 1.0f,
                              a.data(), kGemvK, *packed, 0.0f, c.data(), kGemvN, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * kGemvN * kGemvK);
}

// 16-bit weights kept 16-bit (MatMul/Gemm with a 16-bit constant B and M <= 8).
void Gemv16(benchmark::State& state, kernels::Float16Kind kind) {
  const auto a = To16(kind, RandomFloats(kGemvK, 1));
  const auto b = To16(kind, RandomFloats(kGemvK * kGemvN, 2));
  std::vector<uint16_t> c(kGemvN);
  auto pool = graph::MakeThreadPool(1);
  const auto packed = kernels::PackedB16::Pack(kind, false, kGemvK, kGemvN, b.data(), kGemvN);
  const auto type = kernels::GemmTypeOf(kind);
  for (auto _ : state) {
    kernels::GemvPackedB16(type, type, false, 1, 1.0f, a.data(), kGemvK, *packed, 0.0f, c.data(),
                           kGemvN, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * kGemvN * kGemvK);
}
void BM_GemvF16(benchmark::State& state) { Gemv16(state, kernels::Float16Kind::kHalf); }
void BM_GemvBF16(benchmark::State& state) { Gemv16(state, kernels::Float16Kind::kBFloat16); }

// float16 weights widened to float32 at packing (the large-M path), for reference.
void BM_GemvF16Widened(benchmark::State& state) {
  const auto kind = kernels::Float16Kind::kHalf;
  const auto a = To16(kind, RandomFloats(kGemvK, 1));
  const auto b = To16(kind, RandomFloats(kGemvK * kGemvN, 2));
  std::vector<uint16_t> c(kGemvN);
  auto pool = graph::MakeThreadPool(1);
  const auto packed = kernels::PackedBF32::Pack16(kind, false, kGemvK, kGemvN, b.data(), kGemvN);
  for (auto _ : state) {
    kernels::GemmPackedBMixed(kernels::GemmType::kF16, kernels::GemmType::kF16, false, 1, 1.0f,
                              a.data(), kGemvK, *packed, 0.0f, c.data(), kGemvN, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * kGemvN * kGemvK);
}

void BM_GemmF32(benchmark::State& state) {
  const int64_t s = kGemmSize;
  const auto a = RandomFloats(s * s, 1);
  const auto b = RandomFloats(s * s, 2);
  std::vector<float> c(static_cast<size_t>(s * s));
  auto pool = graph::MakeThreadPool(1);
  const auto packed = kernels::PackedBF32::Pack(false, s, s, b.data(), s);
  for (auto _ : state) {
    kernels::GemmPackedBMixed(kernels::GemmType::kF32, kernels::GemmType::kF32, false, s, 1.0f,
                              a.data(), s, *packed, 0.0f, c.data(), s, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * s * s * s);
}

// MatMul float16 with M = 1024: B widened once at packing, A per packed block, C rounded once.
void BM_GemmF16(benchmark::State& state) {
  const int64_t s = kGemmSize;
  const auto kind = kernels::Float16Kind::kHalf;
  const auto a = To16(kind, RandomFloats(s * s, 1));
  const auto b = To16(kind, RandomFloats(s * s, 2));
  std::vector<uint16_t> c(static_cast<size_t>(s * s));
  auto pool = graph::MakeThreadPool(1);
  const auto packed = kernels::PackedBF32::Pack16(kind, false, s, s, b.data(), s);
  for (auto _ : state) {
    kernels::GemmPackedBMixed(kernels::GemmType::kF16, kernels::GemmType::kF16, false, s, 1.0f,
                              a.data(), s, *packed, 0.0f, c.data(), s, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetRate(state, 2.0 * s * s * s);
}

// The fastest repetition too: on a shared, loaded machine the minimum is the least disturbed.
double MinOf(const std::vector<double>& v) {
  double m = v.empty() ? 0.0 : v[0];
  for (double x : v) m = x < m ? x : m;
  return m;
}
BENCHMARK(BM_GemvF32)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", MinOf);
BENCHMARK(BM_GemvF16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", MinOf);
BENCHMARK(BM_GemvBF16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", MinOf);
BENCHMARK(BM_GemvF16Widened)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", MinOf);
BENCHMARK(BM_GemmF32)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", MinOf);
BENCHMARK(BM_GemmF16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", MinOf);

// Console output plus each benchmark's real time (the median aggregate when repeated).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const std::string& name = r.run_name.function_name;
      const double real = r.GetAdjustedRealTime() * Scale(r.time_unit);
      const double cpu = r.GetAdjustedCPUTime() * Scale(r.time_unit);
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        median_[name] = real;
        median_cpu_[name] = cpu;
      } else if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "min") {
        min_[name] = real;
        min_cpu_[name] = cpu;
      } else if (r.run_type == Run::RT_Iteration && r.repetitions <= 1) {
        median_[name] = min_[name] = real;
        median_cpu_[name] = min_cpu_[name] = cpu;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Seconds per iteration (which: 0 median real, 1 median CPU, 2 min real, 3 min CPU), or 0 when
  // the benchmark did not run.
  double Seconds(const std::string& name, int which) const {
    const auto& m = which == 0 ? median_ : which == 1 ? median_cpu_ : which == 2 ? min_ : min_cpu_;
    const auto it = m.find(name);
    return it == m.end() ? 0.0 : it->second;
  }

 private:
  static double Scale(benchmark::TimeUnit u) {
    switch (u) {
      case benchmark::kNanosecond:
        return 1e-9;
      case benchmark::kMicrosecond:
        return 1e-6;
      case benchmark::kMillisecond:
        return 1e-3;
      default:
        return 1.0;
    }
  }
  std::map<std::string, double> median_, median_cpu_, min_, min_cpu_;
};

void PrintRatio(const RatioReporter& rep, const char* what, const char* base, const char* other,
                const char* goal) {
  static const char* const kWhich[4] = {"median real", "median CPU", "min real", "min CPU"};
  for (int w = 0; w < 4; ++w) {
    const double tb = rep.Seconds(base, w), to = rep.Seconds(other, w);
    if (tb <= 0.0 || to <= 0.0) continue;
    std::printf("%-40s %-11s %s %.1f us, %s %.1f us: %.2fx %s\n", what, kWhich[w], base, tb * 1e6,
                other, to * 1e6, tb / to, goal);
  }
}

}  // namespace
}  // namespace simplecpp::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("target: %s\n", simplecpp::kernels::CurrentTarget().name.c_str());
  simplecpp::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  using simplecpp::bench::PrintRatio;
  std::printf("\nspeed ratios (time of the first / time of the second):\n");
  PrintRatio(reporter, "GEMV 1x4096x4096, f16 vs f32 weights", "BM_GemvF32", "BM_GemvF16",
             "(goal >= 1.7)");
  PrintRatio(reporter, "GEMV 1x4096x4096, bf16 vs f32 weights", "BM_GemvF32", "BM_GemvBF16", "");
  PrintRatio(reporter, "GEMV 1x4096x4096, f16 widened vs f32", "BM_GemvF32", "BM_GemvF16Widened",
             "(the path before)");
  PrintRatio(reporter, "GEMM 1024^3, f16 vs f32 weights", "BM_GemmF32", "BM_GemmF16",
             "(goal >= 0.9)");
  benchmark::Shutdown();
  return 0;
}
