// Named lists of KernelBench tasks a suite can be restricted to (`suite optimize|eval --tasks`):
// the paper's fixed 42-task ablation subset ships as suites/tasks/paper-42.txt, and a user's own
// list is a file in the same format, one level a line:
//
//   # comment
//   level1: 1 6 7 8
//   level2: 3 9
//
// Only the numbers are ours: the problems come from the user's KernelBench checkout (--problems).
// Pure file reads; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "suite/problem_set.h"

namespace kernelpro::suite {

struct TaskId {
  int level = 0;
  int task = 0;
  bool operator==(const TaskId&) const = default;
};

// The list `name_or_file` names: a file, or the name of one under suites/tasks/ of kernelpro's
// source tree ("paper-42"). InvalidArgument (naming the line) for a malformed file, NotFound for
// a name that is neither.
Result<std::vector<TaskId>> ReadTaskList(const std::string& name_or_file);

// The problems of `problems` the list names, in the list's order of levels and tasks.
// InvalidArgument naming every listed task the problems lack (a checkout that is not KernelBench,
// or an incomplete one), since a subset with holes is not the subset.
Result<std::vector<SuiteProblem>> SelectTasks(const std::vector<SuiteProblem>& problems,
                                              const std::vector<TaskId>& tasks,
                                              const std::string& list_name);

}  // namespace kernelpro::suite
