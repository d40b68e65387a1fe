#include "profile/ncu_csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "profile/ncu_catalog.h"
#include "profile/ncu_csv_testing.h"
#include "profile/ncu_runner.h"

namespace kernelpro::profile {
namespace profile_ncu_csv_test {

namespace fs = std::filesystem;

const std::string kH200 = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200";
const std::string kCorpus = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/corpus/ncu";

const std::vector<std::string> kFixtures = {"k_naive_matmul", "k_strided_copy", "k_swish_scalar",
                                            "k_swish_vec",    "k_wmma",         "p_cublas_bf16",
                                            "p_many_launches"};

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Fixture(const std::string& name) { return ReadText(kH200 + "/" + name + ".ncu.csv"); }

double Value(const NcuKernel& kernel, std::string_view name) {
  auto it = kernel.values.find(std::string(name));
  return it == kernel.values.end() ? std::nan("") : it->second;
}

// What a tool reads from one recorded kernel, copied by hand from the fixture files.
struct ExpectedKernel {
  int id;
  std::string name, block_size, grid_size;
  double duration_ns, dram_read, dram_write, sm_pct, occupancy_pct, registers, long_scoreboard_pct,
      load_sectors, load_requests, store_sectors, store_requests, hmma_pct, instructions;
};

struct ExpectedFile {
  std::string fixture;
  std::vector<ExpectedKernel> kernels;
};

const std::vector<ExpectedFile>& Expected() {
  static const std::vector<ExpectedFile> expected = {
      {"k_naive_matmul",
       {{0, "naive_matmul(const float *, const float *, float *, int)", "(16, 16, 1)",
         "(128, 128, 1)", 4227040, 16784128, 4190464, 64.19, 97.80, 32, 26.40, 1073741824,
         536870912, 524288, 131072, 0.01, 1230897152}}},
      {"k_strided_copy",
       {{0, "transpose_naive(const float *, float *, int)", "(32, 8, 1)", "(256, 1024, 1)", 1015744,
         287549440, 267533056, 12.56, 74.93, 16, 34.09, 8388608, 2097152, 67158674, 2097152, 0,
         48234496}}},
      {"k_swish_scalar",
       {{0, "swish_scalar(const float *, float *, int)", "(256, 1, 1)", "(262144, 1, 1)", 243808,
         268470016, 249660928, 43.55, 75.11, 16, 66.71, 8388608, 2097152, 8388608, 2097152, 0,
         75497682}}},
      {"k_swish_vec",
       {{0, "swish_vec4(const float4 *, float4 *, int)", "(256, 1, 1)", "(65536, 1, 1)", 127744,
         268448512, 245228288, 34.14, 77.61, 18, 85.58, 8388608, 524288, 8388608, 524288, 0,
         25165824}}},
      {"k_wmma",
       {{0, "wmma_gemm(const __half *, const __half *, float *, int)", "(128, 4, 1)", "(64, 64, 1)",
         6493440, 280204032, 65267712, 17.04, 73.02, 40, 21.12, 1073741824, 134217728, 2096611,
         262144, 4.39, 474087424}}},
      {"p_cublas_bf16",
       {{0, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", "(384, 1, 1)", "(2, 66, 1)", 1620896,
         1158749440, 130400768, 92.93, 14.78, 168, 18.49, 0, 0, 0, 0, 97.00, 183170041},
        {1, "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", "(384, 1, 1)", "(2, 66, 1)", 1660800,
         1400110080, 130857216, 93.84, 14.78, 168, 18.49, 0, 0, 0, 0, 97.00, 183173864}}},
      {"p_many_launches",
       {{0,
         "void vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add<float>, array<char *, 2>>"
         "(int, T2, T3)",
         "(128, 1, 1)", "(4, 1, 1)", 2528, 21504, 0, 0.06, 7.60, 32, 52.30, 512, 32, 512, 32, 0,
         480},
        {1,
         "void vectorized_elementwise_kernel<4, AUnaryFunctor<float, float, float, "
         "binary_internal::MulFunctor<float>>, array<char *, 2>>(int, T2, T3)",
         "(128, 1, 1)", "(4, 1, 1)", 2464, 21504, 0, 0.05, 6.58, 32, 52.29, 512, 32, 512, 32, 0,
         464},
        {2,
         "void vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add<float>, array<char *, 2>>"
         "(int, T2, T3)",
         "(128, 1, 1)", "(4, 1, 1)", 2624, 21504, 0, 0.06, 7.27, 32, 50.81, 512, 32, 512, 32, 0,
         480}}},
  };
  return expected;
}

// ---- The recorded H200 outputs -----------------------------------------------------------------

TEST(NcuCsvTest, ReadsEveryRecordedH200Kernel) {
  for (const ExpectedFile& file : Expected()) {
    SCOPED_TRACE(file.fixture);
    Result<NcuView> view = ParseNcuCsv(Fixture(file.fixture));
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    EXPECT_TRUE(view->warnings.empty()) << view->warnings[0];
    ASSERT_EQ(view->kernels.size(), file.kernels.size());
    for (std::size_t i = 0; i < file.kernels.size(); ++i) {
      const ExpectedKernel& want = file.kernels[i];
      const NcuKernel& got = view->kernels[i];
      EXPECT_EQ(got.id, want.id);
      EXPECT_EQ(got.name, want.name);
      EXPECT_EQ(got.block_size, want.block_size);
      EXPECT_EQ(got.grid_size, want.grid_size);
      EXPECT_DOUBLE_EQ(got.duration_ns(), want.duration_ns);
      EXPECT_DOUBLE_EQ(Value(got, kNcuDuration), want.duration_ns);
      EXPECT_DOUBLE_EQ(Value(got, kNcuDramBytesRead), want.dram_read);
      EXPECT_DOUBLE_EQ(Value(got, kNcuDramBytesWrite), want.dram_write);
      EXPECT_DOUBLE_EQ(Value(got, kNcuSmThroughputPct), want.sm_pct);
      EXPECT_DOUBLE_EQ(Value(got, kNcuAchievedOccupancyPct), want.occupancy_pct);
      EXPECT_DOUBLE_EQ(Value(got, kNcuRegistersPerThread), want.registers);
      EXPECT_DOUBLE_EQ(Value(got, kNcuLongScoreboardStall), want.long_scoreboard_pct);
      EXPECT_DOUBLE_EQ(Value(got, kNcuGlobalLoadSectors), want.load_sectors);
      EXPECT_DOUBLE_EQ(Value(got, kNcuGlobalLoadRequests), want.load_requests);
      EXPECT_DOUBLE_EQ(Value(got, kNcuGlobalStoreSectors), want.store_sectors);
      EXPECT_DOUBLE_EQ(Value(got, kNcuGlobalStoreRequests), want.store_requests);
      EXPECT_DOUBLE_EQ(Value(got, kNcuTensorPipePct), want.hmma_pct);
      EXPECT_DOUBLE_EQ(Value(got, kNcuInstructionsExecuted), want.instructions);
      // 426 metric columns, of which 6 hold text ("PolicySpread", "NVIDIA H200", ...), and the
      // sectors-per-request ratios derived from the sums ncu printed (derived_metrics.h), for
      // loads and stores where the kernel made requests.
      const std::size_t derived =
          (want.load_requests > 0 ? 1 : 0) + (want.store_requests > 0 ? 1 : 0);
      EXPECT_EQ(got.values.size(), 420u + derived);
      EXPECT_EQ(got.units.size(), 420u + derived);
      EXPECT_EQ(got.units.at(std::string(kNcuDuration)), "ns");
      EXPECT_EQ(got.units.at(std::string(kNcuDramBytesRead)), "byte");
      EXPECT_EQ(got.units.at(std::string(kNcuSmThroughputPct)), "%");
      EXPECT_EQ(got.units.at(std::string(kNcuRegistersPerThread)), "register/thread");
      EXPECT_EQ(got.units.at(std::string(kNcuGlobalLoadSectors)), "sector");
      EXPECT_EQ(got.units.at(std::string(kNcuGlobalLoadRequests)), "");
      EXPECT_EQ(got.values.count("launch__cluster_scheduling_policy"), 0u);
      EXPECT_EQ(got.values.count("Process ID"), 0u);  // identity columns are not metrics
    }
  }
}

TEST(NcuCsvTest, KeepsTheFullPrecisionOfThousandsSeparatedValues) {
  Result<NcuView> view = ParseNcuCsv(Fixture("k_naive_matmul"));
  ASSERT_TRUE(view.ok());
  const NcuKernel& kernel = view->kernels[0];
  EXPECT_DOUBLE_EQ(Value(kernel, "dram__cycles_elapsed.avg.per_second"), 3199458092.03);
  EXPECT_EQ(kernel.units.at("dram__cycles_elapsed.avg.per_second"), "hz");
  EXPECT_DOUBLE_EQ(Value(kernel, "dram__bytes_read.avg"), 349669.33);
  EXPECT_DOUBLE_EQ(Value(kernel, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
                   8589934592.0);  // 2048^3 FMAs: the naive matmul's arithmetic
  EXPECT_DOUBLE_EQ(Value(kernel, "smsp__warps_eligible.avg.per_cycle_active"), 2.62);
  EXPECT_DOUBLE_EQ(Value(kernel, "launch__waves_per_multiprocessor"), 15.52);
  EXPECT_DOUBLE_EQ(Value(kernel, "launch__grid_size"), 16384);
  EXPECT_DOUBLE_EQ(Value(kernel, "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct"),
                   43.51);
  EXPECT_DOUBLE_EQ(Value(kernel, "device__attribute_max_threads_per_block"), 1024);
}

TEST(NcuCsvTest, SectorsPerRequestShowCoalescingAndVectorWidth) {
  auto sectors_per_request = [](const std::string& fixture, bool loads) {
    Result<NcuView> view = ParseNcuCsv(Fixture(fixture));
    EXPECT_TRUE(view.ok());
    const NcuKernel& k = view->kernels[0];
    return loads ? Value(k, kNcuGlobalLoadSectors) / Value(k, kNcuGlobalLoadRequests)
                 : Value(k, kNcuGlobalStoreSectors) / Value(k, kNcuGlobalStoreRequests);
  };
  EXPECT_DOUBLE_EQ(sectors_per_request("k_swish_scalar", true), 4.0);  // 32 threads x 4 bytes
  EXPECT_DOUBLE_EQ(sectors_per_request("k_swish_vec", true), 16.0);    // float4: 32 x 16 bytes
  EXPECT_DOUBLE_EQ(sectors_per_request("k_strided_copy", true), 4.0);
  // The transpose's stores touch one sector per thread.
  EXPECT_DOUBLE_EQ(sectors_per_request("k_strided_copy", false), 67158674.0 / 2097152.0);
  EXPECT_GT(sectors_per_request("k_strided_copy", false), 32.0);
  EXPECT_DOUBLE_EQ(sectors_per_request("k_naive_matmul", true), 2.0);
}

TEST(NcuCsvTest, CublasFixtureShowsTwoLaunchesWithTensorCoresBusy) {
  Result<NcuView> view = ParseNcuCsv(Fixture("p_cublas_bf16"));
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(Value(view->kernels[0], kNcuBarrierStall), 11.51);
  EXPECT_DOUBLE_EQ(Value(view->kernels[1], kNcuBarrierStall), 11.33);
  EXPECT_DOUBLE_EQ(Value(view->kernels[0], "launch__occupancy_limit_registers"), 1);
  EXPECT_DOUBLE_EQ(Value(view->kernels[0], "smsp__sass_branch_targets_threads_divergent.sum"), 898);
}

// ---- Aggregate ---------------------------------------------------------------------------------

TEST(NcuCsvTest, AggregateOfCublasWeighsRatesByDurationAndAddsCounts) {
  Result<NcuView> view = ParseNcuCsv(Fixture("p_cublas_bf16"));
  ASSERT_TRUE(view.ok());
  const NcuKernel& aggregate = view->aggregate;
  EXPECT_EQ(aggregate.name, "aggregate (2 kernels)");
  EXPECT_EQ(aggregate.id, -1);
  EXPECT_EQ(aggregate.block_size, "(384, 1, 1)");
  EXPECT_EQ(aggregate.grid_size, "(2, 66, 1)");
  // Sums: time, bytes, instructions.
  EXPECT_DOUBLE_EQ(aggregate.duration_ns(), 1620896.0 + 1660800.0);
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuDramBytesRead), 1158749440.0 + 1400110080.0);
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuDramBytesWrite), 130400768.0 + 130857216.0);
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuInstructionsExecuted), 183170041.0 + 183173864.0);
  // Duration-weighted means: (92.93 * 1620896 + 93.84 * 1660800) / 3281696 = 93.3905326...
  EXPECT_NEAR(Value(aggregate, kNcuSmThroughputPct), 93.3905326, 1e-6);
  EXPECT_NEAR(Value(aggregate, kNcuSmThroughputPct),
              (92.93 * 1620896 + 93.84 * 1660800) / (1620896.0 + 1660800.0), 1e-9);
  EXPECT_NE(Value(aggregate, kNcuSmThroughputPct), (92.93 + 93.84) / 2);  // not a plain mean
  EXPECT_NEAR(Value(aggregate, kNcuDramThroughputPct),
              (16.53 * 1620896 + 19.16 * 1660800) / (1620896.0 + 1660800.0), 1e-9);
  EXPECT_NEAR(Value(aggregate, kNcuBarrierStall),
              (11.51 * 1620896 + 11.33 * 1660800) / (1620896.0 + 1660800.0), 1e-9);
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuRegistersPerThread), 168);  // a property, not a count
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuAchievedOccupancyPct), 14.78);
  EXPECT_DOUBLE_EQ(Value(aggregate, "device__attribute_multiprocessor_count"), 132);
  EXPECT_EQ(aggregate.units.at(std::string(kNcuDramBytesRead)), "byte");
}

