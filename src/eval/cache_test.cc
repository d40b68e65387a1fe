// The cache's size and pruning, on a cache laid out as the worker lays it out, in a temp dir.
#include "eval/cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

namespace kernelpro::eval {
namespace eval_cache_test {

namespace fs = std::filesystem;
using std::chrono::hours;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kp-cache-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    now_ = fs::file_time_type::clock::now();
  }
  void TearDown() override { fs::remove_all(root_); }

  // A file of `bytes` bytes last written `age` ago.
  void Write(const std::string& rel, std::size_t bytes, hours age) {
    const fs::path path = root_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << std::string(bytes, 'x');
    fs::last_write_time(path, now_ - age);
    for (fs::path dir = path.parent_path(); dir != root_; dir = dir.parent_path()) {
      fs::last_write_time(dir, now_ - hours(1000));
    }
  }

  // Two references, two build scopes, one header folder and torch's kernel cache, of known sizes
  // and ages.
  void LayOut() {
    Write("references/old/expected/check_0.kpt", 4000, hours(24 * 30));
    Write("references/old/meta.json", 100, hours(24 * 30));
    Write("inputs/old/check_0.kpt", 900, hours(24 * 30));
    Write("references/old.lock", 0, hours(24 * 30));
    Write("references/new/meta.json", 100, hours(2));
    Write("references/new/expected/check_0.kpt", 1000, hours(2));
    Write("builds/aaa/k1/kp.so", 3000, hours(24 * 10));
    Write("builds/aaa/k1/.lock", 0, hours(24 * 10));
    Write("builds/bbb/k2/kp.so", 2000, hours(24 * 3));
    Write("builds/bbb.built.json", 50, hours(24 * 3));  // the executor's record of the build
    Write("kernels/hold.cubin", 10, hours(24 * 40));    // torch's own: counted, never pruned
    Write("pch/tc1/torch.h.gch", 500, hours(24 * 20));
  }

  std::vector<std::string> Names(const std::vector<CacheEntry>& entries) {
    std::vector<std::string> names;
    for (const CacheEntry& e : entries) names.push_back(e.name);
    return names;
  }

  fs::path root_;
  fs::file_time_type now_;
};

TEST_F(CacheTest, SizesAreBrokenDownByKindAndEntriesComeLeastRecentlyUsedFirst) {
  LayOut();
  auto usage = MeasureCache(root_.string());
  ASSERT_TRUE(usage.ok()) << usage.status().message();
  EXPECT_TRUE(usage->exists);
  EXPECT_EQ(usage->reference_bytes, 4000u + 100 + 900 + 100 + 1000);
  EXPECT_EQ(usage->build_bytes, 5050u);
  EXPECT_EQ(usage->header_bytes, 500u);
  EXPECT_EQ(usage->other_bytes, 10u);
  EXPECT_EQ(usage->total_bytes, 11660u);
  EXPECT_EQ(Names(usage->entries),
            (std::vector<std::string>{"kernels", "references/old", "pch/tc1", "builds/aaa",
                                      "builds/bbb", "references/new"}));
  // A reference's outputs and inputs are one entry, as are a build scope and its record.
  EXPECT_EQ(usage->entries[1].paths.size(), 2u);
  EXPECT_EQ(usage->entries[4].paths.size(), 2u);
}

TEST_F(CacheTest, AMissingCacheIsEmptyNotAnError) {
  auto usage = MeasureCache((root_ / "nothing-here").string());
  ASSERT_TRUE(usage.ok());
  EXPECT_FALSE(usage->exists);
  EXPECT_EQ(usage->total_bytes, 0u);
}

