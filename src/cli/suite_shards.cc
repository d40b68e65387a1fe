#include "cli/suite_shards.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "app/preflight.h"
#include "cli/cli_main.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "cli/run_request.h"
#include "core/text.h"
#include "suite/baselines.h"
#include "suite/environment.h"
#include "suite/results.h"
#include "suite/runner.h"
#include "suite/slurm.h"

namespace kernelpro::cli::suite_shards {
namespace {
namespace fs = std::filesystem;

// ---- Slurm

// This machine's options, for `suite run` in each array task.
std::vector<std::string> RunArgs(const MachineArgs& m) {
  std::vector<std::string> args;
  if (!m.gpus.empty()) args.insert(args.end(), {"--gpus", Join(m.gpus, ",")});
  if (!m.python.empty()) args.insert(args.end(), {"--python", m.python});
  if (!m.executor.cache_dir.empty()) {
    args.insert(args.end(),
                {"--cache-dir", fs::absolute(m.executor.cache_dir).lexically_normal().string()});
  }
  if (m.executor.unsafe_no_sandbox) args.push_back("--unsafe-no-sandbox");
  if (!m.cutlass_dir.empty()) {
    args.insert(args.end(),
                {"--cutlass-dir", fs::absolute(m.cutlass_dir).lexically_normal().string()});
  }
  if (m.parallel > 1) args.insert(args.end(), {"--parallel", std::to_string(m.parallel)});
  args.push_back("--quiet");
  return args;
}

int SubmitSlurm(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest,
                const MachineArgs& m, int shards, const std::vector<int>& only) {
  suite::SlurmArrayRequest request;
  request.suite_dir = dir.dir();
  request.kernelpro_binary = suite::SelfExecutable();
  request.shards = shards;
  request.only_shards = only;
  request.sbatch_options = m.slurm;
  request.run_args = RunArgs(m);
  auto submitted = suite::SubmitSlurmArray(request);
  if (!submitted.ok()) return Fail("--slurm: " + submitted.status().message());
  std::size_t tasks = 0;
  for (int s : only) tasks += suite::ShardTasks(manifest, s, shards).size();
  std::cout << "submitted Slurm job " << submitted->job_id << ": array " << submitted->array_spec
            << " (" << only.size() << " of " << shards << " shards, " << tasks << " tasks)\n";
  std::cout << "follow it with: kernelpro suite status " << DisplayPath(dir.dir()) << "\n";
  return 0;
}

// The shard count of the suite's last submission; 0 when it was never submitted.
int LastShardCount(const suite::SuiteDir& dir) {
  auto submissions = suite::ReadSlurmSubmissions(dir.dir());
  if (!submissions.ok() || submissions->empty()) return 0;
  return submissions->back().shards;
}

// ---- running a shard here

// The executor options a suite's tasks run with: the suite's own, on this machine's folders, GPUs
// and sandbox.
eval::EvalOptions ExecutorFor(const suite::SuiteManifest& manifest, const MachineArgs& m) {
  eval::EvalOptions o =
      eval::EvalOptionsFromJson(JsonGet<Json>(manifest.options, "executor", Json::object()));
  o.gpus = m.gpus;
  o.cache_dir = m.executor.cache_dir;
  o.work_dir = m.executor.work_dir;
  o.jobs = m.executor.jobs;
  o.unsafe_no_sandbox = m.executor.unsafe_no_sandbox;
  o.pass_env = m.executor.pass_env;
  o.sandbox_read_only = m.executor.sandbox_read_only;
  o.compile_baseline = false;  // the suite measures torch.compile once per problem instead
  return o;
}

std::string ProgressLine(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest,
                         int parallel) {
  suite::SuiteProgress p = suite::ReadProgress(dir, manifest, parallel);
  std::ostringstream out;
  out << "suite: " << p.done + p.failed << "/" << p.total << " done (" << p.correct << " correct";
  if (p.failed) out << ", " << p.failed << " failed";
  out << "), " << p.running << " running";
  if (p.interrupted) out << ", " << p.interrupted << " interrupted";
  out << "; elapsed " << Duration(p.elapsed_s);
  if (p.remaining_s) out << ", about " << Duration(*p.remaining_s) << " left";
  return out.str();
}

}  // namespace

int Fail(const std::string& message, int code) {
  std::cerr << kCommand << ": " << message << "\n";
  return code;
}

std::string Duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[48];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

void AddRunOptions(CLI::App& cmd, MachineArgs& m, bool with_slurm) {
  cmd.add_option("--parallel", m.parallel,
                 "Tasks at once without --gpus (CPU suites; timings then share the cores)")
      ->check(WholeRange(1, 256));
  AddProgressOptions(cmd, m.quiet);
  if (with_slurm) {
    cmd.add_option("--slurm", m.slurm,
                   "Submit the tasks as a Slurm job array with these sbatch options (one string, "
                   "e.g. \"--partition=gpu --gres=gpu:1 --time=4:00:00\") instead of running here");
    cmd.add_option("--shards", m.shards, kShardsHelp)->check(WholeRange(1, 100000));
  }
}

void AddMachineOptions(CLI::App& cmd, MachineArgs& m, bool with_slurm) {
  AddGpusOption(cmd, m.gpus);
  AddWorkerOptions(cmd, m.executor, m.python);
  AddSandboxOptions(cmd, m.executor);
  AddRunOptions(cmd, m, with_slurm);
}

int RunHere(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest, MachineArgs m,
            int shard, int shards) {
  if (Status s = NormalizeGpus(m.gpus); !s.ok()) return Fail(s.message());
  const std::string device =
      JsonGet<std::string>(JsonGet<Json>(manifest.options, "executor", Json::object()), "device",
                           JsonGet<std::string>(manifest.options, "device", "cuda"));
  eval::EvalOptions options = ExecutorFor(manifest, m);
  if (Status s = LocateCutlassForBuilds(m.cutlass_dir, options); !s.ok()) return Fail(s.message());
  // No device here: one line now, not every task failing one after another.
  if (Status ready = app::CheckDeviceReady(device, m.python, options.gpus); !ready.ok()) {
    return Fail(ready.message());
  }
  std::unique_ptr<ProgressReporter> progress = MakeProgress("suite", m.quiet);
  std::optional<eval::Executor> executor;
  const bool baselines = JsonGet<bool>(manifest.options, "compile_baseline", false);
  if (manifest.mode == "eval" || baselines) {
    executor = MakeExecutor(options, m.python, "suite");
    if (!executor) return 2;
    if (manifest.mode == "eval") executor->set_progress(progress.get());
  }
  auto say = [&](const std::string& line) {
    if (progress) {
      progress->WriteAbove(std::cerr, line);
    } else if (!m.quiet) {
      std::cerr << line << std::endl;
    }
  };
  suite::RunnerOptions run;
  run.shard = shard;
  run.shards = shards;
  run.command =
      "suite " + manifest.mode +
      (shards > 1 ? " (shard " + std::to_string(shard) + " of " + std::to_string(shards) + ")"
                  : "");
  run.gpus = options.gpus;
  run.parallel = m.parallel;
  run.executor = executor ? &*executor : nullptr;
  run.say = say;
  run.after_task = [&] {
    say(ProgressLine(dir, manifest, m.gpus.empty() ? m.parallel : static_cast<int>(m.gpus.size())));
  };
  run.environment = [device](const std::string& gpu) {
    return suite::MeasurementEnvironment(device, gpu);
  };
  // Each optimize task runs in a child of its own, handed its run (cli/run_request.h).
  run.optimize_child =
      SuiteTaskChild({m.python, m.executor.cache_dir, m.executor.unsafe_no_sandbox});
  run.after_verdict = InstalledCliHooks().after_suite_verdict;
  if (baselines && executor) {
    eval::Executor* ex = &*executor;
    run.baselines = [ex, device](const suite::SuiteProblem& problem, const std::string& sha,
                                 const Json& environment) {
      const std::string gpu_name =
          device == "cuda" ? JsonGet<std::string>(environment, "gpu_name", "") : "cpu";
      auto measured = suite::CachedBaselines(*ex, problem.path, sha, gpu_name);
      if (!measured.ok()) return Json{{"error", measured.status().message()}};
      return *measured;
    };
  }
  say("suite " + DisplayPath(dir.dir()) + ": " + manifest.mode + ", " +
      std::to_string(manifest.problems.size()) + " problems, " +
      std::to_string(manifest.tasks.size()) + " tasks" +
      (shards > 1 ? "; shard " + std::to_string(shard) + " of " + std::to_string(shards) : ""));
  auto summary = suite::RunShard(dir, manifest, run);
  if (progress) progress->Finish();
  EnforceCacheLimit(options.cache_dir, "suite");
  if (!summary.ok()) return Fail(summary.status().message());
  std::cout << ProgressLine(dir, manifest, 1) << "\n";
  std::cout << "ran " << summary->ran << " tasks here (" << summary->failed << " failed); "
            << summary->already_done << " were done before";
  if (summary->held_elsewhere) std::cout << "; " << summary->held_elsewhere << " held elsewhere";
  std::cout << "\n";
  std::cout << "next: kernelpro suite report " << DisplayPath(dir.dir()) << "\n";
  return summary->failed > 0 || summary->held_elsewhere > 0 ? 1 : 0;
}

int Dispatch(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest,
             const MachineArgs& m) {
  if (m.slurm.empty() && m.shards > 0) return Fail("--shards needs --slurm");
  if (m.slurm.empty()) return RunHere(dir, manifest, m, 0, 1);
  const int shards = m.shards > 0 ? m.shards
                                  : static_cast<int>(std::min<std::size_t>(
                                        64, std::max<std::size_t>(1, manifest.tasks.size())));
  std::vector<int> all;
  for (int i = 0; i < shards; ++i) all.push_back(i);
  return SubmitSlurm(dir, manifest, m, shards, all);
}

int Resume(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest, const MachineArgs& m) {
  if (m.slurm.empty()) return Dispatch(dir, manifest, m);
  // Under Slurm: only the shards that still have work, with the shard count of the last
  // submission (the static assignment of tasks to shards must not change).
  const int shards = m.shards > 0 ? m.shards : LastShardCount(dir);
  if (shards <= 0) {
    return Fail("no earlier Slurm submission in " + dir.slurm_dir() + "; give --shards N");
  }
  std::vector<int> unfinished;
  const double now = suite::NowSeconds();
  for (int s = 0; s < shards; ++s) {
    for (std::size_t i : suite::ShardTasks(manifest, s, shards)) {
      suite::TaskState state = suite::ReadTaskStatus(dir, manifest.tasks[i].id, now).state;
      if (state != suite::TaskState::kDone && state != suite::TaskState::kRunning) {
        unfinished.push_back(s);
        break;
      }
    }
  }
  auto active = suite::ActiveSlurmShards(dir.dir());
  if (!active.ok()) return Fail("--slurm: " + active.status().message());
  std::vector<int> resubmit;
  for (int s : unfinished) {
    if (!active->count(s)) resubmit.push_back(s);
  }
  if (resubmit.empty()) {
    std::cout << "nothing to resubmit: every task is done, or its shard is still queued or "
                 "running in Slurm\n";
    return 0;
  }
  unfinished = resubmit;
  return SubmitSlurm(dir, manifest, m, shards, unfinished);
}

}  // namespace kernelpro::cli::suite_shards
