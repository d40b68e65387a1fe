// The benchmarking agent (paper §3.2.1, Stage 1): classifies a problem's bottleneck once, before
// any candidate is written, and hands the ReferenceAnalysis to the profiling agent (which filters
// its tools by the class) and to the orchestrator (which places timed kernels on the roofline).
//
// Stage 1 is the worker's analyze step on the reference (FLOPs, minimum bytes, device) classified
// on the roofline, then, on a GPU, an ncu profile of the reference for the measured side
// (roofline/reference_analysis.h has the rules). It costs tens of seconds, so the agent runs it
// once per problem: the result is kept in memory, and when a file is given (a run directory's
// stage1.json) it is also written there (the `kernelpro analyze --json` form, so `kernelpro advise
// --analysis` reads it too), which a resumed run loads instead of running Stage 1 again. A
// stage1.json for another problem, or one that does not parse, is replaced. A failed Stage 1 is
// remembered in memory only (a resumed run tries again) and is a value, not the end of the run:
// without a class the profiling agent runs every speed tool.
//
// BenchmarkingAgent is safe to call from several threads at once: calls are serialised, so
// concurrent requests for one problem run Stage 1 once and all get its result.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/executor.h"
#include "profile/ncu_runner.h"
#include "roofline/hardware.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::agents {

// Stage 1, theoretical side: the worker's analyze step on the problem's reference, on the GPU it
// detects (or `forced`), classified on the roofline. No ncu run.
Result<roofline::ReferenceAnalysis> RunStageOne(eval::Executor& executor,
                                                const std::string& problem,
                                                const std::optional<roofline::GpuSpec>& forced,
                                                const roofline::RooflineOptions& roofline);

struct BenchmarkingOptions {
  std::optional<roofline::GpuSpec>
      gpu;  // analyse for this GPU instead of the detected one (needed on cpu)
  roofline::RooflineOptions roofline;
  bool measure = true;      // profile the reference with ncu for the measured side (cuda only)
  profile::NcuOptions ncu;  // that profile's options
};

// Stage 1 in full: RunStageOne, then the measured side from an ncu profile of the reference when
// the executor runs on cuda and `measure` is set. A failed ncu run leaves the analysis
// theoretical with a note saying why; only a failed analyze step is an error.
Result<roofline::ReferenceAnalysis> RunStageOneMeasured(eval::Executor& executor,
                                                        const std::string& problem,
                                                        const BenchmarkingOptions& options);

class BenchmarkingAgent {
 public:
  // Runs Stage 1 for a problem (its absolute, normalised path). Tests pass a fake.
  using StageOneRunner =
      std::function<Result<roofline::ReferenceAnalysis>(const std::string& problem)>;

  explicit BenchmarkingAgent(StageOneRunner run_stage_one);

  // An agent running RunStageOneMeasured on `executor`, which must outlive it.
  static BenchmarkingAgent ForExecutor(eval::Executor& executor, BenchmarkingOptions options = {});

  // The problem's Stage-1 analysis: from memory, else from the file `saved` (a run directory's
  // stage1.json, store/run_layout.h), else by running Stage 1 (and then saving it to `saved` when
  // one is given; a failed save is a note on the analysis, not an error).
  Result<roofline::ReferenceAnalysis> Analyze(const std::string& problem,
                                              const std::string& saved = "");

  // How many times Stage 1 actually ran (cache hits excluded).
  int stage_one_runs() const;

 private:
  StageOneRunner run_stage_one_;
  mutable std::mutex mu_;
  std::map<std::string, Result<roofline::ReferenceAnalysis>> cache_;  // by absolute problem path
  int runs_ = 0;
};

}  // namespace kernelpro::agents