TEST_F(CacheTest, OlderThanRemovesWhatWasNotUsedSinceAndKeepsLockFiles) {
  LayOut();
  PruneOptions options;
  options.older_than = hours(24 * 7);
  options.now = now_;
  auto pruned = PruneCache(root_.string(), options);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  // By age, headers too; still after the rest.
  EXPECT_EQ(Names(pruned->removed),
            (std::vector<std::string>{"references/old", "builds/aaa", "pch/tc1"}));
  EXPECT_EQ(pruned->freed_bytes, 4000u + 100 + 900 + 500 + 3000);
  EXPECT_EQ(pruned->remaining_bytes, 3160u);
  EXPECT_TRUE(pruned->skipped_in_use.empty());
  EXPECT_TRUE(fs::exists(root_ / "kernels/hold.cubin"));
  EXPECT_FALSE(fs::exists(root_ / "references/old"));
  EXPECT_FALSE(fs::exists(root_ / "inputs/old"));
  EXPECT_TRUE(fs::exists(root_ / "references/old.lock"));
  EXPECT_TRUE(fs::exists(root_ / "builds/bbb/k2/kp.so"));
  EXPECT_TRUE(fs::exists(root_ / "references/new/meta.json"));
}

TEST_F(CacheTest, MaxSizeRemovesLeastRecentlyUsedUntilTheCacheFits) {
  LayOut();
  PruneOptions options;
  options.max_bytes = 6000;
  options.now = now_;
  auto pruned = PruneCache(root_.string(), options);
  ASSERT_TRUE(pruned.ok());
  // 11660 → 6660 after the oldest reference, → 3660 after builds/aaa; the older headers stay.
  EXPECT_EQ(Names(pruned->removed), (std::vector<std::string>{"references/old", "builds/aaa"}));
  EXPECT_EQ(pruned->remaining_bytes, 3660u);
  EXPECT_TRUE(pruned->target_reached);
  auto after = MeasureCache(root_.string());
  EXPECT_EQ(after->total_bytes, 3660u);
  EXPECT_TRUE(fs::exists(root_ / "pch/tc1/torch.h.gch"));
}

