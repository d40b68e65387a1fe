#include "eval/device_memory.h"

#include <algorithm>

#include "core/text.h"

namespace kernelpro::eval {
namespace {

std::string Gib(long long bytes) {
  return FormatFixed(static_cast<double>(bytes) / static_cast<double>(1LL << 30), 2) + " GiB";
}

}  // namespace

void DeviceMemory::Add(const std::string& role, const std::string& step, const Json& reply_memory) {
  if (!reply_memory.is_object()) return;
  const auto peak = JsonGet<long long>(reply_memory, "peak_reserved_bytes", -1);
  if (peak < 0) return;
  long long& kept = peak_bytes[role][step];
  kept = std::max(kept, peak);
  const auto free = JsonGet<long long>(reply_memory, "free_bytes", -1);
  if (free >= 0) min_free_bytes = min_free_bytes < 0 ? free : std::min(min_free_bytes, free);
  total_bytes = std::max(total_bytes, JsonGet<long long>(reply_memory, "total_bytes", 0));
}

long long DeviceMemory::PeakOf(const std::string& role) const {
  auto it = peak_bytes.find(role);
  if (it == peak_bytes.end()) return 0;
  long long most = 0;
  for (const auto& [step, bytes] : it->second) most = std::max(most, bytes);
  return most;
}

Json DeviceMemoryJson(const DeviceMemory& memory) {
  if (memory.empty()) return nullptr;
  Json out = Json::object();
  for (const auto& [role, steps] : memory.peak_bytes) {
    for (const auto& [step, bytes] : steps) out[role][step] = bytes;
  }
  out["min_free_bytes"] = memory.min_free_bytes >= 0 ? Json(memory.min_free_bytes) : Json(nullptr);
  out["total_bytes"] = memory.total_bytes;
  return out;
}

std::string DeviceMemoryLine(const DeviceMemory& memory, long long threshold_bytes) {
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
