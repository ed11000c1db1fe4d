// Block-quantized weights (com.microsoft MatMulNBits, kernels/quant/matmul_nbits.h) vs float32
// weights, GEMV 1x4096 . 4096x4096 (one token), single thread, in the same run:
//   float32: the path MatMul takes for a constant B (PackedBF32 + GemmPackedBMixed, M = 1)
//   int4 / int8: GemvNBitsF32, block 32, packed uint8 zero points (Int4 / Int8) or none, the
//                symmetric form (Int4Sym / Int8Sym)
//   int4 / int8 with int8 A: GemvNBitsQ8 (accuracy_level 4), the same weights (Int4Q8 / Int8Q8)
//   DRAM: a read-sum of a 256 MiB buffer (the bound of a read-only stream) and a 256 MiB memcpy.
// Every line reports GB/s of bytes moved (weights + scales + zero points + A for the GEMVs).
// After the runs it prints the speed ratios to float32 and the fraction of the best read stream
// of the run, from the medians of the repetitions.
// Suggested: bench_nbits --benchmark_repetitions=15 --benchmark_enable_random_interleaving=true
//            --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "kernels/gemm/gemm.h"
#include "kernels/quant/matmul_nbits.h"
#include "kernels/quant/matmul_nbits_q8.h"
#include "kernels/targets.h"

namespace simplecpp::bench {
namespace {

constexpr int64_t kN = 4096, kK = 4096, kBlock = 32;
constexpr size_t kDramBytes = size_t{256} << 20;

void SetBytes(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GemvF32(benchmark::State& state) {
  const auto a = RandomFloats(kK, 1);
  const auto b = RandomFloats(kK * kN, 2);
  std::vector<float> c(kN);
  auto pool = graph::MakeThreadPool(1);
  const auto packed = kernels::PackedBF32::Pack(false, kK, kN, b.data(), kN);
  for (auto _ : state) {
    kernels::GemmPackedBMixed(kernels::GemmType::kF32, kernels::GemmType::kF32, false, 1, 1.0f,
                              a.data(), kK, *packed, 0.0f, c.data(), kN, *pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetBytes(state, 4.0 * kN * kK + 4.0 * kK);
}

void GemvNBits(benchmark::State& state, int bits, bool zero_points, bool int8_a = false) {
  kernels::NBitsWeights w;
  w.bits = bits;
  w.n = kN;
  w.k = kK;
  w.block_size = kBlock;
  const int64_t kb = w.k_blocks();
  std::vector<uint8_t> packed(static_cast<size_t>(kN * kb * w.blob_bytes()));
  uint32_t s = 12345;
  for (auto& x : packed) x = static_cast<uint8_t>((s = s * 1664525u + 1013904223u) >> 24);
  const auto scales = RandomFloats(kN * kb, 3, 0.001f, 0.1f);
  std::vector<uint8_t> zp(static_cast<size_t>(kN * w.zp_row_bytes()), bits == 4 ? 0x88 : 0x80);
  w.packed = packed.data();
  w.scales = scales.data();
  if (zero_points) {
    w.zp_kind = kernels::NBitsZeroPoints::kPackedU8;
    w.zp_packed = zp.data();
  } else {
    zp.clear();
  }
  const auto a = RandomFloats(kK, 1);
  std::vector<float> y(kN);
  auto pool = graph::MakeThreadPool(1);
  for (auto _ : state) {
    if (int8_a) {
      kernels::GemvNBitsQ8(1, a.data(), kK, w, nullptr, y.data(), kN, *pool);
    } else {
      kernels::GemvNBitsF32(1, a.data(), kK, w, nullptr, y.data(), kN, *pool);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(kernels::CurrentTarget().name);
  SetBytes(state, static_cast<double>(packed.size() + zp.size()) + 4.0 * scales.size() + 4.0 * kK);
}
void BM_GemvInt4(benchmark::State& state) { GemvNBits(state, 4, true); }
void BM_GemvInt8(benchmark::State& state) { GemvNBits(state, 8, true); }
void BM_GemvInt4Sym(benchmark::State& state) { GemvNBits(state, 4, false); }
void BM_GemvInt8Sym(benchmark::State& state) { GemvNBits(state, 8, false); }
void BM_GemvInt4Q8(benchmark::State& state) { GemvNBits(state, 4, true, true); }
void BM_GemvInt8Q8(benchmark::State& state) { GemvNBits(state, 8, true, true); }

// Sum of 64-bit words (an integer reduction the compiler vectorizes), each cache line asked for
// 1 KiB ahead as the kernels do: a pure read stream.
void BM_DramReadSum(benchmark::State& state) {
  std::vector<uint64_t> buf(kDramBytes / 8);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = i;
  for (auto _ : state) {
    uint64_t sum = 0;
    const uint64_t* p = buf.data();
    for (size_t i = 0; i < buf.size(); i += 8) {
      __builtin_prefetch(p + i + 128);
      for (size_t j = 0; j < 8; ++j) sum += p[i + j];
    }
    benchmark::DoNotOptimize(sum);
  }
  SetBytes(state, static_cast<double>(kDramBytes));
}

// memcpy: bytes read + bytes written.
void BM_DramMemcpy(benchmark::State& state) {
  std::vector<uint8_t> src(kDramBytes, 1), dst(kDramBytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kDramBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  SetBytes(state, 2.0 * static_cast<double>(kDramBytes));
}

BENCHMARK(BM_GemvF32)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GemvInt4)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GemvInt8)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GemvInt4Sym)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GemvInt8Sym)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GemvInt4Q8)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GemvInt8Q8)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DramReadSum)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DramMemcpy)->UseRealTime()->Unit(benchmark::kMillisecond);

