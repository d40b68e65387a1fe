// A run as one library call (DESIGN.md §4, app/): one optimisation run, new or resumed, from its
// search::RunConfig to its outcome. RunSearch wires what the search needs around
// search::Orchestrator: the run store, the LLM backend (a resumed sequential cassette continues
// after the replies earlier processes were served), the executor, Stage 1, the GPU the prompts
// target, the CUTLASS kit, the NVML energy meter and the progress display; it runs the search,
// writes the run's files (best.py, report.md, report.html) and hands its closing facts to the
// observer.
// `kernelpro optimize`, `kernelpro resume` and every task of `kernelpro suite optimize` (each in a
// child process of its own, cli/run_request.h) run through RunSearch.
//
// What stays with the caller: turning options into a RunConfig. Its checks (the cost limit, the
// tools' registry, the LLM and the device answer) and a new run's directory (made, locked, taken
// back when RunOutcome::recorded says that nothing worth resuming was made) are app/new_run.h's;
// a resumed run's directory is locked by the caller. The executor, the device's inspection and the
// prompt GPU's choice are made here (app/executor_setup.h, app/prompt_gpu.h).
//
// Output: none. What happens goes to RunOptions::observer (app/run_observer.h); the command line's
// observer prints it (cli/run_console.h).
//
// Thread-safety: one run per process at a time (a run sets the process's termination note,
// core/termination.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agents/gpu_target.h"
#include "app/run_observer.h"
#include "core/json_io.h"
#include "core/progress.h"
#include "core/status.h"
#include "eval/executor.h"
#include "search/orchestrator.h"
#include "search/run_config.h"
#include "store/run_store.h"
#include "tools/registry.h"

namespace kernelpro::app {

// The test seams of a run: where a test stops the process, to prove that a run killed at that
// instant resumes with nothing lost and nothing done twice. Production leaves them empty; the
// tests' binary installs them (cli/cli_main.h).
struct RunHooks {
  // After each journal step is recorded done (search/journal.h).
  std::function<void(const store::StepKey&)> after_step;
  // After each LLM exchange is stored (search/exchange_sink.h).
  std::function<void(const store::LlmExchangeRecord&)> after_exchange;
};

struct RunOptions {
  // Continue the run the directory's store holds (`kernelpro resume`); false: start one in a store
  // that holds none.
  bool resume = false;
  // The tools the profile step runs (tools/tool_config.h: BuildRegistry of RunConfig::tools).
  // Required; must outlive the call.
  const tools::ToolRegistry* registry = nullptr;
  // The progress display (core/progress.h); null: none (--quiet).
  std::shared_ptr<ProgressReporter> progress;
  // Told everything the run has to say (app/run_observer.h). Required; must outlive the call.
  RunObserver* observer = nullptr;
  RunHooks hooks;
};

struct RunOutcome {
  // The search reached its stop condition and the run's files are written; false: the run could
  // not start or stopped early (the observer was told why).
  bool finished = false;
  // A correct kernel was found (the tree's fastest correct node).
  bool found = false;
  // The run holds something worth resuming: an LLM exchange (see HoldsExchanges; a resumed run
  // always does). False when the run stopped before it opened its store.
  bool recorded = false;
  // The search's summary, once it ran to a stop condition.
  std::optional<search::OptimizeSummary> summary;
};

// One run of `config` (problem and run_dir set). A resumed run keeps the options stored with it,
// but for those search::OpenRun lets a process change (budget, run_dir, the machine's own).
RunOutcome RunSearch(search::RunConfig config, const RunOptions& options);

// Whether the run in `store` holds an LLM exchange: paid for, and where every candidate comes
// from. A run that stopped before its first exchange is cheaper to start again than to resume. An
// unreadable store counts as holding one (the user decides).
bool HoldsExchanges(store::RunStore& store);

}  // namespace kernelpro::app
