// Which kernel a run calls its best: a rule on speedup intervals, not on point estimates
// (docs/search.md, "The best kernel"). One rule for every place that names the best: best.py, the
// closing line, the iteration lines, the report's "best so far" and its chart, the suite's row.
//
//   1. The reference is the best thing known until a kernel is shown faster than it: a kernel
//      counts only when its whole speedup interval lies above 1x (low > 1). A correct kernel at
//      0.88x [0.63, 1.28] is never the answer: the reference is.
//   2. Among those, a kernel with a clear timing (not noisy: core/stats.h) is preferred, the
//   highest
//      estimate first.
//   3. A noisy kernel displaces the clear one only when its own interval lies above the clear
//      one's (its low > the clear one's high): 3.27x [1.59, 5.01] noisy does not displace 2.12x
//      [1.99, 2.45]; among noisy kernels alone, the highest lower bound (what is shown) wins.
//   Ties go to the earlier contender.
//
// Pure functions over plain values; no state.
#pragma once

#include <optional>
#include <vector>

#include "core/stats.h"

namespace kernelpro::search {

struct BestContender {
  RatioInterval speedup;  // over the reference
  bool noisy = false;     // NoisyInterval(speedup) or a noisy spread the interval does not show
};

// True when the contender's whole interval lies above the reference's 1x (rule 1).
bool ShownFasterThanReference(const RatioInterval& speedup);

// The index of the best contender by the rule, or none while none is shown faster than the
// reference (the reference stays the best). `contenders` are correct kernels in the order they
// were found.
std::optional<std::size_t> PickBest(const std::vector<BestContender>& contenders);

}  // namespace kernelpro::search
