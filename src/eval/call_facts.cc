#include "eval/call_facts.h"

#include <algorithm>

#include "core/stats.h"
#include "core/text.h"
#include "eval/verdict.h"

namespace kernelpro::eval {
namespace {

std::optional<double> MedianOf(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return Median(values);
}

}  // namespace

void CallFacts::Add(const Json& reply) {
  for (double v : JsonGet<std::vector<double>>(reply, "host_ms", {})) host_ms.push_back(v);
  for (double v : JsonGet<std::vector<double>>(reply, "launch_us", {})) launch_us.push_back(v);
  for (double v : JsonGet<std::vector<double>>(reply, "busy_ms", {})) busy_ms.push_back(v);
  if (Json held = JsonGet<Json>(reply, "gate_held", Json(nullptr)); held.is_boolean()) {
    (held.get<bool>() ? gated_blocks : ungated_blocks) += 1;
    if (auto note = JsonGet<std::string>(reply, "gate_note", ""); !note.empty()) gate_note = note;
  }
  if (Json late = JsonGet<Json>(reply, "gate_runtime_late", Json(nullptr)); late.is_number()) {
    gate_runtime_late = std::max(gate_runtime_late, 0) + late.get<int>();
  }
  foreign_calls += JsonGet<int>(reply, "foreign_calls", 0);
  no_device_work_calls += JsonGet<int>(reply, "no_device_work_calls", 0);
  repeated_blocks += JsonGet<int>(reply, "repeated_blocks", 0);
  low_clock_blocks += JsonGet<int>(reply, "low_clock_blocks", 0);
  for (int mhz : JsonGet<std::vector<int>>(reply, "sm_mhz", {})) {
    if (mhz <= 0) continue;
    min_sm_mhz = min_sm_mhz == 0 ? mhz : std::min(min_sm_mhz, mhz);
    max_sm_mhz = std::max(max_sm_mhz, mhz);
  }
  warm_sm_mhz = std::max(warm_sm_mhz, static_cast<int>(JsonGet<double>(reply, "warm_sm_mhz", 0)));
  if (auto note = JsonGet<std::string>(reply, "clock_note", ""); !note.empty()) clock_note = note;
}

std::optional<double> CallFacts::HostMedianMs() const { return MedianOf(host_ms); }
std::optional<double> CallFacts::LaunchMedianUs() const { return MedianOf(launch_us); }
std::optional<double> CallFacts::BusyMedianMs() const { return MedianOf(busy_ms); }

std::vector<Finding> CallFactsFindings(const CallFacts& facts, double device_median_ms,
                                       const std::string& who) {
  std::vector<Finding> out;
  const std::string side = who.empty() ? "" : who + ": ";
  if (auto launch = facts.LaunchMedianUs();
      launch && device_median_ms > 0 && *launch > device_median_ms * 1e3) {
    out.push_back({"host_bound", "warn",
                   side + "host-bound: the host takes " + FormatFixed(*launch, 1) +
                       " us to launch a call (median), more than its " +
                       FormatFixed(device_median_ms * 1e3, 1) +
                       " us of device work; back to back, its calls would run at the host's "
                       "pace (fewer launches or less Python in forward would help). The time "
                       "measured is the gated device span, which leaves the launches out: "
                       "host_ms beside it counts them, as KernelBench does"});
  }
  if (facts.ungated_blocks > 0) {
    out.push_back(
        {"gate_not_held", "warn",
         side + std::to_string(facts.ungated_blocks) +
             " timing block(s) could not be gated, so the host's launch gaps between "
             "its kernels are in its time (" +
             (facts.gate_note.empty() ? std::string("no reason given") : facts.gate_note) + ")"});
  }
  if (facts.foreign_calls > 0) {
    out.push_back({"foreign_work", "warn",
                   side + std::to_string(facts.foreign_calls) +
                       " timed call(s) had device work launched outside them (before the call "
                       "began or after it returned, from another thread); it was counted in "
                       "their time"});
  }
  if (facts.no_device_work_calls > 0) {
    out.push_back({"no_device_work", "warn",
                   side + std::to_string(facts.no_device_work_calls) +
                       " timed call(s) launched no device work; they were timed by the host "
                       "(calling forward to the end of the device synchronisation)"});
  }
  if (facts.low_clock_blocks > 0) {
    out.push_back({"low_clock", "warn",
                   side + std::to_string(facts.low_clock_blocks) +
                       " timing block(s) ran below 90 % of the SM clock the warm-up reached (" +
                       std::to_string(facts.warm_sm_mhz) + " MHz; lowest " +
                       std::to_string(facts.min_sm_mhz) +
                       " MHz) even when timed again; the GPU may be throttling or shared"});
  }
  return out;
}

std::string HostAndClockLines(const CallFacts& reference, const CallFacts& candidate) {
  std::string out;
  auto ms = [](double v) { return FormatFixed(v, v < 1 ? 4 : 3) + " ms"; };
  auto ref_host = reference.HostMedianMs();
  auto cand_host = candidate.HostMedianMs();
  if (ref_host && cand_host && candidate.LaunchMedianUs()) {
    out += "host        reference " + ms(*ref_host) + ", candidate " + ms(*cand_host) +
           " per call with the host's launch and synchronisation (not the verdict's times)\n";
  }
  auto ref_busy = reference.BusyMedianMs();
  auto cand_busy = candidate.BusyMedianMs();
  if (ref_busy && cand_busy) {
    out += "busy        reference " + ms(*ref_busy) + ", candidate " + ms(*cand_busy) +
           " per call with the device's own gaps between kernels left out\n";
  }
  const int low = reference.min_sm_mhz > 0 && candidate.min_sm_mhz > 0
                      ? std::min(reference.min_sm_mhz, candidate.min_sm_mhz)
                      : std::max(reference.min_sm_mhz, candidate.min_sm_mhz);
  const int high = std::max(reference.max_sm_mhz, candidate.max_sm_mhz);
  if (high > 0) {
    out += "clock       SM " + std::to_string(low) +
           (high != low ? "-" + std::to_string(high) : std::string()) +
           " MHz before and after the timed blocks (the warm-ups reached " +
           std::to_string(std::max(reference.warm_sm_mhz, candidate.warm_sm_mhz)) +
           " MHz; clocks as found, never set)\n";
  } else if (!candidate.clock_note.empty() || !reference.clock_note.empty()) {
    out += "clock       " +
           (candidate.clock_note.empty() ? reference.clock_note : candidate.clock_note) + "\n";
  }
  return out;
}

Json CallFactsJson(const CallFacts& facts) {
  const bool any_gate = facts.gated_blocks + facts.ungated_blocks > 0;
  return Json{{"host_ms", NumberOrNull(facts.HostMedianMs())},
              {"launch_us", NumberOrNull(facts.LaunchMedianUs())},
              {"busy_ms", NumberOrNull(facts.BusyMedianMs())},
              {"gate_held", any_gate ? Json(facts.ungated_blocks == 0) : Json(nullptr)},
              {"gate_note", facts.gate_note},
              {"gate_runtime_late",
               facts.gate_runtime_late >= 0 ? Json(facts.gate_runtime_late) : Json(nullptr)},
              {"foreign_calls", facts.foreign_calls},
              {"no_device_work_calls", facts.no_device_work_calls},
              {"repeated_blocks", facts.repeated_blocks},
              {"low_clock_blocks", facts.low_clock_blocks},
              {"sm_mhz", facts.min_sm_mhz > 0 ? Json::array({facts.min_sm_mhz, facts.max_sm_mhz})
                                              : Json(nullptr)},
              {"warm_sm_mhz", facts.warm_sm_mhz > 0 ? Json(facts.warm_sm_mhz) : Json(nullptr)},
              {"clock_note", facts.clock_note}};
}

}  // namespace kernelpro::eval