// Console output plus each benchmark's median real time and GB/s.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (!single && !median) continue;
      const std::string& name = r.run_name.function_name;
      seconds_[name] = r.GetAdjustedRealTime() * Scale(r.time_unit);
      const auto it = r.counters.find("GB/s");
      if (it != r.counters.end()) gbps_[name] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double Seconds(const std::string& name) const { return Get(seconds_, name); }
  double GBps(const std::string& name) const { return Get(gbps_, name); }

 private:
  static double Get(const std::map<std::string, double>& m, const std::string& name) {
    const auto it = m.find(name);
    return it == m.end() ? 0.0 : it->second;
  }
  static double Scale(benchmark::TimeUnit u) {
    return u == benchmark::kNanosecond    ? 1e-9
           : u == benchmark::kMicrosecond ? 1e-6
           : u == benchmark::kMillisecond ? 1e-3
                                          : 1.0;
  }
  std::map<std::string, double> seconds_, gbps_;
};

}  // namespace
}  // namespace simplecpp::bench

int main(int argc, char** argv) {
  using simplecpp::bench::MedianReporter;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("target %s\n", simplecpp::kernels::CurrentTarget().name.c_str());
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double f32 = reporter.Seconds("BM_GemvF32");
  // The bandwidth bound: the faster of the plain read stream and the float32 GEMV's own stream
  // (which prefetches and can beat a simple loop).
  const double read_bw = std::max(reporter.GBps("BM_DramReadSum"), reporter.GBps("BM_GemvF32"));
  for (const char* name : {"BM_GemvInt4", "BM_GemvInt8", "BM_GemvInt4Sym", "BM_GemvInt8Sym",
                           "BM_GemvInt4Q8", "BM_GemvInt8Q8"}) {
    const double t = reporter.Seconds(name);
    if (t <= 0.0 || f32 <= 0.0) continue;
    std::printf(
        "%-12s %.1f us vs float32 %.1f us: %.2fx faster; %.1f GB/s = %.2f of the best read "
        "stream (%.1f GB/s; read-sum %.1f GB/s, float32 GEMV %.1f GB/s)\n",
        name, t * 1e6, f32 * 1e6, f32 / t, reporter.GBps(name),
        read_bw > 0.0 ? reporter.GBps(name) / read_bw : 0.0, read_bw,
        reporter.GBps("BM_DramReadSum"), reporter.GBps("BM_GemvF32"));
  }
  benchmark::Shutdown();
  return 0;
}
