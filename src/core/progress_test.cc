// The progress display as a person sees it, in both forms, with a fake clock: a golden file per
// form (regenerate after an intended change with KERNELPRO_UPDATE_GOLDEN=1).
#include "core/progress.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kernelpro {
namespace core_progress_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ExpectGolden(const std::string& name, const std::string& text) {
  const std::string golden = kRoot + "/tests/golden/progress/" + name;
  if (std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(kRoot + "/tests/golden/progress");
    std::ofstream(golden) << text;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " missing: run with "
                                               << "KERNELPRO_UPDATE_GOLDEN=1";
  EXPECT_EQ(text, ReadFile(golden)) << name << " changed; review, then regenerate";
}

// An evaluation of two candidates, as the executor reports it: the reference and both builds
// run at once, then the device steps one candidate after the other. The second one fails to build.
void PlayEvaluation(ProgressReporter& progress, double& now, const std::string* stdout_line,
                    std::ostream* stdout_stream) {
  const ProgressStep reference{0, 0, "reference", "computing"};
  const ProgressStep build_a{1, 2, "a.py", "building"}, build_b{2, 2, "b.py", "building"};
  const ProgressStep check_a{1, 2, "a.py", "checking"}, time_a{1, 2, "a.py", "timing"};
  progress.BatchStarted(2);
  progress.StepStarted(build_a);
  progress.StepStarted(build_b);
  progress.StepStarted(reference);
  now += 3.25;
  progress.Tick();
  progress.StepFinished(reference, "");
  now += 9.5;
  progress.StepFinished(build_b, "compile_error");
  progress.ItemFinished(build_b);
  now += 28.45;
  progress.StepFinished(build_a, "");
  progress.StepStarted(check_a);
  now += 2;
  progress.StepFinished(check_a, "");
  progress.StepStarted(time_a);
  now += 1.5;
  if (stdout_line) progress.WriteAbove(*stdout_stream, *stdout_line);
  now += 10.75;
  progress.Tick();
  progress.StepFinished(time_a, "");
  progress.ItemFinished(time_a);
  progress.Finish();
}

ProgressOptions FakeClock(double& now, bool terminal, int width = 100) {
  ProgressOptions options;
  options.terminal = terminal;
  options.width = width;
  options.clock = [&now] { return now; };
  options.tick_seconds = 0;
  return options;
}

TEST(ProgressReporterTest, PipeModeWritesOneLinePerStepWithItsElapsedTime) {
  double now = 100;
  std::ostringstream err;
  ProgressReporter progress(err, "eval", FakeClock(now, /*terminal=*/false));
  PlayEvaluation(progress, now, nullptr, nullptr);
  ExpectGolden("pipe.txt", err.str());
  // Every line is whole, parallel steps never share one, and each step has one line saying how
  // it ended: the reference, two builds, the check and the timing.
  std::istringstream lines(err.str());
  int finished = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("eval: ", 0), 0u) << line;
    EXPECT_EQ(line.find("eval: ", 1), std::string::npos) << "two steps on one line: " << line;
    if (line.find("... ") != std::string::npos) ++finished;
  }
  EXPECT_EQ(finished, 5);
  EXPECT_EQ(err.str().back(), '\n');
}

TEST(ProgressReporterTest, SequentialStepsEachTakeExactlyOneLine) {
  double now = 0;
  std::ostringstream err;
  ProgressReporter progress(err, "eval", FakeClock(now, false));
  const ProgressStep build{1, 1, "cuda_swish.py", "building"};
  progress.StepStarted(build);
  // What a tail -f of the log shows while the step runs.
  EXPECT_EQ(err.str(), "eval: cand 1/1 cuda_swish.py: building...");
  now += 41.2;
  progress.StepFinished(build, "");
  EXPECT_EQ(err.str(), "eval: cand 1/1 cuda_swish.py: building... done in 41.2 s\n");
}

