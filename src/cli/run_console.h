// RunConsole: a run's observer (app/run_observer.h) for the terminal, as users of `kernelpro
// optimize|resume` see it: "kernelpro optimize: run directory DIR" and one line per iteration on
// stdout; notes and errors on stderr, each "kernelpro optimize: ..." ("kernelpro resume: ..." for
// a resumed run); at the end "stopped: ...", "best: ...", "report: ..." and "LLM: ..." on stdout.
// Lines printed while the progress display (core/progress.h) shows a step go above it, so that
// none tears its status line.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "app/run_observer.h"
#include "core/progress.h"

namespace kernelpro::cli {

class RunConsole : public app::RunObserver {
 public:
  // `command`: "optimize" or "resume"; `progress` may be null (--quiet).
  RunConsole(std::string command, std::shared_ptr<ProgressReporter> progress);

  void Note(const std::string& line) override;
  void Failed(const std::string& message) override;
  void Started(const std::string& run_dir) override;
  void IterationStarted(int iteration, int iterations) override;
  void IterationEnded(const search::IterationProgress& progress, bool cost_known) override;
  void Interrupted(const std::string& run_dir, const std::string& message, bool recorded) override;
  void Finished(const app::RunClosing& closing) override;

 private:
  void Say(std::ostream& out, const std::string& line) const;

  std::string command_;
  std::shared_ptr<ProgressReporter> progress_;
};

// "iteration 2/4  optimize from n1: correct 1.52x [1.48, 1.55] accepted  | best n3 1.52x ...".
std::string IterationLine(const search::IterationProgress& p, bool cost_known);

}  // namespace kernelpro::cli
