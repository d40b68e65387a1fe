#include "profile/timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/json_io.h"

#ifdef KERNELPRO_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace kernelpro::profile {
namespace profile_timeline_test {

namespace fs = std::filesystem;

// Kineto writes microseconds with three decimals, i.e. to the nanosecond; a double near 5e12 us
// holds that to about half a nanosecond, so durations and averages agree with the exact decimal
// arithmetic of tests/fixtures/timeline/expected_summary.py to within 2 ns.
constexpr double kTimeTolerance = 0.002;
constexpr double kShareTolerance = 1e-6;

std::string SourcePath(const std::string& relative) {
  return std::string(KERNELPRO_SOURCE_DIR) + "/" + relative;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::string kSwishTrace = "tests/fixtures/h200/k_swish_scalar.trace.json";
const std::string kManyLaunchesTrace = "tests/fixtures/h200/p_many_launches.trace.json";
const std::string kCopiesTrace = "tests/fixtures/timeline/copies_syncs_gaps.trace.json";

// What must hold for any summary the parsers return, however odd the input.
void ExpectConsistent(const Result<TimelineSummary>& result, const std::string& input) {
  if (!result.ok()) {
    EXPECT_FALSE(result.status().message().empty()) << input;
    return;
  }
  const TimelineSummary& s = *result;
  EXPECT_TRUE(std::isfinite(s.end_to_end_us)) << input;
  EXPECT_GE(s.end_to_end_us, 0) << input;
  EXPECT_GE(s.gpu_busy_us, 0) << input;
  EXPECT_LE(s.gpu_busy_us, s.end_to_end_us * (1 + 1e-12) + 1e-9) << input;
  EXPECT_GE(s.launch_overhead_share, 0) << input;
  EXPECT_LE(s.launch_overhead_share, 1) << input;
  EXPECT_GE(s.kernel_count, 0) << input;
  EXPECT_GE(s.sync_calls, 0) << input;
  EXPECT_TRUE(std::isfinite(s.sync_time_us)) << input;
  EXPECT_TRUE(std::isfinite(s.avg_launch_latency_us)) << input;
  EXPECT_GE(s.gap_threshold_us, 5) << input;
  for (const IdleGap& gap : s.gaps) {
    EXPECT_GE(gap.start_us, 0) << input;
    EXPECT_GT(gap.duration_us, s.gap_threshold_us) << input;
    EXPECT_LE(gap.start_us + gap.duration_us, s.end_to_end_us * (1 + 1e-12) + 1e-9) << input;
  }
  for (const MemcpySummary& row : s.memcpy) {
    EXPECT_GT(row.count, 0) << input;
    EXPECT_GE(row.bytes, 0) << input;
    EXPECT_GE(row.time_us, 0) << input;
    EXPECT_TRUE(std::isfinite(row.time_us)) << input;
  }
}

const MemcpySummary* FindCopies(const TimelineSummary& summary, const std::string& direction) {
  for (const MemcpySummary& row : summary.memcpy) {
    if (row.direction == direction) return &row;
  }
  return nullptr;
}

// ---- The recorded H200 traces -------------------------------------------------------------------
// Expected numbers: python3 tests/fixtures/timeline/expected_summary.py (exact decimal arithmetic,
// written independently of timeline.cc).

TEST(TorchProfilerTraceTest, SwishScalarRunIsGpuBound) {
  Result<TimelineSummary> summary = ParseTorchProfilerTraceFile(SourcePath(kSwishTrace));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->source, "torch_profiler");
  // torch.randn's normal_ kernel, then three swish_scalar calls over 2^26 floats.
  EXPECT_EQ(summary->kernel_count, 4);
  // From the first API call (cudaStreamIsCapturing inside randn) to the end of the last swish.
  EXPECT_NEAR(summary->end_to_end_us, 972.685, kTimeTolerance);
  EXPECT_NEAR(summary->gpu_busy_us, 883.636, kTimeTolerance);
  EXPECT_NEAR(summary->launch_overhead_share, 1 - 883.636 / 972.685, kShareTolerance);
  EXPECT_LT(summary->launch_overhead_share, 0.1);
  // (47.157 + 26.824 + 25.693 + 239.124) / 4: the third swish waits behind the second.
  EXPECT_NEAR(summary->avg_launch_latency_us, 84.6995, kTimeTolerance);
  // torch.cuda.synchronize() in the case, and one more from the profiler's exit.
  EXPECT_EQ(summary->sync_calls, 2);
  EXPECT_NEAR(summary->sync_time_us, 414.530 + 2.268, kTimeTolerance);
  EXPECT_TRUE(summary->memcpy.empty());
  EXPECT_NEAR(summary->gap_threshold_us, 9.72685, 1e-4);
  // The only long idle stretch is the first launch (allocator and launch set-up on the host).
  ASSERT_EQ(summary->gaps.size(), 1u);
  EXPECT_NEAR(summary->gaps[0].start_us, 0, kTimeTolerance);
  EXPECT_NEAR(summary->gaps[0].duration_us, 86.234, kTimeTolerance);
}

TEST(TorchProfilerTraceTest, ManyTinyLaunchesShowHighLaunchOverhead) {
  Result<TimelineSummary> summary = ParseTorchProfilerTraceFile(SourcePath(kManyLaunchesTrace));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  // Each forward runs `x * 1.0001 + 0.0001` 200 times, a mul and an add kernel each: 400
  // kernels, three forwards, plus randn's kernel.
  EXPECT_EQ(summary->kernel_count, 3 * 200 * 2 + 1);
  EXPECT_NEAR(summary->end_to_end_us, 14768.900, kTimeTolerance);
  EXPECT_NEAR(summary->gpu_busy_us, 1030.419, kTimeTolerance);
  // The GPU idles 93 % of the window: the launch-overhead tool must flag this case.
  EXPECT_NEAR(summary->launch_overhead_share, 1 - 1030.419 / 14768.900, kShareTolerance);
  EXPECT_GT(summary->launch_overhead_share, 0.9);
  EXPECT_NEAR(summary->avg_launch_latency_us, 8172.407 / 1201, kTimeTolerance);
  EXPECT_EQ(summary->sync_calls, 2);
  EXPECT_NEAR(summary->sync_time_us, 19.467 + 1.766, kTimeTolerance);
  EXPECT_TRUE(summary->memcpy.empty());
  EXPECT_NEAR(summary->gap_threshold_us, 147.689, 1e-4);
  // The idle time is spread over 1200 short holes (the longest 135.7 us), none above 1 %.
  EXPECT_TRUE(summary->gaps.empty());
}

// ---- Synthetic traces
// ----------------------------------------------------------------------------

// copies_syncs_gaps.trace.json, worked out by hand (see tests/fixtures/timeline/README.md):
//   window   1000 (first cudaMemcpyAsync) .. 1510 (end of the HtoH copy) = 510 us
//   busy     [1010,1210] HtoD copy, kernels a and b on two streams, memset, all touching: 200
//            [1310,1410] kernel c 100, [1430,1450] DtoH 20, [1456,1460] DtoD 4,
//            [1462,1466] PtoP on GPU 1 4, [1480,1500] kernel d on GPU 1 20, [1505,1510] HtoH 5
//            = 353 us; idle 157 us
//   gaps     threshold max(5.1, 5) = 5.1: 10 at 0, 100 at 210, 20 at 410, 6 at 450, 14 at 466;
//            not the 2 us and 5 us holes
TEST(TorchProfilerTraceTest, CopiesSyncsAndGapsInASyntheticTrace) {
  Result<TimelineSummary> summary = ParseTorchProfilerTraceFile(SourcePath(kCopiesTrace));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->kernel_count, 4);
  EXPECT_DOUBLE_EQ(summary->end_to_end_us, 510);
  EXPECT_DOUBLE_EQ(summary->gpu_busy_us, 353);
  EXPECT_DOUBLE_EQ(summary->launch_overhead_share, 157.0 / 510);
  // Kernels a..d start 18, 80, 10 and 10 us after their cudaLaunchKernel.
  EXPECT_DOUBLE_EQ(summary->avg_launch_latency_us, 29.5);
  // cudaEventSynchronize 170, the blocking cudaMemcpy 40, cudaStreamSynchronize 6 and the final
  // cudaDeviceSynchronize 1 after the window; not cudaStreamWaitEvent or the Async copies.
  EXPECT_EQ(summary->sync_calls, 4);
  EXPECT_DOUBLE_EQ(summary->sync_time_us, 217);

