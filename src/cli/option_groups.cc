#include "cli/option_groups.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "cli/common.h"
#include "cutlass/locate.h"
#include "llm/price.h"
#include "tools/plugin.h"
#include "tools/rule_tool.h"

namespace kernelpro::cli {
namespace {

// --help sections.
constexpr char kWorker[] = "Worker";
constexpr char kSandbox[] = "Sandbox";
constexpr char kExecutor[] = "Executor";
constexpr char kLlm[] = "LLM";
constexpr char kTools[] = "Tools";
constexpr char kCutlass[] = "CUTLASS";
constexpr char kBudget[] = "Search budget";
constexpr char kOutput[] = "Output";

// Where one flag or variable was first seen while walking the app.
struct Declaration {
  std::string command;  // "optimize", "tools list"
  std::string flag;     // the option's first name
  std::string env;
  std::string help;
};

// Flags that mean something else in one command group, by design: `suite`'s command forms are
// fixed by the scripts that drive them (`suite eval --candidates DIR --dir SUITE_DIR`), where
// elsewhere --candidates counts candidates per prompt (and `report --out` is a run's report
// folder, `suite report --out` a suite's, `export --out` the package's, and `export --name` the
// operator's name where elsewhere it names saved profiler outputs). They are checked within the
// group, not against the rest.
// The group a flag is checked within ("suite", "export"), or "" when it is checked against all.
std::string GroupScope(const std::string& path, const std::string& flag) {
  if (path == "export" && (flag == "--out" || flag == "--name")) return "export";
  const bool suite = path == "suite" || path.rfind("suite ", 0) == 0;
  return suite && (flag == "--candidates" || flag == "--dir" || flag == "--out") ? "suite" : "";
}

void Walk(const CLI::App& app, const std::string& path, std::map<std::string, Declaration>& flags,
          std::map<std::string, Declaration>& variables, std::vector<std::string>& conflicts) {
  for (const CLI::Option* option : app.get_options()) {
    std::vector<std::string> names;
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    if (names.empty()) continue;  // a positional argument: its command's own
    const Declaration here{path.empty() ? "kernelpro" : path, names.front(), option->get_envname(),
                           option->get_description()};
    for (const std::string& name : names) {
      auto [seen, added] = flags.emplace(GroupScope(here.command, name).empty()
                                             ? name
                                             : GroupScope(here.command, name) + " " + name,
                                         here);
      if (added) continue;
      const Declaration& first = seen->second;
      if (first.env != here.env) {
        conflicts.push_back(name + ": environment variable '" + first.env + "' in " +
                            first.command + " but '" + here.env + "' in " + here.command);
      }
      if (first.help != here.help) {
        conflicts.push_back(name + ": help \"" + first.help + "\" in " + first.command + " but \"" +
                            here.help + "\" in " + here.command);
      }
    }
    if (here.env.empty()) continue;
    auto [seen, added] = variables.emplace(here.env, here);
    if (!added && seen->second.flag != here.flag) {
      conflicts.push_back(here.env + ": read by " + seen->second.flag + " in " +
                          seen->second.command + " and by " + here.flag + " in " + here.command);
    }
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    Walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), flags, variables,
         conflicts);
  }
}

}  // namespace

CLI::Option* AddDeviceOption(CLI::App& command, std::string& device) {
  return AddOption(command,
                   {"--device",
                    "Where the code runs: cuda, or cpu (C++ CPU extensions; no GPU, no profile)"},
                   device)
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
}

// ---- worker, sandbox, executor

CLI::Option* AddPythonOption(CLI::App& command, std::string& python) {
  return AddOption(command, kPythonOption, python);
}