TEST(NcuCsvTest, AggregateOfManyLaunchesAddsTheirTimes) {
  Result<NcuView> view = ParseNcuCsv(Fixture("p_many_launches"));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->aggregate.name, "aggregate (3 kernels)");
  EXPECT_DOUBLE_EQ(view->aggregate.duration_ns(), 2528.0 + 2464.0 + 2624.0);
  EXPECT_DOUBLE_EQ(Value(view->aggregate, kNcuDramBytesRead), 3 * 21504.0);
  EXPECT_NEAR(Value(view->aggregate, kNcuLongScoreboardStall),
              (52.30 * 2528 + 52.29 * 2464 + 50.81 * 2624) / (2528.0 + 2464.0 + 2624.0), 1e-9);
}

TEST(NcuCsvTest, AggregateOfOneKernelIsThatKernel) {
  Result<NcuView> view = ParseNcuCsv(Fixture("k_wmma"));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->aggregate.name, "aggregate (1 kernel)");
  ASSERT_EQ(view->aggregate.values.size(), view->kernels[0].values.size());
  for (const auto& [name, value] : view->kernels[0].values) {
    EXPECT_DOUBLE_EQ(Value(view->aggregate, name), value) << name;
  }
  EXPECT_EQ(view->aggregate.units, view->kernels[0].units);
}