  ASSERT_EQ(summary->memcpy.size(), 5u);
  const std::vector<std::string> order = {"HtoD", "DtoH", "DtoD", "HtoH", "memset"};
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(summary->memcpy[i].direction, order[i]);
  const MemcpySummary* dtod = FindCopies(*summary, "DtoD");  // a DtoD copy and a peer copy
  ASSERT_NE(dtod, nullptr);
  EXPECT_EQ(dtod->count, 2);
  EXPECT_EQ(dtod->bytes, 2048 + 512);
  EXPECT_DOUBLE_EQ(dtod->time_us, 8);
  EXPECT_EQ(FindCopies(*summary, "HtoD")->bytes, 4096);
  EXPECT_DOUBLE_EQ(FindCopies(*summary, "HtoD")->time_us, 20);
  EXPECT_EQ(FindCopies(*summary, "DtoH")->bytes, 8192);
  EXPECT_EQ(FindCopies(*summary, "HtoH")->bytes, 100);
  EXPECT_EQ(FindCopies(*summary, "memset")->count, 1);
  EXPECT_EQ(FindCopies(*summary, "memset")->bytes, 1024);
  EXPECT_DOUBLE_EQ(FindCopies(*summary, "memset")->time_us, 10);

  EXPECT_DOUBLE_EQ(summary->gap_threshold_us, 5.1);
  ASSERT_EQ(summary->gaps.size(), 5u);
  const double expected[][2] = {{0, 10}, {210, 100}, {410, 20}, {450, 6}, {466, 14}};
  for (size_t i = 0; i < summary->gaps.size(); ++i) {
    EXPECT_DOUBLE_EQ(summary->gaps[i].start_us, expected[i][0]) << "gap " << i;
    EXPECT_DOUBLE_EQ(summary->gaps[i].duration_us, expected[i][1]) << "gap " << i;
  }
}

