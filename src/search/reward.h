// The reward MCTS backpropagates (paper §3.3.3, DESIGN §6): one scalar that ranks every evaluated
// candidate on a single scale.
//
//   correct                         ln(speedup)     1x → 0, 2x → 0.69, 0.5x → −0.69
//   incorrect output                −2.0
//   crash or compile error          −3.0            crash = runtime_error or timeout
//   llm_error                       none            no candidate existed: nothing to reward
//                                                   (Reward returns 0; the tree never adds it)
//
// The log keeps a 100x outlier from dominating a subtree; the gap between −2 and ln(1) = 0 keeps a
// nearly-correct kernel from ever outranking a correct one. Pure functions; safe from any thread.
#pragma once

#include <optional>

#include "eval/verdict.h"

namespace kernelpro::search {

inline constexpr double kIncorrectReward = -2.0;
inline constexpr double kCrashReward = -3.0;  // compile_error, runtime_error, timeout

// A correct candidate without a usable speedup (missing, non-positive or not finite) scores
// ln(1) = 0: it is correct, but nothing says it is faster or slower than the reference.
double Reward(eval::EvalStatus status, std::optional<double> speedup);

// The energy-aware variant (DESIGN §6): ln(speedup) + ε·ln(energy_reduction) for correct
// candidates, where energy_reduction = reference energy / candidate energy (> 1 is better). The
// failure tiers are unchanged, and a missing or unusable energy_reduction adds nothing.
//
// The ordering is meant to be lexicographic: speed first, energy only among equally fast kernels.
// With the default ε, an energy ratio anywhere in [0.1, 10] moves the reward by at most 0.0023,
// i.e. less than a 0.25% speedup difference, which is below the timing noise of one measurement.
inline constexpr double kDefaultEnergyEpsilon = 1e-3;
double EnergyAwareReward(eval::EvalStatus status, std::optional<double> speedup,
                         std::optional<double> energy_reduction,
                         double epsilon = kDefaultEnergyEpsilon);

}  // namespace kernelpro::search
