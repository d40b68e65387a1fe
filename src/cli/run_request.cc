#include "cli/run_request.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/optimize_command.h"
#include "cli/resume_command.h"
#include "search/run_config.h"

namespace kernelpro::cli {
namespace {

Result<std::string> ReadRequest(const std::string& source) {
  std::stringstream text;
  if (source == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(source, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + source);
  text << in.rdbuf();
  return text.str();
}

// A new task run's configuration: the suite's optimize options, then the task's and this
// machine's (SuiteTaskRequest).
Result<search::RunConfig> TaskRunConfig(const suite::OptimizeTaskRun& task,
                                        const SuiteMachine& machine) {
  CLI::App app{"kernelpro"};
  CLI::App* command = app.add_subcommand("optimize");
  OptimizeArgs args;
  CLI::Option* seed = AddOptimizeOptions(*command, args);
  std::vector<std::string> argv = {"optimize"};
  argv.insert(argv.end(), task.options.begin(), task.options.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 reads a vector last first
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(UsageErrorLine(app, e));
  }
  // The task's own where the suite's options give none (they would come later on optimize's
  // command line, and the last of an option wins there).
  if (command->count("--problem") == 0) args.problem = task.problem;
  if (command->count("--run-dir") == 0) args.run_dir = task.run_dir;
  args.seed_given = seed->count() > 0;
  if (task.seed && !args.seed_given) {
    args.seed = *task.seed;
    args.seed_given = true;
  }
  // This machine's, over the suite's.
  if (!task.gpu.empty()) args.eval.gpus = {task.gpu};
  if (!machine.python.empty()) args.python = machine.python;
  if (!machine.cache_dir.empty()) args.eval.cache_dir = machine.cache_dir;
  if (machine.unsafe_no_sandbox) args.eval.unsafe_no_sandbox = true;
  auto refused = [](const Status& s) {
    return Status::InvalidArgument("kernelpro optimize: " + s.message());
  };
  std::optional<Demo> demo;
  if (Status s = ApplyDemo(args, demo); !s.ok()) return refused(s);
  auto config = NewRunConfig(args, demo.has_value());
  if (!config.ok()) return refused(config.status());
  auto llm = ResolveLlmConfig(args.llm);
  if (!llm.ok()) return refused(llm.status());
  config->llm = *llm;
  return config;
}

}  // namespace

int RunRequestCommand(const std::string& source) {
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro optimize: --run-request: " << message << "\n";
    return 2;
  };
  auto text = ReadRequest(source);
  if (!text.ok()) return fail(text.status().message());
  const Json request = Json::parse(*text, nullptr, false);
  if (!request.is_object()) return fail("not a JSON object");
  const std::string start = JsonGet<std::string>(request, "start", "");
  const bool unsafe_no_sandbox = JsonGet<bool>(request, "unsafe_no_sandbox", false);
  if (start == "resume") {
    ResumeArgs args;
    args.run_dir = JsonGet<std::string>(request, "run_dir", "");
    args.gpus = JsonGet<std::vector<std::string>>(request, "gpus", {});
    args.python = JsonGet<std::string>(request, "python", "");
    args.sandbox.unsafe_no_sandbox = unsafe_no_sandbox;
    args.quiet = true;
    return RunResume(args);
  }
  if (start != "optimize") return fail("\"start\" is neither optimize nor resume");
  auto config = search::RunConfigFromJson(JsonGet<Json>(request, "config", Json()));
  if (!config.ok()) return fail(config.status().message());
  // What RunConfig's JSON leaves out: the machine's own.
  config->nvml_library = JsonGet<std::string>(request, "nvml_library", "");
  config->executor.unsafe_no_sandbox = unsafe_no_sandbox;
  if (Status s = CheckNoRecordedRun(config->run_dir); !s.ok()) {
    std::cerr << "kernelpro optimize: " << s.message() << "\n";
    return 2;
  }
  const tools::ToolConfig tools = config->tools;
  return StartNewRun(std::move(*config), tools, /*demo=*/nullptr, /*quiet=*/true);
}

Result<Json> SuiteTaskRequest(const suite::OptimizeTaskRun& task, const SuiteMachine& machine) {
  if (task.resume) {
    return Json{{"start", "resume"},
                {"run_dir", task.run_dir},
                {"gpus", task.gpu.empty() ? Json::array() : Json::array({task.gpu})},
                {"python", machine.python},
                {"unsafe_no_sandbox", machine.unsafe_no_sandbox}};
  }
  auto config = TaskRunConfig(task, machine);
  if (!config.ok()) return config.status();
  return Json{{"start", "optimize"},
              {"config", search::ToJson(*config)},
              {"nvml_library", config->nvml_library},
              {"unsafe_no_sandbox", config->executor.unsafe_no_sandbox}};
}

std::function<Result<ProcessOptions>(const suite::OptimizeTaskRun& task)> SuiteTaskChild(
    SuiteMachine machine) {
  return [machine](const suite::OptimizeTaskRun& task) -> Result<ProcessOptions> {
    auto request = SuiteTaskRequest(task, machine);
    if (!request.ok()) return request.status();
    ProcessOptions process;
    process.argv = {suite::SelfExecutable(), "optimize", "--run-request", "-"};
    process.stdin_data = request->dump();
    return process;
  };
}

}  // namespace kernelpro::cli