TEST(NcuCsvTest, AggregateWithoutDurationsWeighsKernelsEquallyAndSkipsMissingValues) {
  NcuKernel a, b;
  a.values = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 10},
              {"dram__bytes_read.sum", 100}};
  a.block_size = "(32, 1, 1)";
  b.values = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 30}};
  b.block_size = "(64, 1, 1)";
  NcuKernel aggregate = AggregateKernels({a, b});
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuSmThroughputPct), 20);
  EXPECT_DOUBLE_EQ(Value(aggregate, kNcuDramBytesRead), 100);
  EXPECT_EQ(aggregate.block_size, "");  // the kernels disagree
  EXPECT_EQ(AggregateKernels({}).name, "aggregate (0 kernels)");
  EXPECT_TRUE(AggregateKernels({}).values.empty());
}

// ---- Synthetic output: the cases the fixtures lack -------------------------------------------

constexpr char kSynthetic[] =
    "==PROF== Connected to process 7 (/usr/bin/python3)\n"
    "hello from the program, \"with a stray quote\n"
    "==WARNING== Found outstanding GPU clock reset, trying to revert...Success.\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\","
    "\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"launch__registers_per_thread\",\"l1tex__t_sector_hit_rate.pct\","
    "\"launch__func_cache_config\",\"dram__bytes_write.sum\","
    "\"sm__cycles_elapsed.avg.per_second\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Kbyte\",\"usecond\",\"%\","
    "\"register/thread\",\"%\",\"\",\"byte\",\"Ghz\"\n"
    "\"3\",\"7\",\"python3\",\"127.0.0.1\",\"void k<float, 2>(float *, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"1,234.5\",\"1.5\",\"n/a\",\"32\",\"\","
    "\"CachePreferNone\",\"1,234,567\",\"1.98\"\n"
    "==PROF== Disconnected from process 7\n"
    "\"4\",\"7\",\"python3\",\"127.0.0.1\",\"say \"\"hi\"\"\",\"1\",\"7\",\"(128, 1, 1)\","
    "\"(2, 1, 1)\",\"0\",\"9.0\",\"2\",\"0.5\",\"50.5\",\"64\",\"12.5\",\"CachePreferL1\","
    "\"0\",\"1.5\"\n"
    "==ERROR== Failed to profile \"k3\" in process 7\n";

