// An evaluation protocol a suite follows as one option (`suite optimize --protocol paper`), so
// that a reproduction is one documented command and the suite records every choice it made.
//
// "paper" is the KernelPro paper's (§5.1, §5.3, App. C): 15 runs per task, 5 temperatures (0.2,
// 0.33, 0.45, 0.57, 0.7) x 3 rounds, each task scored by its best run (best of seeds); 30
// iterations of 2 candidates; an unsolved task scores 1.0x; speedups capped at 25x in the
// statistics; conditions compared with the paired one-sided Wilcoxon signed-rank test, n = the
// non-zero differences (suite report --compare).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::suite {

struct Protocol {
  std::string name;
  std::vector<double> temperatures;  // one run per temperature and round
  int rounds = 1;
  int iterations = 0;  // each run's --iterations
  int candidates = 0;  // each run's --candidates
  double cap = 0;      // the statistics' speedup cap (suite report --cap); 0: none
  int runs() const { return static_cast<int>(temperatures.size()) * rounds; }
};

// The protocol called `name`, or none ("paper" is the one there is).
std::optional<Protocol> FindProtocol(const std::string& name);

Json ToJson(const Protocol& protocol);
std::optional<Protocol> ProtocolFromJson(const Json& json);  // none for null or a non-object

// One line for reports: "paper: 15 runs per task (temperatures 0.2, 0.33, 0.45, 0.57, 0.7 x 3
// rounds), best of runs; 30 iterations x 2 candidates; unsolved = 1.0x; speedups capped at 25x".
std::string DescribeProtocol(const Protocol& protocol);

// The ablation conditions (paper §5.3) an optimize suite's run options (its manifest's "args")
// set, each with optimize's default (search::RunConfig's) where they do not say: "correctness
// strict, energy off, feedback raw, memory on, search mcts". Derived, never stored: the options
// are the suite's record.
std::string ConditionsOf(const std::vector<std::string>& optimize_args);

}  // namespace kernelpro::suite
