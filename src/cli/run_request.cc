#include "cli/run_request.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "app/new_run.h"
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

// The placeholders a suite run's problem and directory hold until app::TaskRunConfig puts the
// task's in (optimize requires both; neither is ever run).
constexpr const char* kTaskProblem = "{task problem}";
constexpr const char* kTaskRunDir = "{task run directory}";

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
  if (Status s = app::CheckNoRecordedRun(config->run_dir); !s.ok()) {
    std::cerr << "kernelpro optimize: " << s.message() << "\n";
    return 2;
  }
  return StartNewRun(std::move(*config), /*demo=*/nullptr, /*quiet=*/true);
}

Result<ParsedOptimizeOptions> ParseOptimizeOptions(const std::vector<std::string>& options) {
  CLI::App app{"kernelpro"};
  CLI::App* command = app.add_subcommand("optimize");
  ParsedOptimizeOptions parsed;
  CLI::Option* seed = AddOptimizeOptions(*command, parsed.args);
  std::vector<std::string> argv = {"optimize"};
  argv.insert(argv.end(), options.begin(), options.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 reads a vector last first
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(UsageErrorLine(app, e));
  }
  parsed.problem_given = command->count("--problem") > 0;
  parsed.run_dir_given = command->count("--run-dir") > 0;
  parsed.args.seed_given = seed->count() > 0;
  return parsed;
}

Result<app::SuiteRun> SuiteRunFromOptions(const std::vector<std::string>& options) {
  auto parsed = ParseOptimizeOptions(options);
  if (!parsed.ok()) return parsed.status();
  OptimizeArgs& args = parsed->args;
  app::SuiteRun suite;
  suite.problem_given = parsed->problem_given;
  suite.run_dir_given = parsed->run_dir_given;
  suite.seed_given = args.seed_given;
  if (!suite.problem_given) args.problem = kTaskProblem;
  if (!suite.run_dir_given) args.run_dir = kTaskRunDir;
  std::optional<Demo> demo;
  auto config = ReadRunConfig(args, demo);
  if (!config.ok()) {
    return Status::InvalidArgument("kernelpro optimize: " + config.status().message());
  }
  suite.config = std::move(*config);
  return suite;
}

Result<Json> SuiteTaskRequest(const suite::OptimizeTaskRun& task, const SuiteMachine& machine) {
  if (task.resume) return app::TaskRequest({}, task, machine);
  auto suite = SuiteRunFromOptions(task.options);
  if (!suite.ok()) return suite.status();
  return app::TaskRequest(*suite, task, machine);
}

std::function<Result<ProcessOptions>(const suite::OptimizeTaskRun& task)> SuiteTaskChild(
    SuiteMachine machine) {
  // The suite's options are read once per distinct list: once per suite, unless "{problem}" or
  // "{seed}" in them make each problem's (or run's) own.
  auto read = std::make_shared<std::map<std::vector<std::string>, Result<app::SuiteRun>>>();
  auto mutex = std::make_shared<std::mutex>();
  return [machine, read, mutex](const suite::OptimizeTaskRun& task) -> Result<ProcessOptions> {
    Result<Json> request = Status::Internal("no request");
    if (task.resume) {
      request = app::TaskRequest({}, task, machine);
    } else {
      std::lock_guard<std::mutex> lock(*mutex);
      auto found = read->find(task.options);
      if (found == read->end()) {
        found = read->emplace(task.options, SuiteRunFromOptions(task.options)).first;
      }
      if (!found->second.ok()) return found->second.status();
      request = app::TaskRequest(*found->second, task, machine);
    }
    if (!request.ok()) return request.status();
    ProcessOptions process;
    process.argv = {suite::SelfExecutable(), "optimize", "--run-request", "-"};
    process.stdin_data = request->dump();
    return process;
  };
}

}  // namespace kernelpro::cli
