// Timing statistics: how the timed calls of two sides (the reference and a candidate, or eager and
// torch.compile) are planned into interleaved rounds, how each round's block of calls is kept, and
// what is concluded from them: each side's summary over all its calls, the speedup as a ratio of
// the sides' block medians with a round-bootstrap interval (core/stats.h), that interval widened
// by the spread between the two processes, and how many of the candidate's timed calls the
// referee verifies. Pure functions of numbers and of the reference's output shapes: no process,
// no clock (device_timing.h runs the rounds).
//
// Threading: plain values and pure functions; an InterleavedTimes belongs to one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/stats.h"
#include "eval/verdict.h"

namespace kernelpro::eval {

// How a side's timed calls are spread over the rounds: at least 5 calls a block (and 2 rounds)
// where the trials allow, since a block's median needs a few.
struct RoundPlan {
  int rounds = 0;  // interleaved rounds, one block of each side per round
  int calls = 0;   // timed calls per block
  int planned() const { return rounds * calls; }
};
// `timing_trials` calls per side over at most `timing_rounds` rounds.
RoundPlan PlanRounds(int timing_trials, int timing_rounds);

// A B B A A B ...: whether the block in `slot` (0 or 1) of `round` is the second side's (the
// candidate's, or torch.compile's). Each side goes first in every other round, so drift favours
// neither.
bool SecondSideTurn(int round, int slot);
// The warm-up before a block: the first block of the first round starts with one long enough to
// leave idle clocks, the other side's first block with a shorter one (the device was busy just
// now); later blocks with one untimed call (none in blocks of fewer than 4 calls).
double WarmupSeconds(int round, int slot);
int WarmupCalls(int round, int calls);

// The probability with which each timed call of the candidate is kept for the referee to verify,
// decided after the call: about a fifth of the `planned_calls` (at least 8), fewer when the
// reference's `outputs` (shapes and dtypes) are large: at most `verify_bytes` of outputs in all.
double VerifySampleProbability(const Json& outputs, long long verify_bytes, int planned_calls);

// The blocks of two sides timed in interleaved rounds: `first` is the baseline (the reference,
// eager), `second` the side compared with it (the candidate, torch.compile).
struct InterleavedTimes {
  TimingSummary first, second;  // every call and each block's median, per side
  std::vector<std::vector<double>> first_blocks, second_blocks;

  void AddBlock(bool second_side, const std::vector<double>& times_ms);
  // Each side's summary over all its calls.
  void SummarizeSides();
  // first / second: the ratio of the sides' block medians, with its round-bootstrap interval.
  RatioInterval Ratio() const;
};

// The reference timed in two processes: its median in the candidate's process over its median in
// the referee, minus one, as a magnitude (`spread`), and the speedup measured within the
// candidate's process alone (a diagnostic, never the verdict).
struct ProcessSpread {
  double spread = 0;
  double speedup_in_process = 0;
};
// Whatever makes one process's calls slower than another's (placement in memory, the cores it
// landed on) is measured by the reference's own times in both, and `speedup`'s interval is widened
// by it. Only widened: the candidate's process can slow the reference there, never make the
// estimate better. None (and `speedup` as it was) without those times or without both medians.
std::optional<ProcessSpread> WidenByProcessSpread(const std::vector<double>& reference_in_candidate,
                                                  double reference_median, double candidate_median,
                                                  RatioInterval& speedup);

// The problem's own baselines on one GPU: the eager reference and torch.compile of it, timed in
// interleaved rounds by the referee (one process, the same inputs and L2 flush as every timing),
// so that torch.compile's speedup over eager is a ratio of two timings of one GPU.
struct BaselineTimes {
  TimingSummary eager;
  TimingSummary compiled;
  RatioInterval compile_speedup;  // eager time / torch.compile time, with its round interval
  std::string method;             // how the calls were timed
  std::string gpu;                // the ordinal it ran on ("" = the default device)
};

// One block of calls as a side's timing (the torch.compile baseline timed after the candidate).
TimingSummary OneBlockTiming(std::vector<double> times_ms);

}  // namespace kernelpro::eval
