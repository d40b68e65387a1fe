// Which profiler values kernelpro refuses to believe, in one place. A counter read back as -5 % or
// NaN (a driver hiccup, a wrapped-around difference, an edited file) would otherwise reach the
// tools, which would then advise on it ("uses only -5 % of DRAM bandwidth"). Such a value is
// dropped, as if ncu had not measured it, and said so: tools that need it are skipped with
// "missing metric", and the note names the metric and the value.
//
// The rules, by unit (a value must pass all that apply):
//
//   1. Finite. NaN and infinities are not measurements.
//   2. Not negative. Counters, times, sizes, rates, ratios and percentages never are. Exempt:
//      device properties (device__attribute_*), which are identifiers and flags, some -1 by design
//      (host_numa_id on a host without NUMA).
//   3. A percentage (unit "%") at most 110. ncu's ratios overshoot 100 by a few percent (a 102 %
//      L2 hit rate is in the recorded H200 profiles), never by more. Exempt: per-unit maxima
//      (".max" rollups), which ncu relates to the average unit's peak: recorded H200 profiles show
//      sm__warps_active.max at 298 % of peak.
//   4. Below 2^63. No 64-bit hardware counter, no time in nanoseconds and no byte count of one
//      kernel comes near it; such a value is a negative difference that wrapped around unsigned.
//
// Pure functions and plain values; safe from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelpro::profile {

// Why `value` (in base units, `unit` as ncu printed it) cannot be a measurement of `name`, or
// nullopt when it can. The reason is short and says which rule: "negative", "not a finite number",
// "above 110 %", "2^63 or more (a wrapped-around counter)".
std::optional<std::string> ImplausibleCounterReason(std::string_view name, std::string_view unit,
                                                    double value);

// The counters dropped while one profile was read, and the notes that say so: one note per metric,
// naming it, its first dropped value and the kernel, and how many kernels had it dropped. Memory is
// bounded by the number of distinct metrics.
class DroppedCounters {
 public:
  void Add(std::string_view metric, std::string_view unit, double value, std::string_view reason,
           std::string_view kernel);
  bool empty() const { return drops_.empty(); }

  // "dropped dram__throughput.avg.pct_of_peak_sustained_elapsed = -5 % (negative) in kernel 0
  // (copy_kernel) and 2 other kernel(s)", in metric-name order; at most `limit` notes, then one
  // that counts the rest.
  std::vector<std::string> Notes(std::size_t limit = 20) const;

 private:
  struct Drop {
    std::string value, reason, kernel;  // of the first kernel that had it dropped
    int kernels = 0;
  };
  std::map<std::string, Drop, std::less<>> drops_;
};

}  // namespace kernelpro::profile
