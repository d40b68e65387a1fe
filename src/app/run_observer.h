// RunObserver: what a run tells the program around it as it goes (DESIGN.md §4, app/). app/ writes
// nothing to stdout or stderr; everything a user sees of a run comes through this interface. The
// command line shows it on the terminal (cli/run_console.h); a test records it (app/run_test.cc).
//
//   Note ............. a remark while the run works (a skipped stage, the prompt GPU's choice)
//   Failed ........... why the run cannot start or go on (nothing else follows)
//   Started .......... the store is open, the search begins in `run_dir`
//   IterationStarted   iteration i of n begins          } once per iteration
//   IterationEnded ... its outcome and the best so far  }
//   Interrupted ...... the search stopped on an error before its stop condition
//   Finished ......... it reached its stop condition; the run's files are written (RunClosing)
//
// Calls come from the thread that called RunSearch, in the order above.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/run_report.h"
#include "search/orchestrator.h"

namespace kernelpro::app {

// What a finished run leaves, as its closing lines say it.
struct RunClosing {
  std::string run_dir;
  search::StopReason stop = search::StopReason::kIterations;
  std::string stop_message;
  std::optional<report::BestVerdict> best;     // none: the reference stays the answer
  std::optional<std::string> energy_choice;    // with a best: how energy weighed in the choice
  std::string best_kernel;                     // with a best: its best.py
  std::optional<std::string> reference_stays;  // no best, but correct kernels: why not them
  std::vector<std::string> energy_lines;       // what NVML measured of the fastest kernels
  std::string markdown_report, html_report;
  int exchanges = 0;
  double cost_usd = 0;
  bool cost_known = true;  // false: a model without a configured price ("unknown")
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void Note(const std::string& line) = 0;
  virtual void Failed(const std::string& message) = 0;
  virtual void Started(const std::string& run_dir) = 0;
  virtual void IterationStarted(int iteration, int iterations) = 0;
  virtual void IterationEnded(const search::IterationProgress& progress, bool cost_known) = 0;
  // `recorded`: the run holds something worth resuming (RunOutcome::recorded).
  virtual void Interrupted(const std::string& run_dir, const std::string& message,
                           bool recorded) = 0;
  virtual void Finished(const RunClosing& closing) = 0;
};

}  // namespace kernelpro::app
