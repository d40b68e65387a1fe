// What the timer says about a side's calls beyond their times (python/kernelpro_worker/timing.py):
// the host-inclusive time of calls (from calling forward to the end of its device work, as
// KernelBench counts it; read on the ungated warm-up calls while the gate is on), the host's time
// to launch each timed call, its busy time (the union of its kernels, copies and memsets: the
// gated span without the device's own gaps between kernels), whether the gate held
// (python/kernelpro_worker/gate.py), the SM clock before and after each block,
// and the calls it timed otherwise than asked (work launched outside the call, no device work at
// all, blocks timed below the warm-up's clock). An evaluation keeps one for the reference and one
// for the candidate, adding each timed block's reply as it comes back; the findings and the JSON
// of a verdict come from here. Plain data; not shared between threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
namespace kernelpro::eval {

struct Finding;  // eval/verdict.h, which holds a CallFacts per side

struct CallFacts {
  std::vector<double> host_ms;    // every timed call: forward called to the device's work done
  std::vector<double> launch_us;  // every timed call: forward called to forward returned (host)
  std::vector<double> busy_ms;    // every timed call with device records: its busy time
  int gated_blocks = 0;           // blocks whose every timed call the gate held
  int ungated_blocks = 0;         // blocks timed without the gate on a GPU (gate_note says why)
  std::string gate_note;          // why the gate was off, when it was
  // Gated calls whose last launch returned after their gate ended by the profiler's runtime-API
  // records (a cross-check of the gate's own event, which decides); -1: no records to check.
  int gate_runtime_late = -1;
  int foreign_calls = 0;         // calls whose span includes work launched outside the call
  int no_device_work_calls = 0;  // calls that launched no device work: timed by the host
  int repeated_blocks = 0;       // blocks timed again because the clock was below the warm-up's
  int low_clock_blocks = 0;      // blocks still below 0.9 x the warm-up's clock when timed again
  int min_sm_mhz = 0;            // the lowest SM clock read before or after a block; 0: none read
  int max_sm_mhz = 0;
  int warm_sm_mhz = 0;     // the clock the warm-up reached; 0: not read
  std::string clock_note;  // why the clock was not read, when it was not

  // Adds a timed block's reply (the worker's `time` result).
  void Add(const Json& reply);
  std::optional<double> HostMedianMs() const;
  std::optional<double> LaunchMedianUs() const;
  std::optional<double> BusyMedianMs() const;
};

// The warnings a side's facts call for, given its median device time (ms): "host-bound" when the
// host's launch time per call passes the device time, work launched outside the calls, calls with
// no device work, blocks timed at a low clock, blocks the gate did not hold. `who` names the side
// ("candidate", "reference").
std::vector<Finding> CallFactsFindings(const CallFacts& facts, double device_median_ms,
                                       const std::string& who);

// The lines `eval` prints under the times: "host        reference 0.0312 ms, candidate ..." (the
// host-inclusive medians; only where the calls had launch times, i.e. on a GPU: on the CPU the
// host's time is the call's time) and "clock       SM 1980 MHz before and after ..." (or why the
// clock was not read). Empty when there is nothing to say.
std::string HostAndClockLines(const CallFacts& reference, const CallFacts& candidate);

// {"host_ms": median or null, "launch_us": median or null, "busy_ms": median or null,
//  "gate_held": true/false (null on the CPU), "gate_note", "gate_runtime_late" (null: not
//  checked), "foreign_calls", ...,
//  "sm_mhz": [min, max] or null, "warm_sm_mhz", "clock_note"}.
Json CallFactsJson(const CallFacts& facts);

}  // namespace kernelpro::eval
