// `kernelpro suite`: kernelpro over a whole benchmark — KernelBench's levels or a folder of one's
// own problems — on one GPU, on every GPU of a host, or as a Slurm job array; then the statistics
// researchers publish (src/suite/*, report/suite_stats.h, report/suite_report.h).
//
//   suite eval      --problems DIR --candidates DIR --dir SUITE   score existing kernels
//   suite optimize  --problems DIR --llm SPEC --dir SUITE         one optimize run per problem
//   suite run       SUITE [--shard K --shards N]                  run (a shard of) its tasks here
//   suite status    SUITE                                         done / running / failed, ETA
//   suite resume    SUITE                                         rerun what is not done
//   suite report    SUITE [--compare SUITE2]                      HTML, Markdown, CSV, JSON
//
// A suite directory is the whole state (suite/suite_dir.h): every command can be killed at any
// instant and the next `suite resume` (or the same `suite eval|optimize` again) continues without
// redoing a finished task or losing a recorded one.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "cli/preflight.h"
#include "core/text.h"
#include "report/suite_report.h"
#include "report/suite_stats.h"
#include "suite/baselines.h"
#include "suite/environment.h"
#include "suite/problem_set.h"
#include "suite/results.h"
#include "suite/runner.h"
#include "suite/slurm.h"
#include "suite/suite_dir.h"

namespace kernelpro::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kCommand = "kernelpro suite";
constexpr const char* kShardsHelp =
    "How many shards the tasks are split into (task i in shard i mod N); with --slurm, one array "
    "task each (default: one per task, at most 64)";

