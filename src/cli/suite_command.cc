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
//
// This file declares the subcommands, makes suites and shows them (status, report); running their
// tasks, here or under Slurm, is suite_shards.cc's.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "app/preflight.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "cli/suite_shards.h"
#include "core/text.h"
#include "report/suite_report.h"
#include "report/suite_stats.h"
#include "suite/problem_set.h"
#include "suite/protocol.h"
#include "suite/results.h"
#include "suite/runner.h"
#include "suite/slurm.h"
#include "suite/suite_dir.h"
#include "suite/task_list.h"

namespace kernelpro::cli {
namespace {

// The running workers' phases for `suite status --json`: [{"phase": ..., "seconds": ...}].
Json PhasesJson(const suite::SuiteProgress& p) {
  Json out = Json::array();
  for (const auto& [phase, seconds] : p.phases)
    out.push_back({{"phase", phase}, {"seconds", seconds}});
  return out;
}

// A task's costs for `suite status --json`: "seconds" (its wall time, once finished),
// "peak_device_bytes" and "min_free_bytes" (suite/task_costs.h); null where unknown.
void AddCostsJson(const suite::TaskCosts& costs, Json& task) {
  task["seconds"] = NumberOrNull(costs.seconds);
  task["peak_device_bytes"] = costs.peak ? Json(costs.peak->bytes) : Json(nullptr);
  task["min_free_bytes"] =
      costs.peak && costs.peak->min_free_bytes ? Json(*costs.peak->min_free_bytes) : Json(nullptr);
}

namespace fs = std::filesystem;

// Running the tasks, here or under Slurm, and the options of the machine they run on.
using suite_shards::AddMachineOptions;
using suite_shards::AddRunOptions;
using suite_shards::Dispatch;
using suite_shards::Duration;
using suite_shards::Fail;
using suite_shards::kCommand;
using suite_shards::kShardsHelp;
using suite_shards::MachineArgs;
using suite_shards::Resume;
using suite_shards::RunHere;

// Which problems, and the suite directory: --problems, --dir, --filter, --levels, --tasks.
struct Selection {
  std::string problems, dir, filter, tasks;
  std::vector<int> levels;
};

// The problems the selection names: discovered, filtered, and restricted to a task list.
Result<std::vector<suite::SuiteProblem>> SelectedProblems(const Selection& s) {
  auto problems = suite::DiscoverProblems(s.problems, {s.filter, s.levels});
  if (!problems.ok() || s.tasks.empty()) return problems;
  auto list = suite::ReadTaskList(s.tasks);
  if (!list.ok()) return list.status();
  return suite::SelectTasks(*problems, *list, s.tasks);
}

void AddSelectionOptions(CLI::App& cmd, Selection& s) {
  cmd.add_option("--problems", s.problems,
                 "Problems in KernelBench's format: level folders (level1/...) or a flat folder")
      ->required();
  cmd.add_option("--dir", s.dir, "The suite directory: everything of the suite lives there")
      ->required();
  cmd.add_option("--filter", s.filter,
                 "Only problems whose key (level1/19_ReLU) matches this regular expression");
  cmd.add_option("--levels", s.levels, "Only these levels (1,2,3)")->delimiter(',');
  cmd.add_option("--tasks", s.tasks,
                 "Only the KernelBench tasks of a list: paper-42 (the paper's ablation subset, "
                 "suites/tasks/paper-42.txt) or a file of lines 'level1: 1 6 7'");
}

// The manifest's options that name files: absolute, so a shard started elsewhere finds them.
std::string AbsoluteReplay(const std::string& spec) {
  if (spec.rfind("replay:", 0) != 0) return spec;
  std::string path = spec.substr(7);
  if (path.empty() || path[0] == '/') return spec;
  return "replay:" + fs::absolute(path).lexically_normal().string();
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
  auto problems = SelectedProblems(a.selection);
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
  std::string protocol;            // --protocol paper
  std::vector<std::string> extra;  // after "--": more optimize options, for every run
  MachineArgs machine;
};

int RunOptimizeSuite(OptimizeSuiteArgs& a) {
  std::optional<suite::Protocol> protocol;
  if (!a.protocol.empty()) {
    protocol = suite::FindProtocol(a.protocol);
    if (!protocol) return Fail("--protocol " + a.protocol + ": the protocol there is is paper");
    if (a.budget.iterations > 0 && a.budget.iterations != protocol->iterations) {
      return Fail("--protocol " + a.protocol + " runs " + std::to_string(protocol->iterations) +
                  " iterations: leave out --iterations, or leave out --protocol");
    }
    a.seeds = protocol->runs();
    a.budget.iterations = protocol->iterations;
  }
  auto problems = SelectedProblems(a.selection);
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
      if (Status ready = app::CheckLlmReady(*config); !ready.ok()) {
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
      // The protocol's runs: temperature k mod T in round k / T.
      if (protocol) t.temperature = protocol->temperatures[k % protocol->temperatures.size()];
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
  if (protocol) args.insert(args.end(), {"--candidates", std::to_string(protocol->candidates)});
  args.insert(args.end(), a.extra.begin(), a.extra.end());
  // Seeds reach the model only when asked for (docs/seeds.md): with --seed, or with several
  // repeats, which must differ.
  const bool seeded = a.seed_given || a.seeds > 1;
  m.options = {{"device", a.device},
               {"args", args},
               {"seeded", seeded},
               {"compile_baseline", a.compile_baseline},
               {"executor", {{"device", a.device}}}};
  if (protocol) m.options["protocol"] = suite::ToJson(*protocol);
  if (!a.selection.tasks.empty()) m.options["tasks"] = a.selection.tasks;
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
  bool require_complete = false;  // report: exit 1 while a task has no result
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
  return Resume(dir, *manifest, a.machine);
}

// ---- Slurm jobs, as `suite status` shows them

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

// "  slowest: level1/11_4D (2m41s, 40.4 GiB), level3/43_Min (33s)\n": the (up to) three finished
// tasks that took longest, with their peak device memory when known; "" before any finished.
std::string SlowestLine(const suite::SuiteProgress& p) {
  std::vector<std::string> parts;
  for (const suite::TaskProgress* task : suite::SlowestTasks(p, 3)) {
    std::string part = task->id + " (" + Duration(*task->costs.seconds);
    if (task->costs.peak) {
      part += ", " + FormatGib(task->costs.peak->bytes, 1) + " GiB";
    }
    parts.push_back(part + ")");
  }
  return parts.empty() ? "" : "  slowest: " + Join(parts, ", ") + "\n";
}

int StatusCommand(DirArgs& a) {
  const suite::SuiteDir dir(a.dir);
  auto manifest = suite::OpenSuite(dir, /*check_problems=*/false);
  if (!manifest.ok()) return Fail(manifest.status().message());
  suite::SuiteProgress p = suite::ReadProgress(dir, *manifest);
  Json slurm = SlurmStates(dir);
  if (a.json) {
    Json tasks = Json::array();
    for (const suite::TaskProgress& task : p.tasks) {
      const suite::TaskStatus& status = task.status;
      Json t = {{"task", task.id}, {"state", suite::TaskStateName(status.state)}};
      if (status.result) {
        t["status"] = JsonGet<std::string>(*status.result, "status", "");
        t["speedup"] = JsonGet<Json>(*status.result, "speedup", nullptr);
      }
      AddCostsJson(task.costs, t);
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
                           {"damaged", p.damaged},
                           {"elapsed_s", p.elapsed_s},
                           {"remaining_s", p.remaining_s ? Json(*p.remaining_s) : Json(nullptr)},
                           {"phases", PhasesJson(p)},
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
            << ", pending " << p.pending;
  if (p.damaged > 0) std::cout << ", damaged " << p.damaged;
  std::cout << "\n" << SlowestLine(p);
  std::cout << "  elapsed " << Duration(p.elapsed_s);
  if (p.remaining_s) std::cout << ", about " << Duration(*p.remaining_s) << " left";
  std::cout << "\n";
  for (const auto& [phase, seconds] : p.phases) {
    std::cout << "  now: " << phase << " (for " << Duration(seconds) << ")\n";
  }
  for (const suite::TaskProgress& task : p.tasks) {
    const suite::TaskStatus& status = task.status;
    if (status.state == suite::TaskState::kDone || status.state == suite::TaskState::kPending) {
      continue;
    }
    std::cout << "  " << suite::TaskStateName(status.state) << "  " << task.id;
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
  if (p.failed + p.interrupted + p.damaged > 0) {
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
  std::optional<double> cap = a.cap > 0 ? std::optional<double>(a.cap) : std::nullopt;
  // A protocol's cap (the paper's 25x) applies unless --cap says otherwise.
  if (auto protocol =
          suite::ProtocolFromJson(JsonGet<Json>(manifest->options, "protocol", nullptr));
      !cap && protocol && protocol->cap > 0) {
    cap = protocol->cap;
  }
  if (!a.compare.empty()) {
    const suite::SuiteDir other_dir(a.compare);
    auto other = suite::OpenSuite(other_dir, /*check_problems=*/false);
    if (!other.ok()) return Fail("--compare: " + other.status().message());
    auto other_input = suite::ReadSuiteReport(other_dir, *other, a.baseline);
    if (!other_input.ok()) return Fail("--compare: " + other_input.status().message());
    auto caveats = suite::ComparisonCaveats(*input, *other_input);
    if (!caveats.ok()) return Fail("--compare: " + caveats.status().message());
    for (const std::string& caveat : *caveats) {
      std::cerr << "kernelpro suite report: caution: " << caveat << "\n";
    }
    report::SuiteComparisonView view;
    view.caveats = *caveats;
    view.other_title = other_input->title;
    view.other_dir = DisplayPath(other_dir.dir());
    view.other_stats = other_input->stats;
    view.comparison =
        report::CompareSuites(suite::Scores(input->rows), suite::Scores(other_input->rows), cap);
    input->comparison = std::move(view);
  }
  const std::string out = a.out.empty() ? dir.report_dir() : a.out;
  const report::SuiteReportTexts texts = report::RenderSuiteReports(*input);
  const std::string json = DumpJson(texts.json, 1) + "\n";
  const std::vector<std::pair<std::string, const std::string*>> files = {
      {out + "/report.html", &texts.html},
      {out + "/report.md", &texts.markdown},
      {out + "/results.csv", &texts.csv},
      {out + "/report.json", &json}};
  for (const auto& [path, text] : files) {
    if (Status s = WriteFileAtomically(path, *text); !s.ok()) return Fail(s.message());
  }
  // --require-complete: a script quoting the numbers is told they are not final.
  const int exit_code = a.require_complete && !input->incomplete.empty() ? 1 : 0;
  if (a.json) {
    std::cout << json;
    return exit_code;
  }
  std::cout << "suite " << input->title << " (" << input->mode << ", speedups against "
            << input->baseline << ")\n";
  if (!input->incomplete.empty()) std::cout << "  " << input->incomplete << "\n";
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
  if (exit_code != 0) {
    std::cerr << "kernelpro suite report: --require-complete: " << input->incomplete << "\n";
  }
  return exit_code;
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
  optimize
      ->add_option("--protocol", opt_args->protocol,
                   "An evaluation protocol as one option: paper (15 runs per task = 5 "
                   "temperatures x 3 rounds, best of runs, 30 iterations x 2 candidates, "
                   "speedups capped at 25x in the report; docs/paper.md)")
      ->check(CLI::IsMember({"paper"}))
      ->excludes("--seeds");
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
  report->add_flag("--require-complete", report_args->require_complete,
                   "Exit 1 (after writing the report) while a task has no result");
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
