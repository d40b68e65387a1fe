#include "search/reward.h"

#include <algorithm>
#include <cmath>

namespace kernelpro::search {
namespace {

bool Usable(std::optional<double> ratio) {
  return ratio.has_value() && std::isfinite(*ratio) && *ratio > 0;
}

}  // namespace

double Reward(eval::EvalStatus status, std::optional<double> speedup) {
  switch (status) {
    case eval::EvalStatus::kCorrect:
      return Usable(speedup) ? std::log(*speedup) : 0.0;
    case eval::EvalStatus::kIncorrect:
      return kIncorrectReward;
    case eval::EvalStatus::kCompileError:
    case eval::EvalStatus::kRuntimeError:
    case eval::EvalStatus::kTimeout:
      return kCrashReward;
    case eval::EvalStatus::kLlmError:
      return 0.0;  // not the kernel's: Tree::AddExpansion backpropagates nothing for it
  }
  return kCrashReward;
}

double EnergyAwareReward(eval::EvalStatus status, std::optional<double> speedup,
                         std::optional<double> energy_reduction, double epsilon) {
  double reward = Reward(status, speedup);
  if (status == eval::EvalStatus::kCorrect && Usable(energy_reduction)) {
    const double ratio =
        std::clamp(*energy_reduction, 1 / kMaxEnergyReduction, kMaxEnergyReduction);
    reward += epsilon * std::log(ratio);
  }
  return reward;
}

}  // namespace kernelpro::search
