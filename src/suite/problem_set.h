// Which problems a suite holds, and which candidate files belong to each: the two folder layouts
// people bring.
//
// Problems (KernelBench format, one Model per file):
//   DIR/level1/19_ReLU.py, DIR/level2/...   level folders ("level1", "level_1", "level-1", "L1",
//                                           any case): the level is the number, the key
//                                           "level1/19_ReLU"
//   DIR/19_ReLU.py                          a flat folder: level 0, the key "19_ReLU"
//   DIR/swish/problem.py                    a folder per problem: level 0 (or the level of the
//                                           level folder it is in), the key "swish"
// Files whose name starts with "_" or "." are not problems. The task number is the stem's leading
// digits when it has them (KernelBench's "19_ReLU" is task 19).
//
// Candidates of a problem with stem S (the folder's name for a folder-per-problem), in a
// candidates folder C:
//   C/S.py                   one candidate
//   C/S/*.py                 several, in name order
//   C/levelN/S.py, C/levelN/S/*.py     the same under the problem's level folder
//   C/level_N_problem_T_sample_K_kernel.py  KernelBench's generations layout (its `runs/NAME`
//                            folders): level N, task number T, every sample K in order
// A problem may have none; the suite then scores it as a failure ("no_candidate").
//
// Filters select problems by a regular expression (ECMAScript, searched anywhere in the key) and by
// level. Pure file-system reads; safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace kernelpro::suite {

struct SuiteProblem {
  std::string key;          // "level1/19_ReLU", "19_ReLU", "swish": unique in the suite
  std::string name;         // the file stem, or the folder's name for DIR/NAME/problem.py
  int level = 0;            // 0: no level
  std::optional<int> task;  // KernelBench's task number
  std::string path;         // absolute path of the problem file
};

struct ProblemFilter {
  std::string pattern;      // RE2, searched in the key; "" selects all
  std::vector<int> levels;  // empty: all
};

// The problems under `dir`, sorted by level, then task number, then name. InvalidArgument when
// `dir` is not a folder, the pattern does not compile, or nothing is left after filtering.
Result<std::vector<SuiteProblem>> DiscoverProblems(const std::string& dir,
                                                   const ProblemFilter& filter = {});

// The candidate files of `problem` in `candidates_dir` (absolute paths, in order); empty when it
// has none there.
std::vector<std::string> FindCandidates(const std::string& candidates_dir,
                                        const SuiteProblem& problem);

// The level a folder's name stands for ("level1", "level_2", "L3"), or none.
std::optional<int> LevelOfFolder(const std::string& name);

}  // namespace kernelpro::suite
