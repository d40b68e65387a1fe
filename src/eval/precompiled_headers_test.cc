#include "eval/precompiled_headers.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "eval/builder.h"
#include "eval/executor.h"

namespace kernelpro::eval {
namespace eval_precompiled_headers_test {

TEST(PrecompiledHeadersTest, AnOkResultIsOfferedToBuildRequests) {
  Json result = {
      {"status", "ok"},
      {"pch_dir", "/cache/pch"},
      {"pch_manifest", {{"abc/kp_torch_extension.h.gch", "00ff"}}},
      {"entries",
       Json::array({{{"key", "abc"}, {"cached", true}},
                    {{"variant", {{"extra_cflags", {"-O3"}}}}, {"error", "g++ failed"}}})}};
  auto headers = PrecompiledHeadersFromResult(result);
  ASSERT_TRUE(headers.ok()) << headers.status().ToString();
  Json request = {{"candidate", "/runs/c.py"}};
  OfferPrecompiledHeaders(*headers, request);
  EXPECT_EQ(request["pch_dir"], "/cache/pch");
  EXPECT_EQ(request["pch_manifest"]["abc/kp_torch_extension.h.gch"], "00ff");
  ASSERT_EQ(headers->notes.size(), 1u);
  EXPECT_NE(headers->notes[0].find("g++ failed"), std::string::npos);
}

TEST(PrecompiledHeadersTest, NothingIsOfferedWhenNoHeaderWasMade) {
  auto headers = PrecompiledHeadersFromResult(
      {{"status", "ok"}, {"pch_dir", "/cache/pch"}, {"pch_manifest", Json::object()}});
  ASSERT_TRUE(headers.ok());
  Json request = Json::object();
  OfferPrecompiledHeaders(*headers, request);
  EXPECT_FALSE(request.contains("pch_dir"));
  EXPECT_FALSE(request.contains("pch_manifest"));
}

TEST(PrecompiledHeadersTest, AFailedStepIsAnErrorNotAnOffer) {
  auto headers = PrecompiledHeadersFromResult({{"status", "worker_error"}, {"message", "boom"}});
  ASSERT_FALSE(headers.ok());
  EXPECT_NE(headers.status().message().find("boom"), std::string::npos);
}

// An executor whose worker is the fake package (tests/fixtures/fake_worker): its `pch` step
// counts its runs in CACHE/pch/runs.
Executor FakeExecutor(const std::string& name, const std::string& device, bool pch = false) {
  WorkerOptions worker;
  worker.worker_path = std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/fake_worker";
  worker.scratch_dir = std::string(KERNELPRO_BINARY_DIR) + "/pch-test-scratch";
  auto client = WorkerClient::Create(worker);
  EXPECT_TRUE(client.ok()) << client.status().message();
  EvalOptions options;
  options.device = device;
  options.precompiled_headers = pch;
  options.cache_dir = std::string(KERNELPRO_BINARY_DIR) + "/pch-test-cache/" + name;
  std::filesystem::remove_all(options.cache_dir);
  return Executor(*client, options);
}

int Runs(const Executor& executor) {
  std::ifstream in(executor.options().cache_dir + "/pch/runs");
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(PrecompiledHeadersTest, AnExecutorRunsThePchStepOnceForAllItsBuildsAndCopies) {
  Executor executor = FakeExecutor("once", "cpu");
  EXPECT_TRUE(executor.PreparedHeaders().dir.empty());  // nothing before the first build
  Executor copy = executor;                             // as an optimize run's iterations hold it
  std::vector<PrecompiledHeaders> seen(4);
  std::vector<std::thread> builds;
  for (int i = 0; i < 4; ++i) {
    builds.emplace_back([&, i] { seen[i] = (i % 2 ? copy : executor).HeadersForBuilds(); });
  }
  for (std::thread& t : builds) t.join();
  EXPECT_EQ(Runs(executor), 1);
  for (const PrecompiledHeaders& headers : seen) {
    EXPECT_EQ(headers.dir, executor.options().cache_dir + "/pch");
    EXPECT_EQ(headers.manifest["k/kp_torch_extension.h.gch"], "00ff");
  }
  EXPECT_EQ(copy.PreparedHeaders().dir, seen[0].dir);
  copy.HeadersForBuilds();
  EXPECT_EQ(Runs(executor), 1);
}

TEST(PrecompiledHeadersTest, AFailedPchStepLeavesBuildsWithoutHeadersAndSaysWhyOnce) {
  Executor executor = FakeExecutor("broken", "broken");
  std::vector<std::string> notes;
  PrecompiledHeaders headers = executor.HeadersForBuilds(&notes);
  EXPECT_TRUE(headers.dir.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no compiler here"), std::string::npos) << notes[0];
  Json request = Json::object();
  OfferPrecompiledHeaders(headers, request);
  EXPECT_FALSE(request.contains("pch_dir"));
  std::vector<std::string> later;
  executor.HeadersForBuilds(&later);
  EXPECT_TRUE(later.empty());
  EXPECT_EQ(Runs(executor), 1);  // not retried for every build
}

TEST(PrecompiledHeadersTest, StartedAheadTheStepRunsOnceAndTheFirstBuildStillGetsItsNotes) {
  Executor executor = FakeExecutor("ahead", "broken", /*pch=*/true);
  executor.PrepareBuildsAhead();
  executor.PrepareBuildsAhead();  // once is enough
  std::vector<std::string> notes;
  executor.HeadersForBuilds(&notes);  // waits for the step started ahead
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no compiler here"), std::string::npos) << notes[0];
  EXPECT_EQ(Runs(executor), 1);
}

// A library's caller (app::RunSearch) may remove the cache the moment a run returns: the step a
// run started ahead ends with the run's executor instead of writing on.
TEST(PrecompiledHeadersTest, AnExecutorGoneStopsTheStepItStartedAhead) {
  std::string cache;
  std::chrono::steady_clock::duration gone_in{};
  pid_t step_pid = 0;
  {
    Executor executor = FakeExecutor("gone", "slow", /*pch=*/true);
    cache = executor.options().cache_dir;
    Executor copy = executor;  // as an optimize run's iterations hold it
    executor.PrepareBuildsAhead();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(cache + "/pch/pid") &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the pid written whole
    std::ifstream(cache + "/pch/pid") >> step_pid;
    ASSERT_GT(step_pid, 0);  // the step is running
    const auto start = std::chrono::steady_clock::now();
    { Executor last = std::move(copy); }      // one copy gone: the step goes on
    executor = FakeExecutor("other", "cpu");  // the last copy of the first executor goes
    gone_in = std::chrono::steady_clock::now() - start;
  }
  EXPECT_LT(gone_in, std::chrono::seconds(30));  // the step takes a minute when left alone
  // Stopped and reaped before the executor's end returned: no such process any more.
  EXPECT_EQ(::kill(step_pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(PrecompiledHeadersTest, WithoutPrecompiledHeadersNothingStartsAhead) {
  Executor executor = FakeExecutor("off", "cpu");
  executor.PrepareBuildsAhead();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Runs(executor), 0);
  EXPECT_TRUE(executor.PreparedHeaders().dir.empty());
}

}  // namespace eval_precompiled_headers_test
}  // namespace kernelpro::eval

namespace kernelpro::eval {
namespace eval_precompiled_headers_test {

TEST(PrecompiledHeadersTest, OnlyASourceThatBuildsATorchExtensionWaitsForThem) {
  EXPECT_TRUE(BuildsTorchExtension("from torch.utils.cpp_extension import load_inline\n"));
  EXPECT_TRUE(BuildsTorchExtension("import torch.utils.cpp_extension as ext\next.load(...)\n"));
  EXPECT_TRUE(BuildsTorchExtension("mod = load_inline(name='k', cpp_sources=[src])\n"));
  EXPECT_FALSE(
      BuildsTorchExtension("class ModelNew(nn.Module):\n  def forward(self, x):\n"
                           "    return torch.relu(x)\n"));
  EXPECT_FALSE(BuildsTorchExtension("import triton\nimport triton.language as tl\n"));
}

}  // namespace eval_precompiled_headers_test
}  // namespace kernelpro::eval
