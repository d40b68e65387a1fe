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

// The energy-aware variant (paper Eq. 3, DESIGN §6; `optimize --energy aware`):
// ln(speedup) + ε·ln(energy_reduction) for correct candidates, where energy_reduction = reference
// energy / candidate energy (> 1 is better; profile/energy_proxy.h). The failure tiers are
// unchanged, and a missing or unusable energy_reduction adds nothing.
//
// The ordering is lexicographic: speed first, energy only among equally fast kernels. That holds
// by construction, not by hope: energy_reduction is clamped to [1/kMaxEnergyReduction,
// kMaxEnergyReduction], so two candidates' energy terms differ by at most
// 2·ε·ln(kMaxEnergyReduction) = 0.0014, less than ln(kResolvableSpeedupRatio) = 0.0100: a speedup
// the harness can tell apart from another always keeps the higher reward, whatever the energy.
// A proxy ratio beyond 1000x either way is not a kernel the search should prefer for energy alone.
//
// kResolvableSpeedupRatio: the smallest ratio between two speedups the harness resolves. A steady
// GPU timing's 95% interval is about ±1% (core/stats.h), and ClearlyFaster needs disjoint
// intervals, so speedups closer than 1% are never told apart; closer ones are what energy decides.
inline constexpr double kResolvableSpeedupRatio = 1.01;
inline constexpr double kMaxEnergyReduction = 1e3;
inline constexpr double kDefaultEnergyEpsilon = 1e-4;
// The bound above, checked where the constants live (ln 1000 < 6.91, ln 1.01 > 0.00995).
static_assert(2 * kDefaultEnergyEpsilon * 6.91 < 0.00995,
              "ε must keep every resolvable speedup ahead of any energy gain");
double EnergyAwareReward(eval::EvalStatus status, std::optional<double> speedup,
                         std::optional<double> energy_reduction,
                         double epsilon = kDefaultEnergyEpsilon);

}  // namespace kernelpro::search
