// Energy per call measured with NVML's total-energy counter (docs/energy-nvml.md): the reference
// and each candidate, built as `eval` builds them, measured in one sandboxed worker process (the
// `energy` step, python/kernelpro_worker/energy.py) in windows of back-to-back calls, interleaved
// round by round, with idle power measured in the same session and subtracted. The step returns
// every window; this module turns them into medians with intervals (order statistics for one
// arm, the bootstrap of core/stats.h for the ratio) and the method line printed with them.
//
// Clocks are measured as found and recorded with the result; only EnergyOptions::lock_clocks
// (`--lock-clocks`, opt-in, never on shared machines) makes the step lock the SM clock.
// Thread-safety: MeasureEnergy leases a GPU of the executor's pool, like the profiler.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/stats.h"
#include "core/status.h"
#include "eval/executor.h"

namespace kernelpro::eval {

struct EnergyOptions {
  double window_s = 2.0;     // length of one measured window of back-to-back calls
  int windows = 30;          // measured windows per arm
  int idle_windows = 3;      // idle windows before the arms (and one fewer after them)
  double warmup_cap_s = 30;  // per arm: the warm-up ends here even when power has not settled
  bool lock_clocks = false;  // lock the SM clock at the warmed-up value (changes GPU state)
  std::string nvml_library;  // "" = the driver's libnvidia-ml.so.1 (KERNELPRO_NVML_LIBRARY)
};

// The median of a sample with a distribution-free interval between two order statistics: the
// widest-inside pair whose binomial coverage is at least `confidence` (for 30 windows, the 10th
// and 21st of the sorted values, 95.7 %). With fewer than 6 values no pair reaches 95 %: the
// interval is then the whole range and `confidence` says what it covers.
struct MedianInterval {
  double median = 0;
  double low = 0;
  double high = 0;
  double confidence = 0;  // what the interval covers (at least the asked-for, where n allows)
};
MedianInterval MedianWithInterval(std::vector<double> values, double confidence = 0.95);

struct ArmEnergy {
  std::string name;                 // "reference", "candidate1", ...
  std::string label;                // the candidate's file ("reference" for the reference)
  std::vector<double> mj_per_call;  // dynamic energy per call, one value per window
  MedianInterval per_call;          // of mj_per_call, mJ
  long long calls = 0;              // over all measured windows
  double median_watts = 0;          // raw power of its windows, idle included
  bool warmup_settled = false;      // false: the warm-up reached its time cap first
  double warmup_s = 0;
};

struct ClockState {
  int sm_mhz = 0;
  int mem_mhz = 0;
  double power_limit_w = 0;
  int temperature_c = 0;
};

struct EnergyReport {
  std::string problem;
  std::string device;  // NVML's name of the device
  double window_s = 0;
  int windows = 0;
  double idle_watts = 0;
  ClockState before, after;
  std::optional<int> locked_sm_mhz;  // set only under lock_clocks
  std::vector<ArmEnergy> arms;       // the reference first, then the candidates in order
  // reference energy per call / candidate energy per call, one per candidate (arms[i + 1]).
  std::vector<RatioInterval> ratios;
  std::string method;  // the line printed with the numbers
  Json step;           // the worker's result, every window (for --json)
};

// The report from the energy step's result (status "ok"); InvalidArgument when it lacks a field.
Result<EnergyReport> EnergyReportFromStep(const Json& result);

// "NVML total energy counter, 30 windows of 2.0 s, idle 61.2 W subtracted, clocks as found: SM
// 1980 MHz, MEM 3201 MHz, power limit 700 W, 34→41 °C".
std::string EnergyMethod(const EnergyReport& report);

// Builds the candidates, prepares the reference, then runs the energy step on a GPU of the
// executor's pool. Unavailable (message from NVML, naming its error) when there is no NVML
// library, NVML fails or the device has no energy counter; InvalidArgument when a candidate does
// not build; the worker's status and message otherwise.
Result<EnergyReport> MeasureEnergy(Executor& executor, const std::string& problem,
                                   const std::vector<std::string>& candidates,
                                   const EnergyOptions& options);

Json ToJson(const EnergyReport& report);

}  // namespace kernelpro::eval
