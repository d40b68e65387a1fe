#include "eval/verdict.h"

#include <gtest/gtest.h>

#include <csignal>

namespace kernelpro::eval {
namespace eval_verdict_test {

TEST(VerdictTest, StatusNamesAreTheDocumentedOnes) {
  EXPECT_STREQ(EvalStatusName(EvalStatus::kCompileError), "compile_error");
  EXPECT_STREQ(EvalStatusName(EvalStatus::kRuntimeError), "runtime_error");
  EXPECT_STREQ(EvalStatusName(EvalStatus::kTimeout), "timeout");
  EXPECT_STREQ(EvalStatusName(EvalStatus::kIncorrect), "incorrect");
  EXPECT_STREQ(EvalStatusName(EvalStatus::kCorrect), "correct");
  EXPECT_STREQ(EvalStatusName(EvalStatus::kLlmError), "llm_error");
}

TEST(VerdictTest, TimeoutIsClassifiedAsTimeout) {
  ProcessResult p;
  p.started = true;
  p.timed_out = true;
  p.term_signal = SIGKILL;
  p.wall_time = std::chrono::seconds(20);
  auto [status, message] = ClassifyProcessFailure("check", p);
  EXPECT_EQ(status, EvalStatus::kTimeout);
  EXPECT_NE(message.find("check"), std::string::npos);
}

TEST(VerdictTest, SegfaultNamesTheSignalAndKeepsTheStderrTail) {
  ProcessResult p;
  p.started = true;
  p.term_signal = SIGSEGV;
  p.stderr_text = "line one\nFatal Python error: Segmentation fault\n";
  auto [status, message] = ClassifyProcessFailure("check", p);
  EXPECT_EQ(status, EvalStatus::kRuntimeError);
  EXPECT_NE(message.find("SIGSEGV"), std::string::npos) << message;
  EXPECT_NE(message.find("Fatal Python error"), std::string::npos) << message;
}

TEST(VerdictTest, SignalWithEmptyOrNoiseOnlyStderrStillGivesAMessage) {
  ProcessResult p;
  p.started = true;
  p.term_signal = SIGSEGV;
  for (const char* err :
       {"", "\n", "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n"}) {
    p.stderr_text = err;
    auto [status, message] = ClassifyProcessFailure("check", p);
    EXPECT_EQ(status, EvalStatus::kRuntimeError);
    EXPECT_EQ(message, "worker killed by SIGSEGV (segmentation fault) during check") << err;
  }
}

TEST(VerdictTest, TheWorkersOwnWatchdogIsATimeoutNamingItsLimit) {
  ProcessResult p;
  p.started = true;
  p.exited = true;
  p.exit_code = 1;
  p.stderr_text =
      "Timeout (0:00:05)!\nThread 0x00007f0000000000 (most recent call first):\n"
      "  File \"/tmp/cand.py\", line 12 in forward\n";
  auto [status, message] = ClassifyProcessFailure("check", p);
  EXPECT_EQ(status, EvalStatus::kTimeout);
  EXPECT_NE(message.find("time limit (0:00:05) during check"), std::string::npos) << message;
  EXPECT_NE(message.find("line 12 in forward"), std::string::npos) << message;
  // An ordinary exit 1 is not a timeout.
  p.stderr_text = "Traceback (most recent call last):\nValueError: boom\n";
  EXPECT_EQ(ClassifyProcessFailure("check", p).first, EvalStatus::kRuntimeError);
}

TEST(VerdictTest, AWorkerThatExitsCleanlyWithoutAResultIsNotCalledAnExitCode) {
  ProcessResult p;
  p.started = true;
  p.exited = true;
  p.exit_code = 0;
  auto [status, message] = ClassifyProcessFailure("check", p);
  EXPECT_EQ(status, EvalStatus::kRuntimeError);
  EXPECT_NE(message.find("without writing its result"), std::string::npos) << message;
}

TEST(VerdictTest, WorkerStatusesMapOntoVerdicts) {
  EXPECT_EQ(StatusFromWorker("compile_error"), EvalStatus::kCompileError);
  EXPECT_EQ(StatusFromWorker("timeout"), EvalStatus::kTimeout);
  EXPECT_EQ(StatusFromWorker("worker_error"), EvalStatus::kRuntimeError);
  EXPECT_EQ(StatusFromWorker("runtime_error"), EvalStatus::kRuntimeError);
}

TEST(VerdictTest, JsonHasTheFieldsUsersScriptAgainst) {
  EvalResult r;
  r.status = EvalStatus::kCorrect;
  r.reference_time = TimingSummary{Summarize({2.0, 2.0}), {2.0, 2.0}, {2.0}};
  r.candidate_time = TimingSummary{Summarize({1.0, 1.0}), {1.0, 1.0}, {1.0}};
  r.speedup = RatioInterval{2.0, 1.9, 2.1, 0.95};
  Json j = ToJson(r);
  EXPECT_EQ(j["status"], "correct");
  EXPECT_DOUBLE_EQ(j["reference_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["candidate_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["speedup_interval"][0].get<double>(), 1.9);
  EXPECT_TRUE(j.contains("message"));
  EvalResult failed;
  failed.status = EvalStatus::kIncorrect;
  Json k = ToJson(failed);
  EXPECT_TRUE(k["speedup"].is_null());
  EXPECT_TRUE(k["speedup_interval"].is_null());
}

}  // namespace eval_verdict_test
}  // namespace kernelpro::eval
