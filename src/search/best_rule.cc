#include "search/best_rule.h"

namespace kernelpro::search {

bool ShownFasterThanReference(const RatioInterval& speedup) { return speedup.low > 1.0; }

std::optional<std::size_t> PickBest(const std::vector<BestContender>& contenders) {
  std::optional<std::size_t> clear, noisy;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const BestContender& c = contenders[i];
    if (!ShownFasterThanReference(c.speedup)) continue;
    if (!c.noisy) {
      if (!clear || c.speedup.estimate > contenders[*clear].speedup.estimate) clear = i;
    } else if (!noisy || c.speedup.low > contenders[*noisy].speedup.low) {
      noisy = i;
    }
  }
  if (!clear) return noisy;
  // The surest noisy kernel is the one that could lie above the clear one; if it does not, none
  // does (every other noisy lower bound is lower still).
  if (noisy && contenders[*noisy].speedup.low > contenders[*clear].speedup.high) return noisy;
  return clear;
}

}  // namespace kernelpro::search