TEST_F(CacheTest, PrecompiledHeadersGoLastAndOnlyWhenNothingElseReachesTheSize) {
  LayOut();
  PruneOptions options;
  options.now = now_;
  options.max_bytes = 600;  // every other entry gone: 510 bytes, the headers (500) among them
  auto pruned = PruneCache(root_.string(), options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(Names(pruned->removed), (std::vector<std::string>{"references/old", "builds/aaa",
                                                              "builds/bbb", "references/new"}));
  EXPECT_TRUE(fs::exists(root_ / "pch/tc1/torch.h.gch"));
  options.max_bytes = 0;
  pruned = PruneCache(root_.string(), options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(Names(pruned->removed), (std::vector<std::string>{"pch/tc1"}));
  // torch's kernel cache is not kernelpro's to remove: the size is not reached, and said so.
  EXPECT_FALSE(pruned->target_reached);
  EXPECT_EQ(pruned->remaining_bytes, 10u);
  EXPECT_EQ(pruned->other_bytes, 10u);
}

TEST_F(CacheTest, ADryRunRemovesNothingAndSaysWhatWouldGoAndWhatStays) {
  LayOut();
  Write("references/busy/meta.json", 100, hours(0));
  PruneOptions options;
  options.now = now_;
  options.max_bytes = 0;
  options.dry_run = true;
  auto plan = PruneCache(root_.string(), options);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(Names(plan->removed),
            (std::vector<std::string>{"references/old", "builds/aaa", "builds/bbb",
                                      "references/new", "pch/tc1"}));
  EXPECT_EQ(Names(plan->skipped_in_use), (std::vector<std::string>{"references/busy"}));
  EXPECT_EQ(plan->skipped_bytes, 100u);
  EXPECT_EQ(plan->freed_bytes, 11650u);
  EXPECT_EQ(plan->remaining_bytes, 110u);
  EXPECT_FALSE(plan->target_reached);
  EXPECT_EQ(MeasureCache(root_.string())->total_bytes, 11760u);  // nothing removed
  // keep_recent 0 (--include-recent): the recent entry goes too.
  options.keep_recent = std::chrono::seconds(0);
  options.dry_run = false;
  auto pruned = PruneCache(root_.string(), options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_TRUE(pruned->skipped_in_use.empty());
  EXPECT_FALSE(fs::exists(root_ / "references/busy"));
  EXPECT_EQ(pruned->remaining_bytes, 10u);
}

TEST_F(CacheTest, RecentlyUsedEntriesAreNeverRemoved) {
  Write("references/busy/meta.json", 100, hours(0));
  PruneOptions options;
  options.max_bytes = 0;
  options.now = now_;
  auto pruned = PruneCache(root_.string(), options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_TRUE(pruned->removed.empty());
  EXPECT_EQ(Names(pruned->skipped_in_use), (std::vector<std::string>{"references/busy"}));
  EXPECT_TRUE(fs::exists(root_ / "references/busy/meta.json"));
}

TEST_F(CacheTest, AnEntryWhoseLockAnotherProcessHoldsIsSkipped) {
  LayOut();
  // The worker's fcntl.flock on references/old.lock, as while it computes that reference.
  const int fd = ::open((root_ / "references/old.lock").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // Another process holds it: flock locks belong to the open file, so a child of ours holding
    // its own descriptor is as foreign as a worker.
    const int own = ::open((root_ / "references/old.lock").c_str(), O_RDONLY);
    ::flock(own, LOCK_EX);
    ::sleep(30);
    ::_exit(0);
  }
  // Until the child holds it.
  for (int i = 0; i < 500; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) break;
    ::flock(fd, LOCK_UN);
    ::usleep(10000);
  }
  ::close(fd);
  PruneOptions options;
  options.older_than = hours(24 * 7);
  options.now = now_;
  auto pruned = PruneCache(root_.string(), options);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(Names(pruned->skipped_in_use), (std::vector<std::string>{"references/old"}));
  EXPECT_TRUE(fs::exists(root_ / "references/old/meta.json"));
  EXPECT_FALSE(fs::exists(root_ / "builds/aaa"));
}

TEST(CacheValuesTest, SizesParseStrictly) {
  EXPECT_EQ(*ParseByteSize("500M"), 500ull << 20);
  EXPECT_EQ(*ParseByteSize("2G"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("1.5g"), 3ull << 29);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("700KB"), 700ull << 10);
  EXPECT_EQ(*ParseByteSize("123"), 123u);
  for (const char* bad :
       {"", "G", "2X", "-1G", "+1G", " 2G", "2G ", "1e3", "nan", "2 G", "5iB", "2GG", "inf"}) {
    auto parsed = ParseByteSize(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok())
      EXPECT_NE(parsed.status().message().find("e.g. 500M or 2G"), std::string::npos);
  }
}

TEST(CacheValuesTest, TheAutomaticLimitIsTenGiBUnlessSetOrOff) {
  EXPECT_EQ(*ParseCacheLimit(""), std::optional<std::uint64_t>(std::uint64_t{10} << 30));
  EXPECT_EQ(*ParseCacheLimit("2G"), std::optional<std::uint64_t>(std::uint64_t{2} << 30));
  EXPECT_EQ(*ParseCacheLimit("off"), std::nullopt);
  EXPECT_EQ(*ParseCacheLimit("None"), std::nullopt);
  auto bad = ParseCacheLimit("lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("or off for no limit"), std::string::npos);
}

TEST(CacheValuesTest, AgesParseStrictly) {
  EXPECT_EQ(ParseAge("7d")->count(), 7 * 86400);
  EXPECT_EQ(ParseAge("12h")->count(), 12 * 3600);
  EXPECT_EQ(ParseAge("30m")->count(), 1800);
  EXPECT_EQ(ParseAge("1.5h")->count(), 5400);
  EXPECT_EQ(ParseAge("2w")->count(), 14 * 86400);
  for (const char* bad : {"", "7", "d", "7D", "7days", "-1d", "1e3s", " 7d", "nan d", "7 d"}) {
    EXPECT_FALSE(ParseAge(bad).ok()) << bad;
  }
}

TEST(CacheValuesTest, ByteSizesPrintInBinaryUnits) {
  EXPECT_EQ(FormatByteSize(12), "12 B");
  EXPECT_EQ(FormatByteSize(1536), "1.5 KiB");
  EXPECT_EQ(FormatByteSize(1610612736), "1.5 GiB");
  EXPECT_EQ(FormatByteSize(200ull << 20), "200 MiB");
}

}  // namespace eval_cache_test
}  // namespace kernelpro::eval