// Builds small Chrome traces in the profiler's format.
class TraceBuilder {
 public:
  TraceBuilder& Call(const std::string& name, double ts, double dur, int correlation) {
    events_.push_back({{"ph", "X"},
                       {"cat", "cuda_runtime"},
                       {"name", name},
                       {"ts", ts},
                       {"dur", dur},
                       {"args", {{"correlation", correlation}}}});
    return *this;
  }
  TraceBuilder& Kernel(double ts, double dur, int correlation) {
    events_.push_back({{"ph", "X"},
                       {"cat", "kernel"},
                       {"name", "k"},
                       {"ts", ts},
                       {"dur", dur},
                       {"args", {{"correlation", correlation}}}});
    return *this;
  }
  TraceBuilder& Annotation(const std::string& name, double ts, double dur) {
    events_.push_back(
        {{"ph", "X"}, {"cat", "user_annotation"}, {"name", name}, {"ts", ts}, {"dur", dur}});
    return *this;
  }
  std::string Text() const { return Json{{"traceEvents", events_}}.dump(); }

 private:
  Json events_ = Json::array();
};

TEST(TorchProfilerTraceTest, GapThresholdNeverDropsBelowFiveMicroseconds) {
  // A 100 us window: 1 % would be 1 us, but holes of 5 us and less are scheduling noise.
  const std::string trace = TraceBuilder()
                                .Call("cudaLaunchKernel", 0, 2, 1)
                                .Kernel(10, 40, 1)  // 10 us after the window starts
                                .Kernel(55, 5, 2)   // 5 us hole: not a gap
                                .Kernel(66, 34, 3)  // 6 us hole: a gap
                                .Text();
  Result<TimelineSummary> summary = ParseTorchProfilerTrace(trace);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_DOUBLE_EQ(summary->end_to_end_us, 100);
  EXPECT_DOUBLE_EQ(summary->gap_threshold_us, 5);
  ASSERT_EQ(summary->gaps.size(), 2u);
  EXPECT_DOUBLE_EQ(summary->gaps[0].start_us, 0);
  EXPECT_DOUBLE_EQ(summary->gaps[0].duration_us, 10);
  EXPECT_DOUBLE_EQ(summary->gaps[1].start_us, 60);
  EXPECT_DOUBLE_EQ(summary->gaps[1].duration_us, 6);
}

