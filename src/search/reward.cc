#include "search/reward.h"

#include <cmath>

namespace kernelpro::search {
namespace {

bool Usable(std::optional<double> ratio) {
  return ratio.has_value() && std::isfinite(*ratio) && *ratio > 0;
}

}  // namespace

double Reward(EvalStatus status, std::optional<double> speedup) {
  switch (status) {
    case EvalStatus::kCorrect:
      return Usable(speedup) ? std::log(*speedup) : 0.0;
    case EvalStatus::kIncorrect:
      return kIncorrectReward;
    case EvalStatus::kCompileError:
    case EvalStatus::kRuntimeError:
    case EvalStatus::kTimeout:
      return kCrashReward;
  }
  return kCrashReward;
}

double EnergyAwareReward(EvalStatus status, std::optional<double> speedup,
                         std::optional<double> energy_reduction, double epsilon) {
  double reward = Reward(status, speedup);
  if (status == EvalStatus::kCorrect && Usable(energy_reduction)) {
    reward += epsilon * std::log(*energy_reduction);
  }
  return reward;
}

}  // namespace kernelpro::search
