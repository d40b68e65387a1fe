// `kernelpro optimize`: one search from a problem to the fastest validated kernel (paper §3.3,
// Algorithm 1); `kernelpro resume RUN_DIR` (cli/resume_command.cc) continues a run that stopped or
// was killed. Both run through app::RunSearch (app/run.h), which says what a run leaves in its
// directory: run.db (every step, exchange and verdict), stage1.json, candidates/NNNN.py,
// memory.jsonl (with memory on), best.py (the best kernel with a header saying where and how it
// was measured), report.md and report.html (the same report as one offline page).
//
// Exit codes: 0 a correct kernel was found, 1 none was, 2 bad input or a run that could not go on
// (the run directory can then be resumed; a new run that stopped before its first LLM exchange
// takes back what it created instead, so that optimize can simply be run again).
#include "cli/optimize_command.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>

#include "app/new_run.h"
#include "app/run.h"
#include "cli/cli_main.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/run_console.h"
#include "cli/run_request.h"
#include "report/stored_run.h"
#include "store/run_lock.h"
#include "store/run_store.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kDemoIterations = 4;  // the demo's cassettes hold four programmer replies

std::string DefaultRunDir(const std::string& name) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return "runs/" + name + "-" + stamp;
}

Result<Demo> FindDemo(const std::string& device) {
  const fs::path root = KERNELPRO_SOURCE_ROOT;
  // On the CPU the demo's problem is the same module at a sixteenth of the size (cpu_problem.py).
  Demo demo{(root /
             (device == "cpu" ? "problems/swish/demo/cpu_problem.py" : "problems/swish/problem.py"))
                .string(),
            (root / "problems/swish/demo" / (device + ".jsonl")).string()};
  for (const std::string& path : {demo.problem, demo.cassette}) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return Status::NotFound("the demo needs " + path +
                              " (from the source tree this binary was built from)");
    }
  }
  return demo;
}

int RunOptimize(OptimizeArgs& args) {
  if (!args.run_request.empty()) return RunRequestCommand(args.run_request);
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro optimize: " << message << "\n";
    return 2;
  };
  std::optional<Demo> demo;
  auto config = ReadRunConfig(args, demo);
  if (!config.ok()) return fail(config.status().message());
  if (Status s = app::CheckNoRecordedRun(config->run_dir); !s.ok()) return fail(s.message());
  return StartNewRun(std::move(*config), demo ? &*demo : nullptr, args.quiet);
}

}  // namespace

Result<search::RunConfig> ReadRunConfig(OptimizeArgs& args, std::optional<Demo>& demo) {
  if (Status s = ApplyDemo(args, demo); !s.ok()) return s;
  auto config = NewRunConfig(args, demo.has_value());
  if (!config.ok()) return config.status();
  auto llm = ResolveLlmConfig(args.llm);
  if (!llm.ok()) return llm.status();
  config->llm = *llm;
  return config;
}

Status ApplyDemo(OptimizeArgs& args, std::optional<Demo>& demo) {
  if (!args.demo) return Status::Ok();
  if (!args.llm.spec.empty() || !args.llm.config_file.empty()) {
    return Status::InvalidArgument(
        "--demo replays the project's own cassette; leave out --llm and --llm-config (and "
        "unset KERNELPRO_LLM and KERNELPRO_LLM_CONFIG)");
  }
  if (args.seed_given) {
    return Status::InvalidArgument(
        "--demo replays a cassette recorded without seeds; leave out --seed");
  }
  if (!args.problem.empty()) {
    return Status::InvalidArgument("--demo runs problems/swish; leave out --problem");
  }
  auto found = FindDemo(args.device);
  if (!found.ok()) return found.status();
  demo = *found;
  args.problem = demo->problem;
  args.llm.spec = "replay:" + demo->cassette;
  return Status::Ok();
}