TEST(TorchProfilerTraceTest, LatencyAveragesOnlyKernelsWithALaunchCall) {
  // Kernel 2's launch call is missing (a trace cut at the start); it must not count as 0 us.
  const std::string trace = TraceBuilder()
                                .Call("cudaLaunchKernel", 100, 2, 1)
                                .Kernel(112, 10, 1)
                                .Kernel(130, 10, 2)
                                .Text();
  Result<TimelineSummary> summary = ParseTorchProfilerTrace(trace);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->kernel_count, 2);
  EXPECT_DOUBLE_EQ(summary->avg_launch_latency_us, 12);
}

TEST(TorchProfilerTraceTest, WithoutApiCallsTheWindowStartsAtTheFirstGpuActivity) {
  const std::string trace = TraceBuilder().Kernel(50, 10, 1).Kernel(80, 20, 2).Text();
  Result<TimelineSummary> summary = ParseTorchProfilerTrace(trace);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_DOUBLE_EQ(summary->end_to_end_us, 50);
  EXPECT_DOUBLE_EQ(summary->gpu_busy_us, 30);
  EXPECT_DOUBLE_EQ(summary->avg_launch_latency_us, 0);
  ASSERT_EQ(summary->gaps.size(), 1u);
  EXPECT_DOUBLE_EQ(summary->gaps[0].start_us, 10);
}

TEST(TorchProfilerTraceTest, TheKernelproRangeKeepsTheProfilersOwnSyncsOut) {
  // As the worker records it: the profiler synchronises when its step starts (0) and ends (300);
  // the forward call runs inside the "kernelpro" range (100-200) and launches one kernel. A
  // kernel launched outside the range (warm-up) does not count either.
  const std::string trace = TraceBuilder()
                                .Call("cudaDeviceSynchronize", 0, 5, 1)
                                .Call("cudaLaunchKernel", 20, 5, 2)
                                .Kernel(30, 10, 2)
                                .Annotation("kernelpro", 100, 100)
                                .Annotation("ProfilerStep#1", 0, 310)
                                .Call("cudaLaunchKernel", 110, 5, 3)
                                .Kernel(120, 40, 3)
                                .Call("cudaDeviceSynchronize", 116, 45, 4)
                                .Call("cudaDeviceSynchronize", 300, 5, 5)
                                .Text();
  Result<TimelineSummary> summary = ParseTorchProfilerTrace(trace);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->kernel_count, 1);
  EXPECT_EQ(summary->sync_calls, 1);
  EXPECT_DOUBLE_EQ(summary->sync_time_us, 45);
  EXPECT_DOUBLE_EQ(summary->end_to_end_us, 50);  // launch call at 110 to kernel end at 160
  EXPECT_DOUBLE_EQ(summary->gpu_busy_us, 40);
  EXPECT_DOUBLE_EQ(summary->avg_launch_latency_us, 10);
  // Without the range, the whole trace counts.
  const std::string plain = TraceBuilder()
                                .Call("cudaDeviceSynchronize", 0, 5, 1)
                                .Call("cudaLaunchKernel", 110, 5, 3)
                                .Kernel(120, 40, 3)
                                .Text();
  Result<TimelineSummary> whole = ParseTorchProfilerTrace(plain);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->sync_calls, 1);
  EXPECT_DOUBLE_EQ(whole->end_to_end_us, 160);
}

TEST(TorchProfilerTraceTest, OlderCategoryNamesAndUnknownCopyKinds) {
  Result<TimelineSummary> summary = ParseTorchProfilerTraceFile(
      SourcePath("tests/fixtures/corpus/timeline/ok_bare_event_array.trace.json"));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->kernel_count, 1);
  EXPECT_DOUBLE_EQ(summary->avg_launch_latency_us, 5);
  ASSERT_EQ(summary->memcpy.size(), 1u);
  EXPECT_EQ(summary->memcpy[0].direction, "other");
  EXPECT_EQ(summary->memcpy[0].count, 2);
  // Two copies of INT64_MAX bytes: the total saturates instead of wrapping negative.
  EXPECT_EQ(summary->memcpy[0].bytes, std::numeric_limits<std::int64_t>::max());
}

TEST(TorchProfilerTraceTest, CpuOnlyTraceSaysHowToRecordGpuActivity) {
  Result<TimelineSummary> summary = ParseTorchProfilerTraceFile(
      SourcePath("tests/fixtures/corpus/timeline/error_cpu_only.trace.json"));
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("no GPU activity"), std::string::npos);
  EXPECT_NE(summary.status().message().find("ProfilerActivity.CUDA"), std::string::npos);
}

