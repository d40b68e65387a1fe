// The speed of light of a problem: the fastest time its work can physically take on this machine,
// set beside every timed candidate, and the floor below which a measured time is not believed.
//
// The work is Stage 1's (roofline/reference_analysis.h): the reference's FLOPs and its fewest
// bytes (inputs, parameters and buffers read once, outputs written once), also for Triton and
// CUDA programs. The machine: on a GPU, the hardware table's datasheet peaks for the GPU torch
// names; on the CPU, which has no datasheet, a calibration in the referee (the best bandwidth of a
// tensor copy sized like the problem's inputs, the best float32 matmul rate: sol.py).
//
//   bound     the roofline time max(FLOPs / peak of the precision the work runs in,
//             fewest bytes / DRAM bandwidth): sol_fraction = bound / measured median. A kernel at
//             0.8 reaches 80 % of what the machine allows; above 1.0 is possible where the bound
//             overstates the work (estimated element-wise FLOPs, outputs still in the L2 when the
//             call ends). On the CPU there is no fraction (`no_fraction` says why): its rates are
//             what torch reached there, not peaks, and a hand-vectorised or multi-threaded kernel
//             passes them (issue 43: honest kernels read 140-180 %).
//   floor     what no correct kernel can beat: max(counted FLOPs (GEMM, convolution; never the
//             estimates) / the machine's highest peak of any precision, the inputs' bytes / DRAM
//             bandwidth). The inputs are fresh for every timed call and, on a GPU, the L2 is
//             flushed before it, so they come from DRAM; parameters are left out (a kernel may
//             keep them in another layout or precision) and so are the outputs (the L2 can hold
//             them past the call's end). On the CPU the calibrated rates are multiplied by
//             kCpuHeadroom: a tuned kernel can beat torch's own copy and matmul, and the machine
//             may have been busy when it was calibrated (a time below the floor calibrates again).
//
// A candidate whose median time, plus its IQR, is below the floor is not accepted: the time is a
// measurement error or the kernel skipped work in its timed calls (a timer patched in its
// process, work left running after the call returned). Its verdict is incorrect and says so. The
// floor is enforced only where the reference itself, timed the same way, stays above it: a
// reference below its own floor shows that the counted work overstates what the problem needs,
// and then no candidate is judged by it (`note` says so). Without the L2 flush (--flush-bytes 0)
// the inputs may stay in the L2, and the floor counts the FLOPs alone.
#pragma once

#include <string>

#include "core/json_io.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "eval/worker_session.h"

namespace kernelpro::eval {

// How much faster than torch's own copy and matmul a CPU kernel may be before its time is not
// believed. Generous: a calibration is one moment of a machine that may be busy (on the 2-core
// test machine under load, a tuned C++ matmul ran at 5x the calibrated rate).
inline constexpr double kCpuHeadroom = 8.0;

// The bound and the floor from the referee's facts (sol.py: {"analysis": the analyze step's
// result, "calibration": on the CPU}) for `problem`, before any candidate is placed on them.
// Never fails: without a bound, `available` is false and `note` says why.
SpeedOfLight SpeedOfLightFromFacts(const Json& facts, const std::string& problem,
                                   const EvalOptions& options);

// `sol` placed against the timed `result`: its fractions, and whether the floor is enforced (not
// when the reference itself is below it, then `note` says so).
SpeedOfLight PlaceAgainst(SpeedOfLight sol, const EvalResult& result);
// Whether the candidate's median plus its IQR is below a `placed` floor that is enforced.
bool BelowFloor(const SpeedOfLight& placed, const EvalResult& result);

// Places the timed `result` against `sol` (PlaceAgainst) and stores it in result.speed_of_light.
// Returns false when the candidate's time is below the floor: then its status is incorrect, its
// message says why and a "speed_of_light" finding records it.
bool JudgeSpeedOfLight(SpeedOfLight sol, EvalResult& result);

// The device runner's step after timing: asks `referee` (which has loaded the problem) for the
// facts, once per problem there, then JudgeSpeedOfLight. On the CPU a time below the floor first
// makes the referee calibrate again (each rate kept at its best of all calibrations). When the
// facts step fails, the result keeps an unavailable bound that says why; that is never the
// candidate's failure.
bool ApplySpeedOfLight(WorkerSession& referee, const Json& base_request, const std::string& problem,
                       const EvalOptions& options, EvalResult& result);

// "83 % of the speed of light (33.7 µs measured, 28.0 µs possible)"; "" when not available.
std::string DescribeSpeedOfLight(const SpeedOfLight& sol, double measured_ms);

Json ToJson(const SpeedOfLight& sol);

}  // namespace kernelpro::eval
