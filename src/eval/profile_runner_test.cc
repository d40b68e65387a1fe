// `kernelpro profile` without a GPU or ncu: every collector that cannot run says why in the
// record's notes, and the command still succeeds with what it could collect.
#include <gtest/gtest.h>

#include "core/json_io.h"
#include "core/subprocess.h"

namespace kernelpro::eval {
namespace eval_profile_runner_test {

TEST(ProfileCommandTest, WithoutGpuOrNcuEveryMissingViewIsANote) {
  ProcessOptions p;
  std::string root = KERNELPRO_SOURCE_DIR;
  p.argv = {KERNELPRO_BINARY,
            "profile",
            "--device",
            "cpu",
            "--json",
            "--problem",
            root + "/tests/problems/tiny_swish.py",
            "--candidate",
            root + "/tests/candidates/good/cpu_tiny_swish.py",
            "--cache-dir",
            std::string(KERNELPRO_BINARY_DIR) + "/test-cache"};
  p.env["KERNELPRO_NCU"] = "/nonexistent/ncu";  // as on a machine without Nsight Compute
  p.limits.wall_timeout = std::chrono::minutes(10);
  p.capture_bytes = 1 << 20;
  auto r = RunProcess(p);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->exit_code, 0) << r->stderr_text;
  Json record = Json::parse(r->stdout_text, nullptr, false);
  ASSERT_FALSE(record.is_discarded()) << r->stdout_text;
  EXPECT_EQ(record["schema_version"], 1);
  EXPECT_TRUE(record["ncu"].is_null());
  EXPECT_TRUE(record["timeline"].is_null());
  std::string notes = record["notes"].dump();
  EXPECT_NE(notes.find("ncu"), std::string::npos) << notes;
  EXPECT_NE(notes.find("no device code"), std::string::npos) << notes;
  EXPECT_NE(notes.find("no GPU activity"), std::string::npos) << notes;
}

// `--timeline nsys` on the CPU with a stand-in nsys (tests/fixtures/fake_nsys: no machine here
// has nsys): the timeline is read from its SQLite export; without a report, the profiler's
// timeline is taken and a note says why.
Json ProfileWithNsys(const std::string& fake) {
  ProcessOptions p;
  const std::string root = KERNELPRO_SOURCE_DIR;
  const std::string fakes = root + "/tests/fixtures/fake_nsys";
  p.argv = {KERNELPRO_BINARY,
            "profile",
            "--device",
            "cpu",
            "--json",
            "--timeline",
            "nsys",
            "--problem",
            root + "/tests/problems/tiny_swish.py",
            "--candidate",
            root + "/tests/candidates/good/cpu_tiny_swish.py",
            "--sandbox-read",
            fakes,
            "--cache-dir",
            std::string(KERNELPRO_BINARY_DIR) + "/test-cache"};
  p.env["KERNELPRO_NCU"] = "/nonexistent/ncu";
  p.env["KERNELPRO_NSYS"] = fakes + "/" + fake;
  p.limits.wall_timeout = std::chrono::minutes(10);
  p.capture_bytes = 1 << 20;
  auto r = RunProcess(p);
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return Json();
  EXPECT_EQ(r->exit_code, 0) << r->stderr_text;
  Json record = Json::parse(r->stdout_text, nullptr, false);
  EXPECT_FALSE(record.is_discarded()) << r->stdout_text;
  return record;
}

TEST(ProfileCommandTest, TimelineNsysReadsItsExportAndFallsBackToTheProfilerWithANote) {
  Json record = ProfileWithNsys("nsys");
  ASSERT_TRUE(record["timeline"].is_object()) << record.dump(1);
  EXPECT_EQ(record["timeline"]["source"], "nsys");
  EXPECT_EQ(record["notes"].dump().find("nsys"), std::string::npos) << record["notes"];

  Json without = ProfileWithNsys("nsys_without_report");
  const std::string notes = without["notes"].dump();
  EXPECT_NE(notes.find("timeline: nsys made no report (exit 1: Unable to create the report: the "
                       "profiling session could not start); the PyTorch profiler's timeline "
                       "instead"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("no GPU activity"), std::string::npos)
      << "the profiler's timeline was taken instead: " << notes;
}

TEST(ProfileCommandTest, BrokenProblemIsAClearErrorWithExitCode2) {
  ProcessOptions p;
  std::string root = KERNELPRO_SOURCE_DIR;
  p.argv = {KERNELPRO_BINARY, "profile",
            "--device",       "cpu",
            "--problem",      root + "/tests/problems/no_model.py",
            "--cache-dir",    std::string(KERNELPRO_BINARY_DIR) + "/test-cache"};
  p.limits.wall_timeout = std::chrono::minutes(5);
  auto r = RunProcess(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_NE(r->stderr_text.find("Model"), std::string::npos) << r->stderr_text;
}

}  // namespace eval_profile_runner_test
}  // namespace kernelpro::eval
