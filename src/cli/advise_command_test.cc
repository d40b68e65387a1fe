// `kernelpro advise` and `kernelpro tools list` as a user runs them (the binary, saved artifacts).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/cli_testing.h"
#include "core/json_io.h"
#include "core/subprocess.h"

namespace kernelpro::cli {
namespace cli_advise_command_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

using testing::CliRun;

CliRun Kernelpro(std::vector<std::string> args) { return testing::RunKernelpro(args, 2); }

TEST(ToolsListTest, JsonListsEveryToolWithItsSourceAndClasses) {
  CliRun r = Kernelpro({"tools", "list", "--json", "--tool-rules",
                        kRoot + "/examples/rules/memory_rules.toml", "--tool-plugin",
                        KERNELPRO_EXAMPLE_PLUGIN});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json list = Json::parse(r.out);
  ASSERT_TRUE(list.is_array());
  std::set<std::string> names;
  for (const Json& tool : list) {
    ASSERT_TRUE(tool.contains("name") && tool.contains("source") && tool.contains("bottlenecks"))
        << tool.dump();
    EXPECT_FALSE(tool["bottlenecks"].empty()) << tool["name"];
    names.insert(tool["name"].get<std::string>());
  }
  EXPECT_EQ(names.size(), list.size()) << "tool names must be unique";
  EXPECT_TRUE(names.contains("l2_reuse"));
  EXPECT_TRUE(names.contains("atomic_contention"));
}

TEST(ToolsListTest, DocsToolsMdIsWhatTheBinaryPrints) {
  CliRun r = Kernelpro({"tools", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(kRoot + "/docs/tools.md");
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find("```\n" + r.out + "```\n"), std::string::npos)
      << "docs/tools.md is out of date: regenerate it from `kernelpro tools list`";
  EXPECT_NE(r.out.find("25 tools"), std::string::npos) << r.out;
}

TEST(AdviseTest, OfflineAdviceFromSavedArtifactsAsJson) {
  CliRun r =
      Kernelpro({"advise", "--from", kRoot + "/tests/fixtures/h200", "--name", "p_many_launches",
                 "--tool-rules", kRoot + "/examples/rules/memory_rules.toml", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  ASSERT_TRUE(j["findings"].is_array());
  for (const Json& f : j["findings"]) {
    for (const char* key : {"tool", "severity", "title", "root_cause", "recommendations"}) {
      EXPECT_TRUE(f.contains(key)) << key << " in " << f.dump();
    }
  }
  EXPECT_EQ(j["guidance"].get<std::string>().rfind("## Automated Bottleneck Analysis", 0), 0u);
  // The same artifacts give the same advice, byte for byte.
  CliRun again =
      Kernelpro({"advise", "--from", kRoot + "/tests/fixtures/h200", "--name", "p_many_launches",
                 "--tool-rules", kRoot + "/examples/rules/memory_rules.toml", "--json"});
  EXPECT_EQ(again.out, r.out);
}

// A profile with a negative, a NaN and an absurd counter (tests/fixtures/implausible): the values
// are dropped with notes naming them, and no tool advises on them ("uses only -5 % of DRAM
// bandwidth" is what it said before).
TEST(AdviseTest, ImplausibleCountersAreDroppedWithANoteAndNoToolUsesThem) {
  const std::vector<std::string> args = {
      "advise",  "--from", kRoot + "/tests/fixtures/implausible", "--name", "swish_bad",
      "--class", "memory"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  CliRun r = Kernelpro(json_args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  std::vector<std::string> notes = j["notes"].get<std::vector<std::string>>();
  const std::string kernel = " in kernel 0 (swish_scalar)";
  for (const std::string& expected :
       {"ncu: dropped dram__throughput.avg.pct_of_peak_sustained_elapsed = -5 % (negative)" +
            kernel,
        "ncu: dropped lts__t_sector_hit_rate.pct = 250 % (above 110 %)" + kernel,
        "ncu: dropped sm__warps_active.avg.pct_of_peak_sustained_active = nan % (not a finite "
        "number)" +
            kernel}) {
    EXPECT_NE(std::find(notes.begin(), notes.end(), expected), notes.end())
        << expected << "\nin " << j["notes"].dump();
  }
  EXPECT_EQ(j["guidance"].get<std::string>().find("-5"), std::string::npos) << j["guidance"];
  EXPECT_EQ(r.out.find("uses only -5"), std::string::npos);
  bool dram_skipped = false;
  for (const Json& s : j["skipped"]) {
    if (s["tool"] == "dram_bandwidth") {
      dram_skipped = true;
      EXPECT_NE(
          s["reason"].get<std::string>().find("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
          std::string::npos)
          << s.dump();
    }
  }
  EXPECT_TRUE(dram_skipped) << j["skipped"].dump();
  // The human form prints the same notes.
  CliRun human = Kernelpro(args);
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("note: ncu: dropped dram__throughput.avg.pct_of_peak_sustained_elapsed "
                           "= -5 % (negative)"),
            std::string::npos)
      << human.out;
}

TEST(AdviseTest, ASavedStageOneAnalysisFiltersTheToolsAndPlacesTheKernel) {
  CliRun analysis =
      testing::RunKernelpro({"analyze", "--problem", kRoot + "/problems/tril_matmul/problem.py",
                             "--device", "cpu", "--gpu", "H200", "--no-ncu", "--json",
                             "--cache-dir", std::string(KERNELPRO_BINARY_DIR) + "/test-cache"});
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  std::string path = std::string(KERNELPRO_BINARY_DIR) + "/tril_matmul.analysis.json";
  std::ofstream(path) << analysis.out;
  CliRun r = Kernelpro({"advise", "--from", kRoot + "/tests/fixtures/h200-profile/profiles",
                        "--name", "tril_matmul", "--analysis", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["bottleneck"], "compute");
  EXPECT_EQ(j["stage1"]["gpu"], "h200");
  // Compute-bound: the coalescing and DRAM-bandwidth tools do not run.
  std::set<std::string> filtered(j["filtered"].begin(), j["filtered"].end());
  EXPECT_TRUE(filtered.contains("global_coalescing"));
  EXPECT_TRUE(filtered.contains("dram_bandwidth"));
  // The candidate skips the zero half of the triangles: past the dense reference's bound, and said
  // so.
  EXPECT_GT(j["roofline_position"]["fraction_of_bound"].get<double>(), 1.0);
  EXPECT_NE(j["roofline_position"]["summary"].get<std::string>().find("less work"),
            std::string::npos);
  EXPECT_EQ(j["findings"][0]["tool"], "tensor_core_underutilization");
}

// `scripts/gpu_verify OUT advise` on the H200: for each example candidate, the Stage-1 analysis
// (with ncu), `kernelpro advise --problem --candidate --analysis --save` and the JSON advice.
struct RecordedAdvice {
  std::string name, bottleneck;
  std::vector<std::string> first_findings;  // in the order the analysis ranks them
  std::string first_severity;
};

// Printed in test names as its name, not its bytes: ctest's names (and its cost data) stay the
// same from build to build.
void PrintTo(const RecordedAdvice& a, std::ostream* os) { *os << a.name; }

class H200AdviseTest : public ::testing::TestWithParam<RecordedAdvice> {};

TEST_P(H200AdviseTest, SavedArtifactsGiveTheAdviceTheGpuRunPrinted) {
  const RecordedAdvice& want = GetParam();
  const std::string dir = kRoot + "/tests/fixtures/h200-advise";
  CliRun r = Kernelpro({"advise", "--from", dir, "--name", want.name, "--analysis",
                        dir + "/" + want.name + ".analysis.json", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json got = Json::parse(r.out);
  auto read = ReadJsonFile(dir + "/" + want.name + ".advice.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  const Json& recorded = *read;
  // What the collectors and Stage 1 made of the GPU run is reproduced exactly; the findings are
  // the tools' current reading of it (tools improve; the recorded advice stays as printed).
  for (const char* key : {"bottleneck", "stage1", "roofline_position", "filtered", "notes"}) {
    EXPECT_EQ(got[key], recorded[key]) << key << " differs from what the H200 run printed";
  }
  EXPECT_EQ(got["bottleneck"], want.bottleneck);
  EXPECT_EQ(got["stage1"]["gpu"], "h200");
  ASSERT_GE(got["findings"].size(), want.first_findings.size()) << r.out;
  for (size_t i = 0; i < want.first_findings.size(); ++i) {
    EXPECT_EQ(got["findings"][i]["tool"], want.first_findings[i]) << "finding " << i;
  }
  EXPECT_EQ(got["findings"][0]["severity"], want.first_severity);
  EXPECT_TRUE(got["skipped"].empty())
      << "every tool had its metrics on the H200: " << got["skipped"];

  // The text form starts with the same Stage-1 and roofline lines the GPU run printed.
  CliRun text = Kernelpro({"advise", "--from", dir, "--name", want.name, "--analysis",
                           dir + "/" + want.name + ".analysis.json"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::ifstream md(dir + "/" + want.name + ".advice.md");
  std::string printed_first, printed, offline;
  std::getline(md, printed_first);  // names the candidate file on the GPU machine
  std::istringstream lines(text.out);
  std::getline(lines, offline);
  for (int i = 0; i < 2; ++i) {
    std::getline(md, printed);
    std::getline(lines, offline);
    EXPECT_EQ(offline, printed);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ExampleCandidates, H200AdviseTest,
    ::testing::Values(
        // Scalar-per-thread float4 streaming: latency of DRAM exposed, IEEE division in SASS.
        RecordedAdvice{"swish", "memory", {"warp_stall", "fast_math_intrinsics"}, "critical"},
        RecordedAdvice{"rms_norm", "memory", {"warp_stall"}, "high"},
        RecordedAdvice{"scaled_softmax", "memory", {"warp_stall"}, "critical"},
        // fp32 FMA loops where the reference's GEMM could use tensor cores.
        RecordedAdvice{"tril_matmul",
                       "compute",
                       {"tensor_core_underutilization", "tensor_core_generation",
                        "occupancy_limiter", "register_pressure"},
                       "critical"},
        RecordedAdvice{"linear_gelu",
                       "mixed",
                       {"tensor_core_underutilization", "tensor_core_generation",
                        "occupancy_limiter", "register_pressure"},
                       "critical"},
        // A few blocks for a tiny batch: most SMs idle.
        // (register_pressure is low: 32 blocks never fill the register limit of 2 per SM.)
        RecordedAdvice{
            "tiny_mlp",
            "latency",
            {"warp_stall", "wave_quantization", "occupancy_limiter", "register_pressure"},
            "high"}),
    [](const ::testing::TestParamInfo<RecordedAdvice>& info) { return info.param.name; });

TEST(AdviseTest, ShowsTheEnergyProxyOfTheProfiledRun) {
  const std::string dir = kRoot + "/tests/fixtures/h200-advise";
  CliRun r = Kernelpro({"advise", "--from", dir, "--name", "swish", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  // The float4 kernel's 16 sectors per request are what its 16-byte loads touch coalesced.
  EXPECT_DOUBLE_EQ(j["energy_proxy"]["total_pj"].get<double>(), 2880021615.0 - 629145600.0);
  EXPECT_DOUBLE_EQ(j["energy_proxy"]["terms"]["dram"].get<double>(), 2219888640.0);
  EXPECT_DOUBLE_EQ(j["energy_proxy"]["terms"]["uncoalesced"].get<double>(), 0);
  EXPECT_EQ(j["energy_proxy"]["coalesced_baseline"], "widest SASS load: 16");
  EXPECT_DOUBLE_EQ(j["energy_proxy"]["terms"]["spills"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["energy_proxy"]["terms"]["instructions"].get<double>(), 30987375.0);
  EXPECT_TRUE(j["energy_proxy_missing"].empty());

  CliRun text = Kernelpro({"advise", "--from", dir, "--name", "swish"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(
      text.out.find("\nEnergy proxy (paper Eq. 4, from ncu counters, 1 kernel): 2.251e+09 pJ"),
      std::string::npos)
      << text.out;
  // Eq. 4 as printed, for reproducing the paper: 629 µJ of "uncoalesced" float4 loads.
  CliRun paper =
      Kernelpro({"advise", "--from", dir, "--name", "swish", "--json", "--energy-proxy", "paper"});
  ASSERT_EQ(paper.exit_code, 0) << paper.err;
  Json p = Json::parse(paper.out);
  EXPECT_DOUBLE_EQ(p["energy_proxy"]["total_pj"].get<double>(), 2880021615.0);
  EXPECT_DOUBLE_EQ(p["energy_proxy"]["terms"]["uncoalesced"].get<double>(), 629145600.0);
  EXPECT_EQ(p["energy_proxy"]["coalesced_baseline"], "Eq. 4's 4 sectors");
  EXPECT_NE(text.out.find("  instructions  3.099e+07 pJ (30.99 µJ) = 3 pJ x 1.033e+07 warp "
                          "instructions [smsp__inst_executed.sum]\n"),
            std::string::npos)
      << text.out;

  // Recorded before the catalog asked for sectors per request: ncu gave the sector and request
  // sums, and Eq. 4's r is exactly their ratio, so the proxy is there and a note says how.
  CliRun old = Kernelpro(
      {"advise", "--from", kRoot + "/tests/fixtures/h200", "--name", "k_strided_copy", "--json"});
  ASSERT_EQ(old.exit_code, 0) << old.err;
  Json o = Json::parse(old.out);
  ASSERT_FALSE(o["energy_proxy"].is_null()) << old.out;
  EXPECT_TRUE(o["energy_proxy_missing"].empty());
  // A transpose: its loads are coalesced (4 sectors a request, 32-bit LDG in its SASS, matched to
  // ncu's demangled name), its stores are not, and Eq. 4 charges loads only.
  EXPECT_DOUBLE_EQ(o["energy_proxy"]["terms"]["uncoalesced"].get<double>(), 0);
  EXPECT_EQ(o["energy_proxy"]["coalesced_baseline"], "widest SASS load: 4");
  EXPECT_NE(o["notes"].dump().find(
                "derived l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio = "
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            std::string::npos)
      << o["notes"];
}

TEST(AdviseTest, ProfilingWithoutAGpuSaysWhyNothingCouldBeAnalysed) {
  // A CPU extension on a machine without a GPU, ncu or a GPU timeline: the run still ends with
  // exit 0 and says, note by note, what was missing, instead of inventing findings.
  CliRun r = testing::RunKernelpro(
      {"advise", "--problem", kRoot + "/tests/problems/tiny_swish.py", "--candidate",
       kRoot + "/tests/candidates/good/cpu_tiny_swish.py", "--device", "cpu", "--cache-dir",
       std::string(KERNELPRO_BINARY_DIR) + "/test-cache"},
      10);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: stage 1: detected GPU: unknown GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("holds no device code"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No tool could run"), std::string::npos) << r.out;
}

TEST(AdviseTest, BadInputsAreClearErrors) {
  CliRun none =
      Kernelpro({"advise", "--from", kRoot + "/tests/fixtures/h200", "--name", "no_such_kernel"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no artifacts named no_such_kernel"), std::string::npos) << none.err;
  CliRun nothing = Kernelpro({"advise"});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("--from DIR --name NAME"), std::string::npos) << nothing.err;
  CliRun threshold = Kernelpro(
      {"advise", "--from", kRoot + "/tests/fixtures/h200", "--name", "k_swish_vec", "--tool-rules",
       kRoot + "/examples/rules/memory_rules.toml", "--threshold", "l2_reuse.high_hit=3"});
  EXPECT_EQ(threshold.exit_code, 2);
  EXPECT_NE(threshold.err.find("has no threshold 'high_hit' (it has: low_hit, min_mb)"),
            std::string::npos)
      << threshold.err;
  CliRun plugin = Kernelpro({"advise", "--from", kRoot + "/tests/fixtures/h200", "--name",
                             "k_swish_vec", "--tool-plugin", "/no/such/plugin.so"});
  EXPECT_EQ(plugin.exit_code, 2);
  EXPECT_NE(plugin.err.find("--tool-plugin: /no/such/plugin.so: no such file"), std::string::npos)
      << plugin.err;
  CliRun cls = Kernelpro({"advise", "--from", kRoot + "/tests/fixtures/h200", "--name",
                          "k_swish_vec", "--class", "io"});
  EXPECT_NE(cls.exit_code, 0);
}

}  // namespace cli_advise_command_test
}  // namespace kernelpro::cli
