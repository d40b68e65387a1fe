#include "eval/step_costs.h"

#include <algorithm>

#include "core/text.h"

namespace kernelpro::eval {
namespace {

std::string Gib(long long bytes) { return FormatGib(bytes, 2) + " GiB"; }

}  // namespace

void StepCosts::Add(const std::string& role, const std::string& step, const Json& reply) {
  if (!reply.is_object()) return;
  if (Json secs = JsonGet<Json>(reply, "seconds", nullptr); secs.is_number()) {
    seconds[role][step] += secs.get<double>();
  }
  const Json memory = JsonGet<Json>(reply, "device_memory", nullptr);
  if (!memory.is_object()) return;
  const auto peak = JsonGet<long long>(memory, "peak_reserved_bytes", -1);
  if (peak < 0) return;
  long long& kept = peak_bytes[role][step];
  kept = std::max(kept, peak);
  const auto free = JsonGet<long long>(memory, "free_bytes", -1);
  if (free >= 0) min_free_bytes = min_free_bytes < 0 ? free : std::min(min_free_bytes, free);
  total_bytes = std::max(total_bytes, JsonGet<long long>(memory, "total_bytes", 0));
}

long long StepCosts::PeakOf(const std::string& role) const {
  auto it = peak_bytes.find(role);
  if (it == peak_bytes.end()) return 0;
  long long most = 0;
  for (const auto& [step, bytes] : it->second) most = std::max(most, bytes);
  return most;
}

Json PeakDeviceBytesJson(const StepCosts& memory) {
  if (memory.peak_bytes.empty()) return nullptr;
  Json out = Json::object();
  for (const auto& [role, steps] : memory.peak_bytes) {
    for (const auto& [step, bytes] : steps) out[role][step] = bytes;
  }
  out["min_free_bytes"] = memory.min_free_bytes >= 0 ? Json(memory.min_free_bytes) : Json(nullptr);
  out["total_bytes"] = memory.total_bytes;
  return out;
}

Json StepSecondsJson(const StepCosts& costs) {
  Json out = Json::object();
  for (const auto& [role, steps] : costs.seconds) {
    for (const auto& [step, secs] : steps) out[role][step] = secs;
  }
  return out;
}

std::string DeviceMemoryLine(const StepCosts& memory, long long threshold_bytes) {
  bool large = false;
  std::string parts;
  for (const char* role : {"referee", "candidate"}) {
    auto it = memory.peak_bytes.find(role);
    if (it == memory.peak_bytes.end() || it->second.empty()) continue;
    auto top = std::max_element(it->second.begin(), it->second.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    large = large || top->second >= threshold_bytes;
    parts += (parts.empty() ? "" : ", ") + std::string(role) + " " + Gib(top->second) + " (" +
             top->first + ")";
  }
  if (!large) return "";
  std::string line = "memory      peak on the device: " + parts;
  if (memory.min_free_bytes >= 0 && memory.total_bytes > 0) {
    line +=
        "; " + Gib(memory.min_free_bytes) + " of " + Gib(memory.total_bytes) + " free at the least";
  }
  return line + "\n";
}

}  // namespace kernelpro::eval
