// The executor's extension points put to use from outside it: a fake builder and a fake device
// runner are handed to an Executor (set_builder, set_device_runner) and the evaluation's verdicts
// are what they reported. The static checks, the inputs probe and the reference step are the real
// ones (the worker on the CPU), so the fake runner is begun and run where the real one would be.
#include "eval/device_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eval/builder.h"
#include "eval/executor.h"

namespace kernelpro::eval {
namespace eval_device_runner_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

// What the fake runner reports for a candidate, by its file name.
struct Reported {
  EvalStatus status = EvalStatus::kCorrect;
  std::string message;
  double speedup = 0;  // 0: none
};

// What the fake runner saw of the evaluation.
struct Seen {
  std::string problem;
  std::vector<std::string> run;  // the candidates it was asked to run, in order
  std::string reference_digest;  // the evaluation's reference, as RunAll got it
  bool progress_given = false;
};

class FakeRun : public DeviceRun {
 public:
  FakeRun(const EvalContext& context, CandidateBatch& batch,
          const std::map<std::string, Reported>& reports, Seen& seen)
      : context_(context), batch_(batch), reports_(reports), seen_(seen) {}

  void RunAll(SharedReference& reference) override {
    seen_.reference_digest = JsonGet<std::string>(reference.Get(), "manifest_digest", "");
    seen_.progress_given = context_.progress != nullptr;
    for (std::size_t i : batch_.Pending()) {
      EvalResult& result = batch_.results[i];
      const std::string name = std::filesystem::path(result.candidate).filename().string();
      seen_.run.push_back(name);
      const Reported& report = reports_.at(name);
      result.status = report.status;
      result.message = report.message;
      result.gpu = "fake";
      if (report.speedup > 0) result.speedup = RatioInterval{report.speedup, 0.9, 1.1, 0.95};
      if (context_.progress) context_.progress->ItemFinished(batch_.items[i]);
    }
  }

 private:
  const EvalContext& context_;
  CandidateBatch& batch_;
  const std::map<std::string, Reported>& reports_;
  Seen& seen_;
};

class FakeDeviceRunner : public DeviceRunner {
 public:
  explicit FakeDeviceRunner(std::map<std::string, Reported> reports)
      : reports_(std::move(reports)) {}

  std::unique_ptr<DeviceRun> Begin(const EvalContext& context, const std::string& problem,
                                   CandidateBatch& batch) override {
    seen.problem = problem;
    return std::make_unique<FakeRun>(context, batch, reports_, seen);
  }

  Seen seen;

 private:
  std::map<std::string, Reported> reports_;
};

// Builds nothing: every candidate "built" (cached), but the one named `broken`.
class FakeBuilder : public Builder {
 public:
  explicit FakeBuilder(std::string broken) : broken_(std::move(broken)) {}

  void Build(const EvalContext&, const std::string& candidate, EvalResult& result) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      built_.push_back(std::filesystem::path(candidate).filename().string());
    }
    result.build_cached = true;
    if (std::filesystem::path(candidate).filename() == broken_) {
      result.status = EvalStatus::kCompileError;
      result.message = "the fake builder refused it";
      return;
    }
    result.status = EvalStatus::kCorrect;
  }

  std::vector<std::string> built() {
    std::lock_guard<std::mutex> lock(mutex_);
    return built_;
  }

 private:
  std::string broken_;
  std::mutex mutex_;
  std::vector<std::string> built_;
};

class CountingProgress : public ProgressSink {
 public:
  void BatchStarted(int) override {}
  void StepStarted(const ProgressStep&) override {}
  void StepFinished(const ProgressStep&, const std::string&) override {}
  void ItemFinished(const ProgressStep&) override { ++finished; }
  int finished = 0;  // from the build threads too: only read after Evaluate
};

TEST(DeviceRunnerTest, AFakeRunnerPutInAnExecutorDecidesTheVerdicts) {
  const std::string binary = KERNELPRO_BINARY_DIR;
  WorkerOptions worker;
  worker.scratch_dir = binary + "/fake-runner-scratch";
  std::filesystem::create_directories(worker.scratch_dir);
  auto client = WorkerClient::Create(worker);
  ASSERT_TRUE(client.ok()) << client.status().message();
  EvalOptions options;
  options.device = "cpu";
  options.cache_dir = binary + "/test-cache";  // shared: the reference is cached there
  options.work_dir = binary + "/fake-runner-work";
  options.correctness_trials = 2;
  options.extra_trials = 0;
  options.shapes = "off";
  Executor executor(*client, options);
  auto runner = std::make_shared<FakeDeviceRunner>(std::map<std::string, Reported>{
      {"cpu_tiny_swish.py", {EvalStatus::kCorrect, "", 2.5}},
      {"cpu_fixed_shape_swish.py", {EvalStatus::kIncorrect, "the fake runner saw it differ", 0}}});
  auto builder = std::make_shared<FakeBuilder>("cpu_relu_rand.py");
  executor.set_device_runner(runner);
  executor.set_builder(builder);
  CountingProgress progress;
  executor.set_progress(&progress);

  const std::string good = kRoot + "/tests/candidates/good/";
  auto report = executor.Evaluate(
      kRoot + "/tests/problems/tiny_swish.py",
      {good + "cpu_tiny_swish.py", good + "cpu_fixed_shape_swish.py", good + "cpu_relu_rand.py"});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->results.size(), 3u);

  // The verdicts are the fake runner's, the failed build's the fake builder's.
  const EvalResult& correct = report->results[0];
  EXPECT_EQ(correct.status, EvalStatus::kCorrect) << correct.message;
  ASSERT_TRUE(correct.speedup.has_value());
  EXPECT_DOUBLE_EQ(correct.speedup->estimate, 2.5);
  EXPECT_EQ(correct.gpu, "fake");
  EXPECT_EQ(report->results[1].status, EvalStatus::kIncorrect);
  EXPECT_EQ(report->results[1].message, "the fake runner saw it differ");
  EXPECT_EQ(report->results[2].status, EvalStatus::kCompileError);
  EXPECT_EQ(report->results[2].message, "the fake builder refused it");

  // Run where the real runner would be: after the builds, against the evaluation's reference,
  // only the candidates still in the running, reporting to the executor's progress.
  EXPECT_EQ(runner->seen.problem, kRoot + "/tests/problems/tiny_swish.py");
  EXPECT_EQ(runner->seen.run,
            (std::vector<std::string>{"cpu_tiny_swish.py", "cpu_fixed_shape_swish.py"}));
  EXPECT_FALSE(runner->seen.reference_digest.empty());
  EXPECT_EQ(runner->seen.reference_digest,
            JsonGet<std::string>(report->reference, "manifest_digest", ""));
  EXPECT_TRUE(runner->seen.progress_given);
  EXPECT_EQ(builder->built().size(), 3u);
  EXPECT_EQ(progress.finished, 3);  // the failed build's item, and the two the runner finished
  // The production runner is still there to wrap, for a caller that decorates instead.
  EXPECT_EQ(executor.device_runner(), runner);
}

}  // namespace eval_device_runner_test
}  // namespace kernelpro::eval