TEST(TorchProfilerTraceTest, UnreadableInputsAreErrors) {
  EXPECT_EQ(ParseTorchProfilerTrace("").status().code(), Status::Code::kInvalidArgument);
  Result<TimelineSummary> not_json = ParseTorchProfilerTrace("{\"traceEvents\": [");
  EXPECT_NE(not_json.status().message().find("not valid JSON"), std::string::npos);
  Result<TimelineSummary> no_events = ParseTorchProfilerTrace("{\"schemaVersion\": 1}");
  EXPECT_NE(no_events.status().message().find("traceEvents"), std::string::npos);
  Result<TimelineSummary> missing = ParseTorchProfilerTraceFile("/nonexistent/trace.json");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

// ---- Robustness ---------------------------------------------------------------------------------

TEST(TorchProfilerRobustnessTest, TruncatedTracesAreReportedNotSummarised) {
  for (const std::string& relative : {kSwishTrace, kCopiesTrace, kManyLaunchesTrace}) {
    const std::string text = ReadFile(SourcePath(relative));
    ASSERT_FALSE(text.empty());
    // Every cut before the closing brace leaves invalid JSON: about 500 cuts through the small
    // traces, a few through the big one.
    const size_t end = text.rfind('}');
    const size_t step = text.size() > 100000 ? text.size() / 5 : text.size() / 500 + 1;
    for (size_t length = 0; length < end; length += step) {
      Result<TimelineSummary> summary = ParseTorchProfilerTrace(text.substr(0, length));
      EXPECT_FALSE(summary.ok()) << relative << " cut at " << length;
    }
    EXPECT_TRUE(ParseTorchProfilerTrace(text.substr(0, end + 1)).ok()) << relative;
  }
}

TEST(TorchProfilerRobustnessTest, RandomByteEditsNeverCrash) {
  const std::string original = ReadFile(SourcePath(kCopiesTrace));
  const std::string alphabet = "{}[]\":,.-+eE0123456789 \\nulltruefalseX\xff";
  std::mt19937 rng(20240601);
  for (int mutant = 0; mutant < 400; ++mutant) {
    std::string text = original;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(at, 1 + rng() % 16);
          break;
        default:
          text.insert(at, text.substr(rng() % text.size(), 1 + rng() % 32));
      }
    }
    ExpectConsistent(ParseTorchProfilerTrace(text), "byte mutant " + std::to_string(mutant));
  }
}

// Valid JSON with wrong types and extreme values in the fields the parser reads: the mutations
// byte edits rarely reach, because they mostly break the JSON itself.
TEST(TorchProfilerRobustnessTest, MistypedAndExtremeFieldsNeverCrash) {
  const std::vector<Json> odd_values = {Json(),
                                        Json("12.5"),
                                        Json(-1.0),
                                        Json(0),
                                        Json(1e308),
                                        Json(-1e308),
                                        Json(5e-324),
                                        Json(std::numeric_limits<std::uint64_t>::max()),
                                        Json(std::numeric_limits<std::int64_t>::min()),
                                        Json(0.5),
                                        Json(true),
                                        Json::array(),
                                        Json::object(),
                                        Json("Memcpy"),
                                        Json("kernel"),
                                        Json("cudaMemcpy"),
                                        Json("X")};
  const std::vector<std::string> fields = {"ph", "cat", "name", "ts", "dur", "args"};
  const std::vector<std::string> arg_fields = {"correlation", "bytes"};
  for (const std::string& relative : {kCopiesTrace, kSwishTrace}) {
    const Json original = Json::parse(ReadFile(SourcePath(relative)));
    std::mt19937 rng(7);
    for (int mutant = 0; mutant < 300; ++mutant) {
      Json trace = original;
      Json& events = trace["traceEvents"];
      const int edits = 1 + static_cast<int>(rng() % 6);
      for (int e = 0; e < edits; ++e) {
        Json& event = events[rng() % events.size()];
        if (!event.is_object()) continue;  // replaced by an earlier edit
        const Json& value = odd_values[rng() % odd_values.size()];
        if (rng() % 3 == 0 && event.contains("args") && event["args"].is_object()) {
          event["args"][arg_fields[rng() % arg_fields.size()]] = value;
        } else if (rng() % 10 == 0) {
          event = value;  // the event itself is not an object
        } else {
          event[fields[rng() % fields.size()]] = value;
        }
      }
      ExpectConsistent(ParseTorchProfilerTrace(trace.dump()),
                       relative + " value mutant " + std::to_string(mutant));
    }
  }
}