TEST(NcuCsvTest, SyntheticOutputWithSeparatorsNaQuotesScaledUnitsAndMessages) {
  Result<NcuView> view = ParseNcuCsv(kSynthetic);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->kernels.size(), 2u);
  const NcuKernel& first = view->kernels[0];
  const NcuKernel& second = view->kernels[1];
  EXPECT_EQ(first.id, 3);
  EXPECT_EQ(first.name, "void k<float, 2>(float *, int)");
  EXPECT_EQ(first.block_size, "(256, 1, 1)");
  EXPECT_EQ(second.id, 4);
  EXPECT_EQ(second.name, "say \"hi\"");
  // "1,234.5" Kbyte and "1.5" usecond arrive in base units.
  EXPECT_DOUBLE_EQ(Value(first, kNcuDramBytesRead), 1234500);
  EXPECT_EQ(first.units.at(std::string(kNcuDramBytesRead)), "byte");
  EXPECT_DOUBLE_EQ(first.duration_ns(), 1500);
  EXPECT_EQ(first.units.at(std::string(kNcuDuration)), "nsecond");
  EXPECT_DOUBLE_EQ(Value(first, kNcuDramBytesWrite), 1234567);
  EXPECT_DOUBLE_EQ(Value(first, kNcuRegistersPerThread), 32);
  // "n/a", empty and text cells are absent, not zero.
  EXPECT_EQ(first.values.count(std::string(kNcuSmThroughputPct)), 0u);
  EXPECT_EQ(first.values.count("l1tex__t_sector_hit_rate.pct"), 0u);
  EXPECT_EQ(first.values.count("launch__func_cache_config"), 0u);
  EXPECT_DOUBLE_EQ(Value(first, "sm__cycles_elapsed.avg.per_second"), 1.98e9);
  EXPECT_EQ(first.units.at("sm__cycles_elapsed.avg.per_second"), "hz");
  EXPECT_EQ(first.values.size(), 5u);
  EXPECT_EQ(second.values.size(), 7u);
  EXPECT_DOUBLE_EQ(Value(second, kNcuSmThroughputPct), 50.5);
  // The program's line is dropped; ncu's warning and error are kept, ==PROF== chatter is not.
  ASSERT_EQ(view->warnings.size(), 2u);
  EXPECT_EQ(view->warnings[0],
            "==WARNING== Found outstanding GPU clock reset, trying to revert...Success.");
  EXPECT_EQ(view->warnings[1], "==ERROR== Failed to profile \"k3\" in process 7");
  // Aggregate: durations 1500 and 500 ns.
  EXPECT_EQ(view->aggregate.name, "aggregate (2 kernels)");
  EXPECT_DOUBLE_EQ(view->aggregate.duration_ns(), 2000);
  EXPECT_DOUBLE_EQ(Value(view->aggregate, kNcuDramBytesRead), 1234500 + 2000);
  EXPECT_DOUBLE_EQ(Value(view->aggregate, kNcuRegistersPerThread), (32 * 1500 + 64 * 500) / 2000.0);
  EXPECT_DOUBLE_EQ(Value(view->aggregate, kNcuSmThroughputPct), 50.5);  // only one kernel has it
}

