// What a suite's task cost: its wall time and the device memory kernelpro's processes held while it
// ran, as `suite status` and `suite report` show them and the remaining-time estimate uses them.
// Read from the task's result (its "seconds") and, in eval mode, its candidates' verdicts
// (SUITE/tasks/<task>/candidates/NNN.json: each `kernelpro eval --json`'s result, with
// `phase_seconds` and `peak_device_bytes`, eval/step_costs.h). An optimize task's memory is its
// run's, not read here: unknown.
//
// Pure functions of their input, but ReadTaskVerdicts, which reads files; safe from any thread.
#pragma once

#include <optional>
#include <vector>

#include "core/json_io.h"
#include "suite/suite_dir.h"

namespace kernelpro::suite {

// An eval task's device memory at its peak.
struct DevicePeak {
  // kernelpro's processes together, at most: over the task's candidates, the largest of (the
  // referee's largest step peak + the candidate process's largest step peak), each the bytes
  // torch's allocator reserved in that process during that step. The two peaks need not have
  // coincided, so this bounds what the task needed rather than measuring one instant.
  long long bytes = 0;
  // The least free memory the device had after any step of any candidate, when recorded (other
  // processes on the device count here, not in `bytes`).
  std::optional<long long> min_free_bytes;
};

// The peak of an eval task from its verdicts; std::nullopt when none has figures (a CPU suite,
// results made before they were recorded). Any key of a verdict's `peak_device_bytes` may be
// missing or null; a step without a number is no figure.
std::optional<DevicePeak> TaskDevicePeak(const std::vector<Json>& verdicts);

struct TaskCosts {
  // The task's wall time: its result's "seconds" (from its claim to its result, this attempt);
  // for a result without it, its verdicts' phase_seconds.total summed. Unknown without either.
  std::optional<double> seconds;
  std::optional<DevicePeak> peak;  // TaskDevicePeak
};

// A finished task's costs, from its result and its verdicts (none for an optimize task).
TaskCosts CostsOfTask(const Json& result, const std::vector<Json>& verdicts);

// The verdicts an eval task has on disk, in its candidates' order; a missing or unreadable one is
// left out. None for an optimize task (it has no candidate files).
std::vector<Json> ReadTaskVerdicts(const SuiteDir& dir, const SuiteTask& task);

}  // namespace kernelpro::suite