TEST(ProgressReporterTest, APlainLogSaysWhatIsRunningAfterThirtySecondsOfSilence) {
  double now = 0;
  std::ostringstream err;
  ProgressReporter progress(err, "suite", FakeClock(now, false));
  const ProgressStep build{0, 0, "a.py", "building"};
  const ProgressStep other{0, 0, "b.py", "building"};
  progress.StepStarted(build);
  progress.StepStarted(other);
  now += 29;
  progress.Tick();
  const std::string before = err.str();
  now += 2;  // 31 s since the last line
  progress.Tick();
  EXPECT_EQ(err.str(), before + "\nsuite: still at work: a.py building 31 s; b.py building 31 s\n");
  now += 20;  // the heartbeat itself was a line: 20 s of silence since
  progress.Tick();
  now += 11;
  progress.Tick();
  EXPECT_NE(err.str().find("suite: still at work: a.py building 62 s; b.py building 62 s\n"),
            std::string::npos)
      << err.str();
  // In a batch of known size the heartbeat says how many items are done.
  progress.BatchStarted(11);
  progress.ItemFinished(build);
  now += 31;
  progress.Tick();
  EXPECT_NE(err.str().find("suite: still at work (1/11 done): a.py building 93 s"),
            std::string::npos)
      << err.str();
  progress.StepFinished(build, "");
  EXPECT_NE(err.str().find("suite: a.py: building... done in 93.0 s\n"), std::string::npos)
      << err.str();
  // Nothing running: no heartbeat, however long the silence.
  progress.StepFinished(other, "");
  const std::string done = err.str();
  now += 100;
  progress.Tick();
  EXPECT_EQ(err.str(), done);
}

TEST(ProgressReporterTest, TerminalModeRewritesOneStatusLineWithABar) {
  double now = 100;
  std::ostringstream err, out;
  ProgressReporter progress(err, "eval", FakeClock(now, /*terminal=*/true));
  const std::string iteration = "iteration 1/1  initial from ROOT: correct";
  PlayEvaluation(progress, now, &iteration, &out);
  // The golden file shows each redraw on its own line (a "\r" starts each one).
  std::string shown = err.str();
  for (std::size_t at = 0; (at = shown.find('\r', at)) != std::string::npos; at += 2) {
    shown.replace(at, 1, "\n\\r");
  }
  ExpectGolden("terminal.txt", shown);
  EXPECT_EQ(out.str(), iteration + "\n");
  // Nothing is left on screen: the last thing written clears the line.
  EXPECT_EQ(err.str().substr(err.str().size() - 4), "\r\033[K");
  EXPECT_EQ(err.str().find('\n'), std::string::npos) << "a status line must never scroll";
}

TEST(ProgressReporterTest, TerminalLineIsCutToTheWidth) {
  double now = 0;
  std::ostringstream err;
  ProgressReporter progress(err, "eval", FakeClock(now, true, /*width=*/40));
  progress.StepStarted({1, 1, "a_candidate_with_a_very_long_file_name.py", "building"});
  const std::string text = err.str();
  const std::string last = text.substr(text.rfind("\033[K") + 3);
  EXPECT_EQ(last.size(), 39u) << last;
  EXPECT_EQ(last.substr(last.size() - 3), "...");
}

TEST(ProgressReporterTest, WriteAboveEndsAnOpenPipeLineFirst) {
  double now = 0;
  std::ostringstream err;
  ProgressReporter progress(err, "optimize", FakeClock(now, false));
  progress.StepStarted({0, 0, "programmer", "asking the model"});
  progress.WriteAbove(err, "kernelpro optimize: a note");
  now += 2;
  progress.StepFinished({0, 0, "programmer", "asking the model"}, "");
  EXPECT_EQ(err.str(),
            "optimize: programmer: asking the model...\n"
            "kernelpro optimize: a note\n"
            "optimize: programmer: asking the model... done in 2.0 s\n");
}

}  // namespace core_progress_test
}  // namespace kernelpro
