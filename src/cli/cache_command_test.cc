// `kernelpro cache` and `kernelpro cache prune` through the binary, on a small cache in a temp dir.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_cache_command_test {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::RunKernelpro;

class CacheCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kp_cache_cmd_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(24 * 30);
    // A reference last used a month ago (3 MiB) and a build used just now (1 MiB).
    Write("references/abc/expected/check_0.kpt", 2 << 20, old);
    Write("inputs/abc/check_0.kpt", 1 << 20, old);
    Write("builds/def/k/kp.so", 1 << 20, fs::file_time_type::clock::now());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& rel, std::size_t bytes, fs::file_time_type when) {
    const fs::path path = dir_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << std::string(bytes, 'x');
    fs::last_write_time(path, when);
    for (fs::path d = path.parent_path(); d != dir_; d = d.parent_path())
      fs::last_write_time(d, when);
  }

  fs::path dir_;
};

TEST_F(CacheCommandTest, AloneItPrintsTheSizesByKind) {
  CliRun run = RunKernelpro({"cache", "--cache-dir", dir_.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("cache " + dir_.string() + ": 4.0 MiB"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("reference outputs and inputs      3.0 MiB  (1 problem(s) and settings)"),
            std::string::npos)
      << run.out;
  CliRun json = RunKernelpro({"cache", "info", "--json", "--cache-dir", dir_.string()});
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.json["build_bytes"], 1 << 20);
  EXPECT_EQ(json.json["reference_bytes"], 3 << 20);
}

TEST_F(CacheCommandTest, PruneRemovesTheOldReferenceAndSaysWhatItFreed) {
  CliRun run = RunKernelpro({"cache", "prune", "--older-than", "7d", "--cache-dir", dir_.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("removed references/abc (reference, 3.0 MiB, last used 30 days ago)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("freed 3.0 MiB; the cache (" + dir_.string() + ") now holds 1.0 MiB"),
            std::string::npos)
      << run.out;
  EXPECT_FALSE(fs::exists(dir_ / "references/abc"));
  EXPECT_FALSE(fs::exists(dir_ / "inputs/abc"));
  EXPECT_TRUE(fs::exists(dir_ / "builds/def/k/kp.so"));
}

TEST_F(CacheCommandTest, PruneToASizeItCannotReachSaysWhatItKeepsFirstAndExitsOne) {
  CliRun run = RunKernelpro({"cache", "prune", "--max-size", "0", "--cache-dir", dir_.string()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string first = run.out.substr(0, run.out.find('\n'));
  EXPECT_EQ(first,
            "removing 1 entry (3.0 MiB); keeping 1 entry (1.0 MiB) used in the last 10 minutes or "
            "locked by a running kernelpro (--include-recent removes the unlocked ones too); the "
            "cache will still hold 1.0 MiB, above the 0 B asked for");
  EXPECT_NE(run.out.find("kept    builds/def"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("the cache holds 1.0 MiB, above --max-size 0"), std::string::npos)
      << run.err;
  EXPECT_TRUE(fs::exists(dir_ / "builds/def/k/kp.so"));
  EXPECT_FALSE(fs::exists(dir_ / "references/abc"));
}

TEST_F(CacheCommandTest, IncludeRecentReachesTheSizeAndHeadersGoLast) {
  Write("pch/tc/torch.h.gch", 4 << 20,
        fs::file_time_type::clock::now() - std::chrono::hours(24 * 60));
  // 8 MiB: headers 4 (the oldest), reference 3, build 1. Down to 4 MiB: the reference and the
  // build go although the headers are older.
  CliRun run = RunKernelpro(
      {"cache", "prune", "--max-size", "4M", "--include-recent", "--cache-dir", dir_.string()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out.substr(0, run.out.find('\n')), "removing 2 entries (4.0 MiB)");
  EXPECT_TRUE(fs::exists(dir_ / "pch/tc/torch.h.gch"));
  EXPECT_FALSE(fs::exists(dir_ / "builds/def"));
  EXPECT_NE(run.out.find("the cache (" + dir_.string() + ") now holds 4.0 MiB"), std::string::npos)
      << run.out;
}

TEST_F(CacheCommandTest, InfoNamesTheSizeLimitAndItsVariable) {
  CliRun run =
      RunKernelpro({"cache", "--cache-dir", dir_.string()}, 5, {}, {"KERNELPRO_CACHE_MAX_SIZE"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("size limit: 10 GiB (the default; set KERNELPRO_CACHE_MAX_SIZE to change "
                         "it, off for none), enforced after each eval, optimize, resume and suite "
                         "run"),
            std::string::npos)
      << run.out;
  CliRun set = RunKernelpro({"cache", "info", "--json", "--cache-dir", dir_.string()}, 5,
                            {{"KERNELPRO_CACHE_MAX_SIZE", "2G"}});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.json["max_bytes"], 2ll << 30);
  CliRun off = RunKernelpro({"cache", "--cache-dir", dir_.string()}, 5,
                            {{"KERNELPRO_CACHE_MAX_SIZE", "off"}});
  EXPECT_NE(off.out.find("size limit: none (KERNELPRO_CACHE_MAX_SIZE=off)"), std::string::npos)
      << off.out;
}

TEST_F(CacheCommandTest, BadValuesAndNoLimitAreUsageErrorsOfOneLine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"cache", "prune"},
                                             {"cache", "prune", "--older-than", "7"},
                                             {"cache", "prune", "--older-than", "seven days"},
                                             {"cache", "prune", "--max-size", "2X"},
                                             {"cache", "prune", "--max-size", "-1G"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--cache-dir", dir_.string()});
    CliRun run = RunKernelpro(full);
    EXPECT_EQ(run.exit_code, 2) << args.back();
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  EXPECT_TRUE(fs::exists(dir_ / "references/abc"));
}

}  // namespace cli_cache_command_test
}  // namespace kernelpro::cli
