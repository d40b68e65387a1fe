#include "suite/task_costs.h"

#include <algorithm>

namespace kernelpro::suite {
namespace {

// The largest step peak a process reported (`peaks` is {"reference": n, "compare": n, ...}).
std::optional<long long> LargestStep(const Json& peaks) {
  if (!peaks.is_object()) return std::nullopt;
  std::optional<long long> most;
  for (const auto& [step, bytes] : peaks.items()) {
    if (!bytes.is_number() || bytes.get<double>() < 0) continue;
    most = std::max(most.value_or(0), bytes.get<long long>());
  }
  return most;
}

}  // namespace

std::optional<DevicePeak> TaskDevicePeak(const std::vector<Json>& verdicts) {
  std::optional<DevicePeak> peak;
  for (const Json& verdict : verdicts) {
    const Json peaks = JsonGet<Json>(verdict, "peak_device_bytes", nullptr);
    const auto referee = LargestStep(JsonGet<Json>(peaks, "referee", nullptr));
    const auto candidate = LargestStep(JsonGet<Json>(peaks, "candidate", nullptr));
    if (!referee && !candidate) continue;
    if (!peak) peak = DevicePeak{};
    peak->bytes = std::max(peak->bytes, referee.value_or(0) + candidate.value_or(0));
    if (auto free = JsonNumber(peaks, "min_free_bytes"); free && *free >= 0) {
      const auto bytes = static_cast<long long>(*free);
      peak->min_free_bytes = std::min(peak->min_free_bytes.value_or(bytes), bytes);
    }
  }
  return peak;
}

TaskCosts CostsOfTask(const Json& result, const std::vector<Json>& verdicts) {
  TaskCosts costs;
  costs.seconds = JsonNumber(result, "seconds");
  if (!costs.seconds) {
    for (const Json& verdict : verdicts) {
      if (auto total = JsonNumber(JsonGet<Json>(verdict, "phase_seconds", nullptr), "total")) {
        costs.seconds = costs.seconds.value_or(0) + *total;
      }
    }
  }
  costs.peak = TaskDevicePeak(verdicts);
  return costs;
}

std::vector<Json> ReadTaskVerdicts(const SuiteDir& dir, const SuiteTask& task) {
  std::vector<Json> verdicts;
  for (std::size_t i = 0; i < task.candidates.size(); ++i) {
    auto verdict = ReadJsonFile(dir.candidate_result(task.id, i));
    if (verdict.ok() && verdict->is_object()) verdicts.push_back(std::move(*verdict));
  }
  return verdicts;
}

}  // namespace kernelpro::suite
