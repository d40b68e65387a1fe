#include "eval/check_batches.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "eval/eval_options.h"
#include "eval/executor.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {
namespace check_batches_test {

Json Reference(std::int64_t rows, std::int64_t cols, const std::string& dtype) {
  return Json{{"outputs", Json::array({Json{{"shape", {rows, cols}}, {"dtype", dtype}}})}};
}

const std::int64_t kTwoGiB = EvalOptions{}.check_batch_bytes;

const std::vector<std::string> kTrials = {"check_0", "check_1", "check_2", "extra_0"};

std::int64_t Bytes(const Json& reference) { return OutputBytes(reference["outputs"]); }

TEST(CheckBatchesTest, OutputBytesCountEveryOutputsElementsTimesItsDtypesSize) {
  EXPECT_EQ(Bytes(Reference(4096, 393216, "torch.float32")), 6442450944);
  EXPECT_EQ(Bytes(Reference(10, 10, "torch.bfloat16")), 200);
  Json two = Reference(10, 10, "torch.float64");
  two["outputs"].push_back(Json{{"shape", Json::array()}, {"dtype", "torch.int64"}});
  EXPECT_EQ(Bytes(two), 808);  // a 0-d output is one element
  EXPECT_EQ(Bytes(Reference(10, 1, "torch.float8_e4m3fn")), 10);
  EXPECT_EQ(Bytes(Reference(10, 1, "torch.complex128")), 160);
  EXPECT_EQ(Bytes(Reference(10, 1, "torch.no_such_type")), 80);  // unknown: 8
}

TEST(CheckBatchesTest, SmallOutputsStayOneBatchAsBefore) {
  auto batches = CheckBatches(Reference(1024, 1024, "torch.float32"), kTrials, kTwoGiB);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], kTrials);
  EXPECT_EQ(CheckBatches(Reference(1, 1, "torch.float32"), {}, 1).size(), 1u);
}

TEST(CheckBatchesTest, LargeOutputsGoOneTrialABatchInOrder) {
  // KernelBench level1/19_ReLU: 6 GiB an output, over the bound alone.
  auto batches = CheckBatches(Reference(4096, 393216, "torch.float32"), kTrials, kTwoGiB);
  ASSERT_EQ(batches.size(), 4u);
  for (std::size_t i = 0; i < kTrials.size(); ++i) {
    EXPECT_EQ(batches[i], std::vector<std::string>{kTrials[i]});
  }
}

TEST(CheckBatchesTest, BatchesHoldAsManyTrialsAsTheBoundAllows) {
  // 600 MiB a trial, 2 GiB a batch: three trials, then the rest.
  auto batches = CheckBatches(Reference(600, 1 << 18, "torch.float32"), kTrials, kTwoGiB);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], (std::vector<std::string>{"check_0", "check_1", "check_2"}));
  EXPECT_EQ(batches[1], std::vector<std::string>{"extra_0"});
}

// The real runner on CPU with every trial in a batch of its own: a correct candidate keeps its
// verdict and every trial's row, and a result cache keyed on the input buffer is still caught by
// the refill, which now runs in a later request than the trial whose buffers it refills.
TEST(CheckBatchesTest, TrialsCheckedOneABatchKeepVerdictsAndTheRefillStillCatchesACache) {
  const std::string binary = KERNELPRO_BINARY_DIR;
  const std::string root = KERNELPRO_SOURCE_DIR;
  WorkerOptions worker;
  worker.scratch_dir = binary + "/check-batches-scratch";
  // The compiled swish the cheat imports from a folder above its own (as the eval tests do).
  worker.sandbox.read_only = {root + "/tests/candidates/swish_ext.py"};
  std::filesystem::create_directories(worker.scratch_dir);
  auto client = WorkerClient::Create(worker);
  ASSERT_TRUE(client.ok()) << client.status().message();
  EvalOptions options;
  options.device = "cpu";
  options.cache_dir = binary + "/test-cache";  // shared: the reference and builds are there
  options.work_dir = binary + "/check-batches-work";
  options.precompiled_headers = true;  // as the eval tests build, so their builds are reused
  options.shapes = "off";
  options.correctness_trials = 3;
  options.extra_trials = 1;
  options.sandbox_read_only = worker.sandbox.read_only;
  options.timing_trials = 6;
  options.time_budget_s = 2;
  options.check_batch_bytes = 1;  // one trial a batch
  Executor executor(*client, options);
  auto report =
      executor.Evaluate(root + "/tests/problems/tiny_swish.py",
                        {root + "/tests/candidates/good/cpu_tiny_swish.py",
                         root + "/tests/candidates/adversarial/common/cache_by_pointer.py"});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->results.size(), 2u);
  const EvalResult& good = report->results[0];
  EXPECT_EQ(good.status, EvalStatus::kCorrect) << good.message;
  std::vector<std::string> rows;  // the check trials' rows, then the sampled timed calls'
  for (const Json& row : good.correctness) rows.push_back(JsonGet<std::string>(row, "trial", ""));
  ASSERT_GE(rows.size(), 5u);
  rows.resize(5);
  EXPECT_EQ(rows, (std::vector<std::string>{"check_0", "check_1", "check_2", "extra_0", "refill"}));
  const EvalResult& cheat = report->results[1];
  EXPECT_EQ(cheat.status, EvalStatus::kIncorrect) << cheat.message;
  EXPECT_NE(cheat.message.find("trial "), std::string::npos) << cheat.message;
}

}  // namespace check_batches_test
}  // namespace kernelpro::eval
