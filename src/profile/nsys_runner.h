// How kernelpro invokes Nsight Systems for the loop's timeline (`--timeline nsys`; paper §3.2.3).
//
// As with ncu (ncu_runner.h), nsys wraps the worker's `run` step: warm-up calls, then the profiled
// forward call inside the NVTX range "kernelpro". nsys records CUDA API calls and GPU activity
// only within that range (--capture-range=nvtx), then exports them as SQLite, which
// ParseNsysSqlite (timeline.h) reads into the same TimelineSummary the PyTorch profiler's trace
// gives. The default timeline stays the PyTorch profiler's: nsys is not on every machine (the lent
// H200 cannot make nsys reports), and when it cannot make one the profiler's is used instead,
// with a note saying so.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kernelpro::profile {

// nsys's argv up to (not including) the target program; the report goes to `output_base`.rep
// and its SQLite export to `output_base`.sqlite.
std::vector<std::string> NsysArgv(const std::string& nsys_path, const std::string& output_base,
                                  const std::string& nvtx_range = "kernelpro");

// The environment nsys needs for an NVTX capture range named by a plain string (the range's name
// is not a registered NVTX string).
std::map<std::string, std::string> NsysEnvironment();

// Where `NsysArgv(..., output_base)` leaves the SQLite export.
std::string NsysSqlitePath(const std::string& output_base);

}  // namespace kernelpro::profile