Result<search::RunConfig> NewRunConfig(OptimizeArgs& args, bool demo) {
  search::RunConfig o;
  if (args.problem.empty()) {
    return Status::InvalidArgument("--problem is required (or try --demo)");
  }
  o.problem = args.problem;
  o.iterations =
      args.budget.iterations >= 0 ? args.budget.iterations : (demo ? kDemoIterations : 30);
  o.candidates = args.candidates;
  o.programmer_max_tokens = args.max_tokens;
  o.temperatures = args.temperatures;
  o.search = args.search;
  std::string feedback = args.feedback;
  if (args.tool_mode == "reactive") {
    if (feedback != "tools" && feedback != "reactive") {
      return Status::InvalidArgument("--tool-mode reactive needs --feedback tools");
    }
    feedback = "reactive";
  }
  o.feedback = agents::ParseFeedbackMode(feedback).value();
  o.energy = search::ParseEnergyMode(args.energy).value();
  o.energy_kernels = args.energy_kernels;
  o.timeline = args.timeline;
  o.energy_windows = args.energy_windows;
  o.energy_window_s = args.energy_window_s;
  o.nvml_library = args.nvml_library.empty() ? "" : fs::absolute(args.nvml_library).string();
  o.memory = !args.no_memory;
  o.cutlass_tools = !args.no_cutlass_tools;
  o.cutlass_search_budget = args.cutlass_search_budget;
  o.seed = args.seed;
  o.seed_given = args.seed_given;
  if (args.run_dir.empty()) {
    std::error_code ec;
    const fs::path problem = fs::absolute(args.problem, ec);
    args.run_dir =
        demo ? DefaultRunDir("demo-swish-" + args.device)
             : DefaultRunDir(report::ProblemName((ec ? fs::path(args.problem) : problem).string()));
  }
  o.run_dir = args.run_dir;
  if (args.budget.max_cost >= 0) o.max_cost_usd = args.budget.max_cost;
  if (args.budget.time_limit >= 0) o.time_limit_s = args.budget.time_limit;
  o.device = args.device;
  if (!args.gpu.empty()) {
    auto target = agents::ParseGpuTarget(args.gpu);
    if (!target.ok()) return Status::InvalidArgument("--gpu: " + target.status().message());
    o.gpu = *target;
  }
  Result<std::string> cutlass_root = CheckCutlassDir(args.cutlass_dir);
  if (!cutlass_root.ok()) return cutlass_root.status();
  o.cutlass_dir = *cutlass_root;
  // The prompts tell candidates to include its headers: the sandbox lets them read it.
  if (!o.cutlass_dir.empty()) args.eval.sandbox_read_only.push_back(o.cutlass_dir);
  // The tree builds of CUTLASS/CuTe candidates use: the same one, else scripts/setup's copy, also
  // when the prompts' CUTLASS section is off (a candidate may include CUTLASS all the same).
  if (Status s = LocateCutlassForBuilds(args.cutlass_dir, args.eval); !s.ok()) return s;
  o.python = args.python.empty() ? "python3" : args.python;
  if (Status s = NormalizeGpus(args.eval.gpus); !s.ok()) return s;
  o.gpus = args.eval.gpus.empty() ? 1 : static_cast<int>(args.eval.gpus.size());
  o.executor = args.eval;
  o.worker_python = args.python;
  o.gpu_name = args.gpu;
  o.tools = tools::WithAbsolutePaths(args.tools);
  return o;
}

int StartNewRun(search::RunConfig config, const Demo* demo, bool quiet) {
  auto registry = app::CheckRunReady(config);
  if (!registry.ok()) {
    std::cerr << "kernelpro optimize: " << registry.status().message() << "\n";
    return 2;
  }
  if (demo) {
    config.llm.replay_mode = "sequential";
    // Say what is real, and on cpu what is not done at all.
    std::cout << "kernelpro optimize --demo: " << DisplayPath(demo->problem) << " on "
              << config.device << ", the model's replies replayed from "
              << DisplayPath(demo->cassette) << " (candidates written by the kernelpro project; "
              << (config.device == "cuda"
                      ? "every build, check, timing and profile is real)"
                      : "every build, check and timing is real; on cpu nothing is profiled: no "
                        "ncu, no SASS, no roofline, so optimise prompts get no profiling "
                        "feedback)")
              << std::endl;
  }
  return Optimize(config, *registry, /*resume=*/false, quiet);
}

int Optimize(const search::RunConfig& config, const tools::ToolRegistry& registry, bool resume,
             bool quiet) {
  const char* command = resume ? "resume" : "optimize";
  app::RunOptions options;
  options.resume = resume;
  options.registry = &registry;
  options.progress = MakeProgress(command, quiet);
  RunConsole console(command, options.progress);
  options.observer = &console;
  options.hooks = InstalledCliHooks().run;
  app::RunOutcome outcome =
      resume ? app::RunSearch(config, options) : app::StartNewRun(config, options);
  EnforceCacheLimit(config.executor.cache_dir, command);
  // 0 a correct kernel was found, 1 none was, 2 the run could not start or stopped early.
  return !outcome.finished ? 2 : outcome.found ? 0 : 1;
}