// Every file in tests/fixtures/corpus/timeline: error_* must fail, ok_* must be summarised, none
// may crash (see the README there).
TEST(TimelineCorpusTest, NastyInputs) {
  const fs::path corpus = SourcePath("tests/fixtures/corpus/timeline");
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(corpus)) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    ++files;
    Result<TimelineSummary> summary = ParseTorchProfilerTraceFile(entry.path().string());
    ExpectConsistent(summary, name);
    if (name.rfind("error_", 0) == 0) {
      EXPECT_FALSE(summary.ok()) << name;
      if (!summary.ok()) {
        EXPECT_EQ(summary.status().code(), Status::Code::kInvalidArgument) << name;
      }
    } else {
      EXPECT_EQ(name.rfind("ok_", 0), 0u) << name << ": name corpus files error_* or ok_*";
      EXPECT_TRUE(summary.ok()) << name << ": " << summary.status().ToString();
    }
  }
  EXPECT_GE(files, 10);
}

// ---- Nsight Systems SQLite exports

#ifdef KERNELPRO_HAVE_SQLITE
// ----------------------------------------------------------------

// A synthetic database with the tables and columns kernelpro reads from `nsys export --type
// sqlite`, plus a few it ignores, modelled on the nsys schema (there is no recorded nsys export in
// the fixtures). Removed when the test ends.
class NsysDatabase {
 public:
  explicit NsysDatabase(const std::string& name, bool create_tables = true)
      : path_((fs::path(::testing::TempDir()) / (name + ".sqlite")).string()) {
    fs::remove(path_);
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    if (create_tables) {
      Exec(
          "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
          " deviceId INTEGER, streamId INTEGER, correlationId INTEGER, shortName INTEGER);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
          " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,"
          " returnValue INTEGER);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
          " deviceId INTEGER, streamId INTEGER, correlationId INTEGER, bytes INTEGER,"
          " copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
          " deviceId INTEGER, streamId INTEGER, correlationId INTEGER, value INTEGER,"
          " bytes INTEGER, memKind INTEGER);");
    }
    Exec("BEGIN");
  }
  ~NsysDatabase() {
    Close();
    fs::remove(path_);
  }

  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }
  void Kernel(std::int64_t start, std::int64_t end, std::int64_t correlation) {
    Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" +
         List({start, end, 0, 7, correlation, 0}) + ")");
  }
  void Call(const std::string& name, std::int64_t start, std::int64_t end,
            std::int64_t correlation) {
    auto [it, inserted] = name_ids_.emplace(name, static_cast<std::int64_t>(name_ids_.size()) + 1);
    if (inserted) {
      Exec("INSERT INTO StringIds VALUES (" + std::to_string(it->second) + ", '" + name + "')");
    }
    Exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" +
         List({start, end, 0, 1, correlation, it->second, 0}) + ")");
  }
  void Memcpy(std::int64_t start, std::int64_t end, std::int64_t correlation, std::int64_t bytes,
              int copy_kind) {
    Exec("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" +
         List({start, end, 0, 7, correlation, bytes, copy_kind, 1, 2}) + ")");
  }
  void Memset(std::int64_t start, std::int64_t end, std::int64_t correlation, std::int64_t bytes) {
    Exec("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (" +
         List({start, end, 0, 7, correlation, 0, bytes, 2}) + ")");
  }
  // Commits and closes, so that the parser reads the finished file.
  const std::string& Finish() {
    Exec("COMMIT");
    Close();
    return path_;
  }

 private:
  static std::string List(std::initializer_list<std::int64_t> values) {
    std::string list;
    for (std::int64_t value : values) list += (list.empty() ? "" : ", ") + std::to_string(value);
    return list;
  }
  void Close() {
    if (db_ != nullptr) sqlite3_close(db_);
    db_ = nullptr;
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::map<std::string, std::int64_t> name_ids_;
};