TEST(NcuCsvTest, ImplausibleCountersAreDroppedFromKernelAndAggregateWithANote) {
  const std::string header = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"" +
                             std::string(kNcuDramThroughputPct) +
                             "\",\"dram__bytes_read.sum\"\n\"\",\"\",\"ns\",\"%\",\"byte\"\n";
  Result<NcuView> view = ParseNcuCsv(header +
                                     "\"0\",\"_Z4copyPf\",\"100\",\"-5\",\"1000\"\n"
                                     "\"1\",\"_Z4copyPf\",\"300\",\"40\",\"-2\"\n");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->kernels[0].values.count(std::string(kNcuDramThroughputPct)), 0u);
  EXPECT_DOUBLE_EQ(Value(view->kernels[1], kNcuDramThroughputPct), 40);
  // The aggregate is over the values that stand: kernel 1's 40 %, kernel 0's 1000 bytes.
  EXPECT_DOUBLE_EQ(Value(view->aggregate, kNcuDramThroughputPct), 40);
  EXPECT_DOUBLE_EQ(Value(view->aggregate, kNcuDramBytesRead), 1000);
  EXPECT_EQ(view->notes,
            (std::vector<std::string>{
                "dropped dram__bytes_read.sum = -2 byte (negative) in kernel 1 (copy)",
                "dropped dram__throughput.avg.pct_of_peak_sustained_elapsed = -5 % (negative) in "
                "kernel 0 (copy)"}));
}

// ---- Large profiles: read row by row, bounded memory ---------------------------------------

TEST(NcuCsvTest, StreamAndTextGiveTheSameView) {
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    Result<NcuView> text = ParseNcuCsv(Fixture(fixture));
    std::ifstream in(kH200 + "/" + fixture + ".ncu.csv", std::ios::binary);
    Result<NcuView> stream = ReadNcuCsv(in);
    ASSERT_TRUE(text.ok() && stream.ok());
    ASSERT_EQ(text->kernels.size(), stream->kernels.size());
    for (std::size_t i = 0; i < text->kernels.size(); ++i) {
      EXPECT_EQ(text->kernels[i].values, stream->kernels[i].values);
      EXPECT_EQ(text->kernels[i].units, stream->kernels[i].units);
    }
    EXPECT_EQ(text->aggregate.values, stream->aggregate.values);
    EXPECT_EQ(text->aggregate.values, AggregateKernels(text->kernels).values);
    EXPECT_EQ(text->warnings, stream->warnings);
  }
}

TEST(NcuCsvTest, TenThousandKernelsAreAggregatedWholeAndTheLongestKeepEveryCounter) {
  // The 3 recorded launches of p_many_launches, 3334 times each.
  const std::string recorded = Fixture("p_many_launches");
  Result<NcuView> three = ParseNcuCsv(recorded);
  ASSERT_TRUE(three.ok());
  ASSERT_EQ(three->kernels.size(), 3u);
  std::stringstream large;
  testing::WriteRepeatedNcuCsv(recorded, 3 * 3334, large);
  Result<NcuView> view = ReadNcuCsv(large);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->kernels.size(), 10002u);
  std::size_t detailed = 0;
  for (std::size_t i = 0; i < view->kernels.size(); ++i) {
    const NcuKernel& k = view->kernels[i];
    ASSERT_EQ(k.id, static_cast<int>(i)) << "launch order";
    EXPECT_EQ(k.name, three->kernels[i % 3].name);
    EXPECT_DOUBLE_EQ(k.duration_ns(), three->kernels[i % 3].duration_ns());
    if (k.values.size() > 1) {
      ++detailed;
      EXPECT_EQ(k.values, three->kernels[i % 3].values);
    }
  }
  EXPECT_EQ(detailed, 100u);
  // Sums scale with the launches; duration-weighted means are those of the three.
  for (std::string_view sum : {kNcuDuration, kNcuDramBytesRead, kNcuGlobalLoadSectors}) {
    EXPECT_NEAR(Value(view->aggregate, sum), 3334 * Value(three->aggregate, sum),
                1e-9 * Value(view->aggregate, sum))
        << sum;
  }
  for (std::string_view mean : {kNcuSmThroughputPct, kNcuDramThroughputPct,
                                kNcuAchievedOccupancyPct, kNcuRegistersPerThread}) {
    EXPECT_NEAR(Value(view->aggregate, mean), Value(three->aggregate, mean), 1e-9) << mean;
  }
  EXPECT_EQ(view->aggregate.name, "aggregate (10002 kernels)");
  ASSERT_FALSE(view->notes.empty());
  EXPECT_EQ(view->notes[0],
            "every counter kept for the 100 longest of 10002 kernels; the others keep their name "
            "and duration, and the aggregate covers them all");
  // The rest: the ratios ncu did not print, derived from its sums (derived_metrics.h).
  for (std::size_t i = 1; i < view->notes.size(); ++i) {
    EXPECT_EQ(view->notes[i].rfind("derived ", 0), 0u) << view->notes[i];
  }
}