CLI::Option* AddGpusOption(CLI::App& command, std::vector<std::string>& gpus) {
  return AddOption(command,
                   {"--gpus",
                    "GPUs to evaluate on, as device ordinals (0,1; comma-separated or repeated): "
                    "one candidate per GPU at a time, its reference and candidate timings on the "
                    "same GPU (default: the default device). Not --gpu (the GPU model the prompts "
                    "target)",
                    nullptr, kExecutor},
                   gpus)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void AddWorkerOptions(CLI::App& command, eval::EvalOptions& o, std::string& python) {
  o.cache_dir.clear();
  o.work_dir.clear();
  AddPythonOption(command, python);
  AddOption(command, kCacheDirOption, o.cache_dir);
  AddOption(command,
            {"--work-dir", "Scratch space for outputs (default: the temp dir)", nullptr, kWorker},
            o.work_dir);
}

void AddSandboxOptions(CLI::App& command, eval::EvalOptions& o) {
  AddOption(command,
            {"--unsafe-no-sandbox",
             "Run candidate code without the sandbox (bubblewrap): it can then read your files, "
             "reach the network and outlive its step. Every result says so",
             nullptr, kSandbox},
            o.unsafe_no_sandbox);
  AddOption(command,
            {"--pass-env",
             "Pass this environment variable to workers too (repeatable); names that look like "
             "credentials are never passed",
             nullptr, kSandbox},
            o.pass_env)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddOption(command,
            {"--sandbox-read",
             "A file or directory candidate code may read inside the sandbox (repeatable; the "
             "CUTLASS directory is added by itself)",
             nullptr, kSandbox},
            o.sandbox_read_only)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void AddExecutorOptions(CLI::App& command, eval::EvalOptions& o, std::string& python) {
  AddOption(command, {"--trials", "Correctness trials on fresh inputs", nullptr, kExecutor},
            o.correctness_trials)
      ->check(WholeRange(1, 1000))
      ->capture_default_str();
  AddOption(command,
            {"--extra-trials", "Extra trials with signed, mixed-scale inputs", nullptr, kExecutor},
            o.extra_trials)
      ->check(WholeRange(0, 100))
      ->capture_default_str();
  AddOption(command,
            {"--timing-trials",
             "Timed calls per side, spread over the rounds (fewer if the budget ends first)",
             nullptr, kExecutor},
            o.timing_trials)
      ->check(WholeRange(1, 100000))
      ->capture_default_str();
  AddOption(command,
            {"--timing-rounds",
             "Interleaved timing rounds: a block of reference calls and a block of candidate "
             "calls each, order A B B A A B ...",
             nullptr, kExecutor},
            o.timing_rounds)
      ->check(WholeRange(1, 1000))
      ->capture_default_str();
  AddOption(
      command,
      {"--time-budget", "Seconds of timed calls per side: no new round after that (at least 2)",
       nullptr, kExecutor},
      o.time_budget_s)
      ->check(PositiveUpTo(86400))
      ->capture_default_str();
  CLI::Option* atol =
      AddOption(command, {"--atol", "Absolute tolerance", nullptr, kExecutor}, o.atol)
          ->check(FiniteRange(0))
          ->capture_default_str();
  CLI::Option* rtol =
      AddOption(command, {"--rtol", "Relative tolerance", nullptr, kExecutor}, o.rtol)
          ->check(FiniteRange(0))
          ->capture_default_str();
  CLI::Option* precision =
      AddOption(command,
                {"--precision-check", "fp32 problems vs an fp64 reference: fail, warn or off",
                 nullptr, kExecutor},
                o.precision_policy)
          ->check(CLI::IsMember({"fail", "warn", "off"}))
          ->capture_default_str();
  // A named criterion sets the three above (eval/eval_options.h: ApplyCorrectness), so it
  // excludes them; every result and report names the criterion it was judged by.
  command
      .add_option_function<std::string>(
          "--correctness", [&o](const std::string& name) { (void)eval::ApplyCorrectness(name, o); },
          "Correctness criterion: strict (the default: allclose atol 1e-2 rtol 1e-3, and fp32 "
          "problems also against an fp64 reference) or kernelbench (KernelBench's and the "
          "paper's allclose only; the fp64 precision is reported, not failed)")
      ->check(CLI::IsMember({"strict", "kernelbench"}))
      ->group(kExecutor)
      ->excludes(atol)
      ->excludes(rtol)
      ->excludes(precision);
  AddOption(command,
            {"--torch-ops",
             "Candidate calling the reference's own torch operators: forbid, warn or allow",
             nullptr, kExecutor},
            o.torch_ops_policy)
      ->check(CLI::IsMember({"forbid", "warn", "allow"}))
      ->capture_default_str();
  AddOption(
      command,
      {"--allow-torch-op", "An operator exempt from --torch-ops (repeatable)", nullptr, kExecutor},
      o.allowed_ops)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddOption(command,
            {"!--no-static-checks",
             "Report static findings without failing on them (to exercise the runtime guards)",
             nullptr, kExecutor},
            o.static_checks);
  AddOption(command, {"--compile-baseline", "Also time torch.compile(Model)", nullptr, kExecutor},
            o.compile_baseline);
  // Shapes the benchmark never showed (eval/shape_check.h): checked, never timed.
  AddOption(command,
            {"--shapes",
             "Also check correctness on other input shapes: given (the problem's "
             "get_input_variants), derived (its size constants halved, and halved plus one), off, "
             "or auto (the default: given when the problem has get_input_variants, else derived)",
             nullptr, kExecutor},
            o.shapes)
      ->check(CLI::IsMember({"auto", "given", "derived", "off"}))
      ->capture_default_str();
  AddOption(command,
            {"--require-shape-generality",
             "A candidate must pass every --shapes variant to be correct (else it stays correct "
             "on the benchmark shape and reports call it fixed-shape)",
             nullptr, kExecutor},
            o.require_shape_generality);
  AddOption(command,
            {"--precompiled-headers,!--no-precompiled-headers",
             "Precompile torch's headers once (about a minute and 0.6 GB per flag set, in the "
             "cache) so later C++ builds skip parsing them; on by default in optimize",
             nullptr, kExecutor},
            o.precompiled_headers);
  AddOption(command, {"--jobs,-j", "Parallel builds", nullptr, kExecutor}, o.jobs)
      ->check(WholeRange(1, 256))
      ->capture_default_str();
  AddGpusOption(command, o.gpus);
  AddOption(command,
            {"--timeout", "Wall-clock limit of each check/time step, seconds", nullptr, kExecutor},
            o.step_timeout_s)
      ->check(WholeRange(1, 86400))
      ->capture_default_str();
  AddOption(command,
            {"--build-timeout", "Wall-clock limit of a build, seconds", nullptr, kExecutor},
            o.build_timeout_s)
      ->check(WholeRange(1, 86400))
      ->capture_default_str();
  AddWorkerOptions(command, o, python);
  AddSandboxOptions(command, o);
}

// ---- LLM

void AddLlmOptions(CLI::App& command, LlmOptions& options) {
  AddOption(command,
            {"--llm",
             "Model as PROVIDER:MODEL[@BASE_URL]: openai:gpt-4o, "
             "openai:NAME@http://127.0.0.1:8080/v1 (any OpenAI-compatible server), "
             "anthropic:MODEL, bedrock:MODEL_ID, replay:CASSETTE",
             "KERNELPRO_LLM", kLlm},
            options.spec);
  AddOption(
      command,
      {"--llm-config", "TOML file with [profiles.NAME] tables (provider, model, base_url, ...)",
       "KERNELPRO_LLM_CONFIG", kLlm},
      options.config_file)
      ->check(InputFile());
  AddOption(
      command,
      {"--llm-profile", "Profile to use from --llm-config (default: \"default\")", nullptr, kLlm},
      options.profile);
  AddOption(command,
            {"--llm-record",
             "Append every LLM exchange to this cassette (replay it with --llm replay:CASSETTE)",
             nullptr, kLlm},
            options.record_to);
  AddOption(command,
            {"--llm-prices",
             "TOML price table ([models.\"NAME\"] input_per_mtok, output_per_mtok) for the cost "
             "of each exchange",
             nullptr, kLlm},
            options.prices_file)
      ->check(InputFile());
  AddOption(command,
            {"--llm-replay-mode",
             "How a replay: model serves its cassette: fingerprint (each request its recorded "
             "match; the default) or sequential (in file order per kind of request, for "
             "hand-written cassettes)",
             nullptr, kLlm},
            options.replay_mode)
      ->check(CLI::IsMember({"fingerprint", "sequential"}));
}

Result<llm::LlmConfig> ResolveLlmConfig(const LlmOptions& options) {
  Result<llm::LlmConfig> config = Status::InvalidArgument(
      "no model chosen: give --llm PROVIDER:MODEL[@BASE_URL] (or set KERNELPRO_LLM), or "
      "--llm-config FILE [--llm-profile NAME]");
  if (!options.spec.empty()) {
    config = llm::ParseLlmSpec(options.spec);
  } else if (!options.config_file.empty()) {
    config = llm::LoadLlmProfile(options.config_file,
                                 options.profile.empty() ? "default" : options.profile);
  } else if (!options.profile.empty()) {
    return Status::InvalidArgument("--llm-profile needs --llm-config FILE");
  }
  if (!config.ok()) return config;
  if (!options.record_to.empty()) config->record_to = options.record_to;
  if (!options.prices_file.empty()) config->prices_file = options.prices_file;
  if (!options.replay_mode.empty()) {
    if (config->provider != "replay") {
      return Status::InvalidArgument("--llm-replay-mode is for replay: models, not " +
                                     config->provider + ":" + config->model);
    }
    config->replay_mode = options.replay_mode;
  }
  if (config->provider == "replay" && !config->record_to.empty()) {
    return Status::InvalidArgument("--llm-record with replay: a replayed run records nothing new");
  }
  return config;
}

// ---- tools

void AddToolOptions(CLI::App& command, tools::ToolConfig& options) {
  AddOption(command,
            {"--tool-plugin", "Shared library adding tools (C ABI, repeatable)", nullptr, kTools},
            options.plugins)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(InputFile());
  AddOption(command,
            {"--tool-rules", "TOML file of declarative tools (repeatable)", nullptr, kTools},
            options.rule_files)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(InputFile());
  AddOption(
      command,
      {"--threshold", "Override a tool threshold: TOOL.NAME=VALUE (repeatable)", nullptr, kTools},
      options.thresholds)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddOption(command, {"--no-energy", "Leave out the energy-only tools", nullptr, kTools},
            options.no_energy);
  AddOption(command,
            {"--energy-proxy",
             "Eq. 4's coalesced request: access-width (8- and 16-byte loads are not charged as "
             "uncoalesced) or paper (4 sectors, as printed)",
             nullptr, kTools},
            options.energy_proxy)
      ->check(CLI::IsMember({"access-width", "paper"}))
      ->capture_default_str();
}

// ---- CUTLASS

void AddCutlassOptions(CLI::App& command, std::string& cutlass_dir) {
  AddOption(command,
            {"--cutlass-dir",
             "CUTLASS tree: a checkout's root or the folder the nvidia-cutlass wheel was installed "
             "into (default for `cutlass` and for builds: the copy scripts/setup installs). "
             "Candidates that include CUTLASS/CuTe headers build against it and may read it; "
             "given to optimize or prompt, the prompts get its include paths and build flags",
             "KERNELPRO_CUTLASS_DIR", kCutlass},
            cutlass_dir);
}

Result<std::string> CheckCutlassDir(const std::string& cutlass_dir) {
  if (cutlass_dir.empty()) return std::string();
  Result<cutlass::CutlassTree> tree = cutlass::CutlassTreeAt(cutlass_dir);
  if (!tree.ok()) return Status::InvalidArgument("--cutlass-dir " + tree.status().message());
  return tree->root;
}

Status LocateCutlassForBuilds(const std::string& cutlass_dir, eval::EvalOptions& eval) {
  Result<cutlass::CutlassTree> tree = cutlass::LocateCutlass(cutlass_dir);
  if (tree.status().code() == Status::Code::kNotFound) return Status::Ok();  // none anywhere
  if (!tree.ok()) return tree.status();
  eval.cutlass_include_dir = tree->include_dir;
  eval.cutlass_version = tree->version;
  return Status::Ok();
}

// ---- search budget

void AddProgressOptions(CLI::App& command, bool& quiet) {
  AddOption(command,
            {"--quiet,-q",
             "No progress on stderr (each candidate's steps with their times: a status line on a "
             "terminal, one line per step in a pipe); results and errors are still printed",
             nullptr, kOutput},
            quiet);
}

void AddBudgetOptions(CLI::App& command, SearchBudget& budget) {
  AddOption(command,
            {"--iterations",
             "Expansions of the search tree (optimize: default 30, 4 with --demo; resume: "
             "default the run's own)",
             nullptr, kBudget},
            budget.iterations)
      ->check(WholeRange(1, 100000));
  AddOption(command,
            {"--max-cost",
             "Stop once the run's LLM exchanges cost this many USD (needs a price for the model: "
             "--llm-prices)",
             nullptr, kBudget},
            budget.max_cost)
      ->check(FiniteRange(0));
  AddOption(command,
            {"--time-limit", "Stop after this many seconds of this process", nullptr, kBudget},
            budget.time_limit)
      ->check(PositiveUpTo(std::numeric_limits<double>::max()));
}

// ---- the check

std::vector<std::string> FindOptionConflicts(const CLI::App& app) {
  std::map<std::string, Declaration> flags, variables;
  std::vector<std::string> conflicts;
  Walk(app, "", flags, variables, conflicts);
  return conflicts;
}

}  // namespace kernelpro::cli