int Fail(const std::string& message, int code = 2) {
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

// The options of the machine a shard runs on (not part of the suite: another host may differ).
struct MachineArgs {
  std::vector<std::string> gpus;
  std::string python;
  int parallel = 1;
  bool quiet = false;
  // Only its machine fields are read when tasks run (cache, work dir, sandbox, jobs); `suite eval`
  // also parses the suite's own executor options into it.
  eval::EvalOptions executor;
  // --cutlass-dir: the CUTLASS tree CUTLASS/CuTe candidates build against on this machine (a
  // machine's path, so not in the suite's manifest); else KERNELPRO_CUTLASS_DIR or the setup copy.
  std::string cutlass_dir;
  std::string slurm;  // sbatch options: submit shards instead of running here
  int shards = 0;     // with --slurm: array tasks (default: one per task, at most 64)
};

// --parallel, --quiet and (with_slurm) --slurm, --shards.
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

// What `eval`'s executor options do not already give: GPUs, worker and sandbox, then the above.
void AddMachineOptions(CLI::App& cmd, MachineArgs& m, bool with_slurm) {
  AddGpusOption(cmd, m.gpus);
  AddWorkerOptions(cmd, m.executor, m.python);
  AddSandboxOptions(cmd, m.executor);
  AddRunOptions(cmd, m, with_slurm);
}

// Which problems, and the suite directory: --problems, --dir, --filter, --levels.
struct Selection {
  std::string problems, dir, filter;
  std::vector<int> levels;
};

void AddSelectionOptions(CLI::App& cmd, Selection& s) {
  cmd.add_option("--problems", s.problems,
                 "Problems in KernelBench's format: level folders (level1/...) or a flat folder")
      ->required();
  cmd.add_option("--dir", s.dir, "The suite directory: everything of the suite lives there")
      ->required();
  cmd.add_option("--filter", s.filter,
                 "Only problems whose key (level1/19_ReLU) matches this regular expression");
  cmd.add_option("--levels", s.levels, "Only these levels (1,2,3)")->delimiter(',');
}

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

// Per recorded submission: its job, array and the states of its tasks (or why they are unknown).
Json SlurmStates(const suite::SuiteDir& dir) {
  Json out = Json::array();
  auto submissions = suite::ReadSlurmSubmissions(dir.dir());
  if (!submissions.ok()) return out;
  for (const suite::SlurmSubmission& s : *submissions) {
    Json entry = {{"job_id", s.job_id},
                  {"array", s.array_spec},
                  {"shards", s.shards},
                  {"submitted_at", s.submitted_at}};
    auto states = suite::QuerySlurmArrayStates(s);
    if (states.ok()) {
      Json by_shard = Json::object();
      for (const auto& [shard, state] : *states) by_shard[std::to_string(shard)] = state;
      entry["states"] = by_shard;
    } else {
      entry["error"] = states.status().message();
    }
    out.push_back(entry);
  }
  return out;
}

std::vector<std::string> SlurmLines(const Json& slurm) {
  std::vector<std::string> lines;
  for (const Json& s : slurm) {
    std::string line = "Slurm job " + JsonGet<std::string>(s, "job_id", "?") + " (array " +
                       JsonGet<std::string>(s, "array", "?") + " of " +
                       std::to_string(JsonGet<int>(s, "shards", 0)) + " shards, submitted " +
                       JsonGet<std::string>(s, "submitted_at", "?") + "): ";
    if (s.contains("error")) {
      line += "states unknown: " + JsonGet<std::string>(s, "error", "");
    } else {
      std::map<std::string, std::vector<std::string>> by_state;
      const Json states = JsonGet<Json>(s, "states", Json::object());  // outlives the loop
      for (const auto& [shard, state] : states.items()) {
        by_state[state.is_string() ? state.get<std::string>() : "?"].push_back(shard);
      }
      std::string parts;
      for (const auto& [state, shards] : by_state) {
        parts += (parts.empty() ? "" : "; ") + state + " " + Join(shards, ",");
      }
      line += parts.empty() ? "no tasks" : parts;
    }
    lines.push_back(line);
  }
  return lines;
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

int RunHere(const suite::SuiteDir& dir, const suite::SuiteManifest& manifest, MachineArgs m,
            int shard, int shards) {
  if (Status s = NormalizeGpus(m.gpus); !s.ok()) return Fail(s.message());
  const std::string device =
      JsonGet<std::string>(JsonGet<Json>(manifest.options, "executor", Json::object()), "device",
                           JsonGet<std::string>(manifest.options, "device", "cuda"));
  eval::EvalOptions options = ExecutorFor(manifest, m);
  if (Status s = LocateCutlassForBuilds(m.cutlass_dir, options); !s.ok()) return Fail(s.message());
  // No device here: one line now, not every task failing one after another.
  if (Status ready = CheckDeviceReady(device, m.python, options.gpus); !ready.ok()) {
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
  if (!m.python.empty()) run.child_args = {"--python", m.python};
  if (!m.executor.cache_dir.empty()) {
    run.child_args.insert(run.child_args.end(), {"--cache-dir", m.executor.cache_dir});
  }
  if (m.executor.unsafe_no_sandbox) run.child_args.push_back("--unsafe-no-sandbox");
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
  if (!summary.ok()) return Fail(summary.status().message());
  std::cout << ProgressLine(dir, manifest, 1) << "\n";
  std::cout << "ran " << summary->ran << " tasks here (" << summary->failed << " failed); "
            << summary->already_done << " were done before";
  if (summary->held_elsewhere) std::cout << "; " << summary->held_elsewhere << " held elsewhere";
  std::cout << "\n";
  std::cout << "next: kernelpro suite report " << DisplayPath(dir.dir()) << "\n";
  return summary->failed > 0 || summary->held_elsewhere > 0 ? 1 : 0;
}

// The manifest's options that name files: absolute, so a shard started elsewhere finds them.
std::string AbsoluteReplay(const std::string& spec) {
  if (spec.rfind("replay:", 0) != 0) return spec;
  std::string path = spec.substr(7);
  if (path.empty() || path[0] == '/') return spec;
  return "replay:" + fs::absolute(path).lexically_normal().string();
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

// ---- suite eval

struct EvalSuiteArgs {
  Selection selection;
  std::string candidates;
  std::uint64_t seed = 1;
  MachineArgs machine;
};

int RunEvalSuite(EvalSuiteArgs& a) {
  // A wrong CUTLASS tree is refused before the suite is made (each shard locates it again).
  eval::EvalOptions located;
  if (Status s = LocateCutlassForBuilds(a.machine.cutlass_dir, located); !s.ok()) {
    return Fail(s.message());
  }
  if (!fs::is_directory(a.candidates)) {
    return Fail("--candidates " + a.candidates + ": not a folder");
  }
  auto problems =
      suite::DiscoverProblems(a.selection.problems, {a.selection.filter, a.selection.levels});
  if (!problems.ok()) return Fail(problems.status().message());
  suite::SuiteManifest m;
  m.mode = "eval";
  m.problems_dir = fs::absolute(a.selection.problems).lexically_normal().string();
  m.candidates_dir = fs::absolute(a.candidates).lexically_normal().string();
  m.problems = *problems;
  int without = 0;
  for (std::size_t i = 0; i < m.problems.size(); ++i) {
    suite::SuiteTask t;
    t.id = m.problems[i].key;
    t.problem = i;
    t.candidates = suite::FindCandidates(m.candidates_dir, m.problems[i]);
    without += t.candidates.empty() ? 1 : 0;
    m.tasks.push_back(std::move(t));
  }
  if (without == static_cast<int>(m.tasks.size())) {
    return Fail("no candidate in " + a.candidates + " matches a problem (expected " +
                m.problems.front().name + ".py, " + m.problems.front().name +
                "/*.py, or KernelBench's level_N_problem_T_sample_K_kernel.py)");
  }
  // The executor options are the suite's own (in its manifest) but for this machine's fields,
  // which every `suite run` gives again.
  eval::EvalOptions& options = a.machine.executor;
  options.seed = a.seed;
  Json executor = ToJson(options);
  for (const char* machine :
       {"gpus", "cache_dir", "work_dir", "jobs", "pass_env", "sandbox_read_only",
        "compile_baseline", "cutlass_include_dir", "cutlass_version"}) {
    executor.erase(machine);
  }
  m.options = {{"executor", executor}, {"compile_baseline", options.compile_baseline}};
  const suite::SuiteDir dir(a.selection.dir);
  auto stored = suite::CreateOrOpenSuite(dir, m);
  if (!stored.ok()) return Fail(stored.status().message());
  if (without > 0 && !a.machine.quiet) {
    std::cerr << kCommand << ": " << without << " of " << m.tasks.size()
              << " problems have no candidate in " << DisplayPath(a.candidates)
              << "; they count as failures (no_candidate)\n";
  }
  a.machine.gpus = options.gpus;
  return Dispatch(dir, *stored, a.machine);
}

// ---- suite optimize

struct OptimizeSuiteArgs {
  Selection selection;
  std::string device = "cuda";
  LlmOptions llm;
  SearchBudget budget;
  std::string search;
  int seeds = 1;
  std::uint64_t seed = 0;
  bool seed_given = false;  // --seed on the command line
  bool compile_baseline = false;
  std::vector<std::string> extra;  // after "--": more optimize options, for every run
  MachineArgs machine;
};

int RunOptimizeSuite(OptimizeSuiteArgs& a) {
  auto problems =
      suite::DiscoverProblems(a.selection.problems, {a.selection.filter, a.selection.levels});
  if (!problems.ok()) return Fail(problems.status().message());
  if (a.llm.spec.empty() && a.llm.config_file.empty()) {
    return Fail(
        "--llm PROVIDER:MODEL (or --llm-config FILE) is required: the model every run "
        "asks ('{problem}' in it is replaced by each problem's name, e.g. "
        "replay:cassettes/{problem}.jsonl)");
  }
  // Each problem's model must resolve before anything runs (a replay cassette per problem must
  // exist): a typo found after an hour of other problems would waste the hour.
  std::set<std::string> checked;  // each distinct model once (a live server is asked once)
  for (const suite::SuiteProblem& p : *problems) {
    LlmOptions resolved = a.llm;
    resolved.spec = suite::ExpandPlaceholders(a.llm.spec, p.name, a.seed);
    auto config = ResolveLlmConfig(resolved);
    if (!config.ok()) return Fail(p.key + ": " + config.status().message());
    if (checked.insert(resolved.spec).second) {
      if (Status ready = CheckLlmReady(*config); !ready.ok()) {
        return Fail(p.key + ": " + ready.message());
      }
    }
  }
  suite::SuiteManifest m;
  m.mode = "optimize";
  m.problems_dir = fs::absolute(a.selection.problems).lexically_normal().string();
  m.problems = *problems;
  for (std::size_t i = 0; i < m.problems.size(); ++i) {
    for (int k = 0; k < a.seeds; ++k) {
      suite::SuiteTask t;
      t.problem = i;
      t.seed = a.seed + static_cast<std::uint64_t>(k);
      t.id = m.problems[i].key + (a.seeds > 1 ? "/seed-" + std::to_string(t.seed) : "");
      m.tasks.push_back(std::move(t));
    }
  }
  std::vector<std::string> args = {"--device", a.device};
  if (!a.llm.spec.empty()) args.insert(args.end(), {"--llm", AbsoluteReplay(a.llm.spec)});
  if (!a.llm.config_file.empty()) {
    args.insert(args.end(),
                {"--llm-config", fs::absolute(a.llm.config_file).lexically_normal().string()});
  }
  if (!a.llm.profile.empty()) args.insert(args.end(), {"--llm-profile", a.llm.profile});
  if (!a.llm.replay_mode.empty()) {
    args.insert(args.end(), {"--llm-replay-mode", a.llm.replay_mode});
  }
  if (!a.llm.prices_file.empty()) {
    args.insert(args.end(),
                {"--llm-prices", fs::absolute(a.llm.prices_file).lexically_normal().string()});
  }
  if (a.budget.iterations > 0) {
    args.insert(args.end(), {"--iterations", std::to_string(a.budget.iterations)});
  }
  if (a.budget.max_cost >= 0) {
    args.insert(args.end(), {"--max-cost", std::to_string(a.budget.max_cost)});
  }
  if (a.budget.time_limit > 0) {
    args.insert(args.end(), {"--time-limit", std::to_string(a.budget.time_limit)});
  }
  if (!a.search.empty()) args.insert(args.end(), {"--search", a.search});
  args.insert(args.end(), a.extra.begin(), a.extra.end());
  // Seeds reach the model only when asked for (docs/seeds.md): with --seed, or with several
  // repeats, which must differ.
  const bool seeded = a.seed_given || a.seeds > 1;
  m.options = {{"device", a.device},
               {"args", args},
               {"seeded", seeded},
               {"compile_baseline", a.compile_baseline},
               {"executor", {{"device", a.device}}}};
  const suite::SuiteDir dir(a.selection.dir);
  auto stored = suite::CreateOrOpenSuite(dir, m);
  if (!stored.ok()) return Fail(stored.status().message());
  return Dispatch(dir, *stored, a.machine);
}

// ---- suite run / resume / status / report

struct DirArgs {
  std::string dir;
  int shard = 0, shards = 1;
  bool json = false;
  MachineArgs machine;
  // report
  std::string compare, baseline = "eager", out;
  double cap = -1;
};

int RunShardCommand(DirArgs& a) {
  if (a.shard >= a.shards) {
    return Fail("--shard " + std::to_string(a.shard) + " is not below --shards " +
                std::to_string(a.shards));
  }
  const suite::SuiteDir dir(a.dir);
  auto manifest = suite::OpenSuite(dir);
  if (!manifest.ok()) return Fail(manifest.status().message());
  return RunHere(dir, *manifest, a.machine, a.shard, a.shards);
}

int ResumeCommand(DirArgs& a) {
  const suite::SuiteDir dir(a.dir);
  auto manifest = suite::OpenSuite(dir);
  if (!manifest.ok()) return Fail(manifest.status().message());
  if (a.machine.slurm.empty()) return Dispatch(dir, *manifest, a.machine);
  // Under Slurm: only the shards that still have work, with the shard count of the last
  // submission (the static assignment of tasks to shards must not change).
  const int shards = a.machine.shards > 0 ? a.machine.shards : LastShardCount(dir);
  if (shards <= 0) {
    return Fail("no earlier Slurm submission in " + dir.slurm_dir() + "; give --shards N");
  }
  std::vector<int> unfinished;
  const double now = suite::NowSeconds();
  for (int s = 0; s < shards; ++s) {
    for (std::size_t i : suite::ShardTasks(*manifest, s, shards)) {
      suite::TaskState state = suite::ReadTaskStatus(dir, manifest->tasks[i].id, now).state;
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
  return SubmitSlurm(dir, *manifest, a.machine, shards, unfinished);
}

int StatusCommand(DirArgs& a) {
  const suite::SuiteDir dir(a.dir);
  auto manifest = suite::OpenSuite(dir, /*check_problems=*/false);
  if (!manifest.ok()) return Fail(manifest.status().message());
  suite::SuiteProgress p = suite::ReadProgress(dir, *manifest);
  Json slurm = SlurmStates(dir);
  if (a.json) {
    Json tasks = Json::array();
    for (const auto& [id, status] : p.tasks) {
      Json t = {{"task", id}, {"state", suite::TaskStateName(status.state)}};
      if (status.result) {
        t["status"] = JsonGet<std::string>(*status.result, "status", "");
        t["speedup"] = JsonGet<Json>(*status.result, "speedup", nullptr);
      }
      if (status.claim) t["host"] = status.claim->host, t["pid"] = status.claim->pid;
      tasks.push_back(t);
    }
    std::cout << DumpJson({{"suite", dir.dir()},
                           {"mode", manifest->mode},
                           {"total", p.total},
                           {"done", p.done},
                           {"correct", p.correct},
                           {"failed", p.failed},
                           {"running", p.running},
                           {"interrupted", p.interrupted},
                           {"pending", p.pending},
                           {"elapsed_s", p.elapsed_s},
                           {"remaining_s", p.remaining_s ? Json(*p.remaining_s) : Json(nullptr)},
                           {"tasks", tasks},
                           {"slurm", slurm}},
                          1)
              << "\n";
    return 0;
  }
  std::cout << "suite " << DisplayPath(dir.dir()) << ": " << manifest->mode << ", "
            << manifest->problems.size() << " problems, " << p.total << " tasks\n";
  std::cout << "  done " << p.done << " (" << p.correct << " with a correct kernel), failed "
            << p.failed << ", running " << p.running << ", interrupted " << p.interrupted
            << ", pending " << p.pending << "\n";
  std::cout << "  elapsed " << Duration(p.elapsed_s);
  if (p.remaining_s) std::cout << ", about " << Duration(*p.remaining_s) << " left";
  std::cout << "\n";
  for (const auto& [id, status] : p.tasks) {
    if (status.state == suite::TaskState::kDone || status.state == suite::TaskState::kPending) {
      continue;
    }
    std::cout << "  " << suite::TaskStateName(status.state) << "  " << id;
    if (status.claim && status.state != suite::TaskState::kFailed) {
      std::cout << "  (" << status.claim->host << " pid " << status.claim->pid << ", shard "
                << status.claim->shard << ", since "
                << Duration(suite::NowSeconds() - status.claim->started_at) << ")";
    }
    if (status.result) {
      std::cout << "  " << JsonGet<std::string>(*status.result, "message", "");
    }
    std::cout << "\n";
  }
  for (const std::string& line : SlurmLines(slurm)) std::cout << "  " << line << "\n";
  if (p.failed + p.interrupted > 0) {
    std::cout << "  rerun what is not done: kernelpro suite resume " << DisplayPath(dir.dir())
              << "\n";
  }
  return 0;
}

std::string Percent(double fraction) { return FormatFixed(100 * fraction, 0) + "%"; }
std::string Times(double v) { return FormatFixed(v, 2) + "x"; }

void PrintGroup(const std::string& label, const report::GroupStats& g) {
  std::cout << "  " << label << ": n=" << g.n << ", correct " << Percent(g.correct_rate)
            << ", geomean " << Times(g.geomean_speedup) << " (failures as 1.0x), "
            << (g.geomean_speedup_correct_only ? Times(*g.geomean_speedup_correct_only)
                                               : std::string("-"))
            << " (correct only), fast_1.0 " << Percent(g.fast_p.size() > 3 ? g.fast_p[3] : 0)
            << ", fast_1.5 " << Percent(g.fast_p.size() > 4 ? g.fast_p[4] : 0) << "\n";
}

int ReportCommand(DirArgs& a) {
  const suite::SuiteDir dir(a.dir);
  auto manifest = suite::OpenSuite(dir, /*check_problems=*/false);
  if (!manifest.ok()) return Fail(manifest.status().message());
  auto input = suite::ReadSuiteReport(dir, *manifest, a.baseline);
  if (!input.ok()) return Fail(input.status().message());
  const std::optional<double> cap = a.cap > 0 ? std::optional<double>(a.cap) : std::nullopt;
  if (!a.compare.empty()) {
    const suite::SuiteDir other_dir(a.compare);
    auto other = suite::OpenSuite(other_dir, /*check_problems=*/false);
    if (!other.ok()) return Fail("--compare: " + other.status().message());
    auto other_input = suite::ReadSuiteReport(other_dir, *other, a.baseline);
    if (!other_input.ok()) return Fail("--compare: " + other_input.status().message());
    report::SuiteComparisonView view;
    view.other_title = other_input->title;
    view.other_dir = DisplayPath(other_dir.dir());
    view.other_stats = other_input->stats;
    view.comparison =
        report::CompareSuites(suite::Scores(input->rows), suite::Scores(other_input->rows), cap);
    input->comparison = std::move(view);
  }
  const std::string out = a.out.empty() ? dir.report_dir() : a.out;
  const std::vector<std::pair<std::string, std::string>> files = {
      {out + "/report.html", report::RenderSuiteHtml(*input)},
      {out + "/report.md", report::RenderSuiteMarkdown(*input)},
      {out + "/results.csv", report::RenderSuiteCsv(*input)},
      {out + "/report.json", DumpJson(report::SuiteReportJson(*input), 1) + "\n"}};
  for (const auto& [path, text] : files) {
    if (Status s = WriteFileAtomically(path, text); !s.ok()) return Fail(s.message());
  }
  if (a.json) {
    std::cout << DumpJson(report::SuiteReportJson(*input), 1) << "\n";
    return 0;
  }
  std::cout << "suite " << input->title << " (" << input->mode << ", speedups against "
            << input->baseline << ")\n";
  for (const std::string& line : input->measurement) std::cout << "  " << line << "\n";
  PrintGroup("overall", input->stats.overall);
  for (const auto& [level, g] : input->stats.levels) {
    PrintGroup("level " + std::to_string(level), g);
  }
  if (input->comparison) {
    const report::WilcoxonResult& w = input->comparison->comparison.wilcoxon;
    char line[256];
    std::snprintf(line, sizeof line,
                  "  vs %s: geomean ratio %.3f; one-sided Wilcoxon signed-rank, n = %d non-zero "
                  "pairs: W+ = %.1f, p = %.4g (%s)",
                  input->comparison->other_title.c_str(),
                  input->comparison->comparison.geomean_ratio, w.n, w.statistic, w.p_value,
                  w.exact ? "exact" : "normal approximation");
    std::cout << line << "\n";
  }
  std::cout << "report: " << DisplayPath(out + "/report.html") << " (also report.md, results.csv, "
            << "report.json)\n";
  return 0;
}

}  // namespace

CommandRunner RegisterSuiteCommand(CLI::App& app) {
  CLI::App* suite = app.add_subcommand(
      "suite", "Run kernelpro over a benchmark of problems and report the suite's statistics");
  suite->require_subcommand(1);

  auto eval_args = std::make_shared<EvalSuiteArgs>();
  CLI::App* eval = suite->add_subcommand(
      "eval", "Evaluate existing candidates (one folder per suite) against every problem");
  eval->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddSelectionOptions(*eval, eval_args->selection);
  eval->add_option("--candidates", eval_args->candidates,
                   "Candidates: <problem stem>.py or <problem stem>/*.py, or KernelBench's "
                   "level_N_problem_T_sample_K_kernel.py files")
      ->required();
  AddDeviceOption(*eval, eval_args->machine.executor.device);
  eval_args->machine.executor.precompiled_headers =
      true;  // a suite builds many candidates: worth it
  AddOption(*eval, kSeedOption, eval_args->seed)->capture_default_str();
  AddExecutorOptions(*eval, eval_args->machine.executor, eval_args->machine.python);
  AddCutlassOptions(*eval, eval_args->machine.cutlass_dir);
  AddRunOptions(*eval, eval_args->machine, /*with_slurm=*/true);

  auto opt_args = std::make_shared<OptimizeSuiteArgs>();
  CLI::App* optimize = suite->add_subcommand(
      "optimize", "One optimize run per problem (and seed); options after -- go to every run");
  optimize->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddSelectionOptions(*optimize, opt_args->selection);
  AddDeviceOption(*optimize, opt_args->device);
  AddLlmOptions(*optimize, opt_args->llm);
  AddBudgetOptions(*optimize, opt_args->budget);
  AddOption(*optimize, kSearchOption, opt_args->search)->check(CLI::IsMember({"mcts", "greedy"}));
  optimize
      ->add_option("--seeds", opt_args->seeds,
                   "Runs per problem, seeds --seed, --seed+1, ...; a problem scores its best")
      ->check(WholeRange(1, 1000));
  CLI::Option* seed_option = AddOption(*optimize, kSeedOption, opt_args->seed);
  optimize->add_flag("--compile-baseline", opt_args->compile_baseline,
                     "Also time torch.compile(Model)");
  AddMachineOptions(*optimize, opt_args->machine, /*with_slurm=*/true);
  optimize->add_option("extra", opt_args->extra, "Options for every optimize run (after --)");

  auto dir_args = std::make_shared<DirArgs>();
  CLI::App* run = suite->add_subcommand(
      "run", "Run a suite's tasks here, or one shard of them (what each Slurm array task runs)");
  run->add_option("suite", dir_args->dir, "The suite directory")->required();
  run->add_option("--shard", dir_args->shard, "This shard's number, from 0")
      ->check(WholeRange(0, 100000));
  run->add_option("--shards", dir_args->shards, kShardsHelp)->check(WholeRange(1, 100000));
  AddMachineOptions(*run, dir_args->machine, /*with_slurm=*/false);
  AddCutlassOptions(*run, dir_args->machine.cutlass_dir);

  auto resume_args = std::make_shared<DirArgs>();
  CLI::App* resume = suite->add_subcommand(
      "resume", "Run what is not done: interrupted, failed and pending tasks (--slurm: resubmit)");
  resume->add_option("suite", resume_args->dir, "The suite directory")->required();
  AddMachineOptions(*resume, resume_args->machine, /*with_slurm=*/true);
  AddCutlassOptions(*resume, resume_args->machine.cutlass_dir);

  auto status_args = std::make_shared<DirArgs>();
  CLI::App* status = suite->add_subcommand(
      "status", "Tasks done, running, failed and pending, elapsed and remaining time, Slurm jobs");
  status->add_option("suite", status_args->dir, "The suite directory")->required();
  AddOption(*status, kJsonOption, status_args->json);

  auto report_args = std::make_shared<DirArgs>();
  CLI::App* report = suite->add_subcommand(
      "report", "Statistics and reports (HTML, Markdown, CSV, JSON) of a suite");
  report->add_option("suite", report_args->dir, "The suite directory")->required();
  report->add_option("--compare", report_args->compare,
                     "Another suite over the same problems: paired differences and a one-sided "
                     "Wilcoxon signed-rank test (this suite better)");
  report
      ->add_option("--baseline", report_args->baseline,
                   "Speedups against eager PyTorch (default) or torch.compile (compile)")
      ->check(CLI::IsMember({"eager", "compile"}));
  report
      ->add_option("--cap", report_args->cap,
                   "Clamp speedups to this before the comparison's test (the paper's capping)")
      ->check(PositiveUpTo(1e12));
  report->add_option("--out", report_args->out, "Where the report files go (default SUITE/report)");
  AddOption(*report, kJsonOption, report_args->json);

  return [=]() -> int {
    opt_args->seed_given = seed_option->count() > 0;
    if (eval->parsed()) return RunEvalSuite(*eval_args);
    if (optimize->parsed()) return RunOptimizeSuite(*opt_args);
    if (run->parsed()) return RunShardCommand(*dir_args);
    if (resume->parsed()) return ResumeCommand(*resume_args);
    if (status->parsed()) return StatusCommand(*status_args);
    if (report->parsed()) return ReportCommand(*report_args);
    return Fail("give a subcommand: eval, optimize, run, status, resume or report");
  };
}

}  // namespace kernelpro::cli