CLI::Option* AddOptimizeOptions(CLI::App& cmd, OptimizeArgs& args) {
  cmd.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddOption(cmd, kProblemOption, args.problem)->check(InputFile());
  cmd.add_flag("--demo", args.demo,
               "Run a short search on problems/swish with candidates the project wrote, replayed "
               "from a cassette: no API key needed (with --device cpu: CPU candidates)");
  AddLlmOptions(cmd, args.llm);
  AddOption(cmd, kSearchOption, args.search)
      ->check(CLI::IsMember({"mcts", "greedy"}))
      ->capture_default_str();
  AddOption(cmd, kCandidatesOption, args.candidates)
      ->check(WholeRange(1, 16))
      ->capture_default_str();
  AddOption(cmd, kMaxTokensOption, args.max_tokens)
      ->check(WholeRange(256, 1000000))
      ->capture_default_str();
  cmd.add_option("--temperature", args.temperatures,
                 "Sampling temperature of the programmer (default: the server's); several, "
                 "comma-separated: one request per candidate, candidate i at the i-th")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 2.0));
  cmd.add_option("--feedback", args.feedback,
                 "What the programmer learns of a working kernel: tools (micro-profiling "
                 "guidance), raw (ncu counters) or none")
      ->check(CLI::IsMember({"tools", "raw", "none", "reactive"}))
      ->capture_default_str();
  cmd.add_option("--tool-mode", args.tool_mode,
                 "proactive: every relevant tool runs; reactive: the LLM calls the tools it wants")
      ->check(CLI::IsMember({"proactive", "reactive"}))
      ->capture_default_str();
  cmd.add_option("--energy", args.energy,
                 "Energy as a secondary objective (docs/energy.md): off (speed only), measure "
                 "(record the energy proxy of every correct kernel, search unchanged) or aware "
                 "(also in the reward, the prompt and the energy-only tools)")
      ->check(CLI::IsMember({"off", "measure", "aware"}))
      ->capture_default_str();
  AddOption(cmd, kTimelineOption, args.timeline)
      ->check(CLI::IsMember({"torch", "nsys"}))
      ->capture_default_str();
  cmd.add_option("--energy-kernels", args.energy_kernels,
                 "With --energy measure|aware: after the search, measure this many of the "
                 "fastest kernels and the reference with NVML (0: none)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  cmd.add_option("--energy-windows", args.energy_windows,
                 "NVML windows per kernel after the search (median and interval over them)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd.add_option("--energy-window-s", args.energy_window_s,
                 "Length of one NVML window of back-to-back calls, seconds")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  AddOption(cmd, kNvmlLibraryOption, args.nvml_library)->check(InputFile());
  cmd.add_flag("--no-memory", args.no_memory, "No search memory across iterations");
  CLI::Option* seed = AddOption(cmd, kSeedOption, args.seed);
  cmd.add_option("--run-dir", args.run_dir,
                 "Run directory (default runs/PROBLEM-TIMESTAMP); must not hold a run yet");
  AddBudgetOptions(cmd, args.budget);
  AddDeviceOption(cmd, args.device);
  AddOption(cmd, kGpuOption, args.gpu);
  AddCutlassOptions(cmd, args.cutlass_dir);
  cmd.add_flag("--no-cutlass-tools", args.no_cutlass_tools,
               "With --cutlass-dir: no code-search tools or check_smem_layout for the programmer "
               "(the prompt's CUTLASS section, constraints and validator stay)");
  cmd.add_option("--cutlass-search-budget", args.cutlass_search_budget,
                 "With --cutlass-dir: search_cutlass calls per iteration (reads, listings and "
                 "layout probes are not counted)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  AddToolOptions(cmd, args.tools);
  args.eval.precompiled_headers = true;  // a search builds many candidates: worth it
  AddExecutorOptions(cmd, args.eval, args.python);
  AddProgressOptions(cmd, args.quiet);
  // Hidden (no group): what a parent process hands its child, not a user's option.
  cmd.add_option("--run-request", args.run_request,
                 "Run the request in FILE (\"-\": stdin) written by a parent kernelpro")
      ->group("");
  return seed;
}

CommandRunner RegisterOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Search for the fastest validated kernel for a problem (MCTS or greedy over LLM-written "
      "candidates); exit 0 when a correct kernel was found, 1 when none, 2 on bad input");
  CLI::Option* seed = AddOptimizeOptions(*cmd, *args);
  return [args, seed] {
    args->seed_given = seed->count() > 0;
    return RunOptimize(*args);
  };
}

}  // namespace kernelpro::cli