TEST(NcuCsvTest, SelectingWhileReadingKeepsWhatSelectingAfterwardsKeeps) {
  for (bool calls_libraries : {false, true}) {
    for (const std::vector<std::string>& entries :
         {std::vector<std::string>{"_Z9my_kernelPf"}, std::vector<std::string>{}}) {
      const std::string text = Fixture("p_cublas_bf16");
      Result<NcuView> after = ParseNcuCsv(text);
      ASSERT_TRUE(after.ok());
      std::vector<std::string> notes;
      SelectCandidateKernels(*after, entries, calls_libraries, notes);
      NcuReadOptions options;
      options.select_candidate_kernels = true;
      options.entry_points = entries;
      options.calls_libraries = calls_libraries;
      options.max_detailed_kernels = 1;
      Result<NcuView> during = ParseNcuCsv(text, options);
      ASSERT_TRUE(during.ok());
      ASSERT_EQ(during->kernels.size(), after->kernels.size());
      for (std::size_t i = 0; i < after->kernels.size(); ++i) {
        EXPECT_EQ(during->kernels[i].id, after->kernels[i].id);
      }
      EXPECT_EQ(during->aggregate.values, after->aggregate.values);
      ASSERT_FALSE(during->notes.empty());
      EXPECT_EQ("ncu: " + during->notes[0], notes.at(0));
    }
  }
}

TEST(NcuCsvTest, RepeatedWarningsAreKeptOnce) {
  std::string text = Fixture("k_swish_vec");
  const std::string warning =
      "==WARNING== Backing up device memory in system memory. Kernel replay might be slow.";
  text = warning + "\n" + warning + "\n" + text + warning + "\n";
  Result<NcuView> view = ParseNcuCsv(text);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->warnings, std::vector<std::string>{warning});
}

TEST(NcuCsvTest, TruncatedLastRowIsSkippedWithAWarning) {
  std::string text = Fixture("p_many_launches");
  std::size_t last_row = text.rfind('\n', text.size() - 2) + 1;
  ASSERT_EQ(text.substr(last_row, 4), "\"2\",");
  Result<NcuView> view = ParseNcuCsv(text.substr(0, last_row + 2000));
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->kernels.size(), 2u);
  ASSERT_EQ(view->warnings.size(), 1u);
  EXPECT_NE(view->warnings[0].find("truncated"), std::string::npos) << view->warnings[0];
  EXPECT_EQ(view->aggregate.name, "aggregate (2 kernels)");
}

