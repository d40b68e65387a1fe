#include "cli/common.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "agents/benchmarking_agent.h"

namespace kernelpro::cli {

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kernelpro";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kernelpro";
  return ".kernelpro/cache";
}

void AddExecutorOptions(CLI::App& command, EvalOptions& o, std::string& python) {
  command.add_option("--trials", o.correctness_trials, "Correctness trials on fresh inputs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command
      .add_option("--extra-trials", o.extra_trials, "Extra trials with signed, mixed-scale inputs")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  command
      .add_option("--timing-trials", o.timing_trials,
                  "Timed calls per side (at least, unless the budget ends first)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command
      .add_option("--timing-rounds", o.timing_rounds,
                  "Timing processes per side, alternating A B B A")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  command.add_option("--time-budget", o.time_budget_s, "Seconds of timed calls per side")
      ->capture_default_str();
  command.add_option("--atol", o.atol, "Absolute tolerance")->capture_default_str();
  command.add_option("--rtol", o.rtol, "Relative tolerance")->capture_default_str();
  command
      .add_option("--precision-check", o.precision_policy,
                  "fp32 problems vs an fp64 reference: fail, warn or off")
      ->check(CLI::IsMember({"fail", "warn", "off"}))
      ->capture_default_str();
  command
      .add_option("--torch-ops", o.torch_ops_policy,
                  "Candidate calling the reference's own torch operators: forbid, warn or allow")
      ->check(CLI::IsMember({"forbid", "warn", "allow"}))
      ->capture_default_str();
  command
      .add_option("--allow-torch-op", o.allowed_ops,
                  "An operator exempt from --torch-ops (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command.add_flag(
      "!--no-static-checks", o.static_checks,
      "Report static findings without failing on them (to exercise the runtime guards)");
  command.add_flag("--compile-baseline", o.compile_baseline, "Also time torch.compile(Model)");
  command.add_option("--jobs,-j", o.jobs, "Parallel builds")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command
      .add_option("--gpus", o.gpus,
                  "GPUs to evaluate on, as device ordinals (0,1; comma-separated or repeated): "
                  "one candidate per GPU at a time, its reference and candidate timings on the "
                  "same GPU (default: the default device). Not optimize's --gpu (the GPU model "
                  "the prompts target)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option("--timeout", o.step_timeout_s,
                  "Wall-clock limit of each check/time step, seconds")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  command.add_option("--build-timeout", o.build_timeout_s, "Wall-clock limit of a build, seconds")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  o.cache_dir.clear();
  o.work_dir.clear();
  command
      .add_option("--cache-dir", o.cache_dir,
                  "Builds and reference outputs, shared by runs (default ~/.cache/kernelpro)")
      ->envname("KERNELPRO_CACHE_DIR");
  command.add_option("--work-dir", o.work_dir, "Scratch space for outputs (default: the temp dir)");
  command.add_option("--python", python, "Interpreter with torch")->envname("KERNELPRO_PYTHON");
  AddSandboxOptions(command, o);
}

void AddSandboxOptions(CLI::App& command, EvalOptions& o) {
  command.add_flag("--unsafe-no-sandbox", o.unsafe_no_sandbox,
                   "Run candidate code without the sandbox (bubblewrap): it can then read your "
                   "files, reach the network and outlive its step. Every result says so");
  command
      .add_option("--pass-env", o.pass_env,
                  "Pass this environment variable to workers too (repeatable); names that look "
                  "like credentials are never passed")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option("--sandbox-read", o.sandbox_read_only,
                  "A file or directory candidate code may read inside the sandbox (repeatable; "
                  "$CUTLASS_DIR is added by itself)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

Status NormalizeGpus(std::vector<std::string>& gpus) {
  std::vector<std::string> split;
  for (const std::string& value : gpus) {
    std::size_t start = 0;
    for (;;) {
      std::size_t comma = value.find(',', start);
      split.push_back(value.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  for (std::size_t i = 0; i < split.size(); ++i) {
    const std::string& gpu = split[i];
    if (gpu.empty()) {
      return Status::InvalidArgument(
          "--gpus: an empty GPU ordinal; give ordinals separated by commas, e.g. --gpus 0,1");
    }
    if (!std::all_of(gpu.begin(), gpu.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return Status::InvalidArgument("--gpus: '" + gpu +
                                     "' is not a GPU ordinal (digits only, e.g. --gpus 0,1); to "
                                     "name the GPU model the prompts target, use --gpu");
    }
    if (std::find(split.begin(), split.begin() + i, gpu) != split.begin() + i) {
      return Status::InvalidArgument("--gpus: GPU " + gpu + " is listed twice");
    }
  }
  gpus = std::move(split);
  return Status::Ok();
}

std::optional<Executor> MakeExecutor(EvalOptions& options, const std::string& python,
                                     const char* command_name) {
  if (Status s = NormalizeGpus(options.gpus); !s.ok()) {
    std::cerr << "kernelpro " << command_name << ": " << s.message() << "\n";
    return std::nullopt;
  }
  if (options.cache_dir.empty()) options.cache_dir = DefaultCacheDir();
  if (options.work_dir.empty()) {
    options.work_dir = (std::filesystem::temp_directory_path() / "kernelpro-work").string();
  }
  WorkerOptions worker_options;
  worker_options.python = python;
  worker_options.scratch_dir = options.work_dir + "/requests";
  worker_options.pass_env = options.pass_env;
  worker_options.sandbox.enabled = !options.unsafe_no_sandbox;
  worker_options.sandbox.read_only = options.sandbox_read_only;
  for (const char* name : {"CUTLASS_DIR", "KERNELPRO_CUTLASS_DIR"}) {
    if (const char* dir = std::getenv(name); dir && *dir) {
      worker_options.sandbox.read_only.push_back(dir);
    }
  }
  auto worker = WorkerClient::Create(worker_options);
  if (!worker.ok()) {
    std::cerr << "kernelpro " << command_name << ": " << worker.status().message() << "\n";
    return std::nullopt;
  }
  if (options.unsafe_no_sandbox) {
    std::cerr << "kernelpro " << command_name
              << ": WARNING: --unsafe-no-sandbox: candidate code runs unconfined, with your "
                 "permissions, your files and the network\n";
  }
  return Executor(std::move(*worker), options);
}

Result<ReferenceAnalysis> RunStageOne(Executor& executor, const std::string& problem,
                                      const std::optional<GpuSpec>& forced,
                                      const RooflineOptions& roofline) {
  return agents::RunStageOne(executor, problem, forced, roofline);
}

}  // namespace kernelpro::cli
