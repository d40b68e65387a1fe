// The verdict on one candidate: a status class, a short message, and the evidence behind it.
//
// A failed candidate is data, never an error of kernelpro: every way a candidate can fail maps
// onto exactly one of five statuses, and the search and the reports count them. A sixth,
// llm_error, is never an evaluation's: the search gives it to a node whose candidate never
// existed because the LLM call failed (search/tree.h), so that one name table serves the tree,
// the run store and the reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/stats.h"
#include "core/subprocess.h"
#include "eval/call_facts.h"
#include "eval/shape_check.h"
#include "eval/step_costs.h"

namespace kernelpro::eval {

enum class EvalStatus { kCompileError, kRuntimeError, kTimeout, kIncorrect, kCorrect, kLlmError };

// "compile_error", "runtime_error", "timeout", "incorrect", "correct", "llm_error".
const char* EvalStatusName(EvalStatus status);
// The status named `text` (exactly as EvalStatusName spells it); none for any other text.
std::optional<EvalStatus> ParseEvalStatus(std::string_view text);

// A finding of the static scan or of a worker: 'fail' findings make a candidate incorrect.
struct Finding {
  std::string rule;      // e.g. "reference_op", "patching", "input_mutation", "side_stream"
  std::string severity;  // "fail" or "warn"
  std::string message;
};

struct TimingSummary {
  SampleSummary summary;              // over all samples, in milliseconds
  std::vector<double> samples;        // every timed call, in milliseconds, in call order
  std::vector<double> block_medians;  // one per timing round (drift from round to round)
};

// Where a timed candidate stands against the fastest time physically possible for the problem's
// work on this machine (speed_of_light.h says how both numbers are made).
struct SpeedOfLight {
  bool available = false;  // false: no bound could be made here (`note` says why)
  double bound_s = 0;      // the roofline's time: the reference's FLOPs and fewest bytes at peak
  double floor_s = 0;      // no correct kernel runs faster: counted FLOPs, inputs read once
  double fraction = 0;     // bound_s / the candidate's median time (1.0: at the speed of light)
  double reference_fraction = 0;  // bound_s / the reference's median time
  bool enforced = false;          // a time below the floor makes the candidate incorrect
  // Set where the bound is no peak a kernel cannot pass (on the CPU): then no fraction is shown,
  // this says why, and only the floor is used.
  std::string no_fraction;
  std::string basis;  // the machine's peaks and where they come from
  std::string note;   // why there is no bound, or why the floor is not enforced
};

struct EvalResult {
  std::string candidate;
  EvalStatus status = EvalStatus::kRuntimeError;
  std::string message;
  std::vector<Finding> findings;
  std::string precision_warning;  // fp64 check outcome when reported rather than failed
  // The GPU its device steps ran on (an ordinal of --gpus); "" for the process's default device
  // or when it never reached them.
  std::string gpu;
  // Where its code ran: the sandbox's description (eval/sandbox.h), or the warning that it ran
  // unconfined under --unsafe-no-sandbox. Empty when no step of it ran candidate code.
  std::string sandbox;
  bool sandboxed = false;

  // Build.
  bool build_cached = false;
  std::vector<std::string> shared_objects;  // built extension(s), for SASS analysis
  std::string diagnostics;                  // bounded compiler output on failure
  // What the builds did differently from torch's ninja call (a precompiled header used or why
  // not, cuda.cu compiled with lighter headers) and what the pch step reported.
  std::vector<std::string> build_notes;

  // Correctness evidence: the compare step's per-trial rows.
  Json correctness = Json::array();
  // The checks on shapes the benchmark never showed (eval/shape_check.h); mode "off" when none ran.
  ShapeChecks shapes;

  // Timing (present only for correct candidates).
  std::optional<TimingSummary> reference_time;
  std::optional<TimingSummary> candidate_time;
  std::optional<RatioInterval> speedup;
  // How the calls were timed (on CUDA: the span of each call's device work from CUPTI records),
  // and whether both sides were timed from those records (false: CUDA events, or the CPU).
  std::string timing_method;
  bool device_records = false;
  // The correctness criterion the verdict was judged by (eval_options.h: CorrectnessCriterion):
  // "strict", "kernelbench" or "custom (...)".
  std::string criterion;
  // The reference's median in the candidate's process over its median in the referee, minus one,
  // as a magnitude: the spread between processes, by which `speedup`'s interval is widened; and
  // the speedup measured within the candidate's process alone (a diagnostic, never the verdict).
  double process_spread = 0;
  std::optional<double> speedup_in_process;
  // Each side's host-inclusive times, launch times, clocks and odd calls (eval/call_facts.h).
  CallFacts reference_calls, candidate_calls;
  // The seconds and peak device memory of each process, per step (eval/step_costs.h).
  StepCosts step_costs;
  // Against the speed of light (set for every timed candidate; `available` false when no bound
  // could be made).
  std::optional<SpeedOfLight> speed_of_light;
  // Optional torch.compile baseline (--compile-baseline).
  std::optional<TimingSummary> compiled_time;
  std::optional<RatioInterval> speedup_vs_compiled;
  std::string compiled_note;  // why there is no compiled baseline, when asked for

  // Harness cost per phase, in seconds.
  // `reference` is the problem's reference step (near zero when its outputs were cached);
  // `load` the candidate's import, cached build and construction in its process (with CUDA's
  // start there when its process was not started ahead); `check` the check trials and the
  // comparison, after the load.
  double scan_seconds = 0, reference_seconds = 0, build_seconds = 0, load_seconds = 0,
         check_seconds = 0, time_seconds = 0, total_seconds = 0;
};

// Maps a worker process that ended without a usable result to a status and a message:
// timeouts, signals (segfault, abort), output floods, non-zero exits with their stderr tail.
std::pair<EvalStatus, std::string> ClassifyProcessFailure(const std::string& step,
                                                          const ProcessResult& process);

// Maps a worker's own status string ("compile_error", "runtime_error", "timeout", ...) to a status.
EvalStatus StatusFromWorker(const std::string& worker_status);

// Why `result`'s timing is too noisy to rank by (core/stats.h: an interval wider than half its
// estimate, or a side whose IQR exceeds its median), as a note for people: "the 95% interval
// spans 116% of the estimate; the candidate's IQR is 287% of its median". "" when it is not
// noisy or was not timed. ToJson carries it as "noisy_timing".
std::string NoisyTimingReason(const EvalResult& result);

Json ToJson(const EvalResult& result);

}  // namespace kernelpro::eval
