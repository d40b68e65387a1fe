// `kernelpro resume RUN_DIR`: continues an optimisation run that stopped or was killed
// (cli/resume_command.h), through the same run as `kernelpro optimize` (cli/optimize_command.h).
#include "cli/resume_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>

#include "app/new_run.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/optimize_command.h"
#include "search/run_config.h"
#include "store/run_layout.h"
#include "store/run_lock.h"
#include "store/run_store.h"

namespace kernelpro::cli {

namespace fs = std::filesystem;

int RunResume(ResumeArgs& args) {
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro resume: " << message << "\n";
    return 2;
  };
  search::RunConfig o;
  if (!fs::is_directory(args.run_dir)) return fail(args.run_dir + " is not a directory");
  auto lock = store::RunDirectoryLock::Acquire(args.run_dir, "resume");
  if (!lock.ok()) return fail(lock.status().message());
  const std::string start_again =
      "; start a run there with: kernelpro optimize --run-dir " + args.run_dir + " ...";
  if (std::error_code ec; !fs::exists(store::RunLayout(args.run_dir).store(), ec)) {
    return fail(args.run_dir + " holds no run (no " + store::kRunStoreFileName + ")" + start_again);
  }
  {
    store::RunStoreOptions store_options;
    store_options.create = false;
    auto store = store::RunStore::Open(args.run_dir, store_options);
    if (!store.ok()) return fail(args.run_dir + ": " + store.status().message());
    auto stored = search::StoredRunConfig(**store);
    if (stored.status().code() == Status::Code::kNotFound) {
      return fail(args.run_dir + " holds no run: a start stopped before it began" + start_again +
                  " (it replaces the half-made " + store::kRunStoreFileName + ")");
    }
    if (!stored.ok()) return fail(stored.status().message());
    o = std::move(*stored);
  }
  // What a run cannot change: its tree, its candidates and its measurements belong to these.
  if (!args.problem.empty()) {
    std::error_code ec;
    if (!fs::equivalent(args.problem, o.problem, ec)) {
      return fail("--problem " + args.problem + ": this run optimises " + o.problem +
                  "; a run keeps its problem (start a new run with optimize for another)");
    }
  }
  if (!args.search.empty() && args.search != o.search) {
    return fail("--search " + args.search + ": this run's tree was built by " + o.search +
                "; a run keeps its search strategy (start a new run with optimize for another)");
  }
  if (!args.device.empty() && args.device != o.device) {
    return fail("--device " + args.device + ": this run's candidates were written for " + o.device +
                " (" + (o.device == "cuda" ? "CUDA kernels" : "C++ CPU extensions") +
                "), which do not build on " + args.device + "; resume it on " + o.device +
                ", or start a new run with optimize --device " + args.device);
  }
  o.run_dir = args.run_dir;
  o.nvml_library = args.nvml_library.empty() ? "" : fs::absolute(args.nvml_library).string();
  if (!args.python.empty()) {
    o.worker_python = args.python;
    o.python = args.python;
  }
  if (!args.gpus.empty()) {
    if (Status s = NormalizeGpus(args.gpus); !s.ok()) return fail(s.message());
    o.executor.gpus = args.gpus;
    o.gpus = static_cast<int>(args.gpus.size());
  }
  if (args.budget.iterations >= 0) o.iterations = args.budget.iterations;
  if (args.budget.max_cost >= 0) o.max_cost_usd = args.budget.max_cost;
  if (args.budget.time_limit >= 0) o.time_limit_s = args.budget.time_limit;
  const bool new_llm = !args.llm.spec.empty() || !args.llm.config_file.empty();
  if (new_llm) {
    auto given = ResolveLlmConfig(args.llm);
    if (!given.ok()) return fail(given.status().message());
    o.llm = *given;
  }
  eval::EvalOptions& eval = o.executor;
  eval.unsafe_no_sandbox = args.sandbox.unsafe_no_sandbox;
  for (const std::string& name : args.sandbox.pass_env) eval.pass_env.push_back(name);
  for (const std::string& path : args.sandbox.sandbox_read_only) {
    eval.sandbox_read_only.push_back(path);
  }
  // The same checks as a new run's, before the run is touched. A limit or a model given now is
  // checked now; a run's own pair was checked when it began.
  app::ReadyChecks checks;
  checks.resumed = true;
  checks.cost_limit = args.budget.max_cost >= 0 || new_llm;
  auto registry = app::CheckRunReady(o, checks);
  if (!registry.ok()) return fail(registry.status().message());
  return Optimize(o, *registry, /*resume=*/true, args.quiet);
}

CommandRunner RegisterResumeCommand(CLI::App& app) {
  auto args = std::make_shared<ResumeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "resume", "Continue an optimisation run that stopped or was killed, from its run directory");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddSandboxOptions(*cmd, args->sandbox);
  cmd->add_option("run_dir", args->run_dir, "The run directory (holds run.db)")
      ->required()
      ->check(CLI::ExistingDirectory);
  AddBudgetOptions(*cmd, args->budget);
  AddLlmOptions(*cmd, args->llm);
  // Accepted so that a command line copied from optimize works; a value that differs from the
  // run's own is refused with the reason.
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  AddOption(*cmd, kSearchOption, args->search)->check(CLI::IsMember({"mcts", "greedy"}));
  AddDeviceOption(*cmd, args->device)->default_str("the run's own");
  // What may differ on the machine a run is continued on.
  AddGpusOption(*cmd, args->gpus)->default_str("the run's own");
  AddPythonOption(*cmd, args->python)->default_str("the run's own");
  AddOption(*cmd, kNvmlLibraryOption, args->nvml_library)->check(InputFile());
  AddProgressOptions(*cmd, args->quiet);
  return [args] { return RunResume(*args); };
}

}  // namespace kernelpro::cli
