#include "serve/job.h"

#include <array>
#include <utility>

namespace kernelpro::serve {
namespace {

constexpr std::array<std::pair<JobState, const char*>, 6> kNames = {{
    {JobState::kQueued, "queued"},
    {JobState::kRunning, "running"},
    {JobState::kDone, "done"},
    {JobState::kFailed, "failed"},
    {JobState::kCancelled, "cancelled"},
    {JobState::kInterrupted, "interrupted"},
}};

}  // namespace

const char* JobStateName(JobState state) {
  for (const auto& [value, name] : kNames) {
    if (value == state) return name;
  }
  return "unknown";
}

std::optional<JobState> JobStateFromName(const std::string& name) {
  for (const auto& [value, text] : kNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

bool Finished(JobState state) { return state != JobState::kQueued && state != JobState::kRunning; }

Json ToJson(const JobRecord& record, bool with_code) {
  Json j{{"job", record.id}, {"state", JobStateName(record.state)}};
  if (record.state == JobState::kDone) j["result"] = record.result;
  if (!record.error.empty()) j["error"] = record.error;
  if (with_code && record.http_code != 0) j["http_code"] = record.http_code;
  return j;
}

std::optional<JobRecord> JobRecordFromJson(const Json& json) {
  if (!json.is_object()) return std::nullopt;
  JobRecord record;
  record.id = JsonGet<std::string>(json, "job", "");
  auto state = JobStateFromName(JsonGet<std::string>(json, "state", ""));
  if (record.id.empty() || !state) return std::nullopt;
  record.state = *state;
  record.result = JsonGet<Json>(json, "result", Json());
  record.error = JsonGet<std::string>(json, "error", "");
  record.http_code = JsonGet<int>(json, "http_code", 0);
  return record;
}

}  // namespace kernelpro::serve
