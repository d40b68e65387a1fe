// What each worker step of an evaluation cost: its seconds in the worker (the request's own time,
// without process start-up or the binary's waiting) and its process's device memory
// (python/kernelpro_worker/devmem.py): every reply that ran on a started GPU carries the peak
// bytes its process's allocator reserved during that request, and the device's free and total
// bytes when it ended. An evaluation keeps, per process ("referee", "candidate") and step
// ("reference", "check", "time", ...), the summed seconds and the largest peak, and the least
// free memory, for `--json` (`step_seconds`, `peak_device_bytes`) and, when a process held 1 GiB
// or more, a `memory` line in eval's text. Plain data; not shared between threads.
#pragma once

#include <map>
#include <string>

#include "core/json_io.h"

namespace kernelpro::eval {

struct StepCosts {
  // role -> step -> seconds, summed over the step's requests
  std::map<std::string, std::map<std::string, double>> seconds;
  // role -> step -> peak reserved bytes
  std::map<std::string, std::map<std::string, long long>> peak_bytes;
  long long min_free_bytes = -1;  // the least free memory a reply saw; -1: none
  long long total_bytes = 0;

  // Adds a worker reply's `seconds` and `device_memory` (absent or null: not known, nothing ran
  // on the GPU).
  void Add(const std::string& role, const std::string& step, const Json& reply);
  // The largest peak of a process, 0 when it reported none.
  long long PeakOf(const std::string& role) const;
};

// {"referee": {"reference": n, "time": n, ...}, "candidate": {...}, "min_free_bytes": n,
//  "total_bytes": n}, or null when no step ran on a GPU.
Json PeakDeviceBytesJson(const StepCosts& costs);

// {"referee": {"reference": s, ...}, "candidate": {...}}; {} when no reply said.
Json StepSecondsJson(const StepCosts& costs);

// "memory      peak on the device: referee 4.20 GiB (reference), candidate 5.10 GiB (check);
// 1.37 GiB of 79.18 GiB free at the least\n" when a process held at least `threshold_bytes`;
// else "".
std::string DeviceMemoryLine(const StepCosts& costs, long long threshold_bytes = 1LL << 30);

}  // namespace kernelpro::eval
