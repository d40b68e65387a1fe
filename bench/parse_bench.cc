// Parse time of the profiler outputs kernelpro reads after every candidate: the largest SASS dump,
// the largest ncu CSV and the largest PyTorch profiler trace among the H200 recordings, plus a
// 32x SASS dump (the size of a CUTLASS-heavy extension). Google Benchmark prints the table.
//
//   cmake -S . -B build -DKERNELPRO_BUILD_BENCH=ON && cmake --build build && build/parse_bench
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <string>

#include "profile/collect.h"
#include "profile/ncu_csv.h"
#include "profile/sass.h"
#include "profile/timeline.h"

namespace {

std::string Fixture(const std::string& name, const std::string& dir = "tests/fixtures/h200") {
  std::ifstream in(std::string(KERNELPRO_SOURCE_DIR) + "/" + dir + "/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void BM_ParseSassDump(benchmark::State& state) {
  std::string one = Fixture("k_wmma.sass.txt");
  std::string text;
  for (int i = 0; i < state.range(0); ++i) text += one;
  for (auto _ : state) benchmark::DoNotOptimize(kernelpro::ParseSassDump(text));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseSassDump)->Arg(1)->Arg(32)->Unit(benchmark::kMicrosecond);

// The largest dump kernelpro profile saved on the H200: linear_gelu's extension, 825 KB (most of
// it host-side template instances the analyzer skips).
void BM_ParseSassDumpLinearGelu(benchmark::State& state) {
  std::string text = Fixture("linear_gelu.sass.txt", "tests/fixtures/h200-profile/profiles");
  for (auto _ : state) benchmark::DoNotOptimize(kernelpro::ParseSassDump(text));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseSassDumpLinearGelu)->Unit(benchmark::kMicrosecond);

// Everything `kernelpro collect` does for one profiled candidate: read and parse six artifacts.
void BM_CollectOneProfile(benchmark::State& state) {
  const std::string dir = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200-profile/record";
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernelpro::CollectFromArtifacts(kernelpro::ArtifactsIn(dir, "cublas_tril")));
  }
}
BENCHMARK(BM_CollectOneProfile)->Unit(benchmark::kMillisecond);

void BM_ParseNcuCsv(benchmark::State& state) {
  std::string text = Fixture("p_cublas_bf16.ncu.csv");
  for (auto _ : state) benchmark::DoNotOptimize(kernelpro::ParseNcuCsv(text));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseNcuCsv)->Unit(benchmark::kMicrosecond);

void BM_ParseTorchProfilerTrace(benchmark::State& state) {
  std::string text = Fixture("p_many_launches.trace.json");
  for (auto _ : state) benchmark::DoNotOptimize(kernelpro::ParseTorchProfilerTrace(text));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseTorchProfilerTrace)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