TEST(NcuCsvTest, ParsesNumbersTheWayNcuPrintsThem) {
  EXPECT_EQ(ParseNcuNumber("1,234,567"), 1234567.0);
  EXPECT_EQ(ParseNcuNumber("3,199,458,092.03"), 3199458092.03);
  EXPECT_EQ(ParseNcuNumber(" 42 "), 42.0);
  EXPECT_EQ(ParseNcuNumber("-1.5e3"), -1500.0);
  EXPECT_EQ(ParseNcuNumber("+3"), 3.0);
  EXPECT_EQ(ParseNcuNumber("0"), 0.0);
  EXPECT_EQ(ParseNcuNumber("n/a"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber(""), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("PolicySpread"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("(16, 16, 1)"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("1.2.3"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("0x10"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("inf"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("nan"), std::nullopt);
  EXPECT_EQ(ParseNcuNumber("1e999"), std::nullopt);
}

// ---- Failures ----------------------------------------------------------------------------------

TEST(NcuCsvTest, NoKernelsProfiledIsNotFoundWithAHint) {
  for (std::string line :
       {"==PROF== No kernels were profiled.", "==WARNING== No kernels were profiled."}) {
    Result<NcuView> view = ParseNcuCsv(
        "==PROF== Connected to process 9 (/usr/bin/python3)\n"
        "==PROF== Disconnected from process 9\n" +
        line + "\n");
    ASSERT_FALSE(view.ok());
    EXPECT_EQ(view.status().code(), Status::Code::kNotFound);
    const std::string& message = view.status().message();
    EXPECT_EQ(message.rfind("ncu profiled no kernels: ", 0), 0u) << message;
    EXPECT_NE(message.find(line), std::string::npos) << message;
    EXPECT_NE(message.find("(hint: the kernel filter matched nothing"), std::string::npos)
        << message;
  }
}

TEST(NcuCsvTest, CounterPermissionErrorIsUnavailableAndSaysHowToFixIt) {
  Result<NcuView> view = ParseNcuCsv(
      "==PROF== Connected to process 9 (/usr/bin/python3)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters on the target device 0. For instructions on enabling permissions and "
      "to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
      "==PROF== Disconnected from process 9\n"
      "==WARNING== No kernels were profiled.\n");
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), Status::Code::kUnavailable);
  const std::string& message = view.status().message();
  EXPECT_NE(message.find("permission"), std::string::npos) << message;
  EXPECT_NE(message.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << message;
  EXPECT_NE(message.find("root"), std::string::npos) << message;
  EXPECT_NE(message.find("continues without ncu metrics"), std::string::npos) << message;

  // The permission text alone, without the code, is recognised too.
  Result<NcuView> text_only =
      ParseNcuCsv("The user does not have permission to access NVIDIA GPU Performance Counters\n");
  EXPECT_EQ(text_only.status().code(), Status::Code::kUnavailable);
}

TEST(NcuCsvTest, EmptyOrForeignTextIsInvalidArgument) {
  for (std::string text : {std::string(""), std::string(" \n\r\n"), std::string("hello world\n"),
                           std::string("{\"kernels\": []}"), std::string("\x00\xff\xfe\x01", 4),
                           std::string("\"ID\",\"Kernel Name\"\n\"\",\"\"\nprinted later\n")}) {
    Result<NcuView> view = ParseNcuCsv(text);
    ASSERT_FALSE(view.ok()) << text;
    EXPECT_EQ(view.status().code(), Status::Code::kInvalidArgument) << text;
  }
  EXPECT_EQ(ParseNcuCsv("").status().message(), "ncu output is empty");
  Result<NcuView> header_only = ParseNcuCsv("\"ID\",\"Kernel Name\"\n\"\",\"\"\n");
  EXPECT_NE(header_only.status().message().find("no complete kernel row"), std::string::npos);
  // ncu's own error is passed on.
  Result<NcuView> unknown_metric = ParseNcuCsv(
      "==PROF== Connected to process 1\n==ERROR== Failed to find metric sm__not_a_metric.sum\n");
  EXPECT_EQ(unknown_metric.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unknown_metric.status().message().find("Failed to find metric sm__not_a_metric.sum"),
            std::string::npos)
      << unknown_metric.status().message();
}

// ---- Robustness --------------------------------------------------------------------------------

// Whatever the input, a result is either an error or a usable view.
void ExpectUsable(const Result<NcuView>& view) {
  if (!view.ok()) {
    const std::string& message = view.status().message();
    EXPECT_FALSE(message.empty());
    // Messages go to terminals and JSON: no control bytes, no broken UTF-8 from the input.
    for (char c : message) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << message;
    return;
  }
  ASSERT_FALSE(view->kernels.empty());
  for (const NcuKernel& kernel : view->kernels) {
    EXPECT_GE(kernel.id, 0);
    for (const auto& [name, value] : kernel.values) ASSERT_TRUE(std::isfinite(value)) << name;
  }
  EXPECT_EQ(view->aggregate.name.rfind("aggregate (", 0), 0u);
}

TEST(NcuCsvRobustnessTest, EveryTruncationOfEveryFixture) {
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    std::string text = Fixture(fixture);
    ASSERT_FALSE(text.empty());
    std::vector<std::size_t> cuts;
    for (std::size_t cut = 0; cut <= text.size(); cut += 37) cuts.push_back(cut);
    // Every byte around each line break: where a header, units row or kernel row ends.
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\n') continue;
      for (std::size_t d = 0; d < 24; ++d) {
        if (i >= d) cuts.push_back(i - d);
        if (i + d <= text.size()) cuts.push_back(i + d);
      }
    }
    cuts.push_back(text.size());
    for (std::size_t cut : cuts) {
      Result<NcuView> view = ParseNcuCsv(std::string_view(text).substr(0, cut));
      ExpectUsable(view);
      if (view.ok()) {
        EXPECT_LE(view->kernels.size(), 3u);
      }
    }
    // Cutting inside the header, or before it, can never give kernels.
    std::size_t header = text.find("\"ID\"");
    EXPECT_FALSE(ParseNcuCsv(std::string_view(text).substr(0, header + 100)).ok());
  }
}

TEST(NcuCsvRobustnessTest, SeededRandomMutationsOfEveryFixture) {
  const std::string kNasty =
      "\",\n\r=\\ \x00\xff"
      "0123456789.,n/a";
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    const std::string original = Fixture(fixture);
    std::mt19937 rng(20240601u + static_cast<unsigned>(fixture.size()));
    for (int round = 0; round < 2000; ++round) {
      std::string text = original;
      int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        std::size_t at = rng() % text.size();
        switch (rng() % 5) {
          case 0:
            text[at] = static_cast<char>(rng() % 256);
            break;
          case 1:
            text[at] = kNasty[rng() % kNasty.size()];
            break;
          case 2:
            text.insert(at, 1, kNasty[rng() % kNasty.size()]);
            break;
          case 3:
            text.erase(at, std::min<std::size_t>(text.size() - at, 1 + rng() % 64));
            break;
          case 4: {
            std::size_t length = std::min<std::size_t>(text.size() - at, 1 + rng() % 256);
            text.insert(rng() % text.size(), text.substr(at, length));
            break;
          }
        }
      }
      ExpectUsable(ParseNcuCsv(text));
    }
  }
}

TEST(NcuCsvRobustnessTest, CorpusOfNastyInputs) {
  // File names say what must happen: ok_* parse into at least one kernel, err_* fail cleanly.
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kCorpus)) {
    std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    Result<NcuView> view = ParseNcuCsv(ReadText(entry.path().string()));
    ExpectUsable(view);
    if (name.rfind("ok_", 0) == 0) {
      EXPECT_TRUE(view.ok()) << view.status().ToString();
    } else {
      ASSERT_EQ(name.rfind("err_", 0), 0u) << "corpus files are named ok_* or err_*";
      EXPECT_FALSE(view.ok());
    }
    ++files;
  }
  EXPECT_GE(files, 20);
}

