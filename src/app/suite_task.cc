#include "app/suite_task.h"

#include <vector>

#include "app/executor_setup.h"

namespace kernelpro::app {

Result<search::RunConfig> TaskRunConfig(const SuiteRun& suite, const suite::OptimizeTaskRun& task,
                                        const SuiteMachine& machine) {
  search::RunConfig config = suite.config;
  if (!suite.problem_given) config.problem = task.problem;
  if (!suite.run_dir_given) config.run_dir = task.run_dir;
  if (task.seed && !suite.seed_given) {
    config.seed = *task.seed;
    config.seed_given = true;
  }
  // This machine's, over the suite's.
  if (!task.gpu.empty()) {
    std::vector<std::string> gpus = {task.gpu};
    if (Status s = NormalizeGpus(gpus); !s.ok()) {
      return Status::InvalidArgument("kernelpro optimize: " + s.message());
    }
    config.executor.gpus = gpus;
    config.gpus = 1;
  }
  if (!machine.python.empty()) {
    config.python = machine.python;
    config.worker_python = machine.python;
  }
  if (!machine.cache_dir.empty()) config.executor.cache_dir = machine.cache_dir;
  if (machine.unsafe_no_sandbox) config.executor.unsafe_no_sandbox = true;
  return config;
}

Result<Json> TaskRequest(const SuiteRun& suite, const suite::OptimizeTaskRun& task,
                         const SuiteMachine& machine) {
  if (task.resume) {
    return Json{{"start", "resume"},
                {"run_dir", task.run_dir},
                {"gpus", task.gpu.empty() ? Json::array() : Json::array({task.gpu})},
                {"python", machine.python},
                {"unsafe_no_sandbox", machine.unsafe_no_sandbox}};
  }
  auto config = TaskRunConfig(suite, task, machine);
  if (!config.ok()) return config.status();
  return Json{{"start", "optimize"},
              {"config", search::ToJson(*config)},
              {"nvml_library", config->nvml_library},
              {"unsafe_no_sandbox", config->executor.unsafe_no_sandbox}};
}

}  // namespace kernelpro::app
