// `kernelpro doctor --timing`: whether kernelpro's timings can be trusted on the GPU at hand. The
// worker's timing_selftest step (python/kernelpro_worker/selftest.py) times short torch calls of
// one and of three kernels with the timer every evaluation uses and reads the same calls
// independently (one profiler session over calls prepared as the timer prepares them, none of its
// markers or attribution), with a plain loop's reading beside it for information; and times a
// reference against itself in alternating blocks. This file runs the step and renders its result:
// one line per check with the numbers and pass or fail. Runs only kernelpro's own code (no
// candidate), so unsandboxed.
#pragma once

#include <string>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::cli {

// Runs the step with the interpreter `python` ("" = the worker's lookup) on the visible GPU.
Result<Json> RunTimingSelftest(const std::string& python);

// "timing self-test on NVIDIA H200 (sm_90), torch 2.11 ..." then one line per check
// ("pass  span  relu 2^10 (1 kernel)  timer 1.25 us, profiler 1.20 us: diff +0.05 us ...") and a
// closing verdict line.
std::string RenderTimingSelftest(const Json& result);

// 0 when every check passed, 1 otherwise.
int TimingSelftestExitCode(const Json& result);

}  // namespace kernelpro::cli
