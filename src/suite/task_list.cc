#include "suite/task_list.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/text.h"

namespace kernelpro::suite {
namespace fs = std::filesystem;

Result<std::vector<TaskId>> ReadTaskList(const std::string& name_or_file) {
  std::error_code ec;
  std::string path = name_or_file;
  if (!fs::is_regular_file(path, ec)) {
    path = std::string(KERNELPRO_SOURCE_ROOT) + "/suites/tasks/" + name_or_file + ".txt";
    if (name_or_file.find('/') != std::string::npos || !fs::is_regular_file(path, ec)) {
      return Status::NotFound("--tasks " + name_or_file +
                              ": neither a file nor a list kernelpro ships (paper-42)");
    }
  }
  std::ifstream in(path);
  std::vector<TaskId> tasks;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text(Trim(line.substr(0, line.find('#'))));
    if (text.empty()) continue;
    const std::size_t colon = text.find(':');
    std::optional<int> level;
    if (colon != std::string::npos) {
      level = LevelOfFolder(std::string(Trim(text.substr(0, colon))));
    }
    if (!level) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) +
                                     ": expected 'levelN: task task ...'");
    }
    std::istringstream numbers(text.substr(colon + 1));
    std::string word;
    while (numbers >> word) {
      if (word.find_first_not_of("0123456789") != std::string::npos || word.size() > 6) {
        return Status::InvalidArgument(path + ":" + std::to_string(number) + ": '" + word +
                                       "' is not a task number");
      }
      tasks.push_back(TaskId{*level, std::stoi(word)});
    }
  }
  if (tasks.empty()) return Status::InvalidArgument(path + ": lists no task");
  return tasks;
}

Result<std::vector<SuiteProblem>> SelectTasks(const std::vector<SuiteProblem>& problems,
                                              const std::vector<TaskId>& tasks,
                                              const std::string& list_name) {
  std::vector<SuiteProblem> kept;
  std::vector<std::string> missing;
  for (const TaskId& t : tasks) {
    const SuiteProblem* found = nullptr;
    for (const SuiteProblem& p : problems) {
      if (p.level == t.level && p.task == t.task) found = &p;
    }
    if (found) {
      kept.push_back(*found);
    } else {
      missing.push_back("level" + std::to_string(t.level) + " task " + std::to_string(t.task));
    }
  }
  if (!missing.empty()) {
    return Status::InvalidArgument(
        "--tasks " + list_name + ": the problems lack " + std::to_string(missing.size()) +
        " of its " + std::to_string(tasks.size()) + " tasks (" + Join(missing, ", ") +
        "); give --problems a KernelBench checkout's KernelBench folder (level1/, level2/, ...)");
  }
  return kept;
}

}  // namespace kernelpro::suite
