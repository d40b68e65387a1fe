// kernelpro_test_hooks: the kernelpro command line with the tests' hooks installed, built only
// with the tests (CMakeLists.txt). Its main reads the hooks from its environment, installs them
// (cli/cli_main.h: the commands hand them on as seams, so kernelpro itself reads none of these
// variables), then runs the same CliMain as kernelpro's main:
//
//   KERNELPRO_TEST_KILL_AFTER_STEP=STEP[@ITERATION]
//       SIGKILL right after the journal step STEP (select, generate, evaluate, profile, record,
//       energy) is recorded done, or, for STEP "exchange", right after an LLM exchange is stored;
//       with @ITERATION only in that iteration. Tests prove with it that a run killed at that
//       instant resumes with nothing lost and nothing done twice.
//   KERNELPRO_TEST_KILL_AFTER_VERDICTS=N
//       suite eval: SIGKILL right after the Nth candidate verdict this process saved, so a suite
//       killed mid-task is seen to resume with nothing lost or redone.
//   KERNELPRO_TEST_SETUP_CUTLASS_DIR=DIR
//       look for scripts/setup's CUTLASS copy in DIR (the tests of "no tree anywhere").
//   KERNELPRO_TEST_SCALE_CANDIDATE_TIMES=F
//       eval: the executor's device runner is wrapped in a decorator (ScaledTimesRunner) that
//       reports every timed call of a candidate F times as long as it took (a forged timer
//       result), so the speed of light's rejection is tested end to end.
//   KERNELPRO_TEST_PARSE_ONLY=1
//       stop once the arguments are read, with exit 0 (tests/readme: the README's commands that
//       need a GPU or a key still parse).
//
// The runs of `suite optimize` are children of this binary (/proc/self/exe) and inherit the
// variables, so the hooks reach them too.
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_main.h"
#include "core/stats.h"
#include "core/termination.h"
#include "cutlass/locate.h"
#include "eval/device_runner.h"
#include "eval/speed_of_light.h"

namespace {

using kernelpro::eval::CandidateBatch;
using kernelpro::eval::DeviceRun;
using kernelpro::eval::DeviceRunner;
using kernelpro::eval::EvalContext;
using kernelpro::eval::EvalResult;
using kernelpro::eval::SharedReference;

// A candidate's timing as it would read had each of its timed calls taken `scale` times as long:
// its calls, their summary, the speedups against it; then its time is judged against the speed of
// light already placed beside it, as the production runner judged the real one.
void ScaleCandidateTimes(double scale, EvalResult& result) {
  if (!result.candidate_time || result.status != kernelpro::eval::EvalStatus::kCorrect) return;
  kernelpro::eval::TimingSummary& time = *result.candidate_time;
  for (double& t : time.samples) t *= scale;
  for (double& t : time.block_medians) t *= scale;
  time.summary = kernelpro::Summarize(time.samples);
  for (auto* speedup : {&result.speedup, &result.speedup_vs_compiled}) {
    if (!*speedup) continue;
    (*speedup)->estimate /= scale;
    (*speedup)->low /= scale;
    (*speedup)->high /= scale;
  }
  if (result.speedup_in_process) *result.speedup_in_process /= scale;
  if (result.speed_of_light && result.speed_of_light->available) {
    kernelpro::eval::JudgeSpeedOfLight(*result.speed_of_light, result);
  }
}

// The decorator: the wrapped runner runs the device steps; what it reports of each candidate's
// timed calls is scaled before the executor sees it. Its progress lines are the real run's.
class ScaledTimesRun : public DeviceRun {
 public:
  ScaledTimesRun(std::unique_ptr<DeviceRun> inner, CandidateBatch& batch, double scale)
      : inner_(std::move(inner)), batch_(batch), scale_(scale) {}

  void RunAll(SharedReference& reference) override {
    const std::vector<std::size_t> pending = batch_.Pending();
    inner_->RunAll(reference);
    for (std::size_t i : pending) ScaleCandidateTimes(scale_, batch_.results[i]);
  }

 private:
  std::unique_ptr<DeviceRun> inner_;
  CandidateBatch& batch_;
  double scale_;
};

class ScaledTimesRunner : public DeviceRunner {
 public:
  ScaledTimesRunner(std::shared_ptr<DeviceRunner> inner, double scale)
      : inner_(std::move(inner)), scale_(scale) {}

  std::unique_ptr<DeviceRun> Begin(const EvalContext& context, const std::string& problem,
                                   CandidateBatch& batch) override {
    return std::make_unique<ScaledTimesRun>(inner_->Begin(context, problem, batch), batch, scale_);
  }

 private:
  std::shared_ptr<DeviceRunner> inner_;
  double scale_;
};

// KERNELPRO_TEST_KILL_AFTER_STEP's value.
struct KillPoint {
  std::string step;
  int iteration = -1;  // any
};

void KillIf(const KillPoint& point, const std::string& step, int iteration) {
  if (point.step != step) return;
  if (point.iteration >= 0 && point.iteration != iteration) return;
  std::cout.flush();
  std::raise(SIGKILL);
}

kernelpro::cli::CliHooks HooksFromEnvironment() {
  kernelpro::cli::CliHooks hooks;
  if (const char* value = std::getenv("KERNELPRO_TEST_KILL_AFTER_STEP"); value && *value) {
    KillPoint point;
    std::string text = value;
    if (std::size_t at = text.find('@'); at != std::string::npos) {
      point.iteration = std::atoi(text.c_str() + at + 1);
      text = text.substr(0, at);
    }
    point.step = text;
    hooks.run.after_step = [point](const kernelpro::store::StepKey& key) {
      KillIf(point, key.step, key.iteration);
    };
    hooks.run.after_exchange = [point](const kernelpro::store::LlmExchangeRecord& record) {
      KillIf(point, "exchange", record.iteration);
    };
  }
  if (const char* value = std::getenv("KERNELPRO_TEST_KILL_AFTER_VERDICTS"); value && *value) {
    const int limit = std::atoi(value);
    auto saved = std::make_shared<std::atomic<int>>(0);
    hooks.after_suite_verdict = [limit, saved] {
      if (++*saved >= limit) std::raise(SIGKILL);
    };
  }
  if (const char* value = std::getenv("KERNELPRO_TEST_SCALE_CANDIDATE_TIMES"); value && *value) {
    const double scale = std::atof(value);
    hooks.device_runner = [scale](std::shared_ptr<DeviceRunner> runner) {
      return std::make_shared<ScaledTimesRunner>(std::move(runner), scale);
    };
  }
  if (const char* value = std::getenv("KERNELPRO_TEST_PARSE_ONLY");
      value && std::string(value) == "1") {
    hooks.stop_after_parse = true;
  }
  return hooks;
}

}  // namespace

int main(int argc, char** argv) {
  kernelpro::cli::InstallCliHooks(HooksFromEnvironment());
  if (const char* dir = std::getenv("KERNELPRO_TEST_SETUP_CUTLASS_DIR")) {
    kernelpro::cutlass::OverrideSetupCutlassDir(dir);
  }
  // As kernelpro's main (cli/main.cc): before any thread starts.
  kernelpro::InstallTerminationHandler();
  return kernelpro::cli::CliMain(argc, argv);
}