// Writes the events of a Chrome trace into `db` the way nsys would record the same run: integer
// nanoseconds, API names with nsys's version suffix, copy kinds as CUpti_ActivityMemcpyKind.
void CopyChromeTraceInto(const Json& trace, NsysDatabase* db) {
  const std::map<std::string, int> copy_kinds = {
      {"HtoD", 1}, {"DtoH", 2}, {"DtoD", 8}, {"HtoH", 9}, {"PtoP", 10}};
  for (const Json& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X") continue;
    const std::string cat = event.value("cat", "");
    const std::string name = event.value("name", "");
    const std::int64_t start = std::llround(event["ts"].get<double>() * 1000);
    const std::int64_t end = start + std::llround(event["dur"].get<double>() * 1000);
    const Json args = event.value("args", Json::object());
    const std::int64_t correlation = args.value("correlation", -1);
    const std::int64_t bytes = args.value("bytes", 0);
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      db->Call(name + "_v3020", start, end, correlation);
    } else if (cat == "kernel") {
      db->Kernel(start, end, correlation);
    } else if (cat == "gpu_memcpy") {
      db->Memcpy(start, end, correlation, bytes, copy_kinds.at(name.substr(7, 4)));
    } else if (cat == "gpu_memset") {
      db->Memset(start, end, correlation, bytes);
    }
  }
}

void ExpectSameSummary(const TimelineSummary& a, const TimelineSummary& b) {
  EXPECT_EQ(a.kernel_count, b.kernel_count);
  EXPECT_NEAR(a.end_to_end_us, b.end_to_end_us, kTimeTolerance);
  EXPECT_NEAR(a.gpu_busy_us, b.gpu_busy_us, kTimeTolerance);
  EXPECT_NEAR(a.launch_overhead_share, b.launch_overhead_share, kShareTolerance);
  EXPECT_NEAR(a.avg_launch_latency_us, b.avg_launch_latency_us, kTimeTolerance);
  EXPECT_EQ(a.sync_calls, b.sync_calls);
  EXPECT_NEAR(a.sync_time_us, b.sync_time_us, kTimeTolerance);
  ASSERT_EQ(a.memcpy.size(), b.memcpy.size());
  for (size_t i = 0; i < a.memcpy.size(); ++i) {
    EXPECT_EQ(a.memcpy[i].direction, b.memcpy[i].direction);
    EXPECT_EQ(a.memcpy[i].count, b.memcpy[i].count);
    EXPECT_EQ(a.memcpy[i].bytes, b.memcpy[i].bytes);
    EXPECT_NEAR(a.memcpy[i].time_us, b.memcpy[i].time_us, kTimeTolerance);
  }
  EXPECT_NEAR(a.gap_threshold_us, b.gap_threshold_us, kTimeTolerance);
  ASSERT_EQ(a.gaps.size(), b.gaps.size());
  for (size_t i = 0; i < a.gaps.size(); ++i) {
    EXPECT_NEAR(a.gaps[i].start_us, b.gaps[i].start_us, kTimeTolerance);
    EXPECT_NEAR(a.gaps[i].duration_us, b.gaps[i].duration_us, kTimeTolerance);
  }
}

TEST(NsysSqliteTest, SameRunGivesTheSameSummaryAsTheTorchTrace) {
  for (const std::string& relative : {kSwishTrace, kManyLaunchesTrace, kCopiesTrace}) {
    SCOPED_TRACE(relative);
    const std::string text = ReadFile(SourcePath(relative));
    Result<TimelineSummary> from_torch = ParseTorchProfilerTrace(text);
    ASSERT_TRUE(from_torch.ok()) << from_torch.status().ToString();
    NsysDatabase db(fs::path(relative).stem().stem().string());
    CopyChromeTraceInto(Json::parse(text), &db);
    Result<TimelineSummary> from_nsys = ParseNsysSqlite(db.Finish());
    ASSERT_TRUE(from_nsys.ok()) << from_nsys.status().ToString();
    EXPECT_EQ(from_nsys->source, "nsys");
    ExpectSameSummary(*from_torch, *from_nsys);
  }
}

