// The job queue with a fake evaluator: one job per slot, oldest first, refusals, failures as
// records with the code a waiting request answers with, drain, and a journal that survives.
#include "serve/job_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "serve/fake_evaluator_testing.h"

namespace kernelpro::serve {
namespace serve_job_queue_test {

using testing::FakeEvaluator;

EvalJob Job(const std::string& candidate) {
  EvalJob job;
  job.problem_source = "class Model: ...";
  job.candidate_source = candidate;
  return job;
}

TEST(JobQueueTest, RunsNoMoreJobsAtOnceThanSlotsAndAnswersEachWithItsVerdict) {
  FakeEvaluator evaluator(2);
  ServeMetrics metrics;
  JobQueue queue(evaluator, nullptr, metrics, {});
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(queue.Submit(Job("sleep:30")).id);
  for (const std::string& id : ids) {
    ASSERT_FALSE(id.empty());
    std::optional<JobRecord> done = queue.Wait(id);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->state, JobState::kDone);
    EXPECT_EQ(done->result["status"], "correct");
    EXPECT_EQ(done->result["job"], id);
  }
  EXPECT_EQ(evaluator.max_running(), 2) << "two slots, never more than two jobs at once";
  const std::string text = metrics.RenderText(queue.Gauges());
  EXPECT_NE(text.find("kernelpro_verdicts_total{status=\"correct\"} 6"), std::string::npos);
  EXPECT_NE(text.find("kernelpro_job_phase_seconds_count{phase=\"total\"} 6"), std::string::npos);
  EXPECT_NE(text.find("kernelpro_job_phase_seconds_count{phase=\"build\"} 6"), std::string::npos);
}

TEST(JobQueueTest, AFailedEvaluationIsARecordWithTheCodeARequestAnswersWith) {
  FakeEvaluator evaluator;
  ServeMetrics metrics;
  JobQueue queue(evaluator, nullptr, metrics, {});
  std::optional<JobRecord> problem = queue.Wait(queue.Submit(Job("problem-error")).id);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->state, JobState::kFailed);
  EXPECT_EQ(problem->http_code, 422);
  EXPECT_EQ(problem->error, "problem error: no Model");
  std::optional<JobRecord> server = queue.Wait(queue.Submit(Job("server-error")).id);
  ASSERT_TRUE(server);
  EXPECT_EQ(server->http_code, 500);
  // The queue goes on.
  EXPECT_EQ(queue.Wait(queue.Submit(Job("fine")).id)->state, JobState::kDone);
}

TEST(JobQueueTest, AFullQueueRefusesAndDrainingCancelsTheQueuedAndFinishesTheRunning) {
  FakeEvaluator evaluator;
  ServeMetrics metrics;
  JobQueue queue(evaluator, nullptr, metrics, {/*max_queued=*/2, /*keep=*/100});
  const std::string running = queue.Submit(Job("block")).id;
  while (evaluator.started() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::string a = queue.Submit(Job("x")).id;
  const std::string b = queue.Submit(Job("x")).id;
  JobQueue::Submitted full = queue.Submit(Job("x"));
  EXPECT_TRUE(full.id.empty());
  EXPECT_EQ(full.refusal, JobQueue::Refusal::kQueueFull);
  EXPECT_EQ(queue.Gauges().queued, 2);

  std::thread drain([&] { queue.Drain(); });
  while (!queue.Gauges().draining) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(queue.Submit(Job("x")).refusal, JobQueue::Refusal::kDraining);
  EXPECT_EQ(queue.Get(a)->state, JobState::kCancelled);
  EXPECT_EQ(queue.Get(b)->state, JobState::kCancelled);
  EXPECT_EQ(queue.Get(running)->state, JobState::kRunning) << "a running job is finished";
  evaluator.Release();
  drain.join();
  EXPECT_EQ(queue.Get(running)->state, JobState::kDone);
  EXPECT_EQ(evaluator.started(), 1) << "the cancelled jobs never ran";
}

TEST(JobQueueTest, ARestartedServerStillAnswersForTheJobsItJournaled) {
  const std::string dir = ::testing::TempDir() + "/job_queue_journal_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  const std::string path = dir + "/journal.jsonl";
  std::string done_id;
  {
    FakeEvaluator evaluator;
    ServeMetrics metrics;
    auto journal = JobJournal::Open(path, 100, nullptr);
    ASSERT_TRUE(journal.ok()) << journal.status().message();
    JobQueue queue(evaluator, journal->get(), metrics, {});
    done_id = queue.Submit(Job("fine")).id;
    ASSERT_EQ(queue.Wait(done_id)->state, JobState::kDone);
  }
  std::vector<JobRecord> recovered;
  auto journal = JobJournal::Open(path, 100, &recovered);
  ASSERT_TRUE(journal.ok());
  FakeEvaluator evaluator;
  ServeMetrics metrics;
  JobQueue queue(evaluator, journal->get(), metrics, {}, recovered);
  std::optional<JobRecord> again = queue.Get(done_id);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->state, JobState::kDone);
  EXPECT_EQ(again->result["job"], done_id);
  std::filesystem::remove_all(dir);
}

TEST(JobQueueTest, JobIdsAreLongAndDoNotRepeat) {
  const std::string a = NewJobId();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, NewJobId());
}

}  // namespace serve_job_queue_test
}  // namespace kernelpro::serve