TEST(NcuCsvRobustnessTest, CorpusDetails) {
  auto parse = [](const std::string& name) { return ParseNcuCsv(ReadText(kCorpus + "/" + name)); };

  Result<NcuView> crlf = parse("ok_crlf.csv");
  ASSERT_TRUE(crlf.ok());
  ASSERT_EQ(crlf->kernels.size(), 2u);
  EXPECT_EQ(crlf->kernels[1].grid_size, "(4, 1, 1)");
  EXPECT_DOUBLE_EQ(Value(crlf->kernels[1], kNcuSmThroughputPct), 50.5);

  Result<NcuView> weird = parse("ok_weird_numbers.csv");
  ASSERT_TRUE(weird.ok());
  ASSERT_EQ(weird->kernels.size(), 3u);
  EXPECT_EQ(weird->kernels[0].values.size(), 0u);  // 1e999, 0x10, nan
  EXPECT_DOUBLE_EQ(weird->kernels[1].duration_ns(), 7);
  EXPECT_DOUBLE_EQ(Value(weird->kernels[1], kNcuDramBytesRead), 3);
  // -5 % and 123 % ("1,2,3") cannot be measurements: dropped, and said so.
  EXPECT_EQ(weird->kernels[1].values.count(std::string(kNcuSmThroughputPct)), 0u);
  EXPECT_EQ(weird->kernels[2].values.count(std::string(kNcuSmThroughputPct)), 0u);
  EXPECT_EQ(weird->aggregate.values.count(std::string(kNcuSmThroughputPct)), 0u);
  EXPECT_EQ(weird->notes,
            (std::vector<std::string>{
                "dropped dram__bytes_read.sum = inf byte (not a finite number) in kernel 2 (k)",
                "dropped gpu__time_duration.sum = inf ns (not a finite number) in kernel 0 (k)",
                "dropped sm__throughput.avg.pct_of_peak_sustained_elapsed = nan % (not a finite "
                "number) in kernel 0 (k) and 2 other kernel(s)"}));

  Result<NcuView> names = parse("ok_quotes_and_newlines_in_names.csv");
  ASSERT_TRUE(names.ok());
  ASSERT_EQ(names->kernels.size(), 2u);
  EXPECT_EQ(names->kernels[0].name, "say \"hi\", twice");
  EXPECT_EQ(names->kernels[1].name, "line one\nline two, \"quoted\"");

  Result<NcuView> no_units = parse("ok_no_units_row.csv");
  ASSERT_TRUE(no_units.ok());
  EXPECT_EQ(no_units->kernels.size(), 2u);
  EXPECT_EQ(no_units->kernels[0].units.at(std::string(kNcuDuration)), "");

  Result<NcuView> messages = parse("ok_messages_between_rows.csv");
  ASSERT_TRUE(messages.ok());
  EXPECT_EQ(messages->kernels.size(), 2u);
  EXPECT_EQ(
      messages->warnings,
      (std::vector<std::string>{"==ERROR== Failed to profile kernel \"x\"", "==WARNING== end"}));

  Result<NcuView> truncated = parse("ok_truncated_last_row.csv");
  ASSERT_TRUE(truncated.ok());
  EXPECT_EQ(truncated->kernels.size(), 1u);
  EXPECT_EQ(truncated->warnings.size(), 1u);
}

}  // namespace profile_ncu_csv_test
}  // namespace kernelpro::profile