TEST(NsysSqliteTest, AbsoluteNanosecondClocksKeepNanosecondResolution) {
  // Some nsys exports store times since the epoch (~1.7e18 ns), beyond what a double holds exactly.
  const std::int64_t t0 = 1'700'000'000'123'456'789;
  NsysDatabase db("absolute_clock");
  db.Call("cudaLaunchKernel_v7000", t0, t0 + 3'001, 1);
  db.Kernel(t0 + 5'003, t0 + 6'004, 1);
  db.Call("cudaStreamSynchronize_ptsz_v7000", t0 + 3'500, t0 + 6'500, 2);
  Result<TimelineSummary> summary = ParseNsysSqlite(db.Finish());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_NEAR(summary->end_to_end_us, 6.004, 1e-9);
  EXPECT_NEAR(summary->gpu_busy_us, 1.001, 1e-9);
  EXPECT_NEAR(summary->avg_launch_latency_us, 5.003, 1e-9);
  EXPECT_EQ(summary->sync_calls, 1);
  EXPECT_NEAR(summary->sync_time_us, 3.0, 1e-9);
}

TEST(NsysSqliteTest, MissingTablesOfUnusedActivityKindsAreFine) {
  // nsys only writes the tables of activity kinds that occurred: no copies, no StringIds here.
  NsysDatabase db("kernels_only", /*create_tables=*/false);
  db.Exec(
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,"
      " correlationId INTEGER)");
  db.Exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 3000, 1), (NULL, 5000, 2),"
      " (9000, 4000, 3), (4000, 6000, NULL)");
  Result<TimelineSummary> summary = ParseNsysSqlite(db.Finish());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  // Rows with a NULL time or an end before their start are skipped.
  EXPECT_EQ(summary->kernel_count, 2);
  EXPECT_DOUBLE_EQ(summary->end_to_end_us, 5);
  EXPECT_DOUBLE_EQ(summary->gpu_busy_us, 4);
  EXPECT_EQ(summary->sync_calls, 0);
  EXPECT_TRUE(summary->memcpy.empty());
}

TEST(NsysSqliteTest, ExportWithoutGpuActivitySaysHowToRecordIt) {
  NsysDatabase db("api_calls_only");
  db.Call("cudaGetDeviceCount_v3020", 0, 100, 1);
  Result<TimelineSummary> summary = ParseNsysSqlite(db.Finish());
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("--trace=cuda"), std::string::npos);
}

TEST(NsysSqliteTest, UnreadableFilesAreErrors) {
  EXPECT_EQ(ParseNsysSqlite("/nonexistent/report.sqlite").status().code(), Status::Code::kNotFound);

  const std::string not_a_db = (fs::path(::testing::TempDir()) / "not_a_db.sqlite").string();
  std::ofstream(not_a_db) << ReadFile(SourcePath(kCopiesTrace));
  Result<TimelineSummary> summary = ParseNsysSqlite(not_a_db);
  EXPECT_EQ(summary.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("not an SQLite database"), std::string::npos)
      << summary.status().message();
  fs::remove(not_a_db);

  NsysDatabase db("missing_column", /*create_tables=*/false);
  db.Exec("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)");
  db.Exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2)");
  Result<TimelineSummary> missing_column = ParseNsysSqlite(db.Finish());
  EXPECT_EQ(missing_column.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(missing_column.status().message().find("correlationId"), std::string::npos)
      << missing_column.status().message();
}

TEST(NsysSqliteTest, CorruptedDatabasesNeverCrash) {
  NsysDatabase db("to_corrupt");
  CopyChromeTraceInto(Json::parse(ReadFile(SourcePath(kCopiesTrace))), &db);
  const std::string original = ReadFile(db.Finish());
  const std::string path = (fs::path(::testing::TempDir()) / "corrupted.sqlite").string();
  std::mt19937 rng(99);
  for (int mutant = 0; mutant < 200; ++mutant) {
    std::string bytes = original;
    for (int e = 0; e < 1 + static_cast<int>(rng() % 20); ++e) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    if (mutant % 4 == 0) bytes.resize(rng() % bytes.size());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    ExpectConsistent(ParseNsysSqlite(path), "sqlite mutant " + std::to_string(mutant));
  }
  fs::remove(path);
}

#else  // !KERNELPRO_HAVE_SQLITE

TEST(NsysSqliteTest, WithoutSqliteTheExportIsUnavailableNotACrash) {
  EXPECT_EQ(ParseNsysSqlite("report.sqlite").status().code(), Status::Code::kUnavailable);
}

#endif  // KERNELPRO_HAVE_SQLITE

}  // namespace profile_timeline_test
}  // namespace kernelpro::profile
